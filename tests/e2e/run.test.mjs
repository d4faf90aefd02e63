// Running plans in the built app (dist/), in headless Chromium: the run
// panel drives the Web Worker, which calls the scripted OpenAI-compatible
// stub (testkit/llm-stub, real HTTP and SSE with CORS headers) on
// 127.0.0.1, or asks the person in manual mode. Each test hands the app an
// origin-private copy of a vault and reads back the notes, the trace and
// what the canvas shows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp } from './support/app.mjs';
import { startStub, reply } from './support/llm-stub.mjs';
import { readOpfsFolder, runState, waitForRun } from './support/vault.mjs';
import {
  DRAFT, EXAMPLE, JUDGE, QUERY, REVIEW, SECRET, SEND, answerUntilFinished, near, openRunPanel, pixelsAt,
  readyPage, statusOf, textOf, useEndpoint, waitAsk, waitPhase, startRun,
  openVault as openFolder, reopenVault as reopenFolder,
} from './support/run.mjs';

const FOLDER = 'e2e-run';

const app = useApp();

const newPage = () => readyPage(app);
/** Writes `files` into a fresh OPFS folder and opens it in the app. */
const openVault = (page, files) => openFolder(page, files, FOLDER);
/** Opens the OPFS folder as it is (after a reload). */
const reopenVault = (page) => reopenFolder(page, FOLDER);

const readVault = (page) => readOpfsFolder(page, FOLDER);

const run = runState;
const canvasRun = (page) => page.evaluate(() => window.planvaultTest.canvasRun());

const waitFor = waitForRun;

const ORANGE = [0xf9, 0x73, 0x16]; // the active node's ring (theme.rs LIGHT.active_ring)

/** The trace's hop lines, as the CLI's test reads them. */
const hops = (trace) => trace.split('\n').filter((l) => l.startsWith('## ') || l.startsWith('- took') || l.startsWith('- decided'));

function loopScript() {
  return {
    replies: [
      reply(DRAFT, 'Subject: Quarterly design review\n\nDraft one.'),
      reply(REVIEW, 'The date is missing.'),
      reply(JUDGE, '1. NO - the date is missing\n2. YES - add the date'),
      reply(DRAFT, 'Subject: Quarterly design review\n\nDraft two, with the date.'),
      reply(REVIEW, 'Approved.'),
      reply(JUDGE, '1. YES - approved\n2. NO'),
      reply(SEND, 'Sent. Message id <42@example>.'),
    ],
  };
}

const EXPECTED_HOPS = [
  '## 1. Draft the email (visit 1)',
  '- took `next` → [[review]]',
  '- decided by: unconditional',
  '## 2. Review the draft (visit 1)',
  '- took `needs revision` → [[draft]]',
  '- decided by: grid',
  '## 3. Draft the email (visit 2)',
  '- took `next` → [[review]]',
  '- decided by: unconditional',
  '## 4. Review the draft (visit 2)',
  '- took `approved` → [[send]]',
  '- decided by: grid',
  '## 5. Send the email (visit 1)',
  '- decided by: terminal',
];

