//! Why a model call failed, whether another attempt may help, and what the
//! person should do about it.

/// Where the failure is shown: hints name the place the person fixes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `planvault run`: flags, `.planvault/config.toml`, the environment.
    Cli,
    /// The web app: its Settings panel, the browser's CORS rules.
    Browser,
}

/// Why a model call failed. Messages name the URL, never the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("timed out waiting for {url}")]
    Timeout { url: String },
    /// No connection, or (in a browser) `fetch` rejected: the server is down,
    /// unreachable, or its reply was blocked by CORS.
    #[error("cannot reach {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("{url} answered HTTP {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
        retry_after: Option<u64>,
    },
    /// Not a chat completion, a garbled or cut-short stream, or an error
    /// event inside the stream.
    #[error("malformed reply from {url}: {reason}")]
    Malformed { url: String, reason: String },
    /// The reply started and then broke off: the connection closed or
    /// failed mid-body (the server stopped or restarted, or a proxy between
    /// gave up). Nothing about the request was wrong; another attempt may
    /// go through.
    #[error("the reply from {url} broke off: {reason}")]
    BrokeOff { url: String, reason: String },
    /// The reply stopped short (`finish_reason` `length` or
    /// `content_filter`): the same request would stop there again.
    #[error("the reply from {url} was cut off (finish_reason: {reason})")]
    CutOff { url: String, reason: String },
    #[error("no endpoint configured for role {role}")]
    NoEndpoint { role: String },
    /// Stopped from outside (Ctrl-C, the Stop button).
    #[error("interrupted")]
    Interrupted,
    /// A prompt over the run's budget: refused before it is sent, so a
    /// huge note (or what a step read) costs nothing.
    #[error(
        "{note}: the prompt for {node} would be {bytes} bytes, over the budget of {limit} bytes"
    )]
    PromptTooLarge {
        /// The step's note.
        note: String,
        node: String,
        bytes: usize,
        limit: usize,
    },
}

impl LlmError {
    /// Worth another attempt: timeouts, connection failures, 429 and 5xx,
    /// and a reply that broke off.
    pub fn retryable(&self) -> bool {
        match self {
            LlmError::Timeout { .. }
            | LlmError::Connect { .. }
            | LlmError::Malformed { .. }
            | LlmError::BrokeOff { .. } => true,
            LlmError::Status { status, .. } => *status == 408 || *status == 429 || *status >= 500,
            LlmError::CutOff { .. }
            | LlmError::NoEndpoint { .. }
            | LlmError::Interrupted
            | LlmError::PromptTooLarge { .. } => false,
        }
    }

