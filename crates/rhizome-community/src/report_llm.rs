//! Reading a community report from an LLM reply. Replies are untrusted: fences, prose,
//! truncation, strings for numbers, findings as plain strings are all accepted; a reply
//! with neither a summary nor a finding is rejected (the caller falls back to an
//! extractive report and counts the failure).

use rhizome_core::{Community, CommunityReport, Finding, ReportKind};
use serde_json::{Map, Value};

fn text(o: &Map<String, Value>, keys: &[&str]) -> String {
    keys.iter()
        .find_map(|k| o.get(*k))
        .map(|v| match v {
            Value::String(s) => s.trim().to_string(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

fn rating(v: Option<&Value>) -> Option<f32> {
    let x = match v? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().split(|c: char| c == '/' || c.is_whitespace()).next()?.parse().ok()?,
        _ => return None,
    };
    x.is_finite().then(|| x.clamp(0.0, 10.0) as f32)
}

fn findings(v: Option<&Value>) -> Vec<Finding> {
    let Some(Value::Array(items)) = v else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(s) if !s.trim().is_empty() => {
                Some(Finding { summary: s.trim().to_string(), explanation: String::new() })
            }
            Value::Object(o) => {
                let summary = text(o, &["summary", "title", "finding", "insight"]);
                let explanation = text(o, &["explanation", "details", "description", "text"]);
                (!summary.is_empty() || !explanation.is_empty()).then_some(Finding { summary, explanation })
            }
            _ => None,
        })
        .collect()
}

/// The report in `reply`, or why there is none.
pub fn parse_report(reply: &str, community: &Community) -> Result<CommunityReport, String> {
    let o =
        rhizome_llm::parse::json_object_lenient(reply).ok_or_else(|| "the reply holds no JSON object".to_string())?;
    let summary = text(&o, &["summary", "overview"]);
    let findings = findings(o.get("findings"));
    if summary.is_empty() && findings.is_empty() {
        return Err("the reply has neither a summary nor findings".into());
    }
    let title = text(&o, &["title", "name"]);
    Ok(CommunityReport {
        community_id: community.id.clone(),
        level: community.level,
        title: if title.is_empty() { community.title.clone() } else { title },
        summary,
        findings,
        rating: rating(o.get("rating").or_else(|| o.get("impact_rating")).or_else(|| o.get("impact"))).unwrap_or(0.0),
        rating_explanation: text(&o, &["rating_explanation", "rating_reason", "explanation"]),
        fingerprint: community.fingerprint.clone(),
        kind: ReportKind::Llm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn community() -> Community {
        Community {
            id: "com_1".into(),
            level: 1,
            parent: None,
            children: vec![],
            title: "A, B".into(),
            entity_ids: vec!["a".into(), "b".into()],
            fingerprint: "cfp_1".into(),
        }
    }

    #[test]
    fn reads_fenced_truncated_and_loose_replies() {
        let r = parse_report(
            "Here you go:\n```json\n{\"title\": \"Mercer's squad\", \"summary\": \"S.\", \"rating\": \"7.5/10\",\n\"rating_explanation\": \"R.\", \"findings\": [\"plain\", {\"summary\": \"F\", \"explanation\": \"E\"}, 3]}\n```",
            &community(),
        )
        .unwrap();
        assert_eq!(r.title, "Mercer's squad");
        assert_eq!(r.rating, 7.5);
        assert_eq!(r.findings.len(), 2);
        assert_eq!(r.findings[1].explanation, "E");
        assert_eq!(r.fingerprint, "cfp_1");
        // Truncated mid-findings: what was read is kept, the title falls back.
        let r = parse_report(
            "{\"summary\": \"Only this.\", \"rating\": 42, \"findings\": [{\"summary\": \"F1\", \"expl",
            &community(),
        )
        .unwrap();
        assert_eq!(r.title, "A, B");
        assert_eq!(r.rating, 10.0);
        assert_eq!(r.summary, "Only this.");
        assert!(parse_report("I cannot help with that.", &community()).is_err());
        assert!(parse_report("{\"title\": \"T\"}", &community()).is_err());
    }
}
