//! The terminal's Model Context Protocol client: the vault's configured
//! servers, each a child process (stdio) or a URL (Streamable HTTP),
//! through the official SDK (`rmcp`). The SDK is async on tokio; the
//! runtime lives here, inside the native host, and each host call blocks on
//! it (the driver's own executor stays the one run loop). Natively only
//! (feature `native`).
//!
//! What a server may do is bounded here: a child gets the cleaned
//! environment of `@tool` commands plus the names its config lists, a call
//! is timed out and its result cut to
//! [`planvault_llm::mcp::RESULT_LIMIT_CHARS`], and a
//! server error, a refused argument or a server that exits mid-call come
//! back as the tool's error text, which the model reads.

use crate::mcp_child::{self, ChildStdio};
use planvault_llm::mcp::{may_destroy, Catalog, McpTool};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a server may take to start and list its tools.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one call may take unless the config says otherwise.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// What of a child's stderr is kept for an error message.
const STDERR_KEEP: usize = 2000;

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Environment variable names passed through (never values).
        env: Vec<String>,
        /// Where it runs (already resolved against the vault).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint; `token_env` names the variable whose
    /// value goes as `Authorization: Bearer`.
    Http {
        url: String,
        token_env: Option<String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub transport: Transport,
    /// Tools a person approves before each call under `autonomy: ask`,
    /// whatever the server says of them.
    pub approve: Vec<String>,
    pub timeout: Duration,
}

/// How far a call has got, as its server last said (MCP progress
/// notifications): progress, total, message.
pub type Step = (f64, Option<f64>, Option<String>);

/// The client side of a session: it keeps the latest progress a server
/// reports for the call in flight.
#[derive(Clone, Default)]
struct Handler {
    latest: Arc<Mutex<Option<Step>>>,
}

impl rmcp::ClientHandler for Handler {
    /// What `initialize` offers: planvault by name, and the newest
    /// protocol version that has the handshake (the browser's client
    /// offers the same). rmcp's default offers its newest version, which
    /// has none, as the client `rmcp`.
    fn get_info(&self) -> rmcp::model::InitializeRequestParams {
        rmcp::model::InitializeRequestParams::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("planvault", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + rmcp::service::MaybeSendFuture + '_ {
        let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        *latest = Some((params.progress, params.total, params.message));
        std::future::ready(())
    }
}

type Service = RunningService<RoleClient, Handler>;

/// rmcp's reqwest client, but for one thing: a server that answers a request
/// with an HTTP error whose JSON-RPC error carries no id (the reference
/// `everything` server's 400 "No valid session ID provided" after a
/// restart; the TypeScript SDK's examples answer so) had that error match
/// nothing waiting, and the call hang until its timeout. Such an error is
/// the answer to the request the POST carried: it is given that id.
#[derive(Clone)]
struct IdMending(reqwest::Client);

impl IdMending {
    /// The client rmcp's `from_config` builds: no idle connections kept,
    /// and only same-origin 307 and 308 redirects followed (a POST kept
    /// whole; the session id and token never sent to another origin), at
    /// most 10.
    fn new() -> Result<IdMending, String> {
        let same_origin = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin)
            .build()
            .map(IdMending)
            .map_err(|e| e.to_string())
    }
}

use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

type Headers = std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>;
type SseStream = futures_core::stream::BoxStream<'static, Result<sse_stream::Sse, SseError>>;

fn mend_id(
    sent: Option<rmcp::model::RequestId>,
    session_attached: bool,
    reply: Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>,
) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
    match reply {
        Ok(StreamableHttpPostResponse::Json(
            rmcp::model::JsonRpcMessage::Error(mut error),
            session,
        )) if error.id.is_none() && sent.is_some() => {
            // A session the server no longer knows, said with a 400 (the
            // `everything` server after a restart) where the spec says 404:
            // read as the 404, so rmcp makes the session again and sends the
            // request once more. The server refused it unread, so it was
            // not made.
            if session_attached && crate::mcp_http::names_a_session(&error.error.message) {
                return Err(StreamableHttpError::SessionExpired);
            }
            error.id = sent;
            Ok(StreamableHttpPostResponse::Json(
                rmcp::model::JsonRpcMessage::Error(error),
                session,
            ))
        }
        other => other,
    }
}

