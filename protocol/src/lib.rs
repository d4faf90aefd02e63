//! The messages between the app (main thread) and the run worker.
//!
//! Both sides compile this crate, so a message is a Rust type on each end;
//! on the wire it is a plain JS object, the derived JSON of the message (see
//! `js`, wasm32 only), wrapped in an [`Envelope`] carrying [`VERSION`]. Each
//! side decodes what it receives with a hand decoder ([`from_worker_json`],
//! [`to_worker_json`]): the derived decoders of these internally tagged enums
//! are among the largest code in the browser bundles. A worker and an
//! app from different builds refuse each other's messages with a typed
//! [`ProtocolError`] instead of misreading them.
//!
//! The vault's directory handle cannot be serialised: it travels beside the
//! envelope, as the `vault` property of the posted object, and only with
//! [`ToWorker::Start`] (permission is obtained on the main thread).
//!
//! Secrets: [`Endpoint::api_key`] crosses from the app to the worker and goes
//! nowhere else: its `Debug` is redacted, and no [`FromWorker`] message, trace
//! entry, journal line, note or URL ever carries it.

#![forbid(unsafe_code)]

use planvault_core::engine::{Autonomy, FinishReason};
use planvault_core::Status;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod wire;
pub use wire::{from_worker_json, to_worker_json};

/// Bump on any change to the shape of a message.
pub const VERSION: u32 = 3;

/// What is posted: the version and one message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub version: u32,
    pub message: T,
}

impl<T> Envelope<T> {
    pub fn new(message: T) -> Self {
        Envelope {
            version: VERSION,
            message,
        }
    }
}

/// App → worker.
// A start is sent once per run and read once: its size beside the small
// controls costs nothing, where a box would mean one more step in every
// match on a message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToWorker {
    /// Run the vault posted beside this message (or resume it: a vault with
    /// non-pending statuses and a journal continues where it stopped unless
    /// `fresh`).
    Start(StartRun),
    /// Pause before the next request is served (a streaming reply finishes
    /// first).
    Pause,
    /// Continue a paused run.
    Resume,
    /// Run until the next node's work is done, then pause.
    Step,
    /// Stop now; the vault stays resumable.
    Stop,
    /// Replace the breakpoints (node ids).
    SetBreakpoints { nodes: Vec<String> },
    /// Pause when this node is entered (`None` clears it).
    RunTo { node: Option<String> },
    /// A person's answer to a [`FromWorker::Ask`] with the same `request`.
    Reply { request: String, reply: PersonReply },
    /// List one MCP server's tools (the Settings' test of a server),
    /// whether or not a run is going; answered by [`FromWorker::ToolList`].
    ListTools { server: McpServer },
}

/// The knobs of one browser run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartRun {
    pub query: String,
    pub mode: RunMode,
    /// Start over: every note back to pending, the previous trace removed.
    #[serde(default)]
    pub fresh: bool,
    pub max_steps: u32,
    /// Who decides `type: human` / `@human` nodes; the app asks by default.
    pub autonomy: Autonomy,
    #[serde(default)]
    pub breakpoints: Vec<String>,
    #[serde(default)]
    pub run_to: Option<String>,
    /// Bounded retries of one model call (429, 5xx, timeouts, dropped streams).
    pub retry: RetryPolicy,
    /// The most bytes one model request may carry (the app's setting); the
    /// vault's `[run] max_prompt_bytes` wins, the runner's default applies
    /// when neither says.
    #[serde(default)]
    pub max_prompt_bytes: Option<u32>,
    /// MCP servers the worker reaches over Streamable HTTP (the browser
    /// cannot start a stdio server).
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// The vault config's command (stdio) servers, by name: run only by the
    /// terminal, so a node that declares one of their tools is told so.
    #[serde(default)]
    pub mcp_terminal_only: Vec<String>,
    /// The plan's folder when the plan is one folder of a larger vault
    /// (vault-relative, no `/` around it): its notes are the plan, their
    /// links resolve among every note of the vault as Obsidian resolves
    /// them, and the run's trace and a tool's writes stay in the folder.
    /// Empty: the whole vault.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
    /// A PLAN.md's independent items run together, in waves (Leopold's
    /// `--parallel`); otherwise one at a time, in Leopold's order.
    #[serde(default)]
    pub parallel: bool,
    /// With `parallel`, at most this many items in a wave (Leopold's
    /// `--parallel N`); none: every item that can run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_at_most: Option<u32>,
    /// The decisions a resumed journal holds that no run here took, as
    /// the person was shown them and took them as given (the message of
    /// the [`ErrorCode::DecisionsElsewhere`] this start answers): the run
    /// goes on past exactly those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_decisions: Option<String>,
    /// The vault config's `[fetch] allow_hosts` as the app read them when
    /// the person trusted them: `fetch_url` reaches those of them the
    /// config still lists as the worker reads it, so a host added between
    /// the two reads is not reached untrusted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_hosts: Vec<String>,
}

