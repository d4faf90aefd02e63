//! The vault's graph rules (seed 000), checked before anything runs.
//!
//! Every walk here is iterative: a 100,000-note chain or loop must validate
//! inside wasm's small stack. The walks share one compact adjacency (an
//! offset per node into one array of targets: two allocations, however big
//! the plan), and strongly connected components come from Tarjan's
//! algorithm with an explicit stack (tested against petgraph's
//! `kosaraju_scc`). An editor re-runs these checks after every edit that
//! changes a link, so they are kept to a few linear passes.

use super::links::{composed, markdown_link, LinkIndex, Resolution};
use crate::diagnostic::sort_by_position;
use crate::{Code, Diagnostic, NodeExt, NodeKind, Plan, SourcePos};

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
#[cfg_attr(planvault_size, optimize(size))]
pub fn find_start(plan: &Plan) -> StartRule {
    let marked: Vec<usize> = (0..plan.nodes.len())
        .filter(|&i| plan.nodes[i].kind == NodeKind::Start)
        .collect();
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
    let roots: Vec<usize> = (0..plan.nodes.len())
        .filter(|&i| !has_incoming[i])
        .collect();
    match roots[..] {
        [one] => StartRule::Found(one),
        _ => StartRule::NoStart(roots),
    }
}

/// Names in backticks, ten at most (see [`crate::diagnostic::name_list`]).
#[cfg_attr(planvault_size, optimize(size))]
fn name_list<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    crate::diagnostic::name_list(names.map(|n| format!("`{n}`")))
}

/// A node's file position, or its `## Next` heading when `at_next` and it has one.
#[cfg_attr(planvault_size, optimize(size))]
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

#[cfg_attr(planvault_size, optimize(size))]
fn located(d: Diagnostic, pos: Option<SourcePos>) -> Diagnostic {
    match pos {
        Some(pos) => d.at(&pos),
        None => d,
    }
}

/// The vault a plan folder's links resolve in (see `vault::check_in_folder`).
pub(crate) struct Enclosing<'a> {
    /// Every note of the vault: the plan's nodes first, in order, then the
    /// rest of the vault.
    pub index: &'a LinkIndex<'a>,
    /// The plan's folder, vault-relative.
    pub folder: &'a str,
    /// What the vault's settings skip (`scope::skipped`): in the index, as
    /// Obsidian opens them, but no notes of the plan.
    pub skip: &'a [String],
}

/// Check a vault plan's graph. Diagnostics come sorted by position.
#[cfg_attr(planvault_size, optimize(size))]
pub fn validate(plan: &Plan) -> Vec<Diagnostic> {
    validate_in(plan, None)
}

/// [`validate`] for a plan whose links resolve in an enclosing vault.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn validate_in(plan: &Plan, vault: Option<&Enclosing<'_>>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if plan.nodes.is_empty() {
        let message = match vault.map(|v| v.folder).filter(|f| !f.is_empty()) {
            Some(folder) => {
                format!("the folder `{folder}/` has no notes, so there is no plan to run")
            }
            None => "the vault has no notes, so there is no plan to run".to_string(),
        };
        out.push(Diagnostic::error(Code::EmptyPlan, message));
        return out;
    }
    check_links(plan, vault, &mut out);
    let start = check_start(plan, &mut out);
    let adjacency = Adjacency::of(plan);
    if let Some(start) = start {
        check_reachability(plan, &adjacency, start, &mut out);
    }
    check_cycles(plan, &adjacency, &mut out);
    sort_by_position(&mut out);
    out
}

