//! The five PLAN.md graph defects, in a fixed order: `cycle`, `dangling-edge`,
//! `unmet-need`, `unroutable-signal` (a warning: the plan still runs, the
//! route is just dead) and `unreachable`; within a class by item index, then in
//! the order the item wrote them.
//!
//! Every walk is iterative (Kosaraju for cycles, breadth-first for the cycle
//! path, a worklist for reachability) so a 100,000-item plan validates in
//! wasm's small stack.

use super::condition::Condition;
use super::items::js_trim;
use super::{emitted_keys, item};
use crate::{Code, Diagnostic, EdgeKind, Plan, Status};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::VecDeque;

const MAX_TITLE_CHARS: usize = 60;

/// Check a PLAN.md plan; an empty result means the graph is sound.
#[cfg_attr(planvault_size, optimize(size))]
pub fn validate(plan: &Plan) -> Vec<Diagnostic> {
    if plan.nodes.is_empty() {
        // The parser already said so (`empty-plan`); nothing else to check.
        return Vec::new();
    }
    let v = Validator::new(plan);
    let mut out = Vec::new();
    let cyclic = v.cycles(&mut out);
    v.dangling(&mut out);
    let unmet = v.unmet_needs(&mut out);
    v.unroutable(&mut out);
    v.unreachable(&cyclic, &unmet, &mut out);
    out
}

struct Validator<'a> {
    plan: &'a Plan,
    /// Sorted, deduplicated successors over both edge kinds.
    succ: Vec<Vec<usize>>,
    /// Every key some item may emit, sorted and distinct (a binary search
    /// finds a key's position, which indexes the per-key tables below).
    emitted: Vec<&'a str>,
}

impl<'a> Validator<'a> {
    #[cfg_attr(planvault_size, optimize(size))]
    fn new(plan: &'a Plan) -> Self {
        let mut succ = plan.successors();
        for s in &mut succ {
            s.sort_unstable();
            s.dedup();
        }
        let mut emitted: Vec<&str> = plan.nodes.iter().flat_map(emitted_keys).collect();
        emitted.sort_unstable();
        emitted.dedup();
        Validator {
            plan,
            succ,
            emitted,
        }
    }

