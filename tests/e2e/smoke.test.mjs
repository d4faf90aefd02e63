// Smoke test of the built app (dist/): it loads in headless Chromium, both
// wasm binaries start, the example plan is checked and drawn on the canvas.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();

test('the app renders the example plan on a canvas and the worker answers', async () => {
  const page = await app.open();

  // The app (main wasm) mounted and drew something on a canvas.
  const canvas = page.locator('canvas').first();
  await canvas.waitFor({ state: 'visible', timeout: 30_000 });
  // The canvas is visible before the example vault is copied into OPFS and
  // drawn: wait for the loaded plan and the next frames, then sample.
  await planShown(page, 30_000);
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const painted = await canvas.evaluate((element) => {
    const { width, height } = element;
    const pixels = element.getContext('2d').getImageData(0, 0, width, height).data;
    const distinct = new Set();
    for (let i = 0; i < pixels.length && distinct.size < 2; i += 4) {
      distinct.add(`${pixels[i]},${pixels[i + 1]},${pixels[i + 2]},${pixels[i + 3]}`);
    }
    return { width, height, colours: distinct.size };
  });
  assert.ok(painted.width > 0 && painted.height > 0, `canvas has a size: ${JSON.stringify(painted)}`);
  assert.ok(painted.colours >= 2, `canvas is painted, not blank: ${JSON.stringify(painted)}`);

  // The worker (second wasm binary) started and said Ready in the app's protocol version.
  await page.waitForFunction(() => window.planvaultTest.run().worker === 'ready', null, { timeout: 30_000 });
  assert.equal(await page.locator('#worker-status').textContent(), 'Worker: ready');

  const screenshot = await saveScreenshot(page, 'smoke');
  assert.deepEqual(page.problems, [], `the app ran without errors (screenshot: ${screenshot})`);
});
