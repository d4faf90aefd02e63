// Misuse throws an Error with a `code`; a panic inside the wasm throws too,
// and the package keeps working afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as planvault from "planvault";
import * as markdown from "planvault/markdown";

function throwsCode(call, code, messagePart) {
  assert.throws(call, (error) => {
    assert.ok(error instanceof Error, "an Error");
    assert.equal(error.name, "PlanvaultError");
    assert.equal(error.code, code, error.message);
    if (messagePart) assert.match(error.message, messagePart);
    return true;
  });
}

test("files that are not an object are refused with invalid-argument", () => {
  throwsCode(() => planvault.parseVault(null), "invalid-argument", /got null/);
  throwsCode(() => planvault.parseVault(["a.md"]), "invalid-argument", /got an array/);
  throwsCode(() => planvault.parseVault("a.md"), "invalid-argument", /got string/);
  throwsCode(() => new planvault.Vault(42), "invalid-argument", /got number/);
});

test("a note that is not text is named in the error", () => {
  throwsCode(() => planvault.parseVault({ "draft.md": 3 }), "invalid-argument", /"draft\.md" is number/);
  throwsCode(() => new planvault.Vault({ "x/y.md": null }), "invalid-argument", /"x\/y\.md" is null/);
});

test("text arguments must be strings", () => {
  throwsCode(() => planvault.parsePlanMd(12), "invalid-argument", /`text`/);
  throwsCode(() => planvault.parseGeneratedPlan({ steps: [] }), "invalid-argument", /`json`/);
  const vault = new planvault.Vault({});
  throwsCode(() => vault.update("a.md", 5), "invalid-argument", /`text`/);
  throwsCode(() => vault.remove(undefined), "invalid-argument", /`path`/);
});

test("unknown generated-plan options are refused", () => {
  throwsCode(() => planvault.parseGeneratedPlan("[]", { allowTools: ["x"] }), "invalid-argument", /allowTools/);
});

test("validate refuses what is not a Plan", () => {
  throwsCode(() => planvault.validate({ nodes: [] }), "invalid-argument", /Plan/);
});

test("a panic in the wasm becomes an Error with internal-panic, and the next call works", () => {
  throwsCode(() => planvault.__selfTestPanic(), "internal-panic", /deliberate panic/);
  // The instance was replaced: a fresh call answers instead of trapping.
  throwsCode(() => planvault.parseVault({ "a.md": 1 }), "invalid-argument");
  throwsCode(() => planvault.__selfTestPanic(), "internal-panic");
  const vault = new planvault.Vault({});
  vault.remove("nothing.md");
});

test("a Vault made before a panic rebuilds itself from its notes", () => {
  const vault = new planvault.Vault({});
  vault.remove("missing.md");
  throwsCode(() => planvault.__selfTestPanic(), "internal-panic");
  // Would be a stale handle into the discarded instance; the wrapper rebuilds.
  vault.remove("missing.md");
  throwsCode(() => vault.update("a.md", 7), "invalid-argument");
});

test("the markdown build recovers from a panic the same way, its own instance apart", () => {
  const vault = new markdown.Vault({ "a.md": "# A\n" });
  throwsCode(() => markdown.__selfTestPanic(), "internal-panic", /deliberate panic/);
  assert.deepEqual(vault.validate(), markdown.validate(markdown.parseVault({ "a.md": "# A\n" })));
  throwsCode(() => markdown.updateStatus("# A\n", "finished"), "invalid-status");
});

test("a Plan from one build is refused by the other's functions, not misread", () => {
  throwsCode(() => markdown.validate(planvault.parsePlanMd("- [ ] a\n")), "invalid-argument", /Plan/);
  throwsCode(() => planvault.validate(markdown.parsePlanMd("- [ ] a\n")), "invalid-argument", /Plan/);
});

// A red team's notes on the API's contract, each found against the built
// package.
test("a freed Plan or Vault says so, with invalid-argument", () => {
  const plan = planvault.parseVault({ "a.md": "---\ntype: start\n---\n" });
  plan.free();
  throwsCode(() => planvault.validate(plan), "invalid-argument", /freed/);
  const vault = new planvault.Vault({});
  vault.free();
  throwsCode(() => vault.validate(), "invalid-argument", /freed/);
});

test("a tool list given as one string is refused by name, not as a TypeError", () => {
  throwsCode(() => planvault.parseGeneratedPlan("[]", { allowedTools: "search" }), "invalid-argument", /expected a sequence/);
});
