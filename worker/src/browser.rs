//! The browser side: the worker's message port, a [`Host`] over the vault's
//! `FileSystemDirectoryHandle` and `fetch` (streamed body, `AbortController`
//! for Stop and the timeout), and the entry point.

use crate::host::{Host, HostError, HttpHead, Progress, ASIDE};
use crate::inbox::Inbox;
use js_sys::{Function, Promise, Reflect, Uint8Array};
use planvault_core::engine::FinishReason;
use planvault_llm::tools::{page_text, FETCH_LIMIT_BYTES};
use planvault_llm::LlmError;
use planvault_protocol::{
    js, ErrorCode, FromWorker, McpServer, RetryPolicy, RunError, StartRun, ToWorker, VERSION,
};
use planvault_runner::driver::PutBack;
use planvault_runner::lock::{self, Holder};
use planvault_runner::mcp_http::{self, FetchError};
use planvault_runner::settings::{self, CONFIG_FILE};
use planvault_runner::Options;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, DedicatedWorkerGlobalScope, File, FileSystemCreateWritableOptions,
    FileSystemDirectoryHandle, FileSystemFileHandle, FileSystemGetDirectoryOptions,
    FileSystemGetFileOptions, FileSystemRemoveOptions, FileSystemWritableFileStream, Headers,
    MessageEvent, ReadableStreamDefaultReader, RequestInit, RequestRedirect, Response,
};

#[wasm_bindgen(module = "/src/call_snapshot.js")]
extern "C" {
    #[wasm_bindgen(js_name = keepCallSnapshot, catch)]
    async fn keep_snapshot(
        root: &FileSystemDirectoryHandle,
        snapshot: Option<String>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = callSnapshot, catch)]
    async fn kept_snapshot(root: &FileSystemDirectoryHandle) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/decisions.js")]
extern "C" {
    // Heads cross one per line, and come back as a string of `1` (kept)
    // and `0`: lighter glue than arrays.
    #[wasm_bindgen(js_name = decisionsTaken, catch)]
    async fn decisions_taken(heads: String) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = keepDecisions, catch)]
    async fn keep_decisions(heads: String) -> Result<JsValue, JsValue>;
}

/// How long a `fetch_url` tool call may take.
const FETCH_URL_TIMEOUT_MS: i32 = 20_000;

fn describe(err: &JsValue) -> String {
    if let Some(e) = err.dyn_ref::<js_sys::Error>() {
        return format!("{}: {}", String::from(e.name()), String::from(e.message()));
    }
    err.as_string().unwrap_or_else(|| format!("{err:?}"))
}

/// A file's text, its bytes decoded here: `File.text()` would drop a
/// byte-order mark, and a note is written back with its status changed. A
/// file past [`planvault_core::vault::read_limit`] is refused by its size,
/// unread.
async fn file_text(path: &str, handle: &FileSystemFileHandle) -> Result<String, HostError> {
    String::from_utf8(
        file_bytes_within(path, handle, planvault_core::vault::read_limit(path)).await?,
    )
    .map_err(|_| HostError::new(path, "not UTF-8 text"))
}

/// The handle a folder gives for `path`; `None` where nothing stands there,
/// or the other kind (a folder where a file is asked for).
async fn entry<T: JsCast>(path: &str, handle: Promise) -> Result<Option<T>, HostError> {
    match JsFuture::from(handle).await {
        Ok(handle) => Ok(Some(handle.unchecked_into())),
        Err(e) if error_name(&e) == "NotFoundError" || error_name(&e) == "TypeMismatchError" => {
            Ok(None)
        }
        Err(e) => Err(HostError::new(path, describe(&e))),
    }
}

/// A folder's entries: each one's name, handle and whether it is a folder.
async fn entries(
    path: &str,
    dir: &FileSystemDirectoryHandle,
) -> Result<Vec<(String, JsValue, bool)>, HostError> {
    let mut out = Vec::new();
    let entries = dir.entries();
    loop {
        let next = entries
            .next()
            .map_err(|e| HostError::new(path, describe(&e)))?;
        let step = JsFuture::from(next)
            .await
            .map_err(|e| HostError::new(path, describe(&e)))?;
        if Reflect::get(&step, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true)
        {
            return Ok(out);
        }
        let pair: js_sys::Array = Reflect::get(&step, &"value".into())
            .unwrap_or_default()
            .unchecked_into();
        let handle = pair.get(1);
        let kind = Reflect::get(&handle, &"kind".into())
            .ok()
            .and_then(|k| k.as_string())
            .unwrap_or_default();
        out.push((
            pair.get(0).as_string().unwrap_or_default(),
            handle,
            kind == "directory",
        ));
    }
}

async fn file_bytes(path: &str, handle: &FileSystemFileHandle) -> Result<Vec<u8>, HostError> {
    file_bytes_within(path, handle, u64::MAX).await
}

