//! The installed models where `nobody` can read them, and copies of a model whose files a
//! test may damage without touching the installed one.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::sh;

/// The installed models directory, hard-linked (or copied) where `nobody` can read it.
pub fn readable_models(under: &Path) -> PathBuf {
    let to = under.join("models-ro");
    copy_model(&to, "all-MiniLM-L6-v2", &[]);
    copy_model(&to, "en-pos", &[]);
    sh(Command::new("chmod").args(["-R", "a+rX"]).arg(&to));
    to
}

/// `name` from the installed models directory into `to`: hard links (no copy of the
/// weights) except the files in `own`, which are copied so that damaging them leaves the
/// installed model alone.
pub fn copy_model(to: &Path, name: &str, own: &[&str]) {
    let from = rhizome_embed::models_dir().join(name);
    assert!(from.is_dir(), "{} missing: run `rhizome models fetch`", from.display());
    for e in walk(&from) {
        let rel = e.strip_prefix(&from).unwrap();
        let dst = to.join(name).join(rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&dst);
        if own.iter().any(|o| Path::new(o) == rel) || std::fs::hard_link(&e, &dst).is_err() {
            std::fs::copy(&e, &dst).unwrap();
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
