//! The tools: what each is for (its description is what a model reads when it chooses
//! between them), its input schema, and whether it writes. One table: `tools/list` and
//! `tools/call` both read it.

use std::borrow::Cow;
use std::sync::Arc;

use rhizome_engine::Method;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// The search tools, one per family of retrieval methods: (tool, default method, methods).
pub const FAMILIES: &[(&str, &str, &[&str])] = &[
    ("search_passages", "basic", &["basic", "dense", "chunk-only", "hybrid"]),
    ("search_graph", "hippo", &["hippo", "local", "multihop", "multipath", "tog", "entity-only", "graph-enhanced"]),
    ("search_themes", "global", &["global", "drift"]),
];

/// One tool of the table.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Changes the index (refused, and not listed, for a read-only key).
    pub writes: bool,
    schema: fn() -> Value,
}

impl ToolSpec {
    pub fn tool(&self) -> Tool {
        let schema: JsonObject = match (self.schema)() {
            Value::Object(o) => o,
            _ => JsonObject::new(),
        };
        let hints = ToolAnnotations::with_title(self.title)
            .read_only(!self.writes)
            .destructive(self.name == "delete_document")
            .idempotent(!self.writes || self.name == "delete_document")
            .open_world(false);
        Tool::new(Cow::Borrowed(self.name), Cow::Borrowed(self.description), Arc::new(schema))
            .with_title(self.title)
            .with_annotations(hints)
    }
}

/// Every tool, in the order they are listed.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search_passages",
        title: "Search passages",
        description: "Find the passages of the indexed documents that best match a question or keywords \
            (dense vectors and BM25, fused). Use it first for a fact stated in one place. Returns numbered \
            passages with their document, page and score; no answer is written.",
        writes: false,
        schema: || search_schema("basic", FAMILIES[0].2),
    },
    ToolSpec {
        name: "search_graph",
        title: "Search the knowledge graph",
        description: "Search through the knowledge graph built from the documents: entities, their relations \
            and the passages that connect them. Use it for questions that join several facts (who founded \
            the company that bought X?) or ask about an entity's connections. `hippo` (default) ranks \
            passages by Personalized PageRank from the question's entities; `local` gathers an entity's \
            relations, claims and community summaries; `multihop` and `tog` follow paths between entities.",
        writes: false,
        schema: || search_schema("hippo", FAMILIES[1].2),
    },
    ToolSpec {
        name: "search_themes",
        title: "Search themes",
        description: "Answer-oriented search over community reports (summaries of groups of related \
            entities). Use it for broad questions about the whole collection: main themes, trends, \
            what the documents say overall. `global` maps and reduces over the reports; `drift` starts \
            from them and then searches locally.",
        writes: false,
        schema: || search_schema("global", FAMILIES[2].2),
    },
    ToolSpec {
        name: "answer",
        title: "Answer with citations",
        description: "Write an answer to a question from the indexed documents, citing its evidence as [n] \
            with the documents and pages listed. Uses the server's LLM when one is configured, else an \
            extractive answer (the best sentences). `method` picks the retrieval (default `auto`: chosen \
            by analysing the question).",
        writes: false,
        schema: || {
            let mut s = search_schema("auto", &[]);
            s["properties"]["method"] = json!({"type": "string", "default": "auto",
                "description": "Any retrieval method (see index_status), or `auto`."});
            s
        },
    },
    ToolSpec {
        name: "find_entity",
        title: "Look up an entity",
        description: "Look up an entity of the knowledge graph by name (or the start of it): its type, \
            description, other names, claims about it, the passages that mention it and its neighbours \
            (the relations around it, `depth` steps out).",
        writes: false,
        schema: || {
            json!({"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "description": "The entity's name or its beginning, any script."},
                "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1,
                    "description": "Steps of relations to follow for the neighbourhood."},
                "max_neighbours": {"type": "integer", "minimum": 1, "maximum": 200, "default": 30}
            }})
        },
    },
    ToolSpec {
        name: "list_documents",
        title: "List documents",
        description: "List the indexed documents with their id, title, source, type, summary and hashtags. \
            `search` matches titles and sources; page through with `offset`.",
        writes: false,
        schema: || {
            json!({"type": "object", "properties": {
                "search": {"type": "string", "description": "Part of a title or source."},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
            }})
        },
    },
    ToolSpec {
        name: "read_document",
        title: "Read a document",
        description: "Read one indexed document's text and what is known about it (type, summary, author, \
            dates, pages), by id or source as list_documents gives them. Long texts come in parts: \
            continue with `offset`.",
        writes: false,
        schema: || {
            json!({"type": "object", "required": ["document"], "properties": {
                "document": {"type": "string", "description": "A document id (doc_...) or its source."},
                "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "First character to return."},
                "max_chars": {"type": "integer", "minimum": 100, "maximum": 200000, "default": 20000}
            }})
        },
    },
    ToolSpec {
        name: "index_status",
        title: "Index status",
        description: "What the index holds (documents, chunks, entities, relations, facts, communities), its \
            embedding model, whether an LLM is configured, and the retrieval methods with what each does.",
        writes: false,
        schema: || json!({"type": "object", "properties": {}}),
    },
    ToolSpec {
        name: "add_text",
        title: "Add a text",
        description: "Add a text to the index as a document (extracted, embedded and linked into the graph \
            before this returns). The same text added again is not indexed twice.",
        writes: true,
        schema: || {
            json!({"type": "object", "required": ["title", "text"], "properties": {
                "title": {"type": "string", "description": "The document's title; its source is `upload:TITLE`."},
                "text": {"type": "string"}
            }})
        },
    },
    ToolSpec {
        name: "add_file",
        title: "Add a file",
        description: "Add a file to the index: PDF, Word, PowerPoint, spreadsheets, e-books, e-mail, HTML, \
            Markdown, text, images (OCR) or a .csv edge list. Give its name (with the extension) and its \
            content in base64.",
        writes: true,
        schema: || {
            json!({"type": "object", "required": ["name", "content_base64"], "properties": {
                "name": {"type": "string", "description": "The file name, e.g. report.pdf."},
                "content_base64": {"type": "string", "description": "The file's bytes, base64-encoded."}
            }})
        },
    },
    ToolSpec {
        name: "delete_document",
        title: "Delete a document",
        description: "Delete a document from the index by id or source: its passages, and every entity, \
            relation, fact and claim only it supported, as if it had never been indexed.",
        writes: true,
        schema: || {
            json!({"type": "object", "required": ["document"], "properties": {
                "document": {"type": "string", "description": "A document id (doc_...) or its source."}
            }})
        },
    },
];

