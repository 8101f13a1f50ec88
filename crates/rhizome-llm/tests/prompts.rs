//! Prompt files: snapshots of every built-in prompt rendered with fixed inputs, template
//! errors, overrides from a directory, fingerprints.
//!
//! Snapshots live in tests/snapshots/<prompt>.txt. After an intended prompt change,
//! regenerate them with `UPDATE_SNAPSHOTS=1 cargo test --release -p rhizome-llm --test prompts`
//! and review the diff.

use std::path::PathBuf;

use rhizome_core::llm::{ChatMessage, Role};
use rhizome_llm::parse::{default_schema, parse_extraction, DEFAULT_ENTITY_TYPES};
use rhizome_llm::prompt::{PromptSource, Prompts, INSUFFICIENT_EVIDENCE};

/// Every built-in prompt: this crate's, ingestion's steps' and the retrieval methods'.
fn all() -> Prompts {
    let mut more = rhizome_ingest::prompts();
    more.extend(rhizome_retrieve::prompts());
    Prompts::builtin_with(&more)
}

const TEXT: &str = "Ada Lovelace published the first algorithm for Charles Babbage's Analytical \
Engine in 1843 in London. Notes use {braces} literally.";

/// Fixed inputs for each prompt.
fn inputs(name: &str) -> Vec<(&'static str, String)> {
    let schema = DEFAULT_ENTITY_TYPES.join(", ");
    match name {
        "extract_entities" => vec![("schema", schema), ("text", TEXT.to_string())],
        "glean" => vec![("schema", schema)],
        "extract_claims" => vec![
            ("entities", "Ada Lovelace, Charles Babbage, Analytical Engine, London".to_string()),
            ("description", "Any claim about what an entity did or what was done to it.".to_string()),
            ("text", TEXT.to_string()),
        ],
        "summarize_entity" => vec![
            ("entity_name", "Ada Lovelace".to_string()),
            ("descriptions", "1. An English mathematician.\n2. Wrote notes on the Analytical Engine.".to_string()),
        ],
        "answer" => vec![
            ("question", "Who published the first algorithm for the Analytical Engine?".to_string()),
            ("contexts", format!("[1] (notes.txt) {TEXT}\n\n[2] (babbage.txt) Babbage designed the engine.")),
        ],
        "query_entities" => vec![("question", "What did Ada Lovelace write about Babbage's engine?".to_string())],
        "hippo_filter" => vec![
            ("question", "Where was the author of the Analytical Engine notes born?".to_string()),
            ("facts", "1. Ada Lovelace published first algorithm\n2. Ada Lovelace born in London".to_string()),
        ],
        "analyze_query" => vec![("question", "Why did the company that Ada Lovelace wrote for fail?".to_string())],
        "rewrite_followup" => vec![
            ("history", "user: Who wrote the first algorithm?\nassistant: Ada Lovelace, for Babbage's engine.".to_string()),
            ("question", "Where was she born?".to_string()),
        ],
        "rerank" => vec![
            ("question", "Who published the first algorithm for the Analytical Engine?".to_string()),
            ("passages", format!("[1] Notes: {TEXT}\n\n[2] Babbage: Babbage designed the engine.")),
        ],
        "tog_prune" => vec![
            ("question", "Where was the author of the Analytical Engine notes born?".to_string()),
            ("entity", "Ada Lovelace".to_string()),
            ("paths", "(start entity)".to_string()),
            ("relations", "1. Ada Lovelace -[wrote notes on]-> Analytical Engine\n2. Ada Lovelace -[born in]-> London".to_string()),
        ],
        "tog_check" => vec![
            ("question", "Where was the author of the Analytical Engine notes born?".to_string()),
            ("paths", "[P1] Ada Lovelace -[wrote notes on]-> Analytical Engine\n[P2] Ada Lovelace -[born in]-> London".to_string()),
        ],
        "tog_answer" => vec![
            ("question", "Where was the author of the Analytical Engine notes born?".to_string()),
            ("paths", "[P1] Ada Lovelace -[born in]-> London (score 0.90)".to_string()),
            ("passages", format!("[S1] (notes.txt) {TEXT}")),
        ],
        "community_report" => vec![
            ("context", "Entities:\n- ADA LOVELACE (PERSON, degree 2): Wrote the first program.\n- ANALYTICAL ENGINE (TECHNOLOGY, degree 2): Babbage's machine.\n\nRelationships:\n- ADA LOVELACE -> ANALYTICAL ENGINE (RELATED, weight 2.0): She wrote notes on it.".to_string()),
            ("max_words", "1125".to_string()),
        ],
        "global_map" => vec![
            ("question", "What are the main themes?".to_string()),
            ("reports", "----- Report 1 -----\n# Ada Lovelace and the Analytical Engine\n\nAda Lovelace wrote the first program for Babbage's engine.".to_string()),
        ],
        "global_reduce" => vec![
            ("question", "What are the main themes?".to_string()),
            ("points", "----- Analyst 1 -----\nImportance score: 80\nEarly computing [Reports 1].".to_string()),
            ("response_type", "multiple paragraphs".to_string()),
        ],
        "drift_hyde" => vec![
            ("question", "Who published the first algorithm for the Analytical Engine?".to_string()),
            ("template", "# Ada Lovelace and the Analytical Engine\n\nAda Lovelace wrote notes on Babbage's engine.".to_string()),
        ],
        "drift_primer" => vec![
            ("question", "Who published the first algorithm for the Analytical Engine?".to_string()),
            ("reports", "----- Report 1 -----\n# Ada Lovelace and the Analytical Engine\n\nAda Lovelace wrote notes on Babbage's engine.".to_string()),
        ],
        "drift_local" => vec![
            ("question", "Who published the first algorithm for the Analytical Engine?".to_string()),
            ("follow_up", "When did Ada Lovelace publish her notes?".to_string()),
            ("context", format!("[1] (chunk, notes.txt) {TEXT}")),
        ],
        "drift_reduce" => vec![
            ("question", "Who published the first algorithm for the Analytical Engine?".to_string()),
            ("answers", "----- Finding 1 (score 90) -----\nQuestion: When did Ada Lovelace publish her notes?\nAnswer: In 1843.".to_string()),
            ("response_type", "multiple paragraphs".to_string()),
        ],
        "describe_document" => vec![
            ("types", "  - report: a report\n  - manual: a manual".to_string()),
            ("hashtags", "5".to_string()),
            ("title", "Notes on the Analytical Engine".to_string()),
            ("source", "notes.txt".to_string()),
            ("text", TEXT.to_string()),
        ],
        other => panic!("no fixed inputs for prompt {other}"),
    }
}