/// `parse` (a vault's parse diagnostics) without the frontmatter findings
/// on notes that are no part of the plan: those `graph` (its graph
/// diagnostics) found to be outside it (`not-part-of-plan`), or, where it
/// found no start and so no plan (`no-start`), the notes with no edge in
/// or out. A note outside the plan, like an ADR with `status: accepted`, is
/// never judged by the plan's knob rules.
#[cfg_attr(planvault_size, optimize(size))]
pub fn drop_outside_plan(parse: &mut Vec<Diagnostic>, graph: &[Diagnostic], plan: &Plan) {
    let mut names: Vec<&str> = match graph.iter().find(|d| d.code == Code::NotPartOfPlan) {
        Some(outside) => outside.nodes.iter().map(String::as_str).collect(),
        None if graph.iter().any(|d| d.code == Code::NoStart) => {
            let mut linked = vec![false; plan.nodes.len()];
            for edge in &plan.edges {
                linked[edge.from] = true;
                if let Some(to) = edge.to {
                    linked[to] = true;
                }
            }
            plan.nodes
                .iter()
                .zip(linked)
                .filter(|(_, linked)| !linked)
                .map(|(node, _)| node.id.as_str())
                .collect()
        }
        None => return,
    };
    names.sort_unstable();
    parse.retain(|d| {
        !(d.code == Code::BadFrontmatter
            && d.nodes.len() == 1
            && names.binary_search(&d.nodes[0].as_str()).is_ok())
    });
}

/// `dangling-edge`, `edge-to-non-note` and `ambiguous-link`: edges whose
/// target is no single note.
#[cfg_attr(planvault_size, optimize(size))]
fn check_links(plan: &Plan, vault: Option<&Enclosing<'_>>, out: &mut Vec<Diagnostic>) {
    if plan.edges.iter().all(|e| e.to.is_some()) {
        return;
    }
    let own;
    let index = match vault {
        Some(v) => v.index,
        None => {
            own = LinkIndex::new(plan.nodes.iter().map(|n| n.id.as_str()));
            &own
        }
    };
    let name = |i: usize| index.id(i).unwrap_or_default();
    for edge in plan.edges.iter().filter(|e| e.to.is_none()) {
        let from = &plan.nodes[edge.from].id;
        let link = edge.link_as_written();
        let d = match index.resolve(&edge.target, edge.from) {
            Resolution::Found(outside) if outside >= plan.nodes.len() => {
                // A note of the plan the link could mean (its path ends with
                // the link's) lost to one outside in Obsidian's order: say
                // why, with the link that means the plan's.
                let tail = link_tail(&edge.target).to_lowercase();
                let could_mean = |i: usize| {
                    let id = composed(name(i)).to_lowercase();
                    id == tail || id.ends_with(&format!("/{tail}"))
                };
                let relative = edge.target.trim().starts_with("./")
                    || edge.target.trim().starts_with("../");
                // A `./`/`../` path that reached its note names it: no hint.
                let literal = relative && index.resolve_by_path(&edge.target, edge.from).1;
                let namesake = (0..plan.nodes.len())
                    .find(|&i| could_mean(i))
                    .filter(|_| !literal);
                let why = match namesake {
                    Some(inside) => {
                        let fix = relinked(edge, &composed(name(inside)));
                        let reason = if !relative && name(outside).to_lowercase() == tail {
                            "a note at the link's path from the vault root comes first"
                        } else {
                            "the note with the shortest path ending so comes first"
                        };
                        format!(
                            " (Obsidian opens `{}` for {link} before the plan's `{}`: {reason}; write {fix})",
                            name(outside),
                            name(inside)
                        )
                    }
                    None => String::new(),
                };
                let skipped = vault.is_some_and(|v| {
                    super::scope::is_skipped(&format!("{}.md", name(outside)), v.skip)
                });
                let message = match (skipped, vault.map_or("", |v| v.folder)) {
                    (true, _) => format!(
                        "edge from `{from}` leads to `{}`, a note the vault's settings keep out of the plan (its templates folder or `.planvaultignore`); a plan's edges lead to its own notes{why}",
                        name(outside)
                    ),
                    (false, folder) => format!(
                        "edge from `{from}` leads to `{}`, outside the plan's folder `{folder}/`; a plan's edges stay in its folder{why}",
                        name(outside)
                    ),
                };
                Diagnostic::error(Code::EdgeLeavesPlan, message)
                .with_nodes([from.as_str()])
            }
            Resolution::Ambiguous(candidates) => {
                let names = candidates.iter().map(|&i| name(i));
                // The fix in the link's own form: a markdown link stays one.
                let example = relinked(edge, &composed(name(candidates[0])));
                Diagnostic::error(
                    Code::AmbiguousLink,
                    format!(
                        "link {link} in `{from}` could mean {}, none nearer to it than the others; write the folder, as in {example}",
                        name_list(names)
                    ),
                )
                .with_nodes(std::iter::once(from.as_str()).chain(candidates.iter().map(|&i| name(i))))
            }
            Resolution::Missing if is_attachment(&edge.target) => Diagnostic::error(
                Code::EdgeToNonNote,
                format!(
                    "edge from `{from}` points at {link}, a file that is not a note; an edge must end at a note"
                ),
            )
            .with_nodes([from.as_str()]),
            // `to` is unset but the target resolves: the plan was edited
            // without re-resolving. Report it as dangling all the same, since
            // the engine follows `to`.
            Resolution::Missing | Resolution::Found(_) => {
                // Obsidian takes a link's text as written: one typed
                // decomposed finds no (composed) path there.
                let typed = composed(&edge.target);
                let decomposed = typed != edge.target.as_str()
                    && matches!(index.resolve(&typed, edge.from), Resolution::Found(_));
                let why = match decomposed {
                    true => "; its letters are typed decomposed (Unicode NFD), so Obsidian finds no note either: type the link again",
                    false => "",
                };
                Diagnostic::error(
                    Code::DanglingEdge,
                    format!("edge from `{from}` points at {link}, which is no note in the vault{why}"),
                )
                .with_nodes([from.as_str()])
            }
        };
        let mut d = located(d, edge.pos.clone());
        d.target = Some(edge.target.clone());
        out.push(d);
    }
}

