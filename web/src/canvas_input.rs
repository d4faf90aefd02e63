//! The canvas's pointer input: presses, drags, pinches, the wheel and
//! double clicks turned into view changes, selections and edits (what a
//! drag means is the pure `gesture`).

use crate::canvas_keys::toggle_breakpoint;
use crate::canvas_view::{screen_point, Surface};
use crate::commands;
use crate::geometry::minimap_place;
use crate::geometry::{Hit, Scene, Viewport};
use crate::gesture::{Gesture, Outcome};
use crate::render::{minimap_to_world, Preview};
use crate::state::{AppState, Dialog, Selection};
use leptos::prelude::*;
use planvault_layout::Point;
use web_sys::{PointerEvent, WheelEvent};

impl Surface {
    /// The world point under `screen` and what is drawn there.
    pub fn hit_at(self, screen: Point) -> (Point, Hit) {
        let state = self.state;
        let v = state.viewport.get_untracked();
        let world = v.to_world(screen);
        let hit = state
            .open
            .with_untracked(|o| o.as_ref().map(|o| o.scene.hit(world, v.zoom)))
            .unwrap_or(Hit::Empty);
        (world, hit)
    }

    /// A press: a pinch's second finger, the minimap, or a gesture begins.
    pub fn pointer_down(self, ev: PointerEvent) {
        let Surface {
            state,
            canvas: canvas_ref,
            input,
            pointer,
        } = self;
        let hit_at = move |screen| self.hit_at(screen);
        let screen = screen_point(&ev);
        if let Some(canvas) = canvas_ref.get_untracked() {
            let _ = canvas.focus();
            let _ = canvas.set_pointer_capture(ev.pointer_id());
        }
        input.update_value(|i| {
            i.pointers.insert(ev.pointer_id(), screen);
        });
        if input.with_value(|i| i.pointers.len()) == 2 {
            // A second finger: pinch zoom replaces whatever the first began.
            let d = input.with_value(|i| {
                let p: Vec<Point> = i.pointers.values().copied().collect();
                crate::geometry::distance(p[0], p[1])
            });
            input.update_value(|i| {
                i.gesture = None;
                i.pinch = Some(d);
            });
            pointer.preview.set(Preview::None);
            pointer.dragging.set(None);
            return;
        }
        let v = state.viewport.get_untracked();
        let map = state
            .open
            .with_untracked(|o| o.as_ref().and_then(|o| minimap_at(state, &o.scene, &v)));
        if let Some(map) = map.filter(|m| crate::geometry::contains(m, screen)) {
            input.update_value(|i| i.on_minimap = Some(map));
            center_on_minimap(state, map, screen);
            return;
        }
        let (world, hit) = hit_at(screen);
        let additive = ev.shift_key() || ev.ctrl_key() || ev.meta_key();
        let loads = state.loads.get_value();
        input.update_value(|i| {
            i.gesture = Some(Gesture::press(hit, screen, world, additive));
            i.gesture_loads = loads;
        });
    }

    /// A move: pinch zoom, the minimap, a drag under way, or hover.
    pub fn pointer_move(self, ev: PointerEvent) {
        let Surface {
            state,
            canvas: canvas_ref,
            input,
            pointer,
        } = self;
        let hit_at = move |screen| self.hit_at(screen);
        let screen = screen_point(&ev);
        if let Some(map) = input.with_value(|i| i.on_minimap) {
            center_on_minimap(state, map, screen);
            return;
        }
        if let Some(start) = input.with_value(|i| i.pinch) {
            input.update_value(|i| {
                i.pointers.insert(ev.pointer_id(), screen);
            });
            let (d, mid) = input.with_value(|i| {
                let p: Vec<Point> = i.pointers.values().copied().collect();
                (
                    crate::geometry::distance(p[0], p[1]),
                    Point {
                        x: (p[0].x + p[1].x) / 2.0,
                        y: (p[0].y + p[1].y) / 2.0,
                    },
                )
            });
            if start > 0.0 && d > 0.0 {
                state.viewport.update(|v| v.zoom_at(mid, d / start));
                input.update_value(|i| i.pinch = Some(d));
            }
            return;
        }
        let (world, hit) = hit_at(screen);
        let Some(mut gesture) = input.with_value(|i| i.gesture.clone()) else {
            // Hover: show the handle of the card under the pointer.
            let hovered = match hit {
                Hit::Node(i) | Hit::Handle(i) | Hit::Breakpoint(i) => Some(i),
                _ => None,
            };
            if pointer.hovered.get_untracked() != hovered {
                pointer.hovered.set(hovered);
            }
            if let Some(canvas) = canvas_ref.get_untracked() {
                let cursor = match hit {
                    Hit::Handle(_) | Hit::EdgeHead(_) => "crosshair",
                    Hit::Node(_) => "move",
                    Hit::Edge(_) | Hit::Label(_) | Hit::Breakpoint(_) => "pointer",
                    Hit::Empty => "grab",
                };
                let _ = web_sys::HtmlElement::style(&canvas).set_property("cursor", cursor);
            }
            return;
        };
        let selected = state.open.with_untracked(|o| {
            o.as_ref()
                .map(|o| state.selection.with_untracked(|s| s.node_indices(&o.doc)))
                .unwrap_or_default()
        });
        if let Some((dx, dy)) = gesture.drag(screen, world, &selected) {
            state.viewport.update(|v| v.pan_by_screen(dx, dy));
        }
        let target = match hit {
            Hit::Node(i) | Hit::Handle(i) => Some(i),
            _ => None,
        };
        match &gesture {
            Gesture::MovingNodes { nodes, delta, .. } => {
                pointer.dragging.set(Some((nodes.clone(), *delta)))
            }
            Gesture::Connecting { from, to } => pointer.preview.set(Preview::Connect {
                from: *from,
                to: *to,
                target,
            }),
            Gesture::Retargeting { edge, to } => pointer.preview.set(Preview::Retarget {
                edge: *edge,
                to: *to,
                target,
            }),
            Gesture::Marquee { from, to, .. } => pointer
                .preview
                .set(Preview::Marquee(crate::geometry::rect_between(*from, *to))),
            _ => {}
        }
        input.update_value(|i| i.gesture = Some(gesture));
    }

