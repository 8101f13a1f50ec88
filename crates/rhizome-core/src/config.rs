//! Typed configuration: defaults -> TOML file -> `RHIZOME_*` environment -> flags.
//!
//! Every key is `section.key` in the file, `RHIZOME_SECTION_KEY` in the environment
//! (e.g. `chunk.size` <-> `RHIZOME_CHUNK_SIZE`, `synonymy.top_k` <-> `RHIZOME_SYNONYMY_TOP_K`)
//! and `--set section.key=value` on the command line.
//!
//! Every numeric and enum setting has a valid range, written in its doc comment
//! (`Valid: ...`) and in the table of [`crate::config_rules`]; loading
//! ([`crate::config_load`]) refuses a value out of range and says where it came from.
//!
//! Config sections owned by crates above core (each retrieval method's settings live with
//! the method in rhizome-retrieve). A section is a settings struct implementing
//! [`Section`]: its name (`[name]` in the file, `name.key` in `--set` and
//! `RHIZOME_NAME_KEY`), the valid ranges of its settings, the rules between them, its free
//! text and its calibration. [`SectionKind::of`] describes it to the loader; a
//! [`Config`] made with [`Config::with_sections`] or loaded by
//! [`Config::load_with_sections`] holds it, layered, checked and reported like the
//! sections core defines, and code reads it with [`Config::section`].

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

pub use crate::config_core::*;
pub use crate::config_origin::{Origin, Origins};
use crate::config_rules::{declaration_problems, rule, show};
pub use crate::config_rules::{rules, Range, Rule};
pub use crate::config_sensemaking::CommunitiesConfig;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[derive(Default)]
pub struct Config {
    pub store: StoreConfig,
    pub chunk: ChunkConfig,
    pub embed: EmbedConfig,
    pub extract: ExtractConfig,
    pub synonymy: SynonymyConfig,
    pub similar: SimilarConfig,
    pub retrieval: RetrievalConfig,
    pub llm: LlmConfig,
    pub communities: CommunitiesConfig,
    /// The sections defined above core: the retrieval methods' settings, each with its
    /// method in rhizome-retrieve, in the order of the method registry.
    #[serde(flatten, skip_deserializing)]
    pub sections: Sections,
}

impl Config {
    /// The settings for an embedder of `cosine_scale` ([`crate::Embedder::cosine_scale`]):
    /// cosine thresholds `t` become `1 - (1 - t) * scale` (the same distance from 1 on
    /// the model's narrower band), and temperatures and the weights of scores added to
    /// cosines are multiplied by `scale`. Scale 1 (MiniLM) changes nothing. Sections
    /// defined above core calibrate themselves ([`Section::calibrate`]).
    pub fn calibrated(&self, cosine_scale: f32) -> Config {
        let s = cosine_scale;
        if !(s > 0.0 && s < 1.0) {
            return self.clone();
        }
        let cal = Calibration { scale: s };
        let mut c = self.clone();
        c.similar.threshold = cal.threshold(c.similar.threshold);
        c.synonymy.threshold = cal.threshold(c.synonymy.threshold);
        if c.extract.resolve_similarity > 0.0 {
            c.extract.resolve_similarity = cal.threshold(c.extract.resolve_similarity);
        }
        c.retrieval.bm25_weight = cal.weight(c.retrieval.bm25_weight);
        c.sections.calibrate(cal);
        c
    }

    /// The configuration as TOML (what `rhizome config` prints): core's sections, then
    /// those defined above core, each with its keys in the order of its struct.
    pub fn to_toml(&self) -> String {
        let mut core = self.clone();
        let sections = std::mem::take(&mut core.sections);
        let mut out = toml::to_string_pretty(&core).unwrap_or_default();
        for (name, text) in sections.texts() {
            out.push_str(&format!("\n[{name}]\n{text}"));
        }
        out
    }
}

