//! A Model Context Protocol client over Streamable HTTP for hosts without
//! tokio (the browser worker's `fetch`): the session (initialize, the
//! `Mcp-Session-Id` it hands out, the negotiated protocol version), each
//! request as one POST whose reply is JSON or an SSE stream read until the
//! response to it arrives (answering, on the way, what the server asks the
//! client, as the terminal's client does), and retries like the model
//! calls' (a `tools/call` only where the server says it did not serve it:
//! a call is never made twice). The I/O is
//! the caller's, through [`Fetch`]. The requests are the official SDK's
//! types (`rmcp::model`, built without any transport, which compiles to
//! wasm32); the replies are read as JSON for the few fields used (a tool's
//! name, description, schema and `destructiveHint`; a result's content and
//! `isError`; the negotiated version): deserializing rmcp's full result
//! types (every content, capability and annotation variant) put the worker
//! 7 KB gzipped over its size budget (407 KB; 371 KB without them).
//!
//! What a call hands back is made text by [`call_text`], the same for the
//! terminal's rmcp client, and bounded to
//! [`RESULT_LIMIT_CHARS`].

use planvault_llm::mcp::{bound_redacted, may_destroy, Catalog, McpTool, RESULT_LIMIT_CHARS};
use planvault_protocol::{McpServer, RetryPolicy};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, Implementation, InitializeRequestParams,
    ProtocolVersion,
};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// How long one call may take unless the server's entry says otherwise.
pub const CALL_TIMEOUT_MS: u32 = 120_000;
/// How long a server may take to answer `initialize` and `tools/list`.
pub const LIST_TIMEOUT_MS: u32 = 60_000;
/// The most bytes of one reply read (a reply that never ends is cut off):
/// the terminal's client reads a line up to 16 MiB, and servers send a
/// tool's text twice (`content` and `structuredContent`).
const REPLY_LIMIT: usize = 16 << 20;

/// The most pages of `tools/list` read from one server: one whose cursor
/// never ends is an error (in both clients).
pub const MAX_LIST_PAGES: usize = 100;

/// Why a server's tools could not be listed when they never end.
pub fn too_many_pages() -> String {
    format!("its tools/list still had a next page after {MAX_LIST_PAGES} pages")
}

/// The most a server's tools may take, their names, descriptions and
/// schemas as JSON, over all its pages: a real server's list is a few
/// hundred KB, and a hostile one's pages (each up to the reply limit,
/// and larger once read) would otherwise be held together.
pub const MAX_TOOL_LIST_BYTES: usize = 4 << 20;

/// How much of [`MAX_TOOL_LIST_BYTES`] a tool takes.
pub fn listed_bytes(name: &str, description: &str, schema: &impl serde::Serialize) -> usize {
    name.len() + description.len() + serde_json::to_string(schema).map_or(0, |s| s.len())
}

/// Why a server's tools could not be listed when they take too much.
pub fn too_large_list() -> String {
    format!(
        "its tools/list passed {} MiB (names, descriptions and schemas); planvault reads no more of a server",
        MAX_TOOL_LIST_BYTES >> 20
    )
}

/// The head of a POST's reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head {
    pub status: u16,
    /// Lower-cased.
    pub content_type: String,
    /// The `Mcp-Session-Id` header.
    pub session_id: Option<String>,
    /// `Retry-After` in seconds.
    pub retry_after: Option<u64>,
}

/// Why a POST got no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// Not connected (refused, DNS, a CORS refusal in the browser).
    Connect(String),
    /// No reply (or no next byte) within the time allowed.
    Timeout,
    /// Stopped by the person.
    Interrupted,
}

/// The I/O this client needs: one POST, its body's chunks, a pause.
#[allow(async_fn_in_trait)]
pub trait Fetch {
    type Body;
    /// POST `body` to `url` with `headers`; `timeout_ms` bounds the wait
    /// for the head and for each chunk after it.
    async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &str,
        timeout_ms: u32,
    ) -> Result<(Head, Self::Body), FetchError>;
    /// The next chunk of a body; `None` at its end.
    async fn chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, FetchError>;
    async fn sleep(&self, ms: u32);
}

