// scripts/lib.sh's npm_needs_install: when set-up runs `npm ci` in a folder.
// A linked node_modules (a worktree sharing another checkout's) is never
// reinstalled: `npm ci` through the link empties the folder it points to.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB = resolve(dirname(fileURLToPath(import.meta.url)), '../lib.sh');
const needsInstall = (dir) =>
  spawnSync('bash', ['-c', 'source "$1"; npm_needs_install "$2"', '-', LIB, dir]).status === 0;

test('npm_needs_install: missing or stale node_modules yes, current or linked no', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'planvault-npm-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const old = new Date(Date.now() - 3_600_000);
  const project = (name) => {
    const dir = join(root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package-lock.json'), '{}');
    return dir;
  };
  const installed = (dir, when) => {
    mkdirSync(join(dir, 'node_modules'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', '.package-lock.json'), '{}');
    utimesSync(join(dir, 'node_modules', '.package-lock.json'), when, when);
  };

  assert.equal(needsInstall(project('missing')), true);

  const stale = project('stale');
  installed(stale, old);
  assert.equal(needsInstall(stale), true, 'the lock file is newer than the install');

  const current = project('current');
  installed(current, new Date(Date.now() + 60_000));
  assert.equal(needsInstall(current), false);

  // A worktree whose node_modules links to another checkout's older install.
  const linked = project('linked');
  symlinkSync(join(stale, 'node_modules'), join(linked, 'node_modules'));
  assert.equal(needsInstall(linked), false, 'never npm ci through a link');
});
