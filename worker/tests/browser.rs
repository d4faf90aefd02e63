//! The browser host in headless Chromium, inside a dedicated worker like the
//! real one: the vault through a directory handle (an OPFS folder stands in
//! for a picked folder: same `FileSystemDirectoryHandle` API), `fetch`
//! failures, and a whole chain run with its per-hop cost printed for
//! BENCHMARKS.md. Run: `scripts/wasm-env cargo test --target
//! wasm32-unknown-unknown -p planvault-worker --test browser` (with
//! `WASM_BINDGEN_USE_BROWSER=1`, `CHROMEDRIVER`).
#![cfg(target_arch = "wasm32")]

use planvault_core::engine::FinishReason;
use planvault_llm::LlmError;
use planvault_protocol::{ErrorCode, FromWorker, StartRun};
use planvault_runner::lock::LOCK_FILE;
use planvault_worker::browser::{put_back_cut_off_call, start_run, web_lock, BrowserHost};
use planvault_worker::host::{Host, HostError, HttpHead};
use planvault_worker::memory::{chain_vault, short_reply, MemoryHost};
use planvault_worker::{run, Inbox};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use web_sys::{
    DedicatedWorkerGlobalScope, FileSystemDirectoryHandle, FileSystemGetDirectoryOptions,
};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn now() -> f64 {
    scope()
        .performance()
        .map(|p| p.now())
        .unwrap_or_else(js_sys::Date::now)
}

/// A fresh, empty folder in the origin-private file system.
async fn folder(name: &str) -> FileSystemDirectoryHandle {
    let root: FileSystemDirectoryHandle =
        JsFuture::from(scope().navigator().storage().get_directory())
            .await
            .unwrap()
            .unchecked_into();
    let _ = JsFuture::from(root.remove_entry_with_options(name, &{
        let o = web_sys::FileSystemRemoveOptions::new();
        o.set_recursive(true);
        o
    }))
    .await;
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(true);
    JsFuture::from(root.get_directory_handle_with_options(name, &options))
        .await
        .unwrap()
        .unchecked_into()
}

#[wasm_bindgen_test]
async fn the_vault_handle_reads_writes_appends_lists_and_removes() {
    let host = BrowserHost::new(
        folder("pv-host-test").await,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    assert_eq!(host.read("a.md").await.unwrap(), None);
    host.write("a.md", "one").await.unwrap();
    host.write("a.md", "two").await.unwrap();
    assert_eq!(host.read("a.md").await.unwrap().as_deref(), Some("two"));
    host.append("00_plan-trace/journal.jsonl", "x\n")
        .await
        .unwrap();
    host.append("00_plan-trace/journal.jsonl", "y\n")
        .await
        .unwrap();
    assert_eq!(
        host.read("00_plan-trace/journal.jsonl")
            .await
            .unwrap()
            .as_deref(),
        Some("x\ny\n")
    );
    host.write("deep/er/b.md", "é ✓").await.unwrap();
    host.write(".obsidian/app.json", "{}").await.unwrap();
    assert_eq!(
        host.read("deep/er/b.md").await.unwrap().as_deref(),
        Some("é ✓")
    );
    assert_eq!(
        host.list().await.unwrap(),
        ["00_plan-trace/journal.jsonl", "a.md", "deep/er/b.md"]
    );
    host.remove("a.md").await.unwrap();
    host.remove("a.md").await.unwrap();
    assert_eq!(host.read("a.md").await.unwrap(), None);
    assert_eq!(host.read("missing/c.md").await.unwrap(), None);
}

/// A file past what planvault reads is refused by its size, unread (a model's
/// `read_note` of it hears why); the run's own journal may pass a note's
/// limit.
#[wasm_bindgen_test]
async fn a_file_past_the_read_limit_is_refused_unread() {
    let dir = folder("pv-too-large-test").await;
    let sized = |name: &'static str, size: f64| {
        let dir = dir.clone();
        async move {
            let options = web_sys::FileSystemGetFileOptions::new();
            options.set_create(true);
            let handle: web_sys::FileSystemFileHandle =
                JsFuture::from(dir.get_file_handle_with_options(name, &options))
                    .await
                    .unwrap()
                    .unchecked_into();
            let stream: web_sys::FileSystemWritableFileStream =
                JsFuture::from(handle.create_writable())
                    .await
                    .unwrap()
                    .unchecked_into();
            JsFuture::from(stream.truncate_with_f64(size).unwrap())
                .await
                .unwrap();
            JsFuture::from(stream.close()).await.unwrap();
        }
    };
    sized("huge.md", (65u64 << 20) as f64).await;
    let host = BrowserHost::new(
        dir,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    let refused = host.read("huge.md").await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "huge.md: holds 65 MiB, more than the 64 MiB planvault reads of a file; refused"
    );
    assert!(!refused.failed);
    let line = format!("{{\"n\":\"{}\"}}\n", "x".repeat(1 << 20));
    for _ in 0..65 {
        host.append("00_plan-trace/journal.jsonl", &line)
            .await
            .unwrap();
    }
    let journal = host.read("00_plan-trace/journal.jsonl").await.unwrap();
    assert_eq!(journal.map(|j| j.len()), Some(line.len() * 65));
}

