//! `hippo`: Personalized PageRank against a dense-matrix solution, fact-linked retrieval
//! on a small SQLite store, the dense fallback, and the LLM fact filter against a mock
//! OpenAI server.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rhizome_core::*;
use rhizome_llm::prompt::Prompts;
use rhizome_llm::{BlockingLlm, OpenAiConfig, OpenAiProvider};
use rhizome_llm_testing::{last_user_text, Fault, MockOpenAi};
use rhizome_retrieve::ppr::{gauss_seidel_f64, personalized_pagerank, Csr};
use rhizome_retrieve::{retriever, GraphCache, HippoConfig, Method, QueryEnv, Retrieval};
use rhizome_store::SqliteStore;
use serde_json::Value;

mod common;

// ---------------------------------------------------------------- PPR

/// Solve `a x = b` by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap();
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            for k in col..n {
                a[row][k] -= f * a[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x
}

/// PPR as a linear system: x = (1 - d) s + d M x, where M moves a node's mass to its
/// neighbours in proportion to edge weight, and a node without edges sends it along s.
fn dense_ppr(n: usize, w: &[Vec<f64>], s: &[f64], d: f64) -> Vec<f64> {
    let mut a = vec![vec![0.0; n]; n];
    for u in 0..n {
        let strength: f64 = w[u].iter().sum();
        for v in 0..n {
            let m = if strength > 0.0 { w[u][v] / strength } else { s[v] };
            a[v][u] -= d * m;
        }
    }
    for (v, row) in a.iter_mut().enumerate() {
        row[v] += 1.0;
    }
    solve(a, s.iter().map(|x| (1.0 - d) * x).collect())
}

#[test]
fn ppr_matches_the_dense_solution() {
    // 0-1 twice (weights summed), 1-2, 2-0, 2-3; a self-loop, an out-of-range edge and a
    // non-positive weight are ignored; node 4 has no edges.
    let edges =
        [(0, 1, 1.0), (1, 0, 1.0), (1, 2, 2.0), (2, 0, 1.0), (2, 3, 0.5), (3, 3, 4.0), (0, 9, 1.0), (1, 3, 0.0)];
    let g = Csr::from_edges(5, edges);
    assert_eq!((g.nodes(), g.edges()), (5, 4));
    assert_eq!(g.neighbors(0).collect::<Vec<_>>(), [(1, 2.0), (2, 1.0)]);
    assert!((g.strength(2) - 3.5).abs() < 1e-12);
    assert_eq!(g.neighbors(4).count(), 0);

    let mut w = vec![vec![0.0; 5]; 5];
    for (a, b, x) in [(0, 1, 2.0), (1, 2, 2.0), (2, 0, 1.0), (2, 3, 0.5)] {
        w[a][b] = x;
        w[b][a] = x;
    }
    for (reset, d) in [(vec![1.0, 0.0, 0.0, 0.0, 1.0], 0.5), (vec![0.0, 0.2, 0.0, 3.0, 0.0], 0.85)] {
        let total: f64 = reset.iter().sum();
        let s: Vec<f64> = reset.iter().map(|x| x / total).collect();
        let want = dense_ppr(5, &w, &s, d);
        // Scores are f32 inside (ranking needs ~1e-6): agreement to 1e-6, not 1e-9.
        let got = personalized_pagerank(&g, &reset, d, 1e-7, 10_000);
        assert!(got.residual < 1e-7, "converged: {got:?}");
        assert!((got.scores.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        for (x, y) in got.scores.iter().zip(&want) {
            assert!((x - y).abs() < 1e-6, "over-relaxed sweeps {:?} vs dense {want:?}", got.scores);
        }
    }
    // Hand check: with d = 0.5 and all reset mass on the isolated node, it keeps it all.
    let got = personalized_pagerank(&g, &[0.0, 0.0, 0.0, 0.0, 2.0], 0.5, 1e-7, 100);
    assert!((got.scores[4] - 1.0).abs() < 1e-6);
    // No reset mass: no scores, no iterations; negative and NaN entries count as 0.
    let none = personalized_pagerank(&g, &[-1.0, f64::NAN, 0.0], 0.5, 1e-12, 100);
    assert_eq!((none.scores, none.iterations), (vec![0.0; 5], 0));
}

#[test]
fn over_relaxed_ppr_agrees_with_plain_gauss_seidel_on_a_larger_graph() {
    // 2000 nodes, ~6000 weighted edges from a fixed linear congruential sequence, a few
    // isolated nodes; reset mass on 300 nodes, as hippo's passage seeds spread it.
    let mut state = 12345u64;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let n = 2000u32;
    let edges: Vec<(u32, u32, f32)> =
        (0..6000).map(|_| (next() % (n - 5), next() % (n - 5), 1.0 + (next() % 4) as f32)).collect();
    let g = Csr::from_edges(n as usize, edges);
    let mut reset = vec![0.0f64; n as usize];
    for k in 0..300 {
        reset[(next() % n) as usize] += (-(k as f64) / 40.0).exp();
    }
    let fast = personalized_pagerank(&g, &reset, 0.8, 1e-6, 200);
    let exact = gauss_seidel_f64(&g, &reset, 0.8, 1e-12, 1000);
    assert!(fast.iterations < exact.iterations, "{} vs {} sweeps", fast.iterations, exact.iterations);
    let worst = fast.scores.iter().zip(&exact.scores).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(worst < 2e-6, "largest difference {worst}");
    let top = |s: &[f64]| {
        let mut i: Vec<usize> = (0..s.len()).collect();
        i.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
        i.truncate(20);
        i
    };
    assert_eq!(top(&fast.scores), top(&exact.scores), "the same 20 best nodes in the same order");
}

// ---------------------------------------------------------------- a small store

const QUESTION: &str = "Where was the founder of Tidewell born?";

/// Maps known texts to fixed vectors (the question only, here).
struct TableEmbedder(HashMap<String, Vec<f32>>);

impl Embedder for TableEmbedder {
    fn model_id(&self) -> &str {
        "table"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[String], _kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.0.get(t).cloned().unwrap_or(vec![0.0, 0.0, 0.0, 1.0])).collect())
    }
}

/// A unit vector whose cosine to the question ([1, 0, 0, 0]) is `cos`.
fn at(cos: f32, axis: usize) -> Vec<f32> {
    let mut v = vec![cos, 0.0, 0.0, 0.0];
    v[axis] = (1.0 - cos * cos).sqrt();
    v
}

/// One document with one chunk: its entities, and facts `(s, p, o, cosine to the question)`.
fn passage(title: &str, text: &str, cos: f32, ents: &[&str], facts: &[(&str, &str, &str, f32)]) -> WriteBatch {
    let doc = common::text_document(title, text);
    let chunk = common::chunk(&doc, 0, text, 8);
    let mut b = WriteBatch::default();
    b.vectors.push((VectorKind::Chunk, chunk.id.clone(), at(cos, 2)));
    for e in ents {
        b.mentions.push(common::mention(e, String::new(), &doc, Some(&chunk)));
    }
    for &(s, p, o, fcos) in facts {
        b.relations.push(common::relation((s, p, o), format!("{s} {p} {o}"), &doc.id, Some(&chunk.id)));
        let f = common::fact((s, p, o), &doc.id, &chunk.id);
        b.vectors.push((VectorKind::Fact, f.fact.id.clone(), at(fcos, 1)));
        b.facts.push(f);
    }
    b.chunks.push(chunk);
    b.documents.push(doc);
    b
}

/// Tidewell was founded by Mara Lindqvist (P1, the best dense match), who was born in
/// Korsholm (P2, the answer: a poor dense match, reachable through the fact linked from
/// P1's entity). A distractor about Harbour Boats beats P2 on dense score; fillers make
/// the score ranges wide.
fn store(dir: &std::path::Path, with_facts: bool) -> SqliteStore {
    let f = |x: &'static [(&'static str, &'static str, &'static str, f32)]| if with_facts { x } else { &[] };
    let mut s = SqliteStore::open(dir, true).unwrap();
    s.set_embedding_model("table", 4).unwrap();
    let batches = [
        passage(
            "Tidewell",
            "Mara Lindqvist founded Tidewell in a harbour town.",
            0.9,
            &["Mara Lindqvist", "Tidewell"],
            f(&[("Mara Lindqvist", "founded", "Tidewell", 0.95)]),
        ),
        passage(
            "Mara Lindqvist",
            "Mara Lindqvist was born in Korsholm.",
            0.2,
            &["Mara Lindqvist", "Korsholm"],
            f(&[("Mara Lindqvist", "born in", "Korsholm", 0.3)]),
        ),
        passage(
            "Harbour Boats",
            "Harbour Boats builds ships in Vesle.",
            0.5,
            &["Harbour Boats", "Vesle"],
            f(&[("Harbour Boats", "builds ships in", "Vesle", 0.4)]),
        ),
        passage(
            "Ostmark",
            "Rain fell on Ostmark all winter.",
            -0.2,
            &["Ostmark", "Rain"],
            f(&[("Rain", "fell on", "Ostmark", -0.3)]),
        ),
        passage("Lund", "Lund has a cathedral.", 0.0, &["Lund"], &[]),
    ];
    for b in &batches {
        s.write_batch(b).unwrap();
    }
    s
}

