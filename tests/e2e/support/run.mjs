// Running plans in the app from a test: the example vault, opening an OPFS
// copy of a vault, the run panel's controls, the Settings' endpoint and
// the questions the run asks. Shared by the run test files.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server.mjs';
import { writePrivateFolder } from './browser.mjs';
import { runState, waitForRun } from './vault.mjs';

export const SECRET = 'sk-e2e-never-stored-0123456789';
export const QUERY = 'invite the design team';

const EXAMPLE_DIR = join(REPO_ROOT, 'static', 'example-vault');
/** The example vault's notes: path → text. */
export const EXAMPLE = Object.fromEntries(
  readdirSync(EXAMPLE_DIR).filter((f) => f.endsWith('.md')).map((f) => [f, readFileSync(join(EXAMPLE_DIR, f), 'utf8')]),
);

// What the example's requests contain (as in cli/tests/run_e2e.rs).
export const DRAFT = 'Step: Draft the email';
export const REVIEW = 'Step: Review the draft';
export const JUDGE = 'The step "Review the draft" just finished';
export const SEND = 'Step: Send the email';

/** Every message content of a recorded request, joined. */
export const textOf = (request) => (request.body?.messages ?? []).map((m) => m.content ?? '').join('\n');
export const statusOf = (text) => /^status: (\w+)/m.exec(text)?.[1];

/** A page of the app whose run worker is ready. */
export async function readyPage(app, viewport = { width: 1440, height: 900 }) {
  const page = await app.open(viewport);
  await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
  return page;
}

/** Opens the OPFS folder `folder` as it is (after a reload). */
export async function reopenVault(page, folder) {
  await page.evaluate(async (folder) => {
    const root = await navigator.storage.getDirectory();
    await window.planvaultTest.openHandle(await root.getDirectoryHandle(folder));
  }, folder);
  await page.waitForFunction((folder) => document.querySelector('#mode').textContent.includes(folder), folder);
}

/** Writes `files` into a fresh OPFS folder `folder` and opens it in the app. */
export async function openVault(page, files, folder) {
  await writePrivateFolder(page, folder, files);
  await reopenVault(page, folder);
}

export async function openRunPanel(page) {
  if (!(await page.locator('#run-panel').isVisible())) await page.click('#run-toggle');
  await page.locator('#run-panel').waitFor({ state: 'visible' });
}

/** Settings → LLM endpoints → `url` as the default endpoint. */
export async function useEndpoint(page, url, { attempts = 3, delayMs = 50 } = {}) {
  await openRunPanel(page);
  await page.click('#run-settings');
  await page.check('#source-model');
  await page.fill('#ep-default-url', url);
  await page.fill('#ep-default-model', 'stub-model');
  await page.fill('#ep-default-key', SECRET);
  await page.fill('#retry-attempts', String(attempts));
  await page.fill('#retry-delay', String(delayMs));
  await page.click('#settings-save');
  await page.locator('#settings').waitFor({ state: 'detached' });
}

export async function startRun(page, query = QUERY) {
  await openRunPanel(page);
  await page.fill('#run-query', query);
  await page.click('#run-start');
}

export const waitPhase = (page, phase, timeout) =>
  waitForRun(page, (phase) => window.planvaultTest.run().phase === phase, phase, timeout);

/** Waits for a question of `kind` (work, judge, human, breakpoint) in the run panel and returns it. */
export async function waitAsk(page, kind) {
  await waitForRun(page, (kind) => window.planvaultTest.run().ask?.ask.kind === kind, kind);
  await page.locator(`#run-panel #run-ask[data-kind="${kind}"]`).waitFor({ state: 'visible' });
  // The app pans its node into view two frames later, then focuses the
  // answer: until then a point taken on the canvas may move under the mouse.
  await page.waitForFunction(() => document.activeElement?.matches('#run-ask [data-focus]'));
  return (await page.evaluate(() => window.planvaultTest.run())).ask;
}

/** Colours drawn around a page point (5×5 canvas pixels). */
export async function pixelsAt(page, point) {
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  return page.evaluate(({ x, y }) => {
    const canvas = document.querySelector('#plan-canvas');
    const rect = canvas.getBoundingClientRect();
    const scale = canvas.width / rect.width;
    const px = Math.round((x - rect.left) * scale);
    const py = Math.round((y - rect.top) * scale);
    const data = canvas.getContext('2d').getImageData(px - 2, py - 2, 5, 5).data;
    const out = [];
    for (let i = 0; i < data.length; i += 4) out.push([data[i], data[i + 1], data[i + 2]]);
    return out;
  }, point);
}

export const near = ([r, g, b], [R, G, B]) => Math.abs(r - R) + Math.abs(g - G) + Math.abs(b - B) < 60;

/** Answers every question of a manual run from `answers[kind](ask)`; the
 * questions asked, as `kind:node#visit`. */
export async function answerUntilFinished(page, answers) {
  const seen = [];
  for (;;) {
    await waitForRun(page, () => {
      const r = window.planvaultTest.run();
      return r.ask !== null || r.phase === 'finished';
    });
    const state = await runState(page);
    if (state.phase === 'finished') return seen;
    const { ask } = state;
    seen.push(`${ask.ask.kind}:${ask.node}#${ask.visit}`);
    await page.locator(`#run-ask[data-kind="${ask.ask.kind}"]`).waitFor({ state: 'visible' });
    await answers[ask.ask.kind](ask);
    await waitForRun(page, (request) => window.planvaultTest.run().ask?.request !== request, ask.request);
  }
}