/// A note another program saved after the run read it is never replaced:
/// the host looks again before it closes its write in (found by an audit
/// writing into the folder while a status write was on its way).
#[wasm_bindgen_test]
async fn a_write_keeps_an_edit_saved_since_the_read() {
    let dir = folder("pv-cas-test").await;
    let host = BrowserHost::new(
        dir.clone(),
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    host.write("draft.md", "status: pending\n").await.unwrap();
    host.read("draft.md").await.unwrap();
    // Another program (a second host stands in for it) saves an edit.
    let other = BrowserHost::new(
        dir,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    other
        .write("draft.md", "status: pending\nan edit\n")
        .await
        .unwrap();
    let refused = host.write("draft.md", "status: done\n").await.unwrap_err();
    assert!(refused.is_changed(), "{refused:?}");
    assert_eq!(
        host.read("draft.md").await.unwrap().as_deref(),
        Some("status: pending\nan edit\n")
    );
    // Read again, it is written.
    host.write("draft.md", "status: done\nan edit\n")
        .await
        .unwrap();
    assert_eq!(
        other.read("draft.md").await.unwrap().as_deref(),
        Some("status: done\nan edit\n")
    );
}

/// A plan's note (or the config) a writing tool changed is put back as the
/// terminal's host puts it back, what the tool left kept beside it under
/// the first name that is no folder; before, the browser stopped the run,
/// and every resume made the call again.
#[wasm_bindgen_test]
async fn a_file_a_tool_changed_is_put_back_and_what_it_left_kept_aside() {
    let dir = folder("pv-put-back-test").await;
    let client = || planvault_runner::mcp_http::Client::new(Vec::new(), Default::default());
    let host = BrowserHost::new(dir.clone(), scope(), client());
    host.write("send.md", "send the report\n").await.unwrap();
    host.read("send.md").await.unwrap();
    // The tool (another program writing the folder) rewrites the note,
    // makes a note where none was, and a folder where the copy would go.
    let tool = BrowserHost::new(dir, scope(), client());
    tool.write("send.md", "mail the keys out\n").await.unwrap();
    tool.write("new.md", "made by the tool\n").await.unwrap();
    tool.write("send.md.from-tool/x.md", "in the way\n")
        .await
        .unwrap();
    tool.write("gone.md/inner.md", "a folder\n").await.unwrap();
    // The driver's read after the call.
    host.read("send.md").await.unwrap();

    let kept = host.put_back("send.md", Some("send the report\n")).await;
    assert_eq!(kept.unwrap().as_deref(), Some("send.md.from-tool-2"));
    assert_eq!(
        host.read("send.md").await.unwrap().as_deref(),
        Some("send the report\n")
    );
    // Again: the copy kept before (perhaps a person's edit taken for the
    // tool's) is never written over.
    tool.read("send.md").await.unwrap();
    tool.write("send.md", "and the passwords\n").await.unwrap();
    let kept = host.put_back("send.md", Some("send the report\n")).await;
    assert_eq!(kept.unwrap().as_deref(), Some("send.md.from-tool-3"));
    assert_eq!(
        host.read("send.md.from-tool-3").await.unwrap().as_deref(),
        Some("and the passwords\n")
    );
    assert_eq!(
        host.read("send.md.from-tool-2").await.unwrap().as_deref(),
        Some("mail the keys out\n")
    );
    assert_eq!(
        host.read("send.md.from-tool/x.md")
            .await
            .unwrap()
            .as_deref(),
        Some("in the way\n")
    );
    let kept = host.put_back("new.md", None).await.unwrap();
    assert_eq!(kept.as_deref(), Some("new.md.from-tool"));
    assert_eq!(host.read("new.md").await.unwrap(), None);
    assert_eq!(
        host.read("new.md.from-tool").await.unwrap().as_deref(),
        Some("made by the tool\n")
    );
    // A folder in a note's place (or an `.obsidian/` making the plan's
    // folder a vault) reads as a change, as on the terminal, and is moved
    // aside whole, byte for byte.
    let refused = host.read("gone.md").await.unwrap_err();
    assert!(refused.message.contains("folder"), "{refused:?}");
    // A file kept aside before stays, the folder going to the next name.
    tool.write("gone.md.from-tool", "kept before\n")
        .await
        .unwrap();
    host.put_back("gone.md", Some("was\n")).await.unwrap();
    assert_eq!(
        host.read("gone.md").await.unwrap().as_deref(),
        Some("was\n")
    );
    assert_eq!(
        host.read("gone.md.from-tool").await.unwrap().as_deref(),
        Some("kept before\n")
    );
    assert_eq!(
        host.read("gone.md.from-tool-2/inner.md")
            .await
            .unwrap()
            .as_deref(),
        Some("a folder\n")
    );
    tool.write("plans/.obsidian/deep/app.json", "{}")
        .await
        .unwrap();
    host.put_back("plans/.obsidian", None).await.unwrap();
    assert_eq!(host.read("plans/.obsidian").await.unwrap(), None);
    assert_eq!(
        host.read("plans/.obsidian.from-tool/deep/app.json")
            .await
            .unwrap()
            .as_deref(),
        Some("{}")
    );
}

/// A folder named `name` inside the fresh OPFS folder `parent`.
async fn folder_in(parent: &str, name: &str) -> FileSystemDirectoryHandle {
    let options = FileSystemGetDirectoryOptions::new();
    options.set_create(true);
    JsFuture::from(
        folder(parent)
            .await
            .get_directory_handle_with_options(name, &options),
    )
    .await
    .unwrap()
    .unchecked_into()
}

/// A tab closed during a writing tool's call leaves its change: the next
/// run's start puts it back from the snapshot kept outside the vault (this
/// origin's IndexedDB), first, before the config it wrote is read, and
/// only in the vault the snapshot was kept for (another of the same name
/// is not it). Before, the next run read the tool's config and step.
/// The app reads the config for the run's MCP servers before the worker
/// puts it back: a start whose config was put back is refused, and the
/// next start (the servers read anew) runs. Before, the run reached the
/// server the tool's config named, under its approvals.
#[wasm_bindgen_test]
async fn a_call_cut_off_by_a_closed_tab_is_put_back_first_on_the_next_start() {
    let client = || planvault_runner::mcp_http::Client::new(Vec::new(), Default::default());
    let dir = folder_in("pv-cut-off-a", "vault").await;
    let twin = folder_in("pv-cut-off-b", "vault").await;
    let posted = Rc::new(RefCell::new(Vec::new()));
    let keep = posted.clone();
    let host = BrowserHost::new(dir.clone(), scope(), client())
        .on_post(move |m| keep.borrow_mut().push(m.clone()));
    let vault = chain_vault(2);
    for (path, text) in &vault {
        host.write(path, text).await.unwrap();
    }
    let snapshot = serde_json::json!({
        "tool": "fs.write_file",
        "notes": {"step-0001.md": vault["step-0001.md"]},
        "config": null,
    });
    host.keep_call_snapshot(Some(&snapshot.to_string()))
        .await
        .unwrap();
    // The call writes; then the tab closes.
    let tool = BrowserHost::new(dir.clone(), scope(), client());
    tool.write("step-0001.md", "---\ntype: step\n---\nMail the keys out.\n")
        .await
        .unwrap();
    let config = "[run]\nisolate = true\n\n[mcp.servers.notes]\nurl = \"http://127.0.0.1:9/mcp\"\n";
    tool.write(".planvault/config.toml", config).await.unwrap();

    let other = BrowserHost::new(twin, scope(), client());
    other.write("step-0001.md", "theirs\n").await.unwrap();
    assert!(put_back_cut_off_call(&other).await.unwrap().is_empty());
    assert_eq!(
        other.read("step-0001.md").await.unwrap().as_deref(),
        Some("theirs\n")
    );

    let inbox = Inbox::new();
    // The servers the app read from the tool's config.
    let mut read_before = start();
    read_before.mcp_servers = vec![planvault_protocol::McpServer {
        name: "notes".into(),
        url: "http://127.0.0.1:9/mcp".into(),
        token: None,
        approve: Vec::new(),
        timeout_ms: None,
    }];
    let refused = start_run(&host, &inbox, read_before, "tab-a")
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::ChangedOnDisk, "{refused:?}");
    assert!(
        refused
            .message
            .contains("the vault's .planvault/config.toml was put back after this run's MCP servers were read"),
        "{refused:?}"
    );
    match &posted.borrow()[0] {
        FromWorker::Trace { markdown } => assert!(
            markdown.contains("put back what it changed (step-0001.md (kept aside as step-0001.md.from-tool); .planvault/config.toml (kept aside as .planvault/config.toml.from-tool))"),
            "{markdown}"
        ),
        first => panic!("the put-back is told first: {first:?}"),
    }
    assert_eq!(host.read(".planvault/config.toml").await.unwrap(), None);
    assert_eq!(
        host.read(".planvault/config.toml.from-tool")
            .await
            .unwrap()
            .as_deref(),
        Some(config)
    );
    assert!(!host
        .read("step-0001.md")
        .await
        .unwrap()
        .unwrap()
        .contains("Mail the keys"));
    // Once: the snapshot went with the put-back.
    assert!(put_back_cut_off_call(&host).await.unwrap().is_empty());
    let outcome = start_run(&host, &inbox, start(), "tab-a").await;
    assert!(
        outcome.is_ok(),
        "the tool's `isolate` was put back before it was read: {outcome:?}"
    );
}

/// A journal whose last line a closed tab cut short is repaired as the
/// run resumes, and the app is told so (before, only the terminal said it).
#[wasm_bindgen_test]
async fn a_repaired_journal_is_told_to_the_app() {
    let (host, posted) = recorded("pv-torn-journal").await;
    for (path, text) in chain_vault(2) {
        host.write(&path, &text).await.unwrap();
    }
    let torn = "{\"key\":\"step-0000#1:wo";
    host.write("00_plan-trace/journal.jsonl", torn)
        .await
        .unwrap();
    let mut resume = start();
    resume.fresh = false;
    let inbox = Inbox::new();
    start_run(&host, &inbox, resume, "tab-t").await.unwrap();
    assert_eq!(
        host.read("00_plan-trace/journal.jsonl.torn-1")
            .await
            .unwrap()
            .as_deref(),
        Some(torn)
    );
    let told = posted.borrow().iter().any(|m| {
        matches!(m, FromWorker::Trace { markdown }
            if markdown.contains("kept aside in 00_plan-trace/journal.jsonl.torn-1"))
    });
    assert!(told, "{:?}", posted.borrow());
}

/// A snapshot this browser cannot store (here a handle it cannot clone)
/// is an error the run goes on from, never a wait for good: the driver
/// awaits it before every writing call.
#[wasm_bindgen_test]
async fn a_snapshot_that_cannot_be_stored_is_an_error_not_a_wait() {
    let handle = js_sys::Object::new();
    js_sys::Reflect::set(&handle, &"name".into(), &"pv-not-a-handle".into()).unwrap();
    let same = js_sys::Function::new_no_args("return Promise.resolve(false)");
    js_sys::Reflect::set(&handle, &"isSameEntry".into(), &same).unwrap();
    let host = BrowserHost::new(
        handle.unchecked_into(),
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    let refused = host.keep_call_snapshot(Some("{}")).await.unwrap_err();
    assert!(refused.message.contains("DataCloneError"), "{refused:?}");
}

#[wasm_bindgen_test]
async fn a_refused_connection_is_a_connect_error_with_the_cors_hint() {
    let host = BrowserHost::new(
        folder("pv-fetch-test").await,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    let err = host
        .post_json(
            "http://127.0.0.1:9/v1/chat/completions",
            Some("sk-x"),
            "{}",
            5_000,
        )
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");
    assert!(err
        .hint(planvault_llm::Surface::Browser)
        .unwrap()
        .contains("CORS"));
    assert!(!err.to_string().contains("sk-x"));
}

/// The real vault (OPFS through the handle), a scripted model: what a hop
/// costs the worker apart from the model's own time.
struct VaultOnly {
    vault: BrowserHost,
    model: MemoryHost,
    posted: Cell<usize>,
}

impl Host for VaultOnly {
    type Body = <MemoryHost as Host>::Body;
    async fn list(&self) -> Result<Vec<String>, HostError> {
        self.vault.list().await
    }
    async fn read(&self, path: &str) -> Result<Option<String>, HostError> {
        self.vault.read(path).await
    }
    async fn write(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.vault.write(path, text).await
    }
    async fn append(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.vault.append(path, text).await
    }
    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.vault.remove(path).await
    }
    async fn post_json(
        &self,
        url: &str,
        key: Option<&str>,
        body: &str,
        timeout_ms: u32,
    ) -> Result<(HttpHead, Self::Body), LlmError> {
        self.model.post_json(url, key, body, timeout_ms).await
    }
    async fn read_chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, LlmError> {
        self.model.read_chunk(body).await
    }
    async fn fetch_text(&self, url: &str) -> Result<String, String> {
        self.model.fetch_text(url).await
    }
    async fn sleep(&self, ms: u32) {
        self.vault.sleep(ms).await
    }
    fn now_ms(&self) -> f64 {
        now()
    }
    fn post(&self, message: &FromWorker) {
        // Encoded as the real worker posts it, not sent.
        let _ = planvault_protocol::js::encode(message, None);
        self.posted.set(self.posted.get() + 1);
    }
}

fn start() -> StartRun {
    planvault_worker::memory::chain_start(Some("sk-bench".into()))
}

#[wasm_bindgen_test]
async fn a_chain_runs_in_the_worker_and_its_per_hop_cost_is_printed() {
    // In memory: the engine and the driver's own work, in wasm; the best of
    // three runs (the first also pays for the browser's compiler tiers).
    let inbox = Inbox::new();
    let m = 1_000;
    let mut in_memory = f64::INFINITY;
    for _ in 0..3 {
        let memory = MemoryHost::new(chain_vault(m), &inbox, short_reply);
        memory.keep_posts.set(false);
        let t = now();
        assert_eq!(
            run(&memory, &inbox, start()).await,
            Some(FinishReason::Completed)
        );
        in_memory = in_memory.min(now() - t);
    }
    let n = 200;

    // Against a real directory handle: every status write, journal line,
    // trace entry and output note goes to disk.
    let dir = folder("pv-chain-bench").await;
    let vault = BrowserHost::new(
        dir,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    for (path, text) in chain_vault(n) {
        vault.write(&path, &text).await.unwrap();
    }
    let host = VaultOnly {
        vault,
        model: MemoryHost::new(Default::default(), &inbox, short_reply),
        posted: Cell::new(0),
    };
    host.model.keep_posts.set(false);
    let t = now();
    assert_eq!(
        run(&host, &inbox, start()).await,
        Some(FinishReason::Completed)
    );
    let on_disk = now() - t;
    assert!(host
        .vault
        .read("step-0199.md")
        .await
        .unwrap()
        .unwrap()
        .contains("status: done"));
    let journal = host
        .vault
        .read("00_plan-trace/journal.jsonl")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(journal.lines().count(), n);
    console_log!(
        "worker in Chromium: chain_{m}_nodes in memory {in_memory:.1} ms ({:.1} µs per hop); \
         chain_{n}_nodes on a directory handle (OPFS) {on_disk:.0} ms ({:.2} ms per hop), {} messages posted",
        in_memory * 1000.0 / m as f64,
        on_disk / n as f64,
        host.posted.get()
    );
}

#[wasm_bindgen_test]
async fn a_bom_and_crlf_note_survives_a_whole_run_through_the_directory_handle() {
    let dir = folder("pv-bom-run").await;
    let vault = BrowserHost::new(
        dir,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    );
    let mut files = chain_vault(3);
    let original = format!("\u{feff}{}", files["step-0000.md"].replace('\n', "\r\n"));
    files.insert("step-0000.md".into(), original.clone());
    for (path, text) in &files {
        vault.write(path, text).await.unwrap();
    }
    assert_eq!(
        vault.read("step-0000.md").await.unwrap().as_deref(),
        Some(original.as_str()),
        "read back with its BOM"
    );
    let inbox = Inbox::new();
    let host = VaultOnly {
        vault,
        model: MemoryHost::new(Default::default(), &inbox, short_reply),
        posted: Cell::new(0),
    };
    assert_eq!(
        run(&host, &inbox, start()).await,
        Some(FinishReason::Completed)
    );
    assert_eq!(
        host.vault.read("step-0000.md").await.unwrap().unwrap(),
        original.replacen("status: pending", "status: done", 1),
        "only the status line changed"
    );
}

/// A host over a fresh OPFS folder whose posted messages are kept.
async fn recorded(name: &str) -> (BrowserHost, Rc<RefCell<Vec<FromWorker>>>) {
    let posted = Rc::new(RefCell::new(Vec::new()));
    let keep = posted.clone();
    let host = BrowserHost::new(
        folder(name).await,
        scope(),
        planvault_runner::mcp_http::Client::new(Vec::new(), Default::default()),
    )
    .on_post(move |m| keep.borrow_mut().push(m.clone()));
    (host, posted)
}

#[wasm_bindgen_test]
async fn a_terminal_runs_lock_file_makes_the_browser_run_refuse_naming_it() {
    let (host, posted) = recorded("pv-lock-cli").await;
    for (path, text) in chain_vault(2) {
        host.write(&path, &text).await.unwrap();
    }
    // What `planvault run` writes while it runs this folder.
    let cli = "pid=4242\nhost=build-box\n";
    host.write(LOCK_FILE, cli).await.unwrap();
    let inbox = Inbox::new();
    let err = start_run(&host, &inbox, start(), "tab-a")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::VaultLocked);
    assert!(
        err.message
            .contains("being run by process 4242 on build-box")
            && err.message.contains(
                "if that process is gone (a crash, another machine), delete .planvault/run.lock"
            ),
        "{}",
        err.message
    );
    assert!(
        posted.borrow().is_empty(),
        "nothing ran: {:?}",
        posted.borrow()
    );
    assert_eq!(host.read(LOCK_FILE).await.unwrap().as_deref(), Some(cli));
    assert!(host
        .read("step-0000.md")
        .await
        .unwrap()
        .unwrap()
        .contains("status: pending"));
    assert_eq!(
        host.read("00_plan-trace/journal.jsonl").await.unwrap(),
        None
    );
}

/// A plan folder's run holds the folder's lock too: a terminal running the
/// folder as a vault of its own (`--vault-root`) is found there, and so is
/// a tab that opened the folder itself; the vault's own lock is given back.
#[wasm_bindgen_test]
async fn a_plan_folder_run_by_a_terminal_as_its_own_vault_is_refused() {
    let (host, posted) = recorded("pv-lock-folder").await;
    for (path, text) in chain_vault(2) {
        host.write(&format!("plans/a/{path}"), &text).await.unwrap();
    }
    let cli = "pid=4242\nhost=build-box\n";
    let folder_lock = planvault_runner::lock::folder_lock("plans/a");
    assert_eq!(folder_lock, "plans/a/.planvault/run.lock");
    host.write(&folder_lock, cli).await.unwrap();
    let inbox = Inbox::new();
    let mut folder_start = start();
    folder_start.folder = "plans/a".into();
    let err = start_run(&host, &inbox, folder_start.clone(), "tab-a")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::VaultLocked);
    assert!(
        err.message.contains("process 4242 on build-box")
            && err.message.contains("plans/a/.planvault/run.lock"),
        "{}",
        err.message
    );
    assert!(posted.borrow().is_empty(), "{:?}", posted.borrow());
    assert_eq!(host.read(LOCK_FILE).await.unwrap(), None, "given back");

    // Another tab that opened the folder itself runs it: its Web Lock is
    // under the folder's name.
    host.remove(&folder_lock).await.unwrap();
    let other = web_lock(&scope(), "planvault-run:a")
        .await
        .unwrap()
        .expect("free at first");
    let err = start_run(&host, &inbox, folder_start.clone(), "tab-a")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::VaultLocked);
    assert!(
        err.message
            .contains("the folder plans/a is being run in another tab"),
        "{}",
        err.message
    );
    drop(other);
    // A Web Lock is given back once the browser's event loop has turned.
    host.sleep(50).await;

    // Once the other runs are gone, the folder runs; both locks go.
    start_run(&host, &inbox, folder_start, "tab-a")
        .await
        .unwrap();
    assert_eq!(host.read(&folder_lock).await.unwrap(), None);
    assert_eq!(host.read(LOCK_FILE).await.unwrap(), None);
}

