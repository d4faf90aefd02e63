// Tools a note declares that nothing provides in the browser: an
// `unknown-tool` diagnostic at the entry in the note's `tools:`, in the
// diagnostics list, on the card and in the list view, before any run. With
// no MCP server configured it is a warning (a run goes on without the
// tool); a command server's tools are named as not available in the
// browser, an error (a browser run stops before any model call).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot, writePrivateFolder } from './support/browser.mjs';
import { useApp, planShown } from './support/app.mjs';

const app = useApp();
const FOLDER = 'e2e-tools';
const CONFIG = '[mcp.servers.outbox]\ncommand = "npx"\n\n[mcp.servers.search]\nurl = "http://127.0.0.1:9/mcp"\n';

const listed = (page) => page.locator('#diagnostics li').allTextContents();

test("the example's send step says its tool is provided by nothing here", async () => {
  const page = await app.open();
  await planShown(page);
  await page.waitForFunction(() => window.planvaultTest.plan().diagnostics.includes('unknown-tool'));
  const items = await listed(page);
  assert.deepEqual(items, [
    'send.md:4:9: warning[unknown-tool]: send.md declares the tool `outbox.write_file`, which nothing provides in the browser: '
      + 'no MCP server is configured (.planvault/config.toml: [mcp.servers.NAME]); a run goes on without it',
  ]);
  assert.match(await page.locator('#plan-summary').textContent(), /no errors$/);
  // The side panel is fetched after the page (web/src/on_demand.rs): wait for its title.
  const title = page.locator('#diagnostics-title');
  await page.waitForFunction(
    () => document.querySelector('#diagnostics-title')?.textContent.trim() === 'Diagnostics: 0 errors, 1 warning',
    null,
    { timeout: 10_000 },
  ).catch(async () => assert.fail(`the panel's title: ${await title.textContent()}`));
  assert.deepEqual(page.problems, []);
});

test("a command server's tool is not available in the browser", async () => {
  const page = await app.open({ width: 1440, height: 900 });
  await planShown(page);
  await page.waitForFunction(() => window.planvaultTest.opensSettled());
  await writePrivateFolder(page, FOLDER, {
    'a.md': '---\ntype: start\ntools: [fetch_url, outbox.write_file]\n---\n# Write\n\n## Next\n- [[b]]\n',
    'b.md': '---\ntools: [search.find]\n---\n# Search\n',
  });
  await page.evaluate(async ([folder, config]) => {
    const root = await navigator.storage.getDirectory();
    window.e2eVault = await root.getDirectoryHandle(folder);
    const settings = await window.e2eVault.getDirectoryHandle('.planvault', { create: true });
    const w = await (await settings.getFileHandle('config.toml', { create: true })).createWritable();
    await w.write(config);
    await w.close();
    await window.planvaultTest.openHandle(window.e2eVault);
  }, [FOLDER, CONFIG]);
  await page.waitForFunction(() => window.planvaultTest.plan()?.diagnostics.includes('unknown-tool'));
  // search is a URL server not listed yet: its tool is not judged.
  assert.deepEqual(await listed(page), [
    'a.md:3:20: error[unknown-tool]: a.md declares the tool `outbox.write_file`, which nothing provides in the browser: '
      + 'server outbox runs a command, which only the terminal starts (planvault run), so it is not available in the browser; '
      + 'a run here stops before any model call',
  ]);
  assert.match(await page.locator('#plan-summary').textContent(), /1 error$/);

  // In the list view, under its node.
  await page.click('#list-toggle');
  assert.match(await page.locator('#plan-list li.list-diag.error[data-node="a"]').textContent(), /unknown-tool.*outbox\.write_file/);
  assert.match(await page.locator('#list-n-a').textContent(), /1 error/);
  await saveScreenshot(page, 'tools-in-browser');

  // The config is read with the notes: with no server left, both tools
  // are nobody's, and a run would go on without them.
  await page.evaluate(async () => {
    const dir = await window.e2eVault.getDirectoryHandle('.planvault');
    const w = await (await dir.getFileHandle('config.toml')).createWritable();
    await w.write('# no servers\n');
    await w.close();
    await window.planvaultTest.poll();
  });
  await page.waitForFunction(() => document.querySelectorAll('#diagnostics li.warning').length === 2);
  assert.equal(await page.locator('#diagnostics li.error').count(), 0);
  assert.match((await listed(page))[1], /^b\.md:2:9: warning\[unknown-tool\]: b\.md declares the tool `search\.find`/);
  assert.deepEqual(page.problems, []);
});
