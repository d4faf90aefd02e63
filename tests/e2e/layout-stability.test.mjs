// An edit moves no card it does not add: adding an edge, renaming a note
// and adding a note leave every other card where it was (the layout places
// only what is new); "Auto layout" is the one way to lay everything out again.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { openOpfsVault } from './support/vault.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();
let page;

// No plan.canvas: every card is where the automatic layout put it.
const NOTES = {
  'a.md': '---\ntype: start\n---\n# A\n\n## Next\n- [[b]]\n- [[c]]\n',
  'b.md': '# B\n\n## Next\n- [[d]]\n',
  'c.md': '# C\n',
  'd.md': '# D\n',
};

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);
/** Each card's top-left corner in the world, by id. */
async function corners() {
  const boxes = await hook('cardBoxes');
  return Object.fromEntries(Object.entries(boxes).map(([id, b]) => [id, [b.worldX, b.worldY]]));
}
const idle = () => hook('idle');

async function drag(from, to) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 8 });
  await page.mouse.up();
}

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await openOpfsVault(page, 'stable-vault', NOTES, 4);
});

test('adding an edge, renaming and adding a note move no other card; Auto layout does', async () => {
  const before = await corners();
  await saveScreenshot(page, 'layout-stability-before');

  // An edge c -> d by dragging from c's handle onto d.
  await drag(await hook('nodePoint', 'c', 'handle'), await hook('nodePoint', 'd', 'body'));
  await page.locator('#dialog-input').fill('');
  await page.keyboard.press('Enter');
  await idle();
  const p = await hook('plan');
  assert.ok(p.edges.some((e) => e.from === 'c' && e.to === 'd'), JSON.stringify(p.edges));
  assert.deepEqual(await corners(), before, 'no card moved for the new edge');
  await saveScreenshot(page, 'layout-stability-after-edge');

  // Rename c to "sea" (double-click the card): the card stays.
  const c = await hook('nodePoint', 'c', 'body');
  await page.mouse.dblclick(c.x, c.y);
  await page.locator('#dialog-input').fill('sea');
  await page.keyboard.press('Enter');
  await idle();
  const renamed = await corners();
  const expected = { ...before, sea: before.c };
  delete expected.c;
  assert.deepEqual(renamed, expected, 'the renamed card kept its place');

  // A new note: the others stay.
  await page.locator('#new-node').click();
  await page.locator('#dialog-input').fill('Extra');
  await page.keyboard.press('Enter');
  await idle();
  const grown = await corners();
  for (const [id, at] of Object.entries(expected)) assert.deepEqual(grown[id], at, `${id} moved`);
  assert.ok(grown.Extra, JSON.stringify(Object.keys(grown)));
  await saveScreenshot(page, 'layout-stability-after-note');

  // Auto layout lays the whole plan out again (the edge c -> d changes it).
  await page.getByRole('button', { name: 'Auto layout' }).click();
  await idle();
  const afresh = await corners();
  assert.ok(Object.keys(expected).some((id) => JSON.stringify(afresh[id]) !== JSON.stringify(expected[id])),
    `Auto layout moved cards: ${JSON.stringify(afresh)}`);
});
