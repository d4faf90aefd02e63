// Obsidian plugins and other single-file bundles: the wasm travels inside
// this module as base64 and is instantiated synchronously at import.
import { initSync } from "./planvault_wasm.js";

const WASM_BASE64 = "__WASM_BASE64__";

function decode(base64) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(base64);
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

initSync({ module: decode(WASM_BASE64) });

export * from "./public.js";
