// Shared by the tests that load the package in headless Chromium (the
// browser entries as served, and the package as bundlers ship it): finding
// Chromium, the vault fixtures, and the check that a page running planvault
// answers exactly as the Node entry does.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import * as planvault from "planvault";
import { readFolder, repoDir } from "./helpers.mjs";

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const vaultFixtures = join(repoDir, "core", "tests", "fixtures", "vault");

/**
 * Playwright's `chromium`, or why the browser tests cannot run: they need
 * the root's playwright-core (`npm ci` at the repository root) and Chromium
 * ($CHROMIUM_PATH, else /usr/bin/chromium). PLANVAULT_REQUIRE_BROWSER=1 makes
 * a missing part an error instead of a skip.
 */
export async function findChromium() {
  let missing;
  let chromium;
  try {
    ({ chromium } = await import("playwright-core"));
  } catch {
    missing = "playwright-core is not installed (run `npm ci` at the repository root)";
  }
  if (!missing && !existsSync(chromiumPath)) missing = `no Chromium at ${chromiumPath}`;
  if (missing && process.env.PLANVAULT_REQUIRE_BROWSER === "1") throw new Error(missing);
  return { chromium, missing };
}

export function launch(chromium) {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
}

const TYPES = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };

/**
 * An HTTP server on 127.0.0.1 that answers a path with `route(path)`:
 * `{ type, body }`, or nothing for a 404. Resolves to `{ url, close }`.
 */
export function serve(route) {
  const server = createServer((request, response) => {
    const found = route(decodeURIComponent(new URL(request.url, "http://127.0.0.1").pathname));
    if (!found) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": found.type }).end(found.body);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() });
    });
  });
}

/** A file as `serve`'s route answers it. */
export function fileAnswer(file) {
  return { type: TYPES[extname(file)] ?? "application/octet-stream", body: readFileSync(file) };
}

/** Every vault fixture folder: `{ name, files }`, by name. */
export function vaultCases() {
  return readdirSync(vaultFixtures)
    .filter((name) => statSync(join(vaultFixtures, name)).isDirectory())
    .sort()
    .map((name) => ({ name, files: readFolder(join(vaultFixtures, name)) }));
}

/** A new page that records page errors, console errors and every response. */
export async function newWatchedPage(browser) {
  const page = await browser.newPage();
  const problems = [];
  const responses = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => message.type() === "error" && problems.push(`console error: ${message.text()}`));
  page.on("response", (response) => responses.push({ url: new URL(response.url()).pathname, status: response.status() }));
  return { page, problems, responses };
}

/**
 * With the package's API at `window.planvault` in `page`: every vault fixture
 * validated there (by `validate(parseVault(...))` and by a `Vault`) must give
 * the Node entry's report, and an incremental edit and a misuse must behave
 * as in Node.
 */
export async function assertPageAgreesWithNode(page, cases) {
  assert.ok(cases.length > 5, `vault fixtures found under ${vaultFixtures}`);
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
}
