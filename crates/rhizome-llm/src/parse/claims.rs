//! Reading a model's reply to the `extract_claims` prompt into claims.
//!
//! Lenient as the extraction parser: fences, prose around the object, renamed keys, a bare
//! array, booleans or words for the status, placeholders for missing dates. A claim is
//! kept only when its subject is one of the chunk's entities or is written in the chunk
//! (a subject the model made up is dropped) and it says something (a description or
//! source text). A reply with no list of claims in it is unreadable: counted by the
//! caller, never an error.

use rhizome_core::ids::normalize_name;
use rhizome_core::model::ExtractedClaim;
use serde_json::{Map, Value};

use super::fields::{description_of, get, label_of, name_of, norm_key, text_of};
use super::json_repair::find_values;

/// Keys of the list of claims.
const CLAIM_LISTS: &[&str] = &["claims", "claim", "covariates", "claimlist"];
const SUBJECT: &[&str] = &["subject", "subjectentity", "subjectid", "entity", "source", "head"];
const OBJECT: &[&str] = &["object", "objectentity", "objectid", "target", "tail"];
const CLAIM_TYPE: &[&str] = &["type", "claimtype", "category", "kind", "label"];
const STATUS: &[&str] = &["status", "claimstatus", "truth", "verdict"];
const START: &[&str] = &["startdate", "start", "from", "since", "date"];
const END: &[&str] = &["enddate", "end", "to", "until"];
const DESCRIPTION: &[&str] = &["description", "claimdescription", "desc", "claim", "summary", "statement"];
const SOURCE_TEXT: &[&str] = &["sourcetext", "quote", "evidence", "text", "span"];

/// What [`parse_claims`] made of a reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaimsOutcome {
    pub claims: Vec<ExtractedClaim>,
    /// Records that could not be used (no subject, a subject not in the chunk, nothing said).
    pub dropped: usize,
    /// False when the reply holds no list of claims at all.
    pub readable: bool,
}

/// The claims in `reply` about `entities` (names as extracted from `text`, the chunk).
pub fn parse_claims(reply: &str, entities: &[String], text: &str) -> ClaimsOutcome {
    let (found, _) = find_values(reply, |v| records(v).is_some());
    let Some(list) = found.first().and_then(|f| records(&f.value)) else {
        return ClaimsOutcome::default();
    };
    let known: std::collections::HashSet<String> = entities.iter().map(|e| normalize_name(e)).collect();
    let text_key = normalize_name(text);
    let in_chunk = |name: &str| {
        let k = normalize_name(name);
        !k.is_empty() && (known.contains(&k) || text_key.contains(&k))
    };
    let mut out = ClaimsOutcome { readable: true, ..Default::default() };
    let mut seen = std::collections::HashSet::new();
    for rec in list {
        match claim_of(rec, &in_chunk) {
            Some(c) if seen.insert((normalize_name(&c.subject), c.claim_type.clone(), c.description.clone())) => {
                out.claims.push(c)
            }
            Some(_) => {}
            None => out.dropped += 1,
        }
    }
    out
}

/// The claim records of a value: an object's claims list, or an array of objects.
fn records(v: &Value) -> Option<Vec<&Map<String, Value>>> {
    let list = match v {
        Value::Array(items) => items,
        Value::Object(o) => match get(o, CLAIM_LISTS) {
            Some(Value::Array(items)) => items,
            _ => return None,
        },
        _ => return None,
    };
    let objects: Vec<&Map<String, Value>> = list.iter().filter_map(Value::as_object).collect();
    // A bare array counts only when it holds claim-like objects (or nothing).
    let claim_like = objects.iter().all(|o| get(o, SUBJECT).is_some() || get(o, DESCRIPTION).is_some());
    (matches!(v, Value::Object(_)) || (claim_like && objects.len() == list.len())).then_some(objects)
}

