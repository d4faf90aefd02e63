//! The plan canvas: one `<canvas>` drawn with the 2D context, pointer and
//! keyboard input turned into selections, view changes and edits.

use crate::commands;
use crate::geometry::minimap_place;
use crate::geometry::{Hit, Scene, Viewport};
use crate::gesture::{Gesture, Outcome};
use crate::render::{self, minimap_to_world, Frame, Preview, RunFrame};
use crate::run::Phase;
use crate::state::{AppState, Dialog, Pick, Selection};
use leptos::html::Canvas;
use leptos::prelude::*;
use planvault_layout::Point;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    CanvasRenderingContext2d, HtmlCanvasElement, KeyboardEvent, PointerEvent, WheelEvent,
};

/// Pointer input state that changes at pointer rate (not reactive).
#[derive(Default)]
struct Input {
    gesture: Option<Gesture>,
    /// Active pointers (for pinch zoom): id → screen point.
    pointers: BTreeMap<i32, Point>,
    pinch: Option<f64>,
    /// Where the minimap was when a press on it began (it stays there
    /// while the press drags the view).
    on_minimap: Option<planvault_layout::Rect>,
    frame_requested: bool,
    /// The run's hop being animated: its number and when it began (ms).
    hop_seq: u32,
    hop_start: f64,
    /// How many hops have been animated (for the tests).
    animations: u32,
}

/// How long the marker takes along a taken edge.
const HOP_MS: f64 = 700.0;

// `offsetX` is an `f64` under `web_sys_unstable_apis` (our builds) and an
// `i32` without it: the cast keeps both compiling.
#[allow(clippy::unnecessary_cast)]
fn screen_point(ev: &web_sys::MouseEvent) -> Point {
    Point {
        x: ev.offset_x() as f64,
        y: ev.offset_y() as f64,
    }
}

fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok().flatten()?.dyn_into().ok()
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Draws the current state once; true while a hop is still animating.
fn draw(
    state: AppState,
    canvas: &HtmlCanvasElement,
    input: StoredValue<Input, LocalStorage>,
) -> bool {
    let Some(ctx) = context(canvas) else {
        return false;
    };
    #[cfg(feature = "e2e")]
    let started = now();
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let viewport = state.viewport.get_untracked();
    let preview = state.preview.get_untracked();
    let dragging = state.dragging.get_untracked();
    let selection = state.selection.get_untracked();
    let hovered = state.hovered.get_untracked();
    let breakpoint_ids = state.run.breakpoints.get_untracked();
    let mut animating = false;
    state.open.with_untracked(|open| {
        let Some(open) = open else { return };
        let moved_scene;
        let scene = match &dragging {
            Some((nodes, delta)) => {
                moved_scene = Scene::build(&open.doc, nodes, *delta);
                &moved_scene
            }
            None => &open.scene,
        };
        let selected = selection.node_indices(&open.doc);
        let focused = selection.focus.as_ref().and_then(|id| open.doc.node_index(id));
        let (overlay, live) = state.run.view.with_untracked(|v| (v.overlay(&open.doc), v.phase != Phase::Idle));
        let breakpoints: Vec<usize> = breakpoint_ids.iter().filter_map(|id| open.doc.node_index(id)).collect();
        // A new hop restarts the marker; it runs for HOP_MS.
        let hop_progress = overlay.hop.and_then(|(_, seq)| {
            let t = now();
            input.update_value(|i| {
                if i.hop_seq != seq {
                    i.hop_seq = seq;
                    i.hop_start = t;
                    i.animations += 1;
                }
            });
            let p = (t - input.with_value(|i| i.hop_start)) / HOP_MS;
            (p < 1.0).then_some(p.max(0.0))
        });
        animating = hop_progress.is_some();
        let _titles = render::draw(
            &ctx,
            &Frame {
                scene,
                cards: &open.cards,
                viewport,
                selected: &selected,
                selected_edge: selection.edge_index(&open.doc),
                focused,
                hovered,
                preview: &preview,
                device_pixel_ratio: dpr,
                flagged_edges: &open.flagged_edges,
                minimap: minimap_at(state, scene, &viewport),
                landmarks: &open.landmarks,
                run: RunFrame { overlay: live.then_some(&overlay), breakpoints: &breakpoints, hop_progress },
            },
        );
        // What was drawn, by id, for the end-to-end tests.
        #[cfg(feature = "e2e")]
        {
            let plan = &open.doc.checked.plan;
            let id = |i: usize| plan.nodes[i].id.clone();
            let drawn = serde_json::json!({
                "active": overlay.active.map(id),
                "asking": overlay.asking.map(id),
                "visits": overlay.visits.iter().enumerate().filter(|(_, n)| **n > 0)
                    .map(|(i, n)| (id(i), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
                "hop": overlay.hop.map(|(e, seq)| {
                    let edge = &plan.edges[e];
                    serde_json::json!({ "from": id(edge.from), "to": edge.to.map(id), "label": edge.label, "seq": seq })
                }),
                "stopped": overlay.stopped,
                "breakpoints": breakpoints.iter().map(|&i| id(i)).collect::<Vec<_>>(),
                "animating": animating,
                "animations": input.with_value(|i| i.animations),
                "overviewTitles": _titles.len(),
                "overviewTitled": _titles.iter().map(|&i| id(i)).collect::<Vec<_>>(),
                "minimap": minimap_at(state, scene, &viewport).map(|m| serde_json::json!({
                    "x": m.x, "y": m.y, "width": m.width, "height": m.height,
                })),
            });
            state.run.drawn.set_value(drawn);
        }
    });
    // Draw times for the canvas benchmark (tests/e2e, BENCHMARKS.md).
    #[cfg(feature = "e2e")]
    {
        let took = now() - started;
        state.frame_times.update_value(|t| {
            t.push(took);
            if t.len() > 5000 {
                t.drain(..1000);
            }
        });
    }
    animating
}

/// Asks for one redraw at the next animation frame (coalesced), and keeps
/// asking while a hop animates.
fn schedule(state: AppState, canvas_ref: NodeRef<Canvas>, input: StoredValue<Input, LocalStorage>) {
    if input.with_value(|i| i.frame_requested) {
        return;
    }
    input.update_value(|i| i.frame_requested = true);
    let callback = Closure::once_into_js(move || {
        input.update_value(|i| i.frame_requested = false);
        if let Some(canvas) = canvas_ref.get_untracked() {
            if draw(state, &canvas, input) {
                schedule(state, canvas_ref, input);
            }
        }
    });
    if let Some(w) = web_sys::window() {
        let _ = w.request_animation_frame(callback.unchecked_ref());
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

#[component]
pub fn PlanCanvas(state: AppState) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    let input = StoredValue::new_local(Input::default());

    // Coalesce redraws into one per animation frame.
    let request_frame = move || schedule(state, canvas_ref, input);

    // What the run shows, compared with what was last drawn for, so
    // streamed tokens do not redraw the canvas but every change of the
    // overlay does. An effect reading the run's signals itself: with a
    // Memo of the overlay tracked beside `open`, a run's finish (the "Run
    // completed" banner) was at times not drawn until the view moved
    // (run.test.mjs's manual run, under load).
    let last_overlay = StoredValue::new_local(None::<crate::run::Overlay>);
    let overlay_changed = move || {
        let now = state.open.with(|o| {
            o.as_ref()
                .map(|o| state.run.view.with(|v| v.overlay(&o.doc)))
        });
        let changed = last_overlay.with_value(|last| *last != now);
        if changed {
            last_overlay.set_value(now);
        }
        changed
    };

    // Redraw whenever anything drawn changes (the theme's colours too).
    let theme = use_context::<crate::appearance::ThemeState>();
    Effect::new(move |_| {
        if let Some(t) = theme {
            t.shown.track();
        }
        state.run.breakpoints.track();
        state.open.track();
        state.viewport.track();
        state.selection.track();
        state.preview.track();
        state.hovered.track();
        state.dragging.track();
        state.minimap.track();
        request_frame();
    });
    Effect::new(move |_| {
        if overlay_changed() {
            request_frame();
        }
    });

    // Fit the view when a vault is opened (and on request).
    Effect::new(move |_| {
        state.fit_requested.track();
        let bounds = state
            .open
            .with_untracked(|o| o.as_ref().map(|o| o.scene.bounds));
        if let Some(bounds) = bounds {
            state.viewport.update(|v| v.fit(bounds, 40.0));
        }
    });

    // Keep the canvas's backing store the size it is shown at.
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let resize = {
            let canvas = canvas.clone();
            move || {
                let rect = canvas.get_bounding_client_rect();
                let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
                let (w, h) = (rect.width().max(1.0), rect.height().max(1.0));
                canvas.set_width((w * dpr).round() as u32);
                canvas.set_height((h * dpr).round() as u32);
                let first = state
                    .viewport
                    .with_untracked(|v| v.width == Viewport::default().width);
                state.viewport.update(|v| {
                    v.width = w;
                    v.height = h;
                });
                if first {
                    state.fit_requested.update(|n| *n += 1);
                }
                request_frame();
            }
        };
        resize();
        let observer_callback = Closure::<dyn FnMut()>::new(resize);
        if let Ok(observer) =
            web_sys::ResizeObserver::new(observer_callback.as_ref().unchecked_ref())
        {
            observer.observe(&canvas);
            std::mem::forget(observer);
        }
        observer_callback.forget();
    });

    let hit_at = move |screen: Point| -> (Point, Hit) {
        let v = state.viewport.get_untracked();
        let world = v.to_world(screen);
        let hit = state
            .open
            .with_untracked(|o| o.as_ref().map(|o| o.scene.hit(world, v.zoom)))
            .unwrap_or(Hit::Empty);
        (world, hit)
    };

    let on_pointer_down = move |ev: PointerEvent| {
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
            state.preview.set(Preview::None);
            state.dragging.set(None);
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
        input.update_value(|i| i.gesture = Some(Gesture::press(hit, screen, world, additive)));
    };

    let on_pointer_move = move |ev: PointerEvent| {
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
            if state.hovered.get_untracked() != hovered {
                state.hovered.set(hovered);
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
                state.dragging.set(Some((nodes.clone(), *delta)))
            }
            Gesture::Connecting { from, to } => state.preview.set(Preview::Connect {
                from: *from,
                to: *to,
                target,
            }),
            Gesture::Retargeting { edge, to } => state.preview.set(Preview::Retarget {
                edge: *edge,
                to: *to,
                target,
            }),
            Gesture::Marquee { from, to, .. } => state
                .preview
                .set(Preview::Marquee(crate::geometry::rect_between(*from, *to))),
            _ => {}
        }
        input.update_value(|i| i.gesture = Some(gesture));
    };

    let on_pointer_up = move |ev: PointerEvent| {
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
        state.preview.set(Preview::None);
        state.dragging.set(None);
        let additive = ev.shift_key() || ev.ctrl_key() || ev.meta_key();
        handle_outcome(state, gesture.release(hit), additive);
    };

    let on_pointer_cancel = move |ev: PointerEvent| {
        input.update_value(|i| {
            i.pointers.remove(&ev.pointer_id());
            i.gesture = None;
            i.pinch = None;
            i.on_minimap = None;
        });
        state.preview.set(Preview::None);
        state.dragging.set(None);
    };

    let on_double_click = move |ev: web_sys::MouseEvent| {
        let (world, hit) = hit_at(screen_point(&ev));
        let Some(dialog) = state.with_doc(|doc| match hit {
            Hit::Label(e) | Hit::Edge(e) | Hit::EdgeHead(e) => Some(Dialog::Relabel {
                edge: e,
                current: doc.checked.plan.edges[e].label.clone().unwrap_or_default(),
            }),
            // Two clicks on a breakpoint dot toggle it twice; no dialog.
            Hit::Breakpoint(_) => None,
            Hit::Node(i) | Hit::Handle(i) => Some(Dialog::Rename {
                node: i,
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
    };

    let on_wheel = move |ev: WheelEvent| {
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
    };

    let on_key = move |ev: KeyboardEvent| {
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
                state.fit_requested.update(|n| *n += 1);
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
                    s.focus.as_ref().and_then(|id| doc.node_index(id))
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
    };

    view! {
        <canvas
            id="plan-canvas"
            node_ref=canvas_ref
            tabindex="0"
            role="application"
            aria-label="Plan canvas. Arrow keys move between nodes, E adds an edge from the focused node (pick its target), \
                        N cycles through its edges, Ctrl+K or slash goes to a note by name, \
                        B toggles a run breakpoint on the focused node, Delete removes the selection, plus and minus zoom, 0 fits the plan in view. \
                        Drag from the dot on a card's border onto another card to add an edge; click a card's top-left corner to toggle its breakpoint."
            aria-describedby="status"
            on:pointerdown=on_pointer_down
            on:pointermove=on_pointer_move
            on:pointerup=on_pointer_up
            on:pointercancel=on_pointer_cancel
            on:dblclick=on_double_click
            on:wheel=on_wheel
            on:keydown=on_key
        ></canvas>
    }
}

/// Where the minimap is drawn now, if it is shown at all.
fn minimap_at(state: AppState, scene: &Scene, v: &Viewport) -> Option<planvault_layout::Rect> {
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

/// Set or clear a node's run breakpoint and say which.
fn toggle_breakpoint(state: AppState, id: &str) {
    state.run.toggle_breakpoint(id);
    let on = state.run.breakpoints.with_untracked(|b| b.contains(id));
    state.message.set(format!(
        "Breakpoint {} on {id}",
        if on { "set" } else { "removed" }
    ));
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
                if let Some(Some(change)) = state.with_doc(|doc| commands::move_nodes(doc, &moves))
                {
                    state.submit(change, crate::state::Origin::Edit);
                }
            }
        }
        Outcome::Connect { from, to } => state.dialog.set(Some(Dialog::NewEdge { from, to })),
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
        Some(Dialog::Delete { node, incoming })
    });
    if let Some(Some(dialog)) = dialog {
        state.dialog.set(Some(dialog));
    }
}
