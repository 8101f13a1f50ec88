//! Builds the web UI (`web/`, TypeScript bundled by esbuild) into `OUT_DIR/ui`, where
//! `src/ui.rs` embeds it: the binary serves the page with no Node.js at run time. The
//! build needs Node.js and npm once; `npm ci` installs the packages pinned by
//! `web/package-lock.json`. Only with the `ui` feature (on by default).

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| {
        panic!(
            "building the web UI: could not run {what} ({e}). Node.js 20 and npm are needed to build \
                rhizome (Debian: apt-get install nodejs npm)"
        )
    });
    if !status.success() {
        panic!("building the web UI: {what} failed ({status}); run it in web/ to see why");
    }
}

fn newer(a: &Path, b: &Path) -> bool {
    let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (m(a), m(b)) {
        (Some(a), Some(b)) => a > b,
        (_, None) => true,
        _ => false,
    }
}

fn main() {
    // Without the `ui` feature the binary serves a note instead of the page (src/ui.rs),
    // and neither Node.js nor npm is needed.
    if std::env::var_os("CARGO_FEATURE_UI").is_none() {
        return;
    }
    let web = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../web");
    let web = web.canonicalize().unwrap_or(web);
    for f in ["src", "index.html", "style.css", "build.mjs", "package.json", "package-lock.json"] {
        println!("cargo:rerun-if-changed={}", web.join(f).display());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("ui");
    // npm records what it installed in node_modules/.package-lock.json.
    let installed = web.join("node_modules/.package-lock.json");
    if !installed.exists() || newer(&web.join("package-lock.json"), &installed) {
        run(
            Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(&web),
            "npm ci",
        );
    }
    run(Command::new("node").arg("build.mjs").arg(&out).current_dir(&web), "node build.mjs");
}
