//! Progress bars on a terminal; nothing under --json or when stderr is not a terminal.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use rhizome_ingest::pipeline::Progress;

pub struct Bars {
    enabled: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new(wanted: bool) -> Self {
        Bars { enabled: wanted && std::io::stderr().is_terminal(), bar: Mutex::new(None) }
    }
}

impl Progress for Bars {
    fn start(&self, stage: &str, total: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message(stage.to_string());
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }
    fn advance(&self, n: u64) {
        if let Ok(slot) = self.bar.lock() {
            if let Some(b) = slot.as_ref() {
                b.inc(n);
            }
        }
    }
    fn finish(&self) {
        if let Ok(mut slot) = self.bar.lock() {
            if let Some(b) = slot.take() {
                b.finish_and_clear();
            }
        }
    }
    fn warn(&self, msg: &str) {
        match self.bar.lock().ok().and_then(|s| s.clone()) {
            Some(b) => b.println(format!("warning: {msg}")),
            None => eprintln!("warning: {msg}"),
        }
    }
}
