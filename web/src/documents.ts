// Documents: upload (drop or pick, several at once, per-file progress from the job
// stream), the list with search, open (text, chunks, entities) and delete.

import { api, getJson, sse, citePages, DocumentSummary, Format, JobView, GraphNode } from "./api";
import { h, clear, showError, debounce, confirmDialog, showView, fmtDate } from "./dom";

const PAGE = 50;

let list: HTMLTableSectionElement;
let count: HTMLElement;
let search: HTMLInputElement;
let uploads: HTMLUListElement;
let offset = 0;

// What the documents panel asks of the page: the counts refreshed after a change, and an
// entity shown in the graph.
export interface PageHooks {
  refreshStats(): void;
  focusEntity(id: string): void;
}

let page: PageHooks = { refreshStats() {}, focusEntity() {} };

export function mountDocuments(panel: HTMLElement, hooks: PageHooks): void {
  page = hooks;
  const formats = h("div", { class: "quiet", id: "formats" });
  const picker = h("input", { type: "file", multiple: true, id: "file-input", class: "visually-hidden",
    onchange: () => { upload([...picker.files!]); picker.value = ""; } });
  const drop = h("div", { class: "drop", id: "drop", tabindex: 0, role: "button",
    "aria-label": "Upload documents: drop files here or press Enter to pick them",
    onclick: () => picker.click(),
    onkeydown: (e: KeyboardEvent) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); picker.click(); } },
    ondragover: (e: DragEvent) => { e.preventDefault(); drop.classList.add("over"); },
    ondragleave: () => drop.classList.remove("over"),
    ondrop: (e: DragEvent) => { e.preventDefault(); drop.classList.remove("over"); upload([...(e.dataTransfer?.files || [])]); },
  }, h("strong", {}, "Drop files here"), " or press to pick them", formats);
  uploads = h("ul", { class: "uploads", id: "uploads", "aria-live": "polite" });
  search = h("input", { type: "search", id: "doc-search", placeholder: "Search titles and sources", "aria-label": "Search documents",
    oninput: debounce(() => { offset = 0; refreshDocuments(); }, 250) });
  count = h("span", { class: "quiet", id: "doc-count" });
  list = h("tbody", { id: "doc-rows" });
  const pager = h("div", { class: "pager" },
    h("button", { onclick: () => { offset = Math.max(0, offset - PAGE); refreshDocuments(); } }, "Previous"),
    h("button", { onclick: () => { offset += PAGE; refreshDocuments(); } }, "Next"));
  clear(panel,
    h("div", { class: "upload-area" }, picker, drop, uploads),
    h("div", { class: "toolbar" }, search, count),
    h("div", { class: "table-wrap" }, h("table", { class: "docs" },
      h("thead", {}, h("tr", {}, ...["Title", "Type", "Tags", "Language", "Pages", "Chunks", "Entities", "Indexed", ""]
        .map((c) => h("th", { scope: "col" }, c)))),
      list)),
    pager);
  showFormats(picker, formats);
  refreshDocuments();
}

/** The file types the server reads (its loader registry), offered by the picker and
 * named under the drop area: the documents' extensions, then any format only imported. */
async function showFormats(picker: HTMLInputElement, label: HTMLElement): Promise<void> {
  let all: Format[];
  try {
    all = await getJson<Format[]>("/formats");
  } catch (e) {
    return showError(e);
  }
  const dotted = (fs: Format[]) => fs.flatMap((f) => f.extensions.map((e) => "." + e));
  const docs = all.filter((f) => f.kind !== "edge_list");
  const edges = all.filter((f) => f.kind === "edge_list");
  picker.accept = dotted(all).join(",");
  label.textContent = dotted(docs).join(" ") + edges.map((f) => `, and ${dotted([f]).join(" ")} ${f.description}`).join("");
}

