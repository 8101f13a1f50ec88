// Graph explorer: search an entity (prefix, any script), draw its neighbourhood with
// sigma.js (WebGL) and a ForceAtlas2 layout in a web worker, expand a node by clicking it,
// drag nodes, colour by type or community, size by degree, filter by relation type and
// weight, and read an entity in the side panel.

import Graph from "graphology";
import Sigma from "sigma";
import FA2Layout from "graphology-layout-forceatlas2/worker";
import forceAtlas2 from "graphology-layout-forceatlas2";
import { getJson, GraphNode, Subgraph } from "./api";
import { h, clear, showError, debounce, colour } from "./dom";
import { openDocument } from "./documents";

const graph = new Graph({ multi: true, type: "directed" });
let renderer: Sigma | null = null;
let layout: FA2Layout | null = null;
let layoutTimer: number | undefined;
let selected: string | null = null;
let dragged: string | null = null;
let colourBy: "type" | "community" = "type";
const hiddenRelations = new Set<string>();
let minWeight = 0;

let container: HTMLElement;
let results: HTMLElement;
let side: HTMLElement;
let status: HTMLElement;
let relationBox: HTMLElement;
let depthSelect: HTMLSelectElement;
let maxNodesInput: HTMLInputElement;
let layoutButton: HTMLButtonElement;
let weightLabel: HTMLElement;
let colourSelect: HTMLSelectElement;
let colourChosen = false;

/** What the browser tests and benchmarks read. */
export const probe = {
  frames: 0,
  lastLoad: null as null | { entity: string; requested: number; fetched: number; firstRender: number; nodes: number; edges: number },
  pendingLoad: null as null | { entity: string; requested: number; fetched: number; nodes: number; edges: number },
  /** Nodes sigma drew in its last frame (display data, not hidden). */
  rendered(): number {
    if (!renderer) return 0;
    let n = 0;
    graph.forEachNode((node) => {
      const d = renderer!.getNodeDisplayData(node);
      if (d && !d.hidden) n++;
    });
    return n;
  },
  order: () => graph.order,
  /** Where a node is drawn, in page coordinates (for tests that click it). */
  nodeOnPage(name: string): { x: number; y: number } | null {
    if (!renderer) return null;
    const node = graph.findNode((_, a) => a.label === name);
    const d = node && renderer.getNodeDisplayData(node);
    if (!d) return null;
    const p = renderer.framedGraphToViewport(d);
    const box = container.getBoundingClientRect();
    return { x: box.left + p.x, y: box.top + p.y };
  },
  /** Edges drawn (not hidden by a filter). */
  edgesShown(): number {
    if (!renderer) return 0;
    let n = 0;
    graph.forEachEdge((e) => { const d = renderer!.getEdgeDisplayData(e); if (d && !d.hidden) n++; });
    return n;
  },
  size: () => graph.size,
  startLayout: () => startLayout(3600 * 1000),
  stopLayout: () => stopLayout(),
};

