//! The side panel beside the canvas: one pane at a time (the selection or
//! the run), resizable by its left edge (mouse or arrow keys, the width
//! kept in this browser) and collapsible to a strip. It never takes more
//! than 40% of the window, so the plan keeps at least 60% of it.

use crate::on_demand;
use crate::state::AppState;
use leptos::prelude::*;

const WIDTH_KEY: &str = "planvault.panel-width";
const COLLAPSED_KEY: &str = "planvault.panel-collapsed";
const DEFAULT_WIDTH: f64 = 340.0;
const MIN_WIDTH: f64 = 260.0;
/// The most of the window the panel takes.
const MAX_SHARE: f64 = 0.4;
const KEY_STEP: f64 = 24.0;

/// `want` within what a window `window` wide allows.
pub fn clamp_width(want: f64, window: f64) -> f64 {
    let max = (window * MAX_SHARE).floor();
    want.min(max).max(MIN_WIDTH.min(max))
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn window_width() -> f64 {
    web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .unwrap_or(1280.0)
}

// `clientX` is an `f64` under `web_sys_unstable_apis` (our builds) and an
// `i32` without it: the cast keeps both compiling.
#[allow(clippy::unnecessary_cast)]
fn client_x(ev: &web_sys::MouseEvent) -> f64 {
    ev.client_x() as f64
}

/// The panel's width and whether it is collapsed (provided as context;
/// which pane shows is `state.run.panel_open`).
#[derive(Clone, Copy)]
pub struct DockState {
    pub collapsed: RwSignal<bool>,
    pub width: RwSignal<f64>,
}

impl DockState {
    pub fn provide() -> DockState {
        let saved = |key| storage().and_then(|s| s.get_item(key).ok().flatten());
        let width = saved(WIDTH_KEY)
            .and_then(|w| w.parse::<f64>().ok())
            .filter(|w| w.is_finite())
            .unwrap_or(DEFAULT_WIDTH);
        let dock = DockState {
            collapsed: RwSignal::new(saved(COLLAPSED_KEY).as_deref() == Some("1")),
            width: RwSignal::new(width),
        };
        provide_context(dock);
        dock
    }

    pub fn set_collapsed(&self, collapsed: bool) {
        self.collapsed.set(collapsed);
        if let Some(s) = storage() {
            let _ = s.set_item(COLLAPSED_KEY, if collapsed { "1" } else { "0" });
        }
    }

    fn resize(&self, want: f64) {
        self.width.set(clamp_width(want, window_width()));
    }

    fn keep_width(&self) {
        if let Some(s) = storage() {
            let _ = s.set_item(WIDTH_KEY, &self.width.get_untracked().round().to_string());
        }
    }

    /// The toolbar's Run…: the run panel, or back to the selection when
    /// it already shows.
    pub fn toggle_run(&self, state: AppState) {
        let showing = state.run.panel_open.get_untracked() && !self.collapsed.get_untracked();
        self.show(state, !showing);
    }

    /// Shows `run` (or the selection) in an expanded panel.
    pub fn show(&self, state: AppState, run: bool) {
        state.run.panel_open.set(run);
        if self.collapsed.get_untracked() {
            self.set_collapsed(false);
        }
    }
}

#[component]
pub fn Dock() -> impl IntoView {
    let state = expect_context::<AppState>();
    let dock = expect_context::<DockState>();
    let run_open = state.run.panel_open;
    let collapsed = dock.collapsed;
    let running = Memo::new(move |_| state.run.view.with(|v| v.phase.live()));
    // Drawn at the width the window allows now (a narrower window narrows it).
    let width = move || format!("{}px", clamp_width(dock.width.get(), window_width()));
    view! {
        <div id="dock" class="dock" class:collapsed=move || collapsed.get()
            style:width=move || (!collapsed.get()).then(width)>
            <ResizeHandle dock=dock />
            // The collapse button sits beside the tablist, not in it: a
            // tablist holds only tabs.
            <div class="dock-tabs">
                <div class="dock-tablist" role="tablist" aria-label="Side panel">
                    <button role="tab" id="tab-selection" aria-controls="selection-pane"
                        aria-selected=move || (!run_open.get()).to_string()
                        on:click=move |_| dock.show(state, false)>"Selection"</button>
                    <button role="tab" id="tab-run" aria-controls="run-pane"
                        aria-selected=move || run_open.get().to_string()
                        on:click=move |_| dock.show(state, true)>
                        "Run"
                        // The way back to a run while the selection shows.
                        <Show when=move || running.get() && !run_open.get()>
                            <span id="tab-run-live" class="tab-live">" · running"</span>
                        </Show>
                    </button>
                </div>
                <button id="panel-collapse" class="collapse" aria-expanded=move || (!collapsed.get()).to_string()
                    aria-label=move || if collapsed.get() { "Show the side panel" } else { "Collapse the side panel" }
                    title=move || if collapsed.get() { "Show the side panel" } else { "Collapse the side panel" }
                    on:click=move |_| dock.set_collapsed(!collapsed.get_untracked())>
                    {move || if collapsed.get() { "«" } else { "»" }}
                </button>
            </div>
            <div id="selection-pane" role="tabpanel" aria-labelledby="tab-selection" class="dock-pane"
                hidden=move || run_open.get() || collapsed.get()>
                {on_demand::show("The selection panel", on_demand::side_panel)}
            </div>
            <div id="run-pane" role="tabpanel" aria-labelledby="tab-run" class="dock-pane"
                hidden=move || !run_open.get() || collapsed.get()>
                {on_demand::show("The run panel", on_demand::run_panel)}
            </div>
        </div>
    }
}

/// The panel's left edge: drag it, or focus it and press the arrow keys.
#[component]
fn ResizeHandle(dock: DockState) -> impl IntoView {
    let dragging = StoredValue::new(false);
    let max = move || clamp_width(f64::INFINITY, window_width());
    view! {
        <div id="panel-resize" class="resize-handle" role="separator" tabindex="0"
            aria-orientation="vertical" aria-label="Side panel width (arrow keys resize it)"
            aria-valuemin=MIN_WIDTH aria-valuemax=max
            aria-valuenow=move || clamp_width(dock.width.get(), window_width()).round()
            on:pointerdown=move |ev| {
                ev.prevent_default();
                dragging.set_value(true);
                use wasm_bindgen::JsCast;
                if let Some(el) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                    let _ = el.set_pointer_capture(ev.pointer_id());
                }
            }
            on:pointermove=move |ev| {
                if dragging.get_value() {
                    dock.resize(window_width() - client_x(&ev));
                }
            }
            on:pointerup=move |_| {
                if dragging.get_value() {
                    dragging.set_value(false);
                    dock.keep_width();
                }
            }
            on:keydown=move |ev| {
                let now = clamp_width(dock.width.get_untracked(), window_width());
                let want = match ev.key().as_str() {
                    "ArrowLeft" => now + KEY_STEP,
                    "ArrowRight" => now - KEY_STEP,
                    "Home" => MIN_WIDTH,
                    "End" => max(),
                    _ => return,
                };
                ev.prevent_default();
                dock.resize(want);
                dock.keep_width();
            }>
        </div>
    }
}
