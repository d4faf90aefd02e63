// The incremental Vault gives, after every edit, exactly what a full parse of
// the same files gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import * as planvault from "planvault";
import { readVault, repoDir } from "./helpers.mjs";

const example = readVault(join(repoDir, "static", "example-vault"));

function fullDiagnostics(files) {
  return planvault.validate(planvault.parseVault(files)).diagnostics;
}

function edit(files, vault, path, text) {
  if (text === undefined) {
    delete files[path];
    vault.remove(path);
  } else {
    files[path] = text;
    vault.update(path, text);
  }
  assert.deepEqual(vault.diagnostics(), fullDiagnostics(files), `after editing ${path}`);
}

test("a fresh Vault reports what parseVault + validate report", () => {
  const vault = new planvault.Vault(example);
  assert.deepEqual(vault.diagnostics(), []);
  assert.deepEqual(vault.validate(), { diagnostics: [] });
});

test("editing, adding and removing notes keeps the Vault equal to a full parse", () => {
  const files = { ...example };
  const vault = new planvault.Vault(files);
  // The review loses its exit: a loop with no way out.
  edit(files, vault, "review.md", "# Review\n\n## Next\n- needs revision -> [[draft]]\n");
  assert.ok(vault.diagnostics().some((d) => d.code === "cycle-without-exit"));
  // It gets it back, plus a link to a note that does not exist yet.
  edit(files, vault, "review.md", example["review.md"].replace("- approved -> [[send]]", "- approved -> [[send]]\n- escalate -> [[boss]]"));
  assert.ok(vault.diagnostics().some((d) => d.code === "dangling-edge" && d.target === "boss"));
  // The note appears: the link resolves.
  edit(files, vault, "people/boss.md", "# Boss\n");
  assert.ok(!vault.diagnostics().some((d) => d.code === "dangling-edge"));
  // A second `boss` with a path as long makes the link ambiguous (Obsidian
  // would open the one it loaded first).
  edit(files, vault, "others/boss.md", "# Another boss\n");
  assert.ok(vault.diagnostics().some((d) => d.code === "ambiguous-link"));
  // Broken frontmatter in one note, CRLF in another.
  edit(files, vault, "send.md", "---\nmax_visits: three\n---\n# Send\n");
  edit(files, vault, "draft.md", example["draft.md"].replaceAll("\n", "\r\n"));
  edit(files, vault, "others/boss.md", undefined);
  edit(files, vault, "people/boss.md", undefined);
  edit(files, vault, "review.md", example["review.md"]);
  assert.equal(vault.remove("never-there.md"), false);
  assert.ok(vault.diagnostics().some((d) => d.code === "bad-frontmatter"));
});

test("paths the loader skips do not change the Vault", () => {
  const vault = new planvault.Vault(example);
  vault.update(".obsidian/app.md", "# settings");
  vault.update("00_plan-trace/run.md", "# trace\n\n## Next\n- [[draft]]\n");
  vault.update("notes.txt", "text");
  assert.deepEqual(vault.diagnostics(), []);
});

test("a pseudo-random edit sequence never drifts from a full parse", () => {
  // A small deterministic generator (no Math.random: failures must replay).
  let seed = 7;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const paths = ["a.md", "b.md", "B.md", "sub/a.md", "c.md"];
  const targets = ["a", "b", "c", "sub/a", "missing", "A|alias"];
  const heads = ["", "---\ntype: start\n---\n", "---\nstatus: done\n---\n", "---\nmax_visits: -1\n---\n"];
  const files = {};
  const vault = new planvault.Vault(files);
  for (let step = 0; step < 150; step++) {
    const path = paths[next(paths.length)];
    if (next(4) === 0) {
      edit(files, vault, path, undefined);
      continue;
    }
    const edges = Array.from({ length: next(3) }, () => `- l${next(3)} -> [[${targets[next(targets.length)]}]]\n`);
    edit(files, vault, path, `${heads[next(heads.length)]}# ${path}\n\n## Next\n${edges.join("")}`);
  }
});
