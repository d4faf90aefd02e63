// Lists the workspace's test targets that have wasm-bindgen tests, one
// `cargo test` argument line per package: `-p NAME [--lib] [--bins] [--test T]...`.
// A target qualifies when its sources mention `wasm_bindgen_test`, so adding
// such a test file is all it takes to have it run in headless Chromium.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const metadata = JSON.parse(
  execFileSync('cargo', ['metadata', '--no-deps', '--format-version', '1'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  }),
);

function mentions(path) {
  const stat = statSync(path);
  if (stat.isDirectory()) return readdirSync(path).some((entry) => mentions(join(path, entry)));
  return path.endsWith('.rs') && readFileSync(path, 'utf8').includes('wasm_bindgen_test');
}

for (const pkg of metadata.packages) {
  if (!metadata.workspace_members.includes(pkg.id)) continue;
  const args = [];
  for (const target of pkg.targets) {
    const kinds = target.kind;
    if (kinds.includes('test')) {
      // tests/NAME.rs or tests/NAME/main.rs
      const file = target.src_path;
      const scope = file.endsWith('/main.rs') ? dirname(file) : file;
      if (mentions(scope)) args.push('--test', target.name);
    } else if (kinds.includes('lib') || kinds.includes('cdylib') || kinds.includes('rlib')) {
      if (mentions(dirname(target.src_path)) && !args.includes('--lib')) args.push('--lib');
    } else if (kinds.includes('bin')) {
      if (mentions(dirname(target.src_path)) && !args.includes('--bins')) args.push('--bins');
    }
  }
  if (args.length > 0) console.log(['-p', pkg.name, ...args].join(' '));
}
