// Edits while the notes change outside the app (Obsidian, a sync, a git
// pull): what a dialog, the body editor or a drag was opened on is what it
// changes, whatever moved in the plan meanwhile; an edit refused because
// its note changed takes neither the edits queued after it nor the undo
// history with it; a knob edit takes no other property of its note.
// Regression tests for a red-team pass of the app's writes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useApp } from './support/app.mjs';
import { openOpfsVault, readOpfsFolder } from './support/vault.mjs';

const app = useApp();

const VAULT = {
  'm.md': '---\ntype: start\n---\n# M\n\nM has its own text.\n\n## Next\n- [[x]]\n- [[y]]\n',
  'x.md': '# X\n\nX matters; it stays.\n',
  'y.md': '# Y\n\nOld text of Y.\n',
};

async function selectNode(page, id) {
  const p = await page.evaluate((id) => window.planvaultTest.nodePoint(id, 'body'), id);
  await page.mouse.click(p.x, p.y);
}

/** A note Obsidian saves: sorted before x, so every later note's place in the plan moves. */
async function saveOutside(page, name, text) {
  await page.evaluate(
    async ([name, text]) => {
      const w = await (await window.e2eVault.getFileHandle(name, { create: true })).createWritable();
      await w.write(text);
      await w.close();
    },
    [name, text],
  );
}

async function pickedUp(page, nodes) {
  await page.evaluate(() => window.planvaultTest.poll());
  await page.waitForFunction((n) => window.planvaultTest.plan().nodes.length === n, nodes);
}

const idle = (page) => page.evaluate(() => window.planvaultTest.idle());

/**
 * A page with `files` open as the vault `folder` (`nodes` notes drawn),
 * its own polling off: each test says when the app looks at the disk.
 * `init` runs in the page before the app.
 */
async function openQuiet(folder, files, nodes, init) {
  const page = await app.open({ width: 1440, height: 900 }, init ? { init } : {});
  await openOpfsVault(page, folder, files, nodes);
  await page.evaluate(() => window.planvaultTest.setPolling(false));
  return page;
}

test('the delete dialog deletes the note it named, after a note appeared on disk', async () => {
  const page = await openQuiet('outside-delete', VAULT, 3);
  await selectNode(page, 'y');
  await page.getByRole('button', { name: 'Delete…' }).click();
  assert.equal(await page.locator('#dialog-title').textContent(), 'Delete y?');
  await saveOutside(page, 'a.md', '# A new note\n');
  await pickedUp(page, 4);
  await page.click('#dialog-ok');
  await idle(page);
  const files = await readOpfsFolder(page, 'outside-delete');
  assert.equal(files['x.md'], VAULT['x.md'], 'x.md kept');
  assert.ok(!('y.md' in files), 'y.md deleted');
  assert.equal(files['m.md'], VAULT['m.md'].replace('- [[y]]\n', ''));
});

test('the rename dialog renames the note it named, after a note appeared on disk', async () => {
  const page = await openQuiet('outside-rename', VAULT, 3);
  const at = await page.evaluate(() => window.planvaultTest.nodePoint('y', 'body'));
  await page.mouse.dblclick(at.x, at.y);
  await page.locator('#dialog-input').waitFor();
  await saveOutside(page, 'a.md', '# A new note\n');
  await pickedUp(page, 4);
  await page.fill('#dialog-input', 'y renamed');
  await page.click('#dialog-ok');
  await idle(page);
  const files = await readOpfsFolder(page, 'outside-rename');
  assert.equal(files['x.md'], VAULT['x.md']);
  assert.equal(files['y renamed.md'], VAULT['y.md']);
  assert.ok(!('y.md' in files));
});

test('the rename dialog of a note deleted on disk meanwhile changes nothing and says so', async () => {
  const page = await openQuiet('outside-gone', VAULT, 3);
  const at = await page.evaluate(() => window.planvaultTest.nodePoint('y', 'body'));
  await page.mouse.dblclick(at.x, at.y);
  await page.locator('#dialog-input').waitFor();
  await page.evaluate(() => window.e2eVault.removeEntry('y.md'));
  await pickedUp(page, 2);
  await page.fill('#dialog-input', 'y renamed');
  await page.click('#dialog-ok');
  await idle(page);
  assert.match(await page.locator('footer').textContent(), /Not done: y is no longer in the vault/);
  const files = await readOpfsFolder(page, 'outside-gone');
  assert.deepEqual(Object.keys(files).sort(), ['m.md', 'x.md']);
  assert.equal(files['x.md'], VAULT['x.md']);
});

test('text typed for a note is saved into that note, after a note appeared on disk', async () => {
  const page = await openQuiet('outside-body', VAULT, 3);
  await selectNode(page, 'y');
  await page.fill('#node-body', '# Y\n\nNew text typed for Y.\n');
  await saveOutside(page, 'a.md', '# A new note\n');
  await pickedUp(page, 4);
  await page.getByText('Save note text').click();
  await idle(page);
  const files = await readOpfsFolder(page, 'outside-body');
  assert.equal(files['x.md'], VAULT['x.md'], 'x.md untouched');
  assert.equal(files['y.md'], '# Y\n\nNew text typed for Y.\n');
});

