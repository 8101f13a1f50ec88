//! Python virtual environments with pinned packages from PyPI, made once per target
//! directory under a file lock (test binaries run side by side): the official clients the
//! server is tested with, and the document-generation libraries the format tests make
//! their fixtures with.

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;

/// The venvs the tests use, by name, with their pins: one file each in `venvs/` (one pin
/// a line), which `scripts/test-venvs` also reads to make them while the build compiles.
const VENVS: &[(&str, &str)] = &[
    ("fixtures", include_str!("../venvs/fixtures.txt")),
    ("clients", include_str!("../venvs/clients.txt")),
    ("mcp", include_str!("../venvs/mcp.txt")),
    ("python-package", include_str!("../venvs/python-package.txt")),
    ("observability", include_str!("../venvs/observability.txt")),
];

/// The pins of the venv `name` (see [`VENVS`]).
pub fn pins(name: &str) -> Vec<&'static str> {
    let (_, text) = VENVS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no venv named {name}"));
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

/// The venv `name` with its pins (see [`venv`]): `fixtures` (the document-generation
/// libraries the format fixtures are made with), `clients` (the official chat clients),
/// `mcp` (the official MCP SDK), `python-package` (pytest, LangChain, LlamaIndex),
/// `observability` (the Prometheus client's parser, the OTLP protobuf messages).
pub fn named(name: &str) -> PathBuf {
    venv(name, &pins(name))
}

/// The Python of the venv `name` under `target/testdb/`, with `pins` installed: made on
/// first use, remade when the pins change.
pub fn venv(name: &str, pins: &[&str]) -> PathBuf {
    let root = crate::root();
    fs::create_dir_all(&root).unwrap();
    let dir = root.join(format!("venv-{name}"));
    let lock = File::create(root.join(format!("venv-{name}.lock"))).unwrap();
    // SAFETY: flock(2) on a descriptor we own; released when `lock` is closed.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let marker = dir.join("rhizome-pins.txt");
    let python = dir.join("bin/python");
    if fs::read_to_string(&marker).ok().as_deref() == Some(&pins.join(" ")) && python.exists() {
        return python;
    }
    let _ = fs::remove_dir_all(&dir);
    let host = std::env::var("RHIZOME_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&host)
        .args(["-m", "venv"])
        .arg(&dir)
        .output()
        .unwrap_or_else(|e| panic!("{host} is needed to make the test venv {name}: {e}"));
    assert!(out.status.success(), "{host} -m venv {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    let out = Command::new(dir.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(pins)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pip could not install {} from PyPI (is PyPI reachable?): {}",
        pins.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    fs::write(&marker, pins.join(" ")).unwrap();
    python
}
