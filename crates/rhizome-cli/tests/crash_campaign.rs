//! The crash campaign: `rhizome index` killed with SIGKILL at seeded random moments, rerun
//! to completion, must end exactly as an uninterrupted run — every table (stats and row
//! counts included, see `support::dump`), every vector within 1e-3, and the top contexts of
//! fixed questions (basic and hippo) — LLM-free and with an LLM (a loopback
//! OpenAI-compatible server, deterministic per chunk), on SQLite and on PostgreSQL; and
//! `rhizome serve` killed during an upload job, then restarted on the same index: the job
//! resumes and the index ends as a clean upload of the same files.
//!
//! `RHIZOME_CRASH_KILLS` (kills per configuration; by default a short run for CI: 2
//! LLM-free, 1 with the LLM, 1 on PostgreSQL, 1 of the server),
//! `RHIZOME_CRASH_KILLS_PG` (PostgreSQL; default the same), `RHIZOME_CRASH_SEED`.
//! `scripts/crash-campaign` runs the full campaign and prints its table. Each test prints
//! one `campaign:` line (configuration, kills, recovered, failures) that the script reads.
//!
//! Kill delays are spread over the clean run's duration (one stratum per kill, a seeded
//! point inside it), so the kills land in every stage; what each kill interrupted is read
//! from the state it left (documents committed, synonyms, communities). Every fourth kill
//! waits for the last batch's commit and lands in the global steps after it (short on
//! this corpus). One kill in three also kills the first rerun.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rhizome_llm_testing::MockOpenAi;
use serde_json::Value;
use support::{diff, dump, musique_docs, ok, rz, vector_gap};

/// Passages of the corpus, and documents per batch (so a run commits several batches).
const DOCS: usize = 40;
const PER_BATCH: &str = "embed.docs_per_batch=8";
const QUESTIONS: &[&str] =
    &["Who founded the company?", "In which country is the city located?", "When was the album released?"];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

fn seed() -> u64 {
    env_usize("RHIZOME_CRASH_SEED", 15) as u64
}

/// splitmix64: a seeded stream of numbers in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Where an index lives and how `rhizome` reaches it.
#[derive(Clone)]
enum Store {
    Sqlite(PathBuf),
    Postgres { url: String, scratch: PathBuf },
}

/// One configuration of the campaign.
struct Setup {
    name: &'static str,
    llm: Option<MockOpenAi>,
}

impl Setup {
    fn cmd(&self, store: &Store) -> Command {
        let mut c = match store {
            Store::Sqlite(dir) => rz(dir),
            Store::Postgres { url, scratch } => {
                let mut c = rz(scratch);
                c.args(["--store", url]);
                c
            }
        };
        c.args(["--set", PER_BATCH]);
        // The campaign's own variables are not the binary's (it would warn about them).
        for v in ["RHIZOME_CRASH_KILLS", "RHIZOME_CRASH_KILLS_PG", "RHIZOME_CRASH_KILLS_SERVER", "RHIZOME_CRASH_SEED"] {
            c.env_remove(v);
        }
        if let Some(llm) = &self.llm {
            c.args(["--llm-provider", "openai", "--llm-model", "mock-model", "--llm-base-url"])
                .arg(llm.base_url())
                .args(["--set", "llm.retry_base_ms=10"])
                .env("RHIZOME_LLM_API_KEY", "sk-loopback");
        }
        c
    }

    fn index(&self, store: &Store, docs: &Path) -> Command {
        let mut c = self.cmd(store);
        c.arg("index").arg(docs).stdout(Stdio::null()).stderr(Stdio::piped());
        if self.llm.is_some() {
            c.args(["--extractor", "llm"]);
        }
        c
    }
}

/// What an index holds, in a form two indexes compare by: every table (via SQLite: a
/// PostgreSQL index is first copied into a SQLite directory with `rhizome copy`, and its
/// own tables' row counts are added), and the top contexts of the fixed questions.
struct Snapshot {
    sqlite: PathBuf,
    tables: std::collections::BTreeMap<String, Vec<String>>,
    contexts: Vec<String>,
}