fn config(linking_top_k: usize) -> Config {
    let mut c = Config::default();
    let h = c.section_mut::<HippoConfig>();
    h.linking_top_k = linking_top_k;
    h.passage_bm25_weight = 0.0; // dense only: the lexical overlap must not decide
                                 // HippoRAG's linking: every linked fact seeds, names in the question do not.
    h.unfiltered_fact_weight = 1.0;
    h.name_seed_weight = 0.0;
    c.retrieval.top_k = 5;
    c
}

fn run(s: &SqliteStore, config: &Config, llm: Option<&dyn llm::PromptLlm>) -> Retrieval {
    let embedder = TableEmbedder(HashMap::from([(QUESTION.to_string(), vec![1.0, 0.0, 0.0, 0.0])]));
    let graph = GraphCache::new();
    let env = QueryEnv { store: s, embedder: &embedder, config, llm, graph: &graph };
    retriever(Method::Hippo).retrieve(&env, QUESTION).unwrap()
}

fn titles(r: &Retrieval) -> Vec<&str> {
    r.contexts.iter().map(|c| c.title.as_str()).collect()
}

fn fact_texts(r: &Retrieval) -> Vec<String> {
    r.extra["facts"].as_array().unwrap().iter().map(|f| f["text"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_fact_link_lifts_the_answer_above_a_dense_distractor() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let r = run(&s, &config(1), None);
    assert_eq!(titles(&r)[..3], ["Tidewell", "Mara Lindqvist", "Harbour Boats"], "{r:?}");
    assert_eq!(fact_texts(&r), ["Mara Lindqvist founded Tidewell"]);
    let score = r.extra["facts"][0]["score"].as_f64().unwrap();
    assert!((score - 1.0).abs() < 1e-6, "best fact of the best passage: {score}");
    assert_eq!(r.extra["qa_top_k"], 3);
    assert_eq!(r.answer_top_k, Some(3), "the answer is written from the first qa_top_k contexts");
    assert_eq!(r.answer_contexts().len(), 3.min(r.contexts.len()));
    let c = &r.contexts[1];
    assert_eq!((c.kind.as_str(), c.source.as_str()), ("chunk", "Mara Lindqvist.txt"));
    assert_eq!(c.text, "Mara Lindqvist was born in Korsholm.");
    assert!(r.contexts.windows(2).all(|w| w[0].score >= w[1].score));
    for k in ["embed_query", "linking", "ppr", "total"] {
        assert!(r.timings_ms.contains_key(k), "timing {k}: {:?}", r.timings_ms);
    }
    assert!(r.notes.iter().any(|n| n.contains("no LLM configured")), "{:?}", r.notes);

    // The same store, queried twice more: the cached adjacency gives the same ranking.
    let again = run(&s, &config(1), None);
    assert_eq!(titles(&again), titles(&r));
}

#[test]
fn without_an_entity_seed_the_passage_seeds_still_walk_the_graph() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), false);
    // Dense order is Tidewell, Harbour Boats, Mara Lindqvist: the walk from the best
    // passage through Mara Lindqvist lifts her passage above the distractor.
    let r = run(&s, &config(5), None);
    assert_eq!(titles(&r), ["Tidewell", "Mara Lindqvist", "Harbour Boats", "Lund", "Ostmark"]);
    assert!(fact_texts(&r).is_empty());
    assert!(r.notes.iter().any(|n| n.contains("passage seeds alone")), "{:?}", r.notes);
    assert!(r.timings_ms.contains_key("ppr"));

    // Nothing seeds the graph (no entity, passage seeds weighted 0): dense order.
    let mut c = config(0);
    c.section_mut::<HippoConfig>().passage_node_weight = 0.0;
    let r = run(&s, &c, None);
    assert_eq!(titles(&r)[..3], ["Tidewell", "Harbour Boats", "Mara Lindqvist"]);
    assert!(r.notes.iter().any(|n| n.contains("ranked by dense retrieval")), "{:?}", r.notes);
    assert!(!r.timings_ms.contains_key("ppr"));

    // PageRank's share 0: the fused score is the passage score, whatever the graph says.
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let mut c = config(1);
    c.section_mut::<HippoConfig>().ppr_weight = 0.0;
    let r = run(&s, &c, None);
    assert_eq!(titles(&r)[..3], ["Tidewell", "Harbour Boats", "Mara Lindqvist"]);
}

