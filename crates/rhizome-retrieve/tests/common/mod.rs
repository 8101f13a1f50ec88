//! The records the retrieval tests build their small indexes from: documents, chunks,
//! mentions, relations and facts as `rhizome index` would write them, an empty store for
//! an embedder, an edge list as one document without chunks (like `import edges-csv`),
//! and documents whose chunks each name their entities and relations.
#![allow(dead_code)] // each test binary uses its own part

use rhizome_core::ids::{chunk_id, document_id, entity_id, fact_id, normalize_name, relation_id};
use rhizome_core::text::count_tokens;
use rhizome_core::*;
use rhizome_store::SqliteStore;

/// (subject, relation type, object).
pub type Edge<'a> = (&'a str, &'a str, &'a str);

/// A chunk's text, the entities it names and the relations it supports.
pub type GraphChunk = (&'static str, Vec<&'static str>, Vec<Edge<'static>>);

/// An empty SQLite store in `dir` for `emb`'s vectors.
pub fn open_store(dir: &std::path::Path, emb: &dyn Embedder) -> SqliteStore {
    let mut s = SqliteStore::open(dir, true).unwrap();
    s.set_embedding_model(emb.model_id(), emb.dim()).unwrap();
    s
}

/// A document whose id is made from `key` and its text.
pub fn document(key: &str, title: &str, source: &str, text: &str) -> Document {
    Document {
        id: document_id(key, text),
        source: source.into(),
        title: title.into(),
        text: text.into(),
        pages: None,
        meta: Default::default(),
    }
}

/// The document `title` read from `TITLE.txt`.
pub fn text_document(title: &str, text: &str) -> Document {
    document(title, title, &format!("{title}.txt"), text)
}

/// Chunk `ordinal` of `doc`.
pub fn chunk(doc: &Document, ordinal: u32, text: &str, tokens: u32) -> Chunk {
    Chunk {
        id: chunk_id(&doc.id, ordinal, text),
        doc_id: doc.id.clone(),
        ordinal,
        text: text.into(),
        tokens,
        start: 0,
        end: 0,
        pages: None,
    }
}

/// Entity `name` mentioned once in `doc` (in `chunk`, when there is one).
pub fn mention(name: &str, description: String, doc: &Document, chunk: Option<&Chunk>) -> MentionRecord {
    MentionRecord {
        entity_id: entity_id(name),
        name: name.into(),
        entity_type: "ENTITY".into(),
        description,
        doc_id: doc.id.clone(),
        chunk_id: chunk.map(|c| c.id.clone()),
        count: 1,
        importance: None,
    }
}

/// The relation `(a, r, t)` of weight 1, supported by `doc_id` (and `chunk_id`).
pub fn relation((a, r, t): Edge, description: String, doc_id: &str, chunk_id: Option<&str>) -> RelationRecord {
    let (si, oi) = (entity_id(a), entity_id(t));
    RelationRecord {
        relation: Relation {
            id: relation_id(&si, r, &oi),
            source_id: si,
            target_id: oi,
            rel_type: r.into(),
            description,
            weight: 1.0,
        },
        doc_id: doc_id.into(),
        chunk_id: chunk_id.map(str::to_string),
    }
}

/// The fact `(s, p, o)`, supported by `doc_id` and `chunk_id`.
pub fn fact((s, p, o): Edge, doc_id: &str, chunk_id: &str) -> FactRecord {
    let fact = Fact {
        id: fact_id(s, p, o),
        subject: s.into(),
        predicate: p.into(),
        object: o.into(),
        subject_id: entity_id(s),
        object_id: entity_id(o),
    };
    FactRecord { fact, doc_id: doc_id.into(), chunk_id: Some(chunk_id.into()) }
}

/// `text` embedded as a passage.
pub fn passage_vector(emb: &dyn Embedder, text: &str) -> Vec<f32> {
    emb.embed(&[text.to_string()], EmbedKind::Passage).unwrap().remove(0)
}

/// `edges` as the document `edges` (`edges.csv`, text `text`) without chunks: every
/// entity they name and each of `extra` mentioned (no description) with its name's vector,
/// each edge a relation described as `a r t`.
pub fn edge_list(emb: &dyn Embedder, edges: &[Edge], extra: &[&str], text: &str) -> WriteBatch {
    let doc = document("edges", "edges", "edges.csv", text);
    let mut b = WriteBatch::default();
    let mut names: Vec<&str> = edges.iter().flat_map(|e| [e.0, e.2]).collect();
    names.extend(extra);
    names.sort();
    names.dedup();
    for n in &names {
        b.mentions.push(mention(n, String::new(), &doc, None));
    }
    let vecs = emb.embed(&names.iter().map(|n| normalize_name(n)).collect::<Vec<_>>(), EmbedKind::Passage).unwrap();
    for (n, v) in names.iter().zip(vecs) {
        b.vectors.push((VectorKind::Entity, entity_id(n), v));
    }
    for &(a, r, t) in edges {
        b.relations.push(relation((a, r, t), format!("{a} {r} {t}"), &doc.id, None));
    }
    b.documents.push(doc);
    b
}

/// The document `title` made of `chunks` (its text theirs joined by spaces): each chunk's
/// entities mentioned ("E appears in TITLE", the name's vector) and its relations,
/// described by `describe(a, r, t)`.
pub fn graph_document(
    emb: &dyn Embedder,
    title: &str,
    chunks: &[GraphChunk],
    describe: impl Fn(&str, &str, &str) -> String,
) -> WriteBatch {
    let body = chunks.iter().map(|c| c.0).collect::<Vec<_>>().join(" ");
    let doc = text_document(title, &body);
    let mut b = WriteBatch::default();
    for (i, (text, ents, rels)) in chunks.iter().enumerate() {
        let c = chunk(&doc, i as u32, text, count_tokens(text) as u32);
        for e in ents {
            b.mentions.push(mention(e, format!("{e} appears in {title}"), &doc, Some(&c)));
            b.vectors.push((VectorKind::Entity, entity_id(e), passage_vector(emb, &normalize_name(e))));
        }
        for &(a, r, t) in rels {
            b.relations.push(relation((a, r, t), describe(a, r, t), &doc.id, Some(&c.id)));
        }
        b.chunks.push(c);
    }
    b.documents.push(doc);
    b
}

/// The document `title` (id from `key`, read from `KEY.txt`) as one chunk of `tokens`
/// tokens with its passage vector, naming `entities` (no description).
pub fn one_chunk(emb: &dyn Embedder, key: &str, title: &str, text: &str, tokens: u32, entities: &[&str]) -> WriteBatch {
    let doc = document(key, title, &format!("{key}.txt"), text);
    let c = chunk(&doc, 0, text, tokens);
    let mut b = WriteBatch::default();
    for n in entities {
        b.mentions.push(mention(n, String::new(), &doc, Some(&c)));
    }
    b.vectors.push((VectorKind::Chunk, c.id.clone(), passage_vector(emb, text)));
    b.chunks.push(c);
    b.documents.push(doc);
    b
}
