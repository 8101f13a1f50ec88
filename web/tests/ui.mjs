// Drives the web UI in headless Chromium (Debian's) against a running `rhizome serve`.
//   node tests/ui.mjs SCENARIO BASE_URL OUT_DIR [KEY]
// Scenarios: en, zh, vi (upload, ask, cite, explore, delete), pdf (a PDF and a Word file
// described in the list and in their view, the page cited, the document opened at it;
// their folder as the argument after KEY) and bench (2,000 nodes: time to first render,
// frames per second while dragging). Prints one JSON line of results;
// exits non-zero on the first failed check. Screenshots go to OUT_DIR.
import { chromium } from "playwright-core";
import { mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const [scenario, base, out, key] = process.argv.slice(2);
if (!scenario || !base || !out) {
  console.error("usage: node tests/ui.mjs en|zh|vi|bench BASE_URL OUT_DIR [KEY]");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const DATA = resolve(process.env.RHIZOME_SHARED_DATA || "../../shared/data");
const REPO = resolve("..");
const result = { scenario, screenshots: [] };

function check(ok, what) {
  if (!ok) throw new Error("check failed: " + what);
}

const browser = await chromium.launch({
  executablePath: process.env.RHIZOME_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await context.newPage();
const consoleErrors = [];
page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
page.on("pageerror", (e) => consoleErrors.push(String(e)));
page.setDefaultTimeout(120_000);

async function shot(name) {
  const file = join(out, name + ".png");
  await page.screenshot({ path: file, fullPage: false });
  result.screenshots.push(file);
}

async function open() {
  await page.goto(base + "/#documents");
  if (key) {
    // The key is asked for once and kept in the tab.
    await page.locator("#key-dialog").waitFor({ state: "visible" });
    await page.fill("#key-input", key);
    await page.click("#key-dialog button[value=ok]");
    await page.locator("#key-dialog").waitFor({ state: "hidden" });
  }
  await page.locator("#drop").waitFor();
  // The file types offered come from the server (GET /formats): the caller compares them
  // with the loader registry.
  await page.waitForFunction(() => document.querySelector("#file-input").accept !== "");
  result.accept = await page.getAttribute("#file-input", "accept");
  result.formats_label = await page.locator("#formats").innerText();
}

async function upload(files) {
  await page.setInputFiles("#file-input", files);
  const n = files.length;
  await page.waitForFunction((n) => {
    const rows = [...document.querySelectorAll("#uploads li")];
    return rows.length >= n && rows.slice(0, n).every((r) => r.dataset.state);
  }, n, { timeout: 600_000 });
  const states = await page.$$eval("#uploads li", (rows) => rows.map((r) => [r.dataset.file, r.dataset.state, r.textContent]));
  check(states.every((s) => s[1] === "done"), "every upload done: " + JSON.stringify(states));
}

async function waitDocuments(n) {
  await page.click("#tab-documents");
  await page.waitForFunction((n) => document.querySelectorAll("#doc-rows tr").length === n, n);
}

async function ask(question, method = "auto") {
  await page.click("#tab-ask");
  await page.selectOption("#method", method);
  await page.fill("#question", question);
  const before = await page.locator(".turn").count();
  await page.press("#question", "Enter");   // Enter sends
  const turn = page.locator(".turn").nth(before);
  await turn.locator(".answer:not(.streaming)").waitFor();
  const answer = await turn.locator(".answer").innerText();
  check(!(await turn.locator(".answer .error").count()), "answer without error: " + answer);
  return { turn, answer };
}

async function openCitation(turn, title) {
  const cites = turn.locator("button.cite");
  check((await cites.count()) > 0, "the answer has citations");
  const n = await cites.count();
  const titles = [];
  for (let i = 0; i < n; i++) {
    await cites.nth(i).click();
    await page.locator("#view-dialog").waitFor({ state: "visible" });
    const t = await page.locator("#view-title").innerText();
    titles.push(t);
    if (t.includes(title)) {
      const marked = await page.locator("#view-body mark").count();
      check(marked > 0, "the cited passage is highlighted");
      return { title: t, marked };
    }
    await page.click("#view-close");
  }
  throw new Error(`no citation opens ${title}: ${JSON.stringify(titles)}`);
}

async function explore(name, minNodes, depth = 1) {
  await page.click("#tab-graph");
  await page.selectOption("#depth", String(depth));
  await page.fill("#entity-search", name);
  const first = page.locator("#entity-results button").first();
  await first.waitFor();
  await first.click();
  await page.waitForFunction((m) => window.rhizomeUi.explorer.rendered() >= m && window.rhizomeUi.explorer.lastLoad, minNodes);
  await page.waitForTimeout(2500); // let the layout settle for the screenshot
  const rendered = await page.evaluate(() => window.rhizomeUi.explorer.rendered());
  // The canvas has really been drawn on: count non-background pixels in a screenshot of it.
  const png = await page.locator("#sigma").screenshot();
  const inked = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = "data:image/png;base64," + b64;
    await img.decode();
    const c = new OffscreenCanvas(img.width, img.height);
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, img.width, img.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
    return n;
  }, png.toString("base64"));
  check(rendered >= minNodes, `at least ${minNodes} nodes drawn (${rendered})`);
  check(inked > 500, `the graph canvas has drawn pixels (${inked})`);
  const side = await page.locator("#entity-panel h2").innerText();
  return { rendered, inked_pixels: inked, side_panel: side };
}

/** Click a drawn node: its neighbours join the graph and the side panel shows it. */
async function expandNode(name) {
  await page.evaluate(() => window.rhizomeUi.explorer.stopLayout());
  await page.waitForTimeout(300);
  const before = await page.evaluate(() => window.rhizomeUi.explorer.order());
  const at = await page.evaluate((n) => window.rhizomeUi.explorer.nodeOnPage(n), name);
  check(at, `node ${name} is drawn`);
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction((n) => document.querySelector("#entity-panel h2")?.textContent === n, name);
  await page.waitForFunction((b) => window.rhizomeUi.explorer.order() > b, before);
  const after = await page.evaluate(() => window.rhizomeUi.explorer.order());
  // Filters: hide one relation type, then everything under the heaviest weight.
  const shown = await page.evaluate(() => window.rhizomeUi.explorer.edgesShown());
  await page.click("#tab-graph .relation-details summary, .relation-details summary");
  await page.locator("#relations input").first().uncheck();
  const byType = await page.evaluate(() => window.rhizomeUi.explorer.edgesShown());
  check(byType < shown, `a relation type filter hides edges (${shown} -> ${byType})`);
  await page.locator("#relations input").first().check();
  await page.locator("#min-weight").fill("1");
  const byWeight = await page.evaluate(() => window.rhizomeUi.explorer.edgesShown());
  check(byWeight < shown, `a weight filter hides edges (${shown} -> ${byWeight})`);
  await page.locator("#min-weight").fill("0");
  return { nodes_before: before, nodes_after: after, edges: shown, edges_type_filtered: byType, edges_weight_filtered: byWeight };
}

async function removeDocument(title, remaining) {
  await page.click("#tab-documents");
  const row = page.locator("#doc-rows tr", { hasText: title });
  await row.locator("button.danger").click();
  await page.locator("#confirm-dialog").waitFor({ state: "visible" });
  await page.click("#confirm-ok");
  await page.waitForFunction((n) => document.querySelectorAll("#doc-rows tr").length === n, remaining);
  check(!(await page.locator("#doc-rows tr", { hasText: title }).count()), `${title} left the list`);
}

async function phone() {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await shot("phone");
  await page.setViewportSize({ width: 1280, height: 800 });
  check(overflow <= 1, `no sideways scrolling on a phone-sized screen (${overflow}px)`);
}

async function keyboard() {
  await page.focus("#tab-documents");
  await page.keyboard.press("ArrowRight");
  const selected = await page.getAttribute("#tab-ask", "aria-selected");
  check(selected === "true", "arrow keys move between panels");
  await page.keyboard.press("ArrowLeft");
}

const files = (dir, pred = () => true) => readdirSync(dir).filter(pred).sort().map((f) => join(dir, f));

try {
  if (scenario === "en") {
    await open();
    await keyboard();
    await upload(files(join(REPO, "examples/docs")));
    await waitDocuments(3);
    await shot("upload");
    const { turn, answer } = await ask("Who shared the Nobel Prize in Physics with Aage Bohr?");
    check(answer.includes("Mottelson"), "the answer names Mottelson: " + answer);
    result.citation = await openCitation(turn, "copenhagen-physics");
    await shot("answer");
    await page.click("#view-close");
    result.explorer = await explore("Aage Bohr", 5);
    await shot("explorer");
    result.expand = await expandNode("Nobel Prize");
    await page.click("#tab-communities");
    await page.locator("#community-list details").first().waitFor();
    await page.locator("#community-list details summary").first().click();
    await page.locator("#community-list details .report, #community-list details p").first().waitFor();
    await shot("communities");
    await phone();
    await removeDocument("copenhagen-physics", 2);
    const after = await ask("Who shared the Nobel Prize in Physics with Aage Bohr?", "basic");
    const sources = await after.turn.locator(".sources").innerText();
    check(!sources.includes("copenhagen-physics") && !after.answer.includes("Mottelson"), "the deleted document left the answers: " + sources);
    result.after_delete = after.answer;
  } else if (scenario === "pdf") {
    // A PDF and a Word document made by tests/fixtures/documents.py (their folder follows
    // the key): the answer cites the PDF's page, and its document opens at that page.
    const dir = process.argv[6];
    await open();
    await upload([join(dir, "report_en.pdf"), join(dir, "notes.docx")]);
    await waitDocuments(2);
    // Each document is described: its type and tags in the list, its summary in its view.
    const row = page.locator("tr[data-doc]").filter({ hasText: "Harbour Report" });
    result.listed_type = await row.locator(".doc-type").innerText();
    result.listed_tags = await row.locator("td.doc-tags").innerText();
    check(result.listed_type !== "" && result.listed_tags !== "", "the list shows a type and tags: " + (await row.innerText()));
    await row.locator("button.link").click();
    const about = page.locator(".doc-about");
    await about.waitFor();
    result.about = await about.innerText();
    await shot("document-about");
    await page.click("#view-close");
    const { turn } = await ask("When was the Halvorsen Bridge completed?", "basic");
    result.citation = await openCitation(turn, "Harbour Report");
    result.cited_source = await page.locator("[data-testid=cited-source]").innerText();
    await shot("citation");
    await page.getByRole("button", { name: /^Open the document at / }).click();
    const opened = page.locator("#view-body details.chunk[open]").filter({ has: page.locator("mark") });
    await opened.first().waitFor();
    result.opened_at = await opened.first().locator("summary").innerText();
    await opened.first().locator("mark").first().scrollIntoViewIfNeeded();
    await shot("document-at-page");
    await page.click("#view-close");
    const word = await ask("Where does the ferry Nordlys sail every morning?", "basic");
    const sources = await word.turn.locator(".sources").innerText();
    check(sources.includes("notes.docx"), "the Word document is cited: " + sources);
    result.word_citation = sources;
    // Only Word documents: the same question's passages all come from one.
    await page.fill("#filter", "source=*.docx");
    const only = await ask("Where does the ferry Nordlys sail every morning?", "basic");
    result.filtered_sources = await only.turn.locator(".sources").innerText();
    check(!result.filtered_sources.includes(".pdf"), "a filtered question cites no PDF: " + result.filtered_sources);
    await shot("filtered");
    await page.fill("#filter", "");
  } else if (scenario === "zh") {
    await open();
    await upload(files(join(DATA, "zh_openai")));
    await waitDocuments(3);
    await shot("upload");
    const { turn, answer } = await ask("Sam Altman领导的公司在AI领域有什么重要投资？");
    result.answer = answer;
    result.citation = await openCitation(turn, "microsoft_investment");
    await shot("answer");
    await page.click("#view-close");
    result.explorer = await explore("Sam Altman", 5, 2);
    await shot("explorer");
    await removeDocument("microsoft_investment", 2);
    const after = await ask("Sam Altman领导的公司在AI领域有什么重要投资？", "basic");
    const sources = await after.turn.locator(".sources").innerText();
    check(!sources.includes("microsoft_investment"), "the deleted document left the answers: " + sources);
  } else if (scenario === "vi") {
    await open();
    await upload([join(DATA, "vi_bohr/edges.csv")]);
    await waitDocuments(1);
    await shot("upload");
    const { turn, answer } = await ask("Aage Bohr có những giải thưởng gì?");
    result.answer = answer;
    const labels = await turn.locator("svg.paths g.edge").evaluateAll((gs) => gs.map((g) => g.dataset.label));
    result.drawn_edges = labels;
    check(labels.filter((l) => l === "đoạt giải").length >= 2, "award edges drawn: " + JSON.stringify(labels));
    check(answer.includes("Giải"), "the answer names an award: " + answer);
    await turn.scrollIntoViewIfNeeded();
    await shot("answer");
    result.explorer = await explore("Aage Bohr", 5);
    await shot("explorer");
    await removeDocument("edges", 0);
  } else if (scenario === "llm") {
    // An LLM is configured (the test's loopback OpenAI-compatible server): the answer streams.
    await open();
    await upload(files(join(REPO, "examples/docs")));
    await waitDocuments(3);
    const { turn, answer } = await ask("Who shared the Nobel Prize in Physics with Aage Bohr?", "basic");
    result.answer = answer;
    result.tokens = Number(await turn.getAttribute("data-tokens"));
    check(result.tokens >= 5, `the answer streamed in pieces (${result.tokens})`);
    result.citation = await openCitation(turn, "copenhagen-physics");
    await page.click("#view-close");
    result.meta = await turn.locator(".meta summary").innerText();
    check(result.meta.includes("llm"), "answered by the LLM: " + result.meta);
    await shot("answer-llm");
    // The LLM also extracted claims: an entity's panel lists them.
    result.explorer = await explore("Niels", 2);
    const claims = page.locator("#entity-panel .claims li");
    await claims.first().waitFor();
    result.claims = await claims.first().innerText();
    await shot("entity-claims");
  } else if (scenario === "bench") {
    const entity = process.argv[6];
    const nodes = Number(process.argv[7] || 2000);
    await open();
    await page.click("#tab-graph");
    await page.selectOption("#depth", "3");
    await page.fill("#max-nodes", String(nodes));
    await page.fill("#entity-search", entity);
    const first = page.locator("#entity-results button").first();
    await first.waitFor();
    await first.click();
    await page.waitForFunction(() => window.rhizomeUi.explorer.lastLoad);
    const load = await page.evaluate(() => window.rhizomeUi.explorer.lastLoad);
    const rendered = await page.evaluate(() => window.rhizomeUi.explorer.rendered());
    // Frames per second while dragging the view, layout running and stopped.
    const box = await page.locator("#sigma").boundingBox();
    async function dragFps(ms) {
      const start = await page.evaluate(() => {
        window.__raf = 0;
        const tick = () => { window.__raf++; window.__rafId = requestAnimationFrame(tick); };
        window.__rafId = requestAnimationFrame(tick);
        return { frames: window.rhizomeUi.explorer.frames, t: performance.now() };
      });
      const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
      await page.mouse.move(cx, cy);
      await page.mouse.down();
      const t0 = Date.now();
      let i = 0;
      while (Date.now() - t0 < ms) {
        i++;
        await page.mouse.move(cx + 150 * Math.sin(i / 10), cy + 100 * Math.cos(i / 10), { steps: 2 });
      }
      await page.mouse.up();
      const end = await page.evaluate(() => {
        cancelAnimationFrame(window.__rafId);
        return { frames: window.rhizomeUi.explorer.frames, t: performance.now(), raf: window.__raf };
      });
      const s = (end.t - start.t) / 1000;
      return { seconds: +s.toFixed(2), raf_fps: +(end.raf / s).toFixed(1), render_fps: +((end.frames - start.frames) / s).toFixed(1) };
    }
    await page.evaluate(() => window.rhizomeUi.explorer.startLayout());
    const withLayout = await dragFps(4000);
    await page.evaluate(() => window.rhizomeUi.explorer.stopLayout());
    await page.waitForTimeout(300);
    const still = await dragFps(4000);
    await shot("explorer-2000");
    result.bench = {
      nodes: load.nodes, edges: load.edges, rendered,
      fetch_ms: +(load.fetched - load.requested).toFixed(1),
      first_render_ms: +(load.firstRender - load.requested).toFixed(1),
      drag_layout_running: withLayout, drag_layout_stopped: still,
    };
    check(rendered >= Math.min(nodes, load.nodes) && load.nodes >= nodes * 0.9, `${nodes} nodes drawn (${rendered} of ${load.nodes})`);
  } else {
    throw new Error("unknown scenario " + scenario);
  }
  check(consoleErrors.length === 0, "no console errors: " + JSON.stringify(consoleErrors));
  console.log(JSON.stringify(result));
} catch (e) {
  await shot("failure").catch(() => {});
  console.error(String(e && e.stack || e));
  console.error("console errors: " + JSON.stringify(consoleErrors));
  process.exitCode = 1;
} finally {
  await browser.close();
}
