// The Rust fixture cases, run through the built package: every case's
// diagnostics, rendered the way the Rust fixture tests render them, must equal
// the diagnostics section of the case's expected output byte for byte. The
// vault and PLAN.md cases run through both builds (`planvault` and the
// smaller `planvault/markdown`), which must not differ in a byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as planvault from "planvault";
import * as markdown from "planvault/markdown";
import { readFolder, repoDir } from "./helpers.mjs";

const fixtures = join(repoDir, "core", "tests", "fixtures");

function cases(format) {
  const root = join(fixtures, format);
  const dirs = readdirSync(root).filter((name) => statSync(join(root, name)).isDirectory()).sort();
  assert.ok(dirs.length > 0, `no fixtures under ${root}`);
  return dirs.map((name) => ({ name, dir: join(root, name) }));
}

// Rust's `{:?}` of a string, for the characters fixture names and messages use.
function debugString(text) {
  const escaped = [...text]
    .map((c) => {
      if (c === "\\") return "\\\\";
      if (c === '"') return '\\"';
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      if (c === "\t") return "\\t";
      if (c === "\0") return "\\0";
      const code = c.codePointAt(0);
      // C0 and C1 controls and DEL are not printable to Rust's `escape_debug`.
      if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `\\u{${code.toString(16)}}`;
      // Nor is a combining mark (a decomposed name's accent): Rust's `{:?}`
      // of a string escapes every grapheme extender.
      if (/\p{Grapheme_Extend}/u.test(c)) return `\\u{${code.toString(16)}}`;
      return c;
    })
    .join("");
  return `"${escaped}"`;
}

// core's `terminal::escape_controls(text, false)`: controls and the bidi
// marks that reorder what a terminal shows, written as `\u{…}`.
function escapeControls(text) {
  return [...text]
    .map((c) => {
      const code = c.codePointAt(0);
      const hazard =
        code < 0x20 ||
        (code >= 0x7f && code <= 0x9f) ||
        code === 0x200e ||
        code === 0x200f ||
        (code >= 0x202a && code <= 0x202e) ||
        (code >= 0x2066 && code <= 0x2069);
      return hazard ? `\\u{${code.toString(16)}}` : c;
    })
    .join("");
}

const debugOption = (value, show) => (value === undefined || value === null ? "None" : `Some(${show(value)})`);

// Diagnostic::render_human: `file:line:col: severity[code]: message`.
function renderHuman(d) {
  let out = "";
  if (d.file !== null) {
    out += d.file;
    if (d.line !== null) {
      out += `:${d.line}`;
      if (d.column !== null) out += `:${d.column}`;
    }
    out += ": ";
  }
  return escapeControls(`${out}${d.severity}[${d.code}]: ${d.message}`);
}

// What core/tests/vault_fixtures.rs writes under `diagnostics:`.
function renderVaultDiagnostics(diagnostics) {
  return diagnostics.map((d) => `  ${renderHuman(d)}\n    nodes: [${d.nodes.map(debugString).join(", ")}]\n`).join("");
}

// What core/tests/fixtures.rs writes under `diagnostics:`.
function renderPlanDiagnostics(diagnostics) {
  return diagnostics
    .map((d) => {
      let out = `  ${renderHuman(d)}\n`;
      const items = d.items ?? [];
      if (items.length > 0 || d.target !== undefined || d.key !== undefined) {
        out += `    items=[${items.join(", ")}] target=${debugOption(d.target, debugString)} key=${debugOption(d.key, debugString)}\n`;
      }
      return out;
    })
    .join("");
}

function section(text, from, to) {
  const start = text.indexOf(from);
  assert.ok(start >= 0, `no ${JSON.stringify(from)} in the expectation`);
  const end = to === undefined ? text.length : text.indexOf(to, start);
  return text.slice(start + from.length, end);
}

function readList(dir, name) {
  const path = join(dir, name);
  if (!existsSync(path)) return undefined;
  return readFileSync(path, "utf8").split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
}

const builds = [
  ["planvault", planvault],
  ["planvault/markdown", markdown],
];

