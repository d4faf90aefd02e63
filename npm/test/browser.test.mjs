// The browser entries in headless Chromium: `planvault` as a bundler or a
// page imports it (browser.js fetches the .wasm next to it, top-level await)
// and `planvault/inline` (the wasm inlined, no fetch), and the same two of
// the markdown build (`planvault/markdown`, `planvault/markdown/inline`). Every vault fixture
// validated in the page must give exactly the report the Node entry gives
// (which fixtures.test.mjs holds byte for byte to the Rust snapshots).
//
// Without Chromium or playwright-core the test is skipped with the reason
// (see chromium.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertPageAgreesWithNode, fileAnswer, findChromium, launch, newWatchedPage, serve, vaultCases } from "./chromium.mjs";

const pkgDir = fileURLToPath(new URL("../pkg/", import.meta.url));
const { chromium, missing } = await findChromium();

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>planvault browser entry</title>
<script type="module">
  window.entries = {
    browser: () => import("./pkg/browser.js"),
    inline: () => import("./pkg/inline.js"),
    "markdown/browser": () => import("./pkg/markdown/browser.js"),
    "markdown/inline": () => import("./pkg/markdown/inline.js"),
  };
  window.ready = true;
</script>`;

// The page and the built package.
function servePackage() {
  return serve((path) => {
    if (path === "/") return { type: "text/html", body: PAGE };
    const name = path.startsWith("/pkg/") ? path.slice("/pkg/".length) : "";
    const file = join(pkgDir, name);
    return /^(markdown\/)?[\w.-]+$/.test(name) && existsSync(file) ? fileAnswer(file) : undefined;
  });
}

let server;
let browser;

before(async () => {
  if (missing) return;
  server = await servePackage();
  browser = await launch(chromium);
});

after(async () => {
  await browser?.close();
  server?.close();
});

const cases = vaultCases();

async function openEntry(entry) {
  const watched = await newWatchedPage(browser);
  await watched.page.goto(server.url);
  await watched.page.waitForFunction(() => window.ready === true);
  await watched.page.evaluate(async (name) => {
    window.planvault = await window.entries[name]();
  }, entry);
  return watched;
}

for (const entry of ["browser", "inline", "markdown/browser", "markdown/inline"]) {
  test(`the ${entry} entry validates every vault fixture in Chromium as the Node entry does`, { skip: missing }, async () => {
    const { page, problems, responses } = await openEntry(entry);
    const fetched = responses.filter((r) => r.url.endsWith(".wasm") && r.status === 200).map((r) => r.url);
    const wasm = entry.startsWith("markdown/") ? "/pkg/markdown/planvault_wasm_bg.wasm" : "/pkg/planvault_wasm_bg.wasm";
    assert.deepEqual(fetched, entry.endsWith("browser") ? [wasm] : [], "only a browser entry fetches a .wasm file, its own");

    await assertPageAgreesWithNode(page, cases);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
