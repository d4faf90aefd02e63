// A vault written with Obsidian's "Use [[Wikilinks]]" turned off: its
// `## Next` items are markdown links, which the app reads as edges, and a
// new edge is written the same way (`.obsidian/app.json`'s
// useMarkdownLinks), with its path as the vault's "New link format" says
// (newLinkFormat). An item inside a `%%` comment is no edge, as in Obsidian.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { openOpfsVault, readOpfsFolder } from './support/vault.mjs';
import { useApp, planShown, addEdgeByKeyboard } from './support/app.mjs';

const app = useApp();
let page;

const NOTES = {
  '.obsidian/app.json': '{\n  "useMarkdownLinks": true,\n  "newLinkFormat": "relative"\n}',
  'Start.md': '---\ntype: start\n---\n# Start\n\n## Next\n- go -> [Review it](Review%20it.md)\n%%\n- old route -> [[Finish]]\n%%\n',
  'Review it.md': '# Review it\n\n## Next\n- approved -> [Finish](Finish.md#Checklist)\n- archive -> [Archive](done/Archive.md)\n',
  'Finish.md': '# Finish\n',
  'done/Archive.md': '# Archive\n',
};

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);
const read = (name) => page.evaluate(async (name) => (await (await window.e2eVault.getFileHandle(name)).getFile()).text(), name);

/** Select `from`, press E, pick Start and label the new edge `label`. */
const addEdgeToStart = (from, label) => addEdgeByKeyboard(page, from, 'star', 'Start', label);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await openOpfsVault(page, 'markdown-links-vault', NOTES, 4);
});

test('markdown links are edges, a commented-out item is none, and a new edge is a markdown link', async () => {
  const plan = await hook('plan');
  const edges = plan.edges.map((e) => `${e.from} -> ${e.to}`).sort();
  assert.deepEqual(edges, ['Review it -> Finish', 'Review it -> done/Archive', 'Start -> Review it'], JSON.stringify(plan.edges));
  assert.deepEqual(plan.diagnostics, [], 'no diagnostics');
  await saveScreenshot(page, 'markdown-links-vault');

  await addEdgeToStart('Finish', 'again');
  assert.equal(await read('Finish.md'), '# Finish\n\n## Next\n- again -> [Start](Start.md)\n');
  const after = await hook('plan');
  assert.ok(after.edges.some((e) => e.from === 'Finish' && e.to === 'Start' && e.label === 'again'), JSON.stringify(after.edges));
});

test('a new edge from a note in a folder gets a relative path, as the vault says', async () => {
  await addEdgeToStart('done/Archive', 'restart');
  const files = await readOpfsFolder(page, 'markdown-links-vault');
  assert.equal(files['done/Archive.md'], '# Archive\n\n## Next\n- restart -> [Start](../Start.md)\n');
  const after = await hook('plan');
  assert.ok(after.edges.some((e) => e.from === 'done/Archive' && e.to === 'Start'), JSON.stringify(after.edges));
});
