//! The modes without the whole graph: on an index above `retrieval.whole_graph_up_to`
//! entities, what a question touches is read through the store, numbered in the whole
//! graph's order so that ties break the same way and the contexts are the same.
//!
//! - The entity side: the neighbourhood of the question's nearest entities
//!   ([`rhizome_core::StoreRead::neighbourhood`]): their relations, every chunk that
//!   mentions them and their mentions there, and the index's chunk count.
//! - Graph reasoning's expansion: the links of the chunks it goes through, read level by
//!   level ([`chunk_links`]).
//! - Its entity paths: the mentions of the seed chunks ([`chunk_mentions`]) and the graph
//!   around the anchors ([`path_graph`]). A path of at most `max_hops` relations between
//!   two anchors has each relation with an end at most `⌊(max_hops - 1) / 2⌋` hops from
//!   one of them; with every entity that close read whole, every such path is there and
//!   the walk finds the same paths in the same order (as in `multihop`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use rhizome_core::{ChunkRow, Result, Scored};

use super::EntityGraph;
use crate::{ms, timed, Graph, QueryEnv, Retrieval};

/// Per chunk: the chunks it links to, in the whole graph's order (SIMILAR_TO edges, then
/// the previous and next chunk of its document), each with its factor and edge type.
pub(super) type Links = HashMap<String, Vec<(String, f32, &'static str)>>;

/// The whole graph when it is held or small, else the neighbourhood of `hits`.
pub(super) fn entity_graph(env: &QueryEnv, hits: &[Scored], out: &mut Retrieval) -> Result<EntityGraph> {
    if let Some(g) = timed(&mut out.timings_ms, "graph", || env.whole_graph())? {
        let chunks = g.chunk_ids.len();
        return Ok(EntityGraph { g, whole: true, chunks });
    }
    let t = Instant::now();
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let g = Graph::from_neighbourhood(env.store.neighbourhood(&ids)?);
    let chunks = env.graph.chunk_count(env.store)? as usize;
    out.timings_ms.insert("neighbourhood".into(), ms(t));
    out.notes.push(format!(
        "read the neighbourhood of {} question entities from the store ({} relations, {} chunks) instead of \
         the whole graph (retrieval.whole_graph_up_to)",
        ids.len(),
        g.relations.len(),
        g.chunk_ids.len()
    ));
    Ok(EntityGraph { g: Arc::new(g), whole: false, chunks })
}

/// The links of `chunks` read from the store ([`rhizome_core::StoreRead::chunk_links`]),
/// a NEXT_CHUNK link with the factor `next_factor`; a chunk that does not exist has none.
pub(super) fn chunk_links(env: &QueryEnv, chunks: &[String], next_factor: f32) -> Result<Links> {
    let data = env.store.chunk_links(chunks)?;
    let mut out: Links = chunks.iter().map(|c| (c.clone(), Vec::new())).collect();
    // Each edge to both of its ends, in the order of the rows, as the graph lists them.
    for (a, b, cos) in &data.similar {
        if let Some(l) = out.get_mut(a) {
            l.push((b.clone(), *cos, "SIMILAR_TO"));
        }
        if let Some(l) = out.get_mut(b) {
            l.push((a.clone(), *cos, "SIMILAR_TO"));
        }
    }
    // The rows hold each asked chunk's previous and next chunk: next to it in its
    // document's rows by (ordinal, id), whatever else was read.
    let mut docs: BTreeMap<&str, Vec<&ChunkRow>> = BTreeMap::new();
    for c in &data.chunks {
        docs.entry(c.doc_id.as_str()).or_default().push(c);
    }
    for doc in docs.values_mut() {
        doc.sort_by(|a, b| (a.ordinal, &a.id).cmp(&(b.ordinal, &b.id)));
        for (i, c) in doc.iter().enumerate() {
            let Some(l) = out.get_mut(&c.id) else { continue };
            let around = i.checked_sub(1).and_then(|p| doc.get(p)).into_iter().chain(doc.get(i + 1));
            l.extend(around.map(|x| (x.id.clone(), next_factor, "NEXT_CHUNK")));
        }
    }
    Ok(out)
}

/// Per chunk of `chunks`: (entity id, occurrences) of every entity it mentions.
pub(super) fn chunk_mentions(env: &QueryEnv, chunks: &[String]) -> Result<HashMap<String, Vec<(String, u32)>>> {
    let mut out: HashMap<String, Vec<(String, u32)>> = HashMap::new();
    for (e, c, n) in env.store.walk_edges(&[], chunks, false)?.mentions {
        out.entry(c).or_default().push((e, n));
    }
    Ok(out)
}

/// The graph holding every path of at most `max_hops` relations between `anchors`: the
/// neighbourhood of the entities at most `⌊(max_hops - 1) / 2⌋` hops from an anchor.
pub(super) fn path_graph(env: &QueryEnv, anchors: &[String], max_hops: usize, out: &mut Retrieval) -> Result<Graph> {
    let t = Instant::now();
    // One anchor has no path: its own row is all that is shown of it.
    let levels = if anchors.len() < 2 { 0 } else { (max_hops.max(1) - 1) / 2 };
    let mut complete: BTreeSet<String> = anchors.iter().cloned().collect();
    let mut frontier: Vec<String> = complete.iter().cloned().collect();
    let mut reads = 1;
    for _ in 0..levels {
        if frontier.is_empty() {
            break;
        }
        reads += 1;
        let n = env.store.neighbourhood(&frontier)?;
        let ends: BTreeSet<String> = n.graph.relations.into_iter().flat_map(|r| [r.source_id, r.target_id]).collect();
        frontier = ends.into_iter().filter(|id| !complete.contains(id)).collect();
        complete.extend(frontier.iter().cloned());
    }
    let ids: Vec<String> = complete.into_iter().collect();
    let g = Graph::from_neighbourhood(env.store.neighbourhood(&ids)?);
    out.timings_ms.insert("path_neighbourhood".into(), ms(t));
    out.notes.push(format!(
        "read the neighbourhood of {} entities within {levels} hops of the path anchors from the store in {reads} \
         reads ({} relations) instead of the whole graph",
        ids.len(),
        g.relations.len()
    ));
    Ok(g)
}
