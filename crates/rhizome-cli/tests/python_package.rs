//! The Python package: its wheel (built by maturin from PyPI, `scripts/build-wheel`) installed
//! into a virtual environment with pytest and the real LangChain and LlamaIndex packages,
//! then `crates/rhizome-py/tests` run against it. The MuSiQue OpenIE figures the package
//! must reproduce are the CLI's, measured here on the shared fixture (the CLI's import,
//! MiniLM); the suite imports the same file through the package and compares.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use support::{examples, fixture, ok, rz, shared};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The newest wheel under target/wheels, built by `scripts/build-wheel` (which the test
/// command runs after the build, so that it reuses the build's compiled crates).
fn wheel() -> PathBuf {
    let dir = repo().join("target/wheels");
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "whl")).collect())
        .unwrap_or_default();
    wheels.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    wheels.pop().unwrap_or_else(|| panic!("no wheel in {}: run scripts/build-wheel first", dir.display()))
}

#[test]
fn the_python_package_passes_its_suite() {
    let wheel = wheel();
    eprintln!("testing {}", wheel.display());
    // pytest, langchain-core and llama-index-core, pinned in rhizome-testdb's venvs/.
    let python = rhizome_testdb::python::named("python-package");
    // `python -m pip`: the venv's own pip whatever its scripts' first lines say (a venv
    // copied from another checkout keeps the other's interpreter path in them).
    let out = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--force-reinstall", "--no-deps"])
        .arg(&wheel)
        .output()
        .unwrap();
    assert!(out.status.success(), "pip install {}: {}", wheel.display(), String::from_utf8_lossy(&out.stderr));

    // What the CLI measures on the MuSiQue OpenIE import with the same model.
    let openie = fixture::musique_openie();
    let mut c = rz(&openie);
    c.args(["eval", "--method", "hippo", "--k", "2,5", "--json"]).arg(shared().join("musique/musique_train.json"));
    let cli: serde_json::Value = serde_json::from_slice(&ok(c).stdout).unwrap();
    let mut c = rz(&openie);
    c.args(["--json", "stats"]);
    let stats: serde_json::Value = serde_json::from_slice(&ok(c).stdout).unwrap();

    let figures = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python");
    std::fs::create_dir_all(&figures).unwrap();
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp"])
        .arg(figures.join("pytest"))
        .arg(repo().join("crates/rhizome-py/tests"))
        .env("RHIZOME_TEST_DOCS", examples())
        .env("RHIZOME_TEST_DATA", shared())
        .env("RHIZOME_TEST_OPENIE_INDEX", &openie)
        .env("RHIZOME_TEST_OPENIE_CLI", json!({"recall": cli["recall"], "stats": stats}).to_string())
        .env("RHIZOME_TEST_FIGURES_OUT", figures.join("figures.txt"))
        // The official MCP SDK (its own venv) as the client of `Rhizome(...).mcp()`.
        .env("RHIZOME_TEST_MCP_PYTHON", rhizome_testdb::python::named("mcp"))
        .env("RHIZOME_TEST_MCP_CLIENT", repo().join("crates/rhizome-cli/tests/clients/mcp_client.py"))
        .env_remove("RHIZOME_INDEX")
        .env_remove("RHIZOME_CONFIG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(out.status.success(), "pytest failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}
