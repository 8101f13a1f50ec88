//! `GET /openapi.json`, generated from the routes of [`crate::api`] (each registered with
//! its handler's annotation) and the request/response types, and
//! `GET /docs`, a page that renders it. The page is written here rather than taken from
//! Swagger UI: utoipa-swagger-ui with its vendored assets added 70 s to a release build
//! (measured on this machine against 0 s for this page), for a page that only lists
//! endpoints, parameters and schemas.

use axum::response::Html;
use axum::Json;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::error;

struct Security;

impl Modify for Security {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        let c = api.components.get_or_insert_with(Default::default);
        c.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        c.add_security_scheme("x-api-key", SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-Key"))));
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Rhizome", description = "GraphRAG over one index: upload documents, ask questions with citations, \
        browse the graph; OpenAI- and Ollama-compatible chat. With API keys configured, every endpoint but /health, \
        /openapi.json and /docs needs `Authorization: Bearer KEY` (or `X-API-Key`); a read-only key cannot upload or delete. Every route but /workspaces and /keys is also served per workspace \
        at /w/{workspace}/... (or with the header X-Rhizome-Workspace); without either, it is the main index's \
        (workspace default)."),
    components(schemas(error::ErrorBody)),
    modifiers(&Security),
    security(("bearer" = []), ("x-api-key" = [])),
)]
pub struct ApiDoc;

/// The OpenAPI 3 document.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = crate::api().into_openapi();
    doc.merge(crate::admin_api().into_openapi());
    doc.info.version = env!("CARGO_PKG_VERSION").into();
    let models: Vec<String> = crate::chat::models().into_iter().map(|m| m.0).collect();
    if let Some(d) = doc.info.description.as_mut() {
        d.push_str(&format!(" Chat models: {}.", models.join(", ")));
    }
    doc
}

/// The OpenAPI document of this server.
pub async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(document())
}

/// A page listing every endpoint of /openapi.json with its parameters, body and responses.
pub async fn docs_page() -> Html<&'static str> {
    Html(DOCS_HTML)
}

const DOCS_HTML: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Rhizome API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{margin-bottom:.2rem} .desc{color:#555} details{border:1px solid #ddd;border-radius:6px;margin:.5rem 0;padding:.4rem .7rem}
summary{cursor:pointer} .m{display:inline-block;min-width:4.2rem;font-weight:600;font-family:monospace}
.get{color:#1a7f37}.post{color:#0969da}.delete{color:#cf222e} code,pre{font-family:ui-monospace,monospace;font-size:13px}
pre{background:#f6f8fa;padding:.5rem;border-radius:4px;overflow:auto} table{border-collapse:collapse}
td,th{border-bottom:1px solid #eee;padding:.2rem .6rem;text-align:left;vertical-align:top} h3{margin:.8rem 0 .3rem;font-size:1rem}
</style></head><body>
<h1>Rhizome API</h1><p class="desc" id="desc">Loading <a href="/openapi.json">/openapi.json</a>…</p>
<div id="paths"></div><h2>Schemas</h2><div id="schemas"></div>
<script>
const esc = s => String(s ?? "").replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
const ref = r => r && r.$ref ? r.$ref.split("/").pop() : null;
function type(s) {
  if (!s) return "";
  if (s.$ref) return `<a href="#schema-${ref(s)}">${esc(ref(s))}</a>`;
  if (s.oneOf || s.anyOf) return (s.oneOf || s.anyOf).map(type).join(" | ");
  if (s.allOf) return s.allOf.map(type).join(" & ");
  if (s.type === "array" || (Array.isArray(s.type) && s.type.includes("array"))) return `[${type(s.items)}]`;
  if (s.enum) return s.enum.map(esc).join(" | ");
  return esc(Array.isArray(s.type) ? s.type.join(" | ") : (s.type || "object"));
}
function content(c) {
  return Object.entries(c || {}).map(([mime, m]) => `<code>${esc(mime)}</code> ${type(m.schema)}`).join("<br>");
}
fetch("/openapi.json").then(r => r.json()).then(api => {
  document.title = api.info.title + " API " + api.info.version;
  document.getElementById("desc").innerHTML = esc(api.info.description) + ` (version ${esc(api.info.version)}, <a href="/openapi.json">openapi.json</a>)`;
  let html = "";
  for (const [path, ops] of Object.entries(api.paths)) for (const [method, op] of Object.entries(ops)) {
    html += `<details><summary><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code> — ${esc((op.description || op.summary || "").replace(/\s+/g, " ").split(/(?<=[.])\s/)[0])}</summary>`;
    if (op.description) html += `<p>${esc(op.description)}</p>`;
    if (op.parameters) html += "<h3>Parameters</h3><table>" + op.parameters.map(p => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}${p.required ? ", required" : ""}</td><td>${type(p.schema)}</td><td>${esc(p.description)}</td></tr>`).join("") + "</table>";
    if (op.requestBody) html += `<h3>Body</h3>${content(op.requestBody.content)}`;
    html += "<h3>Responses</h3><table>" + Object.entries(op.responses || {}).map(([s, r]) => `<tr><td>${esc(s)}</td><td>${esc(r.description)}</td><td>${content(r.content)}</td></tr>`).join("") + "</table></details>";
  }
  document.getElementById("paths").innerHTML = html;
  let sh = "";
  for (const [name, s] of Object.entries((api.components || {}).schemas || {})) {
    sh += `<details id="schema-${esc(name)}"><summary><code>${esc(name)}</code> ${esc((s.description || "").split("\n")[0])}</summary>`;
    if (s.properties) sh += "<table>" + Object.entries(s.properties).map(([k, v]) => `<tr><td><code>${esc(k)}</code></td><td>${type(v)}${(s.required || []).includes(k) ? "" : " (optional)"}</td><td>${esc(v.description)}</td></tr>`).join("") + "</table>";
    else sh += `<pre>${esc(JSON.stringify(s, null, 1))}</pre>`;
    sh += "</details>";
  }
  document.getElementById("schemas").innerHTML = sh;
  if (location.hash) document.querySelector(location.hash)?.setAttribute("open", "");
}).catch(e => { document.getElementById("desc").textContent = "Could not load /openapi.json: " + e; });
</script></body></html>
"##;
