#!/usr/bin/env node
// Builds the browser app into dist/: the app (`planvault-web`, web/), its run
// worker (`planvault-worker`, worker/), the page, its icon and stylesheet.
//   node scripts/build-web.mjs [--features LIST] [--out DIR]
//   --features LIST  cargo features for both crates (the app users run and
//                    the end-to-end tests drive is built without any)
//   --out DIR        where the app goes (default: dist/ at the root)
//   --root DIR       the workspace to build (default: this repository; the
//                    tests build a small stand-in workspace with it)
// Exits non-zero, with the compiler's or tool's error above, when any step
// fails; dist/ is then left as it was (the last good build keeps serving).
//
// Per binary, what Trunk did for web/index.html until it was dropped (a
// first set-up compiled Trunk for 28 of its 40 minutes):
//  1. cargo build --target wasm32-unknown-unknown --profile wasm-release
//     through `scripts/wasm-env --bundle`: rustup's wasm32 target or Debian's
//     browser Rust (Path B), and std built from its sources with
//     `optimize_for_size` where they are installed (scripts/lib.sh says why;
//     ~30 / 20 KB gzipped off the app / worker). The profile is in Cargo.toml
//     (opt-level z, fat LTO, one codegen unit). The app is built with its
//     feature `split`, which links it with --emit-relocs (web/build.rs).
//  1b. The app only: tools/wasm-split (the splitter cargo-leptos runs for
//     Leptos's `#[lazy]`) cuts it into the main module and the parts
//     web/src/on_demand.rs names, fetched after the first paint (the sizes:
//     bench/runs/wasm-size.md).
//  2. wasm-bindgen --target web, the CLI at exactly Cargo.lock's wasm-bindgen
//     version (another version refuses the module or emits mismatched glue;
//     scripts/setup installs it); for a split app with --keep-lld-exports,
//     the main module's exports the parts link to.
//  3. wasm-opt -Oz --low-memory-unused, from the `binaryen` npm package (root
//     package.json), through its JS API in this process (the same passes and
//     StackIR optimisation, byte for byte what its `wasm-opt` CLI writes, but
//     without the CLI's ~1.5 s start-up per module: the split app's 46 modules
//     took 95 s that way, 30 s now): Debian's binaryen is too old for what rustc emits. -Oz
//     (Trunk's `data-wasm-opt="z"`) takes ~10% off each binary; the budgets in
//     scripts/wasm-size assume it. --low-memory-unused lets it fold a constant
//     added to a pointer into the access's offset (the two differ only for a
//     pointer that wraps below 0, which no Rust code makes): 2.8 KB gzipped
//     off the app. (--converge and --zero-filled-memory saved nothing.)
// (wasm-opt runs on each part too.) Steps 1b-3 are skipped when cargo's wasm is one they already processed
// (kept under cargo's target dir by its SHA-256), so an edit that rebuilds
// only the app does not re-optimise the worker.
//
// The files: the app's folder (its glue, wasm, parts, their loader
// `split.js` and its snippets), the icon and the stylesheet carry a content
// hash in their names (a browser never mixes two builds' files);
// index.html (from web/index.html, at its `<!-- planvault:assets -->` line)
// and the worker's loader `planvault-worker_loader.js` do not: the app starts
// the worker by that fixed URL (web/src/run_client.rs) as a module worker, and
// the loader imports the worker's hashed glue and wasm. dist/ is replaced
// file by file, the page last, and what the new build does not name is
// removed.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const WASM_ENV = join(REPO_ROOT, "scripts", "wasm-env");
const BINARYEN = join(REPO_ROOT, "node_modules", "binaryen", "index.js");
const MARKER = "<!-- planvault:assets -->";
/** What the app asks for (web/src/run_client.rs `WORKER_URL`). */
export const WORKER_LOADER = "planvault-worker_loader.js";

const { values: options } = parseArgs({
  options: {
    features: { type: "string", multiple: true, default: [] },
    out: { type: "string" },
    root: { type: "string" },
  },
});
const root = resolve(options.root ?? REPO_ROOT);
const out = resolve(options.out ?? join(root, "dist"));
const features = options.features.flatMap((list) => list.split(/[ ,]+/)).filter(Boolean);
process.env.PATH = [join(process.env.HOME ?? "", ".cargo", "bin"), process.env.PATH].join(":");

const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const say = (message) => console.error(`build-web: ${message}`);
class BuildError extends Error {}

