//! Communities and reports over a small store: computed only when the graph changed,
//! extractive offline, written by the LLM (a loopback OpenAI-compatible server) bottom-up
//! with sub-community reports standing in when the material exceeds the budget, reused
//! while their community is unchanged, and never lost to a garbled reply.

use std::sync::atomic::AtomicBool;

use rhizome_core::config_sensemaking::CommunitiesConfig;
use rhizome_core::ids::{document_id, entity_id, relation_id};
use rhizome_core::*;
use rhizome_llm_testing::{blocking_llm, last_user_text, MockOpenAi};
use rhizome_store::SqliteStore;
use serde_json::{json, Value};

use rhizome_core::embed::WordHashEmbedder as WordEmbedder;

/// Write a document supporting the cliques `groups` (every pair related, weight 1) and
/// `bridges` between them (weight 1).
fn write_graph(s: &mut SqliteStore, title: &str, groups: &[Vec<String>], bridges: &[(String, String)]) {
    let emb = WordEmbedder;
    s.set_embedding_model(emb.model_id(), emb.dim()).unwrap();
    let text = format!("{title}: {}", groups.iter().flatten().cloned().collect::<Vec<_>>().join(", "));
    let doc = Document {
        id: document_id(title, &text),
        source: format!("{title}.txt"),
        title: title.into(),
        text,
        pages: None,
        meta: Default::default(),
    };
    let mut b = WriteBatch::default();
    let names: Vec<&String> = groups.iter().flatten().collect();
    for n in &names {
        b.mentions.push(MentionRecord {
            entity_id: entity_id(n),
            name: n.to_string(),
            entity_type: "CONCEPT".into(),
            description: format!("{n} is a member of the test graph."),
            doc_id: doc.id.clone(),
            chunk_id: None,
            count: 1,
            importance: None,
        });
    }
    let vecs = emb.embed(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>(), EmbedKind::Passage).unwrap();
    for (n, v) in names.iter().zip(vecs) {
        b.vectors.push((VectorKind::Entity, entity_id(n), v));
    }
    let mut rel = |a: &str, t: &str, w: f32| {
        let (x, y) = (entity_id(a), entity_id(t));
        b.relations.push(RelationRecord {
            relation: Relation {
                id: relation_id(&x, "RELATED", &y),
                source_id: x,
                target_id: y,
                rel_type: "RELATED".into(),
                description: format!("{a} works with {t}"),
                weight: w,
            },
            doc_id: doc.id.clone(),
            chunk_id: None,
        });
    };
    for g in groups {
        for i in 0..g.len() {
            for j in i + 1..g.len() {
                rel(&g[i], &g[j], 1.0);
            }
        }
    }
    for (a, t) in bridges {
        rel(a, t, 1.0);
    }
    b.documents.push(doc);
    s.write_batch(&b).unwrap();
}

/// Four separate pairs of 5-cliques, the two cliques of a pair joined by four edges: at
/// level 0 each pair is one community of ten (merging it beats splitting it on the whole
/// graph), which the size limit of 5 splits into its two cliques at level 1.
fn graph() -> (Vec<Vec<String>>, Vec<(String, String)>) {
    let groups: Vec<Vec<String>> = (0..8).map(|g| (0..5).map(|i| format!("Clique{g} Member{i}")).collect()).collect();
    let mut bridges = Vec::new();
    for pair in 0..4 {
        for i in 0..4 {
            bridges.push((groups[2 * pair][i].clone(), groups[2 * pair + 1][i].clone()));
        }
    }
    (groups, bridges)
}

fn cfg() -> CommunitiesConfig {
    CommunitiesConfig { max_cluster_size: 5, ..CommunitiesConfig::default() }
}

fn refresh(
    s: &mut SqliteStore,
    llm: Option<&dyn llm::PromptLlm>,
    cfg: &CommunitiesConfig,
) -> rhizome_community::CommunityOutcome {
    rhizome_community::refresh(s, &WordEmbedder, llm, cfg, false, &AtomicBool::new(false)).unwrap()
}

