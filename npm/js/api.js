// The package's public API over the wasm-bindgen glue: argument checks,
// errors that always carry a `code`, and recovery after a wasm trap.
// Every entry (node.js, browser.js, inline.js) initialises the wasm, then
// re-exports this module.
import * as glue from "./planvault_wasm.js";

const STALE_MESSAGE = "Invalid stale object from previous Wasm instance";

function coded(code, message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  error.name = "PlanvaultError";
  error.code = code;
  return error;
}

// Turn whatever a glue call threw into an Error with a `code`. A trap that did
// not pass through the panic hook (a stack overflow, memory exhaustion)
// leaves the instance dead: replace it before anything else calls in.
//
// After a panic the hook has only *scheduled* the replacement, and the glue
// checks a handle's instance before it performs a scheduled replacement, so
// an old handle would reach the new memory. Replace the instance here, at
// once, so every old handle is known stale from then on.
function normalise(error) {
  if (error instanceof Error && error.code === "internal-panic") {
    glue.__wbg_reset_state();
    return error;
  }
  if (error instanceof Error && typeof error.code === "string") return error;
  if (error instanceof WebAssembly.RuntimeError || error instanceof RangeError) {
    glue.__wbg_reset_state();
    return coded("internal-error", `planvault internal error (please report it): ${error.message}`, error);
  }
  if (error instanceof Error && error.message === STALE_MESSAGE) {
    return coded(
      "stale-handle",
      "this object belongs to a wasm instance that was replaced after an internal error; parse the plan again",
      error,
    );
  }
  if (error instanceof Error && error.message.startsWith("expected instance of")) {
    return coded("invalid-argument", error.message, error);
  }
  return error;
}

function guarded(call) {
  try {
    return call();
  } catch (error) {
    throw normalise(error);
  }
}

function expectString(name, value) {
  if (typeof value !== "string") {
    throw coded("invalid-argument", `invalid argument \`${name}\`: expected a string, got ${describe(value)}`);
  }
}

function describe(value) {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

export const Plan = glue.Plan;

const encoder = new TextEncoder();

// Write `text` as UTF-8 into wasm memory at [at, end): the bytes written, or
// -1 when it does not fit (nothing usable written). The Node entry swaps in
// Buffer#write, several times faster there than TextEncoder#encodeInto.
let writeUtf8 = (text, memory, at, end) => {
  const { read, written } = encoder.encodeInto(text, new Uint8Array(memory.buffer, at, end - at));
  return read === text.length ? written : -1;
};

// Not part of the typed API: node.js installs its writer here.
export function __useUtf8Writer(writer) {
  writeUtf8 = writer;
}

// `files` (path → note text) written back to back as UTF-8 straight into a
// room in wasm memory, with the byte length of each path and text in turn:
// one copy and one call instead of a call across the boundary per note.
// Checks the argument the way the API promises. Returns [bytes used, lengths].
function stageFiles(files) {
  if (files === null || typeof files !== "object" || Array.isArray(files)) {
    throw coded("invalid-argument", `invalid argument \`files\`: expected an object of path → note text, got ${describe(files)}`);
  }
  const paths = Object.keys(files);
  const lengths = new Uint32Array(paths.length * 2);
  let units = 0;
  for (const path of paths) {
    const text = files[path];
    if (typeof text !== "string") {
      throw coded("invalid-argument", `invalid argument \`files\`: the note ${JSON.stringify(path)} is ${describe(text)}, not a string`);
    }
    units += path.length + text.length;
  }
  // One byte per UTF-16 unit fits ASCII, plus some slack; grow when a note
  // needs more. Ask for the room first: that call is the one that replaces
  // an instance lost to an earlier panic, and the memory is that instance's.
  let capacity = units + (units >>> 4) + 64;
  let base = guarded(() => glue.stageNotes(capacity));
  const memory = glue.wasmMemory();
  let at = 0;
  const put = (text, slot) => {
    let written = writeUtf8(text, memory, base + at, base + capacity);
    while (written < 0) {
      capacity = Math.max(capacity * 2, at + text.length * 3 + 64);
      base = guarded(() => glue.stageNotes(capacity));
      written = writeUtf8(text, memory, base + at, base + capacity);
    }
    lengths[slot] = written;
    at += written;
  };
  for (let i = 0; i < paths.length; i++) {
    put(paths[i], 2 * i);
    put(files[paths[i]], 2 * i + 1);
  }
  return [at, lengths];
}

export function parseVault(files) {
  const [used, lengths] = stageFiles(files);
  return guarded(() => glue.parseVaultStaged(used, lengths));
}

export function parsePlanMd(text, file) {
  expectString("text", text);
  if (file !== undefined) expectString("file", file);
  return guarded(() => glue.parsePlanMd(text, file));
}

export function parseGeneratedPlan(json, options) {
  expectString("json", json);
  return guarded(() => glue.parseGeneratedPlan(json, options));
}

export function validate(plan) {
  return guarded(() => glue.validate(plan));
}

export function toMermaid(plan) {
  return guarded(() => glue.toMermaid(plan));
}

export function toJsonCanvas(plan) {
  return guarded(() => glue.toJsonCanvas(plan));
}

export function toGraphJson(plan) {
  return guarded(() => glue.toGraphJson(plan));
}

export function updateStatus(text, status) {
  expectString("text", text);
  expectString("status", status);
  return guarded(() => glue.updateStatus(text, status));
}

// An editor's handle on a vault: update one note, re-validate. Keeps its own
// map of the notes (the strings are shared with the caller, not copied) so it
// can rebuild its wasm side if an internal error replaced the instance; the
// call that hit the error is not applied.
export class Vault {
  #files;
  #core;

  constructor(files) {
    const [used, lengths] = stageFiles(files);
    this.#core = guarded(() => glue.VaultCore.fromStaged(used, lengths));
    this.#files = new Map(Object.entries(files));
  }

  update(path, text) {
    expectString("path", path);
    expectString("text", text);
    this.#call((core) => core.update(path, text));
    this.#files.set(path, text);
  }

  remove(path) {
    expectString("path", path);
    const removed = this.#call((core) => core.remove(path));
    this.#files.delete(path);
    return removed;
  }

  diagnostics() {
    return this.validate().diagnostics;
  }

  validate() {
    return this.#call((core) => core.validate());
  }

  free() {
    this.#core.free();
  }

  [Symbol.dispose]() {
    this.free();
  }

  #call(operation) {
    try {
      return guarded(() => operation(this.#core));
    } catch (error) {
      if (error.code !== "stale-handle") throw error;
      const [used, lengths] = stageFiles(Object.fromEntries(this.#files));
      this.#core = guarded(() => glue.VaultCore.fromStaged(used, lengths));
      return guarded(() => operation(this.#core));
    }
  }
}

// Panics on purpose so the package's tests can prove recovery on the built
// artifact. Not part of the typed API.
export function __selfTestPanic() {
  return guarded(() => glue.__selfTestPanic());
}
