//! What a server answers: RESP replies ([`Value`]), and the cells of FalkorDB's compact
//! result rows ([`Cell`]) read from them without panicking on odd input.

/// A RESP reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Int(i64),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    Error(String),
}

impl Value {
    pub fn as_str(&self) -> Option<String> {
        match self {
            Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
            _ => None,
        }
    }
    pub fn into_array(self) -> Vec<Value> {
        match self {
            Value::Array(v) => v,
            _ => Vec::new(),
        }
    }
}

/// One value of a FalkorDB compact result row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Str(String),
    Int(i64),
    Bool(bool),
    Float(f64),
    List(Vec<Cell>),
    Map(Vec<(String, Cell)>),
    Vector(Vec<f32>),
    Other,
}

impl Cell {
    pub fn str(&self) -> String {
        match self {
            Cell::Str(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Bool(b) => b.to_string(),
            _ => String::new(),
        }
    }
    pub fn opt_str(&self) -> Option<String> {
        match self {
            Cell::Null => None,
            c => Some(c.str()),
        }
    }
    pub fn int(&self) -> i64 {
        match self {
            Cell::Int(i) => *i,
            Cell::Float(f) => *f as i64,
            Cell::Str(s) => s.parse().unwrap_or(0),
            _ => 0,
        }
    }
    pub fn float(&self) -> f64 {
        match self {
            Cell::Int(i) => *i as f64,
            Cell::Float(f) => *f,
            Cell::Str(s) => s.parse().unwrap_or(0.0),
            _ => 0.0,
        }
    }
    pub fn opt_float(&self) -> Option<f64> {
        match self {
            Cell::Null => None,
            c => Some(c.float()),
        }
    }
    pub fn list(&self) -> &[Cell] {
        match self {
            Cell::List(v) => v,
            _ => &[],
        }
    }
}

pub(super) fn cell(v: &Value, depth: usize) -> Cell {
    let Value::Array(pair) = v else { return Cell::Other };
    if pair.len() != 2 || depth > 32 {
        return Cell::Other;
    }
    let text = || pair[1].as_str().unwrap_or_default();
    match pair[0].as_int() {
        Some(1) => Cell::Null,
        Some(2) => Cell::Str(text()),
        Some(3) => Cell::Int(pair[1].as_int().unwrap_or(0)),
        Some(4) => Cell::Bool(text() == "true"),
        Some(5) => Cell::Float(text().parse().unwrap_or(0.0)),
        Some(6) => match &pair[1] {
            Value::Array(items) => Cell::List(items.iter().map(|x| cell(x, depth + 1)).collect()),
            _ => Cell::Other,
        },
        Some(10) => match &pair[1] {
            Value::Array(items) => Cell::Map(
                items.chunks_exact(2).map(|kv| (kv[0].as_str().unwrap_or_default(), cell(&kv[1], depth + 1))).collect(),
            ),
            _ => Cell::Other,
        },
        Some(12) => match &pair[1] {
            Value::Array(items) => {
                Cell::Vector(items.iter().map(|x| x.as_str().and_then(|s| s.parse().ok()).unwrap_or(0.0)).collect())
            }
            _ => Cell::Other,
        },
        _ => Cell::Other,
    }
}