fn request_id(message: &rmcp::model::ClientJsonRpcMessage) -> Option<rmcp::model::RequestId> {
    match message {
        rmcp::model::JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

impl StreamableHttpClient for IdMending {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let sent = request_id(&message);
        let session_attached = session_id.is_some();
        let reply = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        mend_id(sent, session_attached, reply)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let client = &self.0;
        client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// A call's latest progress and who hears each new step.
type Watch<'a> = (&'a Mutex<Option<Step>>, &'a dyn Fn(&Step));

/// A running server and what it printed on stderr.
struct Live {
    service: Service,
    progress: Arc<Mutex<Option<Step>>>,
    stderr: Arc<Mutex<String>>,
    /// A child's process id.
    pid: Option<u32>,
    /// Set when a child's session ended on a message past
    /// [`mcp_child::LINE_LIMIT`].
    overflowed: Option<Arc<AtomicBool>>,
}

/// The configured servers, started on first use and kept for the run.
pub struct Clients {
    runtime: tokio::runtime::Runtime,
    servers: Vec<Server>,
    /// The environment every child starts from (the cleaned one).
    base_env: Vec<(String, String)>,
    /// The whole environment, for the names a server's config lists.
    all_env: Vec<(String, String)>,
    live: RefCell<BTreeMap<String, Live>>,
    /// Servers restarted once after exiting; a second exit is final.
    restarted: RefCell<BTreeMap<String, bool>>,
    /// Servers that exited a second time or could not be connected to at a
    /// call, and why: not tried again in this run.
    down: RefCell<BTreeMap<String, String>>,
    stop: Option<Arc<AtomicBool>>,
    /// Calls sent to servers (tests count them, from another thread too).
    calls: Arc<AtomicUsize>,
    /// The values servers are given (their `env` names, a URL's token):
    /// `<redacted>` in anything a server sends back.
    secrets: Vec<String>,
}

impl Clients {
    /// Clients for `servers`; children start from `base_env` plus, of
    /// `all_env`, the names each server's config lists.
    pub fn new(
        servers: Vec<Server>,
        base_env: Vec<(String, String)>,
        all_env: Vec<(String, String)>,
    ) -> std::io::Result<Clients> {
        // reqwest is built without a TLS provider of its own: ring's, the
        // one ureq uses. Installed once per process; a second install is a
        // harmless refusal.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // The sessions run on a thread of their own, so what a server sends
        // between calls is read as it comes: a ping answered (go-sdk's
        // keepalive ends a session whose ping goes unanswered), its stderr
        // and notifications drained (a full pipe would stall the server).
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("planvault-mcp")
            .enable_all()
            .build()?;
        let mut secrets: Vec<String> = Vec::new();
        for server in &servers {
            // A token is a secret whatever its length. An `env` value may
            // be a flag or a word (`READ_ONLY=true`): hiding every `true`
            // would garble every text, so a short one is passed, not hidden.
            let (names, shortest): (Vec<&String>, usize) = match &server.transport {
                Transport::Stdio { env, .. } => (env.iter().collect(), SHORTEST_HIDDEN_ENV),
                Transport::Http { token_env, .. } => (token_env.iter().collect(), 4),
            };
            for (name, value) in &all_env {
                if names.contains(&name) && value.len() >= shortest && !secrets.contains(value) {
                    secrets.push(value.clone());
                }
            }
        }
        // The longest first, so a secret inside another is not half-kept.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Ok(Clients {
            runtime,
            servers,
            base_env,
            all_env,
            live: RefCell::new(BTreeMap::new()),
            restarted: RefCell::new(BTreeMap::new()),
            down: RefCell::new(BTreeMap::new()),
            stop: None,
            calls: Arc::new(AtomicUsize::new(0)),
            secrets,
        })
    }

    /// Give up waiting on a server as soon as `flag` is set (Ctrl-C).
    pub fn with_stop_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The values servers are given (their `env` names', a URL's token).
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// Why a server is down for the rest of the run (it exited after its
    /// restart, or a call found it unreachable), never carrying a value it
    /// was given.
    pub fn down(&self, server: &str) -> Option<String> {
        let reason = self.down.borrow().get(server).cloned()?;
        Some(self.scrub(reason))
    }

    /// How many calls went to a server.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The count of [`Clients::calls`], for watching from another thread
    /// (a test stops a run once a call is under way).
    pub fn call_counter(&self) -> Arc<AtomicUsize> {
        self.calls.clone()
    }

    /// The process id of a running stdio server.
    pub fn pid(&self, server: &str) -> Option<u32> {
        self.live.borrow().get(server).and_then(|l| l.pid)
    }

    fn server(&self, name: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Wait for `fut`, at most `timeout`, giving up on a stop; `watch`
    /// hears each new progress step.
    fn wait<T>(
        &self,
        what: &str,
        timeout: Duration,
        fut: impl std::future::Future<Output = Result<T, String>>,
        watch: Option<Watch<'_>>,
    ) -> Result<T, String> {
        let stop = self.stop.clone();
        self.runtime.block_on(async move {
            let stopped = async {
                let mut shown: Option<Step> = None;
                loop {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    if stop.as_ref().is_some_and(|f| f.load(Ordering::SeqCst)) {
                        return;
                    }
                    if let Some((latest, hear)) = &watch {
                        let now = latest.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        if let Some(step) = now.filter(|s| shown.as_ref() != Some(s)) {
                            hear(&step);
                            shown = Some(step);
                        }
                    }
                }
            };
            tokio::select! {
                out = tokio::time::timeout(timeout, fut) => match out {
                    Ok(result) => result,
                    Err(_) => Err(format!("{what} timed out after {} s", timeout.as_secs())),
                },
                () = stopped => Err(format!("{what}: stopped")),
            }
        })
    }

    /// Start `server` (a child process or an HTTP session).
    fn connect(&self, server: &Server) -> Result<Live, String> {
        let stderr = Arc::new(Mutex::new(String::new()));
        let handler = Handler::default();
        let progress = handler.latest.clone();
        let mut pid = None;
        let mut overflowed = None;
        let name = &server.name;
        let service = match &server.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args)
                    .env_clear()
                    .envs(self.base_env.iter().cloned());
                cmd.envs(
                    self.all_env
                        .iter()
                        .filter(|(k, _)| env.contains(k))
                        .cloned(),
                );
                if let Some(dir) = cwd {
                    cmd.current_dir(dir);
                }
                // The last resort, should a shutdown below be cut short:
                // the process dies with its handle.
                cmd.kill_on_drop(true);
                let _guard = self.runtime.enter();
                let cannot_start = |e| format!("MCP server {name}: cannot start `{command}`: {e}");
                let mut child = cmd
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(cannot_start)?;
                let err = child.stderr.take();
                let transport = ChildStdio::new(child).map_err(cannot_start)?;
                pid = transport.id();
                overflowed = Some(transport.overflowed());
                if let Some(mut err) = err {
                    let keep = stderr.clone();
                    self.runtime.spawn(async move {
                        use tokio::io::AsyncReadExt;
                        let mut buf = [0u8; 1024];
                        while let Ok(n) = err.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            let mut kept = keep.lock().unwrap_or_else(|e| e.into_inner());
                            kept.push_str(&String::from_utf8_lossy(&buf[..n]));
                            if kept.len() > STDERR_KEEP * 2 {
                                let cut = line_start_after(&kept, kept.len() - STDERR_KEEP);
                                kept.drain(..cut);
                            }
                        }
                    });
                }
                self.wait(
                    &format!("starting MCP server {name}"),
                    LIST_TIMEOUT,
                    async { handler.serve(transport).await.map_err(|e| init_error(&e)) },
                    None,
                )
            }
            Transport::Http { url, token_env } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = token_env {
                    let token = self
                        .all_env
                        .iter()
                        .find(|(k, _)| k == var)
                        .map(|(_, v)| v.clone())
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| {
                            format!("MCP server {name}: its token_env {var} is not set")
                        })?;
                    config = config.auth_header(token);
                }
                let _guard = self.runtime.enter();
                let client = IdMending::new()
                    .map_err(|e| format!("MCP server {name}: no HTTP client ({e})"))?;
                let transport = StreamableHttpClientTransport::with_client(client, config);
                self.wait(
                    &format!("connecting to MCP server {name}"),
                    LIST_TIMEOUT,
                    async { handler.serve(transport).await.map_err(|e| init_error(&e)) },
                    None,
                )
            }
        };
        // A version the client does not speak is a server it cannot use
        // (MCP: the client disconnects).
        let service = service.and_then(|service| {
            let version = service
                .peer_info()
                .map(|info| info.protocol_version.clone());
            match version {
                Some(v) if !rmcp::model::ProtocolVersion::KNOWN_VERSIONS.contains(&v) => Err(
                    format!("it answered protocol version {v}, which planvault does not speak"),
                ),
                _ => Ok(service),
            }
        });
        match service {
            Ok(service) => Ok(Live {
                service,
                progress,
                stderr,
                pid,
                overflowed,
            }),
            Err(e) => {
                let error = match &server.transport {
                    Transport::Stdio { .. } => format!("MCP server {name} did not start: {e}"),
                    Transport::Http { url, .. } => {
                        format!("MCP server {name} at {url}: {e}{}", legacy_sse_hint(url))
                    }
                };
                Err(with_stderr(error, &stderr))
            }
        }
    }

    fn scrub(&self, text: String) -> String {
        planvault_llm::mcp::redacted(&text, &self.secrets)
    }

    /// Start every server and list its tools, once. What a server says
    /// never carries a value it was given.
    pub fn list(&self) -> Result<Catalog, String> {
        self.list_all().map_err(|e| self.scrub(e))
    }

    fn list_all(&self) -> Result<Catalog, String> {
        let mut catalog = Catalog::default();
        for server in &self.servers {
            if !self.live.borrow().contains_key(&server.name) {
                let live = self.connect(server)?;
                self.live.borrow_mut().insert(server.name.clone(), live);
            }
            let live = self.live.borrow();
            let live = &live[&server.name];
            // A server without the tools capability has none to list (the
            // TypeScript SDK's answers `tools/list` "method not found").
            let lists_tools = live
                .service
                .peer_info()
                .is_none_or(|info| info.capabilities.tools.is_some());
            if !lists_tools {
                catalog.servers.insert(server.name.clone(), Vec::new());
                continue;
            }
            let peer = live.service.peer().clone();
            let name = server.name.clone();
            let tools = self
                .wait(
                    &format!("listing MCP server {}'s tools", server.name),
                    LIST_TIMEOUT,
                    async move {
                        // Paged as the browser's client pages: a server
                        // whose cursor never ends is an error, not a run
                        // that lists until its time is up.
                        let mut tools = Vec::new();
                        let mut listed_size = 0;
                        let mut cursor = None;
                        for _ in 0..crate::mcp_http::MAX_LIST_PAGES {
                            let params =
                                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
                            let page = match peer.list_tools(Some(params)).await {
                                Ok(page) => page,
                                // Tools it lists none of, said so.
                                Err(rmcp::ServiceError::McpError(e))
                                    if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
                                {
                                    return Ok(tools)
                                }
                                Err(e) => {
                                    return Err(format!("MCP server {name}: {}", service_error(&e)))
                                }
                            };
                            for t in &page.tools {
                                listed_size += crate::mcp_http::listed_bytes(
                                    &t.name,
                                    t.description.as_deref().unwrap_or_default(),
                                    &*t.input_schema,
                                );
                            }
                            if listed_size > crate::mcp_http::MAX_TOOL_LIST_BYTES {
                                return Err(format!(
                                    "MCP server {name}: {}",
                                    crate::mcp_http::too_large_list()
                                ));
                            }
                            tools.extend(page.tools);
                            match page.next_cursor {
                                Some(next) if !next.is_empty() => cursor = Some(next),
                                _ => return Ok(tools),
                            }
                        }
                        Err(format!(
                            "MCP server {name}: {}",
                            crate::mcp_http::too_many_pages()
                        ))
                    },
                    None,
                )
                .map_err(|e| with_stderr(e, &live.stderr))?;
            let tools = tools
                .into_iter()
                .map(|t| {
                    let hints = t.annotations.as_ref();
                    let read_only = hints.and_then(|a| a.read_only_hint);
                    let destructive = hints.and_then(|a| a.destructive_hint);
                    McpTool {
                        ask: may_destroy(read_only, destructive)
                            || server.approve.iter().any(|n| *n == t.name),
                        read_only: read_only == Some(true),
                        name: t.name.to_string(),
                        description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                        input_schema: Value::Object((*t.input_schema).clone()),
                    }
                })
                .collect();
            catalog.servers.insert(server.name.clone(), tools);
        }
        Ok(catalog)
    }

    /// Call one tool: its text, or the error the model reads. A server
    /// that exited is started again once per run. Neither carries a value
    /// the server was given.
    pub fn call(&self, server: &str, tool: &str, arguments: &Value) -> Result<String, String> {
        self.call_with_progress(server, tool, arguments, &|_| {})
    }

    /// [`Clients::call`], telling `progress` each step the server reports.
    pub fn call_with_progress(
        &self,
        server: &str,
        tool: &str,
        arguments: &Value,
        progress: &dyn Fn(&Step),
    ) -> Result<String, String> {
        self.call_once(server, tool, arguments, false, &|step| {
            let (done, total, message) = step;
            progress(&(*done, *total, message.clone().map(|m| self.scrub(m))));
        })
        .map(|t| self.scrub(t))
        .map_err(|e| self.scrub(e))
    }

    /// `again`: the call is being made a second time on a new connection,
    /// its first request having never reached the server.
    fn call_once(
        &self,
        server: &str,
        tool: &str,
        arguments: &Value,
        again: bool,
        progress: &dyn Fn(&Step),
    ) -> Result<String, String> {
        let config = self
            .server(server)
            .ok_or_else(|| format!("no MCP server is named {server}"))?;
        if let Some(reason) = self.down.borrow().get(server) {
            return Err(reason.clone());
        }
        let map = match arguments {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            _ => return Err("the arguments must be a JSON object".into()),
        };
        let closed = self
            .live
            .borrow()
            .get(server)
            .is_none_or(|l| l.service.is_transport_closed());
        if closed {
            if self.live.borrow().contains_key(server) {
                if self
                    .restarted
                    .borrow()
                    .get(server)
                    .copied()
                    .unwrap_or(false)
                {
                    let reason = format!(
                        "MCP server {server} exited again after a restart; it is not started a third time in this run"
                    );
                    self.down
                        .borrow_mut()
                        .entry(server.to_string())
                        .or_insert_with(|| reason.clone());
                    return Err(reason);
                }
                self.restarted.borrow_mut().insert(server.to_string(), true);
                if let Some(old) = self.live.borrow_mut().remove(server) {
                    self.close(old);
                }
            }
            // A server that cannot be reached (again) is down: the model
            // reading "connection refused" at every call would finish the
            // run on errors, where a person would start the server and
            // resume. The call was not made, so the next run makes it.
            let live = self.connect(config).map_err(|error| {
                let reason = format!("{error}; the call to {server}.{tool} was not made");
                self.down
                    .borrow_mut()
                    .entry(server.to_string())
                    .or_insert_with(|| reason.clone());
                reason
            })?;
            self.live.borrow_mut().insert(server.to_string(), live);
        }
        let sessions = self.live.borrow();
        let live = &sessions[server];
        let peer = live.service.peer().clone();
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let mut params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
        params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(number as i64)),
        ));
        *live.progress.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let result = self.wait(
            &format!("{server}.{tool}"),
            config.timeout,
            async move {
                let request = rmcp::model::ClientRequest::CallToolRequest(
                    rmcp::model::CallToolRequest::new(params),
                );
                Ok(peer
                    .send_request(request)
                    .await
                    .map(|result| match result {
                        // A result rmcp's types do not take (go-sdk's empty
                        // file: an embedded resource with no `text`) is read
                        // as JSON, as the browser's client reads every one.
                        rmcp::model::ServerResult::CustomResult(raw) => raw.0,
                        other => serde_json::to_value(&other).unwrap_or_default(),
                    })
                    .map_err(|e| (service_error(&e), never_reached(&e))))
            },
            Some((&live.progress, progress)),
        );
        let result = match result {
            Ok(Ok(result)) => result,
            // Nothing answers at its url while the session looks open: the
            // call was not made. A new connection says whether the server
            // is back (the call is made there) or down (the run stops).
            Ok(Err((_, true))) if !again => {
                drop(sessions);
                if let Some(old) = self.live.borrow_mut().remove(server) {
                    self.close(old);
                }
                return self.call_once(server, tool, arguments, true, progress);
            }
            // Given up on (a stop, the timeout) while the server may still
            // be at work: its session ends before the caller looks at what
            // the call changed, so nothing it writes lands after the
            // comparison (a stdio server's write is made, or never will
            // be, once its process is gone). A later call starts it anew.
            Err(e) => {
                drop(sessions);
                if let Some(old) = self.live.borrow_mut().remove(server) {
                    self.close(old);
                }
                return Err(e);
            }
            Ok(Err((e, _))) => {
                // A message too long to read ended the session, not the
                // server: it is stopped, and started anew for the next call
                // (not counted as an exit).
                if live
                    .overflowed
                    .as_ref()
                    .is_some_and(|o| o.load(Ordering::SeqCst))
                {
                    drop(sessions);
                    if let Some(old) = self.live.borrow_mut().remove(server) {
                        self.close(old);
                    }
                    return Err(format!(
                        "MCP server {server} answered {server}.{tool} with a message over {} MiB, more than planvault reads; the answer is lost (ask for less, e.g. a part of the file)",
                        mcp_child::LINE_LIMIT >> 20
                    ));
                }
                // What a server printed says why it exited; a live
                // server's error speaks for itself.
                if !live.service.is_transport_closed() {
                    return Err(e);
                }
                let error = with_stderr(
                    format!("MCP server {server} exited during the call ({e})"),
                    &live.stderr,
                );
                // Its second exit in this run: it stays down.
                if self
                    .restarted
                    .borrow()
                    .get(server)
                    .copied()
                    .unwrap_or(false)
                {
                    self.down.borrow_mut().insert(
                        server.to_string(),
                        format!("{error}; it had been restarted once already and is not started again in this run"),
                    );
                }
                return Err(error);
            }
        };
        crate::mcp_http::call_text(&result, &self.secrets)
    }

    /// End one server's session (its child is stopped).
    fn close(&self, live: Live) {
        self.close_all(vec![live]);
    }

    /// End sessions together. A child is stopped as MCP says: its stdin
    /// closed, then `SIGTERM` after rmcp's 3 s, then a kill after 3 s more;
    /// the wait allows all of it, so no server outlives the run (one that
    /// ignores both costs the run's end 6 s).
    fn close_all(&self, live: Vec<Live>) {
        self.runtime.block_on(async {
            let mut closing = tokio::task::JoinSet::new();
            for l in live {
                closing.spawn(async move {
                    tokio::time::timeout(SHUTDOWN_WAIT, l.service.cancel()).await
                });
            }
            while closing.join_next().await.is_some() {}
        });
    }
}

