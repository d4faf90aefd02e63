// The list view (toolbar → List): the plan as an ARIA tree a keyboard walks
// (one Tab stop, arrow keys, Home/End, Right/Left to open and close a node),
// in step with the canvas both ways, with edits, outside changes and a
// run's statuses showing as they happen, without losing the focused item.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp } from './support/app.mjs';
import { openOpfsVault, waitForRun } from './support/vault.mjs';

const app = useApp();
const FOLDER = 'e2e-list';
const VAULT = {
  'a.md': '---\ntype: start\n---\n# Start here\n\n## Next\n- ok -> [[b]]\n- [[c]]\n',
  'b.md': '# Review\n\n## Next\n- [[d]]\n',
  'c.md': '# Check\n\n## Next\n- [[missing]]\n',
  'd.md': '# Done\n',
};

const openVault = (page, files = VAULT) => openOpfsVault(page, FOLDER, files);

const focused = (page) => page.evaluate(() => document.activeElement?.id ?? '');
const attr = (page, id, name) => page.locator(`#${id}`).getAttribute(name);
const tabStops = (page) => page.evaluate(() => [...document.querySelectorAll('[role="tree"] [tabindex="0"]')].map((e) => e.id));

async function writeOutside(page, path, text) {
  await page.evaluate(async ([path, text]) => {
    const w = await (await window.e2eVault.getFileHandle(path, { create: true })).createWritable();
    await w.write(text);
    await w.close();
    await window.planvaultTest.poll();
  }, [path, text]);
}

test('the list is a tree a keyboard walks, in step with the canvas and with every edit', async () => {
  const page = await app.open({ width: 1440, height: 900 });
  await openVault(page);
  assert.equal(await attr(page, 'list-toggle', 'aria-pressed'), 'false');
  await page.click('#list-toggle');
  assert.equal(await attr(page, 'list-toggle', 'aria-pressed'), 'true');
  const tree = page.locator('#plan-list [role="tree"]');
  await tree.waitFor();

  // Nodes in plan order, each named by its title and summary (not its children).
  const titles = await page.locator('li.list-node > .list-title').allTextContents();
  assert.deepEqual(titles, ['Start here', 'Review', 'Check', 'Done']);
  // A flat tree: a node's edges and diagnostics follow it, one level down.
  assert.equal(await attr(page, 'list-n-a', 'aria-level'), '1');
  assert.equal(await attr(page, 'list-e-a-8', 'aria-level'), '2');
  // Named by its own text: Chromium's accessibility tree says so.
  const snapshot = await page.locator('#plan-list [role="tree"]').ariaSnapshot();
  assert.match(snapshot, /treeitem "Start here start · pending" \[expanded\]/);
  assert.match(snapshot, /treeitem "ok → Review" \[level=2\]/);
  assert.match(await page.locator('#list-n-a').textContent(), /Start here\s*start · pending/);
  assert.equal(await attr(page, 'list-n-a', 'aria-expanded'), 'true');
  assert.equal(await attr(page, 'list-n-d', 'aria-expanded'), null, 'a node with nothing under it is no branch');
  assert.deepEqual(await page.locator('#plan-list li.list-edge[data-node="a"] > .list-title').allTextContents(), ['ok → Review', '→ Check (unconditional)']);
  assert.match(await page.locator('#list-n-c').textContent(), /1 error/);
  const diagnostic = page.locator('#plan-list li.list-diag.error[data-node="c"]');
  assert.match(await diagnostic.textContent(), /c\.md:4:\d+: error\[dangling-edge\]/);
  assert.equal(await page.locator('#plan-list li.list-edge.flagged[data-node="c"]').count(), 1, 'the broken edge is flagged');

  // One Tab stop; the arrow keys move it and select on the canvas.
  assert.deepEqual(await tabStops(page), ['list-n-a']);
  await page.focus('#list-n-a');
  assert.deepEqual(await page.evaluate(() => window.planvaultTest.selection()), ['a']);
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), 'list-e-a-7');
  assert.equal(await page.locator('#panel-title').textContent(), 'Edge a → b', 'the edge is selected on the canvas');
  assert.equal(await attr(page, 'list-e-a-7', 'aria-selected'), 'true');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), 'list-n-b');
  assert.deepEqual(await page.evaluate(() => window.planvaultTest.selection()), ['b']);
  assert.deepEqual(await tabStops(page), ['list-n-b']);
  await page.keyboard.press('ArrowLeft');
  assert.equal(await attr(page, 'list-n-b', 'aria-expanded'), 'false');
  assert.equal(await page.locator('#plan-list li.list-edge[data-node="b"]').count(), 0);
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), 'list-n-c', 'a closed node is stepped over');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowRight');
  assert.equal(await attr(page, 'list-n-b', 'aria-expanded'), 'true');
  await page.keyboard.press('ArrowRight');
  assert.equal(await focused(page), 'list-e-b-4');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focused(page), 'list-n-b');
  await page.keyboard.press('End');
  assert.equal(await focused(page), 'list-n-d');
  await page.keyboard.press('Home');
  assert.equal(await focused(page), 'list-n-a');

  // Selecting on the canvas moves the list's place (without taking focus).
  const d = await page.evaluate(() => window.planvaultTest.nodePoint('d', 'body'));
  await page.mouse.click(d.x, d.y);
  assert.equal(await attr(page, 'list-n-d', 'aria-selected'), 'true');
  assert.equal(await attr(page, 'list-n-a', 'aria-selected'), 'false');
  assert.deepEqual(await tabStops(page), ['list-n-d']);

  // An edit in the side panel shows at once.
  await page.selectOption('#knob-status', 'done');
  await page.waitForFunction(() => document.querySelector('#list-n-d')?.dataset.status === 'done');
  assert.match(await page.locator('#list-n-d').textContent(), /step · done/);
  await page.evaluate(() => window.planvaultTest.idle());

  // A change made outside (as a run's status writes) too, and the focused
  // item keeps its element and its focus.
  await page.focus('#list-n-b');
  await writeOutside(page, 'd.md', '---\nstatus: failed\n---\n# Done\n');
  await page.waitForFunction(() => document.querySelector('#list-n-d')?.dataset.status === 'failed');
  assert.equal(await focused(page), 'list-n-b');
  await writeOutside(page, 'e.md', '# Extra\n');
  await page.locator('#list-n-e').waitFor();
  assert.equal(await focused(page), 'list-n-b');
  await saveScreenshot(page, 'list-view');

  // Hidden again, the canvas has the room.
  await page.click('#list-toggle');
  assert.equal(await page.locator('#plan-list').count(), 0);
  assert.deepEqual(page.problems, []);
});

