//! Prompt files: built-in texts (this crate's `prompts/*.txt` and the retrieval methods'
//! prompts beside each method, embedded at compile time), each overridable by a file of
//! the same name in a directory (config `llm.prompts_dir`).
//!
//! Template syntax:
//! - `{name}` is a placeholder (`name` = ASCII letters, digits and `_`, not starting with
//!   a digit). Any other brace is literal text, so JSON examples need no escaping.
//!   Values are inserted once: braces inside a value are never expanded.
//! - A line `---user---` splits the system part (above) from the user part (below).
//!   `---system---` and `---assistant---` lines start sections too; a template without
//!   markers is a single user message.
//!
//! [`Prompts::render`] fails (naming the prompt and its source) on an unknown prompt, a
//! placeholder left unfilled, or a value for a placeholder the prompt does not have.
//! [`Prompts::fingerprint`] hashes a template, for cache keys and run records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rhizome_core::ids::content_id;
use rhizome_core::llm::{ChatMessage, Role};
use rhizome_core::{Error, Result};

/// The sentence the built-in `answer` prompt asks for when the contexts do not hold the
/// answer.
pub const INSUFFICIENT_EVIDENCE: &str = "The provided evidence is insufficient to answer this question.";

/// This crate's built-in prompts, by name (file name = name + `.txt`). The retrieval
/// methods' prompts live beside each method and come in through [`Prompts::builtin_with`].
const BUILTIN: &[(&str, &str)] = &[
    ("extract_entities", include_str!("../prompts/extract_entities.txt")),
    ("glean", include_str!("../prompts/glean.txt")),
    ("extract_claims", include_str!("../prompts/extract_claims.txt")),
    ("summarize_entity", include_str!("../prompts/summarize_entity.txt")),
    ("answer", include_str!("../prompts/answer.txt")),
    ("community_report", include_str!("../prompts/community_report.txt")),
];

/// Where a prompt's text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptSource {
    /// The text shipped in `prompts/` (embedded at compile time).
    BuiltIn,
    /// An override: the file it was read from (or `<set in code>` for [`Prompts::set`]).
    File(PathBuf),
}

impl std::fmt::Display for PromptSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PromptSource::BuiltIn => write!(f, "built-in"),
            PromptSource::File(p) => write!(f, "{}", p.display()),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    name: &'static str,
    /// The built-in text: an override must use the same placeholders.
    builtin: &'static str,
    text: String,
    source: PromptSource,
}

/// The prompt set in use: built-ins, some possibly replaced by files.
#[derive(Debug, Clone)]
pub struct Prompts {
    entries: Vec<Entry>,
}

impl Default for Prompts {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Prompts {
    /// This crate's built-in prompts (extraction, summaries, answers, community reports).
    pub fn builtin() -> Self {
        Self::builtin_with(&[])
    }

    /// This crate's built-in prompts and `more`, `(name, text)` pairs that parts above
    /// this crate own (the retrieval methods' prompts, `rhizome_retrieve::prompts`). A
    /// name given twice keeps its first text.
    pub fn builtin_with(more: &[(&'static str, &'static str)]) -> Self {
        let mut entries: Vec<Entry> = Vec::new();
        for &(name, text) in BUILTIN.iter().chain(more) {
            if !entries.iter().any(|e| e.name == name) {
                entries.push(Entry { name, builtin: text, text: text.to_string(), source: PromptSource::BuiltIn });
            }
        }
        Prompts { entries }
    }

    /// Built-ins, overridden by `<dir>/<name>.txt` where such a file exists. Fails if the
    /// directory cannot be read, if it holds a `.txt` file that names no prompt (a typo
    /// would otherwise be silently ignored), or if an override's placeholders differ from
    /// the built-in's (the caller fills exactly those).
    pub fn from_dir(dir: &Path) -> Result<Self> {
        Self::builtin().overridden_from(dir)
    }

