//! The toolbar: open a vault (picker, or the read-only folder input),
//! reopen a remembered one, undo / redo, the "⋯" menu a phone folds the
//! rest into, and Run….

use crate::app::{open_copy, open_example, open_folder};
use crate::appearance::ThemeToggle;
use crate::dock::DockState;
use crate::fs;
use crate::list_view::ListToggle;
use crate::on_demand;
use crate::state::{AppState, Dialog, Mode};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use planvault_layout::Point;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[component]
pub fn Toolbar() -> impl IntoView {
    let state = expect_context::<AppState>();
    let dock = expect_context::<DockState>();
    let more = RwSignal::new(false);
    let on_reopen = move |_| {
        spawn_local(async move {
            if let Some(dir) = fs::remembered().await {
                if dir.permission(true).await == "granted" {
                    open_folder(state, dir, false).await;
                } else {
                    state
                        .message
                        .set("Permission was not granted; showing the example vault".into());
                }
            }
        })
    };
    view! {
        <header class="toolbar">
            <h1 class="brand">"planvault"</h1>
            <OpenVault />
            <Show when=move || state.reopen.with(Option::is_some)>
                <button id="reopen" on:click=on_reopen>
                    {move || format!("Reopen “{}”", state.reopen.get().unwrap_or_default())}
                </button>
            </Show>
            <button id="undo" on:click=move |_| state.undo()
                disabled=move || state.history.with(|h| h.undo_summary().is_none())
                title=move || state.history.with(|h| h.undo_summary().map(|s| format!("Undo {s}")).unwrap_or_default())>
                "Undo"
            </button>
            <button id="redo" on:click=move |_| state.redo()
                disabled=move || state.history.with(|h| h.redo_summary().is_none())
                title=move || state.history.with(|h| h.redo_summary().map(|s| format!("Redo {s}")).unwrap_or_default())>
                "Redo"
            </button>
            // On a phone the rest folds into the "⋯" menu (one row).
            <button id="toolbar-overflow" aria-label="More actions" aria-haspopup="true"
                aria-expanded=move || more.get().to_string() aria-controls="toolbar-more"
                on:click=move |_| more.update(|m| *m = !*m)>"⋯"</button>
            <ToolbarMore more=more />
            <span class="sep"></span>
            <button id="run-toggle" aria-pressed=move || state.run.panel_open.get().to_string()
                on:click=move |_| dock.toggle_run(state)>"Run…"</button>
        </header>
    }
}

/// "Open vault…" where the browser can edit folders in place, else the
/// read-only folder input (a copy is edited).
#[component]
fn OpenVault() -> impl IntoView {
    let state = expect_context::<AppState>();
    // `webkitdirectory` is not a standard attribute the view macro knows.
    let folder_input = NodeRef::<leptos::html::Input>::new();
    folder_input.on_load(|input| {
        let _ = input.set_attribute("webkitdirectory", "");
    });
    let on_open = move |_| {
        spawn_local(async move {
            match fs::pick().await {
                // Closing the picker is no error: nothing changed.
                Ok(None) => state
                    .message
                    .set("No folder picked; the plan shown is unchanged".into()),
                Ok(Some(dir)) => {
                    if dir.permission(true).await == "granted" {
                        open_folder(state, dir, true).await;
                    } else {
                        state
                            .message
                            .set("planvault needs permission to edit the folder's notes".into());
                    }
                }
                Err(e) => state.message.set(format!("No folder opened ({e})")),
            }
        })
    };
    let on_folder_input = move |ev: ev::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(files) = input.files() else { return };
        let files: JsValue = files.into();
        spawn_local(async move { open_copy(state, files).await });
    };
    if fs::picker_available() {
        view! { <button id="open-vault" on:click=on_open>"Open vault…"</button> }.into_any()
    } else {
        view! {
            <label class="button" for="open-folder">"Open folder"<span class="wide-only">" (read-only)"</span>"…"</label>
            <input id="open-folder" class="visually-hidden" type="file" multiple=true node_ref=folder_input
                on:change=on_folder_input />
        }
        .into_any()
    }
}

/// What the "⋯" menu holds on a phone (inline on a wider screen).
#[component]
fn ToolbarMore(more: RwSignal<bool>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let on_example = move |_| spawn_local(async move { open_example(state).await });
    let on_new = move |_| {
        let at = state.viewport.with_untracked(|v| {
            let c = v.to_world(Point {
                x: v.width / 2.0,
                y: v.height / 2.0,
            });
            Point {
                x: c.x - 110.0,
                y: c.y - 38.0,
            }
        });
        state.dialog.set(Some(Dialog::NewNode { at }));
    };
    let on_relayout = move |_| {
        on_demand::edit_canvas(state, on_demand::CanvasEdit::Relayout);
    };
    view! {
        <div id="toolbar-more" class="toolbar-more" class:open=move || more.get()
            on:click=move |e| {
                // A chosen action closes the menu.
                if e.target().and_then(|t| t.dyn_into::<web_sys::HtmlButtonElement>().ok()).is_some() {
                    more.set(false);
                }
            }>
            <span class="sep"></span>
            <button on:click=on_example>"Example"</button>
            <span class="sep"></span>
            <button id="new-node" on:click=on_new>"New node"</button>
            <button id="go-to" title="Go to a note by title or path (Ctrl+K or /)"
                on:click=move |_| state.picker.set(Some(crate::state::Pick::GoTo))>"Go to…"</button>
            <button on:click=move |_| state.fit()>"Fit"</button>
            <ListToggle />
            <button on:click=on_relayout title="Lay every card out again (edits keep cards where they are)">"Auto layout"</button>
            <button id="minimap-toggle" aria-pressed=move || state.minimap.get().to_string()
                title="Show or hide the minimap (it moves aside from cards, and hides on small screens)"
                on:click=move |_| state.minimap.update(|m| *m = !*m)>"Minimap"</button>
            <Show when=move || matches!(state.mode.get(), Mode::Copy(_))>
                <button id="download" on:click=move |_| on_demand::download_zip(state)>"Download zip"</button>
            </Show>
            <ThemeToggle />
        </div>
    }
}

/// Which folder of the vault is the plan, when its notes are not all at
/// the top: the whole vault, or one folder holding plan notes (a vault
/// whose plan is `plans/launch`, or that holds several plans).
#[component]
pub fn PlanFolderPicker() -> impl IntoView {
    let state = expect_context::<AppState>();
    let folders = move || {
        state.open.with(|o| {
            o.as_ref()
                .map(|o| (o.doc.folder.clone(), o.doc.folders.clone()))
                .unwrap_or_default()
        })
    };
    view! {
        <Show when=move || state.open.with(|o| o.as_ref().is_some_and(|o| !o.doc.folders.is_empty()))>
            <label for="plan-folder">"Plan"</label>
            <select id="plan-folder" title="The folder whose notes are the plan; links resolve in the whole vault"
                disabled=move || state.run.view.with(|v| v.phase.live())
                on:change=move |ev| state.choose_plan_folder(&event_target_value(&ev))>
                {move || {
                    let (chosen, folders) = folders();
                    let whole = view! {
                        <option value="" selected=chosen.is_empty()>"Whole vault"</option>
                    };
                    let each = folders
                        .into_iter()
                        .map(|f| {
                            let selected = f.folder == chosen;
                            let plural = if f.notes == 1 { "" } else { "s" };
                            let label = format!("{}/ ({} plan note{plural})", f.folder, f.notes);
                            view! { <option value=f.folder selected=selected>{label}</option> }
                        })
                        .collect_view();
                    (whole, each)
                }}
            </select>
        </Show>
    }
}
