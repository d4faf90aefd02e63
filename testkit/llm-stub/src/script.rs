//! The script: ordered replies, each optionally matched on the request, each
//! serving a bounded number of requests.

use serde::{Deserialize, Serialize};

/// A whole script file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Tried in order; the first one that matches and is not used up serves.
    #[serde(default)]
    pub replies: Vec<Reply>,
    /// Served when no reply matches. Without it the server answers 404 with
    /// an error naming the request.
    #[serde(default)]
    pub default: Option<Reply>,
}

/// One scripted reply.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Which requests this reply may serve (all of the conditions).
    #[serde(default, rename = "match")]
    pub matcher: Match,
    /// The assistant's text.
    #[serde(default)]
    pub content: String,
    /// HTTP status; anything but 200 answers `{"error": {...}}`.
    #[serde(default = "ok")]
    pub status: u16,
    /// `Retry-After` seconds on an error reply.
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// Wait this long before answering at all.
    #[serde(default)]
    pub delay_ms: u64,
    /// Streaming: wait this long between chunks.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// Streaming: characters per chunk (default 8).
    #[serde(default)]
    pub chunk_chars: Option<usize>,
    /// Streaming: close the connection after this many characters of the
    /// content, before any `finish_reason` (a server that died mid-reply).
    #[serde(default)]
    pub break_after_chars: Option<usize>,
    /// Send this body verbatim (a malformed reply) instead of a completion.
    #[serde(default)]
    pub raw: Option<String>,
    /// How many requests this reply serves; `null`/absent means once,
    /// `0` means without limit.
    #[serde(default)]
    pub times: Option<u32>,
    /// Function calls the assistant makes instead of (or before) answering.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
}

impl Reply {
    /// A 200 answer of `content`, once, to a request one of whose messages
    /// contains `contains`.
    pub fn when(contains: &str, content: &str) -> Reply {
        Reply {
            matcher: Match {
                contains: Some(contains.into()),
                ..Match::default()
            },
            content: content.into(),
            status: 200,
            ..Reply::default()
        }
    }
}

/// One scripted function call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub name: String,
    /// The arguments object (sent to the client as a JSON string).
    #[serde(default)]
    pub arguments: serde_json::Value,
}

fn ok() -> u16 {
    200
}

/// Conditions on a request; an absent condition always holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// Some message's content contains this text.
    #[serde(default)]
    pub contains: Option<String>,
    /// The last message's content contains this text.
    #[serde(default)]
    pub last_contains: Option<String>,
    /// The request names this model.
    #[serde(default)]
    pub model: Option<String>,
    /// The request asks (or does not ask) for streaming.
    #[serde(default)]
    pub stream: Option<bool>,
}

impl Match {
    pub fn holds(&self, request: &serde_json::Value) -> bool {
        let messages: Vec<&str> = request["messages"]
            .as_array()
            .map(|m| m.iter().filter_map(|m| m["content"].as_str()).collect())
            .unwrap_or_default();
        if let Some(text) = &self.contains {
            if !messages.iter().any(|m| m.contains(text.as_str())) {
                return false;
            }
        }
        if let Some(text) = &self.last_contains {
            if !messages.last().is_some_and(|m| m.contains(text.as_str())) {
                return false;
            }
        }
        if let Some(model) = &self.model {
            if request["model"].as_str() != Some(model) {
                return false;
            }
        }
        if let Some(stream) = self.stream {
            if request["stream"].as_bool().unwrap_or(false) != stream {
                return false;
            }
        }
        true
    }
}