export function mountExplorer(panel: HTMLElement): void {
  const search = h("input", { type: "search", id: "entity-search", placeholder: "Entity name (any script)", "aria-label": "Search entities",
    autocomplete: "off",
    oninput: debounce(() => suggest(search.value), 200),
    onkeydown: (e: KeyboardEvent) => {
      if (e.key === "Enter") { e.preventDefault(); (results.querySelector("button") as HTMLButtonElement | null)?.click(); }
      if (e.key === "ArrowDown") { e.preventDefault(); (results.querySelector("button") as HTMLButtonElement | null)?.focus(); }
    } });
  results = h("div", { class: "results", id: "entity-results", role: "listbox", "aria-label": "Matching entities",
    onkeydown: (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.key === "ArrowDown") { e.preventDefault(); (t.nextElementSibling as HTMLElement | null)?.focus(); }
      if (e.key === "ArrowUp") { e.preventDefault(); ((t.previousElementSibling as HTMLElement | null) || search).focus(); }
    } });
  depthSelect = h("select", { id: "depth", "aria-label": "Depth" }, ...[1, 2, 3].map((d) => h("option", { value: d }, `depth ${d}`)));
  maxNodesInput = h("input", { type: "number", id: "max-nodes", min: 10, max: 5000, step: 10, value: 200, "aria-label": "Most nodes" });
  colourSelect = h("select", { id: "colour-by", "aria-label": "Colour by",
    onchange: () => { colourBy = colourSelect.value as any; colourChosen = true; renderer?.refresh(); } },
    h("option", { value: "type" }, "colour by type"), h("option", { value: "community" }, "colour by community"));
  weightLabel = h("span", { class: "quiet" }, "≥ 0");
  const weight = h("input", { type: "range", id: "min-weight", min: 0, max: 1, step: 0.05, value: 0, "aria-label": "Minimum edge weight",
    oninput: () => { minWeight = Number(weight.value) * maxWeight(); weightLabel.textContent = `≥ ${minWeight.toFixed(2)}`; renderer?.refresh(); } });
  relationBox = h("div", { class: "relations", id: "relations" });
  layoutButton = h("button", { id: "layout", onclick: () => (layout?.isRunning() ? stopLayout() : startLayout(4000)) }, "Run layout");
  status = h("span", { class: "quiet", id: "graph-count", "aria-live": "polite" });
  container = h("div", { id: "sigma", class: "sigma", tabindex: 0, "aria-label": "Knowledge graph view; drag to pan, scroll to zoom" });
  side = h("aside", { id: "entity-panel", class: "side" }, h("p", { class: "quiet" }, "Search an entity, then click nodes to expand them."));
  clear(panel,
    h("div", { class: "toolbar wrap" }, h("div", { class: "search-wrap" }, search, results), depthSelect, maxNodesInput,
      colourSelect, h("label", {}, "weight ", weight, weightLabel), layoutButton,
      h("button", { id: "clear-graph", onclick: () => { stopLayout(); graph.clear(); selected = null; updateStatus(); } }, "Clear"), status),
    h("details", { class: "relation-details" }, h("summary", {}, "Relation types"), relationBox),
    h("div", { class: "explorer" }, container, side));
}

/** Create the renderer once the panel is visible (sigma needs a sized container). */
export function showExplorer(): void {
  if (renderer) { renderer.resize(); renderer.refresh(); return; }
  renderer = new Sigma(graph, container, {
    allowInvalidContainer: true,
    renderEdgeLabels: false,
    labelRenderedSizeThreshold: 7,
    defaultEdgeType: "arrow",
    zIndex: true,
    // While the view moves, edges and labels wait: big graphs stay fluid.
    hideEdgesOnMove: true,
    hideLabelsOnMove: true,
    nodeReducer: (node, data) => {
      const a = graph.getNodeAttributes(node);
      const c = colour(colourBy === "type" ? a.entity_type : a.community || "none");
      const res: any = { ...data, color: c };
      if (node === selected) { res.highlighted = true; res.zIndex = 1; }
      return res;
    },
    edgeReducer: (edge, data) => {
      const a = graph.getEdgeAttributes(edge);
      if (hiddenRelations.has(a.rel_type) || a.weight < minWeight) return { ...data, hidden: true };
      return data;
    },
  });
  renderer.on("afterRender", () => {
    probe.frames++;
    if (probe.pendingLoad && graph.order > 0) {
      probe.lastLoad = { ...probe.pendingLoad, firstRender: performance.now() };
      probe.pendingLoad = null;
    }
  });
  renderer.on("clickNode", ({ node }) => { if (!moved) expand(node); });
  renderer.on("downNode", (e) => {
    dragged = e.node;
    moved = false;
    renderer!.getCamera().disable();
  });
  const captor = renderer.getMouseCaptor();
  captor.on("mousemovebody", (e) => {
    if (!dragged) return;
    moved = true;
    const p = renderer!.viewportToGraph(e);
    graph.mergeNodeAttributes(dragged, { x: p.x, y: p.y });
    e.preventSigmaDefault();
    e.original.preventDefault();
    e.original.stopPropagation();
  });
  captor.on("mouseup", () => {
    dragged = null;
    renderer!.getCamera().enable();
  });
}
let moved = false;

