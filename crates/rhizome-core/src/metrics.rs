//! Process-wide metrics: counters, gauges and histograms, each a [`Family`] with fixed
//! label names (and, for a histogram, fixed buckets) kept in a `static`, so that any crate
//! counts where the work happens (an embedding call, an LLM call, a query) without a
//! handle passed down. `rhizome serve` renders them at `GET /metrics` in the Prometheus
//! text exposition format 0.0.4 ([`Family::render`]).
//!
//! A family holds one series per distinct set of label values, at most
//! [`MAX_SERIES`]: label values must come from small sets (route templates, method
//! names, stages), never from request content. Updating a series takes one short lock;
//! the families counted here are updated per request, per embedding call or per LLM call,
//! never per item in a loop.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Series a family keeps; past this, updates of new label sets are dropped (a guard
/// against label values that are not from a small set).
pub const MAX_SERIES: usize = 2000;

/// Histogram buckets for latencies in seconds: 1 ms to 2 minutes.
pub const SECONDS_BUCKETS: &[f64] =
    &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

/// What a family measures.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Only goes up (since the process started).
    Counter,
    /// A value set at a moment.
    Gauge,
    /// Observations counted into upper bounds (cumulative, plus `+Inf`), with their sum.
    Histogram(&'static [f64]),
}

#[derive(Debug, Default, Clone)]
struct Series {
    value: f64,
    buckets: Vec<u64>,
    sum: f64,
    count: u64,
}

/// One metric: its name, help text, label names and its series.
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub labels: &'static [&'static str],
    pub kind: Kind,
    series: Mutex<BTreeMap<Vec<String>, Series>>,
}

impl Family {
    pub const fn counter(name: &'static str, help: &'static str, labels: &'static [&'static str]) -> Family {
        Family { name, help, labels, kind: Kind::Counter, series: Mutex::new(BTreeMap::new()) }
    }

    pub const fn gauge(name: &'static str, help: &'static str, labels: &'static [&'static str]) -> Family {
        Family { name, help, labels, kind: Kind::Gauge, series: Mutex::new(BTreeMap::new()) }
    }

    pub const fn histogram(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
        buckets: &'static [f64],
    ) -> Family {
        Family { name, help, labels, kind: Kind::Histogram(buckets), series: Mutex::new(BTreeMap::new()) }
    }

    fn update(&self, values: &[&str], f: impl FnOnce(&mut Series)) {
        debug_assert_eq!(values.len(), self.labels.len(), "{}: label values", self.name);
        let mut map = self.series.lock().unwrap_or_else(|p| p.into_inner());
        let key: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        if let Some(s) = map.get_mut(&key) {
            return f(s);
        }
        if map.len() >= MAX_SERIES {
            return;
        }
        let mut s = Series::default();
        if let Kind::Histogram(b) = self.kind {
            s.buckets = vec![0; b.len()];
        }
        f(&mut s);
        map.insert(key, s);
    }

    /// Add one (a counter).
    pub fn inc(&self, values: &[&str]) {
        self.add(values, 1.0);
    }

    /// Add `v` (a counter; a gauge moves by it).
    pub fn add(&self, values: &[&str], v: f64) {
        self.update(values, |s| s.value += v);
    }

    /// Set the value (a gauge).
    pub fn set(&self, values: &[&str], v: f64) {
        self.update(values, |s| s.value = v);
    }

    /// Count one observation (a histogram).
    pub fn observe(&self, values: &[&str], v: f64) {
        let Kind::Histogram(bounds) = self.kind else { return self.set(values, v) };
        self.update(values, |s| {
            for (i, b) in bounds.iter().enumerate() {
                if v <= *b {
                    s.buckets[i] += 1;
                }
            }
            s.sum += v;
            s.count += 1;
        });
    }

    /// The value of a counter or gauge series (0 when it was never updated).
    pub fn get(&self, values: &[&str]) -> f64 {
        let key: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        self.series.lock().unwrap_or_else(|p| p.into_inner()).get(&key).map_or(0.0, |s| s.value)
    }

    /// The family in the text exposition format: `# HELP`, `# TYPE`, then its series
    /// (a counter or gauge never updated and without labels shows 0).
    pub fn render(&self, out: &mut String) {
        let kind = match self.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram(_) => "histogram",
        };
        let _ = writeln!(out, "# HELP {} {}", self.name, escape_help(self.help));
        let _ = writeln!(out, "# TYPE {} {kind}", self.name);
        let map = self.series.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if map.is_empty() && self.labels.is_empty() && !matches!(self.kind, Kind::Histogram(_)) {
            let _ = writeln!(out, "{} 0", self.name);
        }
        for (values, s) in &map {
            let labels = label_text(self.labels, values, None);
            match self.kind {
                Kind::Counter | Kind::Gauge => {
                    let _ = writeln!(out, "{}{labels} {}", self.name, number(s.value));
                }
                Kind::Histogram(bounds) => {
                    for (b, n) in bounds.iter().zip(&s.buckets) {
                        let le = label_text(self.labels, values, Some(&number(*b)));
                        let _ = writeln!(out, "{}_bucket{le} {n}", self.name);
                    }
                    let le = label_text(self.labels, values, Some("+Inf"));
                    let _ = writeln!(out, "{}_bucket{le} {}", self.name, s.count);
                    let _ = writeln!(out, "{}_sum{labels} {}", self.name, number(s.sum));
                    let _ = writeln!(out, "{}_count{labels} {}", self.name, s.count);
                }
            }
        }
    }
}

