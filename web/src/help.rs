//! The "?" in the canvas's corner: how to edit by hand and keyboard, and a
//! legend of what the drawing means (edge line styles as `render.rs` draws
//! them, status stripes, the run's marks), in the theme's own colours.
//! Opened with the button or "?" anywhere outside a text field; Escape
//! closes it.

use crate::appearance::ThemeState;
use crate::theme::{palette, Palette};
use leptos::html::Button;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// One of the palette's colours.
type Colour = fn(&Palette) -> &'static str;

/// An edge line style as drawn: its colour and dash pattern (render.rs
/// `draw_edge`), and what it means.
const EDGES: [(Colour, &str, &str); 4] = [
    (
        |p| p.edge,
        "",
        "Solid: unconditional, taken when no condition of the note holds",
    ),
    (
        |p| p.conditional,
        "8 5",
        "Dashed: conditional, taken when its label holds (the label is the condition)",
    ),
    (
        |p| p.edge,
        "2 4",
        "Dotted: a loop back to an earlier note (or to itself)",
    ),
    (
        |p| p.flagged,
        "3 3",
        "Red: points at a note that does not exist, or its line has an error",
    ),
];

const MARKS: [(Colour, &str); 7] = [
    (|p| p.pending, "Stripe: pending"),
    (|p| p.active, "Stripe: active"),
    (|p| p.done, "Stripe: done"),
    (|p| p.failed, "Stripe: failed (the reason is on the card)"),
    (|p| p.active_ring, "Ring: where the run is"),
    (
        |p| p.asking,
        "Dashed ring: waiting for your answer (in the Run panel)",
    ),
    (
        |p| p.breakpoint,
        "Red dot: a breakpoint (the run pauses after the note's work)",
    ),
];

/// The legend's rows: a sample drawn in the theme's colours, then its text.
fn rows(items: impl Iterator<Item = (String, &'static str)>) -> String {
    items
        .map(|(sample, text)| {
            format!(
                r#"<li><svg width="44" height="10" aria-hidden="true">{sample}</svg>{text}</li>"#
            )
        })
        .collect()
}

fn edge_rows(p: &Palette) -> String {
    rows(EDGES.into_iter().map(|(colour, dash, text)| {
        let line = format!(
            r#"<line x1="2" y1="5" x2="42" y2="5" stroke-width="2" stroke="{}" stroke-dasharray="{dash}"/>"#,
            colour(p)
        );
        (line, text)
    }))
}

fn mark_rows(p: &Palette) -> String {
    rows(MARKS.into_iter().map(|(colour, text)| {
        let rect = format!(
            r#"<rect x="2" y="1" width="40" height="8" fill="{}"/>"#,
            colour(p)
        );
        (rect, text)
    }))
}

const EDITING: &str =
    "<li>Drag a card to move it; Shift-drag the background to select several.</li>\
<li>Drag from the dot under a card onto another card to add an edge.</li>\
<li>Drag an arrow head onto another card to retarget it.</li>\
<li>Click an edge and press Delete to remove it; double-click a label to edit it.</li>\
<li>Double-click the background to create a note; double-click a card to rename it.</li>\
<li>Keyboard: arrows move between cards, E picks an edge, B a breakpoint, + − 0 zoom.</li>\
<li>Ctrl+Z undoes, Ctrl+Shift+Z redoes. Everything is written to the notes.</li>";

fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"))
}

#[component]
pub fn CanvasHelp() -> impl IntoView {
    let open = RwSignal::new(false);
    let button = NodeRef::<Button>::new();
    // The legend redraws in the other theme's colours.
    let theme = use_context::<ThemeState>();
    let legend = move |f: fn(&Palette) -> String| {
        if let Some(t) = theme {
            t.shown.track();
        }
        f(palette())
    };
    let close = move || {
        open.set(false);
        if let Some(b) = button.get_untracked() {
            let _ = b.focus();
        }
    };
    let _key = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "?" && !typing(&ev) && !ev.ctrl_key() && !ev.meta_key() {
            ev.prevent_default();
            open.update(|o| *o = !*o);
        } else if ev.key() == "Escape" && open.get_untracked() {
            close();
        }
    });
    // The lists are static text (and the theme's colours): set as HTML,
    // they cost the app's wasm next to nothing.
    view! {
        <button id="help-toggle" class="help-toggle" node_ref=button aria-label="Help and legend"
            title="Help and legend (?)" aria-expanded=move || open.get().to_string() aria-controls="help-overlay"
            on:click=move |_| open.update(|o| *o = !*o)>"?"</button>
        <section id="help-overlay" class="help-overlay" role="dialog" aria-labelledby="help-title"
            hidden=move || !open.get()>
            <h2 id="help-title">"Editing"</h2>
            <ul inner_html=EDITING></ul>
            <h2>"Legend"</h2>
            <ul id="legend-edges" class="legend" inner_html=move || legend(edge_rows)></ul>
            <ul id="legend-marks" class="legend" inner_html=move || legend(mark_rows)></ul>
            <button type="button" on:click=move |_| close()>"Close"</button>
        </section>
    }
}
