//! The editing dialogs, one component each: a label for a new edge, a new
//! label, a name for a new or renamed note, and the confirmation of a
//! delete (listing the edges that point at the note first). They share
//! one frame (`DialogFrame`): Escape or Cancel closes, Enter confirms, and
//! the focus goes back to the canvas.

use crate::commands;
use crate::state::{AppState, Dialog, Selection};
use leptos::html::Input;
use leptos::prelude::*;
use planvault_layout::Point;

/// The dialog `state.dialog` asks for, if any.
#[component]
pub fn DialogView() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        state.dialog.get().map(|dialog| match dialog {
            Dialog::NewEdge { from, to } => view! { <NewEdgeDialog from=from to=to /> }.into_any(),
            Dialog::Relabel { edge, current } => {
                view! { <RelabelDialog edge=edge current=current /> }.into_any()
            }
            Dialog::NewNode { at } => view! { <NewNodeDialog at=at /> }.into_any(),
            Dialog::Rename { node, current } => {
                view! { <RenameDialog node=node current=current /> }.into_any()
            }
            Dialog::Delete { node, incoming } => {
                view! { <DeleteDialog node=node incoming=incoming /> }.into_any()
            }
        })
    }
}

fn close(state: AppState) {
    state.dialog.set(None);
    if let Some(canvas) = document().get_element_by_id("plan-canvas") {
        use wasm_bindgen::JsCast;
        if let Ok(el) = canvas.dyn_into::<web_sys::HtmlElement>() {
            let _ = el.focus();
        }
    }
}

/// The modal frame: title, what `children` ask, Cancel and `ok`.
#[component]
fn DialogFrame(
    title: String,
    ok: &'static str,
    confirm: Callback<()>,
    children: Children,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        // A form cannot take the dialog role (axe-core): its backdrop does.
        <div class="backdrop" role="dialog" aria-modal="true" aria-labelledby="dialog-title">
            <form
                class="dialog"
                on:submit=move |ev| {
                    ev.prevent_default();
                    confirm.run(());
                    close(state);
                }
                on:keydown=move |ev| {
                    if ev.key() == "Escape" {
                        ev.prevent_default();
                        close(state);
                    }
                }
            >
                <h2 id="dialog-title">{title}</h2>
                {children()}
                <div class="buttons">
                    <button type="button" on:click=move |_| close(state)>"Cancel"</button>
                    <button type="submit" class="primary" id="dialog-ok">{ok}</button>
                </div>
            </form>
        </div>
    }
}

/// The one text field of a dialog, focused with its text selected.
#[component]
fn DialogField(label: &'static str, text: RwSignal<String>) -> impl IntoView {
    let input_ref = NodeRef::<Input>::new();
    input_ref.on_load(|input| {
        let _ = input.focus();
        input.select();
    });
    view! {
        <label for="dialog-input">{label}</label>
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

const CONDITION_LABEL: &str = "Condition label (leave empty for an unconditional edge)";

#[component]
fn NewEdgeDialog(from: String, to: String) -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(String::new());
    let title = format!("New edge {from} → {to}");
    let confirm = Callback::new(move |()| {
        let value = text.get_untracked();
        state.run_on(&[&from, &to], |doc, at| {
            commands::add_edge(doc, at[0], at[1], &value)
        });
    });
    view! {
        <DialogFrame title=title ok="OK" confirm=confirm>
            <DialogField label=CONDITION_LABEL text=text />
        </DialogFrame>
    }
}

#[component]
fn RelabelDialog(edge: (String, u32), current: String) -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(current.clone());
    let confirm = Callback::new(move |()| {
        let value = text.get_untracked();
        let key = Selection {
            edge: Some(edge.clone()),
            ..Selection::default()
        };
        state.run(|doc| {
            // The edge on that line, still labelled as the dialog showed it.
            let found = key.edge_index(doc).filter(|&e| {
                doc.checked.plan.edges[e].label.clone().unwrap_or_default() == current
            });
            match found {
                Some(e) => commands::relabel_edge(doc, e, &value).map_err(|e| e.to_string()),
                None => Err(format!(
                    "the edge from {} changed in the vault since the dialog opened",
                    edge.0
                )),
            }
        });
    });
    view! {
        <DialogFrame title="Edit the edge's label".to_string() ok="OK" confirm=confirm>
            <DialogField label=CONDITION_LABEL text=text />
        </DialogFrame>
    }
}

#[component]
fn NewNodeDialog(at: Point) -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(String::new());
    let confirm = Callback::new(move |()| {
        let name = text.get_untracked().trim().to_string();
        state.run(|doc| commands::create_node(doc, &name, at));
        let created =
            state.with_doc(|doc| doc.checked.plan.nodes.iter().position(|n| n.title == name));
        if let Some(Some(i)) = created {
            state.focus_node(i);
        }
    });
    view! {
        <DialogFrame title="New node".to_string() ok="OK" confirm=confirm>
            <DialogField label="Title of the new note" text=text />
        </DialogFrame>
    }
}

#[component]
fn RenameDialog(node: String, current: String) -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(current);
    let confirm = Callback::new(move |()| {
        let value = text.get_untracked();
        state.run_on(&[&node], |doc, at| {
            commands::rename_node(doc, at[0], &value)
        });
        state.selection.update(|s| s.nodes.clear());
    });
    view! {
        <DialogFrame title="Rename note".to_string() ok="OK" confirm=confirm>
            <DialogField label="New note name (links to it are updated)" text=text />
        </DialogFrame>
    }
}

#[component]
fn DeleteDialog(node: String, incoming: Vec<String>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let title = format!("Delete {node}?");
    let confirm = Callback::new(move |()| {
        state.run_on(&[&node], |doc, at| commands::delete_node(doc, at[0]));
        state.selection.set(Default::default());
    });
    let list = if incoming.is_empty() {
        view! { <p>"No other note links to it."</p> }.into_any()
    } else {
        view! {
            <p>"These edges point at it; their lines are removed too:"</p>
            <ul class="incoming">
                {incoming.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        <DialogFrame title=title ok="Delete" confirm=confirm>
            {list}
        </DialogFrame>
    }
}
