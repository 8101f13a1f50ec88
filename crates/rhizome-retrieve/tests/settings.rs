//! The methods' settings sections: each declares a rule and a `Valid: ...` sentence for
//! every numeric and enum setting, loads, refuses and calibrates as core's sections do,
//! and the registry makes every one of them known.

use rhizome_core::config::section_problems;
use rhizome_core::config::{Range, Section, SectionKind};
use rhizome_core::Config;
use rhizome_retrieve::{
    settings, DriftConfig, GlobalConfig, HippoConfig, LocalConfig, Method, ModesConfig, MultihopConfig,
    MultipathConfig, TogConfig, TogPruning,
};

/// Each section, its struct's name and the source of the file declaring it.
fn declared() -> Vec<(&'static SectionKind, &'static str, &'static str)> {
    vec![
        (&LocalConfig::KIND, "LocalConfig", include_str!("../src/local/settings.rs")),
        (&HippoConfig::KIND, "HippoConfig", include_str!("../src/hippo/settings.rs")),
        (&MultihopConfig::KIND, "MultihopConfig", include_str!("../src/multihop/settings.rs")),
        (&MultipathConfig::KIND, "MultipathConfig", include_str!("../src/multipath/settings.rs")),
        (&ModesConfig::KIND, "ModesConfig", include_str!("../src/modes/settings.rs")),
        (&GlobalConfig::KIND, "GlobalConfig", include_str!("../src/global/settings.rs")),
        (&DriftConfig::KIND, "DriftConfig", include_str!("../src/drift/settings.rs")),
        (&TogConfig::KIND, "TogConfig", include_str!("../src/tog/settings.rs")),
    ]
}

