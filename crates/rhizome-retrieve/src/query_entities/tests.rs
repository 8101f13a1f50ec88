//! Tests of the question's entities: folding, the rules, the LLM reply parser.

use super::*;
use rhizome_core::graph::EntityRow;
use rhizome_core::GraphData;

fn graph(names: &[&str]) -> Graph {
    let entities = names
        .iter()
        .enumerate()
        .map(|(i, n)| EntityRow { id: format!("e{i:02}"), name: n.to_string(), entity_type: "E".into() })
        .collect();
    Graph::build(GraphData { entities, ..Default::default() })
}

#[test]
fn folding_ignores_case_diacritics_and_punctuation() {
    assert_eq!(fold("Đại học  Copenhagen"), "dai hoc copenhagen");
    assert_eq!(fold("H. C. Ørsted"), "h c orsted");
    assert_eq!(fold("Sam Altman领导的 公司"), "sam altman领导的公司");
    assert_eq!(fold("Nguye\u{0302}\u{0303}n"), "nguyen");
}

#[test]
fn rules_find_names_in_three_languages() {
    let g = graph(&["Aage Bohr", "Đại học Copenhagen", "微软", "city", "Giải Nobel Vật lý 1975"]);
    assert_eq!(rule_based(&g, "Aage Bohr có những giải thưởng gì?"), ["Aage Bohr"]);
    assert_eq!(rule_based(&g, "aage bohr doat nhung giai thuong nao?"), ["Aage Bohr"]);
    assert_eq!(rule_based(&g, "Ai học ở dai hoc Copenhagen?"), ["Đại học Copenhagen"]);
    assert_eq!(rule_based(&g, "Ai là chủ tịch của Tập đoàn Vingroup?"), ["Tập đoàn Vingroup"]);
    assert_eq!(rule_based(&g, "Who won the 1998 FIFA World Cup?"), ["FIFA World Cup"]);
    assert_eq!(rule_based(&g, "Which city hosts the University of Copenhagen?"), ["University of Copenhagen"]);
    assert_eq!(rule_based(&g, "Ai đoạt Giải Nobel Vật lý 1975?"), ["Giải Nobel Vật lý 1975"]);
    assert_eq!(rule_based(&g, "Nguyễn Du viết Truyện Kiều khi nào?"), ["Nguyễn Du", "Truyện Kiều"]);
    assert_eq!(rule_based(&g, "Đại học Bách khoa Hà Nội ở đâu?"), ["Đại học Bách khoa Hà Nội"]);
    assert_eq!(rule_based(&g, "Sam Altman和微软投资了什么？"), ["Sam Altman", "微软"]);
    let zh = rule_based(&g, "居里夫人在巴黎获得了什么奖？");
    assert!(zh.iter().any(|n| n == "巴黎"), "{zh:?}");
    let nouns = rule_based(&g, "获得了什么奖励？");
    assert!(nouns.contains(&"奖励".to_string()), "{nouns:?}");
    let nouns = rule_based(&g, "这家公司的总部在哪里？");
    assert!(nouns.contains(&"总部".to_string()), "{nouns:?}");
    assert!(rule_based(&g, "what is this?").is_empty());
    let g = graph(&["the world", "series", "2010", "Aage Bohr"]);
    assert_eq!(rule_based(&g, "Who played in the World Series in 2010?"), ["World Series"]);
    assert_eq!(rule_based(&g, "Describe Aage Bohr."), ["Aage Bohr"]);
    let g = graph(&["the waterfall", "Bubye River"]);
    assert_eq!(rule_based(&g, "What is the waterfall near the Bubye River?"), ["Bubye River"]);
    assert_eq!(rule_based(&g, "what is the waterfall near the bubye river?"), ["the waterfall", "Bubye River"]);
}

#[test]
fn llm_names_are_checked_against_the_question() {
    let q = "Aage Bohr có những giải thưởng gì?";
    assert_eq!(parse_llm_names("Names: Aage Bohr", q), Some(vec!["Aage Bohr".to_string()]));
    assert_eq!(parse_llm_names("- \"Aage Bohr\"\n- Niels Bohr", q), Some(vec!["Aage Bohr".to_string()]));
    assert_eq!(parse_llm_names("NONE", q), Some(vec![]));
    assert_eq!(parse_llm_names("The Nobel Prize in Physics, 1975", q), None);
    assert_eq!(parse_llm_names("   ", q), None);
}

#[test]
fn the_name_index_finds_what_the_graph_finds() {
    let names = ["Aage Bohr", "Đại học Copenhagen", "aage  BOHR", "微软", "", "Dai hoc Copenhagen", "Bohr"];
    let g = graph(&names);
    let rows: Vec<EntityRow> = g
        .entity_ids
        .iter()
        .zip(&g.entity_names)
        .map(|(id, n)| EntityRow { id: id.clone(), name: n.clone(), entity_type: "E".into() })
        .collect();
    let ix = crate::graph::NameIndex::new(rows);
    use crate::graph::NameLookup;
    for key in ["aage bohr", "dai hoc copenhagen", "微软", "", "bohr", "aage", "zz"] {
        assert_eq!(NameLookup::entities_folded(&ix, key), NameLookup::entities_folded(&g, key), "{key}");
    }
    assert_eq!(NameLookup::entities_folded(&ix, "aage bohr"), [0, 2]);
    for e in 0..names.len() as u32 {
        assert_eq!(ix.entity_name(e), g.entity_name(e));
    }
}
