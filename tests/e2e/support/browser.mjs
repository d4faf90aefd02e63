// Launches the system Chromium headless through playwright-core (browsers
// cannot be downloaded here, so `npx playwright install` is never used).

import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server.mjs';

/** $CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots and other artefacts tests keep (gitignored). */
export const ARTIFACTS_DIR = join(REPO_ROOT, 'tests', 'artifacts');

// Headless and quiet: no GPU, no background traffic anywhere (tests talk to
// 127.0.0.1 only). playwright-core gives every launch a fresh profile.
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

/**
 * A new page that records uncaught exceptions and console errors into
 * `page.problems`, so a test can assert the app ran cleanly. The app it
 * loads installs `window.planvaultTest` (web/src/test_hook.rs), unless
 * `testHook` is false: then the page is what a person gets.
 */
export async function openPage(browser, { width = 1280, height = 720, testHook = true } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  if (testHook) await page.addInitScript(() => { window.planvaultTestHook = true; });
  page.problems = [];
  page.on('pageerror', (error) => page.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console error: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) page.problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  return page;
}

/** Saves a screenshot as tests/artifacts/<name>.png and returns its path. */
export async function saveScreenshot(page, name) {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A fresh origin-private folder `name` holding `files` (path → text). */
export async function writePrivateFolder(page, name, files) {
  await page.evaluate(async ([name, files]) => {
    const root = await navigator.storage.getDirectory();
    try { await root.removeEntry(name, { recursive: true }); } catch (_) {}
    const dir = await root.getDirectoryHandle(name, { create: true });
    for (const [path, text] of Object.entries(files)) {
      // `a/b.md`: the folders on the way are made.
      const parts = path.split('/');
      let folder = dir;
      for (const part of parts.slice(0, -1)) folder = await folder.getDirectoryHandle(part, { create: true });
      const w = await (await folder.getFileHandle(parts.at(-1), { create: true })).createWritable();
      await w.write(text);
      await w.close();
    }
  }, [name, files]);
}
