//! A blocking OpenAI-compatible chat-completions client with streaming (SSE),
//! bounded retry with backoff, and typed failures.
//!
//! The API key is sent only as the `Authorization` header; it is never
//! printed, logged or written. Errors name the URL, never the key.

use super::config::{api_key, Endpoint, HttpPolicy};
use planvault_llm::{
    backoff_ms, chat_body, chat_url, parse_completion, parse_retry_after, SseDecoder, StreamEvent,
};
pub use planvault_llm::{Completion, LlmError};
use serde_json::Value;
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
        Client {
            agent,
            policy,
            stop,
        }
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
                    let base = self.policy.retry_base.as_millis().min(u128::from(u64::MAX)) as u64;
                    let backoff =
                        Duration::from_millis(backoff_ms(base, attempt, err.retry_after()));
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
        let url = chat_url(&endpoint.base_url);
        let body = chat_body(&endpoint.model, messages, tools, true);
        let mut request = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream");
        if let Some(key) = api_key(endpoint) {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.to_string())
            .map_err(|e| transport(&url, e))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if status != 200 {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let text = response.body_mut().read_to_string().unwrap_or_default();
            return Err(LlmError::from_status(&url, status, &text, retry_after));
        }
        let reader = response.body_mut().as_reader();
        if content_type.starts_with("text/event-stream") {
            read_stream(&url, BufReader::new(reader), on_delta, &self.stop)
        } else {
            let mut text = String::new();
            BufReader::new(reader)
                .read_to_string(&mut text)
                .map_err(|e| io(&url, e))?;
            let completion = parse_completion(&url, &text)?;
            on_delta(&completion.content);
            Ok(completion)
        }
    }
}

fn transport(url: &str, err: ureq::Error) -> LlmError {
    match err {
        ureq::Error::Timeout(_) => LlmError::Timeout { url: url.into() },
        ureq::Error::Io(e) => io(url, e),
        other => LlmError::Connect {
            url: url.into(),
            reason: other.to_string(),
        },
    }
}

fn io(url: &str, e: std::io::Error) -> LlmError {
    if matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) || e.to_string().contains("timeout")
    {
        LlmError::Timeout { url: url.into() }
    } else {
        LlmError::Connect {
            url: url.into(),
            reason: e.to_string(),
        }
    }
}

/// Read an SSE stream of chat-completion chunks until `[DONE]` (or its end).
pub fn read_stream(
    url: &str,
    mut reader: impl Read,
    on_delta: &mut dyn FnMut(&str),
    stop: &AtomicBool,
) -> Result<Completion, LlmError> {
    let mut decoder = SseDecoder::new(url);
    let mut buf = [0u8; 8192];
    let deliver = |events: Vec<StreamEvent>, on_delta: &mut dyn FnMut(&str)| {
        for event in events {
            if let StreamEvent::Content(text) = event {
                on_delta(&text);
            }
        }
    };
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(LlmError::Interrupted);
        }
        let read = reader.read(&mut buf).map_err(|e| io(url, e))?;
        if read == 0 {
            deliver(decoder.flush()?, on_delta);
            return decoder.finish();
        }
        deliver(decoder.feed(&buf[..read])?, on_delta);
        if decoder.is_done() {
            return decoder.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Completion, LlmError> {
        let mut seen = String::new();
        let result = read_stream(
            "u",
            text.as_bytes(),
            &mut |d| seen.push_str(d),
            &AtomicBool::new(false),
        );
        if let Ok(c) = &result {
            assert_eq!(seen, c.content);
        }
        result
    }

    #[test]
    fn a_stream_read_through_a_reader_gives_its_deltas_and_stops_at_done() {
        let text = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: [DONE]\n\ndata: {garbage\n\n";
        assert_eq!(parse(text).unwrap().content, "Hello");
        let cut = parse("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n").unwrap_err();
        assert!(matches!(cut, LlmError::Malformed { .. }) && cut.retryable());
    }

    #[test]
    fn a_stop_interrupts_the_read() {
        let stop = AtomicBool::new(true);
        assert_eq!(
            read_stream("u", "data: x".as_bytes(), &mut |_| {}, &stop),
            Err(LlmError::Interrupted)
        );
    }
}
