// Keyboard editing on the canvas, and the read-only mode for browsers
// without the directory picker: a folder opened through
// <input webkitdirectory> is copied into the origin-private file system,
// edited there, and downloaded as a zip.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPage, saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();

const NOTES = {
  'start.md': '---\ntype: start\n---\n# Start here\n\n## Next\n- [[work]]\n',
  'work.md': '# Do the work\n\n## Next\n- done -> [[finish]]\n- [[missing note]]\n',
  'finish.md': '# Finish\n',
};

async function ready(page) {
  await page.goto(app.server.url);
  await planShown(page);
}

test('keyboard: arrows move between nodes, N picks an edge, Delete removes it, Ctrl+Z restores', async () => {
  const page = await openPage(app.browser);
  await ready(page);
  await writePrivateFolder(page, 'keys-vault', NOTES);
  await page.evaluate(async () => {
    window.e2eVault = await (await navigator.storage.getDirectory()).getDirectoryHandle('keys-vault');
    await window.planvaultTest.openHandle(window.e2eVault);
  });
  const read = (name) => page.evaluate(async (name) => {
    const f = await (await window.e2eVault.getFileHandle(name)).getFile();
    return f.text();
  }, name);

  // The missing link is reported and drawn as a stub.
  const p = await page.evaluate(() => window.planvaultTest.plan());
  assert.ok(p.diagnostics.includes('dangling-edge'), JSON.stringify(p.diagnostics));
  await page.locator('#diagnostics li.error button').first().waitFor();

  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('ArrowDown'); // focus lands on the start
  await page.keyboard.press('Enter');
  await page.locator('#panel-title').filter({ hasText: 'Start here' }).waitFor();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.locator('#panel-title').filter({ hasText: 'Do the work' }).waitFor();
  await page.keyboard.press('n'); // first edge out of "work"
  await page.locator('#panel-title').filter({ hasText: 'Edge work → finish' }).waitFor();
  await page.keyboard.press('n'); // the dangling one
  await page.locator('#panel-title').filter({ hasText: 'Edge work → missing note' }).waitFor();
  await saveScreenshot(page, 'keyboard-dangling-edge');
  await page.keyboard.press('Delete');
  await page.evaluate(() => window.planvaultTest.idle());
  assert.equal(await read('work.md'), '# Do the work\n\n## Next\n- done -> [[finish]]\n');
  await page.keyboard.press('Control+z');
  await page.evaluate(() => window.planvaultTest.idle());
  assert.equal(await read('work.md'), NOTES['work.md']);
  // Clicking a diagnostic focuses its node.
  await page.locator('#diagnostics li.error button').first().click();
  await page.locator('#panel-title').filter({ hasText: 'Do the work' }).waitFor();
  await page.close();
});

test('without the directory picker: read-only copy, edits kept in the browser, zip download', async () => {
  const page = await openPage(app.browser);
  await page.addInitScript(() => {
    Object.defineProperty(window, 'showDirectoryPicker', { value: undefined, configurable: true });
  });
  await ready(page);
  const folder = join(mkdtempSync(join(tmpdir(), 'planvault-e2e-')), 'my-plan');
  mkdirSync(join(folder, '.obsidian'), { recursive: true });
  writeFileSync(join(folder, '.obsidian', 'app.json'), '{}');
  for (const [path, text] of Object.entries(NOTES)) writeFileSync(join(folder, path), text);

  const input = page.locator('#open-folder');
  assert.equal(await page.locator('#open-vault').count(), 0, 'no picker button without the picker');
  await input.setInputFiles(folder);
  await page.waitForFunction(() => document.querySelector('#mode').textContent.includes('Read-only copy of “my-plan”'));
  const p = await page.evaluate(() => window.planvaultTest.plan());
  assert.deepEqual(p.nodes.map((n) => n.id).sort(), ['finish', 'start', 'work']);

  // An edit goes to the working copy.
  const from = await page.evaluate(() => window.planvaultTest.nodePoint('finish', 'handle'));
  const to = await page.evaluate(() => window.planvaultTest.nodePoint('start', 'body'));
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 8 });
  await page.mouse.up();
  await page.locator('#dialog-input').fill('again');
  await page.keyboard.press('Enter');
  await page.evaluate(() => window.planvaultTest.idle());
  await saveScreenshot(page, 'fallback-read-only-copy');
  // The folder on disk is untouched.
  assert.equal(readFileSync(join(folder, 'finish.md'), 'utf8'), NOTES['finish.md']);

  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download').click()]);
  assert.equal(download.suggestedFilename(), 'my-plan.zip');
  const zipped = readFileSync(await download.path()).toString('latin1');
  assert.ok(zipped.startsWith('PK'), 'a zip archive');
  assert.ok(zipped.includes('# Finish\n\n## Next\n- again -> [[start]]\n'), 'the changed note is in the zip');
  assert.ok(zipped.includes('work.md') && !zipped.includes('.obsidian'), 'notes only');
  await page.close();
});

