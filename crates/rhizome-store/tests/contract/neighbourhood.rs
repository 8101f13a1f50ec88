//! `StoreRead::neighbourhood`: the graph around some entities, equal to the whole graph
//! cut around them (`GraphData::around`), with the degrees of their relations' ends; and
//! the reads hippo walks a large index with (`walk_edges`, `chunk_titles`, `fact_rows`),
//! equal to the same cuts of the whole graph; what graph reasoning expands through
//! (`chunk_links`), and what a graph viewer reads (`entity_degrees`,
//! `document_chunk_rows`), each equal to the whole graph's rows.

use std::path::Path;

use rhizome_core::ids::{entity_id, relation_id};
use rhizome_core::*;

use super::batch;

fn relate(b: &mut WriteBatch, s: &str, t: &str) {
    let (s, t) = (entity_id(s), entity_id(t));
    b.relations.push(RelationRecord {
        relation: Relation {
            id: relation_id(&s, "LINKS", &t),
            source_id: s,
            target_id: t,
            rel_type: "LINKS".into(),
            description: String::new(),
            weight: 2.0,
        },
        doc_id: b.documents[0].id.clone(),
        chunk_id: Some(b.chunks[0].id.clone()),
    });
}

pub fn neighbourhood_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(&tmp.path().join("n"));
    s.set_embedding_model("m", 3).unwrap();
    // d1: both chunks mention Alpha..Delta, then the second only Beta and Delta.
    let mut d1 = batch("d1", &["Alpha met Beta.", "Beta and Delta."], &["Alpha", "Beta", "Gamma", "Delta"]);
    let second = d1.chunks[1].id.clone();
    d1.mentions.retain(|m| m.chunk_id.as_deref() != Some(&second) || ["Beta", "Delta"].contains(&m.name.as_str()));
    relate(&mut d1, "Beta", "Gamma");
    relate(&mut d1, "Gamma", "Gamma");
    relate(&mut d1, "Delta", "Alpha");
    let mut d2 = batch("d2", &["Epsilon, Zeta and Alpha."], &["Epsilon", "Zeta", "Alpha"]);
    relate(&mut d2, "Alpha", "Epsilon");
    // d3: four chunks, SIMILAR_TO edges from the first to the third and fourth, and from
    // the second to the fourth.
    let mut d3 = batch("d3", &["Eta one.", "Eta two.", "Eta three.", "Eta four."], &[]);
    let c3: Vec<String> = d3.chunks.iter().map(|c| c.id.clone()).collect();
    for (i, j, cos) in [(0, 2, 0.8), (0, 3, 0.7), (1, 3, 0.9)] {
        let (a, b) = (c3[i].clone().min(c3[j].clone()), c3[i].clone().max(c3[j].clone()));
        d3.similar.push((a, b, cos));
    }
    s.write_batch(&d1).unwrap();
    s.write_batch(&d2).unwrap();
    s.write_batch(&d3).unwrap();
    let (a, f) = (entity_id("Alpha"), entity_id("Zeta"));
    s.set_synonyms(&[(a.clone().min(f.clone()), a.max(f), 0.9)]).unwrap();

    let whole = s.graph_data().unwrap();
    assert_eq!(s.entity_rows().unwrap(), whole.entities);
    assert_eq!(s.entity_count().unwrap(), 6);
    let facts: std::collections::BTreeSet<&str> = whole.facts.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(s.fact_count().unwrap(), facts.len() as u64);
    assert!(!facts.is_empty());
    let ids = |names: &[&str]| names.iter().map(|n| entity_id(n)).collect::<Vec<_>>();
    for asked in [
        ids(&["Alpha"]),
        ids(&["Gamma"]),
        ids(&["Zeta"]),
        ids(&["Delta", "Epsilon"]),
        vec![entity_id("Zeta"), "ent_missing".into(), entity_id("Zeta")],
        vec![],
    ] {
        assert_eq!(s.neighbourhood(&asked).unwrap(), whole.around(&asked), "around {asked:?}");
        assert_eq!(s.neighbourhood_rows(&asked).unwrap(), whole.around(&asked).graph, "rows around {asked:?}");
    }
    // What the cut holds, by hand: Gamma's two relations (one a loop), the chunk that
    // mentions it with the mentions of the relations' ends there, its ends' degrees.
    let n = s.neighbourhood(&ids(&["Gamma"])).unwrap();
    assert_eq!(n.graph.relations.len(), 2);
    assert_eq!(n.graph.chunks.len(), 1);
    assert_eq!(n.graph.mentions.len(), 2);
    assert_eq!(n.graph.entities.len(), 2);
    let degree = |name: &str| n.degrees.iter().find(|d| d.0 == entity_id(name)).map(|d| d.1);
    assert_eq!((degree("Gamma"), degree("Beta"), degree("Alpha")), (Some(2), Some(2), None));
    let n = s.neighbourhood(&ids(&["Alpha"])).unwrap();
    assert_eq!(n.graph.relations.len(), 3);
    assert_eq!(n.graph.synonyms.len(), 1);
    let degree = |name: &str| n.degrees.iter().find(|d| d.0 == entity_id(name)).map(|d| d.1);
    assert_eq!((degree("Alpha"), degree("Beta"), degree("Epsilon")), (Some(3), Some(2), Some(2)));

    walk_contract(&s, &whole);
    scope_contract(&s, &whole);
    viewer_contract(&s, &whole);
    links_contract(&s, &whole, &c3);
}

