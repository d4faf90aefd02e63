// A plan kept in one folder of a larger Obsidian vault, in the built app
// (dist/) in headless Chromium: the app picks the folder holding the plan,
// shows only its notes with their links resolved in the whole vault (the
// templates folder and `.planvaultignore`'s entries skipped, an ADR's
// `status: accepted` never judged), lets the user pick another folder,
// remembers the pick across a reload, writes edits into that folder, and
// runs it there (its trace in the folder, the rest of the vault untouched).

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';
import { readOpfsFolder, runState } from './support/vault.mjs';
import { startStub, reply } from './support/llm-stub.mjs';
import { useEndpoint, startRun, waitPhase, textOf, statusOf } from './support/run.mjs';

const FOLDER = 'e2e-big-vault';

const VAULT = {
  '.obsidian/app.json': '{}',
  '.obsidian/templates.json': '{"folder":"Templates","dateFormat":"YYYY-MM-DD"}',
  '.planvaultignore': '# kept for reference\nArchive/\n',
  'Templates/Step.md': '---\ntype: step\n---\n# <% tp.file.title %>\n\n## Next\n- [[<% tp.file.title %>]]\n',
  'Archive/Old start.md': '---\ntype: start\n---\n# An old plan\n\n## Next\n- [[Gone]]\n',
  'Notes/ADR-001.md': '---\nstatus: accepted\n---\n# ADR 1: ship weekly\n',
  'Notes/Review.md': '# A review checklist from another project\n',
  'Inbox.md': '# Inbox\n',
  'plans/launch/start.md': '---\ntype: start\n---\n# Launch\n\nBackground: [[ADR-001]].\n\n## Next\n- [[Draft]]\n',
  'plans/launch/Draft.md': '# Draft\n\n## Next\n- [[Review]]\n',
  'plans/launch/Review.md': '# Review\n\n## Next\n- approved -> [[Send]]\n- needs revision -> [[Draft]]\n',
  'plans/launch/Send.md': '# Send\n',
};

const app = useApp();
let page;

/** Writes `files` (nested paths) into a fresh OPFS folder. */
async function writeVault(files) {
  await page.evaluate(async ([folder, files]) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry(folder, { recursive: true }); } catch (_) {}
    const vault = await root.getDirectoryHandle(folder, { create: true });
    for (const [path, text] of Object.entries(files)) {
      const parts = path.split('/');
      const name = parts.pop();
      let dir = vault;
      for (const part of parts) dir = await dir.getDirectoryHandle(part, { create: true });
      const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
  }, [FOLDER, files]);
}

/** Opens the OPFS folder in the app as it is now. */
async function openVault() {
  await page.evaluate(async (folder) => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle(folder));
  }, FOLDER);
  await page.waitForFunction((folder) => document.querySelector('#mode').textContent.includes(folder), FOLDER);
}

const readVault = () => readOpfsFolder(page, FOLDER);

async function writeOutside(path, text) {
  await page.evaluate(async ([folder, path, text]) => {
    const parts = path.split('/');
    const name = parts.pop();
    let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(folder);
    for (const part of parts) dir = await dir.getDirectoryHandle(part);
    const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
    await w.write(text);
    await w.close();
  }, [FOLDER, path, text]);
  await page.evaluate(() => window.planvaultTest.poll());
}

const summary = () => page.locator('#plan-summary').textContent();
const diagnostics = () => page.locator('#diagnostics li').allTextContents();
const plan = () => page.evaluate(() => window.planvaultTest.plan());
const idle = () => page.evaluate(() => window.planvaultTest.idle());

async function summaryIs(expected) {
  try {
    await page.waitForFunction((text) => document.querySelector('#plan-summary')?.textContent === text, expected, { timeout: 15_000 });
  } catch (error) {
    assert.equal(await summary(), expected, `${error.message}; diagnostics: ${(await diagnostics()).join(' | ')}`);
  }
}

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await writeVault(VAULT);
});

test('the folder holding the plan is the plan; its links resolve in the whole vault', async () => {
  await openVault();
  await summaryIs('Plan: 4 notes in plans/launch/, 4 edges, no errors');
  const p = await plan();
  assert.deepEqual(p.nodes.map((n) => n.id).sort(), ['plans/launch/Draft', 'plans/launch/Review', 'plans/launch/Send', 'plans/launch/start']);
  // `[[Review]]` is the plan's own Review (the linking note's folder
  // first), not Notes/Review; the template's placeholder and the archived
  // start are not read at all.
  assert.ok(p.edges.some((e) => e.from === 'plans/launch/Draft' && e.to === 'plans/launch/Review'));
  assert.deepEqual(p.diagnostics, []);
  assert.deepEqual(await diagnostics(), []);
  const picker = page.locator('#plan-folder');
  assert.equal(await picker.inputValue(), 'plans/launch');
  assert.deepEqual(await picker.locator('option').allTextContents(), [
    'Whole vault',
    'plans/ (3 plan notes)',
    'plans/launch/ (3 plan notes)',
  ]);
  // The picker sits on the vault's line, so at 1280 px the toolbar is one row.
  assert.equal(await page.locator('.mode #plan-folder').count(), 1);
  const rows = await page.evaluate(() => {
    const shown = [...document.querySelectorAll('.toolbar button, .toolbar select')].filter((el) => el.getClientRects().length > 0);
    return new Set(shown.map((el) => Math.round(el.getBoundingClientRect().top))).size;
  });
  assert.equal(rows, 1, 'the toolbar is one row');
  await saveScreenshot(page, 'plan-folder-launch');
});

