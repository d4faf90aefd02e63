// What only the full build's wasm has (the `json-plans` and `exports`
// features of planvault-wasm): model-generated JSON plans and the exporters.
// The markdown build's entries leave this module out, so no bundler sees an
// import of a binding its wasm does not have.
import * as glue from "./planvault_wasm.js";
import { expectString, guarded, remember } from "./api.js";

export function parseGeneratedPlan(json, options) {
  expectString("json", json);
  const plan = guarded(() => glue.parseGeneratedPlan(json, options));
  return remember(plan, (file) => (file === (options?.file ?? "plan.json") ? json : undefined));
}

export function toMermaid(plan) {
  return guarded(() => glue.toMermaid(plan));
}

export function toJsonCanvas(plan) {
  return guarded(() => glue.toJsonCanvas(plan));
}

export function toGraphJson(plan) {
  return guarded(() => glue.toGraphJson(plan));
}
