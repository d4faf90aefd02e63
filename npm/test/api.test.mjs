// The one-shot API on the bundled example vault and on small plans made here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as planvault from "planvault";
import * as markdown from "planvault/markdown";
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

// A red team's notes, each found against the built package.
test("files may be a Map, read as the same object would be", () => {
  for (const build of [planvault, markdown]) {
    const fromMap = build.validate(build.parseVault(new Map(Object.entries(example))));
    assert.deepEqual(fromMap, build.validate(build.parseVault(example)));
    const vault = new build.Vault(new Map(Object.entries(example)));
    assert.deepEqual(vault.diagnostics(), fromMap.diagnostics);
  }
  assert.throws(() => planvault.parseVault(new Map([[1, "x"]])), { code: "invalid-argument" });
});

test("the notes are read once: a later change to files, or a getter, changes nothing of the plan", () => {
  const files = { "a.md": "---\ntype: start\n---\n## Next\n- [[missing]]\n" };
  const plan = planvault.parseVault(files);
  const columns = () =>
    planvault
      .validate(plan)
      .diagnostics.filter((d) => d.code === "dangling-edge")
      .map((d) => [d.code, d.column_utf16, d.end_column_utf16]);
  const before = columns();
  assert.deepEqual(before, [["dangling-edge", 3, 14]]);
  files["a.md"] = "---\ntype: start\n---\n## Next\n- \u{1F600}\u{1F600} [[missing]]\n";
  assert.deepEqual(columns(), before);
  // A getter that parses another vault while this one is read.
  let inner;
  const tricky = { "a.md": "---\ntype: start\n---\n## Next\n- [[b]]\n", "b.md": "# B\n" };
  Object.defineProperty(tricky, ".planvaultignore", {
    enumerable: true,
    get() {
      inner ??= planvault.parseVault({ "zz.md": "# Z\n" });
      return "";
    },
  });
  const outer = planvault.parseVault(tricky);
  assert.deepEqual(outer.nodeIds, ["a", "b"]);
  assert.deepEqual(planvault.validate(outer).diagnostics, []);
});

test("parsePlanMd takes a null file as none", () => {
  const plan = planvault.parsePlanMd("- [ ] a\n", null);
  assert.deepEqual(planvault.validate(plan), planvault.validate(planvault.parsePlanMd("- [ ] a\n")));
});

test("proposal mode's rules are the CLI's, in both builds", () => {
  const files = {
    "draft.md": "---\ntype: start\nproposal: true\n---\n## Next\n- [[send]]\n",
    "send.md": "---\ntype: step\ntools: [write_note]\n---\n",
  };
  const expected = ["no-approval-gate draft.md:3:1", "mutation-before-approval send.md:1:1"];
  const shown = (diagnostics) => diagnostics.map((d) => `${d.code} ${d.file}:${d.line}:${d.column}`);
  for (const build of [planvault, markdown]) {
    assert.deepEqual(shown(build.validate(build.parseVault(files)).diagnostics), expected);
    const vault = new build.Vault(files);
    assert.deepEqual(shown(vault.diagnostics()), expected);
    // Asked no more: the rules go with the request.
    vault.update("draft.md", files["draft.md"].replace("proposal: true\n", ""));
    assert.deepEqual(vault.diagnostics(), []);
  }
  const planMd = planvault.validate(planvault.parsePlanMd("@proposal\n- [ ] @tool `touch x`\n"));
  assert.deepEqual(shown(planMd.diagnostics), ["no-approval-gate PLAN.md:1:1", "mutation-before-approval PLAN.md:2:1"]);
});

test("every drawing ends in one line break, as the CLI prints it, in every format", () => {
  const plans = [
    planvault.parseVault(example),
    planvault.parsePlanMd("- [ ] a\n"),
    planvault.parseGeneratedPlan('{"steps":[{"id":"a","title":"A"}]}'),
  ];
  for (const plan of plans) {
    for (const draw of [planvault.toMermaid, planvault.toJsonCanvas, planvault.toGraphJson]) {
      const text = draw(plan);
      assert.ok(text.endsWith("\n") && !text.endsWith("\n\n"), `${draw.name}: ${JSON.stringify(text.slice(-3))}`);
    }
  }
});

test("updateStatus refuses a note holding half of a character, rather than change it", () => {
  const note = "---\nstatus: pending\n---\n# A \uD83D note\n";
  assert.throws(() => planvault.updateStatus(note, "done"), { code: "invalid-argument", message: /lone UTF-16 surrogate/ });
  assert.equal(planvault.updateStatus("---\nstatus: pending\n---\n# A \u{1F600}\n", "done"), "---\nstatus: done\n---\n# A \u{1F600}\n");
});
