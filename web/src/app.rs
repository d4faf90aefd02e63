//! The app shell: toolbar, canvas, side panel, dialog; opening vaults
//! (example, picker, remembered folder, read-only fallback); polling for
//! outside changes; global shortcuts. The end-to-end tests' hook is in
//! `test_hook` (the `e2e` feature).

use crate::appearance::{ThemeState, ThemeToggle};
use crate::canvas_view::PlanCanvas;
use crate::commands;
use crate::dialog::DialogView;
use crate::dock::{Dock, DockState};
use crate::fs::{self, VaultDir, COPY_FOLDER, EXAMPLE_COPIED, EXAMPLE_FOLDER};
use crate::help::CanvasHelp;
use crate::list_view::{ListState, ListToggle, PlanList};
use crate::note_editor::{NoteEditing, NoteEditor};
use crate::note_picker::NotePicker;
use crate::run::WorkerState;
use crate::run_panel::{ResumeOfferBar, SettingsDialog};
use crate::state::{AppState, Dialog, Mode};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use planvault_layout::Point;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// How often the vault is re-read for changes made elsewhere.
const POLL_MS: i32 = 1500;

/// The example vault: its OPFS copy, created from the bundled notes on the
/// first visit (the bundled notes themselves if that copy cannot be read).
/// The copy is finished by whichever visit finds it unfinished: a reload
/// while it was being written leaves notes missing or empty (a file exists
/// from its creation, its text from its writer's close), and
/// [`EXAMPLE_COPIED`] is written only after every note.
async fn open_example(state: AppState) {
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    let bundled = crate::example::files();
    match VaultDir::private(EXAMPLE_FOLDER).await {
        Ok(dir) => {
            let mut files = dir.read_all().await.unwrap_or_default();
            if !matches!(dir.read(EXAMPLE_COPIED).await, Ok(Some(_))) {
                let mut copied = true;
                for path in crate::example::to_copy(&bundled, &files) {
                    if let Err(e) = dir.write(path, &bundled[path]).await {
                        copied = false;
                        state
                            .message
                            .set(format!("Could not store the example in this browser: {e}"));
                    }
                }
                if copied {
                    let _ = dir.write(EXAMPLE_COPIED, "").await;
                }
                files = dir.read_all().await.unwrap_or(bundled);
            }
            state.show(ticket, dir, files, Mode::Example);
        }
        Err(e) if state.is_latest(ticket) => state.message.set(format!(
            "This browser has no private file storage ({e}); the example is read-only."
        )),
        Err(_) => {}
    }
}

/// Opens a folder handle read-write (from the picker, IndexedDB or a test).
pub async fn open_folder(state: AppState, dir: VaultDir, remember: bool) {
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    // The plan shown stays (inactive) until this one is read.
    let read = dir
        .read_all_reporting(move |done, total| {
            if state.is_latest(ticket) {
                state.loading.set(Some((done, total)));
            }
        })
        .await;
    if state.is_latest(ticket) {
        state.loading.set(None);
    }
    match read {
        Ok(files) => {
            let name = dir.name();
            let count = files.keys().filter(|p| p.ends_with(".md")).count();
            if remember {
                if let Err(e) = dir.remember().await {
                    state.message.set(format!(
                        "Opened, but could not remember the folder for next time: {e}"
                    ));
                }
            }
            if state.show(ticket, dir, files, Mode::Folder(name.clone())) {
                state.reopen.set(None);
                state.message.set(format!("Opened “{name}”: {count} notes"));
            }
        }
        Err(e) if state.is_latest(ticket) => {
            state.message.set(format!("Could not read the folder: {e}"))
        }
        Err(_) => {}
    }
}

/// The read-only fallback: copy what `<input webkitdirectory>` gave into
/// OPFS and edit that copy.
async fn open_copy(state: AppState, files: JsValue) {
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    let (name, notes) = match fs::read_selection(&files).await {
        Ok(x) => x,
        Err(e) => {
            state.message.set(format!("Could not read the folder: {e}"));
            return;
        }
    };
    // A later open owns the working copy: stop writing into it.
    if !state.is_latest(ticket) {
        return;
    }
    let _ = VaultDir::clear_private(COPY_FOLDER).await;
    let dir = match VaultDir::private(COPY_FOLDER).await {
        Ok(d) => d,
        Err(e) => {
            state
                .message
                .set(format!("No private storage for a working copy: {e}"));
            return;
        }
    };
    for (path, text) in &notes {
        if !state.is_latest(ticket) {
            return;
        }
        if let Err(e) = dir.write(path, text).await {
            state.message.set(format!("Could not copy {path}: {e}"));
            return;
        }
    }
    let count = notes.len();
    if state.show(ticket, dir, notes, Mode::Copy(name.clone())) {
        let hint = "Download the changes as a zip when done.";
        state
            .message
            .set(format!("Opened a copy of “{name}” ({count} files). {hint}"));
    }
}

