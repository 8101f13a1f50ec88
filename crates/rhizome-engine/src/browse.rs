//! Reading the graph for viewers: entities by name prefix (any script; Vietnamese also
//! without diacritics), the neighbourhood of an entity, one entity in full, and the
//! communities with their reports.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use rhizome_core::{Community, CommunityReport, Covariate, Entity, Error, Result, StoreRead};
use rhizome_retrieve::graph::name_key;
use rhizome_retrieve::Graph;
use serde::Serialize;

use crate::Engine;

/// Most claims shown with one entity.
const MAX_CLAIMS: usize = 50;

/// An entity as a graph viewer draws it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GraphNode {
    pub id: String,
    pub name: String,
    pub entity_type: String,
    /// RELATED edges at this entity.
    pub degree: usize,
    /// Its leaf community (the deepest level), for colouring.
    pub community: Option<String>,
}

/// An edge between two drawn entities: `RELATED` (typed, weighted) or `SYNONYM`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GraphEdge {
    pub id: String,
    pub source: String,
    pub target: String,
    pub kind: String,
    pub rel_type: String,
    pub weight: f32,
}

/// A piece of the graph around an entity.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Subgraph {
    pub center: String,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// More nodes were in reach than `max_nodes`.
    pub truncated: bool,
}

/// A chunk that mentions an entity, with its document.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Mention {
    pub chunk_id: String,
    pub doc_id: String,
    pub title: String,
    pub source: String,
    pub text: String,
    pub count: u32,
}

/// One entity in full: description, aliases (SYNONYM), the chunks that mention it, its
/// communities with their reports.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EntityDetail {
    pub entity: Entity,
    /// RELATED edges at this entity.
    pub degree: usize,
    /// SYNONYM neighbours, most similar first.
    pub aliases: Vec<Alias>,
    /// The chunks that mention it most, most mentions first.
    pub mentions: Vec<Mention>,
    pub communities: Vec<CommunityWithReport>,
    /// Claims about it (as subject or object): extracted with `extract.claims`, or
    /// imported from Microsoft GraphRAG.
    pub claims: Vec<Covariate>,
}

/// Another name of an entity: a SYNONYM neighbour, with the similarity of the two names.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Alias {
    pub name: String,
    pub similarity: f32,
}

/// A community with its report (none until one is written).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CommunityWithReport {
    pub community: Community,
    /// Sent as null when there is none.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub report: Option<CommunityReport>,
}

/// The rank of a name key among the hits of a search for `p`: 0 the name, 1 its start, 2
/// the start of a word of it; None when it is no hit.
pub(crate) fn rank(k: &str, p: &str) -> Option<u8> {
    if k == p {
        Some(0)
    } else if k.starts_with(p) {
        Some(1)
    } else if k.split_whitespace().any(|w| w.starts_with(p)) {
        Some(2)
    } else {
        None
    }
}

/// The leaf community of each of `ids` that has one.
pub(crate) fn leaf_communities(store: &dyn StoreRead, ids: &[String]) -> Result<HashMap<String, String>> {
    let asked: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut out: HashMap<String, (u32, String)> = HashMap::new();
    for c in store.communities_of(ids)? {
        for e in c.entity_ids.iter().filter(|e| asked.contains(e.as_str())) {
            let slot = out.entry(e.clone()).or_insert((c.level, c.id.clone()));
            if c.level > slot.0 {
                *slot = (c.level, c.id.clone());
            }
        }
    }
    Ok(out.into_iter().map(|(e, (_, c))| (e, c)).collect())
}

impl Engine {
    /// The whole graph, or None on an index above `retrieval.whole_graph_up_to` entities
    /// (then what a viewer shows is read by id through the store).
    pub(crate) fn whole_graph(&self, store: &dyn StoreRead) -> Result<Option<Arc<Graph>>> {
        self.graph().whole(store, self.config().retrieval.whole_graph_up_to)
    }

    /// The nodes of entity numbers `nums` of `g`.
    pub(crate) fn nodes(store: &dyn StoreRead, g: &Graph, nums: &[u32]) -> Result<Vec<GraphNode>> {
        let ids: Vec<String> = nums.iter().map(|&i| g.entity_ids[i as usize].clone()).collect();
        let leaf = leaf_communities(store, &ids)?;
        Ok(nums
            .iter()
            .zip(ids)
            .map(|(&i, id)| GraphNode {
                community: leaf.get(&id).cloned(),
                id,
                name: g.entity_names[i as usize].clone(),
                entity_type: g.entity_types[i as usize].clone(),
                degree: g.degree(i),
            })
            .collect())
    }