test('an edge out of the plan folder is an error at its line', async () => {
  await writeOutside('plans/launch/Review.md', `${VAULT['plans/launch/Review.md']}- escalate -> [[ADR-001]]\n`);
  await summaryIs('Plan: 4 notes in plans/launch/, 5 edges, 1 error');
  assert.deepEqual(await diagnostics(), [
    'plans/launch/Review.md:6:15: error[edge-leaves-plan]: edge from `plans/launch/Review` leads to `Notes/ADR-001`, outside the plan\'s folder `plans/launch/`; a plan\'s edges stay in its folder',
  ]);
  await writeOutside('plans/launch/Review.md', VAULT['plans/launch/Review.md']);
  await summaryIs('Plan: 4 notes in plans/launch/, 4 edges, no errors');
});

test('picking the whole vault shows every note, the rest said once, and survives a reload', async () => {
  await page.locator('#plan-folder').selectOption('');
  await summaryIs('Plan: 7 notes, 4 edges, no errors');
  const listed = await diagnostics();
  assert.equal(listed.length, 1, listed.join('\n'));
  assert.match(listed[0], /^warning\[not-part-of-plan\]: 3 notes outside `plans\/launch\/`/);
  // The ADR's `status: accepted` is not the plan's knob: no bad-frontmatter.
  assert.ok(!(await plan()).diagnostics.includes('bad-frontmatter'));

  await page.reload();
  await planShown(page);
  await openVault();
  await summaryIs('Plan: 7 notes, 4 edges, no errors');
  assert.equal(await page.locator('#plan-folder').inputValue(), '');

  await page.locator('#plan-folder').selectOption('plans/launch');
  await summaryIs('Plan: 4 notes in plans/launch/, 4 edges, no errors');
  await page.reload();
  await planShown(page);
  await openVault();
  await summaryIs('Plan: 4 notes in plans/launch/, 4 edges, no errors');
});

test('a new node and its position are written into the plan folder', async () => {
  await page.click('#new-node');
  await page.locator('#dialog-input').waitFor({ state: 'visible' });
  await page.locator('#dialog-input').fill('Announce');
  await page.keyboard.press('Enter');
  await page.locator('#dialog-input').waitFor({ state: 'detached' });
  await idle();
  await summaryIs('Plan: 5 notes in plans/launch/, 4 edges, no errors');
  const files = await readVault();
  assert.ok(files['plans/launch/Announce.md']?.includes('# Announce'), Object.keys(files).join(', '));
  assert.equal(files['Announce.md'], undefined);
  const canvas = JSON.parse(files['plans/launch/plan.canvas']);
  assert.ok(canvas.nodes.some((n) => n.file === 'plans/launch/Announce.md'));
  assert.equal(files['plan.canvas'], undefined);
  // The notes outside the plan are untouched.
  for (const path of ['Notes/ADR-001.md', 'Inbox.md', 'Templates/Step.md', '.planvaultignore']) {
    assert.equal(files[path], VAULT[path], path);
  }
  assert.deepEqual(page.problems, []);
  await saveScreenshot(page, 'plan-folder-new-node');
});

test('the picker lists plan folders as Obsidian does: parents first, numbers by value, case aside', async () => {
  const plan = (title) => `---\ntype: start\n---\n# ${title}\n\n## Next\n- [[Done]]\n`;
  await writeVault({
    'Sprints/Sprint 10/start.md': plan('Sprint 10'),
    'Sprints/Sprint 10/Done.md': '# Done\n',
    'Sprints/Sprint 2/start.md': plan('Sprint 2'),
    'Sprints/Sprint 2/Done.md': '# Done\n',
    'Sprints/sprint 1/start.md': plan('Sprint 1'),
    'Sprints/sprint 1/Done.md': '# Done\n',
  });
  await openVault();
  assert.deepEqual(await page.locator('#plan-folder option').allTextContents(), [
    'Whole vault',
    'Sprints/ (3 plan notes)',
    'Sprints/sprint 1/ (1 plan note)',
    'Sprints/Sprint 2/ (1 plan note)',
    'Sprints/Sprint 10/ (1 plan note)',
  ]);
});

