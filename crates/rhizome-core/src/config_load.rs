//! Loading a [`Config`]: defaults -> TOML file -> `RHIZOME_*` environment -> `--set` ->
//! command-line flags, recording where each value came from ([`Origins`]), then checking
//! every value against its rule ([`crate::config_rules`]). All problems are reported at
//! once, each naming the key, the value, its origin and the valid range; unknown
//! `RHIZOME_*` variables come back as warnings (the library prints nothing).

use std::path::Path;

use crate::config::Config;
use crate::config::{check_cross, rule_in, SectionKind};
use crate::config_origin::{key_lines, Origin, Origins};
use crate::config_rules::check_values;
use crate::{Error, Result};

/// `RHIZOME_*` environment variables that are not settings: read elsewhere, never warned
/// about. (The variable named by `llm.api_key_env` is not warned about either.)
pub const NON_SETTING_ENV: &[(&str, &str)] = &[
    ("RHIZOME_INDEX", "the index directory (--index)"),
    ("RHIZOME_CONFIG", "the config file (--config)"),
    ("RHIZOME_MODELS_DIR", "where models are installed and loaded from"),
    ("RHIZOME_PYTHON", "the Python that `rhizome models fetch` runs pip with"),
    ("RHIZOME_LLM_API_KEY", "the API key read by default (see llm.api_key_env)"),
    ("RHIZOME_API_KEYS", "API keys of `rhizome serve`, comma-separated (KEY:ro is read-only)"),
    ("RHIZOME_LOG", "what `rhizome serve` logs, in env-filter syntax (info, debug, ...)"),
    ("RHIZOME_LOG_FORMAT", "how `rhizome serve` logs: text or json (--log-format)"),
    ("RHIZOME_LLAMA_THREADS", "decode threads of the local LLM"),
    ("RHIZOME_LLAMA_LOG", "1: keep llama.cpp's own logging"),
    ("RHIZOME_E5_PARITY_CORPUS", "corpus of the e5 parity test (rhizome-embed)"),
    ("RHIZOME_E5_PARITY_N", "texts taken by the e5 parity test (rhizome-embed)"),
    ("RHIZOME_SOAK_SECS", "seconds the replicas soak test runs (scripts/test: 600)"),
    ("RHIZOME_TEST_JOB_DELAY_SECS", "tests only: seconds each write job of `rhizome serve` waits before it runs"),
    ("RHIZOME_WHEEL_POLICY", "the manylinux policy scripts/build-wheel checks the wheel against"),
];

/// A command-line flag that stands for a setting, e.g. `--top-k 3` for
/// `retrieval.top_k`. Flags apply last, over `--set`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSetting {
    /// `section.key`.
    pub key: String,
    pub value: String,
    /// The flag as typed, for messages (`--top-k 3`).
    pub flag: String,
}

impl FlagSetting {
    pub fn new(key: &str, value: impl ToString, flag: &str) -> Self {
        let value = value.to_string();
        FlagSetting { key: key.into(), flag: format!("{flag} {value}"), value }
    }
}

