//! `rhizome documents` (the list, with what is known of each document) and `describe`.

use anyhow::Result;
use rhizome_core::DocumentSummary;

use crate::app::{print_json, App, CANCEL};

pub fn documents(app: App, search: Option<&str>, offset: usize, limit: usize) -> Result<()> {
    let page = app.engine()?.documents(search, offset, limit)?;
    if app.json {
        return print_json(&page);
    }
    println!(
        "{} document(s) in {}{}",
        page.total,
        app.store,
        if page.documents.len() < page.total as usize {
            format!(", showing {} from {}", page.documents.len(), offset)
        } else {
            String::new()
        }
    );
    for d in &page.documents {
        println!(
            "{}  {:<3} {:>5} chunks {:>6} entities  {}{}\n      {}",
            d.id,
            d.language.as_deref().unwrap_or("-"),
            d.chunks,
            d.entities,
            d.title,
            if d.partial { " (being written: rerun `rhizome index` to finish it)" } else { "" },
            d.source
        );
        if !d.aliases.is_empty() {
            println!("      also as: {}", d.aliases.join(", "));
        }
        let facts = facts_line(d);
        if !facts.is_empty() {
            println!("      {facts}");
        }
        if !d.meta.hashtags.is_empty() {
            println!("      tags: {}", d.meta.hashtags.join(", "));
        }
        if let Some(s) = &d.meta.summary {
            println!("      {}", clip(s, 300));
        }
    }
    Ok(())
}

/// Type, pages, size, media type, author and dates, those known, separated by ` · `.
fn facts_line(d: &DocumentSummary) -> String {
    let m = &d.meta;
    let mut parts: Vec<String> = Vec::new();
    parts.extend(m.doc_type.clone());
    parts.extend(d.pages.map(|p| format!("{p} page(s)")));
    parts.extend(m.size_bytes.map(size));
    parts.extend(m.media_type.clone());
    parts.extend(m.author.as_ref().map(|a| format!("by {a}")));
    parts.extend(m.created.as_ref().map(|c| format!("created {}", day(c))));
    parts.extend(m.modified.as_ref().map(|c| format!("modified {}", day(c))));
    parts.join(" · ")
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// The date of an ISO 8601 time.
fn day(t: &str) -> &str {
    t.get(..10).unwrap_or(t)
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{}...", cut.trim_end())
}

pub fn describe(app: App, force: bool) -> Result<()> {
    let r = app.engine()?.describe(force, &app.progress(), &CANCEL)?;
    if app.json {
        return print_json(&r);
    }
    println!("{}", summary(&r));
    Ok(())
}

/// One line on what describing did.
pub fn summary(r: &rhizome_engine::DescribeReport) -> String {
    let mut s = format!("documents described: {}", r.described);
    if r.by_llm > 0 || r.llm_failures > 0 {
        s.push_str(&format!(
            " ({} by the LLM, {} unreadable LLM replies described without it)",
            r.by_llm, r.llm_failures
        ));
    }
    s
}
