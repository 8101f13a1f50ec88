//! `multipath` over a small English and Chinese corpus in a temporary SQLite store,
//! without an LLM and with one (a loopback OpenAI-compatible server) for the rerank.

use std::sync::atomic::AtomicBool;

use rhizome_core::ids::entity_id;
use rhizome_core::llm::PromptLlm;
use rhizome_core::text::bm25_terms;
use rhizome_core::*;
use rhizome_llm::BlockingLlm;
use rhizome_llm_testing::{last_user_text, Fault, MockOpenAi};
use rhizome_retrieve::{retriever, GraphCache, Method, MultipathConfig, QueryEnv, Retrieval};
use rhizome_store::SqliteStore;

mod common;

/// Bag of BM25 terms (CJK unigrams and bigrams included) hashed into 256 dimensions.
struct TermEmbedder;

impl Embedder for TermEmbedder {
    fn model_id(&self) -> &str {
        "test-terms"
    }
    fn dim(&self) -> usize {
        256
    }
    fn embed(&self, texts: &[String], _kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 256];
                for w in bm25_terms(t) {
                    let h = w.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                    v[(h % 256) as usize] += 1.0;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}

const DOCS: &[(&str, &str)] = &[
    (
        "Journal of Psychotherapy Integration",
        "The Journal of Psychotherapy Integration is a journal published by the American Psychological Association.",
    ),
    (
        "American Psychological Association",
        "G. Stanley Hall was the first president of the American Psychological Association (APA).",
    ),
    ("Danube", "The Danube flows through Vienna and Budapest before reaching the Black Sea."),
    ("Mount Fuji", "Mount Fuji is the highest mountain in Japan, near Tokyo."),
    ("微软投资", "Microsoft向OpenAI投资100亿美元，这是AI领域最大的投资之一。"),
    ("OpenAI", "OpenAI的CEO是Sam Altman，公司总部位于旧金山。"),
];

const RELS: &[(&str, &str, &str)] = &[
    ("Journal of Psychotherapy Integration", "published by", "American Psychological Association"),
    ("G. Stanley Hall", "first president of", "American Psychological Association"),
    ("American Psychological Association (APA)", "same as", "American Psychological Association"),
    ("Danube", "flows through", "Vienna"),
    ("Danube", "flows through", "Budapest"),
    ("Mount Fuji", "located in", "Japan"),
    ("Microsoft", "投资", "OpenAI"),
    ("Sam Altman", "CEO of", "OpenAI"),
    // No chunk names both: the relationship is placed at the first chunk of either.
    ("Mount Fuji", "climbed by", "Sam Altman"),
];

/// One chunk per document; an entity is mentioned where its name occurs; each relation
/// is supported by the chunk naming its source and gives a fact.
fn store(dir: &std::path::Path) -> SqliteStore {
    let emb = TermEmbedder;
    let mut s = common::open_store(dir, &emb);
    let mut names: Vec<&str> = RELS.iter().flat_map(|r| [r.0, r.2]).collect();
    names.sort();
    names.dedup();
    let mut b = WriteBatch::default();
    let mut chunk_of = Vec::new();
    for (title, text) in DOCS {
        let doc = common::text_document(title, text);
        let c = common::chunk(&doc, 0, text, 20);
        for n in names.iter().filter(|n| text.contains(*n)) {
            b.mentions.push(common::mention(n, format!("{n}, named in {title}"), &doc, Some(&c)));
        }
        b.vectors.push((VectorKind::Chunk, c.id.clone(), common::passage_vector(&emb, text)));
        chunk_of.push((doc.id.clone(), c.id.clone(), text.to_string()));
        b.chunks.push(c);
        b.documents.push(doc);
    }
    for n in &names {
        b.vectors.push((VectorKind::Entity, entity_id(n), common::passage_vector(&emb, n)));
    }
    for &(a, r, t) in RELS {
        let (doc, chunk, _) = chunk_of.iter().find(|c| c.2.contains(a)).unwrap();
        b.relations.push(common::relation((a, r, t), String::new(), doc, Some(chunk)));
        let f = common::fact((a, r, t), doc, chunk);
        b.vectors.push((VectorKind::Fact, f.fact.id.clone(), common::passage_vector(&emb, &format!("{a} {r} {t}"))));
        b.facts.push(f);
    }
    s.write_batch(&b).unwrap();
    s.rebuild_synonyms(10, 0.8, &AtomicBool::new(false)).unwrap();
    s
}

fn run(store: &SqliteStore, config: &Config, llm: Option<&dyn PromptLlm>, q: &str) -> Retrieval {
    let graph = GraphCache::new();
    let env = QueryEnv { store, embedder: &TermEmbedder, config, llm, graph: &graph };
    retriever(Method::Multipath).retrieve(&env, q).unwrap()
}

fn of_kind<'a>(r: &'a Retrieval, kind: &str) -> Vec<&'a str> {
    r.contexts.iter().filter(|c| c.kind == kind).map(|c| c.text.as_str()).collect()
}

