//! The plan canvas: one `<canvas>` drawn with the 2D context, pointer and
//! keyboard input turned into selections, view changes and edits.

use crate::canvas_input::minimap_at;
use crate::geometry::{Scene, Viewport};
use crate::gesture::Gesture;
use crate::render::{self, Frame, Overview, Preview, RunFrame};
use crate::run::{Overlay, Phase};
use crate::state::{AppState, Open};
use leptos::html::Canvas;
use leptos::prelude::*;
use planvault_layout::Point;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Pointer input state that changes at pointer rate (not reactive).
#[derive(Default)]
pub struct Input {
    pub gesture: Option<Gesture>,
    /// [`crate::state::AppState::loads`] when the gesture began.
    pub gesture_loads: u64,
    /// Active pointers (for pinch zoom): id → screen point.
    pub pointers: BTreeMap<i32, Point>,
    pub pinch: Option<f64>,
    /// Where the minimap was when a press on it began (it stays there
    /// while the press drags the view).
    pub on_minimap: Option<planvault_layout::Rect>,
    pub frame_requested: bool,
    /// The run's hop being animated: its number and when it began (ms).
    pub hop_seq: u32,
    pub hop_start: f64,
    /// How many hops have been animated (for the tests).
    pub animations: u32,
}

/// What a gesture in progress draws before anything is written: the card
/// under the pointer, the edge being drawn or retargeted, the cards being
/// dragged. The canvas's own signals, so no other component redraws for
/// them.
#[derive(Clone, Copy)]
pub struct Pointer {
    pub preview: RwSignal<Preview>,
    pub hovered: RwSignal<Option<usize>>,
    /// Nodes being dragged and by how much (drawn without writing yet).
    pub dragging: RwSignal<Option<(Vec<usize>, Point)>>,
}

/// How long the marker takes along a taken edge.
const HOP_MS: f64 = 700.0;

/// Told about every frame the canvas draws ([`AppState::frame_probe`]).
pub type FrameProbe = std::rc::Rc<dyn Fn(&DrawnFrame<'_>)>;

/// One frame as drawn: for a listener that checks or times the drawing
/// (the end-to-end tests' hook), never needed to draw it.
pub struct DrawnFrame<'a> {
    /// How long the drawing took, in milliseconds.
    pub took_ms: f64,
    /// What was drawn of the open plan (none open: nothing).
    pub plan: Option<DrawnPlan<'a>>,
}

/// The open plan's part of a [`DrawnFrame`].
pub struct DrawnPlan<'a> {
    pub open: &'a Open,
    pub overlay: &'a Overlay,
    /// Node indices with a breakpoint dot.
    pub breakpoints: &'a [usize],
    pub overview: &'a Overview,
    pub minimap: Option<planvault_layout::Rect>,
    /// A hop marker is moving; how many hops have been animated so far.
    pub animating: bool,
    pub animations: u32,
}

