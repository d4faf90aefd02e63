// The vault folders the tests keep in the page's origin-private file
// system, and the state of the run the app makes over them.

import { writePrivateFolder } from './browser.mjs';

/** Every file of the OPFS folder `folder`, dot-folders included: path → text (a BOM kept). */
export async function readOpfsFolder(page, folder) {
  return page.evaluate(async (folder) => {
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const out = {};
    const stack = [[await (await navigator.storage.getDirectory()).getDirectoryHandle(folder), '']];
    while (stack.length) {
      const [dir, prefix] = stack.pop();
      for await (const [name, handle] of dir.entries()) {
        if (handle.kind === 'directory') stack.push([handle, `${prefix}${name}/`]);
        else out[prefix + name] = decoder.decode(await (await handle.getFile()).arrayBuffer());
      }
    }
    return out;
  }, folder);
}

/** The app's run panel state, as the test hook reports it. */
export const runState = (page) => page.evaluate(() => window.planvaultTest.run());

/** `page.waitForFunction`, whose timeout error carries the run's state. */
export async function waitForRun(page, predicate, arg, timeout = 60_000) {
  try {
    await page.waitForFunction(predicate, arg, { timeout, polling: 50 });
  } catch (error) {
    const state = await runState(page).catch(() => null);
    throw new Error(`${error.message}\nrun state: ${JSON.stringify(state, null, 1)}`);
  }
}

/**
 * Writes `files` into a fresh OPFS folder `folder` and opens it in the app
 * (once earlier opens have settled) as a vault on disk; the handle is
 * `window.e2eVault`. With `nodes`, also waits for that many notes drawn.
 */
export async function openOpfsVault(page, folder, files, nodes) {
  await page.waitForFunction(() => window.planvaultTest?.opensSettled());
  await writePrivateFolder(page, folder, files);
  await page.evaluate(async (folder) => {
    const root = await navigator.storage.getDirectory();
    window.e2eVault = await root.getDirectoryHandle(folder);
    await window.planvaultTest.openHandle(window.e2eVault);
  }, folder);
  await page.waitForFunction((folder) => document.querySelector('#mode').textContent.includes(folder), folder);
  if (nodes !== undefined) {
    await page.waitForFunction((n) => window.planvaultTest.plan()?.nodes.length === n, nodes);
  }
}