impl Config {
    /// Defaults, then `file` if given (a missing explicit file is an error), then the
    /// environment, then `overrides` (`section.key=value`); every value is checked
    /// against its rule. Warnings (unknown `RHIZOME_*` variables) are dropped: see
    /// [`Config::load_with_warnings`].
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &[String],
    ) -> Result<Config> {
        Ok(Config::load_with_flags(file, env, overrides, &[])?.0)
    }

    /// [`Config::load`], and the warnings a caller should show (`warning: ...`).
    pub fn load_with_warnings(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &[String],
    ) -> Result<(Config, Vec<String>)> {
        Config::load_with_flags(file, env, overrides, &[])
    }

    /// [`Config::load_with_warnings`] with command-line `flags` applied last.
    pub fn load_with_flags(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &[String],
        flags: &[FlagSetting],
    ) -> Result<(Config, Vec<String>)> {
        Config::load_with_sections(&[], file, env, overrides, flags)
    }

    /// [`Config::load_with_flags`] for a configuration that also holds the sections of
    /// `kinds` (defined by crates above core; see [`crate::config::Section`]).
    pub fn load_with_sections(
        kinds: &[&'static SectionKind],
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &[String],
        flags: &[FlagSetting],
    ) -> Result<(Config, Vec<String>)> {
        let defaults = Config::default().with_sections(kinds);
        let defaults = toml::Value::try_from(defaults).map_err(|e| Error::Config(e.to_string()))?;
        let mut l = Layering {
            value: defaults.clone(),
            defaults,
            kinds: kinds.to_vec(),
            origins: Origins::default(),
            problems: vec![],
        };
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let parsed: toml::Value =
                toml::from_str(&text).map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
            l.file(path, &text, parsed);
        }
        let mut unknown_env = Vec::new();
        for (k, v) in env {
            let Some(rest) = k.strip_prefix("RHIZOME_") else { continue };
            match l.env_key(&rest.to_lowercase()) {
                Some(key) => l.set(&key, &v, Origin::Env { var: k.clone() }),
                None if NON_SETTING_ENV.iter().any(|(n, _)| *n == k) => {}
                None => unknown_env.push(k),
            }
        }
        for o in overrides {
            match o.split_once('=').filter(|(p, _)| p.contains('.')) {
                Some((key, v)) => l.set(key.trim(), v, Origin::Set { arg: o.clone() }),
                None => l.problems.push(format!("--set {o}: expected section.key=value")),
            }
        }
        for f in flags {
            l.set(&f.key, &f.value, Origin::Flag { arg: f.flag.clone() });
        }
        let config = l.checked()?;
        let warnings = unknown_env
            .into_iter()
            .filter(|k| *k != config.llm.api_key_env)
            .map(|k| l.unknown_env_warning(&k))
            .collect();
        Ok((config, warnings))
    }
}

impl Config {
    /// These settings with `settings` (`section.key`, value) applied over them, checked
    /// like every layer; `source` names where they came from in messages (e.g. `request
    /// params`). A server uses this for per-request method parameters.
    pub fn with_settings(&self, settings: &[(String, String)], source: &str) -> Result<Config> {
        if settings.is_empty() {
            return Ok(self.clone());
        }
        let kinds = self.sections.kinds();
        let defaults = Config::default().with_sections(&kinds);
        let defaults = toml::Value::try_from(defaults).map_err(|e| Error::Config(e.to_string()))?;
        let value = toml::Value::try_from(self).map_err(|e| Error::Config(e.to_string()))?;
        let mut l = Layering { value, defaults, kinds, origins: Origins::default(), problems: vec![] };
        for (k, v) in settings {
            l.set(k.trim(), v, Origin::Flag { arg: format!("{source} {k}={v}") });
        }
        l.checked()
    }
}

/// The settings being layered, their origins and the problems found so far.
struct Layering {
    value: toml::Value,
    defaults: toml::Value,
    /// The sections defined above core that the settings hold.
    kinds: Vec<&'static SectionKind>,
    origins: Origins,
    problems: Vec<String>,
}

impl Layering {
    /// The layered settings, every value and cross-field rule checked; all problems at once.
    fn checked(&mut self) -> Result<Config> {
        self.problems.extend(check_values(&self.value, &self.defaults, &self.origins, |k| rule_in(k, &self.kinds)));
        if !self.problems.is_empty() {
            return Err(Error::Config(self.problems.join("\n  ")));
        }
        let mut core = self.value.clone();
        let mut sections = Vec::new();
        for kind in &self.kinds {
            let table = core.as_table_mut().and_then(|t| t.remove(kind.name));
            sections.push(kind.parse(table.unwrap_or(toml::Value::Table(Default::default()))).map_err(Error::Config)?);
        }
        let mut config: Config = core.try_into().map_err(|e: toml::de::Error| Error::Config(e.to_string()))?;
        for s in sections {
            config.sections.push(s);
        }
        let broken = check_cross(&config, &self.value, &self.origins);
        if !broken.is_empty() {
            return Err(Error::Config(broken.join("\n  ")));
        }
        Ok(config)
    }

