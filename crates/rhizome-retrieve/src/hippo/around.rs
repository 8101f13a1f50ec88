//! hippo on an index above `retrieval.whole_graph_up_to` entities: the bounded PageRank of
//! [`super::subgraph`] over the part of the graph read through the store, never the whole
//! graph.
//!
//! The walk's subgraph is found as over the whole graph: the seeds (entities by seed weight,
//! then the best passages by relative score), then what they reach breadth-first, up to the
//! node budget, neighbours in node order (entities before passages, each by id: the order
//! the whole graph numbers them in). Each node's edges are read when the walk reaches it,
//! a batch of queued nodes at a time ([`StoreRead::walk_edges`]); once the budget is
//! reached, one more read gives the edges among the nodes taken but never expanded. The
//! subgraph, its weights (title edges included) and the sums of repeated edges are then
//! those the whole graph's adjacency induces on the same nodes, so the passages ranked are
//! the same; a seed's specificity (the passages that mention it) comes from the same reads.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Instant;

use rhizome_core::ids::entity_id;
use rhizome_core::{GraphData, Result, StoreRead};
use serde_json::json;

use super::linking::{entity_seeds, InGraph};
use super::names::{matches_by, name_candidates};
use super::passages::Sparse;
use super::settings::HippoConfig;
use super::subgraph::{rank_local, Bounded, Walk, PASSAGE_SEEDS};
use super::{name_seeds, no_entity_seeds, nothing_seeds, walk, Hippo, Ranked, AROUND_NODES};
use crate::ppr::Csr;
use crate::{ms, timed, QueryEnv, Retrieval};

/// Nodes whose edges one read asks for while walking, at most and at least: as many as
/// the walk still seems to need (the nodes it still may take over the nodes one expansion
/// has added so far), so that a dense graph is not read far past the budget.
const BATCH: usize = 256;
const MIN_BATCH: usize = 8;

impl Hippo {
    /// Steps 1 to 5 on an index above `retrieval.whole_graph_up_to` entities: the graph is
    /// read around the question (the module documentation), always bounded (`hippo.ppr_nodes`, or
    /// [`AROUND_NODES`] when it is 0).
    pub(super) fn around(
        &self,
        env: &QueryEnv,
        cfg: &HippoConfig,
        q: &[f32],
        question: &str,
        out: &mut Retrieval,
    ) -> Result<Ranked> {
        let budget = if cfg.ppr_nodes > 0 { cfg.ppr_nodes } else { AROUND_NODES };
        let k = PASSAGE_SEEDS.max(env.config.retrieval.top_k);
        let passages = timed(&mut out.timings_ms, "dense", || {
            Sparse::new(env, q, question, cfg.passage_bm25_weight, k, cfg.passage_temperature)
        })?;
        let relative = |c: &str| passages.relative(c);
        // Whether the index holds facts is not read: the notes assume it does.
        let (linked, fact_weight) = self.link(env, cfg, q, question, out, true, |ids| {
            let mut known: HashMap<String, InGraph> = HashMap::new();
            for f in env.store.fact_rows(ids)? {
                let context = f.chunk_id.as_deref().map_or(0.0, relative);
                let entry = known.entry(f.id).or_insert(InGraph { ends: [f.subject_id, f.object_id], context: 0.0 });
                entry.context = entry.context.max(context);
            }
            Ok(known)
        })?;
        let t = Instant::now();
        let names: Vec<(String, String)> = if cfg.name_seed_weight > 0.0 {
            let found: HashMap<String, String> =
                env.store.entities(&name_candidates(question))?.into_iter().map(|e| (e.id, e.name)).collect();
            matches_by(question, |id| found.get(id).map(|name| (id.to_string(), name.clone())))
        } else {
            Vec::new()
        };
        // The seeds' edges (their specificity among them) and the passages', in one read.
        let mut read = Around::default();
        let first: Vec<Node> = linked
            .iter()
            .flat_map(|f| f.ends.iter().cloned())
            .chain(names.iter().map(|n| n.0.clone()))
            .map(Node::Entity)
            .chain(passages.raw.keys().cloned().map(Node::Chunk))
            .collect();
        read.load(env.store, &first)?;
        let passages_of = |id: &str| read.passages_of(id);
        let mut seeds = entity_seeds(&linked, fact_weight, passages_of);
        if cfg.name_seed_weight > 0.0 {
            name_seeds(cfg, &names, &mut seeds, passages_of, out);
        }
        let passage_seeds = cfg.passage_node_weight > 0.0 && passages.raw.keys().any(|c| relative(c) > 0.0);
        let ranked: Vec<(String, f64)> = if seeds.is_empty() && !passage_seeds {
            nothing_seeds(out);
            let mut v: Vec<(String, f64)> = passages.raw.iter().map(|(c, &s)| (c.clone(), s as f64)).collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            v
        } else {
            if seeds.is_empty() {
                no_entity_seeds(out);
            }
            let at = Question {
                entities: &seeds,
                scored: passages.raw.keys().cloned().collect(),
                relative: &relative,
                title_weight: cfg.title_edge_weight,
            };
            let b = around_ranking(env.store, &mut read, at, &walk(env, cfg), budget)?;
            out.extra.insert("ppr_subgraph_nodes".into(), json!(b.nodes));
            out.extra.insert("ppr_pushes".into(), json!(b.pushes));
            out.extra.insert("graph_reads".into(), json!(read.reads));
            b.ranked
        };
        out.timings_ms.insert("ppr".into(), ms(t));
        if cfg.ppr_nodes == 0 {
            out.notes.push(format!(
                "PageRank over the {budget}-node subgraph around the question, read through the store: \
                 the index is above retrieval.whole_graph_up_to entities (hippo.ppr_nodes sets the size)"
            ));
        }
        Ok((ranked.into_iter().take(env.config.retrieval.top_k).collect(), linked))
    }
}