fn snapshot(setup: &Setup, store: &Store, tmp: &Path, label: &str) -> Snapshot {
    let sqlite = match store {
        Store::Sqlite(dir) => dir.clone(),
        Store::Postgres { .. } => {
            let to = tmp.join(format!("copy-{label}"));
            let _ = std::fs::remove_dir_all(&to);
            let mut c = setup.cmd(store);
            c.arg("copy").arg("--to").arg(&to);
            ok(c);
            to
        }
    };
    let mut tables = dump(&sqlite);
    if let Store::Postgres { url, .. } = store {
        tables.insert("postgres_row_counts".into(), pg_row_counts(url));
    }
    let mut contexts = Vec::new();
    for q in QUESTIONS {
        for method in ["basic", "hippo"] {
            let mut c = setup.cmd(store);
            c.args(["--json", "query", q, "--method", method]);
            let out = ok(c);
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let ids: Vec<&str> =
                v["contexts"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap_or("")).collect();
            contexts.push(format!("{method} {q}: {ids:?}"));
        }
    }
    Snapshot { sqlite, tables, contexts }
}

/// Every table of the PostgreSQL database with its row count.
fn pg_row_counts(url: &str) -> Vec<String> {
    let names = rhizome_testdb::postgres::psql(
        url,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
    )
    .unwrap();
    names
        .lines()
        .filter(|t| !t.is_empty())
        .map(|t| {
            let n = rhizome_testdb::postgres::psql(url, &format!("SELECT count(*) FROM \"{t}\"")).unwrap();
            format!("{t}\t{n}")
        })
        .collect()
}

/// Documents a killed run left half-written in a SQLite index: a document without
/// chunks, a chunk without its vector, a document marked as written in part.
fn half_written(dir: &Path) -> Vec<String> {
    if !dir.join("rhizome.sqlite").exists() {
        return Vec::new();
    }
    let conn = rusqlite::Connection::open(dir.join("rhizome.sqlite")).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let mut out = Vec::new();
    for (what, sql) in [
        ("documents without chunks", "SELECT count(*) FROM documents d WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = d.id)"),
        ("chunks without a vector", "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = 'chunk' AND v.id = c.id)"),
        ("documents written in part", "SELECT count(*) FROM partial_documents"),
    ] {
        let n = count(sql);
        if n > 0 {
            out.push(format!("{n} {what}"));
        }
    }
    out
}

/// The differences between two snapshots (empty: the same index).
fn compare(got: &Snapshot, want: &Snapshot) -> Vec<String> {
    let mut d = diff(&got.tables, &want.tables);
    let gap = vector_gap(&got.sqlite, &want.sqlite);
    if gap >= 1e-3 {
        d.push(format!("vectors differ by {gap}"));
    }
    for (g, w) in got.contexts.iter().zip(&want.contexts) {
        if g != w {
            d.push(format!("contexts: {g} instead of {w}"));
        }
    }
    d
}

/// What a killed run had written, read from the state it left.
fn stage_hit(setup: &Setup, store: &Store, clean: &Value) -> String {
    let mut c = setup.cmd(store);
    c.args(["--json", "stats"]);
    let out = c.output().unwrap();
    let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) else {
        return "start (nothing committed)".into();
    };
    let n = |v: &Value, k: &str, x: &str| v[k][x].as_u64().unwrap_or(0);
    let docs = n(&v, "nodes", "Document");
    if docs == 0 {
        "start (nothing committed)".into()
    } else if docs < n(clean, "nodes", "Document") || n(&v, "nodes", "Chunk") < n(clean, "nodes", "Chunk") {
        format!("indexing ({docs} of {} documents committed)", n(clean, "nodes", "Document"))
    } else if n(&v, "edges", "SYNONYM") != n(clean, "edges", "SYNONYM") {
        "synonymy (documents in, synonyms not)".into()
    } else if n(&v, "nodes", "Community") != n(clean, "nodes", "Community")
        || n(&v, "nodes", "CommunityReport") != n(clean, "nodes", "CommunityReport")
    {
        "communities (synonyms in, communities or reports not)".into()
    } else if v != *clean {
        "late (counts differ elsewhere)".into()
    } else {
        "end (every count already equal)".into()
    }
}

