//! The app's state: signals the components read, plus the one path every
//! edit takes to disk ([`AppState::submit`]): apply it in memory at once (the
//! canvas answers immediately), queue the write, and let the writer compare
//! each file with what the edit expects before writing it. On a mismatch the
//! vault is reloaded from disk and the user is told; nothing on disk is lost.

use crate::commands::Change;
use crate::doc::VaultDoc;
use crate::fs::{FsError, Reading, VaultDir};
use crate::geometry::{Scene, Viewport};
use crate::history::History;
use crate::render::{Badge, Card};
use crate::run_client::RunClient;
use leptos::prelude::*;
use leptos::task::spawn_local;
use planvault_core::{NodeKind, Severity};
use planvault_layout::Point;
use std::collections::VecDeque;

/// Where the open vault lives, said plainly in the toolbar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Loading,
    /// The bundled example, kept in this browser's private storage.
    Example,
    /// A folder on disk, edited in place.
    Folder(String),
    /// A read-only opened folder: edits go to a copy in this browser.
    Copy(String),
}

impl Mode {
    pub fn describe(&self) -> String {
        match self {
            Mode::Loading => "Loading…".into(),
            Mode::Example => "Example vault, stored in this browser. Open your own vault to edit it on disk.".into(),
            Mode::Folder(name) => format!("Editing “{name}” on disk: every change is written to its notes."),
            Mode::Copy(name) => format!(
                "Read-only copy of “{name}”: this browser cannot write to the folder, so edits go to a copy kept here. \
                 Download the changed notes as a zip."
            ),
        }
    }
}

/// The open vault with everything the canvas draws from it.
#[derive(Debug, Clone)]
pub struct Open {
    pub doc: VaultDoc,
    pub scene: Scene,
    pub cards: Vec<Card>,
    /// Edges from a note with an error about that very edge's line.
    pub flagged_edges: Vec<usize>,
    /// Nodes by how much their title helps a zoomed-out reader: the start,
    /// then cards with errors, then the most linked (`render` gives their
    /// titles room first).
    pub landmarks: Vec<usize>,
    /// The folders the notes are spread over (none when they are not).
    pub groups: Vec<crate::doc::FolderGroup>,
}

impl Open {
    pub fn new(doc: VaultDoc) -> Open {
        let scene = Scene::build(&doc, &[], Point::default());
        let plan = &doc.checked.plan;
        let mut badges = vec![Badge::default(); plan.nodes.len()];
        for d in &doc.checked.diagnostics {
            let mut hit: Vec<usize> = d.nodes.iter().filter_map(|id| doc.node_index(id)).collect();
            if hit.is_empty() {
                if let Some(file) = &d.file {
                    hit.extend(doc.node_index(file.trim_end_matches(".md")));
                }
            }
            for i in hit {
                match d.severity {
                    Severity::Error => badges[i].errors += 1,
                    Severity::Warning => badges[i].warnings += 1,
                }
            }
        }
        let cards: Vec<Card> = plan
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Card {
                title: n.title.clone(),
                kind: n.kind,
                status: n.status,
                start: plan.start == Some(i) || n.kind == NodeKind::Start,
                badge: badges[i],
            })
            .collect();
        let flagged_edges = plan
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.pos.as_ref().is_some_and(|p| {
                    doc.checked
                        .diagnostics
                        .iter()
                        .any(|d| d.file.as_deref() == Some(&p.file) && d.line == Some(p.line))
                })
            })
            .map(|(i, _)| i)
            .collect();
        let landmarks = landmarks(&doc, &cards);
        let groups = doc.folder_groups();
        Open {
            groups,
            doc,
            scene,
            cards,
            flagged_edges,
            landmarks,
        }
    }
}

fn landmarks(doc: &VaultDoc, cards: &[Card]) -> Vec<usize> {
    let plan = &doc.checked.plan;
    let mut degree = vec![0u32; plan.nodes.len()];
    for e in &plan.edges {
        degree[e.from] += 1;
        if let Some(t) = e.to {
            degree[t] += 1;
        }
    }
    let mut order: Vec<usize> = (0..plan.nodes.len()).collect();
    order.sort_by_key(|&i| {
        (
            !cards[i].start,
            cards[i].badge.errors == 0,
            std::cmp::Reverse(degree[i]),
            i,
        )
    });
    order
}