impl StartRun {
    /// The bound on a wave this start asks for: none unless it runs in
    /// waves (a bound given with one item at a time bounds nothing).
    pub fn wave_bound(&self) -> Option<u32> {
        self.parallel_at_most.filter(|_| self.parallel)
    }
}

/// One MCP server reached over Streamable HTTP (`[mcp.servers.NAME]` with a
/// `url` in the vault's config, or a URL added in the app's Settings).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServer {
    pub name: String,
    pub url: String,
    /// Sent only as `Authorization: Bearer`; like an API key it crosses to
    /// the worker and goes nowhere else (its `Debug` is redacted).
    #[serde(default)]
    pub token: Option<String>,
    /// Tools a person approves before each call under `autonomy: ask`,
    /// whatever the server says of them.
    #[serde(default)]
    pub approve: Vec<String>,
    /// How long one call may take (default: two minutes).
    #[serde(default)]
    pub timeout_ms: Option<u32>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("approve", &self.approve)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

/// Where the work and the judgments come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RunMode {
    /// OpenAI-compatible chat completions, streamed.
    Model { endpoints: Endpoints },
    /// A person answers each node's work and each YES/NO judgment in the UI.
    Manual,
}

/// Endpoints per role: `role:` in a note picks a named one, else the default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Endpoints {
    pub default: Option<Endpoint>,
    #[serde(default)]
    pub roles: BTreeMap<String, Endpoint>,
}

impl Endpoints {
    pub fn for_role(&self, role: Option<&str>) -> Option<&Endpoint> {
        role.and_then(|r| self.roles.get(r))
            .or(self.default.as_ref())
    }
}

/// One OpenAI-compatible endpoint.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The API base, e.g. `http://127.0.0.1:11434/v1` (calls `BASE/chat/completions`).
    pub base_url: String,
    pub model: String,
    /// Sent only as the `Authorization` header.
    #[serde(default)]
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// How one model call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub attempts: u32,
    /// First backoff; doubles per attempt, capped at 30 s; `Retry-After` wins.
    pub base_delay_ms: u32,
    /// Per attempt, until the first byte of the reply.
    pub timeout_ms: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            base_delay_ms: 500,
            timeout_ms: 120_000,
        }
    }
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PersonReply {
    /// Manual mode: the node's work.
    Work { output: String },
    /// Manual mode: one verdict per label of the [`AskKind::Judge`], in order.
    Judge { verdicts: Vec<bool> },
    /// A human node: approve or reject, with a note; `choice` picks an
    /// outgoing label when the node offers several.
    Human {
        approved: bool,
        note: String,
        choice: Option<String>,
    },
    /// A breakpoint: continue with this output (edited or not).
    Continue { output: String },
}