/// `{a="x",b="y"}` (with `le` last for a bucket), or nothing without labels.
fn label_text(names: &[&str], values: &[String], le: Option<&str>) -> String {
    let mut parts: Vec<String> =
        names.iter().zip(values).map(|(n, v)| format!("{n}=\"{}\"", escape_value(v))).collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value as the format writes it (integers without a fraction).
pub fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Embedding calls (each a batch of texts through the index's model).
pub static EMBEDDER_CALLS: Family =
    Family::counter("rhizome_embedder_calls_total", "Calls to the embedding model (each a batch of texts)", &[]);
/// Texts embedded.
pub static EMBEDDED_TEXTS: Family = Family::counter("rhizome_embedded_texts_total", "Texts embedded", &[]);
/// LLM calls that reached the provider, per stage (`answer`, `extract`, `hippo_filter`, ...).
pub static LLM_CALLS: Family =
    Family::counter("rhizome_llm_calls_total", "LLM calls that reached the provider, per pipeline stage", &["stage"]);
/// LLM calls answered from the index's cache.
pub static LLM_CACHED_CALLS: Family =
    Family::counter("rhizome_llm_cached_calls_total", "LLM calls answered from the index's LLM cache", &["stage"]);
/// Tokens the provider reported, `kind` = `prompt` or `completion`.
pub static LLM_TOKENS: Family =
    Family::counter("rhizome_llm_tokens_total", "Tokens of LLM calls as the provider counted them", &["kind"]);
/// LLM calls that failed (after retries).
pub static LLM_ERRORS: Family =
    Family::counter("rhizome_llm_errors_total", "LLM calls that failed (after their retries)", &[]);
/// Query time per retrieval method, answer included.
pub static QUERY_DURATION: Family = Family::histogram(
    "rhizome_query_duration_seconds",
    "Time to answer a query (retrieval and answer), per retrieval method",
    &["method"],
    SECONDS_BUCKETS,
);

/// The families kept by the engine's parts (the server adds its own).
pub fn engine_families() -> [&'static Family; 7] {
    [&QUERY_DURATION, &EMBEDDER_CALLS, &EMBEDDED_TEXTS, &LLM_CALLS, &LLM_CACHED_CALLS, &LLM_TOKENS, &LLM_ERRORS]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_render_in_the_text_format() {
        static C: Family = Family::counter("t_requests_total", "Requests \\ seen", &["route", "status"]);
        static H: Family = Family::histogram("t_seconds", "Time", &["route"], &[0.1, 1.0]);
        static G: Family = Family::gauge("t_depth", "Depth", &[]);
        C.inc(&["/a", "200"]);
        C.add(&["/a", "200"], 2.0);
        C.inc(&["/b\"x\n", "404"]);
        H.observe(&["/a"], 0.0625);
        H.observe(&["/a"], 0.5);
        H.observe(&["/a"], 5.0);
        let mut out = String::new();
        for f in [&C, &H, &G] {
            f.render(&mut out);
        }
        assert!(out.contains("# HELP t_requests_total Requests \\\\ seen\n# TYPE t_requests_total counter\n"), "{out}");
        assert!(out.contains("t_requests_total{route=\"/a\",status=\"200\"} 3\n"), "{out}");
        assert!(out.contains("t_requests_total{route=\"/b\\\"x\\n\",status=\"404\"} 1\n"), "{out}");
        assert!(out.contains("t_seconds_bucket{route=\"/a\",le=\"0.1\"} 1\n"), "{out}");
        assert!(out.contains("t_seconds_bucket{route=\"/a\",le=\"1\"} 2\n"), "{out}");
        assert!(out.contains("t_seconds_bucket{route=\"/a\",le=\"+Inf\"} 3\n"), "{out}");
        assert!(out.contains("t_seconds_sum{route=\"/a\"} 5.5625\n"), "{out}");
        assert!(out.contains("t_seconds_count{route=\"/a\"} 3\n"), "{out}");
        assert!(out.contains("# TYPE t_depth gauge\nt_depth 0\n"), "{out}");
        assert_eq!(C.get(&["/a", "200"]), 3.0);
    }

    #[test]
    fn series_are_bounded() {
        static C: Family = Family::counter("t_bounded_total", "Bounded", &["k"]);
        for i in 0..MAX_SERIES + 10 {
            C.inc(&[&i.to_string()]);
        }
        assert_eq!(C.series.lock().unwrap().len(), MAX_SERIES);
    }
}
