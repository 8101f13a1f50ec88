//! Finished spans as an OTLP `ExportTraceServiceRequest` in protobuf's binary encoding
//! (opentelemetry-proto `collector/trace/v1`), written by hand: the few messages and
//! fields a span needs, with their field numbers from `trace/v1/trace.proto`,
//! `common/v1/common.proto` and `resource/v1/resource.proto`.

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Bool(bool),
    Int(i64),
    Double(f64),
}

/// A finished span.
#[derive(Debug, Clone)]
pub struct SpanData {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// None for a root span.
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    /// `SpanKind`: 1 internal, 2 server, 3 client.
    pub kind: u64,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    pub attributes: Vec<(String, Value)>,
    /// The error the span ended with, if any (status code ERROR with this message).
    pub error: Option<String>,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, ((field as u64) << 3) | wire as u64);
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    tag(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, 0);
    varint(out, v);
}

fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// A nested message: written to its own buffer, then length-prefixed.
fn message(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    body(&mut inner);
    bytes(out, field, &inner);
}

/// `KeyValue { key = 1; AnyValue value = 2 }`, `AnyValue { string_value = 1; bool_value = 2;
/// int_value = 3; double_value = 4 }`.
fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &Value) {
    message(out, field, |kv| {
        bytes(kv, 1, key.as_bytes());
        message(kv, 2, |any| match value {
            Value::Str(s) => bytes(any, 1, s.as_bytes()),
            Value::Bool(b) => uint(any, 2, *b as u64),
            Value::Int(i) => uint(any, 3, *i as u64),
            Value::Double(d) => fixed64(any, 4, d.to_bits()),
        });
    });
}

fn span(out: &mut Vec<u8>, s: &SpanData) {
    message(out, 2, |m| {
        bytes(m, 1, &s.trace_id);
        bytes(m, 2, &s.span_id);
        if let Some(p) = &s.parent_span_id {
            bytes(m, 4, p);
        }
        bytes(m, 5, s.name.as_bytes());
        uint(m, 6, s.kind);
        fixed64(m, 7, s.start_unix_nanos);
        fixed64(m, 8, s.end_unix_nanos);
        for (k, v) in &s.attributes {
            key_value(m, 9, k, v);
        }
        if let Some(e) = &s.error {
            // Status { message = 2; code = 3 (STATUS_CODE_ERROR = 2) }
            message(m, 15, |st| {
                bytes(st, 2, e.as_bytes());
                uint(st, 3, 2);
            });
        }
    });
}

/// `ExportTraceServiceRequest { resource_spans = 1 }` with one `ResourceSpans { resource = 1;
/// scope_spans = 2 }`: the resource names the service, one scope holds every span.
pub fn export_request(service_name: &str, spans: &[SpanData]) -> Vec<u8> {
    let mut out = Vec::new();
    message(&mut out, 1, |rs| {
        message(rs, 1, |res| {
            key_value(res, 1, "service.name", &Value::Str(service_name.into()));
            key_value(res, 1, "service.version", &Value::Str(env!("CARGO_PKG_VERSION").into()));
        });
        message(rs, 2, |ss| {
            message(ss, 1, |scope| {
                bytes(scope, 1, b"rhizome");
                bytes(scope, 2, env!("CARGO_PKG_VERSION").as_bytes());
            });
            for s in spans {
                span(ss, s);
            }
        });
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_encode_as_protobuf_does() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut v = Vec::new();
        uint(&mut v, 3, (-1i64) as u64);
        assert_eq!(v.len(), 1 + 10, "a negative int64 takes ten bytes");
        let mut v = Vec::new();
        fixed64(&mut v, 7, 1);
        assert_eq!(v, [0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
        let s = SpanData {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_span_id: None,
            name: "query".into(),
            kind: 1,
            start_unix_nanos: 5,
            end_unix_nanos: 6,
            attributes: vec![("method".into(), Value::Str("hippo".into()))],
            error: None,
        };
        let body = export_request("rhizome", &[s]);
        // resource_spans (field 1, length-delimited) first.
        assert_eq!(body[0], 0x0a);
        assert!(body.windows(5).any(|w| w == b"query") && body.windows(5).any(|w| w == b"hippo"));
    }
}