fn titles(r: &Retrieval) -> Vec<&str> {
    r.contexts.iter().filter(|c| c.kind == "chunk").map(|c| c.title.as_str()).collect()
}

fn entity<'a>(r: &'a Retrieval, name: &str) -> Option<&'a serde_json::Value> {
    r.extra["entities"].as_array().unwrap().iter().find(|e| e["name"] == name)
}

const JPI: &str =
    "Who was the first president of the association which published Journal of Psychotherapy Integration?";

#[test]
fn multi_hop_question_without_llm() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let cfg = Config::default();
    let r = run(&s, &cfg, None, JPI);
    assert_eq!(r.extra["keywords"][0], "Journal of Psychotherapy Integration");
    assert!(r.extra["keywords"].as_array().unwrap().len() <= cfg.section::<MultipathConfig>().keyword_limit);
    let jpi = entity(&r, "Journal of Psychotherapy Integration").expect("entity found");
    for path in ["vector", "substring", "fulltext"] {
        assert!(jpi["paths"].as_array().unwrap().contains(&path.into()), "{jpi}");
    }
    // The two supporting passages first.
    let t = titles(&r);
    assert_eq!(t.len(), DOCS.len().min(cfg.retrieval.top_k));
    let mut top2 = t[..2].to_vec();
    top2.sort();
    assert_eq!(top2, ["American Psychological Association", "Journal of Psychotherapy Integration"], "{t:?}");
    // One hop and two hops from the journal.
    let rels = of_kind(&r, "relationship");
    assert!(rels.len() <= cfg.section::<MultipathConfig>().max_relationships);
    assert!(
        rels.contains(&"Journal of Psychotherapy Integration --published by--> American Psychological Association"),
        "{rels:?}"
    );
    assert!(rels.contains(&"G. Stanley Hall --first president of--> American Psychological Association"), "{rels:?}");
    let facts = of_kind(&r, "fact");
    assert!(!facts.is_empty() && facts.len() <= cfg.section::<MultipathConfig>().fact_top_k);
    assert!(facts.contains(&"G. Stanley Hall first president of American Psychological Association"), "{facts:?}");
    // Chunks, then relationships, facts, entities.
    let order: Vec<&str> = r.contexts.iter().map(|c| c.kind.as_str()).collect();
    let mut kinds = order.clone();
    kinds.dedup();
    assert_eq!(kinds, ["chunk", "relationship", "fact", "entity"]);
    assert!(r.contexts.iter().filter(|c| c.kind == "entity").count() <= cfg.section::<MultipathConfig>().max_entities);
    let rel = r.contexts.iter().find(|c| c.kind == "relationship").unwrap();
    assert!(rel.source.ends_with(".txt"), "{rel:?}");
    for stage in [
        "embed_query",
        "embed_keywords",
        "keywords",
        "entities",
        "relationships",
        "chunk_vector",
        "chunk_fulltext",
        "chunk_graph",
        "chunk_rank",
        "facts",
        "fetch",
    ] {
        assert!(r.timings_ms.contains_key(stage), "{stage} missing: {:?}", r.timings_ms);
    }
    for path in ["vector", "substring", "fulltext", "question_vector", "synonym"] {
        assert!(r.extra["entity_paths"][path].is_u64(), "{}", r.extra["entity_paths"]);
        assert!(r.extra["chunk_paths"].as_object().unwrap().len() == 5);
    }
    // LLM rerank is off by default: no note.
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(run(&s, &cfg, None, JPI).contexts, r.contexts, "deterministic");
}

