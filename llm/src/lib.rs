//! What every planvault runner that talks to an OpenAI-compatible endpoint
//! shares, without doing any I/O itself: the chat-completions request body,
//! an incremental SSE decoder, the non-streamed completion, typed failures
//! with a hint for each, the retry backoff, and the catalog of tools a node
//! may offer the model.
//!
//! The native CLI feeds it bytes read with `ureq`; the browser worker feeds
//! it chunks of a `fetch` body stream. Neither the API key nor anything
//! derived from it ever passes through this crate: a caller sets the
//! `Authorization` header itself.

#![forbid(unsafe_code)]

pub mod backoff;
pub mod chat;
pub mod error;
pub mod mcp;
pub mod sse;
pub mod tools;

pub use backoff::{backoff_ms, parse_retry_after, MAX_BACKOFF_MS};
pub use chat::{
    assistant_turn, chat_body, chat_url, messages_json, parse_completion, tool_turn, Completion,
    ToolCall, MAX_REPLY_BYTES, MAX_TOOL_ROUNDS,
};
pub use error::{LlmError, Surface};
pub use sse::{SseDecoder, StreamEvent};
