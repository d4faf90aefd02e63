// scripts/build-web.mjs and scripts/serve-web.mjs on a small stand-in
// workspace (two wasm-bindgen crates named like the app and the worker), so
// each build takes seconds: what a broken build says, what a build writes,
// and that the server rebuilds after an edit and keeps serving the last good
// build when a rebuild fails. Run by `scripts/test start`:
//   node --test scripts/tests/
// Cargo's output for these builds stays in target/web-dev-test/ (std
// prebuilt, so no build-std; on Debian's route std is built once there).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD = join(REPO_ROOT, 'scripts', 'build-web.mjs');
const SERVE = join(REPO_ROOT, 'scripts', 'serve-web.mjs');
const env = {
  ...process.env,
  CARGO_TARGET_DIR: join(REPO_ROOT, 'target', 'web-dev-test'),
  PLANVAULT_PREBUILT_STD: '1',
  CARGO_NET_OFFLINE: 'true',
  CARGO_TERM_COLOR: 'never',
};
const bindgenVersion = /\[\[package\]\]\nname = "wasm-bindgen"\nversion = "([^"]+)"/.exec(
  readFileSync(join(REPO_ROOT, 'Cargo.lock'), 'utf8'),
)[1];

let root;
const file = (path) => join(root, path);
const write = (path, text) => {
  mkdirSync(dirname(file(path)), { recursive: true });
  writeFileSync(file(path), text);
};

const crate = (name) => `[package]
name = "${name}"
version = "0.1.0"
edition = "2021"
publish = false

[[bin]]
name = "${name}"
path = "src/main.rs"

[features]
e2e = []

[dependencies]
wasm-bindgen = "=${bindgenVersion}"
`;
const appSource = (marker) => `use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/hello.js")]
extern "C" {
    fn hello() -> u32;
}

#[wasm_bindgen]
pub fn marker() -> u32 {
    ${marker} + hello()
}

fn main() {}
`;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'planvault-web-dev-'));
  write(
    'Cargo.toml',
    `[workspace]\nmembers = ["web", "worker"]\nresolver = "2"\n\n[profile.wasm-release]\ninherits = "release"\nopt-level = "z"\n`,
  );
  // The repository's lock file: the same wasm-bindgen, resolved offline.
  cpSync(join(REPO_ROOT, 'Cargo.lock'), file('Cargo.lock'));
  write('web/Cargo.toml', crate('planvault-web'));
  write('web/src/main.rs', appSource(1));
  write('web/src/hello.js', 'export function hello() { return 41; }\n');
  write('web/index.html', '<!doctype html>\n<html>\n  <head>\n    <!-- planvault:assets -->\n  </head>\n  <body></body>\n</html>\n');
  write('worker/Cargo.toml', crate('planvault-worker'));
  write('worker/src/main.rs', 'use wasm_bindgen::prelude::*;\n\n#[wasm_bindgen]\npub fn work() -> u32 {\n    7\n}\n\nfn main() {}\n');
  write('static/app.css', 'body { margin: 0; }\n');
  write('static/favicon.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
});

after(() => rmSync(root, { recursive: true, force: true }));

function build(...args) {
  return spawnSync(process.execPath, [BUILD, '--root', root, ...args], { env, encoding: 'utf8', timeout: 600_000 });
}

test('a build writes the page, the hashed app, the worker and its loader, and the snippets', () => {
  const result = build('--features', 'e2e');
  assert.equal(result.status, 0, result.stderr);
  const page = readFileSync(file('dist/index.html'), 'utf8');
  const app = /import init from '\.\/(planvault-web-[0-9a-f]{16})\/planvault-web\.js';/.exec(page)?.[1];
  assert.ok(app, `the page imports the app from its hashed folder: ${page}`);
  assert.match(page, new RegExp(`module_or_path: '\\./${app}/planvault-web_bg\\.wasm'`));
  for (const href of [...page.matchAll(/href="\.\/([^"]+)"/g)].map((m) => m[1])) {
    assert.ok(existsSync(file(`dist/${href}`)), `the page names ${href}, which is there`);
  }
  assert.match(page, /href="\.\/app-[0-9a-f]{16}\.css"/);
  assert.ok(!page.includes('planvault:assets'), 'the marker is replaced');

  const loader = readFileSync(file('dist/planvault-worker_loader.js'), 'utf8');
  const worker = /from '\.\/(planvault-worker-[0-9a-f]{16})\.js'/.exec(loader)?.[1];
  assert.ok(worker, `the loader imports the hashed worker: ${loader}`);
  assert.ok(existsSync(file(`dist/${worker}.js`)) && existsSync(file(`dist/${worker}_bg.wasm`)));

  // The app's glue imports its JS snippet by a relative path that is there.
  const glue = readFileSync(file(`dist/${app}/planvault-web.js`), 'utf8');
  const snippet = /from ["']\.\/(snippets\/[^"']+\/hello\.js)["']/.exec(glue)?.[1];
  assert.ok(snippet && existsSync(file(`dist/${app}/${snippet}`)), `the snippet is copied: ${snippet}`);
  // The wasm went through wasm-opt (its report is on stderr).
  assert.match(result.stderr, /wasm-opt -Oz planvault-web|wasm unchanged/);
});

