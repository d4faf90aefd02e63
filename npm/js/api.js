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

// `files` (path → note text) as one UTF-8 buffer and the byte length of
// each path and text in turn: one copy into the wasm instead of a call across
// the boundary per note. Checks the argument the way the API promises.
function packFiles(files) {
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
  // One byte per UTF-16 unit fits ASCII; grow when a note needs more.
  let bytes = new Uint8Array(units + 64);
  let at = 0;
  const put = (text, slot) => {
    let start = at;
    for (;;) {
      const { read, written } = encoder.encodeInto(text, bytes.subarray(at));
      at += written;
      if (read === text.length) break;
      text = text.slice(read);
      const grown = new Uint8Array(Math.max(bytes.length * 2, at + text.length * 3));
      grown.set(bytes.subarray(0, at));
      bytes = grown;
    }
    lengths[slot] = at - start;
  };
  for (let i = 0; i < paths.length; i++) {
    put(paths[i], 2 * i);
    put(files[paths[i]], 2 * i + 1);
  }
  return [bytes.subarray(0, at), lengths];
}

export function parseVault(files) {
  const [bytes, lengths] = packFiles(files);
  return guarded(() => glue.parseVaultPacked(bytes, lengths));
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
    const [bytes, lengths] = packFiles(files);
    this.#core = guarded(() => new glue.VaultCore(bytes, lengths));
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
      const [bytes, lengths] = packFiles(Object.fromEntries(this.#files));
      this.#core = guarded(() => new glue.VaultCore(bytes, lengths));
      return guarded(() => operation(this.#core));
    }
  }
}

// Panics on purpose so the package's tests can prove recovery on the built
// artifact. Not part of the typed API.
export function __selfTestPanic() {
  return guarded(() => glue.__selfTestPanic());
}