// A note whose bytes are not UTF-8 is said so by the reader that saw the
// bytes (the CLI, the app: the Rust test reads as they do); the package's
// callers hand it text already decoded, as Obsidian shows it, and it says
// nothing of them.
function withoutReadersDiagnostics(expected) {
  const blocks = expected.split(/(?=^ {2}\S)/m);
  return blocks.filter((block) => !block.includes("error[unreadable-note]: ") || !block.includes("is not UTF-8 text")).join("");
}

for (const [entry, build] of builds) {
  test(`vault fixtures through ${entry}: the same diagnostics as the Rust tests, byte for byte`, async (t) => {
    for (const { name, dir } of cases("vault")) {
      await t.test(name, () => {
        const expected = withoutReadersDiagnostics(
          section(readFileSync(join(dir, "expected.snap"), "utf8"), "diagnostics:\n", "\nstart: "),
        );
        const report = build.validate(build.parseVault(readFolder(dir)));
        assert.equal(renderVaultDiagnostics(report.diagnostics), expected + (expected ? "\n" : ""));
        // The incremental handle agrees with the one-shot parse.
        assert.deepEqual(new build.Vault(readFolder(dir)).validate(), report);
      });
    }
  });

  test(`PLAN.md fixtures through ${entry}: the same diagnostics as the Rust tests, byte for byte`, async (t) => {
    for (const { name, dir } of cases("planmd")) {
      await t.test(name, () => {
        const expected = section(readFileSync(join(dir, "expected.snap"), "utf8"), "diagnostics:\n");
        const text = readFileSync(join(dir, "PLAN.md"), "utf8");
        const report = build.validate(build.parsePlanMd(text, "PLAN.md"));
        assert.equal(renderPlanDiagnostics(report.diagnostics), expected);
      });
    }
  });
}

test("generated-plan fixtures: the same diagnostics as the Rust tests, byte for byte", async (t) => {
  for (const { name, dir } of cases("generated")) {
    await t.test(name, () => {
      const expected = section(readFileSync(join(dir, "expected.snap"), "utf8"), "diagnostics:\n");
      const options = { file: "plan.json" };
      const allowedTools = readList(dir, "allowed_tools.txt");
      const availableTools = readList(dir, "available_tools.txt");
      if (allowedTools) options.allowedTools = allowedTools;
      if (availableTools) options.availableTools = availableTools;
      if (existsSync(join(dir, "max_nodes.txt"))) {
        options.limits = { maxNodes: Number(readFileSync(join(dir, "max_nodes.txt"), "utf8").trim()) };
      }
      const text = readFileSync(join(dir, "plan.json"), "utf8");
      const report = planvault.validate(planvault.parseGeneratedPlan(text, options));
      assert.equal(renderPlanDiagnostics(report.diagnostics), expected);
    });
  }
});

// Proposal mode's cases (`core/tests/fixtures/proposal/`): where the plan's
// own text asks for it, the package adds its rules after everything else,
// as `planvault validate` does. (A case whose vault config asks is the
// CLI's alone: the package reads no config.)
for (const [entry, build] of builds) {
  test(`proposal fixtures through ${entry}: the same diagnostics as the Rust tests`, async (t) => {
    for (const { name, dir } of cases("proposal")) {
      if (existsSync(join(dir, "config.txt"))) continue;
      if (existsSync(join(dir, "plan.json")) && build.parseGeneratedPlan === undefined) continue;
      await t.test(name, () => {
        const snap = readFileSync(join(dir, "expected.snap"), "utf8");
        const expected = section(snap, "diagnostics:\n")
          .split("\n")
          .filter((line) => /^ {2}\S/.test(line))
          .map((line) => line.slice(2));
        let plan;
        if (existsSync(join(dir, "PLAN.md"))) {
          plan = build.parsePlanMd(readFileSync(join(dir, "PLAN.md"), "utf8"), "PLAN.md");
        } else if (existsSync(join(dir, "plan.json"))) {
          plan = build.parseGeneratedPlan(readFileSync(join(dir, "plan.json"), "utf8"), { file: "plan.json" });
        } else {
          plan = build.parseVault(readFolder(join(dir, "vault")));
          assert.deepEqual(new build.Vault(readFolder(join(dir, "vault"))).validate(), build.validate(plan));
        }
        assert.deepEqual(build.validate(plan).diagnostics.map(renderHuman), expected);
      });
    }
  });
}
