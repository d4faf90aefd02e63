// File System Access glue for planvault's web app: walking a vault folder,
// reading and writing notes byte-exactly, the origin-private file system,
// the directory picker, and keeping the picked handle in IndexedDB.
// Kept in JS because async directory iteration and IndexedDB requests are a
// few lines here and a page of bindings in Rust; every decision stays in Rust.

// Blob.text() drops a leading byte-order mark; notes must keep theirs.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const strict = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });

/**
 * A note's bytes as text, and where the first byte that is not UTF-8 is
 * (-1: none). Such bytes show as U+FFFD, so the text is not the note's: the
 * app says so (`unreadable-note`) and never writes it back (`readFile`).
 */
function decodeNote(buffer) {
  try {
    return { text: strict.decode(buffer), bad: -1 };
  } catch (_) {
    return { text: decoder.decode(buffer), bad: validUpTo(new Uint8Array(buffer)) };
  }
}

/** How many bytes of `b` are UTF-8 before the first that is not. */
function validUpTo(b) {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) { i += 1; continue; }
    let more, lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) { more = 2; if (c === 0xe0) lo = 0xa0; if (c === 0xed) hi = 0x9f; }
    else if (c >= 0xf0 && c <= 0xf4) { more = 3; if (c === 0xf0) lo = 0x90; if (c === 0xf4) hi = 0x8f; }
    else return i;
    for (let k = 1; k <= more; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += more + 1;
  }
  return i;
}

// Per directory handle: path -> { modified, size, text }, so polling for
// outside changes only reads the files whose stamp changed.
const caches = new WeakMap();

function wanted(path, name) {
  return name.toLowerCase().endsWith('.md') || name === 'plan.canvas';
}

// The settings that say which folders hold no plan notes (planvault_core's
// vault::scope), how Obsidian writes new links (`app.json`'s
// useMarkdownLinks, newLinkFormat: vault::links::vault_link_style), and the vault's MCP
// servers (which tools a browser run offers: later_checks.rs): the only files
// read from dot-folders.
const SETTINGS = [
  '.obsidian/app.json',
  '.obsidian/templates.json',
  '.obsidian/plugins/templater-obsidian/data.json',
  '.planvaultignore',
  '.planvault/config.toml',
];

/** Whether `path` (in a dot-folder, or a dot-file) is a setting to read. */
function setting(path) {
  return SETTINGS.some((s) => s === path || s.startsWith(path + '/'));
}

/**
 * A file's text as `readVault` holds it: none, unread, for a file of more
 * than `limit` bytes (a sparse file of many GB would take the memory).
 */
async function readNote(file, limit) {
  if (file.size > limit) return { text: '', bad: -1, tooLarge: true };
  return decodeNote(await file.arrayBuffer());
}

/** The error `readFile` throws for a file of more than `limit` bytes. */
function tooLargeError(path, size) {
  return Object.assign(new Error(`${path} is too large to read`), { name: 'TooLargeError', size });
}

/**
 * Every note (and each plan.canvas, and the SETTINGS) under `dir`:
 * { files: { path: text }, notUtf8: { path: where its first bad byte is },
 * tooLarge: { path: its size, past `limit` bytes: its text is empty } }.
 * `progress(read, total)`, when given, hears how far the reading is (the
 * folders are walked first, so the total is known), a few times a second.
 */
export async function readVault(dir, progress, limit) {
  let cache = caches.get(dir);
  if (!cache) { cache = new Map(); caches.set(dir, cache); }
  const found = [];
  const stack = [[dir, '']];
  while (stack.length) {
    const [folder, prefix] = stack.pop();
    for await (const [name, handle] of folder.entries()) {
      const path = prefix + name;
      // .obsidian, .git, .trash: only the settings are read.
      const hidden = path.split('/').some((part) => part.startsWith('.'));
      if (hidden && !setting(path)) continue;
      if (handle.kind === 'directory') {
        // A run's trace, at the root or in a plan folder, is no note.
        if (name !== '00_plan-trace') stack.push([handle, path + '/']);
        continue;
      }
      if (!hidden && !wanted(path, name)) continue;
      found.push([path, handle]);
    }
  }
  const out = {};
  const notUtf8 = {};
  const tooLarge = {};
  const seen = new Set();
  let told = 0;
  for (let i = 0; i < found.length; i++) {
    const [path, handle] = found[i];
    if (progress && performance.now() - told > 100) {
      told = performance.now();
      progress(i, found.length);
    }
    const file = await handle.getFile();
    seen.add(path);
    const known = cache.get(path);
    let read = known;
    if (!known || known.modified !== file.lastModified || known.size !== file.size) {
      read = { modified: file.lastModified, size: file.size, ...(await readNote(file, limit)) };
      cache.set(path, read);
    }
    out[path] = read.text;
    if (read.bad >= 0) notUtf8[path] = read.bad;
    if (read.tooLarge) tooLarge[path] = read.size;
  }
  if (progress) progress(found.length, found.length);
  for (const path of [...cache.keys()]) if (!seen.has(path)) cache.delete(path);
  return { files: out, notUtf8, tooLarge };
}

async function parentOf(dir, path, create) {
  const parts = path.split('/');
  const name = parts.pop();
  let folder = dir;
  for (const part of parts) folder = await folder.getDirectoryHandle(part, { create });
  return [folder, name];
}

/**
 * The file's text, or null when it does not exist. `exact`: only text that
 * is the file's bytes, else an error (what a write is checked against: a
 * note that is not UTF-8 would lose its bytes). A file of more than `limit`
 * bytes is not read: a `TooLargeError` says its `size`.
 */
