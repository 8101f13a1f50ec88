//! Tests of configuration loading: layering, origins, ranges, cross-field rules and the
//! warnings about unknown `RHIZOME_*` variables.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{rules, section_problems, Calibration, Config, CrossRule, Range, Rule, Section};
use crate::config_load::{FlagSetting, NON_SETTING_ENV};
use crate::config_rules::{declaration_problems, int, num, FREE_TEXT};

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn sets(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// A config file with `text`, unique to the test.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rhizome-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, text).unwrap();
    f
}

/// The error of loading with `--set` values.
fn set_err(s: &[&str]) -> String {
    match Config::load(None, vec![], &sets(s)) {
        Ok(_) => panic!("{s:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn layers_apply_in_order() {
    let f = file("layers", "[chunk]\nsize = 100\noverlap = 10\n[synonymy]\ntop_k = 3\n");
    let e = env(&[("RHIZOME_CHUNK_OVERLAP", "20"), ("RHIZOME_SYNONYMY_THRESHOLD", "0.9"), ("RHIZOME_INDEX", "/x")]);
    let c = Config::load(Some(&f), e, &sets(&["synonymy.top_k=7"])).unwrap();
    assert_eq!(c.chunk.size, 100);
    assert_eq!(c.chunk.overlap, 20);
    assert_eq!(c.synonymy.top_k, 7);
    assert!((c.synonymy.threshold - 0.9).abs() < 1e-6);
    let err = set_err(&["chunk.size=big"]);
    assert!(err.contains("chunk.size expects an integer"), "{err}");
    assert!(err.contains("from --set chunk.size=big"), "{err}");
    let err = set_err(&["chunk.nope=1"]);
    assert!(err.contains("unknown setting chunk.nope"), "{err}");
}

#[test]
fn calibration_maps_thresholds_and_weights() {
    let c = Config::default();
    assert_eq!(c.calibrated(1.0), c, "MiniLM's scale changes nothing");
    let e5 = c.calibrated(0.25);
    assert!((e5.synonymy.threshold - 0.95).abs() < 1e-6);
    assert!((e5.similar.threshold - 0.95).abs() < 1e-6);
    assert!((e5.retrieval.bm25_weight - 0.025).abs() < 1e-6);
    assert_eq!(e5.chunk, c.chunk);
}

#[test]
fn defaults_pass_validation() {
    let (c, warnings) = Config::load_with_warnings(None, vec![], &[]).unwrap();
    assert_eq!(c, Config::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let defaults = toml::Value::try_from(Config::default()).unwrap();
    for r in rules() {
        let (s, k) = r.key.split_once('.').unwrap();
        let v = defaults.get(s).and_then(|t| t.get(k)).unwrap_or_else(|| panic!("{}: no such setting", r.key));
        assert!(r.range.accepts(v), "default {} = {v} is not {}", r.key, r.range.describe());
    }
}

/// Every numeric and enum setting has a rule, string settings a rule or a place in
/// FREE_TEXT, and each field's doc comment states its rule's range (`Valid: ...`).
#[test]
fn every_setting_is_ruled_and_documented() {
    let src = [include_str!("config_core.rs"), include_str!("config_sensemaking.rs")].concat();
    let defaults = toml::Value::try_from(Config::default()).unwrap();
    let mut problems = Vec::new();
    for (section, table) in defaults.as_table().unwrap() {
        let strukt = format!("{}{}Config", section[..1].to_uppercase(), &section[1..]);
        let prefix = format!("{section}.");
        let ruled: Vec<Rule> = rules().iter().filter(|r| r.key.starts_with(&prefix)).copied().collect();
        problems.extend(declaration_problems(section, table, &ruled, FREE_TEXT, &strukt, &src));
    }
    assert!(problems.is_empty(), "{problems:#?}");
    for r in rules() {
        let (s, _) = r.key.split_once('.').unwrap();
        assert!(defaults.get(s).is_some(), "{}: no such section", r.key);
    }
}

#[test]
fn zero_is_refused_where_it_means_nothing() {
    for key in [
        "chunk.size",
        "embed.batch_size",
        "embed.docs_per_batch",
        "retrieval.top_k",
        "communities.max_cluster_size",
        "llm.concurrency",
    ] {
        let arg = format!("{key}=0");
        let err = set_err(&[arg.as_str()]);
        assert!(err.contains(&format!("{key} = 0 (from --set {arg}): must be an integer from")), "{err}");
    }
    let err = set_err(&["chunk.size=0"]);
    assert!(err.ends_with("chunk.size = 0 (from --set chunk.size=0): must be an integer from 16 to 8192"), "{err}");
    // 0 where it is documented as "off" stays valid.
    Config::load(None, vec![], &sets(&["extract.resolve_similarity=0", "synonymy.top_k=0", "llm.gleanings=0"]))
        .unwrap();
}

#[test]
fn negative_values_name_their_origin_not_serde() {
    let err = set_err(&["chunk.size=-1"]);
    assert!(err.contains("chunk.size = -1 (from --set chunk.size=-1): must be an integer from 16 to 8192"), "{err}");
    let f = file("negative", "[embed]\nbatch_size = -4\n");
    let err = Config::load(Some(&f), vec![], &[]).unwrap_err().to_string();
    let want = format!("embed.batch_size = -4 (from {}:2): must be an integer from 1 to 1024", f.display());
    assert!(err.contains(&want), "{err}");
    assert!(!err.contains("invalid value"), "a serde message: {err}");
}

#[test]
fn nan_and_infinities_are_refused_for_every_float() {
    for r in rules().iter().filter(|r| matches!(r.range, Range::Float { .. })) {
        for bad in ["NaN", "inf", "-inf"] {
            let arg = format!("{}={bad}", r.key);
            let err = set_err(&[arg.as_str()]);
            assert!(err.contains(&format!("{} = ", r.key)) && err.contains(&format!("(from --set {arg})")), "{err}");
            assert!(err.contains(&r.range.describe()), "{err}");
        }
    }
}

#[test]
fn out_of_range_numbers_are_refused() {
    let cases = [
        ("synonymy.threshold=2", "a number from 0 to 1"),
        ("synonymy.threshold=-1", "a number from 0 to 1"),
        ("similar.threshold=1.5", "a number from 0 to 1"),
        ("llm.temperature=3", "a number from 0 to 2"),
        ("llm.timeout_s=0", "a number greater than 0 and at most 3600"),
        ("chunk.size=100000", "an integer from 16 to 8192"),
    ];
    for (arg, range) in cases {
        let err = set_err(&[arg]);
        assert!(err.contains(&format!("(from --set {arg}): must be {range}")), "{arg}: {err}");
    }
    let c = Config::load(None, vec![], &sets(&["llm.timeout_s=0.5", "synonymy.threshold=1"])).unwrap();
    assert!((c.llm.timeout_s - 0.5).abs() < 1e-6);
}

#[test]
fn unknown_enum_values_list_the_valid_ones() {
    let cases = [
        ("retrieval.fusion=nosuch", "retrieval.fusion = \"nosuch\"", "one of: score, rrf"),
        ("extract.extractor=spacy", "extract.extractor = \"spacy\"", "one of: nlp, llm"),
        ("llm.provider=ollama", "llm.provider = \"ollama\"", "one of: none, openai, local"),
    ];
    for (arg, shown, valid) in cases {
        let err = set_err(&[arg]);
        assert!(err.contains(shown) && err.contains(valid), "{arg}: {err}");
    }
    let c = Config::load(None, vec![], &sets(&["retrieval.fusion=rrf", "llm.provider="])).unwrap();
    assert_eq!(c.retrieval.fusion, "rrf");
}

#[test]
fn overlap_must_stay_below_size() {
    let err = set_err(&["chunk.overlap=1000"]);
    assert!(err.contains("chunk.overlap = 1000 (from --set chunk.overlap=1000)"), "{err}");
    assert!(err.contains("chunk.size = 256 (default)"), "{err}");
    assert!(err.contains("chunk.overlap must be less than chunk.size"), "{err}");
    let err = set_err(&["chunk.size=64", "chunk.overlap=64"]);
    assert!(err.contains("chunk.size = 64 (from --set chunk.size=64)"), "{err}");
    Config::load(None, vec![], &sets(&["chunk.size=64", "chunk.overlap=63"])).unwrap();
    let err = set_err(&["retrieval.dense_weight=0", "retrieval.bm25_weight=0"]);
    assert!(err.contains("at least one of the two weights"), "{err}");
}

#[test]
fn file_errors_name_the_file_and_line() {
    let f = file("line", "# tuning\n[chunk]\noverlap = 8\n\n[synonymy]\ntop_k = 5\nthreshold = 2.5\n");
    let err = Config::load(Some(&f), vec![], &[]).unwrap_err().to_string();
    let want = format!("synonymy.threshold = 2.5 (from {}:7): must be a number from 0 to 1", f.display());
    assert!(err.contains(&want), "{err}");
    let f = file("unknown", "[chunk]\nsise = 64\n");
    let err = Config::load(Some(&f), vec![], &[]).unwrap_err().to_string();
    let want = format!("unknown setting chunk.sise (from {}:2); did you mean chunk.size?", f.display());
    assert!(err.contains(&want), "{err}");
    let f = file("bool", "communities.enabled = \"yes\"\n");
    let err = Config::load(Some(&f), vec![], &[]).unwrap_err().to_string();
    assert!(
        err.contains(&format!("communities.enabled = \"yes\" (from {}:1): must be true or false", f.display())),
        "{err}"
    );
}

#[test]
fn env_errors_name_the_variable_and_later_layers_win() {
    let e = env(&[("RHIZOME_SYNONYMY_THRESHOLD", "NaN")]);
    let err = Config::load(None, e, &[]).unwrap_err().to_string();
    assert!(
        err.contains(
            "synonymy.threshold = NaN (from environment variable RHIZOME_SYNONYMY_THRESHOLD): \
        must be a number from 0 to 1"
        ),
        "{err}"
    );
    // The bad file value is overridden by the environment, so it is not an error...
    let f = file("override", "[chunk]\nsize = 0\n");
    let c = Config::load(Some(&f), env(&[("RHIZOME_CHUNK_SIZE", "64")]), &[]).unwrap();
    assert_eq!(c.chunk.size, 64);
    // ...and a bad environment value is reported as the environment's, not the file's.
    let f = file("override2", "[chunk]\nsize = 64\n");
    let err = Config::load(Some(&f), env(&[("RHIZOME_CHUNK_SIZE", "3")]), &[]).unwrap_err().to_string();
    assert!(err.contains("(from environment variable RHIZOME_CHUNK_SIZE)"), "{err}");
    // A file integer in a float slot keeps --set typed as a number.
    let f = file("int-float", "[synonymy]\nthreshold = 1\n");
    let c = Config::load(Some(&f), vec![], &sets(&["synonymy.threshold=0.9"])).unwrap();
    assert!((c.synonymy.threshold - 0.9).abs() < 1e-6);
}

#[test]
fn every_problem_is_reported_at_once() {
    let err = set_err(&["chunk.size=0", "retrieval.top_k=0", "retrieval.fusion=x"]);
    for key in ["chunk.size = 0", "retrieval.top_k = 0", "retrieval.fusion = \"x\""] {
        assert!(err.contains(key), "{err}");
    }
}

#[test]
fn flags_apply_last_and_name_themselves() {
    let flag = FlagSetting::new("retrieval.top_k", 0, "--top-k");
    let err = Config::load_with_flags(None, vec![], &sets(&["retrieval.top_k=3"]), &[flag]).unwrap_err();
    assert!(
        err.to_string().contains("retrieval.top_k = 0 (from --top-k 0): must be an integer from 1 to 1000"),
        "{err}"
    );
    let flag = FlagSetting::new("retrieval.top_k", 9, "--top-k");
    let (c, _) = Config::load_with_flags(None, vec![], &sets(&["retrieval.top_k=3"]), &[flag]).unwrap();
    assert_eq!(c.retrieval.top_k, 9);
}

#[test]
fn unknown_rhizome_variables_are_warned_about() {
    let e = env(&[("RHIZOME_NOSUCH_KEY", "1"), ("RHIZOME_CHUNK_SIZ", "64"), ("PATH", "/bin")]);
    let (c, warnings) = Config::load_with_warnings(None, e, &[]).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings.iter().any(|w| w == "RHIZOME_NOSUCH_KEY is not a Rhizome setting and is ignored"), "{warnings:?}");
    assert!(
        warnings.iter().any(
            |w| w.starts_with("RHIZOME_CHUNK_SIZ ") && w.ends_with("did you mean RHIZOME_CHUNK_SIZE (chunk.size)?")
        ),
        "{warnings:?}"
    );
}

#[test]
fn known_non_setting_variables_are_not_warned_about() {
    let mut pairs: Vec<(&str, &str)> = NON_SETTING_ENV.iter().map(|(n, _)| (*n, "x")).collect();
    // The variable named by llm.api_key_env holds a key, not a setting.
    pairs.push(("RHIZOME_LLM_API_KEY_ENV", "RHIZOME_MY_KEY"));
    pairs.push(("RHIZOME_MY_KEY", "sk-1"));
    let (c, warnings) = Config::load_with_warnings(None, env(&pairs), &[]).unwrap();
    assert_eq!(c.llm.api_key_env, "RHIZOME_MY_KEY");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn settings_used_by_the_tests_and_docs_validate() {
    let used = [
        "embed.model=all-MiniLM-L6-v2",
        "llm.timeout_s=1",
        "llm.retry_base_ms=10",
        "llm.concurrency=1",
        "llm.max_retries=2",
        "llm.summarize_min_descriptions=2",
        "retrieval.dense_weight=0",
        "communities.enabled=false",
        "llm.context_tokens=8192",
    ];
    Config::load(None, vec![], &sets(&used)).unwrap();
}

#[test]
fn per_request_settings_apply_over_the_loaded_ones_and_are_checked() {
    let base = Config::load(None, vec![], &["retrieval.top_k=7".into()]).unwrap();
    let c = base.with_settings(&[("retrieval.rrf_k".into(), "30".into())], "request params").unwrap();
    assert_eq!(c.retrieval.top_k, 7, "the loaded settings stay");
    assert!((c.retrieval.rrf_k - 30.0).abs() < 1e-6);
    let err = base.with_settings(&[("retrieval.rrf_k".into(), "-1".into())], "request params").unwrap_err().to_string();
    assert!(err.contains("retrieval.rrf_k") && err.contains("request params retrieval.rrf_k=-1"), "{err}");
    let err = base.with_settings(&[("retrieval.nope".into(), "1".into())], "request params").unwrap_err().to_string();
    assert!(err.contains("unknown setting retrieval.nope"), "{err}");
}

/// A section defined outside core's config files, as a crate above core defines one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProbeConfig {
    /// Valid: an integer from 1 to 10.
    pub width: usize,
    /// A cosine threshold. Valid: a number from 0 to 1.
    pub min_score: f32,
    /// Valid: a number from 0 to 1.
    pub share: f32,
    /// Free text.
    pub label: String,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig { width: 3, min_score: 0.8, share: 0.5, label: "x".into() }
    }
}

impl Section for ProbeConfig {
    const NAME: &'static str = "probe";
    const RULES: &'static [Rule] =
        &[int("probe.width", 1, 10), num("probe.min_score", 0.0, 1.0), num("probe.share", 0.0, 1.0)];
    const CROSS_RULES: &'static [CrossRule] = &[CrossRule {
        keys: ["probe.share", "retrieval.dense_weight"],
        text: "probe.share must not exceed retrieval.dense_weight",
        holds: |c| c.section::<ProbeConfig>().share <= c.retrieval.dense_weight,
    }];
    const FREE_TEXT: &'static [&'static str] = &["probe.label"];
    fn calibrate(&mut self, c: Calibration) {
        self.min_score = c.threshold(self.min_score);
    }
}

