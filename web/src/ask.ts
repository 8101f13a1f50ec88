// Ask: a question with the method picker and the method's parameters (defaults shown),
// a conversation for follow-ups, the answer streamed, citations that open the cited
// passage, reasoning paths drawn, timings and notes kept quiet.

import { api, getJson, sse, cite, citePages, MethodInfo, QueryResponse } from "./api";
import { h, clear, showError, showView } from "./dom";
import { openDocument, highlight } from "./documents";
import { pathEdges, drawPaths } from "./paths";

let methods: MethodInfo[] = [];
let conversation: { role: string; content: string }[] = [];
let methodSelect: HTMLSelectElement;
let methodHelp: HTMLElement;
let paramBox: HTMLElement;
let question: HTMLTextAreaElement;
let turns: HTMLElement;
let askButton: HTMLButtonElement;
let filterInput: HTMLInputElement;

export async function mountAsk(panel: HTMLElement): Promise<void> {
  methodSelect = h("select", { id: "method", "aria-label": "Method", onchange: showParams });
  methodHelp = h("span", { class: "quiet", id: "method-help" });
  paramBox = h("div", { class: "params", id: "params" });
  question = h("textarea", { id: "question", rows: 2, placeholder: "Ask a question about your documents",
    "aria-label": "Question",
    onkeydown: (e: KeyboardEvent) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); ask(); } } });
  askButton = h("button", { class: "primary", id: "ask", onclick: () => ask() }, "Ask");
  filterInput = h("input", { type: "text", id: "filter", class: "filter",
    placeholder: "type=report tag=\"Halvorsen Bridge\" source=*.pdf after=2024-01-01 lang=vi",
    "aria-label": "Only documents matching (KEY=VALUE, separated by spaces)",
    title: "Keys: type, tag, source (glob), after, before (YYYY-MM-DD), lang. One key's values are alternatives; different keys must all hold." });
  turns = h("div", { id: "turns", class: "turns", "aria-live": "polite" });
  clear(panel,
    h("div", { class: "ask-box" },
      h("div", { class: "toolbar" }, h("label", {}, "Method ", methodSelect), methodHelp,
        h("button", { id: "new-chat", onclick: () => { conversation = []; clear(turns); question.focus(); } }, "New conversation")),
      h("details", { class: "param-details" }, h("summary", {}, "Parameters"), paramBox),
      h("label", { class: "filter-row" }, "Only documents ", filterInput),
      h("div", { class: "question-row" }, question, askButton)),
    turns);
  try {
    methods = await getJson<MethodInfo[]>("/methods");
  } catch (e) {
    showError(e);
  }
  const ordered = [...methods.filter((m) => m.name === "auto"), ...methods.filter((m) => m.name !== "auto")];
  clear(methodSelect, ordered.map((m) => h("option", { value: m.name }, m.name)));
  methodSelect.value = "auto";
  showParams();
}

function showParams(): void {
  const m = methods.find((x) => x.name === methodSelect.value);
  methodHelp.textContent = m?.description || "";
  clear(paramBox, (m?.params || []).map((p) => {
    const id = "param-" + p.key.replace(/\W/g, "-");
    const input = typeof p.value === "boolean"
      ? h("input", { type: "checkbox", id, checked: p.value, "data-key": p.key, "data-default": JSON.stringify(p.value) })
      : h("input", { type: typeof p.value === "number" ? "number" : "text", step: "any", id, value: String(p.value ?? ""),
        placeholder: String(p.value ?? ""), "data-key": p.key, "data-default": JSON.stringify(p.value) });
    return h("label", { for: id, title: p.valid }, h("code", {}, p.key), input, h("span", { class: "quiet" }, `default ${JSON.stringify(p.value)}`));
  }));
}

/** The parameters whose value differs from the default. */
function params(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const input of paramBox.querySelectorAll<HTMLInputElement>("input[data-key]")) {
    const def = JSON.parse(input.dataset.default || "null");
    const v = input.type === "checkbox" ? input.checked : typeof def === "number" ? Number(input.value) : input.value;
    if (input.type !== "checkbox" && input.value.trim() === "") continue;
    if (v !== def) out[input.dataset.key!] = v;
  }
  return out;
}

export async function ask(text?: string): Promise<void> {
  const q = (text ?? question.value).trim();
  if (!q) return;
  question.value = "";
  const answer = h("div", { class: "answer streaming", "data-testid": "answer" });
  const turn = h("article", { class: "turn" }, h("p", { class: "q" }, q), answer);
  turns.append(turn);
  askButton.disabled = true;
  try {
    const r = await api("/query", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ question: q, method: methodSelect.value, params: params(), history: conversation, stream: true,
        filter: filters(filterInput.value) }) });
    let streamed = "";
    for await (const ev of sse(r)) {
      if (ev.event === "token") {
        streamed += JSON.parse(ev.data).text;
        turn.dataset.tokens = String(Number(turn.dataset.tokens || 0) + 1);
        answer.textContent = streamed;
      } else if (ev.event === "done") {
        const resp: QueryResponse = JSON.parse(ev.data);
        render(turn, answer, resp);
        conversation.push({ role: "user", content: q }, { role: "assistant", content: resp.answer });
      } else if (ev.event === "error") {
        const e = JSON.parse(ev.data);
        throw Object.assign(new Error(e.error), { hint: e.hint });
      }
    }
  } catch (e: any) {
    answer.textContent = "";
    answer.append(h("span", { class: "error" }, e.message + (e.hint ? ` — ${e.hint}` : "")));
  } finally {
    answer.classList.remove("streaming");
    askButton.disabled = false;
    turn.scrollIntoView({ block: "end" });
  }
}