/// Documents committed so far (0 when there is no index yet).
fn documents(store: &Store) -> u64 {
    match store {
        Store::Sqlite(dir) => rusqlite::Connection::open_with_flags(
            dir.join("rhizome.sqlite"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|c| c.query_row("SELECT count(*) FROM documents", [], |r| r.get::<_, i64>(0)))
        .map_or(0, |n| n as u64),
        Store::Postgres { url, .. } => rhizome_testdb::postgres::psql(url, "SELECT count(*) FROM documents")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
    }
}

/// Start `c`; once every document is committed (the run is in its global steps:
/// synonymy, communities), SIGKILL it after `delay`. True when it was still running.
fn kill_late(mut c: Command, store: &Store, docs: u64, delay: Duration) -> bool {
    c.stderr(Stdio::null());
    let mut child: Child = c.spawn().unwrap();
    while documents(store) < docs {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(delay);
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    running
}

/// Start `c`, SIGKILL it after `delay`; true when it was still running (a kill), false
/// when it had finished first (its duration then goes into `finished`).
fn kill_after(mut c: Command, delay: Duration, finished: &mut Option<f64>) -> bool {
    c.stderr(Stdio::null());
    let mut child: Child = c.spawn().unwrap();
    let t = Instant::now();
    while t.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            *finished = Some(t.elapsed().as_secs_f64());
            return false;
        }
        std::thread::sleep(Duration::from_millis(5).min(delay.saturating_sub(t.elapsed())));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    running
}

/// Run to completion; the error is the run's stderr.
fn complete(mut c: Command) -> Result<(), String> {
    let out = c.output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr)))
    }
}

/// One configuration: a clean run, then `kills` killed runs, each rerun to completion and
/// compared with it. Returns (kills landed, recovered, failure descriptions).
fn campaign(setup: &Setup, kills: usize, fresh: &mut dyn FnMut(&str) -> Store) -> (usize, usize, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let docs = musique_docs(&tmp.path().join("docs"), 300, DOCS);
    let clean_store = fresh("clean");
    let t = Instant::now();
    complete(setup.index(&clean_store, &docs)).unwrap_or_else(|e| panic!("{}: the clean run failed: {e}", setup.name));
    let clean_secs = t.elapsed().as_secs_f64();
    let clean_stats = {
        let mut c = setup.cmd(&clean_store);
        c.arg("stats");
        support::json(c)
    };
    let want = snapshot(setup, &clean_store, tmp.path(), "clean");
    assert!(
        want.tables["chunks"].len() >= DOCS && !want.tables["synonyms"].is_empty(),
        "{}: a real clean run",
        setup.name
    );
    if setup.llm.is_some() {
        let facts = clean_stats["nodes"]["Fact"].as_u64().unwrap_or(0);
        assert!(facts > 0 && !want.tables["llm_cache"].is_empty(), "{}: the LLM extracted: {clean_stats}", setup.name);
    }
    eprintln!("{}: clean run {clean_secs:.1} s, {} chunks", setup.name, want.tables["chunks"].len());
    // The duration kills are spread over: the clean run's, then that of the last run
    // that finished before its kill.
    let mut scale = clean_secs;
    let mut rng = Rng(seed() ^ setup.name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)));
    let (mut landed, mut recovered, mut failures) = (0, 0, Vec::new());
    for k in 0..kills {
        let store = fresh(&format!("k{k}"));
        // One stratum of the clean run's duration per kill, a seeded point inside it.
        let at = scale * (k as f64 + rng.next()) / kills as f64;
        let twice = rng.next() < 1.0 / 3.0;
        let again_at = scale * rng.next();
        // A run that finished before its kill is no kill: start again on a fresh store,
        // earlier (runs vary in length on a loaded machine).
        let mut at = at;
        let mut store = store;
        let mut tries = 0;
        // Every fourth kill waits for the last batch's commit, then lands in the global
        // steps (short on this corpus: timed kills rarely hit them).
        let late = k % 4 == 3;
        let mut late_delay = Duration::from_secs_f64(0.4 * rng.next());
        // Err(how long the run took, when known): it finished before the kill.
        let try_kill = |store: &Store, at: f64, late_delay: Duration| -> Result<(), Option<f64>> {
            let mut finished = None;
            let killed = if late {
                kill_late(setup.index(store, &docs), store, DOCS as u64, late_delay)
            } else {
                kill_after(setup.index(store, &docs), Duration::from_secs_f64(at), &mut finished)
            };
            if killed {
                Ok(())
            } else {
                Err(finished)
            }
        };
        while let Err(took) = try_kill(&store, at, late_delay) {
            tries += 1;
            assert!(tries < 30, "{}: kill {k} never landed", setup.name);
            eprintln!("{} kill {k}: at {at:.2} s the run had already finished; again earlier", setup.name);
            late_delay /= 2;
            at *= 0.9;
            // Runs got faster (the machine's load fell): scale the later kills to this run.
            if let Some(d) = took {
                scale = d;
                at = at.min(d * 0.9);
            }
            store = fresh(&format!("k{k}-{tries}"));
        }
        landed += 1;
        let hit = stage_hit(setup, &store, &clean_stats);
        if let Store::Sqlite(dir) = &store {
            let h = half_written(dir);
            assert!(h.is_empty(), "{} kill {k}: half-written after the kill: {h:?}", setup.name);
        }
        let mut note = if late {
            format!("{} kill {k}: {:.2} s after the last batch, in {hit}", setup.name, late_delay.as_secs_f64())
        } else {
            format!("{} kill {k}: at {at:.2} s, in {hit}", setup.name)
        };
        if twice && kill_after(setup.index(&store, &docs), Duration::from_secs_f64(again_at), &mut None) {
            note.push_str(&format!("; rerun killed at {again_at:.2} s, in {}", stage_hit(setup, &store, &clean_stats)));
        }
        let result =
            complete(setup.index(&store, &docs)).map_err(|e| vec![format!("the rerun failed: {e}")]).and_then(|()| {
                let got = snapshot(setup, &store, tmp.path(), &format!("k{k}"));
                let d = compare(&got, &want);
                if d.is_empty() {
                    Ok(())
                } else {
                    Err(d)
                }
            });
        match result {
            Ok(()) => {
                recovered += 1;
                eprintln!("{note}: recovered to the clean run");
            }
            Err(d) => {
                eprintln!("{note}: DIFFERS\n{d:#?}");
                failures.push(format!("{note}: {d:?}"));
            }
        }
    }
    eprintln!("campaign: {}\tkills {landed}\trecovered {recovered}\tfailures {}", setup.name, failures.len());
    (landed, recovered, failures)
}