/// `edge`'s link as a fix writes it, to `target`: in its own form, a
/// wikilink keeping its heading and alias (`[[a/send|Send it]]`).
fn relinked(edge: &crate::Edge, target: &str) -> String {
    if edge.is_markdown_link() {
        return markdown_link(target);
    }
    let inner = edge
        .written
        .as_deref()
        .and_then(|w| w.strip_prefix("[[")?.strip_suffix("]]"));
    let rest = inner.map_or("", |inner| {
        inner.find(['#', '|']).map_or("", |at| &inner[at..])
    });
    format!("[[{target}{rest}]]")
}

/// A link's path as a note's path ends: without `./`, `../`, a leading `/`
/// or `.md`.
fn link_tail(target: &str) -> &str {
    let mut tail = target.trim();
    while let Some(rest) = tail.strip_prefix("./").or_else(|| tail.strip_prefix("../")) {
        tail = rest;
    }
    let tail = tail.trim_start_matches('/');
    match tail.len().checked_sub(3) {
        Some(cut) if tail.is_char_boundary(cut) && tail[cut..].eq_ignore_ascii_case(".md") => {
            &tail[..cut]
        }
        _ => tail,
    }
}

/// File types Obsidian opens that are not notes (its help's "Accepted file
/// formats"): a link to one names a file, never a node.
const ATTACHMENT_EXTENSIONS: [&str; 22] = [
    "base", "canvas", "avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp", "flac", "m4a",
    "mp3", "ogg", "wav", "webm", "3gp", "mkv", "mov", "mp4", "ogv", "pdf",
];

/// Whether a link target names a non-note file by its extension
/// (`diagram.png`, `Board.canvas`, `paper.PDF`).
#[cfg_attr(planvault_size, optimize(size))]
pub(super) fn is_attachment(target: &str) -> bool {
    let name = target.rsplit('/').next().unwrap_or(target);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && ATTACHMENT_EXTENSIONS
                .iter()
                .any(|e| e.eq_ignore_ascii_case(ext))
    })
}