/// One server's session.
#[derive(Debug, Default)]
struct Session {
    id: Option<String>,
    version: Option<String>,
}

/// The servers of one run, each initialized on first use.
pub struct Client {
    servers: Vec<McpServer>,
    /// Configured command servers, which only the terminal can start.
    terminal_only: Vec<String>,
    retry: RetryPolicy,
    sessions: RefCell<BTreeMap<String, Session>>,
    /// Servers a call could not reach, and why: not tried again this run.
    down: RefCell<BTreeMap<String, String>>,
    next_id: RefCell<i64>,
    /// Requests sent (tests count them).
    sent: RefCell<usize>,
}

impl Client {
    pub fn new(servers: Vec<McpServer>, retry: RetryPolicy) -> Client {
        Client {
            servers,
            terminal_only: Vec::new(),
            retry,
            sessions: RefCell::new(BTreeMap::new()),
            down: RefCell::new(BTreeMap::new()),
            next_id: RefCell::new(0),
            sent: RefCell::new(0),
        }
    }

    /// The config's command servers, named so that a node declaring one of
    /// their tools is told they run only in the terminal.
    pub fn with_terminal_only(mut self, names: Vec<String>) -> Client {
        self.terminal_only = names;
        self
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.terminal_only.is_empty()
    }

    /// How many `tools/call` requests went to a server.
    pub fn calls(&self) -> usize {
        *self.sent.borrow()
    }

    /// Why a server is down for the rest of the run: a call found no
    /// session could be had with it (so the call was not made).
    pub fn down(&self, server: &str) -> Option<String> {
        self.down.borrow().get(server).cloned()
    }

