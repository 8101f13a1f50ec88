//! Typed configuration: defaults -> TOML file -> `RHIZOME_*` environment -> flags.
//!
//! Every key is `section.key` in the file, `RHIZOME_SECTION_KEY` in the environment
//! (e.g. `chunk.size` <-> `RHIZOME_CHUNK_SIZE`, `synonymy.top_k` <-> `RHIZOME_SYNONYMY_TOP_K`)
//! and `--set section.key=value` on the command line.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

pub use crate::config_methods::{HippoConfig, LocalConfig, ModesConfig, MultihopConfig, MultipathConfig};
pub use crate::config_sensemaking::{CommunitiesConfig, DriftConfig, GlobalConfig, TogConfig, TogPruning};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub chunk: ChunkConfig,
    pub embed: EmbedConfig,
    pub extract: ExtractConfig,
    pub synonymy: SynonymyConfig,
    pub similar: SimilarConfig,
    pub retrieval: RetrievalConfig,
    pub llm: LlmConfig,
    pub local: LocalConfig,
    pub hippo: HippoConfig,
    pub multihop: MultihopConfig,
    pub multipath: MultipathConfig,
    pub modes: ModesConfig,
    pub communities: CommunitiesConfig,
    pub global: GlobalConfig,
    pub drift: DriftConfig,
    pub tog: TogConfig,
}

/// The LLM used for extraction and answers. `provider = "none"` (the default) keeps
/// everything LLM-free.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// `none`, `openai` (any OpenAI-compatible endpoint) or `local` (a GGUF model).
    pub provider: String,
    /// OpenAI-compatible base URL (…/v1, or an Azure deployment URL).
    pub base_url: String,
    /// Model name (`openai`) or local model name (`local`: see `rhizome models list`).
    pub model: String,
    /// Name of the environment variable holding the API key.
    pub api_key_env: String,
    /// Azure-style endpoints: the `api-version` query parameter (empty: not Azure).
    pub azure_api_version: String,
    pub timeout_s: f64,
    pub max_retries: u32,
    pub retry_base_ms: u64,
    pub retry_max_ms: u64,
    /// Calls in flight at once.
    pub concurrency: usize,
    /// 0: unlimited.
    pub requests_per_minute: u32,
    /// 0: unlimited.
    pub tokens_per_minute: u64,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Directory of prompt files overriding the built-in ones (`NAME.txt`); empty: none.
    pub prompts_dir: String,
    /// Extra "anything missed?" passes per chunk.
    pub gleanings: u32,
    /// Entity types the LLM extractor keeps (others become CONCEPT or are dropped).
    pub schema: Vec<String>,
    /// Entities described in at least this many chunks get an LLM summary (0: never).
    pub summarize_min_descriptions: usize,
    /// Context size for local models, in tokens.
    pub context_tokens: u32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: "none".into(),
            base_url: "http://localhost:11434/v1".into(),
            model: String::new(),
            api_key_env: "RHIZOME_LLM_API_KEY".into(),
            azure_api_version: String::new(),
            timeout_s: 120.0,
            max_retries: 5,
            retry_base_ms: 500,
            retry_max_ms: 30_000,
            concurrency: 8,
            requests_per_minute: 0,
            tokens_per_minute: 0,
            temperature: 0.0,
            max_tokens: 1024,
            prompts_dir: String::new(),
            gleanings: 0,
            schema: [
                "PERSON", "ORGANIZATION", "LOCATION", "EVENT", "CONCEPT", "TECHNOLOGY",
                "PRODUCT", "DATE", "MONEY",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            summarize_min_descriptions: 0,
            context_tokens: 4096,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// Tokens per chunk.
    pub size: usize,
    /// Tokens shared by consecutive chunks.
    pub overlap: usize,
}

