//! Targets: every parser of model output, fed replies a model could send (real gpt-4o
//! replies from the shared fixtures, mutated): extraction records (JSON and tuples), name
//! lists, the query analysis and follow-up rewrite, the ToG, DRIFT, global-map, HippoRAG
//! filter, rerank and query-entity replies, and community reports.

use rhizome_core::ids::normalize_name;
use rhizome_core::llm::{ChatMessage, PromptCall, PromptLlm};
use rhizome_core::{Community, Result as CoreResult};

use crate::seeds::{model_replies, strs};
use crate::{text, Target};

const REPLY: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "```json\n",
    "```",
    "\n",
    "<|>",
    "##",
    "<|COMPLETE|>",
    "(\"entity\"",
    "(\"relationship\"",
    "\"entities\"",
    "\"relations\"",
    "\"facts\"",
    "\"name\"",
    "\"type\"",
    "\"source\"",
    "\"target\"",
    "\"weight\"",
    "\"strength\"",
    "\"description\"",
    "\"score\"",
    "\"points\"",
    "\"sufficient\"",
    "\"answer\"",
    "\"intermediate_answer\"",
    "\"follow_up_queries\"",
    "\"title\"",
    "\"summary\"",
    "\"rating\"",
    "\"findings\"",
    "\"explanation\"",
    "\"keep\"",
    "\"scores\"",
    "\"query_type\"",
    "\"complexity\"",
    "\"key_concepts\"",
    "\"standalone\"",
    "\"is_follow_up\"",
    "\"multi_hop\"",
    "true",
    "false",
    "null",
    "\"yes\"",
    "1e309",
    "-5",
    "101",
    "NaN",
    "0.5",
    "\"7/10\"",
    "85%",
    "Names:",
    "NONE",
    "1.",
    "- ",
    "、",
    "；",
    "Here is the JSON:",
    "'",
    "{\"sufficient\": true, \"answer\": \"x\"}",
    "{\"1\": 0.9, \"2\": \"0.3\"}",
    "[3, 1, 2]",
];

/// A model that answers every prompt with the input.
struct Reply(String);

impl PromptLlm for Reply {
    fn id(&self) -> String {
        "fuzz/reply".into()
    }
    fn run(&self, calls: &[PromptCall]) -> Vec<CoreResult<String>> {
        calls.iter().map(|_| Ok(self.0.clone())).collect()
    }
}

fn extraction_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        r#"{"entities": [{"name": "Alpha", "type": "PERSON", "description": "a"}], "relations": [{"source": "Alpha", "target": "Beta", "type": "KNOWS", "strength": 8}], "facts": [{"subject": "Alpha", "predicate": "knows", "object": "Beta"}]}"#,
        "```json\n{\"entities\": [{\"name\": \"A\"}, \n",
        "(\"entity\"<|>\"ALPHA\"<|>\"person\"<|>\"desc\")##\n(\"relationship\"<|>\"ALPHA\"<|>\"BETA\"<|>\"knows\"<|>9)##<|COMPLETE|>",
        "Here you go: {\"entities\": []} and also {\"relations\": [{\"source\": \"\", \"target\": null}]}",
        "",
    ]);
    s.extend(model_replies(24, 6000));
    s
}

fn other_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        r#"{"points": [{"description": "Alpha leads [Data: Reports (1, 2)]", "score": 80}]}"#,
        r#"{"scores": {"1": 0.9, "2": "0.4", "7": 2}}"#,
        r#"[{"id": 1, "score": 0.5}, {"id": "2", "score": "high"}]"#,
        r#"{"sufficient": "yes", "answer": "Copenhagen"}"#,
        r#"{"keep": [1, "3", 99, 1]}"#,
        "[3, 1, 2]",
        "Ranking: 2 > 1 > 5",
        "Names: Aage Bohr, Niels Bohr; Copenhagen、Nobel",
        "NONE",
        r#"{"intermediate_answer": "x", "score": 70, "follow_up_queries": ["a", 5, null]}"#,
        r#"{"query_type": "factual", "complexity": 0.4, "key_concepts": ["Bohr"], "requires_reasoning": "true", "multiple_sources": 1, "multi_hop": false}"#,
        r#"{"standalone": "Where was Aage Bohr born?", "is_follow_up": true}"#,
        r#"{"title": "Bohr family", "summary": "s", "rating": "8.5", "rating_explanation": "e", "findings": [{"summary": "f", "explanation": "g"}, "plain", 3]}"#,
        r#"[{"role": "user", "content": "Who is Aage Bohr?"}, {"role": "assistant", "content": "A physicist."}]"#,
    ]);
    s.extend(model_replies(12, 6000).into_iter().rev());
    s
}