#[test]
fn without_an_llm_the_names_in_the_question_seed_and_embedded_facts_do_not() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let defaults = HippoConfig::default();
    let mut c = config(3);
    let h = c.section_mut::<HippoConfig>();
    h.unfiltered_fact_weight = defaults.unfiltered_fact_weight;
    h.name_seed_weight = defaults.name_seed_weight;
    assert_eq!((h.unfiltered_fact_weight, h.name_seed_weight), (0.0, 1.0));
    let r = run(&s, &c, None);
    assert_eq!(r.extra["named_entities"], serde_json::json!(["Tidewell"]), "{:?}", r.extra);
    assert!(fact_texts(&r).is_empty(), "facts that could seed nothing are not linked: {:?}", r.extra);
    assert!(r.notes.iter().any(|n| n.contains("seed nothing")), "{:?}", r.notes);
    assert_eq!(titles(&r)[..3], ["Tidewell", "Mara Lindqvist", "Harbour Boats"]);
}

/// Above `retrieval.whole_graph_up_to` the bounded walk reads its subgraph through the
/// store, and ranks as the bounded walk over the whole graph, whatever seeds it.
#[test]
fn the_walk_read_through_the_store_ranks_as_over_the_whole_graph() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let defaults = HippoConfig::default();
    for (links, names, budget) in [(1, 0.0, 6), (3, defaults.name_seed_weight, 5), (5, 0.0, 9), (1, 0.0, 2)] {
        let mut c = config(links);
        c.section_mut::<HippoConfig>().name_seed_weight = names;
        c.section_mut::<HippoConfig>().ppr_nodes = budget;
        let whole = run(&s, &c, None);
        c.retrieval.whole_graph_up_to = 0;
        let around = run(&s, &c, None);
        let ranked = |r: &Retrieval| r.contexts.iter().map(|c| (c.title.clone(), c.score)).collect::<Vec<_>>();
        assert_eq!(ranked(&around), ranked(&whole), "{links} links, names {names}, {budget} nodes");
        assert_eq!(around.extra.get("ppr_subgraph_nodes"), whole.extra.get("ppr_subgraph_nodes"), "{whole:?}");
        assert_eq!(fact_texts(&around), fact_texts(&whole));
        assert!(around.extra.get("graph_reads").and_then(Value::as_u64).unwrap_or(0) > 0, "{:?}", around.extra);
        assert!(!whole.extra.contains_key("graph_reads"));
    }
}

