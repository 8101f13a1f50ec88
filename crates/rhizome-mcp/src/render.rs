//! Tool results as text a model reads well: numbered evidence with its document and
//! page, short lines, nothing a model would have to parse. (Each result also carries the
//! engine's JSON as structured content, for programs.)

use std::fmt::Write as _;

use rhizome_core::text::clip;
use rhizome_engine::{DocumentDetail, DocumentPage, EntityDetail, QueryOutcome, Subgraph};
use serde_json::Value;

/// Longest passage text shown in a search result.
const PASSAGE_CHARS: usize = 1200;

fn cite(c: &rhizome_engine::Context) -> String {
    let place = c.cite();
    if c.title.is_empty() || place.contains(&c.title) {
        place
    } else {
        format!("{place} ({})", c.title)
    }
}

/// Search results: numbered passages (and other evidence), then the paths.
pub fn search(out: &QueryOutcome) -> String {
    let mut s = String::new();
    if out.contexts.is_empty() {
        let _ = writeln!(s, "Nothing found for {:?} with {}.", out.question, out.method);
    } else {
        let _ = writeln!(s, "{} results for {:?} ({}):", out.contexts.len(), out.question, out.method);
    }
    for (i, c) in out.contexts.iter().enumerate() {
        let _ = write!(
            s,
            "\n[{}] {} · {} · score {:.3}\n{}\n",
            i + 1,
            cite(c),
            c.kind,
            c.score,
            clip(&c.text, PASSAGE_CHARS)
        );
    }
    paths(&mut s, &out.paths);
    notes(&mut s, &out.notes);
    s
}

/// An answer, then its numbered sources.
pub fn answer(out: &QueryOutcome) -> String {
    let mut s = out.answer.trim().to_string();
    if !out.contexts.is_empty() {
        s.push_str("\n\nSources:");
        for (i, c) in out.contexts.iter().enumerate() {
            let _ = write!(s, "\n[{}] {}: {}", i + 1, cite(c), clip(&c.text, 200));
        }
    }
    paths(&mut s, &out.paths);
    let _ = write!(s, "\n\n(method {}, answer {})", out.method, out.answer_kind);
    s
}

fn paths(s: &mut String, paths: &[String]) {
    if !paths.is_empty() {
        s.push_str("\n\nReasoning paths:");
        for p in paths.iter().take(10) {
            let _ = write!(s, "\n- {p}");
        }
    }
}

fn notes(s: &mut String, notes: &[String]) {
    for n in notes {
        let _ = write!(s, "\nNote: {n}");
    }
}

/// An entity, its claims, mentions and neighbourhood.
pub fn entity(d: &EntityDetail, g: &Subgraph) -> String {
    let e = &d.entity;
    let mut s = format!("{} ({}), id {}\n", e.name, e.entity_type, e.id);
    if !e.description.is_empty() {
        let _ = writeln!(s, "{}", clip(&e.description, 1500));
    }
    if !d.aliases.is_empty() {
        let names: Vec<&str> = d.aliases.iter().map(|a| a.name.as_str()).collect();
        let _ = writeln!(s, "Also called: {}", names.join(", "));
    }
    if !d.claims.is_empty() {
        s.push_str("\nClaims:\n");
        for c in &d.claims {
            let when = [c.start_date.as_str(), c.end_date.as_str()]
                .iter()
                .filter(|d| !d.is_empty())
                .copied()
                .collect::<Vec<_>>();
            let when = if when.is_empty() { String::new() } else { format!(" ({})", when.join(" to ")) };
            let _ = writeln!(s, "- {}{when}", c.text());
        }
    }
    if !d.mentions.is_empty() {
        s.push_str("\nMentioned in:\n");
        for m in &d.mentions {
            let _ = writeln!(s, "- {} ({}): {}", m.title, m.source, clip(&m.text, 200));
        }
    }
    let names: std::collections::HashMap<&str, &str> =
        g.nodes.iter().map(|n| (n.id.as_str(), n.name.as_str())).collect();
    let name = |id: &str| names.get(id).copied().unwrap_or(id).to_string();
    let related: Vec<_> = g.edges.iter().filter(|x| x.kind == "RELATED").collect();
    if !related.is_empty() {
        let _ = writeln!(s, "\nRelations ({}{}):", related.len(), if g.truncated { ", cut at the limit" } else { "" });
        for x in related {
            let _ = writeln!(s, "- {} -[{}]-> {}", name(&x.source), x.rel_type, name(&x.target));
        }
    }
    if !d.communities.is_empty() {
        s.push_str("\nCommunities:\n");
        for c in &d.communities {
            let summary = c.report.as_ref().map(|r| clip(&r.summary, 300)).unwrap_or_default();
            let _ = writeln!(s, "- {} (level {}): {summary}", c.community.title, c.community.level);
        }
    }
    s
}