/// A node of the PageRank graph; the derived order is the whole graph's numbering.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Node {
    Entity(String),
    Chunk(String),
}

impl Node {
    /// The entity's or chunk's id.
    fn id(&self) -> &str {
        match self {
            Node::Entity(id) | Node::Chunk(id) => id,
        }
    }
}

/// The part of the graph read so far: a loaded node's edges are all known.
#[derive(Default)]
pub(super) struct Around {
    loaded: HashSet<Node>,
    adjacent: HashMap<Node, BTreeSet<Node>>,
    relations: BTreeMap<String, (String, String, f32)>,
    synonyms: BTreeMap<(String, String), f32>,
    mentions: BTreeSet<(String, String)>,
    /// Store reads made.
    pub(super) reads: usize,
}

impl Around {
    /// Read the edges of those of `nodes` not read yet.
    pub(super) fn load(&mut self, store: &dyn StoreRead, nodes: &[Node]) -> Result<()> {
        let (mut entities, mut chunks) = (Vec::new(), Vec::new());
        for n in nodes {
            if self.loaded.insert(n.clone()) {
                match n {
                    Node::Entity(id) => entities.push(id.clone()),
                    Node::Chunk(id) => chunks.push(id.clone()),
                }
            }
        }
        if entities.is_empty() && chunks.is_empty() {
            return Ok(());
        }
        let rows = store.walk_edges(&entities, &chunks, false)?;
        self.add(rows);
        Ok(())
    }

