//! English part-of-speech tagger: an averaged perceptron whose weights ship in the
//! `denckring-en-pos` wheel (UD English-EWT, joint `UPOS|VerbForm` labels such as
//! `NOUN|-` or `VERB|Fin`), installed by `rhizome models fetch` as model `en-pos`.
//!
//! Inference follows the wheel's reference tagger (`perceptron.py`) exactly, so that a
//! sentence gets the same tags here as there (checked by `tests/en_pos.rs`):
//! - words are tagged left to right; a word whose lowercase form is in the tag
//!   dictionary takes its entry, any other is scored;
//! - a word's features are 15 strings: a bias, its last 3/2/1 characters and first
//!   character (lowercased), its shape (`X` if it starts with an uppercase letter, else
//!   `x`, plus `d` if it has a digit), the word itself, the two previous tags, the two
//!   words on each side (lowercased, `<s>` / `</s>` past the ends) and the previous tag
//!   with the word;
//! - a label's score is the sum of its weights over those features, added in feature
//!   order in f64; the best score wins, a tie goes to the label that sorts last, and a
//!   word with no known feature at all gets the last label.
//!
//! The weights file (`data/tagger.json.gz`, gzipped JSON) is read once per process
//! ([`installed`]); a missing model is not an error: English noun phrases are skipped and
//! [`unavailable_note`] says why.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rhizome_core::{Error, Result};

/// Name of the installed model (its directory under the models dir).
pub const MODEL_NAME: &str = rhizome_models::EN_POS.name;
/// The weights file inside the model directory.
pub const WEIGHTS_FILE: &str = "data/tagger.json.gz";
/// Boundary markers the features use past either end of the sentence.
const START: &str = "<s>";
const END: &str = "</s>";

/// A trained tagger: feature weights per label, the tag dictionary, the labels.
pub struct PosTagger {
    /// The labels, sorted (ties between equal scores go to the last).
    labels: Vec<String>,
    /// Labels scored by the model: `labels[..scored]` are its classes; later ones only
    /// come from the tag dictionary.
    scored: usize,
    /// Feature string -> (label index, weight), in the file's order.
    weights: HashMap<String, Vec<(u16, f64)>>,
    /// Lowercase word -> label index, for words the model always tags the same way.
    tagdict: HashMap<String, u16>,
}

impl std::fmt::Debug for PosTagger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PosTagger")
            .field("labels", &self.labels)
            .field("features", &self.weights.len())
            .field("tagdict", &self.tagdict.len())
            .finish()
    }
}

#[derive(serde::Deserialize)]
struct RawModel {
    weights: HashMap<String, HashMap<String, f64>>,
    tagdict: HashMap<String, String>,
    classes: Vec<String>,
}

