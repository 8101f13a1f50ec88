//! Query analysis: the rules in English, Vietnamese and Chinese, follow-up rewriting
//! against a history, the LLM path against the loopback OpenAI server (scripted, garbled
//! and failing replies), the routing table and `--method auto` end to end. The LLM and
//! the small index they run on are in `analyze_support`.

mod analyze_support;
mod common;

use analyze_support::index::{small_index, Trigrams};
use analyze_support::{llm, scripted};
use rhizome_core::llm::{ChatMessage, PromptLlm};
use rhizome_core::*;
use rhizome_llm_testing::{last_user_text, Fault, MockOpenAi};
use rhizome_retrieve::analyze::{
    analyze, analyze_rules, detect_language, parse_history, standalone_question, AnalysisSource, Complexity, Lang,
    QueryType,
};
use rhizome_retrieve::{route, GraphCache, Method, QueryEnv};

const VI: &str = "Aage Bohr có những giải thưởng gì?";
const ZH: &str = "Sam Altman领导的公司在AI领域有什么重要投资？";

fn rules(q: &str) -> rhizome_retrieve::QueryAnalysis {
    analyze_rules(q, &[]).unwrap()
}

fn bohr_history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("Who is Aage Bohr?"),
        ChatMessage::assistant("Aage Bohr was a Danish physicist and the son of Niels Bohr."),
    ]
}

#[test]
fn reference_questions() {
    let vi = rules(VI);
    assert_eq!(vi.language, Lang::Vi);
    assert_eq!(vi.query_type, QueryType::Factual);
    assert_eq!(vi.complexity, Complexity::Simple);
    assert_eq!(vi.key_concepts, ["Aage Bohr", "giải thưởng"]);
    assert!(!vi.multi_hop && !vi.requires_reasoning && !vi.is_follow_up);
    assert_eq!(vi.standalone_question, VI);
    assert_eq!(vi.source, AnalysisSource::Rules);
    assert!(vi.notes.iter().any(|n| n.contains("no LLM")), "{:?}", vi.notes);

    // "the company Sam Altman leads" is a relative clause: find the company, then its
    // investments.
    let zh = rules(ZH);
    assert_eq!(zh.language, Lang::Zh);
    assert_eq!(zh.query_type, QueryType::Factual);
    assert!(zh.multi_hop && zh.requires_reasoning && zh.multiple_sources, "{zh:#?}");
    assert_eq!(zh.complexity, Complexity::Moderate);
    assert_eq!(&zh.key_concepts[..2], ["Sam Altman", "AI"]);
    assert!(zh.key_concepts.contains(&"重要投资".to_string()), "{:?}", zh.key_concepts);

    let en = analyze_rules("What about his brother?", &bohr_history()).unwrap();
    assert!(en.is_follow_up);
    assert_eq!(en.standalone_question, "What about Aage Bohr's brother?");
    assert_eq!(en.question, "What about his brother?");
    assert!(en.key_concepts.contains(&"Aage Bohr".to_string()), "{:?}", en.key_concepts);
    assert!(en.cues.iter().any(|c| c.contains("his -> Aage Bohr")), "{:?}", en.cues);
}

#[test]
fn languages() {
    assert_eq!(detect_language(VI), Lang::Vi);
    assert_eq!(detect_language("Aage Bohr co nhung giai thuong gi"), Lang::Vi);
    assert_eq!(detect_language(ZH), Lang::Zh);
    assert_eq!(detect_language("Who is Nguyễn Phú Trọng?"), Lang::En);
    assert_eq!(detect_language("Which prizes did Aage Bohr win?"), Lang::En);
    // Without diacritics the Vietnamese cues still match.
    assert_eq!(rules("Tai sao Aage Bohr duoc trao giai Nobel?").query_type, QueryType::Analytical);
}

