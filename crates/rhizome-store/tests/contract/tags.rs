//! The document index a filter reads (type, hashtags, language, date; names by prefix)
//! and the support rows a scope aggregates again: written with documents and their
//! metadata, gone with them.

use rhizome_core::ids::entity_id;
use rhizome_core::*;

use super::{batch, unnamed};

fn meta(ty: &str, tags: &[&str], created: Option<&str>, modified: Option<&str>) -> DocumentMeta {
    DocumentMeta {
        doc_type: Some(ty.into()),
        hashtags: tags.iter().map(|t| t.to_string()).collect(),
        created: created.map(str::to_string),
        modified: modified.map(str::to_string),
        media_type: Some("text/plain".into()),
        ..Default::default()
    }
}

pub fn document_index_contract<S: StoreWrite>(mut s: S) {
    s.set_embedding_model("test", 3).unwrap();
    let mut a = batch("alpha", &["Ada met Babbage at the bridge"], &["Ada", "Babbage"]);
    a.documents[0].meta = meta("Report", &["Bridge", "Ferry"], Some("2024-03-01T10:00:00Z"), None);
    let mut b = batch("beta", &["Ada met Babbage at the ferry"], &["Ada", "Babbage"]);
    b.documents[0].meta = meta("contract", &["bridge"], None, Some("2023-05-02"));
    b.covariates.push(CovariateRecord {
        covariate: Covariate {
            id: "clm_beta".into(),
            covariate_type: "claim".into(),
            claim_type: "TRAVEL".into(),
            subject_id: entity_id("Ada"),
            object_id: None,
            status: "TRUE".into(),
            start_date: String::new(),
            end_date: String::new(),
            description: "Ada took the ferry".into(),
            source_text: "Ada met Babbage at the ferry".into(),
        },
        doc_id: b.documents[0].id.clone(),
        chunk_id: Some(b.chunks[0].id.clone()),
    });
    let c = batch("gamma", &["Babbage built an engine"], &["Babbage"]);
    for x in [&a, &b, &c] {
        s.write_batch(x).unwrap();
    }
    let (da, db, dc) = (a.documents[0].id.clone(), b.documents[0].id.clone(), c.documents[0].id.clone());
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let exact = |s: &S, k: &str, v: &str| {
        let (from, to) = filter::exact_range(v);
        s.tagged_documents(k, &from, Some(&to)).unwrap()
    };
    assert_eq!(exact(&s, "type", "report"), vec![da.clone()], "types are kept lowercased");
    assert_eq!(exact(&s, "tag", "bridge"), sorted(vec![da.clone(), db.clone()]));
    assert_eq!(exact(&s, "tag", "ferry"), vec![da.clone()]);
    assert_eq!(exact(&s, "media", "text/plain"), sorted(vec![da.clone(), db.clone()]));
    let lang = |x: &WriteBatch| rhizome_core::lang::detect_language(&x.documents[0].text).code();
    assert!(exact(&s, "lang", lang(&a)).contains(&da) && exact(&s, "lang", lang(&c)).contains(&dc));
    // Dates: created, else modified, else the day it was indexed (today).
    assert_eq!(s.tagged_documents("date", "2024-01-01", Some("2025-01-01")).unwrap(), vec![da.clone()]);
    assert_eq!(s.tagged_documents("date", "", Some("2024-01-01")).unwrap(), vec![db.clone()]);
    assert_eq!(s.tagged_documents("date", "2025-01-01", None).unwrap(), vec![dc.clone()]);
    assert!(exact(&s, "type", "repor").is_empty() && exact(&s, "tag", "bridges").is_empty());
    // Names by prefix: sources alone.
    let names = |s: &S, p: &str| {
        let mut n = s.document_names(p).unwrap();
        n.sort();
        n
    };
    assert_eq!(names(&s, "al"), vec![(da.clone(), "alpha.txt".to_string())]);
    assert_eq!(names(&s, "").len(), 3);
    assert!(names(&s, "zeta").is_empty());
    // Metadata written again moves the rows.
    s.set_document_meta(&[
        (dc.clone(), meta("manual", &["Engine"], None, None)),
        (da.clone(), DocumentMeta::default()),
    ])
    .unwrap();
    assert_eq!(exact(&s, "type", "manual"), vec![dc.clone()]);
    assert!(exact(&s, "type", "report").is_empty());
    assert_eq!(exact(&s, "tag", "bridge"), vec![db.clone()]);
    assert!(exact(&s, "lang", lang(&c)).contains(&dc), "the language stays");
    // Support rows of an entity and a relation both documents state, by document.
    let rel = a.relations[0].relation.id.clone();
    let (m, r) = s.support_rows(&[entity_id("Ada")], std::slice::from_ref(&rel)).unwrap();
    assert_eq!(sorted(m.iter().map(|x| x.doc_id.clone()).collect()), sorted(vec![da.clone(), db.clone()]));
    assert!(m.iter().any(|x| x.description == "Ada in beta"));
    let mut wording: Vec<(String, String)> =
        r.iter().map(|x| (x.doc_id.clone(), x.relation.description.clone())).collect();
    wording.sort();
    assert_eq!(wording, sorted_pairs(vec![(da.clone(), "alpha".into()), (db.clone(), "beta".into())]));
    // Claims are read by the document stating them.
    assert_eq!(s.supported_by(std::slice::from_ref(&db)).unwrap().claims, vec!["clm_beta".to_string()]);
    assert!(s.supported_by(std::slice::from_ref(&da)).unwrap().claims.is_empty());
    // A deleted document leaves the index and the support rows.
    s.delete_document(&db, &mut unnamed).unwrap();
    assert!(exact(&s, "tag", "bridge").is_empty() && exact(&s, "type", "contract").is_empty());
    assert!(!exact(&s, "lang", lang(&b)).contains(&db));
    assert!(names(&s, "beta").is_empty());
    let (m, r) = s.support_rows(&[entity_id("Ada")], &[rel]).unwrap();
    assert!(m.iter().all(|x| x.doc_id == da) && m.len() == 1, "{m:?}");
    assert!(r.iter().all(|x| x.doc_id == da) && r.len() == 1, "{r:?}");
}

fn sorted_pairs(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort();
    v
}
