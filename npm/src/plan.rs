//! One-shot API: the `Plan` handle, the vault and PLAN.md parsers,
//! `validate` and `updateStatus`, which both builds have. JSON plans are
//! parsed in [`crate::generated`] and drawn in [`crate::export`], which only
//! the full build has.
//!
//! A parsed plan stays in wasm memory behind a `Plan` handle, so validating
//! and exporting it costs no second trip across the boundary.

use crate::error::BindingError;
use crate::staging::with_staged_files;
use crate::types::report_to_js;
use planvault_core::proposal;
use planvault_core::vault::{self, scope, Detail};
use planvault_core::{Diagnostic, NodeExt, Plan, SourcePos, Status};
use wasm_bindgen::prelude::*;

/// A parsed plan and what parsing found. Free it with `free()` (or let the
/// garbage collector do it).
#[wasm_bindgen(js_name = Plan)]
pub struct PlanHandle {
    plan: Plan,
    parse_diagnostics: Vec<Diagnostic>,
    /// Proposal mode's rules, where the plan's text asks for it: after the
    /// graph's diagnostics, as `planvault validate` prints them.
    proposal: Vec<Diagnostic>,
    /// Every diagnostic, when the plan was checked whole at parse time.
    all: Option<Vec<Diagnostic>>,
}

/// Proposal mode's rules for `plan` when its text asks for it (`asked`).
pub(crate) fn proposal_rules(plan: &Plan, asked: Option<SourcePos>) -> Vec<Diagnostic> {
    asked.map_or_else(Vec::new, |asked| proposal::check(plan, Some(&asked)))
}

/// Where a vault plan's start note asks for proposal mode, its text found
/// by `text_of`.
pub(crate) fn asked_in_vault<'a>(
    plan: &Plan,
    text_of: impl FnOnce(&str) -> Option<&'a str>,
) -> Option<SourcePos> {
    let start = plan.nodes.get(plan.start?)?;
    let NodeExt::Vault(v) = &start.ext else {
        return None;
    };
    proposal::requested_in_note(&v.file, text_of(&v.file)?)
}

impl PlanHandle {
    pub fn new(plan: Plan, parse_diagnostics: Vec<Diagnostic>) -> Self {
        PlanHandle {
            plan,
            parse_diagnostics,
            proposal: Vec::new(),
            all: None,
        }
    }

    /// This plan with proposal mode's rules, where its text asks for it.
    pub(crate) fn asked(mut self, asked: Option<SourcePos>) -> Self {
        self.proposal = proposal_rules(&self.plan, asked);
        self
    }

    /// A vault checked whole (its links resolved among notes that are no
    /// nodes too): its diagnostics are final.
    pub(crate) fn checked(checked: planvault_core::Checked) -> Self {
        PlanHandle {
            plan: checked.plan,
            parse_diagnostics: Vec::new(),
            proposal: Vec::new(),
            all: Some(checked.diagnostics),
        }
    }

    pub(crate) fn from_parse((plan, diagnostics): (Plan, Vec<Diagnostic>)) -> Self {
        PlanHandle::new(plan, diagnostics)
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Parse and validation diagnostics, in the order `planvault validate` prints them.
    pub fn all_diagnostics(&self) -> Vec<Diagnostic> {
        if let Some(all) = &self.all {
            return all.clone();
        }
        let mut all = self.parse_diagnostics.clone();
        let graph = planvault_core::validate(&self.plan);
        vault::drop_outside_plan(&mut all, &graph, &self.plan);
        all.extend(graph);
        all.extend_from_slice(&self.proposal);
        all
    }
}

#[wasm_bindgen(js_class = Plan)]
impl PlanHandle {
    /// `"vault"`, `"plan-md"` or `"generated"`.
    #[wasm_bindgen(getter, unchecked_return_type = "PlanFormat")]
    pub fn format(&self) -> String {
        self.plan.format.as_str().to_owned()
    }

