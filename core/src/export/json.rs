//! `planvault graph --json`.

use super::node_file;
use crate::Plan;
use serde::Serialize;

#[derive(Serialize)]
struct Graph<'a> {
    format: &'a str,
    start: Option<&'a str>,
    nodes: Vec<NodeOut<'a>>,
    edges: Vec<EdgeOut<'a>>,
}

#[derive(Serialize)]
struct NodeOut<'a> {
    id: &'a str,
    title: &'a str,
    kind: &'a str,
    status: &'a str,
    tools: &'a [String],
    role: Option<&'a str>,
    max_visits: u32,
    file: Option<&'a str>,
}

#[derive(Serialize)]
struct EdgeOut<'a> {
    from: &'a str,
    /// The target node's id; `null` when the edge resolves to no node.
    to: Option<&'a str>,
    label: Option<&'a str>,
    conditional: bool,
}

#[cfg_attr(planvault_size, optimize(size))]
pub fn graph_json(plan: &Plan) -> String {
    let id = |i: usize| plan.nodes[i].id.as_str();
    let graph = Graph {
        format: plan.format.as_str(),
        start: plan.start.map(id),
        nodes: (0..plan.nodes.len())
            .map(|i| {
                let n = &plan.nodes[i];
                NodeOut {
                    id: &n.id,
                    title: &n.title,
                    kind: n.kind.as_str(),
                    status: n.status.as_str(),
                    tools: &n.tools,
                    role: n.role.as_deref(),
                    max_visits: n.max_visits,
                    file: node_file(plan, i),
                }
            })
            .collect(),
        edges: plan
            .edges
            .iter()
            .map(|e| EdgeOut {
                from: id(e.from),
                to: e.to.map(id),
                label: e.label.as_deref(),
                conditional: e.is_conditional(),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&graph).expect("graph serializes")
}
