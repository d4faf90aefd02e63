//! The app shell: the root component provides the state as context and
//! lays out the toolbar (`toolbar`), canvas, side panel (`dock`) and
//! dialogs; opening vaults (example, picker, remembered folder, read-only
//! fallback); the page-wide edges: polling for outside changes, global
//! shortcuts, a dropped folder. The end-to-end tests' hook is in
//! `test_hook`, a part fetched only when the page asks for it.

use crate::appearance::ThemeState;
use crate::canvas_view::PlanCanvas;
use crate::dock::{Dock, DockState};
use crate::fs::{self, Reading, VaultDir, COPY_FOLDER, EXAMPLE_COPIED, EXAMPLE_FOLDER};
use crate::help::CanvasHelp;
use crate::list_view::ListState;
use crate::note_editor::NoteEditing;
use crate::on_demand;
use crate::run::WorkerState;
use crate::run_panel::ResumeOfferBar;
use crate::settings_dialog::SettingsDialog;
use crate::state::{AppState, Mode};
use crate::toolbar::{PlanFolderPicker, Toolbar};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
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
pub(crate) async fn open_example(state: AppState) {
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    let bundled = crate::example::files();
    match VaultDir::private(EXAMPLE_FOLDER).await {
        Ok(dir) => {
            let mut read = dir.read_all().await.unwrap_or_default();
            if !matches!(dir.read(EXAMPLE_COPIED).await, Ok(Some(_))) {
                let mut copied = true;
                for path in crate::example::to_copy(&bundled, &read.files) {
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
                read = dir.read_all().await.unwrap_or(Reading {
                    files: bundled,
                    unread: Default::default(),
                });
            }
            state.show(ticket, dir, read, Mode::Example);
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
        Ok(read) => {
            let name = dir.name();
            let count = read.files.keys().filter(|p| p.ends_with(".md")).count();
            if remember {
                if let Err(e) = dir.remember().await {
                    state.message.set(format!(
                        "Opened, but could not remember the folder for next time: {e}"
                    ));
                }
            }
            if state.show(ticket, dir, read, Mode::Folder(name.clone())) {
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
pub(crate) async fn open_copy(state: AppState, files: JsValue) {
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    let (name, notes, raw) = match fs::read_selection(&files).await {
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
    for (path, text) in &notes.files {
        if !state.is_latest(ticket) {
            return;
        }
        // A note that is not UTF-8, or too large to read, is copied byte
        // for byte: the copy says so on every reading, and no edit of it
        // is written.
        let written = match raw.iter().find(|(p, _)| p == path) {
            Some((_, bytes)) => dir.write_bytes(path, bytes).await,
            None => dir.write(path, text).await,
        };
        if let Err(e) = written {
            state.message.set(format!("Could not copy {path}: {e}"));
            return;
        }
    }
    let count = notes.files.len();
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

pub(crate) fn download_zip(state: AppState) {
    // Notes and `plan.canvas` only: the settings read from dot-folders
    // (`.obsidian/app.json`, …) are Obsidian's, changed there since they were
    // read; a copy unpacked over the vault must not put old ones back.
    // A note that is not UTF-8, or too large to read, is left out too: it
    // was never edited here, and its text (U+FFFD for its bytes, or none)
    // unpacked over it would lose them.
    let Some((files, left_out)) = state.with_doc(|d| {
        let files = d
            .files
            .iter()
            .filter(|(path, _)| !path.split('/').any(|part| part.starts_with('.')))
            .filter(|(path, _)| !d.unread.iter().any(|(p, _)| p == *path))
            .map(|(path, text)| (path.clone(), text.clone()))
            .collect::<std::collections::BTreeMap<_, _>>();
        (files, d.unread.len())
    }) else {
        return;
    };
    let name = match state.mode.get_untracked() {
        Mode::Copy(name) | Mode::Folder(name) => name,
        _ => "example-vault".to_string(),
    };
    let bytes = fs::zip(&files);
    fs::download(&format!("{name}.zip"), &bytes, "application/zip");
    let kept = match left_out {
        0 => String::new(),
        n => format!("; {n} note(s) that are not UTF-8 or too large left out, as they are"),
    };
    state.message.set(format!(
        "Downloaded {name}.zip ({} files{kept})",
        files.len()
    ));
}

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    // Every component below reads the state it shows from context.
    provide_context(state);
    provide_context(state.run);
    ThemeState::provide();
    DockState::provide();
    spawn_local(async move {
        // Before the first plan is drawn, so the tests see every frame of it.
        if on_demand::test_hook_asked() {
            let _ = on_demand::test_hook(state).await;
        }
        start(state).await;
        on_demand::preload_rest().await;
    });
    let (list, editing) = (ListState::new(), NoteEditing::new());
    provide_context(list);
    provide_context(editing);
    crate::later_checks::keep_in_step(state);
    crate::modal_focus::keep_focus_in(move || state.run.settings_open.get(), "settings");
    crate::modal_focus::keep_focus_in(move || editing.is_open(), "note-editor");
    poll_for_outside_changes(state);
    listen_on_the_page(state);
    state.run.start_worker(state);

    view! {
        <Toolbar />
        <section class="mode" aria-label="Open vault">
            <p id="mode">{move || state.mode.get().describe()}</p>
            // Which of the vault's plans is open: part of what is open, and
            // the toolbar stays one row at 1280 px.
            <PlanFolderPicker />
        </section>
        <ResumeOfferBar />
        <main class="workspace" class:loading=move || state.loading.with(Option::is_some)>
            <div class="plan-area">
                <Show when=move || list.shown.get()>{on_demand::show("The list view", on_demand::plan_list)}</Show>
                <div class="canvas-area">
                    <PlanCanvas />
                    <CanvasHelp />
                    <OpenProgress />
                </div>
            </div>
            <Dock />
        </main>
        <RejectedChange />
        <StatusLines />
        {on_demand::show("The edit dialogs", on_demand::dialogs)}
        {on_demand::show("The note picker", on_demand::note_picker)}
        {on_demand::show("The note editor", on_demand::note_editor)}
        <SettingsDialog />
    }
}

/// Outside changes: poll (cheap: unchanged files are not re-read).
fn poll_for_outside_changes(state: AppState) {
    let poll = Closure::<dyn FnMut()>::new(move || spawn_local(async move { state.poll().await }));
    if let Some(w) = web_sys::window() {
        let _ = w.set_interval_with_callback_and_timeout_and_arguments_0(
            poll.as_ref().unchecked_ref(),
            POLL_MS,
        );
    }
    poll.forget();
}

/// Undo/redo from anywhere except while typing in a field, and a vault
/// folder dropped anywhere on the page.
fn listen_on_the_page(state: AppState) {
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
}

/// "Reading files: 120 of 2000" while a vault is read.
#[component]
fn OpenProgress() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <Show when=move || state.loading.with(Option::is_some)>
            <p id="open-progress" class="open-progress" role="status">{move || {
                let (done, total) = state.loading.get().unwrap_or_default();
                format!("Reading files: {done} of {total}")
            }}</p>
        </Show>
    }
}

/// The change refused because its notes changed outside, and those queued
/// after it: what each would have written, readable and copyable.
#[component]
fn RejectedChange() -> impl IntoView {
    let state = expect_context::<AppState>();
    let title = move || {
        state.rejected.with(|r| {
            let summaries: Vec<&str> = r.iter().map(|c| c.summary.as_str()).collect();
            format!("Not written: {}", summaries.join("; "))
        })
    };
    view! {
        <Show when=move || state.rejected.with(|r| !r.is_empty())>
            <section class="rejected" aria-labelledby="rejected-title">
                <h2 id="rejected-title">{title}</h2>
                <p>"The notes changed outside planvault first, so this is what your edits would have written. Copy what you need; the notes on disk were not touched."</p>
                {move || {
                    state
                        .rejected
                        .get()
                        .into_iter()
                        .enumerate()
                        .flat_map(|(n, c)| {
                            c.files.into_iter().filter_map(move |f| {
                                let text = f.after?;
                                // The first change's fields keep their names
                                // (`rejected-PATH`); a later one's are numbered.
                                let id = match n {
                                    0 => format!("rejected-{}", f.path),
                                    n => format!("rejected-{}-{}", n + 1, f.path),
                                };
                                Some((id, f.path, text))
                            })
                        })
                        .map(|(id, path, text)| {
                            view! {
                                <label for=id.clone()>{path}</label>
                                <textarea id=id readonly rows="6">{text}</textarea>
                            }
                        })
                        .collect_view()
                }}
                <button on:click=move |_| state.rejected.set(Vec::new())>"Dismiss"</button>
            </section>
        </Show>
    }
}

/// The footer: the plan in one line, the last message, the worker.
#[component]
fn StatusLines() -> impl IntoView {
    let state = expect_context::<AppState>();
    let worker_status = move || {
        state.run.view.with(|v| match &v.worker {
            WorkerState::Starting => "Worker: starting".to_string(),
            WorkerState::Ready => "Worker: ready".to_string(),
            WorkerState::Broken(why) => format!("Worker: {why}"),
        })
    };
    view! {
        <footer>
            <p id="plan-summary" role="status">{move || plan_summary(state)}</p>
            <p id="status" role="status" aria-live="polite">{move || state.message.get()}</p>
            <p id="worker-status" role="status">{worker_status}</p>
        </footer>
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
