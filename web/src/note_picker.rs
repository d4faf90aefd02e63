//! The note picker: "Go to note" (Ctrl/Cmd+K or `/`) centres and selects
//! the note chosen, and E on a focused card picks the target of a new edge
//! from it (then asks its label, as a drag does). One filterable list,
//! arrow keys and Enter, Escape closes; matching is [`crate::search`].

use crate::geometry::DETAIL_ZOOM;
use crate::state::{AppState, Dialog, Pick, Selection};
use leptos::ev;
use leptos::html::Input;
use leptos::prelude::*;
use planvault_layout::Point;
use wasm_bindgen::JsCast;

/// Centres the view on node `index` (near enough to read it) and selects it.
pub fn go_to(state: AppState, index: usize) {
    let Some((selection, center)) = state.open.with_untracked(|o| {
        let o = o.as_ref()?;
        let r = o.scene.nodes.get(index)?;
        Some((Selection::single_node(&o.doc, index), r.center()))
    }) else {
        return;
    };
    state.selection.set(selection);
    state.viewport.update(|v| {
        v.zoom = v.zoom.max(DETAIL_ZOOM.max(0.8));
        v.offset = Point {
            x: center.x - v.width / 2.0 / v.zoom,
            y: center.y - v.height / 2.0 / v.zoom,
        };
    });
}

fn focus_canvas() {
    if let Some(el) = document()
        .get_element_by_id("plan-canvas")
        .and_then(|c| c.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

#[component]
pub fn NotePicker() -> impl IntoView {
    let state = expect_context::<AppState>();

    // Ctrl/Cmd+K anywhere, `/` when not typing in a field.
    let _shortcut = window_event_listener(ev::keydown, move |e| {
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        let key = e.key();
        let wanted = ((e.ctrl_key() || e.meta_key()) && key.eq_ignore_ascii_case("k"))
            || (key == "/" && !typing);
        if wanted && state.open.with_untracked(Option::is_some) {
            e.prevent_default();
            state.picker.set(Some(Pick::GoTo));
        }
    });

    // Built for each pick, so every pick starts with an empty query.
    move || {
        state
            .picker
            .get()
            .map(|pick| view! { <PickerDialog pick=pick /> })
    }
}

/// One pick: the query, the notes it matches and the one Enter chooses.
#[component]
fn PickerDialog(pick: Pick) -> impl IntoView {
    let state = expect_context::<AppState>();
    let query = RwSignal::new(String::new());
    let active = RwSignal::new(0usize);
    let input_ref = NodeRef::<Input>::new();
    // Focused once it is on the page (this frame's rendering puts it there).
    input_ref.on_load(|input| {
        request_animation_frame(move || {
            let _ = input.focus();
        })
    });

    let found = Memo::new(move |_| {
        state
            .open
            .with(|o| {
                o.as_ref().map(|o| {
                    let nodes = &o.doc.checked.plan.nodes;
                    let q = query.get();
                    crate::search::matches(
                        &q,
                        nodes.iter().map(|n| (n.title.as_str(), n.id.as_str())),
                    )
                    .into_iter()
                    .map(|i| (i, nodes[i].title.clone(), nodes[i].id.clone()))
                    .collect::<Vec<_>>()
                })
            })
            .unwrap_or_default()
    });

    let close = move || {
        state.picker.set(None);
        focus_canvas();
    };
    let title = match &pick {
        Pick::EdgeFrom(from) => format!("New edge from {from} to…"),
        Pick::GoTo => "Go to note".to_string(),
    };
    let pick = StoredValue::new(pick);
    let choose = move |index: usize| {
        state.picker.set(None);
        match pick.get_value() {
            Pick::GoTo => {
                go_to(state, index);
                focus_canvas();
            }
            Pick::EdgeFrom(from) => {
                let to = state.with_doc(|doc| doc.checked.plan.nodes[index].id.clone());
                if let Some(to) = to {
                    state.dialog.set(Some(Dialog::NewEdge { from, to }));
                }
            }
        }
    };

    let on_key = move |e: ev::KeyboardEvent| {
        let count = found.with_untracked(Vec::len);
        match e.key().as_str() {
            "ArrowDown" if count > 0 => active.update(|a| *a = (*a + 1) % count),
            "ArrowUp" if count > 0 => active.update(|a| *a = (*a + count - 1) % count),
            "Enter" => {
                let at = active.get_untracked();
                if let Some(i) = found.with_untracked(|f| f.get(at).map(|x| x.0)) {
                    choose(i);
                }
            }
            "Escape" => close(),
            _ => return,
        }
        e.prevent_default();
    };

    view! {
        <div class="picker-backdrop" on:click=move |_| close()></div>
        <div class="picker" role="dialog" aria-modal="true" aria-labelledby="picker-title">
            <label id="picker-title" for="picker-input">{title}</label>
            <input id="picker-input" type="text" node_ref=input_ref autocomplete="off"
                placeholder="Title or path" role="combobox" aria-expanded="true"
                aria-controls="picker-list" aria-autocomplete="list"
                aria-activedescendant=move || format!("picker-option-{}", active.get())
                prop:value=move || query.get()
                on:input=move |e| {
                    query.set(event_target_value(&e));
                    active.set(0);
                }
                on:keydown=on_key />
            <ul id="picker-list" role="listbox" aria-label="Notes">
                {move || {
                    found
                        .get()
                        .into_iter()
                        .enumerate()
                        .map(|(k, (i, title, id))| {
                            view! {
                                <li id=format!("picker-option-{k}") role="option"
                                    aria-selected=move || (active.get() == k).to_string()
                                    class:active=move || active.get() == k
                                    on:mousedown=move |e| {
                                        e.prevent_default();
                                        choose(i);
                                    }>
                                    <span class="picker-title">{title}</span>
                                    <span class="picker-path">{id}</span>
                                </li>
                            }
                        })
                        .collect_view()
                }}
            </ul>
            <Show when=move || found.with(Vec::is_empty)>
                <p class="picker-empty">"No note matches"</p>
            </Show>
        </div>
    }
}
