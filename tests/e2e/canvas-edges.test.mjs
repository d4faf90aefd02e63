// Edges on the canvas: a click selects the edge under the pointer (its
// drawn line, bends and label), never a neighbour, even where two edges run
// a few pixels apart; and a keyboard user adds an edge with E, picking the
// target from a list, the same edit a drag makes.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { openOpfsVault } from './support/vault.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();
let page;

// Cards placed (plan.canvas) so that "top"'s edges to "left" and "right"
// leave it a few pixels apart and spread slowly: near-parallel lines.
const card = (id, x, y) => ({ id, type: 'file', file: `${id}.md`, x, y, width: 220, height: 76 });
const NOTES = {
  'top.md': '---\ntype: start\n---\n# Top\n\n## Next\n- yes -> [[left]]\n- [[right]]\n',
  'left.md': '# Left\n',
  'right.md': '# Right\n\n## Next\n- again -> [[top]]\n',
  'plan.canvas': JSON.stringify({
    nodes: [card('top', 300, 0), card('left', 0, 1200), card('right', 240, 1200)],
    edges: [],
  }),
};

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await openOpfsVault(page, 'edges-vault', NOTES, 3);
});

test('a click selects the edge whose drawn path is under the pointer, never its neighbour', async () => {
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0'); // fit
  for (const [from, to] of [['top', 'left'], ['top', 'right'], ['right', 'top']]) {
    for (const t of [0.04, 0.1, 0.25, 0.5, 0.75, 0.9]) {
      const at = await hook('edgePoint', from, to, `at:${t}`);
      await page.mouse.click(at.x, at.y);
      const selected = await hook('selectedEdge');
      assert.deepEqual([selected?.from, selected?.to], [from, to], `${from} → ${to} at ${t}: got ${JSON.stringify(selected)}`);
    }
  }
  // Where "top"'s two edges leave the card they are a few pixels apart.
  const a = await hook('edgePoint', 'top', 'left', 'at:0.02');
  const b = await hook('edgePoint', 'top', 'right', 'at:0.02');
  assert.ok(Math.hypot(a.x - b.x, a.y - b.y) < 12, `close: ${JSON.stringify([a, b])}`);
  // The label belongs to its edge.
  const label = await hook('edgePoint', 'top', 'left', 'label');
  await page.mouse.click(label.x, label.y);
  assert.equal((await hook('selectedEdge')).label, 'yes');
  await saveScreenshot(page, 'canvas-edges-hit');
});

/** The canvas's colour at a page point, as [r, g, b]. */
const pixel = (p) => page.evaluate(({ x, y }) => {
  const canvas = document.getElementById('plan-canvas');
  const r = canvas.getBoundingClientRect();
  const d = window.devicePixelRatio;
  return [...canvas.getContext('2d').getImageData(Math.round((x - r.left) * d), Math.round((y - r.top) * d), 1, 1).data].slice(0, 3);
}, p);

test('E on a focused card picks the target from a filterable list and writes the edge', async () => {
  await page.mouse.move(5, 5); // nothing hovered
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('Escape'); // nothing selected or focused
  await page.keyboard.press('ArrowDown'); // focus lands on the start, "top"
  await page.keyboard.press('ArrowDown'); // then a card below it
  const [from] = await page.evaluate(() => window.planvaultTest.selection());
  assert.ok(from === 'left' || from === 'right', from);
  // The focused card shows its handle (blue); unfocused, it is not drawn.
  const handle = await hook('nodePoint', from, 'handle');
  await page.waitForTimeout(100);
  assert.deepEqual(await pixel(handle), [37, 99, 235], `handle of ${from} drawn`);
  await page.keyboard.press('Escape');
  await page.waitForTimeout(100);
  assert.notDeepEqual(await pixel(handle), [37, 99, 235], 'no handle without focus');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');

  await page.keyboard.press('e');
  const input = page.locator('#picker-input');
  await input.waitFor();
  assert.equal(await input.evaluate((el) => el === document.activeElement), true);
  assert.match(await page.locator('#picker-title').textContent(), new RegExp(`New edge from ${from}`));
  await input.fill('to');
  await page.locator('#picker-list li').first().filter({ hasText: 'Top' }).waitFor();
  assert.equal(await page.locator('#picker-list li').count(), 1);
  await saveScreenshot(page, 'canvas-edges-keyboard-picker');
  await page.keyboard.press('Enter');
  await page.locator('#dialog-input').fill('onwards');
  await page.keyboard.press('Enter');
  await page.evaluate(() => window.planvaultTest.idle());
  const text = await page.evaluate(async (name) => (await (await window.e2eVault.getFileHandle(name)).getFile()).text(), `${from}.md`);
  assert.match(text, /- onwards -> \[\[top\]\]\n$/);
  const p = await page.evaluate(() => window.planvaultTest.plan());
  assert.ok(p.edges.some((e) => e.from === from && e.to === 'top' && e.label === 'onwards'));
  // N cycles through the focused card's edges.
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('n');
  assert.equal((await hook('selectedEdge')).from, from);
});
