//! Question-set readers. The format is recognised from the first question's fields:
//! MuSiQue has `paragraphs[]{title, paragraph_text, is_supporting}`; HotpotQA and 2Wiki
//! have `supporting_facts[[title, sentence_id]]` and `context[[title, [sentences]]]`.

use std::path::Path;

use rhizome_core::text::nfc;
use rhizome_core::{Error, Result};
use serde_json::Value;

/// A supporting passage: its title, and its text when the format gives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PassageKey {
    pub title: String,
    pub text: Option<String>,
}

impl PassageKey {
    /// Does a retrieved document (title, text) match this passage? Compared in NFC, as
    /// documents are indexed.
    pub fn matches(&self, title: &str, text: &str) -> bool {
        if nfc(self.title.trim()) != nfc(title.trim()) {
            return false;
        }
        match &self.text {
            Some(t) => squash(t) == squash(text),
            None => true,
        }
    }
}

fn squash(s: &str) -> String {
    nfc(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

#[derive(Debug, Clone)]
pub struct Question {
    pub id: String,
    pub question: String,
    /// The answer and its aliases.
    pub answers: Vec<String>,
    pub supporting: Vec<PassageKey>,
}

/// Read a question file in any of the supported formats.
pub fn load_questions(path: &Path) -> Result<Vec<Question>> {
    let src = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::bad_input(&src, format!("invalid JSON at line {} column {}: {e}", e.line(), e.column())))?;
    let list = v.as_array().ok_or_else(|| {
        Error::bad_input(&src, "expected a JSON list of questions (MuSiQue, HotpotQA or 2Wiki format)")
    })?;
    let mut out = Vec::with_capacity(list.len());
    for (i, q) in list.iter().enumerate() {
        let question = q
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::bad_input(&src, format!("question {i} has no \"question\" text")))?;
        let id = q
            .get("id")
            .or_else(|| q.get("_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| i.to_string());
        let mut answers: Vec<String> = Vec::new();
        if let Some(a) = q.get("answer").and_then(Value::as_str) {
            answers.push(a.to_string());
        }
        for a in q.get("answer_aliases").and_then(Value::as_array).into_iter().flatten() {
            answers.extend(a.as_str().map(str::to_string));
        }
        let supporting = if let Some(ps) = q.get("paragraphs").and_then(Value::as_array) {
            ps.iter()
                .filter(|p| p.get("is_supporting").and_then(Value::as_bool) == Some(true))
                .map(|p| PassageKey {
                    title: p.get("title").and_then(Value::as_str).unwrap_or("").to_string(),
                    text: p.get("paragraph_text").and_then(Value::as_str).map(str::to_string),
                })
                .collect()
        } else if let Some(sf) = q.get("supporting_facts").and_then(Value::as_array) {
            let mut keys: Vec<PassageKey> = Vec::new();
            for f in sf {
                let title = f.get(0).and_then(Value::as_str).unwrap_or("").to_string();
                let key = PassageKey { title, text: None };
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            keys
        } else {
            return Err(Error::bad_input(
                &src,
                format!("question {i} has neither \"paragraphs\" (MuSiQue) nor \"supporting_facts\" (HotpotQA, 2Wiki)"),
            ));
        };
        // In NFC, as documents are indexed and as `query` reads its question.
        out.push(Question { id, question: nfc(question).into_owned(), answers, supporting });
    }
    Ok(out)
}
