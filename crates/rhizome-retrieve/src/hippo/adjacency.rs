//! Step 4's graph: the PPR adjacency of entity and passage nodes (relation, synonymy and
//! passage-entity edges), built once per graph and cached.

use std::sync::{Arc, Mutex, Weak};

use rhizome_core::ids::entity_id;
use rhizome_core::Result;

use super::settings::HippoConfig;
use crate::graph::Graph;
use crate::ppr::Csr;
use crate::QueryEnv;

struct Cached {
    graph: Weak<Graph>,
    title_weight: f32,
    csr: Arc<Csr>,
}

/// The adjacency of the last graph seen. Holding a `Weak` keeps the graph's allocation
/// from being reused, so pointer equality identifies the same graph.
static ADJACENCY: Mutex<Option<Cached>> = Mutex::new(None);

/// The PPR adjacency of `graph` (entity nodes `0..E`, then chunk nodes `E..E+C`), built
/// once per graph and title edge weight; true when this call built it.
pub(super) fn adjacency(env: &QueryEnv, graph: &Arc<Graph>, cfg: &HippoConfig) -> Result<(Arc<Csr>, bool)> {
    let title_weight = cfg.title_edge_weight;
    let mut slot = ADJACENCY.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = slot.as_ref() {
        if c.title_weight == title_weight && Weak::ptr_eq(&c.graph, &Arc::downgrade(graph)) {
            return Ok((c.csr.clone(), false));
        }
    }
    let titles = if title_weight != 1.0 { title_entities(env, graph)? } else { vec![None; graph.chunk_ids.len()] };
    let csr = Arc::new(build_csr(graph, &titles, title_weight));
    *slot = Some(Cached { graph: Arc::downgrade(graph), title_weight, csr: csr.clone() });
    Ok((csr, true))
}

/// Per chunk: the entity its document's title names (the title itself, or the title
/// without a trailing parenthesised qualifier such as `Mercury (planet)`).
fn title_entities(env: &QueryEnv, graph: &Graph) -> Result<Vec<Option<u32>>> {
    let mut out = vec![None; graph.chunk_ids.len()];
    for c in env.store.chunks(&graph.chunk_ids)? {
        let Some(i) = graph.chunk(&c.chunk.id) else { continue };
        let title = c.doc_title.trim();
        let base = match title.rfind(" (") {
            Some(p) if title.ends_with(')') => &title[..p],
            _ => title,
        };
        out[i as usize] = [title, base].iter().filter(|t| !t.is_empty()).find_map(|t| graph.entity(&entity_id(t)));
    }
    Ok(out)
}

fn build_csr(g: &Graph, titles: &[Option<u32>], title_weight: f32) -> Csr {
    let ne = g.entity_ids.len() as u32;
    let n = g.entity_ids.len() + g.chunk_ids.len();
    let relations = g.relations.iter().map(|r| (r.source, r.target, r.weight.max(0.0)));
    let synonyms =
        g.synonyms.iter().enumerate().flat_map(|(a, list)| {
            list.iter().filter(move |(b, _)| (a as u32) < *b).map(move |&(b, s)| (a as u32, b, s))
        });
    let mentions = g.entity_chunks.iter().enumerate().flat_map(|(e, list)| {
        list.iter().map(move |&(c, _)| {
            let is_title = titles.get(c as usize).copied().flatten() == Some(e as u32);
            (e as u32, ne + c, if is_title { title_weight } else { 1.0 })
        })
    });
    Csr::from_edges(n, relations.chain(synonyms).chain(mentions))
}