test("the list shows a run's active node and the statuses it writes", async () => {
  const page = await app.open({ width: 1440, height: 900 });
  await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
  await openVault(page, { ...VAULT, 'c.md': '# Check\n' });
  await page.click('#list-toggle');
  await page.locator('#list-n-a').waitFor();
  await page.click('#run-toggle');
  await page.fill('#run-query', 'list the run');
  await page.click('#run-start');
  await waitForRun(page, () => window.planvaultTest.run().ask?.ask.kind === 'work');
  await page.waitForFunction(() => /active · waiting for your answer/.test(document.querySelector('#list-n-a')?.textContent));
  assert.equal(await attr(page, 'list-n-a', 'data-status'), 'active');
  await saveScreenshot(page, 'list-view-run');
  await page.evaluate(() => document.querySelector('#run-stop').click());
  await waitForRun(page, () => !window.planvaultTest.run().ask);
  assert.deepEqual(page.problems, []);
});

test("notes are listed in the order Obsidian's file explorer shows them", async () => {
  const page = await app.open({ width: 1440, height: 900 });
  // Folders first, then notes; names by the browser's collator with numbers
  // by value, case and accents aside (byte order would put "Step 10" before
  // "Step 2" and "apple" and "école" after "Zoo").
  const note = (title) => `# ${title}\n`;
  await openOpfsVault(page, 'e2e-list-order', {
    'Begin.md': '---\ntype: start\n---\n# Begin\n',
    'Step 10.md': note('Step 10'),
    'Step 2.md': note('Step 2'),
    'Step 1.md': note('Step 1'),
    'Zoo.md': note('Zoo'),
    'apple.md': note('apple'),
    'école.md': note('école'),
    'Banana.md': note('Banana'),
    'Later/Inside.md': note('Inside'),
  });
  await page.click('#list-toggle');
  await page.locator('#plan-list [role="tree"]').waitFor();
  const titles = await page.locator('li.list-node > .list-title').allTextContents();
  assert.deepEqual(titles, ['Inside', 'apple', 'Banana', 'Begin', 'école', 'Step 1', 'Step 2', 'Step 10', 'Zoo']);
  // Which is why a note in a folder leads: its row names the folder.
  assert.match(await page.locator('#list-n-Later_2f_Inside').textContent(), /Inside\s*Later\/ · step · pending/);
  // The loose notes' grid under the start fills its rows in that order.
  const gridded = await page.evaluate(() => {
    const ids = ['Later/Inside', 'apple', 'Banana', 'école', 'Step 1', 'Step 2', 'Step 10', 'Zoo'];
    return ids
      .map((id) => ({ id, at: window.planvaultTest.nodePoint(id, 'body') }))
      .sort((a, b) => a.at.y - b.at.y || a.at.x - b.at.x)
      .map((n) => n.id);
  });
  assert.deepEqual(gridded, ['Later/Inside', 'apple', 'Banana', 'école', 'Step 1', 'Step 2', 'Step 10', 'Zoo']);
  assert.deepEqual(page.problems, []);
});