async fn start(state: AppState) {
    // The start-up is an open of its own from the first moment: a folder
    // opened while it still looks for the remembered one (an IndexedDB
    // read) is the later open and stays shown.
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    let remembered = match fs::remembered().await {
        Some(dir) => {
            let permission = dir.permission(false).await;
            Some((dir, permission))
        }
        None => None,
    };
    if !state.is_latest(ticket) {
        return;
    }
    if let Some((dir, permission)) = remembered {
        match permission.as_str() {
            "granted" => return open_folder(state, dir, false).await,
            "prompt" => state.reopen.set(Some(dir.name())),
            _ => {}
        }
    }
    open_example(state).await;
}

fn download_zip(state: AppState) {
    let Some(files) = state.with_doc(|d| d.files.clone()) else {
        return;
    };
    let name = match state.mode.get_untracked() {
        Mode::Copy(name) | Mode::Folder(name) => name,
        _ => "example-vault".to_string(),
    };
    let bytes = fs::zip(&files);
    fs::download(&format!("{name}.zip"), &bytes, "application/zip");
    state
        .message
        .set(format!("Downloaded {name}.zip ({} files)", files.len()));
}

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    ThemeState::provide();
    let dock = DockState::provide();
    #[cfg(feature = "e2e")]
    crate::test_hook::install(state);
    spawn_local(start(state));
    let (list, editing) = (ListState::new(), NoteEditing::new());
    provide_context(list);
    provide_context(editing);
    crate::tool_check::keep_in_step(state);
    crate::modal_focus::keep_focus_in(move || state.run.settings_open.get(), "settings");
    crate::modal_focus::keep_focus_in(move || editing.is_open(), "note-editor");

    // Outside changes: poll (cheap: unchanged files are not re-read).
    let poll = Closure::<dyn FnMut()>::new(move || spawn_local(async move { state.poll().await }));
    if let Some(w) = web_sys::window() {
        let _ = w.set_interval_with_callback_and_timeout_and_arguments_0(
            poll.as_ref().unchecked_ref(),
            POLL_MS,
        );
    }
    poll.forget();

    // Undo/redo from anywhere except while typing in a field.
    let _shortcuts = window_event_listener(ev::keydown, move |e| {
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        if typing || !(e.ctrl_key() || e.meta_key()) {
            return;
        }
        match e.key().to_lowercase().as_str() {
            "z" if e.shift_key() => {
                e.prevent_default();
                state.redo();
            }
            "z" => {
                e.prevent_default();
                state.undo();
            }
            "y" => {
                e.prevent_default();
                state.redo();
            }
            _ => {}
        }
    });

    // A vault folder dropped anywhere on the page opens like a picked one.
    let _drag_over = window_event_listener(ev::dragover, move |e| {
        e.prevent_default();
        if let Some(transfer) = e.data_transfer() {
            transfer.set_drop_effect("copy");
        }
    });
    let _drop = window_event_listener(ev::drop, move |e| {
        e.prevent_default();
        let dropped = fs::dropped(&e);
        spawn_local(async move {
            match dropped.await {
                Ok(Some(dir)) if dir.permission(true).await == "granted" => {
                    open_folder(state, dir, true).await
                }
                Ok(Some(_)) => state
                    .message
                    .set("planvault needs permission to edit the folder's notes".into()),
                Ok(None) => state
                    .message
                    .set("Drop the vault's folder (not a file) to open it".into()),
                Err(e) => state
                    .message
                    .set(format!("Could not open the dropped folder ({e})")),
            }
        });
    });

    let picker = fs::picker_available();
    // `webkitdirectory` is not a standard attribute the view macro knows.
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(input) = folder_input.get() {
            let _ = input.set_attribute("webkitdirectory", "");
        }
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
        if let Some(Some(change)) = state.with_doc(commands::reset_layout) {
            state.submit(change, crate::state::Origin::Edit);
        }
        // Edits keep cards in place; this is the full re-layout.
        state.open.update(|o| {
            if let Some(o) = o {
                *o = crate::state::Open::new(o.doc.laid_out_afresh());
            }
        });
        state.fit_requested.update(|n| *n += 1);
    };

    let more = RwSignal::new(false);
    state.run.start_worker(state);
    let worker_status = move || {
        state.run.view.with(|v| match &v.worker {
            WorkerState::Starting => "Worker: starting".to_string(),
            WorkerState::Ready => "Worker: ready".to_string(),
            WorkerState::Broken(why) => format!("Worker: {why}"),
        })
    };

    view! {
        <header class="toolbar">
            <h1 class="brand">"planvault"</h1>
            {if picker {
                view! { <button id="open-vault" on:click=on_open>"Open vault…"</button> }.into_any()
            } else {
                view! {
                    <label class="button" for="open-folder">"Open folder"<span class="wide-only">" (read-only)"</span>"…"</label>
                    <input id="open-folder" class="visually-hidden" type="file" multiple=true node_ref=folder_input
                        on:change=on_folder_input />
                }
                    .into_any()
            }}
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
            <div id="toolbar-more" class="toolbar-more" class:open=move || more.get()
                on:click=move |e| {
                    // A chosen action closes the menu.
                    if e.target().and_then(|t| t.dyn_into::<web_sys::HtmlButtonElement>().ok()).is_some() {
                        more.set(false);
                    }
                }>
                <span class="sep"></span>
                <button on:click=on_example>"Example"</button>
                <PlanFolderPicker state=state />
                <span class="sep"></span>
                <button id="new-node" on:click=on_new>"New node"</button>
                <button id="go-to" title="Go to a note by title or path (Ctrl+K or /)"
                    on:click=move |_| state.picker.set(Some(crate::state::Pick::GoTo))>"Go to…"</button>
                <button on:click=move |_| state.fit_requested.update(|n| *n += 1)>"Fit"</button>
                <ListToggle />
                <button on:click=on_relayout title="Lay every card out again (edits keep cards where they are)">"Auto layout"</button>
                <button id="minimap-toggle" aria-pressed=move || state.minimap.get().to_string()
                    title="Show or hide the minimap (it moves aside from cards, and hides on small screens)"
                    on:click=move |_| state.minimap.update(|m| *m = !*m)>"Minimap"</button>
                <Show when=move || matches!(state.mode.get(), Mode::Copy(_))>
                    <button id="download" on:click=move |_| download_zip(state)>"Download zip"</button>
                </Show>
                <ThemeToggle />
            </div>
            <span class="sep"></span>
            <button id="run-toggle" aria-pressed=move || state.run.panel_open.get().to_string()
                on:click=move |_| dock.toggle_run(state)>"Run…"</button>
        </header>
        <section class="mode" aria-label="Open vault">
            <p id="mode">{move || state.mode.get().describe()}</p>
        </section>
        <ResumeOfferBar state=state />
        <main class="workspace" class:loading=move || state.loading.with(Option::is_some)>
            <div class="plan-area">
                <Show when=move || list.shown.get()><PlanList state=state /></Show>
                <div class="canvas-area">
                    <PlanCanvas state=state />
                    <CanvasHelp />
                    <Show when=move || state.loading.with(Option::is_some)>
                        <p id="open-progress" class="open-progress" role="status">{move || {
                            let (done, total) = state.loading.get().unwrap_or_default();
                            format!("Reading files: {done} of {total}")
                        }}</p>
                    </Show>
                </div>
            </div>
            <Dock state=state />
        </main>
        <Show when=move || state.rejected.with(Option::is_some)>
            <section class="rejected" aria-labelledby="rejected-title">
                <h2 id="rejected-title">
                    {move || state.rejected.with(|r| r.as_ref().map(|c| format!("Not written: {}", c.summary)).unwrap_or_default())}
                </h2>
                <p>"The notes changed outside planvault first, so this is what your edit would have written. Copy what you need; the notes on disk were not touched."</p>
                {move || {
                    state
                        .rejected
                        .get()
                        .map(|c| {
                            c.files
                                .into_iter()
                                .filter_map(|f| f.after.map(|t| (f.path, t)))
                                .map(|(path, text)| {
                                    let id = format!("rejected-{path}");
                                    view! {
                                        <label for=id.clone()>{path}</label>
                                        <textarea id=id readonly rows="6">{text}</textarea>
                                    }
                                })
                                .collect_view()
                        })
                }}
                <button on:click=move |_| state.rejected.set(None)>"Dismiss"</button>
            </section>
        </Show>
        <footer>
            <p id="plan-summary" role="status">{move || plan_summary(state)}</p>
            <p id="status" role="status" aria-live="polite">{move || state.message.get()}</p>
            <p id="worker-status" role="status">{worker_status}</p>
        </footer>
        <DialogView state=state />
        <NotePicker state=state />
        <NoteEditor state=state />
        <SettingsDialog state=state />
    }
}

