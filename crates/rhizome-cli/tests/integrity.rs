//! The index's integrity promises, end to end: two writers take turns and end as if they
//! had run one after the other; deleting documents one at a time equals never indexing
//! them, community reports included; global steps left undone are redone by the next run;
//! a large file is written in parts and a kill inside it resumes to the clean run.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

fn index(idx: &Path, what: &Path) {
    let mut c = rz(idx);
    c.arg("index").arg(what);
    ok(c);
}

/// Two `rhizome index` runs started together on one index, 10 times: every trial ends
/// equal, table for table, to one of the two sequential orders (entity resolution by
/// similarity may merge differently depending on which corpus came first, so both orders
/// are references), or the second was refused before writing and, rerun, ends equal.
#[test]
fn two_indexers_at_once_end_as_if_sequential() {
    let tmp = tempfile::tempdir().unwrap();
    let a = musique_docs(&tmp.path().join("a"), 0, 25);
    let b = musique_docs(&tmp.path().join("b"), 25, 25);
    let ab = tmp.path().join("ab");
    index(&ab, &a);
    index(&ab, &b);
    let ba = tmp.path().join("ba");
    index(&ba, &b);
    index(&ba, &a);
    let (want_ab, want_ba) = (dump(&ab), dump(&ba));
    let (mut waited, mut readers) = (0, 0);
    for trial in 0..10 {
        let idx = tmp.path().join(format!("t{trial}"));
        let spawn = |what: &Path| {
            let mut c = rz(&idx);
            c.arg("index").arg(what).stdout(Stdio::piped()).stderr(Stdio::piped());
            c.spawn().unwrap()
        };
        let (first, second) = if trial % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let p1 = spawn(first);
        let p2 = spawn(second);
        // A reader during the writes: once the index answers, it always answers.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (idx, stop) = (idx.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut answered, mut failures) = (0, Vec::new());
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let out = rz(&idx).args(["--json", "query", "Who founded the company?"]).output().unwrap();
                    if out.status.success() {
                        answered += 1;
                    } else if answered > 0 {
                        failures.push(String::from_utf8_lossy(&out.stderr).to_string());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                (answered, failures)
            })
        };
        for p in [p1, p2] {
            let out = p.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "trial {trial}: an indexer failed: {err}");
            assert!(!err.contains("database is locked") && !err.contains("corrupt"), "trial {trial}: {err}");
            if err.contains("waiting: index") {
                assert!(err.contains("is being written by process"), "the waiting message names the holder: {err}");
                waited += 1;
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (answered, failures) = reader.join().unwrap();
        assert!(failures.is_empty(), "trial {trial}: a reader failed during the writes: {failures:?}");
        readers += answered;
        let got = dump(&idx);
        let d_ab = diff(&got, &want_ab);
        let d_ba = diff(&got, &want_ba);
        assert!(
            d_ab.is_empty() || d_ba.is_empty(),
            "trial {trial} equals neither sequential order:\nvs A,B: {d_ab:#?}\nvs B,A: {d_ba:#?}"
        );
        let gap = vector_gap(&idx, if d_ab.is_empty() { &ab } else { &ba });
        assert!(gap < 1e-3, "trial {trial}: vectors differ by {gap}");
    }
    eprintln!("10 trials, {waited} writer(s) waited for the other; {readers} queries answered during the writes");
    assert!(waited > 0, "the two indexers never overlapped; the test did not test anything");
}

