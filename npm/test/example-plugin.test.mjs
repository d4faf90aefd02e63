// The example Obsidian plugin type-checks against the package's .d.ts and
// bundles with esbuild: a change that breaks the package's API breaks this.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { repoDir } from "./helpers.mjs";

const example = join(repoDir, "examples", "obsidian-plugin");

function npm(...args) {
  return execFileSync("npm", args, { cwd: example, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("the example Obsidian plugin builds against the package", { timeout: 300_000 }, () => {
  const lock = join(example, "package-lock.json");
  const installed = join(example, "node_modules", ".package-lock.json");
  if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
    npm("ci", "--no-audit", "--no-fund");
  }
  let output;
  try {
    output = npm("run", "build");
  } catch (error) {
    assert.fail(`the example plugin does not build:\n${error.stdout}\n${error.stderr}`);
  }
  assert.match(output, /main\.js: \d+ bytes/);
  const bundle = readFileSync(join(example, "main.js"), "utf8");
  // The wasm travels inside main.js (base64 of "\0asm"), nothing is fetched.
  assert.ok(bundle.includes('"AGFzbQ'), "the wasm is inlined");
  assert.ok(!bundle.includes("import.meta"), "no import.meta in a CommonJS bundle");
});
