//! MCP servers as tools, against the protocol's reference servers from npm
//! (`@modelcontextprotocol/server-everything`, a dev dependency of the
//! repository's root `package.json`, run from `node_modules/.bin`, so the
//! tests are offline): over stdio and over Streamable HTTP, the client
//! lists, calls with arguments, reports a server's error, bounds a huge
//! result and cleans a child's environment; through the driver, a node is
//! offered only its declared tools, a tool it did not declare is refused
//! without contacting the server, a declared tool nothing offers stops the
//! run before any model call, and a tool that needs approval waits for a
//! person. A missing server fails these tests: `npm ci` at the root (what
//! `scripts/setup` does) installs it.

use llm_stub::{Match, Reply, Script, Stub, ToolCall};
use planvault_core::engine::trace::JOURNAL_FILE;
use planvault_core::engine::{Autonomy, FinishReason, JournalEntry};
use planvault_llm::mcp::RESULT_LIMIT_CHARS;
use planvault_protocol::{Endpoint, Endpoints, RetryPolicy, RunMode, StartRun};
use planvault_runner::mcp::{Clients, Server, Transport, CALL_TIMEOUT};
use planvault_runner::native::NativeHost;
use planvault_runner::{block_on, run_with, Humans, Inbox, Options};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server's launcher in the repository's `node_modules/.bin`.
pub fn npm_bin(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` at the repository's root (scripts/setup does)",
        path.display()
    );
    path
}

fn env() -> Vec<(String, String)> {
    std::env::vars().collect()
}

fn stdio_server(name: &str) -> Server {
    Server {
        name: name.into(),
        transport: Transport::Stdio {
            command: npm_bin("mcp-server-everything").display().to_string(),
            args: vec!["stdio".into()],
            env: vec!["MCP_TEST_PASSED".into()],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    }
}

/// server-everything over Streamable HTTP on a free port of 127.0.0.1,
/// stopped when dropped.
pub(crate) struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    pub(crate) fn start() -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        HttpServer::start_on(port)
    }

    /// On `port` (a server started again where it was).
    pub(crate) fn start_on(port: u16) -> HttpServer {
        let child = Command::new(npm_bin("mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl HttpServer {
    /// The port it listens on, to start it again there.
    fn port(&self) -> u16 {
        let port = self.url.trim_end_matches("/mcp").rsplit(':').next();
        port.and_then(|p| p.parse().ok())
            .expect("a port in the url")
    }

    /// The server stopped and a new one started where it was: the same
    /// URL, none of its sessions.
    pub(crate) fn restarted(self) -> HttpServer {
        let port = self.port();
        drop(self);
        HttpServer::start_on(port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every transport must do with server-everything.
fn lists_calls_reports_errors_and_bounds(clients: &Clients) {
    let catalog = clients.list().unwrap();
    let tools = &catalog.servers["ev"];
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "get-env"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let sum = catalog.tool("ev", "get-sum").unwrap();
    assert_eq!(sum.input_schema["properties"]["a"]["type"], "number");
    // get-sum says it is not destructive: no approval asked.
    assert!(!sum.ask);

    assert_eq!(
        clients.call("ev", "get-sum", &json!({"a": 2, "b": 3})),
        Ok("The sum of 2 and 3 is 5.".to_string())
    );
    // The server refuses a wrong argument: the model reads its error.
    let err = clients
        .call("ev", "get-sum", &json!({"a": "two", "b": 3}))
        .unwrap_err();
    assert!(err.to_lowercase().contains("number"), "{err}");
    let err = clients.call("ev", "no-such-tool", &json!({})).unwrap_err();
    assert!(err.contains("no-such-tool"), "{err}");
    // A huge result is cut, and says so.
    let huge = "x".repeat(RESULT_LIMIT_CHARS * 3);
    let text = clients
        .call("ev", "echo", &json!({"message": huge}))
        .unwrap();
    assert!(
        text.chars().count() < RESULT_LIMIT_CHARS + 200,
        "{}",
        text.len()
    );
    assert!(
        text.ends_with("are shown]"),
        "{}",
        &text[text.len() - 100..]
    );
    assert!(clients.call("ev", "echo", &json!([1])).is_err());
    // A link to a resource reads with what the server says it is.
    let links = clients
        .call("ev", "get-resource-links", &json!({"count": 2}))
        .unwrap();
    assert!(
        links.contains("[a resource \"Text Resource 2\": demo://resource/dynamic/text/2, text/plain] Resource 2: plaintext resource"),
        "{links}"
    );
}

#[test]
fn over_stdio_the_client_lists_calls_reports_errors_and_bounds_results() {
    let clients = Clients::new(vec![stdio_server("ev")], vec![], env()).unwrap();
    lists_calls_reports_errors_and_bounds(&clients);
    // Arguments that are not an object never reach the server.
    assert_eq!(clients.calls(), 5);
}

#[test]
fn over_streamable_http_the_client_does_the_same() {
    let server = HttpServer::start();
    let config = Server {
        name: "ev".into(),
        transport: Transport::Http {
            url: server.url.clone(),
            token_env: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let clients = Clients::new(vec![config], vec![], env()).unwrap();
    lists_calls_reports_errors_and_bounds(&clients);
}

/// A red team's note: the reference `everything` server, restarted between
/// two calls, answers the second (its session unknown) HTTP 400 with a
/// JSON-RPC error that carries no id; that error matched no call waiting,
/// and the call hung until its timeout, which the journal then kept as the
/// tool's answer. Then it was the call's answer at once, but the session was
/// not made again as after a 404, so every later call failed too. Now the
/// session is made again and the call made there.
#[test]
fn a_session_the_restarted_server_lost_is_made_again_and_the_call_made_there() {
    let server = HttpServer::start();
    let config = Server {
        name: "ev".into(),
        transport: Transport::Http {
            url: server.url.clone(),
            token_env: None,
        },
        approve: vec![],
        timeout: Duration::from_secs(20),
    };
    let clients = Clients::new(vec![config], vec![], env()).unwrap();
    clients.list().unwrap();
    assert!(clients
        .call("ev", "echo", &json!({"message": "one"}))
        .is_ok());
    let _again = server.restarted();
    let started = Instant::now();
    let text = clients
        .call("ev", "echo", &json!({"message": "two"}))
        .unwrap();
    assert!(text.contains("two"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(15), "not a timeout");
    let text = clients
        .call("ev", "echo", &json!({"message": "three"}))
        .unwrap();
    assert!(text.contains("three"), "{text}");
}

/// A red team's note: the everything server in its older HTTP+SSE mode
/// (`…/sse`) answered "the connection failed … is the server running at
/// its url?", while it ran. The error now says which endpoint to give
/// (here for a `/sse` URL the server does not serve: the hint is the URL's).
#[test]
fn an_older_http_sse_endpoint_is_named_as_such() {
    let server = HttpServer::start();
    let url = server.url.replace("/mcp", "/sse");
    let config = Server {
        name: "ev".into(),
        transport: Transport::Http {
            url,
            token_env: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let clients = Clients::new(vec![config], vec![], env()).unwrap();
    let err = clients.list().unwrap_err();
    assert!(err.contains("older HTTP+SSE server"), "{err}");
}

#[test]
fn a_child_gets_the_cleaned_environment_and_only_the_names_its_entry_lists() {
    let base = vec![("PATH".to_string(), std::env::var("PATH").unwrap())];
    let all = vec![
        ("PATH".to_string(), std::env::var("PATH").unwrap()),
        ("MCP_TEST_PASSED".to_string(), "passed-through".to_string()),
        (
            "PLANVAULT_API_KEY".to_string(),
            "sk-never-0123456789".to_string(),
        ),
        ("OTHER_SECRET".to_string(), "never-either".to_string()),
    ];
    let clients = Clients::new(vec![stdio_server("ev")], base, all).unwrap();
    let text = clients.call("ev", "get-env", &json!({})).unwrap();
    // The server has the value; what it sends back does not.
    assert!(
        text.contains(r#""MCP_TEST_PASSED": "<redacted>""#),
        "{text}"
    );
    assert!(!text.contains("sk-never"), "{text}");
    assert!(!text.contains("never-either"), "{text}");
}

#[test]
fn a_servers_env_values_are_hidden_from_eight_characters_and_its_token_from_four() {
    let mut flagged = stdio_server("flagged");
    if let Transport::Stdio { env, .. } = &mut flagged.transport {
        *env = vec!["READ_ONLY".into(), "DB_PASSWORD".into()];
    }
    let url = Server {
        name: "hosted".into(),
        transport: Transport::Http {
            url: "http://127.0.0.1:9/mcp".into(),
            token_env: Some("HOSTED_TOKEN".into()),
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let all = [
        ("READ_ONLY", "true"),
        ("DB_PASSWORD", "hunter22"),
        ("HOSTED_TOKEN", "t0k3"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .to_vec();
    let clients = Clients::new(vec![flagged, url], vec![], all).unwrap();
    // `true` would garble every text it was hidden from.
    assert_eq!(clients.secrets(), ["hunter22", "t0k3"]);
}

/// A message that puts `secret` across a result's cut (`Echo: ` and then
/// the message, cut at [`RESULT_LIMIT_CHARS`]).
fn across_the_cut(secret: &str) -> serde_json::Value {
    let before = RESULT_LIMIT_CHARS - "Echo: ".len() - 10;
    json!({"message": format!("{}{secret} and on", "x".repeat(before))})
}

/// A secret a result echoes across its cut is redacted whole before the
/// cut: cut first, its head would reach the model and the journal, where
/// no later redaction finds it (a red-team pass found a token's 22 first
/// characters there).
#[test]
fn a_secret_echoed_across_a_results_cut_is_redacted_before_the_cut() {
    let mut server = stdio_server("ev");
    if let Transport::Stdio { env, .. } = &mut server.transport {
        *env = vec!["MCP_TEST_PASSED".into()];
    }
    let secret = "s3cr3t-ABCDEFGHIJKLMNOPQRST";
    let mut all = env();
    all.push(("MCP_TEST_PASSED".into(), secret.into()));
    let clients = Clients::new(vec![server], env(), all).unwrap();
    let text = clients.call("ev", "echo", &across_the_cut(secret)).unwrap();
    assert!(
        !text.contains("s3cr3t-ABC"),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(text.contains("<redacted>"), "{}", &text[text.len() - 200..]);
}

/// A stdio server whose every `tools/list` page holds one tool with a
/// 1 MiB description and a next page, counting the pages it served in
/// `pages` (`testkit/mcp-test-server`).
fn endless_list_server(dir: &Path) -> Server {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testkit/mcp-test-server/server.cjs");
    Server {
        name: "endless".into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![
                script.display().to_string(),
                "endless".into(),
                dir.join("pages").display().to_string(),
            ],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    }
}

/// A server whose tool list never stops growing is refused once it passes
/// what any real server lists, not held in memory page after page (a
/// red-team pass held 3.4 GB of a hostile server's pages).
#[test]
fn a_tool_list_past_any_real_servers_is_refused_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let clients = Clients::new(vec![endless_list_server(dir.path())], env(), env()).unwrap();
    let refused = clients.list().unwrap_err();
    assert!(
        refused.contains("MCP server endless: its tools/list passed 4 MiB"),
        "{refused}"
    );
    let pages: usize = std::fs::read_to_string(dir.path().join("pages"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(pages, 4, "read no page past the one that passed 4 MiB");
}

/// `testkit/mcp-test-server` in one of its modes, as server `name`.
fn test_server(name: &str, mode: &str) -> Server {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testkit/mcp-test-server/server.cjs");
    Server {
        name: name.into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![script.display().to_string(), mode.into()],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    }
}

/// MCP's own defaults for a tool's annotations: a tool is read-only only
/// where its server says so, and destructive unless it says otherwise. So
/// under `autonomy: ask` a tool its server left unannotated waits for a
/// person, as one marked `destructiveHint: true` does; one marked
/// read-only or only additive does not.
#[test]
fn a_tool_waits_under_ask_unless_its_server_marks_it_read_only_or_additive() {
    let servers = vec![stdio_server("ev"), test_server("plain", "write")];
    let catalog = Clients::new(servers, env(), env()).unwrap().list().unwrap();
    let tool = |server: &str, name: &str| catalog.tool(server, name).unwrap().clone();
    // `readOnlyHint: true`.
    assert!(!tool("ev", "get-sum").ask && tool("ev", "get-sum").read_only);
    // `readOnlyHint: false, destructiveHint: false`: it only adds.
    let gzip = tool("ev", "gzip-file-as-resource");
    assert!(!gzip.ask && !gzip.read_only);
    // No annotations at all.
    let write = tool("plain", "write_file");
    assert!(write.ask && !write.read_only);
}

/// A red team's notes, with what real SDKs send: a server without the
/// tools capability (the TypeScript SDK's McpServer with no tool answers
/// `tools/list` -32601) stopped every run, naming no server; go-sdk's empty
/// file (an embedded resource with no `text`, github-mcp-server's
/// `get_file_contents`) lost the whole result as "Unexpected response
/// type".
#[test]
fn what_real_sdks_list_and_answer_is_read() {
    let clients = Clients::new(
        vec![
            test_server("docs", "no-tools"),
            test_server("github", "go-sdk"),
        ],
        env(),
        env(),
    )
    .unwrap();
    let catalog = clients.list().unwrap();
    assert_eq!(catalog.servers["docs"], vec![], "no tools, no error");
    let names: Vec<&str> = catalog.servers["github"]
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["get_file_contents"]);
    let text = clients
        .call(
            "github",
            "get_file_contents",
            &serde_json::json!({"path": "src/__init__.py"}),
        )
        .unwrap();
    assert!(
        text.contains("successfully downloaded empty file"),
        "{text}"
    );
    assert!(text.contains("repo://octo/demo/src/__init__.py"), "{text}");
}

/// A red team's note: a server's pings between two calls went unanswered
/// (the client ran only inside a call), so a go-sdk server with
/// `KeepAlive` closed its session while the model thought. It was
/// restarted at the next call, losing its state, and down for the run at
/// the second time. Pings are now answered whenever they come.
#[test]
fn a_servers_pings_between_calls_are_answered_and_its_session_kept() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut server = test_server("kept", "keepalive");
    if let Transport::Stdio { args, .. } = &mut server.transport {
        args.push(pid_file.display().to_string());
    }
    let clients = Clients::new(vec![server], env(), env()).unwrap();
    clients.list().unwrap();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    for message in ["one", "two", "three"] {
        // Longer than the server waits for a ping's answer.
        std::thread::sleep(Duration::from_millis(1500));
        let text = clients
            .call("kept", "echo", &json!({ "message": message }))
            .unwrap();
        assert_eq!(text, format!("echo: {message}"));
    }
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap(),
        pid,
        "the same server all along, never restarted"
    );
}

/// A red team's note: a stdio answer over 16 MiB (mcp-server-filesystem
/// sends a 9 MB file twice, as text and as structured content) was dropped
/// unread by the line reader, and the call waited out its whole timeout,
/// which the model then read as the tool's answer. It is an error at once,
/// as over HTTP, and the server is started anew for the next call.
#[test]
fn a_stdio_answer_past_the_line_limit_fails_the_call_at_once() {
    let mut server = test_server("big", "huge");
    server.timeout = Duration::from_secs(60);
    let clients = Clients::new(vec![server], env(), env()).unwrap();
    clients.list().unwrap();
    let started = Instant::now();
    let err = clients
        .call("big", "echo", &json!({ "message": "x" }))
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30), "{err}");
    assert!(err.contains("over 16 MiB"), "{err}");
    // The next call is made, on a server started anew.
    let err = clients
        .call("big", "echo", &json!({ "message": "y" }))
        .unwrap_err();
    assert!(err.contains("over 16 MiB"), "{err}");
}

#[test]
fn a_server_that_cannot_start_or_is_unknown_is_an_error_naming_it() {
    let mut broken = stdio_server("broken");
    broken.transport = Transport::Stdio {
        command: "/nonexistent/mcp-server".into(),
        args: vec![],
        env: vec![],
        cwd: None,
    };
    let clients = Clients::new(vec![broken], vec![], env()).unwrap();
    let err = clients.list().unwrap_err();
    assert!(
        err.contains("MCP server broken") && err.contains("/nonexistent/mcp-server"),
        "{err}"
    );
    assert!(clients
        .call("nobody", "x", &json!({}))
        .unwrap_err()
        .contains("no MCP server is named nobody"));
}

// ----- through the driver -----

const NOTE: &str =
    "---\ntype: start\nstatus: pending\ntools: [ev.get-sum]\n---\n# Add\n\nAdd two and three.\n";

fn step(tool_calls: Vec<ToolCall>, content: &str) -> Reply {
    Reply {
        matcher: Match {
            contains: Some("Step: Add".into()),
            ..Match::default()
        },
        content: content.into(),
        status: 200,
        tool_calls,
        ..Reply::default()
    }
}

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        name: name.into(),
        arguments,
    }
}

fn start(base_url: &str, autonomy: Autonomy) -> StartRun {
    StartRun {
        query: "add".into(),
        mode: RunMode::Model {
            endpoints: Endpoints {
                default: Some(Endpoint {
                    base_url: base_url.into(),
                    model: "m".into(),
                    api_key: None,
                }),
                roles: BTreeMap::new(),
            },
        },
        fresh: false,
        max_steps: 10,
        max_prompt_bytes: None,
        autonomy,
        breakpoints: vec![],
        run_to: None,
        retry: RetryPolicy {
            attempts: 1,
            base_delay_ms: 1,
            timeout_ms: 10_000,
        },
        mcp_servers: Vec::new(),
        mcp_terminal_only: Vec::new(),
        folder: String::new(),
        parallel: false,
        parallel_at_most: None,
        take_decisions: None,
        allow_hosts: Vec::new(),
    }
}

fn run(
    vault: &Path,
    server: Server,
    stub: &Stub,
    autonomy: Autonomy,
    decisions: Vec<JournalEntry>,
) -> (Option<FinishReason>, usize) {
    let clients = Clients::new(vec![server], vec![], env()).unwrap();
    let inbox = Inbox::new();
    let host = NativeHost::new(vault).with_mcp(clients);
    let options = Options {
        humans: Humans::Defer,
        decisions,
        ..Options::default()
    };
    let reason = block_on(run_with(
        &host,
        &inbox,
        start(&stub.base_url(), autonomy),
        options,
    ))
    .expect("a native run never waits");
    (reason, host.mcp().unwrap().calls())
}

fn vault_with(note: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("add.md"), note).unwrap();
    dir
}

#[test]
fn a_node_is_offered_its_declared_tools_only_and_an_undeclared_one_never_reaches_the_server() {
    let dir = vault_with(NOTE);
    let stub = Stub::start(
        Script {
            replies: vec![
                step(vec![call("ev__echo", json!({"message": "hi"}))], ""),
                step(vec![call("ev__get-sum", json!({"a": 2, "b": 3}))], ""),
                step(vec![], "Five."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let (reason, calls) = run(
        dir.path(),
        stdio_server("ev"),
        &stub,
        Autonomy::Full,
        vec![],
    );
    assert_eq!(reason, Some(FinishReason::Completed));
    // The echo was refused here: one call reached the server.
    assert_eq!(calls, 1);
    let requests = stub.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["ev__get-sum"]);
    let tool_turns = |i: usize| -> Vec<String> {
        requests[i].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(tool_turns(1)[0].contains("tool ev__echo is not offered at this step"));
    assert!(tool_turns(2)[1].contains("The sum of 2 and 3 is 5."));
    // The call is in the journal, under the visit's own key.
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
    let line = journal
        .lines()
        .find(|l| l.contains("add#1/tool.1"))
        .expect("the call is journaled");
    let entry: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(entry["value"]["tool"], "ev.get-sum");
    assert_eq!(entry["value"]["arguments"], json!({"a": 2, "b": 3}));
    assert_eq!(entry["value"]["result"], "The sum of 2 and 3 is 5.");
}

#[test]
fn a_declared_tool_nothing_offers_stops_the_run_before_any_model_call() {
    let dir = vault_with(&NOTE.replace("ev.get-sum", "ev.get-product"));
    let stub = Stub::start(Script::default(), 0, None).unwrap();
    let (reason, calls) = run(
        dir.path(),
        stdio_server("ev"),
        &stub,
        Autonomy::Full,
        vec![],
    );
    assert_eq!(reason, None, "the run never started");
    assert_eq!(calls, 0);
    assert!(stub.requests().is_empty());
    // Nothing was written either.
    assert!(!dir.path().join(JOURNAL_FILE).exists());
}

#[test]
fn a_tool_the_config_marks_waits_for_a_persons_approval_under_ask_and_runs_once_approved() {
    let dir = vault_with(NOTE);
    let sum = |b: i64| step(vec![call("ev__get-sum", json!({"a": 2, "b": b}))], "");
    let script = Script {
        // The round that asks 2+3 is journaled: each resume is served it.
        replies: vec![sum(3), step(vec![], "Five.")],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let mut server = stdio_server("ev");
    server.approve = vec!["get-sum".into()];
    let waits = |reason: Option<FinishReason>| match reason {
        Some(FinishReason::Stopped { reason }) => {
            assert!(
                reason.contains("ev.get-sum at add waits for a person's approval (add#1/tool.1)"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    };
    let (reason, calls) = run(dir.path(), server.clone(), &stub, Autonomy::Ask, vec![]);
    waits(reason);
    assert_eq!(calls, 0, "nothing is called before the person decides");
    let approve = |key: &str| JournalEntry {
        key: format!("{key}:approve"),
        answer: planvault_runner::driver::human_answer(true, String::new(), None),
        made_from: None,
    };
    // An approval is of the call it names.
    let (reason, calls) = run(
        dir.path(),
        server.clone(),
        &stub,
        Autonomy::Ask,
        vec![approve("add#1/tool.2")],
    );
    waits(reason);
    assert_eq!(calls, 0);
    let (reason, calls) = run(
        dir.path(),
        server,
        &stub,
        Autonomy::Ask,
        vec![approve("add#1/tool.1")],
    );
    assert_eq!(reason, Some(FinishReason::Completed));
    assert_eq!(calls, 1);
    assert_eq!(
        stub.requests().len(),
        2,
        "the round asking 2+3 was asked once"
    );
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
    assert!(journal.contains(r#""approved_by":"a person""#), "{journal}");
    assert!(
        journal.contains(r#""result":"The sum of 2 and 3 is 5.""#),
        "{journal}"
    );
}

/// Kill a server this test started, after `ms`.
fn kill_later(pid: u32, ms: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    })
}

#[test]
fn a_server_that_exits_mid_call_is_a_tool_error_and_is_restarted_once() {
    let clients = Clients::new(vec![stdio_server("ev")], vec![], env()).unwrap();
    clients.list().unwrap();
    let long = json!({"duration": 5, "steps": 5});
    let killer = kill_later(clients.pid("ev").unwrap(), 700);
    let err = clients
        .call("ev", "trigger-long-running-operation", &long)
        .unwrap_err();
    killer.join().unwrap();
    assert!(
        err.contains("MCP server ev exited during the call"),
        "{err}"
    );
    // Started again for the next call.
    assert_eq!(
        clients.call("ev", "get-sum", &json!({"a": 1, "b": 1})),
        Ok("The sum of 1 and 1 is 2.".to_string())
    );
    let killer = kill_later(clients.pid("ev").unwrap(), 700);
    assert!(clients
        .call("ev", "trigger-long-running-operation", &long)
        .is_err());
    killer.join().unwrap();
    // Down for the rest of the run, for the reason it went down.
    let err = clients
        .call("ev", "get-sum", &json!({"a": 1, "b": 1}))
        .unwrap_err();
    assert!(
        err.contains("MCP server ev exited during the call")
            && err.ends_with(
                "it had been restarted once already and is not started again in this run"
            ),
        "{err}"
    );
    assert_eq!(clients.down("ev"), Some(err));
}

#[test]
fn a_resumed_visit_serves_a_finished_call_from_the_journal_instead_of_repeating_it() {
    let dir = vault_with(&NOTE.replace("[ev.get-sum]", "[ev.echo, ev.get-sum]"));
    let echo = || call("ev__echo", json!({"message": "once"}));
    let sum = || call("ev__get-sum", json!({"a": 2, "b": 3}));
    let stub = Stub::start(
        Script {
            replies: vec![
                // First run: echo is called, get-sum waits for approval.
                step(vec![echo()], ""),
                step(vec![sum()], ""),
                // Second run: both rounds come from the journal.
                step(vec![], "Five."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let mut server = stdio_server("ev");
    server.approve = vec!["get-sum".into()];
    let (reason, calls) = run(dir.path(), server.clone(), &stub, Autonomy::Ask, vec![]);
    assert!(
        matches!(reason, Some(FinishReason::Stopped { .. })),
        "{reason:?}"
    );
    assert_eq!(calls, 1, "echo was called");
    let approve = JournalEntry {
        key: "add#1/tool.2:approve".into(),
        answer: planvault_runner::driver::human_answer(true, String::new(), None),
        made_from: None,
    };
    let (reason, calls) = run(dir.path(), server, &stub, Autonomy::Ask, vec![approve]);
    assert_eq!(reason, Some(FinishReason::Completed));
    assert_eq!(calls, 1, "only get-sum: echo came from the journal");
    // The model was asked once more, and read both results.
    let requests = stub.requests();
    assert_eq!(requests.len(), 3);
    let last_tool_turns: Vec<&str> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(last_tool_turns[0].contains("once"), "{last_tool_turns:?}");
    assert!(last_tool_turns[1].contains("The sum of 2 and 3 is 5."));
}

#[test]
fn a_url_servers_token_comes_from_its_named_variable_as_a_bearer_header() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let _ = stream.write_all(
            b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
        String::from_utf8_lossy(&head).to_lowercase()
    });
    let server = |token_env: Option<&str>| Server {
        name: "auth".into(),
        transport: Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            token_env: token_env.map(str::to_string),
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let all = vec![("SEARCH_TOKEN".to_string(), "tok-123".to_string())];
    let err = Clients::new(vec![server(Some("UNSET_TOKEN"))], vec![], all.clone())
        .unwrap()
        .list()
        .unwrap_err();
    assert!(
        err.contains("its token_env UNSET_TOKEN is not set"),
        "{err}"
    );
    let clients = Clients::new(vec![server(Some("SEARCH_TOKEN"))], vec![], all).unwrap();
    assert!(clients.list().is_err(), "the server refused it");
    let head = seen.join().unwrap();
    assert!(head.contains("authorization: bearer tok-123"), "{head}");
}

#[test]
fn a_long_running_call_reports_its_progress_while_it_runs() {
    let clients = Clients::new(vec![stdio_server("ev")], vec![], env()).unwrap();
    let steps = std::cell::RefCell::new(Vec::new());
    let text = clients
        .call_with_progress(
            "ev",
            "trigger-long-running-operation",
            &json!({"duration": 2, "steps": 4}),
            &|step| steps.borrow_mut().push(step.clone()),
        )
        .unwrap();
    assert!(text.contains("completed"), "{text}");
    let steps = steps.into_inner();
    assert!(steps.len() >= 2, "{steps:?}");
    assert!(
        steps.iter().all(|(_, total, _)| *total == Some(4.0)),
        "{steps:?}"
    );
    assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "{steps:?}");
}

#[test]
fn a_call_slower_than_its_timeout_is_an_error_the_model_reads() {
    let mut server = stdio_server("ev");
    server.timeout = Duration::from_secs(1);
    let clients = Clients::new(vec![server], vec![], env()).unwrap();
    let started = Instant::now();
    let err = clients
        .call(
            "ev",
            "trigger-long-running-operation",
            &json!({"duration": 10, "steps": 2}),
        )
        .unwrap_err();
    assert_eq!(err, "ev.trigger-long-running-operation timed out after 1 s");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn in_the_app_a_person_is_asked_and_a_refusal_is_the_tools_error() {
    use planvault_protocol::{AskKind, FromWorker, PersonReply, ToWorker};
    let dir = vault_with(NOTE);
    let stub = Stub::start(
        Script {
            replies: vec![
                step(vec![call("ev__get-sum", json!({"a": 2, "b": 3}))], ""),
                step(vec![], "Not allowed."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let mut server = stdio_server("ev");
    server.approve = vec!["get-sum".into()];
    let clients = Clients::new(vec![server], vec![], env()).unwrap();
    let inbox = Inbox::new();
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let host = NativeHost::new(dir.path()).with_mcp(clients).on_post({
        let inbox = inbox.clone();
        let asked = asked.clone();
        move |m| {
            if let FromWorker::Ask {
                request,
                ask: AskKind::Human { question, .. },
                ..
            } = m
            {
                asked.borrow_mut().push((request.clone(), question.clone()));
                inbox.push(ToWorker::Reply {
                    request: request.clone(),
                    reply: PersonReply::Human {
                        approved: false,
                        note: String::new(),
                        choice: None,
                    },
                });
            }
        }
    });
    let reason = block_on(run_with(
        &host,
        &inbox,
        start(&stub.base_url(), Autonomy::Ask),
        Options::default(),
    ))
    .expect("a native run never waits");
    assert_eq!(reason, Some(FinishReason::Completed));
    assert_eq!(host.mcp().unwrap().calls(), 0);
    assert_eq!(
        asked.borrow().clone(),
        [(
            "add#1/tool.1:approve".to_string(),
            r#"Allow ev.get-sum with {"a":2,"b":3}?"#.to_string()
        )]
    );
    let turn = stub.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        turn.contains("a person refused this call to ev.get-sum"),
        "{turn}"
    );
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
    assert!(
        journal.contains(r#"{"key":"add#1/tool.1:approve","kind":"human""#),
        "{journal}"
    );
}

#[test]
fn a_value_a_server_was_given_is_never_written_by_the_run() {
    const SECRET: &str = "value-given-to-the-server-77";
    let dir = vault_with(NOTE);
    let stub = Stub::start(
        Script {
            replies: vec![step(
                vec![],
                &format!("Five. (The server's variable is {SECRET}.)"),
            )],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let given = vec![("MCP_TEST_PASSED".to_string(), SECRET.to_string())];
    let clients = Clients::new(vec![stdio_server("ev")], vec![], given).unwrap();
    let host = NativeHost::new(dir.path()).with_mcp(clients);
    let reason = block_on(run_with(
        &host,
        &Inbox::new(),
        start(&stub.base_url(), Autonomy::Full),
        Options::default(),
    ))
    .expect("a native run never waits");
    assert_eq!(reason, Some(FinishReason::Completed));
    let mut written = String::new();
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                written += &std::fs::read_to_string(&path).unwrap_or_default();
            }
        }
    }
    assert!(
        written.contains("The server's variable is <redacted>."),
        "{written}"
    );
    assert!(!written.contains(SECRET));
}

/// The browser's client (`mcp_http`, over the worker's `fetch`), driven
/// here by `ureq`: the same session, SSE reading and retries.
mod over_fetch {
    use super::HttpServer;
    use planvault_protocol::{McpServer, RetryPolicy};
    use planvault_runner::block_on;
    use planvault_runner::mcp_http::{Client, Fetch, FetchError, Head};
    use serde_json::json;
    use std::cell::RefCell;
    use std::io::Read;
    use std::time::Duration;

    /// `ureq` as the worker's `fetch`; counts POSTs and pauses.
    #[derive(Default)]
    struct Ureq {
        posts: RefCell<Vec<String>>,
        sleeps: RefCell<Vec<u32>>,
    }

    impl Fetch for Ureq {
        type Body = Box<dyn Read>;
        async fn post(
            &self,
            url: &str,
            headers: &[(&str, String)],
            body: &str,
            timeout_ms: u32,
        ) -> Result<(Head, Self::Body), FetchError> {
            self.posts.borrow_mut().push(body.to_string());
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_millis(timeout_ms.into())))
                .build()
                .into();
            let mut request = agent.post(url);
            for (k, v) in headers {
                request = request.header(*k, v);
            }
            let response = request
                .send(body)
                .map_err(|e| FetchError::Connect(e.to_string()))?;
            let header = |n: &str| {
                response
                    .headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let head = Head {
                status: response.status().as_u16(),
                content_type: header("content-type").unwrap_or_default().to_lowercase(),
                session_id: header("mcp-session-id"),
                retry_after: None,
            };
            Ok((head, Box::new(response.into_body().into_reader())))
        }
        async fn chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, FetchError> {
            let mut buf = vec![0u8; 4096];
            let n = body
                .read(&mut buf)
                .map_err(|e| FetchError::Connect(e.to_string()))?;
            buf.truncate(n);
            Ok((n > 0).then_some(buf))
        }
        async fn sleep(&self, ms: u32) {
            self.sleeps.borrow_mut().push(ms);
        }
    }

    #[test]
    fn a_server_gone_after_a_failed_call_is_down_and_later_calls_are_not_sent() {
        let http = HttpServer::start();
        let fetch = Ureq::default();
        let client = Client::new(vec![server(&http.url)], retry(2));
        let sum = || wait(client.call(&fetch, "everything", "get-sum", &json!({"a": 1, "b": 2})));
        wait(client.list(&fetch)).unwrap();
        assert_eq!(sum(), Ok("The sum of 1 and 2 is 3.".to_string()));
        drop(http);
        // A browser cannot tell a refused call from one cut off after it
        // arrived: the model reads that it may have run.
        let first = sum().unwrap_err();
        assert!(first.contains("it may have run"), "{first}");
        assert_eq!(client.down("everything"), None);
        // The next call first needs a session, which nothing answers.
        let second = sum().unwrap_err();
        assert!(
            second.starts_with("MCP server everything at http://127.0.0.1:")
                && second.ends_with("; the call to everything.get-sum was not made"),
            "{second}"
        );
        assert_eq!(client.down("everything"), Some(second.clone()));
        let posts = fetch.posts.borrow().len();
        assert_eq!(sum(), Err(second));
        assert_eq!(
            fetch.posts.borrow().len(),
            posts,
            "a server down is not asked"
        );
    }

    /// The browser's client reads annotations as the terminal's does
    /// (MCP's defaults): the `everything` server's tools marked read-only
    /// or additive are not asked about; an unannotated tool is.
    #[test]
    fn a_tool_waits_under_ask_unless_its_server_marks_it_read_only_or_additive() {
        let http = HttpServer::start();
        let catalog =
            wait(Client::new(vec![server(&http.url)], retry(2)).list(&Ureq::default())).unwrap();
        let everything = |name: &str| catalog.tool("everything", name).unwrap().clone();
        assert!(!everything("get-sum").ask && everything("get-sum").read_only);
        let gzip = everything("gzip-file-as-resource");
        assert!(!gzip.ask && !gzip.read_only);
        let unannotated = ForgetsSession {
            status: 200,
            sessions: RefCell::new(0),
            calls: RefCell::new(vec![]),
        };
        let unlisted = McpServer {
            approve: vec![],
            ..server("http://f/mcp")
        };
        let catalog = wait(Client::new(vec![unlisted], retry(2)).list(&unannotated)).unwrap();
        let echo = catalog.servers.values().next().unwrap()[0].clone();
        assert!(echo.ask && !echo.read_only, "{echo:?}");
    }

    /// The browser's client as the terminal's: the `everything` server,
    /// restarted, answers the old session a 400 that says so; the session
    /// is made again and the call made there.
    #[test]
    fn a_session_the_restarted_server_lost_is_made_again() {
        let http = HttpServer::start();
        let fetch = Ureq::default();
        let client = Client::new(vec![server(&http.url)], retry(2));
        let sum = || wait(client.call(&fetch, "everything", "get-sum", &json!({"a": 1, "b": 2})));
        wait(client.list(&fetch)).unwrap();
        assert_eq!(sum(), Ok("The sum of 1 and 2 is 3.".to_string()));
        let _again = http.restarted();
        assert_eq!(sum(), Ok("The sum of 1 and 2 is 3.".to_string()));
        let initializes = fetch
            .posts
            .borrow()
            .iter()
            .filter(|p| p.contains("\"initialize\""))
            .count();
        assert_eq!(initializes, 2, "one session, then one more");
    }

    /// A server that forgets its first session after the list: it answers
    /// a call there an id-less error with `status`, as the `everything`
    /// server does with a 400 after a restart.
    struct ForgetsSession {
        status: u16,
        sessions: RefCell<u32>,
        calls: RefCell<Vec<String>>,
    }

    impl Fetch for ForgetsSession {
        type Body = Option<Vec<u8>>;
        async fn post(
            &self,
            _url: &str,
            headers: &[(&str, String)],
            body: &str,
            _timeout_ms: u32,
        ) -> Result<(Head, Self::Body), FetchError> {
            let asked: serde_json::Value = serde_json::from_str(body).unwrap();
            let session = headers
                .iter()
                .find(|(name, _)| *name == "Mcp-Session-Id")
                .map(|(_, id)| id.clone());
            let (mut head, reply) = match asked["method"].as_str() {
                Some("initialize") => {
                    *self.sessions.borrow_mut() += 1;
                    let (mut head, reply) = json_reply(
                        &json!({"jsonrpc": "2.0", "id": asked["id"],
                        "result": {"protocolVersion": asked["params"]["protocolVersion"],
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "f", "version": "1"}}}),
                    );
                    head.session_id = Some(format!("s{}", self.sessions.borrow()));
                    (head, reply)
                }
                Some("tools/list") => json_reply(&json!({"jsonrpc": "2.0", "id": asked["id"],
                    "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}})),
                Some("tools/call") => {
                    self.calls
                        .borrow_mut()
                        .push(session.clone().unwrap_or_default());
                    if session.as_deref() == Some("s1") {
                        let (mut head, reply) = json_reply(&json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32000, "message": "Session not found"}}));
                        head.status = self.status;
                        return Ok((head, reply));
                    }
                    json_reply(&json!({"jsonrpc": "2.0", "id": asked["id"],
                        "result": {"content": [{"type": "text", "text": "made"}]}}))
                }
                _ => (
                    Head {
                        status: 202,
                        content_type: String::new(),
                        session_id: None,
                        retry_after: None,
                    },
                    None,
                ),
            };
            if head.session_id.is_none() {
                head.session_id = session;
            }
            Ok((head, reply))
        }
        async fn chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, FetchError> {
            Ok(body.take())
        }
        async fn sleep(&self, _ms: u32) {}
    }

    /// The browser's client reads a lost session by the terminal's rule:
    /// an id-less error naming the session, whatever the HTTP status (rmcp
    /// hands the terminal's client the JSON of a 200 and of a 400 alike).
    #[test]
    fn an_idless_session_error_makes_the_session_again_whatever_its_status() {
        for status in [200, 400] {
            let fetch = ForgetsSession {
                status,
                sessions: RefCell::new(0),
                calls: RefCell::new(Vec::new()),
            };
            let client = Client::new(vec![server("http://127.0.0.1:9/mcp")], retry(1));
            wait(client.list(&fetch)).unwrap();
            let made = wait(client.call(&fetch, "everything", "echo", &json!({})));
            assert_eq!(made, Ok("made".to_string()), "HTTP {status}");
            assert_eq!(*fetch.calls.borrow(), ["s1", "s2"], "HTTP {status}");
        }
    }

    /// A 200 answer of `reply` as JSON, as a fake server's fetch gives it.
    fn json_reply(reply: &serde_json::Value) -> (Head, Option<Vec<u8>>) {
        let head = Head {
            status: 200,
            content_type: "application/json".into(),
            session_id: None,
            retry_after: None,
        };
        (head, Some(reply.to_string().into_bytes()))
    }

    /// A server (here a fetch that answers as one) whose every tools/list
    /// page holds a 1 MiB tool and a next page.
    #[derive(Default)]
    struct EndlessList {
        pages: RefCell<usize>,
    }

    impl Fetch for EndlessList {
        type Body = Option<Vec<u8>>;
        async fn post(
            &self,
            _url: &str,
            _headers: &[(&str, String)],
            body: &str,
            _timeout_ms: u32,
        ) -> Result<(Head, Self::Body), FetchError> {
            let asked: serde_json::Value = serde_json::from_str(body).unwrap();
            let result = match asked["method"].as_str() {
                Some("initialize") => json!({"protocolVersion": asked["params"]["protocolVersion"],
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "endless", "version": "1"}}),
                Some("tools/list") => {
                    *self.pages.borrow_mut() += 1;
                    let page = *self.pages.borrow();
                    json!({"tools": [{"name": format!("t{page}"), "description": "d".repeat(1 << 20),
                        "inputSchema": {"type": "object"}}], "nextCursor": format!("p{page}")})
                }
                _ => json!({}),
            };
            let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": result});
            Ok(json_reply(&reply))
        }
        async fn chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, FetchError> {
            Ok(body.take())
        }
        async fn sleep(&self, _ms: u32) {}
    }

    /// The browser's client refuses a tool list past any real server's as
    /// the terminal's does, reading no page after the one that passed.
    #[test]
    fn a_tool_list_past_any_real_servers_is_refused_not_held() {
        let fetch = EndlessList::default();
        let client = Client::new(vec![server("http://127.0.0.1:9/mcp")], retry(1));
        let refused = wait(client.list(&fetch)).unwrap_err();
        assert!(
            refused.contains("MCP server everything: its tools/list passed 4 MiB"),
            "{refused}"
        );
        assert_eq!(*fetch.pages.borrow(), 4);
    }

    /// A server without the tools capability, as the TypeScript SDK's
    /// McpServer with no tool answers: `tools/list` is "method not found".
    struct NoTools;

    impl Fetch for NoTools {
        type Body = Option<Vec<u8>>;
        async fn post(
            &self,
            _url: &str,
            _headers: &[(&str, String)],
            body: &str,
            _timeout_ms: u32,
        ) -> Result<(Head, Self::Body), FetchError> {
            let asked: serde_json::Value = serde_json::from_str(body).unwrap();
            let reply = match asked["method"].as_str() {
                Some("initialize") => json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
                    "protocolVersion": asked["params"]["protocolVersion"],
                    "capabilities": {"resources": {}}, "serverInfo": {"name": "docs", "version": "1"}}}),
                Some("tools/list") => json!({"jsonrpc": "2.0", "id": asked["id"],
                    "error": {"code": -32601, "message": "Method not found"}}),
                _ => json!({"jsonrpc": "2.0", "id": asked["id"], "result": {}}),
            };
            Ok(json_reply(&reply))
        }
        async fn chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, FetchError> {
            Ok(body.take())
        }
        async fn sleep(&self, _ms: u32) {}
    }

    /// A server that lists no tools (no tools capability) stops no run in
    /// the browser either: its list is empty.
    #[test]
    fn a_server_without_tools_lists_none() {
        let client = Client::new(vec![server("http://127.0.0.1:9/mcp")], retry(1));
        let catalog = wait(client.list(&NoTools)).unwrap();
        assert_eq!(catalog.servers["everything"], vec![]);
    }

    /// The browser's client redacts a server's token before it cuts the
    /// result, as the terminal's does.
    #[test]
    fn a_token_echoed_across_a_results_cut_is_redacted_before_the_cut() {
        let http = HttpServer::start();
        let fetch = Ureq::default();
        let token = "tok-ABCDEFGHIJKLMNOPQRSTUV";
        let with_token = McpServer {
            token: Some(token.into()),
            ..server(&http.url)
        };
        let client = Client::new(vec![with_token], retry(2));
        let text =
            wait(client.call(&fetch, "everything", "echo", &super::across_the_cut(token))).unwrap();
        assert!(!text.contains("tok-ABCDE"), "{}", &text[text.len() - 200..]);
        assert!(text.contains("<redacted>"), "{}", &text[text.len() - 200..]);
    }

    #[test]
    fn a_command_server_is_named_as_the_terminals_and_never_contacted() {
        let fetch = Ureq::default();
        let client = Client::new(Vec::new(), RetryPolicy::default())
            .with_terminal_only(vec!["outbox".into()]);
        assert!(!client.is_empty(), "the run must list it, to stop with why");
        let catalog = wait(client.list(&fetch)).unwrap();
        let (offers, missing) = planvault_llm::mcp::resolve(
            &["outbox.write_file".to_string(), "outbox.*".to_string()],
            &catalog,
            false,
        );
        assert!(offers.is_empty());
        for m in &missing {
            assert!(
                m.reason.starts_with("server outbox runs a command")
                    && m.reason.contains("planvault run"),
                "{}",
                m.reason
            );
        }
        assert_eq!(missing.len(), 2);
        assert!(fetch.posts.borrow().is_empty());
    }

    /// The client's futures never wait on anything but `ureq`'s blocking calls.
    fn wait<T>(future: impl std::future::Future<Output = T>) -> T {
        block_on(future).expect("nothing is left pending")
    }

    fn server(url: &str) -> McpServer {
        McpServer {
            name: "everything".into(),
            url: url.into(),
            token: None,
            approve: vec!["echo".into()],
            timeout_ms: None,
        }
    }

    fn retry(attempts: u32) -> RetryPolicy {
        RetryPolicy {
            attempts,
            base_delay_ms: 10,
            timeout_ms: 10_000,
        }
    }

    #[test]
    fn lists_calls_and_reports_errors_over_streamable_http() {
        let http = HttpServer::start();
        let fetch = Ureq::default();
        let client = Client::new(vec![server(&http.url)], retry(2));
        let catalog = wait(client.list(&fetch)).unwrap();
        let tools = &catalog.servers["everything"];
        let echo = tools
            .iter()
            .find(|t| t.name == "echo")
            .expect("echo listed");
        assert!(echo.ask, "the entry's approve list marks echo");
        assert_eq!(echo.input_schema["type"], "object");
        assert!(tools.iter().any(|t| t.name == "get-sum"));
        // initialize, notifications/initialized, tools/list.
        assert_eq!(fetch.posts.borrow().len(), 3, "{:?}", fetch.posts.borrow());

        let echoed = wait(client.call(&fetch, "everything", "echo", &json!({"message": "hi"})));
        assert_eq!(echoed, Ok("Echo: hi".into()));
        let sum = wait(client.call(&fetch, "everything", "get-sum", &json!({"a": 2, "b": 3})));
        assert!(sum.as_ref().is_ok_and(|s| s.contains('5')), "{sum:?}");
        // A call that reports progress on its stream before its result.
        let long = wait(client.call(
            &fetch,
            "everything",
            "trigger-long-running-operation",
            &json!({"duration": 0.3, "steps": 3}),
        ));
        assert!(
            long.as_ref().is_ok_and(|s| s.contains("completed")),
            "{long:?}"
        );
        // The server's refusals are the tool's error, for the model to read.
        let wrong = wait(client.call(&fetch, "everything", "get-sum", &json!({"a": "x"})));
        assert!(wrong.is_err(), "{wrong:?}");
        let unknown = wait(client.call(&fetch, "everything", "no-such-tool", &json!({})));
        assert!(unknown.is_err(), "{unknown:?}");
        assert_eq!(client.calls(), 5);
        // One session throughout; nothing was retried.
        assert_eq!(fetch.posts.borrow().len(), 8);
        assert!(fetch.sleeps.borrow().is_empty());
    }

    /// A server written here for what server-everything does not do:
    /// asking the client for its roots mid-call (as the Python SDK's
    /// `list_roots` does), and running a call, then dropping the
    /// connection before its reply.
    struct RawServer {
        url: String,
        executed: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl RawServer {
        fn start(version: &'static str) -> RawServer {
            use std::io::{BufRead, BufReader, Write};
            use std::sync::atomic::{AtomicUsize, Ordering};
            use std::sync::{mpsc, Arc, Mutex};
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let executed = Arc::new(AtomicUsize::new(0));
            let (answers_tx, answers_rx) = mpsc::channel::<serde_json::Value>();
            let answers_rx = Arc::new(Mutex::new(answers_rx));
            let count = executed.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(mut stream) = stream else { return };
                    let (answers_tx, answers_rx, count) =
                        (answers_tx.clone(), answers_rx.clone(), count.clone());
                    std::thread::spawn(move || {
                        let mut reader = BufReader::new(stream.try_clone().unwrap());
                        let mut length = 0;
                        loop {
                            let mut line = String::new();
                            reader.read_line(&mut line).unwrap();
                            if line.trim().is_empty() {
                                break;
                            }
                            if let Some(v) =
                                line.to_ascii_lowercase().strip_prefix("content-length:")
                            {
                                length = v.trim().parse().unwrap();
                            }
                        }
                        let mut body = vec![0; length];
                        std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                        let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
                        let id = message["id"].clone();
                        let json = |stream: &mut std::net::TcpStream, v: serde_json::Value| {
                            let body = v.to_string();
                            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                        };
                        match message["method"].as_str() {
                            Some("initialize") => json(
                                &mut stream,
                                json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "0"}}}),
                            ),
                            Some("tools/list") => json(
                                &mut stream,
                                json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "roots", "inputSchema": {"type": "object"}}, {"name": "send_email", "inputSchema": {"type": "object"}}]}}),
                            ),
                            Some("tools/call") if message["params"]["name"] == "roots" => {
                                let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
                                let ask = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"});
                                let _ = write!(stream, "data: {ask}\n\n");
                                let _ = stream.flush();
                                let answer = answers_rx
                                    .lock()
                                    .unwrap()
                                    .recv_timeout(Duration::from_secs(5));
                                let text = match answer {
                                    Ok(a) => format!("the client answered {}", a),
                                    Err(_) => "no answer".to_string(),
                                };
                                let result = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
                                let _ = write!(stream, "data: {result}\n\n");
                            }
                            Some("tools/call") => {
                                // The call runs, then the connection drops.
                                count.fetch_add(1, Ordering::SeqCst);
                                let _ = stream.shutdown(std::net::Shutdown::Both);
                            }
                            Some(_) => {
                                let _ = write!(stream, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                            }
                            None => {
                                let _ = answers_tx.send(message);
                                let _ = write!(stream, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                            }
                        }
                    });
                }
            });
            RawServer { url, executed }
        }
    }

    #[test]
    fn a_servers_request_mid_call_is_answered_and_a_call_is_never_sent_twice() {
        let raw = RawServer::start("2025-11-25");
        let fetch = Ureq::default();
        let client = Client::new(vec![server(&raw.url)], retry(3));
        let started = std::time::Instant::now();
        let roots = wait(client.call(&fetch, "everything", "roots", &json!({})));
        assert_eq!(
            roots,
            Ok(
                r#"the client answered {"id":"srv-1","jsonrpc":"2.0","result":{"roots":[]}}"#
                    .into()
            )
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "the call waited"
        );

        let sent = wait(client.call(&fetch, "everything", "send_email", &json!({})));
        let error = sent.unwrap_err();
        assert!(
            error.contains("no reply to the call") && error.contains("it may have run"),
            "{error}"
        );
        assert_eq!(
            raw.executed.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "a call that may have run is not sent again"
        );
        assert!(fetch.sleeps.borrow().is_empty());
    }

    /// As in the terminal: a server answering a version planvault does not
    /// speak is not used.
    #[test]
    fn a_server_answering_an_unknown_protocol_version_is_not_used() {
        let raw = RawServer::start("2099-01-01");
        let fetch = Ureq::default();
        let client = Client::new(vec![server(&raw.url)], retry(1));
        let error = wait(client.list(&fetch)).unwrap_err();
        assert_eq!(
            error,
            "MCP server everything: it answered protocol version 2099-01-01, which planvault does not speak"
        );
    }

    #[test]
    fn an_unreachable_server_is_retried_like_a_model_call_then_named() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let fetch = Ureq::default();
        let client = Client::new(
            vec![server(&format!("http://127.0.0.1:{port}/mcp"))],
            retry(3),
        );
        let error = wait(client.list(&fetch)).unwrap_err();
        assert!(
            error.contains("MCP server everything at http://127.0.0.1:"),
            "{error}"
        );
        assert!(error.contains("cannot connect"), "{error}");
        assert_eq!(fetch.posts.borrow().len(), 3);
        assert_eq!(*fetch.sleeps.borrow(), vec![10, 20]);
    }
}

#[test]
fn a_server_that_dies_again_after_its_restart_stops_the_run_resumably_with_the_reason() {
    let dir = vault_with(&NOTE.replace("[ev.get-sum]", "[ev.trigger-long-running-operation]"));
    let long = || {
        call(
            "ev__trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
        )
    };
    let stub = Stub::start(
        Script {
            replies: vec![
                step(vec![long()], ""),
                step(vec![long()], ""),
                step(vec![], "never asked"),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    // Each start of the server lives five seconds.
    let server = Server {
        name: "ev".into(),
        transport: Transport::Stdio {
            command: "timeout".into(),
            args: vec![
                "5".into(),
                npm_bin("mcp-server-everything").display().to_string(),
                "stdio".into(),
            ],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let (reason, calls) = run(dir.path(), server, &stub, Autonomy::Full, vec![]);
    // Stopped, resumable, saying why.
    let Some(FinishReason::Stopped { reason }) = reason else {
        panic!("{reason:?}");
    };
    assert!(
        reason.contains("MCP server ev exited during the call")
            && reason.contains("not started again in this run"),
        "{reason}"
    );
    // The first death was the tool's error for the model; the second
    // stopped the run: the model was not asked again.
    assert_eq!(calls, 2);
    assert_eq!(stub.requests().len(), 2);
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
    assert!(journal.contains("add#1/tool.1"), "{journal}");
    assert!(
        !journal.contains("add#1/tool.2"),
        "the second call is made again on resume: {journal}"
    );
}

#[test]
fn a_url_server_gone_before_a_call_stops_the_run_resumably_and_the_next_run_makes_the_call() {
    let dir = vault_with(NOTE);
    let sum = || call("ev__get-sum", json!({"a": 2, "b": 3}));
    let script = || Script {
        replies: vec![
            // Slow enough for the server to be gone when the call is made.
            Reply {
                delay_ms: 1_500,
                ..step(vec![sum()], "")
            },
            step(vec![], "Five."),
        ],
        default: None,
    };
    let stub = Stub::start(script(), 0, None).unwrap();
    let server = HttpServer::start();
    let port = server
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse::<u16>()
        .unwrap();
    let config = Server {
        name: "ev".into(),
        transport: Transport::Http {
            url: server.url.clone(),
            token_env: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    // The server goes away once the model has been asked (the tools were
    // listed before that).
    let (reason, _) = std::thread::scope(|scope| {
        let stub = &stub;
        scope.spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while stub.requests().is_empty() {
                assert!(Instant::now() < deadline, "the model was never asked");
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(server);
        });
        run(dir.path(), config.clone(), stub, Autonomy::Full, vec![])
    });
    let Some(FinishReason::Stopped { reason }) = reason else {
        panic!("{reason:?}");
    };
    assert!(
        reason.starts_with("MCP server ev at http://127.0.0.1:")
            && reason.contains("is the server running at its url?")
            && reason.ends_with("; the call to ev.get-sum was not made"),
        "{reason}"
    );
    // The model did not read a connection error, and no answer was
    // journaled for the call.
    assert_eq!(stub.requests().len(), 1);
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap_or_default();
    assert!(!journal.contains("add#1/tool"), "{journal}");
    // Back on its port, the server gets the call from the resumed run (its
    // round served from the journal: the model is asked only what follows).
    let _server = HttpServer::start_on(port);
    let stub = Stub::start(
        Script {
            replies: vec![step(vec![], "Five.")],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let (reason, calls) = run(dir.path(), config, &stub, Autonomy::Full, vec![]);
    assert_eq!(reason, Some(FinishReason::Completed));
    assert_eq!(calls, 1);
    assert_eq!(stub.requests().len(), 1);
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
    assert!(
        journal.contains(r#""result":"The sum of 2 and 3 is 5.""#),
        "{journal}"
    );
}

/// A journal written before built-in calls were journaled holds a server's
/// calls at `tool.1`, `tool.2`. Resumed with the model making the same
/// calls, a built-in `write_note` first, the server's keep their keys (the
/// built-ins are numbered apart): `echo` is served from the journal and the
/// approval given for `tool.2`, as the run printed it, applies.
#[test]
fn a_journal_without_built_in_calls_resumes_with_its_server_calls_served() {
    // The run that left it stopped in the node's work: `active`.
    let dir = vault_with(
        &NOTE
            .replace("[ev.get-sum]", "[write_note, ev.echo, ev.get-sum]")
            .replace("status: pending", "status: active"),
    );
    let echo = || call("ev__echo", json!({"message": "once"}));
    let sum = || call("ev__get-sum", json!({"a": 2, "b": 3}));
    let write = || {
        call(
            "write_note",
            json!({"path": "notes/out.md", "content": "sum follows"}),
        )
    };
    let stub = Stub::start(
        Script {
            replies: vec![
                // The resume, the model making its calls as before (an
                // older planvault journaled no round).
                step(vec![write()], ""),
                step(vec![echo()], ""),
                step(vec![sum()], ""),
                step(vec![], "Five."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let mut server = stdio_server("ev");
    server.approve = vec!["get-sum".into()];
    // The journal an older planvault left: echo made at tool.1, get-sum
    // waiting for approval at tool.2, no rounds, no built-in calls.
    {
        use planvault_core::engine::journal::{chained_line, link, GENESIS};
        use planvault_core::engine::Answer;
        let invoke = |key: &str, value: serde_json::Value| JournalEntry {
            key: key.into(),
            answer: Answer::Invoke {
                value: Some(value),
                error: None,
            },
            made_from: None,
        };
        let entries = [
            invoke(
                "add#1/tool.1",
                json!({"tool": "ev.echo", "arguments": {"message": "once"}, "result": "Echo: once"}),
            ),
            invoke(
                "add#1/tool.2",
                json!({"tool": "ev.get-sum", "arguments": {"a": 2, "b": 3}, "pending": "approval"}),
            ),
        ];
        let (mut chain, mut text) = (GENESIS.to_string(), String::new());
        for entry in &entries {
            let line = chained_line(entry, &chain);
            chain = link(&chain, &line);
            text.push_str(&line);
            text.push('\n');
        }
        std::fs::create_dir_all(dir.path().join("00_plan-trace")).unwrap();
        std::fs::write(dir.path().join(JOURNAL_FILE), text).unwrap();
    }
    let approve = JournalEntry {
        key: "add#1/tool.2:approve".into(),
        answer: planvault_runner::driver::human_answer(true, String::new(), None),
        made_from: None,
    };
    let (reason, calls) = run(dir.path(), server, &stub, Autonomy::Ask, vec![approve]);
    let journal =
        std::fs::read_to_string(dir.path().join("00_plan-trace/journal.jsonl")).unwrap_or_default();
    assert_eq!(
        (reason.clone(), calls),
        (Some(FinishReason::Completed), 1),
        "expected: echo served from the journal, get-sum approved and called once\n{journal}"
    );
}

#[test]
fn a_call_cut_off_by_stop_is_not_journaled_as_the_tools_answer() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let dir = vault_with(&NOTE.replace("[ev.get-sum]", "[ev.trigger-long-running-operation]"));
    let stub = Stub::start(
        Script {
            replies: vec![step(
                vec![call(
                    "ev__trigger-long-running-operation",
                    json!({"duration": 30, "steps": 30}),
                )],
                "",
            )],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let clients = Clients::new(vec![stdio_server("ev")], vec![], env())
        .unwrap()
        .with_stop_flag(flag.clone());
    let host = NativeHost::new(dir.path()).with_mcp(clients);
    let inbox = Inbox::with_stop_flag(flag.clone());
    // Ctrl-C once the call is under way (it takes thirty seconds). Not at
    // a fixed time: on a loaded machine starting the server and asking
    // the model can take longer than any delay picked, and a stop before
    // the call is another case (no call at all).
    let started = host.mcp().unwrap().call_counter();
    let stopper = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while started.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // Into the call, not on its first step.
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::SeqCst);
    });
    let options = Options {
        stop_reason: "interrupted by Ctrl-C".into(),
        ..Options::default()
    };
    let reason = block_on(run_with(
        &host,
        &inbox,
        start(&stub.base_url(), Autonomy::Full),
        options,
    ))
    .expect("a native run never waits");
    stopper.join().unwrap();
    assert_eq!(
        reason,
        Some(FinishReason::Stopped {
            reason: "interrupted by Ctrl-C".into()
        })
    );
    assert_eq!(host.mcp().unwrap().calls(), 1);
    let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap_or_default();
    assert!(
        !journal.contains("add#1/tool.1"),
        "a resume makes the call again: {journal}"
    );
}

#[test]
fn in_proposal_mode_a_tool_its_server_does_not_mark_read_only_is_refused_before_approval() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    std::fs::create_dir_all(vault.join("outbox")).unwrap();
    std::fs::write(vault.join("outbox/plan.txt"), "the plan so far").unwrap();
    std::fs::write(
        vault.join("add.md"),
        "---\ntype: start\nproposal: true\ntools: [fs.read_text_file, fs.write_file]\n---\n# Add\n\nPropose.\n\n## Next\n- [[approve]]\n",
    )
    .unwrap();
    std::fs::write(
        vault.join("approve.md"),
        "---\ntype: human\n---\n# Approve\n\nApprove the proposal?\n",
    )
    .unwrap();
    let outbox = vault.join("outbox").display().to_string();
    let server = Server {
        name: "fs".into(),
        transport: Transport::Stdio {
            command: npm_bin("mcp-server-filesystem").display().to_string(),
            args: vec![outbox.clone()],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let written = format!("{outbox}/new.txt");
    let stub = Stub::start(
        Script {
            replies: vec![
                step(
                    vec![call(
                        "fs__write_file",
                        json!({"path": written, "content": "changed"}),
                    )],
                    "",
                ),
                step(
                    vec![call(
                        "fs__read_text_file",
                        json!({"path": format!("{outbox}/plan.txt")}),
                    )],
                    "",
                ),
                step(vec![], "Proposed."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let (reason, calls) = run(vault, server, &stub, Autonomy::Full, vec![]);
    assert!(
        matches!(&reason, Some(FinishReason::AwaitingHuman { node, .. }) if node == "approve"),
        "the gate waits for a person even under full autonomy: {reason:?}"
    );
    assert_eq!(calls, 1, "only the read-only tool reached the server");
    assert!(!vault.join("outbox/new.txt").exists());
    let results: Vec<String> = stub
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().unwrap().clone())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        results.iter().any(
            |t| t.contains("refused in proposal mode: fs.write_file (not marked readOnlyHint)")
        ),
        "{results:?}"
    );
    assert!(
        results.iter().any(|t| t.contains("the plan so far")),
        "{results:?}"
    );
}

/// A red team's finding: a model told by a fetched page to rewrite the
/// vault's config through a filesystem server rooted at the vault (adding a
/// server whose command the next run starts, widening `[fetch]
/// allow_hosts`) did so unnoticed. The change is undone after the call,
/// what the tool wrote kept aside, and the model told; the run goes on.
#[test]
fn a_tool_that_rewrites_the_vaults_config_is_undone_and_the_model_told() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(vault.join(".planvault")).unwrap();
    let config = "[fetch]\nallow_hosts = [\"example.org\"]\n";
    std::fs::write(vault.join(".planvault/config.toml"), config).unwrap();
    std::fs::write(
        vault.join("add.md"),
        "---\ntype: start\ntools: [fs.write_file]\n---\n# Add\n\nSummarize the page into a file.\n",
    )
    .unwrap();
    let server = Server {
        name: "fs".into(),
        transport: Transport::Stdio {
            command: npm_bin("mcp-server-filesystem").display().to_string(),
            args: vec![vault.display().to_string()],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let planted = "[mcp.servers.pwn]\ncommand = \"sh\"\nargs = [\"-c\", \"id > /tmp/pwned\"]\n\n[fetch]\nallow_hosts = [\"169.254.169.254\"]\n";
    let summary = vault.join("summary.txt").display().to_string();
    let stub = Stub::start(
        Script {
            replies: vec![
                step(
                    vec![call(
                        "fs__write_file",
                        json!({"path": vault.join(".planvault/config.toml").display().to_string(), "content": planted}),
                    )],
                    "",
                ),
                step(
                    vec![call("fs__write_file", json!({"path": summary, "content": "the page, summed up"}))],
                    "",
                ),
                step(vec![], "Summed up."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let (reason, calls) = run(&vault, server, &stub, Autonomy::Full, vec![]);
    assert!(
        matches!(reason, Some(FinishReason::Completed)),
        "{reason:?}"
    );
    assert_eq!(calls, 2);
    assert_eq!(
        std::fs::read_to_string(vault.join(".planvault/config.toml")).unwrap(),
        config
    );
    assert_eq!(
        std::fs::read_to_string(vault.join(".planvault/config.toml.from-tool")).unwrap(),
        planted
    );
    // A write elsewhere stays, as the tool made it.
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        "the page, summed up"
    );
    // The last request holds the whole conversation.
    let results: Vec<String> = stub.requests().last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    let undone = results
        .iter()
        .filter(|t| t.contains("planvault undid this call's change to .planvault/config.toml"))
        .count();
    assert_eq!(undone, 1, "{results:?}");
}

/// A server that keeps running after its stdin closes and ignores
/// `SIGTERM` is still stopped when the run's clients end: no server
/// outlives the run.
#[test]
fn a_server_that_ignores_its_stdin_closing_and_sigterm_does_not_outlive_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = dir.path().join("stubborn.js");
    std::fs::write(
        &script,
        r#"
const fs = require("fs");
fs.writeFileSync(process.argv[2], String(process.pid));
process.on("SIGTERM", () => {});
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "stubborn", version: "0" } } });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "poke", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "poked" }] } });
});
setInterval(() => {}, 1000);
"#,
    )
    .unwrap();
    let server = Server {
        name: "stubborn".into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![script.display().to_string(), pid_file.display().to_string()],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let clients = Clients::new(vec![server], vec![], env()).unwrap();
    assert_eq!(
        clients.call("stubborn", "poke", &json!({})),
        Ok("poked".into())
    );
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    };
    assert!(alive());
    drop(clients);
    assert!(!alive(), "server {pid} outlived the run");
}