/// One line on the open plan, for people and screen readers alike (and for
/// `scripts/start --smoke`, which compares it with `planvault graph --json`).
fn plan_summary(state: AppState) -> String {
    state.open.with(|open| {
        let Some(open) = open else {
            return "No plan open".to_string();
        };
        let checked = &open.doc.checked;
        let errors = checked
            .diagnostics
            .iter()
            .filter(|d| d.severity == planvault_core::Severity::Error)
            .count();
        let verdict = match errors {
            0 => "no errors".to_string(),
            1 => "1 error".to_string(),
            n => format!("{n} errors"),
        };
        let folder = &open.doc.folder;
        let place = if folder.is_empty() {
            String::new()
        } else {
            format!(" in {folder}/")
        };
        format!(
            "Plan: {} notes{place}, {} edges, {verdict}",
            checked.plan.nodes.len(),
            checked.plan.edges.len()
        )
    })
}

/// Which folder of the vault is the plan, when its notes are not all at
/// the top: the whole vault, or one folder holding plan notes (a vault
/// whose plan is `plans/launch`, or that holds several plans).
#[component]
fn PlanFolderPicker(state: AppState) -> impl IntoView {
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
                            let label = format!("{}/ ({} plan notes)", f.folder, f.notes);
                            view! { <option value=f.folder selected=selected>{label}</option> }
                        })
                        .collect_view();
                    (whole, each)
                }}
            </select>
        </Show>
    }
}
