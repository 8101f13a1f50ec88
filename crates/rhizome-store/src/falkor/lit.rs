//! Cypher literals ([`Lit`]) and the `CYPHER name=value ...` parameter prefix that carries
//! them, rendered so that strings are escaped and floats keep their precision.

/// A Cypher literal, for the `CYPHER name=value ...` parameter prefix.
#[derive(Debug, Clone)]
pub enum Lit {
    Null,
    Str(String),
    Int(i64),
    Float(f64),
    List(Vec<Lit>),
    Map(Vec<(&'static str, Lit)>),
    /// Floats as a list (for `vecf32(...)`).
    Floats(Vec<f32>),
}

impl From<&str> for Lit {
    fn from(s: &str) -> Lit {
        Lit::Str(s.to_string())
    }
}
impl From<&String> for Lit {
    fn from(s: &String) -> Lit {
        Lit::Str(s.clone())
    }
}
impl From<Option<&String>> for Lit {
    fn from(s: Option<&String>) -> Lit {
        s.map_or(Lit::Null, |s| Lit::Str(s.clone()))
    }
}

fn float(out: &mut String, f: f64) {
    use std::fmt::Write as _;
    if f.is_finite() {
        let _ = write!(out, "{f:?}");
    } else {
        out.push_str("0.0");
    }
}

impl Lit {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        match self {
            Lit::Null => out.push_str("null"),
            Lit::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Lit::Float(f) => float(out, *f),
            Lit::Str(s) => {
                out.push('\'');
                for ch in s.chars() {
                    match ch {
                        '\'' => out.push_str("\\'"),
                        '\\' => out.push_str("\\\\"),
                        '\0' => out.push(' '),
                        c => out.push(c),
                    }
                }
                out.push('\'');
            }
            Lit::List(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.render(out);
                }
                out.push(']');
            }
            Lit::Floats(items) => {
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    // f32's shortest form: read back as a double and narrowed by vecf32
                    // it is the same f32.
                    if x.is_finite() {
                        let _ = write!(out, "{x:?}");
                    } else {
                        out.push_str("0.0");
                    }
                }
                out.push(']');
            }
            Lit::Map(kv) => {
                out.push('{');
                for (i, (k, v)) in kv.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(k);
                    out.push(':');
                    v.render(out);
                }
                out.push('}');
            }
        }
    }
}

/// `CYPHER a=... b=... QUERY`.
pub fn with_params(params: &[(&str, Lit)], q: &str) -> String {
    let mut s = String::new();
    if !params.is_empty() {
        s.push_str("CYPHER ");
        for (k, v) in params {
            s.push_str(k);
            s.push('=');
            v.render(&mut s);
            s.push(' ');
        }
    }
    s.push_str(q);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_and_keep_precision() {
        let mut s = String::new();
        Lit::Map(vec![("a", "it's \\ x".into()), ("b", Lit::Float(0.1)), ("c", Lit::Floats(vec![0.5, f32::NAN]))])
            .render(&mut s);
        assert_eq!(s, r"{a:'it\'s \\ x',b:0.1,c:[0.5,0.0]}");
    }
}