fn run_sqlite(setup: Setup, default_kills: usize) {
    let dirs = tempfile::tempdir().unwrap();
    let root = dirs.path().to_path_buf();
    let mut fresh = |n: &str| Store::Sqlite(root.join(n));
    let (landed, recovered, failures) = campaign(&setup, env_usize("RHIZOME_CRASH_KILLS", default_kills), &mut fresh);
    assert!(
        failures.is_empty(),
        "{}: {recovered} of {landed} kills recovered; failures:\n{}",
        setup.name,
        failures.join("\n")
    );
}

#[test]
fn sqlite_llm_free_kills_recover_to_the_clean_run() {
    run_sqlite(Setup { name: "sqlite llm-free", llm: None }, 2);
}

#[test]
fn sqlite_llm_kills_recover_to_the_clean_run() {
    run_sqlite(Setup { name: "sqlite llm", llm: Some(MockOpenAi::start().unwrap()) }, 1);
}

#[test]
fn postgres_kills_recover_to_the_clean_run() {
    let setup = Setup { name: "postgres llm-free", llm: None };
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let mut fresh =
        |n: &str| Store::Postgres { url: rhizome_testdb::postgres::fresh_database(n), scratch: dir.clone() };
    let kills = env_usize("RHIZOME_CRASH_KILLS_PG", env_usize("RHIZOME_CRASH_KILLS", 1).min(10));
    let (landed, recovered, failures) = campaign(&setup, kills, &mut fresh);
    assert!(
        failures.is_empty(),
        "{}: {recovered} of {landed} kills recovered; failures:\n{}",
        setup.name,
        failures.join("\n")
    );
}