/// What is selected, by node id and by an edge's note and line, so a
/// selection survives edits that renumber nodes and edges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub nodes: Vec<String>,
    pub edge: Option<(String, u32)>,
    /// Keyboard focus on the canvas.
    pub focus: Option<String>,
}

impl Selection {
    pub fn node_indices(&self, doc: &VaultDoc) -> Vec<usize> {
        self.nodes
            .iter()
            .filter_map(|id| doc.node_index(id))
            .collect()
    }

    pub fn edge_index(&self, doc: &VaultDoc) -> Option<usize> {
        let (from, line) = self.edge.as_ref()?;
        let from = doc.node_index(from)?;
        doc.checked
            .plan
            .edges
            .iter()
            .position(|e| e.from == from && e.pos.as_ref().is_some_and(|p| p.line == *line))
    }

    pub fn edge_key(doc: &VaultDoc, edge: usize) -> Option<(String, u32)> {
        let e = doc.checked.plan.edges.get(edge)?;
        Some((
            doc.checked.plan.nodes[e.from].id.clone(),
            e.pos.as_ref()?.line,
        ))
    }

    pub fn single_node(doc: &VaultDoc, index: usize) -> Selection {
        let id = doc.checked.plan.nodes[index].id.clone();
        Selection {
            nodes: vec![id.clone()],
            edge: None,
            focus: Some(id),
        }
    }
}

/// A question the app is asking in a dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    /// Label for a new edge (empty = unconditional).
    ///
    /// Notes are named by id and edges by [`Selection::edge_key`], never by
    /// their place in the plan: a note appearing or going on disk while the
    /// dialog is open moves every later note's place, and the dialog would
    /// act on another note.
    NewEdge {
        from: String,
        to: String,
    },
    Relabel {
        edge: (String, u32),
        current: String,
    },
    NewNode {
        at: Point,
    },
    Rename {
        node: String,
        current: String,
    },
    /// Deleting a node: its incoming edges are listed first.
    Delete {
        node: String,
        incoming: Vec<String>,
    },
}

/// What the note picker is choosing a note for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// "Go to note": centre and select it.
    GoTo,
    /// The target of a new edge from this node, by id (E on a focused card).
    EdgeFrom(String),
}

pub use crate::history::Origin;

#[derive(Default)]
pub struct Writer {
    /// Changes waiting for the disk, each with what made it (for the message
    /// once it is written).
    queue: VecDeque<(Change, Origin)>,
    running: bool,
    /// A poll for outside changes is reading the vault.
    polling: bool,
    /// Bumped by every write and reload, so a poll that read the disk
    /// meanwhile drops what it read.
    pub generation: u64,
}

/// One request to open a vault (`AppState::begin_open`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenTicket(u64);

/// See [`AppState::settles_open`].
pub struct OpenSettles(AppState);

impl Drop for OpenSettles {
    fn drop(&mut self) {
        self.0.opens_settled.update_value(|n| *n += 1);
    }
}

