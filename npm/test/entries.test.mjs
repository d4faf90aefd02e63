// The package's entries, each in a fresh process (one process keeps one wasm
// instance, so a second entry there would reuse the first's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { repoDir } from "./helpers.mjs";

const npmDir = fileURLToPath(new URL("..", import.meta.url));
const vaultDir = join(repoDir, "core", "tests", "fixtures", "vault", "dangling-edge");

function runEntry(specifier) {
  // Synchronous use right after a static import: no init call, no await.
  const script = `
    import { parseVault, validate } from ${JSON.stringify(specifier)};
    import { readVault } from "./test/helpers.mjs";
    const report = validate(parseVault(readVault(${JSON.stringify(vaultDir)})));
    process.stdout.write(JSON.stringify(report));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: npmDir, encoding: "utf8" });
  return JSON.parse(out);
}

test("planvault/inline initialises synchronously and answers like the Node entry", () => {
  const inline = runEntry("planvault/inline");
  const node = runEntry("planvault");
  assert.ok(inline.diagnostics.some((d) => d.code === "dangling-edge"), JSON.stringify(inline));
  assert.deepEqual(inline, node);
});

test("the package exports only the documented API", async () => {
  const api = await import("planvault");
  assert.deepEqual(Object.keys(api).filter((name) => !name.startsWith("__")).sort(), [
    "Plan",
    "Vault",
    "parseGeneratedPlan",
    "parsePlanMd",
    "parseVault",
    "toGraphJson",
    "toJsonCanvas",
    "toMermaid",
    "updateStatus",
    "validate",
  ]);
});