/// A rule between two settings, reported with both.
pub struct CrossRule {
    pub keys: [&'static str; 2],
    /// What must hold, in words.
    pub text: &'static str,
    pub holds: fn(&Config) -> bool,
}

/// Rules between two settings.
pub static CROSS_RULES: &[CrossRule] = &[
    CrossRule {
        keys: ["chunk.overlap", "chunk.size"],
        text: "chunk.overlap must be less than chunk.size",
        holds: |c| c.chunk.overlap < c.chunk.size,
    },
    CrossRule {
        keys: ["retrieval.dense_weight", "retrieval.bm25_weight"],
        text: "at least one of the two weights must be above 0",
        holds: |c| c.retrieval.dense_weight > 0.0 || c.retrieval.bm25_weight > 0.0,
    },
];

/// The rule of `key` among core's sections and the sections of `kinds`.
pub fn rule_in(key: &str, kinds: &[&'static SectionKind]) -> Option<&'static Rule> {
    rule(key).or_else(|| kinds.iter().find_map(|k| k.rule(key)))
}

/// [`declaration_problems`] of a section defined above core.
pub fn section_problems(kind: &SectionKind, strukt: &str, src: &str) -> Vec<String> {
    match kind.default_value().to_toml() {
        Ok(defaults) => declaration_problems(kind.name, &defaults, kind.rules, kind.free_text, strukt, src),
        Err(e) => vec![e],
    }
}

/// The cross rules that `config` breaks, with both keys' values and origins.
pub(crate) fn check_cross(config: &Config, value: &toml::Value, origins: &Origins) -> Vec<String> {
    let get = |key: &str| {
        let (s, k) = key.split_once('.').unwrap_or((key, ""));
        value.get(s).and_then(|t| t.get(k)).cloned().unwrap_or(toml::Value::String(String::new()))
    };
    let kinds = config.sections.kinds();
    CROSS_RULES
        .iter()
        .chain(kinds.iter().flat_map(|k| k.cross_rules))
        .filter(|r| !(r.holds)(config))
        .map(|r| {
            let [a, b] = r.keys;
            format!("{}, {}: {}", show(a, &get(a), origins), show(b, &get(b), origins), r.text)
        })
        .collect()
}

/// How settings written on all-MiniLM-L6-v2's cosine scale move to an embedder of another
/// scale ([`crate::Embedder::cosine_scale`]); see [`Config::calibrated`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub scale: f32,
}

impl Calibration {
    /// A cosine threshold: the same distance from 1 on the model's narrower band.
    pub fn threshold(self, t: f32) -> f32 {
        1.0 - (1.0 - t) * self.scale
    }

    /// A temperature, or the weight of a score added to a cosine.
    pub fn weight(self, w: f32) -> f32 {
        w * self.scale
    }
}

/// A settings struct that is one config section. Its fields follow the conventions of
/// core's sections: every numeric and enum setting has a rule in [`Section::RULES`] and a
/// `Valid: ...` sentence in its doc comment (check both with
/// [`section_problems`]).
pub trait Section: Any + Clone + fmt::Debug + PartialEq + Default + Serialize + DeserializeOwned + Send + Sync {
    /// The section's name.
    const NAME: &'static str;
    /// The valid range of each numeric and enum setting (keys `NAME.key`).
    const RULES: &'static [Rule] = &[];
    /// Rules between two settings (read the section with [`Config::section`]).
    const CROSS_RULES: &'static [CrossRule] = &[];
    /// String settings that are free text (`NAME.key`), so they have no rule.
    const FREE_TEXT: &'static [&'static str] = &[];
    /// The loader's description of this section.
    const KIND: SectionKind = SectionKind::of::<Self>();

    /// These settings for an embedder of another cosine scale: thresholds through
    /// [`Calibration::threshold`], temperatures and weights added to cosines through
    /// [`Calibration::weight`]. Nothing by default.
    fn calibrate(&mut self, _c: Calibration) {}
}

/// Declares a settings struct that is one [`Section`]: each field once, with its default
/// and, for numeric and enum settings, its rule (a constructor of
/// [`crate::config_rules`] without the key, which is made from the section's name and the
/// field's). The struct derives `Debug`, `Clone`, `PartialEq` and serde's traits, reads
/// missing fields as their defaults and refuses unknown ones. What the section adds to
/// [`Section`] (cross rules, free text, `calibrate`) goes in the trailing `impl { .. }`.
///
/// ```
/// rhizome_core::section! {
///     "demo",
///     /// A demonstration section.
///     pub struct DemoConfig {
///         /// Results kept. Valid: an integer from 1 to 100.
///         pub top_k: usize = 10 => int(1, 100),
///         /// Whether to explain.
///         pub explain: bool = false,
///     }
///     impl {}
/// }
/// use rhizome_core::config::Section;
/// assert_eq!(DemoConfig::default().top_k, 10);
/// assert_eq!(DemoConfig::RULES[0].key, "demo.top_k");
/// ```
#[macro_export]
macro_rules! section {
    (
        $name:literal,
        $(#[$meta:meta])*
        pub struct $ty:ident {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $fty:ty = $default:expr $(=> $rule:ident($($arg:expr),* $(,)?))?
            ),* $(,)?
        }
        impl { $($body:tt)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $ty {
            $($(#[$fmeta])* pub $field: $fty,)*
        }

        impl Default for $ty {
            fn default() -> Self {
                $ty { $($field: $default,)* }
            }
        }

        impl $crate::config::Section for $ty {
            const NAME: &'static str = $name;
            const RULES: &'static [$crate::config_rules::Rule] = &[
                $($($crate::config_rules::$rule(concat!($name, ".", stringify!($field)), $($arg),*),)?)*
            ];
            $($body)*
        }
    };
}

/// What the loader knows of a [`Section`] without its type: name, rules, default and how
/// to read it from TOML.
pub struct SectionKind {
    pub name: &'static str,
    pub rules: &'static [Rule],
    pub cross_rules: &'static [CrossRule],
    pub free_text: &'static [&'static str],
    type_id: fn() -> TypeId,
    default: fn() -> Box<dyn AnySection>,
    parse: fn(toml::Value) -> Result<Box<dyn AnySection>, String>,
}

impl SectionKind {
    pub const fn of<T: Section>() -> SectionKind {
        SectionKind {
            name: T::NAME,
            rules: T::RULES,
            cross_rules: T::CROSS_RULES,
            free_text: T::FREE_TEXT,
            type_id: TypeId::of::<T>,
            default: default_of::<T>,
            parse: parse_of::<T>,
        }
    }

    /// The section with its default settings.
    pub(crate) fn default_value(&self) -> Box<dyn AnySection> {
        (self.default)()
    }

    /// The section read from its layered TOML table.
    pub(crate) fn parse(&self, v: toml::Value) -> Result<Box<dyn AnySection>, String> {
        (self.parse)(v)
    }

    /// The rule of `key` (`section.key`), if this section has it.
    pub fn rule(&self, key: &str) -> Option<&'static Rule> {
        self.rules.iter().find(|r| r.key == key)
    }
}

impl fmt::Debug for SectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SectionKind({})", self.name)
    }
}

