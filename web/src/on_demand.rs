//! The parts of the app that are not needed for the first paint of a plan
//! (the dialogs, the side panel's panes, the list view, the repair editor,
//! Settings, the writer and the `plan.canvas` writer, the run client, the tool check, the
//! zip download), each its own wasm file, fetched after the page is up or
//! on first use.
//!
//! The shipped app is built with the feature `split`: each part below is a
//! `wasm_split` split point (what Leptos's `#[lazy]` is made of), and
//! `scripts/build-web.mjs` cuts cargo's wasm at them with
//! `tools/wasm-split`. The main module then holds the toolbar, the canvas
//! and the vault's parse and layout, and the first paint waits for no more.
//! Without the feature (the wasm-bindgen tests, native checks) a part is a
//! plain function linked into the one module.
//!
//! A part that cannot be fetched (the server went away, or a newer build
//! replaced the page's files) shows where it would be what to do, and is
//! fetched again the next time it is shown; the app keeps running.

use crate::commands;
use crate::dialog::DialogView;
use crate::list_view::PlanList;
use crate::note_editor::NoteEditor;
use crate::note_picker::NotePicker;
use crate::panel::SidePanel;
use crate::run_client::RunClient;
use crate::run_panel::RunPanel;
use crate::settings_dialog::SettingsForm;
use crate::state::AppState;
use leptos::prelude::*;
use planvault_layout::Point;
use send_wrapper::SendWrapper;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use wasm_bindgen::JsValue;

/// Parts being fetched for the view right now (the tests wait for none).
static LOADING: AtomicUsize = AtomicUsize::new(0);

/// One part's fetch in `LOADING`, until done or dropped (a part hidden
/// again while it loads).
struct Loading;

impl Loading {
    fn start() -> Self {
        LOADING.fetch_add(1, Ordering::Relaxed);
        Loading
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        LOADING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How many shown parts are still being fetched.
pub fn loading() -> usize {
    LOADING.load(Ordering::Relaxed)
}

#[cfg(feature = "split")]
pub use wasm_split_helpers::SplitLoaderError as LoadError;

/// Why a part did not load (never, without `split`).
#[cfg(not(feature = "split"))]
#[derive(Debug)]
pub struct LoadError;

/// Whether the page asks for the end-to-end tests' hook: the tests set
/// `window.planvaultTestHook` before the app loads (a page's own script
/// could reach everything the hook shows anyway). People never fetch it.
pub fn test_hook_asked() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"planvaultTestHook".into()).ok())
        .is_some_and(|asked| asked.is_truthy())
}

/// Installs `window.planvaultTest` (`crate::test_hook`), once its code is in.
#[cfg(feature = "split")]
#[wasm_split_helpers::wasm_split(test_hook, fallible)]
pub fn test_hook(state: AppState) -> Result<(), LoadError> {
    crate::test_hook::install(state);
    Ok(())
}
#[cfg(not(feature = "split"))]
pub async fn test_hook(state: AppState) -> Result<(), LoadError> {
    crate::test_hook::install(state);
    Ok(())
}

/// `part!(name, preload_name, view)`: the async `name()` gives the part's
/// view once its code is loaded; `preload_name()` fetches it ahead of use.
#[cfg(feature = "split")]
macro_rules! part {
    ($name:ident, $preload:ident, $view:expr) => {
        #[wasm_split_helpers::wasm_split($name, fallible, preload(#[allow(dead_code)] $preload))]
        pub fn $name() -> Result<AnyView, LoadError> {
            Ok($view.into_any())
        }
    };
}
#[cfg(not(feature = "split"))]
macro_rules! part {
    ($name:ident, $preload:ident, $view:expr) => {
        pub async fn $name() -> Result<AnyView, LoadError> {
            Ok($view.into_any())
        }
        #[allow(dead_code)]
        pub async fn $preload() -> Result<(), LoadError> {
            Ok(())
        }
    };
}

part!(dialogs, preload_dialogs, view! { <DialogView /> });
part!(note_picker, preload_note_picker, view! { <NotePicker /> });
part!(note_editor, preload_note_editor, view! { <NoteEditor /> });
part!(plan_list, preload_plan_list, view! { <PlanList /> });
part!(side_panel, preload_side_panel, view! { <SidePanel /> });
part!(run_panel, preload_run_panel, view! { <RunPanel /> });
part!(settings, preload_settings, view! { <SettingsForm /> });

/// `action!(name, preload_name, (args) => body)`: the async `name(args)`
/// runs `body` once the part's code is loaded; `preload_name()` fetches it
/// ahead of use. Without `split`, both are plain async functions.
#[cfg(feature = "split")]
macro_rules! action {
    ($name:ident, $preload:ident, ($($arg:ident: $ty:ty),*) => $body:expr) => {
        #[wasm_split_helpers::wasm_split($name, fallible, preload(#[allow(dead_code)] $preload))]
        pub fn $name($($arg: $ty),*) -> Result<(), LoadError> {
            $body;
            Ok(())
        }
    };
}
#[cfg(not(feature = "split"))]
macro_rules! action {
    ($name:ident, $preload:ident, ($($arg:ident: $ty:ty),*) => $body:expr) => {
        pub async fn $name($($arg: $ty),*) -> Result<(), LoadError> {
            $body;
            Ok(())
        }
        #[allow(dead_code)]
        pub async fn $preload() -> Result<(), LoadError> {
            Ok(())
        }
    };
}

