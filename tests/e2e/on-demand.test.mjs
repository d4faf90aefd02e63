// The app's parts that the first paint does not need (web/src/on_demand.rs)
// are their own wasm files, fetched after the main module, ahead of use; a
// part that cannot be fetched says so and is fetched again on request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp, planShown, addEdgeByKeyboard } from './support/app.mjs';
import { readOpfsFolder } from './support/vault.mjs';

const app = useApp();

/** Every part web/src/on_demand.rs names, by its file (the run client's
 * fetched when the worker's first message comes, the tool check's at
 * start-up, both beside the first paint, not before it). */
const PARTS = ['dialogs', 'note_picker', 'note_editor', 'plan_list', 'side_panel', 'run_panel', 'settings', 'run_client', 'later_checks', 'write_queue', 'canvas_edit'];

/** The wasm files the page fetched: name, when asked for and when in, in ms. */
const wasmFetches = (page) =>
  page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .filter((entry) => entry.name.endsWith('.wasm'))
      .map((entry) => ({
        file: new URL(entry.name).pathname.split('/').pop(),
        start: entry.startTime,
        end: entry.responseEnd,
      })),
  );

async function openSettings(page) {
  if (!(await page.locator('#run-panel').isVisible())) await page.click('#run-toggle');
  await page.click('#run-settings');
}

/**
 * A page whose part `name` cannot be fetched until `unblock()`;
 * `otherProblems()` lists what went wrong besides that part's fetch.
 */
async function openWithPartBlocked(name) {
  let blocked = true;
  const file = `split_${name}.wasm`;
  const page = await app.open(undefined, {
    beforeLoad: (page) => page.route(`**/${file}`, (route) => (blocked ? route.abort() : route.continue())),
  });
  return {
    page,
    unblock: () => {
      blocked = false;
    },
    otherProblems: () =>
      page.problems.filter((problem) => !problem.includes(file) && !/failed to load|TypeError: Failed to fetch/i.test(problem)),
  };
}

test('the page waits for the main module only; every part comes after it, before it is used', async () => {
  const page = await app.open();
  await planShown(page);
  // Settings and the list view are fetched once the plan is up.
  await page.waitForFunction(
    (files) => files.every((file) => performance.getEntriesByName(new URL(file, document.baseURI).href).length > 0
      || performance.getEntriesByType('resource').some((e) => e.name.endsWith(`/${file}`))),
    PARTS.map((part) => `split_${part}.wasm`),
    { timeout: 30_000 },
  );
  const fetched = await wasmFetches(page);
  const main = fetched.find((f) => f.file === 'planvault-web_bg.wasm');
  assert.ok(main, `the main module was fetched: ${JSON.stringify(fetched)}`);
  for (const part of PARTS) {
    const entry = fetched.find((f) => f.file === `split_${part}.wasm`);
    assert.ok(entry, `part ${part} is a file of its own`);
    assert.ok(entry.start >= main.end, `part ${part} is asked for after the main module is in`);
  }

  // Used now, they need nothing more from the server.
  const before = fetched.length;
  await openSettings(page);
  await page.locator('#settings').waitFor();
  await page.keyboard.press('Escape');
  await page.click('#list-toggle');
  await page.locator('#plan-list').waitFor();
  assert.equal((await wasmFetches(page)).length, before, 'no wasm fetched on use');
  assert.deepEqual(page.problems, []);
});

test("the tests' hook is a part of its own, fetched only by a page that asks for it", async () => {
  // What a person gets: the plan, the parts fetched ahead of use, no hook.
  const person = await app.open({ testHook: false });
  await person.waitForFunction(
    () => document.querySelector('#plan-summary')?.textContent.startsWith('Plan: ')
      && performance.getEntriesByType('resource').some((e) => e.name.endsWith('/split_plan_list.wasm')),
    null,
    { timeout: 60_000 },
  );
  const files = (await wasmFetches(person)).map((f) => f.file);
  assert.ok(files.includes('split_settings.wasm'), `the parts came: ${files}`);
  assert.ok(!files.includes('split_test_hook.wasm'), `no hook fetched: ${files}`);
  assert.equal(await person.evaluate(() => 'planvaultTest' in window), false);
  assert.deepEqual(person.problems, []);

  // A test's page: the same build, the hook fetched after the main module.
  const tested = await app.open();
  await planShown(tested);
  const fetched = await wasmFetches(tested);
  const main = fetched.find((f) => f.file === 'planvault-web_bg.wasm');
  const hook = fetched.find((f) => f.file === 'split_test_hook.wasm');
  assert.ok(hook && hook.start >= main.end, `the hook came after the main module: ${JSON.stringify(fetched)}`);
});

