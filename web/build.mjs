// Bundles the UI into one script and one stylesheet: node build.mjs OUT_DIR
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2];
if (!out) {
  console.error("usage: node build.mjs OUT_DIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ["src/main.ts"],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  outfile: join(out, "app.js"),
  logLevel: "warning",
  legalComments: "none",
});
copyFileSync("index.html", join(out, "index.html"));
copyFileSync("style.css", join(out, "app.css"));
