// scripts/wasm-crates.mjs on a small wasm module written here byte by byte:
// each function's body counts to the crate its name says, a generic's to the
// crate it is instantiated for, and a binary without names is refused.
//   node --test scripts/tests/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'wasm-crates.mjs');

const leb = (n) => {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
};
const name = (s) => [...leb(Buffer.byteLength(s)), ...Buffer.from(s)];
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];

/** A module of `() -> ()` functions, each a body of `nops` no-ops, with their names. */
function module(functions, { names = true } = {}) {
  const bodies = functions.map(({ nops }) => {
    const body = [0x00, ...Array(nops).fill(0x01), 0x0b];
    return [...leb(body.length), ...body];
  });
  const nameMap = functions.flatMap(({ symbol }, i) => [...leb(i), ...name(symbol)]);
  const functionNames = [...leb(functions.length), ...nameMap];
  return Buffer.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x00, 0x00]),
    ...section(3, [...leb(functions.length), ...functions.map(() => 0x00)]),
    ...section(10, [...leb(functions.length), ...bodies.flat()]),
    ...section(11, [0x01, 0x00, 0x41, 0x00, 0x0b, ...leb(5), ...Buffer.from('hello')]),
    ...(names ? section(0, [...name('name'), 0x01, ...leb(functionNames.length), ...functionNames]) : []),
  ]);
}

function run(bytes) {
  const dir = mkdtempSync(join(tmpdir(), 'wasm-crates-test-'));
  try {
    const file = join(dir, 'm.wasm');
    writeFileSync(file, bytes);
    return spawnSync(process.execPath, [SCRIPT, file], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `crate -> [functions, code bytes]` from the printed table. */
function rows(stdout) {
  const table = new Map();
  for (const line of stdout.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length >= 6 && /^\d+$/.test(cells[2])) table.set(cells[1], [Number(cells[2]), cells[3]]);
  }
  return table;
}

test('code is summed by the crate each function name belongs to', () => {
  const result = run(
    module([
      { symbol: '<serde_json::value::Value as core::fmt::Debug>::fmt', nops: 100 },
      { symbol: 'serde_json[5c24ed401ba4628e]::de::from_str', nops: 50 },
      { symbol: 'core::ptr::drop_in_place<leptos::View>', nops: 30 },
      { symbol: 'core::fmt::write', nops: 10 },
      { symbol: 'memcpy', nops: 5 },
    ]),
  );
  assert.equal(result.status, 0, result.stderr);
  const table = rows(result.stdout);
  // A body is its locals count, the no-ops and `end`: nops + 2 bytes.
  assert.deepEqual(table.get('serde_json'), [2, '154']);
  assert.deepEqual(table.get('leptos'), [1, '32']);
  assert.deepEqual(table.get('core'), [1, '12']);
  assert.deepEqual(table.get('compiler_builtins'), [1, '7']);
  assert.match(result.stdout, /in 5 functions/);
  assert.deepEqual([...table.keys()], ['serde_json', 'leptos', 'core', 'compiler_builtins'], 'largest first');
});

test('a binary without a name section is refused', () => {
  const result = run(module([{ symbol: 'f', nops: 1 }], { names: false }));
  assert.equal(result.status, 1);
  assert.match(result.stderr, /no function names/);
});
