// Columns an editor can use: every diagnostic with a position carries its
// column in characters (as the CLI prints it) and in UTF-16 code units (what
// JavaScript strings, CodeMirror and Obsidian's editor index by), in both
// builds, from `validate(plan)` and from a `Vault`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as planvault from "planvault";
import * as markdown from "planvault/markdown";
import { readVault, repoDir } from "./helpers.mjs";

const emoji = readVault(join(repoDir, "core", "tests", "fixtures", "vault", "emoji-before-link"));

// Where the link starts and ends in its line, by JavaScript's own count.
function expected(text, link) {
  const lines = text.split("\n");
  const line = lines.findIndex((l) => l.includes(link));
  const at = lines[line].indexOf(link);
  return { line: line + 1, column: [...lines[line].slice(0, at)].length + 1, column_utf16: at + 1, end_column_utf16: at + link.length + 1 };
}

for (const [name, api] of [["planvault", planvault], ["planvault/markdown", markdown]]) {
  test(`${name}: a dangling link after emoji and CJK has its UTF-16 column`, () => {
    const want = expected(emoji["start.md"], "[[missing 🎯 target]]");
    assert.equal(want.column_utf16 - want.column, 1, "the rocket is two units, one character");
    for (const report of [api.validate(api.parseVault(emoji)), new api.Vault(emoji).validate()]) {
      const [d] = report.diagnostics;
      assert.equal(d.code, "dangling-edge");
      const { line, column, column_utf16, end_column_utf16 } = d;
      assert.deepEqual({ line, column, column_utf16, end_column_utf16 }, want);
      const keys = Object.keys(d);
      assert.deepEqual(keys.slice(keys.indexOf("column"), keys.indexOf("column") + 3), ["column", "column_utf16", "end_column_utf16"]);
    }
  });

  test(`${name}: a note's BOM and CRLF do not shift the UTF-16 column; a Vault follows its edits`, () => {
    const note = "\ufeff---\r\ntype: start\r\n---\r\n# 🚀 A\r\n\r\n## Next\r\n- 計画 🧪 -> [[nowhere]]\r\n";
    const vault = new api.Vault({ "a.md": note });
    const dangling = () => vault.diagnostics().find((d) => d.code === "dangling-edge");
    const d = dangling();
    const line = note.split("\r\n")[6];
    assert.equal(d.line, 7);
    assert.equal(d.column_utf16, line.indexOf("[[nowhere]]") + 1);
    assert.equal(d.end_column_utf16, line.indexOf("[[nowhere]]") + "[[nowhere]]".length + 1);
    vault.update("a.md", note.replace("計画 🧪", "🧪🧪🧪"));
    const after = dangling();
    assert.equal(after.column_utf16, "- 🧪🧪🧪 -> ".length + 1);
    assert.equal(after.column, [..."- 🧪🧪🧪 -> "].length + 1);
  });

  test(`${name}: PLAN.md diagnostics get UTF-16 columns too; a diagnostic without a position gets null`, () => {
    const text = "- [ ] 🚀 Launch\n- [ ] Check\n      @on fail -> 9\n";
    const { diagnostics } = api.validate(api.parsePlanMd(text, "PLAN.md"));
    const dangling = diagnostics.find((d) => d.code === "dangling-edge");
    assert.ok(dangling, JSON.stringify(diagnostics));
    const line = text.split("\n")[dangling.line - 1];
    assert.equal(dangling.column_utf16, [...line].slice(0, dangling.column - 1).join("").length + 1);
    const empty = api.validate(api.parseVault({}));
    assert.deepEqual(empty.diagnostics.map((d) => [d.column, d.column_utf16, d.end_column_utf16]), [[null, null, null]]);
  });
}