/// `--no-wait`: a second writer is refused at once, before writing anything, with a message
/// naming the holder; rerun after the first, it ends equal to sequential indexing.
#[test]
fn a_second_writer_with_no_wait_is_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let a = musique_docs(&tmp.path().join("a"), 0, 40);
    let b = musique_docs(&tmp.path().join("b"), 40, 5);
    let idx = tmp.path().join("idx");
    index(&idx, &b);
    let before = dump(&idx);
    let mut first = rz(&idx).arg("index").arg(&a).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // Wait until the first writer holds the lock.
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(idx.join("rhizome.lock")).unwrap_or_default().trim().is_empty() {
        assert!(Instant::now() < deadline, "the first writer never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = rz(&idx);
    c.args(["--no-wait", "delete"]).arg(b.join("0040.txt"));
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let still_running = first.try_wait().unwrap().is_none();
    assert!(first.wait().unwrap().success());
    if still_running {
        assert!(!out.status.success(), "refused while the first writer runs");
        assert!(err.contains("is busy") && err.contains("rhizome") && err.contains("index"), "{err}");
        // Refused before writing: the first writer's work is all that changed.
        let mut c = rz(&idx);
        c.arg("delete").arg(b.join("0040.txt"));
        ok(c);
    }
    let want = tmp.path().join("want");
    index(&want, &b);
    index(&want, &a);
    let mut c = rz(&want);
    c.arg("delete").arg(b.join("0040.txt"));
    ok(c);
    assert_same_index(&idx, &want, "refused, then rerun");
    assert_ne!(before, dump(&idx));
}

/// Index A and B, delete B's documents one command at a time: every table (communities and
/// their reports included) equals indexing A alone.
#[test]
fn deleting_one_at_a_time_equals_never_indexing() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    musique_docs(&docs, 0, 60);
    let only_a = tmp.path().join("only_a");
    let a_dir = tmp.path().join("a_only");
    std::fs::create_dir_all(&a_dir).unwrap();
    for i in 0..30 {
        let name = format!("{i:04}.txt");
        std::fs::copy(docs.join(&name), a_dir.join(&name)).unwrap();
    }
    index(&only_a, &a_dir);
    let both = tmp.path().join("both");
    index(&both, &docs);
    // The same files, indexed from the other folder, have other sources: index A's files
    // from `docs` too for the reference, so only B differs.
    let reference = tmp.path().join("reference");
    let mut c = rz(&reference);
    c.arg("index");
    for i in 0..30 {
        c.arg(docs.join(format!("{i:04}.txt")));
    }
    ok(c);
    for i in 30..60 {
        let mut c = rz(&both);
        c.arg("delete").arg(docs.join(format!("{i:04}.txt")));
        ok(c);
    }
    assert_same_index(&both, &reference, "deleting one at a time differs from never indexing");
    assert!(!dump(&reference)["community_reports"].is_empty(), "the reference has reports to compare");
    assert_eq!(stats(&only_a)["nodes"], stats(&reference)["nodes"]);
}

/// Index A, then B whose "US Congress" entity resolution merges into A's "United States
/// Congress" (the entity keeps A's key); delete A: every table and vector equals indexing B
/// alone, where the entity is keyed, named and embedded by B's name.
#[test]
fn deleting_the_document_that_named_a_merged_entity_equals_never_indexing_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a.txt"), tmp.path().join("b.txt"));
    std::fs::write(&a, "The United States Congress passed the Clean Air Act in 1990.").unwrap();
    std::fs::write(&b, "The US Congress met in Washington to debate the budget.").unwrap();
    let both = tmp.path().join("both");
    index(&both, &a);
    let mut c = rz(&both);
    c.arg("index").arg(&b);
    let r = json(c);
    assert_eq!(r["report"]["entities_merged"], 1, "US Congress merges into United States Congress: {r}");
    let mut c = rz(&both);
    c.arg("delete").arg(&a);
    ok(c);
    let only_b = tmp.path().join("only_b");
    index(&only_b, &b);
    assert_same_index(&both, &only_b, "deleting the document that named a merged entity differs from never indexing");
}

/// Global steps a run left undone are redone by the next run, even when it finds every
/// document unchanged: synonymy marked dirty, reports missing or stale.
#[test]
fn global_steps_left_undone_are_redone_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = musique_docs(&tmp.path().join("docs"), 100, 30);
    let idx = tmp.path().join("idx");
    index(&idx, &docs);
    let want = dump(&idx);
    assert!(!want["synonyms"].is_empty() && !want["community_reports"].is_empty());
    // What an interrupted run leaves: the flag set and the edges gone; reports missing
    // and one stale.
    let conn = rusqlite::Connection::open(idx.join("rhizome.sqlite")).unwrap();
    conn.execute_batch(
        "DELETE FROM synonyms; UPDATE meta SET value = '1' WHERE key = 'synonyms_dirty';
         DELETE FROM community_reports WHERE rowid IN (SELECT rowid FROM community_reports LIMIT 3);
         UPDATE community_reports SET summary = 'stale', fingerprint = 'rfp_old'
           WHERE rowid = (SELECT MAX(rowid) FROM community_reports);
         UPDATE meta SET value = '0' WHERE key = 'reports_version';",
    )
    .unwrap();
    drop(conn);
    let mut c = rz(&idx);
    c.arg("index").arg(&docs);
    let r = json(c);
    assert_eq!(r["report"]["documents_unchanged"], 30, "{r}");
    let d = diff(&dump(&idx), &want);
    assert!(d.is_empty(), "{d:#?}");
    assert!(r["report"]["synonym_edges"].as_u64().unwrap() > 0, "{r}");
}