fn links_contract<S: StoreWrite>(s: &S, whole: &GraphData, d3: &[String]) {
    assert_eq!(s.chunk_count().unwrap(), whole.chunks.len() as u64);
    let all: Vec<String> = whole.chunks.iter().map(|c| c.id.clone()).collect();
    let first = whole.chunks[0].id.clone();
    for asked in [
        vec![d3[0].clone()],
        vec![d3[3].clone(), d3[1].clone()],
        vec![d3[2].clone(), "chunk_missing".into(), d3[2].clone(), first],
        all,
        vec![],
    ] {
        assert_eq!(s.chunk_links(&asked).unwrap(), whole.chunk_links(&asked), "links of {asked:?}");
    }
    // By hand (`batch` links the first two chunks too): the second chunk of d3 with the
    // first and third, and its edges to the first and fourth; the first with the second,
    // and its three edges.
    let second = s.chunk_links(&d3[1..2]).unwrap();
    let ids: std::collections::BTreeSet<&str> = second.chunks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, d3[..3].iter().map(String::as_str).collect());
    assert_eq!(second.similar.len(), 2);
    let first = s.chunk_links(&d3[..1]).unwrap();
    assert_eq!((first.chunks.len(), first.similar.len()), (2, 3));
    assert!(first.entities.is_empty() && first.mentions.is_empty() && first.relations.is_empty());
}

/// What a viewer reads on a large index: degrees of some entities and a document's chunk
/// rows, equal to those of the whole graph.
fn viewer_contract<S: StoreWrite>(s: &S, whole: &GraphData) {
    let ids = |names: &[&str]| names.iter().map(|n| entity_id(n)).collect::<Vec<_>>();
    let mut every: Vec<String> = whole.entities.iter().map(|e| e.id.clone()).rev().collect();
    every.push("ent_missing".into());
    for asked in [every, ids(&["Gamma", "Alpha", "Gamma"]), vec!["ent_missing".into()], vec![]] {
        assert_eq!(s.entity_degrees(&asked).unwrap(), whole.degrees(&asked), "degrees of {asked:?}");
    }
    // By hand: Gamma's loop counts once.
    let d = s.entity_degrees(&ids(&["Gamma", "Zeta", "Alpha"])).unwrap();
    let degree = |name: &str| d.iter().find(|x| x.0 == entity_id(name)).map(|x| x.1);
    assert_eq!((degree("Gamma"), degree("Zeta"), degree("Alpha")), (Some(2), Some(1), Some(3)));
    let docs: std::collections::BTreeSet<&str> = whole.chunks.iter().map(|c| c.doc_id.as_str()).collect();
    assert!(docs.len() >= 2);
    for doc in docs.into_iter().chain(["doc_missing"]) {
        let rows: Vec<ChunkRow> = whole.chunks.iter().filter(|c| c.doc_id == doc).cloned().collect();
        assert_eq!(s.document_chunk_rows(doc).unwrap(), rows, "chunks of {doc}");
    }
    let first = &whole.chunks.iter().find(|c| c.id == whole.mentions[0].1).unwrap().doc_id;
    assert_eq!(s.document_chunk_rows(first).unwrap().len(), 2);
}

