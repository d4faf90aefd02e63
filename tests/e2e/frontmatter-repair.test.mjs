// A note whose frontmatter does not parse: its knobs say they cannot be
// read (not the defaults), its diagnostic opens the whole note in an
// editor with the offending line marked, and a save goes through the
// conflict-checked write: written when the disk still has what was read,
// refused (nothing written, the text kept) when the note changed, whether
// the app had seen that change or not. The plan is checked again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp } from './support/app.mjs';
import { openOpfsVault, readOpfsFolder } from './support/vault.mjs';

const app = useApp();
const FOLDER = 'e2e-repair';
const BROKEN = '---\nrole: writer\nstatus: [done\n---\n# Review\n\n## Next\n- [[c]]\n';
const FIXED = BROKEN.replace('[done', 'done');
const VAULT = {
  'a.md': '---\ntype: start\n---\n# Start\n\n## Next\n- [[b]]\n',
  'b.md': BROKEN,
  'c.md': '# Send\n',
};

const openVault = (page) => openOpfsVault(page, FOLDER, VAULT);

const onDisk = async (page) => (await readOpfsFolder(page, FOLDER))['b.md'];
const plan = (page) => page.evaluate(() => window.planvaultTest.plan());

async function writeOutside(page, text) {
  await page.evaluate(async (text) => {
    const w = await (await window.e2eVault.getFileHandle('b.md')).createWritable();
    await w.write(text);
    await w.close();
  }, text);
}

/** Opens the repair editor from b's diagnostic and replaces its text. */
async function editFromDiagnostic(page, text) {
  await page.locator('#diagnostics li.error button', { hasText: 'bad-frontmatter' }).click();
  await page.locator('#note-editor').waitFor();
  await page.fill('#note-editor-text', text);
}

test('the diagnostic opens the whole note with its line marked, and the fix is written and checked', async () => {
  const page = await app.open({ width: 1440, height: 900 });
  await openVault(page);
  assert.ok((await plan(page)).diagnostics.includes('bad-frontmatter'));

  // Selected, b's knobs say they cannot be read instead of the defaults.
  const b = await page.evaluate(() => window.planvaultTest.nodePoint('b', 'body'));
  await page.mouse.click(b.x, b.y);
  const knobs = page.locator('#knobs-unreadable');
  await knobs.waitFor();
  assert.equal((await knobs.locator('dd').allTextContents()).filter((t) => t === 'cannot read: fix the frontmatter').length, 5);
  assert.ok(!(await page.locator('#knob-status').isVisible()), 'no status field showing "pending" as if it were set');
  assert.ok(!(await page.locator('#knob-type').isVisible()));

  // Clicking the diagnostic opens the whole note, frontmatter included.
  await page.locator('#diagnostics li.error button', { hasText: 'bad-frontmatter' }).click();
  await page.locator('#note-editor').waitFor();
  assert.equal(await page.inputValue('#note-editor-text'), BROKEN);
  const line = Number(/^Line (\d+):/.exec(await page.locator("#note-editor-problem").textContent())?.[1]);
  assert.match(await page.locator('#note-editor-problem').textContent(), new RegExp(`^Line ${line}: frontmatter is not valid YAML`));
  const marked = await page.locator('#note-editor mark.bad-line').textContent();
  assert.equal(marked, BROKEN.split('\n')[line - 1], `line ${line} is the one marked`);
  assert.ok(line >= 3 && line <= 4, `the parser's line: ${line}`);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'note-editor-text');
  await saveScreenshot(page, 'frontmatter-repair-open');

  // Escape closes without writing; the focus goes back.
  await page.keyboard.press('Escape');
  await page.locator('#note-editor').waitFor({ state: 'detached' });
  assert.equal(await onDisk(page), BROKEN);

  await editFromDiagnostic(page, FIXED);
  await page.click('#note-editor-save');
  await page.locator('#note-editor').waitFor({ state: 'detached' });
  await page.evaluate(() => window.planvaultTest.idle());
  assert.equal(await onDisk(page), FIXED);
  const after = await plan(page);
  assert.ok(!after.diagnostics.includes('bad-frontmatter'), JSON.stringify(after.diagnostics));
  assert.equal(after.nodes.find((n) => n.id === 'b').status, 'done');
  assert.match(await page.locator('#status').textContent(), /^Saved: edit b\.md/);
  assert.equal(await page.locator('#knobs-unreadable').count(), 0);
  assert.equal(await page.inputValue('#knob-status'), 'done', 'the fixed value is shown and editable');
  await saveScreenshot(page, 'frontmatter-repair-saved');
  assert.deepEqual(page.problems, []);
});

test('a save that still leaves a problem keeps the editor open on the next line', async () => {
  const page = await app.open({ width: 1280, height: 800 });
  await openVault(page);
  const worse = '---\nrole: writer\nstatus: finished\n---\n# Review\n';
  await editFromDiagnostic(page, worse);
  await page.click('#note-editor-save');
  await page.waitForFunction(() => /^Line 3: `status` must be/.test(document.querySelector('#note-editor-problem')?.textContent));
  assert.equal(await page.locator('#note-editor mark.bad-line').textContent(), 'status: finished');
  await page.evaluate(() => window.planvaultTest.idle());
  assert.equal(await onDisk(page), worse);
  assert.deepEqual(page.problems, []);
});

test('a note changed outside since it was opened is never overwritten', async () => {
  const page = await app.open({ width: 1280, height: 800 });
  await openVault(page);
  const outside = BROKEN.replace('# Review', '# Review (edited in Obsidian)');

  // The app saw the change (its poll read it): the editor refuses, keeps the text.
  await editFromDiagnostic(page, FIXED);
  await writeOutside(page, outside);
  await page.evaluate(() => window.planvaultTest.poll());
  await page.click('#note-editor-save');
  await page.locator('#note-editor-refused').waitFor();
  assert.match(await page.locator('#note-editor-refused').textContent(), /^b\.md changed on disk since you opened it here, so nothing was written/);
  assert.equal(await page.inputValue('#note-editor-text'), FIXED, 'the typing is kept');
  assert.equal(await onDisk(page), outside);
  await page.keyboard.press('Escape');

  // The app did not see it (no poll): the writer's check against the disk refuses.
  await page.evaluate(() => window.planvaultTest.setPolling(false));
  await editFromDiagnostic(page, FIXED);
  await writeOutside(page, BROKEN);
  await page.click('#note-editor-save');
  await page.evaluate(() => window.planvaultTest.idle());
  await page.waitForFunction(() => /changed outside planvault/.test(document.querySelector('#status').textContent));
  assert.match(await page.locator('#status').textContent(), /^b\.md changed outside planvault, so “edit b\.md” was not written/);
  assert.equal(await onDisk(page), BROKEN);
  assert.equal(await page.inputValue('.rejected textarea'), FIXED, 'what the save would have written stays readable');
  await saveScreenshot(page, 'frontmatter-repair-conflict');
  assert.deepEqual(page.problems, []);
});
