// Node 18+: read the wasm next to this file and instantiate it synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./planvault_wasm.js";
import { __useUtf8Writer } from "./api.js";

initSync({ module: readFileSync(new URL("./planvault_wasm_bg.wasm", import.meta.url)) });

// Buffer#write encodes UTF-8 several times faster than TextEncoder#encodeInto
// in Node. It never writes half a character and does not say whether the
// whole text fit, so the text must surely fit (3 bytes per UTF-16 unit at
// most) or be measured first.
let view = null;
__useUtf8Writer((text, memory, at, end) => {
  const room = end - at;
  if (room < text.length * 3 && Buffer.byteLength(text, "utf8") > room) return -1;
  if (view === null || view.buffer !== memory.buffer) view = Buffer.from(memory.buffer);
  return view.write(text, at, room, "utf8");
});

export * from "./api.js";