/** Runs a tool (`what` names it in a failure); its stderr goes straight to ours. */
function run(what, command, args, options = {}) {
  try {
    return execFileSync(command, args, { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 256 << 20, ...options });
  } catch (error) {
    const how = error.code === "ENOENT" ? `${command} was not found` : `exit status ${error.status ?? error.signal}`;
    throw new BuildError(`${what} failed (${how})`);
  }
}

const sha256 = (...parts) => parts.reduce((hash, part) => hash.update(part), createHash("sha256")).digest("hex");
/** `name-<16 hex digits of the content's SHA-256>`. */
const hashedBase = (name, ...parts) => `${name}-${sha256(...parts).slice(0, 16)}`;

function checkTools() {
  const lock = readFileSync(join(root, "Cargo.lock"), "utf8");
  const pinned = /\[\[package\]\]\nname = "wasm-bindgen"\nversion = "([^"]+)"/.exec(lock)?.[1];
  if (!pinned) throw new BuildError("no wasm-bindgen in Cargo.lock");
  let found = "none";
  try {
    found = execFileSync("wasm-bindgen", ["--version"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
  } catch {}
  if (found !== `wasm-bindgen ${pinned}`) {
    throw new BuildError(`wasm-bindgen ${pinned} (Cargo.lock's) is needed, found ${found}: run scripts/setup`);
  }
  if (!existsSync(BINARYEN)) {
    throw new BuildError(`no ${relative(REPO_ROOT, BINARYEN)} (the binaryen npm package): run scripts/setup`);
  }
  return pinned;
}

/**
 * Whether `pkg` has the feature `split` (this repository's app has; the
 * tests' stand-in workspace has not): then it is built with it and cut at
 * its on-demand parts.
 */
function splits(pkg) {
  const args = ["metadata", "--no-deps", "--format-version=1", "--manifest-path", join(root, "Cargo.toml")];
  const metadata = JSON.parse(run("cargo metadata", "cargo", args, { cwd: root }).toString());
  return Boolean(metadata.packages.find((p) => p.name === pkg)?.features?.split);
}

/** cargo build of one binary; returns the path of its .wasm. */
function cargoBuild(pkg, bin, extraFeatures = []) {
  const since = Date.now();
  const all = [...features, ...extraFeatures];
  say(`cargo build ${pkg} (wasm32, wasm-release${all.length ? `, features ${all.join(",")}` : ""})`);
  const args = [
    WASM_ENV, "--bundle", "cargo", "build", "--manifest-path", join(root, "Cargo.toml"),
    "-p", pkg, "--bin", bin, "--target", "wasm32-unknown-unknown", "--profile", "wasm-release",
    "--message-format=json-render-diagnostics",
  ];
  if (all.length) args.push("--features", all.join(","));
  const messages = run(`cargo build -p ${pkg}`, "bash", args, { cwd: root }).toString();
  const wasm = messages
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .filter((m) => m.reason === "compiler-artifact" && m.target?.name === bin && m.target.kind.includes("bin"))
    .flatMap((m) => m.filenames)
    .find((file) => file.endsWith(".wasm"));
  if (!wasm) throw new BuildError(`cargo reported no ${bin}.wasm`);
  say(`cargo build ${pkg}: ${seconds(since)}`);
  return wasm;
}

/** binaryen's JS API, loaded once, when a binary is to be optimised. */
let binaryen = null;

/**
 * `wasm-opt -Oz --low-memory-unused` of one module, in this process. The
 * options are global in binaryen: set for each module. Binaryen's warnings
 * about the name subsection the splitter leaves in the parts (it drops the
 * names anyway) are not shown.
 */
function optimise(what, input, output) {
  binaryen.setOptimizeLevel(2);
  binaryen.setShrinkLevel(2);
  binaryen.setLowMemoryUnused(true);
  binaryen.setGenerateStackIR(true);
  binaryen.setOptimizeStackIR(true);
  binaryen.setDebugInfo(false);
  let module = null;
  const stderrWrite = process.stderr.write;
  process.stderr.write = function (chunk, ...rest) {
    const lines = String(chunk).split("\n").filter(Boolean);
    if (lines.length && lines.every((line) => /^warning: unknown name subsection/.test(line))) return true;
    return stderrWrite.call(this, chunk, ...rest);
  };
  try {
    module = binaryen.readBinary(readFileSync(input));
    // As the CLI does: a module it cannot validate is not optimised.
    if (!module.validate()) throw new Error("the module does not validate (binaryen's errors are above)");
    module.optimize();
    writeFileSync(output, module.emitBinary());
  } catch (error) {
    if (error instanceof BuildError) throw error;
    throw new BuildError(`wasm-opt ${what} failed (${error?.message ?? error})`);
  } finally {
    process.stderr.write = stderrWrite;
    module?.dispose();
  }
}

/**
 * wasm-bindgen and wasm-opt on cargo's wasm, or what they made of the same
 * bytes before: { js, wasm, snippets: [[relative path, bytes]], parts: [[file
 * name, bytes]] }. With `split`, cargo's wasm (linked with --emit-relocs) is
 * first cut at its on-demand parts by tools/wasm-split; the parts and their
 * loader `split.js` go beside the glue, wasm-opt'd like the main module.
 */
async function bindAndOptimise(bin, cargoWasm, bindgenVersion, split = false) {
  const input = readFileSync(cargoWasm);
  const key = sha256(input, bindgenVersion, readFileSync(fileURLToPath(import.meta.url))).slice(0, 24);
  const cacheRoot = join(dirname(cargoWasm), "web-build");
  const cache = join(cacheRoot, `${bin}-${key}`);
  const done = join(cache, "done");
  if (existsSync(done)) {
    say(`${bin}: wasm unchanged, wasm-bindgen and wasm-opt skipped`);
    utimesSync(done, new Date(), new Date());
  } else {
    rmSync(cache, { recursive: true, force: true });
    binaryen ??= (await import(pathToFileURL(BINARYEN).href)).default;
    let since = Date.now();
    let main = cargoWasm;
    const bindgenArgs = ["--target", "web", "--no-typescript", "--out-dir", join(cache, "bindgen"), "--out-name", bin];
    if (split) {
      const splitDir = join(cache, "split");
      const tool = ["run", "--quiet", "--manifest-path", join(REPO_ROOT, "Cargo.toml"), "-p", "planvault-wasm-split", "--"];
      run(`wasm-split ${bin}`, "cargo", [...tool, cargoWasm, splitDir, bin], { cwd: REPO_ROOT });
      main = join(splitDir, `${bin}.wasm`);
      // The parts reach the main module's functions through its exports.
      bindgenArgs.push("--keep-lld-exports");
      say(`wasm-split ${bin}: ${seconds(since)}`);
      since = Date.now();
    }
    run(`wasm-bindgen ${bin}`, "wasm-bindgen", [...bindgenArgs, main]);
    say(`wasm-bindgen ${bin}: ${seconds(since)}`);
    since = Date.now();
    optimise(bin, join(cache, "bindgen", `${bin}_bg.wasm`), join(cache, "opt.wasm"));
    if (split) {
      mkdirSync(join(cache, "parts"));
      for (const name of readdirSync(join(cache, "split"))) {
        if (name === `${bin}.wasm`) continue;
        const from = join(cache, "split", name);
        if (name.endsWith(".wasm")) optimise(`${bin} ${name}`, from, join(cache, "parts", name));
        else writeFileSync(join(cache, "parts", name), readFileSync(from));
      }
    }
    say(`wasm-opt -Oz ${bin}: ${seconds(since)}`);
    writeFileSync(done, "");
    prune(cacheRoot, bin);
  }
  const snippetsDir = join(cache, "bindgen", "snippets");
  const partsDir = join(cache, "parts");
  return {
    js: readFileSync(join(cache, "bindgen", `${bin}.js`)),
    wasm: readFileSync(join(cache, "opt.wasm")),
    snippets: existsSync(snippetsDir)
      ? listFiles(snippetsDir).map((file) => [join("snippets", relative(snippetsDir, file)), readFileSync(file)])
      : [],
    parts: existsSync(partsDir) ? readdirSync(partsDir).sort().map((name) => [name, readFileSync(join(partsDir, name))]) : [],
  };
}

/** Keeps the four most recently used processed builds of a binary. */
function prune(cacheRoot, bin) {
  const entries = readdirSync(cacheRoot)
    .filter((name) => name.startsWith(`${bin}-`))
    .map((name) => join(cacheRoot, name))
    .map((dir) => ({ dir, used: existsSync(join(dir, "done")) ? statSync(join(dir, "done")).mtimeMs : 0 }))
    .sort((a, b) => b.used - a.used);
  for (const { dir } of entries.slice(4)) rmSync(dir, { recursive: true, force: true });
}

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}

