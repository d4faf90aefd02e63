// `scripts/start --smoke`'s check of the served app: load it in headless
// Chromium as a person would and see that the example plan is drawn.
//   node scripts/start-smoke.mjs URL GRAPH_JSON
// GRAPH_JSON is `planvault graph <example> --json`: the app's own summary
// line must name the same number of notes and edges, with no errors, and the
// canvas must be painted. Exits non-zero, saying why, when anything is off.

import assert from 'node:assert/strict';
import { launchBrowser, openPage, saveScreenshot } from '../tests/e2e/support/browser.mjs';

const [url, graphJson] = process.argv.slice(2);
if (!url || !graphJson) {
  console.error('usage: node scripts/start-smoke.mjs URL GRAPH_JSON');
  process.exit(2);
}
const graph = JSON.parse(graphJson);
const expected = `Plan: ${graph.nodes.length} notes, ${graph.edges.length} edges, no errors`;

const browser = await launchBrowser();
let page;
try {
  // As a person opens it: without the end-to-end tests' hook.
  page = await openPage(browser, { testHook: false });
  await page.goto(url);
  // The app reads the example into the browser's private storage, checks it
  // and draws it; its summary line says what it drew.
  const summary = page.locator('#plan-summary');
  await page.waitForFunction(
    () => document.querySelector('#plan-summary')?.textContent.startsWith('Plan: '),
    null,
    { timeout: 120_000 },
  );
  assert.equal(await summary.textContent(), expected, 'the app drew the example plan the CLI reads');

  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const colours = await page.locator('#plan-canvas').evaluate((canvas) => {
    const { width, height } = canvas;
    const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
    const seen = new Set();
    for (let i = 0; i < pixels.length && seen.size < 3; i += 4) {
      seen.add(`${pixels[i]},${pixels[i + 1]},${pixels[i + 2]},${pixels[i + 3]}`);
    }
    return seen.size;
  });
  assert.ok(colours >= 3, `the canvas is painted (${colours} colours seen)`);

  await page.waitForFunction(
    () => document.querySelector('#worker-status')?.textContent === 'Worker: ready',
    null,
    { timeout: 60_000 },
  );
  const shot = await saveScreenshot(page, 'start-smoke');
  assert.deepEqual(page.problems, [], `the page ran without errors (screenshot: ${shot})`);
  const hook = await page.evaluate(() => ({
    installed: 'planvaultTest' in window,
    fetched: performance.getEntriesByType('resource').some((e) => e.name.endsWith('/split_test_hook.wasm')),
  }));
  assert.deepEqual(hook, { installed: false, fetched: false }, 'the tests\' hook is neither fetched nor installed');
  console.log(`smoke check passed: "${expected}", canvas painted, worker ready (screenshot: ${shot})`);
} catch (error) {
  if (page) {
    const shot = await saveScreenshot(page, 'start-smoke-failed').catch(() => 'none');
    console.error(`smoke check failed (screenshot: ${shot})`);
  }
  console.error(error.message ?? error);
  process.exitCode = 1;
} finally {
  await browser.close();
}
