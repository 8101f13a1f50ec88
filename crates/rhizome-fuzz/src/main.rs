//! `rhizome-fuzz`: fuzz one target or all of them, or replay saved inputs.
//!
//!     rhizome-fuzz --target all --seconds 3600 --seed 7 --corpus-out fuzz-out
//!     rhizome-fuzz --list
//!     rhizome-fuzz --target load_html --replay fuzz-out/load_html/panic-0123.bin

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rhizome_fuzz::runner::{fuzz, replay, Options};
use rhizome_fuzz::{alloc, target, targets};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

const USAGE: &str = "usage: rhizome-fuzz [--target NAME|all] [--seconds N (total, shared by the targets)] \
[--seed S] [--corpus-out DIR] [--time-limit-ms MS] [--mem-limit-mb MB] [--list] [--replay FILE...]";

fn main() -> Result<()> {
    // Pages without text would each start pdftoppm and Tesseract: too slow to fuzz; the
    // OCR path has tests of its own (tests/formats.rs).
    if std::env::var_os("RHIZOME_OCR").is_none() {
        std::env::set_var("RHIZOME_OCR", "off");
    }
    let mut args = std::env::args().skip(1);
    let (mut name, mut seconds, mut opts) = ("all".to_string(), 60.0, Options::default());
    let mut replays = Vec::new();
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--target" => name = value()?,
            "--seconds" => seconds = value()?.parse().context("--seconds: a number")?,
            "--seed" => opts.seed = value()?.parse().context("--seed: an integer")?,
            "--corpus-out" => opts.out = Some(PathBuf::from(value()?)),
            "--time-limit-ms" => {
                opts.time_limit = Duration::from_millis(value()?.parse().context("--time-limit-ms: an integer")?)
            }
            "--mem-limit-mb" => opts.mem_limit = value()?.parse::<usize>().context("--mem-limit-mb: an integer")? << 20,
            "--replay" => replays.push(PathBuf::from(value()?)),
            "--list" => {
                for t in targets() {
                    println!("{:<26} {}", t.name, t.what);
                }
                return Ok(());
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let chosen: Vec<_> = if name == "all" {
        targets().iter().collect()
    } else {
        name.split(',')
            .map(|n| target(n).with_context(|| format!("no target {n} (see --list)")))
            .collect::<Result<_>>()?
    };
    if !replays.is_empty() {
        let mut failed = 0;
        for path in &replays {
            let input = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            for t in &chosen {
                match replay(t, &input, &opts) {
                    Some((kind, msg)) => {
                        failed += 1;
                        println!("{} on {}: {}: {msg}", t.name, path.display(), kind.as_str());
                    }
                    None => println!("{} on {}: ok", t.name, path.display()),
                }
            }
        }
        rhizome_fuzz::t_http::remove_temp_dir();
        if failed > 0 {
            bail!("{failed} replays failed");
        }
        return Ok(());
    }
    opts.seconds = seconds / chosen.len() as f64;
    println!(
        "fuzzing {} targets, {:.0} s each, seed {}, limits {:?} and {} MiB per input (memory counted: {})",
        chosen.len(),
        opts.seconds,
        opts.seed,
        opts.time_limit,
        opts.mem_limit >> 20,
        alloc::installed()
    );
    println!(
        "{:<26} {:>10} {:>9} {:>9} {:>12} {:>11} {:>8}",
        "target", "execs", "execs/s", "failures", "max input ms", "max +MiB", "guarded"
    );
    let mut total_failures = 0;
    for t in chosen {
        let r = fuzz(t, &opts);
        total_failures += r.failures.len();
        println!(
            "{:<26} {:>10} {:>9.0} {:>9} {:>12.1} {:>11.1} {:>8}",
            r.target,
            r.execs,
            r.per_second(),
            r.failures.len(),
            r.max_input_ms,
            r.max_extra_bytes as f64 / (1 << 20) as f64,
            r.guarded
        );
        for place in &r.guarded_places {
            println!("    guarded panic (an error naming the input, not a failure) at {place}");
        }
        for f in &r.failures {
            let saved = f.saved.as_ref().map(|p| format!(" (saved: {})", p.display())).unwrap_or_default();
            let head: String = f.message.lines().next().unwrap_or("").chars().take(200).collect();
            println!("    {} x{}: {head}{saved}", f.kind.as_str(), f.count);
        }
    }
    rhizome_fuzz::t_http::remove_temp_dir();
    if total_failures > 0 {
        bail!("{total_failures} distinct failures");
    }
    Ok(())
}
