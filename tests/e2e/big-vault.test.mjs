// A big vault: opening it says how far the reading is while the plan shown
// before stays, greyed; "Fit" on 2,000 notes draws a readable overview
// (cards as blocks, titles where they have room); the minimap never covers
// a card; on a phone the toolbar is one row with a "⋯" menu; a plan spread
// over folders shows them zoomed out as labelled regions.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const NOTES = 2000;
const app = useApp();
let page;

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
});

/** Writes the canvas benchmark's 2,000-note plan into OPFS folder `name`. */
async function writeBigVault(name) {
  await page.evaluate(async ([name, n]) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry(name, { recursive: true }); } catch (_) {}
    const dir = await root.getDirectoryHandle(name, { create: true });
    for (let i = 0; i < n; i++) {
      const next = [];
      if (i + 1 < n) next.push(`- [[step-${i + 1}]]`);
      if (i % 3 === 0 && i + 3 < n) next.push(`- skip ahead -> [[step-${i + 3}]]`);
      if (i % 7 === 6) next.push(`- needs revision -> [[step-${i - 4}]]`);
      const text = `---\ntype: ${i === 0 ? 'start' : 'step'}\n---\n# Step ${i}\n\n## Next\n${next.join('\n')}\n`;
      const w = await (await dir.getFileHandle(`step-${i}.md`, { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
  }, [name, NOTES]);
}

/** Whether two page rectangles overlap. */
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The cards the minimap covers (none when there is no minimap). */
async function underMinimap() {
  await page.waitForTimeout(50); // a frame
  const map = (await hook('canvasRun')).minimap;
  if (!map) return { map, covered: [] };
  const boxes = await hook('cardBoxes');
  return { map, covered: Object.keys(boxes).filter((id) => overlap(boxes[id], map)) };
}

test('opening 2,000 notes shows progress over the old plan, greyed; Fit draws a readable overview', async () => {
  await writeBigVault('big-vault');
  const shownBefore = (await hook('plan')).nodes.length;
  // What the page shows while reading, seen as it changes.
  await page.evaluate(() => {
    window.seen = [];
    new MutationObserver(() => {
      const p = document.getElementById('open-progress');
      if (p) {
        window.seen.push({
          text: p.textContent,
          greyed: document.querySelector('main.workspace').classList.contains('loading')
            && getComputedStyle(document.getElementById('plan-canvas')).pointerEvents === 'none',
          nodes: window.planvaultTest.plan().nodes.length,
        });
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('big-vault');
    await window.planvaultTest.openHandle(dir);
  });
  assert.equal((await hook('plan')).nodes.length, NOTES);
  const seen = await page.evaluate(() => window.seen);
  assert.ok(seen.length > 0, 'progress was shown');
  for (const s of seen) {
    assert.match(s.text, new RegExp(`^Reading files: \\d+ of ${NOTES}$`));
    assert.ok(s.greyed, 'the old plan is greyed and inert meanwhile');
    assert.equal(s.nodes, shownBefore, 'the old plan stays until the new one is read');
  }
  assert.equal(await page.locator('#open-progress').count(), 0, 'gone once open');
  assert.equal(await page.locator('main.workspace.loading').count(), 0);

  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0');
  await page.waitForTimeout(100);
  assert.ok((await hook('viewport')).zoom < 0.35, 'far out: the overview');
  const drawn = await hook('canvasRun');
  assert.ok(drawn.overviewTitles >= 10, `titles drawn where they have room: ${drawn.overviewTitles}`);
  await saveScreenshot(page, 'big-vault-fit-overview');
  // A card chosen in the overview gets its title there, even one without
  // the room a landmark had: the title of what is selected comes first.
  const canvas = await page.locator('#plan-canvas').boundingBox();
  const boxes = await hook('cardBoxes');
  const inside = (b) => b.x > 40 && b.y > 40 && b.x + b.width < canvas.width - 40 && b.y + b.height < canvas.height - 40;
  const untitled = Object.keys(boxes).find((id) => !drawn.overviewTitled.includes(id) && inside(boxes[id])
    && !(drawn.minimap && overlap(boxes[id], drawn.minimap)));
  assert.ok(untitled, 'a card in view has no title at Fit');
  const box = boxes[untitled];
  await page.mouse.click(canvas.x + box.x + box.width / 2, canvas.y + box.y + box.height / 2);
  assert.deepEqual(await hook('selection'), [untitled], 'the click hit that card');
  await page.waitForTimeout(100);
  const selectedDrawn = await hook('canvasRun');
  assert.ok(selectedDrawn.overviewTitled.includes(untitled), `${untitled} titled once selected: ${selectedDrawn.overviewTitled}`);
  assert.ok((await hook('viewport')).zoom < 0.35, 'still the overview');
  await saveScreenshot(page, 'big-vault-fit-overview-selected');
  await page.keyboard.press('Escape');
  // Closer in, more titles have room.
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  await page.waitForTimeout(100);
  await saveScreenshot(page, 'big-vault-overview-closer');
});

test('the minimap covers no card: it moves aside, hides when every corner is taken, and toggles', async () => {
  // Fit: the plan in the middle, the minimap in a free corner.
  await page.keyboard.press('0');
  let { map, covered } = await underMinimap();
  assert.ok(map, 'shown beside the fitted plan');
  assert.deepEqual(covered, []);
  // Cards fill the whole canvas: no corner is free.
  await hook('centerOn', 'step-1000', 0.25);
  ({ map, covered } = await underMinimap());
  assert.deepEqual(covered, [], `covers no card (at ${JSON.stringify(map)})`);
  // Wherever the view is, at any zoom.
  for (const zoom of [1.0, 0.5, 0.1, 0.03]) {
    await hook('centerOn', 'step-40', zoom);
    ({ map, covered } = await underMinimap());
    assert.deepEqual(covered, [], `zoom ${zoom}: covers no card (at ${JSON.stringify(map)})`);
  }
  await page.keyboard.press('0');
  assert.ok((await underMinimap()).map);
  await page.locator('#minimap-toggle').click();
  assert.equal((await underMinimap()).map, null, 'collapsed');
  assert.equal(await page.locator('#minimap-toggle').getAttribute('aria-pressed'), 'false');
  await page.locator('#minimap-toggle').click();
  assert.ok((await underMinimap()).map, 'back');
  await saveScreenshot(page, 'big-vault-minimap');
});

for (const [name, init] of [
  ['with the folder picker', undefined],
  ['without it (a phone browser)', () => Object.defineProperty(window, 'showDirectoryPicker', { value: undefined, configurable: true })],
]) {
  test(`on a 390 px phone ${name} the toolbar is one row, the rest in a "⋯" menu, and no minimap`, async () => {
    const phone = await app.open({ width: 390, height: 844 }, { init });
    await planShown(phone);
    const row = await phone.evaluate(() => {
      const bar = document.querySelector('.toolbar');
      const shown = [...bar.querySelectorAll('button, .button, select')].filter((el) => el.getClientRects().length > 0);
      return {
        tops: [...new Set(shown.map((el) => Math.round(el.getBoundingClientRect().top)))],
        rights: shown.map((el) => el.getBoundingClientRect().right),
        width: bar.clientWidth,
        scroll: bar.scrollWidth,
        labels: shown.map((el) => el.textContent.trim()),
      };
    });
    assert.equal(row.tops.length, 1, `one row: ${JSON.stringify(row)}`);
    assert.ok(row.scroll <= row.width && Math.max(...row.rights) <= 390, `fits: ${JSON.stringify(row)}`);
    assert.ok(row.labels.includes('⋯'), JSON.stringify(row.labels));
    await saveScreenshot(phone, `big-vault-phone-toolbar-${init ? 'no-picker' : 'picker'}`);
    await phone.locator('#toolbar-overflow').click();
    const fit = phone.locator('#toolbar-more').getByRole('button', { name: 'Fit' });
    await fit.waitFor();
    assert.equal(await phone.locator('#toolbar-overflow').getAttribute('aria-expanded'), 'true');
    await saveScreenshot(phone, `big-vault-phone-menu-${init ? 'no-picker' : 'picker'}`);
    await fit.click();
    await fit.waitFor({ state: 'hidden' });
    await phone.waitForTimeout(50);
    assert.equal((await phone.evaluate(() => window.planvaultTest.canvasRun())).minimap ?? null, null, 'no minimap on a phone');
    await phone.close();
  });
}

test('a plan spread over folders is drawn zoomed out as one labelled region per folder', async () => {
  // A chain from a start note at the top through three phases, each phase
  // a folder of 120 notes (links by basename, as Obsidian resolves them).
  const phases = ['research', 'build', 'launch'];
  const per = 120;
  const files = { 'start.md': '---\ntype: start\n---\n# Start\n\n## Next\n- [[step-0]]\n' };
  for (let n = 0; n < phases.length * per; n++) {
    const next = n + 1 < phases.length * per ? `\n## Next\n- [[step-${n + 1}]]\n` : '';
    files[`${phases[Math.floor(n / per)]}/step-${n}.md`] = `# Step ${n}\n${next}`;
  }
  await writePrivateFolder(page, 'phases', files);
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle('phases'));
  });
  assert.equal((await hook('plan')).nodes.length, phases.length * per + 1);

  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0');
  await page.waitForTimeout(100);
  assert.ok((await hook('viewport')).zoom < 0.35, 'far out: the overview');
  const drawn = await hook('canvasRun');
  const groups = drawn.overviewGroups.map((g) => [g.name, g.notes, g.labelled]).sort();
  assert.deepEqual(groups, [['build', per, true], ['launch', per, true], ['research', per, true]]);
  await saveScreenshot(page, 'big-vault-folders-overview');
  // Titles keep clear of the folders' labels: both are drawn.
  assert.ok(drawn.overviewTitles >= 5, `titles beside the folder labels: ${drawn.overviewTitles}`);

  // At reading zoom the cards say where they are: no regions.
  await hook('centerOn', 'build/step-130', 1);
  await page.waitForTimeout(100);
  assert.deepEqual((await hook('canvasRun')).overviewGroups, []);
  await saveScreenshot(page, 'big-vault-folders-reading');
});

test('a notes vault with no plan links fits as one block per folder, not one long row', async () => {
  // What most Obsidian vaults are (e.g. the official help vault): notes in
  // folders, linked in prose but with no `## Next`.
  const folders = ['Getting started', 'Editing', 'Plugins', 'Sync', 'Publish', 'Teams', 'Import', 'Bases'];
  const files = {};
  folders.forEach((folder, f) => {
    for (let n = 0; n < 20; n++) files[`${folder}/Note ${f}-${n}.md`] = `# Note ${f}-${n}\n\nSee [[Note 0-0]].\n`;
  });
  await writePrivateFolder(page, 'notes', files);
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle('notes'));
  });
  assert.equal((await hook('plan')).nodes.length, 160);
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0');
  await page.waitForTimeout(100);
  // In one row the 160 cards were 38,000 units wide: Fit gave zoom 0.02.
  const zoom = (await hook('viewport')).zoom;
  assert.ok(zoom > 0.1, `the overview is readable: zoom ${zoom}`);
  const drawn = await hook('canvasRun');
  assert.deepEqual(drawn.overviewGroups.map((g) => [g.name, g.notes]).sort(), folders.map((f) => [f, 20]).sort());
  const labelled = drawn.overviewGroups.filter((g) => g.labelled).length;
  assert.ok(labelled >= 6, `most folders are labelled: ${labelled} of 8`);
  await saveScreenshot(page, 'big-vault-notes-overview');
});