    /// Where `key` sits in `emitted`, if some item emits it.
    #[cfg_attr(planvault_size, optimize(size))]
    fn emitted_at(&self, key: &str) -> Option<usize> {
        self.emitted.binary_search(&key).ok()
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn is_emitted(&self, key: &str) -> bool {
        self.emitted_at(key).is_some()
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn index(&self, node: usize) -> u32 {
        item(&self.plan.nodes[node]).map_or(node as u32 + 1, |i| i.index)
    }

    /// `item 4 ("Retry")`: the offender named the way a reader finds it.
    #[cfg_attr(planvault_size, optimize(size))]
    fn name(&self, node: usize) -> String {
        let index = self.index(node);
        let title = self.plan.nodes[node].title.trim();
        if title.is_empty() {
            return format!("item {index}");
        }
        let shown: String = if title.chars().count() > MAX_TITLE_CHARS {
            let cut: String = title.chars().take(MAX_TITLE_CHARS - 1).collect();
            format!("{}…", cut.trim_end())
        } else {
            title.to_string()
        };
        format!("item {index} (\"{shown}\")")
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn about(&self, d: Diagnostic, nodes: &[usize]) -> Diagnostic {
        let mut d = d.with_nodes(nodes.iter().map(|&n| self.plan.nodes[n].id.clone()));
        d.items = nodes.iter().map(|&n| self.index(n)).collect();
        d
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn at_node(&self, d: Diagnostic, node: usize) -> Diagnostic {
        match &self.plan.nodes[node].pos {
            Some(pos) => d.at(pos),
            None => d,
        }
    }

    /// Strongly connected components that loop, lowest member first.
    #[cfg_attr(planvault_size, optimize(size))]
    fn cycles(&self, out: &mut Vec<Diagnostic>) -> Vec<bool> {
        let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(self.succ.len(), 0);
        for _ in 0..self.succ.len() {
            graph.add_node(());
        }
        for (from, tos) in self.succ.iter().enumerate() {
            for &to in tos {
                graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), ());
            }
        }
        let mut components: Vec<Vec<usize>> = petgraph::algo::kosaraju_scc(&graph)
            .into_iter()
            .map(|c| {
                let mut c: Vec<usize> = c.into_iter().map(NodeIndex::index).collect();
                c.sort_unstable();
                c
            })
            .filter(|c| c.len() > 1 || self.succ[c[0]].contains(&c[0]))
            .collect();
        components.sort();
        let mut cyclic = vec![false; self.succ.len()];
        for component in components {
            for &member in &component {
                cyclic[member] = true;
            }
            let path = self.cycle_path(&component);
            // Ten hops at most, then how many more, then back to the first.
            let shown = crate::diagnostic::NAMES_IN_MESSAGE;
            let mut hops: Vec<String> = path.iter().take(shown).map(|&n| self.name(n)).collect();
            if path.len() > shown {
                hops.push(format!("(and {} more)", path.len() - shown));
            }
            hops.extend(path.first().map(|&n| self.name(n)));
            let message = format!(
                "Cycle: {}. The run could never finish, so nothing was dispatched.",
                hops.join(" -> ")
            );
            let d = self.about(Diagnostic::error(Code::Cycle, message), &component);
            out.push(self.at_node(d, component[0]));
        }
        cyclic
    }

    /// The shortest loop from the component's lowest member back to itself,
    /// found breadth-first over ascending successors (deterministic).
    #[cfg_attr(planvault_size, optimize(size))]
    fn cycle_path(&self, component: &[usize]) -> Vec<usize> {
        let start = component[0];
        // `component` is sorted: a member's position is its binary search,
        // and `parent` is kept by position (`usize::MAX`: not reached yet).
        let mut parent = vec![usize::MAX; component.len()];
        let mut queue = VecDeque::from([start]);
        while let Some(node) = queue.pop_front() {
            for &next in &self.succ[node] {
                if next == start {
                    let mut path = vec![node];
                    let mut at = node;
                    while at != start {
                        at = parent[component.binary_search(&at).unwrap_or_default()];
                        path.push(at);
                    }
                    path.reverse();
                    return path;
                }
                if let Ok(at) = component.binary_search(&next) {
                    if parent[at] == usize::MAX {
                        parent[at] = node;
                        queue.push_back(next);
                    }
                }
            }
        }
        component.to_vec()
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn routes(&self) -> impl Iterator<Item = &'a crate::Edge> {
        self.plan.edges.iter().filter(|e| e.kind == EdgeKind::Route)
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn dangling(&self, out: &mut Vec<Diagnostic>) {
        let mut found: Vec<(usize, Diagnostic)> = Vec::new();
        for edge in self.routes().filter(|e| e.to.is_none()) {
            let from = self.name(edge.from);
            let when = format!("`@on {}`", js_trim(edge.label.as_deref().unwrap_or("")));
            let message = if edge.target.is_empty() {
                format!("{from} declares {when} with no target item.")
            } else if super::route_target(&edge.target).is_some() {
                format!(
                    "{from} routes to item {}, which does not exist ({when}).",
                    edge.target.trim_start_matches('#')
                )
            } else {
                format!(
                    "{from} routes to `{}`, which is not an item index ({when}).",
                    edge.target
                )
            };
            let mut d = self.about(Diagnostic::error(Code::DanglingEdge, message), &[edge.from]);
            d.target = (!edge.target.is_empty()).then(|| edge.target.clone());
            if let Some(pos) = &edge.pos {
                d = d.at(pos);
            }
            found.push((edge.from, d));
        }
        // By item, then in the order the routes were written (a stable sort).
        found.sort_by_key(|(from, _)| *from);
        out.extend(found.into_iter().map(|(_, d)| d));
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn unmet_needs(&self, out: &mut Vec<Diagnostic>) -> Vec<bool> {
        let mut flagged = vec![false; self.plan.nodes.len()];
        for (n, node) in self.plan.nodes.iter().enumerate() {
            let Some(item) = item(node) else { continue };
            for (k, key) in item.needs.iter().enumerate() {
                if self.is_emitted(key) {
                    continue;
                }
                flagged[n] = true;
                let message = format!(
                    "{} needs signal \"{key}\", which no item emits.",
                    self.name(n)
                );
                let mut d = self.about(Diagnostic::error(Code::UnmetNeed, message), &[n]);
                d.key = Some(key.clone());
                out.push(match item.needs_at.get(k) {
                    Some(pos) => d.at(pos),
                    None => self.at_node(d, n),
                });
            }
        }
        flagged
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn unroutable(&self, out: &mut Vec<Diagnostic>) {
        let mut found: Vec<(usize, Diagnostic)> = Vec::new();
        for edge in self.routes() {
            let Some(to) = edge.to else { continue };
            let written = js_trim(edge.label.as_deref().unwrap_or(""));
            let condition = Condition::parse(written);
            let key = condition.key();
            if key.is_empty() || condition.is_status_word() || self.is_emitted(key) {
                continue;
            }
            let message = format!(
                "{} routes to item {} on signal \"{key}\" (`@on {written}`), which no item emits — the route can never be taken.",
                self.name(edge.from),
                self.index(to)
            );
            let mut d = self.about(
                Diagnostic::warning(Code::UnroutableSignal, message),
                &[edge.from],
            );
            d.target = Some(edge.target.clone());
            d.key = Some(key.to_string());
            if let Some(pos) = &edge.pos {
                d = d.at(pos);
            }
            found.push((edge.from, d));
        }
        found.sort_by_key(|(from, _)| *from);
        out.extend(found.into_iter().map(|(_, d)| d));
    }

    /// An item can be dispatched once every dependency can, or once a route
    /// from an item that can be reaches it, and in both cases only once every key it
    /// needs can be on the channel. Done items ran, whatever the graph says.
    #[cfg_attr(planvault_size, optimize(size))]
    fn unreachable(&self, cyclic: &[bool], unmet: &[bool], out: &mut Vec<Diagnostic>) {
        let n = self.plan.nodes.len();
        let mut waiting_deps = vec![0usize; n];
        let mut after_succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut route_succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        // An `after` edge counts once however often it is written: the
        // first of each (from, to) pair, found by a stable sort.
        let edges = &self.plan.edges;
        let mut after: Vec<usize> = (0..edges.len())
            .filter(|&e| edges[e].kind == EdgeKind::After && edges[e].to.is_some())
            .collect();
        after.sort_by_key(|&e| (edges[e].from, edges[e].to));
        let mut repeated = vec![false; edges.len()];
        for pair in after.windows(2) {
            let (a, b) = (&edges[pair[0]], &edges[pair[1]]);
            repeated[pair[1]] = (a.from, a.to) == (b.from, b.to);
        }
        for (e, edge) in edges.iter().enumerate() {
            let Some(to) = edge.to else { continue };
            match edge.kind {
                EdgeKind::After if !repeated[e] => {
                    waiting_deps[to] += 1;
                    after_succ[edge.from].push(to);
                }
                EdgeKind::After => {}
                // As Leopold counts it: a route from a node that can run
                // reaches its target, whether or not its condition can fire
                // (a dead route is `unroutable-signal`'s warning).
                EdgeKind::Route => route_succ[edge.from].push(to),
                _ => {}
            }
        }
        // Keys are numbered by their place in `emitted`: a key nobody
        // emits can never be on the channel, so only emitted keys matter.
        let mut needers: Vec<Vec<usize>> = vec![Vec::new(); self.emitted.len()];
        for (i, node) in self.plan.nodes.iter().enumerate() {
            for key in item(node).map(|it| it.needs.as_slice()).unwrap_or_default() {
                if let Some(k) = self.emitted_at(key) {
                    needers[k].push(i);
                }
            }
        }

        let mut reachable = vec![false; n];
        let mut routed = vec![false; n];
        // Which emitted keys can be on the channel, and how many.
        let mut signals = (vec![false; self.emitted.len()], 0usize);
        let mut queue: VecDeque<usize> = VecDeque::new();
        let admit = |i: usize,
                     reachable: &mut Vec<bool>,
                     signals: &mut (Vec<bool>, usize),
                     queue: &mut VecDeque<usize>| {
            reachable[i] = true;
            queue.push_back(i);
            for key in emitted_keys(&self.plan.nodes[i]) {
                if let Some(k) = self.emitted_at(key) {
                    if !signals.0[k] {
                        signals.0[k] = true;
                        signals.1 += 1;
                    }
                }
            }
        };
        for i in 0..n {
            if self.plan.nodes[i].status == Status::Done {
                admit(i, &mut reachable, &mut signals, &mut queue);
            }
        }
        let needs_met = |i: usize, signals: &(Vec<bool>, usize)| {
            item(&self.plan.nodes[i]).is_none_or(|it| {
                it.needs
                    .iter()
                    .all(|k| self.emitted_at(k).is_some_and(|k| signals.0[k]))
            })
        };
        let mut candidates: VecDeque<usize> = (0..n).collect();
        loop {
            while let Some(c) = candidates.pop_front() {
                if !reachable[c] && (waiting_deps[c] == 0 || routed[c]) && needs_met(c, &signals) {
                    let before = signals.1;
                    admit(c, &mut reachable, &mut signals, &mut queue);
                    if signals.1 != before {
                        for key in emitted_keys(&self.plan.nodes[c]) {
                            if let Some(k) = self.emitted_at(key) {
                                candidates.extend(needers[k].iter().copied());
                            }
                        }
                    }
                }
            }
            let Some(u) = queue.pop_front() else { break };
            for &v in &after_succ[u] {
                waiting_deps[v] -= 1;
                candidates.push_back(v);
            }
            for &v in &route_succ[u] {
                routed[v] = true;
                candidates.push_back(v);
            }
        }

        for (i, &is_reachable) in reachable.iter().enumerate() {
            if is_reachable || cyclic[i] || unmet[i] {
                continue;
            }
            let message = format!(
                "{} is unreachable: no wave and no route can dispatch it.",
                self.name(i)
            );
            let d = self.about(Diagnostic::error(Code::Unreachable, message), &[i]);
            out.push(self.at_node(d, i));
        }
    }
}