/// Signals and stored values shared by every component (all `Copy`).
#[derive(Clone, Copy)]
pub struct AppState {
    pub open: RwSignal<Option<Open>>,
    pub mode: RwSignal<Mode>,
    /// The last thing the app has to tell the user (an ARIA live region).
    pub message: RwSignal<String>,
    pub selection: RwSignal<Selection>,
    pub history: RwSignal<History>,
    pub viewport: RwSignal<Viewport>,
    pub dialog: RwSignal<Option<Dialog>>,
    /// The note picker, while open (`note_picker`).
    pub picker: RwSignal<Option<Pick>>,
    /// Whether the minimap is wanted (it still hides where it would cover
    /// a card, and on small screens).
    pub minimap: RwSignal<bool>,
    /// A vault being read: files read and how many there are.
    pub loading: RwSignal<Option<(u32, u32)>>,
    /// A remembered folder that needs a click to be granted again.
    pub reopen: RwSignal<Option<String>>,
    /// The change refused because its notes changed outside, and the ones
    /// queued after it: the text each would have written stays readable,
    /// so no typing is ever lost.
    pub rejected: RwSignal<Vec<Change>>,
    pub vault: StoredValue<Option<VaultDir>, LocalStorage>,
    pub writer: StoredValue<Writer, LocalStorage>,
    pub polling: StoredValue<bool, LocalStorage>,
    /// Bumped whenever the notes are read again from disk (a poll, a
    /// reload, an open): a gesture begun before does not act, as the
    /// notes' places in the plan it holds may name others now.
    pub loads: StoredValue<u64, LocalStorage>,
    /// How many vault opens were started: the number of the newest.
    opens: StoredValue<u64, LocalStorage>,
    /// How many of those opens have finished, shown or discarded.
    opens_settled: StoredValue<u64, LocalStorage>,
    /// Told about each frame the canvas draws, when anything listens: only
    /// the end-to-end tests' hook does (`test_hook`, fetched only when a
    /// test asks for it), so the app users run never sets it.
    pub frame_probe: StoredValue<Option<crate::canvas_view::FrameProbe>, LocalStorage>,
    /// The plan run: its worker, settings and what it reports.
    pub run: RunClient,
}

impl AppState {
    pub fn new() -> AppState {
        AppState {
            open: RwSignal::new(None),
            mode: RwSignal::new(Mode::Loading),
            message: RwSignal::new(String::new()),
            selection: RwSignal::new(Selection::default()),
            history: RwSignal::new(History::default()),
            viewport: RwSignal::new(Viewport::default()),
            dialog: RwSignal::new(None),
            picker: RwSignal::new(None),
            minimap: RwSignal::new(true),
            loading: RwSignal::new(None),
            reopen: RwSignal::new(None),
            rejected: RwSignal::new(Vec::new()),
            loads: StoredValue::new_local(0),
            vault: StoredValue::new_local(None),
            writer: StoredValue::new_local(Writer::default()),
            polling: StoredValue::new_local(true),
            opens: StoredValue::new_local(0),
            opens_settled: StoredValue::new_local(0),
            frame_probe: StoredValue::new_local(None),
            run: RunClient::new(),
        }
    }

    /// Starts opening a vault. Reading a folder takes a while, and the one
    /// asked for last must be the one shown: without the ticket, the example
    /// the start-up reads from a slow disk replaced a folder opened meanwhile.
    pub fn begin_open(&self) -> OpenTicket {
        self.opens.update_value(|n| *n += 1);
        OpenTicket(self.opens.get_value())
    }

    /// Counts the open as finished when the returned guard is dropped, at
    /// whichever return the open takes (the tests wait on it).
    pub fn settles_open(&self) -> OpenSettles {
        OpenSettles(*self)
    }

    /// Whether every open that was started has finished.
    pub fn opens_settled(&self) -> bool {
        self.opens_settled.get_value() >= self.opens.get_value()
    }

    /// Whether no other open was started after this one.
    pub fn is_latest(&self, ticket: OpenTicket) -> bool {
        self.opens.get_value() == ticket.0
    }

    /// Shows a vault, so edits go to `dir` from now on, unless another open
    /// was started after `ticket`'s; says whether it did.
    pub fn show(&self, ticket: OpenTicket, dir: VaultDir, read: Reading, mode: Mode) -> bool {
        if !self.is_latest(ticket) {
            return false;
        }
        self.vault.set_value(Some(dir));
        self.writer.update_value(|w| {
            w.queue.clear();
            w.generation += 1;
        });
        self.history.set(History::default());
        self.selection.set(Selection::default());
        let wanted = plan_folder_key(&mode).and_then(|key| storage()?.get_item(&key).ok()?);
        self.loads.update_value(|n| *n += 1);
        self.open.set(Some(Open::new(VaultDoc::open_read(
            read,
            wanted.as_deref(),
        ))));
        self.mode.set(mode);
        self.fit();
        self.run.vault_opened(*self);
        true
    }

