// Communities: the hierarchy level by level, each report readable.

import { getJson } from "./api";
import { h, clear, showError, debounce } from "./dom";

interface CommunityOut {
  community: { id: string; level: number; title: string; parent?: string | null; children: string[]; entity_ids: string[] };
  report?: { title?: string; summary?: string; rating?: number; rating_explanation?: string;
    findings?: { summary: string; explanation: string }[] } | null;
}

let levels: HTMLElement;
let listEl: HTMLElement;
let filter: HTMLInputElement;
let current: CommunityOut[] = [];
let titles = new Map<string, string>();

export function mountCommunities(panel: HTMLElement): void {
  levels = h("div", { role: "group", "aria-label": "Level", class: "levels", id: "levels" });
  filter = h("input", { type: "search", placeholder: "Filter by title", "aria-label": "Filter communities",
    oninput: debounce(() => draw(), 200) });
  listEl = h("div", { id: "community-list", class: "communities" });
  clear(panel, h("div", { class: "toolbar" }, levels, filter), listEl);
}

export async function showCommunities(): Promise<void> {
  clear(levels);
  for (let level = 0; level < 10; level++) {
    let got: CommunityOut[];
    try {
      got = await getJson<CommunityOut[]>(`/communities?level=${level}`);
    } catch (e: any) {
      if (e.status !== 503 && e.status !== 404) showError(e);
      break;
    }
    if (!got.length) break;
    for (const c of got) titles.set(c.community.id, c.community.title);
    const button = h("button", { "aria-pressed": "false", "data-level": level, onclick: () => pick(level, got, button) },
      `Level ${level} (${got.length})`);
    levels.append(button);
    if (level === 0) pick(0, got, button);
  }
  if (!levels.childElementCount) clear(listEl, h("p", { class: "quiet" }, "No communities yet: index documents first."));
}

function pick(level: number, got: CommunityOut[], button: HTMLElement): void {
  for (const b of levels.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b === button));
  current = got;
  draw();
}

function draw(): void {
  const f = filter.value.trim().toLowerCase();
  const shown = current.filter((c) => !f || c.community.title.toLowerCase().includes(f)).slice(0, 300);
  clear(listEl, shown.map((c) => {
    const d = h("details", { class: "community", "data-community": c.community.id },
      h("summary", {}, c.report?.title || c.community.title,
        h("span", { class: "quiet" }, ` · ${c.community.entity_ids.length} entities${c.report?.rating != null ? ` · rating ${c.report.rating.toFixed(1)}` : ""}`)));
    d.addEventListener("toggle", () => {
      if (!d.open || d.dataset.filled) return;
      d.dataset.filled = "1";
      const r = c.report;
      d.append(...[
        c.community.parent ? h("p", { class: "quiet" }, `Part of: ${titles.get(c.community.parent) || c.community.parent}`) : null,
        c.community.children.length ? h("p", { class: "quiet" }, `Splits into: ${c.community.children.map((x) => titles.get(x) || x).join("; ")}`) : null,
        r ? h("div", { class: "report" }, h("p", {}, r.summary || ""),
          r.findings?.length ? h("ul", {}, r.findings.map((x) => h("li", {}, h("strong", {}, x.summary), " ", x.explanation))) : null,
          r.rating_explanation ? h("p", { class: "quiet" }, r.rating_explanation) : null)
          : h("p", { class: "quiet" }, "No report yet."),
      ].filter((x): x is HTMLElement => !!x));
    });
    return d;
  }), current.length > shown.length && !f ? h("p", { class: "quiet" }, `Showing 300 of ${current.length}; filter to find others.`) : null);
}
