//! The one modal dialog: a label for a new edge, a new label, a name for a
//! new or renamed note, or the confirmation of a delete (listing the edges
//! that point at the note first).

use crate::commands;
use crate::state::{AppState, Dialog};
use leptos::html::Input;
use leptos::prelude::*;

#[component]
pub fn DialogView(state: AppState) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let input_ref = NodeRef::<Input>::new();

    // A new question starts from its current value, with the field focused.
    Effect::new(move |_| {
        let initial = match state.dialog.get() {
            Some(Dialog::Relabel { current, .. }) | Some(Dialog::Rename { current, .. }) => current,
            _ => String::new(),
        };
        text.set(initial);
        if let Some(input) = input_ref.get() {
            let _ = input.focus();
            input.select();
        }
    });

    let close = move || {
        state.dialog.set(None);
        if let Some(canvas) = document().get_element_by_id("plan-canvas") {
            use wasm_bindgen::JsCast;
            if let Ok(el) = canvas.dyn_into::<web_sys::HtmlElement>() {
                let _ = el.focus();
            }
        }
    };

    let confirm = move || {
        let Some(dialog) = state.dialog.get_untracked() else {
            return;
        };
        let value = text.get_untracked();
        match dialog {
            Dialog::NewEdge { from, to } => {
                state.run(|doc| commands::add_edge(doc, from, to, &value))
            }
            Dialog::Relabel { edge, .. } => {
                state.run(|doc| commands::relabel_edge(doc, edge, &value))
            }
            Dialog::NewNode { at } => {
                let name = value.trim().to_string();
                state.run(|doc| commands::create_node(doc, &name, at));
                let created = state
                    .with_doc(|doc| doc.checked.plan.nodes.iter().position(|n| n.title == name));
                if let Some(Some(i)) = created {
                    state.focus_node(i);
                }
            }
            Dialog::Rename { node, .. } => {
                state.run(|doc| commands::rename_node(doc, node, &value));
                state.selection.update(|s| s.nodes.clear());
            }
            Dialog::Delete { node, .. } => {
                state.run(|doc| commands::delete_node(doc, node));
                state.selection.set(Default::default());
            }
        }
        close();
    };

    let title = move || match state.dialog.get() {
        Some(Dialog::NewEdge { from, to }) => state
            .with_doc(|d| {
                let n = &d.checked.plan.nodes;
                format!("New edge {} → {}", n[from].id, n[to].id)
            })
            .unwrap_or_default(),
        Some(Dialog::Relabel { .. }) => "Edit the edge's label".into(),
        Some(Dialog::NewNode { .. }) => "New node".into(),
        Some(Dialog::Rename { .. }) => "Rename note".into(),
        Some(Dialog::Delete { node, .. }) => state
            .with_doc(|d| format!("Delete {}?", d.checked.plan.nodes[node].id))
            .unwrap_or_default(),
        None => String::new(),
    };
    let field_label = move || match state.dialog.get() {
        Some(Dialog::NewEdge { .. }) | Some(Dialog::Relabel { .. }) => {
            "Condition label (leave empty for an unconditional edge)"
        }
        Some(Dialog::NewNode { .. }) => "Title of the new note",
        Some(Dialog::Rename { .. }) => "New note name (links to it are updated)",
        _ => "",
    };
    let is_delete = move || matches!(state.dialog.get(), Some(Dialog::Delete { .. }));
    let incoming = move || match state.dialog.get() {
        Some(Dialog::Delete { incoming, .. }) => incoming,
        _ => Vec::new(),
    };

    view! {
        <Show when=move || state.dialog.with(Option::is_some)>
            // A form cannot take the dialog role (axe-core): its backdrop does.
            <div class="backdrop" role="dialog" aria-modal="true" aria-labelledby="dialog-title">
                <form
                    class="dialog"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        confirm();
                    }
                    on:keydown=move |ev| {
                        if ev.key() == "Escape" {
                            ev.prevent_default();
                            close();
                        }
                    }
                >
                    <h2 id="dialog-title">{title}</h2>
                    <Show
                        when=is_delete
                        fallback=move || {
                            view! {
                                <label for="dialog-input">{field_label}</label>
                                <input
                                    id="dialog-input"
                                    node_ref=input_ref
                                    type="text"
                                    autocomplete="off"
                                    prop:value=move || text.get()
                                    on:input=move |ev| text.set(event_target_value(&ev))
                                />
                            }
                        }
                    >
                        {move || {
                            let list = incoming();
                            if list.is_empty() {
                                view! { <p>"No other note links to it."</p> }.into_any()
                            } else {
                                view! {
                                    <p>"These edges point at it; their lines are removed too:"</p>
                                    <ul class="incoming">
                                        {list.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
                                    </ul>
                                }
                                    .into_any()
                            }
                        }}
                    </Show>
                    <div class="buttons">
                        <button type="button" on:click=move |_| close()>"Cancel"</button>
                        <button type="submit" class="primary" id="dialog-ok">
                            {move || if is_delete() { "Delete" } else { "OK" }}
                        </button>
                    </div>
                </form>
            </div>
        </Show>
    }
}
