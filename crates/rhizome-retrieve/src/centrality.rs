//! An entity's centrality in the RELATED graph, and the importance shown for an entity:
//! what its support says (the extractor's judgement, or how often and in how many
//! documents it is mentioned, stored with the entity) blended with where it sits in the
//! graph.
//!
//! Centrality is a property of the whole graph: one new relation anywhere changes every
//! entity's value a little. So it is never stored; it is computed from the graph a
//! process holds (once per graph version, on first use), and an index after a deletion
//! gives the same values as one where the document was never indexed.

use crate::ppr::{personalized_pagerank, Csr};
use crate::Graph;

/// The walk's probability of following an edge (PageRank's usual 0.85).
const DAMPING: f64 = 0.85;
/// How much of the shown importance comes from centrality; the rest is the support's.
pub const CENTRALITY_SHARE: f32 = 1.0 / 3.0;

/// Each entity's centrality, 0..1: its PageRank over the RELATED edges (weighted by
/// relation weight, uniform restart) as a multiple `x` of the average entity's, squashed
/// to `x / (x + 1)`. An average entity gets 0.5, a hub ten times as central 0.91, a
/// leaf at a fifth of the average 0.17. An entity without relations keeps only the
/// restart mass and sits low; an empty graph gives an empty list.
pub fn centrality(g: &Graph) -> Vec<f32> {
    let n = g.entity_ids.len();
    if n == 0 {
        return Vec::new();
    }
    let csr = Csr::from_edges(n, g.relations.iter().map(|r| (r.source, r.target, r.weight.max(f32::MIN_POSITIVE))));
    let pr = personalized_pagerank(&csr, &vec![1.0; n], DAMPING, 1e-7, 100);
    pr.scores
        .iter()
        .map(|&p| {
            let x = (p * n as f64).max(0.0) as f32;
            x / (x + 1.0)
        })
        .collect()
}

/// The importance shown for an entity: its support's importance blended with its
/// centrality (`CENTRALITY_SHARE` of it), or the centrality alone when the support gives
/// none (imported entities). None when neither is known.
pub fn blended_importance(support: Option<f32>, centrality: Option<f32>) -> Option<f32> {
    match (support, centrality) {
        (Some(s), Some(c)) => Some(((1.0 - CENTRALITY_SHARE) * s + CENTRALITY_SHARE * c).clamp(0.0, 1.0)),
        (s, c) => s.or(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhizome_core::{EntityRow, GraphData, RelationRow};

    fn star(leaves: usize) -> Graph {
        let mut data = GraphData::default();
        for i in 0..=leaves {
            data.entities.push(EntityRow { id: format!("e{i}"), name: format!("E{i}"), entity_type: "THING".into() });
        }
        for i in 1..=leaves {
            data.relations.push(RelationRow {
                id: format!("r{i}"),
                source_id: "e0".into(),
                target_id: format!("e{i}"),
                rel_type: "RELATED".into(),
                weight: 1.0,
            });
        }
        Graph::build(data)
    }

    #[test]
    fn the_hub_of_a_star_is_most_central_and_leaves_are_equal() {
        let g = star(8);
        let c = centrality(&g);
        assert_eq!(c.len(), 9);
        assert!(c[0] > 0.75, "hub {}", c[0]);
        for &leaf in &c[1..] {
            assert!((leaf - c[1]).abs() < 1e-5);
            assert!(leaf < 0.5 && leaf > 0.0, "leaf {leaf}");
        }
        assert!(centrality(&Graph::default()).is_empty());
    }

    #[test]
    fn importance_blends_support_with_centrality() {
        assert_eq!(blended_importance(None, None), None);
        assert_eq!(blended_importance(Some(0.3), None), Some(0.3));
        assert_eq!(blended_importance(None, Some(0.6)), Some(0.6));
        let b = blended_importance(Some(0.3), Some(0.9)).unwrap();
        assert!((b - 0.5).abs() < 1e-6, "{b}");
    }
}
