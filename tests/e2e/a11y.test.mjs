// Accessibility of the main screens: axe-core (the root's dev dependency,
// injected into the page) finds no violation with a vault open on the
// canvas, the list view shown, the run panel open, Settings open and the
// repair editor open; and Settings keeps the focus inside while open
// (Tab and Shift+Tab cycle in it, Escape closes it, the focus goes back to
// the button that opened it).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's violations on the page as it is, one readable line each. */
async function violations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`),
    }));
  });
  return found.map((v) => `${v.id} (${v.help}): ${v.nodes.join(' | ')}`);
}

async function expectClean(page, screen) {
  const found = await violations(page);
  await saveScreenshot(page, `a11y-${screen}`);
  assert.deepEqual(found, [], `axe-core on ${screen}:\n${found.join('\n')}`);
}

test('axe-core finds no violation on the main screens', async () => {
  const page = await app.open({ width: 1440, height: 900 });
  await planShown(page);
  await page.waitForFunction(() => window.planvaultTest.run().worker === 'ready', null, { timeout: 30_000 });
  await expectClean(page, 'canvas');

  // A node selected: the side panel's fields and the diagnostics list.
  const draft = await page.evaluate(() => window.planvaultTest.nodePoint('send', 'body'));
  await page.mouse.click(draft.x, draft.y);
  await page.locator('#panel-title').waitFor();
  await expectClean(page, 'selected');

  await page.click('#list-toggle');
  await page.locator('#plan-list').waitFor();
  await expectClean(page, 'list-view');

  await page.click('#run-toggle');
  await page.locator('#run-panel').waitFor();
  await expectClean(page, 'run-panel');

  await page.click('#run-settings');
  await page.locator('#settings').waitFor();
  await expectClean(page, 'settings');
  await page.keyboard.press('Escape');

  // A note whose frontmatter cannot be read, and its repair editor.
  await page.waitForFunction(() => window.planvaultTest.opensSettled());
  await writePrivateFolder(page, 'e2e-a11y', {
    'a.md': '---\ntype: start\n---\n# A\n\n## Next\n- [[b]]\n',
    'b.md': '---\nstatus: [done\n---\n# B\n',
  });
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle('e2e-a11y'));
  });
  await page.waitForFunction(() => window.planvaultTest.plan()?.diagnostics.includes('bad-frontmatter'));
  const b = await page.evaluate(() => window.planvaultTest.nodePoint('b', 'body'));
  await page.mouse.click(b.x, b.y);
  // The run pane is still the one shown (a click on a card does not switch).
  await page.click('#tab-selection');
  await page.locator('#knobs-unreadable').waitFor();
  await expectClean(page, 'unreadable-knobs');
  await page.click('#fix-frontmatter');
  await page.locator('#note-editor').waitFor();
  await expectClean(page, 'note-editor');
  assert.deepEqual(page.problems, []);
});

test('Settings keeps the focus inside while open and gives it back when closed', async () => {
  const page = await app.open({ width: 1280, height: 800 });
  await planShown(page);
  await page.click('#run-toggle');
  await page.focus('#run-settings');
  await page.keyboard.press('Enter');
  await page.locator('#settings').waitFor();
  const inside = () => page.evaluate(() => document.querySelector('#settings').contains(document.activeElement));
  await page.waitForFunction(() => document.querySelector('#settings').contains(document.activeElement));
  const first = await page.evaluate(() => document.activeElement.id);
  assert.equal(first, 'source-manual', 'the first field takes the focus');

  // Forwards through every control and round again: never outside.
  const seen = new Set();
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    assert.ok(await inside(), `Tab ${i + 1} left the dialog for ${await page.evaluate(() => document.activeElement.outerHTML.slice(0, 80))}`);
    seen.add(await page.evaluate(() => document.activeElement.id || document.activeElement.textContent));
  }
  assert.ok(seen.has('source-manual') && seen.size > 5, [...seen].join(', '));
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Shift+Tab');
    assert.ok(await inside(), `Shift+Tab ${i + 1} left the dialog`);
  }
  // A click outside the dialog does not take the focus out of it.
  await page.mouse.click(5, 400);
  assert.ok(await inside(), 'a click on the backdrop kept the focus in');

  await page.keyboard.press('Escape');
  await page.locator('#settings').waitFor({ state: 'detached' });
  await page.waitForFunction(() => document.activeElement?.id === 'run-settings');
  assert.deepEqual(page.problems, []);
});