    /// These prompts, overridden from `dir` as [`Prompts::from_dir`] does.
    pub fn overridden_from(self, dir: &Path) -> Result<Self> {
        let mut prompts = self;
        let listing = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        for item in listing {
            let path = item.map_err(|e| Error::io(dir, e))?.path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_string) else {
                continue;
            };
            if path.extension().and_then(|e| e.to_str()) != Some("txt") {
                continue;
            }
            if !prompts.entries.iter().any(|e| e.name == stem) {
                return Err(Error::bad_input(
                    path.display().to_string(),
                    format!("not a prompt name; prompt files are {}", prompts.file_names()),
                ));
            }
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            prompts.set_from(&stem, text, PromptSource::File(path))?;
        }
        Ok(prompts)
    }

    /// [`Prompts::from_dir`] when a directory is configured, else the built-ins.
    pub fn load(dir: Option<&Path>) -> Result<Self> {
        Self::load_with(dir, &[])
    }

    /// [`Prompts::builtin_with`]`(more)`, overridden from `dir` when one is configured.
    pub fn load_with(dir: Option<&Path>, more: &[(&'static str, &'static str)]) -> Result<Self> {
        let prompts = Self::builtin_with(more);
        match dir {
            Some(dir) => prompts.overridden_from(dir),
            None => Ok(prompts),
        }
    }

    /// Replace one prompt's text (validated like a file override).
    pub fn set(&mut self, name: &str, text: impl Into<String>) -> Result<()> {
        self.set_from(name, text.into(), PromptSource::File(PathBuf::from("<set in code>")))
    }

    fn set_from(&mut self, name: &str, text: String, source: PromptSource) -> Result<()> {
        let builtin = self.entry(name)?.builtin;
        let want = placeholders_of(builtin);
        let have = placeholders_of(&text);
        if want != have {
            let extra: Vec<_> = have.difference(&want).map(|p| format!("{{{p}}}")).collect();
            let lacking: Vec<_> = want.difference(&have).map(|p| format!("{{{p}}}")).collect();
            let mut msg = format!("prompt `{name}` must use exactly the placeholders {}", braces(&want));
            if !extra.is_empty() {
                msg += &format!("; unknown: {}", extra.join(", "));
            }
            if !lacking.is_empty() {
                msg += &format!("; missing: {}", lacking.join(", "));
            }
            return Err(Error::bad_input(source.to_string(), msg));
        }
        let entry = self.entries.iter_mut().find(|e| e.name == name).expect("known name");
        entry.text = text;
        entry.source = source;
        Ok(())
    }

    fn entry(&self, name: &str) -> Result<&Entry> {
        self.entries.iter().find(|e| e.name == name).ok_or_else(|| self.unknown(name))
    }

    fn unknown(&self, name: &str) -> Error {
        let known = self.names().join(", ");
        Error::bad_input(format!("prompt `{name}`"), format!("unknown prompt; known prompts: {known}"))
    }

    fn file_names(&self) -> String {
        self.entries.iter().map(|e| format!("{}.txt", e.name)).collect::<Vec<_>>().join(", ")
    }

    /// The prompt names, in a fixed order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// The template text of a prompt.
    pub fn text(&self, name: &str) -> Result<&str> {
        Ok(&self.entry(name)?.text)
    }

    /// Where a prompt's text came from.
    pub fn source(&self, name: &str) -> Result<&PromptSource> {
        Ok(&self.entry(name)?.source)
    }

    /// The placeholders a prompt expects, sorted.
    pub fn placeholders(&self, name: &str) -> Result<Vec<String>> {
        Ok(placeholders_of(&self.entry(name)?.text).into_iter().collect())
    }

    /// A short hash of the prompt's template text (`prm_` + 16 hex digits): changes
    /// whenever the text changes.
    pub fn fingerprint(&self, name: &str) -> Result<String> {
        Ok(content_id("prm_", &[name, &self.entry(name)?.text]))
    }

