// A vault SilverBullet also opens (its root's CONFIG.md has a `space-lua`
// block): the app says where SilverBullet would open another page for a
// link, with the link both read alike (`planvault validate` prints the same
// line), and writes a new edge's link from the space's root, which both
// read as the same note.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/browser.mjs';
import { openOpfsVault, readOpfsFolder } from './support/vault.mjs';
import { useApp, planShown, addEdgeByKeyboard } from './support/app.mjs';

const app = useApp();
let page;

const FOLDER = 'silverbullet-space';
const NOTES = {
  'CONFIG.md': '# Config\n\n```space-lua\n-- mine\n```\n',
  'plans/launch/Draft.md': '---\ntype: start\n---\n# Draft\n\n## Next\n- [[Review]]\n',
  'plans/launch/Review.md': '# Review\n\n## Next\n- approved -> [[plans/launch/Send]]\n',
  'plans/launch/Send.md': '# Send\n',
};
// What `planvault validate` prints for this space's plan folder.
const WARNING =
  'plans/launch/Draft.md:7:3: warning[silverbullet-reads-otherwise]: `[[Review]]` leads to `plans/launch/Review` here, '
  + 'as in Obsidian, but SilverBullet opens the page `Review`, which does not exist (a wikilink there is the page\'s path '
  + 'from the space\'s root, case and all); write `[[plans/launch/Review]]`, which both read as `plans/launch/Review`';

const hook = (name, ...args) => page.evaluate(([name, args]) => window.planvaultTest[name](...args), [name, args]);
const warnings = () => page.locator('#diagnostics li').allTextContents();
const readOtherwise = () =>
  page.evaluate(() => window.planvaultTest.plan().diagnostics.filter((c) => c === 'silverbullet-reads-otherwise').length);

before(async () => {
  page = await app.open({ width: 1280, height: 720 });
  await planShown(page);
  await openOpfsVault(page, FOLDER, NOTES, 3);
});

test("a link SilverBullet reads as another page is named, with the link both read alike", async () => {
  await page.waitForFunction(() => window.planvaultTest.plan().diagnostics.includes('silverbullet-reads-otherwise'));
  assert.deepEqual(await warnings(), [WARNING]);
  assert.match(await page.locator('#plan-summary').textContent(), /no errors$/);
  await saveScreenshot(page, 'silverbullet-space');
});

test('a new edge is written from the root of the space, and nothing more is warned about', async () => {
  await addEdgeByKeyboard(page, 'plans/launch/Send', 'draft', 'Draft', 'again');
  const files = await readOpfsFolder(page, FOLDER);
  assert.equal(files['plans/launch/Send.md'], '# Send\n\n## Next\n- again -> [[plans/launch/Draft]]\n');
  const plan = await hook('plan');
  assert.ok(plan.edges.some((e) => e.from === 'plans/launch/Send' && e.to === 'plans/launch/Draft'), JSON.stringify(plan.edges));
  assert.equal(await readOtherwise(), 1);
  assert.deepEqual(page.problems, []);
});
