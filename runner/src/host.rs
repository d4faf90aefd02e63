//! What the driver needs from the world. Every path is vault-relative with
//! `/` separators.

use planvault_core::engine::TraceEntry;
use planvault_core::{Node, Plan};
use planvault_llm::{LlmError, Surface};
use planvault_protocol::FromWorker;

/// A vault read or write that failed (permission, quota, a vanished folder).
/// [`HostError::changed`]'s message.
const CHANGED_SINCE_READ: &str =
    "changed on disk since the run read it; the run's write was not made";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct HostError {
    pub path: String,
    pub message: String,
    /// The disk (or the browser's storage quota) is full: the run stops
    /// resumably and says so.
    pub disk_full: bool,
    /// The storage failed the operation (read-only, an I/O error, no
    /// permission, a worker lost), as opposed to refusing it (a symlink out
    /// of the vault, an edit made meanwhile): no answer of a tool's, the run
    /// stops resumably.
    pub failed: bool,
}

impl HostError {
    pub fn new(path: &str, message: impl Into<String>) -> Self {
        HostError {
            path: path.into(),
            message: message.into(),
            disk_full: false,
            failed: false,
        }
    }

    /// The storage failed the operation ([`HostError::failed`]).
    pub fn failure(path: &str, message: impl Into<String>) -> Self {
        HostError {
            failed: true,
            ..HostError::new(path, message)
        }
    }

    /// A write refused because the file changed since the run read it
    /// (a person saved an edit meanwhile): [`HostError::is_changed`].
    pub fn changed(path: &str) -> Self {
        HostError::new(path, CHANGED_SINCE_READ)
    }

    /// Whether this is [`HostError::changed`]'s refusal (also after a trip
    /// through a Temporal history, which keeps the message).
    pub fn is_changed(&self) -> bool {
        self.message == CHANGED_SINCE_READ
    }

    /// A write refused for want of space.
    pub fn disk_full(path: &str) -> Self {
        HostError {
            disk_full: true,
            ..HostError::failure(path, "the disk is full (no space left on the device)")
        }
    }
}

/// The head of an HTTP reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HttpHead {
    pub status: u16,
    /// Lower-cased.
    pub content_type: String,
    /// `Retry-After` in seconds.
    pub retry_after: Option<u64>,
}