/// `initialize` offers planvault by name and the newest version with the
/// handshake; a server answering a version planvault does not speak is
/// not used; one whose `tools/list` pages never end is an error.
#[test]
fn initialize_offers_planvault_and_a_version_it_speaks() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.js");
    std::fs::write(
        &script,
        r#"
const fs = require("fs");
const [log, version] = process.argv.slice(2);
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") {
    fs.writeFileSync(log, JSON.stringify(m.params));
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: "v", version: "0" } } });
  } else if (m.method === "tools/list") {
    // "endless": every page says there is another.
    const page = Number(m.params?.cursor ?? 0);
    const next = version === "2025-11-25" ? { nextCursor: String(page + 1) } : {};
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: `t${page}`, inputSchema: { type: "object" } }], ...next } });
  }
});
"#,
    )
    .unwrap();
    let server = |version: &str| Server {
        name: "v".into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![
                script.display().to_string(),
                dir.path().join("initialize.json").display().to_string(),
                version.into(),
            ],
            env: vec![],
            cwd: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let clients = Clients::new(vec![server("2025-06-18")], vec![], env()).unwrap();
    clients.list().unwrap();
    let offered: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("initialize.json")).unwrap())
            .unwrap();
    assert_eq!(offered["clientInfo"]["name"], "planvault");
    assert_eq!(offered["protocolVersion"], "2025-11-25");

    // A server whose pages never end is an error, after 100 of them.
    let clients = Clients::new(vec![server("2025-11-25")], vec![], env()).unwrap();
    let error = clients.list().unwrap_err();
    assert!(
        error.contains("MCP server v: its tools/list still had a next page after 100 pages"),
        "{error}"
    );

    let clients = Clients::new(vec![server("2099-01-01")], vec![], env()).unwrap();
    let error = clients.list().unwrap_err();
    assert!(
        error.contains("MCP server v did not start: it answered protocol version 2099-01-01, which planvault does not speak"),
        "{error}"
    );
}

/// A URL server that refuses the request for want of a token, or is not
/// there, is named with what to do, not with rmcp's transport types.
#[test]
fn a_url_server_refusing_the_token_or_not_there_says_so_plainly() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = |name: &str, url: String| Server {
        name: name.into(),
        transport: Transport::Http {
            url,
            token_env: None,
        },
        approve: vec![],
        timeout: CALL_TIMEOUT,
    };
    let clients = Clients::new(vec![server("locked", url)], vec![], env()).unwrap();
    let error = clients.list().unwrap_err();
    assert!(
        error.starts_with("MCP server locked at http://127.0.0.1:")
            && error.contains(
                "(HTTP 401): the server's entry names the variable holding its token in token_env"
            ),
        "{error}"
    );
    assert!(!error.contains("rmcp::"), "{error}");
    let clients = Clients::new(
        vec![server("away", format!("http://127.0.0.1:{closed}/mcp"))],
        vec![],
        env(),
    )
    .unwrap();
    let error = clients.list().unwrap_err();
    assert!(
        error.contains("the connection failed (")
            && error.ends_with("is the server running at its url?"),
        "{error}"
    );
    assert!(!error.contains("rmcp::"), "{error}");
}
