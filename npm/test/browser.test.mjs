// The browser entries in headless Chromium: `planvault` as a bundler or a
// page imports it (browser.js fetches the .wasm next to it, top-level await)
// and `planvault/inline` (the wasm inlined, no fetch). Every vault fixture
// validated in the page must give exactly the report the Node entry gives
// (which fixtures.test.mjs holds byte for byte to the Rust snapshots).
//
// Needs playwright-core (the repository root's dev dependency: `npm ci` at
// the root) and Chromium ($CHROMIUM_PATH, else /usr/bin/chromium). Without
// them the test is skipped with the reason, unless PLANVAULT_REQUIRE_BROWSER=1
// makes that a failure.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as planvault from "planvault";
import { readFolder, repoDir } from "./helpers.mjs";

const pkgDir = fileURLToPath(new URL("../pkg/", import.meta.url));
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const vaultFixtures = join(repoDir, "core", "tests", "fixtures", "vault");

let chromium;
let missing;
try {
  ({ chromium } = await import("playwright-core"));
} catch {
  missing = "playwright-core is not installed (run `npm ci` at the repository root)";
}
if (!missing && !existsSync(chromiumPath)) missing = `no Chromium at ${chromiumPath}`;
if (missing && process.env.PLANVAULT_REQUIRE_BROWSER === "1") throw new Error(missing);

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
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

const cases = readdirSync(vaultFixtures)
  .filter((name) => statSync(join(vaultFixtures, name)).isDirectory())
  .sort()
  .map((name) => ({ name, files: readFolder(join(vaultFixtures, name)) }));

async function openEntry(entry) {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => message.type() === "error" && problems.push(`console error: ${message.text()}`));
  await page.goto(server.url);
  await page.waitForFunction(() => window.ready === true);
  await page.evaluate(async (name) => {
    window.planvault = await window.entries[name]();
  }, entry);
  return { page, problems };
}

for (const entry of ["browser", "inline"]) {
  test(`the ${entry} entry validates every vault fixture in Chromium as the Node entry does`, { skip: missing }, async () => {
    assert.ok(cases.length > 5, `vault fixtures found under ${vaultFixtures}`);
    const fetchedBefore = server.fetched.length;
    const { page, problems } = await openEntry(entry);
    const wasmFetched = server.fetched.slice(fetchedBefore).includes("/pkg/planvault_wasm_bg.wasm");
    assert.equal(wasmFetched, entry === "browser", "only the browser entry fetches the .wasm file");

    const inPage = await page.evaluate((cases) => {
      const { parseVault, validate, Vault } = window.planvault;
      return cases.map(({ name, files }) => {
        const report = validate(parseVault(files));
        const vault = new Vault(files);
        return { name, report, incremental: vault.validate() };
      });
    }, cases);
    let withDiagnostics = 0;
    for (const { name, report, incremental } of inPage) {
      const files = cases.find((c) => c.name === name).files;
      const expected = planvault.validate(planvault.parseVault(files));
      assert.deepEqual(report, expected, `${name}: the same report as the Node entry`);
      assert.deepEqual(incremental, expected, `${name}: the incremental Vault agrees`);
      if (report.diagnostics.length > 0) withDiagnostics += 1;
    }
    assert.ok(withDiagnostics > 3, "the fixtures exercise diagnostics, not only clean vaults");

    // An edit through the incremental handle, and a misuse, behave in the page as in Node.
    const edited = await page.evaluate(() => {
      const { Vault } = window.planvault;
      const vault = new Vault({ "a.md": "---\ntype: start\n---\n# A\n\n## Next\n- [[b]]\n", "b.md": "# B\n" });
      const before = vault.diagnostics().map((d) => d.code);
      vault.update("a.md", "---\ntype: start\n---\n# A\n\n## Next\n- [[c]]\n");
      const after = vault.diagnostics().map((d) => `${d.code}@${d.file}:${d.line}:${d.column}`);
      let error;
      try {
        new Vault({ "a.md": 1 });
      } catch (e) {
        error = { name: e.name, code: e.code };
      }
      return { before, after, error };
    });
    assert.deepEqual(edited.before, []);
    assert.deepEqual(edited.after, ["no-terminal-reachable@a.md:1:1", "dangling-edge@a.md:7:3", "unreachable@b.md:1:1"]);
    assert.deepEqual(edited.error, { name: "PlanvaultError", code: "invalid-argument" });
    assert.deepEqual(problems, []);
    await page.close();
  });
}
