#!/usr/bin/env node
// What takes the space in a wasm binary, by crate: the code of every function,
// named by the binary's name section, summed per crate, plus the data segments.
//   node scripts/wasm-crates.mjs [--top N] [--functions N] FILE.wasm
// Give it cargo's output (target/wasm32-unknown-unknown/wasm-release/<bin>.wasm;
// for the app, linked for splitting, the main module scripts/build-web.mjs cut
// from it: target/wasm32-unknown-unknown/wasm-release/web-build/planvault-web-*/split/planvault-web.wasm):
// it runs wasm-bindgen and `wasm-opt -Oz -g` (what scripts/build-web.mjs runs,
// keeping the names) on a copy first, so the table matches what is shipped.
// A `.wasm` already processed (it has no `__wbindgen_describe` exports) is read as is.
//
// A function counts to the first crate its name mentions that is not std's
// (`core`, `alloc`, `std`): `core::ptr::drop_in_place<leptos::...>` is leptos's,
// `<serde_json::Value as core::fmt::Debug>::fmt` is serde_json's: the cost of a
// generic is that of the crate that instantiates it. "gzip" is each crate's
// code gzipped on its own: an estimate of its share of the download.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" }, functions: { type: "string", default: "0" } },
});
if (positionals.length !== 1) {
  console.error("usage: node scripts/wasm-crates.mjs [--top N] [--functions N] FILE.wasm");
  process.exit(2);
}

