//! The same index on every backend: SQLite, PostgreSQL + pgvector and FalkorDB (servers from
//! rhizome-testdb, started on 127.0.0.1 and stopped by PID).
//! - Recall@2/@5 of basic and hippo on the MuSiQue OpenIE import are the same on all three
//!   (within 0.005): the shared fixture index is copied into each with `rhizome copy`.
//! - The graph methods reading what a question touches from the store (`local`,
//!   `multihop`, `tog`, `hippo`, the modes, `multipath`) answer as over the whole graph
//!   (SQLite and PostgreSQL); FalkorDB, without reads by id of its own, holds the whole
//!   graph instead.
//! - Index A and B then delete B equals indexing A, on each backend (compared table by
//!   table after copying both back into SQLite); so does deleting the document that named
//!   an entity another document's name merged into.
//! - PostgreSQL: two processes indexing the two halves of a corpus at once end with the
//!   stats of one process indexing all of it, and a server on the same database answers
//!   from the new documents without a restart.
//! - Filters (type, tag, source, language, dates) hold for every method on every backend:
//!   a filtered question is answered from matching documents only; a filter that matches
//!   nothing is refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

mod support;

use support::{assert_same_index, examples, json, musique_docs, ok, rz, shared};

fn on(store: &str, tmp: &Path) -> Command {
    let mut c = rz(tmp);
    c.args(["--store", store]);
    c
}

fn recall(store: &str, tmp: &Path, method: &str) -> (f64, f64) {
    let mut c = on(store, tmp);
    c.arg("eval").arg(shared().join("musique/musique_train.json")).args(["--method", method]);
    let v = json(c);
    let r = &v["recall"];
    (r["2"].as_f64().unwrap_or_else(|| panic!("{v:#}")), r["5"].as_f64().unwrap())
}

#[test]
fn musique_recall_is_the_same_on_every_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = support::fixture::musique_openie();
    let pg = rhizome_testdb::postgres::fresh_database("parity");
    let fk = rhizome_testdb::falkordb::fresh_graph("parity");
    for to in [&pg, &fk] {
        let t = std::time::Instant::now();
        let mut c = rz(&fixture);
        c.args(["copy", "--to", to]);
        let out = json(c);
        eprintln!("copy into {to}: {:.1} s ({out})", t.elapsed().as_secs_f64());
        assert_eq!(out["documents"], 1890);
    }
    let lite = fixture.display().to_string();
    // Side by side: each question is a process of its own that mostly waits on one core.
    std::thread::scope(|s| {
        for store in [&lite, &pg] {
            s.spawn(|| graph_methods_read_the_same_from_a_neighbourhood(store, tmp.path()));
        }
    });
    // FalkorDB has no reads by id of its own: above the threshold it holds the whole graph
    // rather than read it whole for every neighbourhood.
    let mut c = on(&fk, tmp.path());
    c.args(["--set", "retrieval.whole_graph_up_to=0", "query", "Who founded the company?", "--method", "local"]);
    let v = json(c);
    assert!(!v["notes"].to_string().contains("neighbourhood"), "{}", v["notes"]);
    assert!(!v["contexts"].as_array().unwrap().is_empty(), "{v:#}");
    for method in ["basic", "hippo"] {
        let [want, on_pg, on_fk] = std::thread::scope(|s| {
            let t = tmp.path();
            [&lite, &pg, &fk].map(|store| s.spawn(move || recall(store, t, method))).map(|h| h.join().unwrap())
        });
        for (store, got) in [(&pg, on_pg), (&fk, on_fk)] {
            eprintln!("{method} on {store}: R@2 {:.3} R@5 {:.3} (SQLite {:.3} / {:.3})", got.0, got.1, want.0, want.1);
            assert!(
                (got.0 - want.0).abs() <= 0.005 && (got.1 - want.1).abs() <= 0.005,
                "{method} on {store}: {got:?} vs SQLite {want:?}"
            );
        }
    }
}

