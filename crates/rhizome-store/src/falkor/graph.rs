//! The whole graph as rows (`StoreRead::graph_data`), each list ordered by id.

use rhizome_core::{ChunkRow, EntityRow, FactRow, GraphData, RelationRow, Result};

use super::FalkorStore;

impl FalkorStore {
    pub(crate) fn graph_data_impl(&self) -> Result<GraphData> {
        let mut g = GraphData::default();
        g.entities = self
            .ro("MATCH (e:__Entity__) RETURN e.id, e.name, e.entity_type ORDER BY e.id")?
            .into_iter()
            .map(|r| EntityRow { id: r[0].str(), name: r[1].str(), entity_type: r[2].str() })
            .collect();
        g.chunks = self
            .ro("MATCH (c:Chunk) RETURN c.id, c.doc_id, c.ordinal ORDER BY c.id")?
            .into_iter()
            .map(|r| ChunkRow { id: r[0].str(), doc_id: r[1].str(), ordinal: r[2].int() as u32 })
            .collect();
        let rel = self.redis(&[b"HVALS", &self.key(super::keys::REL)])?.into_array();
        let mut relations: Vec<RelationRow> = rel
            .iter()
            .filter_map(|x| serde_json::from_str::<rhizome_core::Relation>(&x.as_str()?).ok())
            .map(|r| RelationRow {
                id: r.id,
                source_id: r.source_id,
                target_id: r.target_id,
                rel_type: r.rel_type,
                weight: r.weight,
            })
            .collect();
        relations.sort_by(|a, b| a.id.cmp(&b.id));
        g.relations = relations;
        g.mentions = self
            .ro("MATCH (e:__Entity__)-[m:MENTIONED_IN]->(c:Chunk) RETURN e.id, c.id, m.count ORDER BY e.id, c.id")?
            .into_iter()
            .map(|r| (r[0].str(), r[1].str(), r[2].int().max(0) as u32))
            .collect();
        g.synonyms = self
            .ro("MATCH (a:__Entity__)-[s:SYNONYM]->(b:__Entity__) RETURN a.id, b.id, s.score ORDER BY a.id, b.id")?
            .into_iter()
            .map(|r| (r[0].str(), r[1].str(), r[2].float() as f32))
            .collect();
        g.similar = self
            .ro("MATCH (a:Chunk)-[s:SIMILAR_TO]->(b:Chunk) RETURN a.id, b.id, s.score ORDER BY a.id, b.id")?
            .into_iter()
            .map(|r| (r[0].str(), r[1].str(), r[2].float() as f32))
            .collect();
        let mut facts = Vec::new();
        for r in self.ro("MATCH (f:Fact) RETURN f.id, f.subject_id, f.object_id, f.chunks")? {
            for c in r[3].list() {
                let c = c.str();
                facts.push(FactRow {
                    id: r[0].str(),
                    subject_id: r[1].str(),
                    object_id: r[2].str(),
                    chunk_id: (!c.is_empty()).then_some(c),
                });
            }
        }
        facts.sort_by(|a, b| (&a.id, &a.chunk_id).cmp(&(&b.id, &b.chunk_id)));
        g.facts = facts;
        Ok(g)
    }
}