    /// Runs `f` on the open vault's doc.
    pub fn with_doc<R>(&self, f: impl FnOnce(&VaultDoc) -> R) -> Option<R> {
        self.open.with_untracked(|o| o.as_ref().map(|o| f(&o.doc)))
    }

    /// Applies a change now and queues its write.
    pub fn submit(&self, change: Change, origin: Origin) {
        if change.files.is_empty() {
            return;
        }
        let summary = change.summary.clone();
        self.open.update(|open| {
            if let Some(o) = open {
                *o = Open::new(o.doc.with_changes(change.results()));
            }
        });
        self.history.update(|h| match origin {
            Origin::Edit => h.record(change.clone()),
            Origin::Undo => h.undone(),
            Origin::Redo => h.redone(),
        });
        self.message.set(match origin {
            Origin::Edit => format!("Saving: {summary}"),
            Origin::Undo => format!("Undoing: {summary}"),
            Origin::Redo => format!("Redoing: {summary}"),
        });
        let start = self.writer.try_update_value(|w| {
            w.queue.push_back((change, origin));
            w.generation += 1;
            !std::mem::replace(&mut w.running, true)
        });
        if start == Some(true) {
            let state = *self;
            spawn_local(async move {
                if crate::on_demand::write_queue(state).await.is_err() {
                    // What would have been written stays readable, and
                    // leaves the history.
                    let queued: Vec<(Change, Origin)> = state
                        .writer
                        .with_value(|w| w.queue.iter().cloned().collect());
                    state.history.update(|h| {
                        for (_, origin) in queued.iter().rev() {
                            h.revert(*origin);
                        }
                    });
                    state
                        .rejected
                        .set(queued.into_iter().map(|(change, _)| change).collect());
                    state.not_written(
                        "Not saved: the writer could not be loaded (the server may be down or \
                         have a newer planvault: then reload the page). Reloaded the vault from disk."
                            .into(),
                    )
                    .await;
                }
            });
        }
    }

    /// Writes the queued changes one after another, each conflict-checked
    /// ([`VaultDir::apply`]); the first that fails drops the rest. Its
    /// code is a part of its own (`on_demand::write_queue`): the first
    /// paint writes nothing.
    pub async fn drain(self) {
        loop {
            let next = self
                .writer
                .try_update_value(|w| w.queue.pop_front())
                .flatten();
            let Some((change, origin)) = next else { break };
            let Some(dir) = self.vault.get_value() else {
                break;
            };
            match dir.apply(&change).await {
                Ok(()) => self.message.set(saved_message(origin, &change.summary)),
                Err(error) => {
                    let what = match &error {
                        FsError::Conflict(paths) => format!(
                            "{} changed outside planvault, so “{}” was not written. Reloaded the vault from disk; \
                             your notes are as they are there.",
                            paths.join(", "),
                            change.summary
                        ),
                        FsError::Browser(e) => format!(
                            "Could not write “{}”: {e}. Nothing was changed; reloaded the vault from disk.",
                            change.summary
                        ),
                        FsError::Partial { error, left } => format!(
                            "Could not write “{}”: {error}. {} kept part of it (could not be put back); \
                             reloaded the vault from disk.",
                            change.summary,
                            left.join(", ")
                        ),
                    };
                    // The ones queued after it were made on top of it:
                    // none is written, each stays readable.
                    let mut refused = vec![(change, origin)];
                    self.writer
                        .update_value(|w| refused.extend(w.queue.drain(..)));
                    self.history.update(|h| {
                        for (_, origin) in refused.iter().rev() {
                            h.revert(*origin);
                        }
                    });
                    self.rejected
                        .set(refused.into_iter().map(|(change, _)| change).collect());
                    if let Some(later) = self
                        .rejected
                        .with_untracked(|r| r.len().checked_sub(1))
                        .filter(|n| *n > 0)
                    {
                        self.not_written(format!("{what} The {later} edit(s) made after it were not written either; each is shown as it would have been."))
                            .await;
                    } else {
                        self.not_written(what).await;
                    }
                    return;
                }
            }
        }
        self.writer.update_value(|w| {
            w.running = false;
            w.generation += 1;
        });
    }