/// `communities --force` recomputes the communities and rewrites every report.
#[test]
fn communities_force_really_recomputes() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = musique_docs(&tmp.path().join("docs"), 200, 20);
    let idx = tmp.path().join("idx");
    index(&idx, &docs);
    let want = dump(&idx);
    let conn = rusqlite::Connection::open(idx.join("rhizome.sqlite")).unwrap();
    conn.execute_batch(
        "UPDATE community_reports SET summary = 'tampered';
         INSERT INTO community_reports SELECT 'orphan', level, title, summary, findings, rating,
           rating_explanation, fingerprint, kind FROM community_reports LIMIT 1;",
    )
    .unwrap();
    drop(conn);
    let mut c = rz(&idx);
    c.args(["communities", "--force"]);
    let out = json(c);
    assert_eq!(out["communities"]["recomputed"], true, "{out}");
    let d = diff(&dump(&idx), &want);
    assert!(d.is_empty(), "{d:#?}");
}

/// A large single file is written in parts: kill the run after some parts are committed,
/// rerun: every table equals the uninterrupted run's.
#[test]
fn killed_inside_a_large_file_resumes_to_the_clean_run() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(shared().join("musique/musique_train_corpus.json")).unwrap())
            .unwrap();
    let mut text = String::new();
    for p in corpus.iter().take(400) {
        text.push_str(p["title"].as_str().unwrap());
        text.push_str(". ");
        text.push_str(p["text"].as_str().unwrap());
        text.push_str("\n\n");
    }
    let file = tmp.path().join("big.txt");
    std::fs::write(&file, &text).unwrap();
    kill_inside_and_resume(tmp.path(), &file);
}

/// A long PDF (made by tests/fixtures/documents.py) is written in parts like any large
/// file: killed inside, the same command finishes it as a clean run would have.
#[test]
fn killed_inside_a_long_pdf_resumes_to_the_clean_run() {
    let tmp = tempfile::tempdir().unwrap();
    let python = rhizome_testdb::python::named("fixtures");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents.py");
    let out = Command::new(python).arg(script).args(["--long", "40"]).arg(tmp.path()).output().unwrap();
    assert!(out.status.success(), "documents.py --long: {}", String::from_utf8_lossy(&out.stderr));
    kill_inside_and_resume(tmp.path(), &tmp.path().join("long.pdf"));
}

/// Index `file` cleanly, then again killed once at least 32 chunks are written, then
/// finish the killed run: the two indexes are the same.
fn kill_inside_and_resume(tmp: &Path, file: &Path) {
    let parts = ["--set", "embed.chunks_per_batch=16"];
    let clean = tmp.join("clean");
    let mut c = rz(&clean);
    c.args(parts).arg("index").arg(file);
    ok(c);
    let want = dump(&clean);
    let chunks = want["chunks"].len();
    assert!(chunks > 64, "the file makes {chunks} chunks: enough parts to kill inside");

    let killed = tmp.join("killed");
    let mut child =
        rz(&killed).args(parts).arg("index").arg(file).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut seen = 0;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let s = rz(&killed).args(["stats", "--json"]).output().ok().filter(|o| o.status.success());
        seen = s
            .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
            .and_then(|v| v["nodes"]["Chunk"].as_u64())
            .unwrap_or(0) as usize;
        if seen >= 32 {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    assert!(!child.wait().unwrap().success(), "indexing finished before it could be killed");
    assert!(seen >= 32 && seen < chunks, "killed inside the file: {seen} of {chunks} chunks written");
    let partial = dump(&killed);
    assert_eq!(partial["partial_documents"].len(), 1, "the file is marked as written in part");
    // A reader sees the committed parts.
    let mut c = rz(&killed);
    c.args(["query", "Who founded the city?"]);
    ok(c);
    let mut c = rz(&killed);
    c.args(parts).arg("index").arg(file);
    let r = json(c);
    assert_eq!(r["report"]["documents_indexed"], 1, "{r}");
    assert_same_index(&killed, &clean, "resumed run differs from the clean run");
}
