//! The material a report is written from, under a token budget.
//!
//! A community's own material is its entities (by degree), the relations among them (by
//! the summed degree of their ends) and the claims about them. When that does not fit the
//! budget and the community has sub-communities with reports, those reports stand in for
//! their members, largest sub-community first, and the members they do not cover are
//! listed as far as the budget allows (Microsoft GraphRAG's bottom-up substitution).

use std::collections::{HashMap, HashSet};

use rhizome_core::text::count_tokens;
use rhizome_core::{Community, CommunityReport, Covariate, Entity, Relation};

/// What is known about a community's members, fetched from the store.
pub struct Material<'a> {
    pub community: &'a Community,
    pub entities: Vec<Entity>,
    pub relations: Vec<Relation>,
    pub claims: Vec<Covariate>,
    /// Graph degree per entity id.
    pub degree: &'a HashMap<String, u32>,
    /// Reports of the community's children (those that exist), with the children's members.
    pub child_reports: Vec<(&'a CommunityReport, &'a Community)>,
}

/// The rendered material and how it was made.
pub struct Built {
    pub text: String,
    pub tokens: usize,
    /// Sub-community reports used in place of their members.
    pub substituted: usize,
    /// Entity and relation lines left out for the budget.
    pub left_out: usize,
}

fn one_line(s: &str, max_chars: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        flat
    } else {
        let cut: String = flat.chars().take(max_chars).collect();
        format!("{cut}…")
    }
}

