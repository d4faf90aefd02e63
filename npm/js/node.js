// Node 18+: read the wasm next to this file and instantiate it synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "./planvault_wasm.js";

initSync({ module: readFileSync(new URL("./planvault_wasm_bg.wasm", import.meta.url)) });

export * from "./api.js";