#[test]
fn offline_reports_are_extractive_and_recomputed_only_when_the_graph_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(dir.path(), true).unwrap();
    let (groups, bridges) = graph();
    write_graph(&mut s, "a", &groups, &bridges);
    let o = refresh(&mut s, None, &cfg());
    assert!(o.recomputed);
    assert_eq!(o.per_level.len(), 2, "{o:?}");
    assert!(o.per_level[0] < o.per_level[1], "{o:?}");
    let comms = s.communities().unwrap();
    let n = comms.len();
    assert_eq!(o.reports_extractive, n);
    for c in &comms {
        if c.is_leaf() {
            assert!(c.entity_ids.len() <= 5, "{c:?}");
        }
        if let Some(p) = &c.parent {
            let parent = comms.iter().find(|x| &x.id == p).expect("parent");
            assert!(parent.children.contains(&c.id));
            assert!(c.entity_ids.iter().all(|e| parent.entity_ids.contains(e)));
        }
    }
    for c in comms.iter().filter(|c| !c.is_leaf()) {
        let mut kids: Vec<&String> =
            comms.iter().filter(|k| c.children.contains(&k.id)).flat_map(|k| &k.entity_ids).collect();
        kids.sort();
        assert_eq!(kids, c.entity_ids.iter().collect::<Vec<_>>(), "children partition their parent");
    }
    let reports = s.community_reports().unwrap();
    assert_eq!(reports.len(), n);
    // Communities by member: a clique member is in its leaf and in the leaf's parent.
    let of = s.communities_of(&[entity_id("Clique3 Member2")]).unwrap();
    assert_eq!(of.iter().map(|c| c.level).collect::<Vec<_>>(), [0, 1], "{of:?}");
    assert_eq!(of[1].parent.as_ref(), Some(&of[0].id));
    let ids: Vec<String> = of.iter().map(|c| c.id.clone()).collect();
    assert_eq!(s.community_reports_of(&ids).unwrap().len(), 2);
    assert_eq!(s.community_report_count().unwrap(), n as u64);
    assert!(reports.iter().all(|r| r.kind == ReportKind::Extractive && !r.findings.is_empty()));
    assert!(s
        .missing_vectors(VectorKind::Report, &comms.iter().map(|c| c.id.clone()).collect::<Vec<_>>())
        .unwrap()
        .is_empty());

    let again = refresh(&mut s, None, &cfg());
    assert!(!again.recomputed && again.reports_reused == n && again.reports_extractive == 0, "{again:?}");

    // A new, separate clique: recomputed; the old communities keep their reports.
    write_graph(&mut s, "b", &[(0..3).map(|i| format!("Other{i}")).collect()], &[]);
    let o = refresh(&mut s, None, &cfg());
    assert!(o.recomputed && o.reports_reused == n && o.reports_extractive == 1, "{o:?}");
}

fn report_reply(req: &Value) -> String {
    let u = last_user_text(req);
    // The leaf of clique 0 alone gets an unusable reply: an extractive report stands in.
    if u.contains("Clique0 Member") && (1..8).all(|g| !u.contains(&format!("Clique{g} Member"))) {
        return "I cannot write this report.".into();
    }
    let subs = u.matches("Reports on sub-communities").count();
    json!({"title": format!("Report with {subs} sub-report section(s)"), "summary": "Members work together.",
           "rating": "6.5", "rating_explanation": "Test.", "findings": [{"summary": "They cooperate.", "explanation": "Every pair works together."}]})
    .to_string()
}

/// Reports are the same whether the material of every community is read from the store
/// (`material_cache_mb = 0`) or each entity's rows once for all levels (the default).
#[test]
fn reports_do_not_depend_on_the_material_cache() {
    let (groups, bridges) = graph();
    let reports = |cache_mb: usize| {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SqliteStore::open(dir.path(), true).unwrap();
        write_graph(&mut s, "a", &groups, &bridges);
        refresh(&mut s, None, &CommunitiesConfig { material_cache_mb: cache_mb, ..cfg() });
        let mut r: Vec<String> = s.community_reports().unwrap().iter().map(|r| format!("{r:?}")).collect();
        r.sort();
        r
    };
    let (none, cached) = (reports(0), reports(128));
    assert!(none.len() > 4);
    assert_eq!(none, cached);
}

#[test]
fn llm_reports_go_bottom_up_use_sub_reports_under_a_budget_and_are_not_paid_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(dir.path(), true).unwrap();
    let (groups, bridges) = graph();
    write_graph(&mut s, "a", &groups, &bridges);
    let server = MockOpenAi::with_responder(Box::new(report_reply)).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let llm = blocking_llm(&server, rt.handle().clone());
    // The material of a community of two cliques (10 entities, 21 relations) is over 300
    // tokens: parents use their children's reports.
    let small = CommunitiesConfig { report_max_input_tokens: 300, ..cfg() };
    let o = refresh(&mut s, Some(&llm), &small);
    let n = o.communities;
    assert_eq!(server.request_count(), n, "one call per community");
    assert_eq!(o.reports_llm + o.reports_extractive, n, "{o:?}");
    assert_eq!(o.llm_failures, 1, "the clique-0 leaf's reply is unusable: {o:?}");
    assert!(o.reports_with_subreports >= 1, "{o:?}");
    let reqs: Vec<String> = server.requests().iter().map(last_user_text).collect();
    // Leaves (level 1) are asked first, then the level-0 communities with their sub-reports.
    let leaves = o.per_level[1];
    let first_parent =
        reqs.iter().position(|u| u.contains("Reports on sub-communities")).expect("a parent used sub-reports");
    assert!(first_parent >= leaves, "children before parents: {first_parent} < {leaves}");
    assert!(reqs[first_parent].contains("Members work together."), "the child's LLM report text is used");
    for u in &reqs {
        let material = u.split("Write a report about this community").next().unwrap();
        assert!(rhizome_core::text::count_tokens(material) <= 300 + 120, "material within the budget");
    }
    let reports = s.community_reports().unwrap();
    assert_eq!(reports.iter().filter(|r| r.kind == ReportKind::Llm).count(), n - 1);
    assert!(reports.iter().filter(|r| r.kind == ReportKind::Llm).all(|r| r.rating == 6.5 && r.findings.len() == 1));

    // Nothing changed: LLM reports are kept; the extractive stand-in is asked for again.
    let before = server.request_count();
    let o = refresh(&mut s, Some(&llm), &small);
    assert_eq!(o.reports_reused, n - 1, "{o:?}");
    assert_eq!(server.request_count() - before, 1, "only the extractive stand-in is retried");
}
