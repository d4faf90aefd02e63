//! The vault's graph rules (seed 000), checked before anything runs.
//!
//! Every walk here is iterative: a 100,000-note chain or loop must validate
//! inside wasm's small stack. Strongly connected components come from
//! petgraph's `kosaraju_scc`, whose two passes use explicit stacks
//! (`DfsPostOrder`, `Dfs`); petgraph's `tarjan_scc` recurses and is avoided.

use super::links::{LinkIndex, Resolution};
use crate::diagnostic::sort_by_position;
use crate::{Code, Diagnostic, NodeExt, NodeKind, Plan, SourcePos};
use petgraph::graph::{DiGraph, NodeIndex};

/// How a plan's start node is determined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartRule {
    /// The one `type: start` note, or the single note nothing links to.
    Found(usize),
    /// Several notes say `type: start` (node indices, in order).
    MultipleStarts(Vec<usize>),
    /// No `type: start`, and not exactly one note without incoming edges
    /// (the candidates, possibly none).
    NoStart(Vec<usize>),
}

/// Apply the start rules: the one `type: start`; with none, the single node
/// with no incoming edge.
pub fn find_start(plan: &Plan) -> StartRule {
    let marked: Vec<usize> = (0..plan.nodes.len()).filter(|&i| plan.nodes[i].kind == NodeKind::Start).collect();
    match marked[..] {
        [one] => return StartRule::Found(one),
        [_, _, ..] => return StartRule::MultipleStarts(marked),
        [] => {}
    }
    let mut has_incoming = vec![false; plan.nodes.len()];
    for edge in &plan.edges {
        if let Some(to) = edge.to {
            has_incoming[to] = true;
        }
    }
    let roots: Vec<usize> = (0..plan.nodes.len()).filter(|&i| !has_incoming[i]).collect();
    match roots[..] {
        [one] => StartRule::Found(one),
        _ => StartRule::NoStart(roots),
    }
}

/// How many names a message lists before saying "and N more" (the
/// diagnostic's `nodes` always lists them all).
const NAMES_IN_MESSAGE: usize = 10;

fn name_list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    let total = names.len();
    let mut shown: Vec<String> = names.take(NAMES_IN_MESSAGE).map(|n| format!("`{n}`")).collect();
    if total > NAMES_IN_MESSAGE {
        shown.push(format!("and {} more", total - NAMES_IN_MESSAGE));
    }
    match shown.len() {
        0 => String::new(),
        1 => shown.remove(0),
        _ => {
            let last = shown.pop().unwrap_or_default();
            format!("{} and {last}", shown.join(", "))
        }
    }
}

/// A node's file position, or its `## Next` heading when `at_next` and it has one.
fn node_pos(plan: &Plan, node: usize, at_next: bool) -> Option<SourcePos> {
    let n = &plan.nodes[node];
    let mut pos = n.pos.clone()?;
    if let (true, NodeExt::Vault(v)) = (at_next, &n.ext) {
        if let Some(line) = v.next_line {
            pos.line = line;
            pos.column = 1;
        }
    }
    Some(pos)
}

fn located(d: Diagnostic, pos: Option<SourcePos>) -> Diagnostic {
    match pos {
        Some(pos) => d.at(&pos),
        None => d,
    }
}

/// Check a vault plan's graph. Diagnostics come sorted by position.
pub fn validate(plan: &Plan) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if plan.nodes.is_empty() {
        out.push(Diagnostic::error(Code::EmptyPlan, "the vault has no notes, so there is no plan to run"));
        return out;
    }
    check_links(plan, &mut out);
    let start = check_start(plan, &mut out);
    if let Some(start) = start {
        check_reachability(plan, start, &mut out);
    }
    check_cycles(plan, &mut out);
    sort_by_position(&mut out);
    out
}

/// `dangling-edge` and `ambiguous-link`: edges whose target is no single note.
fn check_links(plan: &Plan, out: &mut Vec<Diagnostic>) {
    if plan.edges.iter().all(|e| e.to.is_some()) {
        return;
    }
    let index = LinkIndex::new(plan.nodes.iter().map(|n| n.id.as_str()));
    for edge in plan.edges.iter().filter(|e| e.to.is_none()) {
        let from = &plan.nodes[edge.from].id;
        let d = match index.resolve(&edge.target, edge.from) {
            Resolution::Ambiguous(candidates) => {
                let names = candidates.iter().map(|&i| plan.nodes[i].id.as_str());
                let example = &plan.nodes[candidates[0]].id;
                Diagnostic::error(
                    Code::AmbiguousLink,
                    format!(
                        "link [[{}]] in `{from}` could mean {}; write the folder, as in [[{example}]]",
                        edge.target,
                        name_list(names)
                    ),
                )
                .with_nodes(std::iter::once(from.as_str()).chain(candidates.iter().map(|&i| plan.nodes[i].id.as_str())))
            }
            // `to` is unset but the target resolves: the plan was edited
            // without re-resolving. Report it as dangling all the same, since
            // the engine follows `to`.
            Resolution::Missing | Resolution::Found(_) => Diagnostic::error(
                Code::DanglingEdge,
                format!("edge from `{from}` points at [[{}]], which is no note in the vault", edge.target),
            )
            .with_nodes([from.as_str()]),
        };
        let mut d = located(d, edge.pos.clone());
        d.target = Some(edge.target.clone());
        out.push(d);
    }
}

