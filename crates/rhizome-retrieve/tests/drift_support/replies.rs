//! What the loopback LLM sees and says in the DRIFT tests: the kind of each request
//! (HyDE, primer fold, follow-up, reduce), the text of its prompt, and well-behaved
//! replies.

use rhizome_llm_testing::MockOpenAi;
use serde_json::Value;

use super::REPORTS;

/// Everything a chat request says, system and user parts.
pub fn prompt_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|x| x["content"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Hyde,
    Primer,
    Local,
    Reduce,
    Other,
}

pub fn kind(req: &Value) -> Kind {
    let t = prompt_text(req);
    if t.contains("hypothetical community reports") {
        Kind::Hyde
    } else if t.contains("Community reports:") {
        Kind::Primer
    } else if t.contains("Follow-up question:") {
        Kind::Local
    } else if t.contains("Findings of the earlier steps") {
        Kind::Reduce
    } else {
        Kind::Other
    }
}

pub fn of_kind(server: &MockOpenAi, k: Kind) -> Vec<String> {
    server.requests().iter().filter(|r| kind(r) == k).map(prompt_text).collect()
}

/// The follow-up question a `drift_local` prompt asks.
pub fn follow_up_of(text: &str) -> String {
    text.split("Follow-up question: ").nth(1).and_then(|s| s.lines().next()).unwrap_or("").to_string()
}

pub fn titles_in(text: &str) -> Vec<&'static str> {
    REPORTS.iter().map(|r| r.0).filter(|t| text.contains(&format!("# {t}"))).collect()
}

/// Well-behaved replies: a primer fold scores 40 + 10 per report read and asks one question
/// per report plus a shared one (in varying case); a follow-up about "Curie family" scores
/// 95, others 20; first-level follow-ups ask one more.
pub fn good_reply(req: &Value) -> String {
    let t = prompt_text(req);
    match kind(req) {
        Kind::Hyde => {
            "# Marie Curie and her research\n\nMarie Curie and Pierre Curie researched radium in Paris.".into()
        }
        Kind::Primer => {
            let titles = titles_in(t.split("Community reports:").nth(1).unwrap_or(""));
            let mut fus: Vec<String> = titles.iter().map(|t| format!("How does {t} relate to Marie Curie?")).collect();
            fus.push(if titles.len().is_multiple_of(2) {
                "Where did Marie Curie work?".into()
            } else {
                "where did marie curie WORK".into()
            });
            serde_json::json!({"intermediate_answer": format!("Primer on {}", titles.join(" + ")),
                "score": 40 + 10 * titles.len(), "follow_up_queries": fus})
            .to_string()
        }
        Kind::Local => {
            let fu = follow_up_of(&t);
            let topic = fu.strip_prefix("How does ").and_then(|s| s.split(" relate").next()).map(str::to_string);
            let score = if fu.contains("Curie family") { 95 } else { 20 };
            let more: Vec<String> = topic.iter().map(|t| format!("What else about {t}?")).collect();
            serde_json::json!({"response": format!("Answer to: {fu}"), "score": score, "follow_up_queries": more})
                .to_string()
        }
        Kind::Reduce => "FINAL ANSWER".into(),
        Kind::Other => "Marie Curie".into(),
    }
}