/// `no-start` and `multiple-starts`; returns the start when there is one.
#[cfg_attr(planvault_size, optimize(size))]
fn check_start(plan: &Plan, out: &mut Vec<Diagnostic>) -> Option<usize> {
    match find_start(plan) {
        StartRule::Found(start) => Some(start),
        StartRule::MultipleStarts(marked) => {
            let names = marked.iter().map(|&i| plan.nodes[i].id.as_str());
            let d = Diagnostic::error(
                Code::MultipleStarts,
                format!(
                    "{} are all `type: start`; a plan has exactly one start",
                    name_list(names.clone())
                ),
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
                Diagnostic::error(Code::NoStart, message)
                    .with_nodes(roots.iter().map(|&i| plan.nodes[i].id.as_str())),
            );
            None
        }
    }
}

/// `unreachable` warnings and `no-terminal-reachable`, by one breadth-first walk.
#[cfg_attr(planvault_size, optimize(size))]
fn check_reachability(plan: &Plan, adjacency: &Adjacency, start: usize, out: &mut Vec<Diagnostic>) {
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
        for &next in adjacency.successors(node) {
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
    // A plan kept in one folder of a larger vault: the notes outside the
    // folder holding every note it reaches are the rest of the vault, said
    // once.
    let mut plan_folder =
        memchr::memrchr(b'/', start_id.as_bytes()).map(|slash| &start_id[..slash]);
    for (_, node) in plan.nodes.iter().enumerate().filter(|(i, _)| reached[*i]) {
        while let Some(folder) = plan_folder.filter(|f| !super::scope::in_folder(&node.id, f)) {
            plan_folder = memchr::memrchr(b'/', folder.as_bytes()).map(|slash| &folder[..slash]);
        }
        if plan_folder.is_none() {
            break;
        }
    }
    let start_folder = plan_folder;
    let elsewhere =
        |id: &str| start_folder.is_some_and(|folder| !super::scope::in_folder(id, folder));
    let outside: Vec<&str> = plan
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| !reached[*i] && elsewhere(&n.id))
        .map(|(_, n)| n.id.as_str())
        .collect();
    if let (Some(folder), [_, _, ..]) = (start_folder, &outside[..]) {
        out.push(
            Diagnostic::warning(
                Code::NotPartOfPlan,
                format!(
                    "{} notes outside `{folder}/`, the folder that holds every note the start `{start_id}` reaches, are not part of the plan: {}; validate that folder alone to leave them out",
                    outside.len(),
                    name_list(outside.iter().copied())
                ),
            )
            .with_nodes(outside.iter().copied()),
        );
    }
    let collapsed = outside.len() >= 2;
    for (i, node) in plan
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| !reached[*i] && (!collapsed || !elsewhere(&n.id)))
    {
        let d = Diagnostic::warning(
            Code::Unreachable,
            format!(
                "`{}` cannot be reached from the start `{start_id}`",
                node.id
            ),
        )
        .with_nodes([node.id.as_str()]);
        out.push(located(d, node_pos(plan, i, false)));
    }
}

/// Resolved edges as compressed adjacency: node `i`'s successors are
/// `targets[offsets[i]..offsets[i + 1]]`, in edge order.
pub(crate) struct Adjacency {
    offsets: Vec<usize>,
    targets: Vec<usize>,
}