export async function refreshDocuments(): Promise<void> {
  const q = new URLSearchParams({ offset: String(offset), limit: String(PAGE) });
  if (search.value.trim()) q.set("search", search.value.trim());
  try {
    const r = await getJson<{ total: number; offset: number; documents: DocumentSummary[] }>("/documents?" + q);
    if (r.total > 0 && offset >= r.total) {
      offset = Math.max(0, r.total - PAGE);
      return refreshDocuments();
    }
    count.textContent = r.total === 0 ? "no documents" : `${r.total} document${r.total === 1 ? "" : "s"}`;
    count.dataset.total = String(r.total);
    clear(list, r.documents.map(row));
  } catch (e: any) {
    // An empty index has nothing to list yet.
    if (e.status === 503 || e.status === 404) { count.textContent = "no documents"; count.dataset.total = "0"; clear(list); }
    else showError(e);
  }
}

function row(d: DocumentSummary): HTMLTableRowElement {
  return h("tr", { "data-doc": d.id },
    h("td", {}, h("button", { class: "link", title: d.meta?.summary ? `${d.source}\n\n${d.meta.summary}` : d.source,
      onclick: () => openDocument(d.id) }, d.title || d.source),
      d.partial ? h("span", { class: "badge warn" }, "partial") : null,
      d.aliases?.length ? h("span", { class: "badge", title: d.aliases.join("\n") }, `+${d.aliases.length} ${d.aliases.length === 1 ? "name" : "names"}`) : null),
    h("td", { class: "doc-type" }, d.meta?.type || ""),
    h("td", { class: "doc-tags" }, ...(d.meta?.hashtags || []).slice(0, 3).map((t) => h("span", { class: "tag" }, t))),
    h("td", {}, d.language || ""), h("td", { class: "num" }, d.pages ? String(d.pages) : ""),
    h("td", { class: "num" }, String(d.chunks)), h("td", { class: "num" }, String(d.entities)),
    h("td", {}, fmtDate(d.indexed_at)),
    h("td", {}, h("button", { class: "danger small", "aria-label": `Delete ${d.title}`, onclick: () => remove(d) }, "Delete")));
}

