// End-to-end editing in the built app (dist/), in headless Chromium: the
// test hands the app an origin-private folder in place of the directory
// picker (which cannot be automated), edits the plan with the mouse and the
// keyboard, and reads the notes back from that folder to check every edit
// landed in the markdown, byte for byte.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();
let page;

const VAULT = {
  'start.md': '---\ntype: start\nstatus: done\nowner: ana\n---\n# Start here\n\nCollect the inputs.\n\n## Next\n- [[work]]\n',
  'work.md': '---\nstatus: active\n---\n# Do the work\r\n\r\nSee [[check]] later.\r\n\r\n## Next\r\n- ok -> [[check]]\r\n',
  'check.md': '# Check it\n\n## Next\n- approved -> [[ship]]\n- rework -> [[work]]\n',
  'ship.md': '# Ship it\n\nDone when shipped.\n',
};

/** Writes `files` into a fresh OPFS folder and opens it in the app. */
async function openVault(files) {
  await page.evaluate(async (files) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry('e2e-vault', { recursive: true }); } catch (_) {}
    const dir = await root.getDirectoryHandle('e2e-vault', { create: true });
    for (const [path, text] of Object.entries(files)) {
      const handle = await dir.getFileHandle(path, { create: true });
      const w = await handle.createWritable();
      await w.write(text);
      await w.close();
    }
    window.e2eVault = dir;
    await window.planvaultTest.openHandle(dir);
  }, files);
  await page.waitForFunction(() => document.querySelector('#mode').textContent.includes('e2e-vault'));
}

/** The vault folder's files as they are on disk now. */
async function readVault() {
  return page.evaluate(async () => {
    const out = {};
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    for await (const [name, handle] of window.e2eVault.entries()) {
      if (handle.kind === 'file') out[name] = decoder.decode(await (await handle.getFile()).arrayBuffer());
    }
    return out;
  });
}

async function writeOutside(path, text) {
  await page.evaluate(async ([path, text]) => {
    const handle = await window.e2eVault.getFileHandle(path, { create: true });
    const w = await handle.createWritable();
    await w.write(text);
    await w.close();
  }, [path, text]);
}

const idle = () => page.evaluate(() => window.planvaultTest.idle());
const plan = () => page.evaluate(() => window.planvaultTest.plan());
const nodePoint = (id, part = 'body') => page.evaluate(([id, part]) => window.planvaultTest.nodePoint(id, part), [id, part]);
const edgePoint = (from, to, part) => page.evaluate(([f, t, p]) => window.planvaultTest.edgePoint(f, t, p), [from, to, part]);

async function drag(from, to) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 6 });
  await page.mouse.move(to.x, to.y, { steps: 6 });
  await page.mouse.up();
}

async function answerDialog(text) {
  await page.locator('#dialog-input').waitFor({ state: 'visible' });
  await page.locator('#dialog-input').fill(text);
  await page.keyboard.press('Enter');
  await page.locator('#dialog-input').waitFor({ state: 'detached' });
}

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
});

test('the example vault shows at once, drawn on the canvas', async () => {
  await page.waitForFunction(() => document.querySelector('#mode').textContent.startsWith('Example'));
  const p = await plan();
  assert.deepEqual(p.nodes.map((n) => n.id).sort(), ['draft', 'review', 'send']);
  assert.equal(p.edges.length, 3);
  await saveScreenshot(page, 'editing-example');
});

test('dragging from a handle onto a card appends the edge to the note', async () => {
  await openVault(VAULT);
  await drag(await nodePoint('ship', 'handle'), await nodePoint('start'));
  await answerDialog('again');
  await idle();
  const files = await readVault();
  assert.equal(files['ship.md'], '# Ship it\n\nDone when shipped.\n\n## Next\n- again -> [[start]]\n');
  const p = await plan();
  assert.ok(p.edges.some((e) => e.from === 'ship' && e.to === 'start' && e.label === 'again'));
  await saveScreenshot(page, 'editing-new-edge');
});

