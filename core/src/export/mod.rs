//! Drawing a plan: `planvault graph`'s JSON, Mermaid, ASCII tree and JSON
//! Canvas outputs. Exporters read only the shared model.
//!
//! The dispatch matches on the plan's format so a format with its own idea of
//! a drawing (PLAN.md's items, a generated plan's bindings) can give it its
//! own arm: `crate::planmd::export` and `crate::generated::export`; the
//! model-level exporters here are the vault's.

mod ascii;
mod canvas;
mod json;
mod mermaid;
pub(crate) mod text_canvas;

use crate::{NodeExt, Plan, PlanFormat};

/// An output of `planvault graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Json,
    Mermaid,
    Ascii,
    Canvas,
}

/// Render a plan in one of the graph formats.
#[cfg_attr(planvault_size, optimize(size))]
pub fn export(plan: &Plan, format: GraphFormat) -> String {
    match format {
        GraphFormat::Json => graph_json(plan),
        GraphFormat::Mermaid => mermaid(plan),
        GraphFormat::Ascii => ascii(plan),
        GraphFormat::Canvas => canvas(plan),
    }
}

/// `{"format", "start", "nodes": [...], "edges": [...]}`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn graph_json(plan: &Plan) -> String {
    match plan.format {
        PlanFormat::Vault => json::graph_json(plan),
        PlanFormat::PlanMd => crate::planmd::export::json(plan),
        PlanFormat::Generated => crate::generated::export::json(plan),
    }
}

/// A Mermaid `flowchart` with labeled edges.
#[cfg_attr(planvault_size, optimize(size))]
pub fn mermaid(plan: &Plan) -> String {
    match plan.format {
        PlanFormat::Vault => mermaid::mermaid(plan),
        PlanFormat::PlanMd => crate::planmd::export::mermaid(plan),
        PlanFormat::Generated => crate::generated::export::mermaid(plan),
    }
}

/// A tree for a terminal, from the start node, control characters escaped.
#[cfg_attr(planvault_size, optimize(size))]
pub fn ascii(plan: &Plan) -> String {
    let tree = match plan.format {
        PlanFormat::Vault => ascii::ascii(plan),
        PlanFormat::PlanMd => crate::planmd::export::ascii(plan),
        PlanFormat::Generated => crate::generated::export::ascii(plan),
    };
    // The tree is for a terminal: the plan's text in it must not be able to
    // drive one (its own line breaks stay).
    match crate::terminal::escape_controls(&tree, true) {
        std::borrow::Cow::Borrowed(_) => tree,
        std::borrow::Cow::Owned(escaped) => escaped,
    }
}

/// A JSON Canvas 1.0 document: file nodes pointing at the notes.
#[cfg_attr(planvault_size, optimize(size))]
pub fn canvas(plan: &Plan) -> String {
    match plan.format {
        PlanFormat::Vault => canvas::canvas(plan),
        PlanFormat::PlanMd => crate::planmd::export::canvas(plan),
        PlanFormat::Generated => crate::generated::export::canvas(plan),
    }
}

/// The file a node lives in: its note, else the file its position names.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn node_file(plan: &Plan, node: usize) -> Option<&str> {
    let n = &plan.nodes[node];
    match &n.ext {
        NodeExt::Vault(v) if !v.file.is_empty() => Some(&v.file),
        _ => n.pos.as_ref().map(|p| p.file.as_str()),
    }
}

/// Out-degree of every node, dangling edges included (a node with only a
/// dangling edge is not a terminal).
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn out_degrees(plan: &Plan) -> Vec<usize> {
    let mut degree = vec![0; plan.nodes.len()];
    for edge in &plan.edges {
        degree[edge.from] += 1;
    }
    degree
}