/// `no-start` and `multiple-starts`; returns the start when there is one.
fn check_start(plan: &Plan, out: &mut Vec<Diagnostic>) -> Option<usize> {
    match find_start(plan) {
        StartRule::Found(start) => Some(start),
        StartRule::MultipleStarts(marked) => {
            let names = marked.iter().map(|&i| plan.nodes[i].id.as_str());
            let d = Diagnostic::error(
                Code::MultipleStarts,
                format!("{} are all `type: start`; a plan has exactly one start", name_list(names.clone())),
            )
            .with_nodes(names);
            out.push(located(d, node_pos(plan, marked[1], false)));
            None
        }
        StartRule::NoStart(roots) => {
            let message = if roots.is_empty() {
                "no start node: every note is linked to from another; mark the first one `type: start`".to_string()
            } else {
                format!(
                    "no start node: {} have no incoming edge; mark one `type: start`",
                    name_list(roots.iter().map(|&i| plan.nodes[i].id.as_str()))
                )
            };
            out.push(
                Diagnostic::error(Code::NoStart, message).with_nodes(roots.iter().map(|&i| plan.nodes[i].id.as_str())),
            );
            None
        }
    }
}

/// `unreachable` warnings and `no-terminal-reachable`, by one breadth-first walk.
fn check_reachability(plan: &Plan, start: usize, out: &mut Vec<Diagnostic>) {
    let successors = plan.successors();
    let mut out_degree = vec![0usize; plan.nodes.len()];
    for edge in &plan.edges {
        out_degree[edge.from] += 1;
    }
    let mut reached = vec![false; plan.nodes.len()];
    reached[start] = true;
    let mut queue = std::collections::VecDeque::from([start]);
    let mut terminal_reached = false;
    while let Some(node) = queue.pop_front() {
        terminal_reached |= out_degree[node] == 0;
        for &next in &successors[node] {
            if !reached[next] {
                reached[next] = true;
                queue.push_back(next);
            }
        }
    }
    let start_id = &plan.nodes[start].id;
    if !terminal_reached {
        let d = Diagnostic::error(
            Code::NoTerminalReachable,
            format!("no terminal note (one without `## Next` links) can be reached from the start `{start_id}`, so a run never finishes"),
        )
        .with_nodes([start_id.as_str()]);
        out.push(located(d, node_pos(plan, start, false)));
    }
    for (i, node) in plan.nodes.iter().enumerate().filter(|(i, _)| !reached[*i]) {
        let d = Diagnostic::warning(
            Code::Unreachable,
            format!("`{}` cannot be reached from the start `{start_id}`", node.id),
        )
        .with_nodes([node.id.as_str()]);
        out.push(located(d, node_pos(plan, i, false)));
    }
}

/// `cycle-without-exit`: a strongly connected loop no edge leaves.
fn check_cycles(plan: &Plan, out: &mut Vec<Diagnostic>) {
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(plan.nodes.len(), plan.edges.len());
    for _ in &plan.nodes {
        graph.add_node(());
    }
    for edge in &plan.edges {
        if let Some(to) = edge.to {
            graph.add_edge(NodeIndex::new(edge.from), NodeIndex::new(to), ());
        }
    }
    let components = petgraph::algo::kosaraju_scc(&graph);
    let mut component_of = vec![0usize; plan.nodes.len()];
    for (c, members) in components.iter().enumerate() {
        for m in members {
            component_of[m.index()] = c;
        }
    }
    let mut loops = vec![false; components.len()];
    let mut exits = vec![false; components.len()];
    for edge in &plan.edges {
        let c = component_of[edge.from];
        match edge.to {
            Some(to) if component_of[to] == c => loops[c] = true,
            // An unresolved edge was meant to lead somewhere: it counts as an
            // exit, and its own diagnostic says what is wrong with it.
            _ => exits[c] = true,
        }
    }
    for (c, members) in components.iter().enumerate() {
        if !loops[c] || exits[c] {
            continue;
        }
        let mut members: Vec<usize> = members.iter().map(|m| m.index()).collect();
        members.sort_unstable();
        let names = members.iter().map(|&i| plan.nodes[i].id.as_str());
        let d = Diagnostic::error(
            Code::CycleWithoutExit,
            format!(
                "the loop through {} has no edge leaving it, so a run entering it never ends; add an exit from one of its notes",
                name_list(names.clone())
            ),
        )
        .with_nodes(names);
        out.push(located(d, node_pos(plan, members[0], true)));
    }
}