#[test]
fn question_types_in_three_languages() {
    let cases: &[(&str, QueryType)] = &[
        ("Compare the research of Niels Bohr and Aage Bohr.", QueryType::Comparative),
        ("What is the difference between OpenAI and Anthropic?", QueryType::Comparative),
        ("Which is older, Harvard University or Yale University?", QueryType::Comparative),
        ("Is Copenhagen larger than Aarhus?", QueryType::Comparative),
        ("Why did Microsoft invest in OpenAI?", QueryType::Analytical),
        ("How does the liquid drop model explain nuclear fission?", QueryType::Analytical),
        ("What was the impact of the Manhattan Project on physics?", QueryType::Analytical),
        ("Who founded OpenAI?", QueryType::Factual),
        ("How many employees does Microsoft have?", QueryType::Factual),
        ("So sánh Niels Bohr và Aage Bohr.", QueryType::Comparative),
        ("Niels Bohr và Aage Bohr khác nhau như thế nào?", QueryType::Comparative),
        ("Tại sao Aage Bohr được trao giải Nobel?", QueryType::Analytical),
        ("Trí tuệ nhân tạo ảnh hưởng như thế nào đến giáo dục?", QueryType::Analytical),
        ("Ai là người sáng lập OpenAI?", QueryType::Factual),
        ("比较微软和谷歌在人工智能领域的投资。", QueryType::Comparative),
        ("OpenAI和Anthropic有什么区别？", QueryType::Comparative),
        ("为什么微软投资OpenAI？", QueryType::Analytical),
        ("人工智能如何影响教育？", QueryType::Analytical),
        ("哪些公司投资了OpenAI？", QueryType::Factual),
    ];
    for (q, want) in cases {
        let a = rules(q);
        assert_eq!(a.query_type, *want, "{q}: {a:#?}");
        assert_eq!(a.requires_reasoning, *want != QueryType::Factual || a.multi_hop, "{q}");
        if *want == QueryType::Comparative {
            assert!(a.multiple_sources, "{q}");
        }
    }
}

#[test]
fn multi_hop_cues() {
    let hops = [
        "Who is the spouse of the director of Titanic?",
        "When was the person who founded OpenAI born?",
        "Which prizes did the company led by Sam Altman win?",
        "How is Aage Bohr related to Ben Mottelson?",
        "Vợ của giám đốc của công ty Microsoft là ai?",
        "Giải thưởng mà cha của Aage Bohr nhận được là gì?",
        "Công ty do Sam Altman lãnh đạo đầu tư vào đâu?",
        ZH,
        "苹果公司创始人的妻子的父亲是谁？",
    ];
    for q in hops {
        let a = rules(q);
        assert!(a.multi_hop && a.requires_reasoning && a.multiple_sources, "{q}: {a:#?}");
        assert!(a.complexity_score >= 0.3, "{q}: {}", a.complexity_score);
    }
    let single = [
        "What is the capital of France?",
        "Which company was founded by Sam Altman?",
        "Who was Aage Bohr's father?",
        VI,
        "Thủ đô của Pháp là gì?",
        "苹果公司的创始人是谁？",
        "Sam Altman的生日是什么？",
    ];
    for q in single {
        let a = rules(q);
        assert!(!a.multi_hop, "{q}: {a:#?}");
        assert_eq!(a.complexity, Complexity::Simple, "{q}: {a:#?}");
    }
    let hard = rules("Why did the company that Sam Altman leads invest in the startup founded by the brother of Aage Bohr, and how did it affect Microsoft?");
    assert_eq!(hard.complexity, Complexity::Complex, "{hard:#?}");
    assert!(hard.complexity_score <= 1.0);
}