/// The shortest `env` value of a server's hidden from what the run writes
/// and sends (README: "MCP servers as tools").
pub const SHORTEST_HIDDEN_ENV: usize = 8;

/// How long closing a session may take: rmcp's two 3 s waits, and a kill.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(7);

impl Drop for Clients {
    fn drop(&mut self) {
        let live = std::mem::take(&mut *self.live.borrow_mut());
        self.close_all(live.into_values().collect());
    }
}

/// A failed request as a person reads it: the server's own error as the
/// browser's client words it, a connection's failure by its causes (not
/// rmcp's transport type names), a refused token with what to set.
fn service_error(e: &rmcp::ServiceError) -> String {
    use rmcp::ServiceError;
    match e {
        ServiceError::McpError(data) => {
            format!("{} (JSON-RPC error {})", data.message, data.code.0)
        }
        ServiceError::TransportSend(t) => transport_error(&*t.error, e.auth_challenge().is_some()),
        ServiceError::TransportClosed => "the connection closed".into(),
        other => other.to_string(),
    }
}

/// What to say of a URL that failed to connect when it looks like a
/// 2024-11-05 HTTP+SSE server's event stream (`…/sse`), which takes no POST.
fn legacy_sse_hint(url: &str) -> &'static str {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    if path.trim_end_matches('/').ends_with("/sse") {
        " (this looks like the `/sse` endpoint of an older HTTP+SSE server, which planvault does not speak: give the server's Streamable HTTP endpoint, often `/mcp`)"
    } else {
        ""
    }
}

