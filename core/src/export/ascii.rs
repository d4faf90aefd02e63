//! `planvault graph --ascii`: the plan as a tree for a terminal, walked from
//! the start, as `tree` and `cargo tree` draw one: a node's edges hang under
//! it, one level deeper, so a chain inside a branch stays under its branch.
//!
//! The output is linear in the size of the plan: each node is drawn once,
//! and a later edge to it is one line, `↺ id (see above)`. Indentation is
//! capped at [`MAX_DEPTH`] levels: a node that would be drawn deeper with
//! edges of its own is drawn further down instead, at the left margin
//! (`↓ id (see below)` where it would have been), so no line is longer than
//! the cap's indent plus its own text, however deep or tangled the plan. The
//! walk is iterative (an explicit stack of edges still to draw).

use super::out_degrees;
use crate::{NodeKind, Plan, Status};
use std::collections::VecDeque;

/// Levels of indentation before a subtree moves down to the left margin.
pub(crate) const MAX_DEPTH: usize = 12;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not drawn yet.
    New,
    /// Named above with `↓ … (see below)`; drawn in a later section.
    Below,
    /// Drawn, with its edges under it.
    Drawn,
}

struct Tree<'a> {
    plan: &'a Plan,
    by_source: Vec<Vec<usize>>,
    degree: Vec<usize>,
    state: Vec<State>,
    /// Nodes named `↓ (see below)`, with the node they hang under, in the
    /// order they were named: each starts a section of its own.
    below: VecDeque<(usize, usize)>,
    out: String,
}

/// One edge waiting to be drawn, under `prefix`, at `depth` (the depth of
/// the node it leads to).
struct Pending {
    edge: usize,
    prefix: String,
    last: bool,
    depth: usize,
}

impl Tree<'_> {
    #[cfg_attr(planvault_size, optimize(size))]
    fn describe(&self, node: usize) -> String {
        let n = &self.plan.nodes[node];
        let mut text = n.id.clone();
        let basename = n.id.rsplit('/').next().unwrap_or(&n.id);
        if n.title != basename && n.title != n.id {
            text.push_str(" — ");
            text.push_str(&n.title);
        }
        if self.plan.start == Some(node) || n.kind == NodeKind::Start {
            text.push_str("  [start]");
        }
        if self.degree[node] == 0 {
            text.push_str("  [end]");
        }
        if n.status != Status::Pending {
            text.push_str(&format!("  ({})", n.status.as_str()));
        }
        text
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn push_edges(&self, node: usize, prefix: &str, depth: usize, stack: &mut Vec<Pending>) {
        let edges = &self.by_source[node];
        for (i, &edge) in edges.iter().enumerate().rev() {
            stack.push(Pending {
                edge,
                prefix: prefix.to_string(),
                last: i + 1 == edges.len(),
                depth,
            });
        }
    }

    /// Draw `root` at the left margin and everything under it not drawn yet.
    #[cfg_attr(planvault_size, optimize(size))]
    fn draw_from(&mut self, root: usize, parent: Option<usize>) {
        self.state[root] = State::Drawn;
        self.out.push_str(&self.describe(root));
        if let Some(parent) = parent {
            self.out.push_str("  (continued from ");
            self.out.push_str(&self.plan.nodes[parent].id);
            self.out.push(')');
        }
        self.out.push('\n');
        let mut stack = Vec::new();
        self.push_edges(root, "", 1, &mut stack);
        while let Some(Pending {
            edge,
            prefix,
            last,
            depth,
        }) = stack.pop()
        {
            let e = &self.plan.edges[edge];
            self.out.push_str(&prefix);
            self.out.push_str(if last { "└─" } else { "├─" });
            match &e.label {
                Some(label) => {
                    self.out.push(' ');
                    self.out.push_str(label);
                    self.out.push_str(" ─▶ ");
                }
                None => self.out.push_str("▶ "),
            }
            let Some(to) = e.to else {
                self.out
                    .push_str(&format!("✗ {} (no such note)\n", e.link_as_written()));
                continue;
            };
            let id = &self.plan.nodes[to].id;
            match self.state[to] {
                State::Drawn => self.out.push_str(&format!("↺ {id} (see above)\n")),
                State::Below => self.out.push_str(&format!("↓ {id} (see below)\n")),
                State::New if depth >= MAX_DEPTH && !self.by_source[to].is_empty() => {
                    self.state[to] = State::Below;
                    self.below.push_back((to, e.from));
                    self.out.push_str(&format!("↓ {id} (see below)\n"));
                }
                State::New => {
                    self.state[to] = State::Drawn;
                    let line = self.describe(to);
                    self.out.push_str(&line);
                    self.out.push('\n');
                    let indent = if last { "    " } else { "│   " };
                    let child_prefix = format!("{prefix}{indent}");
                    self.push_edges(to, &child_prefix, depth + 1, &mut stack);
                }
            }
        }
    }

    /// Draw `root`, then every section its deep nodes moved down to.
    #[cfg_attr(planvault_size, optimize(size))]
    fn draw_with_sections(&mut self, root: usize) {
        self.draw_from(root, None);
        while let Some((node, parent)) = self.below.pop_front() {
            self.out.push('\n');
            self.draw_from(node, Some(parent));
        }
    }
}

#[cfg_attr(planvault_size, optimize(size))]
pub fn ascii(plan: &Plan) -> String {
    if plan.nodes.is_empty() {
        return "(empty plan)\n".to_string();
    }
    let mut by_source = vec![Vec::new(); plan.nodes.len()];
    for (k, edge) in plan.edges.iter().enumerate() {
        by_source[edge.from].push(k);
    }
    let mut tree = Tree {
        plan,
        by_source,
        degree: out_degrees(plan),
        state: vec![State::New; plan.nodes.len()],
        below: VecDeque::new(),
        out: String::new(),
    };
    match plan.start {
        Some(start) => tree.draw_with_sections(start),
        None => tree.out.push_str("(no start node)\n"),
    }
    let mut header = plan.start.is_some();
    for node in 0..plan.nodes.len() {
        if tree.state[node] == State::New {
            if header {
                tree.out.push_str("\nnot reachable from the start:\n");
                header = false;
            }
            tree.draw_with_sections(node);
        }
    }
    tree.out
}