/// Worker → app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum FromWorker {
    /// The worker's wasm is running; earlier posts were lost.
    Ready {
        version: u32,
    },
    /// A run began. `visits` are per node, read from the journal on resume.
    Started {
        resumed: bool,
        done: u32,
        recorded: u32,
        visits: BTreeMap<String, u32>,
    },
    /// A note's `status:` was written.
    Status {
        node: String,
        status: Status,
    },
    /// A node's work begins (its visit count).
    Visit {
        node: String,
        visit: u32,
    },
    /// The run moved along an edge.
    Hop {
        from: String,
        to: String,
        label: Option<String>,
    },
    /// A model reply for `node` begins: the `Delta`s that follow are its
    /// text, apart from any earlier reply's (a re-asked judgment is a new
    /// attempt, never appended to the last one).
    ReplyStarts {
        node: String,
        kind: ReplyKind,
        /// 1 for the first request of its kind in this visit; a re-asked
        /// judgment counts up.
        attempt: u32,
    },
    /// Streamed tokens of the reply being received for `node`.
    Delta {
        node: String,
        text: String,
    },
    /// A node's output was kept (in `00_plan-trace/`).
    Output {
        node: String,
        visit: u32,
        text: String,
    },
    /// One trace entry, as appended to `00_plan-trace/trace.md`.
    Trace {
        markdown: String,
    },
    /// A tool ran at a node (`fetch_url`, `read_note`, `server.tool`, ...):
    /// `error` says why it failed (as the model was told, at most 300
    /// characters), `None` when it worked.
    Tool {
        node: String,
        name: String,
        error: Option<String>,
    },
    /// A person must answer; reply with [`ToWorker::Reply`].
    Ask {
        request: String,
        node: String,
        visit: u32,
        ask: AskKind,
    },
    /// A call failed and will be retried after `wait_ms`.
    Retrying {
        node: String,
        error: RunError,
        wait_ms: u32,
    },
    /// The run is paused (resume with [`ToWorker::Resume`] or [`ToWorker::Step`]).
    Paused {
        reason: PauseReason,
    },
    Resumed,
    /// The run is over; `error` says why a resumable stop happened.
    Finished {
        reason: FinishReason,
        answer: Option<String>,
        error: Option<RunError>,
    },
    /// A message could not be acted on (no run, bad version, ...).
    Failed {
        error: RunError,
    },
    /// The answer to [`ToWorker::ListTools`]: the server's tool names, or
    /// why they could not be listed.
    ToolList {
        server: String,
        tools: Vec<String>,
        error: Option<String>,
    },
}

/// What a model reply is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplyKind {
    /// The node's work.
    Work,
    /// The YES/NO judgment of its conditions.
    Judgment,
    /// A revision of the run's course: a PLAN.md item's rescue (a new
    /// approach for its last attempt), a generated plan's replanning.
    Revision,
}

/// What a person is asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AskKind {
    /// Manual mode: do the node's work. `prompt` is what a model would read.
    Work { title: String, prompt: String },
    /// Manual mode: does each condition hold for this output?
    Judge {
        title: String,
        output: String,
        labels: Vec<String>,
    },
    /// A human node: decide. `choices` are its outgoing labels (empty: approve/reject).
    Human {
        question: String,
        choices: Vec<String>,
    },
    /// A breakpoint after the node's work: read or change the output, then continue.
    Breakpoint { title: String, output: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PauseReason {
    /// The person pressed Pause.
    Requested,
    /// A step finished.
    Step { node: String },
    /// A breakpoint after `node`'s work.
    Breakpoint { node: String },
    /// Run-to reached `node` (before its work).
    RunTo { node: String },
}

/// A failure the UI can show: a stable code, a message naming the offender,
/// and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RunError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: Option<String>,
}