fn extraction(input: &[u8]) -> Result<(), String> {
    let reply = text(input);
    let schema = rhizome_llm::parse::default_schema();
    for schema in [&schema[..], &["PERSON".to_string()][..]] {
        let out = rhizome_llm::parse::parse_extraction(&reply, schema);
        let names: std::collections::HashSet<String> =
            out.extraction.entities.iter().map(|e| normalize_name(&e.name)).collect();
        for r in &out.extraction.relations {
            if !names.contains(&normalize_name(&r.source)) || !names.contains(&normalize_name(&r.target)) {
                return Err(format!("relation {:?} -> {:?} has an end that is not an entity", r.source, r.target));
            }
            if !(0.0..=1.0).contains(&r.weight) {
                return Err(format!("relation weight {} outside 0..1", r.weight));
            }
        }
    }
    let _ = rhizome_llm::parse::parse_name_list(&reply);
    let _ = rhizome_llm::parse::json_object_lenient(&reply);
    Ok(())
}

const QUESTIONS: [&str; 4] = [
    "Who is Aage Bohr?",
    "Aage Bohr có những giải thưởng gì?",
    "Sam Altman领导的公司在AI领域有什么重要投资？",
    "And where was he born?",
];

fn replies(input: &[u8]) -> Result<(), String> {
    let n = input.first().map_or(3, |b| *b as usize % 12);
    let question = QUESTIONS[input.get(1).map_or(0, |b| *b as usize % QUESTIONS.len())];
    let reply = text(input.get(2..).unwrap_or(&[]));
    let _ = rhizome_retrieve::fuzzing::reply_parsers(&reply, n, question);
    Ok(())
}

/// Query analysis and the follow-up rewrite with a model answering the input, and the
/// chat-history reader on the input.
fn analysis(input: &[u8]) -> Result<(), String> {
    let reply = text(input);
    let llm = Reply(reply.clone());
    let history = vec![ChatMessage::user("Who is Aage Bohr?"), ChatMessage::assistant("A Danish physicist.")];
    for q in QUESTIONS {
        let _ = rhizome_retrieve::analyze::analyze(q, &history, Some(&llm));
        let _ = rhizome_retrieve::analyze::standalone_question(q, &history, Some(&llm));
    }
    let _ = rhizome_retrieve::analyze::analyze(&reply, &history, None);
    let _ = rhizome_retrieve::analyze::parse_history("fuzz input", &reply);
    Ok(())
}

fn report(input: &[u8]) -> Result<(), String> {
    let community = Community {
        id: "com_fuzz".into(),
        level: 0,
        parent: None,
        children: Vec::new(),
        title: "Community 1".into(),
        entity_ids: vec!["ent_a".into(), "ent_b".into()],
        fingerprint: "f".into(),
    };
    if let Ok(r) = rhizome_community::report_llm::parse_report(&text(input), &community) {
        if !r.rating.is_finite() {
            return Err(format!("report rating {} is not a number", r.rating));
        }
    }
    Ok(())
}

pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "llm_extraction",
            what: "parse_extraction (JSON repair, tuples, records), name lists, lenient objects",
            max_len: 32 << 10,
            dict: REPLY,
            seeds: extraction_seeds,
            run: extraction,
            min_time_limit_s: 0,
        },
        Target {
            name: "llm_replies",
            what: "ToG prune/judge, DRIFT step, global map points, HippoRAG filter, rerank, query entities",
            max_len: 16 << 10,
            dict: REPLY,
            seeds: other_seeds,
            run: replies,
            min_time_limit_s: 0,
        },
        Target {
            name: "llm_query_analysis",
            what: "query analysis and follow-up rewrite with the input as the model's reply; chat history",
            max_len: 8 << 10,
            dict: REPLY,
            seeds: other_seeds,
            run: analysis,
            min_time_limit_s: 0,
        },
        Target {
            name: "llm_community_report",
            what: "community report replies",
            max_len: 16 << 10,
            dict: REPLY,
            seeds: other_seeds,
            run: report,
            min_time_limit_s: 0,
        },
    ]
}
