//! The retrieval methods, by name. The only place method names are spelled.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Dense + BM25 chunk retrieval fused by reciprocal rank.
    Basic,
}

impl Method {
    pub const ALL: &'static [Method] = &[Method::Basic];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Basic => "basic",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Method::ALL
            .iter()
            .copied()
            .find(|m| m.as_str() == s.trim().to_lowercase())
            .ok_or_else(|| {
                let names: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
                format!("unknown method {s:?}; available: {}", names.join(", "))
            })
    }
}