    /// Entities whose name, or a word of it, starts with `prefix` (case- and
    /// diacritic-insensitive), exact names first, then by degree (then by id).
    ///
    /// On an index above `retrieval.whole_graph_up_to` entities the names are looked up
    /// in [`rhizome_retrieve::graph::NamePrefixes`] (read once per graph version, about
    /// 60 MB at a million entities of MuSiQue's names) and only the hits' degrees are read
    /// by id. A store index was not chosen: the key (lowercased and without diacritics
    /// by Rust's rules, which SQLite's ASCII `lower()` does not follow) would have to be
    /// stored in a new column of every entity, and a btree on it finds names by their
    /// start only, not by the start of another word. The results are the same, except for
    /// a prefix that more than 20,000 names share: those of the rank that fills `limit`
    /// are ranked by degree among its first ones in id order.
    pub fn search_entities(&self, prefix: &str, limit: usize) -> Result<Vec<GraphNode>> {
        let p = name_key(prefix.trim());
        if p.is_empty() {
            return Err(Error::bad_input("q", "give the start of an entity name, e.g. ?q=Aage"));
        }
        let store = self.reader()?;
        let Some(g) = self.whole_graph(&*store)? else { return self.search_entities_around(&*store, &p, limit) };
        let mut hits: Vec<(u8, usize, u32)> = Vec::new();
        for (i, name) in g.entity_names.iter().enumerate() {
            let Some(rank) = rank(&name_key(name), &p) else { continue };
            hits.push((rank, usize::MAX - g.neighbors[i].len(), i as u32));
        }
        hits.sort();
        let nums: Vec<u32> = hits.into_iter().take(limit).map(|(_, _, i)| i).collect();
        Self::nodes(&*store, &g, &nums)
    }

