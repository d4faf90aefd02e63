// The first visit copies the bundled example vault into origin-private
// storage. A reload while that copy is being written must not leave a
// broken example: the next visit finishes the copy (web/src/app.rs
// `open_example`, the `.example-copied` marker written last).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();

/** The plan as the app shows it, for comparing two visits. */
const shown = (page) =>
  page.evaluate(() => {
    const p = window.planvaultTest.plan();
    return { nodes: p.nodes, edges: p.edges, diagnostics: p.diagnostics };
  });

/** The example's notes in origin-private storage: path → text. */
const stored = (page) =>
  page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const dir = await root.getDirectoryHandle('example-vault');
    const out = {};
    for await (const [name, handle] of dir.entries()) {
      // Not Chromium's swap file of a writer never closed.
      if (handle.kind === 'file' && !name.endsWith('.crswap')) out[name] = await (await handle.getFile()).text();
    }
    return out;
  });

test('a reload during the first copy of the example leaves a whole example', async () => {
  // The example as a visit that was not interrupted shows and stores it.
  const clean = await app.open();
  await planShown(clean);
  const expected = await shown(clean);
  const expectedFiles = await stored(clean);
  await clean.context().close();
  const notes = Object.keys(expectedFiles).filter((p) => p.endsWith('.md'));
  assert.ok(notes.length >= 3, `the example has notes: ${notes}`);
  assert.ok('.example-copied' in expectedFiles, 'a finished copy is marked');

  // First visit of a new profile: the second note's writer never closes (the
  // page reloads first), so the copy stops with one note written, one
  // created empty and the rest missing. The reload runs the app unhindered.
  const page = await app.open(undefined, {
    init: () => {
      if (sessionStorage.getItem('e2e-reloaded')) return;
      sessionStorage.setItem('e2e-reloaded', '1');
      const close = FileSystemWritableFileStream.prototype.close;
      window.e2eClosed = 0;
      FileSystemWritableFileStream.prototype.close = function () {
        window.e2eClosed += 1;
        if (window.e2eClosed >= 2) return new Promise(() => {});
        return close.call(this);
      };
    },
  });
  await page.waitForFunction(() => window.e2eClosed >= 2);
  const cut = await stored(page);
  assert.equal(Object.values(cut).filter((t) => t !== '').length, 1, `one note written: ${Object.keys(cut)}`);
  assert.ok(!('.example-copied' in cut), 'not marked as copied');

  await page.reload();
  await planShown(page);
  assert.deepEqual(await shown(page), expected, 'the example as an uninterrupted first visit shows it');
  assert.deepEqual(await stored(page), expectedFiles, 'every note stored whole, and the copy marked');
  await saveScreenshot(page, 'example-after-interrupted-copy');

  // Once marked, a note the person edited is not copied over on later visits.
  const first = notes[0];
  await page.evaluate(async (name) => {
    const root = await navigator.storage.getDirectory();
    const dir = await root.getDirectoryHandle('example-vault');
    const w = await (await dir.getFileHandle(name)).createWritable();
    await w.write('---\ntype: start\n---\n# Edited by the person\n');
    await w.close();
  }, first);
  await page.reload();
  await planShown(page);
  assert.equal((await stored(page))[first], '---\ntype: start\n---\n# Edited by the person\n');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a folder opened while the start-up still looks for a remembered one stays open', async () => {
  // The start-up first asks IndexedDB for a remembered folder; hold that
  // until the test's folder is open, as a slow disk would. Before, the
  // start-up then opened the example over the folder.
  const page = await app.open(undefined, {
    init: () => {
      const open = indexedDB.open.bind(indexedDB);
      let release;
      const released = new Promise((done) => (release = done));
      window.releaseStartup = release;
      indexedDB.open = (...args) => {
        const request = open(...args);
        // Its outcome reaches the app only once released (an upgrade
        // cannot wait: its store is made during the event).
        const add = request.addEventListener.bind(request);
        for (const name of ['success', 'error']) {
          let handler = null;
          Object.defineProperty(request, `on${name}`, {
            set(f) { handler = f; },
            get() { return handler; },
          });
          add(name, (event) => released.then(() => handler?.call(request, event)));
        }
        return request;
      };
    },
  });
  await page.waitForFunction(() => window.planvaultTest?.openHandle);
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    const dir = await root.getDirectoryHandle('opened-first', { create: true });
    const w = await (await dir.getFileHandle('only.md', { create: true })).createWritable();
    await w.write('---\ntype: start\n---\n# Opened first\n');
    await w.close();
    await window.planvaultTest.openHandle(dir);
  });
  assert.match(await page.locator('#mode').textContent(), /opened-first/);
  await page.evaluate(() => window.releaseStartup());
  await page.waitForFunction(() => window.planvaultTest.opensSettled());
  await page.waitForTimeout(300);
  assert.match(await page.locator('#mode').textContent(), /opened-first/, 'the start-up did not open the example over it');
  assert.deepEqual((await page.evaluate(() => window.planvaultTest.plan())).nodes.map((n) => n.id), ['only']);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