function maxWeight(): number {
  let m = 0;
  graph.forEachEdge((_, a) => { m = Math.max(m, a.weight); });
  return m || 1;
}

async function suggest(q: string): Promise<void> {
  if (!q.trim()) { clear(results); return; }
  try {
    const found = await getJson<GraphNode[]>("/graph/entities?" + new URLSearchParams({ q: q.trim(), limit: "12" }));
    clear(results, found.length ? found.map((n) =>
      h("button", { role: "option", class: "result", onclick: () => { clear(results); load(n.id, true); } },
        n.name, h("span", { class: "quiet" }, ` ${n.entity_type} · ${n.degree}`)))
      : [h("span", { class: "quiet" }, "no entity starts with that")]);
  } catch (e) {
    showError(e);
  }
}

/** Open an entity from elsewhere in the UI. */
export function focusEntity(id: string): void {
  load(id, true);
}

/** Load the neighbourhood of `id` (replacing the graph when `fresh`), then select it. */
export async function load(id: string, fresh: boolean, depth?: number): Promise<void> {
  const requested = performance.now();
  try {
    const q = new URLSearchParams({ entity: id, depth: String(depth ?? depthSelect.value),
      max_nodes: String(Math.min(5000, Math.max(10, Number(maxNodesInput.value) || 200))) });
    const sub = await getJson<Subgraph>("/graph/neighbourhood?" + q);
    stopLayout();
    if (fresh) graph.clear();
    merge(sub, fresh ? null : id);
    probe.pendingLoad = { entity: id, requested, fetched: performance.now(), nodes: graph.order, edges: graph.size };
    selected = id;
    resize();
    relations();
    updateStatus(sub.truncated);
    renderer?.refresh();
    if (fresh) renderer?.getCamera().animatedReset({ duration: 300 });
    startLayout(1500 + graph.order);
    showEntity(id);
  } catch (e) {
    showError(e);
  }
}

function expand(id: string): void {
  load(id, false, 1);
}

function merge(sub: Subgraph, around: string | null): void {
  const origin = around && graph.hasNode(around) ? graph.getNodeAttributes(around) : { x: 0, y: 0 };
  const n = sub.nodes.length;
  sub.nodes.forEach((node, i) => {
    const attrs = { label: node.name, entity_type: node.entity_type, community: node.community, degree: node.degree,
      size: 4 };
    if (graph.hasNode(node.id)) graph.mergeNodeAttributes(node.id, attrs);
    else {
      const angle = (2 * Math.PI * i) / n, r = around ? 5 + Math.random() * 5 : 10 + Math.sqrt(n) * 3 * Math.random();
      graph.addNode(node.id, { ...attrs, x: origin.x + r * Math.cos(angle), y: origin.y + r * Math.sin(angle) });
    }
  });
  for (const e of sub.edges) {
    if (graph.hasEdge(e.id) || !graph.hasNode(e.source) || !graph.hasNode(e.target)) continue;
    graph.addDirectedEdgeWithKey(e.id, e.source, e.target, { rel_type: e.rel_type, kind: e.kind, weight: e.weight,
      size: 1 + Math.min(3, Math.log1p(e.weight)), label: e.rel_type, color: "#c5c9d0" });
  }
}