    /// The entities within `depth` RELATED hops of `entity` (an id, or a name: of the
    /// entities of that name the one of most relations), at most `max_nodes`, nearest and
    /// most strongly related first, with the RELATED and SYNONYM edges among them.
    ///
    /// On an index above `retrieval.whole_graph_up_to` entities the relations are read
    /// one level of hops at a time and the edges among the entities drawn in one more
    /// read ([`StoreRead::walk_edges`]): the same subgraph.
    pub fn neighbourhood(&self, entity: &str, depth: usize, max_nodes: usize) -> Result<Subgraph> {
        let store = self.reader()?;
        let Some(g) = self.whole_graph(&*store)? else {
            return self.neighbourhood_around(&*store, entity, depth, max_nodes);
        };
        let start = g.entity(entity).or_else(|| {
            let k = name_key(entity);
            (0..g.entity_names.len() as u32)
                .filter(|&i| name_key(&g.entity_names[i as usize]) == k)
                .max_by_key(|&i| g.neighbors[i as usize].len())
        });
        let Some(start) = start else { return Err(no_entity(entity)) };
        let max_nodes = max_nodes.max(1);
        let mut seen: HashSet<u32> = HashSet::from([start]);
        let mut order = vec![start];
        let mut queue = VecDeque::from([(start, 0usize)]);
        let mut truncated = false;
        while let Some((n, d)) = queue.pop_front() {
            if d >= depth {
                continue;
            }
            let mut next: Vec<(f32, u32)> = g.neighbors[n as usize]
                .iter()
                .map(|nb| (g.relations[nb.relation as usize].weight, nb.entity))
                .filter(|(_, e)| !seen.contains(e))
                .collect();
            next.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, e) in next {
                if !seen.insert(e) {
                    continue;
                }
                if order.len() >= max_nodes {
                    truncated = true;
                    break;
                }
                order.push(e);
                queue.push_back((e, d + 1));
            }
        }
        let inside: HashSet<u32> = order.iter().copied().collect();
        let nodes = Self::nodes(&*store, &g, &order)?;
        let mut edges = Vec::new();
        for r in &g.relations {
            if inside.contains(&r.source) && inside.contains(&r.target) {
                let (source, target) = (&g.entity_ids[r.source as usize], &g.entity_ids[r.target as usize]);
                edges.push(related_edge(&r.id, source, target, &r.rel_type, r.weight));
            }
        }
        for &a in &order {
            for &(b, s) in &g.synonyms[a as usize] {
                if a < b && inside.contains(&b) {
                    edges.push(synonym_edge(&g.entity_ids[a as usize], &g.entity_ids[b as usize], s));
                }
            }
        }
        Ok(Subgraph { center: g.entity_ids[start as usize].clone(), nodes, edges, truncated })
    }

    /// One entity in full, with at most `max_mentions` mentioning chunks.
    ///
    /// On an index above `retrieval.whole_graph_up_to` entities it is read from the
    /// entity's neighbourhood ([`StoreRead::neighbourhood`]): the same, except its
    /// importance, which is the stored one (centrality needs the whole graph).
    pub fn entity_detail(&self, id: &str, max_mentions: usize) -> Result<EntityDetail> {
        let store = self.reader()?;
        let mut entity = store
            .entities(&[id.to_string()])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound(format!("no entity with id {id:?}")))?;
        let g = match self.whole_graph(&*store)? {
            Some(g) => {
                entity.importance = g.importance(id, entity.importance);
                g
            }
            None => Arc::new(Graph::from_neighbourhood(store.neighbourhood(&[id.to_string()])?)),
        };
        let i = g.entity(id);
        let degree = i.map_or(0, |i| g.degree(i));
        let mut aliases: Vec<Alias> = i
            .map(|i| {
                g.synonyms[i as usize]
                    .iter()
                    .map(|&(b, s)| Alias { name: g.entity_names[b as usize].clone(), similarity: s })
                    .collect()
            })
            .unwrap_or_default();
        aliases.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        let mut chunk_counts: Vec<(u32, u32)> = i.map(|i| g.entity_chunks[i as usize].clone()).unwrap_or_default();
        chunk_counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        chunk_counts.truncate(max_mentions);
        let ids: Vec<String> = chunk_counts.iter().map(|(c, _)| g.chunk_ids[*c as usize].clone()).collect();
        let counts: HashMap<&str, u32> =
            chunk_counts.iter().map(|(c, n)| (g.chunk_ids[*c as usize].as_str(), *n)).collect();
        let mentions = store
            .chunks(&ids)?
            .into_iter()
            .map(|c| Mention {
                count: counts.get(c.chunk.id.as_str()).copied().unwrap_or(0),
                chunk_id: c.chunk.id,
                doc_id: c.chunk.doc_id,
                title: c.doc_title,
                source: c.doc_source,
                text: c.chunk.text,
            })
            .collect();
        let communities = store.communities_of(&[id.to_string()])?;
        let ids: Vec<String> = communities.iter().map(|c| c.id.clone()).collect();
        let reports: HashMap<String, CommunityReport> =
            store.community_reports_of(&ids)?.into_iter().map(|r| (r.community_id.clone(), r)).collect();
        let communities = communities
            .into_iter()
            .map(|c| {
                let report = reports.get(&c.id).cloned();
                CommunityWithReport { community: c, report }
            })
            .collect();
        let mut claims = store.covariates_of(&[id.to_string()])?;
        claims.truncate(MAX_CLAIMS);
        Ok(EntityDetail { entity, degree, aliases, mentions, communities, claims })
    }

    /// One entity in full, by id or by name: the best match of
    /// [`search_entities`](Self::search_entities) for a name or its beginning.
    pub fn entity_named(&self, entity: &str, max_mentions: usize) -> Result<EntityDetail> {
        let known = !self.reader()?.entities(&[entity.to_string()])?.is_empty();
        let id = match known {
            true => entity.to_string(),
            false => self.search_entities(entity, 1)?.into_iter().next().map(|n| n.id).ok_or_else(|| {
                Error::NotFound(format!("no entity named {entity:?} or starting so; try a shorter part of the name"))
            })?,
        };
        self.entity_detail(&id, max_mentions)
    }

    /// Communities (at `level`, or all) with their reports, by level then id.
    pub fn communities_with_reports(&self, level: Option<u32>) -> Result<Vec<CommunityWithReport>> {
        let store = self.reader()?;
        let mut reports: HashMap<String, CommunityReport> =
            store.community_reports()?.into_iter().map(|r| (r.community_id.clone(), r)).collect();
        Ok(store
            .communities()?
            .into_iter()
            .filter(|c| level.is_none_or(|l| c.level == l))
            .map(|c| {
                let report = reports.remove(&c.id);
                CommunityWithReport { community: c, report }
            })
            .collect())
    }

    /// One community by id with its report (None: no such community), read without
    /// reading the others.
    pub fn community_with_report(&self, id: &str) -> Result<Option<CommunityWithReport>> {
        let store = self.reader()?;
        let Some(community) = store.community(id)? else { return Ok(None) };
        let report = store.community_reports_of(std::slice::from_ref(&community.id))?.into_iter().next();
        Ok(Some(CommunityWithReport { community, report }))
    }
}

/// No entity with that id or name.
pub(crate) fn no_entity(entity: &str) -> Error {
    Error::NotFound(format!("no entity {entity:?}; search one by name first (GET /graph/entities?q=...)"))
}

pub(crate) fn related_edge(id: &str, source: &str, target: &str, rel_type: &str, weight: f32) -> GraphEdge {
    GraphEdge {
        id: id.to_string(),
        source: source.to_string(),
        target: target.to_string(),
        kind: "RELATED".into(),
        rel_type: rel_type.to_string(),
        weight,
    }
}

/// The SYNONYM edge between `a` and `b` (a < b).
pub(crate) fn synonym_edge(a: &str, b: &str, similarity: f32) -> GraphEdge {
    GraphEdge {
        id: format!("syn:{a}:{b}"),
        source: a.to_string(),
        target: b.to_string(),
        kind: "SYNONYM".into(),
        rel_type: "SYNONYM".into(),
        weight: similarity,
    }
}