/// Whether a call's request never reached its server: no connection could
/// be made to its url (refused, no route, a name that does not resolve).
fn never_reached(e: &rmcp::ServiceError) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::ServiceError::TransportSend(sent) = e else {
        return false;
    };
    matches!(
        sent.error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::Client(client)) if client.is_connect()
    )
}

/// [`service_error`] for `initialize`.
fn init_error(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError;
    match e {
        ClientInitializeError::TransportError { error, context } => format!(
            "{context}: {}",
            transport_error(&*error.error, e.auth_challenge().is_some())
        ),
        ClientInitializeError::JsonRpcError(data) => {
            format!("{} (JSON-RPC error {})", data.message, data.code.0)
        }
        other => other.to_string(),
    }
}

fn transport_error(error: &(dyn std::error::Error + 'static), auth: bool) -> String {
    let mut causes = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !causes.iter().any(|c| c.contains(&text)) {
            causes.push(text);
        }
        source = cause.source();
    }
    let causes = causes.join(": ");
    if auth || causes.contains("Auth required") {
        format!(
            "the server refused it for want of authorization (HTTP 401): the server's entry names \
             the variable holding its token in token_env; check that it is set and right ({causes})"
        )
    } else {
        format!("the connection failed ({causes}): is the server running at its url?")
    }
}

