//! Request and response types of the API. Responses that come from the engine are
//! re-read into these types ([`crate::error::mirror`]), so the OpenAPI document generated
//! from them is the JSON actually sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// `GET /health`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// Documents in the index (0 before the first upload).
    pub documents: u64,
    /// The server's version.
    pub version: String,
    /// True when every other route needs an API key (the web UI asks for one up front).
    pub key_required: bool,
}

/// Nodes per label and edges per type (as `rhizome stats --json`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsOut {
    pub nodes: BTreeMap<String, u64>,
    pub edges: BTreeMap<String, u64>,
}

/// One document given as text.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TextDocument {
    #[serde(default)]
    pub title: String,
    pub text: String,
}

/// `POST /documents` with a JSON body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentsBody {
    /// At most 10,000 (`MAX_UPLOAD_DOCUMENTS`) per upload.
    #[serde(deserialize_with = "bounded_documents")]
    pub documents: Vec<TextDocument>,
}

/// Documents (or files) one upload may hold: refused while parsing beyond it, so that a
/// body of millions of tiny documents does not become millions of records in memory and a
/// job that holds the writer for hours.
pub const MAX_UPLOAD_DOCUMENTS: usize = 10_000;

fn bounded_documents<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<TextDocument>, D::Error> {
    struct Bounded;
    impl<'de> serde::de::Visitor<'de> for Bounded {
        type Value = Vec<TextDocument>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {MAX_UPLOAD_DOCUMENTS} documents")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(doc) = seq.next_element()? {
                if out.len() == MAX_UPLOAD_DOCUMENTS {
                    return Err(serde::de::Error::custom(format_args!(
                        "more than {MAX_UPLOAD_DOCUMENTS} documents in one upload: send them in several"
                    )));
                }
                out.push(doc);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Bounded)
}

/// A write accepted: follow it at `GET /jobs/{id}` (or its `/events`).
#[derive(Debug, Serialize, ToSchema)]
pub struct Accepted {
    pub job_id: u64,
}

/// A page of `GET /documents`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocumentsQuery {
    /// Part of a title or source.
    pub search: Option<String>,
    #[serde(default)]
    pub offset: usize,
    /// At most 1000 (default 50).
    pub limit: Option<usize>,
}

/// A document in a list.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentSummaryOut {
    pub id: String,
    pub title: String,
    pub source: String,
    /// `en`, `vi`, `zh`.
    pub language: Option<String>,
    pub chunks: u64,
    /// Distinct entities mentioned in it.
    pub entities: u64,
    /// Seconds since the Unix epoch.
    pub indexed_at: Option<u64>,
    /// Still being written in parts.
    pub partial: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentList {
    pub total: u64,
    pub offset: usize,
    pub documents: Vec<DocumentSummaryOut>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentOut {
    pub id: String,
    pub source: String,
    pub title: String,
    pub text: String,
}

/// `GET /documents/{id}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentDetailOut {
    pub document: DocumentOut,
    pub summary: Option<DocumentSummaryOut>,
    /// Chunks in order (`id`, `doc_id`, `ordinal`, `text`, ...).
    #[schema(value_type = Vec<Object>)]
    pub chunks: Vec<Value>,
    /// Entities mentioned in it, most mentioned first.
    pub entities: Vec<GraphNodeOut>,
}

/// An entity as a graph viewer draws it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphNodeOut {
    pub id: String,
    pub name: String,
    pub entity_type: String,
    /// RELATED edges at this entity.
    pub degree: usize,
    /// Its leaf community, for colouring.
    pub community: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphEdgeOut {
    pub id: String,
    pub source: String,
    pub target: String,
    /// `RELATED` or `SYNONYM`.
    pub kind: String,
    pub rel_type: String,
    pub weight: f32,
}

