// MCP servers as a node's tools in the browser, in headless Chromium: the
// app's Settings list the servers the vault's .planvault/config.toml names
// (a command one as terminal only), test a URL server by listing its tools,
// add a URL with a token kept in this browser's storage only; a run's
// worker then calls server-everything over Streamable HTTP (fetch, CORS)
// when the scripted model asks, journals the call under node#visit/tool.N,
// and hands the result back to the model. A server gone mid-run stops the
// run naming it, and Resume makes the call once it is back.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useApp } from './support/app.mjs';
import { startStub, reply } from './support/llm-stub.mjs';
import { startEverything } from './support/mcp-server.mjs';
import { readOpfsFolder, runState, waitForRun } from './support/vault.mjs';

const FOLDER = 'e2e-mcp';
const TOKEN = 'tok-e2e-mcp-never-written-4242';
const STEP = 'Step: Send the greeting';

const app = useApp();

const vault = (url) => ({
  'send.md': `---
type: step
status: pending
tools: [everything.echo, again.get-sum]
---
# Send the greeting

Call the echo tool with the greeting, then say what it answered.
`,
  '.planvault/config.toml': `[mcp.servers.everything]
url = "${url}"

[mcp.servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "out"]

[fetch]
allow_hosts = ["wiki.internal"]
`,
});

