//! The exporters: Mermaid, JSON Canvas and the graph as JSON, as
//! `planvault graph` prints them. Behind the `exports` feature (~19 KB of the
//! gzipped wasm: the canvas layout and the JSON writers), which the
//! `planvault/markdown` build leaves out.

use crate::plan::PlanHandle;
use planvault_core::export;
use wasm_bindgen::prelude::*;

/// A drawing as the CLI prints it: ending in one line break, whatever the
/// plan's format (the vault's JSON ends without one, the others' with it).
fn as_printed(mut drawing: String) -> String {
    if !drawing.ends_with('\n') {
        drawing.push('\n');
    }
    drawing
}

/// A Mermaid `flowchart` of the plan, as `planvault graph --mermaid` prints it.
#[wasm_bindgen(js_name = toMermaid)]
pub fn to_mermaid(plan: &PlanHandle) -> String {
    as_printed(export::mermaid(plan.plan()))
}

/// A JSON Canvas 1.0 document (the text of a `.canvas` file Obsidian opens),
/// as `planvault graph --canvas` prints it.
#[wasm_bindgen(js_name = toJsonCanvas)]
pub fn to_json_canvas(plan: &PlanHandle) -> String {
    as_printed(export::canvas(plan.plan()))
}

/// The graph as `planvault graph --json` prints it, but for its
/// `diagnostics`, which `validate` gives (`JSON.parse` it for objects).
#[wasm_bindgen(js_name = toGraphJson)]
pub fn to_graph_json(plan: &PlanHandle) -> String {
    as_printed(export::graph_json(plan.plan()))
}
