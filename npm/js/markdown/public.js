// What the entries of the markdown build (`planvault/markdown`,
// `planvault/markdown/inline`) export: the validator for vaults and PLAN.md.
// Its wasm has no JSON plan parser and no exporters, so neither are offered.
export { Plan, Vault, parsePlanMd, parseVault, updateStatus, validate, __selfTestPanic } from "./api.js";
