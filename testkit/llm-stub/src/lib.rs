//! A scripted OpenAI-compatible chat-completions server for tests.
//!
//! Listens on 127.0.0.1 only. `POST /v1/chat/completions` is answered from a
//! [`Script`]: ordered replies, matched on the request, with injected HTTP
//! errors, delays and malformed bodies; streaming (SSE, `stream: true`) and
//! plain JSON. Every request is recorded (the `Authorization` header only as
//! present or absent, never its value) in memory, at `GET /__stub/requests`
//! and, when asked, in a JSON-lines log file. `GET /__stub/page` is a page
//! (`?bytes=N`: N bytes) and `GET /__stub/redirect?to=URL` redirects there,
//! for `fetch_url`. CORS
//! headers and `OPTIONS` preflight let browser tests call it from another
//! origin.

#![forbid(unsafe_code)]

mod script;

pub use script::{Match, Reply, Script, ToolCall};

use serde::Serialize;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// One request as the stub saw it.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    /// 1-based arrival order.
    pub seq: u64,
    pub method: String,
    pub path: String,
    /// Whether an `Authorization` header was sent (its value is never kept).
    pub authorized: bool,
    /// The JSON body (`null` when it was not JSON).
    pub body: serde_json::Value,
    /// Index of the reply that served it; `None` for the default or a miss.
    pub reply: Option<usize>,
    pub status: u16,
}

