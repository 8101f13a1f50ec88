//! Targets: the document loaders (text, Markdown, HTML, JSON and JSONL corpora) and the
//! importers (HippoRAG OpenIE JSON, edges.csv, Microsoft GraphRAG parquet), each fed a
//! file holding the input, through the same functions `rhizome index` and `rhizome import`
//! call.

use std::path::PathBuf;
use std::sync::OnceLock;

use rhizome_core::Loader;
use rhizome_ingest::load::{CorpusLoader, HtmlLoader, MarkdownLoader, TextLoader};
use serde_json::Value;

use crate::seeds::{file, head, repo, shared, strs};
use crate::{files, Target};

const MARKUP: &[&str] = &[
    "<html>",
    "<head>",
    "<title>",
    "</title>",
    "<body>",
    "<p>",
    "</p>",
    "<br>",
    "<br/>",
    "<script>",
    "</script>",
    "<style>",
    "</style>",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<!DOCTYPE html>",
    "<pre>",
    "<li>",
    "<h1>",
    "</h1>",
    "<a href=\"x\">",
    "&nbsp;",
    "&lt;",
    "&#128512;",
    "&#x1F600;",
    "&#xD800;",
    "&#99999999999;",
    "&unknown;",
    "---\n",
    "title: ",
    "# ",
    "## ",
    "###### ",
    "> ",
    "- ",
    "* ",
    "1. ",
    "```",
    "~~~",
    "    ",
    "[link](",
    "](",
    "![",
    "**",
    "__",
    "_",
    "|---|",
    "| a | b |",
    "<div>",
    "</div>",
    "\\",
    "`code`",
];

const JSON: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"title\"",
    "\"text\"",
    "\"passage\"",
    "\"content\"",
    "\"body\"",
    "\"paragraph_text\"",
    "\"docs\"",
    "\"extracted_entities\"",
    "\"extracted_triples\"",
    ":",
    ",",
    "null",
    "\"\"",
    "[[",
    "]]",
    "\\n",
    "\\u0000",
    "\\ud83d",
    "\\\"",
    "1e400",
    "{\"title\": \"a\", \"text\": \"b\"}",
    "\n",
    "'",
    "None",
    "True",
];

const CSV: &[&str] = &["\"", "\"\"", ",", "\n", "\r\n", "source,relation,target", ",description", " ", ",,", "\"a,b\""];

fn text_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "Hello world.",
        "",
        "   \n\t ",
        "\u{feff}Title line\r\nsecond line\r",
        "Đà Nẵng ở gần Huế. Aage Bohr đoạt giải Nobel.",
        "微软公司投资了OpenAI。Sam Altman领导的公司。",
    ]);
    s.extend(file(repo().join("examples/docs/copenhagen-physics.txt")));
    s.extend(head(shared().join("zh_openai/openai_report.txt"), 4096));
    s
}

fn markdown_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "---\ntitle: Front matter\n---\n# Heading\n\nText with **bold** and [a link](http://x).\n",
        "# Only a heading",
        "```\ncode block never closed\n",
        "> quote\n> > nested\n\n- a\n- b\n  - c\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        "---\ntitle:\n",
        "Setext\n======\n\n![img](x.png) <b>inline html</b>\n",
    ]);
    s.extend(file(repo().join("examples/docs/rhizome-plants.md")));
    s
}

fn html_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "<html><head><title>T</title></head><body><p>Hello &amp; bye</p></body></html>",
        "<script>var a = '<p>';</script><p>after</p>",
        "<title>Only title</title>",
        "<!-- comment never closed <p>x</p>",
        "<p>&#x1F600; &#0; &#xD800; &nbsp;&unknown; &amp</p>",
        "<pre>  keep\n  spacing </pre><style>p{}</style>",
    ]);
    s.extend(file(repo().join("examples/docs/knowledge-graphs.html")));
    s
}

