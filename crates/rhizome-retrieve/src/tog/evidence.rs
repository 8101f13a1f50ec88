//! The contexts of `tog`: one `path` context per final path, then the chunks that
//! support the paths' relations.

use std::collections::HashMap;

use rhizome_core::text::{count_tokens, token_spans};
use rhizome_core::Result;

use super::beam::Path;
use super::judge::described;
use crate::graph::Graph;
use crate::paths::{relation_chunk, relation_sources};
use crate::{Context, ContextKind, QueryEnv};

/// A chunk is cut to fit only when at least this many tokens are left for it.
const MIN_CUT_TOKENS: usize = 12;

/// One `path` context per path: text = its relations with their descriptions, score =
/// the path's, id = its relation ids, source = the documents of its relations' supporting
/// chunks (the relation id where none), title = the first title found.
pub(crate) fn path_contexts(
    env: &QueryEnv,
    g: &Graph,
    paths: &[Path],
    texts: &HashMap<u32, String>,
) -> Result<Vec<Context>> {
    let all: Vec<u32> = paths.iter().flat_map(Path::relations).collect();
    let sources = relation_sources(env.store, g, &all)?;
    let mut k = 0;
    let mut out = Vec::new();
    for p in paths {
        let mut srcs: Vec<String> = Vec::new();
        let mut title = String::new();
        for _ in &p.hops {
            let (s, t) = &sources[k];
            k += 1;
            if !srcs.contains(s) {
                srcs.push(s.clone());
            }
            if title.is_empty() {
                title = t.clone();
            }
        }
        let id = p.hops.iter().map(|h| g.relations[h.rel as usize].id.as_str()).collect::<Vec<_>>().join(",");
        out.push(Context {
            kind: ContextKind::Path,
            id,
            text: described(p, texts, g),
            score: p.score(),
            source: srcs.join(" ; "),
            title,
            pages: None,
        });
    }
    Ok(out)
}

/// The chunks supporting the paths' relations ([`relation_chunk`]: a chunk mentioning
/// both ends), in path order then hop order, each once, scored with the best path it
/// supports: at most `slots`, within `budget` tokens (the first that does not fit is cut
/// to the tokens left when at least [`MIN_CUT_TOKENS`] are).
pub(crate) fn supporting_chunks(
    env: &QueryEnv,
    g: &Graph,
    paths: &[Path],
    slots: usize,
    budget: usize,
) -> Result<Vec<Context>> {
    let mut order: Vec<(u32, f32)> = Vec::new();
    for p in paths {
        for h in &p.hops {
            if let Some(c) = relation_chunk(g, h.rel) {
                if !order.iter().any(|x| x.0 == c) {
                    order.push((c, p.score()));
                }
            }
        }
    }
    order.truncate(slots);
    if order.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = order.iter().map(|&(c, _)| g.chunk_ids[c as usize].clone()).collect();
    let found: HashMap<String, _> = env.store.chunks(&ids)?.into_iter().map(|c| (c.chunk.id.clone(), c)).collect();
    let mut used = 0;
    let mut out = Vec::new();
    for ((_, score), id) in order.into_iter().zip(ids) {
        let Some(c) = found.get(&id) else { continue };
        let n = count_tokens(&c.chunk.text);
        let left = budget.saturating_sub(used);
        let text = if n <= left {
            c.chunk.text.clone()
        } else if left >= MIN_CUT_TOKENS {
            let end = token_spans(&c.chunk.text)[left - 1].1;
            format!("{} ...", &c.chunk.text[..end])
        } else {
            break;
        };
        used += n.min(left);
        out.push(Context {
            kind: ContextKind::Chunk,
            id,
            text,
            score,
            source: c.doc_source.clone(),
            title: c.doc_title.clone(),
            pages: c.page_ref(),
        });
        if used >= budget {
            break;
        }
    }
    Ok(out)
}
