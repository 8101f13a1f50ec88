//! What the pipeline embeds for a batch: each chunk's text (its document's title line, then
//! the chunk) with the spans of its sentences, and the texts of new entities and facts.

use std::collections::HashSet;

use rhizome_core::ids::normalize_name;
use rhizome_core::{Chunk, EmbedKind, Embedder, Result, WriteBatch};

/// Vectors of the chunks (`texts[i]` is what is embedded for `chunks[i]`, see
/// [`embed_text`]) and, when the embedder pools spans from the same forward pass, of each
/// distinct sentence of each chunk: `(sentence id, vector)`, for the extractive answer
/// (which otherwise embeds them per query). Same chunk vectors either way.
pub(crate) fn embed_chunks(
    embedder: &dyn Embedder,
    chunks: &[&Chunk],
    texts: &[String],
) -> Result<(Vec<Vec<f32>>, Vec<(String, Vec<f32>)>)> {
    let mut ids: Vec<Vec<String>> = Vec::with_capacity(chunks.len());
    let mut spans: Vec<Vec<std::ops::Range<usize>>> = Vec::with_capacity(chunks.len());
    for (c, t) in chunks.iter().zip(texts) {
        // The chunk's text ends the embedded text (after its title, when there is one).
        let at = t.len() - c.text.len();
        let (mut seen, mut sp) = (Vec::new(), Vec::new());
        for (off, sentence) in rhizome_core::text::sentences(&c.text) {
            let id = rhizome_core::ids::sentence_id(&c.id, sentence);
            if !sentence.is_empty() && !seen.contains(&id) {
                seen.push(id);
                sp.push(at + off..at + off + sentence.len());
            }
        }
        ids.push(seen);
        spans.push(sp);
    }
    let Some(pooled) = embedder.embed_spans(texts, &spans, EmbedKind::Passage)? else {
        return Ok((embedder.embed(texts, EmbedKind::Passage)?, Vec::new()));
    };
    let mut chunk_vecs = Vec::with_capacity(pooled.len());
    let mut sentence_vecs = Vec::new();
    for (p, ids) in pooled.into_iter().zip(ids) {
        chunk_vecs.push(p.text);
        sentence_vecs.extend(ids.into_iter().zip(p.spans).filter_map(|(id, v)| v.map(|v| (id, v))));
    }
    Ok((chunk_vecs, sentence_vecs))
}

/// The text embedded for a chunk: its document's title (its first [`TITLE_BYTES`] bytes),
/// then the chunk.
pub fn embed_text(title: &str, text: &str) -> String {
    let title = rhizome_core::text::clip(title, TITLE_BYTES);
    if title.is_empty() || text.starts_with(title) {
        text.to_string()
    } else {
        format!("{title}\n{text}")
    }
}

/// Most of a title put before each chunk of its document when embedding: a title is a
/// line, not a text (a file whose "title" is 40 KB would otherwise have it embedded again
/// with each of its chunks).
pub const TITLE_BYTES: usize = 300;

/// Entity ids with the text embedded for each (the normalised name: the same entity
/// always gets the same vector, whichever document introduced it).
pub(crate) fn entity_texts(batch: &WriteBatch) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    batch
        .mentions
        .iter()
        .filter(|m| seen.insert(m.entity_id.clone()))
        .map(|m| (m.entity_id.clone(), normalize_name(&m.name)))
        .collect()
}

pub(crate) fn fact_texts(batch: &WriteBatch) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    batch
        .facts
        .iter()
        .filter(|f| seen.insert(f.fact.id.clone()))
        .map(|f| {
            let x = &f.fact;
            let t = format!(
                "{} {} {}",
                normalize_name(&x.subject),
                normalize_name(&x.predicate),
                normalize_name(&x.object)
            );
            (x.id.clone(), t)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embed_text_puts_at_most_the_title_line_before_the_chunk() {
        assert_eq!(embed_text("Aage Bohr", "He was a physicist."), "Aage Bohr\nHe was a physicist.");
        assert_eq!(embed_text("Aage Bohr", "Aage Bohr was a physicist."), "Aage Bohr was a physicist.");
        assert_eq!(embed_text("", "Text."), "Text.");
        // A "title" of 40 KB (an HTML upload the fuzzer made) is not repeated before every
        // chunk of its document.
        let huge = ", ".repeat(20_000);
        let t = embed_text(&huge, "Chunk.");
        assert!(t.len() <= TITLE_BYTES + "\nChunk.".len(), "{} bytes", t.len());
        assert!(t.ends_with("\nChunk."));
    }
}
