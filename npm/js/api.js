// The package's public API over the wasm-bindgen glue: argument checks,
// errors that always carry a `code`, and recovery after a wasm trap.
// Every entry (node.js, browser.js, inline.js) initialises the wasm, then
// re-exports what public.js names: from here, what both builds have; from
// full.js, what only the full build's wasm has.
import * as glue from "./planvault_wasm.js";

const STALE_MESSAGE = "Invalid stale object from previous Wasm instance";
// What the glue throws for a handle whose free() was called.
const FREED_MESSAGE = "null pointer passed to rust";

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
  if (error instanceof Error && error.message === FREED_MESSAGE) {
    return coded("invalid-argument", "this object was freed (its free() was called): make it again", error);
  }
  return error;
}

export function guarded(call) {
  try {
    return call();
  } catch (error) {
    throw normalise(error);
  }
}

export function expectString(name, value) {
  if (typeof value !== "string") {
    throw coded("invalid-argument", `invalid argument \`${name}\`: expected a string, got ${describe(value)}`);
  }
}

function describe(value) {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

export const Plan = glue.Plan;

const encoder = new TextEncoder();

// A writer of UTF-8 into the wasm memory as it is now (its buffer is
// replaced when the memory grows, so a writer is made again after every call
// that may grow it): `(text, at, end)` writes `text` at [at, end) and returns
// the bytes written, or -1 when it does not fit (nothing usable written). The
// Node entry swaps in one over Buffer, several times faster there than
// TextEncoder#encodeInto.
let utf8Writer = (memory) => {
  const bytes = new Uint8Array(memory.buffer);
  return (text, at, end) => {
    const { read, written } = encoder.encodeInto(text, bytes.subarray(at, end));
    return read === text.length ? written : -1;
  };
};

// Not part of the typed API: node.js installs its writer here.
export function __useUtf8Writer(makeWriter) {
  utf8Writer = makeWriter;
}

// The notes of `files` (an object or a Map of path → note text) as they are
// now, read once: what is parsed, what is skipped and what columns count
// from are this one reading, whatever the caller changes later (or a getter
// changes meanwhile). Checks the argument the way the API promises.
function readFiles(files) {
  const isMap = files instanceof Map;
  if (files === null || typeof files !== "object" || Array.isArray(files)) {
    throw coded("invalid-argument", `invalid argument \`files\`: expected an object (or a Map) of path → note text, got ${describe(files)}`);
  }
  const notes = new Map();
  for (const [path, text] of isMap ? files : Object.entries(files)) {
    if (typeof path !== "string") {
      throw coded("invalid-argument", `invalid argument \`files\`: a path is ${describe(path)}, not a string`);
    }
    if (typeof text !== "string") {
      throw coded("invalid-argument", `invalid argument \`files\`: the note ${JSON.stringify(path)} is ${describe(text)}, not a string`);
    }
    notes.set(path, text);
  }
  return notes;
}

// `notes` (from readFiles) written back to back as UTF-8 straight into a
// room in wasm memory, with the byte length of each path and text in turn:
// one copy and one call instead of a call across the boundary per note.
// Returns [bytes used, lengths].
function stageFiles(notes) {
  const paths = [...notes.keys()];
  const texts = [...notes.values()];
  const count = paths.length;
  const lengths = new Uint32Array(count * 2);
  let units = 0;
  for (let i = 0; i < count; i++) units += paths[i].length + texts[i].length;
  // One byte per UTF-16 unit fits ASCII, plus some slack; grow when a note
  // needs more. Ask for the room first: that call is the one that replaces
  // an instance lost to an earlier panic, and the memory is that instance's.
  let capacity = units + (units >>> 4) + 64;
  let base = guarded(() => glue.stageNotes(capacity));
  let write = utf8Writer(glue.wasmMemory());
  let at = base;
  let end = base + capacity;
  for (let slot = 0; slot < 2 * count; slot++) {
    const text = (slot & 1) === 0 ? paths[slot >>> 1] : texts[slot >>> 1];
    let written = write(text, at, end);
    while (written < 0) {
      const used = at - base;
      capacity = Math.max(capacity * 2, used + text.length * 3 + 64);
      base = guarded(() => glue.stageNotes(capacity));
      write = utf8Writer(glue.wasmMemory());
      at = base + used;
      end = base + capacity;
      written = write(text, at, end);
    }
    lengths[slot] = written;
    at += written;
  }
  return [at - base, lengths];
}

// The wasm counts columns in characters; editors (CodeMirror, Obsidian) in
// UTF-16 units. Each plan remembers how to find the text of its files, and
// `validate` fills `column_utf16` and `end_column_utf16` from it, as
// `fill_utf16_columns` (core/src/diagnostic.rs) does for the CLI.
const sources = new WeakMap();

export function remember(plan, textOf) {
  sources.set(plan, textOf);
  return plan;
}

// A vault note's text as its positions count it: without a BOM.
const noteText = (text) => (typeof text === "string" && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

// Fills the fields the wasm leaves null, in place (so they stay right after
// `column`, where the CLI prints them).
function withUtf16Columns(report, textOf) {
  const texts = new Map();
  for (const d of report.diagnostics) {
    if (d.line === null || d.column === null) continue;
    let entry = texts.get(d.file);
    if (entry === undefined) {
      const text = textOf(d.file);
      entry = null;
      if (typeof text === "string") {
        const starts = [0];
        for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
        entry = { text, starts };
      }
      texts.set(d.file, entry);
    }
    if (entry === null || d.line > entry.starts.length) continue;
    const { text, starts } = entry;
    const start = starts[d.line - 1];
    let stop = d.line < starts.length ? starts[d.line] - 1 : text.length;
    if (stop > start && text.charCodeAt(stop - 1) === 13) stop--;
    let at = start;
    // Past the line's end, one unit per column.
    for (let c = 1; c < d.column; c++) at += at < stop && text.codePointAt(at) > 0xffff ? 2 : 1;
    d.column_utf16 = at - start + 1;
    const close = at < stop && text.startsWith("[[", at) ? text.indexOf("]]", at) : -1;
    if (close >= 0 && close + 2 <= stop) d.end_column_utf16 = close + 3 - start;
  }
  return report;
}

// The files that say what is skipped, as planvault_core::vault::scope names
// them (`TEMPLATES_SETTINGS`, `TEMPLATER_SETTINGS`, `IGNORE_FILE`).
const SETTINGS = [".obsidian/templates.json", ".obsidian/plugins/templater-obsidian/data.json", ".planvaultignore"];

// What the vault's settings skip, as planvault_core::vault::scope::skipped
// reads them (the same files and keys; the JSON is read here, where
// JSON.parse costs the wasm nothing): [the templates folder of Obsidian's
// Templates, of Templater, the text of .planvaultignore], each or undefined.
function skipSettings(notes) {
  const text = (path) => notes.get(path);
  const folder = (path, key) => {
    try {
      const value = JSON.parse(text(path))[key];
      return typeof value === "string" ? value : undefined;
    } catch {
      return undefined;
    }
  };
  return [folder(SETTINGS[0], "folder"), folder(SETTINGS[1], "templates_folder"), text(SETTINGS[2])];
}

export function parseVault(files) {
  const notes = readFiles(files);
  const [used, lengths] = stageFiles(notes);
  const settings = skipSettings(notes);
  const plan = guarded(() => glue.parseVaultStaged(used, lengths, ...settings));
  return remember(plan, (file) => noteText(notes.get(file)));
}

export function parsePlanMd(text, file) {
  expectString("text", text);
  if (file === null) file = undefined;
  if (file !== undefined) expectString("file", file);
  const plan = guarded(() => glue.parsePlanMd(text, file));
  return remember(plan, (name) => (name === (file ?? "PLAN.md") ? text : undefined));
}

export function validate(plan) {
  const report = guarded(() => glue.validate(plan));
  return withUtf16Columns(report, sources.get(plan) ?? (() => undefined));
}

// Half of a character: it has no UTF-8 form, and would come back as U+FFFD.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function updateStatus(text, status) {
  expectString("text", text);
  expectString("status", status);
  if (LONE_SURROGATE.test(text)) {
    throw coded(
      "invalid-argument",
      "invalid argument `text`: it holds a lone UTF-16 surrogate (half of a character), which no file can hold; the note would come back with another character in its place, so it is not changed",
    );
  }
  return guarded(() => glue.updateStatus(text, status));
}

// An editor's handle on a vault: update one note, re-validate. Keeps its own
// map of the notes (the strings are shared with the caller, not copied) so it
// can rebuild its wasm side if an internal error replaced the instance; the
// call that hit the error is not applied.
//
// `options.folder` (vault-relative) makes the plan that folder's notes, their
// links resolved against every note given, as `planvault validate
// VAULT/FOLDER` does. An edit to a file that says what is skipped
// (`.obsidian/templates.json`, Templater's settings, `.planvaultignore`)
// leaves the wasm side stale: it is built again here.
export class Vault {
  #files;
  #folder;
  #core;

  constructor(files, options) {
    this.#folder = planFolder(options);
    this.#files = readFiles(files);
    this.#core = this.#open(this.#files);
  }

  update(path, text) {
    expectString("path", path);
    expectString("text", text);
    this.#call((core) => core.update(path, text));
    this.#files.set(path, text);
    this.#rebuildIfStale(path);
  }

  remove(path) {
    expectString("path", path);
    const removed = this.#call((core) => core.remove(path));
    this.#files.delete(path);
    this.#rebuildIfStale(path);
    return removed;
  }

  diagnostics() {
    return this.validate().diagnostics;
  }

  validate() {
    const files = this.#files;
    return withUtf16Columns(this.#call((core) => core.validate()), (file) => noteText(files.get(file)));
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
      this.#rebuild();
      return guarded(() => operation(this.#core));
    }
  }

  // After an edit to `path`: a settings file changes what is skipped, and a
  // note outside the plan added or removed leaves the wasm side stale.
  #rebuildIfStale(path) {
    if (SETTINGS.includes(path) || guarded(() => this.#core.stale)) {
      this.#core.free();
      this.#rebuild();
    }
  }

  #rebuild() {
    this.#core = this.#open(this.#files);
  }

  #open(notes) {
    const [used, lengths] = stageFiles(notes);
    const settings = skipSettings(notes);
    return guarded(() => glue.VaultCore.fromStaged(used, lengths, this.#folder, ...settings));
  }
}

// The `Vault` options' plan folder, without leading or trailing `/` (""
// when none is given: the whole vault is the plan).
function planFolder(options) {
  if (options === undefined || options === null) return "";
  if (typeof options !== "object" || Array.isArray(options)) {
    throw coded("invalid-argument", `invalid argument \`options\`: expected an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== "folder") {
      throw coded("invalid-argument", `invalid argument \`options\`: unknown option ${JSON.stringify(key)} (known: "folder")`);
    }
  }
  if (options.folder === undefined) return "";
  expectString("options.folder", options.folder);
  return options.folder.replace(/^\/+|\/+$/g, "");
}

// Panics on purpose so the package's tests can prove recovery on the built
// artifact. Not part of the typed API.
export function __selfTestPanic() {
  return guarded(() => glue.__selfTestPanic());
}
