//! Reading the GraphRAG fixtures of ../shared/data/graphrag_fixtures.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rhizome_core::ids::{entity_id, relation_id};

use super::*;

fn fixture(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/graphrag_fixtures").join(name);
    assert!(p.is_dir(), "GraphRAG fixture missing at {}: clone beside ../shared", p.display());
    p
}

/// Relation id -> summed weight, entity names, as the resolver would see them.
fn graph_of(gi: &GraphragImport) -> (BTreeMap<String, f64>, HashSet<String>) {
    let mut weights = BTreeMap::new();
    let mut names = HashSet::new();
    for p in &gi.imported.items {
        for ex in p.extractions.iter().chain(std::iter::once(&p.doc_extraction)) {
            for e in &ex.entities {
                names.insert(e.name.clone());
            }
            for r in &ex.relations {
                let id = relation_id(&entity_id(&r.source), &r.rel_type, &entity_id(&r.target));
                *weights.entry(id).or_insert(0.0) += r.weight as f64;
                names.insert(r.source.clone());
                names.insert(r.target.clone());
            }
        }
    }
    (weights, names)
}

#[test]
fn operation_dulce_maps_every_table() {
    let gi = read(&fixture("operation_dulce")).unwrap();
    let c = &gi.counts;
    assert_eq!((c.documents, c.text_units, c.entities, c.relationships), (1, 5, 39, 107));
    assert_eq!((c.communities, c.community_reports, c.covariates), (10, 10, 41));
    // ELEVATOR and CONCRETE HALLWAY appear only as relationship endpoints.
    assert_eq!(c.endpoint_entities_added, 2, "{:?}", gi.imported.dropped);
    assert!(gi.imported.dropped.iter().any(|w| w.contains("CONCRETE HALLWAY, ELEVATOR")));

    let doc = &gi.imported.items[0];
    assert_eq!(doc.doc.title, "dulce.txt");
    assert!(doc.doc.source.ends_with("documents.parquet#1"), "{}", doc.doc.source);
    assert_eq!(doc.chunks.len(), 5);
    // Units in text order (the document's own text_unit_ids list is not).
    assert!(doc.chunks[0].text.starts_with("# Operation: Dulce"));
    assert!(doc.chunks.iter().enumerate().all(|(i, ch)| ch.ordinal == i as u32 && ch.tokens > 0));
    assert_eq!(doc.extractions.len(), 5);
    assert!(doc.doc_extraction.entities.is_empty() && doc.doc_extraction.relations.is_empty());
    assert!(doc.extractions.iter().all(|e| e.facts.is_empty()));

    let (weights, names) = graph_of(&gi);
    assert_eq!(weights.len(), 107);
    assert_eq!(names.len(), 41);
    // Weight spread over chunks sums to GraphRAG's: 21 is the fixture's largest.
    let max = weights.values().cloned().fold(0.0, f64::max);
    assert!((max - 21.0).abs() < 1e-4, "max weight {max}");
    // A chunk's endpoints keep their GraphRAG type.
    let typed: HashMap<&str, &str> =
        doc.extractions.iter().flat_map(|e| &e.entities).map(|e| (e.name.as_str(), e.entity_type.as_str())).collect();
    assert_eq!(typed.get("PARANORMAL MILITARY SQUAD"), Some(&"ORGANIZATION"));

    let ids: HashSet<&str> = gi.communities.iter().map(|c| c.id.as_str()).collect();
    let root = gi.communities.iter().find(|c| c.id == "com_gr_0").unwrap();
    assert_eq!((root.level, root.parent.as_deref()), (0, None));
    assert_eq!(root.children, vec!["com_gr_7", "com_gr_8", "com_gr_9"]);
    let leaf = gi.communities.iter().find(|c| c.id == "com_gr_7").unwrap();
    assert_eq!((leaf.level, leaf.parent.as_deref()), (1, Some("com_gr_0")));
    for c in &gi.communities {
        assert!(!c.entity_ids.is_empty() && c.entity_ids.windows(2).all(|w| w[0] < w[1]), "{c:?}");
        assert!(c.entity_ids.iter().all(|e| names.iter().any(|n| entity_id(n) == *e)));
    }
    for r in &gi.reports {
        assert!(ids.contains(r.community_id.as_str()));
        let c = gi.communities.iter().find(|c| c.id == r.community_id).unwrap();
        assert_eq!(r.fingerprint, c.fingerprint);
        assert_eq!(r.kind, rhizome_core::ReportKind::Imported);
        assert!(!r.findings.is_empty() && r.rating > 0.0 && !r.summary.is_empty());
    }

    let chunk_ids: HashSet<&str> = doc.chunks.iter().map(|c| c.id.as_str()).collect();
    assert!(gi
        .covariates
        .iter()
        .all(|c| c.doc_id == doc.doc.id && c.chunk_id.as_deref().is_some_and(|k| chunk_ids.contains(k))));
    let first = gi.covariates.iter().find(|c| c.covariate.id == "4c6e019b-29c5-456c-951c-0cd3df308634").unwrap();
    assert_eq!(first.covariate.subject_id, entity_id("PARANORMAL MILITARY SQUAD"));
    assert_eq!(first.covariate.object_id, None);
    assert_eq!((first.covariate.claim_type.as_str(), first.covariate.status.as_str()), ("MISSION PREPARATION", "TRUE"));
}