impl PosTagger {
    /// Reads a gzipped model file (`{weights, tagdict, classes, vocabulary}` JSON).
    pub fn load(path: &Path) -> Result<PosTagger> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(std::io::BufReader::new(file))
            .read_to_end(&mut json)
            .map_err(|e| Error::bad_input(path.display().to_string(), format!("not a gzip file: {e}")))?;
        PosTagger::from_json(&json).map_err(|msg| Error::bad_input(path.display().to_string(), msg))
    }

    /// Builds the tagger from the model's JSON (already decompressed).
    pub fn from_json(json: &[u8]) -> std::result::Result<PosTagger, String> {
        let raw: RawModel = serde_json::from_slice(json).map_err(|e| format!("not a tagger model: {e}"))?;
        let mut labels = raw.classes;
        labels.sort();
        labels.dedup();
        if labels.is_empty() {
            return Err("the model has no classes".into());
        }
        let scored = labels.len();
        // Tag dictionary labels outside the classes are kept (the reference returns them
        // as they are), after the classes so that scoring never picks them.
        let mut extra: Vec<String> =
            raw.tagdict.values().filter(|l| labels.binary_search(l).is_err()).cloned().collect();
        extra.sort();
        extra.dedup();
        labels.extend(extra);
        if labels.len() > usize::from(u16::MAX) {
            return Err("too many labels".into());
        }
        let index = |l: &str| -> Option<u16> {
            match labels[..scored].binary_search_by(|x| x.as_str().cmp(l)) {
                Ok(i) => Some(i as u16),
                Err(_) => labels[scored..].iter().position(|x| x == l).map(|i| (scored + i) as u16),
            }
        };
        let tagdict = raw.tagdict.iter().filter_map(|(w, l)| Some((w.clone(), index(l)?))).collect();
        let weights = raw
            .weights
            .into_iter()
            .map(|(feat, row)| {
                // Weights of labels that are not classes can never win: dropped.
                let row: Vec<(u16, f64)> = row
                    .into_iter()
                    .filter_map(|(l, w)| index(&l).filter(|&i| usize::from(i) < scored).map(|i| (i, w)))
                    .collect();
                (feat, row)
            })
            .collect();
        Ok(PosTagger { labels, scored, weights, tagdict })
    }

    /// The labels the model can give, sorted (`ADJ|-`, ..., `VERB|Fin`, ...).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// One label per word, left to right: `UPOS|VerbForm`, e.g. `NOUN|-`, `VERB|Part`.
    ///
    /// `words` are one sentence's tokens as the model was trained on: words, numbers and
    /// clitics (`do`, `n't`, `'s`), punctuation left out. Digits are recognised with
    /// [`char::is_numeric`] (the reference's `str.isdigit` differs only on numerals that
    /// are not digits, such as `½`, which such tokens do not contain).
    pub fn tag(&self, words: &[&str]) -> Vec<&str> {
        self.tag_detailed(words).into_iter().map(|t| t.label).collect()
    }

    /// [`PosTagger::tag`] with, for each scored word, the runner-up label and how far
    /// behind it is (the labels are the same as `tag`'s).
    pub fn tag_detailed(&self, words: &[&str]) -> Vec<Tagged<'_>> {
        let context: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let mut out: Vec<Tagged> = Vec::with_capacity(words.len());
        let (mut prev, mut prev2) = (START, START);
        let mut scores = vec![0.0f64; self.scored];
        let mut buf = String::new();
        for (i, word) in words.iter().enumerate() {
            let tagged = match self.tagdict.get(&context[i]) {
                Some(&l) => {
                    Tagged { label: self.labels[usize::from(l)].as_str(), runner_up: None, margin: f64::INFINITY }
                }
                None => {
                    let best = self.predict(i, word, &context, prev, prev2, &mut scores, &mut buf);
                    let second =
                        (0..self.scored).filter(|&l| l != usize::from(best)).fold(None, |acc: Option<usize>, l| {
                            match acc {
                                Some(a) if scores[a] > scores[l] => Some(a),
                                _ => Some(l),
                            }
                        });
                    Tagged {
                        label: self.labels[usize::from(best)].as_str(),
                        runner_up: second.map(|l| self.labels[l].as_str()),
                        margin: second.map_or(f64::INFINITY, |l| scores[usize::from(best)] - scores[l]),
                    }
                }
            };
            prev2 = prev;
            prev = tagged.label;
            out.push(tagged);
        }
        out
    }

    /// The best label for word `i` from its features; `scores` holds every label's score
    /// afterwards.
    #[allow(clippy::too_many_arguments)]
    fn predict(
        &self,
        i: usize,
        word: &str,
        context: &[String],
        prev: &str,
        prev2: &str,
        scores: &mut [f64],
        buf: &mut String,
    ) -> u16 {
        let lower = context[i].as_str();
        let chars: Vec<char> = lower.chars().collect();
        let tail = |n: usize| -> String { chars[chars.len().saturating_sub(n)..].iter().collect() };
        let first: String = chars.first().map(|c| c.to_string()).unwrap_or_default();
        let upper = word.chars().next().is_some_and(char::is_uppercase);
        let digit = word.chars().any(char::is_numeric);
        let shape = match (upper, digit) {
            (true, true) => "Xd",
            (true, false) => "X",
            (false, true) => "xd",
            (false, false) => "x",
        };
        let at = |k: Option<usize>, edge: &'static str| -> &str {
            k.and_then(|k| context.get(k)).map_or(edge, String::as_str)
        };
        let w1 = at(i.checked_sub(1), START);
        let w2 = at(i.checked_sub(2), START);
        let n1 = at(Some(i + 1), END);
        let n2 = at(Some(i + 2), END);

        scores.iter_mut().for_each(|s| *s = 0.0);
        let mut any = false;
        let mut add = |buf: &mut String| {
            if let Some(row) = self.weights.get(buf.as_str()) {
                for &(l, w) in row {
                    scores[usize::from(l)] += w;
                    any = true;
                }
            }
            buf.clear();
        };
        let (t3, t2, t1) = (tail(3), tail(2), tail(1));
        let features = [
            format_args!("bias"),
            format_args!("suf3 {t3}"),
            format_args!("suf2 {t2}"),
            format_args!("suf1 {t1}"),
            format_args!("pre1 {first}"),
            format_args!("shape {shape}"),
            format_args!("w {lower}"),
            format_args!("t-1 {prev}"),
            format_args!("t-2 {prev2}"),
            format_args!("t-1t-2 {prev} {prev2}"),
            format_args!("w-1 {w1}"),
            format_args!("w-2 {w2}"),
            format_args!("w+1 {n1}"),
            format_args!("w+2 {n2}"),
            format_args!("t-1 w {prev} {lower}"),
        ];
        for feature in features {
            buf.clear();
            let _ = buf.write_fmt(feature);
            add(buf);
        }
        if !any {
            return (self.scored - 1) as u16;
        }
        // Labels ascend, so `>=` leaves the last of equal scores: the reference's
        // `max(classes, key=(score, label))`.
        let mut best = 0;
        for (l, &s) in scores.iter().enumerate() {
            if s >= scores[best] {
                best = l;
            }
        }
        best as u16
    }
}