/// `local`, `multihop` and `tog` over the neighbourhood of the question's entities,
/// `hippo`'s bounded PageRank over the subgraph around its seeds, and the Neo4j-style
/// modes that read the graph (`entity-only`, `hybrid`, `graph-enhanced`) and `multipath`,
/// read from the store, give the same contexts as over the whole graph, question by question.
fn graph_methods_read_the_same_from_a_neighbourhood(store: &str, tmp: &Path) {
    let questions: Value =
        serde_json::from_str(&std::fs::read_to_string(shared().join("musique/musique_train.json")).unwrap()).unwrap();
    let mut read = 0;
    for (i, q) in questions.as_array().unwrap().iter().take(12).enumerate() {
        let q = q["question"].as_str().unwrap();
        let method = match i {
            0..8 => ["local", "multihop", "tog", "hippo"][i % 4],
            8..11 => ["entity-only", "hybrid", "graph-enhanced"][i - 8],
            _ => "multipath",
        };
        let ask = |up_to: &str| {
            let mut c = on(store, tmp);
            c.args(["--set", &format!("retrieval.whole_graph_up_to={up_to}"), "--set", "hippo.ppr_nodes=2000"]);
            c.args(["query", q, "--method", method]);
            json(c)
        };
        let (whole, around) = (ask("1000000"), ask("0"));
        let notes = around["notes"].to_string();
        assert!(!whole["notes"].to_string().contains("neighbourhood"), "{}", whole["notes"]);
        if method == "hippo" {
            assert_eq!(whole["extra"]["ppr_subgraph_nodes"], 2000, "{whole:#}");
            assert!(around["extra"]["graph_reads"].as_u64().unwrap_or(0) > 0, "{around:#}");
        } else {
            assert!(notes.contains("read the neighbourhood of"), "{notes}");
        }
        assert!(!whole["contexts"].as_array().unwrap().is_empty(), "{q}: {whole:#}");
        assert_eq!(whole["contexts"], around["contexts"], "{method}: {q} on {store}");
        read += 1;
    }
    assert_eq!(read, 12);
}

/// Index `runs` into `store` (one `rhizome index` each) and delete `gone`; index the same
/// runs without `gone` into `fresh`; both copied back into SQLite directories and compared
/// table by table.
fn delete_equals_never_indexed(store: &str, fresh: &str, tmp: &Path, runs: &[Vec<PathBuf>], gone: &Path) {
    for run in runs {
        let mut c = on(store, tmp);
        c.arg("index").args(run);
        ok(c);
    }
    let mut c = on(store, tmp);
    c.arg("delete").arg(gone);
    ok(c);
    for run in runs {
        let kept: Vec<&PathBuf> = run.iter().filter(|p| p.as_path() != gone).collect();
        if !kept.is_empty() {
            let mut c = on(fresh, tmp);
            c.arg("index").args(kept);
            ok(c);
        }
    }
    let name = |s: &str| s.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>();
    let (x, y) = (tmp.join(format!("x-{}", name(store))), tmp.join(format!("y-{}", name(fresh))));
    for (from, to) in [(store, &x), (fresh, &y)] {
        let mut c = on(from, tmp);
        c.arg("copy").arg("--to").arg(to);
        ok(c);
    }
    assert_same_index(&x, &y, &format!("{runs:?} less {} on {store} equals never indexing it", gone.display()));
}

/// On each backend: index A and B, delete B; and index A ("United States Congress"), then
/// B (whose "US Congress" merges into A's entity), delete A, so the entity is re-keyed by
/// B's name. Each equals never indexing the deleted document.
#[test]
fn delete_equals_never_indexed_on_every_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = examples();
    assert!(docs.join("rhizome-plants.md").exists() && docs.join("knowledge-graphs.html").exists());
    let plain: Vec<PathBuf> =
        ["copenhagen-physics.txt", "knowledge-graphs.html", "rhizome-plants.md"].iter().map(|f| docs.join(f)).collect();
    let (a, b) = (tmp.path().join("congress-a.txt"), tmp.path().join("congress-b.txt"));
    std::fs::write(&a, "The United States Congress passed the Clean Air Act in 1990.").unwrap();
    std::fs::write(&b, "The US Congress met in Washington to debate the budget.").unwrap();
    let merged = vec![vec![a.clone()], vec![b]];
    let lite = |n: &str| tmp.path().join(n).display().to_string();
    let pg = rhizome_testdb::postgres::fresh_database;
    let fk = rhizome_testdb::falkordb::fresh_graph;
    for (runs, gone, tag) in [(vec![plain.clone()], &plain[2], "ab"), (merged, &a, "merged")] {
        delete_equals_never_indexed(
            &lite(&format!("lite-{tag}")),
            &lite(&format!("lite-{tag}-fresh")),
            tmp.path(),
            &runs,
            gone,
        );
        delete_equals_never_indexed(&pg(tag), &pg(&format!("{tag}fresh")), tmp.path(), &runs, gone);
        delete_equals_never_indexed(&fk(tag), &fk(&format!("{tag}fresh")), tmp.path(), &runs, gone);
    }
}

