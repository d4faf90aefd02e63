// Dark mode in headless Chromium: the app follows prefers-color-scheme
// (emulated), the toolbar's toggle picks the other theme and the pick is
// kept in localStorage; the page and the canvas's drawing both switch.
// Screenshots of both themes go to tests/artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { planShown, useApp } from './support/app.mjs';
import { pixelsAt } from './support/run.mjs';

const app = useApp();

// theme.rs: the canvas's background and a card's fill in each theme.
const CANVAS = { light: [0xf6, 0xf7, 0xf9], dark: [0x11, 0x14, 0x18] };
const CARD = { light: [0xff, 0xff, 0xff], dark: [0x1f, 0x24, 0x2c] };

const same = (a, b) => a.every((v, i) => Math.abs(v - b[i]) <= 3);

/** The theme as shown: <html data-theme>, the page's and the canvas's colours. */
async function shown(page) {
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  const body = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  // An empty spot of the canvas (its left edge, half-way down) and a card's middle.
  const spot = await page.evaluate(() => {
    const r = document.querySelector('#plan-canvas').getBoundingClientRect();
    return { x: r.left + 4, y: r.top + r.height / 2 };
  });
  const background = (await pixelsAt(page, spot))[12];
  const cardRect = await page.evaluate(() => window.planvaultTest.nodeRect('review'));
  const card = (await pixelsAt(page, { x: (cardRect.left + cardRect.right) / 2, y: cardRect.bottom - 6 }))[12];
  return { theme, body, background, card };
}

async function expectTheme(page, name) {
  await page.waitForFunction((name) => document.documentElement.dataset.theme === name, name, { timeout: 5_000 });
  const s = await shown(page);
  assert.equal(s.theme, name);
  assert.ok(same(s.background, CANVAS[name]), `${name} canvas background, got ${s.background}`);
  assert.ok(same(s.card, CARD[name]), `${name} card, got ${s.card}`);
  const dark = name === 'dark';
  assert.equal(s.body === 'rgb(255, 255, 255)', !dark, `page background ${s.body}`);
  assert.equal(await page.locator('#theme-toggle').getAttribute('aria-pressed'), String(dark));
}

const stored = (page) => page.evaluate(() => localStorage.getItem('planvault.theme'));

test('the theme follows the system, the toggle picks the other one and is kept', async () => {
  const page = await app.open({ width: 1280, height: 720 });
  try {
    // The first visit copies the example into this browser: let it finish.
    await planShown(page);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await planShown(page);
    await page.evaluate(() => window.planvaultTest.centerOn('review', 1));
    await expectTheme(page, 'dark');
    await saveScreenshot(page, 'theme-dark');
    assert.equal(await stored(page), null, 'following the system stores nothing');

    // The toggle: light, kept across a reload although the system is dark.
    await page.click('#theme-toggle');
    await expectTheme(page, 'light');
    assert.equal(await stored(page), 'light');
    await page.reload();
    await planShown(page);
    await page.evaluate(() => window.planvaultTest.centerOn('review', 1));
    await expectTheme(page, 'light');
    await saveScreenshot(page, 'theme-light');

    // Back to the system's theme: the pick is forgotten, the system followed again.
    await page.click('#theme-toggle');
    await expectTheme(page, 'dark');
    assert.equal(await stored(page), null);
    await page.emulateMedia({ colorScheme: 'light' });
    await expectTheme(page, 'light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectTheme(page, 'dark');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.context().close();
  }
});