#[test]
fn follow_ups_are_rewritten() {
    let h = bohr_history();
    let q = |q: &str, h: &[ChatMessage]| analyze_rules(q, h).unwrap();

    // A person pronoun refers to the person just discussed, even when the question was
    // about something else.
    let openai = vec![
        ChatMessage::user("Who founded OpenAI?"),
        ChatMessage::assistant("OpenAI was founded by Sam Altman, Elon Musk and others in 2015."),
    ];
    assert_eq!(q("Where did he study?", &openai).standalone_question, "Where did Sam Altman study?");
    assert_eq!(q("When was it founded?", &openai).standalone_question, "When was OpenAI founded?");
    // A person pronoun skips an award's or an institution's name for the person's.
    let nobel = vec![ChatMessage::user("Who shared the Nobel Prize in Physics with Aage Bohr?")];
    assert_eq!(q("Who was his father?", &nobel).standalone_question, "Who was Aage Bohr's father?");

    // Ellipsis with a new name: the previous question, about the new name.
    let born = vec![ChatMessage::user("When was Aage Bohr born?"), ChatMessage::assistant("In 1922.")];
    let a = q("What about Niels Bohr?", &born);
    assert!(a.is_follow_up);
    assert_eq!(a.standalone_question, "When was Niels Bohr born?");

    // Vietnamese and Chinese.
    let vi = vec![ChatMessage::user(VI), ChatMessage::assistant("Ông đoạt giải Nobel Vật lý năm 1975.")];
    assert_eq!(q("Còn anh trai của ông ấy thì sao?", &vi).standalone_question, "Còn anh trai của Aage Bohr thì sao?");
    assert_eq!(q("Còn Niels Bohr thì sao?", &vi).standalone_question, "Niels Bohr có những giải thưởng gì?");
    let zh = vec![ChatMessage::user(ZH), ChatMessage::assistant("微软向OpenAI投资了100亿美元。")];
    assert_eq!(q("他的弟弟是谁？", &zh).standalone_question, "Sam Altman的弟弟是谁？");
    assert_eq!(q("那Elon Musk呢？", &zh).standalone_question, "Elon Musk领导的公司在AI领域有什么重要投资？");

    // Nothing to substitute: the previous question goes in front.
    let why = q("Why?", &born);
    assert!(why.is_follow_up);
    assert_eq!(why.standalone_question, "When was Aage Bohr born? Why?");

    // Not follow-ups: a self-contained question, a pronoun bound inside the question, no
    // history at all.
    for (text, hist) in [
        ("Who founded Microsoft?", &h),
        ("What did Aage Bohr and his father win?", &h),
        ("What about his brother?", &vec![]),
    ] {
        let a = q(text, hist);
        assert!(!a.is_follow_up, "{text}: {a:#?}");
        assert_eq!(a.standalone_question, text);
    }

    // The follow-up step alone (what `rhizome query --history` uses).
    let s = standalone_question("What about his brother?", &h, None).unwrap();
    assert!(s.is_follow_up);
    assert_eq!(s.question, "What about Aage Bohr's brother?");
    assert!(standalone_question("", &h, None).is_err());

    // A pronoun with nothing to refer to: kept, with a note.
    let nameless = vec![ChatMessage::user("tell me something"), ChatMessage::assistant("sure")];
    let a = q("What did he win?", &nameless);
    assert!(a.is_follow_up);
    assert_eq!(a.standalone_question, "What did he win?");
    assert!(a.notes.iter().any(|n| n.contains("refers to")), "{:?}", a.notes);
}