/// An error with the end of what the server wrote on stderr.
fn with_stderr(error: String, stderr: &Mutex<String>) -> String {
    let kept = stderr.lock().unwrap_or_else(|e| e.into_inner());
    let tail = kept.trim();
    if tail.is_empty() {
        return error;
    }
    let start = match tail.len().checked_sub(STDERR_KEEP) {
        Some(cut) => line_start_after(tail, cut),
        None => 0,
    };
    match tail[start..].trim() {
        "" => error,
        shown => format!("{error}; its stderr: {shown}"),
    }
}

/// Where the first whole line at or after byte `at` of `text` starts (its
/// end where none does): stderr is cut only between lines, so no secret
/// in it is cut in two, its tail kept where redaction cannot find it.
fn line_start_after(text: &str, at: usize) -> usize {
    if at == 0 || text.as_bytes().get(at - 1) == Some(&b'\n') {
        return at;
    }
    text.get(at..)
        .or_else(|| {
            let at = (at..text.len()).find(|&i| text.is_char_boundary(i))?;
            text.get(at..)
        })
        .and_then(|rest| rest.find('\n').map(|i| text.len() - rest.len() + i + 1))
        .unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idless_error(message: &str) -> rmcp::model::ServerJsonRpcMessage {
        rmcp::model::JsonRpcMessage::error(
            rmcp::model::ErrorData::new(rmcp::model::ErrorCode(-32000), message.to_string(), None),
            None,
        )
    }

    #[test]
    fn an_idless_error_answers_the_request_or_reads_as_a_lost_session() {
        let sent = Some(rmcp::model::RequestId::Number(7));
        let mended = |attached, message| {
            mend_id(
                sent.clone(),
                attached,
                Ok(StreamableHttpPostResponse::Json(
                    idless_error(message),
                    None,
                )),
            )
        };
        let answered = |reply| match reply {
            Ok(StreamableHttpPostResponse::Json(rmcp::model::JsonRpcMessage::Error(e), _)) => e.id,
            _ => None,
        };
        assert_eq!(
            answered(mended(true, "Bad Request: Unsupported protocol version")),
            sent
        );
        assert_eq!(
            answered(mended(false, "Bad Request: No valid session ID provided")),
            sent
        );
        assert!(matches!(
            mended(true, "Bad Request: No valid session ID provided"),
            Err(StreamableHttpError::SessionExpired)
        ));
    }

    #[test]
    fn stderr_is_cut_only_where_a_line_starts() {
        let text = "key=s3cr3t-long\nnext line\nlast";
        assert_eq!(line_start_after(text, 0), 0);
        // Inside the secret's line: from the next whole line.
        assert_eq!(&text[line_start_after(text, 6)..], "next line\nlast");
        assert_eq!(&text[line_start_after(text, 16)..], "next line\nlast");
        assert_eq!(&text[line_start_after(text, 20)..], "last");
        // No whole line after the cut: nothing.
        assert_eq!(line_start_after(text, 28), text.len());
        // Inside a character.
        assert_eq!(&"é\néé"[line_start_after("é\néé", 1)..], "éé");
    }
}