fn load_probe(s: &[&str], env: Vec<(String, String)>) -> crate::Result<Config> {
    Config::load_with_sections(&[&ProbeConfig::KIND], None, env, &sets(s), &[]).map(|(c, _)| c)
}

#[test]
fn a_section_from_above_is_layered_checked_and_calibrated_like_core_ones() {
    assert!(section_problems(&ProbeConfig::KIND, "ProbeConfig", include_str!("config_tests.rs")).is_empty());
    let c = load_probe(&["probe.width=5"], env(&[("RHIZOME_PROBE_SHARE", "0.25")])).unwrap();
    assert_eq!((c.section::<ProbeConfig>().width, c.section::<ProbeConfig>().share), (5, 0.25));
    assert_eq!(c.rule("probe.width").map(|r| r.range.describe()).as_deref(), Some("an integer from 1 to 10"));
    let err = load_probe(&["probe.width=0", "probe.nope=1"], vec![]).unwrap_err().to_string();
    assert!(err.contains("probe.width = 0 (from --set probe.width=0): must be an integer from 1 to 10"), "{err}");
    assert!(err.contains("unknown setting probe.nope"), "{err}");
    let err = load_probe(&["probe.share=1", "retrieval.dense_weight=0.5"], vec![]).unwrap_err().to_string();
    assert!(err.contains("probe.share = 1 (from --set probe.share=1), retrieval.dense_weight = 0.5"), "{err}");
    // Without the section, its keys are unknown; a config made without it reads its defaults.
    assert!(set_err(&["probe.width=5"]).contains("unknown setting probe.width"));
    assert_eq!(*Config::default().section::<ProbeConfig>(), ProbeConfig::default());
    // Calibration, printing, per-request settings and equality see the section.
    let e5 = c.calibrated(0.25);
    assert!((e5.section::<ProbeConfig>().min_score - 0.95).abs() < 1e-6);
    assert_eq!(c.calibrated(1.0), c);
    let text = c.to_toml();
    assert!(text.contains("[llm]") && text.contains("[probe]\nwidth = 5"), "{text}");
    assert!(text.find("[communities]") < text.find("[probe]"), "{text}");
    assert!(text.contains("[probe]\nwidth = 5\nmin_score = 0.8\nshare = 0.25\nlabel = \"x\"\n"), "{text}");
    let d = c.with_settings(&[("probe.width".into(), "7".into())], "params").unwrap();
    assert_eq!(d.section::<ProbeConfig>().width, 7);
    assert_ne!(d, c);
    let err = c.with_settings(&[("probe.width".into(), "70".into())], "params").unwrap_err().to_string();
    assert!(err.contains("probe.width = 70 (from params probe.width=70)"), "{err}");
    let mut m = Config::default();
    m.section_mut::<ProbeConfig>().width = 9;
    assert_eq!(m.with_sections(&[&ProbeConfig::KIND]).section::<ProbeConfig>().width, 9, "a held section stays");
}
