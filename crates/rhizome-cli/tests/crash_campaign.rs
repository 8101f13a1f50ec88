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
//!
//! The configurations, snapshots and kills are in `crash_campaign_support`; this file runs
//! the campaigns.

mod crash_campaign_support;
mod support;

use std::time::{Duration, Instant};

use crash_campaign_support::kill::{complete, kill_after, kill_late};
use crash_campaign_support::snapshot::{compare, half_written, snapshot, stage_hit};
use crash_campaign_support::{env_usize, seed, Rng, Setup, Store, DOCS, PER_BATCH};
use rhizome_llm_testing::MockOpenAi;
use support::musique_docs;

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
