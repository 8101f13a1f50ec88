// A small element builder and shared helpers.

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K, attrs: Record<string, any> = {}, ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k in el && typeof v !== "string") (el as any)[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

export function clear(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  for (const c of children.flat()) if (c) el.append(typeof c === "string" ? document.createTextNode(c) : c);
}

/** Show an error in the banner (dismissable). */
export function showError(e: unknown): void {
  const b = document.getElementById("banner")!;
  const msg = e instanceof Error ? e.message : String(e);
  const hint = (e as any)?.hint;
  clear(b, h("span", {}, msg + (hint ? ` — ${hint}` : "")),
    h("button", { "aria-label": "Dismiss", onclick: () => (b.hidden = true) }, "✕"));
  b.hidden = false;
}

export function debounce<A extends any[]>(f: (...a: A) => void, ms: number): (...a: A) => void {
  let t: number | undefined;
  return (...a: A) => {
    clearTimeout(t);
    t = window.setTimeout(() => f(...a), ms);
  };
}

/** A colour per category, stable across sessions. */
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c"];
export function colour(key: string): string {
  let x = 2166136261;
  for (let i = 0; i < key.length; i++) x = Math.imul(x ^ key.charCodeAt(i), 16777619);
  return PALETTE[(x >>> 0) % PALETTE.length];
}

/** Ask for confirmation in the confirm dialog. */
export function confirmDialog(text: string, ok = "Delete"): Promise<boolean> {
  const d = document.getElementById("confirm-dialog") as HTMLDialogElement;
  document.getElementById("confirm-text")!.textContent = text;
  document.getElementById("confirm-ok")!.textContent = ok;
  d.returnValue = "";
  d.showModal();
  return new Promise((resolve) => d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true }));
}

/** Show content in the view dialog. */
export function showView(title: string, ...body: (Child | Child[])[]): void {
  const d = document.getElementById("view-dialog") as HTMLDialogElement;
  document.getElementById("view-title")!.textContent = title;
  clear(document.getElementById("view-body")!, ...body);
  if (!d.open) d.showModal();
}

export function fmtDate(secs?: number): string {
  return secs ? new Date(secs * 1000).toLocaleString() : "";
}
