// What scripts/serve-web.mjs is built from: the folders it watches
// (app-crates.mjs) and serveDist's "building" page before the first build.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appCrateDirs } from '../app-crates.mjs';
import { serveDist } from '../../tests/e2e/support/server.mjs';

const pkg = (name, folder, dependencies = []) => ({
  name,
  manifest_path: `/ws/${folder}/Cargo.toml`,
  dependencies: dependencies.map(([dep, kind = null]) => ({ name: dep, path: `/ws/${dep}`, kind })),
});

test('the watched crates: the app, the worker and every path crate they build on, not dev-only or unrelated ones', () => {
  const metadata = {
    workspace_root: '/ws',
    packages: [
      pkg('planvault-web', 'web', [['planvault-core'], ['planvault-testkit', 'dev']]),
      pkg('planvault-worker', 'worker', [['planvault-runner']]),
      pkg('planvault-runner', 'runner', [['planvault-core'], ['planvault-llm']]),
      pkg('planvault-core', 'core'),
      pkg('planvault-llm', 'llm'),
      pkg('planvault-testkit', 'testkit'),
      pkg('planvault', 'cli', [['planvault-core']]),
    ],
  };
  assert.deepEqual(appCrateDirs(metadata), ['core', 'llm', 'runner', 'web', 'worker']);
  assert.throws(() => appCrateDirs({ ...metadata, packages: metadata.packages.slice(1) }), /planvault-web/);
});

test('serveDist answers 503 with a self-reloading page while building, then serves the build', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'planvault-serve-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  let building = true;
  const server = await serveDist(root, { building: () => building });
  t.after(() => server.close());

  const during = await fetch(server.url);
  assert.equal(during.status, 503);
  assert.match(await during.text(), /http-equiv="refresh"[^>]*>[\s\S]*building/);

  writeFileSync(join(root, 'index.html'), '<p>the app</p>');
  building = false;
  const after = await fetch(server.url);
  assert.equal(after.status, 200);
  assert.equal(await after.text(), '<p>the app</p>');
});
