//! A blocking OpenAI-compatible chat-completions client with streaming (SSE),
//! bounded retry with backoff, and typed failures.
//!
//! The API key is sent only as the `Authorization` header; it is never
//! printed, logged or written. Errors name the URL, never the key.

use super::config::{api_key, Endpoint, HttpPolicy};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("timed out waiting for {url}")]
    Timeout { url: String },
    #[error("cannot reach {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("{url} answered HTTP {status}: {message}")]
    Status { url: String, status: u16, message: String, retry_after: Option<u64> },
    #[error("malformed reply from {url}: {reason}")]
    Malformed { url: String, reason: String },
    #[error("interrupted")]
    Interrupted,
}

impl LlmError {
    /// Worth another attempt: timeouts, connection failures, 429 and 5xx,
    /// and a reply that broke off.
    pub fn retryable(&self) -> bool {
        match self {
            LlmError::Timeout { .. } | LlmError::Connect { .. } | LlmError::Malformed { .. } => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            LlmError::Interrupted => false,
        }
    }

    /// A hint for the person at the terminal.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            LlmError::Status { status: 401 | 403, .. } => Some("check PLANVAULT_API_KEY (or OPENAI_API_KEY)"),
            LlmError::Status { status: 404, .. } => Some("check --endpoint (it ends in /v1) and --model"),
            LlmError::Connect { .. } => Some("is the model server running?"),
            _ => None,
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One assistant turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

pub struct Client {
    agent: ureq::Agent,
    policy: HttpPolicy,
    stop: Arc<AtomicBool>,
}

impl Client {
    pub fn new(policy: HttpPolicy, stop: Arc<AtomicBool>) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_recv_response(Some(policy.timeout))
            .timeout_recv_body(Some(policy.timeout * 5))
            .build()
            .into();
        Client { agent, policy, stop }
    }

    /// Call with retries; `on_retry` hears each failure that will be retried.
    pub fn chat(
        &self,
        endpoint: &Endpoint,
        messages: &[Value],
        tools: &[Value],
        on_delta: &mut dyn FnMut(&str),
        on_retry: &mut dyn FnMut(&LlmError, Duration),
    ) -> Result<Completion, LlmError> {
        let mut attempt = 1;
        loop {
            match self.attempt(endpoint, messages, tools, on_delta) {
                Ok(c) => return Ok(c),
                Err(err) if err.retryable() && attempt < self.policy.attempts => {
                    let backoff = match &err {
                        LlmError::Status { retry_after: Some(s), .. } => Duration::from_secs(*s),
                        _ => self.policy.retry_base * 2u32.pow(attempt - 1),
                    }
                    .min(Duration::from_secs(30));
                    on_retry(&err, backoff);
                    self.sleep(backoff)?;
                    attempt += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }

    fn sleep(&self, total: Duration) -> Result<(), LlmError> {
        let end = Instant::now() + total;
        while Instant::now() < end {
            if self.stop.load(Ordering::SeqCst) {
                return Err(LlmError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
        }
        Ok(())
    }

    fn attempt(
        &self,
        endpoint: &Endpoint,
        messages: &[Value],
        tools: &[Value],
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(LlmError::Interrupted);
        }
        let url = format!("{}/chat/completions", endpoint.base_url);
        let mut body = json!({"model": endpoint.model, "messages": messages, "stream": true});
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.to_vec());
        }
        let mut request = self.agent.post(&url).header("Content-Type", "application/json").header("Accept", "text/event-stream");
        if let Some(key) = api_key(endpoint) {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request.send(body.to_string()).map_err(|e| transport(&url, e))?;
        let status = response.status().as_u16();
        let content_type =
            response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        if status != 200 {
            let retry_after = response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok());
            let text = response.body_mut().read_to_string().unwrap_or_default();
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| text.chars().take(200).collect());
            return Err(LlmError::Status { url, status, message, retry_after });
        }
        let reader = response.body_mut().as_reader();
        if content_type.starts_with("text/event-stream") {
            read_stream(&url, BufReader::new(reader), on_delta, &self.stop)
        } else {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut BufReader::new(reader), &mut text).map_err(|e| io(&url, e))?;
            let value: Value =
                serde_json::from_str(&text).map_err(|e| LlmError::Malformed { url: url.clone(), reason: e.to_string() })?;
            let completion = completion_of(&url, &value["choices"][0]["message"])?;
            on_delta(&completion.content);
            Ok(completion)
        }
    }
}

fn transport(url: &str, err: ureq::Error) -> LlmError {
    match err {
        ureq::Error::Timeout(_) => LlmError::Timeout { url: url.into() },
        ureq::Error::Io(e) => io(url, e),
        other => LlmError::Connect { url: url.into(), reason: other.to_string() },
    }
}