fn render(p: &Prompts, name: &str) -> Vec<ChatMessage> {
    let owned = inputs(name);
    let vars: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    p.render(name, &vars).unwrap_or_else(|e| panic!("render {name}: {e}"))
}

fn show(messages: &[ChatMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out += &format!("=== {role} ===\n{}\n", m.content);
    }
    out
}

/// A readable diff: the first differing lines with their numbers.
fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = Vec::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i), a.get(i));
        if x != y {
            if let Some(x) = x {
                out.push(format!("{:>4} - {x}", i + 1));
            }
            if let Some(y) = y {
                out.push(format!("{:>4} + {y}", i + 1));
            }
        }
        if out.len() >= 24 {
            out.push("     ... (more differences)".into());
            break;
        }
    }
    out.join("\n")
}

#[test]
fn builtin_prompts_match_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    let prompts = all();
    let mut failures = Vec::new();
    for name in prompts.names() {
        let actual = show(&render(&prompts, name));
        let path = dir.join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{name}: rendering differs from {} (- snapshot, + now):\n{}",
                path.display(),
                diff(&expected, &actual)
            )),
            Err(_) => failures.push(format!("{name}: no snapshot at {}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the change is intended: UPDATE_SNAPSHOTS=1 cargo test --release -p rhizome-llm --test prompts",
        failures.join("\n\n")
    );
}

