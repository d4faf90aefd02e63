// A note past what planvault reads (64 MiB; a sparse file of many GB would
// take the memory) is not read: the app says so on the note, with its
// size, and refuses an edit of it, whose bytes stay. The working copy of a
// folder picked without the directory picker keeps the file as it is.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, mkdtempSync, openSync, ftruncateSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown, addEdgeByKeyboard } from './support/app.mjs';

const app = useApp();
let page;

const FOLDER = 'too-large-vault';
const NOTES = {
  'Start.md': '---\ntype: start\n---\n# Start\n\n## Next\n- [[Huge]]\n',
};
const SIZE = 65 * 1024 * 1024;
const MESSAGE = '`Huge.md` holds 65 MiB, more than the 64 MiB planvault reads of a file';

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);
const sizeOf = (p, folder, name) =>
  p.evaluate(async ([folder, name]) => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(folder);
    return (await (await dir.getFileHandle(name)).getFile()).size;
  }, [folder, name]);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await page.waitForFunction(() => window.planvaultTest?.opensSettled());
  await writePrivateFolder(page, FOLDER, NOTES);
  await page.evaluate(async ([folder, size]) => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(folder);
    const w = await (await dir.getFileHandle('Huge.md', { create: true })).createWritable();
    await w.truncate(size);
    await w.close();
    await window.planvaultTest.openHandle(dir);
  }, [FOLDER, SIZE]);
  await page.waitForFunction(() => window.planvaultTest.plan()?.nodes.length === 2);
});

test('a note too large to read says so with its size', async () => {
  const plan = await hook('plan');
  assert.deepEqual(plan.diagnostics, ['unreadable-note'], JSON.stringify(plan.diagnostics));
  const shown = await page.locator('#diagnostics li.error').allTextContents();
  assert.equal(shown.length, 1, JSON.stringify(shown));
  assert.match(shown[0], /Huge\.md:1:1/);
  assert.ok(shown[0].includes(MESSAGE), shown[0]);
  await saveScreenshot(page, 'too-large-vault');
});

test('an edit of the note too large to read is refused and it stays as it is', async () => {
  await addEdgeByKeyboard(page, 'Huge', 'star', 'Start', 'again');
  await page.waitForFunction(() =>
    /Huge\.md holds 65 MiB, more than the 64 MiB planvault reads of a file; planvault does not write it/.test(
      document.querySelector('#status').textContent,
    ),
  );
  assert.equal(await sizeOf(page, FOLDER, 'Huge.md'), SIZE);
  const plan = await hook('plan');
  assert.ok(!plan.edges.some((e) => e.from === 'Huge'), JSON.stringify(plan.edges));
  assert.deepEqual(plan.diagnostics, ['unreadable-note']);
});

test('without the directory picker, the working copy keeps the file whole and says so', async () => {
  const copyPage = await openPage(app.browser);
  await copyPage.addInitScript(() => {
    Object.defineProperty(window, 'showDirectoryPicker', { value: undefined, configurable: true });
  });
  await copyPage.goto(app.server.url);
  await planShown(copyPage);
  const folder = join(mkdtempSync(join(tmpdir(), 'planvault-e2e-')), 'large');
  mkdirSync(folder);
  for (const [path, text] of Object.entries(NOTES)) writeFileSync(join(folder, path), text);
  const fd = openSync(join(folder, 'Huge.md'), 'w');
  ftruncateSync(fd, SIZE);
  closeSync(fd);
  assert.equal(statSync(join(folder, 'Huge.md')).size, SIZE);
  await copyPage.locator('#open-folder').setInputFiles(folder);
  await copyPage.waitForFunction(() => document.querySelector('#mode').textContent.includes('Read-only copy of “large”'));
  await copyPage.waitForFunction(() => window.planvaultTest.plan()?.nodes.length === 2);
  assert.deepEqual((await copyPage.evaluate(() => window.planvaultTest.plan())).diagnostics, ['unreadable-note']);
  assert.equal(await sizeOf(copyPage, 'working-copy', 'Huge.md'), SIZE, 'copied whole');
  await addEdgeByKeyboard(copyPage, 'Huge', 'star', 'Start', 'again');
  await copyPage.waitForFunction(() => /Huge\.md holds 65 MiB/.test(document.querySelector('#status').textContent));
  // Read again from the copy (the refusal reloads it): still said.
  assert.deepEqual((await copyPage.evaluate(() => window.planvaultTest.plan())).diagnostics, ['unreadable-note']);
  await copyPage.close();
});
