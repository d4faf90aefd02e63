// What the entries of the full build (`planvault`, `planvault/inline`)
// export: the whole API.
export { Plan, Vault, parsePlanMd, parseVault, updateStatus, validate, __selfTestPanic } from "./api.js";
export { parseGeneratedPlan, toGraphJson, toJsonCanvas, toMermaid } from "./full.js";
