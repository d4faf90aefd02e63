// The example Obsidian plugin type-checks against the package's .d.ts and
// bundles with esbuild: a change that breaks the package's API breaks this.
// With the TypeScript it installs, npm/test/types checks every entry's types.
// Then the bundle runs against a stand-in for Obsidian's API.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readVault, repoDir } from "./helpers.mjs";

const example = join(repoDir, "examples", "obsidian-plugin");

function npm(...args) {
  return execFileSync("npm", args, { cwd: example, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

test("the example Obsidian plugin builds against the package", { timeout: 300_000 }, () => {
  const lock = join(example, "package-lock.json");
  const installed = join(example, "node_modules", ".package-lock.json");
  if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
    npm("ci", "--no-audit", "--no-fund");
  }
  let output;
  try {
    output = npm("run", "build");
  } catch (error) {
    assert.fail(`the example plugin does not build:\n${error.stdout}\n${error.stderr}`);
  }
  assert.match(output, /main\.js: \d+ bytes/);
  const bundle = readFileSync(join(example, "main.js"), "utf8");
  // The wasm travels inside main.js (base64 of "\0asm"), nothing is fetched.
  assert.ok(bundle.includes('"AGFzbQ'), "the wasm is inlined");
  // It is the markdown build's (planvault/markdown/inline), the validator
  // alone: the full build's glue would bring the JSON plan parser's binding.
  assert.ok(!bundle.includes("parseGeneratedPlan"), "the plugin bundles planvault/markdown, not the full build");
  assert.ok(!bundle.includes("import.meta"), "no import.meta in a CommonJS bundle");
});

test("every entry's types declare its API, and the markdown build's no more than its wasm has", () => {
  // The TypeScript the plugin's build installed; npm/test/types/api.ts uses
  // the whole API through all four entries, with the .d.ts files checked too.
  const tsc = join(example, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(repoDir, "npm", "test", "types")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    assert.fail(`the package's types do not check:\n${error.stdout}\n${error.stderr}`);
  }
});

// Obsidian's runtime, as much of it as the plugin touches.
function fakeObsidian() {
  class TAbstractFile {
    constructor(path) {
      this.path = path;
    }
  }
  class TFile extends TAbstractFile {
    constructor(path) {
      super(path);
      this.extension = path.split(".").pop();
    }
  }
  class Plugin {
    constructor(app, manifest) {
      this.app = app;
      this.manifest = manifest;
    }
    async loadData() {
      return null;
    }
    async saveData() {}
    registerView() {}
    registerEditorExtension() {}
    addRibbonIcon() {}
    addCommand() {}
    addSettingTab() {}
    registerEvent() {}
  }
  class ItemView {}
  class PluginSettingTab {}
  class Setting {}
  return { TAbstractFile, TFile, Plugin, ItemView, PluginSettingTab, Setting, editorInfoField: {} };
}

const fakeCodeMirror = {
  "@codemirror/state": { RangeSetBuilder: class {} },
  "@codemirror/view": { Decoration: {}, EditorView: class {}, ViewPlugin: { fromClass: (cls, spec) => ({ cls, spec }) } },
};

test("the bundled plugin reports what the package reports, and follows an edit", async () => {
  const planvault = await import("planvault");
  const obsidian = fakeObsidian();
  const bundle = readFileSync(join(example, "main.js"), "utf8");
  const module = { exports: {} };
  const require = (name) => (name === "obsidian" ? obsidian : fakeCodeMirror[name]);
  new Function("require", "module", "exports", bundle)(require, module, module.exports);

  const fixture = join(repoDir, "core", "tests", "fixtures", "vault", "dangling-edge");
  const notes = readVault(fixture);
  const handlers = {};
  let layoutReady;
  const app = {
    vault: {
      getMarkdownFiles: () => Object.keys(notes).map((path) => new obsidian.TFile(path)),
      cachedRead: async (file) => notes[file.path],
      on: (name, callback) => ((handlers[name] = callback), { name }),
    },
    workspace: { onLayoutReady: (callback) => (layoutReady = callback), getLeavesOfType: () => [], updateOptions() {} },
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  const plugin = new module.exports.default(app, { id: "planvault-diagnostics" });
  await plugin.onload();
  layoutReady();
  await settle();
  const expected = planvault.validate(planvault.parseVault(notes)).diagnostics;
  assert.ok(expected.length > 0, "the fixture has diagnostics");
  assert.deepEqual(plugin.diagnostics, expected);

  // The user fixes the dangling link: the plugin re-reads that note only.
  const [path] = Object.keys(notes).filter((p) => notes[p].includes("## Next"));
  notes[path] = notes[path].replace(/\[\[[^\]]*\]\]/g, "[[" + Object.keys(notes)[0].replace(/\.md$/, "") + "]]");
  handlers.modify(new obsidian.TFile(path));
  await settle();
  assert.deepEqual(plugin.diagnostics, planvault.validate(planvault.parseVault(notes)).diagnostics);
  assert.notDeepEqual(plugin.diagnostics, expected);
  plugin.onunload();
});
