//! `rhizome bench large-file`: one text file of 1, 5 and 20 MB (passages of a corpus
//! repeated until the size is reached), each indexed by a child `rhizome index` into a
//! fresh index: wall time, MB/s and the child's peak resident memory (its own rusage,
//! not this process's). The baseline, measured in the same run, is the whole file as one
//! batch (`embed.chunks_per_batch` larger than the file), as before files were written in
//! parts; it runs only up to `--baseline-max-mb` because its memory grows with the file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use rhizome_core::Loader;
use rhizome_ingest::load::CorpusLoader;
use serde_json::json;

use crate::common::{bail, print_json, Bench, Context as _, Result};

/// One child run: seconds, peak RSS in MiB, chunks written.
struct Run {
    seconds: f64,
    peak_rss_mib: f64,
    chunks: u64,
}

pub fn large_file(bench: Bench, corpus: &Path, sizes: &[f64], baseline_max_mb: f64) -> Result<()> {
    let docs = CorpusLoader.load(corpus)?;
    if docs.is_empty() {
        bail!("{}: no passages to build a file from", corpus.display());
    }
    let dir = tempfile::tempdir().context("a temporary folder for the benchmark")?;
    let mut rows = Vec::new();
    for &mb in sizes {
        let file = dir.path().join(format!("large-{mb}mb.txt"));
        write_file(&file, &docs, (mb * 1e6) as usize)?;
        let parts = child_run(&bench, &file, dir.path(), None)?;
        let whole =
            if mb <= baseline_max_mb { Some(child_run(&bench, &file, dir.path(), Some(1_000_000_000))?) } else { None };
        let row = json!({
            "mb": mb,
            "chunks": parts.chunks,
            "seconds": parts.seconds,
            "mb_per_s": mb / parts.seconds,
            "peak_rss_mib": parts.peak_rss_mib,
            "baseline_whole_file": whole.as_ref().map(|w| json!({
                "seconds": w.seconds, "peak_rss_mib": w.peak_rss_mib,
                "rss_ratio_to_parts": w.peak_rss_mib / parts.peak_rss_mib,
            })),
        });
        if !bench.json {
            let base = whole.map_or(String::new(), |w| {
                format!(
                    "; whole file in one batch (before): {:.1} s, peak RSS {:.0} MiB ({:.2}x)",
                    w.seconds,
                    w.peak_rss_mib,
                    w.peak_rss_mib / parts.peak_rss_mib
                )
            });
            println!(
                "{mb:>5} MB: {} chunks, {:.1} s ({:.3} MB/s), peak RSS {:.0} MiB{base}",
                parts.chunks,
                parts.seconds,
                mb / parts.seconds,
                parts.peak_rss_mib
            );
        }
        rows.push(row);
    }
    let first = rows.first().and_then(|r| r["peak_rss_mib"].as_f64()).unwrap_or(0.0);
    let last = rows.last().and_then(|r| r["peak_rss_mib"].as_f64()).unwrap_or(0.0);
    if bench.json {
        return print_json(&json!({"corpus": corpus, "model": bench.config.embed.model,
            "chunks_per_batch": bench.config.embed.chunks_per_batch, "runs": rows,
            "rss_ratio_largest_to_smallest": last / first}));
    }
    println!("peak RSS, largest file / smallest: {:.2}x", last / first);
    Ok(())
}

/// Passages "title. text" one after another until `bytes` is reached.
fn write_file(path: &Path, docs: &[rhizome_core::Document], bytes: usize) -> Result<()> {
    let mut text = String::with_capacity(bytes + 4096);
    'fill: loop {
        for d in docs {
            if text.len() >= bytes {
                break 'fill;
            }
            text.push_str(&d.title);
            text.push_str(". ");
            text.push_str(&d.text);
            text.push_str("\n\n");
        }
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// `rhizome index FILE` in a child process on a fresh index, with this run's settings.
fn child_run(bench: &Bench, file: &Path, tmp: &Path, chunks_per_batch: Option<usize>) -> Result<Run> {
    let per = chunks_per_batch.unwrap_or(bench.config.embed.chunks_per_batch);
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("file");
    let index: PathBuf = tmp.join(format!("idx-{stem}-{per}"));
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.arg("--index").arg(&index).arg("--json");
    cmd.args(["--set", &format!("embed.model={}", bench.config.embed.model)]);
    cmd.args(["--set", &format!("communities.enabled={}", bench.config.communities.enabled)]);
    cmd.args(["--set", &format!("embed.chunks_per_batch={per}")]);
    cmd.arg("index").arg(file).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let t = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.context("child stdout")?;
    let mut out = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut out)?;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child, which std has not
    // reaped (we never call Child::wait).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = t.elapsed().as_secs_f64();
    if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("indexing {} failed (status {status})", file.display());
    }
    let report: serde_json::Value = serde_json::from_str(&out).context("the child's JSON report")?;
    let _ = std::fs::remove_dir_all(&index);
    Ok(Run {
        seconds,
        // ru_maxrss is in KiB on Linux.
        peak_rss_mib: usage.ru_maxrss as f64 / 1024.0,
        chunks: report["report"]["chunks"].as_u64().unwrap_or(0),
    })
}
