// The side panel and the questions a run asks, in headless Chromium: the
// questions are answered in the run panel while the canvas shows (and
// scrolls to) the node they concern; one panel at a time, resizable,
// collapsible, its width kept; the canvas keeps 60% of a 1280 px window
// and every card at 1024 px; the "?" overlay's help and legend; what the
// app says after Stop, after an undo, on a cancelled picker and for a plan
// with errors. Screenshots go to tests/artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { planShown, useApp } from './support/app.mjs';
import { runState, waitForRun } from './support/vault.mjs';
import { EXAMPLE, openRunPanel, openVault, readyPage, startRun, waitAsk, waitPhase } from './support/run.mjs';

const FOLDER = 'e2e-run-panel';
const app = useApp();

/** In the page: whether `id`'s card lies whole inside the canvas and nothing covers its centre. */
function cardInView(id) {
  const canvas = document.querySelector('#plan-canvas').getBoundingClientRect();
  const r = window.planvaultTest.nodeRect(id);
  if (!r) return false;
  const inside = r.left >= canvas.left - 0.5 && r.right <= canvas.right + 0.5
    && r.top >= canvas.top - 0.5 && r.bottom <= canvas.bottom + 0.5;
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  return inside && hit?.id === 'plan-canvas';
}

const inView = (page, id) => page.evaluate(cardInView, id);
const waitInView = (page, id) => page.waitForFunction(cardInView, id, { timeout: 5_000 });

const activeId = (page) => page.evaluate(() => document.activeElement?.id ?? null);

/** The canvas's and the side panel's boxes. */
const boxes = (page) =>
  page.evaluate(() => {
    const box = (sel) => {
      const r = document.querySelector(sel).getBoundingClientRect();
      return { left: r.left, right: r.right, width: r.width };
    };
    return { canvas: box('#plan-canvas'), dock: box('#dock'), window: window.innerWidth };
  });

/** Answers the question shown by keyboard once its node is in view. */
async function answerInPanel(page, kind, node) {
  const ask = await waitAsk(page, kind);
  assert.equal(ask.node, node);
  assert.equal(await page.locator('.backdrop').count(), 0, 'no modal over the canvas');
  await waitForRun(page, (node) => window.planvaultTest.canvasRun().asking === node, node, 5_000);
  await waitInView(page, node);
  return ask;
}

