//! The app shell: toolbar, canvas, side panel, dialog; opening vaults
//! (example, picker, remembered folder, read-only fallback); polling for
//! outside changes; global shortcuts; and the test hook.

use crate::canvas_view::PlanCanvas;
use crate::commands;
use crate::dialog::DialogView;
use crate::fs::{self, VaultDir, COPY_FOLDER, EXAMPLE_FOLDER};
use crate::panel::SidePanel;
use crate::run::WorkerState;
use crate::run_panel::{AskDialog, ResumeOfferBar, RunPanel, SettingsDialog};
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
async fn open_example(state: AppState) {
    let _settles = state.settles_open();
    let ticket = state.begin_open();
    let bundled = crate::example::files();
    match VaultDir::private(EXAMPLE_FOLDER).await {
        Ok(dir) => {
            let mut files = dir.read_all().await.unwrap_or_default();
            if files.is_empty() {
                for (path, text) in &bundled {
                    if let Err(e) = dir.write(path, text).await {
                        state
                            .message
                            .set(format!("Could not store the example in this browser: {e}"));
                    }
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
    match dir.read_all().await {
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
    if let Some(dir) = fs::remembered().await {
        match dir.permission(false).await.as_str() {
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
    install_test_hook(state);
    spawn_local(start(state));

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
                Ok(dir) => {
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
        state.fit_requested.update(|n| *n += 1);
    };

    state.run.start_worker(state);
    let worker_status = move || {
        state.run.view.with(|v| match &v.worker {
            WorkerState::Starting => "Worker: starting".to_string(),
            WorkerState::Ready => "Worker: ready".to_string(),
            WorkerState::Broken(why) => format!("Worker: {why}"),
        })
    };

    view! {
        <header class="toolbar" role="toolbar" aria-label="Vault">
            <span class="brand">"planvault"</span>
            {if picker {
                view! { <button id="open-vault" on:click=on_open>"Open vault…"</button> }.into_any()
            } else {
                view! {
                    <label class="button" for="open-folder">"Open folder (read-only)…"</label>
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
            <button on:click=on_example>"Example"</button>
            <span class="sep"></span>
            <button id="new-node" on:click=on_new>"New node"</button>
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
            <button on:click=move |_| state.fit_requested.update(|n| *n += 1)>"Fit"</button>
            <button on:click=on_relayout title="Forget dragged positions">"Auto layout"</button>
            <Show when=move || matches!(state.mode.get(), Mode::Copy(_))>
                <button id="download" on:click=move |_| download_zip(state)>"Download zip"</button>
            </Show>
            <span class="sep"></span>
            <button id="run-toggle" aria-pressed=move || state.run.panel_open.get().to_string()
                on:click=move |_| state.run.panel_open.update(|o| *o = !*o)>"Run…"</button>
        </header>
        <p id="mode" class="mode">{move || state.mode.get().describe()}</p>
        <ResumeOfferBar state=state />
        <main class="workspace" class:with-run=move || state.run.panel_open.get()>
            <PlanCanvas state=state />
            <SidePanel state=state />
            <Show when=move || state.run.panel_open.get()>
                <RunPanel state=state />
            </Show>
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
        <SettingsDialog state=state />
        <AskDialog state=state />
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
        format!(
            "Plan: {} notes, {} edges, {verdict}",
            checked.plan.nodes.len(),
            checked.plan.edges.len()
        )
    })
}

/// `window.planvaultTest`: what the end-to-end tests need and a person
/// never sees. The File System Access picker cannot be automated, so tests
/// hand the app an origin-private directory handle instead; the rest tells
/// them where things are drawn and what the app holds.
fn install_test_hook(state: AppState) {
    let hook = js_sys::Object::new();
    let set = |name: &str, f: JsValue| {
        let _ = js_sys::Reflect::set(&hook, &name.into(), &f);
    };

    set(
        "openHandle",
        Closure::<dyn Fn(JsValue) -> js_sys::Promise>::new(move |handle: JsValue| {
            wasm_bindgen_futures::future_to_promise(async move {
                open_folder(state, VaultDir::from_handle(handle), false).await;
                Ok(JsValue::TRUE)
            })
        })
        .into_js_value(),
    );

    // Page coordinates of a world point.
    let to_page = move |p: Point| -> JsValue {
        let v = state.viewport.get_untracked();
        let s = v.to_screen(p);
        let (left, top) = document()
            .get_element_by_id("plan-canvas")
            .map(|c| {
                let r = c.get_bounding_client_rect();
                (r.left(), r.top())
            })
            .unwrap_or((0.0, 0.0));
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"x".into(), &(left + s.x).into());
        let _ = js_sys::Reflect::set(&o, &"y".into(), &(top + s.y).into());
        o.into()
    };

    set(
        "nodePoint",
        Closure::<dyn Fn(String, String) -> JsValue>::new(move |id: String, part: String| {
            let p = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                let r = o.scene.nodes[o.doc.node_index(&id)?];
                Some(match part.as_str() {
                    "handle" => crate::geometry::handle_center(&r),
                    "breakpoint" => crate::geometry::breakpoint_center(&r),
                    // On the ring the canvas draws round the run's active node.
                    "ring" => Point {
                        x: r.x - 6.0,
                        y: r.y + r.height / 2.0,
                    },
                    _ => Point {
                        x: r.x + r.width / 2.0,
                        y: r.y + 22.0,
                    },
                })
            });
            p.map_or(JsValue::NULL, to_page)
        })
        .into_js_value(),
    );

    set(
        "edgePoint",
        Closure::<dyn Fn(String, String, String) -> JsValue>::new(
            move |from: String, to: String, part: String| {
                let p = state.open.with_untracked(|o| {
                    let o = o.as_ref()?;
                    let (f, t) = (o.doc.node_index(&from)?, o.doc.node_index(&to)?);
                    let e = o
                        .doc
                        .checked
                        .plan
                        .edges
                        .iter()
                        .position(|e| e.from == f && e.to == Some(t))?;
                    let shape = o.scene.shape_of_edge(e)?;
                    Some(match part.as_str() {
                        "head" => shape.head(),
                        "label" => shape
                            .label_box
                            .map(|b| b.center())
                            .unwrap_or(shape.points[shape.points.len() / 2]),
                        _ => {
                            let (a, b) = (shape.points[0], shape.points[1]);
                            Point {
                                x: (a.x + b.x) / 2.0,
                                y: (a.y + b.y) / 2.0,
                            }
                        }
                    })
                });
                p.map_or(JsValue::NULL, to_page)
            },
        )
        .into_js_value(),
    );

    set(
        "plan",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let json = state.open.with_untracked(|o| {
                o.as_ref().map(|o| {
                    let plan = &o.doc.checked.plan;
                    serde_json::json!({
                        "nodes": plan.nodes.iter().map(|n| serde_json::json!({
                            "id": n.id, "title": n.title, "status": n.status.as_str(), "kind": n.kind.as_str(),
                        })).collect::<Vec<_>>(),
                        "edges": plan.edges.iter().map(|e| serde_json::json!({
                            "from": plan.nodes[e.from].id,
                            "to": e.to.map(|t| plan.nodes[t].id.clone()),
                            "label": e.label,
                            "line": e.pos.as_ref().map(|p| p.line),
                        })).collect::<Vec<_>>(),
                        "diagnostics": o.doc.checked.diagnostics.iter().map(|d| d.code.as_str()).collect::<Vec<_>>(),
                        "positions": o.doc.positions.keys().collect::<Vec<_>>(),
                    })
                    .to_string()
                })
            });
            json.map_or(JsValue::NULL, |s| js_sys::JSON::parse(&s).unwrap_or(JsValue::NULL))
        })
        .into_js_value(),
    );

    set(
        "idle",
        Closure::<dyn Fn() -> js_sys::Promise>::new(move || {
            wasm_bindgen_futures::future_to_promise(async move {
                // Resolves once every queued write has reached the disk.
                while state.busy() {
                    let wait = js_sys::Promise::new(&mut |resolve, _| {
                        if let Some(w) = web_sys::window() {
                            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
                                &resolve, 20,
                            );
                        }
                    });
                    let _ = wasm_bindgen_futures::JsFuture::from(wait).await;
                }
                Ok(JsValue::TRUE)
            })
        })
        .into_js_value(),
    );

    set(
        "selection",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let ids = state.selection.with_untracked(|s| s.nodes.clone());
            let array = js_sys::Array::new();
            for id in ids {
                array.push(&id.into());
            }
            array.into()
        })
        .into_js_value(),
    );

    set(
        "setPolling",
        Closure::<dyn Fn(bool)>::new(move |on: bool| state.polling.set_value(on)).into_js_value(),
    );

    set(
        "poll",
        Closure::<dyn Fn() -> js_sys::Promise>::new(move || {
            wasm_bindgen_futures::future_to_promise(async move {
                let was = state.polling.get_value();
                state.polling.set_value(true);
                state.poll().await;
                state.polling.set_value(was);
                Ok(JsValue::TRUE)
            })
        })
        .into_js_value(),
    );

    set(
        "frameTimes",
        Closure::<dyn Fn(bool) -> JsValue>::new(move |reset: bool| {
            let times = state.frame_times.get_value();
            if reset {
                state.frame_times.set_value(Vec::new());
            }
            let array = js_sys::Array::new();
            for t in times {
                array.push(&t.into());
            }
            array.into()
        })
        .into_js_value(),
    );

    set(
        "centerOn",
        Closure::<dyn Fn(String, f64)>::new(move |id: String, zoom: f64| {
            let Some(center) = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                Some(o.scene.nodes[o.doc.node_index(&id)?].center())
            }) else {
                return;
            };
            state.viewport.update(|v| {
                v.zoom = zoom;
                v.offset = Point {
                    x: center.x - v.width / 2.0 / zoom,
                    y: center.y - v.height / 2.0 / zoom,
                };
            });
        })
        .into_js_value(),
    );

    set(
        "viewport",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let v = state.viewport.get_untracked();
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"zoom".into(), &v.zoom.into());
            let _ = js_sys::Reflect::set(&o, &"x".into(), &v.offset.x.into());
            let _ = js_sys::Reflect::set(&o, &"y".into(), &v.offset.y.into());
            o.into()
        })
        .into_js_value(),
    );

    set(
        "opensSettled",
        Closure::<dyn Fn() -> JsValue>::new(move || state.opens_settled().into()).into_js_value(),
    );

    set(
        "run",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let mut json = state.run.view.with_untracked(run_json);
            json["discarding"] = state.run.discarding().into();
            js_sys::JSON::parse(&json.to_string()).unwrap_or(JsValue::NULL)
        })
        .into_js_value(),
    );

    set(
        "canvasRun",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let json = state.run.drawn.get_value();
            js_sys::JSON::parse(&json.to_string()).unwrap_or(JsValue::NULL)
        })
        .into_js_value(),
    );

    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"planvaultTest".into(), &hook);
    }
}

