// Node 18+: read the wasm next to this file and instantiate it synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./planvault_wasm.js";
import { __useUtf8Writer } from "./api.js";

initSync({ module: readFileSync(new URL("./planvault_wasm_bg.wasm", import.meta.url)) });

// Buffer encodes UTF-8 several times faster than TextEncoder#encodeInto in
// Node (`utf8Write`, where Node has it, is `write("utf8")` without the
// argument juggling). It never writes half a character and does not say
// whether the whole text fit, so the text must surely fit (3 bytes per UTF-16
// unit at most) or be measured first.
__useUtf8Writer((memory) => {
  const view = Buffer.from(memory.buffer);
  const write = typeof view.utf8Write === "function"
    ? (text, at, room) => view.utf8Write(text, at, room)
    : (text, at, room) => view.write(text, at, room, "utf8");
  return (text, at, end) => {
    const room = end - at;
    if (room < text.length * 3 && Buffer.byteLength(text, "utf8") > room) return -1;
    return write(text, at, room);
  };
});

export * from "./public.js";
