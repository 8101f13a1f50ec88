//! Resources: each document (its text) at `rhizome://documents/{id}` and each community
//! report at `rhizome://communities/{id}`, listed up to [`MAX_LISTED`] of each (the
//! templates reach the rest).

use rhizome_core::{Error, Result};
use rhizome_engine::Engine;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

const DOCUMENTS: &str = "rhizome://documents/";
const COMMUNITIES: &str = "rhizome://communities/";
/// Most documents, and most community reports, listed.
pub const MAX_LISTED: usize = 500;

pub fn list(e: &Engine) -> Result<Vec<Resource>> {
    let mut out = Vec::new();
    for d in e.documents(None, 0, MAX_LISTED)?.documents {
        let mut r = Resource::new(format!("{DOCUMENTS}{}", d.id), d.title.clone())
            .with_title(d.title.clone())
            .with_mime_type("text/plain");
        let about = d.meta.summary.clone().unwrap_or_else(|| d.source.clone());
        r = r.with_description(about);
        out.push(r);
    }
    let mut reports = 0;
    for c in e.communities_with_reports(None)? {
        let Some(report) = c.report else { continue };
        if reports == MAX_LISTED {
            break;
        }
        reports += 1;
        out.push(
            Resource::new(format!("{COMMUNITIES}{}", c.community.id), report.title.clone())
                .with_title(format!("Community report: {}", report.title))
                .with_description(rhizome_core::text::clip(&report.summary, 300))
                .with_mime_type("text/markdown"),
        );
    }
    Ok(out)
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{DOCUMENTS}{{id}}"), "document")
            .with_description("An indexed document's text, by id (doc_...) or source.")
            .with_mime_type("text/plain"),
        ResourceTemplate::new(format!("{COMMUNITIES}{{id}}"), "community report")
            .with_description("A community's report: its summary and findings.")
            .with_mime_type("text/markdown"),
    ]
}

pub fn read(e: &Engine, uri: &str) -> Result<ReadResourceResult> {
    if let Some(id) = uri.strip_prefix(DOCUMENTS) {
        let d = e.document(id)?;
        let text = ResourceContents::text(d.document.text, uri).with_mime_type("text/plain");
        return Ok(ReadResourceResult::new(vec![text]));
    }
    if let Some(id) = uri.strip_prefix(COMMUNITIES) {
        let Some(report) = e.community_with_report(id)?.and_then(|c| c.report) else {
            return Err(Error::NotFound(format!("no community report {id:?}; list them with resources/list")));
        };
        let mut md = format!("# {}\n\n{}\n", report.title, report.summary);
        for f in &report.findings {
            md.push_str(&format!("\n## {}\n\n{}\n", f.summary, f.explanation));
        }
        let text = ResourceContents::text(md, uri).with_mime_type("text/markdown");
        return Ok(ReadResourceResult::new(vec![text]));
    }
    Err(Error::NotFound(format!("no resource {uri:?}: resources are {DOCUMENTS}ID and {COMMUNITIES}ID")))
}