/// The run as the tests read it (never an API key: the view holds none).
fn run_json(v: &crate::run::RunView) -> serde_json::Value {
    use crate::run::Phase;
    let error = |e: &planvault_protocol::RunError| serde_json::json!({ "code": e.code, "message": e.message, "hint": e.hint });
    serde_json::json!({
        "worker": match &v.worker {
            WorkerState::Starting => "starting".to_string(),
            WorkerState::Ready => "ready".to_string(),
            WorkerState::Broken(why) => format!("broken: {why}"),
        },
        "phase": v.phase.code(),
        "describe": v.phase.describe(),
        "pause": match &v.phase { Phase::Paused(reason) => serde_json::to_value(reason).unwrap_or_default(), _ => serde_json::Value::Null },
        "finish": match &v.phase {
            Phase::Finished { reason, answer, error: e } => serde_json::json!({
                "code": reason.code(), "describe": reason.describe(), "answer": answer, "error": e.as_ref().map(error),
            }),
            _ => serde_json::Value::Null,
        },
        "resumed": v.resumed,
        "active": v.active,
        "visits": v.visits,
        "statuses": v.statuses.iter().map(|(k, s)| (k.clone(), serde_json::json!(s.as_str()))).collect::<serde_json::Map<_, _>>(),
        "hop": v.hop.as_ref().map(|h| serde_json::json!({ "from": h.from, "to": h.to, "label": h.label, "seq": h.seq })),
        "trace": v.trace,
        "outputs": v.outputs.iter().map(|o| serde_json::json!({ "node": o.node, "visit": o.visit, "text": o.text })).collect::<Vec<_>>(),
        "live": v.live.as_ref().map(|l| serde_json::json!({ "node": l.node, "label": l.label(), "text": l.text })),
        "attempts": v.attempts.iter().map(|l| serde_json::json!({ "node": l.node, "label": l.label(), "text": l.text })).collect::<Vec<_>>(),
        "failed": v.failed.as_ref().map(|(n, r)| serde_json::json!({ "node": n, "reason": r })),
        "retries": v.retries,
        "retry": v.retry.as_ref().map(|r| serde_json::json!({ "node": r.node, "error": error(&r.error), "waitMs": r.wait_ms })),
        "error": v.error.as_ref().map(error),
        "ask": v.ask.as_ref().map(|a| serde_json::json!({ "request": a.request, "node": a.node, "visit": a.visit, "ask": a.ask })),
        "tools": v.tools.iter().map(|(n, t, ok)| serde_json::json!({ "node": n, "name": t, "ok": ok })).collect::<Vec<_>>(),
    })
}
