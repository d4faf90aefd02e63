//! An incremental decoder of a streamed chat completion (server-sent
//! events): feed it the body's bytes in whatever chunks they arrive, get the
//! content deltas and tool-call fragments as soon as each event is complete,
//! and the assembled [`Completion`] at the end.
//!
//! Lines end in LF, CRLF or CR (a CRLF split across two chunks counts once);
//! `:` comments and `event:`/`id:`/`retry:` fields are skipped; several
//! `data:` lines of one event are joined with LF; a line is only decoded as
//! UTF-8 once it is complete, so a character split across chunks survives.
//! `data: [DONE]` ends the stream; a stream that ends without `[DONE]` or a
//! `finish_reason` broke off ([`LlmError::BrokeOff`], retryable), or was
//! never a chat completion when not one event came
//! ([`LlmError::Malformed`], as is an event carrying `error`).

use crate::{Completion, LlmError, ToolCall};
use serde_json::Value;

/// What one complete event said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Tokens of the reply.
    Content(String),
    /// A piece of a tool call; pieces with the same `index` are concatenated.
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: Option<String>,
    },
    /// `[DONE]`: nothing more will come.
    Done,
}

/// The decoder of one streamed reply.
#[derive(Debug, Default)]
pub struct SseDecoder {
    url: String,
    line: Vec<u8>,
    after_cr: bool,
    data: String,
    has_data: bool,
    error_event: bool,
    completion: Completion,
    finished: bool,
    /// `finish_reason` when it says the reply was cut off.
    cut_off: Option<String>,
    /// A chat-completion event was read: the reply had begun.
    begun: bool,
    done: bool,
    /// The server's `index` of each tool call so far, in order of first
    /// appearance (`None`: a call sent without one): a call's place is
    /// where its index first came, whatever the server counts from.
    call_indexes: Vec<Option<u64>>,
}

impl SseDecoder {
    /// A decoder for the reply of `url` (named in errors).
    pub fn new(url: &str) -> Self {
        SseDecoder {
            url: url.to_string(),
            ..SseDecoder::default()
        }
    }

    /// Decode the next chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<StreamEvent>, LlmError> {
        let mut out = Vec::new();
        let mut rest = chunk;
        while !rest.is_empty() && !self.done {
            if std::mem::take(&mut self.after_cr) && rest[0] == b'\n' {
                rest = &rest[1..];
                continue;
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.line.extend_from_slice(&rest[..end]);
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    self.end_line(&mut out)?;
                }
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
        Ok(out)
    }

    /// Whether `[DONE]` was read: the caller may stop reading.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// What has been assembled so far.
    pub fn completion(&self) -> &Completion {
        &self.completion
    }

    /// The body ended: decode an event that lacked its closing blank line.
    /// [`SseDecoder::finish`] does this too; call it first to see the
    /// event's deltas.
    pub fn flush(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        let mut out = Vec::new();
        if !self.done {
            if !self.line.is_empty() {
                self.end_line(&mut out)?;
            }
            self.dispatch(&mut out)?;
        }
        Ok(out)
    }

    /// The body ended: the assembled reply, or why it is incomplete.
    pub fn finish(mut self) -> Result<Completion, LlmError> {
        self.flush()?;
        if let Some(reason) = self.cut_off {
            Err(LlmError::CutOff {
                url: self.url,
                reason,
            })
        } else if self.done || self.finished {
            crate::chat::complete_calls(&mut self.completion.tool_calls);
            Ok(self.completion)
        } else if self.begun {
            Err(LlmError::BrokeOff {
                url: self.url,
                reason: "the stream ended before the reply was complete".into(),
            })
        } else {
            Err(self.malformed("the stream ended before any event of a reply".into()))
        }
    }

    /// Where a tool-call fragment goes: the call its `index` named first
    /// (whatever the server counts from: a gateway counts from 1), or,
    /// sent without one (Gemini; Ollama before 0.4.7), a new call where it
    /// has an id of its own or follows another call in its chunk (`place`),
    /// else the last call. Past [`crate::chat::MAX_TOOL_CALLS`], the last.
    fn call_slot(&mut self, index: Option<u64>, id: Option<&str>, place: usize) -> usize {
        let calls = &self.completion.tool_calls;
        let found = match index {
            Some(index) => self.call_indexes.iter().position(|&i| i == Some(index)),
            None => match (calls.last(), id) {
                (Some(last), Some(id)) if last.id == id => Some(calls.len() - 1),
                (Some(_), None) if place == 0 => Some(calls.len() - 1),
                _ => None,
            },
        };
        if let Some(slot) = found {
            return slot;
        }
        if calls.len() >= crate::chat::MAX_TOOL_CALLS {
            return calls.len() - 1;
        }
        self.call_indexes.push(index);
        self.completion.tool_calls.push(ToolCall::default());
        self.completion.tool_calls.len() - 1
    }