/// Two `rhizome index` processes on one PostgreSQL database at once take turns (one
/// writer at a time), so they end as one process indexing both halves in one of the two
/// orders (entity resolution merges a new name into an existing one, so the order can
/// matter). Batches of 5 documents make every batch the same in all runs: embedding the
/// same text in another batch can move a float in its last bits, and a cosine at the
/// synonymy threshold with it.
#[test]
fn two_indexers_on_one_postgres_database_and_a_server_that_sees_their_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let (h1, h2) = (musique_docs(&tmp.path().join("h1"), 0, 15), musique_docs(&tmp.path().join("h2"), 15, 15));
    let batches = |store: &str| {
        let mut c = on(store, tmp.path());
        c.args(["--set", "embed.docs_per_batch=5"]);
        c
    };
    let stats = |s: &str| {
        let mut c = on(s, tmp.path());
        c.arg("stats");
        let v: Value = json(c);
        v
    };
    let mut sequential = Vec::new();
    for (a, b) in [(&h1, &h2), (&h2, &h1)] {
        let db = rhizome_testdb::postgres::fresh_database("together");
        let mut c = batches(&db);
        c.arg("index").arg(a).arg(b);
        ok(c);
        sequential.push(stats(&db));
    }

    let shared_db = rhizome_testdb::postgres::fresh_database("halves");
    // The server starts on the empty database, before anything is written.
    let server = support::server::start(tmp.path(), &[], &[("RHIZOME_STORE_URL", shared_db.as_str())]);
    let children: Vec<_> = [&h1, &h2]
        .iter()
        .map(|h| {
            let mut c = batches(&shared_db);
            c.arg("index").arg(h).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for ch in children {
        let out = ch.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let got = stats(&shared_db);
    assert_eq!(got["nodes"]["Document"], 30);
    assert!(sequential.contains(&got),
        "two writers at once end as one writer with everything, in one order or the other:\n{got:#}\nvs {sequential:#?}");
    // The server, started before, answers from documents it has never seen written.
    let last = std::fs::read_to_string(h2.join("0029.txt")).unwrap();
    let title = last.lines().next().unwrap().to_string();
    let r = support::server::ok_json(server.post_json("/query", &json!({"question": title, "method": "basic"})));
    let sources: Vec<&str> = r["contexts"].as_array().unwrap().iter().filter_map(|c| c["source"].as_str()).collect();
    assert!(sources.iter().any(|s| s.ends_with("0029.txt")), "{title}: {sources:?}");
    let st = support::server::ok_json(server.get("/stats"));
    assert_eq!(st["nodes"]["Document"], 30, "{st:#}");
}

/// Every method asked through the server on each backend, under each kind of filter:
/// every passage it cites comes from a matching document, and some method cites one.
#[test]
fn filters_hold_for_every_method_on_every_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    support::document_fixtures(&docs);
    for f in ["copenhagen-physics.txt", "rhizome-plants.md"] {
        std::fs::copy(examples().join(f), docs.join(f)).unwrap();
    }
    // An old file: its modification time is its date.
    let old = docs.join("rhizome-plants.md");
    let touched = Command::new("touch").args(["-d", "2019-05-01T12:00:00Z"]).arg(&old).status().unwrap();
    assert!(touched.success());
    let lite = tmp.path().join("lite");
    let mut c = rz(&lite);
    c.arg("index").arg(&docs);
    ok(c);
    let mut c = rz(&lite);
    c.arg("documents");
    let listed = json(c)["documents"].as_array().unwrap().clone();
    let name = |d: &Value| d["source"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    let with = |pred: &dyn Fn(&Value) -> bool| -> Vec<String> { listed.iter().filter(|d| pred(d)).map(name).collect() };
    let bohr = listed.iter().find(|d| name(d) == "copenhagen-physics.txt").unwrap();
    let tag = bohr["meta"]["hashtags"][0].as_str().unwrap().to_string();
    let tag_lc = tag.to_lowercase();
    let date = |d: &Value| {
        let m = &d["meta"];
        m["created"].as_str().or(m["modified"].as_str()).unwrap_or("9999").chars().take(10).collect::<String>()
    };
    let cases: Vec<(String, Vec<String>)> = vec![
        ("source=*.pdf".into(), with(&|d| name(d).ends_with(".pdf"))),
        ("lang=vi".into(), with(&|d| d["language"] == "vi")),
        ("type=email".into(), with(&|d| d["meta"]["type"] == "email")),
        (
            format!("tag={tag}"),
            with(&|d| {
                d["meta"]["hashtags"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|x| x.as_str().unwrap().to_lowercase() == tag_lc))
            }),
        ),
        // Dated by what the file says it was created (python-pptx's template says 2013),
        // else its modification time.
        ("before=2020-01-01".into(), with(&|d| date(d).as_str() < "2020-01-01")),
        ("after=2020-01-01".into(), with(&|d| date(d).as_str() >= "2020-01-01")),
    ];
    for (f, want) in &cases {
        assert!(!want.is_empty() && want.len() < listed.len(), "{f} should pick some documents: {want:?}");
    }
    assert!(cases[4].1.contains(&"rhizome-plants.md".to_string()), "{:?}", cases[4]);
    let pg = rhizome_testdb::postgres::fresh_database("filters");
    let fk = rhizome_testdb::falkordb::fresh_graph("filters");
    for to in [&pg, &fk] {
        let mut c = rz(&lite);
        c.args(["copy", "--to", to]);
        ok(c);
    }
    let methods: Vec<&str> = rhizome_engine::Method::ALL.iter().map(|m| m.as_str()).collect();
    let question = "When was the bridge completed, who won the Nobel Prize, and how do rhizomes grow?";
    for store in [lite.display().to_string(), pg, fk] {
        let s = support::server::start(&lite, &["--store", &store], &[]);
        for (filter, want) in &cases {
            let mut cited = 0;
            for &method in &methods {
                let body = json!({"question": question, "method": method, "filter": [filter]});
                let r = support::server::ok_json(s.post_json("/query", &body));
                for c in r["contexts"].as_array().unwrap().iter().filter(|c| c["kind"] == "chunk") {
                    let file = c["source"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
                    assert!(want.contains(&file), "{method} on {store} with {filter} cites {file}; matching: {want:?}");
                    cited += 1;
                }
            }
            assert!(cited > 0, "no method cited a passage with {filter} on {store}");
        }
        // Without the filter the same question reaches other documents.
        let r = support::server::ok_json(s.post_json("/query", &json!({"question": question, "method": "basic"})));
        let files: Vec<String> = r["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["source"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect();
        assert!(files.iter().any(|f| !cases[0].1.contains(f)), "{files:?}");
        // A filter that matches nothing is refused, naming it.
        let r =
            s.post_json("/query", &json!({"question": question, "filter": ["type=contract", "lang=zh", "tag=none"]}));
        let e = support::server::expect(r, 400).to_string();
        assert!(e.contains("no indexed document matches") && e.contains("type=contract"), "{e}");
        // Chat clients send the filter in the body or, when they cannot, in a header.
        let chat = |path: &str, header: &str| {
            let body = json!({"model": "rhizome-basic", "stream": false,
                "messages": [{"role": "user", "content": question}]});
            reqwest::blocking::Client::new()
                .post(s.url(path))
                .header("X-Rhizome-Filter", header)
                .json(&body)
                .send()
                .unwrap()
        };
        for path in ["/v1/chat/completions", "/api/chat"] {
            support::server::expect(chat(path, "lang=vi; source=*.pdf"), 200);
            let e = support::server::expect(chat(path, "lang=vi; type=email"), 400).to_string();
            assert!(e.contains("lang=vi, type=email"), "{path}: {e}");
        }
    }
}
