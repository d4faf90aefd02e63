// The browser entries in headless Chromium: `planvault` as a bundler or a
// page imports it (browser.js fetches the .wasm next to it, top-level await)
// and `planvault/inline` (the wasm inlined, no fetch). Every vault fixture
// validated in the page must give exactly the report the Node entry gives
// (which fixtures.test.mjs holds byte for byte to the Rust snapshots).
//
// Without Chromium or playwright-core the test is skipped with the reason
// (see chromium.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertPageAgreesWithNode, findChromium, launch, newWatchedPage, vaultCases } from "./chromium.mjs";

const pkgDir = fileURLToPath(new URL("../pkg/", import.meta.url));
const { chromium, missing } = await findChromium();

const PAGE = `<!doctype html><meta charset="utf-8"><title>planvault browser entry</title>
<script type="module">
  window.entries = {
    browser: () => import("./pkg/browser.js"),
    inline: () => import("./pkg/inline.js"),
  };
  window.ready = true;
</script>`;

const TYPES = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };

// The page and the built package, from 127.0.0.1; records what was fetched.
function serve() {
  const fetched = [];
  const server = createServer((request, response) => {
    const path = new URL(request.url, "http://127.0.0.1").pathname;
    fetched.push(path);
    if (path === "/") {
      response.writeHead(200, { "content-type": TYPES[".html"] }).end(PAGE);
      return;
    }
    if (path === "/favicon.ico") {
      response.writeHead(204).end();
      return;
    }
    const name = path.startsWith("/pkg/") ? path.slice("/pkg/".length) : "";
    const file = join(pkgDir, name);
    if (!/^[\w.-]+$/.test(name) || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}/`, fetched, close: () => server.close() });
    });
  });
}

let server;
let browser;

before(async () => {
  if (missing) return;
  server = await serve();
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

for (const entry of ["browser", "inline"]) {
  test(`the ${entry} entry validates every vault fixture in Chromium as the Node entry does`, { skip: missing }, async () => {
    const fetchedBefore = server.fetched.length;
    const { page, problems } = await openEntry(entry);
    const wasmFetched = server.fetched.slice(fetchedBefore).includes("/pkg/planvault_wasm_bg.wasm");
    assert.equal(wasmFetched, entry === "browser", "only the browser entry fetches the .wasm file");

    await assertPageAgreesWithNode(page, cases);
    assert.deepEqual(problems, []);
    await page.close();
  });
}