    fn malformed(&self, reason: String) -> LlmError {
        LlmError::Malformed {
            url: self.url.clone(),
            reason: crate::error::one_line(&reason),
        }
    }

    fn end_line(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let bytes = std::mem::take(&mut self.line);
        if bytes.is_empty() {
            return self.dispatch(out);
        }
        let line =
            String::from_utf8(bytes).map_err(|_| self.malformed("an event is not UTF-8".into()))?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.error_event = value == "error",
            // llama.cpp's `llama-server` (early 2025) reports a failure as an
            // `error:` field, then sends `data: [DONE]`: the reply failed.
            "error" => {
                self.error_event = true;
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), LlmError> {
        let error_event = std::mem::take(&mut self.error_event);
        if !std::mem::take(&mut self.has_data) {
            return Ok(());
        }
        let data = std::mem::take(&mut self.data);
        if data.trim() == "[DONE]" {
            self.done = true;
            out.push(StreamEvent::Done);
            return Ok(());
        }
        let event: Value = match serde_json::from_str(&data) {
            Ok(v) => v,
            Err(_) if error_event => {
                return Err(self.malformed(format!("the stream reported: {}", data.trim())))
            }
            Err(e) => return Err(self.malformed(format!("an event is not JSON: {e}"))),
        };
        if let Some(error) = event.get("error").filter(|e| !e.is_null()) {
            let message = error["message"]
                .as_str()
                .or(error.as_str())
                .unwrap_or("an error")
                .to_string();
            return Err(self.malformed(format!("the stream reported: {message}")));
        }
        if error_event {
            let message = event["message"].as_str().unwrap_or(&data);
            return Err(self.malformed(format!("the stream reported: {message}")));
        }
        self.begun = true;
        let choice = &event["choices"][0];
        if let Some(text) = choice["delta"]["content"]
            .as_str()
            .filter(|t| !t.is_empty())
        {
            self.completion.content.push_str(text);
            out.push(StreamEvent::Content(text.to_string()));
        }
        if let Some(reasoning) = choice["delta"]["reasoning_content"].as_str() {
            self.completion
                .reasoning
                .get_or_insert_with(String::new)
                .push_str(reasoning);
        }
        if let Some(calls) = choice["delta"]["tool_calls"].as_array() {
            for (place, call) in calls.iter().enumerate() {
                // An empty id or name (DashScope's later chunks) says nothing.
                let id = call["id"].as_str().filter(|s| !s.is_empty());
                let index = self.call_slot(call["index"].as_u64(), id, place);
                let slot = &mut self.completion.tool_calls[index];
                let id = id.map(str::to_string);
                let name = call["function"]["name"]
                    .as_str()
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                let arguments = call["function"]["arguments"].as_str().map(str::to_string);
                if let Some(id) = &id {
                    slot.id = id.clone();
                }
                // OpenAI sends the name once; some servers (llama-cpp-python)
                // repeat it whole in every chunk of the call.
                if let Some(name) = name.as_deref().filter(|n| *n != slot.name) {
                    slot.name.push_str(name);
                }
                if let Some(arguments) = &arguments {
                    slot.arguments.push_str(arguments);
                }
                if let Some(extra) = crate::chat::extra_content(call) {
                    slot.extra = Some(extra);
                }
                out.push(StreamEvent::ToolCall {
                    index,
                    id,
                    name,
                    arguments,
                });
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finished = true;
            if crate::chat::cut_off(reason) {
                self.cut_off = Some(reason.to_string());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decode `text` in the given chunks; the content deltas joined, and the result.
    fn decode(chunks: &[&[u8]]) -> (String, Result<Completion, LlmError>) {
        let mut decoder = SseDecoder::new("u");
        let mut seen = String::new();
        let mut flushed = false;
        for chunk in chunks.iter().map(Some).chain([None]) {
            let result = match chunk {
                Some(chunk) => decoder.feed(chunk),
                None => {
                    flushed = true;
                    decoder.flush()
                }
            };
            match result {
                Ok(events) => {
                    for e in events {
                        if let StreamEvent::Content(t) = e {
                            seen.push_str(&t);
                        }
                    }
                }
                Err(e) => return (seen, Err(e)),
            }
        }
        assert!(flushed);
        (seen, decoder.finish())
    }

    const HELLO: &str = ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"content\":\"Hél\"}}]}\r\n\r\n\
        event: message\nid: 3\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo ✓\"},\"finish_reason\":null}]}\r\r\
        data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

    const TOOLS: &str = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"read_note\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"function\":{\"name\":\"list_notes\",\"arguments\":\"{}\"}}]}}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n";

    /// (name, stream, Ok(content) or Err(part of the error)).
    fn cases() -> Vec<(&'static str, String, Result<&'static str, &'static str>)> {
        vec![
            ("deltas, comments, CRLF, CR, other fields", HELLO.to_string(), Ok("Héllo ✓")),
            ("tool calls only", TOOLS.to_string(), Ok("")),
            ("finish_reason without [DONE]", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n".into(), Ok("a")),
            ("last event without a blank line", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}".into(), Ok("a")),
            ("[DONE] ends it, later bytes ignored", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\ndata: {nope\n\n".into(), Ok("a")),
            ("multi-line data joined", "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"x\"}, \"finish_reason\":\"stop\"}]}\n\n".into(), Ok("x")),
            ("no space after the colon", "data:{\"choices\":[{\"delta\":{\"content\":\"y\"},\"finish_reason\":\"stop\"}]}\n\n".into(), Ok("y")),
            ("broke off", "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n".into(), Err("broke off: the stream ended before the reply was complete")),
            ("empty body", String::new(), Err("ended before any event")),
            ("only pings", ": ping\n\n: ping\n\n".into(), Err("ended before any event")),
            ("garbled event", "data: {nope\n\n".into(), Err("not JSON")),
            ("error object in the stream", "data: {\"error\":{\"message\":\"overloaded\"}}\n\n".into(), Err("overloaded")),
            ("error event", "event: error\ndata: upstream gone\n\n".into(), Err("upstream gone")),
        ]
    }

    #[test]
    fn every_case_decodes_in_one_chunk() {
        for (name, text, want) in cases() {
            let (seen, got) = decode(&[text.as_bytes()]);
            match (want, got) {
                (Ok(content), Ok(c)) => {
                    assert_eq!(c.content, content, "{name}");
                    assert_eq!(seen, content, "{name}: deltas");
                }
                (Err(part), Err(e)) => {
                    assert!(
                        matches!(e, LlmError::Malformed { .. } | LlmError::BrokeOff { .. })
                            && e.retryable(),
                        "{name}: {e:?}"
                    );
                    assert!(e.to_string().contains(part), "{name}: {e}");
                }
                (want, got) => panic!("{name}: wanted {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn tool_call_fragments_are_assembled_by_index() {
        let c = decode(&[TOOLS.as_bytes()]).1.unwrap();
        assert_eq!(
            c.tool_calls,
            vec![
                ToolCall {
                    id: "c1".into(),
                    name: "read_note".into(),
                    arguments: "{\"path\":1}".into(),
                    extra: None,
                },
                ToolCall {
                    id: "c2".into(),
                    name: "list_notes".into(),
                    arguments: "{}".into(),
                    extra: None,
                },
            ]
        );
    }

    #[test]
    fn every_case_decodes_the_same_split_at_every_byte_boundary() {
        for (name, text, _) in cases() {
            let bytes = text.as_bytes();
            let (whole_seen, whole) = decode(&[bytes]);
            for at in 0..=bytes.len() {
                let (seen, split) = decode(&[&bytes[..at], &bytes[at..]]);
                assert_eq!(split, whole, "{name}: split at {at}");
                if whole.is_ok() {
                    assert_eq!(seen, whole_seen, "{name}: deltas split at {at}");
                }
            }
        }
    }

    #[test]
    fn a_crlf_split_between_chunks_ends_one_line_not_two() {
        let mut d = SseDecoder::new("u");
        let events = d
            .feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r")
            .unwrap();
        assert!(
            events.is_empty(),
            "the event is not complete before its blank line"
        );
        assert_eq!(d.feed(b"\n").unwrap(), vec![]);
        assert_eq!(
            d.feed(b"\r\n").unwrap(),
            vec![StreamEvent::Content("a".into())]
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any chunking of any case gives the same result as one chunk.
            #[test]
            fn any_chunking_decodes_like_one_chunk(case in 0usize..12, cuts in proptest::collection::vec(any::<u16>(), 0..12)) {
                let all = cases();
                let (name, text, _) = &all[case % all.len()];
                let bytes = text.as_bytes();
                let mut points: Vec<usize> = cuts.iter().map(|&c| c as usize % (bytes.len() + 1)).collect();
                points.sort_unstable();
                let mut chunks: Vec<&[u8]> = Vec::new();
                let mut last = 0;
                for p in points {
                    chunks.push(&bytes[last..p]);
                    last = p;
                }
                chunks.push(&bytes[last..]);
                let (whole_seen, whole) = decode(&[bytes]);
                let (seen, split) = decode(&chunks);
                prop_assert_eq!(split.clone(), whole.clone(), "{}", name);
                if whole.is_ok() {
                    prop_assert_eq!(seen, whole_seen);
                }
            }
        }
    }

    /// What a reply came to, as `tests/replies/*.expected` write it.
    #[cfg(not(target_arch = "wasm32"))]
    fn described(result: &Result<Completion, LlmError>) -> String {
        let mut out = String::new();
        match result {
            Err(e) => out.push_str(&format!("error: {e}\n")),
            Ok(c) => {
                out.push_str(&format!("content: {:?}\n", c.content));
                if let Some(reasoning) = &c.reasoning {
                    out.push_str(&format!("reasoning: {reasoning:?}\n"));
                }
                for call in &c.tool_calls {
                    out.push_str(&format!(
                        "call: id={:?} name={:?} arguments={:?}\n",
                        call.id, call.name, call.arguments
                    ));
                    if let Some(extra) = &call.extra {
                        out.push_str(&format!("  extra: {extra}\n"));
                    }
                }
            }
        }
        out
    }

    /// Every reply under `tests/replies/` (its README says which server
    /// sends it, and the evidence) decodes as its `.expected` says, in one
    /// chunk and in chunks of 1, 7 and 64 bytes.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn every_reply_decodes_as_expected() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replies");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".sse").map(str::to_string))
            .collect();
        names.sort();
        assert!(names.len() >= 20, "{names:?}");
        let update = std::env::var_os("PLANVAULT_UPDATE_REPLIES").is_some();
        let mut wrong = Vec::new();
        for name in names {
            let body = std::fs::read(dir.join(format!("{name}.sse"))).unwrap();
            let got = described(&decode(&[body.as_slice()]).1);
            for size in [1, 7, 64] {
                let chunks: Vec<&[u8]> = body.chunks(size).collect();
                assert_eq!(
                    described(&decode(&chunks).1),
                    got,
                    "{name} in chunks of {size}"
                );
            }
            let expected_path = dir.join(format!("{name}.expected"));
            if update {
                std::fs::write(&expected_path, &got).unwrap();
            }
            let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
            if got != expected {
                wrong.push(format!("{name}:\n--- expected\n{expected}--- got\n{got}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// llama.cpp's `llama-server` (0c1e570), recorded: a tool call whose
    /// arguments stop mid-string because the context filled up, then
    /// `finish_reason: "length"`. The call is not made; the reply is cut off.
    #[test]
    fn a_reply_cut_off_by_length_is_no_completion() {
        let body = include_bytes!("../tests/replies/llama-server-tool-call-cut-by-length.sse");
        for size in [1, 7, body.len()] {
            let chunks: Vec<&[u8]> = body.chunks(size).collect();
            let (_, result) = decode(&chunks);
            assert_eq!(
                result,
                Err(LlmError::CutOff {
                    url: "u".into(),
                    reason: "length".into()
                })
            );
        }
        let filtered = "data: {\"choices\":[{\"delta\":{\"content\":\"Hal\"},\"finish_reason\":\"content_filter\"}]}\n\ndata: [DONE]\n\n";
        let (seen, result) = decode(&[filtered.as_bytes()]);
        assert_eq!(seen, "Hal");
        assert!(
            matches!(result, Err(LlmError::CutOff { reason, .. }) if reason == "content_filter")
        );
    }

    /// llama-cpp-python's server (0.3.36), recorded: every chunk of a tool
    /// call repeats its whole name. One call of `fetch_url`, not
    /// `fetch_urlfetch_url…`.
    #[test]
    fn a_name_repeated_in_every_chunk_names_the_call_once() {
        let body = include_bytes!("../tests/replies/llama-cpp-python-name-in-every-chunk.sse");
        let (_, result) = decode(&[body.as_slice()]);
        let completion = result.unwrap();
        assert_eq!(completion.tool_calls.len(), 1);
        let call = &completion.tool_calls[0];
        assert_eq!(call.name, "fetch_url");
        assert!(call.id.starts_with("call__0_fetch_url_"), "{}", call.id);
        let arguments: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
        assert!(arguments["url"].is_string(), "{arguments}");
    }
}