    fn add(&mut self, rows: GraphData) {
        self.reads += 1;
        let mut link = |a: Node, b: Node, w: f32| {
            // The edges the adjacency keeps (`Csr::from_edges`).
            if a != b && w.is_finite() && w > 0.0 {
                self.adjacent.entry(a.clone()).or_default().insert(b.clone());
                self.adjacent.entry(b).or_default().insert(a);
            }
        };
        for r in rows.relations {
            let w = r.weight.max(0.0);
            link(Node::Entity(r.source_id.clone()), Node::Entity(r.target_id.clone()), w);
            self.relations.insert(r.id, (r.source_id, r.target_id, w));
        }
        for (a, b, s) in rows.synonyms {
            link(Node::Entity(a.clone()), Node::Entity(b.clone()), s);
            self.synonyms.insert((a, b), s);
        }
        for (e, c, _) in rows.mentions {
            link(Node::Entity(e.clone()), Node::Chunk(c.clone()), 1.0);
            self.mentions.insert((e, c));
        }
    }

    /// The passages that mention an entity (read: a loaded entity's count is exact).
    pub(super) fn passages_of(&self, entity: &str) -> usize {
        let from = (entity.to_string(), String::new());
        self.mentions.range(from..).take_while(|m| m.0 == entity).count()
    }

    /// The nodes reached breadth-first from `seeds` (in order), at most `budget`, sorted.
    fn reach(&mut self, store: &dyn StoreRead, seeds: Vec<Node>, budget: usize) -> Result<Vec<Node>> {
        let mut seen: HashSet<Node> = HashSet::new();
        let mut nodes: Vec<Node> = Vec::new();
        for s in seeds {
            if nodes.len() >= budget {
                break;
            }
            if seen.insert(s.clone()) {
                nodes.push(s);
            }
        }
        let (mut at, seeded) = (0, nodes.len());
        'walk: while at < nodes.len() {
            if !self.loaded.contains(&nodes[at]) {
                let per_expansion = (nodes.len() - seeded).div_ceil(at.max(1)).max(1);
                let want = (budget.saturating_sub(nodes.len()) / per_expansion + 1).clamp(MIN_BATCH, BATCH);
                let batch: Vec<Node> =
                    nodes[at..].iter().filter(|n| !self.loaded.contains(*n)).take(want).cloned().collect();
                self.load(store, &batch)?;
            }
            let u = nodes[at].clone();
            at += 1;
            for v in self.adjacent.get(&u).into_iter().flatten() {
                if nodes.len() >= budget {
                    break 'walk;
                }
                if seen.insert(v.clone()) {
                    nodes.push(v.clone());
                }
            }
        }
        // The edges among the nodes taken but never read.
        let (mut entities, mut chunks) = (Vec::new(), Vec::new());
        for n in nodes.iter().filter(|n| !self.loaded.contains(*n)) {
            match n {
                Node::Entity(id) => entities.push(id.clone()),
                Node::Chunk(id) => chunks.push(id.clone()),
            }
        }
        if !entities.is_empty() {
            self.add(store.walk_edges(&entities, &chunks, true)?);
        }
        nodes.sort_unstable();
        Ok(nodes)
    }
}

/// The walk around the question's seeds, as [`super::subgraph::bounded_ranking`] runs it
/// over the whole graph.
pub(super) struct Question<'a> {
    /// Entity seeds by id.
    pub entities: &'a BTreeMap<String, f64>,
    /// The chunks with a passage score, and any chunk's relative score.
    pub scored: Vec<String>,
    pub relative: &'a dyn Fn(&str) -> f32,
    pub title_weight: f32,
}

