//! Seed inputs: the repository's example documents, small slices of the shared data
//! (`../shared/data` beside the repository, read at run time; absent in a bare clone, then
//! only the hand-written seeds are used) and hand-written ones in each target.

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared data folder (`RHIZOME_SHARED_DATA`, else `../shared/data` from the root).
pub fn shared() -> PathBuf {
    std::env::var_os("RHIZOME_SHARED_DATA").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/data"))
}

/// A whole file, if it is there.
pub fn file(path: PathBuf) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// The first `max` bytes of a file (cut at a character boundary), if it is there.
pub fn head(path: PathBuf, max: usize) -> Option<Vec<u8>> {
    let mut b = std::fs::read(path).ok()?;
    if b.len() > max {
        let mut cut = max;
        while cut > 0 && (b[cut] & 0xC0) == 0x80 {
            cut -= 1;
        }
        b.truncate(cut);
    }
    Some(b)
}

/// Hand-written seeds as bytes.
pub fn strs(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// The model responses of the nano-graphrag fixture (real gpt-4o extraction and report
/// replies), at most `n`, each at most `max` bytes.
pub fn model_replies(n: usize, max: usize) -> Vec<Vec<u8>> {
    let Some(bytes) = file(shared().join("nano_graphrag_fixtures/mock_cache.json")) else { return Vec::new() };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return Vec::new() };
    let mut out = Vec::new();
    collect_strings(&v, &mut out, n, max);
    out
}

fn collect_strings(v: &serde_json::Value, out: &mut Vec<Vec<u8>>, n: usize, max: usize) {
    if out.len() >= n {
        return;
    }
    match v {
        serde_json::Value::String(s) if s.len() > 40 && s.len() <= max => out.push(s.as_bytes().to_vec()),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out, n, max)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out, n, max)),
        _ => {}
    }
}