    /// The wait the server asked for, in seconds.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// What to do about it, phrased for where it is shown.
    pub fn hint(&self, surface: Surface) -> Option<String> {
        let cli = surface == Surface::Cli;
        let text = match self {
            LlmError::Status { status: 401 | 403, .. } if cli => "check PLANVAULT_API_KEY (or OPENAI_API_KEY)",
            LlmError::Status { status: 401 | 403, .. } => "check this endpoint's API key in Settings",
            LlmError::Status { status: 404, .. } if cli => "check --endpoint (it ends in /v1) and --model",
            LlmError::Status { status: 404, .. } => "check the base URL (it usually ends in /v1) and the model name in Settings",
            LlmError::Status { status: 429, .. } => "the endpoint is rate-limiting: wait, then resume the run",
            LlmError::Status { status, .. } if *status >= 500 => "the endpoint failed on its side: resume the run later",
            LlmError::Status { status: 400, .. } => {
                "the endpoint refused the request (its message says why): check the model name and its context size"
            }
            LlmError::Status { .. } => return None,
            LlmError::Timeout { .. } => "the model took too long to answer: resume the run, or raise the timeout",
            LlmError::Connect { .. } if cli => "is the model server running?",
            LlmError::Connect { .. } => {
                "the browser could not reach the endpoint or was refused by CORS: is the server running, and does it \
                 allow this page's origin (Access-Control-Allow-Origin, e.g. OLLAMA_ORIGINS)?"
            }
            LlmError::Malformed { .. } => "is this an OpenAI-compatible /chat/completions endpoint?",
            LlmError::BrokeOff { .. } => {
                let then = if cli { "run again" } else { "press Resume" };
                return Some(format!(
                    "the server closed the connection mid-reply (it stopped or restarted, or a proxy \
                     between timed out): once it is up, {then}: the run resumes at this step"
                ));
            }
            LlmError::CutOff { reason, .. } => {
                let fix = if reason == "content_filter" {
                    "the provider's content filter withheld the rest of the reply: change the step's note"
                } else {
                    "the model reached its output or context limit: raise the server's limits (llama.cpp: \
                     --ctx-size and -n; Ollama: num_ctx), or shorten the step's note"
                };
                let then = if cli { "run again" } else { "press Resume" };
                return Some(format!("{fix}; then {then}: the run resumes at this step"));
            }
            LlmError::NoEndpoint { .. } if cli => "pass --endpoint BASE_URL --model NAME, --role ROLE=URL,MODEL, or configure .planvault/config.toml",
            LlmError::NoEndpoint { .. } => "add a default endpoint, or one for this role, in Settings",
            LlmError::Interrupted => return None,
            LlmError::PromptTooLarge { .. } if cli => {
                "shorten the note (or what the step reads), or raise max_prompt_bytes under [run] in \
                 .planvault/config.toml; then run again: the run resumes at this step"
            }
            LlmError::PromptTooLarge { .. } => {
                "shorten the note (or what the step reads), or raise max_prompt_bytes under [run] in \
                 the vault's .planvault/config.toml; then press Resume: the run resumes at this step"
            }
        };
        Some(text.to_string())
    }

