//! The CI minute: every target fuzzed for a share of about a minute with a fixed seed.
//! Zero failures, and each target must have run a minimum of inputs (a target that
//! silently does nothing fails). Failing inputs are saved under the test's temp folder
//! and printed.

use std::time::Duration;

use rhizome_fuzz::runner::{fuzz, Options};
use rhizome_fuzz::{alloc, targets};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

#[test]
fn every_target_for_a_minute_without_failure() {
    // As the fuzzer's binary does: PDF pages without text would each start pdftoppm and
    // Tesseract (OCR has tests of its own).
    std::env::set_var("RHIZOME_OCR", "off");
    let out = tempfile::Builder::new().prefix("rhizome-fuzz-ci-").tempdir().unwrap();
    let mut problems = Vec::new();
    println!("{:<26} {:>8} {:>9} {:>9}", "target", "execs", "execs/s", "failures");
    for t in targets() {
        // The HTTP target starts two servers over a fresh MiniLM index first.
        let seconds = if t.name == "http" { 10.0 } else { 3.0 };
        let opts = Options {
            seconds,
            seed: 20261125,
            time_limit: Duration::from_secs(10),
            out: Some(out.path().to_path_buf()),
            ..Options::default()
        };
        let r = fuzz(t, &opts);
        println!("{:<26} {:>8} {:>9.0} {:>9}", r.target, r.execs, r.per_second(), r.failures.len());
        let min = if t.name == "http" || t.name == "import_graphrag_parquet" { 10 } else { 20 };
        if r.execs < min {
            problems.push(format!("{}: only {} inputs ran (expected at least {min})", t.name, r.execs));
        }
        for f in &r.failures {
            problems.push(format!(
                "{}: {} x{}: {} (input: {:?})",
                t.name,
                f.kind.as_str(),
                f.count,
                f.message,
                f.saved
            ));
        }
    }
    assert!(alloc::installed(), "the counting allocator is not installed: memory is not bounded");
    if !problems.is_empty() {
        // Keep the failing inputs for the log reader.
        let kept = out.keep();
        panic!("fuzzing failures (inputs under {}):\n{}", kept.display(), problems.join("\n"));
    }
}
