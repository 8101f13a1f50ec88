//! Other names of a document: the same content under another name is one document with
//! two names.

use std::path::Path;

use rhizome_core::ids::text_digest;
use rhizome_core::*;

use super::batch;

fn alias(doc_id: &str, source: &str) -> WriteBatch {
    WriteBatch { aliases: vec![(doc_id.to_string(), source.to_string())], ..Default::default() }
}

/// Aliases are found, listed, searched, copied, moved by a document that takes the name,
/// and deleted with their document; the digest finds complete documents only.
pub fn aliases_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(&tmp.path().join("aliases"));
    s.set_embedding_model("m", 3).unwrap();
    let a = batch("alpha", &["Alpha text one", "Alpha text two"], &["Alpha"]);
    let b = batch("beta", &["Beta text"], &["Beta"]);
    s.write_batch(&a).unwrap();
    s.write_batch(&b).unwrap();
    let (da, db) = (&a.documents[0], &b.documents[0]);
    assert_eq!(s.document_with_digest(&text_digest(&da.text)).unwrap().as_deref(), Some(da.id.as_str()));
    assert_eq!(s.document_with_digest(&text_digest("no such text")).unwrap(), None);
    assert_eq!(s.document_sources(&da.id).unwrap(), vec!["alpha.txt".to_string()]);
    assert!(s.document_sources("doc_missing").unwrap().is_empty());

    // Two more names for alpha; one for a document that is not stored, one that is
    // alpha's own source: neither is written.
    s.write_batch(&alias(&da.id, "copy of alpha.txt")).unwrap();
    s.write_batch(&WriteBatch {
        aliases: vec![
            (da.id.clone(), "alpha (2).txt".into()),
            ("doc_missing".into(), "ghost.txt".into()),
            (da.id.clone(), "alpha.txt".into()),
        ],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(s.document_sources(&da.id).unwrap(), ["alpha.txt", "copy of alpha.txt", "alpha (2).txt"]);
    assert_eq!(s.find_document("alpha (2).txt").unwrap().map(|d| d.id), Some(da.id.clone()));
    assert_eq!(s.find_document("ghost.txt").unwrap(), None);
    let listed = s.documents(None, 0, 10).unwrap();
    let la = listed.iter().find(|d| d.id == da.id).unwrap();
    assert_eq!(la.aliases, ["copy of alpha.txt", "alpha (2).txt"]);
    assert!(listed.iter().find(|d| d.id == db.id).unwrap().aliases.is_empty());
    let found = s.documents(Some("COPY OF"), 0, 10).unwrap();
    assert_eq!(found.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), [da.id.as_str()], "search finds aliases");
    assert_eq!(s.document_count(Some("copy of")).unwrap(), 1);

    // Copying keeps the names in order.
    let copied = s.document_batch(&da.id).unwrap().unwrap();
    assert_eq!(
        copied.aliases,
        [(da.id.clone(), "copy of alpha.txt".to_string()), (da.id.clone(), "alpha (2).txt".to_string())]
    );
    let mut c = open(&tmp.path().join("copy"));
    c.set_embedding_model("m", 3).unwrap();
    c.write_batch(&copied).unwrap();
    assert_eq!(c.document_sources(&da.id).unwrap(), s.document_sources(&da.id).unwrap());

    // A name is one document's: an alias moves it, and a document written under it takes it.
    s.write_batch(&alias(&db.id, "copy of alpha.txt")).unwrap();
    assert_eq!(s.document_sources(&da.id).unwrap(), ["alpha.txt", "alpha (2).txt"]);
    assert_eq!(s.document_sources(&db.id).unwrap(), ["beta.txt", "copy of alpha.txt"]);
    let mut g = batch("gamma", &["Gamma text"], &["Gamma"]);
    g.documents[0].source = "alpha (2).txt".into();
    s.write_batch(&g).unwrap();
    let dg = &g.documents[0];
    assert_eq!(s.document_sources(&da.id).unwrap(), ["alpha.txt"]);
    assert_eq!(s.find_document("alpha (2).txt").unwrap().map(|d| d.id), Some(dg.id.clone()));

    // Deleting a document deletes its names.
    s.delete_document(&db.id, &mut |_: &[String]| Ok(Vec::new())).unwrap();
    assert_eq!(s.find_document("copy of alpha.txt").unwrap(), None);
    assert!(s.document_sources(&db.id).unwrap().is_empty());
    s.write_batch(&alias(&da.id, "copy of alpha.txt")).unwrap();
    assert_eq!(s.document_sources(&da.id).unwrap(), ["alpha.txt", "copy of alpha.txt"], "a freed name is free");

    // A rename gives a document another of its names (or a new one) as its source and
    // frees the old; a name that is another document's source is not taken.
    s.write_batch(&WriteBatch {
        renames: vec![
            (da.id.clone(), "copy of alpha.txt".into()),
            ("doc_missing".into(), "ghost.txt".into()),
            (dg.id.clone(), "copy of alpha.txt".into()),
        ],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(s.document_sources(&da.id).unwrap(), ["copy of alpha.txt"]);
    assert_eq!(s.find_document("alpha.txt").unwrap(), None, "the old source is free");
    assert_eq!(s.find_document("copy of alpha.txt").unwrap().map(|d| d.id), Some(da.id.clone()));
    assert_eq!(s.find_document("ghost.txt").unwrap(), None);
    assert_eq!(s.document_sources(&dg.id).unwrap(), ["alpha (2).txt"]);
    s.write_batch(&WriteBatch { renames: vec![(da.id.clone(), "alpha, kept.txt".into())], ..Default::default() })
        .unwrap();
    assert_eq!(s.document_sources(&da.id).unwrap(), ["alpha, kept.txt"], "a name not held before");

    // A document written in parts is not found by its digest until its last part.
    let mut p = batch("partial", &["Partial text"], &["Part"]);
    let dp = p.documents[0].id.clone();
    p.doc_progress.push((dp.clone(), Some(1)));
    s.write_batch(&p).unwrap();
    assert_eq!(s.document_with_digest(&text_digest(&p.documents[0].text)).unwrap(), None);
}