#[test]
fn sections_and_roles() {
    let p = Prompts::builtin();
    let m = render(&p, "extract_entities");
    assert_eq!(m.iter().map(|m| m.role).collect::<Vec<_>>(), [Role::System, Role::User]);
    assert!(m[1].content.contains("PERSON, ORGANIZATION, LOCATION"));
    assert!(m[1].content.ends_with("Output:"));
    assert!(m[1].content.contains(TEXT), "values are inserted verbatim, braces included");
    let g = render(&p, "glean");
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].role, Role::User);
    let a = render(&p, "answer");
    assert!(a[1].content.contains(INSUFFICIENT_EVIDENCE));
    assert!(a[1].content.contains("[2] (babbage.txt)"));
}

#[test]
fn placeholders_are_as_documented() {
    let p = all();
    let want: [(&str, &[&str]); 6] = [
        ("extract_entities", &["schema", "text"]),
        ("glean", &["schema"]),
        ("extract_claims", &["description", "entities", "text"]),
        ("summarize_entity", &["descriptions", "entity_name"]),
        ("answer", &["contexts", "question"]),
        ("query_entities", &["question"]),
    ];
    for (name, keys) in want {
        assert_eq!(p.placeholders(name).unwrap(), keys, "{name}");
    }
    assert_eq!(
        p.names(),
        [
            "extract_entities",
            "glean",
            "extract_claims",
            "summarize_entity",
            "answer",
            "community_report",
            "describe_document",
            "query_entities",
            "analyze_query",
            "rewrite_followup",
            "hippo_filter",
            "rerank",
            "global_map",
            "global_reduce",
            "drift_hyde",
            "drift_primer",
            "drift_local",
            "drift_reduce",
            "tog_prune",
            "tog_check",
            "tog_answer",
        ]
    );
    assert_eq!(
        Prompts::builtin().names(),
        ["extract_entities", "glean", "extract_claims", "summarize_entity", "answer", "community_report"]
    );
}

#[test]
fn render_errors_are_clear() {
    let p = all();
    let e = p.render("extract_entity", &[]).unwrap_err().to_string();
    assert!(e.contains("extract_entity") && e.contains("unknown prompt") && e.contains("extract_entities"), "{e}");
    let e = p.render("extract_entities", &[("schema", "PERSON")]).unwrap_err().to_string();
    assert!(e.contains("not filled") && e.contains("{text}") && e.contains("built-in"), "{e}");
    let e = p.render("query_entities", &[("question", "q"), ("lang", "en")]).unwrap_err().to_string();
    assert!(e.contains("unknown placeholders: lang"), "{e}");
    assert!(p.fingerprint("nope").is_err());
    assert!(p.text("nope").is_err());
}

#[test]
fn the_extraction_example_is_valid_output() {
    // The example in the prompt must be exactly what the parser reads cleanly.
    let text = Prompts::builtin().text("extract_entities").unwrap().to_string();
    let start = text.find("Output:\n{").expect("example output") + "Output:\n".len();
    let end = start + text[start..].find("\n\nNow do").expect("end of example");
    let o = parse_extraction(&text[start..end], &default_schema());
    assert!(o.warnings.is_empty() && !o.repaired && o.dropped == 0, "{:?}", o.warnings);
    assert_eq!(o.extraction.entities.len(), 5);
    assert_eq!(o.extraction.relations.len(), 3);
    assert_eq!(o.extraction.facts.len(), 3);
    for e in &o.extraction.entities {
        assert!(DEFAULT_ENTITY_TYPES.contains(&e.entity_type.as_str()));
    }
}

