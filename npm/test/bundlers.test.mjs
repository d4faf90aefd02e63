// The package as a web app gets it: `npm pack`ed (so only what `files`
// publishes), installed into a fresh app, and bundled by Vite (its
// production build and its dev server) and by webpack 5, with no
// configuration beyond an entry. Each must pick the browser entry, ship the
// `.wasm` as an asset of its own, and the page must then answer every vault
// fixture exactly as the Node entry does; Parcel 2 too, which by default
// reads the `browser` field, not `exports`. Rollup and esbuild, which ship no
// assets without a plugin, are held to what the README tells their users:
// the browser entry with the `.wasm` copied next to the bundle, or the
// inline entry alone (esbuild's inline build is the example plugin's test).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build as viteBuild, createServer as viteServer } from "vite";
import webpack from "webpack";
import { rollup } from "rollup";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import * as esbuild from "esbuild";
import { createRequire } from "node:module";
import { assertPageAgreesWithNode, fileAnswer, findChromium, launch, newWatchedPage, serve, vaultCases } from "./chromium.mjs";

const npmDir = fileURLToPath(new URL("..", import.meta.url));
const parcelCli = createRequire(import.meta.url).resolve("parcel/lib/bin.js");
const { chromium, missing } = await findChromium();

// The inline entry's base64 wasm alone is ~850 KB: a bundle of that size
// took the wrong entry.
const MAX_APP_SCRIPT_BYTES = 100_000;