// `offsetX` is an `f64` under `web_sys_unstable_apis` (our builds) and an
// `i32` without it: the cast keeps both compiling.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn screen_point(ev: &web_sys::MouseEvent) -> Point {
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
fn draw(surface: Surface, canvas: &HtmlCanvasElement) -> bool {
    let Surface {
        state,
        input,
        pointer,
        ..
    } = surface;
    let Some(ctx) = context(canvas) else {
        return false;
    };
    let probe = state.frame_probe.get_value();
    let started = if probe.is_some() { now() } else { 0.0 };
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let viewport = state.viewport.get_untracked();
    let preview = pointer.preview.get_untracked();
    let dragging = pointer.dragging.get_untracked();
    let selection = state.selection.get_untracked();
    let hovered = pointer.hovered.get_untracked();
    let breakpoint_ids = state.run.breakpoints.get_untracked();
    let (mut animating, mut drew_plan) = (false, false);
    state.open.with_untracked(|open| {
        let Some(open) = open else { return };
        drew_plan = true;
        let moved_scene;
        let scene = match &dragging {
            Some((nodes, delta)) => {
                moved_scene = Scene::build(&open.doc, nodes, *delta);
                &moved_scene
            }
            None => &open.scene,
        };
        let selected = selection.node_indices(&open.doc);
        let focused = selection
            .focus
            .as_ref()
            .and_then(|id| open.doc.node_index(id));
        let (overlay, live) = state
            .run
            .view
            .with_untracked(|v| (v.overlay(&open.doc), v.phase != Phase::Idle));
        let breakpoints: Vec<usize> = breakpoint_ids
            .iter()
            .filter_map(|id| open.doc.node_index(id))
            .collect();
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
        let minimap = minimap_at(state, scene, &viewport);
        let overview = render::draw(
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
                minimap,
                landmarks: &open.landmarks,
                groups: &open.groups,
                run: RunFrame {
                    overlay: live.then_some(&overlay),
                    breakpoints: &breakpoints,
                    hop_progress,
                },
            },
        );
        if let Some(probe) = &probe {
            probe(&DrawnFrame {
                took_ms: now() - started,
                plan: Some(DrawnPlan {
                    open,
                    overlay: &overlay,
                    breakpoints: &breakpoints,
                    overview: &overview,
                    minimap,
                    animating,
                    animations: input.with_value(|i| i.animations),
                }),
            });
        }
    });
    if let Some(probe) = probe.filter(|_| !drew_plan) {
        probe(&DrawnFrame {
            took_ms: now() - started,
            plan: None,
        });
    }
    animating
}

/// Asks for one redraw at the next animation frame (coalesced), and keeps
/// asking while a hop animates.
fn schedule(surface: Surface) {
    let input = surface.input;
    if input.with_value(|i| i.frame_requested) {
        return;
    }
    input.update_value(|i| i.frame_requested = true);
    let callback = Closure::once_into_js(move || {
        input.update_value(|i| i.frame_requested = false);
        if let Some(canvas) = surface.canvas.get_untracked() {
            if draw(surface, &canvas) {
                schedule(surface);
            }
        }
    });
    if let Some(w) = web_sys::window() {
        let _ = w.request_animation_frame(callback.unchecked_ref());
    }
}

/// The canvas, its state and its pointer input: what the input handlers
/// (`canvas_input`, `canvas_keys`) work on.
#[derive(Clone, Copy)]
pub struct Surface {
    pub state: AppState,
    pub canvas: NodeRef<Canvas>,
    pub input: StoredValue<Input, LocalStorage>,
    pub pointer: Pointer,
}

#[component]
pub fn PlanCanvas() -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas_ref = NodeRef::<Canvas>::new();
    let input = StoredValue::new_local(Input::default());
    let pointer = Pointer {
        preview: RwSignal::new(Preview::None),
        hovered: RwSignal::new(None),
        dragging: RwSignal::new(None),
    };
    let surface = Surface {
        state,
        canvas: canvas_ref,
        input,
        pointer,
    };

    // Coalesce redraws into one per animation frame.
    let request_frame = move || schedule(surface);

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
        pointer.preview.track();
        pointer.hovered.track();
        pointer.dragging.track();
        state.minimap.track();
        request_frame();
    });
    Effect::new(move |_| {
        if overlay_changed() {
            request_frame();
        }
    });

    // Keep the canvas's backing store the size it is shown at.
    canvas_ref.on_load(move |canvas| {
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
                    state.fit();
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
            on:pointerdown=move |ev| surface.pointer_down(ev)
            on:pointermove=move |ev| surface.pointer_move(ev)
            on:pointerup=move |ev| surface.pointer_up(ev)
            on:pointercancel=move |ev| surface.pointer_cancel(ev)
            on:dblclick=move |ev| surface.double_click(ev)
            on:wheel=move |ev| surface.wheel(ev)
            on:keydown=move |ev| surface.key(ev)
        ></canvas>
    }
}
