//! End-to-end tests of the `rhizome` binary over the shared data sets, with the real
//! embedding model (fetched by `rhizome models fetch`, as the README says).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn shared() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    assert!(p.join("README.md").exists(), "shared data missing at {}: clone beside ../shared", p.display());
    p.canonicalize().unwrap()
}

fn rz(index: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.arg("--index").arg(index).env_remove("RHIZOME_INDEX").env_remove("RHIZOME_CONFIG");
    c
}

fn ok(mut c: Command) -> Output {
    let out = c.output().expect("run rhizome");
    assert!(
        out.status.success(),
        "rhizome failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json(mut c: Command) -> Value {
    c.arg("--json");
    let out = ok(c);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// What a command that must fail printed on stderr.
fn fails(mut c: Command) -> String {
    let out = c.output().expect("run rhizome");
    assert!(!out.status.success(), "rhizome succeeded: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stats(index: &Path) -> Value {
    let mut c = rz(index);
    c.arg("stats");
    json(c)
}

fn query(index: &Path, q: &str) -> Value {
    let mut c = rz(index);
    c.args(["query", q]);
    json(c)
}

#[test]
fn chinese_question_finds_the_investment_document() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(shared().join("zh_openai"));
    ok(c);
    let s = stats(&idx);
    assert_eq!(s["nodes"]["Document"], 3);
    assert!(s["nodes"]["Entity"].as_u64().unwrap() > 0, "non-empty graph for Chinese: {s}");
    let r = query(&idx, "Sam Altman领导的公司在AI领域有什么重要投资？");
    let first = &r["contexts"][0];
    assert!(first["source"].as_str().unwrap().ends_with("microsoft_investment.txt"), "{r:#}");
    assert_eq!(r["method"], "basic");
    assert!(r["answer"].as_str().unwrap().contains("[1]"), "answer cites: {r:#}");
    assert!(r["paths"].as_array().unwrap().is_empty());
    for key in ["kind", "id", "text", "score", "source"] {
        assert!(first.get(key).is_some(), "context has {key}");
    }
    assert!(r["timings_ms"]["retrieve"].as_f64().unwrap() > 0.0);
}

/// Index the MuSiQue corpus, evaluate `basic`, then kill an indexing run of the same
/// corpus with SIGKILL and rerun it: the stats must equal the uninterrupted run's. Crash
/// safety does not depend on the model: the faster MiniLM keeps this test short (the
/// index then stays MiniLM's: `embed.model = auto` follows it).
#[test]
fn musique_eval_and_resume_after_sigkill() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = shared().join("musique/musique_train_corpus.json");
    let full = tmp.path().join("full");
    let mut c = rz(&full);
    c.args(["--set", "embed.model=all-MiniLM-L6-v2", "index"]).arg(&corpus);
    ok(c);
    let want = stats(&full);
    assert_eq!(want["nodes"]["Document"], 1890);

    let mut c = rz(&full);
    c.args(["eval"]).arg(shared().join("musique/musique_train.json")).args(["--method", "basic"]);
    let e = json(c);
    eprintln!("musique basic eval: {e}");
    assert_eq!(e["questions"], 100);
    let r5 = e["recall"]["5"].as_f64().unwrap();
    let r2 = e["recall"]["2"].as_f64().unwrap();
    assert!(r2 > 0.3 && r5 > 0.4 && r5 >= r2, "recall too low: {e}");
    assert!(e["latency_ms"]["p50"].as_f64().unwrap() > 0.0);

    // Re-indexing unchanged input does no work.
    let mut c = rz(&full);
    c.arg("index").arg(&corpus);
    let again = json(c);
    assert_eq!(again["report"]["documents_indexed"], 0, "{again}");
    assert_eq!(again["report"]["documents_unchanged"], 1890);

    let killed = tmp.path().join("killed");
    let mut child = rz(&killed)
        .args(["--set", "embed.model=all-MiniLM-L6-v2", "index"])
        .arg(&corpus)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let docs = rz(&killed)
            .args(["stats", "--json"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
            .and_then(|v| v["nodes"]["Document"].as_u64())
            .unwrap_or(0);
        if docs > 0 || Instant::now() > deadline {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "indexing finished before it could be killed");
    let partial = stats(&killed);
    let n = partial["nodes"]["Document"].as_u64().unwrap();
    assert!(n > 0 && n < 1890, "killed mid-run: {partial}");
    let mut c = rz(&killed);
    c.arg("index").arg(&corpus);
    ok(c);
    assert_eq!(stats(&killed), want);
}

#[test]
fn delete_leaves_the_index_as_if_never_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs");
    let a = docs.join("copenhagen-physics.txt");
    let b = shared().join("zh_openai");
    let only_a = tmp.path().join("a");
    let mut c = rz(&only_a);
    c.arg("index").arg(&a).arg(docs.join("rhizome-plants.md"));
    ok(c);
    let both = tmp.path().join("ab");
    let mut c = rz(&both);
    c.arg("index").arg(&a).arg(docs.join("rhizome-plants.md")).arg(&b);
    ok(c);
    assert_eq!(stats(&both)["nodes"]["Document"], 5);
    for f in ["ai_industry.txt", "microsoft_investment.txt", "openai_report.txt"] {
        let mut c = rz(&both);
        c.arg("delete").arg(b.join(f));
        ok(c);
    }
    assert_eq!(stats(&both), stats(&only_a));
    for q in ["Who shared the Nobel Prize with Aage Bohr?", "What is a rhizome?", "OpenAI投资"] {
        let (x, y) = (query(&both, q), query(&only_a, q));
        assert_eq!(x["contexts"], y["contexts"], "{q}");
        assert_eq!(x["answer"], y["answer"], "{q}");
    }
    let mut c = rz(&both);
    c.args(["delete", "no-such-doc"]);
    let out = c.output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no document"));
}

#[test]
fn bad_input_is_skipped_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::write(input.join("good.txt"), "Ada Lovelace wrote the first program for the Analytical Engine.").unwrap();
    std::fs::write(input.join("empty.txt"), "").unwrap();
    std::fs::write(input.join("binary.txt"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::fs::write(input.join("latin1.txt"), b"caf\xe9 cr\xe8me").unwrap();
    std::fs::write(input.join("broken.json"), "[{\"title\": \"x\", ").unwrap();
    let idx = tmp.path().join("idx");
    let out = ok({
        let mut c = rz(&idx);
        c.arg("index").arg(&input);
        c
    });
    let err = String::from_utf8_lossy(&out.stderr);
    for f in ["empty.txt", "binary.txt", "latin1.txt", "broken.json"] {
        assert!(err.contains(f), "warning names {f}: {err}");
    }
    assert_eq!(stats(&idx)["nodes"]["Document"], 1);

    // A missing index and a corrupt one give clear errors, not panics.
    let out = rz(&tmp.path().join("nowhere")).arg("stats").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Rhizome index") && !err.contains("panicked"), "{err}");
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("rhizome.sqlite"), vec![b'x'; 5000]).unwrap();
    let out = rz(&bad).args(["query", "anything"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("damaged or not a Rhizome index") && err.contains("backup") && !err.contains("panicked"),
        "{err}"
    );

    // Bad flags and settings name the fix.
    let out = rz(&idx).args(["query", "x", "--method", "nope"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("available: basic"));
    let out = rz(&idx).args(["stats", "--set", "chunk.size=big"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("chunk.size expects an integer"));
}

#[test]
fn edge_list_import_builds_entities_and_facts() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.args(["import", "edges-csv"]).arg(shared().join("vi_bohr/edges.csv"));
    ok(c);
    let s = stats(&idx);
    assert_eq!(s["nodes"]["Fact"], 40, "{s}");
    assert_eq!(s["edges"]["RELATED"], 40, "{s}");
    assert!(s["nodes"]["Entity"].as_u64().unwrap() > 20, "{s}");
}

/// An import writes batch k-1 while it embeds batch k: in many batches it builds the same
/// graph as in one, and embeds no string twice (an entity or fact of a batch not yet
/// written is not embedded again by the next).
#[test]
fn openie_import_in_many_batches_equals_one_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(shared().join("musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"))
            .unwrap();
    // HippoRAG writes Python's NaN for its empty averages; JSON has no NaN.
    let full: Value = serde_json::from_str(&text.replace("NaN", "null")).unwrap();
    let mut small = full.clone();
    small["docs"] = Value::Array(full["docs"].as_array().unwrap()[..40].to_vec());
    let file = tmp.path().join("openie40.json");
    std::fs::write(&file, serde_json::to_string(&small).unwrap()).unwrap();
    let import = |name: &str, per: &str| {
        let idx = tmp.path().join(name);
        let mut c = rz(&idx);
        c.args(["--set", &format!("embed.import_docs_per_batch={per}"), "import", "hipporag-openie"]).arg(&file);
        (idx, json(c))
    };
    let (one, r1) = import("one", "1000");
    let (many, r7) = import("many", "7");
    for k in ["documents_indexed", "chunks", "entities_mentioned", "facts", "vectors"] {
        assert_eq!(r1["report"][k], r7["report"][k], "{k}: one batch {r1:#}\nbatches of 7 {r7:#}");
    }
    assert_eq!(r1["report"]["documents_indexed"], 40);
    let (s1, s7) = (stats(&one), stats(&many));
    assert_eq!(s1["nodes"], s7["nodes"]);
    assert_eq!(s1["edges"], s7["edges"]);
    let q = "Who founded the Journal of Mathematical Physics?";
    let titles = |idx: &Path| -> Vec<Value> {
        let mut c = rz(idx);
        c.args(["query", q, "--method", "hippo"]);
        json(c)["contexts"].as_array().unwrap().iter().map(|c| c["title"].clone()).collect()
    };
    assert_eq!(titles(&one), titles(&many));
}

#[test]
fn adding_files_processes_only_new_ones_and_a_missing_model_is_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs");
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(docs.join("rhizome-plants.md"));
    let first = json(c);
    assert_eq!(first["report"]["documents_indexed"], 1);
    let mut c = rz(&idx);
    c.arg("index").arg(&docs);
    let second = json(c);
    assert_eq!(second["report"]["documents_indexed"], 2, "{second}");
    assert_eq!(second["report"]["documents_unchanged"], 1);
    // A file whose content changed replaces its old version.
    let note = tmp.path().join("note.txt");
    std::fs::write(&note, "Rosalind Franklin photographed DNA in 1952.").unwrap();
    let mut c = rz(&idx);
    c.arg("index").arg(&note);
    ok(c);
    std::fs::write(&note, "Rosalind Franklin took Photo 51 of DNA in May 1952.").unwrap();
    let mut c = rz(&idx);
    c.arg("index").arg(&note);
    let third = json(c);
    assert_eq!(third["report"]["documents_replaced"], 1, "{third}");
    assert_eq!(stats(&idx)["nodes"]["Document"], 4);
    let r = query(&idx, "What did Rosalind Franklin photograph?");
    assert!(r["contexts"][0]["text"].as_str().unwrap().contains("Photo 51"), "{r:#}");
    let r = query(&idx, "When did Google introduce its Knowledge Graph?");
    assert_eq!(r["contexts"][0]["title"], "Knowledge graphs", "{r:#}");

    // The same content under other names is one document with several names: counted by a
    // dry run, indexed once, listed with its names, cited once, found and deleted by any.
    let copies = tmp.path().join("copies");
    std::fs::create_dir_all(&copies).unwrap();
    for name in ["franklin.txt", "franklin (1).txt", "Franklin copy.txt"] {
        std::fs::copy(&note, copies.join(name)).unwrap();
    }
    let mut c = rz(&idx);
    c.args(["index", "--dry-run"]).arg(&copies);
    let plan = json(c);
    assert_eq!((&plan["documents_new"], &plan["documents_duplicate"]), (&Value::from(0), &Value::from(3)), "{plan}");
    let mut c = rz(&idx);
    c.arg("index").arg(&copies);
    let fourth = json(c);
    assert_eq!(fourth["report"]["documents_duplicate"], 3, "{fourth}");
    assert_eq!(fourth["report"]["documents_indexed"], 0, "{fourth}");
    assert_eq!(stats(&idx)["nodes"]["Document"], 4);
    let mut c = rz(&idx);
    c.args(["index"]).arg(&copies);
    assert_eq!(json(c)["report"]["documents_unchanged"], 3, "the names are known now");
    let mut c = rz(&idx);
    c.args(["documents", "--search", "franklin"]);
    let listed = json(c);
    let docs = listed["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 1, "{listed:#}");
    let names: Vec<&str> = docs[0]["aliases"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{listed:#}");
    assert!(names.iter().all(|n| n.contains("copies/")), "{names:?}");
    let r = query(&idx, "What did Rosalind Franklin photograph?");
    let cited = r["contexts"].as_array().unwrap().iter().filter(|c| c["text"].as_str().unwrap().contains("Photo 51"));
    assert_eq!(cited.count(), 1, "one passage, not one per name: {r:#}");

    // The file first indexed changes: its old content stays, under the copies' names.
    std::fs::write(&note, "Rosalind Franklin studied the structure of coal before DNA.").unwrap();
    let mut c = rz(&idx);
    c.args(["index", "--dry-run"]).arg(&note);
    assert_eq!(json(c)["documents_replaced"], 1);
    let mut c = rz(&idx);
    c.arg("index").arg(&note);
    let fifth = json(c);
    assert_eq!((&fifth["report"]["documents_replaced"], &fifth["report"]["documents_indexed"]), (&1.into(), &1.into()));
    assert_eq!(stats(&idx)["nodes"]["Document"], 5, "the new content, and the old under another name");
    let mut c = rz(&idx);
    c.args(["documents", "--search", "franklin"]);
    let listed = json(c);
    let kept =
        listed["documents"].as_array().unwrap().iter().find(|d| d["source"].as_str().unwrap().contains("copies/"));
    let kept = kept.unwrap_or_else(|| panic!("the old content under a copy's name: {listed:#}"));
    assert_eq!(kept["aliases"].as_array().unwrap().len(), 2, "{listed:#}");
    let r = query(&idx, "What did Rosalind Franklin photograph?");
    assert!(r["contexts"][0]["text"].as_str().unwrap().contains("Photo 51"), "{r:#}");

    let mut c = rz(&idx);
    c.arg("delete").arg(names[1]);
    assert_eq!(json(c)["deleted"]["documents"], 1);
    assert_eq!(stats(&idx)["nodes"]["Document"], 4);

    let out =
        rz(&idx).env("RHIZOME_MODELS_DIR", tmp.path().join("no-models")).args(["query", "anything"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("rhizome models fetch"));
}

#[test]
fn ingest_benchmark_prints_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = rz(&tmp.path().join("unused"));
    c.args(["bench", "ingest", "--baseline-sample", "5"]).arg(shared().join("hipporag_misc/sample_corpus.json"));
    let b = json(c);
    assert!(b["embedding"]["passages_per_s"].as_f64().unwrap() > 0.0, "{b}");
    assert!(b["embedding"]["speedup_vs_baseline"].as_f64().unwrap() > 0.0);
    assert!(b["peak_rss_mib"].as_f64().unwrap() > 10.0);
}

#[test]
fn embedder_benchmark_compares_both_models() {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    c.args(["bench", "embedders", "--baseline-sample", "3"])
        .arg(shared().join("hipporag_misc/sample_corpus.json"))
        .arg(shared().join("hipporag_misc/sample.json"));
    let b = json(c);
    let models: Vec<&str> = b["models"].as_array().unwrap().iter().map(|m| m["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["all-MiniLM-L6-v2", "multilingual-e5-small"], "{b}");
    for m in b["models"].as_array().unwrap() {
        assert!(m["passages_per_s"].as_f64().unwrap() > 0.0, "{b}");
        assert!(m["dense_recall"]["5"].as_f64().unwrap() > 0.0, "{b}");
    }
    assert_eq!(b["models"][0]["speed_vs_minilm"], 1.0);
}

#[test]
fn the_llm_free_extractors_facts_get_no_vectors_unless_asked() {
    // Nothing reads a fact vector without an LLM to recognise the fact, so the LLM-free
    // extractor's facts are not embedded by default; `always` embeds them.
    let tmp = tempfile::tempdir().unwrap();
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/docs/rhizome-plants.md");
    let run = |name: &str, set: &[&str]| {
        let mut c = rz(&tmp.path().join(name));
        c.args(set).arg("index").arg(&doc);
        json(c)["report"].clone()
    };
    let auto = run("auto", &[]);
    let always = run("always", &["--set", "embed.fact_vectors=always"]);
    let facts = auto["facts"].as_u64().unwrap();
    assert!(facts > 0, "{auto}");
    assert_eq!(always["facts"], auto["facts"]);
    assert_eq!(always["vectors"].as_u64().unwrap(), auto["vectors"].as_u64().unwrap() + facts, "{auto} {always}");
    let mut c = rz(&tmp.path().join("bad"));
    c.args(["--set", "embed.fact_vectors=sometimes", "index"]).arg(&doc);
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("embed.fact_vectors"), "{err}");
}

/// `index --dry-run` sorts documents as the run would: an edited file is a replacement,
/// an indexed one unchanged, only a file never seen new; and the run then says the same.
#[test]
fn dry_run_counts_replaced_and_unchanged_documents_as_the_run_does() {
    let tmp = tempfile::tempdir().unwrap();
    let (docs, idx) = (tmp.path().join("docs"), tmp.path().join("idx"));
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("a.txt"), "Aage Bohr won the Nobel Prize in Physics in 1975.").unwrap();
    std::fs::write(docs.join("b.txt"), "Copenhagen is the capital of Denmark.").unwrap();
    let mut c = rz(&idx);
    c.args(["--set", "embed.model=all-MiniLM-L6-v2", "index"]).arg(&docs);
    ok(c);
    std::fs::write(docs.join("a.txt"), "Aage Bohr won the Nobel Prize in Physics in 1975, with Ben Mottelson.")
        .unwrap();
    std::fs::write(docs.join("c.txt"), "Niels Bohr founded the institute in Copenhagen.").unwrap();
    let plan = {
        let mut c = rz(&idx);
        c.args(["--set", "embed.model=all-MiniLM-L6-v2", "index", "--dry-run"]).arg(&docs);
        json(c)
    };
    assert_eq!(
        (&plan["documents_new"], &plan["documents_replaced"], &plan["documents_unchanged"]),
        (&1.into(), &1.into(), &1.into()),
        "{plan}"
    );
    let mut c = rz(&idx);
    c.args(["--set", "embed.model=all-MiniLM-L6-v2", "index"]).arg(&docs);
    let run = json(c);
    let r = &run["report"];
    assert_eq!(
        (&r["documents_new"], &r["documents_replaced"], &r["documents_unchanged"]),
        (&1.into(), &1.into(), &1.into()),
        "{run}"
    );
}

/// `rhizome bench scale` at a toy size on SQLite (the bench itself is a command, run by
/// hand: docs/benchmarks.md): two sizes of copies of 20 MuSiQue passages, every figure
/// printed, the second size holding copies of the first's entities under new names.
#[test]
fn scale_benchmark_prints_a_row_per_size() {
    let tmp = tempfile::tempdir().unwrap();
    let musique = shared().join("musique");
    let mut c = rz(&tmp.path().join("scale"));
    c.args(["bench", "scale"])
        .arg(musique.join("openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"))
        .arg(musique.join("musique_train.json"))
        .args(["--base-passages", "20", "--sizes", "30,50", "--limit", "3", "--methods", "basic,hippo"]);
    let b = json(c);
    let rows = b["sizes"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{b:#}");
    assert_eq!((rows[0]["chunks"].as_u64(), rows[1]["chunks"].as_u64()), (Some(30), Some(50)), "{b:#}");
    assert!(rows[1]["entities"].as_u64().unwrap() > rows[0]["entities"].as_u64().unwrap(), "{b:#}");
    for r in rows {
        assert!(r["chunks_per_s"].as_f64().unwrap() > 0.0 && r["store_bytes"].as_u64().unwrap() > 0, "{r:#}");
        assert!(r["serve_rss_mib"].as_f64().unwrap() > 10.0, "{r:#}");
        let timed: Vec<String> =
            r["methods"].as_array().unwrap().iter().map(|m| format!("{}@{}", m["method"], m["top_k"])).collect();
        // hippo first as it runs without the graph (`retrieval.whole_graph_up_to` 0).
        let want = ["hippo-around", "basic", "hippo", "hippo-whole"].map(|m| [5, 8].map(|k| format!("\"{m}\"@{k}")));
        assert_eq!(timed, want.concat(), "{r:#}");
        assert!(r["serve_around_rss_mib"].as_f64().unwrap() > 10.0, "{r:#}");
        let whole = &r["methods"][6];
        assert_eq!(whole["same_passages_as_hippo"], 3, "hippo over a graph below hippo.ppr_nodes is whole: {r:#}");
    }
    assert!(rows[1]["synonyms"].as_u64().unwrap() >= rows[0]["synonyms"].as_u64().unwrap(), "{b:#}");

    // Going on from that index: its size is measured without writing, the next one grown.
    let scale = |dir: &str, more: &[&str]| {
        let mut c = rz(&tmp.path().join(dir));
        c.args(["bench", "scale"])
            .arg(musique.join("openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"))
            .arg(musique.join("musique_train.json"))
            .args(["--base-passages", "20", "--limit", "2", "--methods", "basic", "--no-serve"])
            .args(more);
        c
    };
    let err = fails(scale("scale", &["--sizes", "50,70"]));
    assert!(err.contains("already holds documents") && err.contains("--resume"), "{err}");
    let b = json(scale("scale", &["--sizes", "50,70", "--resume"]));
    let again = b["sizes"].as_array().unwrap();
    assert_eq!(again[0]["chunks_added"], 0, "{b:#}");
    assert_eq!(again[0]["entities"], rows[1]["entities"], "{b:#}");
    assert_eq!((again[1]["chunks"].as_u64(), again[1]["chunks_added"].as_u64()), (Some(70), Some(20)), "{b:#}");

    // Two copies sharing one set of entities hold one copy's entities.
    let b = json(scale("shared", &["--sizes", "20,40", "--entity-share", "2"]));
    let shared = b["sizes"].as_array().unwrap();
    assert_eq!(shared[1]["chunks"], 40, "{b:#}");
    assert_eq!(shared[0]["entities"], shared[1]["entities"], "{b:#}");
}