/// A few entries of a corpus file, written again as JSON (a valid small seed).
fn corpus_entries(path: PathBuf, n: usize) -> Option<Value> {
    let v: Value = serde_json::from_slice(&file(path)?).ok()?;
    Some(match v {
        Value::Array(a) => Value::Array(a.into_iter().take(n).collect()),
        Value::Object(o) => Value::Object(o.into_iter().take(n).collect()),
        other => other,
    })
}

fn json_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        r#"[{"title": "A", "text": "Alpha text."}, {"title": "B", "passage": "Beta."}]"#,
        r#"{"Title One": ["Sentence one. ", "Sentence two."], "Empty": []}"#,
        r#"[{"title": "", "text": ""}]"#,
        r#"[{"paragraph_text": "x", "title": 5}, null, 3, "s"]"#,
        r#"{"docs": []}"#,
    ]);
    for (p, n) in [("musique/musique_train_corpus.json", 4), ("hotpotqa/hotpotqa_train_corpus.json", 3)] {
        if let Some(v) = corpus_entries(shared().join(p), n) {
            s.push(serde_json::to_vec_pretty(&v).unwrap_or_default());
        }
    }
    s
}

fn jsonl_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "{\"title\": \"A\", \"text\": \"Alpha.\"}\n{\"title\": \"B\", \"text\": \"Beta.\"}\n",
        "{\"title\": \"A\"}\n\n{}\n[1]\n",
        "{\"title\": \"A\", \"text\": \"no newline at end\"}",
    ]);
    if let Some(Value::Array(a)) = corpus_entries(shared().join("musique/musique_train_corpus.json"), 5) {
        let lines: Vec<String> = a.iter().map(|e| e.to_string()).collect();
        s.push(lines.join("\n").into_bytes());
    }
    s
}

fn openie_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        r#"{"docs": [{"title": "T", "passage": "Alpha met Beta.", "extracted_entities": ["Alpha", "Beta"], "extracted_triples": [["Alpha", "met", "Beta"]]}]}"#,
        r#"[{"title": "T", "text": "x", "extracted_entities": [], "extracted_triples": [["a"], [], ["a", "b", "c", "d"], [1, 2, 3]]}]"#,
        r#"{'docs': [{'title': 'Py', 'passage': 'It's Python', 'extracted_entities': ['A'], 'extracted_triples': [('A', 'is', None)]}]}"#,
    ]);
    let big = shared().join("musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json");
    if let Some(Value::Object(mut o)) = file(big).and_then(|b| serde_json::from_slice(&b).ok()) {
        if let Some(Value::Array(docs)) = o.remove("docs") {
            let small = serde_json::json!({"docs": docs.into_iter().take(3).collect::<Vec<_>>()});
            s.push(serde_json::to_vec(&small).unwrap_or_default());
        }
    }
    s
}

fn edges_seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "source,relation,target\nA,knows,B\n",
        "source,relation,target,description\n\"A, Inc.\",\"owns \"\"x\"\"\",B,desc\n",
        "A,knows\n,,\n\"unterminated,quote\n",
        "source,relation,target\n",
    ]);
    s.extend(head(shared().join("vi_bohr/edges.csv"), 4096));
    s
}

fn load_with(loader: &dyn Loader, ext: &str, input: &[u8]) -> Result<(), String> {
    let path = files::write("input", ext, input);
    if let Ok(docs) = loader.load(&path) {
        if docs.is_empty() {
            return Err(format!("{ext}: loaded without error but no document"));
        }
        if let Some(d) = docs.iter().find(|d| d.text.trim().is_empty()) {
            return Err(format!("{ext}: document {:?} has empty text", d.source));
        }
    }
    Ok(())
}

