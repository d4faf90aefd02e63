// A run's judgments in the built app against the scripted endpoint
// (testkit/llm-stub): a judgment that cannot be read fails its node (red on
// the canvas, `status: failed` in its note, no "Answer"), and the terse
// answers real models give (a bare `NO` when one condition is asked) are
// read the first time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { useApp } from './support/app.mjs';
import { startStub, reply } from './support/llm-stub.mjs';
import { readOpfsFolder, runState } from './support/vault.mjs';
import {
  DRAFT, EXAMPLE, JUDGE, REVIEW, near, openVault, pixelsAt, readyPage, startRun, statusOf, textOf, useEndpoint,
  waitPhase,
} from './support/run.mjs';

const FOLDER = 'e2e-run-failures';
const app = useApp();

const FAILED_RED = [0xd0, 0x3a, 0x3a]; // theme.rs LIGHT.failed, the status stripe

test('a judgment that cannot be read fails its node: red on the canvas, status: failed in the note', async () => {
  const unreadable = 'Hard to say, it depends on the reader.';
  const stub = await startStub({
    replies: [
      reply(DRAFT, 'Subject: Quarterly design review\n\nDraft one.'),
      reply(REVIEW, 'It reads well.'),
      reply(JUDGE, unreadable),
      reply(JUDGE, unreadable),
      reply(JUDGE, unreadable),
    ],
  });
  const page = await readyPage(app);
  try {
    await openVault(page, EXAMPLE, FOLDER);
    await useEndpoint(page, stub.url);
    await startRun(page);
    await waitPhase(page, 'finished');

    const state = await runState(page);
    assert.equal(state.finish.code, 'node_failed', JSON.stringify(state.finish));
    assert.equal(state.failed.node, 'review');
    assert.equal(state.finish.answer, null, 'the failed node’s output is no answer');
    assert.equal(state.attempts.length, 3, 'each unreadable reply kept apart');
    assert.ok(state.attempts.every((a) => a.text === unreadable), JSON.stringify(state.attempts));
    const judged = (await stub.requests()).filter((r) => textOf(r).includes(JUDGE));
    assert.equal(judged.length, 3);
    assert.match(textOf(judged[1]), /Your previous reply was/, 'the re-ask quotes the reply');

    // The note says failed; the plan the app holds too.
    const files = await readOpfsFolder(page, FOLDER);
    assert.equal(statusOf(files['review.md']), 'failed');
    assert.equal(statusOf(files['draft.md']), 'done');
    await page.waitForFunction(
      () => window.planvaultTest.plan().nodes.find((n) => n.id === 'review')?.status === 'failed',
      null, { timeout: 10_000 },
    );

    // The panel: why, what to do, no Answer.
    assert.match(await page.locator('#run-phase').textContent(), /^Node review failed: /);
    assert.match(await page.locator('#run-error-hint').textContent(), /Resume/);
    assert.equal(await page.locator('#run-answer').count(), 0);
    assert.equal(await page.locator('.run-attempt').count(), 3);

    // The canvas: the card's status stripe is red.
    await page.evaluate(() => window.planvaultTest.centerOn('review', 1));
    const card = await page.evaluate(() => window.planvaultTest.nodeRect('review'));
    const stripe = await pixelsAt(page, { x: card.left + 4, y: (card.top + card.bottom) / 2 });
    assert.ok(near(stripe[12], FAILED_RED), `the stripe is red: ${JSON.stringify(stripe[12])}`);
    const shot = await saveScreenshot(page, 'run-node-failed');
    assert.deepEqual(page.problems, [], `no errors (screenshot: ${shot})`);
  } finally {
    stub.close();
    await page.context().close();
  }
});

const ONE_CONDITION = {
  'write.md': '---\ntype: start\nstatus: pending\n---\n# Write the note\n\nWrite one line.\n\n## Next\n- [[check]]\n',
  'check.md': '---\nstatus: pending\n---\n# Check the note\n\nCheck the line.\n\n## Next\n- looks good -> [[publish]]\n- [[fix]]\n',
  'publish.md': '---\nstatus: pending\n---\n# Publish\n\nPublish it.\n',
  'fix.md': '---\nstatus: pending\n---\n# Fix\n\nFix it.\n',
};

test('a terse NO to a one-condition judgment is read the first time', async () => {
  const stub = await startStub({
    replies: [
      reply('Step: Write the note', 'A line.'),
      reply('Step: Check the note', 'The line has a typo.'),
      reply('The step "Check the note" just finished', 'NO'),
      reply('Step: Fix', 'Fixed.'),
    ],
  });
  const page = await readyPage(app);
  try {
    await openVault(page, ONE_CONDITION, FOLDER);
    await useEndpoint(page, stub.url);
    await startRun(page, 'publish a line');
    await waitPhase(page, 'finished');
    const state = await runState(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.deepEqual(state.attempts, [], 'nothing unreadable');
    const judged = (await stub.requests()).filter((r) => textOf(r).includes('just finished'));
    assert.equal(judged.length, 1, 'no re-ask');
    const files = await readOpfsFolder(page, FOLDER);
    assert.equal(statusOf(files['fix.md']), 'done', 'NO: the unconditional edge');
    assert.equal(statusOf(files['publish.md']), 'pending');
    assert.match(files['00_plan-trace/trace.md'], /→ \[\[fix\]\]/);
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});