/// A part in the view: nothing until its code is in (a few milliseconds
/// after the page, or at once without `split`), then the part. If it
/// cannot be fetched, an alert says so (`what`: "The list view"), with a button that fetches it again.
pub fn show<F>(what: &'static str, part: fn() -> F) -> impl IntoView
where
    F: Future<Output = Result<AnyView, LoadError>> + 'static,
{
    let attempt = RwSignal::new(0_u32);
    move || {
        attempt.track();
        Suspend::new(SendWrapper::new(async move {
            let loading = Loading::start();
            let loaded = part().await;
            drop(loading);
            match loaded {
                Ok(view) => view,
                Err(_) => view! {
                    <p class="part-failed" role="alert">
                        {what}" could not be loaded: the server may be down "
                        "or have a newer planvault (then reload the page). "
                        <button on:click=move |_| attempt.update(|n| *n += 1)>"Try again"</button>
                    </p>
                }
                .into_any(),
            }
        }))
    }
}

/// What a drag or **Auto layout** writes to `plan.canvas`.
pub enum CanvasEdit {
    /// Cards dragged to new top-left corners.
    Move(Vec<(usize, Point)>),
    /// Every placed position forgotten, the plan laid out afresh.
    Relayout,
}

/// Writes positions to `plan.canvas`. Its writer (reading the file with
/// its keys in order, Obsidian's layout) is a part of its own: the first
/// paint needs none. Counted in [`loading`] until done, so the tests' idle
/// waits for it.
pub fn edit_canvas(state: AppState, edit: CanvasEdit) {
    in_background(
        state,
        canvas_edit(state, edit),
        "Not saved: the canvas writer could not be loaded (the server may be down \
         or have a newer planvault: then reload the page)",
    );
}

/// Runs a part's `action`, counted in [`loading`] until done (the tests'
/// idle waits for it); if the part cannot be fetched, the status line says
/// `failed`.
fn in_background(
    state: AppState,
    action: impl Future<Output = Result<(), LoadError>> + 'static,
    failed: &'static str,
) {
    let loading = Loading::start();
    leptos::task::spawn_local(async move {
        let done = action.await;
        drop(loading);
        if done.is_err() {
            state.message.set(failed.into());
        }
    });
}

fn apply_canvas_edit(state: AppState, edit: CanvasEdit) {
    match edit {
        CanvasEdit::Move(moves) => state.run_if_any(|doc| commands::move_nodes(doc, &moves)),
        CanvasEdit::Relayout => {
            state.run_if_any(commands::reset_layout);
            // Edits keep cards in place; this is the full re-layout.
            state.open.update(|o| {
                if let Some(o) = o {
                    *o = crate::state::Open::new(o.doc.laid_out_afresh());
                }
            });
            state.fit();
        }
    }
}

action!(canvas_edit, preload_canvas_edit, (state: AppState, edit: CanvasEdit) => apply_canvas_edit(state, edit));

// The writer (`AppState::drain`: conflict checks, putting back a change
// that failed partway, what the status line says): the first paint writes
// nothing.
action!(write_queue, preload_write_queue, (state: AppState) => leptos::task::spawn_local(state.drain()));

/// Hands a message of the worker to the run client. Its handling (the
/// protocol's decoding, the run view's updates) is a part: the first paint
/// needs none of it, and the worker's first message comes after that paint.
pub async fn worker_message(
    client: RunClient,
    state: AppState,
    data: JsValue,
) -> Result<(), LoadError> {
    let _loading = Loading::start();
    run_client(client, state, RunAction::Message(data)).await
}

/// Starts a run ([`RunClient::run`]): its code is in the run client's part.
pub async fn start_run(
    client: RunClient,
    state: AppState,
    fresh: bool,
    step: bool,
) -> Result<(), LoadError> {
    let _loading = Loading::start();
    run_client(client, state, RunAction::Start { fresh, step }).await
}

/// What the run client's part is asked to do.
pub enum RunAction {
    /// Handle a message the worker posted.
    Message(JsValue),
    /// Start a run.
    Start { fresh: bool, step: bool },
}

action!(run_client, preload_run_client, (client: RunClient, state: AppState, action: RunAction) => match action {
    RunAction::Message(data) => client.handle(state, &data),
    RunAction::Start { fresh, step } => client.start(state, fresh, step),
});

/// Offers the open copy's notes as a zip download (the toolbar's
/// **Download zip**); the zip writer is a part of its own.
pub fn download_zip(state: AppState) {
    in_background(
        state,
        zip_download(state),
        "Not downloaded: the zip writer could not be loaded (the server may be down or \
         have a newer planvault: then reload the page)",
    );
}

action!(zip_download, preload_zip_download, (state: AppState) => crate::app::download_zip(state));

/// The pause before a part that could not be fetched is fetched again:
/// 1, 2, 4 … up to 30 seconds, from 1 again after a fetch that worked.
pub struct Retry {
    wait_ms: i32,
}

impl Retry {
    pub fn new() -> Self {
        Retry { wait_ms: 1_000 }
    }

    /// Waits, and makes the next wait twice as long.
    pub async fn wait(&mut self) {
        crate::run_client::sleep(self.wait_ms).await;
        self.wait_ms = (self.wait_ms * 2).min(30_000);
    }
}

/// Fetches the checks the first paint does not wait for
/// (`crate::later_checks`), counted in [`loading`] until they are in.
pub async fn load_later_checks() -> Result<(), LoadError> {
    let _loading = Loading::start();
    later_checks().await
}

action!(later_checks, preload_later_checks, () => crate::later_checks::install());

/// Fetches the parts not shown at start-up (the writer, the canvas
/// writer, Settings, the list view), one after another, once the plan is up, so a drag or
/// opening them does not wait.
pub async fn preload_rest() {
    // A part that fails here is fetched again when it is used.
    let _ = preload_write_queue().await;
    let _ = preload_canvas_edit().await;
    let _ = preload_settings().await;
    let _ = preload_plan_list().await;
}
