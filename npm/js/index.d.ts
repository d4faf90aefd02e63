// Types of the full build's entries ("planvault" and "planvault/inline"):
// what public.js exports.
export * from "./api.js";
export * from "./full.js";
