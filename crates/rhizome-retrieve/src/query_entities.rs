//! The entities a question is about, found at query time.
//!
//! With an LLM: the `query_entities` prompt lists the proper nouns of the question; names
//! the question does not contain are dropped (the model must not add or answer), and an
//! unusable reply falls back to the rules below with a note.
//!
//! Without an LLM, the rules, in order of trust:
//! 1. graph names: runs of question words (or CJK characters) that equal an entity name of
//!    the graph once case, diacritics and punctuation are ignored ("Aage Bohr doat ..."
//!    finds `Aage Bohr`, "dai hoc Copenhagen" finds `Đại học Copenhagen`); longest first,
//!    not overlapping; a run without a capitalised word, number or CJK is skipped (a common
//!    noun, not a name), unless the question is typed all in lowercase (then only single
//!    lowercase words are); so is a bare number (a year is not a name), and a run cutting
//!    a capitalised span of rule 2 ("Series" in "World Series");
//! 2. capitalised spans not overlapping those ("Tập đoàn Vingroup", "FIFA World Cup"):
//!    capitalised words and numbers; one lowercase word (or `of`, `de`, ...) after a single
//!    capitalised word bridges to the next capitalised word ("Tập đoàn Vingroup",
//!    "University of Copenhagen", but "Nguyễn Du" and "Truyện Kiều" apart in "Nguyễn Du
//!    viết Truyện Kiều"); a span never starts with a stop word ("Who", "Ai");
//! 3. Chinese words jieba tags as names (`nr`, `ns`, `nt`, `nz`) not overlapping those;
//! 4. only when 1 to 3 found nothing: Chinese nouns (jieba), else runs of CJK characters
//!    split at stop words.
//!
//! Callers embed the names and search the entity vectors; the whole question is their
//! fallback when no name is found.
//!
//! Layout: `tokens` (a question as tokens, and name folding), `rules` (the LLM-free
//! recogniser), `llm` (the LLM's reply parsed into names); this file picks between them.

mod llm;
mod rules;
#[cfg(test)]
mod tests;
mod tokens;

use rhizome_core::ids::normalize_name;
use rhizome_core::llm::PromptCall;

pub(crate) use self::llm::parse_llm_names;
pub(crate) use self::rules::rule_based;
pub(crate) use self::tokens::fold;
use crate::graph::Graph;
use crate::QueryEnv;

/// The question's entities and how they were found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryEntities {
    /// Names, in question order, distinct once folded.
    pub names: Vec<String>,
    /// `llm` or `rules`.
    pub by: &'static str,
}

/// The whole graph when it is held or small ([`QueryEnv::whole_graph`]; None: the method
/// reads neighbourhoods), and the entities of `question`, each step timed in `out`.
pub(crate) fn whole_graph_and_entities(
    env: &QueryEnv,
    question: &str,
    stage: &str,
    out: &mut crate::Retrieval,
) -> rhizome_core::Result<(Option<std::sync::Arc<Graph>>, QueryEntities)> {
    let g = crate::timed(&mut out.timings_ms, "graph", || env.whole_graph())?;
    let names = match &g {
        Some(g) => Names::Graph(g),
        None => Names::Index(env),
    };
    let qe =
        crate::timed(&mut out.timings_ms, "query_entities", || recognise(env, names, question, stage, &mut out.notes));
    Ok((g, qe))
}

/// Where the rules look a question's names up: the graph, or the index's names read
/// once per graph version ([`crate::GraphCache::names`]).
pub(crate) enum Names<'a> {
    Graph(&'a Graph),
    Index(&'a QueryEnv<'a>),
}

impl Names<'_> {
    fn rules(&self, question: &str, notes: &mut Vec<String>) -> Vec<String> {
        match self {
            Names::Graph(g) => rule_based(*g, question),
            Names::Index(env) => match env.graph.names(env.store) {
                Ok(index) => rule_based(&*index, question),
                Err(e) => {
                    notes.push(format!("entity names could not be read ({e}): question names found without them"));
                    rule_based(&crate::graph::NameIndex::default(), question)
                }
            },
        }
    }
}

/// Find the entities of `question`: with `env.llm`, through the `query_entities` prompt
/// (stage `stage`); otherwise, or when the LLM fails or answers garbage, by the rules.
/// What was skipped or fell back is pushed to `notes`.
pub(crate) fn recognise(
    env: &QueryEnv,
    g: Names,
    question: &str,
    stage: &str,
    notes: &mut Vec<String>,
) -> QueryEntities {
    let Some(llm) = env.llm else {
        notes.push(
            "no LLM configured: question entities found by rules (graph names, \
            capitalised spans, Chinese words)"
                .into(),
        );
        return QueryEntities { names: g.rules(question, notes), by: "rules" };
    };
    let call = PromptCall::new("query_entities", stage, &[("question", question)]).max_tokens(200);
    match llm.run_one(call) {
        Ok(reply) => match parse_llm_names(&reply, question) {
            Some(names) => QueryEntities { names, by: "llm" },
            None => {
                let shown: String = reply.chars().take(80).collect();
                notes.push(format!(
                    "LLM query_entities reply unusable ({shown:?}): question \
                    entities found by rules instead"
                ));
                QueryEntities { names: g.rules(question, notes), by: "rules" }
            }
        },
        Err(e) => {
            notes.push(format!(
                "LLM query_entities call failed ({e}): question entities \
                found by rules instead"
            ));
            QueryEntities { names: g.rules(question, notes), by: "rules" }
        }
    }
}

/// The text embedded for a name: its normalised form, as entity names are embedded.
pub(crate) fn embed_text(name: &str) -> String {
    normalize_name(name)
}
