//! `planvault graph --canvas`: a JSON Canvas 1.0 document Obsidian opens
//! next to the notes. File nodes point at the notes; positions come from a
//! simple layered placement (breadth-first depth from the start), integers as
//! the spec requires. A dangling edge's red card takes its own slot in the
//! row below the note it leaves, so no two cards overlap.

use super::node_file;
use super::text_canvas::{Canvas, CanvasEdge, CanvasNode};
use crate::Plan;
use std::collections::VecDeque;

const WIDTH: i64 = 400;
const HEIGHT: i64 = 240;
const GAP_X: i64 = 80;
const GAP_Y: i64 = 120;
/// Canvas colour "4" is green: the start node.
const START_COLOR: &str = "4";
/// Canvas colour "1" is red: a link to no note.
const MISSING_COLOR: &str = "1";

/// Layer of every node: breadth-first depth from the start, then from each
/// node still unplaced (in order), below everything placed so far.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn layers(plan: &Plan) -> Vec<usize> {
    let successors = plan.successors();
    let mut layer = vec![usize::MAX; plan.nodes.len()];
    let roots = plan.start.into_iter().chain(0..plan.nodes.len());
    let mut deepest = 0;
    let mut first_walk = true;
    for root in roots {
        if layer[root] != usize::MAX {
            continue;
        }
        let base = if first_walk { 0 } else { deepest + 1 };
        first_walk = false;
        layer[root] = base;
        let mut queue = VecDeque::from([root]);
        while let Some(node) = queue.pop_front() {
            deepest = deepest.max(layer[node]);
            for &next in &successors[node] {
                if layer[next] == usize::MAX {
                    layer[next] = layer[node] + 1;
                    queue.push_back(next);
                }
            }
        }
    }
    layer
}

#[cfg_attr(planvault_size, optimize(size))]
fn node_key(plan: &Plan, i: usize) -> String {
    format!("node:{}", plan.nodes[i].id)
}

/// A slot in a row of the layout: a note, or the card of a dangling edge.
#[derive(Clone, Copy)]
enum Slot {
    Note(usize),
    Missing(usize),
}

#[cfg_attr(planvault_size, optimize(size))]
pub fn canvas(plan: &Plan) -> String {
    let layer = layers(plan);
    let depth = layer.iter().copied().max().map_or(0, |d| d + 1);
    let mut rows: Vec<Vec<Slot>> = vec![Vec::new(); depth];
    for (i, &l) in layer.iter().enumerate() {
        rows[l].push(Slot::Note(i));
    }
    // A dangling edge's card takes a slot of its own in the row below the
    // note it leaves, after that row's notes: no card sits on another.
    for (k, edge) in plan.edges.iter().enumerate() {
        if edge.to.is_none() {
            let row = layer[edge.from] + 1;
            if rows.len() <= row {
                rows.resize(row + 1, Vec::new());
            }
            rows[row].push(Slot::Missing(k));
        }
    }
    let mut x = vec![0i64; plan.nodes.len()];
    let mut y = vec![0i64; plan.nodes.len()];
    let mut missing_at = vec![(0i64, 0i64); plan.edges.len()];
    for (l, row) in rows.iter().enumerate() {
        let row_width = row.len() as i64 * (WIDTH + GAP_X) - GAP_X;
        for (col, &slot) in row.iter().enumerate() {
            let at = (
                col as i64 * (WIDTH + GAP_X) - row_width / 2,
                l as i64 * (HEIGHT + GAP_Y),
            );
            match slot {
                Slot::Note(i) => (x[i], y[i]) = at,
                Slot::Missing(k) => missing_at[k] = at,
            }
        }
    }
    let mut nodes: Vec<CanvasNode> = (0..plan.nodes.len())
        .map(|i| {
            let file = node_file(plan, i).filter(|f| f.ends_with(".md") || f.ends_with(".MD"));
            CanvasNode {
                id: node_key(plan, i),
                kind: if file.is_some() { "file" } else { "text" },
                text: file
                    .is_none()
                    .then(|| format!("**{}**\n\n{}", plan.nodes[i].title, plan.nodes[i].body)),
                // Named as Obsidian keys the note's path: composed, where
                // macOS may have stored it decomposed.
                file: file.map(|f| crate::vault::links::composed(f).into_owned()),
                x: x[i],
                y: y[i],
                width: WIDTH,
                height: HEIGHT,
                color: (plan.start == Some(i)).then_some(START_COLOR),
            }
        })
        .collect();
    let mut edges = Vec::with_capacity(plan.edges.len());
    for (k, edge) in plan.edges.iter().enumerate() {
        let (to_node, backwards) = match edge.to {
            Some(to) => (node_key(plan, to), layer[to] <= layer[edge.from]),
            None => {
                // A dangling edge ends at a red card naming the missing note.
                let id = format!("missing:{k}");
                let (x, y) = missing_at[k];
                nodes.push(CanvasNode {
                    id: id.clone(),
                    kind: "text",
                    file: None,
                    text: Some(format!("Missing note {}", edge.link_as_written())),
                    x,
                    y,
                    width: WIDTH,
                    height: HEIGHT / 2,
                    color: Some(MISSING_COLOR),
                });
                (id, false)
            }
        };
        // Loops back up run along the right-hand side so they do not cross
        // the forward edges.
        let (from_side, to_side) = if backwards {
            ("right", "right")
        } else {
            ("bottom", "top")
        };
        edges.push(CanvasEdge {
            id: format!("edge:{k}"),
            from_node: node_key(plan, edge.from),
            from_side,
            to_node,
            to_side,
            label: edge.label.clone(),
        });
    }
    serde_json::to_string_pretty(&Canvas { nodes, edges }).expect("canvas serializes")
}
