//! `planvault graph --mermaid`: a `flowchart` GitHub and Obsidian render.

use super::out_degrees;
use crate::Plan;
use std::fmt::Write;

/// Text safe inside a Mermaid `"..."` label.
#[cfg_attr(planvault_size, optimize(size))]
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg_attr(planvault_size, optimize(size))]
pub fn mermaid(plan: &Plan) -> String {
    let degree = out_degrees(plan);
    let mut out = String::from("flowchart TD\n");
    for (i, node) in plan.nodes.iter().enumerate() {
        let label = escape(&node.title);
        // Start: a stadium; terminal: a double circle; steps: boxes.
        let _ = if plan.start == Some(i) {
            writeln!(out, "    n{i}([\"{label}\"])")
        } else if degree[i] == 0 {
            writeln!(out, "    n{i}(((\"{label}\")))")
        } else {
            writeln!(out, "    n{i}[\"{label}\"]")
        };
    }
    for (k, edge) in plan.edges.iter().enumerate() {
        let from = edge.from;
        let arrow = match &edge.label {
            Some(label) => format!("-->|\"{}\"|", escape(label)),
            None => "-->".to_string(),
        };
        let _ = match edge.to {
            Some(to) => writeln!(out, "    n{from} {arrow} n{to}"),
            None => {
                let dashed = match &edge.label {
                    Some(label) => format!("-.->|\"{}\"|", escape(label)),
                    None => "-.->".to_string(),
                };
                writeln!(
                    out,
                    "    missing{k}[/\"missing: {}\"/]\n    n{from} {dashed} missing{k}",
                    escape(&edge.target)
                )
            }
        };
    }
    out
}
