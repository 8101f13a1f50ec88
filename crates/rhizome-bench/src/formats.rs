//! `rhizome bench formats FILE...`: each file read as `rhizome index` reads it (PDF,
//! Office, e-books, mail, images by OCR): pages per second and the peak resident memory
//! after it. The baseline, in the same run, is poppler's `pdftotext` on the same PDF
//! (where it is installed): its pages per second, and ours as a ratio to it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use rhizome_formats::Limits;
use serde_json::json;

use crate::common::{bail, peak_rss_mib, print_json, Bench, Result};

pub fn formats(bench: Bench, files: &[std::path::PathBuf]) -> Result<()> {
    let mut rows = Vec::new();
    for file in files {
        let bytes = std::fs::read(file)?;
        let ext = file.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
        let t = Instant::now();
        let x = match rhizome_formats::read(&ext, &bytes, &Limits::default()) {
            Some(Ok(x)) => x,
            Some(Err(e)) => bail!("{}: {e}", file.display()),
            None => bail!("{}: not a format rhizome-formats reads", file.display()),
        };
        let seconds = t.elapsed().as_secs_f64();
        let pages = x.pages.len().max(1);
        let baseline = if ext == "pdf" { pdftotext_seconds(file) } else { None };
        rows.push(json!({
            "file": file.display().to_string(),
            "format": ext,
            "bytes": bytes.len(),
            "pages": pages,
            "chars": x.text.chars().count(),
            "seconds": seconds,
            "pages_per_s": pages as f64 / seconds.max(1e-9),
            "pdftotext_pages_per_s": baseline.map(|b| pages as f64 / b.max(1e-9)),
            "ratio_to_pdftotext": baseline.map(|b| b / seconds.max(1e-9)),
            "peak_rss_mib": peak_rss_mib(),
        }));
    }
    if bench.json {
        return print_json(&json!({ "files": rows }));
    }
    println!(
        "{:<40} {:>6} {:>7} {:>10} {:>12} {:>9} {:>10}",
        "file", "format", "pages", "pages/s", "pdftotext/s", "ratio", "peak MiB"
    );
    for r in &rows {
        let name = Path::new(r["file"].as_str().unwrap_or("")).file_name().map(|n| n.to_string_lossy().into_owned());
        let opt = |k: &str| r[k].as_f64().map_or("-".to_string(), |v| format!("{v:.1}"));
        println!(
            "{:<40} {:>6} {:>7} {:>10.1} {:>12} {:>9} {:>10}",
            name.unwrap_or_default(),
            r["format"].as_str().unwrap_or(""),
            r["pages"],
            r["pages_per_s"].as_f64().unwrap_or(0.0),
            opt("pdftotext_pages_per_s"),
            r["ratio_to_pdftotext"].as_f64().map_or("-".to_string(), |v| format!("{v:.2}x")),
            opt("peak_rss_mib"),
        );
    }
    Ok(())
}

/// Seconds `pdftotext` takes on `file`, when it is installed.
fn pdftotext_seconds(file: &Path) -> Option<f64> {
    let t = Instant::now();
    let ok = Command::new("pdftotext")
        .arg(file)
        .arg("-")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?
        .success();
    ok.then(|| t.elapsed().as_secs_f64())
}
