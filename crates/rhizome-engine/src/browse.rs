//! Reading the graph for viewers: entities by name prefix (any script; Vietnamese also
//! without diacritics), the neighbourhood of an entity, one entity in full, and the
//! communities with their reports.

use std::collections::{HashMap, HashSet, VecDeque};

use rhizome_core::text::fold_diacritics;
use rhizome_core::{Community, CommunityReport, Covariate, Entity, Error, Result};
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

fn key(s: &str) -> String {
    fold_diacritics(&s.to_lowercase())
}

impl Engine {
    fn loaded_graph(&self) -> Result<std::sync::Arc<Graph>> {
        let store = self.reader()?;
        self.graph().get(&*store)
    }

    /// The leaf community of each entity (by entity id).
    pub(crate) fn leaf_communities(&self) -> Result<HashMap<String, String>> {
        let store = self.reader()?;
        let mut out: HashMap<String, (u32, String)> = HashMap::new();
        for c in store.communities()? {
            for e in &c.entity_ids {
                let slot = out.entry(e.clone()).or_insert((c.level, c.id.clone()));
                if c.level > slot.0 {
                    *slot = (c.level, c.id.clone());
                }
            }
        }
        Ok(out.into_iter().map(|(e, (_, c))| (e, c)).collect())
    }

    pub(crate) fn node(g: &Graph, i: u32, leaf: &HashMap<String, String>) -> GraphNode {
        let id = g.entity_ids[i as usize].clone();
        GraphNode {
            community: leaf.get(&id).cloned(),
            id,
            name: g.entity_names[i as usize].clone(),
            entity_type: g.entity_types[i as usize].clone(),
            degree: g.neighbors[i as usize].len(),
        }
    }

    /// Entities whose name, or a word of it, starts with `prefix` (case- and
    /// diacritic-insensitive), exact names first, then by degree.
    pub fn search_entities(&self, prefix: &str, limit: usize) -> Result<Vec<GraphNode>> {
        let p = key(prefix.trim());
        if p.is_empty() {
            return Err(Error::bad_input("q", "give the start of an entity name, e.g. ?q=Aage"));
        }
        let g = self.loaded_graph()?;
        let leaf = self.leaf_communities()?;
        let mut hits: Vec<(u8, usize, u32)> = Vec::new();
        for (i, name) in g.entity_names.iter().enumerate() {
            let k = key(name);
            let rank = if k == p {
                0
            } else if k.starts_with(&p) {
                1
            } else if k.split_whitespace().any(|w| w.starts_with(&p)) {
                2
            } else {
                continue;
            };
            hits.push((rank, usize::MAX - g.neighbors[i].len(), i as u32));
        }
        hits.sort();
        Ok(hits.into_iter().take(limit).map(|(_, _, i)| Self::node(&g, i, &leaf)).collect())
    }

    /// The entities within `depth` RELATED hops of `entity` (an id, or a name), at most
    /// `max_nodes`, nearest and most strongly related first, with the RELATED and SYNONYM
    /// edges among them.
    pub fn neighbourhood(&self, entity: &str, depth: usize, max_nodes: usize) -> Result<Subgraph> {
        let g = self.loaded_graph()?;
        let start = g.entity(entity).or_else(|| {
            let k = key(entity);
            (0..g.entity_names.len() as u32)
                .filter(|&i| key(&g.entity_names[i as usize]) == k)
                .max_by_key(|&i| g.neighbors[i as usize].len())
        });
        let Some(start) = start else {
            return Err(Error::NotFound(format!(
                "no entity {entity:?}; search one by name first (GET /graph/entities?q=...)"
            )));
        };
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
        let leaf = self.leaf_communities()?;
        let nodes = order.iter().map(|&i| Self::node(&g, i, &leaf)).collect();
        let mut edges = Vec::new();
        for r in &g.relations {
            if inside.contains(&r.source) && inside.contains(&r.target) {
                edges.push(GraphEdge {
                    id: r.id.clone(),
                    source: g.entity_ids[r.source as usize].clone(),
                    target: g.entity_ids[r.target as usize].clone(),
                    kind: "RELATED".into(),
                    rel_type: r.rel_type.clone(),
                    weight: r.weight,
                });
            }
        }
        for &a in &order {
            for &(b, s) in &g.synonyms[a as usize] {
                if a < b && inside.contains(&b) {
                    let (ia, ib) = (&g.entity_ids[a as usize], &g.entity_ids[b as usize]);
                    edges.push(GraphEdge {
                        id: format!("syn:{ia}:{ib}"),
                        source: ia.clone(),
                        target: ib.clone(),
                        kind: "SYNONYM".into(),
                        rel_type: "SYNONYM".into(),
                        weight: s,
                    });
                }
            }
        }
        Ok(Subgraph { center: g.entity_ids[start as usize].clone(), nodes, edges, truncated })
    }

    /// One entity in full, with at most `max_mentions` mentioning chunks.
    pub fn entity_detail(&self, id: &str, max_mentions: usize) -> Result<EntityDetail> {
        let g = self.loaded_graph()?;
        let store = self.reader()?;
        let mut entity = store
            .entities(&[id.to_string()])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound(format!("no entity with id {id:?}")))?;
        entity.importance = g.importance(id, entity.importance);
        let i = g.entity(id);
        let degree = i.map_or(0, |i| g.neighbors[i as usize].len());
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
        let id = match self.loaded_graph()?.entity(entity) {
            Some(_) => entity.to_string(),
            None => self.search_entities(entity, 1)?.into_iter().next().map(|n| n.id).ok_or_else(|| {
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