#[wasm_bindgen_test]
async fn a_second_tab_is_refused_by_the_web_lock_and_the_vault_is_given_back_after_a_run() {
    let (host, posted) = recorded("pv-lock-tabs").await;
    let inbox = Inbox::new();
    // Another tab runs this vault: it holds the vault's Web Lock.
    let other = web_lock(&scope(), "planvault-run:pv-lock-tabs")
        .await
        .unwrap()
        .expect("free at first");
    let err = start_run(&host, &inbox, start(), "tab-b")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::VaultLocked);
    assert!(
        err.message
            .contains("being run in another tab of this browser"),
        "{}",
        err.message
    );
    assert_eq!(host.read(LOCK_FILE).await.unwrap(), None);
    drop(other);

    // A closed tab's lock file is stale under the Web Lock: taken over. The
    // run (of an empty folder: no plan) ends, and the vault is given back.
    host.write(LOCK_FILE, "host=browser\ntab=closed\n")
        .await
        .unwrap();
    assert_eq!(start_run(&host, &inbox, start(), "tab-b").await, Ok(None));
    assert!(
        matches!(&posted.borrow()[..], [FromWorker::Failed { error }] if error.code == ErrorCode::PlanInvalid),
        "{:?}",
        posted.borrow()
    );
    assert_eq!(host.read(LOCK_FILE).await.unwrap(), None, "released");
    let again = web_lock(&scope(), "planvault-run:pv-lock-tabs")
        .await
        .unwrap();
    assert!(again.is_some(), "the Web Lock was released");
}

