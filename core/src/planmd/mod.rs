//! The PLAN.md grammar (seed 001): one checkbox is one node, its 1-based
//! position among all checkboxes is its id, and markers on or under the item
//! declare its kind, label, dependencies, scenarios, signals and routes.
//!
//! Parsing never fails and never diagnoses: every defect the grammar can
//! express is a graph defect, reported by [`validate`] with the spec's five
//! codes. An `(after: N)` that does not point back at an existing item is not
//! a dependency, which is what lets the spec promise that a plan without
//! `@on`, `@emit` or `@needs` can never produce a diagnostic.

pub mod amend;
pub mod channel;
pub mod condition;
pub mod export;
mod items;
mod markers;
pub mod status;
mod validate;

pub use condition::{Condition, SignalOp};
pub use validate::validate;

use crate::position::LineIndex;
use crate::{
    Code, Diagnostic, Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, PlanMdNode,
    Status, DEFAULT_MAX_VISITS,
};
use markers::{first_code_span, ItemDecl};

/// The signal a `@tool` node always puts on the channel: its exit status.
pub const TOOL_EXIT_SIGNAL: &str = "exit";

/// Parse a PLAN.md into the plan model. `file` names it in positions.
///
/// The diagnostics are warnings about lines the grammar reads as nothing: a
/// marker line before the first item (`orphan-marker`) and a plan with no
/// item at all (`empty-plan`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse(file: &str, text: &str) -> (Plan, Vec<Diagnostic>) {
    let lines = LineIndex::new(text);
    let scan = items::scan(text);
    let decls: Vec<ItemDecl> = scan.items.iter().map(markers::parse_item).collect();
    let count = decls.len();
    let mut plan = Plan::new(PlanFormat::PlanMd);
    let mut diagnostics = Vec::new();

    for line in &scan.before_first {
        if let Some(marker) = markers::marker_line(line.text) {
            let shown = items::js_trim(line.text);
            let message = format!(
                "`{shown}` comes before the first item, so it belongs to no item and is ignored."
            );
            diagnostics.push(
                Diagnostic::warning(Code::OrphanMarker, message)
                    .at(&lines.pos(file, line.start + marker.at)),
            );
        }
    }
    if count == 0 {
        diagnostics.push(
            Diagnostic::warning(
                Code::EmptyPlan,
                "the plan has no items: no line is a `- [ ]` or `- [x]` checkbox.",
            )
            .in_file(file),
        );
    }

    for (i, (item, decl)) in scan.items.iter().zip(&decls).enumerate() {
        let index = i as u32 + 1;
        let command = (decl.kind == NodeKind::Tool).then(|| {
            decl.command_line
                .clone()
                .or_else(|| first_code_span(&decl.title).map(str::to_string))
                .unwrap_or_else(|| decl.title.clone())
        });
        let mut body = decl.title.clone();
        for line in &decl.body_lines {
            body.push('\n');
            body.push_str(line);
        }
        plan.nodes.push(Node {
            id: index.to_string(),
            title: decl.title.clone(),
            body,
            kind: decl.kind,
            status: if item.done {
                Status::Done
            } else {
                Status::Pending
            },
            tools: Vec::new(),
            role: None,
            max_visits: DEFAULT_MAX_VISITS,
            pos: Some(lines.pos(file, item.bullet)),
            ext: NodeExt::PlanMd(PlanMdNode {
                index,
                label: decl.label.clone(),
                command,
                scenarios: decl.scenarios.clone(),
                emits: decl.emits.clone(),
                needs: decl.needs.clone(),
                needs_at: decl
                    .needs_at
                    .iter()
                    .map(|&at| lines.pos(file, at))
                    .collect(),
            }),
        });
    }

    for (i, decl) in decls.iter().enumerate() {
        for &dep in &decl.after {
            // Only a backward reference to an existing item is a dependency.
            if dep == 0 || dep as usize > i {
                continue;
            }
            plan.edges.push(Edge {
                from: dep as usize - 1,
                to: Some(i),
                target: (i + 1).to_string(),
                label: None,
                kind: EdgeKind::After,
                pos: decl.after_at.map(|at| lines.pos(file, at)),
                written: None,
            });
        }
    }
    for (i, decl) in decls.iter().enumerate() {
        for route in &decl.routes {
            let to = route_target(&route.target)
                .filter(|&t| t >= 1 && t as usize <= count)
                .map(|t| t as usize - 1);
            plan.edges.push(Edge {
                from: i,
                to,
                target: route.target.clone(),
                label: Some(route.condition.clone()),
                kind: EdgeKind::Route,
                pos: Some(lines.pos(file, route.at)),
                written: None,
            });
        }
    }
    (plan, diagnostics)
}

/// `5` or `#5` (an item index); anything else names no item.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn route_target(text: &str) -> Option<u64> {
    let digits = text.strip_prefix('#').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// The PLAN.md facts of a node, when it is a PLAN.md item.
#[cfg_attr(planvault_size, optimize(size))]
pub fn item(node: &Node) -> Option<&PlanMdNode> {
    match &node.ext {
        NodeExt::PlanMd(item) => Some(item),
        _ => None,
    }
}

/// The keys a node may write on the channel: its `@emit` keys, plus `exit`
/// for a `@tool` node, which reports it without declaring it.
#[cfg_attr(planvault_size, optimize(size))]
pub fn emitted_keys(node: &Node) -> Vec<&str> {
    let mut keys: Vec<&str> = item(node)
        .map(|i| i.emits.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    if node.kind == NodeKind::Tool && !keys.contains(&TOOL_EXIT_SIGNAL) {
        keys.push(TOOL_EXIT_SIGNAL);
    }
    keys
}
