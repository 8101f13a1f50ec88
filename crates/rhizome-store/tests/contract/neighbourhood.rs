//! `StoreRead::neighbourhood`: the graph around some entities, equal to the whole graph
//! cut around them (`GraphData::around`), with the degrees of their relations' ends.

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
    s.write_batch(&d1).unwrap();
    s.write_batch(&d2).unwrap();
    let (a, f) = (entity_id("Alpha"), entity_id("Zeta"));
    s.set_synonyms(&[(a.clone().min(f.clone()), a.max(f), 0.9)]).unwrap();

    let whole = s.graph_data().unwrap();
    assert_eq!(s.entity_rows().unwrap(), whole.entities);
    assert_eq!(s.entity_count().unwrap(), 6);
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
}
