//! Drawing a generated plan: its JSON (steps, grant, waves), a mermaid
//! flowchart of the dependencies, the waves as ASCII, and a JSON Canvas.

use super::{refs, step, waves};
use crate::export::text_canvas::{self, Arrow, Card};
use crate::model::PreconditionTest;
use crate::{EdgeKind, Plan};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

#[derive(Serialize)]
struct Graph<'a> {
    format: &'static str,
    grant: Vec<&'a str>,
    nodes: Vec<NodeOut<'a>>,
    edges: Vec<EdgeOut<'a>>,
    waves: Vec<Vec<&'a str>>,
}

#[derive(Serialize)]
struct NodeOut<'a> {
    id: &'a str,
    tool: &'a str,
    args: &'a Value,
    preconditions: Vec<PreconditionOut<'a>>,
    status: &'static str,
    rationale: &'a str,
}

#[derive(Serialize)]
struct PreconditionOut<'a> {
    #[serde(rename = "ref")]
    reference: &'a str,
    test: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a Value>,
}

#[derive(Serialize)]
struct EdgeOut<'a> {
    from: &'a str,
    to: Option<&'a str>,
    kind: &'static str,
}

#[cfg_attr(planvault_size, optimize(size))]
fn test_name(test: PreconditionTest) -> &'static str {
    match test {
        PreconditionTest::Exists => "exists",
        PreconditionTest::Truthy => "truthy",
        PreconditionTest::Equals => "equals",
    }
}

/// `{"format": "generated", "grant", "nodes", "edges", "waves"}`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn json(plan: &Plan) -> String {
    let empty = Value::Object(Default::default());
    let nodes = plan
        .nodes
        .iter()
        .map(|n| {
            let s = step(n);
            NodeOut {
                id: &n.id,
                tool: s.map_or("", |s| s.capability.as_str()),
                args: s.map_or(&empty, |s| &s.args),
                preconditions: s.map_or_else(Vec::new, |s| {
                    s.preconditions
                        .iter()
                        .map(|p| PreconditionOut {
                            reference: &p.reference,
                            test: test_name(p.test),
                            value: p.value.as_ref(),
                        })
                        .collect()
                }),
                status: n.status.as_str(),
                rationale: &n.body,
            }
        })
        .collect();
    let edges = plan
        .edges
        .iter()
        .map(|e| EdgeOut {
            from: &plan.nodes[e.from].id,
            to: e.to.map(|t| plan.nodes[t].id.as_str()),
            kind: if e.kind == EdgeKind::After {
                "after"
            } else {
                "route"
            },
        })
        .collect();
    let waves = waves(plan)
        .into_iter()
        .map(|w| w.into_iter().map(|i| plan.nodes[i].id.as_str()).collect())
        .collect();
    let grant = plan.grant.iter().flatten().map(String::as_str).collect();
    let mut out = serde_json::to_string_pretty(&Graph {
        format: "generated",
        grant,
        nodes,
        edges,
        waves,
    })
    .expect("graph serializes");
    out.push('\n');
    out
}

#[cfg_attr(planvault_size, optimize(size))]
fn caption(plan: &Plan, node: usize) -> String {
    let n = &plan.nodes[node];
    let tool = step(n).map_or("", |s| s.capability.as_str());
    format!("{} · {tool}", n.id).replace('"', "#quot;")
}

/// The bindings a step reads, as `name ← step.path` lines.
#[cfg_attr(planvault_size, optimize(size))]
fn bindings(plan: &Plan, node: usize) -> Vec<String> {
    let Some(s) = step(&plan.nodes[node]) else {
        return Vec::new();
    };
    refs::bindings(&s.args)
        .into_iter()
        .map(|b| {
            format!(
                "{} ← {}",
                b.pointer.trim_start_matches('/'),
                b.reference.unwrap_or_else(|| "?".into())
            )
        })
        .collect()
}

/// A mermaid `flowchart TD`: one box per step (`id · tool`), solid arrows
/// from each dependency to the step that waits for it.
#[cfg_attr(planvault_size, optimize(size))]
pub fn mermaid(plan: &Plan) -> String {
    let mut out = String::from("flowchart TD\n");
    for i in 0..plan.nodes.len() {
        writeln!(out, "    s{}[\"{}\"]", i + 1, caption(plan, i)).unwrap();
    }
    for e in &plan.edges {
        if let Some(to) = e.to {
            writeln!(out, "    s{} --> s{}", e.from + 1, to + 1).unwrap();
        }
    }
    out
}

/// The schedule: each wave on its line, each step with its tool, the steps
/// it waits for and the bindings it reads.
#[cfg_attr(planvault_size, optimize(size))]
pub fn ascii(plan: &Plan) -> String {
    let mut out = String::new();
    let waves = waves(plan);
    let mut placed = vec![false; plan.nodes.len()];
    // Each step's dependencies, gathered once (linear, not a scan per step).
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); plan.nodes.len()];
    for e in &plan.edges {
        if let Some(to) = e.to {
            after[to].push(e.from);
        }
    }
    for (w, wave) in waves.iter().enumerate() {
        writeln!(out, "wave {}", w + 1).unwrap();
        for &i in wave {
            placed[i] = true;
            line(plan, i, &after[i], &mut out);
        }
    }
    if placed.iter().any(|p| !p) {
        out.push_str("never scheduled (dependency cycle)\n");
        for i in (0..plan.nodes.len()).filter(|&i| !placed[i]) {
            line(plan, i, &after[i], &mut out);
        }
    }
    out
}

#[cfg_attr(planvault_size, optimize(size))]
fn line(plan: &Plan, i: usize, after: &[usize], out: &mut String) {
    let n = &plan.nodes[i];
    write!(
        out,
        "  {} ({})",
        n.id,
        step(n).map_or("", |s| s.capability.as_str())
    )
    .unwrap();
    let deps: Vec<&str> = after
        .iter()
        .map(|&from| plan.nodes[from].id.as_str())
        .collect();
    if !deps.is_empty() {
        write!(out, "  after {}", deps.join(", ")).unwrap();
    }
    out.push('\n');
    for b in bindings(plan, i) {
        writeln!(out, "      {b}").unwrap();
    }
}

/// JSON Canvas 1.0: a text card per step, one row per wave.
#[cfg_attr(planvault_size, optimize(size))]
pub fn canvas(plan: &Plan) -> String {
    let waves = waves(plan);
    let mut layer = vec![waves.len(); plan.nodes.len()];
    for (depth, wave) in waves.iter().enumerate() {
        for &i in wave {
            layer[i] = depth;
        }
    }
    let cards = (0..plan.nodes.len())
        .map(|i| {
            let n = &plan.nodes[i];
            let mut text = format!(
                "**{}**\n\n`{}`",
                n.id,
                step(n).map_or("", |s| s.capability.as_str())
            );
            for b in bindings(plan, i) {
                write!(text, "\n- {b}").unwrap();
            }
            Card {
                id: format!("step-{}", i + 1),
                text,
                layer: layer[i],
                color: None,
            }
        })
        .collect();
    let arrows = plan
        .edges
        .iter()
        .filter_map(|e| {
            e.to.map(|to| Arrow {
                from: format!("step-{}", e.from + 1),
                to: format!("step-{}", to + 1),
                label: None,
            })
        })
        .collect();
    text_canvas::render(cards, arrows)
}
