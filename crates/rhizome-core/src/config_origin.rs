//! Where each setting's value came from (default, the TOML file and its line, an
//! environment variable, `--set`, a command-line flag), so that an error can say which
//! layer to fix. `Config::load` records one [`Origin`] per key while layering.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;

/// The layer a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The built-in default.
    Default,
    /// The TOML file, at `line` (1-based) when the key's line was found.
    File { path: PathBuf, line: Option<usize> },
    /// An environment variable, e.g. `RHIZOME_CHUNK_SIZE`.
    Env { var: String },
    /// `--set section.key=value` (`arg` is what followed `--set`).
    Set { arg: String },
    /// A command-line flag standing for the setting, e.g. `--top-k 0`.
    Flag { arg: String },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => write!(f, "default"),
            Origin::File { path, line: Some(n) } => write!(f, "from {}:{n}", path.display()),
            Origin::File { path, line: None } => write!(f, "from {}", path.display()),
            Origin::Env { var } => write!(f, "from environment variable {var}"),
            Origin::Set { arg } => write!(f, "from --set {arg}"),
            Origin::Flag { arg } => write!(f, "from {arg}"),
        }
    }
}

/// The origin of every key (`section.key`); keys never set are [`Origin::Default`].
#[derive(Debug, Clone, Default)]
pub struct Origins {
    map: BTreeMap<String, Origin>,
}

impl Origins {
    pub fn get(&self, key: &str) -> &Origin {
        self.map.get(key).unwrap_or(&Origin::Default)
    }
    pub fn set(&mut self, key: impl Into<String>, origin: Origin) {
        self.map.insert(key.into(), origin);
    }
}

/// The 1-based line of every key of a TOML text, by dotted path (`chunk.size`; a
/// `[section]` header is recorded under `section`). Knows `[table]` headers, `key = value`
/// lines with bare, quoted or dotted keys, and one-line inline tables
/// (`chunk = { size = 64 }`). Lines inside multi-line strings are skipped. Not a parser:
/// the text has already been parsed, this only finds lines for messages.
pub fn key_lines(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    let mut table: Vec<String> = Vec::new();
    let mut in_multiline: Option<&str> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if let Some(delim) = in_multiline {
            if line.matches(delim).count() % 2 == 1 {
                in_multiline = None;
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("[[") {
            table = Vec::new(); // arrays of tables are not settings
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.split(']').next().unwrap_or("");
            table = split_key(header);
            out.entry(table.join(".")).or_insert(n);
            continue;
        }
        let Some((key, rest)) = line.split_once('=') else { continue };
        let mut path = table.clone();
        path.extend(split_key(key));
        out.entry(path.join(".")).or_insert(n);
        let rest = rest.trim();
        if let Some(inner) = rest.strip_prefix('{') {
            for part in inner.trim_end_matches('}').split(',') {
                if let Some((k, _)) = part.split_once('=') {
                    let mut p = path.clone();
                    p.extend(split_key(k));
                    out.entry(p.join(".")).or_insert(n);
                }
            }
        }
        for delim in ["\"\"\"", "'''"] {
            if rest.matches(delim).count() % 2 == 1 {
                in_multiline = Some(delim);
            }
        }
    }
    out
}

/// `a . "b" . 'c'` -> [a, b, c].
fn split_key(key: &str) -> Vec<String> {
    key.split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\'').to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lines_of_keys_in_every_form() {
        let text = "# comment\n\
                    chunk.size = 64\n\
                    [synonymy]\n\
                    top_k = 3 # trailing\n\
                    \"threshold\" = 0.5\n\
                    [ retrieval ]\n\
                    fusion = 'rrf'\n\
                    note = \"\"\"\n\
                    top_k = 9\n\
                    \"\"\"\n\
                    top_k = 2\n\
                    embed = { batch_size = 0, model = \"auto\" }\n";
        let l = key_lines(text);
        assert_eq!(l["chunk.size"], 2);
        assert_eq!(l["synonymy"], 3);
        assert_eq!(l["synonymy.top_k"], 4);
        assert_eq!(l["synonymy.threshold"], 5);
        assert_eq!(l["retrieval.fusion"], 7);
        assert_eq!(l["retrieval.top_k"], 11, "a line inside a multi-line string is no key");
        assert_eq!(l["retrieval.embed.batch_size"], 12);
        assert_eq!(key_lines("tog = { depth = 0, width = 2 }\n")["tog.width"], 1);
    }

    #[test]
    fn origins_read_as_phrases() {
        let f = Origin::File { path: "rhizome.toml".into(), line: Some(3) };
        assert_eq!(f.to_string(), "from rhizome.toml:3");
        assert_eq!(
            Origin::Env { var: "RHIZOME_CHUNK_SIZE".into() }.to_string(),
            "from environment variable RHIZOME_CHUNK_SIZE"
        );
        assert_eq!(Origin::Set { arg: "chunk.size=0".into() }.to_string(), "from --set chunk.size=0");
        assert_eq!(Origins::default().get("chunk.size").to_string(), "default");
    }
}
