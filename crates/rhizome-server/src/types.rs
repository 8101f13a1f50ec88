//! The server's own request and response types: bodies, query parameters and the few
//! answers that are not engine values. Engine values (documents, the graph, answers) are
//! sent as the engine's types, whose schemas the engine derives (its `openapi` feature).

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
    /// Ask only some documents: `["type=contract", "tag=bridge", "source=*.pdf",
    /// "after=2024-01-01"]`; values of one key are alternatives, different keys must all
    /// hold. A filter that matches no document is refused (400), never widened.
    pub filter: Option<Vec<String>>,
    /// Answer as server-sent events: `token` events as the answer is written, then one
    /// `done` event with the whole response.
    pub stream: Option<bool>,
}

/// A `token` event of a streamed answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenEvent {
    pub text: String,
}
