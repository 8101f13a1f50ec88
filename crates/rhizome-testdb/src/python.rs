//! Python virtual environments with pinned packages from PyPI, made once per target
//! directory under a file lock (test binaries run side by side): the official clients the
//! server is tested with, and the document-generation libraries the format tests make
//! their fixtures with.

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;

/// The document-generation libraries the format fixtures are made with.
pub const FIXTURE_PINS: &[&str] = &[
    "fpdf2==2.8.9",
    "reportlab==5.1.0",
    "pillow==13.0.0",
    "python-docx==1.2.0",
    "python-pptx==1.0.2",
    "openpyxl==3.1.5",
    "ebooklib==0.20",
    "odfpy==1.4.1",
];

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
