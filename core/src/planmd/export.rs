//! Drawing a PLAN.md plan: `graph --json` in the shape issue 3 fixes,
//! a mermaid flowchart with one node shape per kind (solid arrows for
//! dependencies, dotted labeled arrows for routes, a placeholder for a route
//! target that does not exist), an ASCII listing, and a JSON Canvas.

use super::item;
use crate::export::text_canvas::{self, Arrow, Card};
use crate::{EdgeKind, NodeKind, Plan, Status};
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Serialize)]
struct Graph<'a> {
    format: &'static str,
    nodes: Vec<NodeOut<'a>>,
    edges: Vec<EdgeOut<'a>>,
}

#[derive(Serialize)]
struct NodeOut<'a> {
    id: u32,
    title: &'a str,
    kind: &'static str,
    label: Option<&'a str>,
    command: Option<&'a str>,
    status: &'static str,
    scenarios: &'a [String],
    emits: Vec<Emit<'a>>,
    needs: &'a [String],
}

#[derive(Serialize)]
struct Emit<'a> {
    key: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct EdgeOut<'a> {
    from: u32,
    /// The target index; for a dangling route the index as written, `null`
    /// when the route named none (or no number).
    to: Option<u64>,
    kind: &'static str,
    condition: Option<&'a str>,
}

#[cfg_attr(planvault_size, optimize(size))]
fn index(plan: &Plan, node: usize) -> u32 {
    item(&plan.nodes[node]).map_or(node as u32 + 1, |i| i.index)
}

#[cfg_attr(planvault_size, optimize(size))]
fn status(s: Status) -> &'static str {
    if s == Status::Done {
        "done"
    } else {
        "pending"
    }
}

/// `{"format": "plan-md", "nodes": [...], "edges": [...]}`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn json(plan: &Plan) -> String {
    let empty: &[String] = &[];
    let nodes = plan
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let it = item(n);
            NodeOut {
                id: index(plan, i),
                title: &n.title,
                kind: n.kind.as_str(),
                label: it.and_then(|it| it.label.as_deref()),
                command: it.and_then(|it| it.command.as_deref()),
                status: status(n.status),
                scenarios: it.map_or(empty, |it| &it.scenarios),
                emits: it.map_or_else(Vec::new, |it| {
                    it.emits
                        .iter()
                        .map(|(k, v)| Emit { key: k, value: v })
                        .collect()
                }),
                needs: it.map_or(empty, |it| &it.needs),
            }
        })
        .collect();
    let edges = plan
        .edges
        .iter()
        .map(|e| EdgeOut {
            from: index(plan, e.from),
            to: match e.to {
                Some(t) => Some(index(plan, t) as u64),
                None => super::route_target(&e.target),
            },
            kind: if e.kind == EdgeKind::Route {
                "route"
            } else {
                "after"
            },
            condition: if e.kind == EdgeKind::Route {
                e.label.as_deref()
            } else {
                None
            },
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&Graph {
        format: "plan-md",
        nodes,
        edges,
    })
    .expect("graph serializes");
    out.push('\n');
    out
}

const MAX_SHOWN: usize = 48;

#[cfg_attr(planvault_size, optimize(size))]
fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_SHOWN {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_SHOWN - 1).collect();
    format!("{}…", cut.trim_end())
}

/// `1 · release: Review the diff`.
#[cfg_attr(planvault_size, optimize(size))]
fn caption(plan: &Plan, node: usize) -> String {
    let n = &plan.nodes[node];
    let mut text = format!("{} · ", index(plan, node));
    if let Some(label) = item(n).and_then(|i| i.label.as_deref()) {
        text.push_str(label);
        text.push_str(": ");
    }
    text.push_str(&shorten(&n.title));
    if n.status == Status::Done {
        text.push_str(" ✓");
    }
    text
}

/// Mermaid text inside `"…"`: a double quote is an entity there.
#[cfg_attr(planvault_size, optimize(size))]
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "#quot;"))
}

