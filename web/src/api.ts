// The HTTP API, with the API key (asked for once, kept in this tab) and SSE over fetch
// (EventSource cannot send the key).

const KEY = "rhizome.apiKey";

export class ApiError extends Error {
  constructor(public status: number, message: string, public hint: string) {
    super(message);
  }
}

/** The workspace this page is for: the page at /w/NAME/ asks that workspace's routes;
 * the page at / asks the main index's. */
export const BASE = (location.pathname.match(/^\/w\/[a-z0-9-]+/) || [""])[0];

let askKey: ((why: string) => Promise<string | null>) | null = null;

/** How to ask the user for a key when the server answers 401. */
export function onKeyNeeded(f: (why: string) => Promise<string | null>): void {
  askKey = f;
}

/** Before the first call: when the server needs a key and this tab has none, ask for it
 * (so that the page never sends a request bound to be refused). */
export async function ensureKey(): Promise<void> {
  const r = await fetch("/health");
  const h = await r.json().catch(() => ({}));
  while (h.key_required && !sessionStorage.getItem(KEY) && askKey) {
    const k = await askKey("This server needs an API key");
    if (!k) break;
    sessionStorage.setItem(KEY, k);
  }
}

export async function api(path: string, init: RequestInit = {}): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const headers = new Headers(init.headers);
    const key = sessionStorage.getItem(KEY);
    if (key) headers.set("Authorization", "Bearer " + key);
    const r = await fetch(BASE + path, { ...init, headers });
    if (r.status === 401 && attempt < 3 && askKey) {
      const body = await r.json().catch(() => ({}));
      const k = await askKey(body.error || "This server needs an API key.");
      if (k) {
        sessionStorage.setItem(KEY, k);
        continue;
      }
    }
    if (!r.ok) {
      const body = await r.json().catch(() => ({}));
      throw new ApiError(r.status, body.error || `${r.status} ${r.statusText}`, body.hint || "");
    }
    return r;
  }
}

export async function getJson<T>(path: string): Promise<T> {
  return (await api(path)).json();
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const r = await api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return r.json();
}

export interface SseEvent {
  event: string;
  data: string;
}

/** The events of a text/event-stream response, as they arrive. */
export async function* sse(r: Response): AsyncGenerator<SseEvent> {
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  let event = "message";
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
      if (line === "") {
        if (data.length) yield { event, data: data.join("\n") };
        event = "message";
        data = [];
      } else if (line.startsWith("event:")) {
        event = line.slice(6).trim();
      } else if (line.startsWith("data:")) {
        data.push(line.slice(5).replace(/^ /, ""));
      }
    }
  }
  if (data.length) yield { event, data: data.join("\n") };
}

// Shapes of the replies the UI reads.
export interface DocumentSummary {
  id: string; title: string; source: string; language?: string; chunks: number; entities: number;
  indexed_at?: number; partial: boolean;
  /** Other names the same content arrived under. */
  aliases?: string[];
  /** Pages (slides, sheets) of a paged document. */
  pages?: number;
  meta?: DocumentMeta;
}
/** What is known of a document besides its text: from its file, and from describing it. */
export interface DocumentMeta {
  media_type?: string; size_bytes?: number; author?: string; created?: string; modified?: string;
  summary?: string; type?: string; hashtags?: string[]; described_by?: string;
}
export interface GraphNode { id: string; name: string; entity_type: string; degree: number; community?: string }
export interface GraphEdge { id: string; source: string; target: string; kind: string; rel_type: string; weight: number }
export interface Subgraph { center: string; nodes: GraphNode[]; edges: GraphEdge[]; truncated: boolean }
/** The pages (slides, sheets) of a paged document a passage is on. */
export interface PageRef { unit: string; first: number; last: number }
export interface Context { kind: string; id: string; text: string; score: number; source: string; title: string; pages?: PageRef }

/** A citation's page part: `p. 3`, `pp. 3-4`, `slide 2`. */
export function citePages(p: PageRef): string {
  const [one, many] = ({ page: ["p.", "pp."], slide: ["slide", "slides"], sheet: ["sheet", "sheets"], chapter: ["ch.", "chs."] } as
    Record<string, [string, string]>)[p.unit] || [p.unit, p.unit];
  return p.first === p.last ? `${one} ${p.first}` : `${many} ${p.first}-${p.last}`;
}

/** Where a context came from: `report.pdf, p. 3`. */
export function cite(c: Context): string {
  return c.pages ? `${c.source}, ${citePages(c.pages)}` : c.source;
}
export interface QueryResponse {
  question: string; standalone_question?: string; method: string; answer: string; answer_kind: string;
  contexts: Context[]; paths: string[]; notes: string[]; extra: Record<string, any>; timings_ms: Record<string, number>;
}
export interface JobView {
  id: number; kind: string; state: "queued" | "running" | "done" | "failed"; done: number; total: number;
  stage: string; errors: { file: string; error: string }[]; outcome: any;
  /** Where the stage is in a document with pages: `report.pdf: page 120 of 500`. */
  place?: string;
}
export interface MethodParam { key: string; value: any; valid: string }
export interface MethodInfo { name: string; description: string; params: MethodParam[] }
/** A file type the server reads (`GET /formats`, the loader registry). */
export interface Format { kind: string; extensions: string[]; media_type: string; description: string }