/// `GET /graph/neighbourhood`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubgraphOut {
    pub center: String,
    pub nodes: Vec<GraphNodeOut>,
    pub edges: Vec<GraphEdgeOut>,
    /// More nodes were in reach than `max_nodes`.
    pub truncated: bool,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EntitiesQuery {
    /// The start of a name or of a word of it (case and diacritics ignored).
    pub q: String,
    /// At most 200 (default 20).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NeighbourhoodQuery {
    /// An entity id, or a name.
    pub entity: String,
    /// RELATED hops, 0 to 4 (default 1).
    pub depth: Option<usize>,
    /// At most 5000 (default 50).
    pub max_nodes: Option<usize>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EntityQuery {
    /// Mentioning chunks returned, at most 100 (default 10).
    pub max_mentions: Option<usize>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CommunitiesQuery {
    /// Only this level (0 = top).
    pub level: Option<u32>,
}

/// A chunk that mentions an entity.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MentionOut {
    pub chunk_id: String,
    pub doc_id: String,
    pub title: String,
    pub source: String,
    pub text: String,
    pub count: u32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AliasOut {
    pub name: String,
    pub similarity: f32,
}

/// A community with its report.
#[derive(Debug, Serialize, ToSchema)]
pub struct CommunityOut {
    /// `id`, `level`, `parent`, `children`, `entity_ids`, ...
    #[schema(value_type = Object)]
    pub community: Value,
    /// `title`, `summary`, `findings`, `rating`, `kind`, ...
    #[schema(value_type = Object)]
    pub report: Option<Value>,
}

/// `GET /graph/entities/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntityDetailOut {
    /// `id`, `name`, `entity_type`, `description`, ...
    #[schema(value_type = Object)]
    pub entity: Value,
    pub degree: usize,
    /// SYNONYM neighbours.
    pub aliases: Vec<AliasOut>,
    pub mentions: Vec<MentionOut>,
    pub communities: Vec<CommunityOut>,
}

/// A message of a chat history.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    /// `user`, `assistant` or `system`.
    pub role: String,
    pub content: String,
}

/// `POST /query`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryBody {
    pub question: String,
    /// A retrieval method as the CLI names it (`basic`, `hippo`, ...); default `auto`.
    pub method: Option<String>,
    /// Contexts to return (default `retrieval.top_k`).
    pub top_k: Option<usize>,
    /// Settings for this question only: `section.key` -> number, string or boolean,
    /// e.g. `{"hippo.damping": 0.5}`.
    #[schema(value_type = Object)]
    pub params: Option<serde_json::Map<String, Value>>,
    /// Earlier messages, oldest first: a follow-up is rewritten as a self-contained question.
    pub history: Option<Vec<HistoryMessage>>,
    /// Answer as server-sent events: `token` events as the answer is written, then one
    /// `done` event with the whole response.
    pub stream: Option<bool>,
}

/// A piece of evidence with where it came from.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextOut {
    /// `chunk`, `entity`, `relation`, `fact`, `path`, `report`, ...
    pub kind: String,
    pub id: String,
    pub text: String,
    pub score: f32,
    /// The document source.
    pub source: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
}

/// The answer with its evidence (as `rhizome query --json`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryResponse {
    pub question: String,
    /// The question retrieval used, when a follow-up was rewritten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standalone_question: Option<String>,
    pub method: String,
    /// Cites contexts as `[n]`.
    pub answer: String,
    /// `llm`, `extractive` or `none`.
    pub answer_kind: String,
    pub contexts: Vec<ContextOut>,
    pub paths: Vec<String>,
    pub notes: Vec<String>,
    #[schema(value_type = Object)]
    pub extra: BTreeMap<String, Value>,
    pub timings_ms: BTreeMap<String, f64>,
}

/// A `token` event of a streamed answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenEvent {
    pub text: String,
}

/// A retrieval method and the settings it reads, with their values on this server.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MethodInfoOut {
    pub name: String,
    pub description: String,
    pub params: Vec<MethodParamOut>,
}

/// A setting a query may change (`params` of `POST /query`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MethodParamOut {
    /// `section.key`, as in the config file.
    pub key: String,
    /// Its value on this server (the default a query starts from).
    #[schema(value_type = Object)]
    pub value: Value,
    /// The values it accepts.
    pub valid: String,
}

/// A file type the server indexes (`GET /formats`): one row of the loader registry.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FormatOut {
    pub kind: FormatKind,
    /// File name extensions, lower case without the dot (`txt`); an upload is recognised
    /// by the extension of its file name, in any case.
    pub extensions: Vec<String>,
    /// The media type (MIME), e.g. `text/plain`.
    pub media_type: String,
    /// What it is, for people.
    pub description: String,
}

/// What a file of a format holds: documents (one per file, or many in a corpus) or an
/// edge list, imported into the graph.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FormatKind {
    Text,
    Markdown,
    Html,
    JsonCorpus,
    JsonLinesCorpus,
    EdgeList,
}