fn default_of<T: Section>() -> Box<dyn AnySection> {
    Box::new(T::default())
}

fn parse_of<T: Section>(v: toml::Value) -> Result<Box<dyn AnySection>, String> {
    v.try_into::<T>().map(|t| Box::new(t) as Box<dyn AnySection>).map_err(|e| format!("[{}]: {e}", T::NAME))
}

/// A [`Section`] without its type, as a [`Config`] holds it.
pub(crate) trait AnySection: Any + fmt::Debug + Send + Sync {
    fn kind(&self) -> &'static SectionKind;
    fn clone_box(&self) -> Box<dyn AnySection>;
    fn same(&self, other: &dyn AnySection) -> bool;
    fn to_toml(&self) -> Result<toml::Value, String>;
    /// The section's keys as TOML text, in the order of its struct.
    fn to_text(&self) -> String;
    fn calibrate(&mut self, c: Calibration);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Section> AnySection for T {
    fn kind(&self) -> &'static SectionKind {
        &T::KIND
    }
    fn clone_box(&self) -> Box<dyn AnySection> {
        Box::new(self.clone())
    }
    fn same(&self, other: &dyn AnySection) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn to_toml(&self) -> Result<toml::Value, String> {
        toml::Value::try_from(self).map_err(|e| format!("[{}]: {e}", T::NAME))
    }
    fn to_text(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
    fn calibrate(&mut self, c: Calibration) {
        Section::calibrate(self, c)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The sections of a [`Config`] that crates above core define, in the order they were
/// added. Serialised as one table per section, after core's sections.
#[derive(Default)]
pub struct Sections(Vec<Box<dyn AnySection>>);

impl Sections {
    /// The kinds of the sections held, in order.
    pub fn kinds(&self) -> Vec<&'static SectionKind> {
        self.0.iter().map(|s| s.kind()).collect()
    }

    /// The names of the sections held, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|s| s.kind().name).collect()
    }

    fn position(&self, id: TypeId) -> Option<usize> {
        self.0.iter().position(|s| (s.kind().type_id)() == id)
    }

    fn get<T: Section>(&self) -> Option<&T> {
        self.0.iter().find_map(|s| s.as_any().downcast_ref::<T>())
    }

    pub(crate) fn push(&mut self, s: Box<dyn AnySection>) {
        match self.position((s.kind().type_id)()) {
            Some(i) => self.0[i] = s,
            None => self.0.push(s),
        }
    }

    /// Each section's name and keys as TOML text.
    pub(crate) fn texts(&self) -> Vec<(&'static str, String)> {
        self.0.iter().map(|s| (s.kind().name, s.to_text())).collect()
    }

    pub(crate) fn calibrate(&mut self, c: Calibration) {
        for s in &mut self.0 {
            s.calibrate(c);
        }
    }
}

impl Clone for Sections {
    fn clone(&self) -> Self {
        Sections(self.0.iter().map(|s| s.clone_box()).collect())
    }
}

impl PartialEq for Sections {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.same(b.as_ref()))
    }
}

