//! Communities read one at a time: the one asked for, as stored, and nothing for an id
//! the index does not hold (never stored, or gone with a recomputation); which of some
//! ids are leaves.

use std::path::Path;

use rhizome_core::*;

use super::batch;

fn community(id: &str, level: u32, members: &[String]) -> Community {
    Community {
        id: id.into(),
        level,
        parent: None,
        children: vec![],
        title: format!("community {id}"),
        entity_ids: members.to_vec(),
        fingerprint: format!("fp {id}"),
    }
}

/// `community(id)` is the stored community of that id, whatever else is stored.
pub fn community_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(&tmp.path().join("community"));
    s.set_embedding_model("m", 3).unwrap();
    s.write_batch(&batch("alpha", &["Aage Bohr met Ben Mottelson"], &["Aage Bohr", "Ben Mottelson"])).unwrap();
    let ids = vec![ids::entity_id("Aage Bohr"), ids::entity_id("Ben Mottelson")];
    assert_eq!(s.community("com_a").unwrap(), None, "no community before any is stored");
    let v = s.graph_version().unwrap();
    let (a, mut b) = (community("com_a", 1, &ids), community("com_b", 0, &ids[..1]));
    b.children = vec!["com_a".into()];
    s.replace_communities(&[b.clone(), a.clone()], v).unwrap();
    let asked: Vec<String> = ["com_missing", "com_b", "com_a", ""].map(String::from).into();
    assert_eq!(s.leaf_communities(&asked).unwrap(), ["com_a"], "the leaves asked for, and nothing else");
    assert!(s.leaf_communities(&[]).unwrap().is_empty());
    assert_eq!(s.community("com_a").unwrap(), Some(a.clone()));
    assert_eq!(s.community("com_b").unwrap(), Some(b));
    assert_eq!(s.community("com_missing").unwrap(), None);
    assert_eq!(s.community("").unwrap(), None);
    // Replaced as a set: the one left out is gone.
    s.replace_communities(std::slice::from_ref(&a), v).unwrap();
    assert_eq!(s.community("com_b").unwrap(), None);
    assert_eq!(s.community("com_a").unwrap(), Some(a));
}