#[test]
fn larger_fixture_reads() {
    let gi = read(&fixture("tests_verbs_data")).unwrap();
    let c = &gi.counts;
    assert_eq!((c.documents, c.text_units, c.entities, c.relationships), (1, 42, 529, 978));
    // No communities.parquet-less reports here: all 122 have their community.
    assert_eq!((c.communities, c.community_reports, c.covariates), (122, 122, 406));
    let (weights, _) = graph_of(&gi);
    assert_eq!(weights.len(), 978);
    let levels: HashSet<u32> = gi.communities.iter().map(|c| c.level).collect();
    assert!(levels.len() > 2, "a deep hierarchy: {levels:?}");
    for c in gi.communities.iter().filter(|c| c.parent.is_some()) {
        let parent = gi.communities.iter().find(|p| Some(&p.id) == c.parent.as_ref()).unwrap();
        assert!(parent.children.contains(&c.id) && parent.level + 1 == c.level);
    }
}

#[test]
fn missing_or_malformed_tables_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("operation_dulce");
    for f in ["documents", "text_units", "relationships"] {
        std::fs::copy(src.join(format!("{f}.parquet")), tmp.path().join(format!("{f}.parquet"))).unwrap();
    }
    let err = read(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("entities.parquet") && err.contains("no such file"), "{err}");

    std::fs::write(tmp.path().join("entities.parquet"), "id,title\n1,A\n").unwrap();
    let err = read(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("entities.parquet") && err.contains("not a readable parquet file"), "{err}");

    // Another table under the entities' name: the missing column is named.
    std::fs::copy(src.join("covariates.parquet"), tmp.path().join("entities.parquet")).unwrap();
    let err = read(tmp.path()).unwrap_err().to_string();
    assert!(
        err.contains("entities.parquet")
            && err.contains("missing column `title` (or `name`)")
            && err.contains("entity name"),
        "{err}"
    );

    // Older file names are found.
    std::fs::remove_file(tmp.path().join("entities.parquet")).unwrap();
    std::fs::copy(src.join("entities.parquet"), tmp.path().join("create_final_entities.parquet")).unwrap();
    let gi = read(tmp.path()).unwrap();
    assert_eq!(gi.counts.entities, 39);
    assert!(gi.communities.is_empty() && gi.covariates.is_empty());
}

/// A GraphRAG 1.x folder (`create_final_*` tables, complete) that also holds a stray
/// `documents.parquet` of another shape is read as 1.x, with a warning naming the stray.
#[test]
fn complete_v1_folder_with_a_stray_v2_file_is_read_as_v1() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("operation_dulce");
    for f in ["documents", "text_units", "entities", "relationships", "communities", "community_reports"] {
        std::fs::copy(src.join(format!("{f}.parquet")), tmp.path().join(format!("create_final_{f}.parquet"))).unwrap();
    }
    // A stray table without `text` under the 2.x documents name.
    std::fs::copy(src.join("entities.parquet"), tmp.path().join("documents.parquet")).unwrap();
    let gi = read(tmp.path()).unwrap();
    assert_eq!((gi.counts.documents, gi.counts.entities, gi.counts.relationships), (1, 39, 107));
    assert!(
        gi.imported.dropped.iter().any(|w| w.contains("GraphRAG 1.x") && w.contains("documents.parquet")),
        "{:?}",
        gi.imported.dropped
    );
}