/** The built app: relative path → bytes, index.html and the loader included. */
function assemble(app, worker) {
  const files = new Map();
  // The app is a folder: its glue imports its snippets and the parts' loader
  // by relative paths, and the loader fetches the parts beside itself, so
  // one hashed folder name keeps a build's files together.
  const appFiles = [
    ["planvault-web.js", app.js], ["planvault-web_bg.wasm", app.wasm], ...app.parts, ...app.snippets,
  ];
  const appDir = hashedBase("planvault-web", ...appFiles.flat());
  for (const [path, bytes] of appFiles) files.set(`${appDir}/${path}`, bytes);
  const workerBase = hashedBase("planvault-worker", worker.js, worker.wasm);
  files.set(`${workerBase}.js`, worker.js);
  files.set(`${workerBase}_bg.wasm`, worker.wasm);
  for (const [path, bytes] of worker.snippets) files.set(path, bytes);
  files.set(
    WORKER_LOADER,
    Buffer.from(
      `import init from './${workerBase}.js';\n` +
        `await init({ module_or_path: new URL('./${workerBase}_bg.wasm', import.meta.url) });\n`,
    ),
  );

  const icon = readFileSync(join(root, "static", "favicon.svg"));
  const css = readFileSync(join(root, "static", "app.css"));
  const iconName = `${hashedBase("favicon", icon)}.svg`;
  const cssName = `${hashedBase("app", css)}.css`;
  files.set(iconName, icon);
  files.set(cssName, css);

  const page = readFileSync(join(root, "web", "index.html"), "utf8");
  const at = page.indexOf(MARKER);
  if (at < 0 || page.indexOf(MARKER, at + 1) >= 0) {
    throw new BuildError(`web/index.html must hold the line ${MARKER} once: the assets go there`);
  }
  const indent = page.slice(page.lastIndexOf("\n", at) + 1, at);
  const assets = [
    `<link rel="icon" href="./${iconName}" />`,
    `<link rel="stylesheet" href="./${cssName}" />`,
    `<link rel="modulepreload" href="./${appDir}/planvault-web.js" />`,
    `<link rel="preload" href="./${appDir}/planvault-web_bg.wasm" as="fetch" type="application/wasm" crossorigin />`,
    `<script type="module">`,
    `  import init from './${appDir}/planvault-web.js';`,
    `  await init({ module_or_path: './${appDir}/planvault-web_bg.wasm' });`,
    `</script>`,
  ].join(`\n${indent}`);
  files.set("index.html", Buffer.from(page.slice(0, at) + assets + page.slice(at + MARKER.length)));
  return files;
}

