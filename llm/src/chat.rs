//! The chat-completions request and the non-streamed reply.

use crate::LlmError;
use planvault_core::engine::{Message, Role};
use serde_json::{json, Value};

/// Rounds of tool calls one node's work may take before it must answer.
pub const MAX_TOOL_ROUNDS: usize = 8;

/// Tool calls one reply may make, streamed or not: those past it are not
/// made (a streamed reply's later ones run together in the last).
pub const MAX_TOOL_CALLS: usize = 64;

/// The most bytes one reply may carry, streamed or not: past it the reply
/// is refused, so an endless stream cannot fill the memory.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// Whether a `finish_reason` says the reply is not whole: the model ran
/// into its output or context limit (`length`), or the provider withheld the
/// rest (`content_filter`). Such a reply is neither a step's work nor a call
/// to make: its tool arguments may stop mid-string.
pub fn cut_off(finish_reason: &str) -> bool {
    matches!(finish_reason, "length" | "content_filter")
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text, maybe invalid).
    pub arguments: String,
    /// What the server attached to the call for itself, to be sent back
    /// with it (`extra_content`: Gemini 3's `thought_signature`, without
    /// which it refuses the next request).
    pub extra: Option<Value>,
}

/// One assistant turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// The model's reasoning as the server gave it apart
    /// (`reasoning_content`: DeepSeek's thinking mode, which refuses a
    /// tool-call turn sent back without it).
    pub reasoning: Option<String>,
}

/// `BASE/chat/completions` (a trailing slash on the base is dropped).
pub fn chat_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

/// The engine's messages as chat-completions JSON.
pub fn messages_json(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": m.content})
        })
        .collect()
}

/// The request body; `tools` are function schemas ([`crate::tools::schema`]).
pub fn chat_body(model: &str, messages: &[Value], tools: &[Value], stream: bool) -> Value {
    let mut body = json!({"model": model, "messages": messages, "stream": stream});
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools.to_vec());
    }
    body
}

/// The assistant turn that asked for tools, as it goes back into the
/// conversation: with what the server attached for itself (a call's
/// `extra_content`, the turn's `reasoning_content`), only where it did.
pub fn assistant_turn(completion: &Completion) -> Value {
    let calls: Vec<Value> = completion
        .tool_calls
        .iter()
        .map(|c| {
            let mut call = json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}});
            if let Some(extra) = &c.extra {
                call["extra_content"] = extra.clone();
            }
            call
        })
        .collect();
    let mut turn = json!({"role": "assistant", "content": completion.content, "tool_calls": calls});
    if let Some(reasoning) = &completion.reasoning {
        turn["reasoning_content"] = Value::String(reasoning.clone());
    }
    turn
}

/// A call's `extra_content`, where the server attached one.
pub(crate) fn extra_content(call: &Value) -> Option<Value> {
    call.get("extra_content").filter(|v| !v.is_null()).cloned()
}

/// Calls as the conversation needs them: each with an id (a server that
/// gave none gets `call_N`, so its result can answer it), none a fragment
/// that never got a name, arguments or id (a gateway counting from 1).
pub(crate) fn complete_calls(calls: &mut Vec<ToolCall>) {
    calls.retain(|c| !(c.id.is_empty() && c.name.is_empty() && c.arguments.is_empty()));
    for (i, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = format!("call_{i}");
        }
    }
}

/// A tool's result, answering the call `id`.
pub fn tool_turn(id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": content})
}

/// A non-streamed reply (`application/json`): `choices[0].message`.
pub fn parse_completion(url: &str, body: &str) -> Result<Completion, LlmError> {
    let value: Value = serde_json::from_str(body).map_err(|e| LlmError::Malformed {
        url: url.into(),
        reason: e.to_string(),
    })?;
    if let Some(message) = value["error"]["message"].as_str() {
        return Err(LlmError::Malformed {
            url: url.into(),
            reason: format!("the reply reported: {}", crate::error::one_line(message)),
        });
    }
    if let Some(reason) = value["choices"][0]["finish_reason"]
        .as_str()
        .filter(|r| cut_off(r))
    {
        return Err(LlmError::CutOff {
            url: url.into(),
            reason: reason.into(),
        });
    }
    let message = &value["choices"][0]["message"];
    if !message.is_object() {
        return Err(LlmError::Malformed {
            url: url.into(),
            reason: "no choices[0].message".into(),
        });
    }
    let tool_calls = message["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .take(MAX_TOOL_CALLS)
                .map(|c| ToolCall {
                    id: c["id"].as_str().unwrap_or_default().into(),
                    name: c["function"]["name"].as_str().unwrap_or_default().into(),
                    arguments: c["function"]["arguments"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                    extra: extra_content(c),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut completion = Completion {
        content: message["content"].as_str().unwrap_or_default().to_string(),
        tool_calls,
        reasoning: message["reasoning_content"].as_str().map(str::to_string),
    };
    complete_calls(&mut completion.tool_calls);
    Ok(completion)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_carries_model_messages_stream_and_only_offered_tools() {
        let messages = messages_json(&[
            Message::new(Role::System, "s"),
            Message::new(Role::User, "u"),
        ]);
        let body = chat_body("m", &messages, &[], true);
        assert_eq!(
            body,
            json!({"model": "m", "stream": true, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]})
        );
        let with = chat_body("m", &messages, &[crate::tools::schema("read_note")], false);
        assert_eq!(with["tools"][0]["function"]["name"], "read_note");
        assert_eq!(chat_url("http://h/v1/"), "http://h/v1/chat/completions");
    }

    /// A reply asking for a thousand calls makes as many as a streamed one
    /// may: [`MAX_TOOL_CALLS`].
    #[test]
    fn a_json_completion_makes_at_most_the_calls_a_streamed_one_may() {
        let call =
            r#"{"id":"c","type":"function","function":{"name":"fetch_url","arguments":"{}"}}"#;
        let calls = vec![call; 1000].join(",");
        let body = format!(r#"{{"choices":[{{"message":{{"tool_calls":[{calls}]}}}}]}}"#);
        let c = parse_completion("u", &body).unwrap();
        assert_eq!(c.tool_calls.len(), MAX_TOOL_CALLS);
        let mut sse = crate::SseDecoder::new("u");
        for i in 0..1000 {
            let chunk = format!(
                "data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"c{i}\",\"function\":{{\"name\":\"fetch_url\",\"arguments\":\"\"}}}}]}}}}]}}\n\n"
            );
            sse.feed(chunk.as_bytes()).unwrap();
        }
        sse.feed(b"data: [DONE]\n\n").unwrap();
        assert_eq!(sse.finish().unwrap().tool_calls.len(), MAX_TOOL_CALLS);
    }

    #[test]
    fn a_json_completion_is_read_with_its_tool_calls() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"list_notes","arguments":"{}"}}]}}]}"#;
        let c = parse_completion("u", body).unwrap();
        assert_eq!(
            c.tool_calls,
            vec![ToolCall {
                id: "c1".into(),
                name: "list_notes".into(),
                arguments: "{}".into(),
                extra: None,
            }]
        );
        assert_eq!(
            assistant_turn(&c)["tool_calls"][0]["function"]["name"],
            "list_notes"
        );
        assert_eq!(
            parse_completion("u", r#"{"choices":[{"message":{"content":"hi"}}]}"#)
                .unwrap()
                .content,
            "hi"
        );
        for bad in ["{", "{}", r#"{"error":{"message":"overloaded"}}"#] {
            assert!(
                matches!(parse_completion("u", bad), Err(LlmError::Malformed { .. })),
                "{bad}"
            );
        }
    }
}