test('an edit queued behind a refused one stays readable, and the history keeps what was written', async () => {
  // A slow disk (a network share): each read of a file takes 1.5 s while
  // `__slow` is set, so the second edit is queued before the first is checked.
  const slowDisk = () => {
    const getFile = FileSystemFileHandle.prototype.getFile;
    FileSystemFileHandle.prototype.getFile = async function () {
      if (window.__slow) await new Promise((r) => setTimeout(r, 1500));
      return getFile.call(this);
    };
  };
  const vault = { ...VAULT, 'z.md': '---\nstatus: pending\n---\n# Z\n' };
  vault['m.md'] = vault['m.md'] + '- [[z]]\n';
  const page = await openQuiet('outside-queue', vault, 4, slowDisk);
  // A delete that lands: its undo is all that holds x's text.
  await selectNode(page, 'x');
  await page.getByRole('button', { name: 'Delete…' }).click();
  await page.click('#dialog-ok');
  await idle(page);
  // z changes on disk; the app has not looked yet.
  await saveOutside(page, 'z.md', '---\nstatus: pending\n---\n# Z\n\nEdited in Obsidian.\n');
  await page.evaluate(() => { window.__slow = true; });
  await selectNode(page, 'z');
  await page.selectOption('#knob-status', 'done');
  await selectNode(page, 'y');
  await page.fill('#node-body', '# Y\n\nA paragraph I typed for ten minutes.\n');
  await page.getByText('Save note text').click();
  await page.evaluate(() => { window.__slow = false; });
  await idle(page);
  const files = await readOpfsFolder(page, 'outside-queue');
  assert.equal(files['z.md'], '---\nstatus: pending\n---\n# Z\n\nEdited in Obsidian.\n', 'the change on disk stays');
  assert.equal(files['y.md'], VAULT['y.md'], 'not written: made on top of the refused edit');
  const shown = await page.locator('section.rejected textarea').evaluateAll((areas) => areas.map((a) => a.value));
  assert.ok(shown.some((t) => t.includes('ten minutes')), `the typed text is readable: ${JSON.stringify(shown)}`);
  assert.match(await page.locator('#rejected-title').textContent(), /Not written: set status of z; edit body of y/);
  assert.match(await page.locator('footer').textContent(), /The 1 edit\(s\) made after it were not written either/);
  // Undo still brings back the note deleted before.
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('Control+z');
  await idle(page);
  assert.equal((await readOpfsFolder(page, 'outside-queue'))['x.md'], VAULT['x.md']);
});

test('a knob edit never takes another property of its note, and keeps the line\'s comment', async () => {
  const vault = {
    'm.md': '---\ntype: start\nstatus: active\rowner: ana\rdue: 2025-01-31\n---\n# M\n\n## Next\n- [[x]]\n',
    'x.md': '---\nstatus: active   # blocked on legal, ask Ana\n---\n# X\n',
  };
  const page = await openQuiet('outside-knobs', vault, 2);
  await selectNode(page, 'm');
  await page.selectOption('#knob-status', 'done');
  await idle(page);
  assert.match(await page.locator('footer').textContent(), /would change the note's other properties too/);
  await selectNode(page, 'x');
  await page.selectOption('#knob-status', 'done');
  await idle(page);
  const files = await readOpfsFolder(page, 'outside-knobs');
  assert.equal(files['m.md'], vault['m.md'], 'owner and due are still there');
  assert.equal(files['x.md'], '---\nstatus: done   # blocked on legal, ask Ana\n---\n# X\n');
});

test('a note saved outside while a change of several notes is written is not written over', async () => {
  // Obsidian saves B.md just as the rename starts writing (after its check).
  const raceB = () => {
    const createWritable = FileSystemFileHandle.prototype.createWritable;
    FileSystemFileHandle.prototype.createWritable = async function (...args) {
      if (window.__race && this.name !== 'B.md') {
        window.__race = false;
        const b = await window.e2eVault.getFileHandle('B.md');
        const w = await createWritable.call(b);
        await w.write('# B\n\nSee [[Target]].\n\nTyped in Obsidian just now.\n');
        await w.close();
      }
      return createWritable.apply(this, args);
    };
  };
  const vault = {
    'A.md': '---\ntype: start\n---\n# A\n\n## Next\n- [[Target]]\n',
    'B.md': '# B\n\nSee [[Target]].\n',
    'Target.md': '# Target\n',
  };
  const page = await openQuiet('outside-race', vault, 3, raceB);
  await page.evaluate(() => { window.__race = true; });
  const at = await page.evaluate(() => window.planvaultTest.nodePoint('Target', 'body'));
  await page.mouse.dblclick(at.x, at.y);
  await page.locator('#dialog-input').fill('New Name');
  await page.keyboard.press('Enter');
  await idle(page);
  const files = await readOpfsFolder(page, 'outside-race');
  assert.deepEqual(
    files,
    { ...vault, 'B.md': '# B\n\nSee [[Target]].\n\nTyped in Obsidian just now.\n' },
    'the save kept, the rename put back whole',
  );
  assert.match(await page.locator('footer').textContent(), /B\.md changed outside planvault/);
});