/** Size by degree, relative to the largest on screen. */
function resize(): void {
  let max = 1;
  const types = new Set<string>();
  graph.forEachNode((_, a) => { max = Math.max(max, a.degree); types.add(a.entity_type); });
  graph.forEachNode((n, a) => graph.setNodeAttribute(n, "size", 3 + 12 * Math.sqrt(a.degree / max)));
  // One entity type on screen (an OpenIE import): colour by community instead.
  if (types.size === 1 && colourSelect.value === "type" && !colourChosen) { colourSelect.value = "community"; colourBy = "community"; }
}

function relations(): void {
  const counts = new Map<string, number>();
  graph.forEachEdge((_, a) => counts.set(a.rel_type, (counts.get(a.rel_type) || 0) + 1));
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 40);
  clear(relationBox, top.map(([rel, c]) => {
    const box = h("input", { type: "checkbox", checked: !hiddenRelations.has(rel), "data-rel": rel,
      onchange: () => { if (box.checked) hiddenRelations.delete(rel); else hiddenRelations.add(rel); renderer?.refresh(); } });
    return h("label", { class: "rel" }, box, ` ${rel} `, h("span", { class: "quiet" }, String(c)));
  }));
}

function startLayout(ms: number): void {
  if (graph.order === 0) return;
  if (!layout) layout = new FA2Layout(graph, { settings: { ...forceAtlas2.inferSettings(graph), barnesHutOptimize: graph.order > 300 } });
  layout.start();
  layoutButton.textContent = "Stop layout";
  clearTimeout(layoutTimer);
  layoutTimer = window.setTimeout(stopLayout, ms);
}

function stopLayout(): void {
  clearTimeout(layoutTimer);
  if (layout) { layout.kill(); layout = null; }
  if (layoutButton) layoutButton.textContent = "Run layout";
}

function updateStatus(truncated = false): void {
  status.textContent = `${graph.order} nodes · ${graph.size} edges${truncated ? " (cut at the node limit)" : ""}`;
  status.dataset.nodes = String(graph.order);
}

async function showEntity(id: string): Promise<void> {
  try {
    const d = await getJson<any>(`/graph/entities/${encodeURIComponent(id)}`);
    const e = d.entity;
    const community = d.communities?.[0];
    const report = community?.report;
    clear(side,
      h("h2", {}, e.name), h("p", { class: "quiet" }, `${e.entity_type} · ${d.degree} relations`),
      e.description ? h("p", {}, e.description) : null,
      d.aliases?.length ? [h("h3", {}, "Aliases"), h("ul", {}, d.aliases.map((a: any) => h("li", {}, a.name, h("span", { class: "quiet" }, ` ${a.similarity.toFixed(2)}`))))] : null,
      h("h3", {}, `Mentioned in (${d.mentions.length})`),
      h("ul", { class: "mentions" }, d.mentions.map((m: any) => h("li", {},
        h("button", { class: "link", onclick: () => openDocument(m.doc_id, m.chunk_id, [e.name]) }, m.title),
        h("p", { class: "snippet" }, snippet(m.text, e.name))))),
      d.claims?.length ? [h("h3", {}, `Claims (${d.claims.length})`),
        h("ul", { class: "claims" }, d.claims.map((c: any) => h("li", { title: c.source_text || "" },
          h("span", { class: `claim-status ${String(c.status).toLowerCase()}` }, c.status), ` ${c.claim_type} `,
          h("p", {}, c.description),
          c.start_date || c.end_date ? h("span", { class: "quiet" }, [c.start_date, c.end_date].filter(Boolean).join(" – ")) : null)))] : null,
      community ? [h("h3", {}, "Community"), h("p", {}, community.community.title),
        report ? h("div", { class: "report" }, h("strong", {}, report.title || ""), h("p", {}, report.summary || "")) : null] : null);
  } catch (err) {
    showError(err);
  }
}

function snippet(text: string, name: string): string {
  const at = text.indexOf(name);
  const from = Math.max(0, at < 0 ? 0 : at - 80);
  return (from > 0 ? "…" : "") + text.slice(from, from + 220) + (text.length > from + 220 ? "…" : "");
}
