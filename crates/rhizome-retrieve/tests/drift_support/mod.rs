//! The index the DRIFT tests search: five one-chunk documents about the Curies, their
//! entities and relations, and (optionally) five community reports. `replies` is the
//! loopback LLM's side: which prompt a request is, and well-behaved answers to each.

pub mod replies;

use rhizome_core::embed::WordHashEmbedder as WordEmbedder;
use rhizome_core::ids::{chunk_id, document_id, entity_id, normalize_name, relation_id};
use rhizome_core::text::count_tokens;
use rhizome_core::*;
use rhizome_store::SqliteStore;

/// (document, chunk text, entities, relations (source, type, target)).
type Doc = (&'static str, &'static str, Vec<&'static str>, Vec<(&'static str, &'static str, &'static str)>);

fn docs() -> Vec<Doc> {
    vec![
        (
            "curie",
            "Marie Curie worked with Pierre Curie in Paris.",
            vec!["Marie Curie", "Pierre Curie", "Paris"],
            vec![("Marie Curie", "MARRIED", "Pierre Curie"), ("Marie Curie", "LIVED_IN", "Paris")],
        ),
        (
            "radium",
            "Marie Curie discovered radium and polonium in 1898.",
            vec!["Marie Curie", "Radium", "Polonium"],
            vec![("Marie Curie", "DISCOVERED", "Radium"), ("Marie Curie", "DISCOVERED", "Polonium")],
        ),
        (
            "sorbonne",
            "Pierre Curie taught at the Sorbonne in Paris.",
            vec!["Pierre Curie", "Sorbonne", "Paris"],
            vec![("Pierre Curie", "TAUGHT_AT", "Sorbonne"), ("Sorbonne", "LOCATED_IN", "Paris")],
        ),
        (
            "nobel",
            "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
            vec!["Marie Curie", "Nobel Prize"],
            vec![("Marie Curie", "WON", "Nobel Prize")],
        ),
        ("france", "Paris is the capital of France.", vec!["Paris", "France"], vec![("Paris", "CAPITAL_OF", "France")]),
    ]
}

/// (title, summary, rating).
pub const REPORTS: [(&str, &str, f32); 5] = [
    ("Curie family research", "Marie Curie and Pierre Curie did their research together in Paris.", 7.0),
    ("Radioactive elements", "Radium and polonium were discovered by Marie Curie.", 8.0),
    ("Sorbonne teaching", "Pierre Curie taught at the Sorbonne.", 4.0),
    ("Nobel Prizes", "Marie Curie won two Nobel Prizes, in physics and in chemistry.", 9.5),
    ("Paris and France", "Paris, the capital of France, is where the Curies lived.", 3.0),
];

pub fn store(dir: &std::path::Path, with_reports: bool) -> SqliteStore {
    let emb = WordEmbedder;
    let mut s = SqliteStore::open(dir, true).unwrap();
    s.set_embedding_model(emb.model_id(), emb.dim()).unwrap();
    for (title, text, ents, rels) in docs() {
        let doc = Document {
            id: document_id(title, text),
            source: format!("{title}.txt"),
            title: title.into(),
            text: text.into(),
            pages: None,
            meta: Default::default(),
        };
        let c = Chunk {
            id: chunk_id(&doc.id, 0, text),
            doc_id: doc.id.clone(),
            ordinal: 0,
            text: text.into(),
            tokens: count_tokens(text) as u32,
            start: 0,
            end: 0,
            pages: None,
        };
        let mut b = WriteBatch::default();
        for e in ents {
            b.mentions.push(MentionRecord {
                entity_id: entity_id(e),
                name: e.into(),
                entity_type: "ENTITY".into(),
                description: format!("{e} appears in {title}"),
                doc_id: doc.id.clone(),
                chunk_id: Some(c.id.clone()),
                count: 1,
                importance: None,
            });
            let v = emb.embed(&[normalize_name(e)], EmbedKind::Passage).unwrap().remove(0);
            b.vectors.push((VectorKind::Entity, entity_id(e), v));
        }
        for (a, r, t) in rels {
            let (si, oi) = (entity_id(a), entity_id(t));
            b.relations.push(RelationRecord {
                relation: Relation {
                    id: relation_id(&si, r, &oi),
                    source_id: si,
                    target_id: oi,
                    rel_type: r.into(),
                    description: format!("{a} {r} {t}"),
                    weight: 1.0,
                },
                doc_id: doc.id.clone(),
                chunk_id: Some(c.id.clone()),
            });
        }
        b.chunks.push(c);
        b.documents.push(doc);
        s.write_batch(&b).unwrap();
    }
    if with_reports {
        let (mut communities, mut reports, mut vectors) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (title, summary, rating)) in REPORTS.iter().enumerate() {
            let id = format!("com_{i}");
            communities.push(Community {
                id: id.clone(),
                level: 0,
                parent: None,
                children: vec![],
                title: title.to_string(),
                entity_ids: vec![],
                fingerprint: format!("fp{i}"),
            });
            let r = CommunityReport {
                community_id: id.clone(),
                level: 0,
                title: title.to_string(),
                summary: summary.to_string(),
                findings: vec![Finding { summary: format!("About {title}"), explanation: summary.to_string() }],
                rating: *rating,
                rating_explanation: String::new(),
                fingerprint: format!("fp{i}"),
                kind: ReportKind::Extractive,
            };
            vectors.push((id, emb.embed(&[r.text()], EmbedKind::Passage).unwrap().remove(0)));
            reports.push(r);
        }
        let version = s.graph_version().unwrap();
        s.replace_communities(&communities, version).unwrap();
        s.put_reports(&reports, &vectors).unwrap();
    }
    s
}