/**
 * Writes the build into `out` without a moment where the served page names a
 * missing file: every file through a rename, the loader and the page last,
 * then whatever the build does not name goes.
 */
function install(files) {
  const write = (path, bytes) => {
    const target = join(out, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(`${target}.partial`, bytes);
    renameSync(`${target}.partial`, target);
  };
  const last = [WORKER_LOADER, "index.html"];
  for (const [path, bytes] of files) if (!last.includes(path)) write(path, bytes);
  for (const path of last) write(path, files.get(path));
  const keep = new Set([...files.keys()].map((path) => join(out, path)));
  for (const file of listFiles(out)) if (!keep.has(file)) rmSync(file);
  removeEmptyDirs(out);
}

function removeEmptyDirs(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    removeEmptyDirs(path);
    if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
  }
}

try {
  const bindgenVersion = checkTools();
  const built = {};
  for (const [pkg, bin] of [["planvault-web", "planvault-web"], ["planvault-worker", "planvault-worker"]]) {
    const split = splits(pkg);
    built[bin] = await bindAndOptimise(bin, cargoBuild(pkg, bin, split ? ["split"] : []), bindgenVersion, split);
  }
  const files = assemble(built["planvault-web"], built["planvault-worker"]);
  install(files);
  // gzip -9, as scripts/wasm-size measures the budgets (zlib's level 9 differs by ~1%).
  const gzipped = (path) => execFileSync("gzip", ["-9", "-c", join(out, path)], { maxBuffer: 64 << 20 }).length;
  const wasmFiles = [...files.keys()].filter((path) => path.endsWith(".wasm"));
  const sizes = wasmFiles
    .filter((path) => path.endsWith("_bg.wasm"))
    .map((path) => `${path} ${Math.round(gzipped(path) / 1024)} KB gzipped`);
  const parts = wasmFiles.filter((path) => !path.endsWith("_bg.wasm"));
  if (parts.length) {
    const total = parts.reduce((sum, path) => sum + gzipped(path), 0);
    sizes.push(`${parts.length} on-demand parts ${Math.round(total / 1024)} KB gzipped`);
  }
  say(`built ${relative(process.cwd(), out) || "."}${sep} in ${seconds(started)}: ${sizes.join(", ")}`);
} catch (error) {
  if (!(error instanceof BuildError)) throw error;
  console.error(`build-web: the web app did not build: ${error.message} (the error is above)`);
  process.exitCode = 1;
}