#[cfg_attr(planvault_size, optimize(size))]
fn shape(kind: NodeKind, text: &str) -> String {
    let q = quoted(text);
    match kind {
        NodeKind::Tool => format!("[[{q}]]"),
        NodeKind::Verify => format!("([{q}])"),
        NodeKind::Gate => format!("{{{{{q}}}}}"),
        NodeKind::Feedback => format!("({q})"),
        NodeKind::Human => format!("{{{q}}}"),
        _ => format!("[{q}]"),
    }
}

/// Edges in drawing order: per item, its routes as written, then its
/// dependencies not already drawn as a route to the same item (a steering
/// node's static successors are reached through its routes).
#[cfg_attr(planvault_size, optimize(size))]
fn drawing_order(plan: &Plan) -> Vec<usize> {
    let mut by_source: Vec<Vec<usize>> = vec![Vec::new(); plan.nodes.len()];
    for (i, e) in plan.edges.iter().enumerate() {
        by_source[e.from].push(i);
    }
    let mut order = Vec::new();
    for edges in by_source {
        let routes: Vec<usize> = edges
            .iter()
            .copied()
            .filter(|&i| plan.edges[i].kind == EdgeKind::Route)
            .collect();
        let routed: Vec<Option<usize>> = routes.iter().map(|&i| plan.edges[i].to).collect();
        order.extend(&routes);
        order.extend(edges.iter().copied().filter(|&i| {
            plan.edges[i].kind != EdgeKind::Route && !routed.contains(&plan.edges[i].to)
        }));
    }
    order
}

/// A mermaid `flowchart TD`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn mermaid(plan: &Plan) -> String {
    let mut out = String::from("flowchart TD\n");
    for i in 0..plan.nodes.len() {
        writeln!(
            out,
            "    n{}{}",
            index(plan, i),
            shape(plan.nodes[i].kind, &caption(plan, i))
        )
        .unwrap();
    }
    let mut placeholders = Vec::new();
    for e in drawing_order(plan) {
        let edge = &plan.edges[e];
        let from = format!("n{}", index(plan, edge.from));
        let to = match edge.to {
            Some(t) => format!("n{}", index(plan, t)),
            None => {
                let id = format!("missing{}", placeholders.len() + 1);
                let text = if edge.target.is_empty() {
                    "no target".to_string()
                } else {
                    format!("{} · does not exist", edge.target)
                };
                placeholders.push(id.clone());
                format!("{id}{}", shape(NodeKind::Work, &text))
            }
        };
        match edge.kind {
            EdgeKind::Route => {
                let label = quoted(edge.label.as_deref().unwrap_or(""));
                writeln!(out, "    {from} -. {label} .-> {to}").unwrap();
            }
            _ => writeln!(out, "    {from} --> {to}").unwrap(),
        }
    }
    if !placeholders.is_empty() {
        out.push_str("    classDef missing stroke-dasharray: 5 5,stroke:#c00\n");
        writeln!(out, "    class {} missing", placeholders.join(",")).unwrap();
    }
    out
}

/// `  [needs a, b · emits k=v]`: the signals an item declares, or nothing.
#[cfg_attr(planvault_size, optimize(size))]
fn signals(node: &crate::Node) -> String {
    let Some(it) = item(node) else {
        return String::new();
    };
    let mut parts = Vec::new();
    if !it.needs.is_empty() {
        parts.push(format!("needs {}", it.needs.join(", ")));
    }
    if !it.emits.is_empty() {
        let emits: Vec<String> = it.emits.iter().map(|(k, v)| format!("{k}={v}")).collect();
        parts.push(format!("emits {}", emits.join(", ")));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("  [{}]", parts.join(" · "))
    }
}