test('a new or retargeted edge in a plan folder is written so that it reaches its note, a namesake at the root aside', async () => {
  const P = 'plans/launch/';
  await writeVault({
    '.obsidian/app.json': '{}',
    'Draft.md': '# An unrelated note at the vault root\n',
    [`${P}Start.md`]: '---\ntype: start\n---\n# Start\n\n## Next\n- [[Check]]\n- alt -> [[plans/launch/Draft]]\n',
    [`${P}Check.md`]: '# Check\n\n## Next\n- [[Send]]\n',
    [`${P}Draft.md`]: '# Draft\n\n## Next\n- [[Send]]\n',
    [`${P}Send.md`]: '# Send\n',
  });
  await openVault();
  await summaryIs('Plan: 4 notes in plans/launch/, 4 edges, no errors');
  const point = (id, part = 'body') => page.evaluate(([id, part]) => window.planvaultTest.nodePoint(id, part), [id, part]);
  const edgeHead = (from, to) => page.evaluate(([f, t]) => window.planvaultTest.edgePoint(f, t, 'head'), [from, to]);
  const drag = async (from, to) => {
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 6 });
    await page.mouse.move(to.x, to.y, { steps: 6 });
    await page.mouse.up();
  };
  // `[[Draft]]` would open the root's Draft.md in Obsidian.
  await drag(await point(`${P}Send`, 'handle'), await point(`${P}Draft`));
  await page.locator('#dialog-input').waitFor({ state: 'visible' });
  await page.locator('#dialog-input').fill('again');
  await page.keyboard.press('Enter');
  await page.locator('#dialog-input').waitFor({ state: 'detached' });
  await idle();
  let files = await readVault();
  assert.equal(files[`${P}Send.md`], '# Send\n\n## Next\n- again -> [[plans/launch/Draft]]\n');
  assert.ok((await plan()).edges.some((e) => e.from === `${P}Send` && e.to === `${P}Draft`));
  assert.ok(!(await diagnostics()).some((d) => d.includes('edge-leaves-plan')), (await diagnostics()).join(' | '));
  await page.click('#undo');
  await idle();
  await summaryIs('Plan: 4 notes in plans/launch/, 4 edges, no errors');
  await drag(await edgeHead(`${P}Start`, `${P}Check`), await point(`${P}Draft`));
  await idle();
  files = await readVault();
  assert.ok(files[`${P}Start.md`].includes('\n- [[plans/launch/Draft]]\n'), files[`${P}Start.md`]);
  assert.ok((await plan()).edges.filter((e) => e.from === `${P}Start`).every((e) => e.to === `${P}Draft`));
  assert.deepEqual(page.problems, []);
});

test('a plan folder runs in its vault: its links as drawn, its trace in the folder, the rest of the vault untouched', async () => {
  const P = 'plans/launch/';
  const outside = {
    '.obsidian/app.json': '{}',
    'Draft.md': '---\nstatus: mine\n---\n# An unrelated note at the vault root\n',
    'Archive/plans/launch/Send.md': '# An old send\n',
  };
  await writeVault({
    ...outside,
    [`${P}Start.md`]: '---\ntype: start\n---\n# Start the launch\n\n## Next\n- [[plans/launch/Draft]]\n',
    [`${P}Draft.md`]: '# Write the draft\n\n## Next\n- [[Send]]\n',
    [`${P}Send.md`]: '# Send it\n',
  });
  const stub = await startStub({ replies: [], default: reply('', 'Done.') });
  try {
    await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
    await openVault();
    await summaryIs('Plan: 3 notes in plans/launch/, 2 edges, no errors');
    await useEndpoint(page, stub.url);
    await startRun(page, 'launch');
    await waitPhase(page, 'finished');
    const state = await runState(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    // The steps asked, in the order the vault's links lead: `[[Send]]` is
    // the folder's Send, not the archived one.
    const steps = (await stub.requests()).map((r) => /Step: ([^\n"]+)/.exec(textOf(r))?.[1]);
    assert.deepEqual(steps, ['Start the launch', 'Write the draft', 'Send it']);
    const files = await readVault();
    for (const note of ['Start', 'Draft', 'Send']) assert.equal(statusOf(files[`${P}${note}.md`]), 'done', note);
    for (const [path, text] of Object.entries(outside)) assert.equal(files[path], text, path);
    assert.ok(files[`${P}00_plan-trace/trace.md`]?.includes('Write the draft'), Object.keys(files).join(' '));
    assert.ok(files[`${P}00_plan-trace/Draft.visit-1.md`]?.includes('Output of [[plans/launch/Draft]]'));
    assert.ok(!Object.keys(files).some((p) => p.startsWith('00_plan-trace/')), Object.keys(files).join(' '));
    // The trace's notes are no notes of the plan, nor changes to the vault.
    await page.evaluate(() => window.planvaultTest.poll());
    await idle();
    await summaryIs('Plan: 3 notes in plans/launch/, 2 edges, no errors');
    assert.doesNotMatch(await page.locator('#status').textContent(), /00_plan-trace/);
    await saveScreenshot(page, 'plan-folder-run-finished');
  } finally {
    stub.close();
  }
  assert.deepEqual(page.problems, []);
});