impl fmt::Debug for Sections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.0).finish()
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for section in &self.0 {
            let value = section.to_toml().map_err(serde::ser::Error::custom)?;
            map.serialize_entry(section.kind().name, &value)?;
        }
        map.end()
    }
}

impl Config {
    /// These settings with the sections of `kinds` added (at their defaults) where missing.
    pub fn with_sections(mut self, kinds: &[&'static SectionKind]) -> Config {
        for kind in kinds {
            if !self.sections.names().contains(&kind.name) {
                self.sections.push(kind.default_value());
            }
        }
        self
    }

    /// The settings of section `T`: the held ones, or its defaults when this config was
    /// made without it.
    pub fn section<T: Section>(&self) -> Cow<'_, T> {
        match self.sections.get::<T>() {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(T::default()),
        }
    }

    /// The settings of section `T` to change (added at their defaults when missing).
    pub fn section_mut<T: Section>(&mut self) -> &mut T {
        let i = match self.sections.position(TypeId::of::<T>()) {
            Some(i) => i,
            None => {
                self.sections.0.push(Box::new(T::default()));
                self.sections.0.len() - 1
            }
        };
        self.sections.0[i].as_any_mut().downcast_mut::<T>().expect("the position of T")
    }

    /// The rule of `key` (`section.key`): core's, or that of a section this config holds.
    pub fn rule(&self, key: &str) -> Option<&'static Rule> {
        rule_in(key, &self.sections.kinds())
    }
}
