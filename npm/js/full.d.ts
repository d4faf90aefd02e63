// Types of full.js: what only the full build's wasm has.
export type { GeneratedPlanOptions } from "./planvault_wasm.js";
export { parseGeneratedPlan, toGraphJson, toJsonCanvas, toMermaid } from "./planvault_wasm.js";