impl Recorded {
    /// Every message content of the request, joined.
    pub fn text(&self) -> String {
        self.body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|m| m["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }
}

struct State {
    script: Script,
    used: Vec<u32>,
    log: Vec<Recorded>,
    log_file: Option<PathBuf>,
}

/// A running stub; it stops when the process exits.
#[derive(Clone)]
pub struct Stub {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl Stub {
    /// Listen on `127.0.0.1:port` (0 picks a free port) and serve `script`.
    pub fn start(script: Script, port: u16, log_file: Option<PathBuf>) -> std::io::Result<Stub> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let port = listener.local_addr()?.port();
        let used = vec![0; script.replies.len()];
        let state = Arc::new(Mutex::new(State {
            script,
            used,
            log: Vec::new(),
            log_file,
        }));
        let shared = state.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                thread::spawn(move || {
                    let _ = serve(stream, &state);
                });
            }
        });
        Ok(Stub { port, state })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT/v1`, as OpenAI clients take a base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every chat-completions request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().log.clone()
    }
}

fn serve(stream: TcpStream, state: &Arc<Mutex<State>>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut head = Vec::new();
    loop {
        let before = head.len();
        reader.read_until(b'\n', &mut head)?;
        if head.len() == before || head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            break;
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    if !matches!(request.parse(&head), Ok(httparse::Status::Complete(_))) {
        return respond(
            &stream,
            400,
            "application/json",
            &[],
            br#"{"error":{"message":"bad request"}}"#,
        );
    }
    let method = request.method.unwrap_or("").to_string();
    let path = request.path.unwrap_or("").to_string();
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
    };
    let authorized = header("authorization").is_some();
    let length: usize = header("content-length")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let path_only = path.split('?').next().unwrap_or("").to_string();

    match (method.as_str(), path_only.as_str()) {
        ("OPTIONS", _) => respond(&stream, 204, "text/plain", &[], b""),
        ("GET", "/__stub/requests") => {
            let log = state.lock().unwrap().log.clone();
            respond(&stream, 200, "application/json", &[], serde_json::to_string(&log).unwrap().as_bytes())
        }
        // A page for `fetch_url`, and a redirect to any URL (`?to=`): what
        // a web page a model fetches may answer.
        ("GET", "/__stub/page") => match path.split_once("?bytes=").and_then(|(_, n)| n.parse().ok()) {
            Some(n) => respond(&stream, 200, "text/plain", &[], &vec![b'x'; n]),
            None => respond(&stream, 200, "text/plain", &[], b"a page from the stub"),
        },
        ("GET", "/__stub/redirect") => {
            let to = path.split_once("?to=").map_or("", |(_, to)| to).to_string();
            respond(&stream, 302, "text/plain", &[("Location", to)], b"")
        }
        ("GET", "/v1/models") => respond(
            &stream,
            200,
            "application/json",
            &[],
            br#"{"object":"list","data":[{"id":"stub-model","object":"model","owned_by":"planvault-llm-stub"}]}"#,
        ),
        ("POST", p) if p.ends_with("/chat/completions") => {
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            let (index, reply) = pick(state, &json);
            let port = stream.local_addr().map(|a| a.port()).unwrap_or(0);
            let reply = reply.map(|r| with_address(r, port));
            let status = reply.as_ref().map_or(404, |r| r.status);
            record(state, Recorded { seq: 0, method, path, authorized, body: json.clone(), reply: index, status });
            match reply {
                Some(reply) => answer(&stream, &json, &reply),
                None => respond(
                    &stream,
                    404,
                    "application/json",
                    &[],
                    br#"{"error":{"message":"the stub's script has no reply for this request","type":"stub_unscripted"}}"#,
                ),
            }
        }
        _ => respond(&stream, 404, "application/json", &[], br#"{"error":{"message":"not found"}}"#),
    }
}

fn pick(state: &Arc<Mutex<State>>, request: &serde_json::Value) -> (Option<usize>, Option<Reply>) {
    let mut st = state.lock().unwrap();
    for i in 0..st.script.replies.len() {
        let reply = &st.script.replies[i];
        let limit = reply.times.unwrap_or(1);
        if (limit == 0 || st.used[i] < limit) && reply.matcher.holds(request) {
            st.used[i] += 1;
            return (Some(i), Some(st.script.replies[i].clone()));
        }
    }
    (None, st.script.default.clone())
}

fn record(state: &Arc<Mutex<State>>, mut entry: Recorded) {
    let mut st = state.lock().unwrap();
    entry.seq = st.log.len() as u64 + 1;
    if let Some(path) = &st.log_file {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{}", serde_json::to_string(&entry).unwrap());
        }
    }
    st.log.push(entry);
}

fn answer(stream: &TcpStream, request: &serde_json::Value, reply: &Reply) -> std::io::Result<()> {
    if reply.delay_ms > 0 {
        thread::sleep(Duration::from_millis(reply.delay_ms));
    }
    if let Some(raw) = &reply.raw {
        let kind = if request["stream"].as_bool() == Some(true) {
            "text/event-stream"
        } else {
            "application/json"
        };
        return respond(stream, reply.status, kind, &[], raw.as_bytes());
    }
    if reply.status != 200 {
        let retry: Vec<(&str, String)> = reply
            .retry_after
            .map(|s| ("Retry-After", s.to_string()))
            .into_iter()
            .collect();
        let body = serde_json::json!({"error": {"message": reply.content, "type": "stub_error", "code": reply.status}});
        return respond(
            stream,
            reply.status,
            "application/json",
            &retry,
            body.to_string().as_bytes(),
        );
    }
    let model = request["model"]
        .as_str()
        .unwrap_or("stub-model")
        .to_string();
    if request["stream"].as_bool() == Some(true) {
        stream_reply(stream, &model, reply)
    } else {
        let mut message = serde_json::json!({"role": "assistant", "content": reply.content});
        if !reply.tool_calls.is_empty() {
            message["tool_calls"] = tool_calls_json(reply, false);
        }
        let finish = if reply.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let body = serde_json::json!({
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        });
        respond(
            stream,
            200,
            "application/json",
            &[],
            body.to_string().as_bytes(),
        )
    }
}

fn stream_reply(mut stream: &TcpStream, model: &str, reply: &Reply) -> std::io::Result<()> {
    write_head(
        stream,
        200,
        "text/event-stream",
        &[("Cache-Control", "no-cache".into())],
        None,
    )?;
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let event = serde_json::json!({
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        });
        format!("data: {event}\n\n")
    };
    stream.write_all(
        chunk(
            serde_json::json!({"role": "assistant", "content": ""}),
            None,
        )
        .as_bytes(),
    )?;
    stream.flush()?;
    let size = reply.chunk_chars.unwrap_or(8).max(1);
    let mut chars: Vec<char> = reply.content.chars().collect();
    if let Some(cut) = reply.break_after_chars {
        chars.truncate(cut);
    }
    for piece in chars.chunks(size) {
        if reply.chunk_delay_ms > 0 {
            thread::sleep(Duration::from_millis(reply.chunk_delay_ms));
        }
        let text: String = piece.iter().collect();
        stream.write_all(chunk(serde_json::json!({"content": text}), None).as_bytes())?;
        stream.flush()?;
    }
    if reply.break_after_chars.is_some() {
        return Ok(());
    }
    if !reply.tool_calls.is_empty() {
        stream.write_all(
            chunk(
                serde_json::json!({"tool_calls": tool_calls_json(reply, true)}),
                None,
            )
            .as_bytes(),
        )?;
    }
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    stream.write_all(chunk(serde_json::json!({}), Some(finish)).as_bytes())?;
    stream.write_all(b"data: [DONE]\n\n")?;
    stream.flush()
}

/// `$STUB` in a scripted tool call's arguments becomes the stub's own
/// address, so a script can make the model fetch from the stub itself.
fn with_address(mut reply: Reply, port: u16) -> Reply {
    for call in &mut reply.tool_calls {
        let text = call
            .arguments
            .to_string()
            .replace("$STUB", &format!("http://127.0.0.1:{port}"));
        call.arguments = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    }
    reply
}

/// The OpenAI `tool_calls` array (with `index` on streamed deltas).
fn tool_calls_json(reply: &Reply, streamed: bool) -> serde_json::Value {
    let calls: Vec<serde_json::Value> = reply
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let mut c = serde_json::json!({
                "id": format!("call_{i}"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.to_string()}
            });
            if streamed {
                c["index"] = serde_json::json!(i);
            }
            c
        })
        .collect();
    serde_json::Value::Array(calls)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        302 => "Found",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn write_head(
    mut stream: &TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(&str, String)],
    length: Option<usize>,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nConnection: close\r\n\
         Access-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: GET, POST, OPTIONS\r\n\
         Access-Control-Allow-Headers: authorization, content-type\r\nAccess-Control-Expose-Headers: retry-after\r\n\
         Access-Control-Max-Age: 600\r\n",
        reason(status)
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(length) = length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())
}

fn respond(
    mut stream: &TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    write_head(stream, status, content_type, extra, Some(body.len()))?;
    stream.write_all(body)?;
    stream.flush()
}