test('a folder opened while the example is still loading stays open when the example arrives', async () => {
  // The start-up reads the example from origin-private storage; hold that
  // read until the test's folder is open, as a slow disk would.
  const page = await app.open(undefined, {
    init: () => {
      const getDirectoryHandle = FileSystemDirectoryHandle.prototype.getDirectoryHandle;
      let release;
      const released = new Promise((done) => (release = done));
      window.releaseExample = release;
      window.exampleRead = null;
      FileSystemDirectoryHandle.prototype.getDirectoryHandle = async function (name, options) {
        if (name !== 'example-vault') return getDirectoryHandle.call(this, name, options);
        await released;
        const handle = await getDirectoryHandle.call(this, name, options);
        // The app reads the folder next: note when it has listed it.
        const entries = handle.entries.bind(handle);
        handle.entries = async function* () {
          yield* entries();
          window.exampleRead = Date.now();
        };
        return handle;
      };
    },
  });
  await page.waitForFunction(() => window.planvaultTest?.openHandle);
  await writePrivateFolder(page, 'opened-early', NOTES);
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle('opened-early'));
  });
  assert.match(await page.locator('#mode').textContent(), /opened-early/);

  await page.evaluate(() => window.releaseExample());
  await page.waitForFunction(() => window.exampleRead !== null, null, { timeout: 10_000 });
  // The example's open has finished, whatever it did after its read.
  await page.waitForFunction(() => window.planvaultTest.opensSettled());
  assert.match(await page.locator('#mode').textContent(), /opened-early/, 'the folder opened last stays open');
  const plan = await page.evaluate(() => window.planvaultTest.plan());
  assert.deepEqual(plan.nodes.map((n) => n.id).sort(), ['finish', 'start', 'work']);
  assert.match(await page.locator('#status').textContent(), /Opened “opened-early”: 3 notes/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a folder dropped on the page opens as the vault; a dropped file is refused with a hint', async () => {
  const page = await openPage(app.browser);
  await ready(page);
  // A synthetic drop cannot carry a real folder, so the browser's
  // getAsFileSystemHandle is answered with an origin-private folder (or, for
  // the second drop, a file in it); everything after it is the app's own code.
  await writePrivateFolder(page, 'dropped-vault', NOTES);
  const outcome = await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('dropped-vault');
    const drop = async (handle) => {
      DataTransferItem.prototype.getAsFileSystemHandle = async () => handle;
      const transfer = new DataTransfer();
      transfer.items.add(new File(['x'], 'dropped-vault'));
      const canvas = document.querySelector('#plan-canvas');
      const over = new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true });
      canvas.dispatchEvent(over);
      canvas.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      return over.defaultPrevented;
    };
    return { accepted: await drop(dir) };
  });
  assert.equal(outcome.accepted, true, 'dragover is accepted, so the browser allows the drop');
  await page.waitForFunction(() => document.querySelector('#mode').textContent.includes('dropped-vault'), null, { timeout: 10_000 });
  const plan = await page.evaluate(() => window.planvaultTest.plan());
  assert.equal(plan.nodes.length, 3, JSON.stringify(plan.nodes));
  assert.match(await page.locator('#status').textContent(), /Opened “dropped-vault”: 3 notes/);

  await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('dropped-vault');
    DataTransferItem.prototype.getAsFileSystemHandle = async () => dir.getFileHandle('work.md');
    const transfer = new DataTransfer();
    transfer.items.add(new File(['x'], 'work.md'));
    document.querySelector('#plan-canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(() => document.querySelector('#status').textContent.includes('not a file'), null, { timeout: 10_000 });
  assert.ok((await page.locator('#mode').textContent()).includes('dropped-vault'), 'the open vault stays');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