test('folders far apart in size: regions in explorer order, none over another at Fit', async () => {
  // The shape of a real notes vault: one folder of hundreds of notes
  // beside a few small ones, no plan links. Fit zooms far out, where a
  // region's margin in screen pixels would reach over its neighbours.
  const sizes = { knowledge: 600, decisions: 61, '00-home': 21, Stack: 35, inbox: 4 };
  const files = { 'Bienvenido.md': '# Bienvenido\n' };
  for (const [folder, n] of Object.entries(sizes)) {
    for (let k = 1; k <= n; k++) files[`${folder}/${folder} ${k}.md`] = `# ${folder} ${k}\n`;
  }
  await writePrivateFolder(page, 'lopsided', files);
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle('lopsided'));
  });
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0');
  await page.waitForTimeout(100);
  const zoom = (await hook('viewport')).zoom;
  assert.ok(zoom < 0.1, `far out: zoom ${zoom}`);
  const groups = (await hook('canvasRun')).overviewGroups;
  // As Obsidian's file explorer lists them: "Stack" among the s, not before
  // the lower-case names as byte order has it.
  assert.deepEqual(groups.map((g) => g.name), ['00-home', 'decisions', 'inbox', 'knowledge', 'Stack']);
  for (const [i, a] of groups.entries()) {
    for (const b of groups.slice(i + 1)) {
      assert.ok(!overlap(a.area, b.area), `${a.name} and ${b.name} overlap: ${JSON.stringify([a.area, b.area])}`);
    }
  }
  // A narrow folder's label reaching over its neighbour's corner moves
  // that one's a line down: every folder is named.
  assert.deepEqual(groups.filter((g) => !g.labelled).map((g) => g.name), []);
  await saveScreenshot(page, 'big-vault-lopsided-folders');
});
