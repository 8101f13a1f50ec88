//! `auto`: analyse the question ([`crate::analyze`]) and hand it to the method the
//! analysis favours. The output says which: `extra["routed_to"]` (the method that
//! produced the contexts), `extra["analysis"]` (the analysis as JSON), `extra["route_reason"]`
//! and a note.
//!
//! Routing table ([`route`]), first match wins:
//!
//! | analysis                              | method                                        |
//! |---------------------------------------|-----------------------------------------------|
//! | multi-hop (a chain of facts)          | `hippo` when the index has facts, else `multihop` |
//! | comparative                           | `hippo` when the index has facts, else `basic` |
//! | analytical / thematic                 | `local` (entities, relations, text units)     |
//! | factual, not multi-hop                | `basic`                                       |
//!
//! An index with no text at all (a graph imported from an edge list) goes to `multihop`
//! whatever the question: the chunk methods would find nothing there.
//!
//! Each kind of question goes to a method that measures at least as well as `basic` on it
//! (`rhizome eval` per kind); comparative questions go to `hippo` (given facts), not `multipath`, which
//! measures below `basic` on them (HotpotQA-100 LLM-free).
//!
//! Multi-hop comes first: a comparison whose sides are themselves reached by hops ("was the
//! director of X born before the director of Y?") needs the chain first. `global` takes
//! the thematic questions once community summaries exist.
//!
//! The routed method gets the self-contained question (the same one when there is no
//! history). If the routed method fails, `basic` answers instead and a note says why.

use std::time::Instant;

use rhizome_core::{Error, Result};
use serde_json::json;

use crate::analyze::{analyze, QueryAnalysis, QueryType};
use crate::{ms, Method, MethodEntry, QueryEnv, Retrieval, Retriever};

pub struct Auto;

/// Where a question goes, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    pub reason: String,
}

/// The routing decision for an analysis, given how many facts the index holds (see the
/// module docs for the table).
pub fn route(a: &QueryAnalysis, facts: u64) -> Route {
    let (method, reason) = if a.multi_hop {
        if facts > 0 {
            (Method::Hippo, format!("multi-hop question and the index has {facts} facts"))
        } else {
            (Method::Multihop, "multi-hop question and the index has no facts".to_string())
        }
    } else {
        match a.query_type {
            QueryType::Comparative if facts > 0 => {
                (Method::Hippo, format!("comparative question and the index has {facts} facts"))
            }
            QueryType::Comparative => (Method::Basic, "comparative question and the index has no facts".to_string()),
            QueryType::Analytical => (Method::Local, "analytical question".to_string()),
            QueryType::Factual => (Method::Basic, format!("{} factual question", a.complexity.as_str())),
        }
    };
    Route { method, reason }
}

/// The registry entry of this module.
pub(crate) const METHODS: &[MethodEntry] = &[MethodEntry {
    method: Method::Auto,
    description: "Query analysis picks one of the others",
    reads_graph: true,
    settings: &[],
    retriever: |_| Box::new(Auto),
    prompts: &[],
}];

impl Retriever for Auto {
    fn retrieve(&self, env: &QueryEnv, question: &str) -> Result<Retrieval> {
        route_and_retrieve(env, question, &crate::retriever)
    }
}

