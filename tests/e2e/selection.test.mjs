// Multi-select on the canvas (Shift-drag a marquee, Shift-click), moving the
// selection together (positions kept in plan.canvas), and the layout at a
// large screen size.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();

test('marquee and Shift-click select several cards, which then move together', async () => {
  const page = await app.open({ width: 1920, height: 1080 });
  await planShown(page);
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry('select-vault', { recursive: true }); } catch (_) {}
    const dir = await root.getDirectoryHandle('select-vault', { create: true });
    const files = {
      'a.md': '---\ntype: start\n---\n# A\n\n## Next\n- [[b]]\n- [[c]]\n',
      'b.md': '# B\n\n## Next\n- [[d]]\n',
      'c.md': '# C\n\n## Next\n- [[d]]\n',
      'd.md': '# D\n',
    };
    for (const [path, text] of Object.entries(files)) {
      const w = await (await dir.getFileHandle(path, { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
    window.e2eVault = dir;
    await window.planvaultTest.openHandle(dir);
  });
  await saveScreenshot(page, 'selection-large-screen');
  const point = (id) => page.evaluate((id) => window.planvaultTest.nodePoint(id, 'body'), id);
  const [b, c] = [await point('b'), await point('c')];

  // Shift-drag from empty canvas around B and C (they share a layer).
  const left = Math.min(b.x, c.x) - 140;
  const right = Math.max(b.x, c.x) + 140;
  await page.keyboard.down('Shift');
  await page.mouse.move(left, b.y - 40);
  await page.mouse.down();
  await page.mouse.move(right, b.y + 60, { steps: 8 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  let selected = await page.evaluate(() => window.planvaultTest.selection());
  assert.deepEqual([...selected].sort(), ['b', 'c']);

  // Shift-click adds D, another Shift-click removes it.
  const d = await point('d');
  await page.keyboard.down('Shift');
  await page.mouse.click(d.x, d.y);
  selected = await page.evaluate(() => window.planvaultTest.selection());
  assert.deepEqual([...selected].sort(), ['b', 'c', 'd']);
  await page.mouse.click(d.x, d.y);
  await page.keyboard.up('Shift');
  selected = await page.evaluate(() => window.planvaultTest.selection());
  assert.deepEqual([...selected].sort(), ['b', 'c']);

  // Dragging one selected card moves both.
  await page.mouse.move(b.x, b.y);
  await page.mouse.down();
  await page.mouse.move(b.x + 60, b.y + 100, { steps: 8 });
  await page.mouse.up();
  await page.evaluate(() => window.planvaultTest.idle());
  const [b2, c2, d2] = [await point('b'), await point('c'), await point('d')];
  for (const [before, after] of [[b, b2], [c, c2]]) {
    assert.ok(Math.abs(after.x - before.x - 60) < 2 && Math.abs(after.y - before.y - 100) < 2, JSON.stringify({ before, after }));
  }
  assert.ok(Math.abs(d2.x - d.x) < 2 && Math.abs(d2.y - d.y) < 2, 'an unselected card stays');
  const canvas = JSON.parse(await page.evaluate(async () => (await (await window.e2eVault.getFileHandle('plan.canvas')).getFile()).text()));
  assert.deepEqual(canvas.nodes.map((n) => n.file).sort(), ['a.md', 'b.md', 'c.md', 'd.md']);
  await saveScreenshot(page, 'selection-moved');
  assert.deepEqual(page.problems, []);
});