fn io(url: &str, e: std::io::Error) -> LlmError {
    if matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock) || e.to_string().contains("timeout") {
        LlmError::Timeout { url: url.into() }
    } else {
        LlmError::Connect { url: url.into(), reason: e.to_string() }
    }
}

fn completion_of(url: &str, message: &Value) -> Result<Completion, LlmError> {
    if !message.is_object() {
        return Err(LlmError::Malformed { url: url.into(), reason: "no choices[0].message".into() });
    }
    let tool_calls = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCall {
                    id: c["id"].as_str().unwrap_or_default().into(),
                    name: c["function"]["name"].as_str().unwrap_or_default().into(),
                    arguments: c["function"]["arguments"].as_str().unwrap_or_default().into(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Completion { content: message["content"].as_str().unwrap_or_default().to_string(), tool_calls })
}

/// Read an SSE stream of chat-completion chunks until `[DONE]`.
pub fn read_stream(
    url: &str,
    mut reader: impl BufRead,
    on_delta: &mut dyn FnMut(&str),
    stop: &AtomicBool,
) -> Result<Completion, LlmError> {
    let mut completion = Completion::default();
    let mut data = String::new();
    let mut finished = false;
    let mut line = String::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(LlmError::Interrupted);
        }
        line.clear();
        let read = reader.read_line(&mut line).map_err(|e| io(url, e))?;
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if read == 0 || trimmed.is_empty() {
            if !data.is_empty() {
                if data.trim() == "[DONE]" {
                    return Ok(completion);
                }
                let event: Value = serde_json::from_str(&data)
                    .map_err(|e| LlmError::Malformed { url: url.into(), reason: format!("an event is not JSON: {e}") })?;
                if let Some(message) = event["error"]["message"].as_str() {
                    return Err(LlmError::Malformed { url: url.into(), reason: format!("the stream reported: {message}") });
                }
                let choice = &event["choices"][0];
                if let Some(text) = choice["delta"]["content"].as_str() {
                    completion.content.push_str(text);
                    on_delta(text);
                }
                if let Some(calls) = choice["delta"]["tool_calls"].as_array() {
                    for call in calls {
                        let index = call["index"].as_u64().unwrap_or(0) as usize;
                        while completion.tool_calls.len() <= index {
                            completion.tool_calls.push(ToolCall::default());
                        }
                        let slot = &mut completion.tool_calls[index];
                        if let Some(id) = call["id"].as_str() {
                            slot.id = id.into();
                        }
                        if let Some(name) = call["function"]["name"].as_str() {
                            slot.name.push_str(name);
                        }
                        if let Some(args) = call["function"]["arguments"].as_str() {
                            slot.arguments.push_str(args);
                        }
                    }
                }
                if choice["finish_reason"].is_string() {
                    finished = true;
                }
                data.clear();
            }
            if read == 0 {
                return if finished {
                    Ok(completion)
                } else {
                    Err(LlmError::Malformed { url: url.into(), reason: "the stream ended before the reply was complete".into() })
                };
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
        // `event:`, `id:`, `retry:` and `:` comments carry nothing we use.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Completion, LlmError> {
        let mut seen = String::new();
        let result = read_stream("u", text.as_bytes(), &mut |d| seen.push_str(d), &AtomicBool::new(false));
        if let Ok(c) = &result {
            assert_eq!(seen, c.content);
        }
        result
    }

    #[test]
    fn content_deltas_are_joined_until_done() {
        let text = ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n\
                    data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        assert_eq!(parse(text).unwrap().content, "Hello");
    }

    #[test]
    fn tool_call_fragments_are_assembled_by_index() {
        let text = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"read_note\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n";
        let c = parse(text).unwrap();
        assert_eq!(c.tool_calls, vec![ToolCall { id: "c1".into(), name: "read_note".into(), arguments: "{\"path\":1}".into() }]);
    }

    #[test]
    fn a_stream_cut_short_or_garbled_is_malformed_and_retryable() {
        let cut = parse("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n").unwrap_err();
        assert!(matches!(cut, LlmError::Malformed { .. }) && cut.retryable());
        assert!(matches!(parse("data: {nope\n\n").unwrap_err(), LlmError::Malformed { .. }));
    }

    #[test]
    fn only_429_and_5xx_statuses_are_retried() {
        let status = |s| LlmError::Status { url: "u".into(), status: s, message: String::new(), retry_after: None };
        assert!(status(429).retryable() && status(503).retryable());
        assert!(!status(401).retryable() && !status(404).retryable());
    }
}