fn sets(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

fn load(s: &[&str]) -> rhizome_core::Result<Config> {
    Config::load_with_sections(&settings(), None, vec![], &sets(s), &[]).map(|(c, _)| c)
}

/// The error of loading with `--set` values.
fn set_err(s: &[&str]) -> String {
    match load(s) {
        Ok(_) => panic!("{s:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_section_rules_and_documents_its_settings() {
    for (kind, strukt, src) in declared() {
        let problems = section_problems(kind, strukt, src);
        assert!(problems.is_empty(), "[{}]: {problems:#?}", kind.name);
    }
    let names: Vec<&str> = settings().iter().map(|k| k.name).collect();
    let declared: Vec<&str> = declared().iter().map(|(k, _, _)| k.name).collect();
    assert_eq!(names, declared, "every section in the registry is checked here, in its order");
    for m in Method::ALL {
        for s in m.settings_sections() {
            assert!(names.contains(&s), "{m}: section {s} is not in settings()");
        }
    }
}

#[test]
fn defaults_load_and_print_every_section() {
    let c = load(&[]).unwrap();
    assert_eq!(c, rhizome_retrieve::with_method_settings(Config::default()));
    let text = c.to_toml();
    for name in ["local", "hippo", "multihop", "multipath", "modes", "global", "drift", "tog"] {
        assert!(text.contains(&format!("\n[{name}]\n")), "{name}: {text}");
    }
    assert!(text.contains("[hippo]\nlinking_top_k = 5\nfact_candidates = 100\nfact_context_weight = 0.5\n"), "{text}");
    assert!(text.contains("anchor_min_score = 0.8\n"), "{text}");
    // The printed settings load back to the same configuration.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rhizome.toml");
    std::fs::write(&f, &text).unwrap();
    let (again, _) = Config::load_with_sections(&settings(), Some(&f), vec![], &[], &[]).unwrap();
    assert_eq!(again, c);
}

#[test]
fn out_of_range_values_are_refused_naming_origin_and_range() {
    let cases = [
        ("multihop.anchor_min_score=-0.2", "a number from 0 to 1"),
        ("hippo.damping=5", "a number greater than 0 and less than 1"),
        ("hippo.damping=1", "a number greater than 0 and less than 1"),
        ("hippo.damping=0", "a number greater than 0 and less than 1"),
        ("tog.depth=50", "an integer from 1 to 10"),
        ("tog.width=0", "an integer from 1 to 100"),
        ("multihop.max_hops=0", "an integer from 1 to 6"),
    ];
    for (arg, range) in cases {
        let err = set_err(&[arg]);
        assert!(err.contains(&format!("(from --set {arg}): must be {range}")), "{arg}: {err}");
    }
    let c = load(&["hippo.damping=0.85", "synonymy.threshold=1"]).unwrap();
    assert!((c.section::<HippoConfig>().damping - 0.85).abs() < 1e-6);
    for kind in settings() {
        for r in kind.rules.iter().filter(|r| matches!(r.range, Range::Float { .. })) {
            for bad in ["NaN", "inf", "-inf"] {
                let arg = format!("{}={bad}", r.key);
                let err = set_err(&[arg.as_str()]);
                assert!(
                    err.contains(&format!("{} = ", r.key)) && err.contains(&format!("(from --set {arg})")),
                    "{err}"
                );
                assert!(err.contains(&r.range.describe()), "{err}");
            }
        }
    }
}

#[test]
fn enums_cross_rules_and_unknown_keys() {
    let err = set_err(&["tog.pruning=BM25"]);
    assert!(err.contains("tog.pruning = \"BM25\"") && err.contains("one of: auto, llm, semantic, bm25"), "{err}");
    let c = load(&["tog.pruning=bm25"]).unwrap();
    assert_eq!(c.section::<TogConfig>().pruning, TogPruning::Bm25);
    let err = set_err(&["local.text_unit_prop=0.8", "local.community_prop=0.5"]);
    assert!(err.contains("local.community_prop = 0.5 (from --set local.community_prop=0.5)"), "{err}");
    assert!(err.contains("the two shares of the context budget must add up to at most 1"), "{err}");
    let err = set_err(&["hippo.dampin=0.5"]);
    assert!(
        err.contains("unknown setting hippo.dampin (from --set hippo.dampin=0.5); did you mean hippo.damping?"),
        "{err}"
    );
    let env = vec![("RHIZOME_HIPPO_QA_TOP_K".to_string(), "4".to_string())];
    let (c, warnings) = Config::load_with_sections(&settings(), None, env, &[], &[]).unwrap();
    assert_eq!(c.section::<HippoConfig>().qa_top_k, 4);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn settings_used_by_the_tests_and_docs_validate() {
    load(&[
        "global.map_max_tokens=1200",
        "global.map_max_tokens=2500",
        "global.reduce_max_tokens=40",
        "tog.width=2",
        "tog.depth=2",
        "tog.num_retain_entity=2",
        "tog.pruning=bm25",
        "multipath.llm_rerank=true",
        "global.response_type=a list",
    ])
    .unwrap();
}

#[test]
fn calibration_maps_the_methods_thresholds_and_weights() {
    let c = load(&[]).unwrap();
    assert_eq!(c.calibrated(1.0), c, "MiniLM's scale changes nothing");
    let e5 = c.calibrated(0.25);
    let (h, h5) = (c.section::<HippoConfig>(), e5.section::<HippoConfig>());
    assert!((h5.passage_temperature - h.passage_temperature * 0.25).abs() < 1e-6);
    assert!((h5.passage_bm25_weight - h.passage_bm25_weight * 0.25).abs() < 1e-6);
    assert!((e5.section::<MultihopConfig>().anchor_min_score - 0.95).abs() < 1e-6);
    assert_eq!(h5.damping, h.damping);
    assert_eq!(*e5.section::<TogConfig>(), *c.section::<TogConfig>());
}

#[test]
fn per_request_settings_reach_the_methods_sections() {
    let base = load(&["retrieval.top_k=7"]).unwrap();
    let c = base.with_settings(&[("hippo.damping".into(), "0.6".into())], "request params").unwrap();
    assert_eq!(c.retrieval.top_k, 7, "the loaded settings stay");
    assert!((c.section::<HippoConfig>().damping - 0.6).abs() < 1e-6);
    let err = base.with_settings(&[("hippo.damping".into(), "5".into())], "request params").unwrap_err().to_string();
    assert!(err.contains("hippo.damping") && err.contains("request params hippo.damping=5"), "{err}");
    let err = base.with_settings(&[("hippo.nope".into(), "1".into())], "request params").unwrap_err().to_string();
    assert!(err.contains("unknown setting hippo.nope"), "{err}");
}
