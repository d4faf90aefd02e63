//! The browser host's network path for real: `fetch` with a streamed body,
//! `Retry-After`, the timeout and Stop through `AbortController`, against
//! `testkit/llm-stub` (CORS on) from a dedicated worker in headless Chromium,
//! the vault in an OPFS folder. The stub's URL is fixed at compile time:
//!
//! ```text
//! cargo run -p planvault-llm-stub -- --script worker/tests/stub-script.json --port 38555 &
//! PLANVAULT_STUB_URL=http://127.0.0.1:38555/v1 WASM_BINDGEN_USE_BROWSER=1 \
//!   CHROMEDRIVER=/usr/bin/chromedriver scripts/wasm-env cargo test \
//!   --target wasm32-unknown-unknown -p planvault-worker --test browser_stub
//! ```
//!
//! Without `PLANVAULT_STUB_URL` at build time each test fails, saying so: a
//! network test that passes without running proves nothing. `scripts/test
//! wasm-tests` starts the stub and sets it.
#![cfg(target_arch = "wasm32")]

use planvault_core::engine::{Autonomy, FinishReason};
use planvault_llm::LlmError;
use planvault_protocol::{
    Endpoint, Endpoints, ErrorCode, FromWorker, RetryPolicy, RunMode, StartRun, ToWorker,
};
use planvault_worker::browser::BrowserHost;
use planvault_worker::host::{Host, HostError, HttpHead};
use planvault_worker::{run, Inbox};
use std::cell::RefCell;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{
    DedicatedWorkerGlobalScope, FileSystemDirectoryHandle, FileSystemGetDirectoryOptions,
};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// The stub's URL, fixed when this file was built.
fn stub_url() -> &'static str {
    match option_env!("PLANVAULT_STUB_URL") {
        Some(url) => url,
        None => panic!(
            "PLANVAULT_STUB_URL was not set when this test was built: start \
             testkit/llm-stub and set it (see this file's docs), or run \
             `scripts/test wasm-tests`"
        ),
    }
}
const KEY: &str = "sk-browser-test-42";

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

async fn folder(name: &str) -> FileSystemDirectoryHandle {
    let root: FileSystemDirectoryHandle =
        JsFuture::from(scope().navigator().storage().get_directory())
            .await
            .unwrap()
            .unchecked_into();
    let options = web_sys::FileSystemRemoveOptions::new();
    options.set_recursive(true);
    let _ = JsFuture::from(root.remove_entry_with_options(name, &options)).await;
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(true);
    JsFuture::from(root.get_directory_handle_with_options(name, &options))
        .await
        .unwrap()
        .unchecked_into()
}

/// The real browser host, with posted messages kept, and a Stop sent (as
/// the worker's message handler does: inbox + abort) at the first `Delta`
/// when asked.
struct Recording {
    host: BrowserHost,
    inbox: Inbox,
    posted: RefCell<Vec<FromWorker>>,
    stop_at_first_delta: bool,
}

impl Host for Recording {
    type Body = <BrowserHost as Host>::Body;
    async fn list(&self) -> Result<Vec<String>, HostError> {
        self.host.list().await
    }
    async fn read(&self, path: &str) -> Result<Option<String>, HostError> {
        self.host.read(path).await
    }
    async fn write(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.host.write(path, text).await
    }
    async fn append(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.host.append(path, text).await
    }
    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.host.remove(path).await
    }
    async fn post_json(
        &self,
        url: &str,
        key: Option<&str>,
        body: &str,
        timeout_ms: u32,
    ) -> Result<(HttpHead, Self::Body), LlmError> {
        self.host.post_json(url, key, body, timeout_ms).await
    }
    async fn read_chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, LlmError> {
        self.host.read_chunk(body).await
    }
    async fn fetch_text(&self, url: &str) -> Result<String, String> {
        self.host.fetch_text(url).await
    }
    async fn sleep(&self, ms: u32) {
        self.host.sleep(ms).await
    }
    fn now_ms(&self) -> f64 {
        self.host.now_ms()
    }
    fn post(&self, message: &FromWorker) {
        let first_delta = matches!(message, FromWorker::Delta { .. })
            && !self
                .posted
                .borrow()
                .iter()
                .any(|m| matches!(m, FromWorker::Delta { .. }));
        self.posted.borrow_mut().push(message.clone());
        if self.stop_at_first_delta && first_delta {
            self.inbox.push(ToWorker::Stop);
            self.host.abort();
        }
    }
}