/// A word's label from [`PosTagger::tag_detailed`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tagged<'a> {
    /// The label [`PosTagger::tag`] gives.
    pub label: &'a str,
    /// The second best label (None for words tagged from the dictionary).
    pub runner_up: Option<&'a str>,
    /// Score of the label minus that of the runner-up (infinite without one).
    pub margin: f64,
}

/// The universal part of speech of a label: `NOUN` for `NOUN|-`.
pub fn upos(label: &str) -> &str {
    label.split('|').next().unwrap_or(label)
}

/// The models directory ([`rhizome_core::models_dir`]).
pub fn models_dir() -> PathBuf {
    rhizome_core::models_dir()
}

/// The installed model's directory: `<models dir>/en-pos`.
pub fn model_dir() -> PathBuf {
    models_dir().join(MODEL_NAME)
}

static INSTALLED: OnceLock<std::result::Result<PosTagger, String>> = OnceLock::new();

fn installed_result() -> &'static std::result::Result<PosTagger, String> {
    INSTALLED.get_or_init(|| {
        let path = model_dir().join(WEIGHTS_FILE);
        if !path.is_file() {
            return Err(format!("the POS tagger model is not installed (no {})", path.display()));
        }
        // The weights are checked against their pinned digest before they are used.
        let pos = &rhizome_models::EN_POS;
        if let Some((_, what)) = rhizome_models::verify_before_load(pos, &models_dir(), &[WEIGHTS_FILE]) {
            return Err(format!("{WEIGHTS_FILE} {what}"));
        }
        PosTagger::load(&path).map_err(|e| format!("the POS tagger model could not be read: {e}"))
    })
}

/// The installed tagger, read on first use and kept for the process; None when it is
/// not installed or unreadable ([`unavailable_note`] says which).
pub fn installed() -> Option<&'static PosTagger> {
    installed_result().as_ref().ok()
}

/// Err when the tagger model is installed but cannot be read (truncated, overwritten):
/// indexing with it would silently drop English noun phrases, so the index would differ
/// from one made with the model, and the fix is known. A model that is not installed at
/// all is Ok here (noun phrases are skipped with [`unavailable_note`]).
pub fn check_installed() -> Result<()> {
    let path = model_dir().join(WEIGHTS_FILE);
    match installed_result() {
        Err(why) if path.is_file() => Err(Error::Model(format!(
            "{}: {why}; the English POS tagger model is damaged: run `rhizome models fetch` to install it again",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Why English noun phrases are skipped, with the command that fixes it; None when the
/// installed tagger loaded.
pub fn unavailable_note() -> Option<String> {
    installed_result()
        .as_ref()
        .err()
        .map(|why| format!("English noun phrases skipped: {why}; run `rhizome models fetch` to install it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-label model: "bias" favours NOUN, a capital letter favours PROPN.
    fn tiny() -> PosTagger {
        let json = r#"{"classes": ["PROPN|-", "NOUN|-"],
            "tagdict": {"the": "DET|-"},
            "weights": {"bias": {"NOUN|-": 1.0, "PROPN|-": 0.5},
                        "shape X": {"PROPN|-": 1.0},
                        "w tie": {"NOUN|-": -0.5}},
            "vocabulary": []}"#;
        PosTagger::from_json(json.as_bytes()).unwrap()
    }

    #[test]
    fn tags_by_dictionary_then_scores_then_ties() {
        let t = tiny();
        assert_eq!(t.labels(), ["NOUN|-", "PROPN|-", "DET|-"]);
        assert_eq!(t.tag(&["The", "cat", "Paris", "tie"]), ["DET|-", "NOUN|-", "PROPN|-", "PROPN|-"]);
        assert!(t.tag(&[]).is_empty());
        assert_eq!(upos("VERB|Fin"), "VERB");
        assert_eq!(upos("NOUN"), "NOUN");
    }

    #[test]
    fn bad_models_are_errors() {
        assert!(PosTagger::from_json(b"{}").is_err());
        assert!(PosTagger::from_json(br#"{"classes": [], "tagdict": {}, "weights": {}}"#).is_err());
        let dir = std::env::temp_dir().join(format!("rhizome-en-pos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.json.gz");
        std::fs::write(&p, b"not gzip").unwrap();
        let err = PosTagger::load(&p).unwrap_err().to_string();
        assert!(err.contains("not a gzip file"), "{err}");
        assert!(PosTagger::load(&dir.join("missing.gz")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