test('a part that cannot be fetched says so, the rest works, and Try again fetches it', async () => {
  const { page, unblock, otherProblems } = await openWithPartBlocked('settings');
  await planShown(page);
  await openSettings(page);
  const alert = page.locator('.part-failed');
  await alert.waitFor();
  assert.match(await alert.textContent(), /^Settings could not be loaded/);
  await saveScreenshot(page, 'on-demand-part-failed');

  // The other parts are there: the run panel, and a card's selection.
  assert.ok(await page.locator('#run-panel').isVisible());
  await page.click('#tab-selection');
  const first = await page.evaluate(() => window.planvaultTest.plan().nodes[0].id);
  const at = await page.evaluate((id) => window.planvaultTest.nodePoint(id, 'body'), first);
  await page.mouse.click(at.x, at.y);
  await page.locator('#selection-pane #panel-title').waitFor();

  unblock();
  await alert.locator('button').click();
  await page.locator('#settings').waitFor();
  assert.equal(await alert.count(), 0);
  assert.deepEqual(otherProblems(), [], 'only the blocked part failed');
});

test("the run client's part comes when the worker first speaks; if it cannot, it is fetched again until it comes", async () => {
  const { page, unblock, otherProblems } = await openWithPartBlocked('run_client');
  await planShown(page);
  const worker = page.locator('#worker-status');
  await page.waitForFunction(
    () => /^Worker: the run client could not be loaded/.test(document.querySelector('#worker-status')?.textContent ?? ''),
    null,
    { timeout: 30_000 },
  );
  if (!(await page.locator('#run-panel').isVisible())) await page.click('#run-toggle');
  assert.ok(await page.locator('#run-start').isDisabled(), 'no run starts without the run client');
  await saveScreenshot(page, 'on-demand-run-client-failed');

  // Nothing is asked of the person: the worker's `Ready`, kept in line, is
  // handled once the part comes, and a run can start.
  unblock();
  await page.waitForFunction(() => document.querySelector('#worker-status')?.textContent === 'Worker: ready', null, {
    timeout: 30_000,
  });
  assert.equal(await worker.textContent(), 'Worker: ready');
  await page.locator('#run-start:not([disabled])').waitFor();
  assert.deepEqual(otherProblems(), [], 'only the blocked part failed');
});

test("the later checks' part is fetched again until it comes; then the notes' tools are judged", async () => {
  const { page, unblock, otherProblems } = await openWithPartBlocked('later_checks');
  await page.waitForFunction(
    () => /^Tools the notes declare are not checked yet/.test(document.querySelector('#status')?.textContent ?? ''),
    null,
    { timeout: 30_000 },
  );
  await page.waitForFunction(() => window.planvaultTest?.plan()?.nodes.length > 0);
  assert.equal(await page.evaluate(() => window.planvaultTest.plan().diagnostics.includes('unknown-tool')), false);

  unblock();
  await page.waitForFunction(() => window.planvaultTest.plan().diagnostics.includes('unknown-tool'), null, {
    timeout: 30_000,
  });
  assert.deepEqual(otherProblems(), [], 'only the blocked part failed');
});

test('an edit made while the writer cannot be fetched is not saved and says so; the next edit is written', async () => {
  const { page, unblock, otherProblems } = await openWithPartBlocked('write_queue');
  await planShown(page);
  const onDisk = await readOpfsFolder(page, 'example-vault');
  await addEdgeByKeyboard(page, 'send', 'draf', 'Draft the email', 'again');
  await page.waitForFunction(() => /^Not saved: the writer could not be loaded/.test(document.querySelector('#status').textContent));
  assert.deepEqual(await readOpfsFolder(page, 'example-vault'), onDisk, 'nothing written');
  const edges = (await page.evaluate(() => window.planvaultTest.plan())).edges;
  assert.ok(!edges.some((e) => e.from === 'send' && e.to === 'draft'), 'the plan shown is the one on disk');

  unblock();
  await page.locator('.rejected button').click();
  await addEdgeByKeyboard(page, 'send', 'draf', 'Draft the email', 'again');
  assert.match((await readOpfsFolder(page, 'example-vault'))['send.md'], /\n- again -> \[\[draft\]\]\n/);
  assert.deepEqual(otherProblems(), [], 'only the blocked part failed');
});