    /// A release: what the gesture meant (`handle_outcome`).
    pub fn pointer_up(self, ev: PointerEvent) {
        let Surface {
            state,
            input,
            pointer,
            ..
        } = self;
        let hit_at = move |screen| self.hit_at(screen);
        let screen = screen_point(&ev);
        input.update_value(|i| {
            i.pointers.remove(&ev.pointer_id());
            if i.pointers.len() < 2 {
                i.pinch = None;
            }
        });
        if input.with_value(|i| i.on_minimap.is_some()) {
            input.update_value(|i| i.on_minimap = None);
            return;
        }
        let Some(gesture) = input.try_update_value(|i| i.gesture.take()).flatten() else {
            return;
        };
        let (_, hit) = hit_at(screen);
        pointer.preview.set(Preview::None);
        pointer.dragging.set(None);
        let additive = ev.shift_key() || ev.ctrl_key() || ev.meta_key();
        let outcome = gesture.release(hit);
        // The notes were read again from disk during the drag: the cards it
        // began on may be other notes now.
        let reread = input.with_value(|i| i.gesture_loads) != state.loads.get_value();
        if reread
            && matches!(
                outcome,
                Outcome::Move { .. } | Outcome::Connect { .. } | Outcome::Retarget { .. }
            )
        {
            state.message.set(
                "The notes changed on disk during the drag, so it did nothing; drag again".into(),
            );
            return;
        }
        handle_outcome(state, outcome, additive);
    }

    /// The browser took the pointer: nothing happens.
    pub fn pointer_cancel(self, ev: PointerEvent) {
        let Surface { input, pointer, .. } = self;
        input.update_value(|i| {
            i.pointers.remove(&ev.pointer_id());
            i.gesture = None;
            i.pinch = None;
            i.on_minimap = None;
        });
        pointer.preview.set(Preview::None);
        pointer.dragging.set(None);
    }

    /// Rename a card, relabel an edge, or add a node where it was clicked.
    pub fn double_click(self, ev: web_sys::MouseEvent) {
        let Surface { state, .. } = self;
        let hit_at = move |screen| self.hit_at(screen);
        let (world, hit) = hit_at(screen_point(&ev));
        let Some(dialog) = state.with_doc(|doc| match hit {
            Hit::Label(e) | Hit::Edge(e) | Hit::EdgeHead(e) => Some(Dialog::Relabel {
                edge: Selection::edge_key(doc, e)?,
                current: doc.checked.plan.edges[e].label.clone().unwrap_or_default(),
            }),
            // Two clicks on a breakpoint dot toggle it twice; no dialog.
            Hit::Breakpoint(_) => None,
            Hit::Node(i) | Hit::Handle(i) => Some(Dialog::Rename {
                node: doc.checked.plan.nodes[i].id.clone(),
                current: crate::doc::basename(&doc.checked.plan.nodes[i].id).to_string(),
            }),
            Hit::Empty => Some(Dialog::NewNode {
                at: Point {
                    x: world.x - 110.0,
                    y: world.y - 38.0,
                },
            }),
        }) else {
            return;
        };
        state.dialog.set(dialog);
    }