    /// After a change could not be written: drops the queued ones, shows
    /// the vault as it is on disk and says `what` happened. The history
    /// keeps what was written before: each entry is checked against the
    /// disk when undone, so an entry a change outside made stale is refused
    /// then, and the others still undo.
    async fn not_written(&self, what: String) {
        self.writer.update_value(|w| w.queue.clear());
        self.reload().await;
        self.message.set(what);
        self.writer.update_value(|w| {
            w.running = false;
            w.generation += 1;
        });
    }

    /// Reads the whole vault again and shows it (keeping the selection and
    /// the view).
    pub async fn reload(&self) {
        let Some(dir) = self.vault.get_value() else {
            return;
        };
        match dir.read_all().await {
            Ok(read) => {
                self.writer.update_value(|w| w.generation += 1);
                self.loads.update_value(|n| *n += 1);
                self.open.set(Some(Open::new(self.reopened(read))));
            }
            Err(e) => self.message.set(format!("Could not read the vault: {e}")),
        }
    }

    /// Fits the whole plan in view (on open and on request; the canvas's
    /// first resize fits again once the canvas has its size).
    pub fn fit(&self) {
        let bounds = self
            .open
            .with_untracked(|o| o.as_ref().map(|o| o.scene.bounds));
        if let Some(bounds) = bounds {
            self.viewport.update(|v| v.fit(bounds, 40.0));
        }
    }

    /// Whether writes are queued or running.
    pub fn busy(&self) -> bool {
        self.writer.with_value(|w| w.running || !w.queue.is_empty())
    }

    /// One poll for changes made outside the app: re-read the vault and, if
    /// it differs from what the app holds, show what is on disk.
    pub async fn poll(&self) {
        // One poll at a time: on a big vault a read can outlast the interval.
        if self.busy() || !self.polling.get_value() || self.writer.with_value(|w| w.polling) {
            return;
        }
        self.writer.update_value(|w| w.polling = true);
        self.poll_once().await;
        self.writer.update_value(|w| w.polling = false);
    }

    async fn poll_once(&self) {
        let Some(dir) = self.vault.get_value() else {
            return;
        };
        let generation = self.writer.with_value(|w| w.generation);
        let Ok(read) = dir.read_all().await else {
            return;
        };
        let files = &read.files;
        if self.busy() || self.writer.with_value(|w| w.generation) != generation {
            return; // the app wrote meanwhile; what was read may be stale
        }
        let changed: Vec<String> = self
            .with_doc(|doc| {
                let mut changed: Vec<String> = files
                    .iter()
                    .filter(|(p, t)| doc.files.get(*p) != Some(*t))
                    .map(|(p, _)| p.clone())
                    .collect();
                changed.extend(
                    doc.files
                        .keys()
                        .filter(|p| !files.contains_key(*p))
                        .cloned(),
                );
                changed
            })
            .unwrap_or_default();
        if changed.is_empty() {
            return;
        }
        self.loads.update_value(|n| *n += 1);
        self.open.set(Some(Open::new(self.reopened(read))));
        // While a run is on, the worker is what writes the notes.
        if self.run.view.with_untracked(|v| v.phase.live()) {
            self.message
                .set(format!("The run updated {}", changed.join(", ")));
        } else {
            self.message.set(format!(
                "Picked up changes made outside planvault: {}",
                changed.join(", ")
            ));
        }
    }

    /// The vault read again, its plan in the folder it was in, its cards
    /// where they were.
    fn reopened(&self, read: Reading) -> VaultDoc {
        self.open.with_untracked(|o| match o {
            Some(o) => o.doc.reread(read),
            None => VaultDoc::open_read(read, None),
        })
    }