/// [`file_bytes`] of a file of at most `limit` bytes, else refused unread.
async fn file_bytes_within(
    path: &str,
    handle: &FileSystemFileHandle,
    limit: u64,
) -> Result<Vec<u8>, HostError> {
    let err = |e: JsValue| write_error(path, &e);
    let file: File = JsFuture::from(handle.get_file())
        .await
        .map_err(err)?
        .unchecked_into();
    let size = file.size() as u64;
    if size > limit {
        let why = planvault_core::vault::too_large(size, limit);
        return Err(HostError::new(path, format!("{why}; refused")));
    }
    let buffer = JsFuture::from(file.array_buffer()).await.map_err(err)?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// A vault write's failure; the storage quota (or a full disk) is told
/// apart, so the run stops resumably saying so.
fn write_error(path: &str, err: &JsValue) -> HostError {
    if error_name(err) == "QuotaExceededError" {
        HostError::disk_full(path)
    } else {
        HostError::failure(path, describe(err))
    }
}

fn error_name(err: &JsValue) -> String {
    Reflect::get(err, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default()
}

/// The vault and the network, as the worker sees them.
pub struct BrowserHost {
    /// `None`: a host for the network alone (the Settings' test of a server).
    root: Option<FileSystemDirectoryHandle>,
    scope: DedicatedWorkerGlobalScope,
    /// The model call in flight, aborted by Stop.
    abort: RefCell<Option<AbortController>>,
    /// Whether the abort in flight is the timeout's (else Stop's).
    timed_out: Rc<Cell<bool>>,
    /// Hosts `fetch_url` may reach although they are loopback or private
    /// (the vault's `[fetch] allow_hosts`).
    fetch_allow: RefCell<Vec<String>>,
    /// Where posted messages go instead of the app (the tests' recorder).
    on_post: Option<PostHook>,
    /// The run's MCP servers (URL ones: the browser starts no process).
    mcp: mcp_http::Client,
    /// Each file's text as this host last read or wrote it: a write is
    /// closed in only while the file still holds that (or the new text).
    seen: RefCell<std::collections::HashMap<String, Option<String>>>,
}

/// A recorder of posted messages.
type PostHook = Box<dyn Fn(&FromWorker)>;

/// A reply body being read.
pub struct Body {
    /// The endpoint, named in errors.
    url: String,
    reader: Option<ReadableStreamDefaultReader>,
    /// A body that sends nothing for this long is cut off (a stalled stream).
    stall_ms: i32,
}

impl BrowserHost {
    pub fn new(
        root: FileSystemDirectoryHandle,
        scope: DedicatedWorkerGlobalScope,
        mcp: mcp_http::Client,
    ) -> Self {
        BrowserHost {
            root: Some(root),
            scope,
            abort: RefCell::new(None),
            timed_out: Rc::new(Cell::new(false)),
            fetch_allow: RefCell::new(Vec::new()),
            on_post: None,
            mcp,
            seen: RefCell::default(),
        }
    }

    /// A host without a vault: only its network (`fetch`) is used.
    pub fn network(scope: DedicatedWorkerGlobalScope) -> Self {
        BrowserHost {
            root: None,
            scope,
            abort: RefCell::new(None),
            timed_out: Rc::new(Cell::new(false)),
            fetch_allow: RefCell::new(Vec::new()),
            on_post: None,
            mcp: mcp_http::Client::new(Vec::new(), Default::default()),
            seen: RefCell::default(),
        }
    }

    fn root(&self, path: &str) -> Result<FileSystemDirectoryHandle, HostError> {
        self.root
            .clone()
            .ok_or_else(|| HostError::new(path, "no vault is open in this worker"))
    }

    /// Hand every posted message to `f` instead of the app.
    pub fn on_post(mut self, f: impl Fn(&FromWorker) + 'static) -> Self {
        self.on_post = Some(Box::new(f));
        self
    }

    /// Let `fetch_url` reach these hosts although they are loopback or
    /// private (the vault's `[fetch] allow_hosts`).
    pub fn set_fetch_allow(&self, hosts: Vec<String>) {
        *self.fetch_allow.borrow_mut() = hosts;
    }

    /// Stop: cut off the model call in flight.
    pub fn abort(&self) {
        if let Some(controller) = self.abort.borrow().as_ref() {
            controller.abort();
        }
    }

    /// The folder holding `path` and the file's name.
    async fn folder(
        &self,
        path: &str,
        create: bool,
    ) -> Result<Option<(FileSystemDirectoryHandle, String)>, HostError> {
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().unwrap_or_default().to_string();
        let mut dir = self.root(path)?;
        for part in parts {
            let options = FileSystemGetDirectoryOptions::new();
            options.set_create(create);
            match JsFuture::from(dir.get_directory_handle_with_options(part, &options)).await {
                Ok(handle) => dir = handle.unchecked_into(),
                Err(e) if error_name(&e) == "NotFoundError" => return Ok(None),
                Err(e) => return Err(HostError::new(path, describe(&e))),
            }
        }
        Ok(Some((dir, name)))
    }

    async fn file(
        &self,
        path: &str,
        create: bool,
    ) -> Result<Option<FileSystemFileHandle>, HostError> {
        let Some((dir, name)) = self.folder(path, create).await? else {
            return Ok(None);
        };
        let options = FileSystemGetFileOptions::new();
        options.set_create(create);
        entry(path, dir.get_file_handle_with_options(&name, &options)).await
    }

    /// The folder at `path`; `None` where there is none (or a file).
    async fn directory(
        &self,
        path: &str,
        create: bool,
    ) -> Result<Option<FileSystemDirectoryHandle>, HostError> {
        let Some((dir, name)) = self.folder(path, create).await? else {
            return Ok(None);
        };
        let options = FileSystemGetDirectoryOptions::new();
        options.set_create(create);
        entry(path, dir.get_directory_handle_with_options(&name, &options)).await
    }

    /// `path` (created where missing) with `bytes` written to its swap
    /// file, which replaces it once the stream is closed: a write is all
    /// or nothing.
    async fn writing(
        &self,
        path: &str,
        bytes: &[u8],
    ) -> Result<(FileSystemFileHandle, FileSystemWritableFileStream), HostError> {
        let handle = self
            .file(path, true)
            .await?
            .ok_or_else(|| HostError::new(path, "cannot be created"))?;
        let err = |e: JsValue| write_error(path, &e);
        let stream: FileSystemWritableFileStream = JsFuture::from(handle.create_writable())
            .await
            .map_err(err)?
            .unchecked_into();
        JsFuture::from(stream.write_with_u8_array(bytes).map_err(err)?)
            .await
            .map_err(err)?;
        Ok((handle, stream))
    }

    /// Create or replace `path` with `bytes` as they are, unchecked: what
    /// a tool left, kept aside.
    async fn write_bytes(&self, path: &str, bytes: &[u8]) -> Result<(), HostError> {
        let (_, stream) = self.writing(path, bytes).await?;
        JsFuture::from(stream.close())
            .await
            .map_err(|e| write_error(path, &e))?;
        Ok(())
    }

    /// The folder at `path` moved to `to`, as a rename moves it: a
    /// directory handle has none, so it is copied byte for byte, then
    /// removed (a copy that fails removes nothing).
    async fn move_folder(&self, path: &str, to: &str) -> Result<(), HostError> {
        let mut stack = vec![(path.to_string(), to.to_string())];
        while let Some((from, into)) = stack.pop() {
            let dir = self
                .directory(&from, false)
                .await?
                .ok_or_else(|| HostError::new(&from, "is gone"))?;
            self.directory(&into, true).await?;
            for (name, handle, is_folder) in entries(&from, &dir).await? {
                let (from, into) = (format!("{from}/{name}"), format!("{into}/{name}"));
                if is_folder {
                    stack.push((from, into));
                } else {
                    let bytes = file_bytes(&from, &handle.unchecked_into()).await?;
                    self.write_bytes(&into, &bytes).await?;
                }
            }
        }
        let Some((parent, name)) = self.folder(path, false).await? else {
            return Ok(());
        };
        let options = FileSystemRemoveOptions::new();
        options.set_recursive(true);
        JsFuture::from(parent.remove_entry_with_options(&name, &options))
            .await
            .map_err(|e| HostError::new(path, describe(&e)))?;
        Ok(())
    }

    fn timer(&self, ms: i32, then: impl FnOnce() + 'static) -> Option<i32> {
        let callback = Closure::once_into_js(then);
        self.scope
            .set_timeout_with_callback_and_timeout_and_arguments_0(callback.unchecked_ref(), ms)
            .ok()
    }

    /// POST `body` with `headers`: the reply's head within `timeout_ms`, and
    /// its body, each chunk within the same (Stop aborts either).
    async fn send(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &str,
        timeout_ms: u32,
    ) -> Result<(Response, Body), LlmError> {
        let connect = |e: JsValue| LlmError::Connect {
            url: url.into(),
            reason: describe(&e),
        };
        let controller = AbortController::new().map_err(connect)?;
        let sent = Headers::new().map_err(connect)?;
        for (name, value) in headers {
            let _ = sent.set(name, value);
        }
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_headers_headers(&sent);
        init.set_body(&JsValue::from_str(body));
        init.set_signal(Some(&controller.signal()));
        self.timed_out.set(false);
        *self.abort.borrow_mut() = Some(controller.clone());
        let (flag, timeout_controller) = (self.timed_out.clone(), controller.clone());
        let timer = self.timer(timeout_ms.min(i32::MAX as u32) as i32, move || {
            flag.set(true);
            timeout_controller.abort();
        });
        let result = JsFuture::from(self.scope.fetch_with_str_and_init(url, &init)).await;
        if let Some(timer) = timer {
            self.scope.clear_timeout_with_handle(timer);
        }
        let response: Response = match result {
            Ok(r) => r.unchecked_into(),
            Err(e) if error_name(&e) == "AbortError" && self.timed_out.get() => {
                return Err(LlmError::Timeout { url: url.into() })
            }
            Err(e) if error_name(&e) == "AbortError" => return Err(LlmError::Interrupted),
            // fetch rejects with a TypeError for CORS refusals and network
            // failures alike; the browser does not say which.
            Err(e) => return Err(connect(e)),
        };
        let reader = response.body().map(|b| {
            b.get_reader()
                .unchecked_into::<ReadableStreamDefaultReader>()
        });
        let body = Body {
            url: url.into(),
            reader,
            stall_ms: timeout_ms.min(i32::MAX as u32) as i32,
        };
        Ok((response, body))
    }

    async fn get(
        &self,
        url: &str,
        controller: &AbortController,
        redirect: RequestRedirect,
    ) -> Result<Response, JsValue> {
        let init = RequestInit::new();
        init.set_method("GET");
        init.set_redirect(redirect);
        init.set_signal(Some(&controller.signal()));
        let response = JsFuture::from(self.scope.fetch_with_str_and_init(url, &init)).await?;
        Ok(response.unchecked_into())
    }
}

impl Host for BrowserHost {
    type Body = Body;

    async fn list(&self) -> Result<Vec<String>, HostError> {
        // An explicit stack of folders: no recursion over the vault.
        let mut out = Vec::new();
        let mut stack = vec![(String::new(), self.root("")?)];
        while let Some((prefix, dir)) = stack.pop() {
            for (name, handle, is_folder) in entries(&prefix, &dir).await? {
                if name.starts_with('.') {
                    continue;
                }
                let path = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                if is_folder {
                    stack.push((path, handle.unchecked_into()));
                } else {
                    out.push(path);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    async fn read(&self, path: &str) -> Result<Option<String>, HostError> {
        let Some(handle) = self.file(path, false).await? else {
            // As the terminal's host: a folder where a file was is a change
            // (a tool's `.obsidian/` making a plan folder a vault), not none.
            if self.directory(path, false).await?.is_some() {
                return Err(HostError::new(path, "is a folder, not a note; refused"));
            }
            return Ok(None);
        };
        let text = file_text(path, &handle).await?;
        self.seen
            .borrow_mut()
            .insert(path.to_string(), Some(text.clone()));
        Ok(Some(text))
    }

    async fn write(&self, path: &str, text: &str) -> Result<(), HostError> {
        let err = |e: JsValue| write_error(path, &e);
        let (handle, stream) = self.writing(path, text.as_bytes()).await?;
        // Looked at again with the new text ready beside it, just before it
        // is closed in: an edit saved meanwhile is kept.
        let seen = self.seen.borrow().get(path).cloned();
        if let Some(seen) = seen {
            // A file the run removed is made anew: created empty just now,
            // unless a person made it meanwhile.
            let seen = seen.unwrap_or_default();
            let now = file_text(path, &handle).await;
            let refused = match now {
                Ok(now) if now != seen && now != text => Some(HostError::changed(path)),
                Ok(_) => None,
                Err(e) => Some(e),
            };
            if let Some(refused) = refused {
                let _ = JsFuture::from(stream.abort()).await;
                return Err(refused);
            }
        }
        JsFuture::from(stream.close()).await.map_err(err)?;
        self.seen
            .borrow_mut()
            .insert(path.to_string(), Some(text.to_string()));
        Ok(())
    }

    async fn append(&self, path: &str, text: &str) -> Result<(), HostError> {
        let handle = self
            .file(path, true)
            .await?
            .ok_or_else(|| HostError::new(path, "cannot be created"))?;
        let err = |e: JsValue| write_error(path, &e);
        let file: File = JsFuture::from(handle.get_file())
            .await
            .map_err(err)?
            .unchecked_into();
        let options = FileSystemCreateWritableOptions::new();
        options.set_keep_existing_data(true);
        let stream: FileSystemWritableFileStream =
            JsFuture::from(handle.create_writable_with_options(&options))
                .await
                .map_err(err)?
                .unchecked_into();
        JsFuture::from(stream.seek_with_f64(file.size()).map_err(err)?)
            .await
            .map_err(err)?;
        JsFuture::from(stream.write_with_str(text).map_err(err)?)
            .await
            .map_err(err)?;
        // Closed (and so on disk) before the run acts on what it recorded.
        JsFuture::from(stream.close()).await.map_err(err)?;
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        let Some((dir, name)) = self.folder(path, false).await? else {
            return Ok(());
        };
        match JsFuture::from(dir.remove_entry(&name)).await {
            Err(e) if error_name(&e) != "NotFoundError" => Err(HostError::new(path, describe(&e))),
            _ => {
                // Removed by the run: a later write makes it anew, unless
                // a person made it meanwhile.
                self.seen.borrow_mut().insert(path.to_string(), None);
                Ok(())
            }
        }
    }

    async fn post_json(
        &self,
        url: &str,
        api_key: Option<&str>,
        body: &str,
        timeout_ms: u32,
    ) -> Result<(HttpHead, Body), LlmError> {
        let mut headers = vec![
            ("Content-Type", "application/json".to_string()),
            ("Accept", "text/event-stream".to_string()),
        ];
        if let Some(key) = api_key {
            headers.push(("Authorization", format!("Bearer {key}")));
        }
        let (response, body) = self.send(url, &headers, body, timeout_ms).await?;
        let header = |name: &str| response.headers().get(name).ok().flatten();
        let head = HttpHead {
            status: response.status(),
            content_type: header("content-type")
                .unwrap_or_default()
                .to_ascii_lowercase(),
            retry_after: header("retry-after").and_then(|v| planvault_llm::parse_retry_after(&v)),
        };
        Ok((head, body))
    }

    async fn read_chunk(&self, body: &mut Body) -> Result<Option<Vec<u8>>, LlmError> {
        let Some(reader) = &body.reader else {
            return Ok(None);
        };
        self.timed_out.set(false);
        let controller = self.abort.borrow().clone();
        let flag = self.timed_out.clone();
        let timer = controller.and_then(|c| {
            self.timer(body.stall_ms, move || {
                flag.set(true);
                c.abort();
            })
        });
        let result = JsFuture::from(reader.read()).await;
        if let Some(timer) = timer {
            self.scope.clear_timeout_with_handle(timer);
        }
        let step = match result {
            Ok(step) => step,
            Err(e) if error_name(&e) == "AbortError" && self.timed_out.get() => {
                return Err(LlmError::Timeout {
                    url: body.url.clone(),
                })
            }
            Err(e) if error_name(&e) == "AbortError" => return Err(LlmError::Interrupted),
            Err(e) => {
                return Err(LlmError::BrokeOff {
                    url: body.url.clone(),
                    reason: describe(&e),
                })
            }
        };
        if Reflect::get(&step, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true)
        {
            body.reader = None;
            return Ok(None);
        }
        let value: Uint8Array = Reflect::get(&step, &"value".into())
            .unwrap_or_default()
            .unchecked_into();
        Ok(Some(value.to_vec()))
    }

    async fn fetch_text(&self, url: &str) -> Result<String, String> {
        // The policy checks the URL as `fetch` will read it: the browser's
        // own parser decodes `%31%32%37.0.0.1`, full-width digits, an
        // IDNA-mapped `ⓛocalhost`, `127.1` and a backslash before the path
        // into the host the request goes to, which the text as written
        // does not show. That normalised URL is the one fetched.
        let url = web_sys::Url::new(url)
            .map_err(|_| format!("{url} is not a URL"))?
            .href();
        let url = url.as_str();
        // A page cannot resolve names, so only the URL's text is checked:
        // `localhost` and loopback, private and link-local addresses are
        // refused unless the vault allows the host; a name resolving to one
        // is not caught here (SECURITY.md).
        planvault_llm::tools::fetch_policy(url, &self.fetch_allow.borrow())?;
        let controller = AbortController::new().map_err(|e| describe(&e))?;
        let abort = controller.clone();
        let timer = self.timer(FETCH_URL_TIMEOUT_MS, move || abort.abort());
        let result = async {
            // A redirect is never followed: the browser would go to its
            // target before this code could check it (the terminal checks
            // each hop), so it fails the fetch.
            let response = self.get(url, &controller, RequestRedirect::Error).await.map_err(|e| {
                format!("{url}: {} (in the browser, fetch_url reads only pages whose server allows this origin (CORS) and follows no redirect, whose target it could not check first; `planvault run` in a terminal follows them, checking each)", describe(&e))
            })?;
            if !response.ok() {
                return Err(format!("{url} answered HTTP {}", response.status()));
            }
            // A page's first bytes only, as in the terminal: the model sees
            // its first characters, and an endless page must not fill the
            // worker's memory.
            let Some(body) = response.body() else {
                return Ok(String::new());
            };
            let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
            let mut bytes = Vec::new();
            while bytes.len() < FETCH_LIMIT_BYTES {
                let step = JsFuture::from(reader.read()).await.map_err(|e| format!("{url}: {}", describe(&e)))?;
                if Reflect::get(&step, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
                    break;
                }
                let chunk: Uint8Array = Reflect::get(&step, &"value".into())
                    .unwrap_or_default()
                    .unchecked_into();
                bytes.extend(chunk.to_vec());
            }
            let _ = reader.cancel();
            Ok(page_text(&bytes))
        }
        .await;
        if let Some(timer) = timer {
            self.scope.clear_timeout_with_handle(timer);
        }
        result
    }

    async fn sleep(&self, ms: u32) {
        let scope = self.scope.clone();
        let promise = Promise::new(&mut |resolve: Function, _reject: Function| {
            let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(
                &resolve,
                ms.min(i32::MAX as u32) as i32,
            );
        });
        let _ = JsFuture::from(promise).await;
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn post(&self, message: &FromWorker) {
        match &self.on_post {
            Some(f) => f(message),
            None => {
                let _ = self.scope.post_message(&js::encode(message, None));
            }
        }
    }

    async fn mcp_list(&self) -> Option<Result<planvault_llm::mcp::Catalog, String>> {
        if self.mcp.is_empty() {
            return None;
        }
        Some(self.mcp.list(self).await)
    }

    async fn mcp_call(
        &self,
        server: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<String, String> {
        self.mcp.call(self, server, tool, arguments).await
    }

    fn mcp_down(&self, server: &str) -> Option<String> {
        self.mcp.down(server)
    }

    /// As the terminal's host puts it back (`NativeHost::put_back`): the
    /// file's text written again (or what the tool made there removed),
    /// what the tool left, a folder too, kept beside it under the first
    /// name where nothing is. (A directory handle shows no symlinks.)
    async fn put_back(&self, path: &str, text: Option<&str>) -> Result<Option<String>, HostError> {
        // What the tool left, read before the file is put back.
        let left = match self.file(path, false).await? {
            Some(handle) => Some(file_bytes(path, &handle).await?),
            None => None,
        };
        let folder_left = left.is_none() && self.directory(path, false).await?.is_some();
        // Its copy goes under the first name where nothing is: a copy kept
        // before (perhaps a person's edit taken for the tool's) is never
        // written over.
        let mut aside = None;
        for n in 1..=9 {
            let candidate = match n {
                1 => format!("{path}{ASIDE}"),
                n => format!("{path}{ASIDE}-{n}"),
            };
            let taken = self.directory(&candidate, false).await?.is_some()
                || self.file(&candidate, false).await?.is_some();
            if !taken {
                aside = Some(candidate);
                break;
            }
        }
        let aside = aside.ok_or_else(|| {
            HostError::new(path, "no name beside it is free to keep what the tool left")
        })?;
        // A folder moved aside whole first, so nothing keeps the file from
        // coming back.
        if folder_left {
            self.move_folder(path, &aside).await?;
        }
        // Kept before the file is put back: a tab closed between the two
        // leaves the copy and the call's snapshot, never the file alone.
        let kept = folder_left || left.is_some();
        if let Some(bytes) = left {
            self.write_bytes(&aside, &bytes).await?;
        }
        // Written over the tool's change, which the run has seen.
        self.seen.borrow_mut().remove(path);
        match text {
            Some(text) => self.write(path, text).await?,
            None => self.remove(path).await?,
        }
        Ok(kept.then_some(aside))
    }

    /// Kept in this origin's IndexedDB (`decisions.js`), outside every
    /// vault.
    fn keeps_decisions(&self) -> bool {
        true
    }

    /// A store that cannot be read holds none: each is asked about.
    async fn decisions_taken_here(&self, heads: &[&str]) -> Vec<bool> {
        let found = decisions_taken(heads.join("\n")).await.ok();
        let found = found.and_then(|f| f.as_string()).unwrap_or_default();
        let mut found = found.chars();
        heads.iter().map(|_| found.next() == Some('1')).collect()
    }

    async fn keep_decisions(&self, heads: &[&str]) {
        let _ = keep_decisions(heads.join("\n")).await;
    }

    /// Kept in this origin's IndexedDB with the vault's handle, where the
    /// next run of the vault finds it ([`put_back_cut_off_call`]) if the
    /// tab closes during the call (best effort, as the terminal's).
    async fn keep_call_snapshot(&self, snapshot: Option<&str>) -> Result<(), HostError> {
        let root = self.root("")?;
        keep_snapshot(&root, snapshot.map(str::to_string))
            .await
            .map(|_| ())
            .map_err(|e| HostError::new("IndexedDB", describe(&e)))
    }

    /// A directory handle does not say whether its file system ignores
    /// case (it does on macOS and Windows), so names are compared as if it
    /// did: a tool may not write `START.md` beside a plan's `start.md`.
    fn case_insensitive(&self) -> bool {
        true
    }

    /// What the terminal prints and the app shows no other way: a journal
    /// repaired as the run resumed. (The rest the app shows from the run's
    /// own messages, or never happens in a browser run.)
    fn progress(&self, progress: &Progress<'_>) {
        if let Progress::JournalRepaired { kept_aside } = progress {
            self.post(&FromWorker::Trace {
                markdown: format!(
                    "The run's journal ended in a line cut short (a tab closed or the disk filled as it was written): that line is kept aside in {kept_aside}, and the run resumes from the entries before it."
                ),
            });
        }
    }
}

/// What a run cut off during a writing tool's call (its tab closed) left
/// changed in the vault, put back from the snapshot kept before the call
/// ([`Host::keep_call_snapshot`]), as the terminal's next start puts it
/// back: the paths put back, once, the snapshot dropped after. Call it
/// holding the vault's locks, before anything reads the plan.
pub async fn put_back_cut_off_call(host: &BrowserHost) -> Result<Vec<PutBack>, HostError> {
    let root = host.root("")?;
    // A store that cannot be read holds no snapshot: it is not the vault.
    let Some(text) = kept_snapshot(&root).await.ok().and_then(|k| k.as_string()) else {
        return Ok(Vec::new());
    };
    // Written whole before the call: one that does not parse was cut off
    // as it was written, and the call never made.
    let put_back = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(snapshot) => planvault_runner::driver::put_back_snapshot(host, &snapshot).await?,
        Err(_) => Vec::new(),
    };
    let _ = host.keep_call_snapshot(None).await;
    Ok(put_back)
}

/// A Web Lock held for as long as this value lives (the promise its
/// callback returned is resolved when dropped).
pub struct WebLock {
    release: Option<Function>,
}

impl Drop for WebLock {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            let _ = release.call0(&JsValue::NULL);
        }
    }
}

/// Take the Web Lock `name` if no one (no other tab or worker of this
/// origin) holds it: `Ok(None)` when someone does. Where the browser has
/// no Web Locks, a lock that holds nothing.
pub async fn web_lock(
    scope: &DedicatedWorkerGlobalScope,
    name: &str,
) -> Result<Option<WebLock>, String> {
    let locks = Reflect::get(&scope.navigator(), &"locks".into()).map_err(|e| describe(&e))?;
    if locks.is_undefined() {
        return Ok(Some(WebLock { release: None }));
    }
    let request: Function = Reflect::get(&locks, &"request".into())
        .map_err(|e| describe(&e))?
        .dyn_into()
        .map_err(|e| describe(&e))?;
    let mut decide = None;
    let decided = Promise::new(&mut |resolve, _| decide = Some(resolve));
    let mut release = None;
    let held = Promise::new(&mut |resolve, _| release = Some(resolve));
    let (Some(decide), Some(release)) = (decide, release) else {
        return Err("no promise".into());
    };
    let on_error = decide.clone();
    let callback = Closure::once_into_js(move |lock: JsValue| -> JsValue {
        let granted = !lock.is_null();
        let _ = decide.call1(&JsValue::NULL, &JsValue::from_bool(granted));
        if granted {
            held.into()
        } else {
            JsValue::UNDEFINED
        }
    });
    let options = js_sys::Object::new();
    let _ = Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE);
    let asked: Promise = request
        .call3(&locks, &name.into(), &options, &callback)
        .map_err(|e| describe(&e))?
        .unchecked_into();
    // A refused request (no lock manager here) settles the wait too.
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        let _ = on_error.call1(&JsValue::NULL, &e);
    });
    let _ = asked.catch(&on_error);
    // Called at most once, by the browser, after this function returns.
    on_error.forget();
    let outcome = JsFuture::from(decided).await.map_err(|e| describe(&e))?;
    match outcome.as_bool() {
        Some(true) => Ok(Some(WebLock {
            release: Some(release),
        })),
        Some(false) => Ok(None),
        None => Err(describe(&outcome)),
    }
}

/// A run as the app starts it: the vault taken (a Web Lock keeps this
/// browser's tabs apart, `.planvault/run.lock` a terminal run on the same
/// folder), its settings read (`[run] max_prompt_bytes`, `[fetch]
/// allow_hosts`), the run, the vault given back. `Err`: refused before
/// anything ran.
pub async fn start_run(
    host: &BrowserHost,
    inbox: &Inbox,
    start: StartRun,
    tab: &str,
) -> Result<Option<FinishReason>, RunError> {
    let name = host
        .root
        .as_ref()
        .map(|root| root.name())
        .unwrap_or_default();
    let web = web_lock(&host.scope, &format!("planvault-run:{name}"))
        .await
        .map_err(|e| RunError::new(ErrorCode::VaultIo, format!("cannot lock the vault: {e}")))?;
    let Some(web) = web else {
        return Err(RunError::new(
            ErrorCode::VaultLocked,
            format!("the vault {name} is being run in another tab of this browser"),
        )
        .with_hint("stop that run (or close its tab), then run again"));
    };
    // A plan folder is locked under its own name too: another tab that
    // opened the folder itself runs it under that name.
    let folder_name = start.folder.rsplit('/').next();
    let folder_web = match folder_name.filter(|f| !f.is_empty() && *f != name) {
        None => None,
        Some(folder) => {
            let held = web_lock(&host.scope, &format!("planvault-run:{folder}"))
                .await
                .map_err(|e| {
                    RunError::new(ErrorCode::VaultIo, format!("cannot lock the vault: {e}"))
                })?;
            match held {
                Some(held) => Some(held),
                None => {
                    return Err(RunError::new(
                        ErrorCode::VaultLocked,
                        format!(
                            "the folder {} is being run in another tab of this browser",
                            start.folder
                        ),
                    )
                    .with_hint("stop that run (or close its tab), then run again"))
                }
            }
        }
    };
    let me = Holder::browser(tab);
    lock::take(host, &me).await?;
    let folder_lock = (!start.folder.is_empty()).then(|| lock::folder_lock(&start.folder));
    if let Some(path) = &folder_lock {
        if let Err(refused) = lock::take_at(host, &me, path).await {
            lock::release(host, &me).await;
            return Err(refused);
        }
    }
    let outcome = async {
        // First, before the config or a note is read: a tool's change
        // left by a tab closed during its call would pick the servers and
        // the plan's steps.
        let put_back = put_back_cut_off_call(host).await.map_err(|e| {
            RunError::new(
                ErrorCode::VaultIo,
                format!("the last run was cut off during a tool's call, and what it changed could not be put back: {e}"),
            )
            .with_hint("look at the note it names, then run again")
        })?;
        if !put_back.is_empty() {
            let told: Vec<String> = put_back.iter().map(ToString::to_string).collect();
            host.post(&FromWorker::Trace {
                markdown: format!(
                    "The last run was cut off during a tool's call: planvault put back what it changed ({}).",
                    told.join("; ")
                ),
            });
        }
        // The app picked this start's MCP servers, their URLs and what
        // needs approval, from the config it read before: the tool's.
        if put_back.iter().any(|p| p.path == CONFIG_FILE) {
            return Err(RunError::new(
                ErrorCode::ChangedOnDisk,
                format!("the vault's {CONFIG_FILE} was put back after this run's MCP servers were read from the tool's version of it; nothing ran"),
            )
            .with_hint("start it again the same way (Resume run or Run): the servers are then read from the config as it is now"));
        }
        let settings = settings::read(host).await?;
        if settings.isolate {
            return Err(
                RunError::new(ErrorCode::PlanInvalid, settings::ISOLATE_REFUSED)
                    .with_hint(settings::ISOLATE_HINT),
            );
        }
        // Only hosts the person trusted as the app read the config, and
        // that it still lists.
        let trusted = &start.allow_hosts;
        let allowed = settings.allow_hosts.into_iter().filter(|h| trusted.contains(h));
        host.set_fetch_allow(allowed.collect());
        let options = Options {
            max_prompt_bytes: settings.max_prompt_bytes,
            proposal: settings.proposal,
            ..Options::default()
        };
        Ok(planvault_runner::run_with(host, inbox, start, options).await)
    }
    .await;
    if let Some(path) = &folder_lock {
        lock::release_at(host, &me, path).await;
    }
    lock::release(host, &me).await;
    drop(folder_web);
    drop(web);
    outcome
}

/// The MCP client's POSTs: the model calls' `fetch`, aborted by Stop and
/// by the timeout alike.
impl mcp_http::Fetch for BrowserHost {
    type Body = Body;

    async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &str,
        timeout_ms: u32,
    ) -> Result<(mcp_http::Head, Body), FetchError> {
        let (response, body) = self
            .send(url, headers, body, timeout_ms)
            .await
            .map_err(fetch_error)?;
        let header = |name: &str| response.headers().get(name).ok().flatten();
        let head = mcp_http::Head {
            status: response.status(),
            content_type: header("content-type")
                .unwrap_or_default()
                .to_ascii_lowercase(),
            session_id: header("mcp-session-id"),
            retry_after: header("retry-after").and_then(|v| planvault_llm::parse_retry_after(&v)),
        };
        Ok((head, body))
    }

    async fn chunk(&self, body: &mut Body) -> Result<Option<Vec<u8>>, FetchError> {
        self.read_chunk(body).await.map_err(fetch_error)
    }

    async fn sleep(&self, ms: u32) {
        Host::sleep(self, ms).await
    }
}

fn fetch_error(error: LlmError) -> FetchError {
    match error {
        LlmError::Timeout { .. } => FetchError::Timeout,
        LlmError::Interrupted => FetchError::Interrupted,
        other => FetchError::Connect(other.to_string()),
    }
}

/// The worker's state between messages.
struct Worker {
    scope: DedicatedWorkerGlobalScope,
    inbox: Inbox,
    running: Cell<bool>,
    host: RefCell<Option<Rc<BrowserHost>>>,
    /// This tab's id in the vault's lock file.
    tab: String,
}

impl Worker {
    fn post(&self, message: &FromWorker) {
        let _ = self.scope.post_message(&js::encode(message, None));
    }

    /// The Settings' test of a server: its tools' names, or why not (once,
    /// not retried; never carrying its token).
    async fn list_tools(&self, server: McpServer) {
        let host = BrowserHost::network(self.scope.clone());
        let once = RetryPolicy {
            attempts: 1,
            ..RetryPolicy::default()
        };
        let client = mcp_http::Client::new(vec![server.clone()], once);
        let (tools, error) = match client.tools(&host, &server).await {
            Ok(tools) => (tools.into_iter().map(|t| t.name).collect(), None),
            Err(e) => {
                let e = match server.token.as_deref().filter(|t| t.len() >= 4) {
                    Some(token) => e.replace(token, "<redacted>"),
                    None => e,
                };
                (Vec::new(), Some(e))
            }
        };
        self.post(&FromWorker::ToolList {
            server: server.name,
            tools,
            error,
        });
    }

    fn fail(&self, code: ErrorCode, message: impl Into<String>) {
        self.post(&FromWorker::Failed {
            error: RunError::new(code, message),
        });
    }

    fn on_message(self: &Rc<Self>, data: JsValue) {
        let message = match js::to_worker(&data) {
            Ok(message) => message,
            Err(err) => return self.post(&FromWorker::Failed { error: err.into() }),
        };
        match message {
            ToWorker::Start(start) => {
                if self.running.get() {
                    return self.fail(ErrorCode::BadState, "a run is already going; stop it first");
                }
                let Some(vault) =
                    js::vault(&data).and_then(|v| v.dyn_into::<FileSystemDirectoryHandle>().ok())
                else {
                    return self.fail(
                        ErrorCode::VaultIo,
                        "Start came without the vault's directory handle (`vault`)",
                    );
                };
                let mcp = mcp_http::Client::new(start.mcp_servers.clone(), start.retry)
                    .with_terminal_only(start.mcp_terminal_only.clone());
                let host = Rc::new(BrowserHost::new(vault, self.scope.clone(), mcp));
                *self.host.borrow_mut() = Some(host.clone());
                self.running.set(true);
                self.inbox.clear();
                let worker = self.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    if let Err(error) = start_run(&host, &worker.inbox, start, &worker.tab).await {
                        worker.post(&FromWorker::Failed { error });
                    }
                    worker.running.set(false);
                    *worker.host.borrow_mut() = None;
                });
            }
            ToWorker::ListTools { server } => {
                let worker = self.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    worker.list_tools(server).await;
                });
            }
            _ if !self.running.get() => self.fail(
                ErrorCode::BadState,
                "no run is going; the message was ignored",
            ),
            message => {
                if message == ToWorker::Stop {
                    if let Some(host) = self.host.borrow().as_ref() {
                        host.abort();
                    }
                }
                self.inbox.push(message);
            }
        }
    }
}

/// Entry point: install the message handler, then say ready (messages
/// posted before this are lost).
pub fn main() {
    console_error_panic_hook::set_once();
    // Note names compared composed, as Obsidian keys its paths.
    planvault_core::vault::links::install_nfc(|text| {
        js_sys::JsString::from(text).normalize("NFC").into()
    });
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let worker = Rc::new(Worker {
        scope: scope.clone(),
        inbox: Inbox::new(),
        running: Cell::new(false),
        host: RefCell::new(None),
        tab: format!("{:08x}", (js_sys::Math::random() * 4_294_967_296.0) as u32),
    });
    let handler = worker.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        handler.on_message(event.data())
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    worker.post(&FromWorker::Ready { version: VERSION });
    // The first protocol's greeting, for an app that still speaks it.
    let _ = scope.post_message(&JsValue::from_str("ready"));
}
