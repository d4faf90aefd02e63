//! One-shot API: parse a plan in any format, then validate or draw it.
//!
//! A parsed plan stays in wasm memory behind a `Plan` handle, so validating
//! and exporting it costs no second trip across the boundary.

use crate::staging::with_staged_files;
use crate::types::{read_generated_plan_options, reject_unknown_keys, report_to_js, GeneratedPlanLimits, GeneratedPlanOptions};
use crate::error::BindingError;
use planvault_core::vault::{self, Detail};
use planvault_core::{export, generated, Diagnostic, Plan, Status};
use wasm_bindgen::prelude::*;

/// A parsed plan and what parsing found. Free it with `free()` (or let the
/// garbage collector do it).
#[wasm_bindgen(js_name = Plan)]
pub struct PlanHandle {
    plan: Plan,
    parse_diagnostics: Vec<Diagnostic>,
}

impl PlanHandle {
    pub fn new(plan: Plan, parse_diagnostics: Vec<Diagnostic>) -> Self {
        PlanHandle { plan, parse_diagnostics }
    }

    fn from_parse((plan, diagnostics): (Plan, Vec<Diagnostic>)) -> Self {
        PlanHandle::new(plan, diagnostics)
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Parse and validation diagnostics, in the order `planvault validate` prints them.
    pub fn all_diagnostics(&self) -> Vec<Diagnostic> {
        let mut all = self.parse_diagnostics.clone();
        all.extend(planvault_core::validate(&self.plan));
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
        self.plan.start.and_then(|i| self.plan.nodes.get(i)).map(|n| n.id.clone())
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
/// not a plan note (`.obsidian/`, `00_plan-trace/`, non-markdown) is skipped.
/// The JavaScript `parseVault(files)` writes the notes into the staged room
/// (see [`crate::staging`]) and calls this with their byte lengths.
#[wasm_bindgen(js_name = parseVaultStaged, skip_typescript)]
pub fn parse_vault_staged(used: usize, lengths: &[u32]) -> Result<PlanHandle, JsValue> {
    let (plan, diagnostics) =
        with_staged_files(used, lengths, |files| vault::load_from_as(files.iter().copied(), Detail::Checks))?;
    Ok(PlanHandle::new(plan, diagnostics))
}

/// Parse a PLAN.md checklist; `file` names it in diagnostics (default `PLAN.md`).
#[wasm_bindgen(js_name = parsePlanMd)]
pub fn parse_plan_md(text: String, file: Option<String>) -> PlanHandle {
    let file = file.unwrap_or_else(|| "PLAN.md".to_owned());
    PlanHandle::from_parse(planvault_core::planmd::parse(&file, &text))
}

/// Parse a model-generated JSON plan (flat step list or DAG with bindings).
/// Malformed JSON is a diagnostic, not an exception.
#[wasm_bindgen(js_name = parseGeneratedPlan)]
pub fn parse_generated_plan(
    json: String,
    #[wasm_bindgen(unchecked_param_type = "GeneratedPlanOptions | undefined")] options: JsValue,
) -> Result<PlanHandle, JsValue> {
    let options: GeneratedPlanOptions = if options.is_undefined() || options.is_null() {
        GeneratedPlanOptions::default()
    } else {
        // The reader reads only the fields it knows: name a misspelt
        // option instead of silently dropping a limit.
        reject_unknown_keys("options", &options, GeneratedPlanOptions::KEYS)?;
        let limits = js_sys::Reflect::get(&options, &JsValue::from_str("limits")).unwrap_or(JsValue::UNDEFINED);
        if !limits.is_undefined() {
            reject_unknown_keys("options.limits", &limits, GeneratedPlanLimits::KEYS)?;
        }
        read_generated_plan_options(&options)?
    };
    let file = options.file.clone().unwrap_or_else(|| "plan.json".to_owned());
    let options = options.to_core();
    Ok(PlanHandle::from_parse(generated::parse(&file, &json, &options)))
}

/// Every diagnostic about the plan, exactly as `planvault validate --json`
/// prints it: `JSON.stringify(validate(plan), null, 2)` is the CLI's output.
#[wasm_bindgen(unchecked_return_type = "ValidateReport")]
pub fn validate(plan: &PlanHandle) -> Result<JsValue, JsValue> {
    Ok(report_to_js(&plan.all_diagnostics())?)
}

/// A Mermaid `flowchart` of the plan, as `planvault graph --mermaid` prints it.
#[wasm_bindgen(js_name = toMermaid)]
pub fn to_mermaid(plan: &PlanHandle) -> String {
    export::mermaid(&plan.plan)
}

/// A JSON Canvas 1.0 document (the text of a `.canvas` file Obsidian opens),
/// as `planvault graph --canvas` prints it.
#[wasm_bindgen(js_name = toJsonCanvas)]
pub fn to_json_canvas(plan: &PlanHandle) -> String {
    export::canvas(&plan.plan)
}

/// The graph as `planvault graph --json` prints it (`JSON.parse` it for objects).
#[wasm_bindgen(js_name = toGraphJson)]
pub fn to_graph_json(plan: &PlanHandle) -> String {
    export::graph_json(&plan.plan)
}

/// Set a note's `status:` surgically: only that line changes (it, and a
/// frontmatter block, are added when missing); CRLF, BOM and unknown keys survive.
#[wasm_bindgen(js_name = updateStatus)]
pub fn update_status(
    text: &str,
    #[wasm_bindgen(unchecked_param_type = "NodeStatus")] status: &str,
) -> Result<String, JsValue> {
    let status = Status::parse(status).ok_or_else(|| BindingError::InvalidStatus(status.to_owned()))?;
    Ok(planvault_core::vault::update_status(text, status))
}
