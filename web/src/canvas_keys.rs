//! The canvas's keyboard: zoom, fit, arrow keys between cards, E for a
//! new edge, N through a card's edges, B for a breakpoint, Delete.

use crate::canvas_view::Surface;
use crate::commands;
use crate::geometry::Scene;
use crate::state::{AppState, Dialog, Pick, Selection};
use leptos::prelude::*;
use planvault_layout::Point;
use web_sys::KeyboardEvent;

impl Surface {
    /// The canvas's keys (its `aria-label` lists them).
    pub fn key(self, ev: KeyboardEvent) {
        let Surface { state, .. } = self;
        let key = ev.key();
        let center = state.viewport.with_untracked(|v| Point {
            x: v.width / 2.0,
            y: v.height / 2.0,
        });
        let handled = match key.as_str() {
            "+" | "=" => {
                state.viewport.update(|v| v.zoom_at(center, 1.2));
                true
            }
            "-" | "_" => {
                state.viewport.update(|v| v.zoom_at(center, 1.0 / 1.2));
                true
            }
            "0" | "f" => {
                state.fit();
                true
            }
            "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight" => {
                let (dx, dy) = match key.as_str() {
                    "ArrowUp" => (0.0, -1.0),
                    "ArrowDown" => (0.0, 1.0),
                    "ArrowLeft" => (-1.0, 0.0),
                    _ => (1.0, 0.0),
                };
                if ev.shift_key() {
                    state
                        .viewport
                        .update(|v| v.pan_by_screen(-dx * 60.0, -dy * 60.0));
                } else {
                    move_focus(state, dx, dy);
                }
                true
            }
            "e" | "E" => {
                // A new edge from the focused card: pick its target.
                let from = state.with_doc(|doc| {
                    let s = state.selection.get_untracked();
                    s.focus.filter(|id| doc.node_index(id).is_some())
                });
                match from.flatten() {
                    Some(from) => state.picker.set(Some(Pick::EdgeFrom(from))),
                    None => state
                        .message
                        .set("Focus a node (arrow keys or a click) to add an edge from it".into()),
                }
                true
            }
            "n" | "N" => {
                cycle_edges(state, ev.shift_key());
                true
            }
            "b" | "B" => {
                // A breakpoint on the focused node (drawn as a red dot on its card).
                match state.selection.with_untracked(|s| s.focus.clone()) {
                    Some(id) => toggle_breakpoint(state, &id),
                    None => state.message.set(
                        "Focus a node (arrow keys or a click) to toggle its breakpoint".into(),
                    ),
                }
                true
            }
            "Escape" => {
                state.selection.set(Selection::default());
                true
            }
            "Delete" | "Backspace" => {
                delete_selected(state);
                true
            }
            "Enter" => {
                // Enter on a focused card selects it (the side panel opens).
                let focus = state.selection.with_untracked(|s| s.focus.clone());
                if let Some(id) = focus {
                    state.selection.update(|s| {
                        s.nodes = vec![id];
                        s.edge = None;
                    });
                }
                true
            }
            _ => false,
        };
        if handled {
            ev.prevent_default();
        }
    }
}

/// The node nearest to `from` in the direction (dx, dy), for arrow keys.
fn neighbour(scene: &Scene, from: usize, dx: f64, dy: f64) -> Option<usize> {
    let c = scene.nodes[from].center();
    scene
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != from)
        .filter_map(|(i, r)| {
            let p = r.center();
            let (vx, vy) = (p.x - c.x, p.y - c.y);
            let along = vx * dx + vy * dy;
            if along <= 1.0 {
                return None;
            }
            let across = (vx * dy - vy * dx).abs();
            Some((along + 2.0 * across, i))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, i)| i)
}

/// Set or clear a node's run breakpoint and say which.
pub(crate) fn toggle_breakpoint(state: AppState, id: &str) {
    state.run.toggle_breakpoint(id);
    let on = state.run.breakpoints.with_untracked(|b| b.contains(id));
    state.message.set(format!(
        "Breakpoint {} on {id}",
        if on { "set" } else { "removed" }
    ));
}

fn move_focus(state: AppState, dx: f64, dy: f64) {
    let next = state.open.with_untracked(|o| {
        let o = o.as_ref()?;
        if o.scene.nodes.is_empty() {
            return None;
        }
        let current = state
            .selection
            .with_untracked(|s| s.focus.as_ref().and_then(|id| o.doc.node_index(id)));
        match current {
            Some(c) => neighbour(&o.scene, c, dx, dy),
            None => Some(o.doc.checked.plan.start.unwrap_or(0)),
        }
    });
    if let Some(n) = next {
        state.focus_node(n);
    }
}

/// Selects the focused node's next (or previous) outgoing edge.
fn cycle_edges(state: AppState, backwards: bool) {
    let next = state.with_doc(|doc| {
        let s = state.selection.get_untracked();
        let node = s.focus.as_ref().and_then(|id| doc.node_index(id))?;
        let edges: Vec<usize> = doc
            .checked
            .plan
            .outgoing_indexed(node)
            .map(|(i, _)| i)
            .collect();
        if edges.is_empty() {
            return None;
        }
        let at = s
            .edge_index(doc)
            .and_then(|e| edges.iter().position(|x| *x == e));
        let i = match (at, backwards) {
            (None, false) => 0,
            (None, true) => edges.len() - 1,
            (Some(a), false) => (a + 1) % edges.len(),
            (Some(a), true) => (a + edges.len() - 1) % edges.len(),
        };
        Some(Selection {
            nodes: Vec::new(),
            edge: Selection::edge_key(doc, edges[i]),
            focus: s.focus.clone(),
        })
    });
    match next.flatten() {
        Some(sel) => state.selection.set(sel),
        None => state.message.set("This node has no outgoing edges".into()),
    }
}

/// Delete: the selected edge goes at once (undoable); a node asks first,
/// listing the edges that point at it.
pub fn delete_selected(state: AppState) {
    let selection = state.selection.get_untracked();
    let edge = state.with_doc(|doc| selection.edge_index(doc)).flatten();
    if let Some(edge) = edge {
        state.run(|doc| commands::remove_edge(doc, edge));
        state.selection.update(|s| s.edge = None);
        return;
    }
    let dialog = state.with_doc(|doc| {
        let node = selection.node_indices(doc).first().copied()?;
        let id = doc.checked.plan.nodes[node].id.clone();
        let incoming = commands::incoming_edges(doc, node)
            .into_iter()
            .map(|e| {
                let edge = &doc.checked.plan.edges[e];
                let from = &doc.checked.plan.nodes[edge.from].id;
                match &edge.label {
                    Some(l) => format!("{from} —{l}→"),
                    None => format!("{from} →"),
                }
            })
            .collect();
        Some(Dialog::Delete { node: id, incoming })
    });
    if let Some(Some(dialog)) = dialog {
        state.dialog.set(Some(dialog));
    }
}