impl RunError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RunError {
            code,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Stable kebab-case codes of run failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The browser refused the response (no CORS headers) or could not connect.
    CorsOrNetwork,
    /// 401 / 403: the API key.
    Unauthorized,
    /// 404: the base URL or the model name.
    NotFound,
    /// 429 after every retry.
    RateLimited,
    /// 5xx after every retry.
    ServerError,
    Timeout,
    /// A reply that is not a chat completion, or a stream cut short.
    MalformedReply,
    /// No endpoint for a node's role.
    NoEndpoint,
    /// A note changed outside the run since it read it: not overwritten.
    ChangedOnDisk,
    /// The vault could not be read or written (permission, quota, ...).
    VaultIo,
    /// The plan has errors; nothing ran.
    PlanInvalid,
    /// The journal could not be read.
    Journal,
    /// A node failed (its judgment could not be read, a person rejected
    /// it, ...): its note says `status: failed`.
    NodeFailed,
    /// A message from a different build, or one that does not parse.
    Protocol,
    /// A message that makes no sense now (a reply nobody asked for, ...).
    BadState,
    /// A prompt over the run's budget (`[run] max_prompt_bytes`): not sent;
    /// the step stays active, so the run resumes there.
    PromptTooLarge,
    /// Another run holds the vault (another tab, or `planvault run`).
    VaultLocked,
    /// A resume's journal holds decisions no run here took (a vault
    /// cloned or shared with its trace): nothing ran. The message lists
    /// them, as a start that takes them gives it back
    /// ([`StartRun::take_decisions`]).
    DecisionsElsewhere,
}

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("message version {got}, this build speaks {want}: reload the page")]
    Version { got: u32, want: u32 },
    #[error("unreadable message: {0}")]
    Malformed(String),
}

impl From<ProtocolError> for RunError {
    fn from(err: ProtocolError) -> Self {
        RunError::new(ErrorCode::Protocol, err.to_string())
    }
}

/// Check an envelope's version and take its message out.
pub fn open<T>(envelope: Envelope<T>) -> Result<T, ProtocolError> {
    if envelope.version != VERSION {
        return Err(ProtocolError::Version {
            got: envelope.version,
            want: VERSION,
        });
    }
    Ok(envelope.message)
}

/// Reading the version first lets a message of another build be refused
/// by version rather than by whatever field it lacks.
#[derive(Deserialize)]
struct VersionOnly {
    version: u32,
}

/// Decode a message from JSON text (tests, and tools that speak JSON).
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ProtocolError> {
    let version: VersionOnly =
        serde_json::from_str(text).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    if version.version != VERSION {
        return Err(ProtocolError::Version {
            got: version.version,
            want: VERSION,
        });
    }
    let envelope: Envelope<T> =
        serde_json::from_str(text).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    open(envelope)
}

#[cfg(target_arch = "wasm32")]
pub mod js {
    //! The wire form: plain JS objects, as `JSON.parse` makes them from the
    //! derived JSON (maps become objects), with the directory handle as
    //! `vault`. JSON text is the way in and out because both bundles link
    //! `serde_json` anyway, and the messages are decoded by the hand decoders
    //! of `wire` (a JS-value deserializer would add its own code for both).
    use super::*;
    use wasm_bindgen::JsValue;

    /// The object to post: `{version, message, vault?}`.
    pub fn encode<T: Serialize>(message: &T, vault: Option<&JsValue>) -> JsValue {
        let value = serde_json::to_string(&Envelope::new(message))
            .ok()
            .and_then(|text| js_sys::JSON::parse(&text).ok())
            .unwrap_or(JsValue::NULL);
        if let Some(vault) = vault {
            let _ = js_sys::Reflect::set(&value, &JsValue::from_str("vault"), vault);
        }
        value
    }

    /// The JSON text of a posted object (its `vault`, a handle, reads as `{}`).
    fn text(value: &JsValue) -> Result<String, ProtocolError> {
        js_sys::JSON::stringify(value)
            .ok()
            .and_then(|t| t.as_string())
            .ok_or_else(|| ProtocolError::Malformed("not a JSON value".into()))
    }

    /// The app's message in a posted object, after its version check.
    pub fn to_worker(value: &JsValue) -> Result<ToWorker, ProtocolError> {
        to_worker_json(&text(value)?)
    }

    /// The worker's message in a posted object, after its version check.
    pub fn from_worker(value: &JsValue) -> Result<FromWorker, ProtocolError> {
        from_worker_json(&text(value)?)
    }

