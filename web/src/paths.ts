// Reasoning paths and linked facts of an answer, drawn as a small layered graph (SVG):
// "A -[REL]-> B ; B -[REL]-> C (score 0.8)" from `paths`, and {subject, predicate, object}
// from hippo's linked facts.

import { QueryResponse } from "./api";

export interface PathEdge { source: string; target: string; label: string }

export function pathEdges(r: QueryResponse, maxEdges = 40): PathEdge[] {
  const out: PathEdge[] = [];
  const seen = new Set<string>();
  const add = (source: string, label: string, target: string) => {
    const k = `${source}\u0000${label}\u0000${target}`;
    if (!source || !target || seen.has(k) || out.length >= maxEdges) return;
    seen.add(k);
    out.push({ source, target, label });
  };
  for (const p of r.paths || []) {
    for (const seg of p.replace(/\s*\(score [^)]*\)\s*$/, "").split(" ; ")) {
      const m = seg.match(/^(.*?) -\[(.*?)\]-> (.*)$/);
      if (m) add(m[1].trim(), m[2].trim(), m[3].trim());
    }
  }
  // Edges given as evidence: "A --REL--> B".
  for (const c of r.contexts || []) {
    const m = c.kind === "edge" ? c.text.match(/^(.*?) --(.*?)--> (.*)$/) : null;
    if (m) add(m[1].trim(), m[2].trim(), m[3].trim());
  }
  for (const f of (r.extra?.facts as any[]) || []) {
    if (f && f.subject && f.object) add(f.subject, f.predicate || "", f.object);
  }
  return out;
}

const NS = "http://www.w3.org/2000/svg";
function el(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** An SVG of the edges, left to right by how far each node is from a start of a path. */
export function drawPaths(edges: PathEdge[]): SVGSVGElement {
  const names = [...new Set(edges.flatMap((e) => [e.source, e.target]))];
  const layer = new Map<string, number>(names.map((n) => [n, 0]));
  // Longest distance from a node nothing points to, bounded by the node count (cycles).
  for (let round = 0; round < names.length; round++) {
    let moved = false;
    for (const e of edges) {
      const want = Math.min(layer.get(e.source)! + 1, names.length);
      if (e.source !== e.target && layer.get(e.target)! < want && want < 6) {
        layer.set(e.target, want);
        moved = true;
      }
    }
    if (!moved) break;
  }
  const byLayer = new Map<number, string[]>();
  for (const n of names) byLayer.set(layer.get(n)!, [...(byLayer.get(layer.get(n)!) || []), n]);
  const layers = Math.max(...byLayer.keys()) + 1;
  const rows = Math.max(...[...byLayer.values()].map((v) => v.length));
  const W = Math.max(360, layers * 220), H = Math.max(80, rows * 48 + 20);
  const pos = new Map<string, [number, number]>();
  for (const [l, ns] of byLayer) ns.forEach((n, i) => pos.set(n, [90 + l * 220, (H / (ns.length + 1)) * (i + 1)]));
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, class: "paths", role: "img",
    "aria-label": `Reasoning graph: ${edges.length} edges` }) as SVGSVGElement;
  const defs = el("defs", {});
  const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }));
  defs.append(marker);
  svg.append(defs);
  for (const e of edges) {
    const [x1, y1] = pos.get(e.source)!, [x2, y2] = pos.get(e.target)!;
    const g = el("g", { class: "edge", "data-label": e.label });
    if (e.source === e.target) {
      g.append(el("path", { d: `M ${x1} ${y1 - 8} c 30 -40 60 0 8 8`, "marker-end": "url(#arrow)" }));
    } else {
      const dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy) || 1, r = 10;
      g.append(el("line", { x1: x1 + (dx / len) * r, y1: y1 + (dy / len) * r, x2: x2 - (dx / len) * r, y2: y2 - (dy / len) * r, "marker-end": "url(#arrow)" }));
    }
    g.append(el("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 5, class: "edge-label", "text-anchor": "middle" }, e.label));
    svg.append(g);
  }
  for (const n of names) {
    const [x, y] = pos.get(n)!;
    const g = el("g", { class: "node" });
    g.append(el("circle", { cx: x, cy: y, r: 8 }));
    g.append(el("text", { x, y: y + 22, "text-anchor": "middle" }, n.length > 30 ? n.slice(0, 29) + "…" : n));
    svg.append(g);
  }
  return svg;
}