#[test]
fn synonyms_and_caps() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut cfg = Config::default();
    let r = run(&s, &cfg, None, "Where is the American Psychological Association?");
    // "... (APA)" shares three of four words with the name: a SYNONYM edge.
    let apa = entity(&r, "American Psychological Association (APA)").expect("synonym found");
    assert!(apa["paths"].as_array().unwrap().contains(&"synonym".into()), "{apa}");
    assert!(r.extra["entity_paths"]["synonym"].as_u64().unwrap() >= 1);

    let m = cfg.section_mut::<MultipathConfig>();
    m.max_entities = 2;
    m.max_relationships = 1;
    m.fact_top_k = 1;
    m.chunk_top_k = 2;
    m.keyword_limit = 1;
    let r = run(&s, &cfg, None, JPI);
    assert_eq!(r.extra["keywords"], serde_json::json!(["Journal of Psychotherapy Integration"]));
    assert_eq!(of_kind(&r, "entity").len(), 2);
    assert_eq!(of_kind(&r, "relationship").len(), 1);
    assert_eq!(of_kind(&r, "fact").len(), 1);
    assert_eq!(of_kind(&r, "chunk").len(), 2);
}

#[test]
fn chinese_and_vietnamese_questions() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let r = run(&s, &Config::default(), None, "Sam Altman领导的公司有什么重要投资？");
    assert_eq!(r.extra["keywords"][0], "Sam Altman");
    assert!(entity(&r, "Sam Altman").is_some());
    let rels = of_kind(&r, "relationship");
    assert!(rels.contains(&"Sam Altman --CEO of--> OpenAI"), "{rels:?}");
    assert!(rels.contains(&"Microsoft --投资--> OpenAI"), "two hops: {rels:?}");
    let mut top2 = titles(&r)[..2].to_vec();
    top2.sort();
    assert_eq!(top2, ["OpenAI", "微软投资"]);
    // Nothing in the index matches: no panic, the ranked passages are still returned.
    let r = run(&s, &Config::default(), None, "Aage Bohr có những giải thưởng gì?");
    assert_eq!(r.extra["keywords"], serde_json::json!(["Aage Bohr", "giải thưởng"]));
    let r = run(&s, &Config::default(), None, "?");
    assert!(r.extra["keywords"].as_array().unwrap().is_empty());
}