    fn server(&self, name: &str) -> Result<&McpServer, String> {
        self.servers
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("no MCP server is named {name}"))
    }

    /// Every server's tools, paging through `nextCursor`.
    pub async fn list<F: Fetch>(&self, fetch: &F) -> Result<Catalog, String> {
        let mut catalog = Catalog::default();
        for name in &self.terminal_only {
            catalog.unreachable.insert(
                name.clone(),
                "runs a command, which only the terminal starts: run this plan with planvault run"
                    .into(),
            );
        }
        for server in &self.servers {
            catalog
                .servers
                .insert(server.name.clone(), self.tools(fetch, server).await?);
        }
        Ok(catalog)
    }

    /// One server's tools.
    pub async fn tools<F: Fetch>(
        &self,
        fetch: &F,
        server: &McpServer,
    ) -> Result<Vec<McpTool>, String> {
        let mut tools = Vec::new();
        let mut listed_size = 0;
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let result = match self
                .request(fetch, server, "tools/list", params, LIST_TIMEOUT_MS)
                .await
            {
                Ok(result) => result,
                // A server without the tools capability lists none (the
                // TypeScript SDK answers "method not found"), as in the
                // terminal.
                Err(e) if e.ends_with("(JSON-RPC error -32601)") => return Ok(tools),
                Err(e) if e.starts_with("MCP server ") => return Err(e),
                Err(e) => return Err(format!("MCP server {}: {e}", server.name)),
            };
            let listed = result["tools"].as_array().ok_or_else(|| {
                format!(
                    "MCP server {}: its tools/list reply has no tools",
                    server.name
                )
            })?;
            for t in listed {
                let Some(name) = t["name"].as_str() else {
                    return Err(format!(
                        "MCP server {}: a tool without a name in its tools/list reply",
                        server.name
                    ));
                };
                let hints = &t["annotations"];
                let read_only = hints["readOnlyHint"].as_bool();
                let destructive = hints["destructiveHint"].as_bool();
                let schema = &t["inputSchema"];
                let description = t["description"].as_str().unwrap_or_default();
                listed_size += listed_bytes(name, description, schema);
                if listed_size > MAX_TOOL_LIST_BYTES {
                    return Err(format!("MCP server {}: {}", server.name, too_large_list()));
                }
                tools.push(McpTool {
                    ask: may_destroy(read_only, destructive)
                        || server.approve.iter().any(|n| n == name),
                    read_only: read_only == Some(true),
                    name: name.to_string(),
                    description: description.to_string(),
                    input_schema: if schema.is_object() {
                        schema.clone()
                    } else {
                        json!({"type": "object"})
                    },
                });
            }
            match result["nextCursor"].as_str() {
                Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
                _ => return Ok(tools),
            }
        }
        Err(format!("MCP server {}: {}", server.name, too_many_pages()))
    }

    /// Call one tool: its text, or the error the model reads.
    pub async fn call<F: Fetch>(
        &self,
        fetch: &F,
        server: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, String> {
        let config = self.server(server)?;
        if let Some(reason) = self.down(server) {
            return Err(reason);
        }
        let arguments = match arguments {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            _ => return Err("the arguments must be a JSON object".into()),
        };
        // A server no session can be had with (gone, or answering what
        // planvault cannot use) is down: the model reading the same failure
        // at every call would finish the run on errors, where a person
        // would start the server and resume. `initialize` has no effects,
        // and the call was not sent, so the next run makes it.
        if let Err(error) = self.ensure_session(fetch, config).await {
            let reason = format!("{error}; the call to {server}.{tool} was not made");
            self.down
                .borrow_mut()
                .insert(server.to_string(), reason.clone());
            return Err(reason);
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
        *self.sent.borrow_mut() += 1;
        let timeout = config.timeout_ms.unwrap_or(CALL_TIMEOUT_MS);
        let result = self
            .request(fetch, config, "tools/call", params, timeout)
            .await?;
        let tokens: Vec<&str> = self
            .servers
            .iter()
            .filter_map(|s| s.token.as_deref())
            .collect();
        call_text(&result, &tokens)
    }

    /// Start the session if there is none: `initialize`, then
    /// `notifications/initialized`.
    async fn ensure_session<F: Fetch>(&self, fetch: &F, server: &McpServer) -> Result<(), String> {
        if self.sessions.borrow().contains_key(&server.name) {
            return Ok(());
        }
        let params = InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("planvault", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
        let id = self.id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        let (head, reply) = self
            .exchange(
                fetch,
                server,
                &Session::default(),
                &body,
                id,
                LIST_TIMEOUT_MS,
            )
            .await?;
        let Some(version) = reply["protocolVersion"].as_str() else {
            return Err(format!(
                "MCP server {}: its initialize reply has no protocolVersion",
                server.name
            ));
        };
        // A version the client does not speak is a server it cannot use
        // (MCP: the client disconnects), as in the terminal.
        if !ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| known.as_str() == version)
        {
            return Err(format!(
                "MCP server {}: it answered protocol version {version}, which planvault does not speak",
                server.name
            ));
        }
        let session = Session {
            id: head.session_id,
            version: Some(version.to_string()),
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let headers = headers(server, &session);
        let (head, _) = post_retried(
            fetch,
            &self.retry,
            &server.url,
            &headers,
            &note.to_string(),
            LIST_TIMEOUT_MS,
            Resend::Always,
        )
        .await
        .map_err(|e| failure(server, e))?;
        if !(200..300).contains(&head.status) {
            return Err(format!(
                "MCP server {} refused notifications/initialized: HTTP {}",
                server.name, head.status
            ));
        }
        self.sessions
            .borrow_mut()
            .insert(server.name.clone(), session);
        Ok(())
    }

    fn id(&self) -> i64 {
        let mut next = self.next_id.borrow_mut();
        *next += 1;
        *next
    }

    /// One request's result; a session the server forgot (HTTP 404, or a
    /// 400 that says so) is started again once.
    async fn request<F: Fetch>(
        &self,
        fetch: &F,
        server: &McpServer,
        method: &str,
        params: Value,
        timeout_ms: u32,
    ) -> Result<Value, String> {
        for fresh in [false, true] {
            self.ensure_session(fetch, server).await?;
            let session = self
                .sessions
                .borrow()
                .get(&server.name)
                .map(|s| Session {
                    id: s.id.clone(),
                    version: s.version.clone(),
                })
                .unwrap_or_default();
            let id = self.id();
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            match self
                .exchange(fetch, server, &session, &body, id, timeout_ms)
                .await
            {
                Err(e) if e == SESSION_GONE && !fresh && session.id.is_some() => {
                    self.sessions.borrow_mut().remove(&server.name);
                }
                Err(e) if e == SESSION_GONE => {
                    return Err(format!(
                        "MCP server {} did not know the session it had just begun, at {method}",
                        server.name
                    ))
                }
                other => return other.map(|(_, result)| result),
            }
        }
        Err(format!("MCP server {}: no session", server.name))
    }

    /// POST one JSON-RPC request and read its reply (JSON or SSE) until the
    /// response with `id`.
    async fn exchange<F: Fetch>(
        &self,
        fetch: &F,
        server: &McpServer,
        session: &Session,
        body: &Value,
        id: i64,
        timeout_ms: u32,
    ) -> Result<(Head, Value), String> {
        let headers = headers(server, session);
        // A call may have run once its POST could have reached the server.
        let resend = if body["method"] == "tools/call" {
            Resend::WhenRefused
        } else {
            Resend::Always
        };
        let (head, mut stream) = post_retried(
            fetch,
            &self.retry,
            &server.url,
            &headers,
            &body.to_string(),
            timeout_ms,
            resend,
        )
        .await
        .map_err(|e| match e {
            FetchError::Connect(reason) if resend == Resend::WhenRefused => {
                // The next call starts a session, which says whether the
                // server is still there.
                self.sessions.borrow_mut().remove(&server.name);
                format!(
                "MCP server {} at {}: no reply to the call ({reason}); it may have run, so it is \
                 not sent again (a browser also refuses a server that does not allow this page's \
                 origin: CORS)",
                server.name, server.url
            )
            }
            other => failure(server, other),
        })?;
        if head.status == 404 {
            return Err(SESSION_GONE.into());
        }
        let sse = head.content_type.starts_with("text/event-stream");
        let mut events = SseLines::default();
        let mut text: Vec<u8> = Vec::new();
        loop {
            let chunk = fetch
                .chunk(&mut stream)
                .await
                .map_err(|e| failure(server, e))?;
            let Some(chunk) = chunk else { break };
            if sse {
                for data in events.feed(&chunk) {
                    let Ok(message) = serde_json::from_str::<Value>(data.trim()) else {
                        continue;
                    };
                    for reply in answers_to_server_requests(&message) {
                        // Best effort: a server that loses the answer fails
                        // or times out its own request, which it reports.
                        let _ = fetch
                            .post(&server.url, &headers, &reply.to_string(), timeout_ms)
                            .await;
                    }
                    if let Some(found) = response_in(message, id) {
                        return found
                            .map(|v| (head.clone(), v))
                            .map_err(|e| format!("MCP server {}: {e}", server.name));
                    }
                }
            } else {
                text.extend_from_slice(&chunk);
            }
            if text.len() > REPLY_LIMIT || events.buffered() > REPLY_LIMIT {
                return Err(format!(
                    "MCP server {}: its reply is over {} MB",
                    server.name,
                    REPLY_LIMIT >> 20
                ));
            }
        }
        // An id-less error saying the session is unknown reads alike
        // whatever the status, as in the terminal's client (`mcp.rs`'s
        // `mend_id`).
        let session_lost = |text: &str| session.id.is_some() && says_session_lost(text);
        if !(200..300).contains(&head.status) {
            let said = String::from_utf8_lossy(&text);
            if session_lost(&said) {
                return Err(SESSION_GONE.into());
            }
            let said = bound_redacted(said.trim(), 300, server.token.as_slice());
            return Err(format!(
                "MCP server {} answered HTTP {}{}",
                server.name,
                head.status,
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {said}")
                }
            ));
        }
        if sse {
            if let Some(found) = events.finish().and_then(|data| response(&data, id)) {
                return found
                    .map(|v| (head, v))
                    .map_err(|e| format!("MCP server {}: {e}", server.name));
            }
            return Err(format!(
                "MCP server {}: its event stream ended without the reply",
                server.name
            ));
        }
        let text = String::from_utf8_lossy(&text);
        match response(&text, id) {
            Some(found) => found
                .map(|v| (head, v))
                .map_err(|e| format!("MCP server {}: {e}", server.name)),
            None if session_lost(&text) => Err(SESSION_GONE.into()),
            None => Err(format!(
                "MCP server {}: its reply is not the JSON-RPC response: {}",
                server.name,
                bound_redacted(text.trim(), 300, server.token.as_slice())
            )),
        }
    }
}

const SESSION_GONE: &str = "\u{0}session gone";

/// Whether an error's message is about the session ("No valid session ID
/// provided", "Session not found").
pub(crate) fn names_a_session(message: &str) -> bool {
    message.to_ascii_lowercase().contains("session")
}

/// Whether a reply is a JSON-RPC error without an id saying the session is
/// unknown: the reference `everything` server's 400 after a restart, where
/// the spec says 404. With no id it answers no request: the server refused
/// the request unread.
fn says_session_lost(body: &str) -> bool {
    serde_json::from_str::<Value>(body).is_ok_and(|reply| {
        reply["id"].is_null()
            && reply["error"]["message"]
                .as_str()
                .is_some_and(names_a_session)
    })
}

/// The headers of a POST within `session`.
fn headers<'a>(server: &McpServer, session: &Session) -> Vec<(&'a str, String)> {
    let mut out = vec![
        ("Content-Type", "application/json".to_string()),
        ("Accept", "application/json, text/event-stream".to_string()),
    ];
    if let Some(id) = &session.id {
        out.push(("Mcp-Session-Id", id.clone()));
    }
    if let Some(v) = &session.version {
        out.push(("MCP-Protocol-Version", v.clone()));
    }
    if let Some(token) = server.token.as_ref().filter(|t| !t.is_empty()) {
        out.push(("Authorization", format!("Bearer {token}")));
    }
    out
}