/** Sentences of the answer that cite context `n`. */
function citing(answer: string, n: number): string[] {
  const out: string[] = [];
  const re = /([^\[\]]*?)\s*((?:\[\d+\]\s*)+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(answer))) {
    const nums = [...m[2].matchAll(/\d+/g)].map((x) => Number(x[0]));
    if (nums.includes(n) && m[1].trim()) out.push(m[1].trim().replace(/^[,;:]\s*/, ""));
  }
  return out;
}

/** The passages of `text` to mark for the answer sentences: each one found verbatim, else
 * the sentence of `text` that shares most words with it. */
function passages(text: string, sentences: string[]): string[] {
  const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []);
  const own = text.split(/(?<=[.!?。！？])\s*/u).filter((s) => s.trim());
  return sentences.map((s) => {
    if (text.includes(s)) return s;
    const w = words(s);
    let best = "", score = 0;
    for (const c of own) {
      const cw = words(c);
      const shared = [...w].filter((x) => cw.has(x)).length;
      if (shared > score) { score = shared; best = c.trim(); }
    }
    return best;
  }).filter(Boolean);
}

function openCitation(r: QueryResponse, n: number): void {
  const c = r.contexts[n - 1];
  if (!c) return;
  const marks = passages(c.text, citing(r.answer, n));
  const body = h("div", { class: "chunk-text", "data-testid": "cited-text" });
  highlight(body, c.text, marks);
  showView(`[${n}] ${c.title || (c.kind === "chunk" ? c.source : c.kind)}`,
    h("p", { class: "quiet", "data-testid": "cited-source" }, `${c.kind} · ${cite(c)} · score ${c.score.toFixed(3)}`), body,
    c.kind === "chunk" ? h("button", { onclick: () => openDocument(c.source.replace(/#\d+$/, ""), c.id, marks) },
      c.pages ? `Open the document at ${citePages(c.pages)}` : "Open the document") : null);
}

function render(turn: HTMLElement, answer: HTMLElement, r: QueryResponse): void {
  answer.replaceChildren();
  for (const part of r.answer.split(/(\[\d+\])/)) {
    const m = part.match(/^\[(\d+)\]$/);
    if (m && r.contexts[Number(m[1]) - 1]) {
      const n = Number(m[1]);
      answer.append(h("button", { class: "cite", "data-n": n, "aria-label": `Source ${n}: ${r.contexts[n - 1].title}`,
        onclick: () => openCitation(r, n) }, `[${n}]`));
    } else answer.append(part);
  }
  if (r.standalone_question) turn.querySelector(".q")!.append(h("span", { class: "quiet" }, ` — asked as: ${r.standalone_question}`));
  const cited = new Set([...r.answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
  const shown = r.contexts.map((c, i) => ({ c, n: i + 1 })).filter(({ n }) => cited.has(n) || n <= 5);
  turn.append(h("ol", { class: "sources" }, shown.map(({ c, n }) =>
    h("li", { value: n }, h("button", { class: "link", onclick: () => openCitation(r, n) }, c.title || (c.kind === "chunk" ? c.source : c.text.slice(0, 80))),
      h("span", { class: "quiet" }, c.kind === "chunk" && c.source ? ` ${cite(c)} · ${c.kind}` : ` ${c.kind}`)))));
  const edges = pathEdges(r);
  (window as any).rhizomeUi.lastPaths = edges;
  if (edges.length) turn.append(h("figure", { class: "paths-figure" }, drawPaths(edges),
    h("figcaption", { class: "quiet" }, r.paths.length ? "Reasoning paths" : r.extra?.facts ? "Facts linked to the question" : "Edges retrieved")));
  const timings = Object.entries(r.timings_ms).map(([k, v]) => `${k} ${v.toFixed(1)} ms`).join(" · ");
  const notes = [...r.notes];
  if (r.answer_kind === "extractive") notes.unshift("no LLM: extractive answer");
  turn.append(h("details", { class: "meta quiet" }, h("summary", {}, `${r.method} · ${r.answer_kind} · ${(r.timings_ms.total ?? 0).toFixed(0)} ms`),
    h("p", {}, timings), notes.length ? h("ul", {}, notes.map((n) => h("li", {}, n))) : null));
}

/** `KEY=VALUE` filters written one after another, a value in double quotes holding spaces. */
export function filters(text: string): string[] {
  return [...text.matchAll(/[^\s=]+="[^"]*"|[^\s=]+=\S+|\S+/g)].map((m) => m[0]);
}

