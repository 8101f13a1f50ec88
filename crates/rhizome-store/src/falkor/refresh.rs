//! Aggregates (entities, MENTIONED_IN edges, relation edges, facts) recomputed from their
//! support records after a write or a deletion.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rhizome_core::{FactRecord, MentionRecord, RelationRecord, Result, VectorKind};

use super::keys::{cmd, vec_key, REL, SUMMARIES};
use super::support::{self, Row};
use super::write::{json, lit_id, namer, s, Refreshed};
use super::{edge_type, sanitise, FalkorStore, Lit};

impl FalkorStore {
    /// Recompute the aggregates of these entities, relations and facts from their support;
    /// `pairs` are (entity, chunk) mentions whose MENTIONED_IN edge may have changed;
    /// `hints` the relations (endpoints, type) that may be gone.
    pub(crate) fn refresh(
        &self,
        entities: &BTreeSet<String>,
        relations: &BTreeSet<String>,
        facts: &BTreeSet<String>,
        pairs: &BTreeSet<(String, String)>,
        hints: &HashMap<String, rhizome_core::Relation>,
    ) -> Result<Refreshed> {
        let mut out = Refreshed::default();
        // Entities.
        let ids: Vec<&str> = entities.iter().map(String::as_str).collect();
        let mut rows_of: HashMap<&str, Vec<Row<MentionRecord>>> = HashMap::new();
        if !ids.is_empty() {
            let rows = self.hvals_rows::<MentionRecord>("es", &ids)?;
            let mut sum_cmd = vec![b"HMGET".to_vec(), self.key(SUMMARIES)];
            sum_cmd.extend(ids.iter().map(|i| i.as_bytes().to_vec()));
            let sums = self.pipe(vec![sum_cmd])?.pop().map(|v| v.into_array()).unwrap_or_default();
            // What each entity node holds now: (type, name, description, importance).
            let existing: HashMap<String, (String, String, String, Option<f64>)> = self
                .rop(
                    &[("ids", Lit::List(ids.iter().map(|i| s(i)).collect()))],
                    "UNWIND $ids AS id MATCH (e:__Entity__ {id: id}) \
                     RETURN e.id, e.entity_type, e.name, e.description, e.importance",
                )?
                .into_iter()
                .map(|r| (r[0].str(), (r[1].str(), r[2].str(), r[3].str(), r[4].opt_float())))
                .collect();
            let (mut create, mut update, mut relabel): (
                BTreeMap<String, Vec<Lit>>,
                Vec<Lit>,
                BTreeMap<(String, String), Vec<Lit>>,
            ) = Default::default();
            let mut delete = Vec::new();
            let mut hdel_vec = vec![b"HDEL".to_vec(), self.key(&vec_key(VectorKind::Entity))];
            let mut hdel_sum = vec![b"HDEL".to_vec(), self.key(SUMMARIES)];
            for (i, (id, mut rows)) in ids.iter().zip(rows).enumerate() {
                support::sort_mentions(&mut rows);
                let summary: Option<(String, String)> = sums.get(i).and_then(|v| match v {
                    super::Value::Bytes(b) => serde_json::from_slice(b).ok(),
                    _ => None,
                });
                let agg = support::entity(&rows, summary.as_ref());
                rows_of.insert(id, rows);
                let Some(agg) = agg else {
                    if existing.contains_key(*id) {
                        out.removed_entities += 1;
                        delete.push(s(id));
                    }
                    hdel_vec.push(id.as_bytes().to_vec());
                    hdel_sum.push(id.as_bytes().to_vec());
                    continue;
                };
                let label = sanitise(&agg.entity_type, "ENTITY");
                let row = Lit::Map(vec![
                    ("id", s(id)),
                    ("name", s(&agg.name)),
                    ("ty", s(&agg.entity_type)),
                    ("d", s(&agg.description)),
                    ("imp", agg.importance.map_or(Lit::Null, Lit::Float)),
                ]);
                match existing.get(*id) {
                    None => {
                        out.created_entities += 1;
                        create.entry(label).or_default().push(row);
                    }
                    Some((old_type, name, description, importance)) => {
                        let old = sanitise(old_type, "ENTITY");
                        // An unchanged node is not written again (a write to a node re-indexes
                        // its vector, the dearest part of a write).
                        let same = *old_type == agg.entity_type
                            && *name == agg.name
                            && *description == agg.description
                            && importance.map(|x| x as f32) == agg.importance.map(|x| x as f32);
                        if same {
                            continue;
                        }
                        if old == label {
                            update.push(row);
                        } else {
                            relabel.entry((old, label)).or_default().push(row);
                        }
                    }
                }
            }
            let name = |rows| namer("entity", rows);
            let mut jobs: Vec<(String, Vec<Lit>, &str)> = Vec::new();
            for (label, rows) in create {
                jobs.push((
                    format!(
                    "UNWIND $rows AS r CREATE (e:__Entity__:`{label}` {{id: r.id, name: r.name, entity_type: r.ty, \
                     description: r.d, importance: r.imp}})"),
                    rows,
                    "entity",
                ));
            }
            self.unwind_many(&jobs)?;
            self.unwind(
                &update,
                "UNWIND $rows AS r MATCH (e:__Entity__ {id: r.id}) SET e.name = r.name, \
                e.entity_type = r.ty, e.description = r.d, e.importance = r.imp",
                &name(&update),
            )?;
            for ((old, new), rows) in &relabel {
                self.unwind(rows, &format!(
                    "UNWIND $rows AS r MATCH (e:__Entity__ {{id: r.id}}) REMOVE e:`{old}` SET e:`{new}`, e.name = r.name, \
                     e.entity_type = r.ty, e.description = r.d, e.importance = r.imp"), &name(rows))?;
            }
            self.unwind(&delete, "UNWIND $rows AS id MATCH (e:__Entity__ {id: id}) DETACH DELETE e", &|i| {
                format!("entity {:?}", delete.get(i).map(lit_id).unwrap_or_default())
            })?;
            let mut cmds = Vec::new();
            if hdel_vec.len() > 2 {
                cmds.push(hdel_vec);
                cmds.push(hdel_sum);
            }
            self.pipe(cmds)?;
        }
        // MENTIONED_IN edges: the summed count of the support rows of (entity, chunk).
        let (mut set, mut unset) = (Vec::new(), Vec::new());
        let mut missing: Vec<&str> =
            pairs.iter().map(|(e, _)| e.as_str()).filter(|e| !rows_of.contains_key(e)).collect();
        missing.dedup();
        let extra: Vec<Vec<Row<MentionRecord>>> =
            if missing.is_empty() { Vec::new() } else { self.hvals_rows("es", &missing)? };
        for (e, rows) in missing.iter().zip(extra) {
            rows_of.insert(e, rows);
        }
        for (e, c) in pairs {
            let rows = rows_of.get(e.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            let here: Vec<_> = rows.iter().filter(|r| r.rec.chunk_id.as_deref() == Some(c.as_str())).collect();
            let row = Lit::Map(vec![
                ("e", s(e)),
                ("c", s(c)),
                ("n", Lit::Int(here.iter().map(|r| r.rec.count as i64).sum())),
            ]);
            if here.is_empty() {
                unset.push(row)
            } else {
                set.push(row)
            }
        }
        let pair_name = |rows| namer("mention", rows);
        self.unwind(
            &set,
            "UNWIND $rows AS r MATCH (e:__Entity__ {id: r.e}), (c:Chunk {id: r.c}) \
            MERGE (e)-[m:MENTIONED_IN]->(c) SET m.count = r.n",
            &pair_name(&set),
        )?;
        self.unwind(
            &unset,
            "UNWIND $rows AS r MATCH (e:__Entity__ {id: r.e})-[m:MENTIONED_IN]->(c:Chunk {id: r.c}) \
            DELETE m",
            &pair_name(&unset),
        )?;
        // Relations.
        let ids: Vec<&str> = relations.iter().map(String::as_str).collect();
        if !ids.is_empty() {
            let rows = self.hvals_rows::<RelationRecord>("rs", &ids)?;
            let (mut upsert, mut gone): (BTreeMap<String, Vec<Lit>>, BTreeMap<String, Vec<Lit>>) = Default::default();
            // The relation index in keys (`rel`, `ers:ENTITY`, `ert:ENTITY`): typed edges are
            // one matrix per type in FalkorDB, so "every relation of these entities" is read
            // there, not by an untyped traversal over thousands of edge types.
            let mut cmds = Vec::new();
            let mut q = self.seqs(ids.len())?;
            for (id, mut rows) in ids.iter().zip(rows) {
                q += 1;
                let agg = support::relation(&mut rows);
                match &agg {
                    Some((r, _)) => {
                        cmds.push(cmd([b"HSET".to_vec(), self.key(REL), id.as_bytes().to_vec(), json(r)]));
                        for (k, e) in [("ers", &r.source_id), ("ert", &r.target_id)] {
                            cmds.push(cmd([
                                b"ZADD".to_vec(),
                                self.key(&format!("{k}:{e}")),
                                b"NX".to_vec(),
                                q.to_string().into_bytes(),
                                id.as_bytes().to_vec(),
                            ]));
                        }
                    }
                    None => {
                        cmds.push(cmd([b"HDEL".to_vec(), self.key(REL), id.as_bytes().to_vec()]));
                        if let Some(r) = hints.get(*id) {
                            for (k, e) in [("ers", &r.source_id), ("ert", &r.target_id)] {
                                cmds.push(cmd([
                                    b"ZREM".to_vec(),
                                    self.key(&format!("{k}:{e}")),
                                    id.as_bytes().to_vec(),
                                ]));
                            }
                        }
                    }
                }
                match agg {
                    Some((r, w)) => upsert.entry(edge_type(&r.rel_type)).or_default().push(Lit::Map(vec![
                        ("id", s(id)),
                        ("s", s(&r.source_id)),
                        ("t", s(&r.target_id)),
                        ("ty", s(&r.rel_type)),
                        ("d", s(&r.description)),
                        ("w", Lit::Float(w)),
                    ])),
                    None => {
                        out.removed_relations += 1;
                        if let Some(r) = hints.get(*id) {
                            gone.entry(edge_type(&r.rel_type)).or_default().push(Lit::Map(vec![
                                ("id", s(id)),
                                ("s", s(&r.source_id)),
                                ("t", s(&r.target_id)),
                            ]));
                        }
                    }
                }
            }
            let mut jobs: Vec<(String, Vec<Lit>, &str)> = Vec::new();
            for (ty, rows) in upsert {
                jobs.push((
                    format!(
                        "UNWIND $rows AS r MATCH (a:__Entity__ {{id: r.s}}), (b:__Entity__ {{id: r.t}}) \
                     MERGE (a)-[x:`{ty}` {{id: r.id}}]->(b) SET x.rel_type = r.ty, x.description = r.d, x.weight = r.w"
                    ),
                    rows,
                    "relation",
                ));
            }
            for (ty, rows) in gone {
                jobs.push((format!(
                    "UNWIND $rows AS r MATCH (a:__Entity__ {{id: r.s}})-[x:`{ty}` {{id: r.id}}]->(b:__Entity__ {{id: r.t}}) \
                     DELETE x"), rows, "relation"));
            }
            self.unwind_many(&jobs)?;
            self.pipe(cmds)?;
        }
        // Facts.
        let ids: Vec<&str> = facts.iter().map(String::as_str).collect();
        if !ids.is_empty() {
            let rows = self.hvals_rows::<FactRecord>("fs", &ids)?;
            let (mut upsert, mut gone) = (Vec::new(), Vec::new());
            let mut hdel = vec![b"HDEL".to_vec(), self.key(&vec_key(VectorKind::Fact))];
            for (id, mut rows) in ids.iter().zip(rows) {
                match support::fact(&mut rows) {
                    Some((f, chunks)) => upsert.push(Lit::Map(vec![
                        ("id", s(id)),
                        ("s", s(&f.subject)),
                        ("p", s(&f.predicate)),
                        ("o", s(&f.object)),
                        ("si", s(&f.subject_id)),
                        ("oi", s(&f.object_id)),
                        ("ch", Lit::List(chunks.iter().map(|c| s(c)).collect())),
                    ])),
                    None => {
                        out.removed_facts += 1;
                        gone.push(s(id));
                        hdel.push(id.as_bytes().to_vec());
                    }
                }
            }
            self.unwind(
                &upsert,
                "UNWIND $rows AS r MERGE (f:Fact {id: r.id}) SET f.subject = r.s, f.predicate = r.p, \
                f.object = r.o, f.subject_id = r.si, f.object_id = r.oi, f.chunks = r.ch",
                &|i| format!("fact {:?}", upsert.get(i).map(lit_id).unwrap_or_default()),
            )?;
            self.unwind(&gone, "UNWIND $rows AS id MATCH (f:Fact {id: id}) DELETE f", &|i| {
                format!("fact {:?}", gone.get(i).map(lit_id).unwrap_or_default())
            })?;
            if hdel.len() > 2 {
                self.pipe(vec![hdel])?;
            }
        }
        Ok(out)
    }
}
