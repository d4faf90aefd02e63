//! An in-memory [`Host`]: a vault as a map, scripted model replies, a fake
//! clock, and every posted message kept. The driver's native tests and
//! benchmark run on it; `block_on` polls a run to its end on this thread.

use crate::host::{Host, HostError, HttpHead};
use crate::inbox::Inbox;
use planvault_llm::LlmError;
use planvault_protocol::{FromWorker, ToWorker};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// One model call as the host received it.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpCall {
    pub url: String,
    /// What went into `Authorization: Bearer`.
    pub api_key: Option<String>,
    pub body: serde_json::Value,
}

/// A scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `text/event-stream`, in these chunks.
    Stream(Vec<String>),
    /// `application/json`.
    Json(String),
    /// An HTTP error: status, body, `Retry-After`.
    Status(u16, String, Option<u64>),
    /// `fetch` itself failed.
    Fail(LlmError),
}

impl Reply {
    /// A streamed reply of `text`, one content delta per word.
    pub fn streamed(text: &str) -> Reply {
        Reply::streamed_in(text.split_inclusive(' '))
    }

    /// A streamed reply, one content delta per piece, each its own chunk.
    pub fn streamed_in<'a>(pieces: impl IntoIterator<Item = &'a str>) -> Reply {
        let mut chunks: Vec<String> = pieces
            .into_iter()
            .map(|w| {
                format!(
                    "data: {}\n\n",
                    serde_json::json!({"choices": [{"delta": {"content": w}}]})
                )
            })
            .collect();
        chunks.push(
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
                .into(),
        );
        Reply::Stream(chunks)
    }

    /// A streamed reply asking for one tool call.
    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Reply {
        let call = serde_json::json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": id, "function": {"name": name, "arguments": arguments}}]}, "finish_reason": "tool_calls"}]});
        Reply::Stream(vec![format!("data: {call}\n\n"), "data: [DONE]\n\n".into()])
    }
}

type Responder = Box<dyn FnMut(&FromWorker) -> Vec<ToWorker>>;
type Model = Box<dyn FnMut(&HttpCall) -> Reply>;
type WriteHook = Box<dyn FnMut(&str, &mut BTreeMap<String, String>)>;

/// What [`MemoryHost::writes`] lists where decisions were kept.
pub const DECISIONS_KEPT: &str = "(decisions kept)";

/// The in-memory host.
pub struct MemoryHost {
    pub files: RefCell<BTreeMap<String, String>>,
    pub posted: RefCell<Vec<FromWorker>>,
    pub calls: RefCell<Vec<HttpCall>>,
    pub fetched: RefCell<Vec<String>>,
    /// Total time slept (backoff), in ms.
    pub slept: Cell<u64>,
    /// Every write and append, in order (the path), and each keeping of
    /// decisions ([`DECISIONS_KEPT`]).
    pub writes: RefCell<Vec<String>>,
    /// How far the clock moves while one body chunk arrives, in ms.
    pub chunk_ms: Cell<f64>,
    /// Whether to keep posted messages and model calls (a benchmark does not).
    pub keep_posts: Cell<bool>,
    /// Writes and appends left before the disk is full (`None`: never).
    pub space_left: Cell<Option<usize>>,
    /// Whether the vault's names ignore case (as on macOS and Windows).
    pub case_insensitive: Cell<bool>,
    /// Other spellings the file system finds a file under (as macOS finds
    /// `café` composed or decomposed): spelling → the name stored and listed.
    pub aliases: RefCell<BTreeMap<String, String>>,
    /// The decisions taken on this host, by chain hash; `None` (the
    /// default): it keeps no such record.
    pub decisions: RefCell<Option<std::collections::BTreeSet<String>>>,
    /// What the person answers when asked to take decisions taken
    /// elsewhere, and each listing they were shown.
    pub takes_decisions: Cell<bool>,
    pub asked_decisions: RefCell<Vec<String>>,
    clock: Cell<f64>,
    inbox: Inbox,
    model: RefCell<Model>,
    responder: RefCell<Option<Responder>>,
    before_write: RefCell<Option<WriteHook>>,
    /// Each file's text as last read or written here: as the native host
    /// does, a write refuses a file changed since (`HostError::changed`).
    seen: RefCell<BTreeMap<String, String>>,
}