    /// Zoom at the pointer (Shift: pan).
    pub fn wheel(self, ev: WheelEvent) {
        let Surface { state, .. } = self;
        ev.prevent_default();
        let screen = screen_point(&ev);
        if ev.shift_key() {
            state
                .viewport
                .update(|v| v.pan_by_screen(-ev.delta_x() - ev.delta_y(), 0.0));
            return;
        }
        // Trackpad pinches arrive as wheel events with Ctrl held and small deltas.
        let scale = if ev.ctrl_key() { 0.01 } else { 0.0015 };
        let factor = (-ev.delta_y() * scale).exp();
        state.viewport.update(|v| v.zoom_at(screen, factor));
    }
}

/// Where the minimap is drawn now, if it is shown at all.
pub(crate) fn minimap_at(
    state: AppState,
    scene: &Scene,
    v: &Viewport,
) -> Option<planvault_layout::Rect> {
    if !state.minimap.get_untracked() {
        return None;
    }
    minimap_place(scene, v)
}

fn center_on_minimap(state: AppState, map: planvault_layout::Rect, screen: Point) {
    let Some(world) = state.open.with_untracked(|o| {
        o.as_ref()
            .map(|o| minimap_to_world(&o.scene, &state.viewport.get_untracked(), map, screen))
    }) else {
        return;
    };
    state.viewport.update(|v| {
        v.offset = Point {
            x: world.x - v.width / 2.0 / v.zoom,
            y: world.y - v.height / 2.0 / v.zoom,
        };
    });
}

fn handle_outcome(state: AppState, outcome: Outcome, additive: bool) {
    match outcome {
        Outcome::Nothing => {}
        Outcome::Click {
            hit: Hit::Breakpoint(i),
            ..
        } => {
            if let Some(id) = state.with_doc(|doc| doc.checked.plan.nodes[i].id.clone()) {
                toggle_breakpoint(state, &id);
            }
        }
        Outcome::Click { hit, .. } => {
            let Some(selection) = state.with_doc(|doc| {
                let mut s = state.selection.get_untracked();
                match hit {
                    Hit::Node(i) | Hit::Handle(i) => {
                        let id = doc.checked.plan.nodes[i].id.clone();
                        if additive {
                            if let Some(at) = s.nodes.iter().position(|n| *n == id) {
                                s.nodes.remove(at);
                            } else {
                                s.nodes.push(id.clone());
                            }
                            s.edge = None;
                            s.focus = Some(id);
                            s
                        } else {
                            Selection::single_node(doc, i)
                        }
                    }
                    Hit::Edge(e) | Hit::Label(e) | Hit::EdgeHead(e) => Selection {
                        nodes: Vec::new(),
                        edge: Selection::edge_key(doc, e),
                        focus: s.focus,
                    },
                    Hit::Empty if additive => s,
                    // Handled above: a click there toggles the breakpoint.
                    Hit::Breakpoint(_) => s,
                    Hit::Empty => Selection::default(),
                }
            }) else {
                return;
            };
            // A card or edge clicked shows its selection in the side panel,
            // also over the run (the Run tab says while a run goes on).
            let picked = !matches!(hit, Hit::Empty | Hit::Breakpoint(_));
            if picked && state.run.panel_open.get_untracked() {
                state.run.panel_open.set(false);
            }
            state.selection.set(selection);
        }
        Outcome::Move { nodes, delta } => {
            let moves: Option<Vec<(usize, Point)>> = state.open.with_untracked(|o| {
                o.as_ref().map(|o| {
                    nodes
                        .iter()
                        .map(|&i| {
                            (
                                i,
                                Point {
                                    x: o.scene.nodes[i].x + delta.x,
                                    y: o.scene.nodes[i].y + delta.y,
                                },
                            )
                        })
                        .collect()
                })
            });
            if let Some(moves) = moves {
                crate::on_demand::edit_canvas(state, crate::on_demand::CanvasEdit::Move(moves));
            }
        }
        Outcome::Connect { from, to } => {
            let ids = state.with_doc(|doc| {
                let id = |i: usize| doc.checked.plan.nodes[i].id.clone();
                (id(from), id(to))
            });
            if let Some((from, to)) = ids {
                state.dialog.set(Some(Dialog::NewEdge { from, to }));
            }
        }
        Outcome::Retarget { edge, to } => {
            state.run(|doc| commands::retarget_edge(doc, edge, to));
        }
        Outcome::Select { area, additive } => {
            let Some(ids) = state.open.with_untracked(|o| {
                o.as_ref().map(|o| {
                    o.scene
                        .nodes_in(area)
                        .map(|i| o.doc.checked.plan.nodes[i].id.clone())
                        .collect::<Vec<_>>()
                })
            }) else {
                return;
            };
            state.selection.update(|s| {
                if !additive {
                    s.nodes.clear();
                }
                for id in ids {
                    if !s.nodes.contains(&id) {
                        s.nodes.push(id);
                    }
                }
                s.edge = None;
            });
        }
    }
}