let bytes = readFileSync(positionals[0]);
/** Whether a custom section named `name` is there (wasm-opt cannot read a module with `linking`). */
function hasCustomSection(wasm, name) {
  let at = 8;
  const leb = () => {
    let result = 0, shift = 0, byte;
    do {
      byte = wasm[at++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  };
  while (at < wasm.length) {
    const id = wasm[at++];
    const size = leb();
    const end = at + size;
    if (id === 0) {
      const length = leb();
      if (wasm.toString("utf8", at, at + length) === name) return true;
    }
    at = end;
  }
  return false;
}
if (hasCustomSection(bytes, "linking")) {
  console.error(
    `${positionals[0]} is linked for splitting (--emit-relocs): give the main module scripts/build-web.mjs cut from it, ` +
      "target/wasm32-unknown-unknown/wasm-release/web-build/planvault-web-*/split/planvault-web.wasm",
  );
  process.exit(2);
}
if (bytes.includes("__wbindgen_describe")) {
  const work = mkdtempSync(join(tmpdir(), "wasm-crates-"));
  try {
    const name = basename(positionals[0], ".wasm");
    execFileSync("wasm-bindgen", ["--target", "web", "--no-typescript", "--out-dir", work, positionals[0]]);
    const bound = join(work, `${name}_bg.wasm`);
    const optimised = join(work, "opt.wasm");
    const wasmOpt = join(REPO_ROOT, "node_modules", ".bin", "wasm-opt");
    execFileSync(wasmOpt, ["-Oz", "--low-memory-unused", "-g", "--enable-bulk-memory", "--enable-nontrapping-float-to-int",
      "--enable-sign-ext", "--enable-mutable-globals", "--enable-reference-types", "--enable-multivalue",
      bound, "-o", optimised]);
    bytes = readFileSync(optimised);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- the binary format: sections, LEB128s, names ---
let pos = 0;
const u8 = () => bytes[pos++];
function leb() {
  let result = 0, shift = 0, byte;
  do {
    byte = u8();
    result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return result;
}
const str = () => {
  const len = leb();
  const s = bytes.toString("utf8", pos, pos + len);
  pos += len;
  return s;
};

pos = 8;
let importedFunctions = 0;
const bodies = []; // [start, end) per defined function
const names = new Map();
let dataBytes = 0;
const sections = new Map();
while (pos < bytes.length) {
  const id = u8();
  const size = leb();
  const start = pos;
  const end = pos + size;
  if (id === 2) {
    for (let n = leb(), i = 0; i < n; i++) {
      str();
      str();
      const kind = u8();
      if (kind === 0) { leb(); importedFunctions++; }
      else if (kind === 1) { u8(); const flags = leb(); leb(); if (flags & 1) leb(); }
      else if (kind === 2) { const flags = leb(); leb(); if (flags & 1) leb(); }
      else if (kind === 3) { u8(); u8(); }
      else if (kind === 4) { u8(); leb(); }
    }
  } else if (id === 10) {
    for (let n = leb(), i = 0; i < n; i++) {
      const len = leb();
      bodies.push([pos, pos + len]);
      pos += len;
    }
  } else if (id === 11) {
    dataBytes = size;
  } else if (id === 0) {
    const name = str();
    if (name === "name") {
      while (pos < end) {
        const sub = u8();
        const subSize = leb();
        const subEnd = pos + subSize;
        if (sub === 1) {
          for (let n = leb(), i = 0; i < n; i++) {
            const index = leb();
            names.set(index, str());
          }
        }
        pos = subEnd;
      }
    }
    sections.set(`custom ${name}`, (sections.get(`custom ${name}`) ?? 0) + size);
  }
  sections.set(id, size);
  pos = end;
}
if (names.size === 0) {
  console.error("no function names in this binary: give cargo's wasm (the release profile keeps its symbols)");
  process.exit(1);
}

const STD = new Set(["core", "alloc", "std", "compiler_builtins", "dlmalloc", "hashbrown", "std_detect"]);
function crateOf(name) {
  // The first segment of every path in the name (`a::b::c`, `<a::B as c::D>`;
  // v0 mangling's demangled names say `a[1f2e3d4c5b6a7980]::b`).
  const crates = [...name.matchAll(/(?:^|[<\s&(\[,*])([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?::/g)].map((m) => m[1]);
  const own = crates.find((c) => !STD.has(c) && c !== "impl" && !/^[A-Z]/.test(c));
  if (own) return own;
  if (crates.length) return crates[0];
  if (/^(__wbindgen|__wbg|wasm_bindgen)/.test(name)) return "wasm_bindgen";
  if (/^(memcpy|memmove|memset|memcmp|__rust|__rdl|__rg)/.test(name)) return "compiler_builtins";
  return "(unnamed)";
}

const byCrate = new Map();
const functions = [];
bodies.forEach(([start, end], i) => {
  const name = names.get(importedFunctions + i) ?? `func ${importedFunctions + i}`;
  const crate = crateOf(name);
  const entry = byCrate.get(crate) ?? { bytes: 0, functions: 0, parts: [] };
  entry.bytes += end - start;
  entry.functions++;
  entry.parts.push(bytes.subarray(start, end));
  byCrate.set(crate, entry);
  functions.push({ name, crate, bytes: end - start });
});

const codeTotal = bodies.reduce((sum, [s, e]) => sum + e - s, 0);
const rows = [...byCrate.entries()]
  .map(([crate, e]) => ({ crate, bytes: e.bytes, functions: e.functions, gzip: gzipSync(Buffer.concat(e.parts), { level: 9 }).length }))
  .sort((a, b) => b.bytes - a.bytes);
const top = Number(options.top);
const kb = (n) => (n / 1024).toFixed(1);
const bytesOf = (n) => n.toLocaleString("en-US");
console.log(`${basename(positionals[0])}: code ${kb(codeTotal)} KB in ${bodies.length} functions, data ${kb(dataBytes)} KB`);
console.log("");
console.log("| crate | functions | code bytes | share | gzip KB (alone) |");
console.log("|---|---:|---:|---:|---:|");
for (const row of rows.slice(0, top)) {
  console.log(`| ${row.crate} | ${row.functions} | ${bytesOf(row.bytes)} | ${((100 * row.bytes) / codeTotal).toFixed(1)}% | ${kb(row.gzip)} |`);
}
const rest = rows.slice(top);
if (rest.length) {
  const sum = rest.reduce((s, r) => s + r.bytes, 0);
  const count = rest.reduce((s, r) => s + r.functions, 0);
  console.log(`| ${rest.length} more crates | ${count} | ${bytesOf(sum)} | ${((100 * sum) / codeTotal).toFixed(1)}% | |`);
}
console.log(`| (data segments) | | ${bytesOf(dataBytes)} | | |`);
const largest = Number(options.functions);
if (largest > 0) {
  console.log("");
  console.log("| largest functions | crate | bytes |");
  console.log("|---|---|---:|");
  for (const f of functions.sort((a, b) => b.bytes - a.bytes).slice(0, largest)) {
    console.log(`| ${f.name.replaceAll("|", "\\|").slice(0, 140)} | ${f.crate} | ${f.bytes} |`);
  }
}
