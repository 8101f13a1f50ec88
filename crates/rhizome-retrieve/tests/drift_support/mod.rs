//! The index the DRIFT tests search: five one-chunk documents about the Curies, their
//! entities and relations, and (optionally) five community reports. `replies` is the
//! loopback LLM's side: which prompt a request is, and well-behaved answers to each.

pub mod replies;

use rhizome_core::embed::WordHashEmbedder as WordEmbedder;
use rhizome_core::*;
use rhizome_store::SqliteStore;

use crate::common::{self, GraphChunk};

/// (document, its one chunk).
type Doc = (&'static str, GraphChunk);

fn docs() -> Vec<Doc> {
    vec![
        (
            "curie",
            (
                "Marie Curie worked with Pierre Curie in Paris.",
                vec!["Marie Curie", "Pierre Curie", "Paris"],
                vec![("Marie Curie", "MARRIED", "Pierre Curie"), ("Marie Curie", "LIVED_IN", "Paris")],
            ),
        ),
        (
            "radium",
            (
                "Marie Curie discovered radium and polonium in 1898.",
                vec!["Marie Curie", "Radium", "Polonium"],
                vec![("Marie Curie", "DISCOVERED", "Radium"), ("Marie Curie", "DISCOVERED", "Polonium")],
            ),
        ),
        (
            "sorbonne",
            (
                "Pierre Curie taught at the Sorbonne in Paris.",
                vec!["Pierre Curie", "Sorbonne", "Paris"],
                vec![("Pierre Curie", "TAUGHT_AT", "Sorbonne"), ("Sorbonne", "LOCATED_IN", "Paris")],
            ),
        ),
        (
            "nobel",
            (
                "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
                vec!["Marie Curie", "Nobel Prize"],
                vec![("Marie Curie", "WON", "Nobel Prize")],
            ),
        ),
        (
            "france",
            ("Paris is the capital of France.", vec!["Paris", "France"], vec![("Paris", "CAPITAL_OF", "France")]),
        ),
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
    let mut s = common::open_store(dir, &emb);
    for (title, chunk) in docs() {
        let b = common::graph_document(&emb, title, &[chunk], |a, r, t| format!("{a} {r} {t}"));
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
