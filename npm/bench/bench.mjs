// parseVault + validate on the generated 10,000-note vault, side by side with
// the plain-JavaScript way, and the incremental Vault's update of one note.
// Run: npm run bench  (node --stack-size=65500: graphology's SCC recurses).
import { performance } from "node:perf_hooks";
import * as planvault from "planvault";
import { generate } from "./generate.mjs";
import { validatePlainJs } from "./plain-js.mjs";

const NOTES = 10_000;
const ROUNDS = Number(process.env.ROUNDS ?? 15);

function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1] };
}

/**
 * Time several contenders round-robin, so a burst of load on a shared machine
 * hits them alike: { name: run } → { name: { median, min, max } } in ms.
 */
function race(rounds, contenders) {
  const entries = Object.entries(contenders);
  for (let i = 0; i < 2; i++) for (const [, run] of entries) run(i); // warm-up
  const times = Object.fromEntries(entries.map(([name]) => [name, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, run] of entries) {
      const start = performance.now();
      run(i);
      times[name].push(performance.now() - start);
    }
  }
  return Object.fromEntries(entries.map(([name]) => [name, summary(times[name])]));
}

const files = generate(NOTES);
const bytes = Object.values(files).reduce((sum, text) => sum + Buffer.byteLength(text), 0);

// Both ways must find the generated vault sound, and both must see a defect.
const report = planvault.validate(planvault.parseVault(files));
if (report.diagnostics.length !== 0) throw new Error(`planvault: ${JSON.stringify(report.diagnostics.slice(0, 3))}`);
if (validatePlainJs(files).length !== 0) throw new Error("the plain-JS way finds problems in a sound vault");
const broken = { ...files, "stage-000/step-00003.md": "# Step 3\n\n## Next\n- [[nowhere]]\n" };
const planvaultSees = planvault.validate(planvault.parseVault(broken)).diagnostics.map((d) => d.code);
const plainSees = validatePlainJs(broken).map((p) => p.code);
for (const code of ["dangling-edge", "no-terminal-reachable", "unreachable"]) {
  if (!planvaultSees.includes(code) || !plainSees.includes(code)) throw new Error(`${code} not seen by both ways`);
}

const whole = race(ROUNDS, {
  planvault: () => {
    const plan = planvault.parseVault(files);
    planvault.validate(plan);
    plan.free();
  },
  parseOnly: () => planvault.parseVault(files).free(),
  plainJs: () => validatePlainJs(files),
});

// Incremental: one note edited back and forth (its text really changes each
// time), first a knob (lines unchanged), then its prose (every later line moves).
const vault = new planvault.Vault(files);
const path = "stage-050/step-05000.md";
const knob = [files[path], files[path].replace("status: pending", "status: active")];
const prose = [files[path], files[path].replace("# Step 5000", "# Step 5000\n\nAn added paragraph.\n")];
const link = [files[path], files[path].replace("## Next\n", "## Next\n- shortcut -> [[step-05009]]\n")];
// Each alone (not round-robin): one contender's edit must not undo another's.
const incremental = {
  ...race(200, { update: (i) => vault.update(path, knob[i % 2]) }),
  ...race(200, {
    updateAndDiagnostics: (i) => {
      vault.update(path, knob[i % 2]);
      vault.diagnostics();
    },
  }),
  ...race(200, {
    proseEditAndDiagnostics: (i) => {
      vault.update(path, prose[i % 2]);
      vault.diagnostics();
    },
  }),
  ...race(200, {
    linkEditAndDiagnostics: (i) => {
      vault.update(path, link[i % 2]);
      vault.diagnostics();
    },
  }),
};
const structural = race(30, {
  addRemoveAndDiagnostics: () => {
    vault.update("stage-050/new-note.md", "# New\n");
    vault.remove("stage-050/new-note.md");
    vault.diagnostics();
  },
});
const wasm = whole.planvault;
const plain = whole.plainJs;
const ms = (t) => `${t.median.toFixed(2)} ms (min ${t.min.toFixed(2)}, max ${t.max.toFixed(2)})`;
console.log(`vault: ${NOTES} notes, ${(bytes / 1024 / 1024).toFixed(1)} MiB; node ${process.version}; ${ROUNDS} rounds, round-robin`);
console.log(`planvault parseVault + validate : ${ms(wasm)}`);
console.log(`  of which parseVault           : ${ms(whole.parseOnly)}`);
console.log(`plain JS (gray-matter, regex, graphology): ${ms(plain)}`);
console.log(`ratio plain JS / planvault      : ${(plain.median / wasm.median).toFixed(2)}x (medians), ${(plain.min / wasm.min).toFixed(2)}x (minima)`);
console.log(`Vault.update(one note)          : ${ms(incremental.update)}`);
console.log(`Vault.update + diagnostics(), a knob edit: ${ms(incremental.updateAndDiagnostics)}`);
console.log(`  a prose edit that moves lines : ${ms(incremental.proseEditAndDiagnostics)}`);
console.log(`  an edit that adds a link      : ${ms(incremental.linkEditAndDiagnostics)}`);
console.log(`Vault add + remove a note + diagnostics(): ${ms(structural.addRemoveAndDiagnostics)}`);