    /// The file's settings over the current ones; unknown sections and keys are problems.
    fn file(&mut self, path: &Path, text: &str, parsed: toml::Value) {
        let lines = key_lines(text);
        let origin = |key: &str| Origin::File { path: path.to_path_buf(), line: lines.get(key).copied() };
        let Some(table) = parsed.as_table() else { return };
        for (section, inner) in table {
            let Some(known) = self.defaults.get(section).and_then(|s| s.as_table()) else {
                let hint = did_you_mean(section, self.sections().into_iter());
                self.problems.push(format!("unknown section [{section}] ({}){hint}", origin(section)));
                continue;
            };
            let Some(keys) = inner.as_table() else {
                self.problems.push(format!("{section} ({}): must be a [{section}] table", origin(section)));
                continue;
            };
            for (key, v) in keys {
                let full = format!("{section}.{key}");
                if !known.contains_key(key) {
                    let hint = did_you_mean(&full, self.keys().into_iter());
                    self.problems.push(format!("unknown setting {full} ({}){hint}", origin(&full)));
                    continue;
                }
                self.value[section.as_str()][key.as_str()] = v.clone();
                self.origins.set(full.clone(), origin(&full));
            }
        }
    }

    /// `synonymy_top_k` -> `synonymy.top_k`, by the known sections and keys.
    fn env_key(&self, lower: &str) -> Option<String> {
        self.keys().into_iter().find(|k| k.replace('.', "_") == lower)
    }

    /// Set `key` from text (typed like the default), recording its origin.
    fn set(&mut self, key: &str, raw: &str, origin: Origin) {
        let (section, name) = key.split_once('.').unwrap_or((key, ""));
        let Some(default) = self.defaults.get(section).and_then(|s| s.get(name)) else {
            let hint = did_you_mean(key, self.keys().into_iter());
            self.problems.push(format!("unknown setting {key} ({origin}){hint}"));
            return;
        };
        let range = rule_in(key, &self.kinds).map(|r| r.range.describe());
        let bad = |what: &str| format!("{key} expects {}, got {raw:?} ({origin})", range.as_deref().unwrap_or(what));
        let parsed = match default {
            toml::Value::Integer(_) => raw.trim().parse().map(toml::Value::Integer).map_err(|_| bad("an integer")),
            toml::Value::Float(_) => raw.trim().parse().map(toml::Value::Float).map_err(|_| bad("a number")),
            toml::Value::Boolean(_) => raw.trim().parse().map(toml::Value::Boolean).map_err(|_| bad("true or false")),
            toml::Value::Array(_) => Ok(toml::Value::Array(
                raw.split(',')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(|x| toml::Value::String(x.to_string()))
                    .collect(),
            )),
            _ => Ok(toml::Value::String(raw.to_string())),
        };
        match parsed {
            Ok(v) => {
                self.value[section][name] = v;
                self.origins.set(key, origin);
            }
            Err(e) => self.problems.push(e),
        }
    }

    fn sections(&self) -> Vec<String> {
        self.defaults.as_table().map(|t| t.keys().cloned().collect()).unwrap_or_default()
    }

    /// Every `section.key`.
    fn keys(&self) -> Vec<String> {
        let Some(t) = self.defaults.as_table() else { return vec![] };
        t.iter()
            .flat_map(|(s, inner)| {
                inner.as_table().into_iter().flat_map(move |keys| keys.keys().map(move |k| format!("{s}.{k}")))
            })
            .collect()
    }

    fn unknown_env_warning(&self, var: &str) -> String {
        let settings = self.keys().into_iter().map(|k| format!("RHIZOME_{}", k.replace('.', "_").to_uppercase()));
        let others = NON_SETTING_ENV.iter().map(|(n, _)| n.to_string());
        let hint = did_you_mean(var, settings.chain(others));
        format!("{var} is not a Rhizome setting and is ignored{hint}")
    }
}

/// "; did you mean X?" for the candidate closest to `name`, if one is close enough.
fn did_you_mean(name: &str, candidates: impl Iterator<Item = String>) -> String {
    let best = candidates
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    match best {
        Some((d, c)) if d <= 3 && d * 4 <= c.len() => {
            let as_key = c.strip_prefix("RHIZOME_").map(|rest| rest.to_lowercase()).and_then(|rest| {
                // RHIZOME_CHUNK_SIZE: also say its key.
                let (s, k) = rest.split_once('_')?;
                Some(format!(" ({s}.{k})"))
            });
            let as_key = as_key.filter(|_| !NON_SETTING_ENV.iter().any(|(n, _)| *n == c)).unwrap_or_default();
            format!("; did you mean {c}{as_key}?")
        }
        _ => String::new(),
    }
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
