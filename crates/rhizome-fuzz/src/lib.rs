//! A fuzzer that runs on the stable toolchain: hostile bytes into every loader, importer,
//! model-reply parser, the config reader and the HTTP server, each input bounded in time
//! and memory. Zero panics, zero hangs is the bar.
//!
//! Layout: `rng` (seeded generator), `mutate` (byte- and token-level edits), `alloc` (the
//! counting allocator behind the memory bound), `runner` (the loop, workers, failures),
//! `seeds` (seed inputs: hand-written, the repository's examples, slices of the shared
//! data), `files` (a scratch folder for targets whose API takes a path), and the targets:
//! `t_loaders`, `t_text`, `t_replies`, `t_config`, `t_http`.

pub mod alloc;
pub mod files;
pub mod mutate;
pub mod rng;
pub mod runner;
pub mod seeds;
mod t_config;
mod t_formats;
pub mod t_http;
mod t_loaders;
mod t_replies;
mod t_text;

/// One thing to fuzz.
pub struct Target {
    pub name: &'static str,
    /// What it feeds the input to.
    pub what: &'static str,
    /// Largest input made by mutation.
    pub max_len: usize,
    /// Format tokens mutations insert.
    pub dict: &'static [&'static str],
    /// Seed inputs.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Run one input. `Err` is a broken promise that is not a panic (e.g. HTTP 500).
    pub run: fn(&[u8]) -> Result<(), String>,
    /// Least time an input is given before it counts as a hang, in seconds (0: the
    /// runner's limit), for targets that wait on queued work.
    pub min_time_limit_s: u64,
}

/// Every target, in a fixed order.
pub fn targets() -> &'static [Target] {
    static ALL: std::sync::OnceLock<Vec<Target>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = Vec::new();
        all.extend(t_loaders::targets());
        all.extend(t_formats::targets());
        all.extend(t_text::targets());
        all.extend(t_replies::targets());
        all.extend(t_config::targets());
        all.extend(t_http::targets());
        all
    })
}

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    targets().iter().find(|t| t.name == name)
}

/// Lossy text of an input (targets whose API takes `&str`).
pub fn text(input: &[u8]) -> String {
    String::from_utf8_lossy(input).into_owned()
}
