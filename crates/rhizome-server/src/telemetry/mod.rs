//! What `rhizome serve` tells its operators: logs through `tracing` (text, or one JSON
//! object a line on stderr; level from `RHIZOME_LOG`), a request id and a `request` span
//! per HTTP request with one access line ([`request`]), Prometheus metrics at
//! `GET /metrics` ([`metrics`]) and, with the `otlp` feature and an endpoint configured,
//! every span exported as OpenTelemetry traces over OTLP/HTTP ([`otlp`]).

pub mod metrics;
#[cfg(feature = "otlp")]
mod otlp;
#[cfg(feature = "otlp")]
mod otlp_proto;
pub mod request;

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use rhizome_core::{Error, Result};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One readable line per event, with its spans (`request{id=...}`).
    Text,
    /// One JSON object per line: `timestamp`, `level`, `fields` (`message`, ...),
    /// `target`, `span` and `spans` (the request's id, method and route among them).
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<LogFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(Error::bad_input("--log-format", format!("{other:?} is not a log format; use text or json"))),
        }
    }
}

/// Where traces go: an OTLP/HTTP endpoint (`{endpoint}/v1/traces`), the service name and
/// the headers sent with each export.
#[derive(Clone)]
pub struct OtlpConfig {
    /// The full URL spans are POSTed to.
    pub traces_url: String,
    pub service_name: String,
    /// From `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,...`); never logged.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for OtlpConfig {
    // Headers may hold credentials: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        write!(f, "OtlpConfig({}, service {}, headers {names:?})", self.traces_url, self.service_name)
    }
}

impl OtlpConfig {
    /// The exporter's settings from `--otlp-endpoint` (`flag`, a base URL) or the standard
    /// variables, in this order: the flag, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full
    /// URL), `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL); `OTEL_SERVICE_NAME` (default
    /// `rhizome`), `OTEL_EXPORTER_OTLP_HEADERS`. None when no endpoint is set.
    pub fn resolve(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Result<Option<OtlpConfig>> {
        let env = |k: &str| env(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let (name, url) = if let Some(f) = flag.map(str::trim).filter(|f| !f.is_empty()) {
            ("--otlp-endpoint", traces_path(f))
        } else if let Some(u) = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", u)
        } else if let Some(u) = env("OTEL_EXPORTER_OTLP_ENDPOINT") {
            ("OTEL_EXPORTER_OTLP_ENDPOINT", traces_path(&u))
        } else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() > 2048 {
            return Err(Error::bad_input(
                name,
                format!("{url:?} is not an http:// or https:// URL; give the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318"),
            ));
        }
        let mut headers = Vec::new();
        for pair in env("OTEL_EXPORTER_OTLP_HEADERS").unwrap_or_default().split(',') {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let Some((k, v)) = pair.split_once('=') else {
                return Err(Error::bad_input(
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "an entry has no `=`: write key=value pairs separated by commas",
                ));
            };
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let service_name = env("OTEL_SERVICE_NAME").unwrap_or_else(|| "rhizome".into());
        Ok(Some(OtlpConfig { traces_url: url, service_name, headers }))
    }
}

/// `{base}/v1/traces`, the signal path OTLP/HTTP appends to a base endpoint.
fn traces_path(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// Whether this build can export traces (the `otlp` feature).
pub const OTLP_BUILT: bool = cfg!(feature = "otlp");

/// What [`init`] set up; dropping it sends the spans still queued (within a second).
pub struct Telemetry {
    #[cfg(feature = "otlp")]
    exporter: Option<otlp::Exporter>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        #[cfg(feature = "otlp")]
        if let Some(e) = self.exporter.take() {
            e.shutdown(std::time::Duration::from_secs(1));
        }
    }
}

/// The default filter: `info` for everything, quieter for libraries that log a lot.
const DEFAULT_FILTER: &str = "info,llama_cpp_2=warn,rmcp=warn";

/// Install the process's subscriber: logs on stderr in `format`, filtered by `filter`
/// (env-filter syntax, e.g. `RHIZOME_LOG=debug` or `info,rhizome_server=debug`; None:
/// `info`), and, given `otlp`, every span exported to it (at any log level).
pub fn init(format: LogFormat, filter: Option<&str>, otlp: Option<OtlpConfig>) -> Result<Telemetry> {
    let filter = filter.map(str::trim).filter(|f| !f.is_empty()).unwrap_or(DEFAULT_FILTER);
    let filter = EnvFilter::try_new(filter).map_err(|e| {
        Error::bad_input("RHIZOME_LOG", format!("{filter:?}: {e}; write e.g. info, debug or info,rhizome_server=debug"))
    })?;
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .boxed(),
    }
    .with_filter(filter);
    #[cfg(feature = "otlp")]
    {
        let (layer, exporter) = match otlp {
            Some(c) => {
                let (l, e) = otlp::layer(c)?;
                (Some(l), Some(e))
            }
            None => (None, None),
        };
        tracing_subscriber::registry()
            .with(logs)
            .with(layer)
            .try_init()
            .map_err(|e| Error::Config(format!("logging is set up already: {e}")))?;
        Ok(Telemetry { exporter })
    }
    #[cfg(not(feature = "otlp"))]
    {
        if let Some(c) = otlp {
            return Err(Error::Config(format!(
                "traces to {}: this build of rhizome has no OTLP exporter; build it with the `otlp` feature \
                 (the CLI's default features have it)",
                c.traces_url
            )));
        }
        tracing_subscriber::registry()
            .with(logs)
            .try_init()
            .map_err(|e| Error::Config(format!("logging is set up already: {e}")))?;
        Ok(Telemetry {})
    }
}

/// 64 random bits (ids of requests and spans; not for secrets): a fresh std hasher key
/// over a process-wide counter.
pub(crate) fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_comes_from_the_flag_then_the_variables() {
        let none = |_: &str| None;
        assert!(OtlpConfig::resolve(None, none).unwrap().is_none());
        let c = OtlpConfig::resolve(Some("http://127.0.0.1:4318/"), none).unwrap().unwrap();
        assert_eq!(c.traces_url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(c.service_name, "rhizome");
        let env = |k: &str| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318".to_string()),
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some("http://traces:4318/custom".to_string()),
            "OTEL_SERVICE_NAME" => Some("rag".to_string()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("x-key=secret, x-team = a".to_string()),
            _ => None,
        };
        let c = OtlpConfig::resolve(None, env).unwrap().unwrap();
        assert_eq!(c.traces_url, "http://traces:4318/custom");
        assert_eq!(c.service_name, "rag");
        assert_eq!(c.headers, vec![("x-key".into(), "secret".into()), ("x-team".into(), "a".into())]);
        assert!(!format!("{c:?}").contains("secret"));
        let base = |k: &str| (k == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "https://c:4318".to_string());
        assert_eq!(OtlpConfig::resolve(None, base).unwrap().unwrap().traces_url, "https://c:4318/v1/traces");
        let e = OtlpConfig::resolve(Some("127.0.0.1:4318"), none).unwrap_err().to_string();
        assert!(e.contains("--otlp-endpoint") && e.contains("http://"), "{e}");
        assert!("xml".parse::<LogFormat>().is_err());
        assert_eq!(" JSON".parse::<LogFormat>().unwrap(), LogFormat::Json);
        assert_ne!(random_u64(), random_u64());
    }
}