impl MemoryHost {
    /// A host over `files` whose model answers with `model`; controls the
    /// responder sends go to `inbox`.
    pub fn new(
        files: BTreeMap<String, String>,
        inbox: &Inbox,
        model: impl FnMut(&HttpCall) -> Reply + 'static,
    ) -> Self {
        MemoryHost {
            files: RefCell::new(files),
            posted: RefCell::new(Vec::new()),
            calls: RefCell::new(Vec::new()),
            fetched: RefCell::new(Vec::new()),
            slept: Cell::new(0),
            writes: RefCell::new(Vec::new()),
            chunk_ms: Cell::new(60.0),
            keep_posts: Cell::new(true),
            case_insensitive: Cell::new(false),
            aliases: RefCell::new(BTreeMap::new()),
            space_left: Cell::new(None),
            decisions: RefCell::new(None),
            takes_decisions: Cell::new(false),
            asked_decisions: RefCell::new(Vec::new()),
            clock: Cell::new(0.0),
            inbox: inbox.clone(),
            model: RefCell::new(Box::new(model)),
            responder: RefCell::new(None),
            before_write: RefCell::new(None),
            seen: RefCell::new(BTreeMap::new()),
        }
    }

    /// One write's worth of the space left; the disk is full at zero.
    fn spend(&self, path: &str) -> Result<(), HostError> {
        match self.space_left.get() {
            Some(0) => Err(HostError::disk_full(path)),
            Some(n) => {
                self.space_left.set(Some(n - 1));
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The app's side: what it sends back on each posted message.
    pub fn respond(&self, responder: impl FnMut(&FromWorker) -> Vec<ToWorker> + 'static) {
        *self.responder.borrow_mut() = Some(Box::new(responder));
    }

    /// Something editing the vault before each write (path about to be written).
    pub fn before_write(&self, hook: impl FnMut(&str, &mut BTreeMap<String, String>) + 'static) {
        *self.before_write.borrow_mut() = Some(Box::new(hook));
    }

    /// The name `path` is stored under.
    fn stored(&self, path: &str) -> String {
        let aliases = self.aliases.borrow();
        aliases.get(path).map_or(path, String::as_str).to_string()
    }

    pub fn file(&self, path: &str) -> Option<String> {
        self.files.borrow().get(path).cloned()
    }

    fn hook(&self, path: &str) {
        if self.keep_posts.get() {
            self.writes.borrow_mut().push(path.to_string());
        }
        if let Some(hook) = self.before_write.borrow_mut().as_mut() {
            hook(path, &mut self.files.borrow_mut());
        }
    }
}

impl Host for MemoryHost {
    type Body = VecDeque<Vec<u8>>;

    fn keeps_decisions(&self) -> bool {
        self.decisions.borrow().is_some()
    }

    async fn decisions_taken_here(&self, heads: &[&str]) -> Vec<bool> {
        let kept = self.decisions.borrow();
        heads
            .iter()
            .map(|h| kept.as_ref().is_some_and(|k| k.contains(*h)))
            .collect()
    }

    async fn keep_decisions(&self, heads: &[&str]) {
        if let Some(kept) = self.decisions.borrow_mut().as_mut() {
            kept.extend(heads.iter().map(|h| h.to_string()));
            if self.keep_posts.get() {
                self.writes.borrow_mut().push(DECISIONS_KEPT.to_string());
            }
        }
    }

    async fn take_decisions(&self, listing: &str) -> bool {
        self.asked_decisions.borrow_mut().push(listing.to_string());
        self.takes_decisions.get()
    }

    async fn list(&self) -> Result<Vec<String>, HostError> {
        Ok(self
            .files
            .borrow()
            .keys()
            .filter(|p| !p.split('/').any(|s| s.starts_with('.')))
            .cloned()
            .collect())
    }

    async fn read(&self, path: &str) -> Result<Option<String>, HostError> {
        let text = self.files.borrow().get(&self.stored(path)).cloned();
        if let Some(text) = &text {
            self.seen
                .borrow_mut()
                .insert(self.stored(path), text.clone());
        }
        Ok(text)
    }

    async fn write(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.spend(path)?;
        self.hook(path);
        let stored = self.stored(path);
        let now = self.files.borrow().get(&stored).cloned();
        let seen = self.seen.borrow().get(&stored).cloned();
        if seen.is_some_and(|seen| now.as_deref().is_some_and(|now| now != seen && now != text)) {
            return Err(HostError::changed(path));
        }
        self.files
            .borrow_mut()
            .insert(stored.clone(), text.to_string());
        self.seen.borrow_mut().insert(stored, text.to_string());
        Ok(())
    }

    async fn append(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.spend(path)?;
        self.hook(path);
        self.files
            .borrow_mut()
            .entry(self.stored(path))
            .or_default()
            .push_str(text);
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.files.borrow_mut().remove(&self.stored(path));
        Ok(())
    }

    async fn post_json(
        &self,
        url: &str,
        api_key: Option<&str>,
        body: &str,
        _timeout_ms: u32,
    ) -> Result<(HttpHead, Self::Body), LlmError> {
        // A benchmark (posts not kept) skips reading the request back: that
        // cost is this host's, not the worker's.
        let keep = self.keep_posts.get();
        let body = if keep {
            serde_json::from_str(body).expect("the driver posts JSON")
        } else {
            serde_json::Value::Null
        };
        let call = HttpCall {
            url: url.to_string(),
            api_key: api_key.map(str::to_string),
            body,
        };
        let reply = (self.model.borrow_mut())(&call);
        if keep {
            self.calls.borrow_mut().push(call);
        }
        let (head, chunks) = match reply {
            Reply::Stream(chunks) => (
                HttpHead {
                    status: 200,
                    content_type: "text/event-stream".into(),
                    retry_after: None,
                },
                chunks.into_iter().map(String::into_bytes).collect(),
            ),
            Reply::Json(text) => (
                HttpHead {
                    status: 200,
                    content_type: "application/json".into(),
                    retry_after: None,
                },
                [text.into_bytes()].into(),
            ),
            Reply::Status(status, text, retry_after) => (
                HttpHead {
                    status,
                    content_type: "application/json".into(),
                    retry_after,
                },
                [text.into_bytes()].into(),
            ),
            Reply::Fail(err) => return Err(err),
        };
        Ok((head, chunks))
    }

    async fn read_chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, LlmError> {
        self.clock.set(self.clock.get() + self.chunk_ms.get());
        Ok(body.pop_front())
    }

    async fn fetch_text(&self, url: &str) -> Result<String, String> {
        self.fetched.borrow_mut().push(url.to_string());
        Ok(format!("the page at {url}"))
    }

    async fn sleep(&self, ms: u32) {
        self.slept.set(self.slept.get() + u64::from(ms));
        self.clock.set(self.clock.get() + f64::from(ms));
    }

    fn now_ms(&self) -> f64 {
        self.clock.get()
    }

    fn case_insensitive(&self) -> bool {
        self.case_insensitive.get()
    }

    fn post(&self, message: &FromWorker) {
        let replies = match self.responder.borrow_mut().as_mut() {
            Some(responder) => responder(message),
            None => Vec::new(),
        };
        if self.keep_posts.get() {
            self.posted.borrow_mut().push(message.clone());
        }
        for reply in replies {
            self.inbox.push(reply);
        }
    }
}

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Poll `future` on this thread until it is ready. `None` when it waits for
/// something nobody will deliver (a message no responder sends).
pub fn block_on<F: Future>(future: F) -> Option<F::Output> {
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        flag.0.store(false, Ordering::SeqCst);
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(value) => return Some(value),
            Poll::Pending if flag.0.load(Ordering::SeqCst) => continue,
            Poll::Pending => return None,
        }
    }
}

/// The start of a per-hop benchmark run over [`chain_vault`]: a model mode
/// whose endpoint the host answers itself, full autonomy, no step limit.
pub fn chain_start(api_key: Option<String>) -> planvault_protocol::StartRun {
    use planvault_protocol::{Endpoint, Endpoints, RetryPolicy, RunMode, StartRun};
    let endpoint = Endpoint {
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key,
    };
    StartRun {
        query: "bench".into(),
        mode: RunMode::Model {
            endpoints: Endpoints {
                default: Some(endpoint),
                roles: Default::default(),
            },
        },
        fresh: false,
        max_steps: 100_000,
        autonomy: planvault_core::engine::Autonomy::Full,
        breakpoints: vec![],
        run_to: None,
        max_prompt_bytes: None,
        retry: RetryPolicy::default(),
        mcp_servers: Vec::new(),
        mcp_terminal_only: Vec::new(),
        folder: String::new(),
        parallel: false,
        parallel_at_most: None,
        take_decisions: None,
        allow_hosts: Vec::new(),
    }
}

/// A vault of `n` notes in one chain (`step-0000` → … → `step-{n-1}`): what
/// the per-hop benchmarks run.
pub fn chain_vault(n: usize) -> BTreeMap<String, String> {
    (0..n)
        .map(|i| {
            let kind = if i == 0 { "start" } else { "step" };
            let next = if i + 1 < n { format!("\n## Next\n- [[step-{:04}]]\n", i + 1) } else { String::new() };
            let text = format!("---\ntype: {kind}\nstatus: pending\n---\n# Step {i}\n\nDo step {i} of the plan.\n{next}");
            (format!("step-{i:04}.md"), text)
        })
        .collect()
}

/// The shortest streamed reply: one delta, then `[DONE]`.
pub fn short_reply(_: &HttpCall) -> Reply {
    Reply::Stream(vec!["data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into()])
}
