// The built app and a browser for one test file: a static server on
// 127.0.0.1 and one headless Chromium, started before the file's tests and
// closed after them (each file its own, so files can run in parallel).

import { before, after } from 'node:test';
import { serveDist } from './server.mjs';
import { launchBrowser, openPage } from './browser.mjs';

/** Registers the file's before/after hooks; the fields are set once `before` ran. */
export function useApp() {
  // Node 20 starts a file's top-level `before` hooks together, without
  // waiting for one to finish: a hook of the file that opens a page awaits
  // the start-up through `open`.
  let startup = null;
  const start = () =>
    (startup ??= (async () => {
      app.server = await serveDist();
      app.browser = await launchBrowser();
    })());
  const app = {
    server: null,
    browser: null,
    /**
     * A new page (viewport as for openPage) that has loaded the app;
     * `init` runs in the page before the app's own scripts, `beforeLoad`
     * (given the page) before the page is loaded, e.g. to route requests.
     */
    async open(viewport, { init, beforeLoad } = {}) {
      await start();
      const page = await openPage(app.browser, viewport);
      if (init) await page.addInitScript(init);
      if (beforeLoad) await beforeLoad(page);
      await page.goto(app.server.url);
      return page;
    },
  };
  before(start);
  after(async () => {
    await app.browser?.close();
    await app.server?.close();
  });
  return app;
}

/**
 * Waits until the app has loaded a plan with at least one node, and the
 * parts of the app it shows are fetched (web/src/on_demand.rs).
 */
export async function planShown(page, timeout = 60_000) {
  await page.waitForFunction(
    () => window.planvaultTest?.plan()?.nodes.length > 0 && window.planvaultTest.partsLoading() === 0,
    null,
    { timeout },
  );
}

/**
 * Adds an edge as a keyboard user does: clicks `from`'s card, presses E,
 * types `query` in the picker, takes its first row (which must show
 * `shown`), then labels the edge `label`; waits until it is written.
 */
export async function addEdgeByKeyboard(page, from, query, shown, label) {
  const at = await page.evaluate((id) => window.planvaultTest.nodePoint(id, 'center'), from);
  await page.mouse.click(at.x, at.y);
  await page.keyboard.press('e');
  const input = page.locator('#picker-input');
  await input.waitFor();
  await input.fill(query);
  await page.locator('#picker-list li').first().filter({ hasText: shown }).waitFor();
  await page.keyboard.press('Enter');
  await page.locator('#dialog-input').fill(label);
  await page.keyboard.press('Enter');
  await page.evaluate(() => window.planvaultTest.idle());
}
