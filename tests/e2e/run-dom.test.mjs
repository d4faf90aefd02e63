// What a streamed run does to the run panel's DOM, counted with a
// MutationObserver in headless Chromium: each streamed token changes the
// live reply's text node and nothing else; the trace and output rows
// already shown are never made again nor rewritten (keyed lists: a new
// output goes in above the earlier ones, which keep their elements and
// text), so a run costs the page O(tokens) text updates.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useApp } from './support/app.mjs';
import { startStub, reply } from './support/llm-stub.mjs';
import { runState, waitForRun } from './support/vault.mjs';
import { DRAFT, EXAMPLE, JUDGE, REVIEW, SEND, openVault, readyPage, startRun, useEndpoint, waitPhase } from './support/run.mjs';

const FOLDER = 'e2e-run-dom';
const app = useApp();

/** In the page: marks the rows shown now and counts what changes under #run-panel from here on. */
function observePanel() {
  const marked = [...document.querySelectorAll('#run-trace .trace-entry, #run-outputs > li')];
  for (const el of marked) el.e2eMark = true;
  const counts = {
    marked: marked.length,
    // While the review's reply streams (after its first token):
    streamText: 0, // text changes inside #run-live
    streamOtherText: 0, // text changes anywhere else in the panel
    streamNodes: 0, // elements or text nodes added or removed anywhere in the panel
    // Over the whole run:
    markedRemoved: 0,
    markedChanged: 0, // text or children changed inside a row shown before
    rowsAdded: 0,
  };
  const inMarked = (node) => {
    for (let n = node; n; n = n.parentNode) if (n.e2eMark) return true;
    return false;
  };
  const streaming = () => {
    const live = document.querySelector('#run-live');
    return live !== null && (live.previousElementSibling?.textContent ?? '').startsWith('review: work')
      && live.textContent.length > 0;
  };
  let began = false;
  const observer = new MutationObserver((records) => {
    const now = streaming();
    for (const r of records) {
      if (inMarked(r.target)) counts.markedChanged += 1;
      if (r.type === 'childList') {
        for (const n of r.removedNodes) if (n.e2eMark) counts.markedRemoved += 1;
        for (const n of r.addedNodes) {
          if (n.nodeType === 1 && n.matches('#run-trace .trace-entry, #run-outputs > li')) counts.rowsAdded += 1;
        }
      }
      if (!now || !began) continue;
      if (r.type === 'characterData') {
        if (r.target.parentElement?.id === 'run-live') counts.streamText += 1;
        else counts.streamOtherText += 1;
      } else if (r.type === 'childList') {
        counts.streamNodes += r.addedNodes.length + r.removedNodes.length;
      }
    }
    began = began || now;
  });
  observer.observe(document.querySelector('#run-panel'), { subtree: true, childList: true, characterData: true });
  window.e2eMutations = { counts, marked, observer };
}

test('a streamed token changes only the live reply\'s text; trace and output rows are kept', async () => {
  const review = 'The date is right, the place is right, the tone is friendly, the list is complete: approved.';
  const chunk = 2;
  const tokens = Math.ceil(review.length / chunk);
  const stub = await startStub({
    replies: [
      reply(DRAFT, 'Draft one.'),
      // Time to start counting before the first token.
      reply(REVIEW, review, { delay_ms: 1500, chunk_delay_ms: 30, chunk_chars: chunk }),
      reply(JUDGE, '1. YES\n2. NO'),
      reply(SEND, 'Sent.'),
    ],
  });
  const page = await readyPage(app);
  try {
    await openVault(page, EXAMPLE, FOLDER);
    await useEndpoint(page, stub.url);
    await startRun(page);
    // The draft's output and trace entry are on screen; the review has not begun.
    await waitForRun(page, () => document.querySelectorAll('#run-trace .trace-entry').length >= 1
      && document.querySelectorAll('#run-outputs > li').length >= 1, null, 30_000);
    assert.equal(await page.evaluate(() => document.querySelector('#run-live')?.textContent ?? ''), '',
      'counting starts before the review streams');
    await page.evaluate(observePanel);
    await waitPhase(page, 'finished');
    const state = await runState(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.outputs.find((o) => o.node === 'review').text, review);
    const result = await page.evaluate(() => {
      const { counts, marked, observer } = window.e2eMutations;
      observer.disconnect();
      return {
        ...counts,
        stillShown: marked.filter((el) => el.isConnected).length,
        traceRows: document.querySelectorAll('#run-trace .trace-entry').length,
        outputRows: document.querySelectorAll('#run-outputs > li').length,
      };
    });
    console.log(`review reply: ${tokens} tokens; ${JSON.stringify(result)}`);
    // The rows shown before the review stay the same elements.
    assert.ok(result.marked >= 2, `rows marked: ${result.marked}`);
    assert.equal(result.markedRemoved, 0, 'no row shown before was removed');
    // A new output goes in above the earlier ones; they keep their text (an
    // unkeyed list rewrote each row with its new neighbour's).
    assert.equal(result.markedChanged, 0, 'nothing changed inside a row shown before');
    assert.equal(result.stillShown, result.marked, 'every row shown before is still on the page');
    // The rows added are the new entries only, each made once.
    assert.equal(result.rowsAdded, result.traceRows + result.outputRows - result.marked, 'each new row made once');
    // While the reply streams: one text update per token at most, and nothing else.
    assert.ok(result.streamText >= tokens / 4, `text updates while streaming: ${result.streamText} for ${tokens} tokens`);
    assert.ok(result.streamText <= tokens, `text updates while streaming: ${result.streamText} for ${tokens} tokens`);
    assert.equal(result.streamNodes, 0, 'no element made or removed while the reply streams');
    assert.equal(result.streamOtherText, 0, 'no other text changed while the reply streams');
    assert.deepEqual(page.problems, []);
  } finally {
    stub.close();
    await page.context().close();
  }
});