#[test]
fn overrides_from_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let builtin = Prompts::builtin();
    std::fs::write(dir.path().join("answer.txt"), "Be terse.\n---user---\nQ: {question}\nC: {contexts}\n").unwrap();
    std::fs::write(dir.path().join("notes.md"), "not a prompt").unwrap();
    let p = Prompts::from_dir(dir.path()).unwrap();
    let m = p.render("answer", &[("question", "Why?"), ("contexts", "[1] x")]).unwrap();
    assert_eq!(m, [ChatMessage::system("Be terse."), ChatMessage::user("Q: Why?\nC: [1] x")]);
    assert!(matches!(p.source("answer").unwrap(), PromptSource::File(f) if f.ends_with("answer.txt")));
    assert_eq!(p.source("glean").unwrap(), &PromptSource::BuiltIn);
    assert_ne!(p.fingerprint("answer").unwrap(), builtin.fingerprint("answer").unwrap());
    assert_eq!(p.fingerprint("glean").unwrap(), builtin.fingerprint("glean").unwrap());
    assert_eq!(Prompts::load(None).unwrap().text("answer").unwrap(), builtin.text("answer").unwrap());

    // An override with the wrong placeholders fails at load, naming the file.
    std::fs::write(dir.path().join("answer.txt"), "Q: {query}\n").unwrap();
    let e = Prompts::from_dir(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("answer.txt") && e.contains("unknown: {query}") && e.contains("missing: {contexts}, {question}"),
        "{e}"
    );
    std::fs::remove_file(dir.path().join("answer.txt")).unwrap();

    // A .txt file that names no prompt is a typo, not something to ignore.
    std::fs::write(dir.path().join("extract_entity.txt"), "x").unwrap();
    let e = Prompts::from_dir(dir.path()).unwrap_err().to_string();
    assert!(e.contains("extract_entity.txt") && e.contains("extract_entities.txt"), "{e}");

    // A method's prompt file overrides it where the methods' prompts are in, and only there.
    std::fs::remove_file(dir.path().join("extract_entity.txt")).unwrap();
    std::fs::write(dir.path().join("hippo_filter.txt"), "Facts: {facts}\nQuestion: {question}\n").unwrap();
    let p = Prompts::load_with(Some(dir.path()), &rhizome_retrieve::prompts()).unwrap();
    assert!(matches!(p.source("hippo_filter").unwrap(), PromptSource::File(f) if f.ends_with("hippo_filter.txt")));
    assert_eq!(p.source("rerank").unwrap(), &PromptSource::BuiltIn);
    let e = Prompts::from_dir(dir.path()).unwrap_err().to_string();
    assert!(e.contains("hippo_filter.txt") && e.contains("not a prompt name"), "{e}");

    let e = Prompts::from_dir(&dir.path().join("absent")).unwrap_err().to_string();
    assert!(e.contains("absent"), "{e}");
}

#[test]
fn fingerprints_track_the_text() {
    let mut p = all();
    let fps: Vec<String> = p.names().iter().map(|n| p.fingerprint(n).unwrap()).collect();
    let unique: std::collections::HashSet<_> = fps.iter().collect();
    assert_eq!(unique.len(), fps.len());
    assert!(fps.iter().all(|f| f.starts_with("prm_") && f.len() == 20));
    assert_eq!(Prompts::builtin().fingerprint("glean").unwrap(), fps[1], "stable");
    p.set("glean", "More, please. Types: {schema}").unwrap();
    assert_ne!(p.fingerprint("glean").unwrap(), fps[1]);
    assert!(p.set("glean", "No placeholder").is_err());
}

#[test]
fn templates_without_markers_and_literal_braces() {
    let mut p = all();
    p.set("query_entities", "Names in: {question} as {\"names\": []} or {not a placeholder}").unwrap();
    let m = p.render("query_entities", &[("question", "{question}?")]).unwrap();
    assert_eq!(m, [ChatMessage::user("Names in: {question}? as {\"names\": []} or {not a placeholder}")]);
}
