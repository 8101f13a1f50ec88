//! The faults' machinery: running as root, a tmpfs that fills up ([`Tmpfs`]), the corpus
//! of the disk-full tests and what their message must say, and a dump split into what the
//! batches and the global steps wrote. `models` copies the installed models to damage them.

pub mod models;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::musique_docs;

pub fn root() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A tmpfs mounted at `dir`, unmounted when dropped (also when the test fails).
pub struct Tmpfs(pub PathBuf);

impl Tmpfs {
    pub fn mount(dir: &Path, bytes: u64) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        sh(Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={bytes}")]).arg("tmpfs").arg(dir));
        Tmpfs(dir.to_path_buf())
    }
    pub fn resize(&self, bytes: u64) {
        sh(Command::new("mount").args(["-o", &format!("remount,size={bytes}")]).arg(&self.0));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

pub fn run(c: &mut Command) -> (Output, String) {
    let out = c.output().expect("run rhizome");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    (out, err)
}

pub fn db_bytes(idx: &Path) -> u64 {
    std::fs::read_dir(idx).unwrap().flatten().map(|e| e.metadata().unwrap().len()).sum()
}

/// Tables written by the global steps at the end of a run (synonymy, communities), which
/// a run stopped by an error never reaches; the rest is what batches write (but for the
/// documents' types and tags, which describing writes, also at the end).
const GLOBAL: &[&str] = &["synonyms", "communities", "community_members", "community_reports"];

/// (what the batches wrote, what the global steps wrote) of a dump.
pub fn split(d: &BTreeMap<String, Vec<String>>) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<String>>) {
    let (mut batches, mut global) = (BTreeMap::new(), BTreeMap::new());
    for (t, rows) in d {
        if GLOBAL.contains(&t.as_str()) {
            global.insert(t.clone(), rows.clone());
        } else if t == "vectors" {
            let (rep, rest): (Vec<String>, Vec<String>) = rows.iter().cloned().partition(|r| r.starts_with("report\t"));
            global.insert("report vectors".into(), rep);
            batches.insert(t.clone(), rest);
        } else if t == "document_tags" {
            let (described, rest): (Vec<String>, Vec<String>) =
                rows.iter().cloned().partition(|r| r.starts_with("type\t") || r.starts_with("tag\t"));
            global.insert("document descriptions".into(), described);
            batches.insert(t.clone(), rest);
        } else if t == "meta" {
            batches.insert(t.clone(), rows.iter().filter(|r| !r.starts_with("synonyms_dirty\t")).cloned().collect());
        } else {
            batches.insert(t.clone(), rows.clone());
        }
    }
    (batches, global)
}

/// For the disk-full tests (root only: they mount a tmpfs): a temporary folder, 48 MuSiQue
/// passages as files in it, and the first 8 of them.
pub fn disk_full_corpus() -> Option<(tempfile::TempDir, PathBuf, Vec<PathBuf>)> {
    if !root() {
        eprintln!("skipped: mounting a small tmpfs needs root (CI runs as root)");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let docs = musique_docs(&tmp.path().join("docs"), 0, 48);
    let first: Vec<PathBuf> = (0..8).map(|i| docs.join(format!("{i:04}.txt"))).collect();
    Some((tmp, docs, first))
}

/// The run failed without a panic, saying the disk is full, naming `index`, free space and
/// running the same command again.
pub fn assert_says_disk_full(out: &Output, err: &str, index: &str) {
    assert!(!out.status.success(), "the run fit on the disk: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for want in ["disk is full", index, "free space", "run the same command again"] {
        assert!(err.contains(want), "the message lacks {want:?}: {err}");
    }
}

/// Bytes in use on the filesystem mounted at `dir`.
pub fn used_bytes(dir: &Path) -> u64 {
    let out = Command::new("df").args(["-B1", "--output=used"]).arg(dir).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap()
}