/// The GraphRAG tables of the small fixture (file name, bytes), read once.
fn parquet_tables() -> &'static Vec<(String, Vec<u8>)> {
    static T: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    T.get_or_init(|| {
        let dir = shared().join("graphrag_fixtures/operation_dulce");
        let mut out = Vec::new();
        for name in
            ["documents", "text_units", "entities", "relationships", "communities", "community_reports", "covariates"]
        {
            if let Some(b) = file(dir.join(format!("{name}.parquet"))) {
                out.push((format!("{name}.parquet"), b));
            }
        }
        out
    })
}

const TABLES: [&str; 7] =
    ["documents", "text_units", "entities", "relationships", "communities", "community_reports", "covariates"];

fn parquet_seeds() -> Vec<Vec<u8>> {
    let mut s: Vec<Vec<u8>> = parquet_tables()
        .iter()
        .map(|(name, b)| {
            let k = TABLES.iter().position(|t| name.starts_with(t)).unwrap_or(0) as u8;
            let mut v = vec![k];
            v.extend(b);
            v
        })
        .collect();
    // Without the fixture: files that only look like parquet.
    s.push(b"\x00PAR1\x00\x00\x00\x00PAR1".to_vec());
    s.push(b"\x02PAR1\x15\x04\x15\x10\x15\x14L\x15\x02\x15\x00\x12\x00\x00\x08\x1c\x00\x00\x00\x00PAR1".to_vec());
    s
}

/// A GraphRAG folder holding the fixture's tables with table `input[0] % 7` replaced by
/// the rest of the input (or only that table, when the fixture is absent).
fn graphrag(input: &[u8]) -> Result<(), String> {
    let dir = files::dir("graphrag");
    let which = input.first().copied().unwrap_or(0) as usize % TABLES.len();
    let replaced = format!("{}.parquet", TABLES[which]);
    for (name, bytes) in parquet_tables() {
        if *name != replaced {
            std::fs::write(dir.join(name), bytes).map_err(|e| e.to_string())?;
        }
    }
    std::fs::write(dir.join(&replaced), input.get(1..).unwrap_or(&[])).map_err(|e| e.to_string())?;
    let _ = rhizome_ingest::import_graphrag::read(&dir);
    Ok(())
}

pub fn targets() -> Vec<Target> {
    let t =
        |name, what, dict, seeds, run| Target { name, what, max_len: 64 << 10, dict, seeds, run, min_time_limit_s: 0 };
    vec![
        t("load_text", "TextLoader (.txt)", MARKUP, text_seeds, |i| load_with(&TextLoader, "txt", i)),
        t("load_markdown", "MarkdownLoader (.md): front matter, headings, markup", MARKUP, markdown_seeds, |i| {
            load_with(&MarkdownLoader, "md", i)
        }),
        t("load_html", "HtmlLoader (.html): tags, entities, scripts", MARKUP, html_seeds, |i| {
            load_with(&HtmlLoader, "html", i)
        }),
        t("load_json_corpus", "CorpusLoader (.json): list and title->sentences forms", JSON, json_seeds, |i| {
            load_with(&CorpusLoader, "json", i)
        }),
        t("load_jsonl_corpus", "CorpusLoader (.jsonl)", JSON, jsonl_seeds, |i| load_with(&CorpusLoader, "jsonl", i)),
        t("import_openie", "HippoRAG OpenIE JSON importer (Python literals too)", JSON, openie_seeds, |i| {
            let _ = rhizome_ingest::import::hipporag_openie(&files::write("openie", "json", i));
            Ok(())
        }),
        t("import_edges_csv", "edges.csv importer", CSV, edges_seeds, |i| {
            let _ = rhizome_ingest::import::edges_csv(&files::write("edges", "csv", i));
            Ok(())
        }),
        Target {
            max_len: 160 << 10,
            ..t(
                "import_graphrag_parquet",
                "Microsoft GraphRAG folder reader (one parquet table mutated)",
                &["PAR1", "\u{0}", "\u{15}", "\u{16}", "\u{19}", "\u{1c}", "\u{ff}"],
                parquet_seeds,
                graphrag,
            )
        },
    ]
}
