// Frame times of the canvas on a 2,000-note plan, for BENCHMARKS.md. The
// figures are written to tests/artifacts/frame-times.json and printed; the
// test asserts what was drawn, never how fast (timings vary by machine).

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { saveScreenshot, ARTIFACTS_DIR } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const NOTES = 2000;
const app = useApp();
let page;

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
});

function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { frames: sorted.length, mean: +mean.toFixed(2), median: +at(0.5).toFixed(2), p95: +at(0.95).toFixed(2), max: +sorted[sorted.length - 1].toFixed(2) };
}

test(`pan and zoom on a ${NOTES}-note plan`, async () => {
  const opened = await page.evaluate(async (n) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry('perf-vault', { recursive: true }); } catch (_) {}
    const dir = await root.getDirectoryHandle('perf-vault', { create: true });
    // A plan-shaped graph: a spine, skips ahead, revision loops back.
    for (let i = 0; i < n; i++) {
      const next = [];
      if (i + 1 < n) next.push(`- [[step-${i + 1}]]`);
      if (i % 3 === 0 && i + 3 < n) next.push(`- skip ahead -> [[step-${i + 3}]]`);
      if (i % 7 === 6) next.push(`- needs revision -> [[step-${i - 4}]]`);
      const type = i === 0 ? 'start' : 'step';
      const text = `---\ntype: ${type}\nstatus: ${['pending', 'active', 'done'][i % 3]}\nmax_visits: 3\n---\n# Step ${i}\n\nDo part ${i} of the work.\n\n## Next\n${next.join('\n')}\n`;
      const w = await (await dir.getFileHandle(`step-${i}.md`, { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
    const started = performance.now();
    await window.planvaultTest.openHandle(dir);
    return performance.now() - started;
  }, NOTES);
  const p = await page.evaluate(() => window.planvaultTest.plan());
  assert.equal(p.nodes.length, NOTES);

  const canvas = await page.locator('#plan-canvas').boundingBox();
  const cx = canvas.x + canvas.width / 2;
  const cy = canvas.y + canvas.height / 2;

  // Zoomed out to the whole plan (cards without text), then at reading
  // zoom (full cards, labels) while panning, then zooming in and out.
  const phases = {};
  const measure = async (name, action) => {
    await page.evaluate(() => window.planvaultTest.frameTimes(true));
    await page.evaluate(() => {
      window.__intervals = [];
      let last = performance.now();
      window.__stop = false;
      const loop = (t) => { window.__intervals.push(t - last); last = t; if (!window.__stop) requestAnimationFrame(loop); };
      requestAnimationFrame(loop);
    });
    // The frame loop runs before the action starts, so its frames are counted.
    await page.waitForFunction(() => window.__intervals.length >= 2);
    await action();
    const result = await page.evaluate(() => { window.__stop = true; return window.__intervals.slice(1); });
    assert.ok(result.length > 0, `${name}: frames were counted during the action`);
    const draws = await page.evaluate(() => window.planvaultTest.frameTimes(true));
    assert.ok(draws.length > 0, `${name}: the canvas was redrawn`);
    phases[name] = { draw: summary(draws), frameInterval: summary(result) };
  };

  await page.keyboard.press('Escape');
  await page.locator('#plan-canvas').focus();
  await page.keyboard.press('0');
  await measure('fit-all-pan', async () => {
    for (let i = 0; i < 60; i++) {
      await page.mouse.move(cx, cy);
      await page.mouse.down();
      const d = i % 2 === 0 ? 40 : -40;
      await page.mouse.move(cx + d, cy + d / 2, { steps: 2 });
      await page.mouse.up();
    }
  });
  await saveScreenshot(page, 'perf-fit');
  // Reading zoom in the middle of the plan: full cards and labels.
  await page.evaluate(() => window.planvaultTest.centerOn('step-1000', 1));
  await page.locator('#plan-canvas').focus();
  await measure('reading-zoom-pan', async () => {
    // Shift+arrows pan (a drag here would grab a card).
    for (let i = 0; i < 60; i++) await page.keyboard.press(i % 20 < 10 ? 'Shift+ArrowDown' : 'Shift+ArrowUp');
  });
  await saveScreenshot(page, 'perf-reading-zoom');
  // An edit on the big plan: moving a card writes plan.canvas (every card's
  // position, since the first move places them all) and redraws.
  await measure('move-a-card', async () => {
    for (let i = 0; i < 5; i++) {
      const at = await page.evaluate(() => window.planvaultTest.nodePoint('step-1000', 'body'));
      await page.mouse.move(at.x, at.y);
      await page.mouse.down();
      await page.mouse.move(at.x + 30, at.y, { steps: 3 });
      await page.mouse.up();
      await page.evaluate(() => window.planvaultTest.idle());
    }
  });
  await measure('wheel-zoom-out-and-in', async () => {
    for (let i = 0; i < 60; i++) await page.mouse.wheel(0, i < 30 ? 240 : -240);
  });

  const report = { notes: NOTES, openMs: +opened.toFixed(1), phases, userAgent: await page.evaluate(() => navigator.userAgent) };
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  writeFileSync(join(ARTIFACTS_DIR, 'frame-times.json'), JSON.stringify(report, null, 2));
  console.log(JSON.stringify(report, null, 2));
});
