//! Target: the config reader, with everything a user can type: the TOML file, `--set
//! key=value` overrides and `RHIZOME_*` environment values, layered into the typed
//! config and checked. A config that loads must write out (`to_toml`) and load back the
//! same.

use rhizome_core::Config;

use crate::seeds::strs;
use crate::{files, text, Target};

const TOML: &[&str] = &[
    "[",
    "]",
    "[[",
    "]]",
    "=",
    "\"",
    "'",
    "'''",
    "\"\"\"",
    "\n",
    "#",
    ".",
    "[retrieval]",
    "[chunk]",
    "[llm]",
    "[embed]",
    "[store]",
    "[server]",
    "top_k",
    "size",
    "overlap",
    "provider",
    "model",
    "url",
    "= 0",
    "= -1",
    "= 1e400",
    "= nan",
    "= inf",
    "= true",
    "= \"\"",
    "= []",
    "= {}",
    "= 9223372036854775807",
    "= 18446744073709551616",
    "= 1979-05-27",
    "\n%%set\n",
    "\n%%env\n",
    "retrieval.top_k=",
    "chunk.size=",
    "llm.provider=",
    "RHIZOME_RETRIEVAL_TOP_K=",
    "RHIZOME_CHUNK_OVERLAP=",
    "RHIZOME_=",
    "=",
    "==",
    "\u{0}",
];

fn seeds() -> Vec<Vec<u8>> {
    let mut s = strs(&[
        "[retrieval]\ntop_k = 5\n\n[chunk]\nsize = 256\noverlap = 32\n%%set\nretrieval.top_k=7\n%%env\nRHIZOME_CHUNK_SIZE=128\n",
        "[chunk]\nsize = 8\noverlap = 64\n",
        "retrieval = 3\n[unknown]\nx = 1\n[retrieval]\ntop_kk = 2\n",
        "%%set\nnodot=1\nretrieval.top_k=-4\nchunk.size=1e3\nllm.provider==\n%%env\nRHIZOME_NOT_A_SETTING=1\nRHIZOME_RETRIEVAL_TOP_K=abc\n",
        "[llm]\nprovider = \"openai\"\nmodel = \"\"\n",
        "a.b.c = 1\n[[chunk]]\n",
    ]);
    s.push(Config::default().to_toml().into_bytes());
    s
}

/// The input as (file text, overrides, environment).
fn split(input: &str) -> (String, Vec<String>, Vec<(String, String)>) {
    let (file, rest) = input.split_once("\n%%set\n").unwrap_or((input, ""));
    let (file, env_in_file) = file.split_once("\n%%env\n").unwrap_or((file, ""));
    let (sets, env) = rest.split_once("\n%%env\n").unwrap_or((rest, ""));
    let overrides = sets.lines().map(str::to_string).collect();
    let env = env
        .lines()
        .chain(env_in_file.lines())
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or((l, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    (file.to_string(), overrides, env)
}

fn config(input: &[u8]) -> Result<(), String> {
    let (file, overrides, env) = split(&text(input));
    let raw = files::write("rhizome", "toml", file.as_bytes());
    // The file as bytes too: a config that is not UTF-8 must be refused, not panic.
    let _ = Config::load(Some(&files::write("raw", "toml", input)), Vec::new(), &[]);
    // With every method's section, as the CLI loads it.
    let sections = rhizome_engine::settings();
    let Ok((config, _warnings)) = Config::load_with_sections(&sections, Some(&raw), env, &overrides, &[]) else {
        return Ok(());
    };
    let written = config.to_toml();
    let again = files::write("written", "toml", written.as_bytes());
    match Config::load_with_sections(&sections, Some(&again), Vec::new(), &[], &[]).map(|(c, _)| c) {
        Ok(back) if back == config => Ok(()),
        Ok(_) => Err("a loaded config written with to_toml loads back different".into()),
        Err(e) => Err(format!("a loaded config written with to_toml does not load back: {e}")),
    }
}

pub fn targets() -> Vec<Target> {
    vec![Target {
        name: "config",
        what: "config file (TOML) + --set overrides + RHIZOME_* environment, typed and checked",
        max_len: 16 << 10,
        dict: TOML,
        seeds,
        run: config,
        min_time_limit_s: 0,
    }]
}
