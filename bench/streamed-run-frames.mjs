#!/usr/bin/env node
// Frame times of the canvas while a run streams, for BENCHMARKS.md
// (bench/runs/streamed-run-frames.md): a 300-node plan runs against
// testkit/llm-stub, which streams every answer at a model's pace (4
// characters every 20 ms: ~50 tokens/s, 50 run-panel updates a second),
// while the canvas is panned and zoomed in headless Chromium. The same
// gestures without a run are the peer. Reported per phase: the interval
// between animation frames (p50/p95/p99/max, frames over 16.7 ms), one
// canvas draw (`window.planvaultTest.frameTimes`, the e2e build) and the
// long tasks (over 50 ms) the browser saw, the frames missed within 0.5 s
// of a step's end, and the machine's CPU shares (stolen time included).
//
//   scripts/test web-build                       # dist/ with the test hook
//   cargo build -p planvault-llm-stub            # or PLANVAULT_LLM_STUB=…
//   node bench/streamed-run-frames.mjs [--nodes 300] [--seconds 20] [--sentences 24] [--out FILE]
//
// Writes the figures as JSON to tests/artifacts/streamed-run-frames.json (or
// --out) and prints them. Asserts nothing about speed: it fails only when
// the run or the drawing did not happen.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { launchBrowser, openPage, ARTIFACTS_DIR } from '../tests/e2e/support/browser.mjs';
import { serveDist } from '../tests/e2e/support/server.mjs';
import { startStub } from '../tests/e2e/support/llm-stub.mjs';
import { openVault, startRun, useEndpoint } from '../tests/e2e/support/run.mjs';

const { values: options } = parseArgs({
  options: {
    nodes: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '20' },
    // Sentences per answer (50 characters each): 24 is 6 s of streaming per
    // step, so steps end (and notes are written) while measured.
    sentences: { type: 'string', default: '24' },
    out: { type: 'string', default: join(ARTIFACTS_DIR, 'streamed-run-frames.json') },
  },
});
const NODES = Number(options.nodes);
const SECONDS = Number(options.seconds);
const FRAME = 1000 / 60;
/** How long after a step ends a missed frame is put down to it. */
const STEP_END_MS = 500;

/** A 300-note chain: each note one step, its answer streamed. */
function vault(n) {
  const files = {};
  for (let i = 0; i < n; i++) {
    const next = i + 1 < n ? `\n## Next\n- [[step-${i + 1}]]\n` : '';
    const type = i === 0 ? 'start' : 'step';
    files[`step-${i}.md`] = `---\ntype: ${type}\n---\n# Step ${i}\n\nWrite part ${i} of the report.\n${next}`;
  }
  return files;
}

const ANSWER = Array.from({ length: Number(options.sentences) }, (_, i) => `Sentence ${i} of the answer, streamed token by token.`).join(' ');

function stats(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (x) => +x.toFixed(2);
  return {
    count: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(sorted[sorted.length - 1]),
  };
}

/** The machine's CPU time so far by kind (Linux `/proc/stat`), or null. */
function cpuTimes() {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal };
  } catch {
    return null;
  }
}

/** Shares of the CPU between two `cpuTimes()`: busy, idle and stolen by the
 * host (a virtual machine's neighbours; frames missed then are not ours). */
function cpuShares(before, after) {
  if (!before || !after) return null;
  const d = (k) => after[k] - before[k];
  const all = d('busy') + d('idle') + d('steal');
  const pct = (k) => Math.round((100 * d(k)) / all);
  return { busyPct: pct('busy'), idlePct: pct('idle'), stealPct: pct('steal') };
}