/** What is known of a document: its summary, type and tags, then what its file says. */
function aboutPanel(d: DocumentSummary): HTMLElement {
  const m = d.meta || {};
  const day = (t?: string) => (t ? t.slice(0, 10) : "");
  const size = (b?: number) => (b === undefined ? "" : b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(1)} MB`
    : b >= 1024 ? `${(b / 1024).toFixed(1)} KB` : `${b} bytes`);
  const rows: [string, string | HTMLElement][] = [
    ["Type", m.type || ""],
    ["Tags", m.hashtags?.length ? h("span", { class: "doc-tags" }, ...m.hashtags.map((t) => h("span", { class: "tag" }, t))) : ""],
    ["Author", m.author || ""],
    ["Created", day(m.created)],
    ["Modified", day(m.modified)],
    ["Pages", d.pages ? String(d.pages) : ""],
    ["Size", size(m.size_bytes)],
    ["Format", m.media_type || ""],
  ];
  return h("section", { class: "doc-about", "aria-label": "About this document" },
    m.summary ? h("p", { class: "doc-summary" }, m.summary,
      m.described_by ? h("span", { class: "quiet" }, m.described_by === "llm" ? " (summary by the LLM)" : " (extractive summary)") : null) : null,
    h("dl", {}, ...rows.filter(([, v]) => v !== "").flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
}

async function remove(d: DocumentSummary): Promise<void> {
  if (!(await confirmDialog(`Delete "${d.title}"? Everything only it supported leaves the index and the answers.`))) return;
  try {
    await api("/documents/" + encodeURIComponent(d.id), { method: "DELETE" });
    await refreshDocuments();
    page.refreshStats();
  } catch (e) {
    showError(e);
  }
}

/** Open a document: its text, its chunks (one highlighted, with a passage marked) and its entities. */
export async function openDocument(id: string, chunkId?: string, mark?: string[]): Promise<void> {
  try {
    const d = await getJson<{ document: { title: string; source: string; text: string }; summary?: DocumentSummary;
      chunks: { id: string; ordinal: number; text: string; pages?: { first: number; last: number } }[];
      entities: GraphNode[] }>("/documents/" + encodeURIComponent(id));
    const unit = (d.document as { pages?: { unit: string } }).pages?.unit;
    const chunks = d.chunks.map((c) => {
      const body = h("div", { class: "chunk-text" });
      highlight(body, c.text, c.id === chunkId ? mark || [] : []);
      return h("details", { class: "chunk", open: c.id === chunkId || d.chunks.length <= 3, "data-chunk": c.id },
        h("summary", {}, unit && c.pages ? `Chunk ${c.ordinal + 1} · ${citePages({ unit, ...c.pages })}` : `Chunk ${c.ordinal + 1}`), body);
    });
    const ents = d.entities.slice(0, 200).map((e) =>
      h("button", { class: "chip", title: e.entity_type, onclick: () => page.focusEntity(e.id) }, e.name));
    showView(d.document.title,
      h("p", { class: "quiet" }, d.document.source, d.summary?.language ? ` · ${d.summary.language}` : "",
        d.summary?.aliases?.length ? ` · also as ${d.summary.aliases.join(", ")}` : ""),
      d.summary ? aboutPanel(d.summary) : null,
      h("details", { class: "chunk" }, h("summary", {}, `Full text (${d.document.text.length} characters)`),
        h("div", { class: "chunk-text" }, d.document.text)),
      h("h3", {}, `Chunks (${d.chunks.length})`), ...chunks,
      h("h3", {}, `Entities (${d.entities.length})`), h("div", { class: "chips" }, ...ents));
    document.querySelector<HTMLElement>(`[data-chunk="${chunkId}"] mark`)?.scrollIntoView({ block: "center" });
  } catch (e) {
    showError(e);
  }
}

/** Write `text` into `el` with each of `passages` found in it marked. */
export function highlight(el: HTMLElement, text: string, passages: string[]): void {
  const spans: [number, number][] = [];
  for (const p of passages) {
    const at = text.indexOf(p);
    if (p && at >= 0) spans.push([at, at + p.length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let pos = 0;
  for (const [a, b] of spans) {
    if (a < pos) continue;
    el.append(text.slice(pos, a), h("mark", {}, text.slice(a, b)));
    pos = b;
  }
  el.append(text.slice(pos));
}

function upload(files: File[]): void {
  for (const f of files) uploadOne(f);
}

async function uploadOne(f: File): Promise<void> {
  const bar = h("progress", { max: 1, value: 0, "aria-label": `Progress of ${f.name}` });
  const state = h("span", { class: "state" }, "uploading");
  const errors = h("ul", { class: "errors" });
  const li = h("li", { "data-file": f.name }, h("span", { class: "name" }, f.name), bar, state, errors);
  uploads.prepend(li);
  try {
    const form = new FormData();
    form.append("files", f, f.name);
    const r = await api("/documents", { method: "POST", body: form });
    const { job_id } = await r.json();
    const events = await api(`/jobs/${job_id}/events`);
    let last: JobView | null = null;
    for await (const ev of sse(events)) {
      if (ev.event !== "progress") continue;
      const v: JobView = JSON.parse(ev.data);
      last = v;
      bar.max = Math.max(1, v.total);
      bar.value = v.done;
      // Indexing counts bytes of text; a document with pages says which page it is on.
      state.textContent = v.state !== "running" ? v.state : v.place ? `${v.stage} · ${v.place}` : `${v.stage} ${v.done}/${v.total}`;
      clear(errors, v.errors.map((e) => h("li", {}, (e.file ? e.file + ": " : "") + e.error)));
      if (v.state === "done" || v.state === "failed") break;
    }
    li.dataset.state = last?.state || "failed";
    if (last?.state === "done") { bar.value = bar.max; state.textContent = "done"; }
  } catch (e: any) {
    li.dataset.state = "failed";
    state.textContent = "failed";
    errors.append(h("li", {}, e.message + (e.hint ? ` — ${e.hint}` : "")));
  }
  refreshDocuments();
  page.refreshStats();
}
