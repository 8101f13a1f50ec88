//! Every input the fuzzer ever found failing (`regressions/TARGET/*`), replayed against
//! its target: each must now pass. Also checks that the runner itself catches a panic, a
//! hang and a memory bomb, so that "no failures" means something.

use std::path::Path;
use std::time::Duration;

use rhizome_fuzz::runner::{replay, Kind, Options};
use rhizome_fuzz::{alloc, target, Target};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

/// The runner counts panics and live memory process-wide: the runner self-check panics and
/// allocates on purpose, so the two tests must not overlap (they did under the default
/// parallel test threads, and a saved input was then charged with the self-check's panic).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn saved_failures_replay_clean() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let opts = Options { time_limit: Duration::from_secs(10), ..Options::default() };
    let (mut ran, mut failed) = (0, Vec::new());
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let t = target(&name).unwrap_or_else(|| panic!("regressions/{name}: no such target"));
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "bin")) {
            ran += 1;
            if let Some((kind, msg)) = replay(t, &std::fs::read(f).unwrap(), &opts) {
                failed.push(format!("{}: {}: {msg}", f.display(), kind.as_str()));
            }
        }
    }
    println!("{ran} saved inputs replayed");
    assert!(ran > 0, "no saved inputs under {}", root.display());
    assert!(failed.is_empty(), "saved inputs still fail:\n{}", failed.join("\n"));
}

fn bad(input: &[u8]) -> Result<(), String> {
    match input {
        b"panic" => panic!("boom"),
        b"hang" => loop {
            std::thread::sleep(Duration::from_millis(50));
        },
        b"memory" => {
            let v = vec![1u8; 64 << 20];
            std::hint::black_box(&v);
            Ok(())
        }
        b"check" => Err("a broken promise".into()),
        _ => Ok(()),
    }
}

static BAD: Target = Target {
    name: "bad",
    what: "fails on purpose",
    max_len: 16,
    dict: &[],
    seeds: Vec::new,
    run: bad,
    min_time_limit_s: 0,
};

#[test]
fn the_runner_catches_every_kind_of_failure() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let opts = Options { time_limit: Duration::from_millis(500), mem_limit: 16 << 20, ..Options::default() };
    assert_eq!(replay(&BAD, b"fine", &opts), None);
    assert_eq!(replay(&BAD, b"panic", &opts).map(|f| f.0), Some(Kind::Panic));
    assert_eq!(replay(&BAD, b"hang", &opts).map(|f| f.0), Some(Kind::Hang));
    assert_eq!(replay(&BAD, b"memory", &opts).map(|f| f.0), Some(Kind::Memory));
    assert_eq!(replay(&BAD, b"check", &opts).map(|f| f.0), Some(Kind::Check));
}