impl Material<'_> {
    fn deg(&self, id: &str) -> u32 {
        self.degree.get(id).copied().unwrap_or(0)
    }

    /// Entities by degree (then importance, then name), relations by summed degree (then id).
    fn ranked(&self) -> (Vec<&Entity>, Vec<&Relation>) {
        let mut ents: Vec<&Entity> = self.entities.iter().collect();
        // By degree, then by the extractor's importance judgement (LLM), then by name.
        let imp = |e: &Entity| e.importance.unwrap_or(0.0);
        ents.sort_by(|a, b| {
            self.deg(&b.id).cmp(&self.deg(&a.id)).then(imp(b).total_cmp(&imp(a))).then(a.name.cmp(&b.name))
        });
        let mut rels: Vec<&Relation> = self.relations.iter().collect();
        let rank = |r: &Relation| self.deg(&r.source_id) + self.deg(&r.target_id);
        rels.sort_by(|a, b| rank(b).cmp(&rank(a)).then(a.id.cmp(&b.id)));
        (ents, rels)
    }

    fn names(&self) -> HashMap<&str, &str> {
        self.entities.iter().map(|e| (e.id.as_str(), e.name.as_str())).collect()
    }

    fn entity_line(&self, e: &Entity) -> String {
        let importance = e.importance.map(|x| format!(", importance {x:.1}")).unwrap_or_default();
        format!(
            "- {} ({}, degree {}{importance}): {}",
            e.name,
            e.entity_type,
            self.deg(&e.id),
            one_line(&e.description, 400)
        )
    }

    fn relation_line(&self, r: &Relation, names: &HashMap<&str, &str>) -> String {
        let n = |id: &str| names.get(id).copied().unwrap_or(id).to_string();
        let desc = if r.description.is_empty() { r.rel_type.clone() } else { one_line(&r.description, 300) };
        format!("- {} -> {} ({}, weight {:.1}): {}", n(&r.source_id), n(&r.target_id), r.rel_type, r.weight, desc)
    }

    fn claim_line(&self, c: &Covariate, names: &HashMap<&str, &str>) -> String {
        let subject = names.get(c.subject_id.as_str()).copied().unwrap_or(c.subject_id.as_str());
        format!("- {subject}: [{}, {}] {}", c.claim_type, c.status, one_line(&c.description, 300))
    }

    /// Render within `budget` tokens.
    pub fn build(&self, budget: usize) -> Built {
        let names = self.names();
        let (ents, rels) = self.ranked();
        let ent_lines: Vec<(String, &str)> = ents.iter().map(|e| (self.entity_line(e), e.id.as_str())).collect();
        let rel_lines: Vec<(String, &Relation)> = rels.iter().map(|r| (self.relation_line(r, &names), *r)).collect();
        let claim_lines: Vec<String> = self.claims.iter().map(|c| self.claim_line(c, &names)).collect();
        let all = sections(
            &[],
            &ent_lines.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
            &rel_lines.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
            &claim_lines.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let tokens = count_tokens(&all);
        if tokens <= budget {
            return Built { text: all, tokens, substituted: 0, left_out: 0 };
        }
        // Substitute sub-community reports, largest first, while they fit half the budget.
        let mut children: Vec<&(&CommunityReport, &Community)> = self.child_reports.iter().collect();
        children.sort_by(|a, b| b.1.entity_ids.len().cmp(&a.1.entity_ids.len()).then(a.1.id.cmp(&b.1.id)));
        let mut reports: Vec<String> = Vec::new();
        let mut covered: HashSet<&str> = HashSet::new();
        let mut used = 0;
        for (rep, child) in children {
            let text = rep.text();
            let t = count_tokens(&text);
            if used + t > budget / 2 {
                continue;
            }
            used += t;
            reports.push(text);
            covered.extend(child.entity_ids.iter().map(String::as_str));
        }
        let substituted = reports.len();
        // Then the uncovered members' lines, entities and relations alternately, in rank order.
        let mut left = budget.saturating_sub(used + 40);
        let take = |lines: Vec<&str>, left: &mut usize, share: usize| -> (Vec<String>, usize) {
            let (mut out, mut spent, mut dropped) = (Vec::new(), 0, 0);
            for l in lines {
                let t = count_tokens(l) + 1;
                if spent + t > share {
                    dropped += 1;
                    continue;
                }
                spent += t;
                out.push(l.to_string());
            }
            *left = left.saturating_sub(spent);
            (out, dropped)
        };
        let ent_todo: Vec<&str> =
            ent_lines.iter().filter(|(_, id)| !covered.contains(id)).map(|(l, _)| l.as_str()).collect();
        let rel_todo: Vec<&str> = rel_lines
            .iter()
            .filter(|(_, r)| !(covered.contains(r.source_id.as_str()) && covered.contains(r.target_id.as_str())))
            .map(|(l, _)| l.as_str())
            .collect();
        let share = left * 2 / 5;
        let (e_out, e_drop) = take(ent_todo, &mut left, share);
        let share = left * 2 / 3;
        let (r_out, r_drop) = take(rel_todo, &mut left, share);
        let share = left;
        let (c_out, c_drop) = take(claim_lines.iter().map(String::as_str).collect(), &mut left, share);
        let text = sections(&as_refs(&reports), &as_refs(&e_out), &as_refs(&r_out), &as_refs(&c_out));
        Built { tokens: count_tokens(&text), text, substituted, left_out: e_drop + r_drop + c_drop }
    }
}

fn sections(reports: &[&str], ents: &[&str], rels: &[&str], claims: &[&str]) -> String {
    let mut s = String::new();
    if !reports.is_empty() {
        s.push_str("Reports on sub-communities:\n\n");
        for r in reports {
            s.push_str(r.trim());
            s.push_str("\n\n");
        }
    }
    if !ents.is_empty() {
        s.push_str("Entities:\n");
        s.push_str(&ents.join("\n"));
        s.push_str("\n\n");
    }
    if !rels.is_empty() {
        s.push_str("Relationships:\n");
        s.push_str(&rels.join("\n"));
        s.push_str("\n\n");
    }
    if !claims.is_empty() {
        s.push_str("Claims:\n");
        s.push_str(&claims.join("\n"));
        s.push('\n');
    }
    s.trim_end().to_string()
}

fn as_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
