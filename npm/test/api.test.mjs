// The one-shot API on the bundled example vault and on small plans made here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as planvault from "planvault";
import { readVault, repoDir } from "./helpers.mjs";

const example = readVault(join(repoDir, "static", "example-vault"));

test("the example vault parses into its three notes and validates clean", () => {
  const plan = planvault.parseVault(example);
  assert.equal(plan.format, "vault");
  assert.equal(plan.start, "draft");
  assert.deepEqual(plan.nodeIds, ["draft", "review", "send"]);
  assert.equal(plan.edgeCount, 3);
  assert.deepEqual(planvault.validate(plan), { diagnostics: [] });
});

test("diagnostics are plain objects with every field the CLI prints, null where absent", () => {
  const plan = planvault.parseVault({
    "a.md": "---\ntype: start\n---\n# A\n\n## Next\n- go -> [[nowhere]]\n",
  });
  const { diagnostics } = planvault.validate(plan);
  const dangling = diagnostics.find((d) => d.code === "dangling-edge");
  assert.ok(dangling, JSON.stringify(diagnostics));
  assert.deepEqual(Object.keys(dangling), ["code", "severity", "message", "file", "line", "column", "column_utf16", "end_column_utf16", "nodes", "target"]);
  assert.equal(dangling.severity, "error");
  assert.equal(dangling.file, "a.md");
  assert.equal(dangling.line, 7);
  assert.equal(dangling.column, 9, "the column of the link");
  assert.deepEqual(dangling.nodes, ["a"]);
  assert.equal(dangling.target, "nowhere");
  assert.match(dangling.message, /nowhere/);

  const empty = planvault.validate(planvault.parseVault({}));
  assert.deepEqual(empty.diagnostics.map((d) => [d.code, d.file, d.line, d.column]), [["empty-plan", null, null, null]]);
});

test("what the loader skips is skipped", () => {
  const plan = planvault.parseVault({
    ...example,
    ".obsidian/workspace.md": "# not a note",
    "00_plan-trace/run-1.md": "# trace",
    "diagram.png": "\u0089PNG",
  });
  assert.deepEqual(plan.nodeIds, ["draft", "review", "send"]);
});

test("toMermaid draws every labeled edge", () => {
  const mermaid = planvault.toMermaid(planvault.parseVault(example));
  assert.match(mermaid, /^flowchart/);
  assert.match(mermaid, /\|"approved"\|/);
  assert.match(mermaid, /\|"needs revision"\|/);
});

test("toJsonCanvas gives a JSON Canvas 1.0 document with file nodes and labeled edges", () => {
  const canvas = JSON.parse(planvault.toJsonCanvas(planvault.parseVault(example)));
  assert.deepEqual(canvas.nodes.map((n) => [n.type, n.file]).sort(), [
    ["file", "draft.md"],
    ["file", "review.md"],
    ["file", "send.md"],
  ]);
  for (const node of canvas.nodes) {
    for (const key of ["x", "y", "width", "height"]) assert.ok(Number.isInteger(node[key]), `${key} of ${node.id}`);
  }
  assert.deepEqual(canvas.edges.map((e) => e.label ?? null).sort(), ["approved", "needs revision", null].sort());
  const ids = new Set(canvas.nodes.map((n) => n.id));
  for (const edge of canvas.edges) assert.ok(ids.has(edge.fromNode) && ids.has(edge.toNode));
});

test("toGraphJson is `planvault graph --json`", () => {
  const graph = JSON.parse(planvault.toGraphJson(planvault.parseVault(example)));
  assert.equal(graph.format, "vault");
  assert.equal(graph.start, "draft");
  assert.deepEqual(
    graph.edges.map((e) => [e.from, e.to, e.label, e.conditional]),
    [
      ["draft", "review", null, false],
      ["review", "send", "approved", true],
      ["review", "draft", "needs revision", true],
    ],
  );
});

test("updateStatus changes only the status line", () => {
  const note = "\uFEFF---\r\ntype: step\r\nstatus: pending\r\nowner: ada # kept\r\n---\r\n# Step\r\n\r\nBody [[x]].\r\n";
  const updated = planvault.updateStatus(note, "done");
  assert.equal(updated, note.replace("status: pending", "status: done"));
});

test("updateStatus adds the line, and a block, where there is none", () => {
  const bare = "# Step\n\nBody.\n";
  const updated = planvault.updateStatus(bare, "active");
  assert.ok(updated.endsWith(bare), updated);
  assert.match(updated, /^---\nstatus: active\n---\n/);

  const noStatus = "---\ntype: step\ntags: [a, b]\n---\n# Step\n";
  const added = planvault.updateStatus(noStatus, "done");
  assert.match(added, /status: done/);
  assert.equal(added.replace(/status: done\n/, ""), noStatus);
});

test("updateStatus keeps every other property as it read, or refuses with status-not-writable", () => {
  // A status written over two lines is made one line; the rest stays.
  const folded = "---\nstatus: >-\n  pending\nowner: ada\n---\n# Step\n";
  assert.equal(planvault.updateStatus(folded, "done"), "---\nstatus: done\nowner: ada\n---\n# Step\n");
  // An anchor another key reads: no rewrite of the value keeps `owner`.
  const anchored = "---\nstatus: &s pending\nowner: *s\n---\n# Step\n";
  assert.throws(
    () => planvault.updateStatus(anchored, "done"),
    (e) => e.code === "status-not-writable" && /status: pending/.test(e.message),
  );
});

test("updateStatus refuses an unknown status with invalid-status", () => {
  assert.throws(() => planvault.updateStatus("# x\n", "finished"), (e) => e.code === "invalid-status" && /finished/.test(e.message));
});