/// `rhizome serve` killed (SIGKILL) while an upload job runs, then restarted on the same
/// index: the job is listed again under its id, marked `resumed`, runs to the end, and
/// the index equals a clean upload of the same files (every table, vectors, contexts);
/// the upload kept on disk for it is gone once it is done.
#[test]
fn server_killed_during_an_upload_resumes_the_job() {
    use support::server::{files_of, start};
    let setup = Setup { name: "server upload", llm: None };
    let tmp = tempfile::tempdir().unwrap();
    let files = files_of(&musique_docs(&tmp.path().join("docs"), 400, DOCS));
    let args = ["--set", PER_BATCH];
    let clean = tmp.path().join("clean");
    let job_secs = {
        let s = start(&clean, &args, &[]);
        let t = Instant::now();
        let id = s.upload(&files);
        s.wait_job(id);
        t.elapsed().as_secs_f64()
    };
    eprintln!("{}: clean upload job {job_secs:.1} s", setup.name);
    let want = snapshot(&setup, &Store::Sqlite(clean.clone()), tmp.path(), "clean");
    let kills = env_usize("RHIZOME_CRASH_KILLS_SERVER", env_usize("RHIZOME_CRASH_KILLS", 1).min(10));
    let mut rng = Rng(seed() ^ 0x5e17e7);
    let (mut recovered, mut failures) = (0, Vec::new());
    for k in 0..kills {
        let idx = tmp.path().join(format!("k{k}"));
        let at = job_secs * (k as f64 + rng.next()) / kills as f64;
        let mut s = start(&idx, &args, &[]);
        let t = Instant::now();
        let id = s.upload(&files);
        std::thread::sleep(Duration::from_secs_f64(at).saturating_sub(t.elapsed()));
        let mut seen = s.get_json(&format!("/jobs/{id}"));
        // Kill while the job runs: a job already done is no kill.
        let mut at = at;
        while seen["state"] == "done" {
            drop(s);
            at *= 0.9;
            let _ = std::fs::remove_dir_all(&idx);
            let s2 = start(&idx, &args, &[]);
            let t = Instant::now();
            let id2 = s2.upload(&files);
            assert_eq!(id2, 1, "a fresh index's first job");
            std::thread::sleep(Duration::from_secs_f64(at).saturating_sub(t.elapsed()));
            seen = s2.get_json(&format!("/jobs/{id2}"));
            s = s2;
        }
        drop(s); // SIGKILL
        let h = half_written(&idx);
        assert!(h.is_empty(), "server kill {k}: half-written after the kill: {h:?}");
        let note = format!(
            "server kill {k}: at {at:.2} s, job {id} {} in {} ({}/{})",
            seen["state"].as_str().unwrap_or("?"),
            seen["stage"].as_str().unwrap_or("?"),
            seen["done"],
            seen["total"]
        );
        let s = start(&idx, &args, &[]);
        let listed = s.get_json("/jobs");
        let job = listed.as_array().unwrap().iter().find(|j| j["id"] == id).cloned();
        let mut problems = Vec::new();
        match (&job, seen["state"].as_str()) {
            (Some(j), _) => {
                if j["resumed"] != true {
                    problems.push(format!("job {id} listed after the restart but not as resumed: {j}"));
                }
                let t = Instant::now();
                loop {
                    let v = s.get_json(&format!("/jobs/{id}"));
                    match v["state"].as_str() {
                        Some("done") => break,
                        Some("failed") => {
                            problems.push(format!("the resumed job failed: {v}"));
                            break;
                        }
                        _ => {}
                    }
                    assert!(t.elapsed() < Duration::from_secs(600), "job {id} not done in 10 minutes: {v}");
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            (None, Some("done")) => {}
            (None, _) => {
                problems.push(format!("job {id} was not finished and is not listed after the restart: {listed}"))
            }
        }
        drop(s);
        let pending: Vec<_> = std::fs::read_dir(idx.join("uploads-pending"))
            .map(|r| r.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        if !pending.is_empty() {
            problems.push(format!("uploads still kept after the job finished: {pending:?}"));
        }
        problems.extend(compare(&snapshot(&setup, &Store::Sqlite(idx.clone()), tmp.path(), &format!("k{k}")), &want));
        if problems.is_empty() {
            recovered += 1;
            eprintln!("{note}: resumed to the clean run");
        } else {
            eprintln!("{note}: DIFFERS\n{problems:#?}");
            failures.push(format!("{note}: {problems:?}"));
        }
    }
    eprintln!("campaign: {}\tkills {kills}\trecovered {recovered}\tfailures {}", setup.name, failures.len());
    assert!(failures.is_empty(), "{recovered} of {kills} server kills recovered; failures:\n{}", failures.join("\n"));
}
