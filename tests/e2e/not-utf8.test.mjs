// A note whose bytes are not UTF-8 (a Latin-1 note from an old editor) is
// read with U+FFFD in their place: the app says so where the first one is
// (`unreadable-note`) and never writes the note, since writing the text it
// holds would replace those bytes. A note that holds U+FFFD as a character
// (pasted output of a binary) is text like any other: no diagnostic, and it
// is edited as usual.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown, addEdgeByKeyboard } from './support/app.mjs';

const app = useApp();
let page;

const FOLDER = 'not-utf8-vault';
const NOTES = {
  'Start.md': '---\ntype: start\n---\n# Start\n\n## Next\n- [[Menu]]\n- [[Dump]]\n',
  'Dump.md': '# Dump\n\nThe bytes read `\ufffd@C\ufffd\ufffd>==`.\n',
};
// "# Café menu\n\nPrix: 3€" as Windows-1252 writes it: é is E9, € is 80.
const MENU = [...Buffer.from('# Caf'), 0xe9, ...Buffer.from(' menu\n\nPrix: 3'), 0x80, 0x0a];

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);
const bytes = (name) =>
  page.evaluate(async (name) => [...new Uint8Array(await (await (await window.e2eVault.getFileHandle(name)).getFile()).arrayBuffer())], name);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await page.waitForFunction(() => window.planvaultTest?.opensSettled());
  await writePrivateFolder(page, FOLDER, NOTES);
  await page.evaluate(async ([folder, menu]) => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(folder);
    const w = await (await dir.getFileHandle('Menu.md', { create: true })).createWritable();
    await w.write(new Uint8Array(menu));
    await w.close();
    window.e2eVault = dir;
    await window.planvaultTest.openHandle(dir);
  }, [FOLDER, MENU]);
  await page.waitForFunction(() => window.planvaultTest.plan()?.nodes.length === 3);
});

test('a note that is not UTF-8 says where, and one holding U+FFFD as text does not', async () => {
  const plan = await hook('plan');
  assert.deepEqual(plan.diagnostics, ['unreadable-note'], JSON.stringify(plan.diagnostics));
  const shown = await page.locator('#diagnostics li.error').allTextContents();
  assert.equal(shown.length, 1, JSON.stringify(shown));
  assert.match(shown[0], /Menu\.md:1:6/);
  assert.match(shown[0], /`Menu\.md` is not UTF-8 text/);
  await saveScreenshot(page, 'not-utf8-vault');
});

test('an edit of the note that is not UTF-8 is refused and its bytes stay', async () => {
  await addEdgeByKeyboard(page, 'Menu', 'star', 'Start', 'again');
  await page.waitForFunction(() => /Menu\.md is not UTF-8 text/.test(document.querySelector('#status').textContent));
  assert.deepEqual(await bytes('Menu.md'), MENU);
  // The plan shown is the one on disk: no edge from Menu.
  const plan = await hook('plan');
  assert.ok(!plan.edges.some((e) => e.from === 'Menu'), JSON.stringify(plan.edges));
  assert.deepEqual(plan.diagnostics, ['unreadable-note']);
});

test('a note holding U+FFFD as text is edited as any other', async () => {
  await addEdgeByKeyboard(page, 'Dump', 'star', 'Start', 'again');
  const text = await page.evaluate(async () => (await (await window.e2eVault.getFileHandle('Dump.md')).getFile()).text());
  assert.equal(text, '# Dump\n\nThe bytes read `\ufffd@C\ufffd\ufffd>==`.\n\n## Next\n- again -> [[Start]]\n');
  const plan = await hook('plan');
  assert.ok(plan.edges.some((e) => e.from === 'Dump' && e.to === 'Start'), JSON.stringify(plan.edges));
});

test('without the directory picker, the working copy keeps the bytes and refuses the edit too', async () => {
  const copyPage = await openPage(app.browser);
  await copyPage.addInitScript(() => {
    Object.defineProperty(window, 'showDirectoryPicker', { value: undefined, configurable: true });
  });
  await copyPage.goto(app.server.url);
  await planShown(copyPage);
  const folder = join(mkdtempSync(join(tmpdir(), 'planvault-e2e-')), 'latin');
  mkdirSync(folder);
  for (const [path, text] of Object.entries(NOTES)) writeFileSync(join(folder, path), text);
  writeFileSync(join(folder, 'Menu.md'), Buffer.from(MENU));
  await copyPage.locator('#open-folder').setInputFiles(folder);
  await copyPage.waitForFunction(() => document.querySelector('#mode').textContent.includes('Read-only copy of “latin”'));
  await copyPage.waitForFunction(() => window.planvaultTest.plan()?.nodes.length === 3);
  assert.deepEqual((await copyPage.evaluate(() => window.planvaultTest.plan())).diagnostics, ['unreadable-note']);
  const copied = () =>
    copyPage.evaluate(async () => {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('working-copy');
      return [...new Uint8Array(await (await (await dir.getFileHandle('Menu.md')).getFile()).arrayBuffer())];
    });
  assert.deepEqual(await copied(), MENU, 'copied byte for byte');
  await addEdgeByKeyboard(copyPage, 'Menu', 'star', 'Start', 'again');
  await copyPage.waitForFunction(() => /Menu\.md is not UTF-8 text/.test(document.querySelector('#status').textContent));
  assert.deepEqual(await copied(), MENU);
  // Read again from the copy (the refusal reloads it): still said.
  assert.deepEqual((await copyPage.evaluate(() => window.planvaultTest.plan())).diagnostics, ['unreadable-note']);
  // The zip leaves it out: unpacked over the vault it would lose its bytes.
  const [download] = await Promise.all([copyPage.waitForEvent('download'), copyPage.locator('#download').click()]);
  const { readFileSync } = await import('node:fs');
  const zipped = readFileSync(await download.path()).toString('latin1');
  assert.ok(zipped.includes('Start.md') && zipped.includes('Dump.md'), 'the other notes are there');
  assert.ok(!zipped.includes('Menu.md'), 'the note that is not UTF-8 is not');
  await copyPage.waitForFunction(() => /1 note\(s\) that are not UTF-8 or too large left out/.test(document.querySelector('#status').textContent));
  await copyPage.close();
});