/// The embedder of a new index when `embed.model = "auto"`: it measured better than
/// all-MiniLM-L6-v2 on our English (MuSiQue Recall@2/@5), Vietnamese and Chinese data
/// (figures in the README).
pub const DEFAULT_EMBED_MODEL: &str = "multilingual-e5-small";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// Embedding model name (see `rhizome models list`), or `auto`: the model an existing
    /// index was built with, and [`DEFAULT_EMBED_MODEL`] for a new one.
    pub model: String,
    pub batch_size: usize,
    /// Documents per ingestion batch (one transaction each).
    pub docs_per_batch: usize,
    /// Chunks per ingestion batch: a batch closes at `docs_per_batch` documents or this
    /// many chunks, and a larger document is written in parts of this size.
    pub chunks_per_batch: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractConfig {
    /// `nlp` (LLM-free, default).
    pub extractor: String,
    /// Most entities kept per chunk (prune step).
    pub max_entities_per_chunk: usize,
    /// A new entity whose name embeds at least this close to an existing entity, and whose
    /// name passes a lexical check (same numbers; equal but for punctuation, plural or
    /// initials), is merged into it. 0 turns merging off.
    pub resolve_similarity: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynonymyConfig {
    pub top_k: usize,
    pub threshold: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimilarConfig {
    /// Cosine above which two chunks of one document get a SIMILAR_TO edge.
    pub threshold: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    /// Contexts returned.
    pub top_k: usize,
    /// Candidates taken from each of dense and BM25 before fusion.
    pub candidates: usize,
    /// Reciprocal-rank-fusion constant.
    pub rrf_k: f32,
    /// How dense and BM25 results are fused: `score` (weighted cosine + max-normalised
    /// BM25) or `rrf` (weighted reciprocal rank).
    pub fusion: String,
    /// Weight of the dense (embedding) ranking in the fusion.
    pub dense_weight: f32,
    /// Weight of the BM25 ranking in the fusion.
    pub bm25_weight: f32,
    /// Sentences in an extractive answer.
    pub answer_sentences: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            chunk: ChunkConfig::default(),
            embed: EmbedConfig::default(),
            extract: ExtractConfig::default(),
            synonymy: SynonymyConfig::default(),
            similar: SimilarConfig::default(),
            retrieval: RetrievalConfig::default(),
            llm: LlmConfig::default(),
            local: LocalConfig::default(),
            hippo: HippoConfig::default(),
            multihop: MultihopConfig::default(),
            multipath: MultipathConfig::default(),
            modes: ModesConfig::default(),
            communities: CommunitiesConfig::default(),
            global: GlobalConfig::default(),
            drift: DriftConfig::default(),
            tog: TogConfig::default(),
        }
    }
}
impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig { size: 256, overlap: 32 }
    }
}
impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig { model: "auto".into(), batch_size: 32, docs_per_batch: 64, chunks_per_batch: 512 }
    }
}
impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig { extractor: "nlp".into(), max_entities_per_chunk: 40, resolve_similarity: 0.85 }
    }
}
impl Default for SynonymyConfig {
    fn default() -> Self {
        SynonymyConfig { top_k: 10, threshold: 0.8 }
    }
}
impl Default for SimilarConfig {
    fn default() -> Self {
        SimilarConfig { threshold: 0.8 }
    }
}
impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            top_k: 5,
            candidates: 50,
            rrf_k: 60.0,
            fusion: "score".into(),
            dense_weight: 1.0,
            bm25_weight: 0.1,
            answer_sentences: 3,
        }
    }
}

impl Config {
    /// Defaults, then `file` if given (a missing explicit file is an error), then the
    /// environment, then `overrides` (`section.key=value`).
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &[String],
    ) -> Result<Config> {
        let mut value = toml::Value::try_from(Config::default())
            .map_err(|e| Error::Config(e.to_string()))?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let file_value: toml::Value = toml::from_str(&text).map_err(|e| {
                Error::Config(format!("{}: {e}", path.display()))
            })?;
            merge(&mut value, file_value);
        }
        for (k, v) in env {
            let Some(rest) = k.strip_prefix("RHIZOME_") else { continue };
            if let Some((section, key)) = split_env_key(&value, &rest.to_lowercase()) {
                set(&mut value, &section, &key, &v, &k)?;
            }
        }
        for o in overrides {
            let (path, v) = o.split_once('=').ok_or_else(|| {
                Error::Config(format!("--set {o}: expected section.key=value"))
            })?;
            let (section, key) = path.split_once('.').ok_or_else(|| {
                Error::Config(format!("--set {o}: expected section.key=value"))
            })?;
            set(&mut value, section, key, v, &format!("--set {o}"))?;
        }
        value.try_into().map_err(|e: toml::de::Error| Error::Config(e.to_string()))
    }

    /// The settings for an embedder of `cosine_scale` ([`crate::Embedder::cosine_scale`]):
    /// cosine thresholds `t` become `1 - (1 - t) * scale` (the same distance from 1 on
    /// the model's narrower band), and temperatures and the weights of scores added to
    /// cosines are multiplied by `scale`. Scale 1 (MiniLM) changes nothing.
    pub fn calibrated(&self, cosine_scale: f32) -> Config {
        let s = cosine_scale;
        if !(s > 0.0 && s < 1.0) {
            return self.clone();
        }
        let threshold = |t: f32| 1.0 - (1.0 - t) * s;
        let mut c = self.clone();
        c.similar.threshold = threshold(c.similar.threshold);
        c.synonymy.threshold = threshold(c.synonymy.threshold);
        if c.extract.resolve_similarity > 0.0 {
            c.extract.resolve_similarity = threshold(c.extract.resolve_similarity);
        }
        c.multihop.anchor_min_score = threshold(c.multihop.anchor_min_score);
        c.retrieval.bm25_weight *= s;
        c.hippo.passage_temperature *= s;
        c.hippo.passage_bm25_weight *= s;
        c
    }

    /// The configuration as TOML (what `rhizome config` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// `synonymy_top_k` -> (`synonymy`, `top_k`) by matching known section names.
