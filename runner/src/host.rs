//! What the driver needs from the world. Every path is vault-relative with
//! `/` separators.

use planvault_llm::LlmError;
use planvault_protocol::FromWorker;

/// A vault read or write that failed (permission, quota, a vanished folder).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct HostError {
    pub path: String,
    pub message: String,
}

impl HostError {
    pub fn new(path: &str, message: impl Into<String>) -> Self {
        HostError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The head of an HTTP reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HttpHead {
    pub status: u16,
    /// Lower-cased.
    pub content_type: String,
    /// `Retry-After` in seconds.
    pub retry_after: Option<u64>,
}

#[allow(async_fn_in_trait)]
pub trait Host {
    /// A reply body being read.
    type Body;

    /// Every file of the vault outside dot-folders.
    async fn list(&self) -> Result<Vec<String>, HostError>;
    /// A file's text; `None` when it does not exist.
    async fn read(&self, path: &str) -> Result<Option<String>, HostError>;
    /// Create or replace a file (and its folders).
    async fn write(&self, path: &str, text: &str) -> Result<(), HostError>;
    /// Append to a file (creating it), durably before returning.
    async fn append(&self, path: &str, text: &str) -> Result<(), HostError>;
    /// Remove a file; a missing one is fine.
    async fn remove(&self, path: &str) -> Result<(), HostError>;

    /// POST `body` (JSON) to `url`, the key only as `Authorization: Bearer`.
    /// `timeout_ms` bounds the wait for the reply's head; a Stop aborts it
    /// ([`LlmError::Interrupted`]).
    async fn post_json(
        &self,
        url: &str,
        api_key: Option<&str>,
        body: &str,
        timeout_ms: u32,
    ) -> Result<(HttpHead, Self::Body), LlmError>;
    /// The next chunk of a body; `None` at its end.
    async fn read_chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, LlmError>;
    /// GET a URL's text (the `fetch_url` tool); errors as text for the model.
    async fn fetch_text(&self, url: &str) -> Result<String, String>;

    async fn sleep(&self, ms: u32);
    /// Milliseconds on a monotonic clock.
    fn now_ms(&self) -> f64;
    /// Post a message to the app.
    fn post(&self, message: &FromWorker);
}