test('questions are answered in the run panel while their node shows on the canvas', async () => {
  const page = await readyPage(app, { width: 1280, height: 720 });
  try {
    await openVault(page, EXAMPLE, FOLDER);
    // Looking elsewhere: the first node the run asks about is out of view.
    await page.evaluate(() => window.planvaultTest.centerOn('send', 1.6));
    assert.equal(await inView(page, 'draft'), false, 'draft starts out of view');
    await startRun(page);

    await answerInPanel(page, 'work', 'draft');
    await page.waitForFunction(() => document.activeElement?.id === 'ask-answer', null, { timeout: 5_000 });
    assert.ok(await page.locator('#run-panel #run-ask').isVisible(), 'asked in the run panel');
    const shot = await saveScreenshot(page, 'run-question-beside-graph');
    // Escape goes back to the canvas; the question waits.
    await page.keyboard.press('Escape');
    assert.equal(await activeId(page), 'plan-canvas');
    assert.ok(await page.locator('#run-ask').isVisible());
    // Ctrl+Enter answers from the text box.
    await page.focus('#ask-answer');
    await page.keyboard.type('draft by hand');
    await page.keyboard.press('Control+Enter');

    await answerInPanel(page, 'work', 'review');
    await page.waitForFunction(() => document.activeElement?.id === 'ask-answer', null, { timeout: 5_000 });
    await page.keyboard.type('Looks right.');
    await page.keyboard.press('Control+Enter');

    await answerInPanel(page, 'judge', 'review');
    await page.waitForFunction(() => document.activeElement?.id === 'judge-0-yes', null, { timeout: 5_000 });
    await page.keyboard.press('Space');
    await page.check('#judge-1-no');
    // Enter on a choice answers (once every condition has one).
    await page.keyboard.press('Enter');

    await answerInPanel(page, 'work', 'send');
    await page.fill('#ask-answer', 'Sent.');
    await page.keyboard.press('Control+Enter');
    await waitPhase(page, 'finished');
    const state = await runState(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.deepEqual(state.visits, { draft: 1, review: 1, send: 1 });
    assert.deepEqual(page.problems, [], `no errors (screenshot: ${shot})`);
  } finally {
    await page.context().close();
  }
});

test('after Stop the panel says what Resume run and Run do', async () => {
  const page = await readyPage(app, { width: 1280, height: 720 });
  try {
    await openVault(page, EXAMPLE, FOLDER);
    await startRun(page);
    await waitAsk(page, 'work');
    await page.click('#ask-stop');
    await waitPhase(page, 'finished');
    assert.equal((await runState(page)).finish.code, 'stopped');
    assert.match(await page.locator('#run-phase').textContent(), /^Stopped: /);
    assert.doesNotMatch(await page.locator('#run-phase').textContent(), /run again/);
    const next = await page.locator('#run-next').textContent();
    assert.match(next, /Resume run continues from where it stopped/);
    assert.match(next, /Run starts over/);
    assert.match(await page.locator('#status').textContent(), /Resume run continues it; Run starts over\.$/);
    assert.ok(await page.locator('#run-continue').isVisible(), 'Resume run is offered');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('a card clicked while the Run tab shows switches to its selection, with the way back to the run', async () => {
  const page = await readyPage(app, { width: 1280, height: 720 });
  try {
    await openVault(page, EXAMPLE, FOLDER);
    await startRun(page);
    await waitAsk(page, 'work');
    assert.ok(await page.locator('#run-panel').isVisible());
    assert.equal(await page.locator('#tab-run-live').count(), 0, 'no marker on the tab that shows');
    // The card the run is not at.
    await page.evaluate(() => window.planvaultTest.centerOn('send', 1));
    const at = await page.evaluate(() => window.planvaultTest.nodePoint('send', 'body'));
    await page.mouse.click(at.x, at.y);
    await page.locator('#selection-pane').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#run-pane').isVisible(), false, 'the selection replaces the run');
    assert.equal(await page.locator('#tab-selection').getAttribute('aria-selected'), 'true');
    assert.equal(await page.locator('#panel-title').textContent(), 'Send the email');
    // The run goes on, and its tab says so.
    assert.match(await page.locator('#tab-run').textContent(), /^Run · running$/);
    await saveScreenshot(page, 'card-click-over-run');
    await page.click('#tab-run');
    assert.ok(await page.locator('#run-panel #run-ask').isVisible(), 'back to the question');
    assert.equal(await page.locator('#tab-run-live').count(), 0);
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('one side panel at a time, resizable and collapsible; the canvas keeps 60% of 1280 px', async () => {
  const page = await app.open({ width: 1280, height: 720 });
  try {
    await planShown(page);
    assert.ok(await page.locator('#selection-pane').isVisible());
    assert.equal(await page.locator('#run-pane').isVisible(), false);
    // The editing help is no longer a panel of its own.
    assert.equal(await page.locator('.side .help').count(), 0);

    await openRunPanel(page);
    assert.equal(await page.locator('#selection-pane').isVisible(), false, 'the run panel replaces the selection');
    assert.equal(await page.locator('#tab-run').getAttribute('aria-selected'), 'true');
    let b = await boxes(page);
    assert.ok(b.canvas.width >= 0.6 * 1280, `canvas ${b.canvas.width} of 1280`);
    assert.ok(b.canvas.right <= b.dock.left + 1, 'side by side, not over');
    await saveScreenshot(page, 'panel-1280-run');

    // Dragged far to the left, it stops at 40% of the window.
    const handle = await page.locator('#panel-resize').boundingBox();
    await page.mouse.move(handle.x + handle.width / 2, handle.y + 200);
    await page.mouse.down();
    await page.mouse.move(150, handle.y + 200, { steps: 6 });
    await page.mouse.up();
    b = await boxes(page);
    assert.equal(Math.round(b.dock.width), 512);
    assert.ok(b.canvas.width >= 0.6 * 1280 - 1, `canvas ${b.canvas.width} of 1280`);
    assert.equal(await page.evaluate(() => localStorage.getItem('planvault.panel-width')), '512');
    // The keyboard resizes it too.
    await page.focus('#panel-resize');
    await page.keyboard.press('ArrowRight');
    assert.equal(Math.round((await boxes(page)).dock.width), 488);
    assert.equal(await page.locator('#panel-resize').getAttribute('aria-valuenow'), '488');

    // Kept across a reload.
    await page.reload();
    await planShown(page);
    assert.equal(Math.round((await boxes(page)).dock.width), 488);

    // Collapsed: a strip; the canvas takes the rest. The Run button opens it again.
    await page.click('#panel-collapse');
    b = await boxes(page);
    assert.ok(b.dock.width < 50, `collapsed to ${b.dock.width}`);
    assert.ok(b.canvas.width > 1200);
    assert.equal(await page.locator('#panel-collapse').getAttribute('aria-expanded'), 'false');
    assert.equal(await page.locator('#selection-pane').isVisible(), false);
    await page.click('#run-toggle');
    assert.ok(await page.locator('#run-panel').isVisible());
    // Collapsed on the run, Run… shows the run again; pressed once more, the selection.
    await page.click('#panel-collapse');
    await page.click('#run-toggle');
    assert.ok(await page.locator('#run-panel').isVisible());
    await page.click('#run-toggle');
    assert.ok(await page.locator('#selection-pane').isVisible());
    await page.click('#tab-run');
    assert.ok(await page.locator('#run-panel').isVisible());
    await page.click('#tab-selection');
    assert.ok(await page.locator('#selection-pane').isVisible());
    assert.equal(await page.locator('#run-pane').isVisible(), false);
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('at 1024 px with the run panel open no card is cut off', async () => {
  const page = await app.open({ width: 1024, height: 768 });
  try {
    await planShown(page);
    const ids = (await page.evaluate(() => window.planvaultTest.plan())).nodes.map((n) => n.id);
    await openRunPanel(page);
    // The narrower canvas shows the whole plan again.
    await page.waitForFunction((ids) => {
      const canvas = document.querySelector('#plan-canvas').getBoundingClientRect();
      return ids.every((id) => {
        const r = window.planvaultTest.nodeRect(id);
        return r.left >= canvas.left && r.right <= canvas.right && r.top >= canvas.top && r.bottom <= canvas.bottom;
      });
    }, ids, { timeout: 5_000 });
    for (const id of ids) assert.ok(await inView(page, id), `${id} whole and uncovered`);
    const b = await boxes(page);
    assert.ok(b.canvas.width >= 0.6 * 1024, `canvas ${b.canvas.width} of 1024`);
    assert.ok(b.canvas.right <= b.dock.left + 1);
    await saveScreenshot(page, 'panel-1024-run');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('the ? overlay explains editing and the edge line styles', async () => {
  const page = await app.open({ width: 1280, height: 720 });
  try {
    await planShown(page);
    assert.equal(await page.locator('#help-overlay').isVisible(), false);
    await page.click('#help-toggle');
    assert.ok(await page.locator('#help-overlay').isVisible());
    assert.equal(await page.locator('#help-toggle').getAttribute('aria-expanded'), 'true');
    const edges = await page.$$eval('#legend-edges li', (items) =>
      items.map((li) => [li.querySelector('line').getAttribute('stroke-dasharray'), li.textContent]));
    assert.deepEqual(edges.map(([dash]) => dash), ['', '8 5', '2 4', '3 3']);
    assert.match(edges[0][1], /^Solid: unconditional/);
    assert.match(edges[1][1], /^Dashed: conditional/);
    assert.match(edges[2][1], /^Dotted: a loop back/);
    assert.match(await page.locator('#help-overlay').textContent(), /Drag from the dot under a card/);
    await saveScreenshot(page, 'help-legend');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#help-overlay').isVisible(), false);
    assert.equal(await activeId(page), 'help-toggle', 'the focus goes back to the button');
    // "?" from the canvas opens it too.
    await page.focus('#plan-canvas');
    await page.keyboard.press('?');
    assert.ok(await page.locator('#help-overlay').isVisible());
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('an undo says what it undid, not "Saved"', async () => {
  const page = await app.open({ width: 1280, height: 720 });
  try {
    await planShown(page);
    const at = await page.evaluate(() => window.planvaultTest.edgePoint('draft', 'review', 'middle'));
    await page.mouse.click(at.x, at.y);
    await page.keyboard.press('Delete');
    await page.evaluate(() => window.planvaultTest.idle());
    const saved = await page.locator('#status').textContent();
    const summary = /^Saved: (.+)$/.exec(saved)?.[1];
    assert.ok(summary, saved);
    await page.click('#undo');
    await page.evaluate(() => window.planvaultTest.idle());
    await page.waitForFunction(() => !document.querySelector('#status').textContent.startsWith('Undoing'));
    const undone = await page.locator('#status').textContent();
    assert.ok(undone.startsWith(`Undone: ${summary}`), undone);
    assert.doesNotMatch(undone, /Saved/);
    await page.click('#redo');
    await page.evaluate(() => window.planvaultTest.idle());
    await page.waitForFunction(() => !document.querySelector('#status').textContent.startsWith('Redoing'));
    assert.equal(await page.locator('#status').textContent(), `Redone: ${summary}`);
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('closing the Open vault… picker is no error', async () => {
  const init = () => {
    window.showDirectoryPicker = () => Promise.reject(new DOMException('The user aborted a request.', 'AbortError'));
  };
  const page = await app.open({ width: 1280, height: 720 }, { init });
  try {
    await planShown(page);
    const mode = await page.locator('#mode').textContent();
    await page.click('#open-vault');
    await page.waitForFunction(() => document.querySelector('#status').textContent !== '');
    const status = await page.locator('#status').textContent();
    assert.equal(status, 'No folder picked; the plan shown is unchanged');
    assert.equal(await page.locator('#mode').textContent(), mode);
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

test('a run of a plan with errors lists them one per line', async () => {
  const page = await readyPage(app, { width: 1280, height: 720 });
  try {
    await openVault(page, {
      'start.md': '---\ntype: start\n---\n# Start\n\n## Next\n- [[nowhere]]\n',
      'other.md': '# Other\n\n## Next\n- [[gone]]\n',
    }, FOLDER);
    await startRun(page, 'anything');
    const lines = page.locator('#run-error-lines li');
    await lines.first().waitFor({ timeout: 30_000 });
    const texts = await lines.allTextContents();
    assert.ok(texts.length >= 2, JSON.stringify(texts));
    assert.ok(texts.some((t) => t.includes('start.md') && t.includes('nowhere')), JSON.stringify(texts));
    assert.ok(texts.some((t) => t.includes('other.md') && t.includes('gone')), JSON.stringify(texts));
    assert.match(await page.locator('#run-error .message').textContent(), /plan has errors/);
    await saveScreenshot(page, 'run-plan-errors');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});
