//! `planvault graph --ascii`: the plan as a tree for a terminal, walked from
//! the start. Each node is drawn once; a later edge to it reads `↺ id`. A
//! node with a single edge continues at the same indent, so a long chain
//! stays a column rather than a staircase (and a 100,000-note chain prints in
//! linear time). The walk is iterative.

use super::out_degrees;
use crate::{NodeKind, Plan, Status};

struct Tree<'a> {
    plan: &'a Plan,
    degree: Vec<usize>,
    drawn: Vec<bool>,
    out: String,
}

/// One edge waiting to be drawn, under `prefix`.
struct Pending {
    edge: usize,
    prefix: String,
    last: bool,
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
    fn push_edges(&self, edges: &[usize], prefix: &str, stack: &mut Vec<Pending>) {
        for (i, &edge) in edges.iter().enumerate().rev() {
            stack.push(Pending {
                edge,
                prefix: prefix.to_string(),
                last: i + 1 == edges.len(),
            });
        }
    }

    /// Draw `root` and everything reachable from it not drawn yet.
    #[cfg_attr(planvault_size, optimize(size))]
    fn draw_from(&mut self, root: usize, by_source: &[Vec<usize>]) {
        self.drawn[root] = true;
        self.out.push_str(&self.describe(root));
        self.out.push('\n');
        let mut stack = Vec::new();
        self.push_edges(&by_source[root], "", &mut stack);
        while let Some(Pending { edge, prefix, last }) = stack.pop() {
            let e = &self.plan.edges[edge];
            let connector = if last { "└─" } else { "├─" };
            let arrow = match &e.label {
                Some(label) => format!("{connector} {label} ─▶ "),
                None => format!("{connector}▶ "),
            };
            self.out.push_str(&prefix);
            self.out.push_str(&arrow);
            match e.to {
                None => self
                    .out
                    .push_str(&format!("✗ [[{}]] (no such note)\n", e.target)),
                Some(to) if self.drawn[to] => self
                    .out
                    .push_str(&format!("↺ {}\n", self.plan.nodes[to].id)),
                Some(to) => {
                    self.drawn[to] = true;
                    let line = self.describe(to);
                    self.out.push_str(&line);
                    self.out.push('\n');
                    let child_prefix = if by_source[to].len() <= 1 {
                        prefix.clone()
                    } else if last {
                        format!("{prefix}    ")
                    } else {
                        format!("{prefix}│   ")
                    };
                    self.push_edges(&by_source[to], &child_prefix, &mut stack);
                }
            }
        }
    }
}

#[cfg_attr(planvault_size, optimize(size))]
pub fn ascii(plan: &Plan) -> String {
    let mut by_source = vec![Vec::new(); plan.nodes.len()];
    for (k, edge) in plan.edges.iter().enumerate() {
        by_source[edge.from].push(k);
    }
    let mut tree = Tree {
        plan,
        degree: out_degrees(plan),
        drawn: vec![false; plan.nodes.len()],
        out: String::new(),
    };
    if plan.nodes.is_empty() {
        return "(empty plan)\n".to_string();
    }
    match plan.start {
        Some(start) => tree.draw_from(start, &by_source),
        None => tree.out.push_str("(no start node)\n"),
    }
    let mut header = plan.start.is_some();
    for node in 0..plan.nodes.len() {
        if !tree.drawn[node] {
            if header {
                tree.out.push_str("\nnot reachable from the start:\n");
                header = false;
            }
            tree.draw_from(node, &by_source);
        }
    }
    tree.out
}