fn llm(server: &MockOpenAi, rt: &tokio::runtime::Runtime) -> BlockingLlm {
    rhizome_llm_testing::blocking_llm_with(
        server,
        rt.handle().clone(),
        rhizome_llm::prompt::Prompts::builtin_with(&rhizome_retrieve::prompts()),
    )
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

/// Puts the passage about the Danube first.
fn danube_first(req: &serde_json::Value) -> String {
    let text = last_user_text(req);
    let n = text
        .lines()
        .find(|l| l.contains("Danube"))
        .and_then(|l| l.strip_prefix('[')?.split(']').next()?.parse::<usize>().ok())
        .unwrap_or(0);
    format!("{{\"ranking\": [{n}]}}")
}

#[test]
fn llm_rerank_and_its_fallbacks() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let rt = rt();
    let mut cfg = Config::default();
    let plain = run(&s, &cfg, None, JPI);
    cfg.section_mut::<MultipathConfig>().llm_rerank = true;

    let r = run(&s, &cfg, None, JPI);
    assert!(r.notes.iter().any(|n| n.contains("no LLM configured")), "{:?}", r.notes);
    assert_eq!(r.contexts, plain.contexts);

    let server = MockOpenAi::with_responder(Box::new(danube_first)).unwrap();
    let r = run(&s, &cfg, Some(&llm(&server, &rt)), JPI);
    assert_eq!(server.request_count(), 1);
    let user = last_user_text(&server.requests()[0]);
    assert!(user.contains(&format!("Question: {JPI}")) && user.contains("Passages:\n[1] "), "{user}");
    assert_eq!(titles(&r)[0], "Danube");
    assert_eq!(r.extra["llm_rerank"], true);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(r.timings_ms.contains_key("llm_rerank"));
    // The passages the LLM left out keep their order after it.
    let rest: Vec<&str> = titles(&plain).into_iter().filter(|t| *t != "Danube").collect();
    assert_eq!(titles(&r)[1..], rest[..titles(&r).len() - 1]);

    // A reply with no passage numbers (the default mock answers with extraction JSON), a
    // failed call, and prose: the cosine ranking stays, with a note.
    let server = MockOpenAi::start().unwrap();
    let r = run(&s, &cfg, Some(&llm(&server, &rt)), JPI);
    assert!(r.notes.iter().any(|n| n.contains("LLM rerank skipped")), "{:?}", r.notes);
    assert_eq!(r.contexts, plain.contexts);
    let server = MockOpenAi::with_responder(Box::new(|_| "{\"ranking\": [1]}".into())).unwrap();
    server.push_faults([Fault::Status(500)]);
    let r = run(&s, &cfg, Some(&llm(&server, &rt)), JPI);
    assert!(r.notes.iter().any(|n| n.contains("LLM call failed")), "{:?}", r.notes);
    assert_eq!(r.contexts, plain.contexts);
    let server = MockOpenAi::with_responder(Box::new(|_| "I cannot rank these.".into())).unwrap();
    let r = run(&s, &cfg, Some(&llm(&server, &rt)), JPI);
    assert!(r.notes.iter().any(|n| n.contains("no passage numbers")), "{:?}", r.notes);
    assert_eq!(r.contexts, plain.contexts);
}

#[test]
fn without_the_whole_graph_the_contexts_are_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let s = store(tmp.path());
    let mut configs = vec![Config::default()];
    let mut small = Config::default();
    small.retrieval.top_k = 2;
    let m = small.section_mut::<MultipathConfig>();
    (m.max_entities, m.expand_entities, m.max_relationships, m.entity_top_k) = (3, 1, 2, 2);
    configs.push(small);
    let mut wide = Config::default();
    let m = wide.section_mut::<MultipathConfig>();
    (m.max_entities, m.expand_entities, m.max_relationships) = (40, 10, 40);
    configs.push(wide);
    let questions = [
        JPI,
        "Where is the American Psychological Association?",
        "Sam Altman领导的公司有什么重要投资？",
        "Which cities does the Danube flow through?",
        "What is the highest mountain in Japan?",
        "Japan",
        "Aage Bohr có những giải thưởng gì?",
        "",
    ];
    for cfg in &configs {
        let mut around = cfg.clone();
        around.retrieval.whole_graph_up_to = 0;
        for q in questions {
            let (a, b) = (run(&s, cfg, None, q), run(&s, &around, None, q));
            assert_eq!(a.contexts, b.contexts, "{q}");
            assert_eq!(a.extra, b.extra, "{q}");
            assert!(b.notes.iter().any(|n| n.contains("read the neighbourhood")), "{q}: {:?}", b.notes);
            assert!(!a.notes.iter().any(|n| n.contains("neighbourhood")), "{q}: {:?}", a.notes);
        }
    }
}
