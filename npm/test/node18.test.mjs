// The package says `"engines": { "node": ">=18" }`; this holds it to that.
// The package's own tests run again under Node 18, the oldest it supports,
// fetched from the npm registry (the `node-<platform>-<arch>` packages carry
// the official binaries) into node_modules/.cache once.
//
// Left out of the Node 18 run: this file, the tests in Chromium (Playwright
// and Vite themselves need Node 20) and the example plugin's build (Obsidian
// runs its own, newer Node). Without the binary (no registry, a platform without one) the
// test is skipped with the reason, unless PLANVAULT_REQUIRE_NODE18=1 makes
// that a failure.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const NODE_18 = "18.20.8";
const npmDir = fileURLToPath(new URL("..", import.meta.url));
const testDir = join(npmDir, "test");
const cacheDir = join(npmDir, "node_modules", ".cache", `node-${NODE_18}`);
const NOT_UNDER_18 = new Set(["node18.test.mjs", "browser.test.mjs", "bundlers.test.mjs", "example-plugin.test.mjs"]);

/** The Node 18 binary's path, fetched on first use; or why there is none. */
function node18() {
  const platform = { linux: "linux", darwin: "darwin" }[process.platform];
  if (!platform) return { missing: `no Node ${NODE_18} package for ${process.platform}` };
  const name = `node-${platform}-${process.arch}`;
  const binary = join(cacheDir, "node_modules", name, "bin", "node");
  if (!existsSync(binary)) {
    mkdirSync(cacheDir, { recursive: true });
    try {
      execFileSync(
        "npm",
        ["install", "--prefix", cacheDir, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `${name}@${NODE_18}`],
        { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" },
      );
    } catch (error) {
      return { missing: `could not fetch ${name}@${NODE_18}: ${(error.stderr || error.message).trim().split("\n")[0]}` };
    }
  }
  return existsSync(binary) ? { binary } : { missing: `${name}@${NODE_18} has no bin/node` };
}

const found = node18();
if (found.missing && process.env.PLANVAULT_REQUIRE_NODE18 === "1") throw new Error(found.missing);

test(`the package passes its tests on Node ${NODE_18}`, { skip: found.missing, timeout: 300_000 }, () => {
  const version = execFileSync(found.binary, ["--version"], { encoding: "utf8" }).trim();
  assert.equal(version, `v${NODE_18}`);
  const files = readdirSync(testDir)
    .filter((name) => name.endsWith(".test.mjs") && !NOT_UNDER_18.has(name))
    .sort()
    .map((name) => join("test", name));
  assert.ok(files.includes(join("test", "fixtures.test.mjs")), files.join(", "));
  // Without the parent runner's NODE_TEST_CONTEXT, which would make the child
  // answer in the runner's own protocol instead of TAP.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const run = spawnSync(found.binary, ["--test", "--test-reporter=tap", ...files], {
    cwd: npmDir,
    env,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  const passed = Number(/^# pass (\d+)$/m.exec(run.stdout)?.[1] ?? 0);
  const failed = Number(/^# fail (\d+)$/m.exec(run.stdout)?.[1] ?? -1);
  assert.equal(run.status, 0, `Node ${NODE_18} failed the package's tests:\n${run.stdout.slice(-6000)}\n${run.stderr}`);
  assert.equal(failed, 0);
  // The fixture cases alone are dozens of tests: a run that found none did not run.
  assert.ok(passed >= 50, `only ${passed} tests passed under Node ${NODE_18}`);
});