    /// Fill the placeholders of prompt `name` with `vars` and split it into messages.
    /// Every placeholder must be given, and nothing else.
    pub fn render(&self, name: &str, vars: &[(&str, &str)]) -> Result<Vec<ChatMessage>> {
        let entry = self.entry(name)?;
        let wanted = placeholders_of(&entry.text);
        let given: BTreeSet<String> = vars.iter().map(|(k, _)| k.to_string()).collect();
        let unknown_keys: Vec<_> = given.difference(&wanted).cloned().collect();
        let unfilled: Vec<_> = wanted.difference(&given).cloned().collect();
        if !unknown_keys.is_empty() || !unfilled.is_empty() {
            let mut problems = Vec::new();
            if !unfilled.is_empty() {
                problems.push(format!("placeholders not filled: {}", braces(&unfilled)));
            }
            if !unknown_keys.is_empty() {
                problems.push(format!("values for unknown placeholders: {}", unknown_keys.join(", ")));
            }
            return Err(Error::bad_input(
                format!("prompt `{name}` ({})", entry.source),
                format!("{}; the prompt uses {}", problems.join("; "), braces(&wanted)),
            ));
        }
        let filled = substitute(&entry.text, vars);
        Ok(split_sections(&filled))
    }
}

fn braces<'a>(names: impl IntoIterator<Item = &'a String>) -> String {
    let v: Vec<String> = names.into_iter().map(|n| format!("{{{n}}}")).collect();
    if v.is_empty() {
        "no placeholders".to_string()
    } else {
        v.join(", ")
    }
}

/// `{name}` at byte `i` of `s`: the name and the length of the whole placeholder.
fn placeholder_at(s: &str, i: usize) -> Option<(&str, usize)> {
    let rest = s[i..].strip_prefix('{')?;
    let len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    let name = &rest[..len];
    let starts_ok = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    (starts_ok && rest[len..].starts_with('}')).then_some((name, len + 2))
}

fn placeholders_of(text: &str) -> BTreeSet<String> {
    text.match_indices('{').filter_map(|(i, _)| placeholder_at(text, i)).map(|(n, _)| n.to_string()).collect()
}

/// One pass over the template: values are inserted verbatim, never re-scanned.
fn substitute(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + vars.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut last = 0;
    for (i, _) in template.match_indices('{') {
        if i < last {
            continue;
        }
        if let Some((name, len)) = placeholder_at(template, i) {
            if let Some((_, value)) = vars.iter().find(|(k, _)| *k == name) {
                out.push_str(&template[last..i]);
                out.push_str(value);
                last = i + len;
            }
        }
    }
    out.push_str(&template[last..]);
    out
}

/// Split at `---system---` / `---user---` / `---assistant---` lines. Text before the
/// first marker is the system part; without any marker the whole text is the user part.
fn split_sections(text: &str) -> Vec<ChatMessage> {
    let mut sections: Vec<(Role, String)> = Vec::new();
    let mut current: Option<(Role, String)> = None;
    let mut preamble = String::new();
    for line in text.split_inclusive('\n') {
        let role = match line.trim() {
            "---system---" => Some(Role::System),
            "---user---" => Some(Role::User),
            "---assistant---" => Some(Role::Assistant),
            _ => None,
        };
        match (role, current.as_mut()) {
            (Some(role), _) => {
                if let Some(done) = current.take() {
                    sections.push(done);
                }
                current = Some((role, String::new()));
            }
            (None, Some((_, body))) => body.push_str(line),
            (None, None) => preamble.push_str(line),
        }
    }
    let had_markers = current.is_some();
    sections.extend(current);
    if had_markers {
        sections.insert(0, (Role::System, preamble));
    } else {
        sections.push((Role::User, preamble));
    }
    sections
        .into_iter()
        .map(|(role, body)| (role, body.trim().to_string()))
        .filter(|(_, body)| !body.is_empty())
        .map(|(role, content)| ChatMessage { role, content })
        .collect()
}
