// Go to note: Ctrl+K (or "/") opens a box that finds any note by title or
// path; arrow keys move through the matches, Enter centres the view on the
// note and selects it.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();
let page;
const N = 300;

function notes() {
  const files = {};
  for (let i = 0; i < N; i++) {
    const next = i + 1 < N ? `- [[step-${i + 1}]]` : '- [[reports/quarterly/numbers]]';
    files[`step-${i}.md`] = `${i === 0 ? '---\ntype: start\n---\n' : ''}# Step ${i}\n\n## Next\n${next}\n`;
  }
  files['reports/quarterly/numbers.md'] = '# Check the figures\n';
  return files;
}

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  // Nested folders: written one by one.
  await page.evaluate(async (files) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry('search-vault', { recursive: true }); } catch (_) {}
    const dir = await root.getDirectoryHandle('search-vault', { create: true });
    for (const [path, text] of Object.entries(files)) {
      const parts = path.split('/');
      let d = dir;
      for (const part of parts.slice(0, -1)) d = await d.getDirectoryHandle(part, { create: true });
      const w = await (await d.getFileHandle(parts.at(-1), { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
    await window.planvaultTest.openHandle(dir);
  }, notes());
  await page.waitForFunction((n) => window.planvaultTest.plan()?.nodes.length === n, N + 1);
});

/** Whether the card of `id` is at the middle of the canvas. */
async function centred(id) {
  const box = (await hook('cardBoxes'))[id];
  const canvas = await page.locator('#plan-canvas').boundingBox();
  const dx = box.x + box.width / 2 - canvas.width / 2;
  const dy = box.y + box.height / 2 - canvas.height / 2;
  return Math.hypot(dx, dy) < 2;
}

test('Ctrl+K finds a note by its folder path; Enter centres and selects it', async () => {
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0'); // the whole plan, far out
  assert.ok((await hook('viewport')).zoom < 0.35);
  await page.keyboard.press('Control+k');
  const input = page.locator('#picker-input');
  await input.waitFor();
  assert.equal(await input.evaluate((el) => el === document.activeElement), true);
  await input.fill('quarterly/num');
  await page.locator('#picker-list li').first().filter({ hasText: 'Check the figures' }).waitFor();
  await saveScreenshot(page, 'search-go-to');
  await page.keyboard.press('Enter');
  await page.locator('#picker-input').waitFor({ state: 'detached' });
  assert.deepEqual(await hook('selection'), ['reports/quarterly/numbers']);
  assert.ok(await centred('reports/quarterly/numbers'), 'centred');
  assert.ok((await hook('viewport')).zoom >= 0.8, 'near enough to read');
  await page.locator('#panel-title').filter({ hasText: 'Check the figures' }).waitFor();
  await saveScreenshot(page, 'search-went-to');
});

test('"/" opens it too; arrows move through the matches, Escape closes', async () => {
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('/');
  const input = page.locator('#picker-input');
  await input.waitFor();
  await input.fill('step 12');
  // Best first: every word in the title, shortest title first.
  const first = page.locator('#picker-list li').first();
  await first.filter({ hasText: 'Step 12' }).waitFor();
  const titles = await page.locator('#picker-list .picker-title').allTextContents();
  assert.deepEqual(titles.slice(0, 3), ['Step 12', 'Step 112', 'Step 120']);
  assert.equal(await first.getAttribute('aria-selected'), 'true');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.locator('#picker-list li').nth(2).getAttribute('aria-selected'), 'true');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  assert.deepEqual(await hook('selection'), ['step-112']);
  assert.ok(await centred('step-112'), 'centred');
  // Nothing found says so; Escape closes.
  await page.keyboard.press('Control+k');
  await input.fill('zzzz');
  await page.locator('.picker-empty').waitFor();
  await page.keyboard.press('Escape');
  await input.waitFor({ state: 'detached' });
  assert.deepEqual(await hook('selection'), ['step-112'], 'Escape changes nothing');
  // The toolbar's button opens it as well.
  await page.locator('#go-to').click();
  await input.waitFor();
  await page.keyboard.press('Escape');
});