fn split_env_key(value: &toml::Value, key: &str) -> Option<(String, String)> {
    let table = value.as_table()?;
    for (section, inner) in table {
        if let Some(rest) = key.strip_prefix(&format!("{section}_")) {
            if inner.as_table().is_some_and(|t| t.contains_key(rest)) {
                return Some((section.clone(), rest.to_string()));
            }
        }
    }
    None
}

fn set(value: &mut toml::Value, section: &str, key: &str, raw: &str, origin: &str) -> Result<()> {
    let slot = value
        .get_mut(section)
        .and_then(|s| s.get_mut(key))
        .ok_or_else(|| Error::Config(format!("{origin}: unknown setting {section}.{key}")))?;
    let bad = |what: &str| Error::Config(format!("{origin}: {section}.{key} expects {what}, got {raw:?}"));
    *slot = match slot {
        toml::Value::Integer(_) => toml::Value::Integer(raw.trim().parse().map_err(|_| bad("an integer"))?),
        toml::Value::Float(_) => toml::Value::Float(raw.trim().parse().map_err(|_| bad("a number"))?),
        toml::Value::Boolean(_) => toml::Value::Boolean(raw.trim().parse().map_err(|_| bad("true or false"))?),
        toml::Value::Array(_) => toml::Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(|x| toml::Value::String(x.to_string()))
                .collect(),
        ),
        _ => toml::Value::String(raw.to_string()),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_apply_in_order() {
        let dir = std::env::temp_dir().join(format!("rhizome-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("rhizome.toml");
        std::fs::write(&f, "[chunk]\nsize = 100\noverlap = 10\n[synonymy]\ntop_k = 3\n").unwrap();
        let env = vec![
            ("RHIZOME_CHUNK_OVERLAP".to_string(), "20".to_string()),
            ("RHIZOME_SYNONYMY_THRESHOLD".to_string(), "0.9".to_string()),
            ("RHIZOME_INDEX".to_string(), "/x".to_string()),
        ];
        let c = Config::load(Some(&f), env, &["synonymy.top_k=7".into()]).unwrap();
        assert_eq!(c.chunk.size, 100);
        assert_eq!(c.chunk.overlap, 20);
        assert_eq!(c.synonymy.top_k, 7);
        assert!((c.synonymy.threshold - 0.9).abs() < 1e-6);
        let err = Config::load(None, vec![], &["chunk.size=big".into()]).unwrap_err();
        assert!(err.to_string().contains("chunk.size expects an integer"), "{err}");
        let err = Config::load(None, vec![], &["chunk.nope=1".into()]).unwrap_err();
        assert!(err.to_string().contains("unknown setting"), "{err}");
    }

    #[test]
    fn calibration_maps_thresholds_and_weights() {
        let c = Config::default();
        assert_eq!(c.calibrated(1.0), c, "MiniLM's scale changes nothing");
        let e5 = c.calibrated(0.25);
        assert!((e5.synonymy.threshold - 0.95).abs() < 1e-6);
        assert!((e5.similar.threshold - 0.95).abs() < 1e-6);
        assert!((e5.retrieval.bm25_weight - 0.025).abs() < 1e-6);
        assert!((e5.hippo.passage_temperature - c.hippo.passage_temperature * 0.25).abs() < 1e-6);
        assert!(e5.multihop.anchor_min_score > c.multihop.anchor_min_score);
        assert_eq!(e5.chunk, c.chunk);
    }
}