#[test]
fn history_files_and_bad_input() {
    let h = parse_history(
        "h.json",
        r#"[{"role": "user", "content": "Who is Aage Bohr?"}, {"role": "assistant", "content": "A physicist."}]"#,
    )
    .unwrap();
    assert_eq!(h, [ChatMessage::user("Who is Aage Bohr?"), ChatMessage::assistant("A physicist.")]);
    let h = parse_history("h.json", r#"{"messages": [{"role": "User", "content": "x"}]}"#).unwrap();
    assert_eq!(h, [ChatMessage::user("x")]);
    for (bad, says) in [
        ("not json", "not valid JSON"),
        (r#"{"turns": []}"#, "messages"),
        (r#"[{"role": "narrator", "content": "x"}]"#, "narrator"),
        (r#"[{"role": "user"}]"#, "content"),
        ("42", "not a list"),
    ] {
        let e = parse_history("chat.json", bad).unwrap_err().to_string();
        assert!(e.contains("chat.json") && e.contains(says) && e.contains("[{\"role\""), "{bad}: {e}");
    }
    let e = analyze_rules("   ", &[]).unwrap_err().to_string();
    assert!(e.contains("question") && e.contains("empty"), "{e}");
}

// ---- LLM path ----------------------------------------------------------------------

#[test]
fn llm_analysis_with_a_history() {
    let server = scripted(
        r#"{"is_follow_up": true, "standalone_question": "Which prizes did Aage Bohr's brother win?"}"#,
        r#"```json
{"language": "en", "query_type": "comparative", "complexity": "complex", "complexity_score": 0.8,
 "key_concepts": ["Aage Bohr", "brother", "prizes"], "requires_reasoning": true,
 "multiple_sources": true, "multi_hop": true}
```"#,
    );
    let l = llm(&server);
    let a = analyze("What about his brother?", &bohr_history(), Some(&l.llm as &dyn PromptLlm)).unwrap();
    assert_eq!(a.source, AnalysisSource::Llm);
    assert!(a.is_follow_up);
    assert_eq!(a.standalone_question, "Which prizes did Aage Bohr's brother win?");
    assert_eq!(a.query_type, QueryType::Comparative, "the LLM's value, not the rules'");
    assert_eq!((a.complexity, a.complexity_score), (Complexity::Complex, 0.8));
    assert_eq!(a.key_concepts, ["Aage Bohr", "brother", "prizes"]);
    assert!(a.multi_hop && a.requires_reasoning && a.multiple_sources);
    assert!(!a.notes.iter().any(|n| n.contains("rule-based")), "{:?}", a.notes);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let rewrite = last_user_text(&reqs[0]);
    assert!(rewrite.contains("What about his brother?"), "{rewrite}");
    assert!(rewrite.contains("user: Who is Aage Bohr?"), "{rewrite}");
    assert!(rewrite.contains("assistant: Aage Bohr was a Danish physicist"), "{rewrite}");
    assert_eq!(reqs[0]["response_format"]["type"], "json_object", "{}", reqs[0]);
    // The analysis is of the rewritten question.
    let analysis = last_user_text(&reqs[1]);
    assert!(analysis.contains("Question: Which prizes did Aage Bohr's brother win?"), "{analysis}");
}

#[test]
fn llm_fields_fall_back_one_by_one() {
    let server = scripted(
        "{}",
        r#"{"language": "klingon", "query_type": "analytical", "complexity": "moderate",
            "key_concepts": [], "requires_reasoning": "yes", "multi_hop": 3}"#,
    );
    let l = llm(&server);
    let rules_only = analyze_rules(VI, &[]).unwrap();
    let a = analyze(VI, &[], Some(&l.llm as &dyn PromptLlm)).unwrap();
    assert_eq!(server.requests().len(), 1, "no history: no rewrite call");
    assert_eq!(a.source, AnalysisSource::Llm);
    assert_eq!(a.query_type, QueryType::Analytical);
    assert!(a.requires_reasoning);
    assert_eq!(a.complexity, Complexity::Moderate);
    assert!((0.35..0.6).contains(&a.complexity_score), "{}", a.complexity_score);
    assert_eq!(a.language, rules_only.language);
    assert_eq!(a.key_concepts, rules_only.key_concepts);
    assert_eq!(a.multi_hop, rules_only.multi_hop);
    assert_eq!(a.multiple_sources, rules_only.multiple_sources);
    let note = a.notes.iter().find(|n| n.contains("rule-based values")).expect("a fallback note");
    for field in ["language", "complexity_score", "key_concepts", "multiple_sources", "multi_hop"] {
        assert!(note.contains(field), "{note}");
    }
    assert!(!note.contains("query_type"), "{note}");
}

#[test]
fn llm_values_the_question_contradicts_are_not_taken() {
    // A small model's reply: wrong language, a translated concept.
    let server = scripted(
        "{}",
        r#"{"language": "en", "query_type": "analytical", "complexity": "moderate", "complexity_score": 0.5,
            "key_concepts": ["Sam Altman", "AI", "important investment"], "requires_reasoning": true,
            "multiple_sources": true, "multi_hop": false}"#,
    );
    let l = llm(&server);
    let a = analyze(ZH, &[], Some(&l.llm as &dyn PromptLlm)).unwrap();
    assert_eq!(a.language, Lang::Zh);
    assert_eq!(a.key_concepts, ["Sam Altman", "AI"]);
    assert!(!a.multi_hop, "the LLM's judgement stands where the question cannot refute it");
    assert!(a.notes.iter().any(|n| n.contains("language en ignored")), "{:?}", a.notes);
    assert!(a.notes.iter().any(|n| n.contains("dropped: important investment")), "{:?}", a.notes);
    // Where the detector only defaulted to English, the LLM's language is taken.
    let server = scripted("{}", r#"{"language": "vi"}"#);
    let l = llm(&server);
    let q = "Aage Bohr, Copenhagen?";
    assert_eq!(detect_language(q), Lang::En);
    assert_eq!(analyze(q, &[], Some(&l.llm as &dyn PromptLlm)).unwrap().language, Lang::Vi);
}

#[test]
fn garbled_or_failed_llm_replies_fall_back_to_rules() {
    let server = scripted("Sure, the question is about his brother.", "It is a factual question, I think. {not json");
    let l = llm(&server);
    let rules_only = analyze_rules("What about his brother?", &bohr_history()).unwrap();
    let a = analyze("What about his brother?", &bohr_history(), Some(&l.llm as &dyn PromptLlm)).unwrap();
    assert_eq!(a.source, AnalysisSource::Rules);
    assert_eq!(a.standalone_question, "What about Aage Bohr's brother?");
    assert_eq!(
        (a.query_type, a.multi_hop, &a.key_concepts),
        (rules_only.query_type, rules_only.multi_hop, &rules_only.key_concepts)
    );
    assert!(a.notes.iter().any(|n| n.contains("follow-up reply is not a JSON object")), "{:?}", a.notes);
    assert!(a.notes.iter().any(|n| n.contains("analysis reply is not a JSON object")), "{:?}", a.notes);

    // An HTTP failure (no retry wrapper here): the call fails, the rules answer.
    let server = MockOpenAi::start().unwrap();
    server.push_faults([Fault::ServerError]);
    let l = llm(&server);
    let a = analyze(ZH, &[], Some(&l.llm as &dyn PromptLlm)).unwrap();
    assert_eq!(a.source, AnalysisSource::Rules);
    assert!(a.multi_hop);
    assert!(a.notes.iter().any(|n| n.contains("LLM analysis failed")), "{:?}", a.notes);
}

// ---- routing and auto --------------------------------------------------------------

#[test]
fn routing_table() {
    let cases = [
        (ZH, 10, Method::Hippo),
        (ZH, 0, Method::Multihop),
        ("Who is the spouse of the director of Titanic?", 5, Method::Hippo),
        ("What is the difference between OpenAI and Anthropic?", 5, Method::Hippo),
        ("So sánh Niels Bohr và Aage Bohr.", 0, Method::Basic),
        ("Why did Microsoft invest in OpenAI?", 5, Method::Local),
        ("人工智能如何影响教育？", 5, Method::Local),
        (VI, 5, Method::Basic),
        ("Who founded OpenAI?", 0, Method::Basic),
    ];
    for (q, facts, want) in cases {
        let r = route(&rules(q), facts);
        assert_eq!(r.method, want, "{q}: {}", r.reason);
        assert!(!r.reason.is_empty());
    }
}

#[test]
fn auto_routes_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let store = small_index(tmp.path());
    let config = Config::default();
    let graph = GraphCache::new();
    let env = QueryEnv { store: &store, embedder: &Trigrams, config: &config, llm: None, graph: &graph };
    let auto = rhizome_retrieve::retriever(Method::Auto);

    let r = auto.retrieve(&env, "Who won the Nobel Prize in Physics in 1975?").unwrap();
    assert_eq!(r.extra["routed_to"], "basic");
    assert_eq!(r.extra["analysis"]["query_type"], "factual");
    assert_eq!(r.extra["analysis"]["source"], "rules");
    assert!(r.notes[0].starts_with("auto: routed to basic"), "{:?}", r.notes);
    assert!(r.notes.iter().any(|n| n.contains("no LLM configured")), "{:?}", r.notes);
    assert!(r.contexts[0].text.contains("Aage Bohr"), "{:?}", r.contexts);
    assert!(r.timings_ms.contains_key("analyze"));

    // Multi-hop with facts in the index: hippo.
    let r = auto.retrieve(&env, "Which company is led by the person who invested in OpenAI?").unwrap();
    assert_eq!(r.extra["analysis"]["multi_hop"], true, "{:#?}", r.extra);
    assert_eq!(r.extra["routed_to"], "hippo", "{:?}", r.notes);
    assert!(
        r.notes[0].starts_with("auto: routed to hippo (multi-hop question and the index has 2 facts)"),
        "{:?}",
        r.notes
    );
    assert!(!r.extra.contains_key("fallback_from"));
    assert!(!r.contexts.is_empty());

    let e = auto.retrieve(&env, "  ").unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
}