fn claim_of(o: &Map<String, Value>, in_chunk: &dyn Fn(&str) -> bool) -> Option<ExtractedClaim> {
    let subject = name_of(get(o, SUBJECT)).filter(|s| in_chunk(s))?;
    let object = name_of(get(o, OBJECT)).filter(|s| normalize_name(s) != normalize_name(&subject));
    let description = description_of(get(o, DESCRIPTION));
    let source_text = description_of(get(o, SOURCE_TEXT));
    if description.is_empty() && source_text.is_empty() {
        return None;
    }
    let claim_type = get(o, CLAIM_TYPE)
        .and_then(text_of)
        .and_then(|t| label_of(&t))
        .map(|t| t.to_uppercase())
        .unwrap_or_else(|| "CLAIM".into());
    Some(ExtractedClaim {
        subject,
        object,
        claim_type,
        status: status_of(get(o, STATUS)),
        start_date: date_of(get(o, START)),
        end_date: date_of(get(o, END)),
        description: if description.is_empty() { source_text.clone() } else { description },
        source_text,
    })
}

/// `TRUE`, `FALSE` or `SUSPECTED` from what a model writes; anything unclear is suspected.
fn status_of(v: Option<&Value>) -> String {
    let word = match v {
        Some(Value::Bool(true)) => "true".to_string(),
        Some(Value::Bool(false)) => "false".to_string(),
        Some(v) => text_of(v).map(|t| norm_key(&t)).unwrap_or_default(),
        None => String::new(),
    };
    match word.as_str() {
        "true" | "confirmed" | "yes" | "fact" | "verified" | "stated" => "TRUE",
        "false" | "no" | "denied" | "refuted" | "untrue" => "FALSE",
        _ => "SUSPECTED",
    }
    .into()
}

/// A date as written when it starts like one (`2022`, `2022-03`, `2022-03-01...`), else
/// empty (placeholders, prose).
fn date_of(v: Option<&Value>) -> String {
    let Some(t) = v.and_then(text_of) else {
        return String::new();
    };
    let t = t.trim();
    let digits = t.chars().take(4).filter(char::is_ascii_digit).count();
    if digits == 4 && t.len() <= 40 {
        t.to_string()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const TEXT: &str = "Harbour Energy bought Tidewell in 2022. Tidewell is said to have overstated its output.";

    #[test]
    fn reads_the_prompts_shape_and_its_variants() {
        let reply = r#"Sure! ```json
{"claims": [
 {"subject": "Harbour Energy", "object": "Tidewell", "type": "acquisition", "status": "true",
  "start_date": "2022", "end_date": null, "description": "Harbour Energy bought Tidewell.",
  "source_text": "Harbour Energy bought Tidewell in 2022."},
 {"Subject Entity": "Tidewell", "Object": "NONE", "Claim Type": "MISLEADING CLAIMS", "Status": "alleged",
  "Start Date": "unknown", "Claim Description": "Tidewell may have overstated its output."},
 {"subject": "Atlantis Corp", "description": "Made up."},
 {"subject": "Tidewell", "type": "X"}
]}```"#;
        let out = parse_claims(reply, &names(&["Harbour Energy", "Tidewell"]), TEXT);
        assert!(out.readable);
        assert_eq!(out.claims.len(), 2, "{out:#?}");
        assert_eq!(out.dropped, 2);
        let a = &out.claims[0];
        assert_eq!((a.claim_type.as_str(), a.status.as_str(), a.start_date.as_str()), ("ACQUISITION", "TRUE", "2022"));
        assert_eq!(a.object.as_deref(), Some("Tidewell"));
        let b = &out.claims[1];
        assert_eq!((b.object.as_ref(), b.status.as_str(), b.start_date.as_str()), (None, "SUSPECTED", ""));
    }

    #[test]
    fn a_bare_array_and_an_empty_list_are_readable_prose_is_not() {
        let out = parse_claims(r#"[{"subject": "Tidewell", "description": "It overstated output."}]"#, &[], TEXT);
        assert_eq!((out.readable, out.claims.len()), (true, 1), "subjects written in the chunk count");
        assert!(parse_claims(r#"{"claims": []}"#, &[], TEXT).readable);
        for bad in ["I cannot find claims.", "", "[1, 2]", r#"{"entities": []}"#, "{\"claims\": [{\"subj"] {
            let out = parse_claims(bad, &[], TEXT);
            assert!(out.claims.is_empty(), "{bad}");
        }
        assert!(!parse_claims("No claims here.", &[], TEXT).readable);
    }
}
