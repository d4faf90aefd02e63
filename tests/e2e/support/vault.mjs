// The vault folders the tests keep in the page's origin-private file system.

/** Every file of the OPFS folder `folder`, dot-folders included: path → text (a BOM kept). */
export async function readOpfsFolder(page, folder) {
  return page.evaluate(async (folder) => {
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const out = {};
    const stack = [[await (await navigator.storage.getDirectory()).getDirectoryHandle(folder), '']];
    while (stack.length) {
      const [dir, prefix] = stack.pop();
      for await (const [name, handle] of dir.entries()) {
        if (handle.kind === 'directory') stack.push([handle, `${prefix}${name}/`]);
        else out[prefix + name] = decoder.decode(await (await handle.getFile()).arrayBuffer());
      }
    }
    return out;
  }, folder);
}
