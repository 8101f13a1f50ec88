//! Checking installed model files against [`crate::TRUSTED`].
//!
//! [`verify`] reads every file (for `fetch`); [`verify_before_load`] does the same but
//! remembers each file it found good in `.verified` beside the files, with the size and
//! modification time it had, so that a model is hashed once after it is installed rather
//! than at every start. Any write to a file changes its modification time, so a file
//! damaged in place (same size, other bytes) is hashed again, and refused.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::digests::trusted;
use crate::{model_path, ModelSpec};

/// The file in a model's directory that remembers the files found good.
const STAMP: &str = ".verified";

/// A problem with one file: its path and what is wrong with it.
type Problem = (PathBuf, String);

fn untrusted(spec: &ModelSpec, file: &str) -> String {
    format!(
        "is not among the model files this rhizome trusts (no pinned digest for {} {file}); use a \
         model that `rhizome models list` shows",
        spec.name
    )
}

fn wrong_len(got: u64, want: u64) -> String {
    format!("is {got} bytes, expected {want} (truncated or damaged)")
}

/// The first required file of the installed `spec` whose size is not its pinned size, or
/// that has no pinned digest at all. Missing files are not reported here.
pub(crate) fn wrong_size(spec: &ModelSpec, dir: &Path) -> Option<Problem> {
    let p = model_path(spec, dir);
    spec.required_files.iter().find_map(|f| {
        let path = p.join(f);
        let got = fs::metadata(&path).ok().filter(|m| m.is_file())?.len();
        let Some(t) = trusted(spec.name, f) else { return Some((path, untrusted(spec, f))) };
        (got != t.len).then(|| (path, wrong_len(got, t.len)))
    })
}

/// The first required file of the installed `spec` of the wrong size (see [`verify`] for
/// the contents).
pub fn damaged(spec: &ModelSpec, dir: &Path) -> Option<Problem> {
    wrong_size(spec, dir)
}

fn sha256_hex(path: &Path) -> std::io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut h = Sha256::new();
    std::io::copy(&mut file, &mut h)?;
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether the file at `path` is the trusted `file` of `spec`: hashed in full.
fn check_file(spec: &ModelSpec, file: &str, path: &Path) -> Option<String> {
    let Some(t) = trusted(spec.name, file) else { return Some(untrusted(spec, file)) };
    match sha256_hex(path) {
        Err(e) => Some(format!("cannot be read: {e}")),
        Ok(got) if got != t.sha256 => Some(format!("has SHA-256 {got}, expected {} (damaged or replaced)", t.sha256)),
        Ok(_) => None,
    }
}

/// The first installed file of `spec` whose size or SHA-256 is not its pinned one, reading
/// every file.
pub fn verify(spec: &ModelSpec, dir: &Path) -> Option<Problem> {
    if let Some(d) = wrong_size(spec, dir) {
        return Some(d);
    }
    verify_files(spec, &model_path(spec, dir))
}

/// The first of `spec`'s files in `model_dir` (installed or being installed) whose
/// contents are not the trusted ones, or that is missing.
pub(crate) fn verify_files(spec: &ModelSpec, model_dir: &Path) -> Option<Problem> {
    spec.required_files.iter().find_map(|f| {
        let path = model_dir.join(f);
        check_file(spec, f, &path).map(|what| (path, what))
    })
}

/// A file's size and modification time (nanoseconds), as the stamp records them.
fn identity(path: &Path) -> Option<(u64, u128)> {
    let m = fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos()))
}

/// The stamp's lines: `file`, size, modification time, SHA-256, tab-separated.
fn read_stamp(model_dir: &Path) -> Vec<(String, u64, u128, String)> {
    let text = fs::read_to_string(model_dir.join(STAMP)).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.to_string(), f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?.to_string()))
        })
        .collect()
}

/// Write the stamp (best effort: a read-only models directory is hashed at every load).
fn write_stamp(model_dir: &Path, lines: &[(String, u64, u128, String)]) {
    let text: String = lines.iter().map(|(f, n, t, h)| format!("{f}\t{n}\t{t}\t{h}\n")).collect();
    let tmp = model_dir.join(format!("{STAMP}.tmp-{}", std::process::id()));
    let written = fs::File::create(&tmp).and_then(|mut f| f.write_all(text.as_bytes()));
    if written.is_err() || fs::rename(&tmp, model_dir.join(STAMP)).is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

/// The first of `files` of the installed `spec` (all its files, or the ones a loader reads)
/// whose size or SHA-256 is not its pinned one, as [`verify`] finds it; but a file the stamp
/// says was found good with its present size and modification time is not read again.
/// Files found good are added to the stamp; the stamp's other lines are kept.
pub fn verify_before_load(spec: &ModelSpec, dir: &Path, files: &[&str]) -> Option<Problem> {
    let p = model_path(spec, dir);
    let mut stamp = read_stamp(&p);
    let mut hashed = false;
    for f in files {
        let path = p.join(f);
        let Some(t) = trusted(spec.name, f) else { return Some((path, untrusted(spec, f))) };
        let id = identity(&path);
        if let Some((got, _)) = id.filter(|(n, _)| *n != t.len) {
            return Some((path, wrong_len(got, t.len)));
        }
        let known = stamp.iter().any(|(sf, n, m, h)| sf == f && Some((*n, *m)) == id && h == t.sha256);
        if known {
            continue;
        }
        if let Some(what) = check_file(spec, f, &path) {
            return Some((path, what));
        }
        hashed = true;
        stamp.retain(|(sf, ..)| sf != f);
        if let Some((n, m)) = id {
            stamp.push((f.to_string(), n, m, t.sha256.to_string()));
        }
    }
    if hashed {
        write_stamp(&p, &stamp);
    }
    None
}
