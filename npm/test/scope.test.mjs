// A plan kept in one folder of a larger vault: `new Vault(files, { folder })`
// gives, byte for byte, what `planvault validate VAULT/FOLDER --json` prints
// for the scoped fixture vaults (kept beside each as `expected-cli.json`,
// held to the CLI by cli/tests/cli.rs), and the whole vault what
// `planvault validate VAULT --json` prints (`expected-cli-whole.json`):
// the templates folder and `.planvaultignore`'s entries skipped, as there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as planvault from "planvault";
import * as markdown from "planvault/markdown";
import { asCliJson, readFolder, repoDir } from "./helpers.mjs";

const root = join(repoDir, "core", "tests", "fixtures", "vault-scoped");
const cases = readdirSync(root)
  .filter((name) => statSync(join(root, name)).isDirectory())
  .sort()
  .map((name) => {
    const dir = join(root, name);
    return {
      name,
      files: readFolder(dir),
      folder: readFileSync(join(dir, "folder.txt"), "utf8").trim(),
      scoped: readFileSync(join(dir, "expected-cli.json"), "utf8"),
      whole: readFileSync(join(dir, "expected-cli-whole.json"), "utf8"),
    };
  });

const builds = [
  ["planvault", planvault],
  ["planvault/markdown", markdown],
];

test("there are scoped fixtures, and their plan folders have diagnostics to compare", () => {
  assert.ok(cases.length >= 2, cases.map((c) => c.name).join(", "));
  for (const c of cases) assert.ok(JSON.parse(c.scoped).diagnostics.length > 0, c.name);
});

for (const [entry, build] of builds) {
  test(`${entry}: a Vault with a plan folder prints what the CLI prints for that folder`, async (t) => {
    for (const c of cases) {
      await t.test(c.name, () => {
        const vault = new build.Vault(c.files, { folder: c.folder });
        assert.equal(asCliJson(vault.validate()), c.scoped);
        // Slashes around the folder change nothing.
        assert.deepEqual(new build.Vault(c.files, { folder: `/${c.folder}/` }).validate(), vault.validate());
      });
    }
  });

  test(`${entry}: the whole vault, as a Vault and as parseVault, prints what the CLI prints for it`, async (t) => {
    for (const c of cases) {
      await t.test(c.name, () => {
        assert.equal(asCliJson(new build.Vault(c.files).validate()), c.whole);
        assert.equal(asCliJson(new build.Vault(c.files, { folder: "" }).validate()), c.whole);
        assert.equal(asCliJson(build.validate(build.parseVault(c.files))), c.whole);
      });
    }
  });
}

test("edits inside and outside the plan folder keep the Vault equal to a fresh one", () => {
  const c = cases.find((x) => x.name === "plan-in-a-big-vault");
  const files = { ...c.files };
  const options = { folder: c.folder };
  const vault = new planvault.Vault(files, options);
  const check = (what) => assert.deepEqual(vault.validate(), new planvault.Vault(files, options).validate(), what);
  const edit = (path, text) => {
    if (text === undefined) {
      delete files[path];
      vault.remove(path);
    } else {
      files[path] = text;
      vault.update(path, text);
    }
    check(`after editing ${path}`);
  };
  // The escalation's target goes: the edge now leads nowhere.
  edit("Notes/ADR-001.md");
  assert.deepEqual(vault.diagnostics().map((d) => d.code), ["dangling-edge"]);
  edit("Notes/ADR-001.md", c.files["Notes/ADR-001.md"]);
  assert.deepEqual(vault.diagnostics().map((d) => d.code), ["edge-leaves-plan"]);
  // A note in the plan folder: its one edge dangles, so the plan has no end.
  edit("plans/launch/Send.md", "# Send\n\n## Next\n- [[Missing]]\n");
  assert.deepEqual(vault.diagnostics().map((d) => d.code).sort(), ["dangling-edge", "edge-leaves-plan", "no-terminal-reachable"]);
  // The templates folder is no part of anything, whatever it holds.
  edit("Templates/Other.md", "## Next\n- [[Nowhere]]\n");
  assert.deepEqual(vault.diagnostics().map((d) => d.code).sort(), ["dangling-edge", "edge-leaves-plan", "no-terminal-reachable"]);
});

test("a change to the settings that skip folders reads the vault again", () => {
  const c = cases.find((x) => x.name === "plan-in-a-big-vault");
  const files = { ...c.files };
  const vault = new planvault.Vault(files);
  const before = vault.validate();
  assert.ok(!JSON.stringify(before).includes("Inbox"));
  // Inbox.md (with its near-miss `## Next:` heading) is no longer ignored.
  files[".planvaultignore"] = "Archive/\n";
  vault.update(".planvaultignore", files[".planvaultignore"]);
  const after = vault.validate();
  assert.ok(JSON.stringify(after).includes("Inbox"), JSON.stringify(after));
  assert.deepEqual(after, new planvault.Vault(files).validate());
  // Without the templates setting, the template's notes are read too.
  delete files[".obsidian/templates.json"];
  assert.equal(vault.remove(".obsidian/templates.json"), false, "a setting is no note");
  assert.ok(JSON.stringify(vault.validate()).includes("Templates/Step"));
  assert.deepEqual(vault.validate(), new planvault.Vault(files).validate());
});

test("Vault options are checked", () => {
  const c = cases[0];
  for (const options of [{ folder: 3 }, { dir: "plans" }, "plans/launch", [c.folder]]) {
    assert.throws(() => new planvault.Vault(c.files, options), (error) => error.code === "invalid-argument", JSON.stringify(options));
  }
  assert.deepEqual(new planvault.Vault(c.files, undefined).validate(), new planvault.Vault(c.files).validate());
});