/// A page of the document list.
pub fn documents(p: &DocumentPage) -> String {
    let mut s = format!("{} documents", p.total);
    if p.offset > 0 || (p.documents.len() as u64) < p.total {
        let _ = write!(s, " (showing {} from {})", p.documents.len(), p.offset);
    }
    s.push_str(":\n");
    for d in &p.documents {
        let _ = write!(s, "\n- {} · {} · {}", d.id, d.title, d.source);
        if let Some(t) = &d.meta.doc_type {
            let _ = write!(s, " · type {t}");
        }
        if let Some(n) = d.pages {
            let _ = write!(s, " · {n} pages");
        }
        if let Some(sum) = &d.meta.summary {
            let _ = write!(s, "\n  {}", clip(sum, 300));
        }
        if !d.meta.hashtags.is_empty() {
            let _ = write!(s, "\n  tags: {}", d.meta.hashtags.join(", "));
        }
    }
    s
}

/// A document's facts and a part of its text.
pub fn document(d: &DocumentDetail, offset: usize, max_chars: usize) -> String {
    let doc = &d.document;
    let mut s = format!("{} ({}), id {}\n", doc.title, doc.source, doc.id);
    let m = &doc.meta;
    for (k, v) in [
        ("type", m.doc_type.clone()),
        ("author", m.author.clone()),
        ("created", m.created.clone()),
        ("modified", m.modified.clone()),
        ("media type", m.media_type.clone()),
    ] {
        if let Some(v) = v {
            let _ = writeln!(s, "{k}: {v}");
        }
    }
    if let Some(p) = &doc.pages {
        let _ = writeln!(s, "{}s: {}", p.unit, p.pages.len());
    }
    if let Some(sum) = &m.summary {
        let _ = writeln!(s, "summary: {sum}");
    }
    let total = doc.text.chars().count();
    let part: String = doc.text.chars().skip(offset).take(max_chars).collect();
    let end = (offset + max_chars).min(total);
    let _ = writeln!(s, "\ntext, characters {offset}..{end} of {total}:\n{part}");
    if end < total {
        let _ = write!(s, "\n(more: read_document with offset {end})");
    }
    s
}

/// What an index write did.
pub fn indexed(v: &Value) -> String {
    let list: Vec<&Value> = match v {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut s = String::new();
    for o in list {
        let r = &o["report"];
        let n = |k: &str| r[k].as_u64().unwrap_or(0);
        let _ = writeln!(
            s,
            "Indexed {} new document(s) ({} unchanged, {} replaced, {} already indexed under another name): \
             {} chunks, {} entity mentions, {} relations, {} facts.",
            n("documents_new"),
            n("documents_unchanged"),
            n("documents_replaced"),
            n("documents_duplicate"),
            n("chunks"),
            n("entities_mentioned"),
            n("relations"),
            n("facts")
        );
        for skip in o["skipped"].as_array().into_iter().flatten() {
            let _ = writeln!(
                s,
                "Skipped {}: {}",
                skip["path"].as_str().unwrap_or(""),
                skip["reason"].as_str().unwrap_or("")
            );
        }
    }
    s
}

/// What a deletion removed.
pub fn deleted(v: &Value) -> String {
    let d = &v["deleted"];
    let n = |k: &str| d[k].as_u64().unwrap_or(0);
    format!(
        "Deleted {} document(s): {} chunks, {} entities, {} relations, {} facts that only it supported.",
        n("documents"),
        n("chunks"),
        n("entities"),
        n("relations"),
        n("facts")
    )
}