// ---------------------------------------------------------------- LLM fact filter

fn blocking(mock: &MockOpenAi, rt: &tokio::runtime::Runtime) -> BlockingLlm {
    let provider = OpenAiProvider::new(OpenAiConfig {
        base_url: mock.base_url(),
        model: "mock".into(),
        api_key: None,
        azure_api_version: None,
        timeout: Duration::from_secs(10),
    })
    .unwrap();
    BlockingLlm {
        provider: Arc::new(provider),
        prompts: Arc::new(Prompts::builtin_with(&rhizome_retrieve::prompts())),
        runtime: rt.handle().clone(),
        temperature: 0.0,
        max_tokens: 256,
    }
}

#[test]
fn the_llm_filter_keeps_what_it_recognises_and_survives_garbage() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path(), true);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cfg = config(3);

    // Linked (best first): founded (1.0), the distractor's fact, born in. The LLM keeps 1
    // and 3, in prose around the JSON.
    let mock =
        MockOpenAi::with_responder(Box::new(|_req: &Value| "Here you go: {\"relevant\": [3, \"1\", 7]}".to_string()))
            .unwrap();
    let llm = blocking(&mock, &rt);
    let r = run(&s, &cfg, Some(&llm));
    assert_eq!(fact_texts(&r), ["Mara Lindqvist founded Tidewell", "Mara Lindqvist born in Korsholm"]);
    assert!(r.notes.iter().any(|n| n.contains("kept 2 of 3")), "{:?}", r.notes);
    assert_eq!(titles(&r)[..2], ["Tidewell", "Mara Lindqvist"]);
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let user = last_user_text(&requests[0]);
    assert!(user.contains(QUESTION), "{user}");
    assert!(user.contains("1. Mara Lindqvist founded Tidewell\n2. Harbour Boats builds ships in Vesle\n3. Mara Lindqvist born in Korsholm"), "{user}");
    assert_eq!(requests[0]["response_format"]["type"], "json_object");
    assert_eq!(requests[0]["messages"][0]["role"], "system");

    // Garbled, empty and failed replies: the unfiltered facts, a note, no error.
    let unfiltered =
        ["Mara Lindqvist founded Tidewell", "Harbour Boats builds ships in Vesle", "Mara Lindqvist born in Korsholm"];
    for (reply, fault, note) in [
        ("I'm sorry, I cannot help with that.", None, "unusable"),
        ("{\"relevant\": [\"none\", 0, 12]}", None, "unusable"),
        ("{\"relevant\": []}", None, "kept no fact"),
        ("{\"relevant\": [1]}", Some(Fault::ServerError), "failed"),
        ("{\"relevant\": [1]}", Some(Fault::Malformed), "failed"),
    ] {
        let mock = MockOpenAi::with_responder(Box::new(move |_req: &Value| reply.to_string())).unwrap();
        mock.push_faults(fault);
        let llm = blocking(&mock, &rt);
        let r = run(&s, &cfg, Some(&llm));
        assert_eq!(fact_texts(&r), unfiltered, "reply {reply:?}");
        assert!(r.notes.iter().any(|n| n.contains(note)), "reply {reply:?}: {:?}", r.notes);
        assert_eq!(mock.request_count(), 1);
    }

    // Filter switched off: no call at all.
    let mock = MockOpenAi::with_responder(Box::new(|_req: &Value| "{\"relevant\": [1]}".to_string())).unwrap();
    let llm = blocking(&mock, &rt);
    let mut off = cfg.clone();
    off.section_mut::<HippoConfig>().recognition_filter = false;
    let r = run(&s, &off, Some(&llm));
    assert_eq!(fact_texts(&r).len(), 3);
    assert_eq!(mock.request_count(), 0);
}