test('a broken Rust build exits non-zero showing the compiler error, and leaves dist/ as it was', () => {
  write('dist-old/index.html', 'the last good build\n');
  write('web/src/main.rs', `${appSource(1)}\nfn broken() -> u32 { "not a number" }\n`);
  try {
    const result = build('--out', file('dist-old'));
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /error\[E0308\]: mismatched types/);
    assert.match(result.stderr, /web\/src\/main\.rs:\d+:\d+/);
    assert.match(result.stderr, /the web app did not build/);
    assert.equal(readFileSync(file('dist-old/index.html'), 'utf8'), 'the last good build\n');
  } finally {
    write('web/src/main.rs', appSource(1));
  }
});

/** A running serve-web: its output so far, and a wait for a line. */
function serve(port) {
  const child = spawn(process.execPath, [SERVE, '--port', String(port), '--root', root], { env });
  let output = '';
  let seen = 0;
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((done) => child.on('exit', (code) => done(code)));
  return {
    child,
    exited,
    output: () => output,
    /** Resolves when a line after the last one waited for matches. */
    async next(pattern, timeout = 180_000) {
      const until = Date.now() + timeout;
      for (;;) {
        const rest = output.slice(seen);
        const match = pattern.exec(rest);
        if (match) {
          seen += match.index + match[0].length;
          return match;
        }
        if (child.exitCode !== null || Date.now() > until) {
          throw new Error(`no ${pattern} in serve-web's output:\n${output}`);
        }
        await new Promise((done) => setTimeout(done, 100));
      }
    },
  };
}

async function servedApp(url) {
  const page = await (await fetch(url)).text();
  return /import init from '\.\/(planvault-web-[0-9a-f]{16})\/planvault-web\.js'/.exec(page)?.[1];
}

test('serve-web serves the build, rebuilds after an edit, and keeps the last good build when a rebuild fails', async () => {
  const server = serve(0);
  try {
    const url = (await server.next(/listening on (http:\/\/127\.0\.0\.1:\d+\/)/))[1];
    await server.next(/watching .*: a change rebuilds/, 600_000); // a cold first build compiles wasm-bindgen
    const first = await servedApp(url);
    assert.ok(first, 'the built page is served');
    assert.equal((await fetch(`${url}${first}/planvault-web_bg.wasm`)).status, 200);

    write('web/src/main.rs', appSource(2));
    await server.next(/web\/src\/main\.rs changed: rebuilding/);
    await server.next(/rebuilt in \d+ s: reload the page/);
    const second = await servedApp(url);
    assert.ok(second && second !== first, `the edit is served: ${first} -> ${second}`);
    assert.equal((await fetch(`${url}${first}/planvault-web_bg.wasm`)).status, 404, 'the old build is gone');

    write('web/src/main.rs', `${appSource(3)}\nfn broken() -> u32 { "not a number" }\n`);
    await server.next(/the rebuild failed after \d+ s \(the error is above\): still serving the last good build/);
    assert.match(server.output(), /error\[E0308\]/);
    assert.equal(await servedApp(url), second);

    write('web/src/main.rs', appSource(3));
    await server.next(/rebuilt in \d+ s/);
    const third = await servedApp(url);
    assert.ok(third && third !== second, 'the fix is served');
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    write('web/src/main.rs', appSource(1));
  }
});

test('serve-web on a taken port stops at once with status 2, before building', async () => {
  const taken = createServer().listen(0, '127.0.0.1');
  await new Promise((done) => taken.once('listening', done));
  try {
    const server = serve(taken.address().port);
    assert.equal(await server.exited, 2, server.output());
    assert.match(server.output(), /port \d+ on 127\.0\.0\.1 is already in use/);
    assert.doesNotMatch(server.output(), /cargo build/);
  } finally {
    taken.close();
  }
});
