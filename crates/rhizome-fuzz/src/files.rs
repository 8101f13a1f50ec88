//! A scratch folder for targets whose API takes a path: one file name per thread, so that
//! a worker replaced after a hang never shares a file with the one left behind.

use std::path::PathBuf;
use std::sync::OnceLock;

fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::Builder::new().prefix("rhizome-fuzz-").tempdir().expect("a scratch folder"))
}

/// Write `data` to a scratch file named `stem.ext` (unique to this thread) and return
/// its path.
pub fn write(stem: &str, ext: &str, data: &[u8]) -> PathBuf {
    let id = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let dir = scratch().path().join(id);
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{stem}.{ext}"));
    std::fs::write(&path, data).expect("writing a scratch file");
    path
}

/// A scratch folder unique to this thread and `name`, created empty.
pub fn dir(name: &str) -> PathBuf {
    let id = format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let dir = scratch().path().join(id).join(name);
    let _ = std::fs::create_dir_all(&dir);
    dir
}
