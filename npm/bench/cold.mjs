// The first call in a fresh process, as a plugin makes it when a vault opens:
// each round starts one Node process per contender (alternating), which reads
// the generated 10,000-note vault from disk, imports its validator, then
// times the first and the second parseVault + validate (or the plain-JS
// way). The steady-state figures are bench.mjs's.
// Run: npm run bench:cold   (ROUNDS=7 by default)
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { generate } from "./generate.mjs";

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const here = fileURLToPath(import.meta.url);

async function child(which, vaultDir) {
  const files = {};
  for (const stage of readdirSync(vaultDir)) {
    for (const name of readdirSync(join(vaultDir, stage))) {
      files[`${stage}/${name}`] = readFileSync(join(vaultDir, stage, name), "utf8");
    }
  }
  const started = performance.now();
  let run;
  if (which === "planvault") {
    const planvault = await import("planvault");
    run = () => {
      const plan = planvault.parseVault(files);
      const problems = planvault.validate(plan).diagnostics.length;
      plan.free();
      return problems;
    };
  } else {
    const { validatePlainJs } = await import("./plain-js.mjs");
    run = () => validatePlainJs(files).length;
  }
  const imported = performance.now();
  if (run() !== 0) throw new Error(`${which} finds problems in a sound vault`);
  const first = performance.now();
  run();
  const second = performance.now();
  console.log(JSON.stringify({ importMs: imported - started, firstMs: first - imported, secondMs: second - first }));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const vaultDir = mkdtempSync(join(tmpdir(), "planvault-cold-"));
  try {
    for (const [path, text] of Object.entries(generate(10_000))) {
      mkdirSync(join(vaultDir, dirname(path)), { recursive: true });
      writeFileSync(join(vaultDir, path), text);
    }
    const runs = { planvault: [], plainJs: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of Object.keys(runs)) {
        const out = execFileSync(process.execPath, ["--stack-size=65500", here, which, vaultDir], { encoding: "utf8" });
        runs[which].push(JSON.parse(out));
      }
    }
    const line = (name, key) => `${median(runs[name].map((r) => r[key])).toFixed(1)} ms`;
    console.log(`vault: 10000 notes read from disk; node ${process.version}; ${ROUNDS} fresh processes each, alternating; medians`);
    for (const name of Object.keys(runs)) {
      console.log(`${name.padEnd(10)} import ${line(name, "importMs")}, first call ${line(name, "firstMs")}, second call ${line(name, "secondMs")}`);
    }
    const ratio = (key) => (median(runs.plainJs.map((r) => r[key])) / median(runs.planvault.map((r) => r[key]))).toFixed(2);
    console.log(`ratio plain JS / planvault: first call ${ratio("firstMs")}x, second call ${ratio("secondMs")}x`);
  } finally {
    rmSync(vaultDir, { recursive: true, force: true });
  }
}

if (process.argv[2]) await child(process.argv[2], process.argv[3]);
else await main();
