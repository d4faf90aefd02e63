//! The run client: starts the plan worker (`worker/`, built by
//! scripts/build-web.mjs as `planvault-worker`), queues messages until it says `Ready`, turns what it
//! posts into [`RunView`] updates, and keeps the open vault's notes in step
//! with the statuses the worker writes. Settings live in localStorage.
//!
//! Every decision is in the pure [`crate::run`] and [`crate::settings`];
//! this module is the edge where messages cross.

use crate::run::{interrupted_run, Phase, ResumeOffer, RunView, WorkerState};
use crate::settings::{
    command_servers, config_reach, config_servers, is_trusted, with_trusted, ConfigServer,
    Settings, STORAGE_KEY, TRUSTED_KEY,
};
use crate::state::{AppState, Mode, Open};
use leptos::prelude::*;
use leptos::task::spawn_local;
use planvault_core::engine::trace::{RunFiles, JOURNAL_FILE, RECEIPT_FILE, TRACE_FILE};
use planvault_protocol::{FromWorker, McpServer, PauseReason, StartRun, ToWorker};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// Where the vault lists its MCP servers (and the CLI its other settings).
const CONFIG_FILE: &str = ".planvault/config.toml";

/// A Run held until the person trusts what the vault's config reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustAsk {
    /// What the config reaches beyond the vault, one line each.
    pub reach: Vec<String>,
    /// The Run asked for: fresh, and stepping.
    pub fresh: bool,
    pub step: bool,
}

/// The vault's config as a Run reads it before it starts.
struct ConfigRead {
    servers: Vec<ConfigServer>,
    /// What it reaches beyond the vault, one line each (what is trusted).
    reach: Vec<String>,
    /// Its `[fetch] allow_hosts`, which that trust covers.
    allow_hosts: Vec<String>,
}

/// A Settings' test of an MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTest {
    Listing,
    Tools(Vec<String>),
    Failed(String),
}

/// The worker's loader (scripts/build-web.mjs): unhashed, next to index.html;
/// it imports the worker's content-hashed glue and wasm.
const WORKER_URL: &str = "./planvault-worker_loader.js";

/// The run's signals and the worker behind them (all `Copy`).
#[derive(Clone, Copy)]
pub struct RunClient {
    pub view: RwSignal<RunView>,
    pub settings: RwSignal<Settings>,
    /// Node ids that pause after their work.
    pub breakpoints: RwSignal<BTreeSet<String>>,
    /// Pause when this node is entered.
    pub run_to: RwSignal<Option<String>>,
    pub query: RwSignal<String>,
    /// The open vault holds an interrupted run.
    pub offer: RwSignal<Option<ResumeOffer>>,
    pub panel_open: RwSignal<bool>,
    pub settings_open: RwSignal<bool>,
    /// Why the last Run could not start (settings, no query, ...).
    pub refused: RwSignal<Option<String>>,
    /// The open vault's configured MCP servers (its `.planvault/config.toml`),
    /// or why they could not be read.
    pub config: RwSignal<Result<Vec<ConfigServer>, String>>,
    /// A Run that waits for the person to trust the vault's config.
    pub trust_ask: RwSignal<Option<TrustAsk>>,
    /// The Settings' tests of servers, by server name.
    pub mcp_tests: RwSignal<BTreeMap<String, McpTest>>,
    worker: StoredValue<Option<Worker>, LocalStorage>,
    /// Posts waiting for the worker's `Ready`.
    queue: StoredValue<Vec<JsValue>, LocalStorage>,
    /// The worker's messages not yet handled, oldest first: their handling
    /// (the protocol's decoding, the run view's updates) is a part of the
    /// app loaded after the first paint (`on_demand::worker_message`).
    inbox: StoredValue<VecDeque<JsValue>, LocalStorage>,
    /// A task is handing the inbox over, in order.
    draining: StoredValue<bool, LocalStorage>,
    /// A run of the previously open vault is being stopped: its last
    /// messages are not about the vault on screen.
    discarding: StoredValue<bool, LocalStorage>,
    /// Where the open vault's breakpoints are remembered (see [`breakpoints_key`]).
    breakpoints_key: StoredValue<Option<String>, LocalStorage>,
    /// The decisions taken elsewhere the person took as given, for the
    /// next start to give back ([`StartRun::take_decisions`]).
    take_decisions: StoredValue<Option<String>, LocalStorage>,
}