async fn example(name: &str, inbox: &Inbox, stop_at_first_delta: bool) -> Recording {
    let host = BrowserHost::new(
        folder(name).await,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    for (path, text) in [
        (
            "draft.md",
            include_str!("../../static/example-vault/draft.md"),
        ),
        (
            "review.md",
            include_str!("../../static/example-vault/review.md"),
        ),
        (
            "send.md",
            include_str!("../../static/example-vault/send.md"),
        ),
    ] {
        host.write(path, text).await.unwrap();
    }
    Recording {
        host,
        inbox: inbox.clone(),
        posted: RefCell::new(Vec::new()),
        stop_at_first_delta,
    }
}

fn start(base_url: &str, query: &str, attempts: u32, timeout_ms: u32) -> StartRun {
    let endpoint = Endpoint {
        base_url: base_url.into(),
        model: "stub".into(),
        api_key: Some(KEY.into()),
    };
    StartRun {
        query: query.into(),
        mode: RunMode::Model {
            endpoints: Endpoints {
                default: Some(endpoint),
                roles: Default::default(),
            },
        },
        fresh: true,
        max_steps: 20,
        autonomy: Autonomy::Full,
        breakpoints: vec![],
        run_to: None,
        max_prompt_bytes: None,
        retry: RetryPolicy {
            attempts,
            base_delay_ms: 10,
            timeout_ms,
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

fn finished(host: &Recording) -> (FinishReason, Option<planvault_protocol::RunError>) {
    match host.posted.borrow().last() {
        Some(FromWorker::Finished { reason, error, .. }) => (reason.clone(), error.clone()),
        other => panic!("not finished: {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn the_example_vault_runs_against_the_stub_with_streamed_tokens_and_a_retried_429() {
    let url = stub_url();
    let inbox = Inbox::new();
    let host = example("pv-stub-run", &inbox, false).await;
    assert_eq!(
        run(&host, &inbox, start(url, "invite the team", 3, 10_000)).await,
        Some(FinishReason::Completed)
    );
    let posted = host.posted.borrow().clone();
    assert!(posted.iter().any(
        |m| matches!(m, FromWorker::Retrying { error, .. } if error.code == ErrorCode::RateLimited)
    ));
    let deltas = posted
        .iter()
        .filter(|m| matches!(m, FromWorker::Delta { node, .. } if node == "draft"))
        .count();
    assert!(deltas > 1, "tokens arrive as they stream ({deltas} deltas)");
    let draft = host
        .host
        .read("00_plan-trace/draft.visit-1.md")
        .await
        .unwrap()
        .unwrap();
    assert!(
        draft.contains("Dear team, the review is on Friday at ten."),
        "{draft}"
    );
    assert!(host
        .host
        .read("send.md")
        .await
        .unwrap()
        .unwrap()
        .contains("status: done"));
    for path in host.host.list().await.unwrap() {
        assert!(
            !host.host.read(&path).await.unwrap().unwrap().contains(KEY),
            "{path}"
        );
    }
    assert!(!posted
        .iter()
        .any(|m| serde_json::to_string(m).unwrap().contains(KEY)));
}

#[wasm_bindgen_test]
async fn a_stop_aborts_the_stream_and_a_silent_or_stalled_endpoint_times_out() {
    let url = stub_url();
    let inbox = Inbox::new();
    let host = example("pv-stub-stop", &inbox, true).await;
    let reason = run(&host, &inbox, start(url, "SLOW", 1, 10_000)).await;
    assert!(
        matches!(reason, Some(FinishReason::Stopped { .. })),
        "{reason:?}"
    );
    assert!(host
        .host
        .read("draft.md")
        .await
        .unwrap()
        .unwrap()
        .contains("status: active"));
    assert_eq!(
        host.host.read("00_plan-trace/journal.jsonl").await.unwrap(),
        None
    );

    let inbox = Inbox::new();
    let host = example("pv-stub-hang", &inbox, false).await;
    let reason = run(&host, &inbox, start(url, "HANG", 1, 400)).await;
    assert!(
        matches!(reason, Some(FinishReason::Interrupted { .. })),
        "{reason:?}"
    );
    assert_eq!(finished(&host).1.unwrap().code, ErrorCode::Timeout);

    // A stream whose head came but whose chunks stall is cut off the same way.
    let inbox = Inbox::new();
    let host = example("pv-stub-stall", &inbox, false).await;
    let reason = run(&host, &inbox, start(url, "STALL", 1, 600)).await;
    assert!(
        matches!(reason, Some(FinishReason::Interrupted { .. })),
        "{reason:?}"
    );
    assert_eq!(finished(&host).1.unwrap().code, ErrorCode::Timeout);

    // A server that goes away mid-reply: the reply broke off, resumably.
    let inbox = Inbox::new();
    let host = example("pv-stub-break", &inbox, false).await;
    let reason = run(&host, &inbox, start(url, "BREAK", 1, 5_000)).await;
    assert!(
        matches!(reason, Some(FinishReason::Interrupted { .. })),
        "{reason:?}"
    );
    let error = finished(&host).1.unwrap();
    assert_eq!(error.code, ErrorCode::MalformedReply);
    assert!(
        error
            .message
            .starts_with(&format!("the reply from {url}/chat/completions broke off")),
        "{error:?}"
    );
    assert!(
        error
            .hint
            .as_deref()
            .unwrap_or_default()
            .contains("press Resume"),
        "{error:?}"
    );
}

/// `fetch_url` reads a page the vault allows (here the stub's 127.0.0.1),
/// its first megabyte when it is bigger, and follows no redirect: the
/// browser would reach the target (here `localhost`, which the policy
/// refuses) before it could be checked.
#[wasm_bindgen_test]
async fn fetch_url_reads_an_allowed_page_and_follows_no_redirect() {
    let origin = stub_url().trim_end_matches("/v1");
    let port = origin.rsplit(':').next().unwrap();
    let inbox = Inbox::new();
    let host = example("pv-stub-fetch", &inbox, false).await;
    host.host.set_fetch_allow(vec!["127.0.0.1".into()]);
    let page = format!("{origin}/__stub/page");
    assert_eq!(
        host.fetch_text(&page).await.as_deref(),
        Ok("a page from the stub")
    );
    let target = format!("http://localhost:{port}/__stub/page");
    let refused = host.fetch_text(&target).await.unwrap_err();
    assert!(refused.contains("public hosts"), "{refused}");
    let redirect = format!("{origin}/__stub/redirect?to={target}");
    let err = host.fetch_text(&redirect).await.unwrap_err();
    assert!(err.contains("follows no redirect"), "{err}");
    // A page over the read limit gives its first part, as in the terminal.
    let big = host
        .fetch_text(&format!("{origin}/__stub/page?bytes=3000000"))
        .await
        .unwrap();
    assert_eq!(big.len(), planvault_llm::tools::FETCH_LIMIT_BYTES);
}