/// Rank the passages of the subgraph around the question (at most `budget` nodes) by
/// hippo's fused score, reading the graph through `store`.
pub(super) fn around_ranking(
    store: &dyn StoreRead,
    read: &mut Around,
    question: Question,
    walk: &Walk,
    budget: usize,
) -> Result<Bounded<String>> {
    let mut entities: Vec<(&String, f64)> = question.entities.iter().map(|(e, &w)| (e, w)).collect();
    entities.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let mut passages: Vec<(String, f32)> =
        question.scored.into_iter().map(|c| (c.clone(), (question.relative)(&c))).collect();
    passages.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    passages.truncate(PASSAGE_SEEDS);
    let seeds: Vec<Node> = entities
        .iter()
        .map(|(e, _)| Node::Entity(e.to_string()))
        .chain(passages.into_iter().map(|(c, _)| Node::Chunk(c)))
        .collect();
    let nodes = read.reach(store, seeds, budget)?;
    let first = nodes.partition_point(|n| matches!(n, Node::Entity(_)));
    let index: HashMap<&Node, u32> = nodes.iter().enumerate().map(|(i, n)| (n, i as u32)).collect();
    let entity = |id: &str| index.get(&Node::Entity(id.to_string())).copied();
    let chunk_ids: Vec<String> = nodes[first..].iter().map(|n| n.id().to_string()).collect();
    let titles =
        if question.title_weight != 1.0 { title_entities(store, &chunk_ids, &entity)? } else { HashMap::new() };
    // In the order the whole graph's adjacency is built from: relations, synonym edges,
    // mentions (so that repeated edges sum alike).
    let mut edges: Vec<(u32, u32, f32)> = Vec::new();
    for (s, t, w) in read.relations.values() {
        if let (Some(a), Some(b)) = (entity(s), entity(t)) {
            edges.push((a, b, *w));
        }
    }
    for ((a, b), s) in &read.synonyms {
        if let (Some(a), Some(b)) = (entity(a), entity(b)) {
            edges.push((a, b, *s));
        }
    }
    for (e, c) in &read.mentions {
        if let (Some(a), Some(&b)) = (entity(e), index.get(&Node::Chunk(c.clone()))) {
            let is_title = titles.get(c.as_str()) == Some(&a);
            edges.push((a, b, if is_title { question.title_weight } else { 1.0 }));
        }
    }
    let local = Csr::from_edges(nodes.len(), edges);
    let entity_reset: Vec<f64> =
        nodes[..first].iter().map(|n| question.entities.get(n.id()).copied().unwrap_or(0.0)).collect();
    let relative: Vec<f32> = chunk_ids.iter().map(|c| (question.relative)(c)).collect();
    let (ranked, pushes) = rank_local(&local, entity_reset, &relative, walk);
    let ranked = ranked.into_iter().map(|(i, s)| (chunk_ids[i].clone(), s)).collect();
    Ok(Bounded { ranked, nodes: nodes.len(), pushes })
}

/// Per chunk of the subgraph: the subgraph node of the entity its document is titled after
/// (the title, or the title without a trailing parenthesised qualifier such as
/// `Mercury (planet)`, whichever exists first), as the whole graph's adjacency has it.
fn title_entities(
    store: &dyn StoreRead,
    chunks: &[String],
    entity: &dyn Fn(&str) -> Option<u32>,
) -> Result<HashMap<String, u32>> {
    let titles = store.chunk_titles(chunks)?;
    let names = |title: &str| {
        let title = title.trim();
        let base = match title.rfind(" (") {
            Some(p) if title.ends_with(')') => &title[..p],
            _ => title,
        };
        let mut ids: Vec<String> = [title, base].iter().filter(|t| !t.is_empty()).map(|t| entity_id(t)).collect();
        ids.dedup();
        ids
    };
    // A qualified title whose base name's entity is in the subgraph but whose own is not:
    // if its own exists, the passage's title edge goes there instead, so it is read.
    let outside: Vec<String> = titles
        .iter()
        .filter_map(|(_, t)| match names(t).as_slice() {
            [own, base] if entity(own).is_none() && entity(base).is_some() => Some(own.clone()),
            _ => None,
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let exist: HashSet<String> =
        if outside.is_empty() { HashSet::new() } else { store.entities(&outside)?.into_iter().map(|e| e.id).collect() };
    let mut out = HashMap::new();
    for (c, t) in titles {
        let ids = names(&t);
        if ids.first().is_some_and(|own| exist.contains(own)) {
            continue;
        }
        if let Some(e) = ids.iter().find_map(|id| entity(id)) {
            out.insert(c, e);
        }
    }
    Ok(out)
}
