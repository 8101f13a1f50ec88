//! What is known of a document besides its text: written with it, listed, replaced in
//! one write, copied, and gone with it.

use std::path::Path;

use rhizome_core::*;

use super::batch;

/// Metadata written with a document is read back by every read of the document; a later
/// description replaces it for the ids given only, without changing the graph version.
pub fn meta_contract<S: StoreWrite>(open: &dyn Fn(&Path) -> S) {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = open(&tmp.path().join("meta"));
    s.set_embedding_model("m", 3).unwrap();
    let mut a = batch("alpha", &["Alpha text one", "Alpha text two"], &["Alpha"]);
    let from_file = DocumentMeta {
        media_type: Some("application/pdf".into()),
        size_bytes: Some(12_345),
        author: Some("Nguyễn Văn A".into()),
        created: Some("2024-03-01T09:30:00".into()),
        modified: Some("2024-03-02".into()),
        ..Default::default()
    };
    a.documents[0].meta = from_file.clone();
    a.documents[0].pages = Some(Pagination {
        unit: "page".into(),
        pages: vec![
            PageSpan { number: 1, label: None, start: 0, end: 14 },
            PageSpan { number: 2, label: None, start: 15, end: 29 },
        ],
    });
    let b = batch("beta", &["Beta text"], &["Beta"]);
    s.write_batch(&a).unwrap();
    s.write_batch(&b).unwrap();
    let (da, db) = (&a.documents[0], &b.documents[0]);
    assert_eq!(s.find_document(&da.id).unwrap().unwrap().meta, from_file);
    assert_eq!(s.find_document(&db.id).unwrap().unwrap().meta, DocumentMeta::default());
    // An entity the extractor gave no importance has one from its support: two
    // mentions in one document.
    let alpha = s.entities(&[rhizome_core::ids::entity_id("Alpha")]).unwrap();
    let got = alpha[0].importance.unwrap();
    assert!((got - 0.2681).abs() < 1e-3, "importance of two mentions in one document: {got}");
    let listed = s.documents(None, 0, 10).unwrap();
    let la = listed.iter().find(|d| d.id == da.id).unwrap();
    assert_eq!((la.meta.clone(), la.pages), (from_file.clone(), Some(2)));
    let lb = listed.iter().find(|d| d.id == db.id).unwrap();
    assert_eq!((lb.meta.clone(), lb.pages), (DocumentMeta::default(), None));

    // A description replaces the metadata of the ids given, in one write.
    let version = s.graph_version().unwrap();
    let described = from_file.with_description(&DocumentMeta {
        summary: Some("Alpha, twice.".into()),
        doc_type: Some("report".into()),
        hashtags: vec!["Alpha".into(), "武汉长江大桥".into()],
        described_by: Some("extractive".into()),
        ..Default::default()
    });
    let changed =
        s.set_document_meta(&[(da.id.clone(), described.clone()), ("doc_missing".into(), described.clone())]).unwrap();
    assert_eq!(changed, 1, "an id of no document is passed over");
    assert_eq!(s.find_document(&da.id).unwrap().unwrap().meta, described);
    assert_eq!(s.find_document(&db.id).unwrap().unwrap().meta, DocumentMeta::default());
    assert_eq!(s.documents(None, 0, 10).unwrap().iter().find(|d| d.id == da.id).unwrap().meta, described);
    assert_eq!(s.graph_version().unwrap(), version, "metadata is not the graph");

    // Copied with the document; gone with it.
    let copied = s.document_batch(&da.id).unwrap().unwrap();
    assert_eq!(copied.documents[0].meta, described);
    let mut c = open(&tmp.path().join("copy"));
    c.set_embedding_model("m", 3).unwrap();
    c.write_batch(&copied).unwrap();
    assert_eq!(c.find_document(&da.id).unwrap().unwrap().meta, described);
    s.delete_document(&da.id, &mut |t: &[String]| Ok(t.iter().map(|_| vec![1.0, 0.0, 0.0]).collect())).unwrap();
    assert!(s.find_document(&da.id).unwrap().is_none());
    assert_eq!(s.set_document_meta(&[(da.id.clone(), described)]).unwrap(), 0);
}