test('the example vault runs to the end against an endpoint: notes, trace, canvas and panel agree', async () => {
  const stub = await startStub(loopScript());
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    // The key stays in this browser's storage; the panel says where answers come from.
    assert.match(await page.locator('#run-source').textContent(), /stub-model at http:\/\/127\.0\.0\.1:\d+\/v1/);
    // A row per `role:` of the vault; review gets a model of its own.
    await page.click('#run-settings');
    assert.equal(await page.locator('#ep-role-writer-url').inputValue(), '', 'writer falls back to the default');
    await page.fill('#ep-role-review-url', stub.url);
    await page.fill('#ep-role-review-model', 'review-model');
    await page.fill('#ep-role-review-key', SECRET);
    await page.click('#settings-save');
    await startRun(page);
    await waitPhase(page, 'finished');

    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.finish.answer, 'Sent. Message id <42@example>.');
    assert.deepEqual(state.visits, { draft: 2, review: 2, send: 1 });
    assert.deepEqual(state.statuses, { draft: 'done', review: 'done', send: 'done' });
    assert.deepEqual(state.outputs.map((o) => `${o.node}#${o.visit}`), ['draft#1', 'review#1', 'draft#2', 'review#2', 'send#1']);
    assert.ok(state.trace.length >= 5, `trace entries streamed: ${state.trace.length}`);

    // The notes: statuses written, nothing else changed.
    const files = await readVault(page);
    for (const note of ['draft.md', 'review.md', 'send.md']) assert.equal(statusOf(files[note]), 'done', note);
    assert.equal(files['review.md'], EXAMPLE['review.md'].replace('status: pending', 'status: done'));
    const trace = files['00_plan-trace/trace.md'];
    assert.ok(trace.startsWith(`# Plan trace\n\nQuery: ${QUERY}\n`), trace.slice(0, 200));
    assert.deepEqual(hops(trace), EXPECTED_HOPS);
    assert.match(files['00_plan-trace/draft.visit-2.md'], /Draft two, with the date\./);
    // The app's view of the notes follows the worker's writes, with no false conflict.
    const plan = await page.evaluate(() => window.planvaultTest.plan());
    assert.deepEqual(plan.nodes.map((n) => n.status), ['done', 'done', 'done']);
    assert.equal(await page.locator('.rejected').count(), 0);

    // The panel streamed the trace and the outputs and says how it ended.
    assert.equal(await page.locator('#run-phase').getAttribute('data-phase'), 'finished');
    assert.equal(await page.locator('#run-phase').textContent(), 'Finished: completed');
    assert.equal(await page.locator('#run-trace .trace-entry').count(), state.trace.length);
    assert.equal(await page.locator('#run-outputs li').count(), 5);
    assert.equal(await page.locator('#run-answer').textContent(), 'Sent. Message id <42@example>.');

    // The canvas: where the run ended, visits, the last edge taken, the reason.
    await waitFor(page, () => window.planvaultTest.canvasRun().animating === false, null, 5_000);
    const drawn = await canvasRun(page);
    assert.equal(drawn.active, 'send');
    assert.deepEqual(drawn.visits, { draft: 2, review: 2, send: 1 });
    assert.deepEqual([drawn.hop.from, drawn.hop.to, drawn.hop.label], ['review', 'send', 'approved']);
    assert.equal(drawn.stopped, 'completed');
    assert.ok(drawn.animations >= 1 && drawn.animations <= 4, `hops animated: ${drawn.animations}`);
    await page.evaluate(() => window.planvaultTest.centerOn('send', 1));
    const ring = await pixelsAt(page, await page.evaluate(() => window.planvaultTest.nodePoint('send', 'ring')));
    assert.ok(ring.some((p) => near(p, ORANGE)), `the active ring is drawn: ${JSON.stringify(ring)}`);

    // Real streaming with the key as a header; the key is written nowhere.
    const requests = await stub.requests();
    assert.equal(requests.length, 7);
    assert.ok(requests.every((r) => r.authorized && r.body.stream === true));
    const models = (needle) => [...new Set(requests.filter((r) => textOf(r).includes(needle)).map((r) => r.body.model))];
    assert.deepEqual(models(DRAFT), ['stub-model']);
    assert.deepEqual(models(SEND), ['stub-model']);
    assert.deepEqual(models(REVIEW), ['review-model'], 'the role routes to its endpoint');
    assert.ok(requests.every((r) => !r.path.includes(SECRET)));
    assert.ok(!JSON.stringify(files).includes(SECRET), 'no key in the vault, trace or journal');
    assert.ok(!JSON.stringify(state).includes(SECRET));
    const stored = () => page.evaluate(() => localStorage.getItem('planvault.run-settings.v1'));
    assert.ok((await stored()).includes(SECRET), 'kept in this browser');
    await page.click('#run-settings');
    await page.click('#settings-forget-keys');
    await page.click('#settings-save');
    assert.ok(!(await stored()).includes(SECRET), 'and forgotten on request');
    assert.match(await stored(), /"base_url":"http:\/\/127\.0\.0\.1/, 'only the keys go');

    const shot = await saveScreenshot(page, 'run-finished');
    assert.deepEqual(page.problems, [], `no errors (screenshot: ${shot})`);
  } finally {
    stub.close();
    await page.context().close();
  }
});

/**
 * The example's replies with the first review held back 8 s (long enough to
 * interrupt it), then answered and approved when the run asks again.
 */