const INDEX_HTML = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">
<title>planvault in a bundled app</title>
<script type="module" src="./main.js"></script>
`;
const MAIN_JS = `import * as planvault from "planvault";
window.planvault = planvault;
window.ready = true;
`;
const INLINE_MAIN_JS = MAIN_JS.replace('"planvault"', '"planvault/inline"');
const MARKDOWN_MAIN_JS = MAIN_JS.replace('"planvault"', '"planvault/markdown"');

let workDir;
let appDir;
let browser;

before(async () => {
  if (missing) return;
  workDir = mkdtempSync(join(tmpdir(), "planvault-bundlers-"));
  appDir = join(workDir, "app");
  const installed = join(appDir, "node_modules", "planvault");
  mkdirSync(installed, { recursive: true });
  execFileSync("npm", ["pack", "--pack-destination", workDir], { cwd: npmDir, stdio: ["ignore", "pipe", "pipe"] });
  const tarball = readdirSync(workDir).find((name) => name.endsWith(".tgz"));
  execFileSync("tar", ["xzf", join(workDir, tarball), "-C", installed, "--strip-components=1"]);
  writeFileSync(join(appDir, "package.json"), JSON.stringify({ name: "bundled-app", private: true, type: "module" }));
  writeFileSync(join(appDir, "index.html"), INDEX_HTML);
  writeFileSync(join(appDir, "main.js"), MAIN_JS);
  writeFileSync(join(appDir, "inline-main.js"), INLINE_MAIN_JS);
  writeFileSync(join(appDir, "inline.html"), INDEX_HTML.replace("./main.js", "./inline-main.js"));
  writeFileSync(join(appDir, "markdown-main.js"), MARKDOWN_MAIN_JS);
  writeFileSync(join(appDir, "markdown.html"), INDEX_HTML.replace("./main.js", "./markdown-main.js"));
  browser = await launch(chromium);
});

after(async () => {
  await browser?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** A built app's folder. */
function serveStatic(root) {
  return serve((path) => {
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    return file.startsWith(root + sep) && existsSync(file) && statSync(file).isFile() ? fileAnswer(file) : undefined;
  });
}

/** Every file under `dir`, relative, with its size. */
function filesIn(dir, prefix = "") {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesIn(path, `${prefix}${name}/`) : [{ name: `${prefix}${name}`, bytes: statSync(path).size }];
  });
}

/** The built app's `.wasm` (the package's `build`) and scripts, checked; the wasm's name. */
function checkBuiltAssets(outDir, build = "pkg") {
  const files = filesIn(outDir);
  const wasm = files.filter((f) => f.name.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `one .wasm asset in ${JSON.stringify(files)}`);
  const shipped = statSync(join(appDir, "node_modules", "planvault", build, "planvault_wasm_bg.wasm")).size;
  assert.equal(wasm[0].bytes, shipped, "the asset is the package's wasm, whole");
  for (const script of files.filter((f) => f.name.endsWith(".js"))) {
    assert.ok(script.bytes < MAX_APP_SCRIPT_BYTES, `${script.name} is ${script.bytes} bytes: the inline entry was bundled`);
  }
  return wasm[0].name;
}

/** Open `url` (a page whose script sets window.planvault), run the common check. */
async function checkApp(url, wasmPath) {
  const { page, problems, responses } = await newWatchedPage(browser);
  await page.goto(url);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 30_000 });
  await assertPageAgreesWithNode(page, vaultCases());
  const wasmFetched = responses.filter((r) => r.url.endsWith(".wasm"));
  assert.deepEqual(wasmFetched, [{ url: wasmPath, status: 200 }], "the page fetched the bundled wasm, once");
  assert.deepEqual(problems, []);
  await page.close();
}

/** `checkApp` on a built app's folder, served for the check. */
async function checkServedApp(outDir, wasmPath, page = "") {
  const server = await serveStatic(outDir);
  try {
    await checkApp(server.url + page, wasmPath);
  } finally {
    server.close();
  }
}

test("a Vite production build ships the wasm and validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const outDir = join(workDir, "dist-vite");
  await viteBuild({ root: appDir, logLevel: "silent", build: { outDir, emptyOutDir: true } });
  const wasm = checkBuiltAssets(outDir);
  assert.match(wasm, /^assets\/planvault_wasm_bg-[\w-]+\.wasm$/);
  await checkServedApp(outDir, `/${wasm}`);
});

test("a Vite production build of planvault/markdown ships that build's smaller wasm and validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const outDir = join(workDir, "dist-vite-markdown");
  const input = join(appDir, "markdown.html");
  await viteBuild({ root: appDir, logLevel: "silent", build: { outDir, emptyOutDir: true, rollupOptions: { input } } });
  const wasm = checkBuiltAssets(outDir, join("pkg", "markdown"));
  assert.match(wasm, /^assets\/planvault_wasm_bg-[\w-]+\.wasm$/);
  await checkServedApp(outDir, `/${wasm}`, "markdown.html");
});

test("the Vite dev server serves the package and validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const server = await viteServer({ root: appDir, logLevel: "silent", server: { host: "127.0.0.1", port: 0, strictPort: false } });
  await server.listen();
  try {
    const url = server.resolvedUrls.local[0];
    // Vite pre-bundles the package's JavaScript and points its wasm URL back
    // at the installed package's file.
    await checkApp(url, "/node_modules/planvault/pkg/planvault_wasm_bg.wasm");
  } finally {
    await server.close();
  }
});

test("a webpack 5 build ships the wasm and validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const outDir = join(workDir, "dist-webpack");
  const compiler = webpack({
    mode: "production",
    context: appDir,
    entry: "./main.js",
    output: { path: outDir, filename: "main.js", clean: true },
    performance: { hints: false },
  });
  const stats = await new Promise((resolve, reject) => {
    compiler.run((error, result) => (error ? reject(error) : compiler.close(() => resolve(result))));
  });
  assert.ok(!stats.hasErrors() && !stats.hasWarnings(), stats.toString({ all: false, errors: true, warnings: true }));
  writeFileSync(join(outDir, "index.html"), INDEX_HTML);
  const wasm = checkBuiltAssets(outDir);
  assert.match(wasm, /^[0-9a-f]+\.wasm$/);
  await checkServedApp(outDir, `/${wasm}`);
});

/** `parcel build PAGE` in the app, as a Parcel user runs it (its CLI, its default configuration). */
function parcelBuild(page, outDir) {
  // No cache, so nothing is left beside the app.
  execFileSync(process.execPath, [parcelCli, "build", page, "--dist-dir", outDir, "--no-cache", "--no-source-maps", "--log-level", "error"], {
    cwd: appDir,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

test("a Parcel 2 build, with its default configuration, ships the wasm and validates like Node", { skip: missing, timeout: 180_000 }, async () => {
  const outDir = join(workDir, "dist-parcel");
  parcelBuild("index.html", outDir);
  const wasm = checkBuiltAssets(outDir);
  assert.match(wasm, /^planvault_wasm_bg\.[0-9a-f]+\.wasm$/);
  await checkServedApp(outDir, `/${wasm}`);
});

test("a Parcel 2 build of planvault/inline, without `exports` support, needs no asset and validates like Node", { skip: missing, timeout: 180_000 }, async () => {
  // Parcel's default resolver reads no `exports`: the subpath resolves
  // through the package's `inline/package.json`.
  const outDir = join(workDir, "dist-parcel-inline");
  parcelBuild("inline.html", outDir);
  assert.deepEqual(filesIn(outDir).filter((f) => f.name.endsWith(".wasm")), [], "the wasm is inside the script");
  await checkServedInlineApp(outDir, "/inline.html");
});

/** Rollup with only the resolver every npm import needs, browser conditions. */
async function rollupApp(entry, outDir) {
  const warnings = [];
  const bundle = await rollup({
    input: join(appDir, entry),
    plugins: [nodeResolve({ browser: true, rootDir: appDir })],
    onwarn: (warning) => warnings.push(warning.message),
  });
  await bundle.write({ dir: outDir, format: "es", entryFileNames: "main.js" });
  await bundle.close();
  assert.deepEqual(warnings, []);
  writeFileSync(join(outDir, "index.html"), INDEX_HTML);
}

test("a Rollup build of the browser entry, the wasm copied beside it, validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const outDir = join(workDir, "dist-rollup");
  await rollupApp("main.js", outDir);
  assert.deepEqual(filesIn(outDir).filter((f) => f.name.endsWith(".wasm")), [], "Rollup ships no asset by itself");
  copyFileSync(join(appDir, "node_modules", "planvault", "pkg", "planvault_wasm_bg.wasm"), join(outDir, "planvault_wasm_bg.wasm"));
  const wasm = checkBuiltAssets(outDir);
  assert.equal(wasm, "planvault_wasm_bg.wasm");
  await checkServedApp(outDir, `/${wasm}`);
});

/** A built app of the inline entry (page `path` of `outDir`): no wasm fetched, the common check. */
async function checkServedInlineApp(outDir, path = "/") {
  const server = await serveStatic(outDir);
  try {
    const { page, problems, responses } = await newWatchedPage(browser);
    await page.goto(new URL(path, server.url).href);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 30_000 });
    await assertPageAgreesWithNode(page, vaultCases());
    assert.deepEqual(responses.filter((r) => r.url.endsWith(".wasm")), [], "the inline entry fetches no wasm");
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    server.close();
  }
}

test("a Rollup build of planvault/inline needs no asset and validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const outDir = join(workDir, "dist-rollup-inline");
  await rollupApp("inline-main.js", outDir);
  assert.deepEqual(filesIn(outDir).map((f) => f.name).sort(), ["index.html", "main.js"]);
  await checkServedInlineApp(outDir);
});

test("an esbuild bundle of the browser entry, the wasm copied beside it, validates like Node", { skip: missing, timeout: 120_000 }, async () => {
  const outDir = join(workDir, "dist-esbuild");
  const result = await esbuild.build({
    absWorkingDir: appDir,
    entryPoints: ["main.js"],
    bundle: true,
    format: "esm",
    platform: "browser",
    outfile: join(outDir, "main.js"),
    logLevel: "silent",
  });
  assert.deepEqual([...result.errors, ...result.warnings], []);
  writeFileSync(join(outDir, "index.html"), INDEX_HTML);
  assert.deepEqual(filesIn(outDir).filter((f) => f.name.endsWith(".wasm")), [], "esbuild ships no asset by itself");
  copyFileSync(join(appDir, "node_modules", "planvault", "pkg", "planvault_wasm_bg.wasm"), join(outDir, "planvault_wasm_bg.wasm"));
  const wasm = checkBuiltAssets(outDir);
  await checkServedApp(outDir, `/${wasm}`);
});
