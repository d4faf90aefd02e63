// Types of the full build's entries ("planvault" and "planvault/inline").
// The interfaces are generated from the Rust types (tsify); vault.d.ts adds
// what api.js defines (`parseVault`, the `Vault` class).

export type {
  Diagnostic,
  DiagnosticCode,
  GeneratedPlanOptions,
  NodeStatus,
  PlanFormat,
  PlanvaultError,
  Severity,
  ValidateReport,
  VaultFiles,
} from "./planvault_wasm.js";
export {
  Plan,
  parseGeneratedPlan,
  parsePlanMd,
  toGraphJson,
  toJsonCanvas,
  toMermaid,
  updateStatus,
  validate,
} from "./planvault_wasm.js";
export { parseVault, Vault } from "./vault.js";