export async function readFile(dir, path, exact, limit) {
  let file;
  try {
    const [folder, name] = await parentOf(dir, path, false);
    const handle = await folder.getFileHandle(name);
    file = await handle.getFile();
  } catch (error) {
    if (error && (error.name === 'NotFoundError' || error.name === 'TypeMismatchError')) return null;
    throw error;
  }
  if (file.size > limit) throw tooLargeError(path, file.size);
  const buffer = await file.arrayBuffer();
  const { text, bad } = decodeNote(buffer);
  if (exact && bad >= 0) {
    throw new Error(`${path} is not UTF-8 text: planvault does not write it, as its bytes that are not would be lost; save it as UTF-8`);
  }
  return text;
}

export async function writeFile(dir, path, text) {
  const [folder, name] = await parentOf(dir, path, true);
  const handle = await folder.getFileHandle(name, { create: true });
  const writable = await handle.createWritable();
  await writable.write(text);
  await writable.close();
}

export async function removeFile(dir, path) {
  try {
    const [folder, name] = await parentOf(dir, path, false);
    await folder.removeEntry(name);
  } catch (error) {
    if (!(error && error.name === 'NotFoundError')) throw error;
  }
}

/** A folder in the origin-private file system (created when missing). */
export async function opfsFolder(name) {
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(name, { create: true });
}

/** Removes a folder from the origin-private file system, if there. */
export async function opfsClear(name) {
  const root = await navigator.storage.getDirectory();
  try { await root.removeEntry(name, { recursive: true }); } catch (_) { /* absent */ }
}

/**
 * The folder a drag-and-drop brought, as a directory handle (Chromium's
 * DataTransferItem.getAsFileSystemHandle), or null when the drop holds no
 * folder or the browser cannot hand one over. Call it while the drop event
 * is dispatched: the items are gone afterwards, so the handles are asked
 * for at once and only awaited later.
 */
export function droppedDirectory(event) {
  const items = [...(event.dataTransfer?.items ?? [])].filter((item) => item.kind === 'file');
  const pending = items.map((item) => (typeof item.getAsFileSystemHandle === 'function' ? item.getAsFileSystemHandle() : null));
  return Promise.all(pending).then((handles) => handles.find((h) => h?.kind === 'directory') ?? null);
}

export function pickerAvailable() {
  return typeof window.showDirectoryPicker === 'function';
}

/** The picked folder, or null when the person closed the picker. */
export async function pickDirectory() {
  try {
    return await window.showDirectoryPicker({ id: 'planvault-vault', mode: 'readwrite' });
  } catch (error) {
    if (error?.name === 'AbortError') return null;
    throw error;
  }
}

export function handleName(dir) {
  return dir.name;
}

/** 'granted', 'prompt' or 'denied' for read-write access; asks when `ask`. */
export async function permission(dir, ask) {
  const options = { mode: 'readwrite' };
  if (typeof dir.queryPermission !== 'function') return 'granted'; // OPFS
  let state = await dir.queryPermission(options);
  if (state === 'prompt' && ask) state = await dir.requestPermission(options);
  return state;
}

function database() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open('planvault', 1);
    request.onupgradeneeded = () => request.result.createObjectStore('handles');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function store(mode, action) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const tx = db.transaction('handles', mode);
    const request = action(tx.objectStore('handles'));
    tx.oncomplete = () => { db.close(); resolve(request.result); };
    tx.onerror = () => { db.close(); reject(tx.error); };
  });
}

/** Keeps the picked folder's handle for the next visit. */
export function saveHandle(dir) {
  return store('readwrite', (s) => s.put(dir, 'vault'));
}

export async function loadHandle() {
  return (await store('readonly', (s) => s.get('vault'))) ?? null;
}

export function forgetHandle() {
  return store('readwrite', (s) => s.delete('vault'));
}

/**
 * Files from an <input webkitdirectory>, as `readVault` gives them, and the
 * bytes of each that is not UTF-8 or too large (`raw`: its bytes, or the
 * file itself), which its copy must keep.
 */
export async function readFileList(files, limit) {
  const out = {};
  const notUtf8 = {};
  const tooLarge = {};
  const raw = {};
  for (const file of files) {
    const full = file.webkitRelativePath || file.name;
    const path = full.includes('/') ? full.slice(full.indexOf('/') + 1) : full;
    const hidden = path.split('/').some((part) => part.startsWith('.'));
    if (hidden && !SETTINGS.includes(path)) continue;
    if (path.split('/').slice(0, -1).includes('00_plan-trace')) continue;
    if (!hidden && !wanted(path, file.name)) continue;
    if (file.size > limit) {
      // Unread; its copy is the file itself, written as a stream.
      out[path] = '';
      tooLarge[path] = file.size;
      raw[path] = file;
      continue;
    }
    const bytes = await file.arrayBuffer();
    const { text, bad } = decodeNote(bytes);
    out[path] = text;
    if (bad >= 0) {
      notUtf8[path] = bad;
      raw[path] = new Uint8Array(bytes);
    }
  }
  return { files: out, notUtf8, tooLarge, raw };
}

/** The name of the folder an <input webkitdirectory> picked. */
export function fileListFolder(files) {
  const first = files[0];
  const full = first ? (first.webkitRelativePath || '') : '';
  return full.includes('/') ? full.slice(0, full.indexOf('/')) : 'vault';
}

/** Offers bytes as a download. */
export function download(name, bytes, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