/// The tool of this name.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

fn search_schema(default: &str, methods: &[&str]) -> Value {
    let mut method = json!({"type": "string", "default": default});
    if !methods.is_empty() {
        method["enum"] = json!(methods);
    }
    json!({"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "The question or keywords, in any language of the documents."},
        "method": method,
        "top_k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 5,
            "description": "How many results."},
        "filter": {"type": "array", "items": {"type": "string"},
            "description": "Only some documents: type=T, tag=T, source=GLOB, after=YYYY-MM-DD, before=YYYY-MM-DD, \
                lang=L. Values of one key are alternatives; different keys must all hold."}
    }})
}

/// The method a search tool runs: the one asked for when it belongs to the tool's family.
pub fn family_method(tool: &str, asked: Option<&str>) -> Result<Method, String> {
    let (_, default, members) =
        FAMILIES.iter().find(|f| f.0 == tool).ok_or_else(|| format!("{tool} is not a search tool"))?;
    let name = asked.map(str::trim).filter(|m| !m.is_empty()).unwrap_or(default);
    let method: Method = name.parse()?;
    if !members.contains(&method.as_str()) {
        let other = FAMILIES.iter().find(|f| f.2.contains(&method.as_str())).map_or("answer", |f| f.0);
        return Err(format!("{tool} runs {}; for {method} use {other}", members.join(", ")));
    }
    Ok(method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_in_one_family_and_auto_is_answers() {
        for m in Method::ALL {
            let homes = FAMILIES.iter().filter(|f| f.2.contains(&m.as_str())).count();
            let want = usize::from(*m != Method::Auto);
            assert_eq!(homes, want, "{m}");
        }
        for (tool, default, members) in FAMILIES {
            assert!(members.contains(default), "{tool}");
            assert!(spec(tool).is_some(), "{tool}");
        }
    }

    #[test]
    fn a_method_of_another_family_is_refused_by_name() {
        assert_eq!(family_method("search_graph", None).unwrap(), Method::Hippo);
        assert_eq!(family_method("search_graph", Some("local")).unwrap(), Method::Local);
        let e = family_method("search_passages", Some("global")).unwrap_err();
        assert!(e.contains("search_themes"), "{e}");
        assert!(family_method("search_passages", Some("nope")).unwrap_err().contains("unknown method"));
    }

    #[test]
    fn every_schema_is_an_object_and_writes_are_marked() {
        for t in TOOLS {
            let tool = t.tool();
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
            assert!(t.description.len() > 60, "{}: say what it is for", t.name);
        }
        let writes: Vec<&str> = TOOLS.iter().filter(|t| t.writes).map(|t| t.name).collect();
        assert_eq!(writes, ["add_text", "add_file", "delete_document"]);
    }
}
