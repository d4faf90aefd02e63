// A vault saved on a Mac: its note names are decomposed (Unicode NFD,
// `Cafe` + U+0301), the links typed in it composed (`[[Café]]`). Obsidian
// keys its paths composed, so the links find their notes; the app and its
// run worker read the vault the same way, and a link the app writes to
// such a note is composed.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readOpfsFolder, runState } from './support/vault.mjs';
import { useApp, addEdgeByKeyboard } from './support/app.mjs';
import { answerUntilFinished, openVault, readyPage, startRun, statusOf } from './support/run.mjs';

const app = useApp();
let page;

const FOLDER = 'decomposed-names-vault';
const CAFE = 'Cafe\u0301';
const NOTES = {
  'Start.md': '---\ntype: start\n---\n# Start\n\n## Next\n- [[Café]]\n',
  [`${CAFE}.md`]: '# Café\n\n## Next\n- [[Finish]]\n',
  'Finish.md': '# Finish\n',
};

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);

before(async () => {
  page = await readyPage(app, { width: 1280, height: 720 });
  await openVault(page, NOTES, FOLDER);
});

test('a composed link finds the note whose name is decomposed, on the canvas and in a run', async () => {
  const plan = await hook('plan');
  const edges = plan.edges.map((e) => `${e.from} -> ${e.to}`).sort();
  assert.deepEqual(edges, [`${CAFE} -> Finish`, `Start -> ${CAFE}`], JSON.stringify(plan.edges));
  assert.deepEqual(plan.diagnostics, [], 'no diagnostics');

  // Manual mode: the worker checks the plan itself before it runs it.
  await startRun(page, 'lunch');
  const seen = await answerUntilFinished(page, {
    async work(ask) {
      await page.fill('#ask-answer', `${ask.node} done`);
      await page.click('#ask-submit');
    },
  });
  assert.deepEqual(seen, ['work:Start#1', `work:${CAFE}#1`, 'work:Finish#1']);
  const state = await runState(page);
  assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
  const files = await readOpfsFolder(page, FOLDER);
  assert.equal(statusOf(files[`${CAFE}.md`]), 'done');
});

test('a new link to a note whose name is decomposed is written composed', async () => {
  await addEdgeByKeyboard(page, 'Finish', 'caf', 'Café', 'again');
  const files = await readOpfsFolder(page, FOLDER);
  assert.equal(files['Finish.md'].replace(/^---\n[\s\S]*?\n---\n/, ''), '# Finish\n\n## Next\n- again -> [[Café]]\n');
  assert.ok(!files['Finish.md'].includes(CAFE), 'the link is written composed');
  const after = await hook('plan');
  assert.ok(after.edges.some((e) => e.from === 'Finish' && e.to === CAFE), JSON.stringify(after.edges));
});
