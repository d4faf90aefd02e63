// Types of api.js, the part of the API both builds have: the glue's
// declarations (generated from the Rust types by tsify) for what api.js
// passes through, and what api.js itself defines (`parseVault`, `Vault`).
import type { Plan, ValidateReport, Diagnostic, VaultFiles } from "./planvault_wasm.js";

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
export { Plan, parsePlanMd, updateStatus, validate } from "./planvault_wasm.js";

/**
 * Parse a vault: vault-relative path (with `.md`, `/`-separated) → note text.
 * Pass every file; what is not a plan note (`.obsidian/`, `00_plan-trace/`,
 * non-markdown) is skipped, and so is what the vault's settings skip, as the
 * CLI skips it (the templates folder of `.obsidian/templates.json` or
 * Templater's settings, what `.planvaultignore` lists). The notes are read once, here: later
 * changes to `files` change nothing of the plan. Throws `invalid-argument` when `files` is not an
 * object (or a Map) of strings.
 */
export declare function parseVault(files: VaultFiles): Plan;

/** Options of `new Vault(files, options)`. */
export interface VaultOptions {
  /**
   * The plan's folder, vault-relative (`"plans/launch"`): only its notes
   * are the plan's nodes, while their links resolve against every note in
   * `files`, and an edge to a note outside it is `edge-leaves-plan`; the
   * diagnostics of `planvault validate VAULT/plans/launch`. Default: the
   * whole vault is the plan.
   */
  folder?: string;
}

/**
 * A vault an editor keeps open: `update` one note, then `diagnostics()`
 * re-reads only that note and re-runs the graph checks. As the CLI does,
 * it leaves out the templates folder named in `.obsidian/templates.json` or
 * Templater's `.obsidian/plugins/templater-obsidian/data.json`, and what
 * `.planvaultignore` lists, when `files` holds those files.
 */
export declare class Vault {
  /** Throws `invalid-argument` when `files` is not an object (or a Map) of strings or `options` has an unknown key. */
  constructor(files: VaultFiles, options?: VaultOptions);
  /**
   * Add or replace one note (vault-relative path with `.md`). Only that note
   * is parsed again; a path the loader skips (`.obsidian/`, `00_plan-trace/`,
   * not markdown) changes nothing. A change to the templates settings or
   * `.planvaultignore` reads the vault again.
   */
  update(path: string, text: string): void;
  /** Forget one note; `false` (and no change) for a path the vault does not have. */
  remove(path: string): boolean;
  /** The diagnostics `planvault validate --json` would print now. */
  diagnostics(): Diagnostic[];
  /** `{ diagnostics }`, exactly the object `planvault validate --json` prints. */
  validate(): ValidateReport;
  free(): void;
  [Symbol.dispose](): void;
}
