// Types of the markdown build's entries ("planvault/markdown" and
// "planvault/markdown/inline"): vaults and PLAN.md, no JSON plans, no exporters.
// The interfaces are generated from the Rust types (tsify); vault.d.ts adds
// what api.js defines (`parseVault`, the `Vault` class).

export type {
  Diagnostic,
  DiagnosticCode,
  NodeStatus,
  PlanFormat,
  PlanvaultError,
  Severity,
  ValidateReport,
  VaultFiles,
} from "./planvault_wasm.js";
export {
  Plan,
  parsePlanMd,
  updateStatus,
  validate,
} from "./planvault_wasm.js";
export { parseVault, Vault } from "./vault.js";