/// Analyse, route, and retrieve with `make(method)`; `basic` answers if the routed method
/// fails.
fn route_and_retrieve(
    env: &QueryEnv,
    question: &str,
    make: &dyn Fn(Method) -> Box<dyn Retriever>,
) -> Result<Retrieval> {
    let t = Instant::now();
    let analysis = analyze(question, &[], env.llm)?;
    let analyze_ms = ms(t);
    // The fact count matters only for multi-hop and comparative questions; it comes from
    // the graph when held, else from the store once per graph version. No question loads
    // the graph on an index above `retrieval.whole_graph_up_to` entities (the method
    // routed to reads what it needs); there an edge list is not told apart.
    let needs_facts = analysis.multi_hop || analysis.query_type == QueryType::Comparative;
    let graph = env.whole_graph()?;
    let facts = match (&graph, needs_facts) {
        (_, false) => 0,
        (Some(g), true) => g.facts.len() as u64,
        (None, true) => env.graph.fact_count(env.store)?,
    };
    let mut chosen = route(&analysis, facts);
    let edge_list = graph.as_ref().is_some_and(|g| g.chunk_ids.is_empty() && !g.entity_ids.is_empty());
    if edge_list && chosen.method != Method::Multihop {
        chosen = Route {
            method: Method::Multihop,
            reason: "the index is a graph without text (an edge list): its edges are the evidence".into(),
        };
    }
    let q = analysis.standalone_question.as_str();
    let mut notes = vec![format!("auto: routed to {} ({})", chosen.method, chosen.reason)];
    let mut used = chosen.method;
    let mut r = match make(chosen.method).retrieve(env, q) {
        Ok(r) => r,
        Err(e) if chosen.method != Method::Basic => {
            notes.push(format!("auto: {} failed ({e}); answered by basic instead", chosen.method));
            used = Method::Basic;
            let mut r = make(Method::Basic).retrieve(env, q)?;
            r.extra.insert("fallback_from".into(), json!(chosen.method));
            r
        }
        Err(e) => return Err(e),
    };
    notes.extend(analysis.notes.iter().map(|n| format!("analysis: {n}")));
    notes.append(&mut r.notes);
    r.notes = notes;
    r.timings_ms.insert("analyze".into(), analyze_ms);
    r.extra.insert("routed_to".into(), json!(used));
    r.extra.insert("route_reason".into(), json!(chosen.reason));
    r.extra.insert(
        "analysis".into(),
        serde_json::to_value(&analysis).map_err(|e| Error::Store(format!("analysis as JSON: {e}")))?,
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use rhizome_core::ids::{chunk_id, document_id};
    use rhizome_core::{Chunk, Config, Document, EmbedKind, Embedder, StoreWrite, VectorKind, WriteBatch};

    use super::*;
    use crate::GraphCache;

    /// Every text gets the same unit vector: retrieval falls to BM25 order.
    struct Flat;
    impl Embedder for Flat {
        fn model_id(&self) -> &str {
            "flat"
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>> {
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    struct Broken(Method);
    impl Retriever for Broken {
        fn retrieve(&self, _: &QueryEnv, _: &str) -> Result<Retrieval> {
            Err(Error::bad_input(format!("--method {}", self.0), "broken on purpose"))
        }
    }

    #[test]
    fn a_failing_method_hands_over_to_basic() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = rhizome_store::SqliteStore::open(tmp.path(), true).unwrap();
        store.set_embedding_model("flat", 2).unwrap();
        let text = "Microsoft invested in OpenAI because of its AI research.";
        let doc = Document {
            id: document_id("d", text),
            source: "d.txt".into(),
            title: "d".into(),
            text: text.into(),
            pages: None,
            meta: Default::default(),
        };
        let c = Chunk {
            id: chunk_id(&doc.id, 0, text),
            doc_id: doc.id.clone(),
            ordinal: 0,
            text: text.into(),
            tokens: 10,
            start: 0,
            end: 0,
            pages: None,
        };
        let mut b = WriteBatch::default();
        b.vectors.push((VectorKind::Chunk, c.id.clone(), vec![1.0, 0.0]));
        b.chunks.push(c);
        b.documents.push(doc);
        store.write_batch(&b).unwrap();
        let config = Config::default();
        let graph = GraphCache::new();
        let env = QueryEnv { store: &store, embedder: &Flat, config: &config, llm: None, graph: &graph };
        let make = |m: Method| -> Box<dyn Retriever> {
            if m == Method::Basic {
                crate::retriever(m)
            } else {
                Box::new(Broken(m))
            }
        };
        let r = route_and_retrieve(&env, "Why did Microsoft invest in OpenAI?", &make).unwrap();
        assert_eq!(r.extra["routed_to"], "basic");
        assert_eq!(r.extra["fallback_from"], "local");
        assert_eq!(r.extra["analysis"]["query_type"], "analytical");
        assert!(r.notes[0].starts_with("auto: routed to local (analytical question)"), "{:?}", r.notes);
        assert!(r.notes[1].contains("local failed") && r.notes[1].contains("broken on purpose"), "{:?}", r.notes);
        assert_eq!(r.contexts.len(), 1);

        // A failing basic is an error, not a loop.
        let never = |m: Method| -> Box<dyn Retriever> { Box::new(Broken(m)) };
        let e = route_and_retrieve(&env, "Who founded OpenAI?", &never).unwrap_err().to_string();
        assert!(e.contains("broken on purpose"), "{e}");
    }
}
