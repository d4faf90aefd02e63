#!/usr/bin/env node
// Serves the browser app on 127.0.0.1 and rebuilds it when its sources
// change: what `scripts/start` runs.
//   node scripts/serve-web.mjs --port PORT [--root DIR] [--out DIR] [--features LIST]
// Listens first (a request during the first build gets a page saying so,
// which reloads itself), builds with scripts/build-web.mjs (the same --root,
// --out and --features), then serves the build from tests/e2e/support's
// serveDist. Watched: every workspace crate the app or its worker builds on
// (app-crates.mjs, from cargo metadata: a new dependency is watched without
// a list to keep), static/, .cargo/, Cargo.toml and Cargo.lock. A change
// rebuilds (changes during a build queue one more); a failed rebuild leaves
// the last good build served and says so. Nothing is pushed to the page:
// reload it.
// Exit status: 1 the first build failed, 2 the port is taken.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, watch } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { appCrateDirs } from "./app-crates.mjs";
import { serveDist } from "../tests/e2e/support/server.mjs";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUILD = join(REPO_ROOT, "scripts", "build-web.mjs");

const { values: options } = parseArgs({
  options: {
    port: { type: "string" },
    root: { type: "string" },
    out: { type: "string" },
    features: { type: "string", multiple: true, default: [] },
  },
});
if (options.port === undefined || !/^\d+$/.test(options.port)) {
  console.error("usage: node scripts/serve-web.mjs --port PORT [--root DIR] [--out DIR] [--features LIST]");
  process.exit(64);
}
const root = resolve(options.root ?? REPO_ROOT);
const out = resolve(options.out ?? join(root, "dist"));
const buildArgs = [BUILD, "--root", root, "--out", out, ...options.features.flatMap((f) => ["--features", f])];
const say = (message) => console.log(`serve-web: ${message}`);

let firstBuildDone = false;
let server;
try {
  server = await serveDist(out, { port: Number(options.port), building: () => !firstBuildDone });
} catch (error) {
  if (error.code === "EADDRINUSE") {
    console.error(`error: port ${options.port} on 127.0.0.1 is already in use`);
    process.exit(2);
  }
  throw error;
}
say(`listening on ${server.url} (the page says "building" until the first build is done)`);

let child = null;
function stop(signal) {
  if (child) {
    try {
      process.kill(-child.pid, "SIGTERM"); // cargo and rustc too: the build is its own process group
    } catch {}
  }
  server.close();
  process.exit(signal === "SIGINT" ? 130 : 143);
}
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

/** Runs build-web.mjs once; resolves to whether it succeeded. */
function build() {
  return new Promise((done) => {
    child = spawn(process.execPath, buildArgs, { stdio: "inherit", detached: true });
    child.on("exit", (code) => {
      child = null;
      done(code === 0);
    });
  });
}

// --- Watch and rebuild -------------------------------------------------------
const metadataArgs = ["metadata", "--format-version", "1", "--no-deps", "--manifest-path", join(root, "Cargo.toml")];
const metadata = JSON.parse(execFileSync("cargo", metadataArgs, { maxBuffer: 64 << 20 }));
const folders = [...appCrateDirs(metadata), "static", ".cargo"].filter((dir) => existsSync(join(root, dir)));
const rootFiles = new Set(["Cargo.toml", "Cargo.lock"]);
// Editors' swap and backup files, and build output, are not sources.
const skippedFolders = ["target", "node_modules", "dist"];
const ignored = (path) =>
  path.split("/").some((part) => (part.startsWith(".") && part !== ".cargo") || skippedFolders.includes(part)) ||
  /(~|\.swp|\.swx|\.tmp|^4913)$/.test(path.split("/").pop());

let building = true; // until the first build is done
let pending = null;
let timer = null;
function changed(path) {
  if (ignored(path)) return;
  pending ??= path;
  clearTimeout(timer);
  timer = setTimeout(rebuild, 300);
}
async function rebuild() {
  if (building || pending === null) return;
  building = true;
  const cause = pending;
  pending = null;
  say(`${cause} changed: rebuilding`);
  const since = Date.now();
  const ok = await build();
  const took = Math.round((Date.now() - since) / 1000);
  if (ok) say(`rebuilt in ${took} s: reload the page`);
  else {
    say(`the rebuild failed after ${took} s (the error is above): still serving the last good build; save a fix to rebuild`);
  }
  building = false;
  if (pending !== null) rebuild();
}
for (const dir of folders) {
  watch(join(root, dir), { recursive: true }, (_, name) => name && changed(`${dir}/${name}`));
}
watch(root, (_, name) => name && rootFiles.has(name) && changed(name));

const first = Date.now();
if (!(await build())) {
  console.error("serve-web: the first build failed (the error is above)");
  server.close();
  process.exit(1);
}
firstBuildDone = true;
building = false;
const took = Math.round((Date.now() - first) / 1000);
say(`built in ${took} s; serving ${relative(process.cwd(), out) || "."} at ${server.url}`);

say(`watching ${[...folders, ...rootFiles].join(", ")}: a change rebuilds`);
if (pending !== null) rebuild();
