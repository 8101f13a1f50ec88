//! Faults from outside, end to end: the disk fills during indexing (a small tmpfs),
//! files in a folder cannot be read, model files are truncated or damaged on disk. Each
//! must give a clear message with the fix, lose nothing already indexed, and recover.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::*;

fn root() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A tmpfs mounted at `dir`, unmounted when dropped (also when the test fails).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, bytes: u64) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        sh(Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={bytes}")]).arg("tmpfs").arg(dir));
        Tmpfs(dir.to_path_buf())
    }
    fn resize(&self, bytes: u64) {
        sh(Command::new("mount").args(["-o", &format!("remount,size={bytes}")]).arg(&self.0));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn run(c: &mut Command) -> (Output, String) {
    let out = c.output().expect("run rhizome");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    (out, err)
}

fn db_bytes(idx: &Path) -> u64 {
    std::fs::read_dir(idx).unwrap().flatten().map(|e| e.metadata().unwrap().len()).sum()
}

/// Tables written by the global steps at the end of a run (synonymy, communities), which
/// a run stopped by an error never reaches; the rest is what batches write.
const GLOBAL: &[&str] = &["synonyms", "communities", "community_members", "community_reports"];

/// (what the batches wrote, what the global steps wrote) of a dump.
fn split(d: &BTreeMap<String, Vec<String>>) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<String>>) {
    let (mut batches, mut global) = (BTreeMap::new(), BTreeMap::new());
    for (t, rows) in d {
        if GLOBAL.contains(&t.as_str()) {
            global.insert(t.clone(), rows.clone());
        } else if t == "vectors" {
            let (rep, rest): (Vec<String>, Vec<String>) = rows.iter().cloned().partition(|r| r.starts_with("report\t"));
            global.insert("report vectors".into(), rep);
            batches.insert(t.clone(), rest);
        } else if t == "meta" {
            batches.insert(t.clone(), rows.iter().filter(|r| !r.starts_with("synonyms_dirty\t")).cloned().collect());
        } else {
            batches.insert(t.clone(), rows.clone());
        }
    }
    (batches, global)
}

/// The index lives on a tmpfs too small for the whole run: the run fails in a batch with
/// a message naming the full disk, the index and the fix; the index is exactly what the
/// batches before committed (and the global steps as they were before the run), opens
/// and answers; after the disk is made larger, the same command completes to the index
/// an unhindered run makes.
#[test]
fn disk_full_keeps_committed_batches_and_the_rerun_completes() {
    if !root() {
        eprintln!("skipped: mounting a small tmpfs needs root (CI runs as root)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let docs = musique_docs(&tmp.path().join("docs"), 0, 48);
    let first: Vec<PathBuf> = (0..8).map(|i| docs.join(format!("{i:04}.txt"))).collect();
    let batch = ["--set", "embed.docs_per_batch=4"];
    let index_files = |idx: &Path, files: &[PathBuf]| {
        let mut c = rz(idx);
        c.args(batch).arg("index").args(files);
        ok(c);
    };
    let s0 = tmp.path().join("s0");
    index_files(&s0, &first);
    let clean = tmp.path().join("clean");
    sh(Command::new("cp").arg("-a").arg(&s0).arg(&clean));
    index_files(&clean, std::slice::from_ref(&docs));
    // Room for the first index and about half of what the run adds (its WAL included).
    let (small, full) = (db_bytes(&s0), db_bytes(&clean));
    let size = (small + (full - small) / 2).div_ceil(4096) * 4096;
    let fs = Tmpfs::mount(&tmp.path().join("mnt"), size);
    let idx = fs.0.join("idx");
    sh(Command::new("cp").arg("-a").arg(&s0).arg(&idx));

    let mut c = rz(&idx);
    c.args(batch).arg("index").arg(&docs);
    let (out, err) = run(&mut c);
    assert!(!out.status.success(), "the run fit on {size} bytes: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for want in ["disk is full", &idx.display().to_string(), "free space", "run the same command again"] {
        assert!(err.contains(want), "the message lacks {want:?}: {err}");
    }
    // Still full: the index opens and answers.
    let mut c = rz(&idx);
    c.args(["query", "Who founded the company?"]);
    ok(c);
    let n = stats(&idx)["nodes"]["Document"].as_u64().unwrap() as usize;
    assert!(n > 8 && n < 48, "the disk filled mid-run: {n} of 48 documents committed");
    assert_eq!((n - 8) % 4, 0, "whole batches only: {n}");
    // Exactly what a run over those documents commits, global steps untouched.
    let prefix = tmp.path().join("prefix");
    sh(Command::new("cp").arg("-a").arg(&s0).arg(&prefix));
    let committed: Vec<PathBuf> = (8..n).map(|i| docs.join(format!("{i:04}.txt"))).collect();
    index_files(&prefix, &committed);
    let got = dump(&idx);
    let (got_batches, got_global) = split(&got);
    let d = diff(&got_batches, &split(&dump(&prefix)).0);
    assert!(d.is_empty(), "the batches committed before the full disk differ from a run over them:\n{d:#?}");
    let d = diff(&got_global, &split(&dump(&s0)).1);
    assert!(d.is_empty(), "synonymy or communities changed by the failed run:\n{d:#?}");
    assert!(got["meta"].contains(&"synonyms_dirty\t1".to_string()), "synonymy is marked to be redone");

    fs.resize(256 << 20);
    let mut c = rz(&idx);
    c.args(batch).arg("index").arg(&docs);
    let r = json(c);
    assert_eq!(r["report"]["documents_indexed"].as_u64(), Some(48 - n as u64), "{r}");
    assert_same_index(&idx, &clean, "the rerun after freeing space differs from an unhindered run");
    eprintln!("disk full: tmpfs of {size} bytes, {n} of 48 documents committed before it filled");
}
