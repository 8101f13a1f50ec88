//! Indexes that several test binaries read, built once per build of the binary and
//! shared: the first test to ask builds it under a file lock, the others wait for it and
//! then only read it. A rebuilt binary gets a fresh fixture (the name carries the
//! binary's size and modification time); older ones are removed.

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Exclusive flock on `file` for as long as the guard lives.
struct Locked(File);

impl Locked {
    fn take(path: &Path) -> Locked {
        let f = File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        // SAFETY: flock(2) on a descriptor this guard owns.
        let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(rc, 0, "flock {}", path.display());
        Locked(f)
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// The fixture `name`, made by `build(dir)` if this binary has not made it yet.
pub fn shared_index(name: &str, build: impl FnOnce(&Path)) -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_rhizome"));
    let m = fs::metadata(bin).expect("the rhizome binary");
    let secs = m.modified().unwrap().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures");
    fs::create_dir_all(&root).unwrap();
    let dir = root.join(format!("{name}-{}-{secs}", m.len()));
    let _lock = Locked::take(&root.join(format!("{name}.lock")));
    if !dir.join(".complete").exists() {
        for old in fs::read_dir(&root).unwrap().flatten() {
            let n = old.file_name().to_string_lossy().to_string();
            if n.starts_with(&format!("{name}-")) && old.path().is_dir() {
                let _ = fs::remove_dir_all(old.path());
            }
        }
        build(&dir.join("index"));
        fs::write(dir.join(".complete"), b"").unwrap();
    }
    dir.join("index")
}

/// The three example documents indexed with MiniLM (built once per test binary), copied
/// into `dir/index` for a test that writes to it.
pub fn examples_copy(dir: &Path) -> PathBuf {
    let shared = shared_index("examples-minilm", |idx| {
        let mut c = super::rz(idx);
        c.arg("index").arg(super::examples());
        super::ok(c);
    });
    let index = dir.join("index");
    let out = std::process::Command::new("cp").arg("-r").arg(&shared).arg(&index).output().unwrap();
    assert!(out.status.success(), "cp -r {}: {}", shared.display(), String::from_utf8_lossy(&out.stderr));
    index
}

/// The MuSiQue OpenIE import (GPT-3.5 triples, 1,890 passages) with MiniLM: read only.
pub fn musique_openie() -> PathBuf {
    shared_index("musique-openie-minilm", |idx| {
        let mut c = super::rz(idx);
        c.arg("import")
            .arg("hipporag-openie")
            .arg(super::shared().join("musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"));
        super::ok(c);
    })
}

/// The default embedder, which the recall figures are measured with (the last
/// `--set` wins over the small model [`super::rz`] sets).
pub const E5: [&str; 2] = ["--set", "embed.model=multilingual-e5-small"];

/// The MuSiQue corpus (1,890 passages) indexed LLM-free with the default embedder
/// (multilingual-e5-small): read only; query it with [`E5`] too. About six minutes on two
/// busy cores, nearly all of it embedding; built once per test binary.
pub fn musique_nlp() -> PathBuf {
    shared_index("musique-nlp-e5", |idx| {
        let mut c = super::rz(idx);
        c.args(E5).arg("index").arg(super::shared().join("musique/musique_train_corpus.json"));
        super::ok(c);
    })
}
