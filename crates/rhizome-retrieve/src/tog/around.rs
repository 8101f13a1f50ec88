//! `tog` without the whole graph: a graph that grows with the beam.
//!
//! Every round reads only the relations of the beam's tail entities, so the graph a
//! round needs is the neighbourhood ([`rhizome_core::StoreRead::neighbourhood`]) of the
//! start entities and of every entity a path has ended on. It is read again, larger,
//! when the beam reaches new tails, and the beam's entity and relation numbers (and the
//! relation texts keyed by them) are carried over by id. Numbers keep the whole graph's
//! order, so ties break as they do over it; every relation a path follows touches an
//! entity read whole, with the chunks that place it ([`crate::paths::relation_chunk`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use rhizome_core::Result;

use super::beam::{Hop, Path};
use crate::graph::Graph;
use crate::QueryEnv;

/// The entities read whole so far, and the graph of their neighbourhood.
pub(super) struct Grown {
    complete: BTreeSet<String>,
    pub reads: usize,
}

impl Grown {
    /// The graph around the start entities `ids` (chosen among the candidates by their
    /// degrees alone, `StoreRead::entity_degrees`).
    pub fn start(env: &QueryEnv, ids: Vec<String>) -> Result<(Grown, Arc<Graph>)> {
        let complete: BTreeSet<String> = ids.into_iter().collect();
        let list: Vec<String> = complete.iter().cloned().collect();
        let g = Arc::new(Graph::from_neighbourhood(env.store.neighbourhood(&list)?));
        Ok((Grown { complete, reads: 1 }, g))
    }

    /// `g` grown to hold every tail of `beam` whole; `beam` and `texts` renumbered.
    pub fn grow(
        &mut self,
        env: &QueryEnv,
        g: Arc<Graph>,
        beam: &mut [Path],
        texts: &mut HashMap<u32, String>,
    ) -> Result<Arc<Graph>> {
        let before = self.complete.len();
        self.complete.extend(beam.iter().map(|p| g.entity_ids[p.tail() as usize].clone()));
        if self.complete.len() == before {
            return Ok(g);
        }
        let list: Vec<String> = self.complete.iter().cloned().collect();
        let next = Graph::from_neighbourhood(env.store.neighbourhood(&list)?);
        self.reads += 1;
        let rels: HashMap<&str, u32> =
            next.relations.iter().enumerate().map(|(i, r)| (r.id.as_str(), i as u32)).collect();
        // Every entity and relation of the beam is in the larger graph: it holds all
        // that the smaller one did (its entities were read whole).
        let entity = |e: u32| next.entity(&g.entity_ids[e as usize]).unwrap_or(u32::MAX);
        let relation = |r: u32| rels.get(g.relations[r as usize].id.as_str()).copied().unwrap_or(u32::MAX);
        for p in beam.iter_mut() {
            p.start = entity(p.start);
            for h in &mut p.hops {
                *h = Hop { rel: relation(h.rel), to: entity(h.to), score: h.score };
            }
        }
        *texts = texts.drain().map(|(r, t)| (relation(r), t)).collect();
        Ok(Arc::new(next))
    }

    pub fn entities(&self) -> usize {
        self.complete.len()
    }
}