function reviewHeldThenApproved(heldText) {
  return [
    reply(DRAFT, 'Subject: Quarterly design review\n\nDraft one.'),
    reply(REVIEW, heldText, { delay_ms: 8000 }),
    reply(REVIEW, 'Approved.'),
    reply(JUDGE, '1. YES - approved\n2. NO'),
    reply(SEND, 'Sent.'),
  ];
}

test('a run interrupted by a page reload is offered and resumes where it stopped', async () => {
  // The first review reply is held back long enough to reload during it;
  // the resumed run asks again and is approved.
  const stub = await startStub({ replies: reviewHeldThenApproved('never delivered: the page reloads first') });
  let page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    await startRun(page);
    // Draft done, review asked: reload mid-request.
    const deadline = Date.now() + 30_000;
    while (!(await stub.requests()).some((r) => textOf(r).includes(REVIEW))) {
      assert.ok(Date.now() < deadline, 'the review request reached the stub');
      await new Promise((done) => setTimeout(done, 50));
    }
    await page.reload();
    await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
    await reopenVault(page);

    const offer = page.locator('#resume-offer');
    await offer.waitFor({ state: 'visible' });
    assert.match(await offer.textContent(), /interrupted run \(query: “invite the design team”\)/);
    await page.click('#resume-offer-accept');
    await waitPhase(page, 'finished');

    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.resumed, true);
    const files = await readVault(page);
    for (const note of ['draft.md', 'review.md', 'send.md']) assert.equal(statusOf(files[note]), 'done', note);
    const trace = files['00_plan-trace/trace.md'];
    assert.match(trace, /resumed/);
    assert.deepEqual(hops(trace).filter((l) => l.startsWith('- took')), ['- took `next` → [[review]]', '- took `approved` → [[send]]']);
    assert.ok(!trace.includes('never delivered'));
    const requests = await stub.requests();
    assert.equal(requests.filter((r) => textOf(r).includes(DRAFT)).length, 1, 'the draft is not asked again');
    assert.equal(requests.filter((r) => textOf(r).includes(REVIEW)).length, 2, 'the cut-off review is');
    assert.equal(await offer.count(), 0, 'the offer is gone');
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

test('a 429 is retried after the notice and the run completes', async () => {
  const script = loopScript();
  script.replies.splice(0, 0, { ...reply(DRAFT, 'slow down'), status: 429 });
  const stub = await startStub(script);
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url, { attempts: 3, delayMs: 300 });
    await startRun(page);
    // The notice shows while the retry waits.
    await page.locator('#run-retry').waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await page.locator('#run-retry').textContent(), /^draft: .*429.* trying again in/);
    await waitPhase(page, 'finished');
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.retries, 1);
    assert.equal(state.error, null);
    const requests = await stub.requests();
    assert.deepEqual(requests.map((r) => r.status), [429, 200, 200, 200, 200, 200, 200, 200]);
    assert.deepEqual(page.problems.filter((p) => !p.startsWith('HTTP 429')), []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

/** One reply per request of a run that stops at review's breakpoint. */
function reviewHeldAtABreakpoint() {
  return {
    replies: [
      reply(DRAFT, 'Subject: Quarterly design review\n\nDraft one.'),
      reply(REVIEW, 'The date is missing.'),
      reply(JUDGE, '1. YES - approved after the edit\n2. NO'),
      reply(SEND, 'Sent.'),
    ],
  };
}

/** Selects `node` on the canvas and ticks its breakpoint; returns the point clicked. */
async function setBreakpointFromSidePanel(page, node) {
  const at = await page.evaluate((node) => window.planvaultTest.nodePoint(node, 'body'), node);
  await page.mouse.click(at.x, at.y);
  // One side panel at a time: the endpoint's settings left the Run tab open.
  await page.click('#tab-selection');
  await page.check('#knob-breakpoint');
  await waitFor(page, (node) => window.planvaultTest.canvasRun()?.breakpoints?.includes(node), node, 5_000);
  return at;
}

test('a breakpoint pauses after the node’s work, before its edge is judged, and the edited output is judged', async () => {
  const stub = await startStub(reviewHeldAtABreakpoint());
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    // The breakpoint is set from the selected node's side panel.
    const at = await setBreakpointFromSidePanel(page, 'review');
    assert.deepEqual((await canvasRun(page)).breakpoints, ['review'], 'the canvas marks it');
    // B on the focused card toggles it too.
    await page.mouse.click(at.x, at.y);
    await page.keyboard.press('b');
    await waitFor(page, () => window.planvaultTest.canvasRun().breakpoints.length === 0, null, 5_000);
    assert.equal(await page.locator('#knob-breakpoint').isChecked(), false);
    await page.keyboard.press('b');
    await waitFor(page, () => window.planvaultTest.canvasRun().breakpoints.includes('review'), null, 5_000);
    assert.match(await page.locator('#status').textContent(), /Breakpoint set on review/);
    // A click on the card's corner dot toggles it, off and on again.
    const dot = await page.evaluate(() => window.planvaultTest.nodePoint('review', 'breakpoint'));
    await page.mouse.click(dot.x, dot.y);
    await waitFor(page, () => window.planvaultTest.canvasRun().breakpoints.length === 0, null, 5_000);
    assert.match(await page.locator('#status').textContent(), /Breakpoint removed on review/);
    await page.mouse.click(dot.x, dot.y);
    await waitFor(page, () => window.planvaultTest.canvasRun().breakpoints.includes('review'), null, 5_000);
    assert.deepEqual((await canvasRun(page)).breakpoints, ['review']);
    const [r, g, b] = (await pixelsAt(page, dot))[12];
    assert.ok(near([r, g, b], [0xdc, 0x26, 0x26]), `the dot is drawn red at the corner, got ${[r, g, b]}`);
    await openRunPanel(page);
    assert.equal(await page.locator('#bp-review').isChecked(), true, 'and so does the run panel');
    await startRun(page);

    const ask = await waitAsk(page, 'breakpoint');
    assert.equal(ask.node, 'review');
    assert.equal(await page.locator('#breakpoint-output').inputValue(), 'The date is missing.');
    assert.equal((await run(page)).phase, 'awaiting-person');
    assert.equal((await canvasRun(page)).asking, 'review');
    // Paused after the work and before the judgment: no judge request yet.
    const before = await stub.requests();
    assert.equal(before.filter((r) => textOf(r).includes(JUDGE)).length, 0);

    await page.fill('#breakpoint-output', 'The date is missing. EDITED AT THE BREAKPOINT');
    await page.click('#breakpoint-continue');
    await waitPhase(page, 'finished');
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    const judge = (await stub.requests()).find((r) => textOf(r).includes(JUDGE));
    assert.ok(textOf(judge).includes('EDITED AT THE BREAKPOINT'), 'the edited output was judged');
    const files = await readVault(page);
    assert.match(files['00_plan-trace/review.visit-1.md'], /EDITED AT THE BREAKPOINT/);
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

test('a page reload at a breakpoint comes back to it without calling the model again', async () => {
  // Each reply is scripted once: a second review request would get nothing.
  const stub = await startStub(reviewHeldAtABreakpoint());
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    await setBreakpointFromSidePanel(page, 'review');
    await startRun(page);
    await waitAsk(page, 'breakpoint');
    const held = (await readVault(page))['00_plan-trace/review.visit-1.held.md'];
    assert.match(held ?? '', /The date is missing\./, 'the output waits in the vault');

    await page.reload();
    await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
    await reopenVault(page);
    // The browser remembers the vault's breakpoints (the held output alone
    // would bring the run back to this one too: worker/tests/driver.rs).
    await waitFor(page, () => window.planvaultTest.canvasRun()?.breakpoints?.includes('review'), null, 5_000);
    await page.locator('#resume-offer').waitFor({ state: 'visible' });
    await page.click('#resume-offer-accept');
    const ask = await waitAsk(page, 'breakpoint');
    assert.equal(ask.node, 'review');
    assert.equal(await page.locator('#breakpoint-output').inputValue(), 'The date is missing.');
    await page.fill('#breakpoint-output', 'The date is missing. EDITED AFTER THE RELOAD');
    await page.click('#breakpoint-continue');
    await waitPhase(page, 'finished');

    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    const requests = await stub.requests();
    assert.equal(requests.filter((r) => textOf(r).includes(REVIEW)).length, 1, 'the review is asked of the model once');
    assert.equal(requests.length, 4);
    const judge = requests.find((r) => textOf(r).includes(JUDGE));
    assert.ok(textOf(judge).includes('EDITED AFTER THE RELOAD'), 'the edited output was judged');
    const files = await readVault(page);
    assert.equal(files['00_plan-trace/review.visit-1.held.md'], undefined, 'nothing stays held');
    assert.match(files['00_plan-trace/review.visit-1.md'], /EDITED AFTER THE RELOAD/);
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

test('manual mode runs the example vault end to end with nothing configured', async () => {
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    // A note open in the side panel, with typing not yet saved.
    const at = await page.evaluate(() => window.planvaultTest.nodePoint('review', 'body'));
    await page.mouse.click(at.x, at.y);
    await page.fill('#node-body', 'typed while the plan runs');
    await openRunPanel(page);
    assert.match(await page.locator('#run-source').textContent(), /^Manual mode/);
    await startRun(page);
    let reviews = 0;
    const seen = await answerUntilFinished(page, {
      async work(ask) {
        assert.ok(ask.ask.prompt.includes(`Step: ${ask.ask.title}`), 'the prompt a model would read is shown');
        assert.equal(await page.locator('#ask-prompt').textContent(), ask.ask.prompt);
        await page.fill('#ask-answer', `${ask.node} by hand, visit ${ask.visit}`);
        await page.click('#ask-submit');
      },
      async judge(ask) {
        assert.deepEqual(ask.ask.labels, ['approved', 'needs revision']);
        assert.equal(await page.locator('#ask-output').textContent(), `review by hand, visit ${ask.visit}`);
        reviews += 1;
        const approve = reviews === 2;
        await page.check(approve ? '#judge-0-yes' : '#judge-0-no');
        await page.check(approve ? '#judge-1-no' : '#judge-1-yes');
        await page.click('#ask-submit');
      },
    });
    assert.deepEqual(seen, [
      'work:draft#1', 'work:review#1', 'judge:review#1',
      'work:draft#2', 'work:review#2', 'judge:review#2',
      'work:send#1',
    ]);
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    const files = await readVault(page);
    for (const note of ['draft.md', 'review.md', 'send.md']) assert.equal(statusOf(files[note]), 'done', note);
    assert.deepEqual(hops(files['00_plan-trace/trace.md']).filter((l) => l.startsWith('- took')), [
      '- took `next` → [[review]]',
      '- took `needs revision` → [[draft]]',
      '- took `next` → [[review]]',
      '- took `approved` → [[send]]',
    ]);
    assert.match(files['00_plan-trace/send.visit-1.md'], /send by hand, visit 1/);
    // The canvas says so too (its banner), a frame after the run view.
    await waitFor(page, () => window.planvaultTest.canvasRun().stopped === 'completed');
    // The editor follows the statuses the worker wrote and keeps the typing.
    await waitFor(page, () => document.querySelector('#knob-status')?.value === 'done', null, 5_000);
    assert.equal(await page.locator('#node-body').inputValue(), 'typed while the plan runs');
    assert.equal(await page.locator('.rejected').count(), 0, 'no false conflict');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

const HUMAN_VAULT = {
  'write.md': '---\ntype: start\n---\n# Write the note\n\nWrite one line.\n\n## Next\n- [[approve]]\n',
  'approve.md': '---\ntype: human\n---\n# Approve the note\n\nIs the note good to publish?\n\n## Next\n- approved -> [[publish]]\n- rejected -> [[write]]\n',
  'publish.md': '# Publish\n\nPublish it.\n',
};

test('a human node is decided in the run panel', async () => {
  const page = await newPage();
  try {
    await openVault(page, HUMAN_VAULT);
    const plan = await page.evaluate(() => window.planvaultTest.plan());
    assert.equal(plan.nodes.find((n) => n.id === 'approve')?.kind, 'human');
    // The side panel names the kind.
    const at = await page.evaluate(() => window.planvaultTest.nodePoint('approve', 'body'));
    await page.mouse.click(at.x, at.y);
    assert.equal(await page.locator('#knob-type').inputValue(), 'human');
    await startRun(page, 'publish a note');
    const seen = await answerUntilFinished(page, {
      async work(ask) {
        await page.fill('#ask-answer', `${ask.node} by hand`);
        await page.click('#ask-submit');
      },
      async human(ask) {
        assert.match(await page.locator('#ask-question').textContent(), /\S/);
        const choices = ask.ask.choices;
        if (choices.length > 0) {
          await page.check(`#human-choice-${choices.indexOf('approved')}`);
        }
        await page.fill('#human-note', 'Looks right to me.');
        await page.click('#human-approve');
      },
      async judge() {
        throw new Error('a human node is not judged by a grid');
      },
    });
    assert.ok(seen.includes('human:approve#1'), seen.join(', '));
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    const files = await readVault(page);
    assert.equal(statusOf(files['publish.md']), 'done');
    assert.match(files['00_plan-trace/trace.md'], /decided by: human/);
    assert.match(files['00_plan-trace/trace.md'], /→ \[\[publish\]\]/);
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});

/** Answers a manual run of HUMAN_VAULT until publish's work is asked, then stops it. */
async function stopAtPublish(page) {
  await startRun(page, 'publish a note');
  for (;;) {
    await waitFor(page, () => window.planvaultTest.run().ask !== null);
    const { ask } = await run(page);
    if (ask.node === 'publish') break;
    await page.locator(`#run-ask[data-kind="${ask.ask.kind}"]`).waitFor({ state: 'visible' });
    if (ask.ask.kind === 'work') {
      await page.fill('#ask-answer', `${ask.node} by hand`);
      await page.click('#ask-submit');
    } else {
      const choices = ask.ask.choices;
      if (choices.length > 0) await page.check(`#human-choice-${choices.indexOf('approved')}`);
      await page.fill('#human-note', 'Looks right to me.');
      await page.click('#human-approve');
    }
    await waitFor(page, (request) => window.planvaultTest.run().ask?.request !== request, ask.request);
  }
  await page.click('#run-stop');
  await waitPhase(page, 'finished');
  assert.equal((await run(page)).finish.code, 'stopped');
}

/** Answers publish's work and waits for the run to complete. */
async function finishPublish(page) {
  await waitAsk(page, 'work');
  assert.equal((await run(page)).ask.node, 'publish');
  await page.fill('#ask-answer', 'Published.');
  await page.click('#ask-submit');
  await waitPhase(page, 'finished');
  const state = await run(page);
  assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
}

const decisionsKept = (page) => page.evaluate(() => new Promise((resolve, reject) => {
  const request = indexedDB.open('planvault-decisions', 1);
  request.onupgradeneeded = () => request.result.createObjectStore('taken');
  request.onsuccess = () => {
    const counted = request.result.transaction('taken').objectStore('taken').count();
    counted.onsuccess = () => { resolve(counted.result); request.result.close(); };
    counted.onerror = () => reject(counted.error);
  };
  request.onerror = () => reject(request.error);
}));

test('a vault that comes with its run\'s approval resumes past it only once the person takes it as given', async () => {
  // Here: the approval is made in this browser, and its resume goes on.
  const here = await newPage();
  let files;
  try {
    await openVault(here, HUMAN_VAULT);
    await stopAtPublish(here);
    assert.equal(await decisionsKept(here), 1, 'the approval is kept as taken here');
    files = await readVault(here);
    await here.click('#run-continue');
    await finishPublish(here);
    assert.equal(await here.locator('#decisions-take').count(), 0);
  } finally {
    await here.context().close();
  }
  // Elsewhere: the stopped vault, journal and all, opened in another browser.
  const elsewhere = await newPage();
  try {
    await openVault(elsewhere, files);
    await elsewhere.locator('#resume-offer').waitFor({ state: 'visible' });
    await elsewhere.click('#resume-offer-accept');
    await waitFor(elsewhere, () => window.planvaultTest.run().error !== null);
    assert.equal((await run(elsewhere)).phase, 'idle');
    const error = elsewhere.locator('#run-error[data-code="DecisionsElsewhere"]');
    await error.waitFor({ state: 'visible' });
    assert.match(await error.locator('.message').textContent(), /journal\.jsonl holds decisions no run here took; resuming takes them as given:/);
    assert.deepEqual(
      await error.locator('#run-error-lines li').allTextContents(),
      [`line 2: approve#1:human approved (Looks right to me.)`],
    );
    assert.match(await elsewhere.locator('#run-error-hint').textContent(), /Nothing ran\. Take them as given only if you trust whoever ran it/);
    assert.equal((await run(elsewhere)).ask, null, 'nothing was asked');
    assert.equal(statusOf((await readOpfsFolder(elsewhere, FOLDER))['publish.md']), 'active');
    await saveScreenshot(elsewhere, 'run-decisions-elsewhere');
    assert.equal(await decisionsKept(elsewhere), 0);

    await elsewhere.click('#decisions-take');
    await finishPublish(elsewhere);
    assert.equal(await decisionsKept(elsewhere), 1, 'taken, and kept');
    assert.deepEqual(elsewhere.problems, []);
  } finally {
    await elsewhere.context().close();
  }
});

test('run to a node, step one node, pause, stop and resume from the panel', async () => {
  const stub = await startStub({
    replies: [
      reply(DRAFT, 'Subject: Quarterly design review\n\nDraft one.'),
      reply(REVIEW, 'Approved.'),
      // Held back so Pause lands while it is being answered.
      reply(JUDGE, '1. YES - approved\n2. NO', { delay_ms: 1500 }),
      reply(SEND, 'Sent.'),
    ],
  });
  const page = await newPage();
  const asked = async (needle) => (await stub.requests()).filter((r) => textOf(r).includes(needle)).length;
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    await openRunPanel(page);
    await page.selectOption('#run-to', 'review');
    await startRun(page);

    // Run-to pauses when review is entered, before its work.
    await waitPhase(page, 'paused');
    assert.deepEqual((await run(page)).pause, { kind: 'run-to', node: 'review' });
    assert.equal(await page.locator('#run-phase').textContent(), 'Paused: reached review');
    assert.equal(await asked(REVIEW), 0);
    assert.equal(await page.locator('#run-to').inputValue(), '', 'run-to holds once');

    // Step: review's work, then a pause before its edge is judged.
    await page.click('#run-step');
    await waitFor(page, () => window.planvaultTest.run().pause?.kind === 'step');
    assert.deepEqual((await run(page)).pause, { kind: 'step', node: 'review' });
    assert.equal(await asked(REVIEW), 1);
    assert.equal(await asked(JUDGE), 0);

    // Resume; Pause while the judgment is held back: the run pauses after it,
    // before send's work.
    await page.click('#run-resume');
    const deadline = Date.now() + 20_000;
    while ((await asked(JUDGE)) === 0) {
      assert.ok(Date.now() < deadline, 'the judgment reached the stub');
      await new Promise((done) => setTimeout(done, 30));
    }
    await page.click('#run-pause');
    assert.equal((await run(page)).phase, 'pausing');
    await waitPhase(page, 'paused');
    assert.deepEqual((await run(page)).pause, { kind: 'requested' });
    assert.equal(await asked(SEND), 0);

    // Stop: the vault stays resumable and the panel offers to resume.
    await page.click('#run-stop');
    await waitPhase(page, 'finished');
    assert.equal((await run(page)).finish.code, 'stopped');
    await page.click('#run-continue');
    await waitPhase(page, 'finished');
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    const files = await readVault(page);
    for (const note of ['draft.md', 'review.md', 'send.md']) assert.equal(statusOf(files[note]), 'done', note);
    assert.equal(await asked(JUDGE), 1, 'the judgment is kept, not asked again');
    assert.equal(await asked(SEND), 1);
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

test('stop in the middle of a run, then resume it from the panel', async () => {
  const stub = await startStub({ replies: reviewHeldThenApproved('cut off by Stop') });
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    await startRun(page);
    await waitFor(page, () => window.planvaultTest.run().active === 'review');
    await page.click('#run-stop');
    await waitPhase(page, 'finished');
    const stopped = await run(page);
    assert.equal(stopped.finish.code, 'stopped', JSON.stringify(stopped.finish));
    assert.match(await page.locator('#run-phase').textContent(), /^Stopped: /);
    assert.doesNotMatch(await page.locator('#run-phase').textContent(), /run again/);
    assert.match(await page.locator('#run-next').textContent(), /Resume run continues .*Run starts over/);
    await waitFor(page, () => /^stopped/.test(window.planvaultTest.canvasRun().stopped ?? ''));
    await page.click('#run-continue');
    await waitPhase(page, 'finished');
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.resumed, true);
    const files = await readVault(page);
    assert.ok(!files['00_plan-trace/trace.md'].includes('cut off by Stop'));
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

test('streamed tokens show in the run panel as they arrive', async () => {
  const review = 'The date is right, the place is right, the tone is friendly: approved.';
  const stub = await startStub({
    replies: [
      reply(DRAFT, 'Draft one.'),
      reply(REVIEW, review, { chunk_delay_ms: 120, chunk_chars: 4 }),
      reply(JUDGE, '1. YES\n2. NO'),
      reply(SEND, 'Sent.'),
    ],
  });
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await useEndpoint(page, stub.url);
    await startRun(page);
    // Part of the reply is on screen before the whole of it has arrived.
    await waitFor(page, (full) => {
      const live = window.planvaultTest.run().live;
      const text = document.querySelector('#run-live')?.textContent ?? '';
      return live?.node === 'review' && text === live.text && text.length >= 8 && text.length < full.length;
    }, review, 30_000);
    const partial = await page.locator('#run-live').textContent();
    assert.ok(review.startsWith(partial), `a prefix of the reply: ${partial}`);
    await waitPhase(page, 'finished');
    assert.equal(await page.locator('#run-live').count(), 0, 'the live text gives way to the kept output');
    const state = await run(page);
    assert.equal(state.outputs.find((o) => o.node === 'review').text, review);
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});

/** A local port nobody listens on. */
async function closedPort() {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

test('a failed call stops the run resumably and says what to do', async () => {
  const stub = await startStub({ replies: [{ ...reply(DRAFT, 'invalid api key'), status: 401 }] });
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    // 401: the key.
    await useEndpoint(page, stub.url, { attempts: 2 });
    await startRun(page);
    await waitPhase(page, 'finished');
    let state = await run(page);
    assert.equal(state.finish.code, 'interrupted', JSON.stringify(state.finish));
    assert.equal(state.error.code, 'unauthorized');
    assert.match(await page.locator('#run-error-hint').textContent(), /key/i);
    assert.equal((await stub.requests()).length, 1, 'a refused key is not retried');
    await page.locator('#run-continue').waitFor({ state: 'visible' });

    // Nothing listening: the browser cannot reach it (or CORS refused it).
    await useEndpoint(page, `http://127.0.0.1:${await closedPort()}/v1`, { attempts: 1 });
    await startRun(page);
    await waitPhase(page, 'finished');
    state = await run(page);
    assert.equal(state.finish.code, 'interrupted', JSON.stringify(state.finish));
    assert.equal(state.error.code, 'cors-or-network');
    assert.match(await page.locator('#run-error-hint').textContent(), /OLLAMA_ORIGINS/);
    const files = await readVault(page);
    assert.ok(!JSON.stringify(files).includes(SECRET));
    assert.deepEqual(
      page.problems.filter((p) => !/HTTP 401|ERR_CONNECTION_REFUSED|Failed to fetch/.test(p)),
      [],
    );
  } finally {
    stub.close();
    await page.context().close();
  }
});

test('opening another vault stops the run and forgets it', async () => {
  const page = await newPage();
  try {
    await openVault(page, EXAMPLE);
    await startRun(page);
    await waitAsk(page, 'work');
    // Another vault while the run waits for an answer.
    await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle('e2e-other', { create: true });
      const w = await (await dir.getFileHandle('only.md', { create: true })).createWritable();
      await w.write('---\ntype: start\n---\n# Only\n');
      await w.close();
      await window.planvaultTest.openHandle(dir);
    });
    await page.waitForFunction(() => document.querySelector('#mode').textContent.includes('e2e-other'));
    await page.locator('#run-ask').waitFor({ state: 'detached' });
    // The old run's last messages (its stop) arrive and change nothing on screen.
    await page.waitForFunction(() => window.planvaultTest.run().discarding === false);
    const state = await run(page);
    assert.equal(state.phase, 'idle', JSON.stringify(state));
    assert.equal(state.ask, null);
    assert.deepEqual(state.visits, {});
    // The canvas follows a frame after the run view (a loaded machine may
    // take a few).
    await waitFor(page, () => window.planvaultTest.canvasRun().active === null, null, 5_000);
    // The stopped vault is left resumable: draft is active, nothing lost.
    const files = await readVault(page);
    assert.equal(statusOf(files['draft.md']), 'active');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});
