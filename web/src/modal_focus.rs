//! Focus for a modal dialog, as the WAI-ARIA dialog pattern asks: when it
//! opens, focus moves into it (its first field); while it is open, Tab and
//! Shift+Tab cycle inside it and focus that lands outside (a click on the
//! backdrop) is brought back; when it closes, focus returns to the control
//! that had it before (the button that opened it), else to the canvas.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

const FOCUSABLE: &str =
    "a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), \
     textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";

/// The dialog's elements that take Tab, in document order (hidden ones left out).
fn focusables(dialog: &web_sys::Element) -> Vec<HtmlElement> {
    let Ok(list) = dialog.query_selector_all(FOCUSABLE) else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<HtmlElement>().ok())
        .filter(|el| el.offset_width() > 0 || el.offset_height() > 0)
        .collect()
}

fn active() -> Option<HtmlElement> {
    document().active_element()?.dyn_into().ok()
}

/// Keeps focus in the element `dialog_id` while `open()` holds.
pub fn keep_focus_in(open: impl Fn() -> bool + Send + Sync + 'static, dialog_id: &'static str) {
    let open = Signal::derive(open);
    let opener = StoredValue::new_local(None::<HtmlElement>);
    let dialog = move || {
        open.get_untracked()
            .then(|| document().get_element_by_id(dialog_id))
            .flatten()
    };
    Effect::new(move |was_open: Option<bool>| {
        let now = open.get();
        if now && was_open != Some(true) {
            opener.set_value(active());
            // The dialog is in the DOM once this frame's rendering is done.
            request_animation_frame(move || {
                let Some(d) = dialog() else { return };
                let inside = active().is_some_and(|a| d.contains(Some(&a)));
                if !inside {
                    if let Some(first) = focusables(&d).first() {
                        let _ = first.focus();
                    }
                }
            });
        } else if !now && was_open == Some(true) {
            // After the dialog has left the DOM.
            request_animation_frame(move || {
                // The opener may be gone (a list drawn again): the canvas then.
                let back = opener
                    .get_value()
                    .filter(|el| el.is_connected())
                    .or_else(|| {
                        document()
                            .get_element_by_id("plan-canvas")
                            .and_then(|c| c.dyn_into().ok())
                    });
                if let Some(el) = back {
                    let _ = el.focus();
                }
                opener.set_value(None);
            });
        }
        now
    });
    let tab = window_event_listener(ev::keydown, move |e| {
        if e.key() != "Tab" {
            return;
        }
        let Some(d) = dialog() else { return };
        let list = focusables(&d);
        let (Some(first), Some(last)) = (list.first(), list.last()) else {
            return;
        };
        let now = active();
        let at = |el: &HtmlElement| now.as_ref() == Some(el);
        let outside = !now.as_ref().is_some_and(|a| d.contains(Some(a)));
        let target = match (e.shift_key(), outside) {
            (true, true) => Some(last),
            (false, true) => Some(first),
            (true, false) if at(first) => Some(last),
            (false, false) if at(last) => Some(first),
            _ => None,
        };
        if let Some(t) = target {
            e.prevent_default();
            let _ = t.focus();
        }
    });
    let back = window_event_listener(ev::focusin, move |e| {
        let Some(d) = dialog() else { return };
        let target = e.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        if !target.is_some_and(|t| d.contains(Some(&t))) {
            if let Some(first) = focusables(&d).first() {
                let _ = first.focus();
            }
        }
    });
    // A press outside (the backdrop) would move the focus to the page.
    let press = window_event_listener(ev::mousedown, move |e| {
        let Some(d) = dialog() else { return };
        let target = e.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        if !target.is_some_and(|t| d.contains(Some(&t))) {
            e.prevent_default();
        }
    });
    on_cleanup(move || {
        tab.remove();
        back.remove();
        press.remove();
    });
}