/// Where an open vault's breakpoints are kept between visits, in this
/// browser's localStorage: by kind of vault and folder name, so a reload
/// (or opening the folder again) keeps them.
fn breakpoints_key(mode: &Mode) -> Option<String> {
    match mode {
        Mode::Loading => None,
        Mode::Example => Some("planvault.breakpoints.example".into()),
        Mode::Folder(name) => Some(format!("planvault.breakpoints.folder.{name}")),
        Mode::Copy(name) => Some(format!("planvault.breakpoints.copy.{name}")),
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

impl RunClient {
    pub fn new() -> RunClient {
        let stored = storage().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten());
        RunClient {
            view: RwSignal::new(RunView::default()),
            settings: RwSignal::new(Settings::load(stored.as_deref())),
            breakpoints: RwSignal::new(BTreeSet::new()),
            run_to: RwSignal::new(None),
            query: RwSignal::new(String::new()),
            offer: RwSignal::new(None),
            panel_open: RwSignal::new(false),
            settings_open: RwSignal::new(false),
            refused: RwSignal::new(None),
            config: RwSignal::new(Ok(Vec::new())),
            trust_ask: RwSignal::new(None),
            mcp_tests: RwSignal::new(BTreeMap::new()),
            worker: StoredValue::new_local(None),
            queue: StoredValue::new_local(Vec::new()),
            inbox: StoredValue::new_local(VecDeque::new()),
            draining: StoredValue::new_local(false),
            discarding: StoredValue::new_local(false),
            breakpoints_key: StoredValue::new_local(None),
            take_decisions: StoredValue::new_local(None),
        }
    }

    /// Keeps the settings (keys included) in this browser only.
    pub fn save_settings(&self, settings: Settings) {
        if let Some(s) = storage() {
            let _ = s.set_item(STORAGE_KEY, &settings.to_json());
        }
        self.settings.set(settings);
        self.refused.set(None);
    }

    /// Starts the worker; its messages update the view from then on.
    pub fn start_worker(&self, state: AppState) {
        let client = *self;
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let worker = match Worker::new_with_options(WORKER_URL, &options) {
            Ok(worker) => worker,
            Err(err) => {
                let text = err
                    .as_string()
                    .unwrap_or_else(|| "the browser refused".into());
                client.view.update(|v| {
                    v.worker = WorkerState::Broken(format!("could not start ({text})"))
                });
                return;
            }
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let data = event.data();
            // The first protocol's plain "ready" string: the envelope follows it.
            if data.is_string() {
                return;
            }
            client.inbox.update_value(|inbox| inbox.push_back(data));
            if !client.draining.get_value() {
                client.draining.set_value(true);
                spawn_local(client.drain(state));
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            client.view.update(|v| {
                v.worker = WorkerState::Broken("the worker stopped with an error".into())
            });
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // The app lives as long as the page: so do the handlers.
        on_message.forget();
        on_error.forget();
        self.worker.set_value(Some(worker));
    }

    /// Hands the inbox's messages to their handler one after another, in the
    /// order the worker posted them. If the handler's part cannot be
    /// fetched, the message stays first in line, the footer says so, and
    /// the fetch is tried again after 1, 2, 4 … up to 30 seconds: the worker
    /// posts nothing more until it hears from the app, and the app does not
    /// post before the worker's `Ready` is handled.
    async fn drain(self, state: AppState) {
        let mut retry = crate::on_demand::Retry::new();
        while let Some(data) = self.inbox.try_update_value(VecDeque::pop_front).flatten() {
            if crate::on_demand::worker_message(self, state, data.clone())
                .await
                .is_ok()
            {
                retry = crate::on_demand::Retry::new();
                continue;
            }
            self.inbox.update_value(|inbox| inbox.push_front(data));
            self.view.update(|v| {
                v.worker = WorkerState::Broken(
                    "the run client could not be loaded (the server may be down or have a \
                     newer planvault: then reload the page); trying again"
                        .into(),
                )
            });
            retry.wait().await;
        }
        self.draining.set_value(false);
    }

    /// Decodes and applies one message of the worker (in the part
    /// `on_demand::worker_message`).
    pub(crate) fn handle(&self, state: AppState, data: &JsValue) {
        match planvault_protocol::js::from_worker(data) {
            Ok(message) => self.receive(state, message),
            Err(err) => self
                .view
                .update(|v| v.worker = WorkerState::Broken(err.to_string())),
        }
    }

    /// Reads the open vault's MCP servers from its config (none without one).
    pub async fn load_config(&self, state: AppState) -> Result<Vec<ConfigServer>, String> {
        self.read_config(state).await.map(|read| read.servers)
    }

    /// [`RunClient::load_config`], with what the config reaches beyond the
    /// vault in a browser run (its URL servers, its `[fetch] allow_hosts`).
    async fn read_config(&self, state: AppState) -> Result<ConfigRead, String> {
        let read = match state.vault.get_value() {
            Some(dir) => dir.read(CONFIG_FILE).await.map_err(|e| e.to_string()),
            None => Ok(None),
        };
        let text = read.map(Option::unwrap_or_default);
        let servers = text
            .as_deref()
            .map_err(Clone::clone)
            .and_then(config_servers);
        self.config.set(servers.clone());
        // A config the worker cannot read stops the run there, naming the line.
        let hosts = text
            .ok()
            .and_then(|t| planvault_runner::settings::parse(&t).ok())
            .map(|s| s.allow_hosts)
            .unwrap_or_default();
        servers.map(|servers| ConfigRead {
            reach: config_reach(&servers, &hosts),
            servers,
            allow_hosts: hosts,
        })
    }

    /// The held Run, once the person trusts the config's reach (kept in
    /// this browser's storage until the reach changes).
    pub fn trust_and_run(&self, state: AppState) {
        let Some(ask) = self.trust_ask.get_untracked() else {
            return;
        };
        self.trust_ask.set(None);
        if let Some(storage) = storage() {
            let stored = storage.get_item(TRUSTED_KEY).ok().flatten();
            let _ = storage.set_item(TRUSTED_KEY, &with_trusted(stored.as_deref(), &ask.reach));
        }
        self.run(state, ask.fresh, ask.step);
    }

    /// Resume, taking as given the decisions a resume's journal holds
    /// that no run here took (`listing`: the refusal's message, as shown).
    pub fn take_decisions_and_resume(&self, state: AppState, listing: String) {
        self.take_decisions.set_value(Some(listing));
        self.run(state, false, false);
    }

    /// Asks the worker for a server's tools (the answer lands in `mcp_tests`).
    pub fn test_server(&self, server: McpServer) {
        self.mcp_tests
            .update(|t| drop(t.insert(server.name.clone(), McpTest::Listing)));
        self.send(ToWorker::ListTools { server }, None);
    }

    /// Whether a stopped run's last messages are still awaited (and dropped).
    pub fn discarding(&self) -> bool {
        self.discarding.get_value()
    }

    fn receive(&self, state: AppState, message: FromWorker) {
        if let FromWorker::ToolList {
            server,
            tools,
            error,
        } = message
        {
            let test = match error {
                Some(e) => McpTest::Failed(e),
                None => McpTest::Tools(tools),
            };
            self.mcp_tests.update(|t| drop(t.insert(server, test)));
            return;
        }
        if self.discarding.get_value() && !matches!(message, FromWorker::Ready { .. }) {
            if matches!(
                message,
                FromWorker::Finished { .. } | FromWorker::Failed { .. }
            ) {
                self.discarding.set_value(false);
            }
            return;
        }
        match &message {
            FromWorker::Ready { .. } => {
                self.view.update(|v| v.worker = WorkerState::Ready);
                let queued = self
                    .queue
                    .try_update_value(std::mem::take)
                    .unwrap_or_default();
                for value in queued {
                    self.post_value(&value);
                }
            }
            FromWorker::Status { node, .. } => spawn_local(refresh_note(state, node.clone())),
            // Run-to holds once: the worker forgets it when reached, so does the select.
            FromWorker::Paused {
                reason: PauseReason::RunTo { .. },
            } => self.run_to.set(None),
            FromWorker::Finished { reason, .. } => {
                self.offer.set(None);
                state.message.set(crate::run::finish_message(reason));
                // The worker's last writes may not have been announced one by one.
                spawn_local(async move { state.poll().await });
            }
            _ => {}
        }
        self.view.update(|v| v.apply(message));
    }

    fn post_value(&self, value: &JsValue) {
        let sent = self
            .worker
            .with_value(|w| w.as_ref().map(|w| w.post_message(value)));
        if let Some(Err(_)) | None = sent {
            self.view
                .update(|v| v.worker = WorkerState::Broken("could not post to the worker".into()));
        }
    }

    /// Sends `message` now, or once the worker is ready.
    pub fn send(&self, message: ToWorker, vault: Option<&JsValue>) {
        let value = planvault_protocol::js::encode(&message, vault);
        self.view.update(|v| v.sent(&message));
        if self.view.with_untracked(|v| v.worker == WorkerState::Ready) {
            self.post_value(&value);
        } else {
            self.queue.update_value(|q| q.push(value));
        }
    }

    /// Starts a run of the open vault (fresh, or resuming what it holds).
    /// With `step`, it pauses after the first node's work. What starts it
    /// (the run's settings and servers checked, the vault's config read) is
    /// in the run client's part, with the handling of the worker's messages.
    pub fn run(&self, state: AppState, fresh: bool, step: bool) {
        let client = *self;
        spawn_local(async move {
            if crate::on_demand::start_run(client, state, fresh, step)
                .await
                .is_err()
            {
                client.refused.set(Some(
                    "The run client could not be loaded: the server may be down or have a \
                     newer planvault (then reload the page)."
                        .into(),
                ));
            }
        });
    }

    /// [`RunClient::run`], once the run client's part is in.
    pub(crate) fn start(&self, state: AppState, fresh: bool, step: bool) {
        let client = *self;
        let query = self.query.get_untracked().trim().to_string();
        if query.is_empty() {
            self.refused
                .set(Some("Type what the run is for in Query first.".into()));
            return;
        }
        let roles = state
            .with_doc(|d| {
                d.checked
                    .plan
                    .nodes
                    .iter()
                    .map(|n| n.role.clone().unwrap_or_default())
                    .collect::<BTreeSet<_>>()
            })
            .unwrap_or_default();
        let settings = self.settings.get_untracked();
        let mode = match settings.run_mode(&roles) {
            Ok(mode) => mode,
            Err(e) => {
                self.refused.set(Some(format!("Run settings: {e}")));
                return;
            }
        };
        let Some(dir) = state.vault.get_value() else {
            self.refused.set(Some("Open a vault first.".into()));
            return;
        };
        // A plan folder runs in its vault: its links resolve among every
        // note, as the canvas draws them; its trace stays in the folder.
        let folder = state.with_doc(|d| d.folder.clone()).unwrap_or_default();
        self.refused.set(None);
        self.trust_ask.set(None);
        self.offer.set(None);
        let start = StartRun {
            query,
            mode,
            fresh,
            max_steps: settings.max_steps,
            autonomy: settings.autonomy(),
            breakpoints: self.breakpoints.get_untracked().into_iter().collect(),
            run_to: self.run_to.get_untracked(),
            max_prompt_bytes: Some(settings.max_prompt_bytes),
            retry: settings.retry,
            mcp_servers: Vec::new(),
            mcp_terminal_only: Vec::new(),
            folder,
            parallel: settings.parallel,
            parallel_at_most: None,
            take_decisions: self.take_decisions.get_value(),
            allow_hosts: Vec::new(),
        };
        self.take_decisions.set_value(None);
        // The panel says "starting" from the click on, not only once the
        // vault's config has been read and the run posted.
        let starting = ToWorker::Start(start.clone());
        self.view.update(|v| v.sent(&starting));
        spawn_local(async move {
            // Edits still on their way to disk go first: the run reads the notes.
            while state.busy() {
                sleep(20).await;
            }
            // The vault's URL servers and those added in the settings.
            let config = client.read_config(state).await;
            // What the config reaches beyond the vault is its author's
            // choice: nothing of it is reached until the person trusts it.
            let mut start = start;
            if let Ok(read) = &config {
                let stored = storage().and_then(|s| s.get_item(TRUSTED_KEY).ok().flatten());
                if !is_trusted(stored.as_deref(), &read.reach) {
                    client.trust_ask.set(Some(TrustAsk {
                        reach: read.reach.clone(),
                        fresh,
                        step,
                    }));
                    client.view.update(|v| v.phase = Phase::Idle);
                    return;
                }
                start.allow_hosts = read.allow_hosts.clone();
            }
            let config = config.map(|read| read.servers);
            let commands = config.as_deref().map(command_servers).unwrap_or_default();
            let servers = config.and_then(|c| settings.mcp_servers(&c).map_err(|e| e.to_string()));
            match servers {
                Ok(servers) => {
                    start.mcp_servers = servers;
                    // A URL server added in Settings under a command server's
                    // name is reachable here.
                    start.mcp_terminal_only = commands
                        .into_iter()
                        .filter(|name| !start.mcp_servers.iter().any(|s| &s.name == name))
                        .collect();
                }
                Err(e) => {
                    client.refused.set(Some(format!("Run settings: {e}")));
                    client.view.update(|v| v.phase = Phase::Idle);
                    return;
                }
            }
            client.send(ToWorker::Start(start), Some(dir.handle()));
            if step {
                client.send(ToWorker::Step, None);
            }
        });
    }

    pub fn toggle_breakpoint(&self, node: &str) {
        self.breakpoints.update(|b| {
            if !b.remove(node) {
                b.insert(node.to_string());
            }
        });
        if let (Some(key), Some(storage)) = (self.breakpoints_key.get_value(), storage()) {
            let nodes: Vec<String> = self.breakpoints.get_untracked().into_iter().collect();
            let _ = storage.set_item(&key, &serde_json::to_string(&nodes).unwrap_or_default());
        }
        if self.view.with_untracked(|v| v.phase.live()) {
            let nodes = self.breakpoints.get_untracked().into_iter().collect();
            self.send(ToWorker::SetBreakpoints { nodes }, None);
        }
    }

    pub fn set_run_to(&self, node: Option<String>) {
        self.run_to.set(node.clone());
        if self.view.with_untracked(|v| v.phase.live()) {
            self.send(ToWorker::RunTo { node }, None);
        }
    }

    /// A vault was opened: forget the previous one's run and look for an
    /// interrupted run in this one.
    pub fn vault_opened(&self, state: AppState) {
        if self.view.with_untracked(|v| v.phase.live()) {
            self.send(ToWorker::Stop, None);
            self.discarding.set_value(true);
        }
        let worker = self.view.with_untracked(|v| v.worker.clone());
        self.view.set(RunView {
            worker,
            ..RunView::default()
        });
        let key = breakpoints_key(&state.mode.get_untracked());
        let saved = key
            .as_deref()
            .and_then(|k| storage()?.get_item(k).ok().flatten());
        let saved: BTreeSet<String> = saved
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        self.breakpoints_key.set_value(key);
        self.breakpoints.set(saved);
        self.run_to.set(None);
        self.offer.set(None);
        self.trust_ask.set(None);
        let client = *self;
        spawn_local(async move {
            let Some(dir) = state.vault.get_value() else {
                return;
            };
            // The plan folder's own run, when the plan is one folder.
            let files = RunFiles::new(&state.with_doc(|d| d.folder.clone()).unwrap_or_default());
            let journal = dir.read(&files.at(JOURNAL_FILE)).await.ok().flatten();
            let trace = dir.read(&files.at(TRACE_FILE)).await.ok().flatten();
            let receipt = dir.read(&files.at(RECEIPT_FILE)).await.ok().flatten();
            let statuses = state.with_doc(|d| {
                d.checked
                    .plan
                    .nodes
                    .iter()
                    .map(|n| n.status)
                    .collect::<Vec<_>>()
            });
            let offer = interrupted_run(
                statuses.unwrap_or_default(),
                journal.as_deref(),
                trace.as_deref(),
                receipt.as_deref(),
            );
            if let Some(q) = offer.as_ref().and_then(|o| o.query.clone()) {
                client.query.set(q);
            }
            client.offer.set(offer);
        });
    }
}

impl Default for RunClient {
    fn default() -> Self {
        Self::new()
    }
}

pub async fn sleep(ms: i32) {
    let wait = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(wait).await;
}

/// The worker wrote `node`'s status: read that note again so the canvas and
/// the editor show it, and so the outside-change poll sees nothing new.
async fn refresh_note(state: AppState, node: String) {
    let path = state
        .with_doc(|d| {
            d.node_index(&node)
                .and_then(|i| d.file_of(i))
                .map(str::to_string)
        })
        .flatten();
    let (Some(path), Some(dir)) = (path, state.vault.get_value()) else {
        return;
    };
    let Ok(Some(text)) = dir.read(&path).await else {
        return;
    };
    // An edit on its way to disk wins; the poll reconciles afterwards.
    if state.busy() || state.with_doc(|d| d.files.get(&path) == Some(&text)) != Some(false) {
        return;
    }
    state.writer.update_value(|w| w.generation += 1);
    state.open.update(|open| {
        if let Some(o) = open {
            *o = Open::new(o.doc.with_changes([(path.as_str(), Some(text.as_str()))]));
        }
    });
}