#[wasm_bindgen_test]
async fn the_vaults_config_sets_the_prompt_budget_and_the_hosts_fetch_url_may_reach() {
    let (host, _posted) = recorded("pv-config").await;
    for (path, text) in chain_vault(2) {
        host.write(&path, &text).await.unwrap();
    }
    host.write(
        ".planvault/config.toml",
        "[run]\nmax_prompt_bytes = 100\n\n[fetch]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .await
    .unwrap();
    // Refused by the address policy before the config is read, also when
    // written so that only the browser's URL parser sees the host it is:
    // percent-encoded, full-width, IDNA-mapped, shortened, behind a
    // backslash or a tab.
    for url in [
        "http://127.0.0.1:9/x",
        "http://%31%32%37.0.0.1:9/x",
        "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}:9/x",
        "http://\u{24db}ocalhost:9/x",
        "http://127.1:9/x",
        "http://127.0.0.1:9\\.example.com/x",
        "http://127.0.0.1\t:9/x",
        "http://[::ffff:127.0.0.1]:9/x",
        "http://%5B::1%5D:9/x",
    ] {
        let refused = host.fetch_text(url).await.unwrap_err();
        assert!(
            refused.contains("fetch_url reaches only public hosts")
                || refused.contains("is not a URL"),
            "{url}: {refused}"
        );
    }

    // A host the config lists that the person did not trust (the app
    // read the config before it was added) stays refused.
    let (untrusted, _) = recorded("pv-config-untrusted").await;
    for path in host.list().await.unwrap() {
        let text = host.read(&path).await.unwrap().unwrap();
        untrusted.write(&path, &text).await.unwrap();
    }
    let config = host.read(".planvault/config.toml").await.unwrap().unwrap();
    untrusted
        .write(".planvault/config.toml", &config)
        .await
        .unwrap();
    let inbox = Inbox::new();
    start_run(&untrusted, &inbox, start(), "tab-c")
        .await
        .unwrap();
    let refused = untrusted
        .fetch_text("http://127.0.0.1:9/x")
        .await
        .unwrap_err();
    assert!(refused.contains("public hosts"), "{refused}");

    let trusted = StartRun {
        allow_hosts: vec!["127.0.0.1".into(), "wiki.internal".into()],
        ..start()
    };
    let reason = start_run(&host, &inbox, trusted, "tab-c").await.unwrap();
    assert!(
        matches!(&reason, Some(FinishReason::Interrupted { reason, .. }) if reason.contains("over the budget of 100 bytes")),
        "{reason:?}"
    );
    assert!(host
        .read("step-0000.md")
        .await
        .unwrap()
        .unwrap()
        .contains("status: active"));
    // The run applied the vault's allow list to its host: 127.0.0.1 is
    // fetched (and fails on the network, not on the policy), while
    // localhost and the metadata address stay refused.
    let reached = host.fetch_text("http://127.0.0.1:9/x").await.unwrap_err();
    assert!(!reached.contains("public hosts"), "{reached}");
    for url in [
        "http://localhost:9/",
        "http://169.254.169.254/latest/meta-data/",
    ] {
        let err = host.fetch_text(url).await.unwrap_err();
        assert!(
            err.contains("fetch_url reaches only public hosts"),
            "{url}: {err}"
        );
    }
}
