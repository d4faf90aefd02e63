//! What the model of a generated plan must satisfy: every `$from` binding and
//! precondition reference is legal, names a step that exists and that the
//! step declared as a dependency, and the dependencies do not cycle (Kahn).

use super::refs::{self, RefSyntax};
use super::schedule::waves;
use super::{step, IdIndex};
use crate::{Code, Diagnostic, EdgeKind, Plan};
use petgraph::graph::{DiGraph, NodeIndex};

/// Check a generated plan's bindings and dependency graph.
#[cfg_attr(planvault_size, optimize(size))]
pub fn validate(plan: &Plan) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let index = IdIndex::new(plan.nodes.iter().map(|n| n.id.as_str()));
    // Each step's dependencies, sorted for binary search.
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); plan.nodes.len()];
    for edge in &plan.edges {
        if let (EdgeKind::After, Some(to)) = (edge.kind, edge.to) {
            deps[to].push(edge.from);
        }
    }
    for list in &mut deps {
        list.sort_unstable();
    }
    for (i, node) in plan.nodes.iter().enumerate() {
        let Some(s) = step(node) else { continue };
        let id = &node.id;
        let at = |d: Diagnostic| {
            let d = d.with_nodes([id.clone()]);
            match &node.pos {
                Some(pos) => d.at(pos),
                None => d,
            }
        };
        let mut references: Vec<(String, String)> = Vec::new();
        for binding in refs::bindings(&s.args) {
            match (&binding.reference, binding.exact) {
                (Some(r), true) => references.push((r.clone(), format!("argument {}", binding.pointer))),
                _ => out.push(at(Diagnostic::error(
                    Code::MalformedRef,
                    format!(
                        "step {id:?}: the binding at argument {} is not exactly {{\"$from\": \"<step>.<path>\"}}",
                        binding.pointer
                    ),
                ))),
            }
        }
        for p in &s.preconditions {
            references.push((p.reference.clone(), "a precondition".to_string()));
        }
        for (reference, place) in references {
            match refs::parse_reference(&reference) {
                Err(RefSyntax::Reserved(segment)) => out.push(at(Diagnostic::error(
                    Code::ReservedPathSegment,
                    format!("step {id:?}: {place} reads {reference:?}, whose path segment {segment:?} is reserved"),
                ))),
                Err(RefSyntax::Malformed) => out.push(at(Diagnostic::error(
                    Code::MalformedRef,
                    format!("step {id:?}: {place} reads {reference:?}, which is not <step>[.path]"),
                ))),
                Ok(parsed) => match index.get(&parsed.step) {
                    None => out.push(at(Diagnostic::error(
                        Code::DanglingRef,
                        format!("step {id:?}: {place} reads step {:?}, which is not in the plan", parsed.step),
                    ))),
                    Some(target) if deps[i].binary_search(&target).is_err() => out.push(at(Diagnostic::error(
                        Code::UndeclaredRef,
                        format!(
                            "step {id:?}: {place} reads step {:?}, which is not in its dependencies",
                            parsed.step
                        ),
                    ))),
                    Some(_) => {}
                },
            }
        }
    }
    out.extend(cycles(plan));
    out
}

/// Kahn's algorithm finds whether any step can never be scheduled; the
/// strongly connected components among those name each cycle exactly.
#[cfg_attr(planvault_size, optimize(size))]
fn cycles(plan: &Plan) -> Vec<Diagnostic> {
    let scheduled: usize = waves(plan).iter().map(Vec::len).sum();
    if scheduled == plan.nodes.len() {
        return Vec::new();
    }
    let mut graph: DiGraph<(), ()> = DiGraph::new();
    for _ in &plan.nodes {
        graph.add_node(());
    }
    for edge in &plan.edges {
        if let (EdgeKind::After, Some(to)) = (edge.kind, edge.to) {
            graph.add_edge(NodeIndex::new(edge.from), NodeIndex::new(to), ());
        }
    }
    let mut components: Vec<Vec<usize>> = petgraph::algo::kosaraju_scc(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut c: Vec<usize> = c.into_iter().map(NodeIndex::index).collect();
            c.sort_unstable();
            c
        })
        .collect();
    components.sort();
    components
        .into_iter()
        .map(|c| {
            let names = c.iter().map(|&i| format!("{:?}", plan.nodes[i].id));
            let d = Diagnostic::error(
                Code::Cycle,
                format!(
                    "steps {} depend on each other in a cycle; none of them could ever start",
                    crate::diagnostic::name_list(names)
                ),
            )
            .with_nodes(c.iter().map(|&i| plan.nodes[i].id.clone()));
            match &plan.nodes[c[0]].pos {
                Some(pos) => d.at(pos),
                None => d,
            }
        })
        .collect()
}