/// What a run does that the app's messages do not say, for a host that
/// shows progress itself (the terminal's lines on stderr).
#[derive(Debug, Clone, PartialEq)]
pub enum Progress<'a> {
    /// A run picks up an earlier one.
    Resuming {
        done: usize,
        recorded: usize,
        active: Vec<String>,
    },
    /// A node's conditions go to the model (`attempt` > 1: re-asked).
    Judging { conditions: usize, attempt: u32 },
    /// A `@tool` command starts.
    Command { node: &'a str, command: &'a str },
    /// A generated plan's step calls a capability.
    Invoke { node: &'a str, capability: &'a str },
    /// A person's decision is needed and the run defers it (it finishes
    /// `awaiting_human`; the next run is told the decision).
    Human {
        node: &'a str,
        question: &'a str,
        choices: &'a [String],
    },
    /// Tools a node declares that no runner implements.
    ToolsMissing(&'a [String]),
    /// An MCP server's tool was called: how long it took and its error.
    McpCall {
        node: &'a str,
        server: &'a str,
        tool: &'a str,
        ms: u64,
        error: Option<&'a str>,
    },
    /// A server's latest report on a call in flight (MCP progress).
    McpProgress {
        server: &'a str,
        tool: &'a str,
        progress: f64,
        total: Option<f64>,
        message: Option<&'a str>,
    },
    /// An MCP tool call waits for a person's approval: the run stops
    /// resumably; the next run is told the decision under `key`.
    McpApproval {
        node: &'a str,
        tool: &'a str,
        arguments: &'a str,
        key: &'a str,
    },
    /// A hop the engine took (the trace entry just written).
    Hop(&'a TraceEntry),
    /// The plan file was amended with accepted items.
    Amended,
    /// A person's decision for a node (`--decide NODE=…`) that no waiting
    /// question took: nothing was recorded (the question was answered
    /// before, or the run never asked one there).
    DecisionUnused { node: &'a str },
    /// The plan file's boxes of items done could not be checked (it
    /// changed on disk meanwhile, or could not be written): the run goes on.
    BoxesNotChecked { reason: &'a str },
    /// A PLAN.md run goes on in the order it began in (`parallel`: in
    /// waves, of at most `at_most` items), not the one this run was given.
    OrderKept {
        parallel: bool,
        at_most: Option<u32>,
    },
    /// The journal's last line was torn (a crash or a full disk mid-write):
    /// it was kept aside in this file and cut from the journal.
    JournalRepaired { kept_aside: &'a str },
}

/// What a setting a tool changed is kept aside as, after its path.
pub const ASIDE: &str = ".from-tool";

/// Why a host that cannot put back a file a tool changed stops the run.
pub const CANNOT_PUT_BACK: &str = "this runner cannot put back a file a tool changed";

/// [`Host::read_each`] as one [`Host::read`] after another.
pub async fn read_one_by_one<H: Host + ?Sized>(
    host: &H,
    paths: &[String],
) -> Vec<Result<Option<String>, HostError>> {
    let mut texts = Vec::with_capacity(paths.len());
    for path in paths {
        texts.push(host.read(path).await);
    }
    texts
}

#[allow(async_fn_in_trait)]
pub trait Host {
    /// A reply body being read.
    type Body;

    /// Every file of the vault outside dot-folders.
    async fn list(&self) -> Result<Vec<String>, HostError>;
    /// A file's text; `None` when it does not exist.
    async fn read(&self, path: &str) -> Result<Option<String>, HostError>;
    /// [`Host::read`] of each of `paths`, in their order. The driver reads
    /// every note of the plan before and after each call of a tool that
    /// may write: a host that pays for each read (a Temporal activity, its
    /// events in the run's bounded history) reads them at once.
    async fn read_each(&self, paths: &[String]) -> Vec<Result<Option<String>, HostError>> {
        read_one_by_one(self, paths).await
    }
    /// Create or replace a file (and its folders).
    async fn write(&self, path: &str, text: &str) -> Result<(), HostError>;
    /// A tool's note (`write_note`), as [`Host::write`] writes, but never
    /// through a symlink standing at its name (where a host has them): one
    /// a tool made would carry the write onto a plan's note.
    async fn write_tool_note(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.write(path, text).await
    }
    /// Append to a file (creating it), durably before returning.
    async fn append(&self, path: &str, text: &str) -> Result<(), HostError>;
    /// Remove a file; a missing one is fine.
    async fn remove(&self, path: &str) -> Result<(), HostError>;

    /// POST `body` (JSON) to `url`, the key only as `Authorization: Bearer`.
    /// `timeout_ms` bounds the wait for the reply's head; a Stop aborts it
    /// ([`LlmError::Interrupted`]).
    async fn post_json(
        &self,
        url: &str,
        api_key: Option<&str>,
        body: &str,
        timeout_ms: u32,
    ) -> Result<(HttpHead, Self::Body), LlmError>;
    /// The next chunk of a body; `None` at its end.
    async fn read_chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, LlmError>;
    /// GET a URL's text (the `fetch_url` tool); errors as text for the model.
    async fn fetch_text(&self, url: &str) -> Result<String, String>;

    async fn sleep(&self, ms: u32);
    /// Milliseconds on a monotonic clock.
    fn now_ms(&self) -> f64;
    /// Post a message to the app.
    fn post(&self, message: &FromWorker);

    /// Where the run is shown: picks the hints that go with an error.
    fn surface(&self) -> Surface {
        Surface::Browser
    }
    /// Whether the vault's file system ignores case, so `START.md` is the
    /// note `start.md` (the tools' write guard compares names accordingly).
    fn case_insensitive(&self) -> bool {
        false
    }
    /// Run a `@tool` command: its exit code and output; `None` where
    /// commands cannot run (the browser), so the engine is told it was refused.
    async fn command(&self, _command: &str) -> Option<(i32, String)> {
        None
    }
    /// Whether a Stop kills a running command (its exit then 130, and its
    /// answer not journaled: the resumed run runs it again). Elsewhere a
    /// command always finishes and its answer stands (Temporal's activity).
    fn stops_commands(&self) -> bool {
        false
    }
    /// Replace the plan file (PLAN.md) with `text`, refusing when it changed
    /// since the run read it, and give every item of the amended `plan` its
    /// note: (file, text) for the run to create where missing. Only a host
    /// running a PLAN.md can (the browser runs vaults, and so links no note
    /// renderer).
    async fn amend_plan(
        &self,
        _text: &str,
        _plan: &Plan,
    ) -> Result<Vec<(String, String)>, HostError> {
        Err(HostError::new(
            "PLAN.md",
            "this runner cannot amend a plan file",
        ))
    }
    /// Whether the vault's config is read around each call of a tool that
    /// may write, to catch a change of it (a Temporal run begun before
    /// replays without those reads).
    fn guards_settings(&self) -> bool {
        true
    }
    /// Whether the plan's notes are read around each call of a tool that
    /// may write, to undo its change of one (a Temporal run begun before
    /// replays without those reads).
    fn guards_plan_notes(&self) -> bool {
        true
    }
    /// Whether the folders of a plan's path are read around each call of a
    /// tool that may write, so that none becomes a vault of its own
    /// (`driver::vault_markers`; a Temporal run begun before replays
    /// without those reads).
    fn guards_vault_markers(&self) -> bool {
        true
    }
    /// The plan file beside the run's vault (a PLAN.md), as it is now,
    /// where this host keeps one: read around each call of a tool that
    /// may write, as a vault's notes are.
    async fn plan_file_now(&self) -> Option<String> {
        None
    }
    /// Put the plan file back to `text` after a tool changed it, what the
    /// tool left kept beside it ([`ASIDE`]): that name as shown, `None`
    /// where it left nothing (it removed the file).
    async fn put_back_plan_file(&self, _text: &str) -> Result<Option<String>, HostError> {
        Err(HostError::new("PLAN.md", CANNOT_PUT_BACK))
    }
    /// Keep `snapshot` (JSON: what a writing tool's call may not change,
    /// as it stood before the call) where a run killed during the call
    /// finds it on its next start, to put back what the call changed then
    /// (`NativeHost::put_back_cut_off_call`); `None` once the call's
    /// changes were put back. A host whose record of the run outlives a
    /// crash (Temporal's history) keeps none.
    async fn keep_call_snapshot(&self, _snapshot: Option<&str>) -> Result<(), HostError> {
        Ok(())
    }
    /// Whether this host keeps a record of the decisions taken on it, to
    /// tell a resumed journal's decisions taken elsewhere (Temporal's is
    /// the submission's: those the submitter's record holds). Where it
    /// keeps none a resumed journal's decisions stand as written.
    fn keeps_decisions(&self) -> bool {
        false
    }
    /// Which of these decisions (each named by the journal's chain hash
    /// after its line: [`planvault_core::engine::journal::Decision`]) a
    /// run of this host journaled itself, or a person here took as given.
    async fn decisions_taken_here(&self, heads: &[&str]) -> Vec<bool> {
        vec![false; heads.len()]
    }
    /// Record these decisions as taken here: journaled by this run, or
    /// taken as given by the person. A record that cannot be kept only
    /// means the person is asked again.
    async fn keep_decisions(&self, _heads: &[&str]) {}
    /// Whether the person takes as given the decisions a resumed journal
    /// holds that no run here took (`listing`: them, one per line, with
    /// what taking them means). The terminal asks when it is one;
    /// elsewhere `false`, and the run stops naming them.
    async fn take_decisions(&self, _listing: &str) -> bool {
        false
    }
    /// Put the file at `path` (the vault's config, a plan's note) back to
    /// `text` (`None`: no file) after a tool changed it, what the tool left
    /// kept beside it under the first free name of `path` and [`ASIDE`]
    /// (`-2`, `-3`, … after it: a copy kept before, perhaps a person's edit
    /// taken for the tool's, is never written over): that name, `None`
    /// where it left nothing. `Err` where this host cannot, and the run
    /// stops.
    async fn put_back(&self, path: &str, _text: Option<&str>) -> Result<Option<String>, HostError> {
        Err(HostError::new(path, CANNOT_PUT_BACK))
    }
    /// Check `[x]` the boxes of these PLAN.md items in the plan file, where
    /// Leopold keeps a run's progress: only while the file is the text the
    /// run last read or wrote (a person's edit since refuses it: theirs
    /// stands), each box checked where its item reads as the node
    /// ([`planvault_core::planmd::check_done`]). The file's new text; `None`
    /// where no box changed or this host keeps no plan file (Temporal, the
    /// browser).
    async fn check_plan_items(&self, _done: &[&Node]) -> Result<Option<String>, HostError> {
        Ok(None)
    }
    /// Start every configured MCP server and list its tools, once per run;
    /// `None` where this host has no MCP client or no server is configured
    /// (then a declared tool nothing offers is only reported, as before).
    async fn mcp_list(&self) -> Option<Result<planvault_llm::mcp::Catalog, String>> {
        None
    }
    /// Call an MCP server's tool: its text, or the error the model reads.
    async fn mcp_call(
        &self,
        server: &str,
        _tool: &str,
        _arguments: &serde_json::Value,
    ) -> Result<String, String> {
        Err(format!("this runner has no MCP server {server}"))
    }
    /// Why an MCP server is down for the rest of the run (it died again
    /// after its one restart): the driver then stops the run resumably with
    /// this reason instead of letting the model read errors.
    fn mcp_down(&self, _server: &str) -> Option<String> {
        None
    }
    /// Values this host handed to others that must never be written (an
    /// MCP server's environment values and token): the driver scrubs them
    /// like API keys from the journal, the trace, outputs and messages.
    fn secrets(&self) -> Vec<String> {
        Vec::new()
    }
    /// Why the `write_note` tool may not write this vault path (a path the
    /// run's guard protects); `None`: it may.
    fn refuse_write(&self, _path: &str) -> Option<String> {
        None
    }
    /// What the run is doing beyond its messages; most hosts ignore it.
    fn progress(&self, _progress: &Progress<'_>) {}
}
