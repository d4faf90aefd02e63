// Types of the markdown build's entries ("planvault/markdown" and
// "planvault/markdown/inline"): what its public.js exports, vaults and
// PLAN.md; no JSON plans, no exporters.
export * from "./api.js";
