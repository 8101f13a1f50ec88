//! Progress: bars on a terminal; on a pipe or file (a log, a service manager), a plain
//! line on stderr at most every [`LINE_EVERY`]; nothing under --json.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use rhizome_engine::Progress;

/// How often a plain progress line is printed when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(10);

pub struct Bars {
    /// Bars (terminal), lines (not a terminal) or nothing (--json).
    mode: Mode,
    bar: Mutex<Option<ProgressBar>>,
    line: Mutex<Line>,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Bars,
    Lines,
    Off,
}

#[derive(Default)]
struct Line {
    stage: String,
    /// Where the stage is (`report.pdf: page 120 of 500`), when it says.
    place: String,
    total: u64,
    pos: u64,
    bytes: bool,
    started: Option<Instant>,
    printed: Option<Instant>,
}

impl Line {
    fn text(&self) -> String {
        let pct = if self.total > 0 { self.pos as f64 * 100.0 / self.total as f64 } else { 100.0 };
        let secs = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        if self.bytes {
            let mb = |b: u64| b as f64 / 1e6;
            let place = if self.place.is_empty() { String::new() } else { format!(", {}", self.place) };
            format!("{}: {:.1}/{:.1} MB ({pct:.0}%, {secs:.0} s{place})", self.stage, mb(self.pos), mb(self.total))
        } else {
            format!("{}: {}/{} ({pct:.0}%, {secs:.0} s)", self.stage, self.pos, self.total)
        }
    }
}

impl Bars {
    pub fn new(wanted: bool) -> Self {
        let mode = match (wanted, std::io::stderr().is_terminal()) {
            (false, _) => Mode::Off,
            (true, true) => Mode::Bars,
            (true, false) => Mode::Lines,
        };
        Bars { mode, bar: Mutex::new(None), line: Mutex::new(Line::default()) }
    }

    fn begin(&self, stage: &str, total: u64, bytes: bool) {
        match self.mode {
            Mode::Off => {}
            Mode::Lines => {
                if let Ok(mut l) = self.line.lock() {
                    *l = Line { stage: stage.into(), total, bytes, started: Some(Instant::now()), ..Line::default() };
                }
            }
            Mode::Bars => {
                let template = if bytes {
                    "{msg:>10} [{bar:40}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, eta {eta})"
                } else {
                    "{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})"
                };
                let bar = ProgressBar::new(total);
                bar.set_style(
                    ProgressStyle::with_template(template)
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.set_message(stage.to_string());
                if let Ok(mut slot) = self.bar.lock() {
                    *slot = Some(bar);
                }
            }
        }
    }
}

impl Progress for Bars {
    fn start(&self, stage: &str, total: u64) {
        self.begin(stage, total, false);
    }
    fn at(&self, place: &str) {
        match self.mode {
            Mode::Off => {}
            Mode::Lines => {
                if let Ok(mut l) = self.line.lock() {
                    l.place = place.to_string();
                }
            }
            Mode::Bars => {
                if let Ok(slot) = self.bar.lock() {
                    if let Some(b) = slot.as_ref() {
                        b.set_message(place.to_string());
                    }
                }
            }
        }
    }
    fn start_bytes(&self, stage: &str, total: u64) {
        self.begin(stage, total, true);
    }
    fn advance(&self, n: u64) {
        match self.mode {
            Mode::Off => {}
            Mode::Lines => {
                if let Ok(mut l) = self.line.lock() {
                    l.pos += n;
                    let due = l.printed.or(l.started).is_some_and(|t| t.elapsed() >= LINE_EVERY);
                    if due && l.pos < l.total {
                        eprintln!("{}", l.text());
                        l.printed = Some(Instant::now());
                    }
                }
            }
            Mode::Bars => {
                if let Ok(slot) = self.bar.lock() {
                    if let Some(b) = slot.as_ref() {
                        b.inc(n);
                    }
                }
            }
        }
    }
    fn finish(&self) {
        if let Ok(mut l) = self.line.lock() {
            // A stage long enough to have printed a line says that it ended.
            if l.printed.is_some() {
                l.pos = l.total;
                eprintln!("{}", l.text());
            }
            *l = Line::default();
        }
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