/** Pans (Shift+arrows) and zooms (wheel) the canvas for `seconds`, measuring. */
async function measure(page, seconds) {
  await page.evaluate((missed) => {
    window.planvaultTest.frameTimes(true);
    window.__intervals = [];
    window.__longTasks = [];
    window.__stop = false;
    window.__observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    });
    window.__observer.observe({ type: 'longtask' });
    // When a step ends (an output is kept), read every 50 ms: a missed
    // frame within STEP_END_MS after one is counted as the step end's.
    window.__stepEnds = [];
    let outputs = window.planvaultTest.run().outputs.length;
    window.__stepPoll = setInterval(() => {
      const n = window.planvaultTest.run().outputs.length;
      if (n !== outputs) window.__stepEnds.push(performance.now());
      outputs = n;
    }, 50);
    window.__missedAt = [];
    let last = performance.now();
    const loop = (t) => {
      if (t - last > missed) window.__missedAt.push(t);
      window.__intervals.push(t - last);
      last = t;
      if (!window.__stop) requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  }, FRAME + 1);
  const cpuBefore = cpuTimes();
  const box = await page.locator('#plan-canvas').boundingBox();
  const center = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  await page.mouse.move(center.x, center.y);
  const until = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < until; i++) {
    // Three pans, one zoom step; the zoom goes out and back in.
    if (i % 4 === 3) await page.mouse.wheel(0, i % 40 < 20 ? 120 : -120);
    else await page.keyboard.press(i % 16 < 8 ? 'Shift+ArrowRight' : 'Shift+ArrowLeft');
    await page.waitForTimeout(30);
  }
  const result = await page.evaluate(() => {
    window.__stop = true;
    window.__observer.disconnect();
    clearInterval(window.__stepPoll);
    return {
      intervals: window.__intervals.slice(1),
      longTasks: window.__longTasks,
      stepEnds: window.__stepEnds,
      missedAt: window.__missedAt.slice(1),
    };
  });
  const cpu = cpuShares(cpuBefore, cpuTimes());
  const draws = await page.evaluate(() => window.planvaultTest.frameTimes(true));
  if (draws.length === 0) throw new Error('the canvas was not redrawn while measured');
  return {
    frameInterval: stats(result.intervals),
    framesOver16_7ms: result.intervals.filter((t) => t > FRAME + 1).length,
    stepEnds: result.stepEnds.length,
    // The step end is seen up to 50 ms late: look from 100 ms before it.
    framesOverNearStepEnds: result.missedAt.filter((t) => result.stepEnds.some((e) => t > e - 100 && t < e + STEP_END_MS)).length,
    draw: stats(draws),
    longTasks: result.longTasks.length,
    longestTaskMs: result.longTasks.length ? Math.max(...result.longTasks) : 0,
    cpu,
  };
}

async function main() {
  const server = await serveDist();
  const browser = await launchBrowser();
  const stub = await startStub({
    replies: [],
    default: { content: ANSWER, chunk_chars: 4, chunk_delay_ms: 20, times: 0 },
  });
  try {
    const page = await openPage(browser, { width: 1440, height: 900 });
    await page.goto(server.url);
    await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 60_000 });
    await openVault(page, vault(NODES), 'bench-streamed-run');
    const plan = await page.evaluate(() => window.planvaultTest.plan());
    if (plan.nodes.length !== NODES) throw new Error(`${plan.nodes.length} nodes shown, not ${NODES}`);
    await useEndpoint(page, stub.url);
    // Reading zoom at the start of the chain: full cards and the run's ring.
    await page.evaluate(() => window.planvaultTest.centerOn('step-0', 1));
    await page.locator('#plan-canvas').focus();

    const idle = await measure(page, SECONDS);

    await startRun(page, 'write the report');
    await page.waitForFunction(() => window.planvaultTest.run().live?.text?.length > 0, null, { timeout: 60_000 });
    await page.evaluate(() => window.planvaultTest.centerOn('step-0', 1));
    await page.locator('#plan-canvas').focus();
    const before = await page.evaluate(() => window.planvaultTest.run());
    const streaming = await measure(page, SECONDS);
    const after = await page.evaluate(() => window.planvaultTest.run());
    if (after.phase !== 'running') throw new Error(`the run was not running throughout: ${after.phase}`);
    const report = {
      nodes: NODES,
      seconds: SECONDS,
      stream: '4 characters every 20 ms',
      answerChars: ANSWER.length,
      stepsStreamed: after.outputs.length - before.outputs.length,
      idle,
      streaming,
      userAgent: await page.evaluate(() => navigator.userAgent),
    };
    mkdirSync(dirname(options.out), { recursive: true });
    writeFileSync(options.out, JSON.stringify(report, null, 2));
    console.log(JSON.stringify(report, null, 2));
    await page.click('#run-stop').catch(() => {});
  } finally {
    stub.close();
    await browser.close();
    await server.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