test('an empty label writes an unconditional edge, in CRLF where the note uses CRLF', async () => {
  await drag(await nodePoint('work', 'handle'), await nodePoint('ship'));
  await answerDialog('');
  await idle();
  const files = await readVault();
  assert.equal(files['work.md'], '---\nstatus: active\n---\n# Do the work\r\n\r\nSee [[check]] later.\r\n\r\n## Next\r\n- ok -> [[check]]\r\n- [[ship]]\r\n');
});

test('dragging an edge head onto another card retargets it', async () => {
  await drag(await edgePoint('check', 'ship', 'head'), await nodePoint('start'));
  await idle();
  const files = await readVault();
  assert.equal(files['check.md'], '# Check it\n\n## Next\n- approved -> [[start]]\n- rework -> [[work]]\n');
});

test('select an edge and press Delete removes its line; undo brings it back', async () => {
  const at = await edgePoint('work', 'ship', 'mid');
  await page.mouse.click(at.x, at.y);
  await page.keyboard.press('Delete');
  await idle();
  let files = await readVault();
  assert.equal(files['work.md'], VAULT['work.md']);
  await page.keyboard.press('Control+z');
  await idle();
  files = await readVault();
  assert.ok(files['work.md'].endsWith('- ok -> [[check]]\r\n- [[ship]]\r\n'));
  await page.keyboard.press('Control+Shift+z');
  await idle();
  files = await readVault();
  assert.equal(files['work.md'], VAULT['work.md']);
});

test('double-clicking a label edits it', async () => {
  const at = await edgePoint('check', 'work', 'label');
  await page.mouse.dblclick(at.x, at.y);
  await answerDialog('needs more work');
  await idle();
  const files = await readVault();
  assert.equal(files['check.md'], '# Check it\n\n## Next\n- approved -> [[start]]\n- needs more work -> [[work]]\n');
});

test('renaming a note moves the file and rewrites every link; undo restores both', async () => {
  const before = await readVault();
  const at = await nodePoint('check');
  await page.mouse.dblclick(at.x, at.y);
  await answerDialog('review');
  await idle();
  let files = await readVault();
  assert.equal(files['check.md'], undefined);
  assert.equal(files['review.md'], before['check.md']);
  assert.equal(files['work.md'], before['work.md'].replaceAll('[[check]]', '[[review]]'));
  assert.ok((await plan()).nodes.some((n) => n.id === 'review'));
  await saveScreenshot(page, 'editing-renamed');
  await page.keyboard.press('Control+z');
  await idle();
  files = await readVault();
  assert.deepEqual(files, before);
});

test('the side panel writes knobs into the frontmatter, keeping unknown keys', async () => {
  const at = await nodePoint('start');
  await page.mouse.click(at.x, at.y);
  await page.locator('#knob-status').selectOption('pending');
  await idle();
  await page.locator('#knob-role').fill('planner');
  await page.locator('#knob-role').press('Tab');
  await idle();
  const files = await readVault();
  assert.equal(files['start.md'], '---\ntype: start\nstatus: pending\nowner: ana\nrole: planner\n---\n# Start here\n\nCollect the inputs.\n\n## Next\n- [[work]]\n');
  await saveScreenshot(page, 'editing-side-panel');
});

test('typing in the note text survives an edge edit of that note: kept, and the person chooses', async () => {
  await openVault(VAULT);
  const at = await nodePoint('ship');
  await page.mouse.click(at.x, at.y);
  await page.fill('#node-body', '# Ship it\n\nDone when shipped, and announced.\n');
  // An edge out of ship, added while the typing is unsaved.
  await drag(await nodePoint('ship', 'handle'), await nodePoint('start'));
  await answerDialog('again');
  await idle();
  assert.ok((await readVault())['ship.md'].endsWith('## Next\n- again -> [[start]]\n'));
  assert.equal(await page.locator('#node-body').inputValue(), '# Ship it\n\nDone when shipped, and announced.\n');
  await page.locator('#node-body-stale').waitFor();
  // Discard takes the note as it is now, the new edge in it.
  await page.click('#node-body-discard');
  assert.match(await page.locator('#node-body').inputValue(), /- again -> \[\[start\]\]\n$/);
  assert.equal(await page.locator('#node-body-stale').count(), 0);
  assert.deepEqual(page.problems, []);
});