    /// The start node's id, when one could be determined.
    #[wasm_bindgen(getter)]
    pub fn start(&self) -> Option<String> {
        self.plan
            .start
            .and_then(|i| self.plan.nodes.get(i))
            .map(|n| n.id.clone())
    }

    /// Node ids in the plan's order.
    #[wasm_bindgen(getter, js_name = nodeIds)]
    pub fn node_ids(&self) -> Vec<String> {
        self.plan.nodes.iter().map(|n| n.id.clone()).collect()
    }

    /// How many edges the plan declares (dangling ones included).
    #[wasm_bindgen(getter, js_name = edgeCount)]
    pub fn edge_count(&self) -> usize {
        self.plan.edges.len()
    }
}

/// Parse a vault: vault-relative path → note text. Pass every file; what is
/// not a plan note (`.obsidian/`, `00_plan-trace/`, non-markdown) is skipped,
/// and so is what the vault's settings skip (see `VaultCore::fromStaged`),
/// as the CLI skips it. The JavaScript `parseVault(files)` writes the notes
/// into the staged room (see [`crate::staging`]) and calls this with their byte lengths.
#[wasm_bindgen(js_name = parseVaultStaged, skip_typescript)]
pub fn parse_vault_staged(
    used: usize,
    lengths: &[u32],
    templates: Option<String>,
    templater: Option<String>,
    ignore: Option<String>,
) -> Result<PlanHandle, JsValue> {
    let skip = scope::skipped_from(
        &[templates.as_deref(), templater.as_deref()],
        ignore.as_deref(),
    );
    // What the settings skip is never read, but its notes stay in the link
    // index (Obsidian opens a template too): checked whole, as the CLI does.
    let checked = with_staged_files(used, lengths, |files| {
        let mut checked =
            scope::check_in_folder_with(files.iter().copied(), "", &skip, Detail::Checks, &[]);
        let asked = asked_in_vault(&checked.plan, |file| {
            files
                .iter()
                .find(|(path, _)| *path == file)
                .map(|(_, text)| *text)
        });
        let rules = proposal_rules(&checked.plan, asked);
        checked.diagnostics.extend(rules);
        checked
    })?;
    Ok(PlanHandle::checked(checked))
}

/// Parse a PLAN.md checklist; `file` names it in diagnostics (default `PLAN.md`).
#[wasm_bindgen(js_name = parsePlanMd)]
pub fn parse_plan_md(text: String, file: Option<String>) -> PlanHandle {
    let file = file.unwrap_or_else(|| "PLAN.md".to_owned());
    let handle = PlanHandle::from_parse(planvault_core::planmd::parse(&file, &text));
    let asked = proposal::requested_in_plan_md(&file, &text, handle.plan());
    handle.asked(asked)
}

/// Every diagnostic about the plan, exactly as `planvault validate --json`
/// prints it: `JSON.stringify(validate(plan), null, 2)` is the CLI's output.
#[wasm_bindgen(unchecked_return_type = "ValidateReport")]
pub fn validate(plan: &PlanHandle) -> Result<JsValue, JsValue> {
    Ok(report_to_js(&plan.all_diagnostics())?)
}

/// Set a note's `status:` surgically: only that line changes (it, and a
/// frontmatter block, are added when missing); CRLF, BOM and unknown keys
/// survive. Checked as the runner checks its own writes: the note must read
/// back with the new status and every other property as before (a value
/// over several lines is made one line); where no rewrite keeps the rest
/// (an anchor another key uses), `status-not-writable` says why.
#[wasm_bindgen(js_name = updateStatus)]
pub fn update_status(
    text: &str,
    #[wasm_bindgen(unchecked_param_type = "NodeStatus")] status: &str,
) -> Result<String, JsValue> {
    let status =
        Status::parse(status).ok_or_else(|| BindingError::InvalidStatus(status.to_owned()))?;
    Ok(planvault_core::vault::checked_update_status(text, status)
        .map_err(BindingError::StatusNotWritable)?)
}