fn failure(server: &McpServer, error: FetchError) -> String {
    match error {
        FetchError::Connect(reason) => format!(
            "MCP server {} at {}: cannot connect ({reason}; a browser also refuses a server that does not allow this page's origin: CORS)",
            server.name, server.url
        ),
        FetchError::Timeout => format!("MCP server {}: no reply in time", server.name),
        FetchError::Interrupted => format!("MCP server {}: stopped", server.name),
    }
}

/// Which failures a POST is sent again after.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resend {
    /// Connection failures, 429, 502, 503, 504, as a model call.
    Always,
    /// Only 429 and 503, the server's own "not served": a connection that
    /// broke, or a gateway's 502 or 504, may come after the server did the
    /// work (a browser's `fetch` does not say which).
    WhenRefused,
}

/// A POST, retried as a model call is (replies that say the request was not
/// served), with the same backoff.
async fn post_retried<F: Fetch>(
    fetch: &F,
    retry: &RetryPolicy,
    url: &str,
    headers: &[(&str, String)],
    body: &str,
    timeout_ms: u32,
    resend: Resend,
) -> Result<(Head, F::Body), FetchError> {
    let attempts = retry.attempts.max(1);
    let mut attempt = 1;
    loop {
        let outcome = fetch.post(url, headers, body, timeout_ms).await;
        let retry_after = match (&outcome, resend) {
            (Ok((head, _)), _) if matches!(head.status, 429 | 503) => head.retry_after,
            (Ok((head, _)), Resend::Always) if matches!(head.status, 502 | 504) => head.retry_after,
            (Err(FetchError::Connect(_)), Resend::Always) => None,
            _ => return outcome,
        };
        if attempt >= attempts {
            return outcome;
        }
        let wait = planvault_llm::backoff_ms(retry.base_delay_ms.into(), attempt, retry_after);
        fetch.sleep(wait.min(u64::from(u32::MAX)) as u32).await;
        attempt += 1;
    }
}