test('moving a card keeps its position in plan.canvas', async () => {
  const at = await nodePoint('ship');
  await drag(at, { x: at.x + 150, y: at.y + 40 });
  await idle();
  const files = await readVault();
  const canvas = JSON.parse(files['plan.canvas']);
  const ship = canvas.nodes.find((n) => n.file === 'ship.md');
  assert.ok(ship, 'the moved note has a card in plan.canvas');
  assert.ok(canvas.edges.some((e) => e.label === 'again'), 'edges are written from the notes');
  const moved = await nodePoint('ship');
  assert.ok(Math.abs(moved.x - (at.x + 150)) < 2 && Math.abs(moved.y - (at.y + 40)) < 2, JSON.stringify(moved));
});

test('a change made outside the app is picked up', async () => {
  await writeOutside('ship.md', '# Ship it\n\nDone when shipped.\n');
  await page.evaluate(() => window.planvaultTest.poll());
  await page.waitForFunction(() => /outside planvault/.test(document.querySelector('#status').textContent));
  assert.ok(!(await plan()).edges.some((e) => e.from === 'ship'));
});

test('an edit to a note changed outside is refused, the vault reloaded, nothing lost', async () => {
  await page.evaluate(() => window.planvaultTest.setPolling(false));
  const outside = '# Ship it\n\nEdited in Obsidian meanwhile.\n';
  await writeOutside('ship.md', outside);
  await drag(await nodePoint('ship', 'handle'), await nodePoint('work'));
  await answerDialog('late');
  await idle();
  const files = await readVault();
  assert.equal(files['ship.md'], outside);
  await page.waitForFunction(() => /changed outside planvault/.test(document.querySelector('#status').textContent));
  assert.ok(!(await plan()).edges.some((e) => e.from === 'ship'));
  // What the refused edit would have written stays readable.
  const kept = await page.locator('textarea[id="rejected-ship.md"]').inputValue();
  assert.ok(kept.includes('- late -> [[work]]'), kept);
  await saveScreenshot(page, 'editing-conflict');
  await page.locator('.rejected button').click();
  await page.evaluate(() => window.planvaultTest.setPolling(true));
});

test('creating and deleting notes', async () => {
  await page.locator('#new-node').click();
  await answerDialog('Publish');
  await idle();
  let files = await readVault();
  assert.equal(files['Publish.md'], '---\ntype: step\nstatus: pending\n---\n# Publish\n\nDescribe the work of this step.\n\n## Next\n');
  // Delete "work": the dialog lists the edges into it, and their lines go too.
  const at = await nodePoint('work');
  await page.mouse.click(at.x, at.y);
  await page.keyboard.press('Delete');
  await page.locator('.incoming li').first().waitFor();
  const incoming = await page.locator('.incoming li').allTextContents();
  assert.equal(incoming.length, 2, incoming.join('; '));
  await page.locator('#dialog-ok').click();
  await idle();
  files = await readVault();
  assert.equal(files['work.md'], undefined);
  assert.equal(files['start.md'].includes('[[work]]'), false);
  assert.deepEqual(page.problems.filter((p) => !p.includes('planvault-worker')), []);
});

test('a change that cannot be written whole is not written at all, and says so', async () => {
  await openVault(VAULT);
  // A folder where plan.canvas goes: the new note is written, then the
  // canvas cannot be, and the note must not stay behind.
  await page.evaluate(async () => {
    const folder = await window.e2eVault.getDirectoryHandle('plan.canvas', { create: true });
    await folder.getFileHandle('inside.md', { create: true });
  });
  await page.locator('#new-node').click();
  await answerDialog('Publish');
  await idle();
  const files = await readVault();
  assert.equal(files['Publish.md'], undefined);
  assert.deepEqual(Object.keys(files).sort(), Object.keys(VAULT).sort());
  const status = await page.locator('#status').textContent();
  assert.match(status, /Could not write “.*Publish.*”: .*Nothing was changed/, status);
  assert.ok(!(await plan()).nodes.some((n) => n.id === 'Publish'));
});