/// One line per item (`[x]` when done, its kind, its dependencies, the
/// signals it needs and emits), its routes indented under it.
#[cfg_attr(planvault_size, optimize(size))]
pub fn ascii(plan: &Plan) -> String {
    let mut out = String::new();
    let width = plan.nodes.len().to_string().len();
    // Dependencies and routes per item, gathered once: the listing stays
    // linear in the plan (a look-up per item over every edge is quadratic).
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); plan.nodes.len()];
    let mut routes_of: Vec<Vec<&crate::Edge>> = vec![Vec::new(); plan.nodes.len()];
    for e in &plan.edges {
        match (e.kind, e.to) {
            (EdgeKind::Route, _) => routes_of[e.from].push(e),
            (EdgeKind::After, Some(to)) => after[to].push(e.from),
            _ => {}
        }
    }
    for i in 0..plan.nodes.len() {
        let n = &plan.nodes[i];
        let mark = if n.status == Status::Done {
            "[x]"
        } else {
            "[ ]"
        };
        let mut kind = n.kind.as_str().to_string();
        if let Some(label) = item(n).and_then(|it| it.label.as_deref()) {
            kind = format!("{kind}:{label}");
        }
        write!(
            out,
            "{:>width$}. {mark} {kind:<9} {}",
            index(plan, i),
            shorten(&n.title)
        )
        .unwrap();
        let deps: Vec<String> = after[i]
            .iter()
            .map(|&from| index(plan, from).to_string())
            .collect();
        if !deps.is_empty() {
            write!(out, "  (after {})", deps.join(", ")).unwrap();
        }
        out.push_str(&signals(n));
        out.push('\n');
        let routes = &routes_of[i];
        for (k, route) in routes.iter().enumerate() {
            let branch = if k + 1 == routes.len() {
                "└─"
            } else {
                "├─"
            };
            let target = match route.to {
                Some(t) => format!("{}", index(plan, t)),
                None if route.target.is_empty() => "(no target)".to_string(),
                None => format!("{} (does not exist)", route.target),
            };
            let pad = " ".repeat(width + 2);
            writeln!(
                out,
                "{pad}{branch} {} → {target}",
                route.label.as_deref().unwrap_or("")
            )
            .unwrap();
        }
    }
    out
}

/// JSON Canvas 1.0: a text card per item, in dependency layers, a red
/// placeholder for each missing route target.
#[cfg_attr(planvault_size, optimize(size))]
pub fn canvas(plan: &Plan) -> String {
    let mut layer = vec![usize::MAX; plan.nodes.len()];
    let waves = crate::generated::waves(plan);
    for (depth, wave) in waves.iter().enumerate() {
        for &node in wave {
            layer[node] = depth;
        }
    }
    let unplaced = waves.len();
    let mut cards: Vec<Card> = (0..plan.nodes.len())
        .map(|i| {
            let n = &plan.nodes[i];
            let mut text = format!("**{} · {}**", index(plan, i), n.kind.as_str());
            if let Some(label) = item(n).and_then(|it| it.label.as_deref()) {
                write!(text, " `{label}`").unwrap();
            }
            write!(text, "\n\n{}", n.title).unwrap();
            for s in item(n)
                .map(|it| it.scenarios.as_slice())
                .unwrap_or_default()
            {
                write!(text, "\n- {s}").unwrap();
            }
            Card {
                id: format!("item-{}", index(plan, i)),
                text,
                layer: if layer[i] == usize::MAX {
                    unplaced
                } else {
                    layer[i]
                },
                color: (n.status == Status::Done).then_some(text_canvas::DONE_COLOR),
            }
        })
        .collect();
    let mut arrows = Vec::new();
    for e in drawing_order(plan) {
        let edge = &plan.edges[e];
        let from = format!("item-{}", index(plan, edge.from));
        let to = match edge.to {
            Some(t) => format!("item-{}", index(plan, t)),
            None => {
                let id = format!("missing-{}", arrows.len() + 1);
                let what = if edge.target.is_empty() {
                    "no target".to_string()
                } else {
                    format!("item {} does not exist", edge.target)
                };
                cards.push(Card {
                    id: id.clone(),
                    text: what,
                    layer: cards[edge.from].layer + 1,
                    color: Some(text_canvas::MISSING_COLOR),
                });
                id
            }
        };
        let label = (edge.kind == EdgeKind::Route).then(|| edge.label.clone().unwrap_or_default());
        arrows.push(Arrow { from, to, label });
    }
    text_canvas::render(cards, arrows)
}