/// In a JSON-RPC message (or batch), the response to `id`: its result, or
/// its error's message.
fn response(text: &str, id: i64) -> Option<Result<Value, String>> {
    response_in(serde_json::from_str(text.trim()).ok()?, id)
}

/// What the client answers the requests a server sends it on a call's
/// stream, as the terminal's client (rmcp's handler) does: a `ping`, its
/// roots (none), an elicitation (declined); anything else, sampling
/// included, is a method it does not offer. Without an answer the server
/// waits, and the call with it, until the call times out.
fn answers_to_server_requests(message: &Value) -> Vec<Value> {
    let messages = match message {
        Value::Array(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    messages
        .iter()
        .filter_map(|m| {
            let method = m.get("method")?.as_str()?;
            let id = m.get("id").filter(|id| !id.is_null())?;
            let mut reply = json!({"jsonrpc": "2.0", "id": id});
            match method {
                "ping" => reply["result"] = json!({}),
                "roots/list" => reply["result"] = json!({"roots": []}),
                "elicitation/create" => reply["result"] = json!({"action": "decline"}),
                _ => {
                    reply["error"] = json!({
                        "code": -32601,
                        "message": format!("planvault does not offer {method}"),
                    })
                }
            }
            Some(reply)
        })
        .collect()
}

fn response_in(value: Value, id: i64) -> Option<Result<Value, String>> {
    let messages = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    messages.into_iter().find_map(|m| {
        if m.get("id").and_then(Value::as_i64) != Some(id) || m.get("method").is_some() {
            return None;
        }
        if let Some(error) = m.get("error") {
            let message = error["message"].as_str().unwrap_or("an error");
            return Some(Err(match error["code"].as_i64() {
                Some(code) => format!("{message} (JSON-RPC error {code})"),
                None => message.to_string(),
            }));
        }
        Some(Ok(m.get("result").cloned().unwrap_or(Value::Null)))
    })
}

/// Server-sent events, split into each event's `data` (lines joined).
#[derive(Default)]
struct SseLines {
    buffer: Vec<u8>,
    /// How much of `buffer` holds no line end: a long line arriving in
    /// many chunks is scanned once, not once per chunk.
    scanned: usize,
    data: Vec<String>,
}

impl SseLines {
    fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(end) = self.buffer[self.scanned..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| self.scanned + i)
        {
            let line = String::from_utf8_lossy(&self.buffer[start..end]);
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                if !self.data.is_empty() {
                    out.push(std::mem::take(&mut self.data).join("\n"));
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                self.data
                    .push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            }
            start = end + 1;
            self.scanned = start;
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        out
    }

    fn buffered(&self) -> usize {
        self.buffer.len() + self.data.iter().map(String::len).sum::<usize>()
    }

    /// An event the stream ended without a blank line after.
    fn finish(mut self) -> Option<String> {
        let mut last = self.feed(b"\n\n");
        last.pop()
    }
}

/// An embedded resource: its text, or what a binary one is (its bytes are
/// no text for the model, and would fill the result's budget).
fn resource_text(resource: &Value) -> String {
    let uri = resource["uri"].as_str().unwrap_or_default();
    if let Some(text) = resource["text"].as_str() {
        return format!("[a resource: {uri}]\n{text}");
    }
    match resource["blob"].as_str() {
        Some(blob) => format!(
            "[a resource: {uri}, {}, {} bytes]",
            resource["mimeType"].as_str().unwrap_or("unknown type"),
            blob.trim_end_matches('=').len() * 3 / 4
        ),
        None => resource.to_string(),
    }
}

/// A call's result (MCP's `CallToolResult` as JSON) as the text the model
/// reads (`Err`: the tool's error), bounded, with `secrets` redacted
/// before the cut.
/// A link to a resource the server did not inline, with what the server
/// says of it: its name and description say what it holds.
fn resource_link(block: &Value) -> String {
    let said = |key: &str| block[key].as_str().filter(|s| !s.trim().is_empty());
    let mut text = String::from("[a resource");
    if let Some(name) = said("title").or_else(|| said("name")) {
        text.push_str(&format!(" \"{name}\""));
    }
    text.push_str(&format!(": {}", said("uri").unwrap_or_default()));
    if let Some(mime) = said("mimeType") {
        text.push_str(&format!(", {mime}"));
    }
    text.push(']');
    if let Some(description) = said("description") {
        text.push_str(&format!(" {description}"));
    }
    text
}

pub fn call_text(result: &Value, secrets: &[impl AsRef<str>]) -> Result<String, String> {
    let mut parts = Vec::new();
    let content = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    for block in content {
        let mime = block["mimeType"].as_str().unwrap_or("unknown type");
        parts.push(match block["type"].as_str().unwrap_or_default() {
            "text" => block["text"].as_str().unwrap_or_default().to_string(),
            "image" => format!("[an image, {mime}]"),
            "audio" => format!("[audio, {mime}]"),
            "resource" => resource_text(&block["resource"]),
            "resource_link" => resource_link(block),
            _ => block.to_string(),
        });
    }
    if parts.is_empty() {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            parts.push(structured.to_string());
        }
    }
    let text = bound_redacted(&parts.join("\n"), RESULT_LIMIT_CHARS, secrets);
    if result["isError"].as_bool() == Some(true) {
        if text.trim().is_empty() {
            return Err("the tool reported an error and said nothing more".into());
        }
        Err(text)
    } else {
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The terminal's rule (`mcp.rs`'s `mend_id`): only an error with no
    /// id reads as a lost session; one with the request's id answers it.
    #[test]
    fn only_an_idless_error_naming_the_session_reads_as_a_lost_one() {
        let lost = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;
        assert!(says_session_lost(lost));
        assert!(says_session_lost(&lost.replace(r#""id":null,"#, "")));
        assert!(!says_session_lost(&lost.replace("null", "3")));
        assert!(!says_session_lost(&lost.replace(
            "No valid session ID provided",
            "Unsupported protocol version"
        )));
        assert!(!says_session_lost(
            "Bad Request: No valid session ID provided"
        ));
    }

    #[test]
    fn sse_events_are_split_across_chunks() {
        let mut sse = SseLines::default();
        assert!(sse.feed(b"event: message\nid: 1\ndata: {\"a\"").is_empty());
        assert_eq!(
            sse.feed(b":1}\r\n\r\ndata: x\ndata: y\n\n"),
            vec!["{\"a\":1}".to_string(), "x\ny".to_string()]
        );
        assert!(sse.feed(b"data: tail").is_empty());
        assert_eq!(sse.finish().as_deref(), Some("tail"));
    }

    #[test]
    fn the_response_to_the_request_is_picked_out() {
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        assert_eq!(response(progress, 3), None);
        let other = r#"{"jsonrpc":"2.0","id":2,"result":{"x":1}}"#;
        assert_eq!(response(other, 3), None);
        let batch = r#"[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"result":{"ok":true}}]"#;
        assert_eq!(response(batch, 3), Some(Ok(json!({"ok": true}))));
        let error =
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#;
        assert_eq!(
            response(error, 3),
            Some(Err("Unknown tool: nope (JSON-RPC error -32602)".into()))
        );
    }

    #[test]
    fn a_token_goes_only_as_a_bearer_header() {
        let server = McpServer {
            name: "s".into(),
            url: "http://127.0.0.1:1/mcp".into(),
            token: Some("tok-123".into()),
            approve: vec![],
            timeout_ms: None,
        };
        let session = Session {
            id: Some("abc".into()),
            version: Some("2025-11-25".into()),
        };
        let h = headers(&server, &session);
        assert!(h.contains(&("Authorization", "Bearer tok-123".into())));
        assert!(h.contains(&("Mcp-Session-Id", "abc".into())));
        assert!(h.contains(&("MCP-Protocol-Version", "2025-11-25".into())));
        assert!(!format!("{server:?}").contains("tok-123"));
    }

    #[test]
    fn a_call_result_reads_as_text_or_the_tools_error() {
        let ok = json!({"content": [{"type": "text", "text": "Echo: hi"}, {"type": "image", "data": "", "mimeType": "image/png"}]});
        assert_eq!(
            call_text(&ok, &[""; 0]),
            Ok("Echo: hi\n[an image, image/png]".into())
        );
        let err = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
        assert_eq!(call_text(&err, &[""; 0]), Err("boom".into()));
        let structured = json!({"content": [], "structuredContent": {"sum": 5}});
        assert_eq!(call_text(&structured, &[""; 0]), Ok(r#"{"sum":5}"#.into()));
        let resources = json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/zip", "blob": "AAECAwQ="}}
        ]});
        assert_eq!(
            call_text(&resources, &[""; 0]),
            Ok("[a resource: file:///a.txt]\nhello\n[a resource: file:///b.bin, application/zip, 5 bytes]".into())
        );
        // As the `everything` server's `get-resource-links` links them: the
        // name and description say what is there, not the URI alone.
        let links = json!({"content": [
            {"type": "resource_link", "uri": "demo://resource/dynamic/text/2",
             "name": "Text Resource 2", "mimeType": "text/plain",
             "description": "Resource 2: plaintext resource"},
            {"type": "resource_link", "uri": "file:///c.txt", "name": ""}
        ]});
        assert_eq!(
            call_text(&links, &[""; 0]),
            Ok("[a resource \"Text Resource 2\": demo://resource/dynamic/text/2, text/plain] Resource 2: plaintext resource\n[a resource: file:///c.txt]".into())
        );
        // An error that says nothing still reads as one.
        let silent = json!({"content": [], "isError": true});
        assert_eq!(
            call_text(&silent, &[""; 0]),
            Err("the tool reported an error and said nothing more".into())
        );
    }

    #[test]
    fn a_long_event_line_in_many_chunks_is_read_whole() {
        let mut sse = SseLines::default();
        let line = format!("data: {}", "x".repeat(100_000));
        for piece in line.as_bytes().chunks(7) {
            assert!(sse.feed(piece).is_empty());
        }
        assert_eq!(sse.scanned, sse.buffer.len());
        assert_eq!(sse.feed(b"\r\n\r\n"), vec!["x".repeat(100_000)]);
        assert!(sse.buffer.is_empty());
    }

    #[test]
    fn a_servers_requests_are_answered_as_the_terminal_answers_them() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": "r", "method": "roots/list"},
            {"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {}},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
            {"jsonrpc": "2.0", "id": 4, "result": {}}
        ]);
        let answers = answers_to_server_requests(&batch);
        assert_eq!(
            answers,
            vec![
                json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
                json!({"jsonrpc": "2.0", "id": "r", "result": {"roots": []}}),
                json!({"jsonrpc": "2.0", "id": 2, "result": {"action": "decline"}}),
                json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "planvault does not offer sampling/createMessage"}}),
            ]
        );
    }
}