fn walk_contract<S: StoreWrite>(s: &S, whole: &GraphData) {
    let ids = |names: &[&str]| names.iter().map(|n| entity_id(n)).collect::<Vec<_>>();
    let chunk = |i: usize| whole.chunks[i].id.clone();
    for (entities, chunks) in [
        (ids(&["Alpha"]), vec![]),
        (ids(&["Gamma", "Beta"]), vec![chunk(0)]),
        (ids(&["Zeta", "Alpha", "Epsilon"]), vec![chunk(1), chunk(2), "chunk_missing".into()]),
        (vec![], vec![chunk(2)]),
        (ids(&["Delta", "Delta", "Alpha", "Beta"]), vec![chunk(0), chunk(0)]),
        (vec![], vec![]),
    ] {
        for among in [false, true] {
            assert_eq!(
                s.walk_edges(&entities, &chunks, among).unwrap(),
                whole.walk_edges(&entities, &chunks, among),
                "walk edges of {entities:?} {chunks:?} among {among}"
            );
        }
    }
    // By hand: Alpha's relations (to Beta, Delta and Epsilon), its synonym edge, its
    // mentions in two chunks; among Alpha and Delta only their one relation and no synonym.
    let alpha = s.walk_edges(&ids(&["Alpha"]), &[], false).unwrap();
    assert_eq!((alpha.relations.len(), alpha.synonyms.len(), alpha.mentions.len()), (3, 1, 2));
    let among = s.walk_edges(&ids(&["Alpha", "Delta"]), &[chunk(0), chunk(1), chunk(2)], true).unwrap();
    assert_eq!((among.relations.len(), among.synonyms.len()), (1, 0));
    assert!(among.entities.is_empty() && among.chunks.is_empty() && among.facts.is_empty());

    let all: Vec<String> = whole.chunks.iter().map(|c| c.id.clone()).chain(["chunk_missing".into()]).collect();
    let titles = s.chunk_titles(&all).unwrap();
    assert_eq!(titles.len(), whole.chunks.len());
    for (c, t) in &titles {
        let doc = &whole.chunks.iter().find(|x| &x.id == c).unwrap().doc_id;
        let expected = s.chunks(std::slice::from_ref(c)).unwrap()[0].doc_title.clone();
        assert_eq!(t, &expected, "the title of {doc}");
    }
    let facts: Vec<String> = whole.facts.iter().map(|f| f.id.clone()).rev().chain(["fact_missing".into()]).collect();
    assert_eq!(s.fact_rows(&facts).unwrap(), whole.facts);
    let one: Vec<FactRow> = whole.facts.iter().filter(|f| f.id == facts[0]).cloned().collect();
    assert!(!one.is_empty());
    assert_eq!(s.fact_rows(&facts[..1]).unwrap(), one);
}

/// `scope_graph` equals the whole graph cut to the documents, for what they support and
/// for support naming rows of other documents too.
fn scope_contract<S: StoreWrite>(s: &S, whole: &GraphData) {
    let mut docs: Vec<String> = whole.chunks.iter().map(|c| c.doc_id.clone()).collect();
    docs.sort();
    docs.dedup();
    assert!(docs.len() >= 2);
    let everything = DocSupport::new(
        whole.entities.iter().map(|e| e.id.clone()).collect(),
        whole.relations.iter().map(|r| r.id.clone()).collect(),
        whole.facts.iter().map(|f| f.id.clone()).collect(),
    );
    for asked in [vec![docs[0].clone()], vec![docs[1].clone()], docs.clone(), vec!["doc_missing".into()]] {
        let own = s.supported_by(&asked).unwrap();
        for support in [&own, &everything] {
            let got = s.scope_graph(&asked, support).unwrap();
            assert_eq!(got, whole.scoped(&asked, support), "scope of {asked:?}");
        }
    }
    let mentioned = &whole.chunks.iter().find(|c| c.id == whole.mentions[0].1).unwrap().doc_id;
    let one = s.scope_graph(std::slice::from_ref(mentioned), &everything).unwrap();
    assert!(!one.chunks.is_empty() && !one.mentions.is_empty() && !one.relations.is_empty(), "{one:?}");
    assert!(one.chunks.len() < whole.chunks.len());
    assert_eq!(s.scope_graph(&docs, &everything).unwrap(), *whole, "every document: the whole graph");
}