    /// The directory handle posted beside a message, if any.
    pub fn vault(value: &JsValue) -> Option<JsValue> {
        js_sys::Reflect::get(value, &JsValue::from_str("vault"))
            .ok()
            .filter(|v| v.is_object())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        message: T,
    ) {
        let text = serde_json::to_string(&Envelope::new(&message)).unwrap();
        assert_eq!(from_json::<T>(&text).unwrap(), message, "{text}");
    }

    #[test]
    fn every_message_survives_the_wire() {
        let endpoint = Endpoint {
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key: Some("sk-secret".into()),
        };
        roundtrip(ToWorker::Start(StartRun {
            query: "q".into(),
            mode: RunMode::Model {
                endpoints: Endpoints {
                    default: Some(endpoint.clone()),
                    roles: [("review".to_string(), endpoint)].into(),
                },
            },
            fresh: false,
            max_steps: 100,
            autonomy: Autonomy::Ask,
            breakpoints: vec!["review".into()],
            run_to: None,
            max_prompt_bytes: None,
            retry: RetryPolicy::default(),
            mcp_servers: vec![McpServer {
                name: "search".into(),
                url: "http://127.0.0.1:3001/mcp".into(),
                token: Some("tok-secret".into()),
                approve: vec!["post".into()],
                timeout_ms: Some(5_000),
            }],
            mcp_terminal_only: vec!["files".into()],
            folder: "plans/launch".into(),
            parallel: true,
            parallel_at_most: Some(4),
            take_decisions: None,
            allow_hosts: Vec::new(),
        }));
        roundtrip(ToWorker::ListTools {
            server: McpServer {
                name: "search".into(),
                url: "http://127.0.0.1:3001/mcp".into(),
                token: None,
                approve: vec![],
                timeout_ms: None,
            },
        });
        roundtrip(FromWorker::ToolList {
            server: "search".into(),
            tools: vec!["find".into()],
            error: None,
        });
        roundtrip(ToWorker::Reply {
            request: "review#1:judge.1".into(),
            reply: PersonReply::Judge {
                verdicts: vec![true, false],
            },
        });
        roundtrip(FromWorker::Finished {
            reason: FinishReason::Interrupted {
                node: "draft".into(),
                reason: "429".into(),
            },
            answer: None,
            error: Some(RunError::new(ErrorCode::RateLimited, "429").with_hint("wait")),
        });
        roundtrip(FromWorker::ReplyStarts {
            node: "review".into(),
            kind: ReplyKind::Judgment,
            attempt: 2,
        });
        roundtrip(FromWorker::Finished {
            reason: FinishReason::NodeFailed {
                node: "review".into(),
                reason: "unreadable".into(),
            },
            answer: None,
            error: Some(RunError::new(ErrorCode::NodeFailed, "unreadable").with_hint("edit")),
        });
        roundtrip(FromWorker::Ask {
            request: "send#1:human".into(),
            node: "send".into(),
            visit: 1,
            ask: AskKind::Human {
                question: "Send?".into(),
                choices: vec![],
            },
        });
    }

    #[test]
    fn a_message_from_another_build_is_refused_by_version() {
        let text = r#"{"version":99,"message":{"type":"pause"}}"#;
        assert_eq!(
            from_json::<ToWorker>(text),
            Err(ProtocolError::Version {
                got: 99,
                want: VERSION
            })
        );
        assert!(matches!(
            from_json::<ToWorker>(&format!(
                r#"{{"version":{VERSION},"message":{{"type":"dance"}}}}"#
            )),
            Err(ProtocolError::Malformed(_))
        ));
    }

    #[test]
    fn the_api_key_never_shows_in_debug_output() {
        let endpoint = Endpoint {
            base_url: "u".into(),
            model: "m".into(),
            api_key: Some("sk-secret".into()),
        };
        assert!(!format!("{endpoint:?}").contains("sk-secret"));
    }
}
