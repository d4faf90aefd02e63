// The decisions this browser's runs journaled, or a person here took as
// given, each by the journal's chain hash after its line: in this origin's
// IndexedDB, outside every vault, so a journal that came in a vault from
// elsewhere cannot add one. A resume past a decision not kept here waits
// for the person.

function database() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open('planvault-decisions', 1);
    request.onupgradeneeded = () => request.result.createObjectStore('taken');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new DOMException('aborted', 'AbortError'));
  });
}

/** Which of `text`'s heads (hex, one per line) are kept: `1` or `0` each, in order. */
export async function decisionsTaken(text) {
  const heads = text.split('\n');
  const db = await database();
  try {
    const tx = db.transaction('taken', 'readonly');
    const taken = tx.objectStore('taken');
    const found = heads.map(
      (head) =>
        new Promise((resolve) => {
          const request = taken.count(head);
          request.onsuccess = () => resolve(request.result > 0);
          request.onerror = () => resolve(false);
        }),
    );
    await done(tx);
    return (await Promise.all(found)).map((kept) => (kept ? '1' : '0')).join('');
  } finally {
    db.close();
  }
}

/** Keeps `text`'s heads (hex, one per line). */
export async function keepDecisions(text) {
  const heads = text.split('\n');
  const db = await database();
  try {
    const tx = db.transaction('taken', 'readwrite');
    const taken = tx.objectStore('taken');
    for (const head of heads) taken.put(true, head);
    await done(tx);
  } finally {
    db.close();
  }
}