impl Adjacency {
    #[cfg_attr(planvault_size, optimize(size))]
    pub(crate) fn of(plan: &Plan) -> Self {
        let n = plan.nodes.len();
        let mut offsets = vec![0usize; n + 1];
        for edge in &plan.edges {
            if edge.to.is_some() {
                offsets[edge.from + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0usize; offsets[n]];
        for edge in &plan.edges {
            if let Some(to) = edge.to {
                targets[fill[edge.from]] = to;
                fill[edge.from] += 1;
            }
        }
        Adjacency { offsets, targets }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    #[cfg_attr(planvault_size, optimize(size))]
    pub(crate) fn successors(&self, node: usize) -> &[usize] {
        &self.targets[self.offsets[node]..self.offsets[node + 1]]
    }
}

/// Strongly connected components by Tarjan's algorithm, iteratively: the
/// component of every node (numbered in the order they complete) and how
/// many there are.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn components(adjacency: &Adjacency) -> (Vec<usize>, usize) {
    const UNSEEN: usize = usize::MAX;
    let n = adjacency.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut component = vec![UNSEEN; n];
    let mut stack: Vec<usize> = Vec::new();
    // (node, position of its next successor to look at)
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let mut counter = 0;
    let mut count = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        calls.push((root, adjacency.offsets[root]));
        while let Some(&mut (node, ref mut at)) = calls.last_mut() {
            if *at < adjacency.offsets[node + 1] {
                let next = adjacency.targets[*at];
                *at += 1;
                if index[next] == UNSEEN {
                    index[next] = counter;
                    low[next] = counter;
                    counter += 1;
                    stack.push(next);
                    calls.push((next, adjacency.offsets[next]));
                } else if component[next] == UNSEEN {
                    // Still on the stack: part of the component being built.
                    low[node] = low[node].min(index[next]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                while let Some(member) = stack.pop() {
                    component[member] = count;
                    if member == node {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    (component, count)
}

/// `cycle-without-exit`: a strongly connected loop no edge leaves.
#[cfg_attr(planvault_size, optimize(size))]
fn check_cycles(plan: &Plan, adjacency: &Adjacency, out: &mut Vec<Diagnostic>) {
    let (component_of, count) = components(adjacency);
    let mut loops = vec![false; count];
    let mut exits = vec![false; count];
    for edge in &plan.edges {
        let c = component_of[edge.from];
        match edge.to {
            Some(to) if component_of[to] == c => loops[c] = true,
            // An unresolved edge was meant to lead somewhere: it counts as an
            // exit, and its own diagnostic says what is wrong with it.
            _ => exits[c] = true,
        }
    }
    // Members of every loop without exit, in node order.
    let mut stuck: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (node, &c) in component_of.iter().enumerate() {
        if loops[c] && !exits[c] {
            stuck[c].push(node);
        }
    }
    for members in stuck.into_iter().filter(|m| !m.is_empty()) {
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use petgraph::graph::{DiGraph, NodeIndex};
    use proptest::prelude::*;

    /// Components as a partition: for each node, the smallest node of its component.
    fn partition(component_of: &[usize]) -> Vec<usize> {
        let mut first = std::collections::HashMap::new();
        component_of
            .iter()
            .enumerate()
            .map(|(node, c)| *first.entry(*c).or_insert(node))
            .collect()
    }

    fn adjacency(n: usize, edges: &[(usize, usize)]) -> Adjacency {
        let mut offsets = vec![0; n + 1];
        let mut sorted = edges.to_vec();
        sorted.sort_by_key(|e| e.0);
        for &(from, _) in &sorted {
            offsets[from + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        Adjacency {
            offsets,
            targets: sorted.iter().map(|e| e.1).collect(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn tarjan_agrees_with_petgraph(n in 1usize..40, raw in prop::collection::vec((0usize..40, 0usize..40), 0..120)) {
            let edges: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
            let mut graph: DiGraph<(), ()> = DiGraph::new();
            for _ in 0..n {
                graph.add_node(());
            }
            for &(a, b) in &edges {
                graph.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
            }
            let mut expected = vec![0; n];
            for (c, members) in petgraph::algo::kosaraju_scc(&graph).iter().enumerate() {
                for m in members {
                    expected[m.index()] = c;
                }
            }
            let (ours, count) = components(&adjacency(n, &edges));
            prop_assert_eq!(partition(&ours), partition(&expected));
            prop_assert_eq!(count, ours.iter().max().map_or(0, |m| m + 1));
        }
    }

    #[test]
    fn a_long_chain_and_loop_do_not_recurse() {
        let n = 200_000;
        let chain: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let (_, count) = components(&adjacency(n, &chain));
        assert_eq!(count, n);
        let mut cycle = chain;
        cycle.push((n - 1, 0));
        let (_, count) = components(&adjacency(n, &cycle));
        assert_eq!(count, 1);
    }
}
