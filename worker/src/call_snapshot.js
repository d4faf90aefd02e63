// What a writing tool's call may not change, kept while the call is made
// in this origin's IndexedDB: outside the vault, where a tool that writes in
// the folder cannot forge it, with the vault's handle to know the vault
// again (`isSameEntry`) when the next run starts after a tab closed
// mid-call. One entry per vault: a vault runs one run at a time here.

function database() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open('planvault-tool-calls', 1);
    request.onupgradeneeded = () => request.result.createObjectStore('calls');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function entries(db, mode, name, change) {
  return new Promise((resolve, reject) => {
    const tx = db.transaction('calls', mode);
    const calls = tx.objectStore('calls');
    const request = calls.get(name);
    let result;
    request.onsuccess = () => {
      result = request.result ?? [];
      const changed = change?.(result);
      try {
        if (changed) calls.put(changed, name);
      } catch (error) {
        // A handle this browser cannot store: no snapshot, never a run
        // that waits for good.
        reject(error);
        tx.abort();
      }
    };
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    // A quota hit as the write is saved aborts with no error event.
    tx.onabort = () => reject(tx.error ?? new DOMException('aborted', 'AbortError'));
  });
}

// The entries under the vault's name that are this vault.
async function mine(list, root) {
  const same = await Promise.all(list.map((entry) => entry.root.isSameEntry(root)));
  return list.filter((_, i) => same[i]);
}

/** Keeps `snapshot` (JSON text) for the vault `root`; `null` drops it. */
export async function keepCallSnapshot(root, snapshot) {
  const db = await database();
  try {
    const list = await entries(db, 'readonly', root.name);
    const ours = await mine(list, root);
    const others = list.filter((entry) => !ours.includes(entry));
    const kept = snapshot == null ? others : [...others, { root, snapshot }];
    await entries(db, 'readwrite', root.name, () => kept);
  } finally {
    db.close();
  }
}

/** The snapshot kept for the vault `root`, or `null`. */
export async function callSnapshot(root) {
  const db = await database();
  try {
    const ours = await mine(await entries(db, 'readonly', root.name), root);
    return ours.length ? ours[ours.length - 1].snapshot : null;
  } finally {
    db.close();
  }
}
