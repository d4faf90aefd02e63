// Browsers and bundlers: fetch the wasm next to this file (bundlers see the
// `new URL(..., import.meta.url)` and ship the asset), with top-level await.
// Where top-level await is not available, import "planvault/inline".
import init from "./planvault_wasm.js";

await init({ module_or_path: new URL("./planvault_wasm_bg.wasm", import.meta.url) });

export * from "./public.js";