    /// Makes the notes in `folder` the plan (empty: the whole vault), and
    /// remembers the choice for this vault.
    pub fn choose_plan_folder(&self, folder: &str) {
        // A run goes on with the plan it started with.
        if self.run.view.with_untracked(|v| v.phase.live()) {
            self.message
                .set("Stop the run before picking another plan.".into());
            return;
        }
        let Some(Some(doc)) = self.with_doc(|d| (d.folder != folder).then(|| d.in_folder(folder)))
        else {
            return;
        };
        if let (Some(key), Some(s)) = (plan_folder_key(&self.mode.get_untracked()), storage()) {
            let _ = s.set_item(&key, folder);
        }
        let what = if folder.is_empty() {
            "the whole vault".to_string()
        } else {
            format!("the notes in {folder}/")
        };
        let nodes = doc.checked.plan.nodes.len();
        self.selection.set(Selection::default());
        self.loads.update_value(|n| *n += 1);
        self.open.set(Some(Open::new(doc)));
        self.fit();
        self.message
            .set(format!("The plan is {what}: {nodes} notes"));
        // This plan's own interrupted run, if any, is offered.
        self.run.vault_opened(*self);
    }

    pub fn undo(&self) {
        match self.history.with_untracked(History::peek_undo) {
            Some(change) => self.submit(change, Origin::Undo),
            None => self.message.set("Nothing to undo".into()),
        }
    }

    pub fn redo(&self) {
        match self.history.with_untracked(History::peek_redo) {
            Some(change) => self.submit(change, Origin::Redo),
            None => self.message.set("Nothing to redo".into()),
        }
    }

    /// Runs a command on the open doc and submits its change, or says why not.
    pub fn run<E: std::fmt::Display>(&self, command: impl FnOnce(&VaultDoc) -> Result<Change, E>) {
        match self.with_doc(command) {
            Some(Ok(change)) => self.submit(change, Origin::Edit),
            Some(Err(e)) => self.message.set(format!("Not done: {e}")),
            None => {}
        }
    }

    /// [`AppState::run`] on the notes `ids` name in the vault as it is now
    /// (their places in the plan, in order), or says which is gone.
    pub fn run_on<E: std::fmt::Display>(
        &self,
        ids: &[&str],
        command: impl FnOnce(&VaultDoc, &[usize]) -> Result<Change, E>,
    ) {
        self.run(|doc| {
            let at: Vec<usize> = ids.iter().filter_map(|id| doc.node_index(id)).collect();
            match ids.iter().find(|id| doc.node_index(id).is_none()) {
                Some(gone) => Err(format!("{gone} is no longer in the vault")),
                None => command(doc, &at).map_err(|e| e.to_string()),
            }
        });
    }

    /// Like [`AppState::run`] for a command that may change nothing (a move
    /// back to where a card was).
    pub fn run_if_any(
        &self,
        command: impl FnOnce(&VaultDoc) -> Result<Option<Change>, crate::commands::CommandError>,
    ) {
        match self.with_doc(command) {
            Some(Ok(Some(change))) => self.submit(change, Origin::Edit),
            Some(Err(e)) => self.message.set(format!("Not done: {e}")),
            _ => {}
        }
    }

    /// Selects node `index` and scrolls it into view.
    pub fn focus_node(&self, index: usize) {
        let Some((selection, rect)) = self.open.with_untracked(|o| {
            o.as_ref()
                .map(|o| (Selection::single_node(&o.doc, index), o.scene.nodes[index]))
        }) else {
            return;
        };
        self.selection.set(selection);
        self.viewport.update(|v| v.reveal(rect, 40.0));
    }
}

/// What the status line says once a change is on disk: an undo says what
/// it undid, never "Saved" as if the undone edit had been made again.
pub fn saved_message(origin: Origin, summary: &str) -> String {
    match origin {
        Origin::Edit => format!("Saved: {summary}"),
        Origin::Undo => format!("Undone: {summary} (the notes are as before it)"),
        Origin::Redo => format!("Redone: {summary}"),
    }
}

/// Where the plan folder picked for a vault is kept between visits, in this
/// browser's localStorage: by kind of vault and folder name, as its
/// breakpoints are.
fn plan_folder_key(mode: &Mode) -> Option<String> {
    match mode {
        Mode::Loading => None,
        Mode::Example => Some("planvault.plan-folder.example".into()),
        Mode::Folder(name) => Some(format!("planvault.plan-folder.folder.{name}")),
        Mode::Copy(name) => Some(format!("planvault.plan-folder.copy.{name}")),
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

impl Default for AppState {
    fn default() -> Self {
        Self::new()
    }
}