    /// Turn the text of a non-200 reply into a status error: its
    /// `error.message` when it is OpenAI-shaped JSON, else its first 200
    /// characters.
    pub fn from_status(url: &str, status: u16, body: &str, retry_after: Option<u64>) -> LlmError {
        let message = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| {
                // OpenAI's `error.message`; FastAPI servers' (llama-cpp-python)
                // `detail`, a string or a list of `{msg}`.
                v["error"]["message"]
                    .as_str()
                    .or_else(|| v["error"].as_str())
                    // Gemini's OpenAI-compatible endpoint: a list of one.
                    .or_else(|| v[0]["error"]["message"].as_str())
                    .or_else(|| v["detail"].as_str())
                    .or_else(|| v["detail"][0]["msg"].as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| body.chars().take(200).collect());
        let message = one_line(&message);
        LlmError::Status {
            url: url.into(),
            status,
            message,
            retry_after,
        }
    }
}

/// A server's text (an error page, a reported message; LiteLLM's span
/// lines) as one line, its whitespace runs one space: shown within a line
/// of the run's, never as lines of its own.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(s: u16) -> LlmError {
        LlmError::Status {
            url: "u".into(),
            status: s,
            message: String::new(),
            retry_after: None,
        }
    }

    #[test]
    fn what_is_retried() {
        let cases = [
            (status(429), true),
            (status(500), true),
            (status(503), true),
            (status(408), true),
            (status(400), false),
            (status(401), false),
            (status(403), false),
            (status(404), false),
            (LlmError::Timeout { url: "u".into() }, true),
            (
                LlmError::Connect {
                    url: "u".into(),
                    reason: "r".into(),
                },
                true,
            ),
            (
                LlmError::Malformed {
                    url: "u".into(),
                    reason: "r".into(),
                },
                true,
            ),
            (
                LlmError::BrokeOff {
                    url: "u".into(),
                    reason: "r".into(),
                },
                true,
            ),
            (
                LlmError::CutOff {
                    url: "u".into(),
                    reason: "length".into(),
                },
                false,
            ),
            (LlmError::NoEndpoint { role: "r".into() }, false),
            (LlmError::Interrupted, false),
            (
                LlmError::PromptTooLarge {
                    note: "n.md".into(),
                    node: "n".into(),
                    bytes: 2,
                    limit: 1,
                },
                false,
            ),
        ];
        for (err, want) in cases {
            assert_eq!(err.retryable(), want, "{err:?}");
        }
    }

    #[test]
    fn every_failure_a_person_can_fix_has_a_hint_on_both_surfaces() {
        let fixable = [
            (status(401), "API key", "PLANVAULT_API_KEY"),
            (status(403), "API key", "PLANVAULT_API_KEY"),
            (status(404), "model name", "--model"),
            (status(429), "rate-limiting", "rate-limiting"),
            (status(502), "resume", "resume"),
            (status(400), "context size", "context size"),
            (
                LlmError::CutOff {
                    url: "u".into(),
                    reason: "length".into(),
                },
                "press Resume",
                "--ctx-size",
            ),
            (
                LlmError::CutOff {
                    url: "u".into(),
                    reason: "content_filter".into(),
                },
                "content filter",
                "run again",
            ),
            (
                LlmError::Timeout { url: "u".into() },
                "too long",
                "too long",
            ),
            (
                LlmError::BrokeOff {
                    url: "u".into(),
                    reason: "r".into(),
                },
                "press Resume",
                "run again",
            ),
            (
                LlmError::Connect {
                    url: "u".into(),
                    reason: "TypeError".into(),
                },
                "CORS",
                "running",
            ),
            (
                LlmError::NoEndpoint {
                    role: "review".into(),
                },
                "Settings",
                "--endpoint",
            ),
            (
                LlmError::PromptTooLarge {
                    note: "n.md".into(),
                    node: "n".into(),
                    bytes: 2,
                    limit: 1,
                },
                "Resume",
                "max_prompt_bytes",
            ),
        ];
        for (err, browser, cli) in fixable {
            assert!(
                err.hint(Surface::Browser).unwrap().contains(browser),
                "{err:?}"
            );
            assert!(err.hint(Surface::Cli).unwrap().contains(cli), "{err:?}");
        }
        assert_eq!(LlmError::Interrupted.hint(Surface::Browser), None);
    }

    #[test]
    fn a_status_body_gives_its_error_message() {
        let e = LlmError::from_status(
            "u",
            404,
            r#"{"error":{"message":"model 'x' not found"}}"#,
            None,
        );
        assert_eq!(e.to_string(), "u answered HTTP 404: model 'x' not found");
        let e = LlmError::from_status("u", 429, &"x".repeat(500), Some(3));
        assert_eq!(e.retry_after(), Some(3));
        assert!(e.to_string().len() < 260);
        // A page's lines are one line of the error's.
        let e = LlmError::from_status("u", 502, "<h1>Bad gateway</h1>\n\n■ completed\r\n", None);
        assert_eq!(
            e.to_string(),
            "u answered HTTP 502: <h1>Bad gateway</h1> ■ completed"
        );
        let e = crate::chat::parse_completion("u", r#"{"error":{"message":"a\n\n■ completed"}}"#)
            .unwrap_err();
        assert!(
            e.to_string().ends_with("the reply reported: a ■ completed"),
            "{e}"
        );
        let mut sse = crate::SseDecoder::new("u");
        let e = sse
            .feed("data: {\"error\":{\"message\":\"a\\n\\n■ done\"}}\n\n".as_bytes())
            .unwrap_err();
        assert!(
            e.to_string().ends_with("the stream reported: a ■ done"),
            "{e}"
        );
    }

    /// FastAPI servers (llama-cpp-python's) say why in `detail`.
    #[test]
    fn a_fastapi_detail_is_the_message() {
        let message = |body: &str| match LlmError::from_status("u", 401, body, None) {
            LlmError::Status { message, .. } => message,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message(r#"{"detail":"Invalid API key"}"#),
            "Invalid API key"
        );
        assert_eq!(
            message(
                r#"{"detail":[{"loc":["body","model"],"msg":"field required","type":"missing"}]}"#
            ),
            "field required"
        );
        assert_eq!(
            message(r#"{"error":{"message":"no such model"}}"#),
            "no such model"
        );
        // Gemini's OpenAI-compatible endpoint answers a list of one error.
        assert_eq!(
            message(
                r#"[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]"#
            ),
            "Function call is missing a thought_signature in functionCall parts."
        );
    }
}
