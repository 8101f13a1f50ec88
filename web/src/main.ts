// The page: four panels over the HTTP API (documents, ask, graph, communities), the API
// key asked for once and kept in this tab, and a probe the browser tests read.

import { ensureKey, getJson, onKeyNeeded } from "./api";
import { mountDocuments, refreshDocuments } from "./documents";
import { mountAsk } from "./ask";
import { mountExplorer, showExplorer, focusEntity as loadEntity, probe } from "./explorer";
import { mountCommunities, showCommunities } from "./communities";

const PANELS = ["documents", "ask", "graph", "communities"] as const;
type Panel = (typeof PANELS)[number];

(window as any).rhizomeUi = { explorer: probe, lastPaths: [] };

async function refreshStats(): Promise<void> {
  const el = document.getElementById("stats")!;
  try {
    const s = await getJson<{ nodes: Record<string, number> }>("/stats");
    const n = s.nodes;
    el.textContent = `${n.Document || 0} documents · ${n.Chunk || 0} chunks · ${n.Entity || 0} entities`;
  } catch {
    el.textContent = "empty index";
  }
}

function focusEntity(id: string): void {
  (document.getElementById("view-dialog") as HTMLDialogElement).close();
  select("graph");
  loadEntity(id);
}

function select(panel: Panel, focus = false): void {
  for (const p of PANELS) {
    const tab = document.getElementById("tab-" + p)!;
    const on = p === panel;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    document.getElementById("panel-" + p)!.hidden = !on;
    if (on && focus) tab.focus();
  }
  if (location.hash !== "#" + panel) history.replaceState(null, "", "#" + panel);
  if (panel === "graph") showExplorer();
  if (panel === "communities") showCommunities();
  if (panel === "documents") refreshDocuments();
}

function keyDialog(why: string): Promise<string | null> {
  const d = document.getElementById("key-dialog") as HTMLDialogElement;
  const input = document.getElementById("key-input") as HTMLInputElement;
  document.getElementById("key-why")!.textContent = `${why}. The key is kept in this tab only.`;
  input.value = "";
  d.returnValue = "";
  if (!d.open) d.showModal();
  return new Promise((resolve) =>
    d.addEventListener("close", () => resolve(d.returnValue === "ok" && input.value.trim() ? input.value.trim() : null), { once: true }));
}

// One key prompt at a time, shared by the requests that need it.
let pendingKey: Promise<string | null> | null = null;
onKeyNeeded((why) => {
  if (!pendingKey) pendingKey = keyDialog(why).finally(() => setTimeout(() => (pendingKey = null), 0));
  return pendingKey;
});

async function start(): Promise<void> {
  await ensureKey();
  mountDocuments(document.getElementById("panel-documents")!, { refreshStats, focusEntity });
  mountAsk(document.getElementById("panel-ask")!);
  mountExplorer(document.getElementById("panel-graph")!);
  mountCommunities(document.getElementById("panel-communities")!);
  const tabs = document.getElementById("tabs")!;
  tabs.addEventListener("click", (e) => {
    const p = (e.target as HTMLElement).dataset.panel as Panel | undefined;
    if (p) select(p);
  });
  tabs.addEventListener("keydown", (e) => {
    const i = PANELS.indexOf((document.activeElement as HTMLElement)?.dataset.panel as Panel);
    if (i < 0) return;
    if (e.key === "ArrowRight") select(PANELS[(i + 1) % PANELS.length], true);
    else if (e.key === "ArrowLeft") select(PANELS[(i + PANELS.length - 1) % PANELS.length], true);
    else return;
    e.preventDefault();
  });
  document.getElementById("view-close")!.addEventListener("click", () => (document.getElementById("view-dialog") as HTMLDialogElement).close());
  window.addEventListener("hashchange", () => {
    const p = location.hash.slice(1) as Panel;
    if (PANELS.includes(p)) select(p);
  });
  const first = location.hash.slice(1) as Panel;
  select(PANELS.includes(first) ? first : "documents");
  refreshStats();
}

start();