/** Writes `files` (nested paths too) into a fresh OPFS folder and opens it. */
async function openVault(page, files) {
  await page.evaluate(async ([name, files]) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry(name, { recursive: true }); } catch (_) {}
    const top = await root.getDirectoryHandle(name, { create: true });
    for (const [path, text] of Object.entries(files)) {
      const parts = path.split('/');
      let dir = top;
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
      const w = await (await dir.getFileHandle(parts.at(-1), { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
    await window.planvaultTest.openHandle(top);
  }, [FOLDER, files]);
  await page.waitForFunction((folder) => document.querySelector('#mode').textContent.includes(folder), FOLDER);
}

const readVault = (page) => readOpfsFolder(page, FOLDER);

const run = runState;

const waitFor = waitForRun;

/** Opens the run's Settings with the stub as the model (two attempts, 50 ms apart). */
async function settingsWithStub(page, stub) {
  if (!(await page.locator('#run-panel').isVisible())) await page.click('#run-toggle');
  await page.click('#run-settings');
  await page.check('#source-model');
  await page.fill('#ep-default-url', stub.url);
  await page.fill('#ep-default-model', 'stub-model');
  await page.fill('#retry-attempts', '2');
  await page.fill('#retry-delay', '50');
}

const listed = async (page, id) => {
  await page.locator(`#${id}[data-state="listed"], #${id}[data-state="failed"]`).waitFor({ timeout: 30_000 });
  assert.equal(await page.locator(`#${id}`).getAttribute('data-state'), 'listed', await page.locator(`#${id}`).textContent());
  return page.locator(`#${id} li`).allTextContents();
};

test('Settings list and test the vault\'s MCP servers, and a run calls one from the worker', async () => {
  const everything = await startEverything();
  const stub = await startStub({
    replies: [
      reply(STEP, '', {
        tool_calls: [
          { name: 'everything__echo', arguments: { message: 'hello from the browser' } },
          { name: 'again__get-sum', arguments: { a: 'x' } },
        ],
      }),
      reply(STEP, 'The server echoed the greeting.'),
    ],
  });
  const page = await app.open({ width: 1440, height: 900 });
  try {
    await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
    await openVault(page, vault(everything.url));

    await settingsWithStub(page, stub);

    // The config's servers: the URL one is tested from here, the command one is the terminal's.
    await page.locator('#mcp-config-everything[data-kind="url"]').waitFor();
    assert.match(await page.locator('#mcp-config-files').textContent(), /terminal only/);
    await page.click('#mcp-config-everything-test');
    const tools = await listed(page, 'mcp-config-everything-tools');
    assert.ok(tools.includes('echo') && tools.includes('get-sum'), tools.join(', '));

    // A URL added here, with a token.
    await page.click('#mcp-add');
    await page.fill('#mcp-0-name', 'again');
    await page.fill('#mcp-0-url', everything.url);
    await page.fill('#mcp-0-token', TOKEN);
    await page.click('#mcp-0-test');
    assert.ok((await listed(page, 'mcp-0-tools')).includes('echo'));
    // A server refusing the connection says so.
    await page.click('#mcp-add');
    await page.fill('#mcp-1-name', 'nowhere');
    await page.fill('#mcp-1-url', 'http://127.0.0.1:9/mcp');
    await page.click('#mcp-1-test');
    await page.locator('#mcp-1-tools[data-state="failed"]').waitFor({ timeout: 30_000 });
    assert.match(await page.locator('#mcp-1-tools').textContent(), /MCP server nowhere at http:\/\/127\.0\.0\.1:9\/mcp: cannot connect/);
    await page.click('#mcp-1-remove');
    await page.click('#settings-save');
    await page.locator('#settings').waitFor({ state: 'detached' });
    // The token is kept in this browser's storage, like the API keys.
    assert.ok((await page.evaluate(() => JSON.stringify(localStorage))).includes(TOKEN));

    await page.fill('#run-query', 'greet the team');
    await page.click('#run-start');
    // The config's URL server is its author's choice (Obsidian does not
    // show .planvault/): the run waits until the person trusts it. The
    // command server is the terminal's, not reached here.
    await page.locator('#trust-ask').waitFor();
    assert.deepEqual((await page.locator('#trust-ask-reach').textContent()).split('\n'), [
      `connects to the MCP server \`everything\` at ${everything.url}`,
      'lets `fetch_url` reach the private hosts wiki.internal',
    ]);
    assert.equal(await page.locator('#run-phase').getAttribute('data-phase'), 'idle');
    assert.equal((await stub.requests()).length, 0, 'the model was asked before the config was trusted');
    await page.click('#trust-accept');
    await waitFor(page, () => window.planvaultTest.run().phase === 'finished');
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.finish.answer, 'The server echoed the greeting.');

    // The model saw the server's answer as the tool's result.
    const requests = await stub.requests();
    assert.equal(requests.length, 2);
    const offered = requests[0].body.tools.map((t) => t.function.name).sort();
    assert.deepEqual(offered, ['again__get-sum', 'everything__echo']);
    const toolTurn = requests[1].body.messages.find((m) => m.role === 'tool');
    assert.match(toolTurn.content, /Echo: hello from the browser/);

    // The panel lists both calls, the failed one with what the model was told.
    assert.equal(await page.locator('#run-tools-box summary').textContent(), 'Tools (2, 1 failed)');
    const lines = await page.locator('#run-tools li').allTextContents();
    assert.equal(lines[1], 'send · everything.echo worked');
    assert.match(lines[0], /^send · again\.get-sum failed: .+/);
    assert.ok(!lines[0].includes(TOKEN));
    const reason = lines[0].replace(/^send · again\.get-sum failed: /, '');
    const sumTurn = requests[1].body.messages.filter((m) => m.role === 'tool')[1];
    assert.ok(sumTurn.content.includes(reason.slice(0, 60)), `${reason} | ${sumTurn.content}`);

    // Journaled as the node's first tool call; no token anywhere in the vault.
    const files = await readVault(page);
    const journal = files['00_plan-trace/journal.jsonl'].split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const call = journal.find((e) => e.key === 'send#1/tool.1');
    assert.ok(call, JSON.stringify(journal));
    assert.match(JSON.stringify(call), /everything\.echo/);
    assert.match(JSON.stringify(call), /Echo: hello from the browser/);
    for (const [path, text] of Object.entries(files)) assert.ok(!text.includes(TOKEN), `${path} holds the token`);

    // The trust is kept in this browser: the next Run is not asked again.
    await page.click('#run-start');
    const until = Date.now() + 30_000;
    while ((await stub.requests()).length === 2) {
      assert.ok(Date.now() < until, 'the second Run asked the model');
      await new Promise((done) => setTimeout(done, 30));
    }
    assert.equal(await page.locator('#trust-ask').count(), 0);
  } finally {
    await page.close();
    stub.close();
    everything.close();
  }
});

test('a server gone in the middle of a run stops it naming the server; Resume makes the call once it is back', async () => {
  let everything = await startEverything();
  const { port } = new URL(everything.url);
  const echo = (message) => ({ tool_calls: [{ name: 'everything__echo', arguments: { message } }] });
  const stub = await startStub({
    replies: [
      // Held back while the server goes away (its tools were listed).
      reply(STEP, '', { ...echo('one'), delay_ms: 1500 }),
      reply(STEP, '', echo('two')),
      // The resumed run asks the node's model again.
      reply(STEP, '', echo('one')),
      reply(STEP, '', echo('two')),
      reply(STEP, 'Echoed twice.'),
    ],
  });
  const page = await app.open({ width: 1440, height: 900 });
  try {
    await page.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
    await openVault(page, {
      ...vault(everything.url),
      'send.md': vault(everything.url)['send.md'].replace('again.get-sum', 'everything.get-sum'),
    });
    await settingsWithStub(page, stub);
    await page.click('#settings-save');
    await page.locator('#settings').waitFor({ state: 'detached' });

    await page.fill('#run-query', 'greet the team');
    await page.click('#run-start');
    await page.click('#trust-accept');
    const deadline = Date.now() + 30_000;
    while ((await stub.requests()).length === 0) {
      assert.ok(Date.now() < deadline, 'the model was asked');
      await new Promise((done) => setTimeout(done, 30));
    }
    await everything.close();

    // A browser cannot tell a refused call from one cut off: the model
    // reads that the first may have run. The next call needs a session,
    // which nothing answers: the run stops, resumable, naming the server.
    await waitFor(page, () => window.planvaultTest.run().phase === 'finished');
    const stopped = await run(page);
    assert.equal(stopped.finish.code, 'stopped', JSON.stringify(stopped.finish));
    const phase = await page.locator('#run-phase').textContent();
    assert.match(phase, new RegExp(`MCP server everything at http://127\\.0\\.0\\.1:${port}/mcp`));
    assert.match(phase, /the call to everything\.echo was not made/);
    assert.equal((await stub.requests()).length, 2, 'the model did not read the second failure');
    let files = await readVault(page);
    let journal = files['00_plan-trace/journal.jsonl'].split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.match(JSON.stringify(journal.find((e) => e.key === 'send#1/tool.1')), /it may have run/);
    assert.equal(journal.find((e) => e.key === 'send#1/tool.2'), undefined);

    everything = await startEverything({ port: Number(port) });
    await page.click('#run-continue');
    await waitFor(page, () => window.planvaultTest.run().phase === 'finished');
    const state = await run(page);
    assert.equal(state.finish.code, 'completed', JSON.stringify(state.finish));
    assert.equal(state.finish.answer, 'Echoed twice.');
    files = await readVault(page);
    journal = files['00_plan-trace/journal.jsonl'].split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.match(JSON.stringify(journal.find((e) => e.key === 'send#1/tool.2')), /Echo: two/);
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
    stub.close();
    await everything.close();
  }
});

test('fetch_url in the browser reaches a private host the vault allows, once the person trusts it', async () => {
  // One stub serves the page (on 127.0.0.1, a private host), the other is the model.
  const site = await startStub({ replies: [] });
  const page = `${site.url.replace(/\/v1$/, '')}/__stub/page`;
  const FETCH = 'Step: Read the page';
  const script = {
    replies: [
      reply(FETCH, '', { tool_calls: [{ name: 'fetch_url', arguments: { url: page } }] }),
      reply(FETCH, 'Read it.', { times: 0 }),
    ],
  };
  const model = await startStub(script);
  const tab = await app.open({ width: 1440, height: 900 });
  try {
    await tab.waitForFunction(() => window.planvaultTest?.run().worker === 'ready', null, { timeout: 30_000 });
    await openVault(tab, {
      'read.md': '---\ntype: step\nstatus: pending\ntools: [fetch_url]\n---\n# Read the page\n\nFetch the page and say what it says.\n',
      '.planvault/config.toml': '[fetch]\nallow_hosts = ["127.0.0.1"]\n',
    });
    await settingsWithStub(tab, model);
    await tab.click('#settings-save');
    await tab.locator('#settings').waitFor({ state: 'detached' });
    await tab.fill('#run-query', 'read the page');
    await tab.click('#run-start');
    await tab.locator('#trust-ask').waitFor();
    assert.equal(await tab.locator('#trust-ask-reach').textContent(), 'lets `fetch_url` reach the private hosts 127.0.0.1');
    await tab.click('#trust-accept');
    await waitFor(tab, () => window.planvaultTest.run().phase === 'finished');
    assert.equal((await run(tab)).finish.code, 'completed', JSON.stringify((await run(tab)).finish));
    const requests = await model.requests();
    assert.match(requests[1].body.messages.find((m) => m.role === 'tool').content, /a page from the stub/);
  } finally {
    await tab.close();
    model.close();
    site.close();
  }
});
