//! Aggregation rules shared by every store and by a scope (which aggregates again over
//! its own documents' support rows): an entity's descriptions and a relation's weight and
//! description from their support rows, in support order (by document, chunk, name).

/// Distinct non-empty descriptions in the order given (support rows ordered by document,
/// chunk, name), and the fingerprint a summary of exactly them carries.
pub fn descriptions<'a>(all: impl IntoIterator<Item = &'a str>) -> (Vec<String>, String) {
    let mut out: Vec<String> = Vec::new();
    for d in all {
        if !d.is_empty() && !out.iter().any(|o| o == d) {
            out.push(d.to_string());
        }
    }
    let refs: Vec<&str> = out.iter().map(String::as_str).collect();
    let fp = crate::ids::content_id("sum_", &refs);
    (out, fp)
}

/// An entity's description: its summary when one matches its descriptions, else the
/// first three descriptions.
pub fn entity_description(descriptions: &[String], summary: Option<String>) -> String {
    summary.unwrap_or_else(|| descriptions.iter().take(3).cloned().collect::<Vec<_>>().join("\n"))
}

/// A relation's (weight, description) from its support (weights summed in support
/// order; the first non-empty description).
pub fn relation_row<'a>(rows: impl IntoIterator<Item = (&'a str, f64)>) -> (f64, String) {
    let rows: Vec<(&str, f64)> = rows.into_iter().collect();
    let weight: f64 = rows.iter().map(|r| r.1).sum();
    let description = rows.iter().map(|r| r.0).find(|d| !d.is_empty()).unwrap_or("");
    (weight, description.to_string())
}
