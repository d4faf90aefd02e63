//! The terminal's [`Host`]: the vault as a folder (every note write through
//! a temporary file, fsync'd and renamed, so an interrupted run never leaves
//! a torn note; appends synced before they return), model calls streamed
//! with `ureq`, `@tool` commands through `sh -c`, progress handed to the
//! caller. Natively only (feature `native`).

use crate::host::{Host, HostError, HttpHead, Progress};
use planvault_core::{Node, Plan};
use planvault_llm::{parse_retry_after, tools, LlmError, Surface};
use planvault_protocol::FromWorker;
use std::cell::{Cell, RefCell};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use planvault_core::engine::trace::JOURNAL_FILE;

/// The journal's text when only what follows its last line break is not
/// UTF-8: a full disk cut the last append inside a character. That tail
/// is read as well as it can be (the driver sets it aside as a torn line);
/// anything else that is not UTF-8 is not a journal the run wrote.
fn journal_text(bytes: Vec<u8>) -> Option<String> {
    let lines_end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    std::str::from_utf8(&bytes[..lines_end]).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// How long a `fetch_url` tool call may take.
const FETCH_URL_TIMEOUT: Duration = Duration::from_secs(20);
/// How many redirects a `fetch_url` call follows.
const FETCH_REDIRECTS: usize = 5;
/// A `@tool` command is killed after this long (exit 124).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// What a command's output may add to the journal.
const COMMAND_OUTPUT_CHARS: usize = 4000;

/// The environment variables a `@tool` command keeps; every other one
/// (API keys among them) is removed. The vault's config may add names.
pub const COMMAND_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "TERM",
    "TMPDIR",
    "TMP",
    "TEMP",
    "TZ",
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
];

/// The environment a `@tool` command runs with: of `vars`, the names of
/// [`COMMAND_ENV`] and `extra`.
pub fn command_env(
    vars: impl IntoIterator<Item = (String, String)>,
    extra: &[String],
) -> Vec<(String, String)> {
    vars.into_iter()
        .filter(|(name, _)| COMMAND_ENV.contains(&name.as_str()) || extra.contains(name))
        .collect()
}

type OnPost = Box<dyn FnMut(&FromWorker)>;
type OnProgress = Box<dyn FnMut(&Progress<'_>)>;
/// Where a command runs, decided when it is about to (an isolated run's
/// worktree, made on first need).
type Workdir = Box<dyn Fn() -> Result<PathBuf, String>>;
/// Why a write is refused (a protected path); `None`: allowed.
type RefuseNote = Box<dyn Fn(&str) -> Option<String>>;
type RefuseMcp = Box<dyn Fn(&str, &serde_json::Value) -> Option<String>>;

/// The vault folder, the network and the shell.
pub struct NativeHost {
    root: PathBuf,
    /// The plan's folder in the vault (empty: the whole vault): what the
    /// run writes really lies in it, whatever symlink a path goes through.
    plan_folder: String,
    /// Where `@tool` commands run (a PLAN.md's folder); else the current one.
    command_dir: Option<PathBuf>,
    /// Environment variables a command keeps beyond [`COMMAND_ENV`].
    command_env: Vec<String>,
    /// Hosts `fetch_url` may reach although they are not public.
    fetch_allow: Vec<String>,
    /// An optional bound on a whole model call, however steady its stream.
    total_timeout: Option<Duration>,
    /// Set by Ctrl-C: a model call waiting on its server gives up at once.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The PLAN.md a run amends, with its text as last read or written.
    plan_file: RefCell<Option<(PathBuf, String)>>,
    /// The plan file beside the run vault (a PLAN.md or a generated plan),
    /// which no tool may change (`Host::plan_file_now`).
    guarded_plan_file: Option<PathBuf>,
    /// Where a writing call's snapshot is kept (`call_snapshot_file`).
    call_snapshot: Option<PathBuf>,
    /// Each file's text as this host last read or wrote it: a write
    /// replaces a file only while it still holds that (or the new text).
    seen: RefCell<std::collections::HashMap<String, String>>,
    /// Whether the vault's file system ignores case, once probed.
    case_insensitive: Cell<Option<bool>>,
    agent: ureq::Agent,
    /// The vault's MCP servers (`[mcp.servers.NAME]`).
    mcp: Option<crate::mcp::Clients>,
    started: Instant,
    /// An isolated run's worktree: commands run there.
    workdir: Option<Workdir>,
    /// The guard's word on a `write_note` path.
    refuse_note: Option<RefuseNote>,
    /// The guard's word on an MCP tool call that writes.
    refuse_mcp: Option<RefuseMcp>,
    on_post: RefCell<OnPost>,
    on_progress: RefCell<OnProgress>,
    /// Where the decisions taken here are kept, and who is asked to take
    /// a resumed journal's others (`with_decision_record`).
    decisions: Option<(PathBuf, TakeDecisions)>,
}

/// Whether the person takes as given the decisions listed.
type TakeDecisions = Box<dyn Fn(&str) -> bool>;

impl NativeHost {
    /// A host over the vault folder `root`.
    pub fn new(root: &Path) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .build()
            .into();
        NativeHost {
            root: root.to_path_buf(),
            plan_folder: String::new(),
            command_dir: None,
            command_env: Vec::new(),
            fetch_allow: Vec::new(),
            stop: None,
            total_timeout: None,
            plan_file: RefCell::new(None),
            guarded_plan_file: None,
            call_snapshot: None,
            seen: RefCell::default(),
            case_insensitive: Cell::new(None),
            agent,
            mcp: None,
            started: Instant::now(),
            workdir: None,
            refuse_note: None,
            refuse_mcp: None,
            on_post: RefCell::new(Box::new(|_| {})),
            on_progress: RefCell::new(Box::new(|_| {})),
            decisions: None,
        }
    }

    /// Keep the decisions this host's runs journal in the record at
    /// `file` ([`decisions_file`]), and resume past a journal's decisions
    /// it does not hold only when `take` (the person, shown them) says so.
    pub fn with_decision_record(
        mut self,
        file: PathBuf,
        take: impl Fn(&str) -> bool + 'static,
    ) -> Self {
        self.decisions = Some((file, Box::new(take)));
        self
    }

    /// Run `@tool` commands in `dir`.
    pub fn with_command_dir(mut self, dir: &Path) -> Self {
        self.command_dir = Some(dir.to_path_buf());
        self
    }

    /// Run `@tool` commands where `dir` says when one is about to run (an
    /// isolated run's worktree, made on first need); its error is the
    /// command's output (exit 125) and nothing runs.
    pub fn with_workdir(mut self, dir: impl Fn() -> Result<PathBuf, String> + 'static) -> Self {
        self.workdir = Some(Box::new(dir));
        self
    }

    /// Refuse `write_note` paths `refuse` objects to (protected paths).
    pub fn with_note_guard(mut self, refuse: impl Fn(&str) -> Option<String> + 'static) -> Self {
        self.refuse_note = Some(Box::new(refuse));
        self
    }

    /// Refuse MCP tool calls `refuse` objects to (a write to a protected
    /// path), before they reach the server.
    pub fn with_mcp_guard(
        mut self,
        refuse: impl Fn(&str, &serde_json::Value) -> Option<String> + 'static,
    ) -> Self {
        self.refuse_mcp = Some(Box::new(refuse));
        self
    }

    /// Let `@tool` commands keep these environment variables too.
    pub fn with_command_env(mut self, names: &[String]) -> Self {
        self.command_env = names.to_vec();
        self
    }

    /// Offer these MCP servers' tools to the nodes that declare them.
    pub fn with_mcp(mut self, clients: crate::mcp::Clients) -> Self {
        self.mcp = Some(clients);
        self
    }

    /// The MCP clients, if any server is configured.
    pub fn mcp(&self) -> Option<&crate::mcp::Clients> {
        self.mcp.as_ref()
    }

    /// Let `fetch_url` reach these hosts (names or addresses) although they
    /// are loopback, private or link-local.
    pub fn with_fetch_allow(mut self, hosts: &[String]) -> Self {
        self.fetch_allow = hosts.to_vec();
        self
    }

    /// Bound each model call's whole time too (the timeout the run is given
    /// bounds the wait for the head and each silence in the stream).
    pub fn with_total_timeout(mut self, total: Option<Duration>) -> Self {
        self.total_timeout = total;
        self
    }

    /// Stop waiting on a model's reply as soon as `flag` is set (Ctrl-C).
    pub fn with_stop_flag(mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// The next piece of a reply, or `Interrupted` once a stop is asked,
    /// looking every 50 ms.
    fn next_piece(&self, body: &mut Body) -> Result<Piece, LlmError> {
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            if self
                .stop
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
            {
                return Err(LlmError::Interrupted);
            }
            match body.pieces.recv_timeout(Duration::from_millis(50)) {
                Ok(piece) => return Ok(piece),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(LlmError::Connect {
                        url: body.url.clone(),
                        reason: "the reply ended unexpectedly".into(),
                    })
                }
            }
        }
    }

    /// Whether `fetch_url` may reach `url`: its host allowed by the vault,
    /// or every address its name resolves to public. (A name that resolves
    /// otherwise a moment later is refused again by [`fetch_agent`]'s
    /// resolver, where the connection is made.)
    fn fetch_allowed(&self, url: &str) -> Result<(), String> {
        use std::net::ToSocketAddrs;
        if tools::fetch_policy(url, &self.fetch_allow)? {
            return Ok(());
        }
        let (host, port) = tools::url_host(url)?;
        let addrs = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| format!("{url}: {host}: {e}"))?;
        for addr in addrs {
            if let Some(why) = refused_ip(addr.ip()) {
                return Err(format!(
                    "{url}: {host} resolves to {}, a {why} address; fetch_url reaches only public hosts (a vault allows one in .planvault/config.toml: [fetch] allow_hosts)",
                    addr.ip()
                ));
            }
        }
        Ok(())
    }

    /// The run is of the plan in `folder` (vault-relative) of this vault:
    /// every write, append and removal must really land in that folder, and
    /// a symlinked note in it that leads out of it is not listed (the run
    /// would write its status there).
    pub fn with_plan_folder(mut self, folder: &str) -> Self {
        self.plan_folder = folder.trim_matches('/').to_string();
        self
    }

    /// The PLAN.md amendments go to, as the run read it.
    pub fn with_plan_file(self, path: &Path, text: &str) -> Self {
        // A symlinked plan is written where it lives (a rename onto the
        // link would replace the link with a file of its own).
        let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        *self.plan_file.borrow_mut() = Some((path.clone(), text.to_string()));
        self.with_guarded_plan_file(&path)
    }

    /// Keep each writing call's snapshot where the next `planvault run` of
    /// `plan` (the path it is given) finds it ([`cut_off_call`]).
    pub fn with_call_snapshot(mut self, plan: &Path) -> Self {
        self.call_snapshot = call_snapshot_file(plan);
        self
    }

    /// The plan file beside the run vault (a generated plan's; a PLAN.md's
    /// is [`NativeHost::with_plan_file`]): a tool's change of it is put
    /// back, as a vault's note is.
    pub fn with_guarded_plan_file(mut self, path: &Path) -> Self {
        self.guarded_plan_file =
            Some(fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
        self
    }

    /// Hear every message the run posts.
    pub fn on_post(self, f: impl FnMut(&FromWorker) + 'static) -> Self {
        *self.on_post.borrow_mut() = Box::new(f);
        self
    }

    /// Hear the run's progress beyond its messages.
    pub fn on_progress(self, f: impl FnMut(&Progress<'_>) + 'static) -> Self {
        *self.on_progress.borrow_mut() = Box::new(f);
        self
    }

    /// The real path of the vault-relative `rel`, refusing one that
    /// leaves the vault: a `..`, or a symlink (to a file or a folder) whose
    /// target is outside the vault's real root or does not exist.
    fn path(&self, rel: &str) -> Result<PathBuf, HostError> {
        let root = fs::canonicalize(&self.root).map_err(|e| io_error(rel, e))?;
        confine(&root, rel)
    }

    /// The real path of the vault-relative `rel` for a change ([`confine`]d
    /// to the vault): where it really lands (symlinks followed) must be in
    /// the plan's folder, and in a run's trace folder
    /// only when `rel` names one: a symlinked folder may not carry a
    /// tool's note out of the plan or into a trace. Public for hosts that
    /// write through their own compare-and-swap (Temporal's activities).
    pub fn write_path(&self, rel: &str) -> Result<PathBuf, HostError> {
        let root = fs::canonicalize(&self.root).map_err(|e| io_error(rel, e))?;
        let full = confine(&root, rel)?;
        let relative = |path: &Path| {
            path.strip_prefix(&root)
                .map(|p| {
                    p.components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/")
                })
                .unwrap_or_default()
        };
        // The folders on the way are the ones named: a symlinked folder
        // would carry the change (a `CONFIG.md`, a note) anywhere in the
        // vault under a name the checks did not see. A symlinked note
        // itself is judged by where it leads, below.
        let (folders, _) = rel.rsplit_once('/').unwrap_or(("", rel));
        let through = relative(&confine(&root, folders)?);
        if through != folders {
            return Err(HostError::new(
                rel,
                format!("{folders} is a symlinked folder (it leads to {through}); a run writes nothing through one"),
            ));
        }
        let real = relative(&full);
        use planvault_core::vault::{in_folder, in_trace_folder};
        if !in_folder(&real, &self.plan_folder) {
            return Err(HostError::new(
                rel,
                format!(
                    "leads through a symlink to {real}, outside the plan's folder {}/; refused",
                    self.plan_folder
                ),
            ));
        }
        if in_trace_folder(&real) != in_trace_folder(rel) {
            return Err(HostError::new(
                rel,
                format!("leads through a symlink to {real}, a run's trace; refused"),
            ));
        }
        Ok(full)
    }

    /// Whether the vault's file system ignores case (probed once by
    /// creating a dot-file and looking it up in upper case).
    fn probe_case(&self) -> bool {
        if let Some(known) = self.case_insensitive.get() {
            return known;
        }
        let probe = self
            .root
            .join(format!(".planvault-case-probe-{}", std::process::id()));
        // Made new, so a symlink planted under the name is not followed.
        let _ = fs::remove_file(&probe);
        let made = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe);
        let found = made.is_ok() && {
            let upper = self
                .root
                .join(format!(".PLANVAULT-CASE-PROBE-{}", std::process::id()));
            let seen = fs::symlink_metadata(upper).is_ok();
            let _ = fs::remove_file(&probe);
            seen
        };
        self.case_insensitive.set(Some(found));
        found
    }
}

/// Whether a vault-relative path passes through a dot-folder or names a
/// dot-file (`.obsidian/`, `.git/`, `.trash/`: settings, keys, history).
fn dotted(rel: &Path) -> bool {
    rel.components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
}

/// planvault's state outside every vault: `$XDG_STATE_HOME/planvault`,
/// else `~/.local/state/planvault`; `None` where neither is set.
fn state_dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("planvault"))
}

/// Where the terminal keeps the decisions its runs journaled or a person
/// took as given ([`Host::keep_decisions`]): one chain hash per line, in
/// the state folder, where nothing a vault brings can add one.
pub fn decisions_file() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("decisions"))
}

/// Which of these decisions (chain hashes) `file` records; a record that
/// cannot be read holds none, so each is asked about.
pub fn decisions_taken(file: &Path, heads: &[&str]) -> Vec<bool> {
    let text = fs::read_to_string(file).unwrap_or_default();
    let kept: std::collections::HashSet<&str> = text.lines().collect();
    heads.iter().map(|h| kept.contains(h)).collect()
}

/// Add these decisions to the record at `file`, durably; each line is
/// one short append, so runs of other vaults adding theirs at once do not
/// mix.
pub fn keep_decisions(file: &Path, heads: &[&str]) -> std::io::Result<()> {
    use std::io::Write;
    if heads.is_empty() {
        return Ok(());
    }
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut record = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    for head in heads {
        record.write_all(format!("{head}\n").as_bytes())?;
    }
    record.sync_all()
}

/// Take these decisions out of the record at `file` (`planvault trust
/// --forget`): a resume past them asks again. Rewritten whole; a decision
/// another run appends in that instant may be dropped with them, and is
/// then asked about again (the safe side). How many were there.
pub fn forget_decisions(file: &Path, heads: &[&str]) -> std::io::Result<usize> {
    let text = match fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let forgotten: std::collections::HashSet<&str> = heads.iter().copied().collect();
    let (gone, kept): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|line| forgotten.contains(line));
    if gone.is_empty() {
        return Ok(0);
    }
    let kept: String = kept.iter().map(|line| format!("{line}\n")).collect();
    write_atomic(file, &kept)?;
    let unique: std::collections::HashSet<&str> = gone.into_iter().collect();
    Ok(unique.len())
}

/// Where a run keeps what a writing tool's call may not change while the
/// call is made ([`Host::keep_call_snapshot`]): outside the vault, where a
/// tool that writes in it cannot forge what the next start would put back
/// (`$XDG_STATE_HOME/planvault/tool-calls/`, else `~/.local/state/…`), one
/// file per plan as `planvault run` is given it (`plan`: a vault, a plan's
/// folder, a PLAN.md, a generated plan). `None` where neither is set.
fn call_snapshot_file(plan: &Path) -> Option<PathBuf> {
    let state = state_dir()?;
    let plan = fs::canonicalize(plan).unwrap_or_else(|_| plan.to_path_buf());
    let name = planvault_core::engine::journal::sha256_hex(plan.to_string_lossy().as_bytes());
    Some(
        state
            .join("tool-calls")
            .join(format!("{}.json", &name[..32])),
    )
}

/// What a run killed during a writing tool's call (SIGKILL, a power cut)
/// left: the snapshot taken before the call, with the vault and plan
/// folder the run had, which the next start puts back from
/// ([`CutOffCall::put_back`]) before it reads anything of the plan: a
/// config the tool wrote would otherwise pick the run's path (`[run]
/// isolate`) and start its servers, a marker it made would root the plan
/// elsewhere, a note it broke would stop every start as unsound.
pub struct CutOffCall {
    file: PathBuf,
    snapshot: serde_json::Value,
    /// The run's vault (real path) and plan folder, as it had them.
    pub root: PathBuf,
    pub folder: String,
}

/// The snapshot a run of `plan` killed during a writing call left, if any
/// (one that cannot be read is none: the state folder is not the vault's).
pub fn cut_off_call(plan: &Path) -> Option<CutOffCall> {
    let file = call_snapshot_file(plan)?;
    let text = fs::read_to_string(&file).ok()?;
    // Written whole before the call: one that does not parse was cut off
    // as it was written, and the call never made.
    let Ok(snapshot) = serde_json::from_str::<serde_json::Value>(&text) else {
        let _ = fs::remove_file(&file);
        return None;
    };
    let root = PathBuf::from(snapshot["root"].as_str()?);
    let folder = snapshot["folder"].as_str().unwrap_or_default().to_string();
    Some(CutOffCall {
        file,
        snapshot,
        root,
        folder,
    })
}

impl CutOffCall {
    /// Drop the snapshot unused (its vault is gone).
    pub fn forget(self) {
        let _ = fs::remove_file(&self.file);
    }

    /// Whether the run's vault is no more (moved, deleted): not one that
    /// cannot be read now (no permission, a drive not mounted), whose
    /// snapshot waits for it.
    pub fn vault_gone(&self) -> bool {
        matches!(fs::metadata(&self.root), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
    }

    /// Whether it keeps a plan file beside the vault (a PLAN.md, a
    /// generated plan), to be put back even where the vault is gone.
    pub fn has_plan_file(&self) -> bool {
        self.snapshot["plan_file"].is_string() && self.snapshot["plan_file_path"].is_string()
    }

    /// Put back what the call changed of the plan's notes, what would make
    /// a folder of it a vault, the vault's config and the plan file, as it
    /// would have been once the call returned (what the tool left kept
    /// beside it; an edit a person made since is taken for the tool's and
    /// kept so too). Call it holding the vault's lock. What was put back,
    /// for the person to be told; the snapshot is gone after.
    pub async fn put_back(self) -> Result<Vec<String>, HostError> {
        let snapshot = &self.snapshot;
        let mut host = NativeHost::new(&self.root).with_plan_folder(&self.folder);
        let plan_file = snapshot["plan_file_path"].as_str().map(PathBuf::from);
        if let Some(path) = &plan_file {
            host = host.with_guarded_plan_file(path);
        }
        // A run vault a person removed since (`PLAN.run/`) has nothing to
        // put back; the PLAN.md beside it still has.
        let mut put_back = match self.vault_gone() {
            true => Vec::new(),
            false => crate::driver::put_back_snapshot(&host, snapshot)
                .await?
                .iter()
                .map(ToString::to_string)
                .collect(),
        };
        if let (Some(was), Some(path)) = (snapshot["plan_file"].as_str(), &plan_file) {
            if host.plan_file_now().await.is_some_and(|now| now != was) {
                let aside = host.put_back_plan_file(was).await?;
                let name = |p: &Path| {
                    p.file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned()
                };
                let aside = aside.map(|aside| name(Path::new(&aside)));
                put_back.push(crate::driver::put_back_told(&name(path), aside.as_deref()));
            }
        }
        match fs::remove_file(&self.file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_error(&self.file.display().to_string(), e))
            }
            _ => {}
        }
        Ok(put_back)
    }
}

/// Put `folder/name` (shown as `path`) back to `text` (`None`: no file)
/// after a tool changed it, what the tool left kept beside it under the
/// first name where nothing is: that name, `None` where it left nothing.
fn put_back_at(
    folder: &Path,
    name: &str,
    path: &str,
    text: Option<&str>,
) -> Result<Option<PathBuf>, HostError> {
    let full = folder.join(name);
    // What the tool left, kept aside before the note is put back: a crash
    // between the two leaves the tool's copy and the call's snapshot, whose
    // put-back on the next start keeps it again, never the note alone.
    let meta = match fs::symlink_metadata(&full) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error(path, e)),
    };
    let link = match &meta {
        Some(meta) if meta.file_type().is_symlink() => {
            Some(fs::read_link(&full).map_err(|e| io_error(path, e))?)
        }
        _ => None,
    };
    let left = match &meta {
        Some(meta) if meta.is_file() => Some(fs::read(&full).map_err(|e| io_error(path, e))?),
        _ => None,
    };
    // The first name beside it where nothing is: a copy kept before
    // (perhaps a person's edit taken for the tool's) is never written
    // over, and a folder left there keeps nothing from coming back.
    let folder_left = meta.as_ref().is_some_and(|meta| meta.is_dir());
    let aside = (1..=9)
        .map(|n| match n {
            1 => folder.join(format!("{name}{}", crate::host::ASIDE)),
            n => folder.join(format!("{name}{}-{n}", crate::host::ASIDE)),
        })
        .find(|candidate| fs::symlink_metadata(candidate).is_err())
        .ok_or_else(|| {
            HostError::new(path, "no name beside it is free to keep what the tool left")
        })?;
    if folder_left {
        // A folder where the note was: moved aside whole.
        fs::rename(&full, &aside).map_err(|e| io_error(path, e))?;
    }
    if let Some(bytes) = left {
        write_atomic(&aside, &String::from_utf8_lossy(&bytes))
            .map_err(|e| io_error(&aside.to_string_lossy(), e))?;
    }
    #[cfg(unix)]
    if let Some(target) = link {
        std::os::unix::fs::symlink(target, &aside)
            .map_err(|e| io_error(&aside.to_string_lossy(), e))?;
    }
    #[cfg(not(unix))]
    let _ = link;
    match text {
        // Written over a link the tool left, never through it.
        Some(text) => write_atomic(&full, text).map_err(|e| io_error(path, e))?,
        None => match fs::remove_file(&full) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_error(path, e)),
            _ => {}
        },
    }
    Ok(meta.is_some().then_some(aside))
}

/// A tool's note is written as itself, never through a symlink standing
/// at its name: one a tool made since the run began would carry the write
/// onto any file it leads to in the folder, a plan's note among them,
/// which the next resume would read as a step.
pub fn no_symlink_at(root: &Path, rel: &str) -> Result<(), HostError> {
    match fs::symlink_metadata(root.join(rel)) {
        Ok(meta) if meta.file_type().is_symlink() => Err(HostError::new(
            rel,
            "a symlink stands there; a tool's note is written as itself, never through one",
        )),
        _ => Ok(()),
    }
}

/// `rel` under the real folder `root`, each existing component's symlink
/// resolved and required to stay inside `root`, and out of its dot-folders
/// unless `rel` names one: a plugin's settings (an API key) or `.git/config`
/// read under a note's name would reach the model.
pub fn confine(root: &Path, rel: &str) -> Result<PathBuf, HostError> {
    let real = confine_in_vault(root, rel)?;
    if !dotted(Path::new(rel)) && real.strip_prefix(root).is_ok_and(dotted) {
        return Err(HostError::new(
            rel,
            "a symlink into a dot-folder of the vault (its settings or history); refused",
        ));
    }
    Ok(real)
}

fn confine_in_vault(root: &Path, rel: &str) -> Result<PathBuf, HostError> {
    use std::path::Component;
    let mut current = root.to_path_buf();
    let mut exists = true;
    for component in Path::new(rel).components() {
        let Component::Normal(name) = component else {
            return Err(HostError::new(rel, "not a path inside the vault"));
        };
        let next = current.join(name);
        if !exists {
            current = next;
            continue;
        }
        match fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let real = fs::canonicalize(&next).map_err(|_| {
                    HostError::new(rel, "a symlink whose target does not exist; refused")
                })?;
                if !real.starts_with(root) {
                    return Err(HostError::new(
                        rel,
                        "a symlink to outside the vault; refused",
                    ));
                }
                current = real;
            }
            Ok(_) => current = next,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                exists = false;
                current = next;
            }
            Err(e) => return Err(io_error(rel, e)),
        }
    }
    Ok(current)
}

/// A file's bytes, or how many it holds where that is more than `limit`:
/// nothing past `limit` is read, as a sparse file of many GB would fill the
/// memory. A caller checks first that it is a regular file (opening a pipe
/// waits for a writer).
pub fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Result<Vec<u8>, u64>> {
    let file = fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > limit {
        return Ok(Err(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    match bytes.len() as u64 {
        // It grew past the limit while read.
        read if read > limit => Ok(Err(read)),
        _ => Ok(Ok(bytes)),
    }
}

/// An I/O error as the run reports it (a full disk recognised).
pub fn io_error(path: &str, err: std::io::Error) -> HostError {
    // ENOSPC and EDQUOT (Linux 28 and 122; macOS 28 and 69).
    let full = err.kind() == std::io::ErrorKind::StorageFull
        || err.kind() == std::io::ErrorKind::QuotaExceeded
        || matches!(err.raw_os_error(), Some(28));
    // ENAMETOOLONG (Linux 36, macOS 63): the name, not the storage, is at
    // fault; a tool told so can write under another.
    let too_long = matches!(err.raw_os_error(), Some(36)) && cfg!(target_os = "linux")
        || matches!(err.raw_os_error(), Some(63)) && cfg!(target_os = "macos");
    if full {
        HostError::disk_full(path)
    } else if too_long {
        HostError::new(path, "the name is too long for the file system; refused")
    } else if err.kind() == std::io::ErrorKind::NotADirectory {
        // As a name too long: a model's `a.md` then `a.md/b.md` must not
        // stop the run for good (its resume replays the same call).
        HostError::new(path, "a file stands where its path needs a folder; refused")
    } else if err.kind() == std::io::ErrorKind::IsADirectory {
        HostError::new(path, "is a folder, not a note; refused")
    } else if matches!(
        err.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidFilename
    ) {
        // A name the file system will not take (a NUL the tools' own check
        // missed, a name it cannot encode): the same for every resume.
        HostError::new(path, "the file system takes no such name; refused")
    } else {
        HostError::failure(path, err.to_string())
    }
}

use crate::lock::Holder;
pub use crate::lock::LOCK_FILE;

/// Why a run could not take its vault.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another run holds it: the message names that run (a process, or a
    /// browser tab) and how to break a stale lock.
    #[error("{}", holder.refusal(path))]
    Held { holder: Box<Holder>, path: String },
    #[error("cannot lock the vault ({path}): {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// A run's hold on its vault: `.planvault/run.lock` with the process id and
/// host ([`crate::lock`]), removed when dropped. A lock left by a dead
/// process of this host is stale and taken over; one from another host or a
/// browser tab is not (neither can be seen from here).
///
/// The lock appears with its text or not at all (written beside it, then
/// hard-linked into place, which fails when a lock is there), so a crash
/// never leaves an empty one. A stale lock is taken over by renaming it
/// away first: of two runs taking it over at once, one renames it and the
/// other finds it gone or finds the first one's lock, never removes that.
#[derive(Debug)]
pub struct VaultLock {
    path: PathBuf,
    /// What this run wrote into the lock: dropping removes only that.
    text: String,
}

impl VaultLock {
    pub fn acquire(vault: &Path) -> Result<VaultLock, LockError> {
        let path = vault.join(LOCK_FILE);
        let shown = path.display().to_string();
        let io = |source| LockError::Io {
            path: shown.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            lock_folder(parent).map_err(io)?;
        }
        let me = Holder::process(std::process::id(), &host_name())
            .started(process_start(std::process::id()))
            .in_namespace(pid_namespace())
            .render();
        for _ in 0..3 {
            if create_with_text(&path, &me).map_err(io)? {
                sweep_lock_leftovers(&path);
                sweep_write_leftovers(vault);
                return Ok(VaultLock { path, text: me });
            }
            let Ok(found) = fs::read_to_string(&path) else {
                continue; // gone meanwhile: try again
            };
            let holder = Holder::parse(&found);
            let abandoned = found.trim().is_empty() && older_than(&path, LOCK_WRITE_GRACE);
            if !abandoned && !stale(&holder) {
                return Err(LockError::Held {
                    holder: Box::new(holder),
                    path: shown,
                });
            }
            if let Some(holder) = take_over(&path, &found) {
                return Err(LockError::Held {
                    holder: Box::new(holder),
                    path: shown,
                });
            }
        }
        Err(io(std::io::Error::other("the lock kept changing")))
    }
}

/// Make `folder` (a vault's `.planvault/`) for its lock, refused when it
/// is a symlink: the lock, and the leftovers swept beside it, stay in the
/// vault, never where a shipped link leads.
pub fn lock_folder(folder: &Path) -> std::io::Result<()> {
    if fs::symlink_metadata(folder).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(format!(
            "{} is a symlink; a vault keeps its run's lock and config in a folder of its own",
            folder.display()
        )));
    }
    fs::create_dir_all(folder)
}

/// Removes the stale lock at `path` that read `found`, by renaming it away
/// first; `Some` with its holder when what was renamed turned out to be
/// another run's fresh lock (taken between the read and the rename), which
/// is put back.
fn take_over(path: &Path, found: &str) -> Option<Holder> {
    let aside = path.with_extension(format!("lock.stale-{}", std::process::id()));
    if fs::rename(path, &aside).is_err() {
        return None; // gone: another run took it over first
    }
    let moved = fs::read_to_string(&aside).unwrap_or_default();
    let fresh = (moved != found).then(|| {
        let _ = fs::hard_link(&aside, path);
        Holder::parse(&moved)
    });
    let _ = fs::remove_file(&aside);
    fresh
}

/// How long an empty lock file may be on its way to holding its text (a
/// lock written where hard links are not available).
const LOCK_WRITE_GRACE: Duration = Duration::from_secs(30);

/// Creates `path` holding `text` unless a file is there (`Ok(false)`): the
/// text is written beside it and hard-linked into place, so the file never
/// exists empty; where hard links are not available, created exclusively
/// and then written.
fn create_with_text(path: &Path, text: &str) -> std::io::Result<bool> {
    let beside = path.with_extension(format!("lock.new-{}", std::process::id()));
    let _ = fs::remove_file(&beside);
    {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&beside)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()?;
    }
    let linked = fs::hard_link(&beside, path);
    let _ = fs::remove_file(&beside);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) => match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut file) => {
                file.write_all(text.as_bytes())?;
                file.sync_data()?;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        },
    }
}

/// Removes what runs killed while taking the lock left beside it (a
/// `run.lock.new-PID` not yet linked, a `run.lock.stale-PID` not yet
/// removed), once old enough that no run is still at it.
fn sweep_lock_leftovers(lock: &Path) {
    let (Some(dir), Some(name)) = (lock.parent(), lock.file_name()) else {
        return;
    };
    let name = name.to_string_lossy();
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let ours = [".new-", ".stale-"]
            .iter()
            .any(|kind| file.starts_with(&format!("{name}{kind}")));
        if ours && older_than(&entry.path(), LOCK_WRITE_GRACE) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Removes what writes cut off by a kill left in the vault (the dot-file
/// [`write_atomic`] renames over its file), once old enough that no write
/// is still at it: a later write of that file would remove it, but a file
/// never written again kept it, shown by git and synced by the vault's
/// sync. The vault's dot-folders and symlinked folders are not entered.
fn sweep_write_leftovers(vault: &Path) {
    let mut pending = vec![vault.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') {
                    pending.push(entry.path());
                }
            } else if name.starts_with('.')
                && name.ends_with(WRITE_LEFTOVER)
                && older_than(&entry.path(), LOCK_WRITE_GRACE)
            {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// The end of the name of [`write_atomic`]'s dot-file.
const WRITE_LEFTOVER: &str = ".planvault-tmp";

/// Whether `path` (not what a symlink there leads to) was last modified
/// more than `age` ago.
fn older_than(path: &Path, age: Duration) -> bool {
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|elapsed| elapsed > age)
}

impl Drop for VaultLock {
    fn drop(&mut self) {
        // Only this run's lock: one broken by hand and taken by another run
        // stays.
        if fs::read_to_string(&self.path).is_ok_and(|text| text == self.text) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Whether a lock file's holder is a process of this machine that has
/// ended (a holder elsewhere, a browser tab or a Temporal run cannot be
/// seen from here, so is never stale).
pub fn stale(holder: &Holder) -> bool {
    if holder.host != host_name() {
        return false;
    }
    let Ok(pid) = holder.pid.parse::<u32>() else {
        return false;
    };
    // Its pid counted elsewhere (a container given this machine's name, on
    // a vault it shares): here that pid is another process, or none.
    if holder
        .pidns
        .as_ref()
        .is_some_and(|theirs| pid_namespace().as_ref() != Some(theirs))
    {
        return false;
    }
    // A process with its pid that started at another time took the pid
    // after the holder ended (a restarted container counts from 1 again,
    // and its run is then the pid its lock names).
    !process_alive(pid)
        || holder
            .started
            .as_ref()
            .zip(process_start(pid))
            .is_some_and(|(then, now)| *then != now)
}

/// When process `pid` of this machine started, to tell it from a later
/// process given its pid: the boot's id and the start time since boot
/// (Linux; `None` elsewhere, where a pid alone names a holder).
pub fn process_start(pid: u32) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command's name, which may hold spaces and
    // parentheses; the start time is the 22nd field.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let start = after_name.split_whitespace().nth(19)?;
    let boot = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(format!("{}:{start}", boot.trim()))
}

/// The pid namespace this process counts pids in (`pid:[4026531836]`;
/// Linux, `None` elsewhere).
pub fn pid_namespace() -> Option<String> {
    let link = fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// This machine's name, as a lock file records it.
pub fn host_name() -> String {
    let read = fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| {
            std::process::Command::new("hostname")
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
        });
    read.map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether a process of this machine is running.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        return Path::new(&format!("/proc/{pid}")).exists();
    }
    if cfg!(unix) {
        return std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    }
    // Elsewhere a lock is never judged stale here: the message says how to
    // break it.
    true
}

/// Write through a dot-file in the same folder, fsync it and rename it over
/// the target. The dot-file is made new: one left behind by a crash is
/// removed first, and one planted as a symlink (a cloned vault's
/// `.draft.md.planvault-tmp -> ~/.bashrc`) is never followed.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    write_atomic_unless_changed(path, text, |_| true).map(|_| ())
}

/// [`write_atomic`], made only if `unchanged` holds for what the file holds
/// (`None`: no file) once the new text is on disk beside it, just before
/// the rename; `Ok(false)` when it did not, and nothing was replaced. The
/// file keeps its permission bits (a group-writable note stays so).
pub fn write_atomic_unless_changed(
    path: &Path,
    text: &str,
    unchanged: impl Fn(Option<&[u8]>) -> bool,
) -> std::io::Result<bool> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Within a file name's 255 bytes whatever the note's (writes are one
    // at a time, so two long names sharing the cut cannot meet).
    let mut cut = name.len().min(200);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let tmp = path.with_file_name(format!(".{}{WRITE_LEFTOVER}", &name[..cut]));
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        if let Ok(meta) = fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_data()?;
    }
    let now = match fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if !unchanged(now.as_deref()) {
        fs::remove_file(&tmp)?;
        return Ok(false);
    }
    fs::rename(&tmp, path)?;
    Ok(true)
}

/// The agent `fetch_url` reaches the web with: it connects only to the
/// addresses it checked, so a name that resolves to a public address for
/// the check and to this machine a moment later (DNS rebinding) is
/// refused at the connection too. Hosts in `allow` are not judged.
fn fetch_agent(allow: &[String]) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        // Never through the environment's proxy (`HTTP_PROXY`): the checks
        // would judge the proxy, which reaches by name what they refuse.
        .proxy(None)
        .timeout_global(Some(FETCH_URL_TIMEOUT))
        .max_redirects(0)
        .http_status_as_error(false)
        .build();
    let resolver = PublicOnly {
        allow: allow.to_vec(),
    };
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::default(),
        resolver,
    )
}

/// Why `fetch_url` may not reach an address from this machine: the
/// reasons of [`tools::forbidden_ip`], or one of this machine's own
/// addresses (a service listening on every interface answers at the
/// machine's public or global IPv6 address as it does on loopback).
fn refused_ip(ip: std::net::IpAddr) -> Option<&'static str> {
    tools::forbidden_ip(ip)
        .or_else(|| is_own_address(ip).then_some("machine-local (this machine's own)"))
}

/// Whether `ip` is one of this machine's addresses: the kernel routes to
/// it over loopback and picks it as the source (a UDP connect sends
/// nothing).
pub fn is_own_address(ip: std::net::IpAddr) -> bool {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, UdpSocket};
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let any: IpAddr = match ip {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let Ok(socket) = UdpSocket::bind((any, 0)) else {
        return false;
    };
    socket.connect((ip, 9)).is_ok() && socket.local_addr().is_ok_and(|local| local.ip() == ip)
}

/// A resolver that hands out public addresses only ([`refused_ip`]).
#[derive(Debug)]
struct PublicOnly {
    allow: Vec<String>,
}

impl ureq::unversioned::resolver::Resolver for PublicOnly {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        use ureq::unversioned::resolver::DefaultResolver;
        let addrs = DefaultResolver::default().resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default().trim_end_matches('.');
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = uri
            .port_u16()
            .unwrap_or(if uri.scheme_str() == Some("https") {
                443
            } else {
                80
            });
        if tools::host_allowed(&self.allow, host, port) {
            return Ok(addrs);
        }
        match addrs
            .iter()
            .find_map(|a| Some((a.ip(), refused_ip(a.ip())?)))
        {
            Some((ip, why)) => Err(ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{host} resolves to {ip}, a {why} address; fetch_url reaches only public hosts"
                ),
            ))),
            None => Ok(addrs),
        }
    }
}

/// Where a redirect's `Location` leads from `base`.
fn redirect_target(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_string();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{}{rest}", &base[..scheme_end]);
    }
    let path_start = base[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(base.len(), |i| scheme_end + i);
    if location.starts_with('/') {
        return format!("{}{location}", &base[..path_start]);
    }
    let path = base[path_start..]
        .split(['?', '#'])
        .next()
        .unwrap_or_default();
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    format!("{}{dir}{location}", &base[..path_start])
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

/// A read of a reply's body failed: a stall is a timeout; anything else
/// (a reset, a body shorter than its length) means the reply broke off,
/// not that the server could not be reached.
fn broke_off(url: &str, e: std::io::Error) -> LlmError {
    match io(url, e) {
        LlmError::Connect { url, reason } => LlmError::BrokeOff { url, reason },
        other => other,
    }
}

/// A reply body being read, by its request's thread.
pub struct Body {
    url: String,
    pieces: std::sync::mpsc::Receiver<Piece>,
}

/// What a request's thread hands over.
enum Piece {
    Head(Result<HttpHead, LlmError>),
    Chunk(Vec<u8>),
    End,
    Failed(LlmError),
}

impl Host for NativeHost {
    type Body = Body;

    async fn list(&self) -> Result<Vec<String>, HostError> {
        let mut files = Vec::new();
        let root = fs::canonicalize(&self.root)
            .map_err(|e| io_error(&self.root.display().to_string(), e))?;
        let mut pending = vec![root.clone()];
        while let Some(dir) = pending.pop() {
            let shown = dir.display().to_string();
            let entries = fs::read_dir(&dir).map_err(|e| io_error(&shown, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| io_error(&shown, e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue;
                }
                let path = entry.path();
                let kind = entry.file_type().map_err(|e| io_error(&shown, e))?;
                if kind.is_symlink() {
                    // A symlinked file is listed only when it stays in the
                    // vault (in the plan's folder, when it lies there); a
                    // symlinked folder is never entered.
                    let folder = root.join(&self.plan_folder);
                    let in_plan = path.starts_with(&folder);
                    let inside = fs::canonicalize(&path).is_ok_and(|real| {
                        real.strip_prefix(&root).is_ok_and(|r| !dotted(r))
                            && real.is_file()
                            && (!in_plan || real.starts_with(&folder))
                    });
                    if !inside {
                        continue;
                    }
                }
                if kind.is_dir() {
                    pending.push(path);
                } else if !kind.is_file() && !kind.is_symlink() {
                    // A pipe, socket or device is no note.
                    continue;
                } else if let Ok(rel) = path.strip_prefix(&root) {
                    files.push(
                        rel.components()
                            .map(|c| c.as_os_str().to_string_lossy())
                            .collect::<Vec<_>>()
                            .join("/"),
                    );
                }
            }
        }
        files.sort();
        Ok(files)
    }

    async fn read(&self, path: &str) -> Result<Option<String>, HostError> {
        let full = self.path(path)?;
        // A pipe would hold the read (and the run) until something writes it.
        if fs::metadata(&full).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return Err(HostError::new(path, "is no regular file; refused"));
        }
        let limit = planvault_core::vault::read_limit(path);
        match read_bounded(&full, limit) {
            Ok(Err(size)) => Err(HostError::new(
                path,
                format!("{}; refused", planvault_core::vault::too_large(size, limit)),
            )),
            // Bytes as they are: a BOM and CRLF line ends stay.
            Ok(Ok(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => {
                    self.seen
                        .borrow_mut()
                        .insert(path.to_string(), text.clone());
                    Ok(Some(text))
                }
                // A plan folder's journal too (`plans/x/00_plan-trace/…`).
                Err(e) if path.ends_with(JOURNAL_FILE) => journal_text(e.into_bytes())
                    .map(Some)
                    .ok_or_else(|| HostError::new(path, "not UTF-8 text")),
                Err(_) => Err(HostError::new(path, "not UTF-8 text")),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(path, e)),
        }
    }

    async fn write(&self, path: &str, text: &str) -> Result<(), HostError> {
        let full = self.write_path(path)?;
        let seen = self.seen.borrow().get(path).cloned();
        let written = match &seen {
            // Looked at again with the new text on disk beside it, just
            // before the rename: an edit saved meanwhile is kept.
            Some(seen) => write_atomic_unless_changed(&full, text, |now| {
                now == Some(seen.as_bytes()) || now == Some(text.as_bytes())
            }),
            None => write_atomic(&full, text).map(|()| true),
        };
        match written.map_err(|e| io_error(path, e))? {
            true => {
                self.seen
                    .borrow_mut()
                    .insert(path.to_string(), text.to_string());
                Ok(())
            }
            false => Err(HostError::changed(path)),
        }
    }

    async fn write_tool_note(&self, path: &str, text: &str) -> Result<(), HostError> {
        no_symlink_at(&self.root, path)?;
        self.write(path, text).await
    }

    async fn append(&self, path: &str, text: &str) -> Result<(), HostError> {
        let full = self.write_path(path)?;
        let append = || -> std::io::Result<()> {
            if let Some(parent) = full.parent() {
                fs::create_dir_all(parent)?;
            }
            let mut file = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&full)?;
            file.write_all(text.as_bytes())?;
            file.sync_data()
        };
        append().map_err(|e| io_error(path, e))
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        match fs::remove_file(self.write_path(path)?) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(path, e)),
            _ => {
                // Removed by the run: a later write makes it anew.
                self.seen.borrow_mut().remove(path);
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
        let timeout = Duration::from_millis(u64::from(timeout_ms.max(1)));
        let mut request = self
            .agent
            .post(url)
            .config()
            .timeout_recv_response(Some(timeout))
            // The body is bounded by idleness, not its total time: a slow
            // model streaming steadily may take as long as it needs.
            .timeout_per_read(Some(timeout))
            .timeout_global(self.total_timeout)
            .build()
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream");
        if let Some(key) = api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        // The request runs on its own thread and hands its pieces over, so a
        // Stop is heard at once even while the server is silent; the thread
        // ends at the server's next byte or the idle timeout.
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        let (url_owned, body_owned) = (url.to_string(), body.to_string());
        std::thread::spawn(move || {
            let url = url_owned;
            let response = match request.send(body_owned) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Piece::Head(Err(transport(&url, e))));
                    return;
                }
            };
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let head = HttpHead {
                status: response.status().as_u16(),
                content_type: header("content-type")
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
                retry_after: header("retry-after").as_deref().and_then(parse_retry_after),
            };
            if tx.send(Piece::Head(Ok(head))).is_err() {
                return;
            }
            let mut reader = response.into_body().into_reader();
            loop {
                let mut buf = vec![0u8; 8192];
                let piece = match reader.read(&mut buf) {
                    Ok(0) => Piece::End,
                    Ok(n) => {
                        buf.truncate(n);
                        Piece::Chunk(buf)
                    }
                    Err(e) => Piece::Failed(broke_off(&url, e)),
                };
                let last = !matches!(piece, Piece::Chunk(_));
                if tx.send(piece).is_err() || last {
                    return;
                }
            }
        });
        let mut body = Body {
            url: url.to_string(),
            pieces: rx,
        };
        match self.next_piece(&mut body)? {
            Piece::Head(head) => Ok((head?, body)),
            _ => Err(LlmError::Connect {
                url: url.into(),
                reason: "no reply head".into(),
            }),
        }
    }

    async fn read_chunk(&self, body: &mut Body) -> Result<Option<Vec<u8>>, LlmError> {
        match self.next_piece(body)? {
            Piece::Chunk(bytes) => Ok(Some(bytes)),
            Piece::End => Ok(None),
            Piece::Failed(err) => Err(err),
            Piece::Head(_) => Err(LlmError::Connect {
                url: body.url.clone(),
                reason: "a second reply head".into(),
            }),
        }
    }

    async fn fetch_text(&self, url: &str) -> Result<String, String> {
        // Redirects are followed here, one hop at a time, so every hop's
        // address is checked before it is reached.
        let agent = fetch_agent(&self.fetch_allow);
        let mut current = url.to_string();
        for _ in 0..=FETCH_REDIRECTS {
            self.fetch_allowed(&current)?;
            let mut response = agent
                .get(&current)
                .call()
                .map_err(|e| format!("{current}: {e}"))?;
            let status = response.status().as_u16();
            if (300..400).contains(&status) {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| format!("{current} redirected without a Location"))?;
                current = redirect_target(&current, location);
                continue;
            }
            if status >= 400 {
                return Err(format!("{current} answered HTTP {status}"));
            }
            // A page's first bytes only: the model sees its first
            // characters, and an endless page must not fill the memory.
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(
                    response.body_mut().as_reader(),
                    tools::FETCH_LIMIT_BYTES as u64,
                ),
                &mut bytes,
            )
            .map_err(|e| format!("{current}: {e}"))?;
            return Ok(tools::page_text(&bytes));
        }
        Err(format!("{url}: more than {FETCH_REDIRECTS} redirects"))
    }

    async fn sleep(&self, ms: u32) {
        std::thread::sleep(Duration::from_millis(u64::from(ms)));
    }

    fn now_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    fn post(&self, message: &FromWorker) {
        (self.on_post.borrow_mut())(message);
    }

    fn surface(&self) -> Surface {
        Surface::Cli
    }

    fn case_insensitive(&self) -> bool {
        self.probe_case()
    }

    async fn mcp_list(&self) -> Option<Result<planvault_llm::mcp::Catalog, String>> {
        let clients = self.mcp.as_ref().filter(|c| !c.is_empty())?;
        Some(clients.list())
    }

    async fn put_back(&self, path: &str, text: Option<&str>) -> Result<Option<String>, HostError> {
        let root = fs::canonicalize(&self.root).map_err(|e| io_error(path, e))?;
        // The file itself, never what a link the tool left there leads to:
        // its folder confined to the vault, its own name not followed.
        let (folder, name) = match path.rsplit_once('/') {
            Some((folder, name)) => (confine(&root, folder)?, name),
            None => (root.clone(), path),
        };
        let aside = put_back_at(&folder, name, path, text)?;
        // As `path` names it, from the vault's root.
        Ok(aside.map(|aside| {
            let kept = aside.file_name().unwrap_or_default().to_string_lossy();
            match path.rsplit_once('/') {
                Some((folder, _)) => format!("{folder}/{kept}"),
                None => kept.into_owned(),
            }
        }))
    }

    fn keeps_decisions(&self) -> bool {
        self.decisions.is_some()
    }

    async fn decisions_taken_here(&self, heads: &[&str]) -> Vec<bool> {
        match &self.decisions {
            Some((file, _)) => decisions_taken(file, heads),
            None => vec![false; heads.len()],
        }
    }

    async fn keep_decisions(&self, heads: &[&str]) {
        if let Some((file, _)) = &self.decisions {
            let _ = keep_decisions(file, heads);
        }
    }

    async fn take_decisions(&self, listing: &str) -> bool {
        self.decisions
            .as_ref()
            .is_some_and(|(_, take)| take(listing))
    }

    async fn keep_call_snapshot(&self, snapshot: Option<&str>) -> Result<(), HostError> {
        let Some(file) = &self.call_snapshot else {
            return Ok(());
        };
        let shown = file.display().to_string();
        let Some(text) = snapshot else {
            return match fs::remove_file(file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(&shown, e)),
                _ => Ok(()),
            };
        };
        // The run's vault and folder, and where its plan file is: the next
        // start puts back there, before it finds them again.
        let mut snapshot: serde_json::Value =
            serde_json::from_str(text).map_err(|e| HostError::new(&shown, e.to_string()))?;
        let root = fs::canonicalize(&self.root).map_err(|e| io_error(&shown, e))?;
        snapshot["root"] = serde_json::json!(root.to_string_lossy());
        snapshot["folder"] = serde_json::json!(self.plan_folder);
        if let Some(path) = &self.guarded_plan_file {
            snapshot["plan_file_path"] = serde_json::json!(path.to_string_lossy());
        }
        write_atomic(file, &snapshot.to_string()).map_err(|e| io_error(&shown, e))
    }

    async fn plan_file_now(&self) -> Option<String> {
        fs::read_to_string(self.guarded_plan_file.as_ref()?).ok()
    }

    async fn put_back_plan_file(&self, text: &str) -> Result<Option<String>, HostError> {
        let Some(path) = &self.guarded_plan_file else {
            return Err(HostError::new("PLAN.md", "this run has no plan file"));
        };
        let shown = path.display().to_string();
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(HostError::new(&shown, "is no file's path"));
        };
        let aside = put_back_at(folder, &name.to_string_lossy(), &shown, Some(text))?;
        Ok(aside.map(|aside| aside.display().to_string()))
    }

    async fn mcp_call(
        &self,
        server: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<String, String> {
        if let Some(why) = self.refuse_mcp.as_ref().and_then(|f| f(tool, arguments)) {
            return Err(why);
        }
        match &self.mcp {
            Some(clients) => clients.call_with_progress(server, tool, arguments, &|step| {
                let (progress, total, message) = step;
                (self.on_progress.borrow_mut())(&Progress::McpProgress {
                    server,
                    tool,
                    progress: *progress,
                    total: *total,
                    message: message.as_deref(),
                });
            }),
            None => Err(format!("no MCP server is named {server}")),
        }
    }

    async fn command(&self, command: &str) -> Option<(i32, String)> {
        let env = command_env(std::env::vars(), &self.command_env);
        let dir = match &self.workdir {
            Some(workdir) => match workdir() {
                Ok(dir) => Some(dir),
                Err(why) => return Some((125, why)),
            },
            None => self.command_dir.clone(),
        };
        Some(run_command(
            command,
            dir.as_deref(),
            &env,
            self.stop.as_deref(),
        ))
    }

    async fn amend_plan(
        &self,
        text: &str,
        plan: &Plan,
    ) -> Result<Vec<(String, String)>, HostError> {
        let mut plan_file = self.plan_file.borrow_mut();
        let Some((path, seen)) = plan_file.as_mut() else {
            return Err(HostError::new("PLAN.md", "this run has no plan file"));
        };
        let shown = path.display().to_string();
        let current = fs::read_to_string(&*path).map_err(|e| io_error(&shown, e))?;
        if current != *seen {
            return Err(HostError::new(
                &shown,
                "changed on disk since the run read it; the amendment was not written",
            ));
        }
        write_atomic(path, text).map_err(|e| io_error(&shown, e))?;
        *seen = text.to_string();
        // The names `vault::save_plan` gave the notes of the run vault.
        Ok((0..plan.nodes.len())
            .map(|i| {
                let note = planvault_core::vault::run_vault_note(plan, i);
                (format!("{}.md", plan.nodes[i].id), note)
            })
            .collect())
    }

    fn stops_commands(&self) -> bool {
        self.stop.is_some()
    }

    async fn check_plan_items(&self, done: &[&Node]) -> Result<Option<String>, HostError> {
        let mut plan_file = self.plan_file.borrow_mut();
        let Some((path, seen)) = plan_file.as_mut() else {
            return Ok(None);
        };
        let shown = path.display().to_string();
        let current = fs::read_to_string(&*path).map_err(|e| io_error(&shown, e))?;
        // Only over the text the run knows: a person's edit since (an item
        // inserted, a box unchecked on purpose) is theirs, and an amendment
        // made on the run's text must not write it away.
        if current != *seen {
            return Err(HostError::changed(&shown));
        }
        let Some(checked) = planvault_core::planmd::check_done(&current, done) else {
            return Ok(None);
        };
        let same = |now: Option<&[u8]>| now == Some(current.as_bytes());
        match write_atomic_unless_changed(path, &checked, same) {
            Ok(true) => {
                *seen = checked.clone();
                Ok(Some(checked))
            }
            Ok(false) => Err(HostError::changed(&shown)),
            Err(e) => Err(io_error(&shown, e)),
        }
    }

    fn refuse_write(&self, path: &str) -> Option<String> {
        self.refuse_note.as_ref().and_then(|f| f(path))
    }

    fn mcp_down(&self, server: &str) -> Option<String> {
        self.mcp.as_ref()?.down(server)
    }

    fn secrets(&self) -> Vec<String> {
        self.mcp
            .as_ref()
            .map(|c| c.secrets().to_vec())
            .unwrap_or_default()
    }

    fn progress(&self, progress: &Progress<'_>) {
        (self.on_progress.borrow_mut())(progress);
    }
}

/// Run `command` with `sh -c` in `dir` with exactly `env`: its exit code
/// (124 when its time ran out, 130 when `stop` was set) and its output,
/// stdout then stderr, cut at 4,000 characters (bytes that are not
/// UTF-8 as U+FFFD). Once the shell exits, what it left running in the
/// background is not waited for, though it may hold the output open.
///
/// With a `stop` (a run's command), it runs in a session of its own where
/// `setsid` is there (no terminal: a command asking for a password fails
/// at once instead of waiting unseen), else a process group of its own;
/// either is killed whole on its timeout or a stop, what it started in the
/// background too. Without one (the guard's verifier, a Temporal worker's
/// activity) it stays in planvault's group, where a terminal's Ctrl-C and
/// the worker's end reach it.
pub fn run_command(
    command: &str,
    dir: Option<&Path>,
    env: &[(String, String)],
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> (i32, String) {
    use std::process::{Command, Stdio};
    let detached = stop.is_some();
    let setsid = detached.then(setsid_program).flatten();
    let mut cmd = match setsid {
        Some(setsid) => {
            let mut cmd = Command::new(setsid);
            cmd.arg("sh");
            cmd
        }
        None => Command::new("sh"),
    };
    cmd.env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    if detached && setsid.is_none() {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    if let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) {
        cmd.current_dir(dir);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (127, e.to_string()),
    };
    let out = Drain::start(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = Drain::start(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let stopped = || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst));
    let exit = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().unwrap_or(128),
            Ok(None) if Instant::now() >= deadline || stopped() => {
                kill_group(&mut child, detached);
                break if stopped() { 130 } else { 124 };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break 128,
        }
    };
    // A background process the command started may keep its output open
    // for ever: read on a moment for what is still in the pipes, no longer.
    let grace = Instant::now() + COMMAND_OUTPUT_GRACE;
    while !(out.done() && err.done()) && Instant::now() < grace {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut bytes = out.taken();
    bytes.extend(err.taken());
    let text = String::from_utf8_lossy(&bytes);
    (exit, text.chars().take(COMMAND_OUTPUT_CHARS).collect())
}

/// util-linux's `setsid`, where it is: it makes the command a session of
/// its own without `unsafe` code here (not being a group leader, it execs
/// in place: the command keeps the pid planvault kills).
fn setsid_program() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            ["/usr/bin/setsid", "/bin/setsid"]
                .into_iter()
                .map(PathBuf::from)
                .find(|p| p.is_file())
        })
        .as_deref()
}

/// How long a command's output is read for after its shell exited.
const COMMAND_OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// Kills a command and every process of its group (what it started in the
/// background), then reaps it.
fn kill_group(child: &mut std::process::Child, detached: bool) {
    #[cfg(unix)]
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32).filter(|_| detached) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A pipe read to its end on a thread of its own, so a chatty command
/// never blocks on a full pipe; only the first bytes that can reach the
/// journal are kept, the rest read and dropped.
struct Drain {
    kept: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Drain {
    fn start(pipe: Option<Box<dyn Read + Send>>) -> Drain {
        let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = kept.clone();
        let thread = std::thread::spawn(move || {
            let Some(mut pipe) = pipe else { return };
            // Every character cut at COMMAND_OUTPUT_CHARS fits in 4 bytes.
            let room = COMMAND_OUTPUT_CHARS * 4;
            let mut chunk = [0u8; 8192];
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                let mut kept = into.lock().unwrap_or_else(|e| e.into_inner());
                let take = n.min(room.saturating_sub(kept.len()));
                kept.extend_from_slice(&chunk[..take]);
            }
        });
        Drain { kept, thread }
    }

    fn done(&self) -> bool {
        self.thread.is_finished()
    }

    fn taken(&self) -> Vec<u8> {
        std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder a tool left where a note was goes aside under the first
    /// name where nothing is: a file kept aside before stays, where the
    /// rename onto it failed the put-back, at every start after a kill.
    #[test]
    fn a_folder_left_in_a_notes_place_goes_aside_past_a_file_kept_before() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("send.md")).unwrap();
        fs::write(dir.path().join("send.md/inner.md"), "the tool's\n").unwrap();
        fs::write(dir.path().join("send.md.from-tool"), "kept before\n").unwrap();
        let aside = put_back_at(dir.path(), "send.md", "send.md", Some("was\n")).unwrap();
        assert_eq!(aside, Some(dir.path().join("send.md.from-tool-2")));
        assert_eq!(
            fs::read_to_string(dir.path().join("send.md")).unwrap(),
            "was\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("send.md.from-tool")).unwrap(),
            "kept before\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("send.md.from-tool-2/inner.md")).unwrap(),
            "the tool's\n"
        );
        // A file left goes past both: the copies kept before stay (one may
        // be a person's edit taken for the tool's).
        fs::write(dir.path().join("send.md"), "again\n").unwrap();
        let aside = put_back_at(dir.path(), "send.md", "send.md", Some("was\n")).unwrap();
        assert_eq!(aside, Some(dir.path().join("send.md.from-tool-3")));
        assert_eq!(
            fs::read_to_string(dir.path().join("send.md.from-tool")).unwrap(),
            "kept before\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("send.md.from-tool-3")).unwrap(),
            "again\n"
        );
        // A file the tool removed is put back with nothing kept aside.
        fs::remove_file(dir.path().join("send.md")).unwrap();
        let aside = put_back_at(dir.path(), "send.md", "send.md", Some("was\n")).unwrap();
        assert_eq!(aside, None);
        assert!(!dir.path().join("send.md.from-tool-4").exists());
    }

    /// A review's finding: a kill during a writing call of a PLAN.md's run,
    /// then its `PLAN.run/` removed, dropped the snapshot, and the tool's
    /// rewrite of the PLAN.md beside it stood, its items the next run's
    /// steps. The plan file is put back all the same.
    #[test]
    fn a_plan_file_is_put_back_though_its_run_vault_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("PLAN.md");
        let original = "# Plan\n\n- [ ] Send the report\n";
        let injected = "# Plan\n\n- [ ] Mail the keys out\n";
        fs::write(&plan, injected).unwrap();
        let file = dir.path().join("snapshot.json");
        fs::write(&file, "{}").unwrap();
        let cut = CutOffCall {
            file: file.clone(),
            snapshot: serde_json::json!({
                "notes": {"send-the-report.md": "was\n"},
                "plan_file": original,
                "plan_file_path": plan.to_string_lossy(),
            }),
            root: dir.path().join("PLAN.run"),
            folder: String::new(),
        };
        assert!(cut.vault_gone() && cut.has_plan_file());
        let put_back = crate::block_on(cut.put_back()).unwrap().unwrap();
        assert_eq!(put_back, ["PLAN.md (kept aside as PLAN.md.from-tool)"]);
        assert_eq!(fs::read_to_string(&plan).unwrap(), original);
        assert_eq!(
            fs::read_to_string(dir.path().join("PLAN.md.from-tool")).unwrap(),
            injected
        );
        assert!(!dir.path().join("PLAN.run").exists(), "no vault made anew");
        assert!(!file.exists(), "the snapshot went with the put-back");

        // A vault that is there but cannot be read now is not gone.
        let here = CutOffCall {
            file,
            snapshot: serde_json::json!({}),
            root: plan,
            folder: String::new(),
        };
        assert!(!here.vault_gone() && !here.has_plan_file());
    }

    #[test]
    fn a_name_the_file_system_will_not_take_is_refused_not_failed() {
        let err = fs::read("a\0.md").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        let refused = io_error("a.md", err);
        assert!(!refused.failed && !refused.disk_full, "{refused:?}");
        assert!(refused.message.contains("takes no such name"));
    }

    #[test]
    fn this_machines_own_addresses_are_told_from_others() {
        use std::net::{IpAddr, UdpSocket};
        assert!(is_own_address("127.0.0.1".parse().unwrap()));
        assert!(is_own_address("::1".parse().unwrap()));
        assert!(!is_own_address("1.1.1.1".parse().unwrap()));
        assert!(!is_own_address("2606:4700::1111".parse().unwrap()));
        // The address this machine sends from (where it has a route out):
        // its own, whatever range it is in, and refused for fetch_url.
        for out in ["198.51.100.1:9", "[2001:db8::1]:9"] {
            let any = if out.starts_with('[') {
                "[::]:0"
            } else {
                "0.0.0.0:0"
            };
            let Ok(socket) = UdpSocket::bind(any) else {
                continue;
            };
            if socket.connect(out).is_err() {
                continue;
            }
            let own: IpAddr = socket.local_addr().unwrap().ip();
            assert!(is_own_address(own), "{own}");
            assert!(refused_ip(own).is_some(), "{own}");
            if let IpAddr::V4(v4) = own {
                assert!(is_own_address(IpAddr::V6(v4.to_ipv6_mapped())), "{own}");
            }
        }
    }
    use crate::memory::block_on;

    /// A file the run removed is made anew by its next write (a lock given
    /// back and taken again by the same host), not refused as changed.
    #[test]
    fn a_file_the_run_removed_is_written_anew() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        block_on(host.write(".planvault/run.lock", "pid=1\n"))
            .unwrap()
            .unwrap();
        block_on(host.remove(".planvault/run.lock"))
            .unwrap()
            .unwrap();
        block_on(host.write(".planvault/run.lock", "pid=1\n"))
            .unwrap()
            .unwrap();
        let lock = dir.path().join(".planvault/run.lock");
        assert_eq!(fs::read_to_string(lock).unwrap(), "pid=1\n");
    }

    /// A symlinked note leading into a dot-folder (a plugin's settings with
    /// its API key, `.git/config`) is neither listed nor read; the vault's
    /// own settings are still read by their names.
    #[cfg(unix)]
    #[test]
    fn a_symlink_into_a_dot_folder_is_no_note() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join(".obsidian/plugins/p");
        fs::create_dir_all(&plugin).unwrap();
        fs::write(plugin.join("data.json"), "{\"apiKey\": \"sk-plugin\"}").unwrap();
        fs::create_dir_all(dir.path().join("notes")).unwrap();
        std::os::unix::fs::symlink(
            "../.obsidian/plugins/p/data.json",
            dir.path().join("notes/key.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink(".obsidian/plugins", dir.path().join("plugins")).unwrap();
        let host = NativeHost::new(dir.path());
        for path in ["notes/key.md", "plugins/p/data.json"] {
            let refused = block_on(host.read(path)).unwrap().unwrap_err();
            assert!(refused.message.contains("dot-folder"), "{refused:?}");
            assert!(!refused.failed);
        }
        let refused = block_on(host.write("plugins/p/data.json", "{}"))
            .unwrap()
            .unwrap_err();
        assert!(!refused.failed, "{refused:?}");
        assert_eq!(
            block_on(host.list()).unwrap().unwrap(),
            Vec::<String>::new()
        );
        let settings = block_on(host.read(".obsidian/plugins/p/data.json")).unwrap();
        assert!(settings.unwrap().unwrap().contains("sk-plugin"));
    }

    /// A name that cannot be a note here (a file where its path needs a
    /// folder, a folder, a pipe) is refused, told to the tool, never a
    /// storage failure: the run's resume would replay the same call and
    /// fail again for good. A pipe is not listed, nor read (it would hold
    /// the run).
    #[cfg(unix)]
    #[test]
    fn a_name_that_cannot_be_a_note_is_refused_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        block_on(host.write("a.md", "x")).unwrap().unwrap();
        fs::create_dir(dir.path().join("folder.md")).unwrap();
        let fifo = dir.path().join("pipe.md");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let refused = |e: Result<_, HostError>| {
            let e = e.unwrap_err();
            assert!(!e.failed && !e.disk_full, "{e:?}");
            e.message
        };
        let under_file = refused(block_on(host.write("a.md/b.md", "y")).unwrap());
        assert!(under_file.contains("a file stands where"), "{under_file}");
        refused(block_on(host.append("a.md/b.md", "y")).unwrap());
        let onto = refused(block_on(host.write("folder.md", "y")).unwrap());
        assert!(onto.contains("is a folder"), "{onto}");
        refused(block_on(host.read("folder.md")).unwrap().map(drop));
        if made.is_ok_and(|s| s.success()) {
            refused(block_on(host.read("pipe.md")).unwrap().map(drop));
            let listed = block_on(host.list()).unwrap().unwrap();
            assert!(!listed.contains(&"pipe.md".to_string()), "{listed:?}");
        }
        assert_eq!(fs::read_to_string(dir.path().join("a.md")).unwrap(), "x");
    }

    /// A note saved by a person after the run read it is never replaced:
    /// the write is refused (the run stops resumably, `changed-on-disk`),
    /// nothing of the run's is left beside it, and a note the run wrote
    /// keeps its permission bits.
    #[test]
    fn a_write_keeps_an_edit_saved_since_the_read_and_the_note_s_mode() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        fs::write(dir.path().join("draft.md"), "status: pending\n").unwrap();
        block_on(host.read("draft.md")).unwrap().unwrap();
        fs::write(dir.path().join("draft.md"), "status: pending\nan edit\n").unwrap();
        let refused = block_on(host.write("draft.md", "status: done\n"))
            .unwrap()
            .unwrap_err();
        assert!(refused.is_changed(), "{refused:?}");
        assert_eq!(
            fs::read_to_string(dir.path().join("draft.md")).unwrap(),
            "status: pending\nan edit\n"
        );
        assert!(!dir.path().join(".draft.md.planvault-tmp").exists());
        // Read again, it is written; a file never read is written as before.
        block_on(host.read("draft.md")).unwrap().unwrap();
        block_on(host.write("draft.md", "status: done\nan edit\n"))
            .unwrap()
            .unwrap();
        block_on(host.write("new.md", "new\n")).unwrap().unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let note = dir.path().join("draft.md");
            fs::set_permissions(&note, fs::Permissions::from_mode(0o664)).unwrap();
            block_on(host.write("draft.md", "status: active\nan edit\n"))
                .unwrap()
                .unwrap();
            assert_eq!(
                fs::metadata(&note).unwrap().permissions().mode() & 0o777,
                0o664
            );
        }
    }

    /// A full disk can cut the journal's last append inside a character
    /// (`→` is three bytes): the journal still reads, its torn tail for the
    /// driver to set aside; a note, or a journal broken before its last
    /// line, is refused as before.
    #[test]
    fn a_journal_torn_inside_a_character_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        let whole = "{\"key\":\"draft#1:work\",\"kind\":\"work\",\"output\":\"→\"}\n";
        let mut torn = whole.as_bytes().to_vec();
        torn.extend_from_slice(&"{\"key\":\"r\",\"raw\":\"→→".as_bytes()[..23]);
        fs::create_dir_all(dir.path().join("00_plan-trace")).unwrap();
        fs::write(dir.path().join(JOURNAL_FILE), &torn).unwrap();
        let read = block_on(host.read(JOURNAL_FILE)).unwrap().unwrap().unwrap();
        assert!(read.starts_with(whole), "{read:?}");
        assert!(read.ends_with("\"raw\":\"→\u{fffd}"), "{read:?}");
        fs::write(dir.path().join("note.md"), &torn).unwrap();
        assert!(block_on(host.read("note.md")).unwrap().is_err());
        let mut broken = torn[..5].to_vec();
        broken.push(0xff);
        broken.extend_from_slice(&torn[5..]);
        fs::write(dir.path().join(JOURNAL_FILE), &broken).unwrap();
        assert!(block_on(host.read(JOURNAL_FILE)).unwrap().is_err());
    }

    /// A cloned vault may hold a symlink under a write's temporary name:
    /// the write makes its own file, and what the link led to is as it was.
    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_a_write_s_temporary_name_is_not_followed() {
        let (dir, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let target = outside.path().join("bashrc");
        fs::write(&target, "mine\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(".a.md.planvault-tmp")).unwrap();
        std::os::unix::fs::symlink(
            &target,
            dir.path()
                .join(format!(".planvault-case-probe-{}", std::process::id())),
        )
        .unwrap();
        let host = NativeHost::new(dir.path());
        block_on(host.write("a.md", "# A\n")).unwrap().unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "mine\n");
        let written = dir.path().join("a.md");
        assert!(fs::symlink_metadata(&written).unwrap().is_file());
        assert_eq!(fs::read_to_string(written).unwrap(), "# A\n");
        let _ = host.case_insensitive();
        assert_eq!(fs::read_to_string(&target).unwrap(), "mine\n");
    }

    /// A sparse file of many GB is refused by its size, unread (the
    /// memory it would take), and the model is told why; the run's own
    /// journal may grow past a note's limit.
    #[test]
    fn a_file_past_the_read_limit_is_refused_unread_naming_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        let huge = fs::File::create(dir.path().join("huge.md")).unwrap();
        huge.set_len(20 << 30).unwrap();
        let refused = block_on(host.read("huge.md")).unwrap().unwrap_err();
        assert_eq!(
            refused.to_string(),
            "huge.md: holds 20 GiB, more than the 64 MiB planvault reads of a file; refused"
        );
        assert!(
            !refused.failed,
            "a refusal the model hears, not a failed vault"
        );
        let journal = dir.path().join("00_plan-trace/journal.jsonl");
        fs::create_dir_all(journal.parent().unwrap()).unwrap();
        let line = format!("{{\"n\":\"{}\"}}\n", "x".repeat(1 << 20));
        fs::write(&journal, line.repeat(65)).unwrap();
        let read = block_on(host.read("00_plan-trace/journal.jsonl"))
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(read.len(), line.len() * 65);
        assert_eq!(
            read_bounded(&journal, 100).unwrap(),
            Err(line.len() as u64 * 65)
        );
    }

    #[test]
    fn the_folder_reads_writes_appends_lists_and_removes_keeping_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        let text = "\u{feff}---\r\nstatus: pending\r\n---\r\n# A\r\n";
        block_on(host.write("deep/er/a.md", text)).unwrap().unwrap();
        assert_eq!(
            fs::read(dir.path().join("deep/er/a.md")).unwrap(),
            text.as_bytes()
        );
        assert_eq!(
            block_on(host.read("deep/er/a.md"))
                .unwrap()
                .unwrap()
                .as_deref(),
            Some(text)
        );
        block_on(host.append("00_plan-trace/journal.jsonl", "x\n"))
            .unwrap()
            .unwrap();
        block_on(host.append("00_plan-trace/journal.jsonl", "y\n"))
            .unwrap()
            .unwrap();
        fs::create_dir_all(dir.path().join(".obsidian")).unwrap();
        fs::write(dir.path().join(".obsidian/app.json"), "{}").unwrap();
        assert_eq!(
            block_on(host.list()).unwrap().unwrap(),
            ["00_plan-trace/journal.jsonl", "deep/er/a.md"],
            "dot-folders and the atomic writes' temporary files are never listed"
        );
        assert_eq!(block_on(host.read("missing.md")).unwrap().unwrap(), None);
        fs::write(dir.path().join("latin1.md"), [0xe9u8]).unwrap();
        assert!(block_on(host.read("latin1.md")).unwrap().is_err());
        block_on(host.remove("deep/er/a.md")).unwrap().unwrap();
        block_on(host.remove("deep/er/a.md")).unwrap().unwrap();
        assert!(!dir.path().join("deep/er/a.md").exists());
    }

    #[test]
    fn an_amendment_is_refused_over_an_edit_the_run_has_not_seen() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("PLAN.md");
        fs::write(&plan, "- [ ] one\n").unwrap();
        let host =
            NativeHost::new(&dir.path().join("PLAN.run")).with_plan_file(&plan, "- [ ] one\n");
        let amended = planvault_core::planmd::parse("PLAN.md", "- [ ] one\n- [ ] two\n").0;
        let notes = block_on(host.amend_plan("- [ ] one\n- [ ] two\n", &amended))
            .unwrap()
            .unwrap();
        let names: Vec<&str> = notes.iter().map(|(file, _)| file.as_str()).collect();
        assert_eq!(names, ["1.md", "2.md"]);
        assert!(notes[1].1.contains("# two"), "{}", notes[1].1);
        assert_eq!(fs::read_to_string(&plan).unwrap(), "- [ ] one\n- [ ] two\n");
        fs::write(&plan, "- [ ] edited\n").unwrap();
        let err = block_on(host.amend_plan("- [ ] three\n", &amended))
            .unwrap()
            .unwrap_err();
        assert!(err.message.contains("changed on disk"), "{err}");
        assert_eq!(fs::read_to_string(&plan).unwrap(), "- [ ] edited\n");
    }

    #[test]
    fn a_command_runs_in_its_folder_with_its_exit_code_and_both_outputs() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("here.txt"), "").unwrap();
        let host = NativeHost::new(dir.path()).with_command_dir(dir.path());
        let (exit, output) = block_on(host.command("ls; echo oops >&2; exit 3"))
            .unwrap()
            .unwrap();
        assert_eq!(exit, 3);
        assert_eq!(output, "here.txt\noops\n");
        let (_, long) = run_command(
            "yes | head -c 10000",
            None,
            &command_env(std::env::vars(), &[]),
            None,
        );
        assert_eq!(long.chars().count(), COMMAND_OUTPUT_CHARS);
    }

    /// A red team's findings: a command that left a process in the
    /// background holding its output held the run until that process ended
    /// (for ever, for a daemon); one byte that was not UTF-8 lost the whole
    /// output; a Stop or the timeout killed only `sh`, not what it started.
    #[test]
    fn a_command_is_over_when_its_shell_is_and_its_group_goes_with_a_stop() {
        let env = command_env(std::env::vars(), &[]);
        let started = Instant::now();
        let (exit, output) = run_command("sleep 30 & echo started", None, &env, None);
        assert_eq!((exit, output.as_str()), (0, "started\n"));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );

        let (_, output) = run_command("printf 'caf\\351 ok'", None, &env, None);
        assert_eq!(output, "caf\u{fffd} ok");

        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("still-running");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let setter = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let script = format!("(sleep 1; touch {}) & sleep 30", marker.display());
        let started = Instant::now();
        let (exit, _) = run_command(&script, None, &env, Some(&stop));
        setter.join().unwrap();
        assert_eq!(exit, 130);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "what the command started went with it");
    }

    /// A server on 127.0.0.1 answering each connection with the next of
    /// `replies` (raw HTTP); its port and how many connections it took.
    fn http_server(replies: Vec<String>) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::BufRead;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let taken = std::sync::Arc::new(AtomicUsize::new(0));
        let count = taken.clone();
        std::thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let mut reader = std::io::BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let _ = reader.get_mut().write_all(reply.as_bytes());
            }
        });
        (port, taken)
    }

    fn ok(body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    fn redirect(to: &str) -> String {
        format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }

    /// The check before a fetch and the connection resolve the name apart:
    /// the connection is judged too, so a name that turns to this machine
    /// in between (DNS rebinding) connects nowhere. Here the check is
    /// skipped, as a rebinding name would pass it.
    #[test]
    fn fetch_url_connects_only_to_addresses_it_judged_public() {
        use std::sync::atomic::Ordering;
        let (port, taken) = http_server(vec![ok("local page")]);
        // An address, not a name, so that no resolver's order matters.
        let url = format!("http://127.0.0.1:{port}/");
        let err = fetch_agent(&[]).get(&url).call().unwrap_err().to_string();
        assert!(
            err.contains("resolves to 127.0.0.1, a loopback address"),
            "{err}"
        );
        assert_eq!(taken.load(Ordering::SeqCst), 0, "nothing connected");
        let allowed = fetch_agent(&["127.0.0.1".to_string()]).get(&url).call();
        assert_eq!(
            allowed.unwrap().body_mut().read_to_string().unwrap(),
            "local page"
        );
        assert_eq!(taken.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn fetch_url_refuses_this_machine_unless_the_vault_allows_it_and_checks_every_redirect() {
        use std::sync::atomic::Ordering;
        let dir = tempfile::tempdir().unwrap();
        let (port, taken) = http_server(vec![ok("local page")]);
        let url = format!("http://127.0.0.1:{port}/page");

        let host = NativeHost::new(dir.path());
        let err = block_on(host.fetch_text(&url)).unwrap().unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        let err = block_on(host.fetch_text(&format!("http://localhost:{port}/")))
            .unwrap()
            .unwrap_err();
        assert!(err.contains("this machine"), "{err}");
        // The same address written so that a URL parser that decodes it
        // (as browsers do) would reach it: the HTTP client here reads the
        // host as written, as the check does, and no such name resolves.
        for url in [
            format!("http://%31%32%37.0.0.1:{port}/"),
            format!("http://\u{ff11}\u{ff12}\u{ff17}.0.0.1:{port}/"),
            format!("http://\u{24db}ocalhost:{port}/"),
            format!("http://127.1:{port}/"),
            format!("http://127.0.0.1:{port}\\.example.com/"),
            format!("http://[::ffff:127.0.0.1]:{port}/"),
        ] {
            let err = block_on(host.fetch_text(&url)).unwrap().unwrap_err();
            assert!(!err.is_empty(), "{url}");
        }
        assert_eq!(
            taken.load(Ordering::SeqCst),
            0,
            "nothing reached the server"
        );

        // A port of it allowed: that port only.
        let other_port = NativeHost::new(dir.path()).with_fetch_allow(&["127.0.0.1:1".into()]);
        assert!(block_on(other_port.fetch_text(&url)).unwrap().is_err());
        let allowed = NativeHost::new(dir.path()).with_fetch_allow(&["127.0.0.1".into()]);
        assert_eq!(
            block_on(allowed.fetch_text(&url)).unwrap().as_deref(),
            Ok("local page")
        );
        let (port, _) = http_server(vec![ok("that port's page")]);
        let this_port =
            NativeHost::new(dir.path()).with_fetch_allow(&[format!("127.0.0.1:{port}")]);
        assert_eq!(
            block_on(this_port.fetch_text(&format!("http://127.0.0.1:{port}/")))
                .unwrap()
                .as_deref(),
            Ok("that port's page")
        );

        // An allowed host redirecting to the metadata service, or to a
        // private address by name, is stopped at that hop.
        let (port, taken) = http_server(vec![
            redirect("http://169.254.169.254/latest/meta-data/"),
            redirect("/next"),
            ok("after a relative redirect"),
        ]);
        let err = block_on(allowed.fetch_text(&format!("http://127.0.0.1:{port}/")))
            .unwrap()
            .unwrap_err();
        assert!(
            err.contains("169.254.169.254") && err.contains("link-local"),
            "{err}"
        );
        assert_eq!(
            block_on(allowed.fetch_text(&format!("http://127.0.0.1:{port}/a/b")))
                .unwrap()
                .as_deref(),
            Ok("after a relative redirect")
        );
        assert_eq!(taken.load(Ordering::SeqCst), 3);
    }

    /// A page over the read limit gives its first part (the model sees its
    /// first characters anyway), not an error; an endless one cannot fill
    /// the memory.
    #[test]
    fn fetch_url_reads_a_big_pages_first_megabyte() {
        let dir = tempfile::tempdir().unwrap();
        let page = format!("<h1>Big</h1>{}", "é".repeat(tools::FETCH_LIMIT_BYTES));
        let (port, _) = http_server(vec![ok(&page)]);
        let host = NativeHost::new(dir.path()).with_fetch_allow(&["127.0.0.1".into()]);
        let text = block_on(host.fetch_text(&format!("http://127.0.0.1:{port}/")))
            .unwrap()
            .unwrap();
        assert!(text.starts_with("<h1>Big</h1>é"), "{}", &text[..20]);
        assert!(text.len() <= tools::FETCH_LIMIT_BYTES + 2, "{}", text.len());
        assert!(text.len() >= tools::FETCH_LIMIT_BYTES - 2, "{}", text.len());
    }

    #[test]
    fn a_redirect_location_is_read_against_the_url_it_came_from() {
        let base = "http://h:1/a/b?q";
        assert_eq!(redirect_target(base, "https://x/y"), "https://x/y");
        assert_eq!(redirect_target(base, "//x/y"), "http://x/y");
        assert_eq!(redirect_target(base, "/c"), "http://h:1/c");
        assert_eq!(redirect_target(base, "c"), "http://h:1/a/c");
        assert_eq!(redirect_target("http://h", "c"), "http://h/c");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_is_told_apart_from_other_failures() {
        let err = fs::OpenOptions::new()
            .append(true)
            .open("/dev/full")
            .and_then(|mut f| {
                f.write_all(b"{\"key\":\"a\"}\n")?;
                f.sync_data()
            })
            .unwrap_err();
        let err = io_error("00_plan-trace/journal.jsonl", err);
        assert!(err.disk_full, "{err}");
        assert!(err.message.contains("disk is full"), "{err}");
        let other = io_error(
            "a.md",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert!(!other.disk_full);
    }

    #[test]
    fn a_second_run_is_refused_the_vault_naming_the_holder_and_a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let lock = VaultLock::acquire(dir.path()).unwrap();
        let text = fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        let me = std::process::id();
        let started = match process_start(me) {
            Some(started) => format!("started={started}\n"),
            None => String::new(),
        };
        let pidns = match pid_namespace() {
            Some(ns) => format!("pidns={ns}\n"),
            None => String::new(),
        };
        assert_eq!(
            text,
            format!("pid={me}\nhost={}\n{started}{pidns}", host_name())
        );
        let err = VaultLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "process {} on {}",
                std::process::id(),
                host_name()
            )) && err.contains("delete")
                && err.contains("run.lock"),
            "{err}"
        );
        drop(lock);
        assert!(!dir.path().join(LOCK_FILE).exists());

        // A process of this host that has ended left its lock behind.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        fs::write(
            dir.path().join(LOCK_FILE),
            format!("pid={dead}\nhost={}\n", host_name()),
        )
        .unwrap();
        let lock = VaultLock::acquire(dir.path()).unwrap();
        drop(lock);

        // Another machine's run cannot be seen from here: refused.
        fs::write(
            dir.path().join(LOCK_FILE),
            format!("pid={dead}\nhost=elsewhere\n"),
        )
        .unwrap();
        let err = VaultLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("process {dead} on elsewhere")),
            "{err}"
        );
    }

    /// Found by killing runs in a restarted container: its pids count from
    /// 1 again, so the run resuming was given the pid the dead run's lock
    /// names (or pid 2 was the host's kthreadd), and every resume was
    /// refused until the lock was deleted by hand. A holder whose pid a
    /// process that started at another time has is stale.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_whose_pid_a_later_process_took_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let me = std::process::id();
        let started = process_start(me).expect("Linux tells a process's start");
        // The same pid, started at another time: the holder is gone.
        let boot = started.split_once(':').unwrap().0;
        fs::write(
            &path,
            format!("pid={me}\nhost={}\nstarted={boot}:1\n", host_name()),
        )
        .unwrap();
        let lock = VaultLock::acquire(dir.path()).unwrap();
        drop(lock);
        // Another boot's process: gone too.
        let reboot = format!(
            "pid={me}\nhost={}\nstarted=other-boot:{}\n",
            host_name(),
            started.split_once(':').unwrap().1
        );
        fs::write(&path, reboot).unwrap();
        drop(VaultLock::acquire(dir.path()).unwrap());
        // This very process, as its lock says it started: held.
        fs::write(
            &path,
            format!("pid={me}\nhost={}\nstarted={started}\n", host_name()),
        )
        .unwrap();
        let err = VaultLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(err.contains(&format!("process {me} on")), "{err}");
        // A lock from before `started` was written: its pid alone names it.
        fs::write(&path, format!("pid={me}\nhost={}\n", host_name())).unwrap();
        assert!(VaultLock::acquire(dir.path()).is_err());
        // A pid 1 that is alive (init, or a container's entrypoint) that
        // started at another time than the lock's holder.
        fs::write(
            &path,
            format!("pid=1\nhost={}\nstarted={boot}:0\n", host_name()),
        )
        .unwrap();
        if process_start(1).is_some_and(|s| s != format!("{boot}:0")) {
            drop(VaultLock::acquire(dir.path()).unwrap());
        }
    }

    /// Two pid namespaces sharing a machine's name and a vault (a
    /// container run with the host's name on a bind-mounted vault, and a
    /// run on the host): the container's pid is another process here, or
    /// none, so each judged the other's live lock stale and both ran. A
    /// lock from another namespace is never judged stale here.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_from_another_pid_namespace_is_never_judged_stale() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let ours = pid_namespace().expect("Linux tells a process's pid namespace");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let lock = |pid: u32, started: &str, ns: &str| {
            format!(
                "pid={pid}\nhost={}\nstarted={started}\npidns={ns}\n",
                host_name()
            )
        };
        let other = "pid:[1]";
        assert_ne!(ours, other);
        for text in [lock(dead, "b:1", other), lock(me, "b:1", other)] {
            fs::write(&path, &text).unwrap();
            let err = VaultLock::acquire(dir.path()).unwrap_err().to_string();
            assert!(err.contains("process"), "{text}: {err}");
        }
        // From this namespace, judged as before: its process ended.
        fs::write(&path, lock(dead, "b:1", &ours)).unwrap();
        drop(VaultLock::acquire(dir.path()).unwrap());
        let written = fs::read_to_string(&path).unwrap_or_default();
        assert!(written.is_empty(), "released: {written}");
    }

    /// Found by an audit that stopped and raced runs: a run killed between
    /// creating its lock and writing it left an empty lock that refused
    /// every run; two runs taking over one stale lock could both run; a run
    /// ending removed whatever lock was there.
    #[test]
    fn a_lock_is_never_empty_taken_over_once_and_removed_only_by_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        // An empty lock being written is respected; one left long ago is not.
        fs::write(&path, "").unwrap();
        assert!(VaultLock::acquire(dir.path()).is_err());
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(120);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let lock = VaultLock::acquire(dir.path()).unwrap();
        // Dropping removes only its own lock: one written over it stays.
        fs::write(&path, "pid=1\nhost=elsewhere\n").unwrap();
        drop(lock);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "pid=1\nhost=elsewhere\n"
        );
        // Judged stale from what was read, but another run's fresh lock by
        // the time it is renamed away: put back, and that run holds it.
        let fresh = format!("pid={}\nhost={}\n", std::process::id(), host_name());
        fs::write(&path, &fresh).unwrap();
        let holder = take_over(&path, "pid=999999\nhost=here\n").unwrap();
        assert_eq!(holder.pid, std::process::id().to_string());
        assert_eq!(fs::read_to_string(&path).unwrap(), fresh);
        // The stale one it read is removed, once.
        fs::write(&path, "pid=999999\nhost=here\n").unwrap();
        assert!(take_over(&path, "pid=999999\nhost=here\n").is_none());
        assert!(!path.exists());
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        // What a run killed while taking the lock left beside it goes once
        // it is old; a fresh one may be another run's, and stays.
        let (old, fresh) = (
            path.with_extension("lock.new-7"),
            path.with_extension("lock.stale-8"),
        );
        for leftover in [&old, &fresh] {
            fs::write(leftover, "pid=7\nhost=here\n").unwrap();
        }
        fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        drop(VaultLock::acquire(dir.path()).unwrap());
        assert!(!old.exists());
        assert!(fresh.exists());
    }

    /// A kill between a note's temporary write and its rename left the
    /// dot-file beside the note for good where the note was never written
    /// again (a finished run's note): the kill-point pass found them, shown
    /// by `git status` in a vault that is a repository.
    #[test]
    fn a_run_takes_away_what_writes_cut_off_by_a_kill_left_in_its_vault() {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path();
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        let age = |path: &Path| {
            fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        };
        let put = |rel: &str| {
            let path = vault.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "half").unwrap();
            path
        };
        let left = [
            put(".draft.md.planvault-tmp"),
            put("deep/er/.review.md.planvault-tmp"),
            put("00_plan-trace/.trace.md.planvault-tmp"),
        ];
        let kept = [
            // Someone's own files, a dot-folder's, and a write still going on.
            put("deep/draft.md.planvault-tmp"),
            put(".obsidian/.workspace.planvault-tmp"),
            put("deep/.fresh.md.planvault-tmp"),
        ];
        for path in left.iter().chain(&kept[..2]) {
            age(path);
        }
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join(".x.md.planvault-tmp");
        fs::write(&outside, "not the vault's").unwrap();
        age(&outside);
        #[cfg(unix)]
        std::os::unix::fs::symlink(elsewhere.path(), vault.join("linked")).unwrap();
        drop(VaultLock::acquire(vault).unwrap());
        for path in &left {
            assert!(!path.exists(), "{}", path.display());
        }
        for path in kept.iter().chain([&outside]) {
            assert!(path.exists(), "{}", path.display());
        }
    }

    /// A streamed reply read to its end (or its error).
    fn stream_from_stub(reply: llm_stub::Reply, timeout_ms: u32) -> Result<String, LlmError> {
        stream_from_stub_within(reply, timeout_ms, None)
    }

    fn stream_from_stub_within(
        reply: llm_stub::Reply,
        timeout_ms: u32,
        total: Option<Duration>,
    ) -> Result<String, LlmError> {
        let stub = llm_stub::Stub::start(
            llm_stub::Script {
                replies: vec![reply],
                default: None,
            },
            0,
            None,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path()).with_total_timeout(total);
        let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}"#;
        let url = planvault_llm::chat_url(&stub.base_url());
        let (head, mut stream) = block_on(host.post_json(&url, None, body, timeout_ms)).unwrap()?;
        assert_eq!(head.status, 200);
        let mut text = Vec::new();
        while let Some(chunk) = block_on(host.read_chunk(&mut stream)).unwrap()? {
            text.extend(chunk);
        }
        Ok(String::from_utf8(text).unwrap())
    }

    /// A body shorter than its `Content-Length` (the server went away):
    /// the reply broke off, it was not "cannot reach".
    #[test]
    fn a_body_that_ends_short_of_its_length_broke_off() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/v1/chat/completions",
            listener.local_addr().unwrap()
        );
        std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request);
            let _ = socket.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 500\r\n\r\ndata: {\"choices\"",
            );
        });
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        let (head, mut body) = block_on(host.post_json(&url, None, "{}", 5_000))
            .unwrap()
            .unwrap();
        assert_eq!(head.status, 200);
        let err = loop {
            match block_on(host.read_chunk(&mut body)).unwrap() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a short body read as whole"),
                Err(err) => break err,
            }
        };
        assert!(matches!(err, LlmError::BrokeOff { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with(&format!("the reply from {url} broke off")),
            "{err}"
        );
    }

    #[test]
    fn a_stream_times_out_when_idle_not_when_long() {
        let content = "a steady reply, streamed two characters at a time";
        let steady = llm_stub::Reply {
            content: content.into(),
            status: 200,
            chunk_chars: Some(2),
            chunk_delay_ms: 60,
            ..llm_stub::Reply::default()
        };
        // 25 chunks 60 ms apart: 1.5 s, far past five times the 200 ms
        // timeout, yet never 200 ms without a byte.
        let started = Instant::now();
        let text = stream_from_stub(steady, 200).unwrap();
        assert!(started.elapsed() > Duration::from_millis(1_000));
        assert!(text.contains("[DONE]"), "{text}");
        let steady = llm_stub::Reply {
            content: content.into(),
            status: 200,
            chunk_chars: Some(2),
            chunk_delay_ms: 60,
            ..llm_stub::Reply::default()
        };
        // The optional overall limit still ends a stream that never stalls.
        assert!(matches!(
            stream_from_stub_within(steady, 200, Some(Duration::from_millis(500))),
            Err(LlmError::Timeout { .. })
        ));
        let stalled = llm_stub::Reply {
            content: content.into(),
            status: 200,
            chunk_chars: Some(20),
            chunk_delay_ms: 700,
            ..llm_stub::Reply::default()
        };
        assert!(matches!(
            stream_from_stub(stalled, 200),
            Err(LlmError::Timeout { .. })
        ));
    }

    #[test]
    fn a_stop_cuts_a_silent_server_off_at_once() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        for (delay_ms, chunk_delay_ms) in [(10_000, 0), (0, 10_000)] {
            let stub = llm_stub::Stub::start(
                llm_stub::Script {
                    replies: vec![llm_stub::Reply {
                        content: "first words, then a long silence".into(),
                        status: 200,
                        chunk_chars: Some(12),
                        delay_ms,
                        chunk_delay_ms,
                        ..llm_stub::Reply::default()
                    }],
                    default: None,
                },
                0,
                None,
            )
            .unwrap();
            let dir = tempfile::tempdir().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let host = NativeHost::new(dir.path()).with_stop_flag(stop.clone());
            let flag = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                flag.store(true, Ordering::SeqCst);
            });
            let started = Instant::now();
            let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}"#;
            let url = planvault_llm::chat_url(&stub.base_url());
            let result = block_on(async {
                let (_, mut stream) = host.post_json(&url, None, body, 60_000).await?;
                while host.read_chunk(&mut stream).await?.is_some() {}
                Ok::<(), LlmError>(())
            })
            .unwrap();
            assert!(matches!(result, Err(LlmError::Interrupted)), "{result:?}");
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "stopped after {:?}",
                started.elapsed()
            );
        }
    }

    #[test]
    fn a_command_sees_only_the_allowed_environment() {
        let vars = [
            ("PATH", std::env::var("PATH").unwrap_or_default().as_str()),
            ("HOME", "/home/someone"),
            ("PLANVAULT_API_KEY", "sk-secret-1"),
            ("OPENAI_API_KEY", "sk-secret-2"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
            ("GOPATH", "/go"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let env = command_env(vars.clone(), &[]);
        let (exit, output) = run_command("env", None, &env, None);
        assert_eq!(exit, 0);
        assert!(output.contains("HOME=/home/someone"), "{output}");
        for hidden in ["sk-secret-1", "sk-secret-2", "aws-secret", "GOPATH"] {
            assert!(!output.contains(hidden), "{hidden} in {output}");
        }
        let env = command_env(vars, &["GOPATH".to_string()]);
        let (_, output) = run_command("env", None, &env, None);
        assert!(
            output.contains("GOPATH=/go"),
            "the config's names are kept: {output}"
        );
        assert!(!output.contains("sk-secret"), "{output}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_vault_are_neither_read_written_nor_listed() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "the secret").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path();
        fs::write(vault.join("a.md"), "inside").unwrap();
        symlink(outside.path().join("secret.md"), vault.join("leak.md")).unwrap();
        symlink(outside.path(), vault.join("out")).unwrap();
        symlink(vault.join("a.md"), vault.join("alias.md")).unwrap();
        symlink(outside.path().join("nothing.md"), vault.join("dangling.md")).unwrap();
        let host = NativeHost::new(vault);

        let err = block_on(host.read("leak.md")).unwrap().unwrap_err();
        assert!(err.message.contains("outside the vault"), "{err}");
        assert!(block_on(host.read("out/secret.md")).unwrap().is_err());
        assert!(block_on(host.write("out/new.md", "x")).unwrap().is_err());
        assert!(block_on(host.write("leak.md", "x")).unwrap().is_err());
        assert!(block_on(host.write("dangling.md", "x")).unwrap().is_err());
        assert!(block_on(host.append("out/j.jsonl", "x")).unwrap().is_err());
        assert!(block_on(host.remove("out/secret.md")).unwrap().is_err());
        assert!(!outside.path().join("new.md").exists());
        assert!(!outside.path().join("nothing.md").exists());
        assert_eq!(
            fs::read_to_string(outside.path().join("secret.md")).unwrap(),
            "the secret"
        );
        assert_eq!(
            block_on(host.list()).unwrap().unwrap(),
            ["a.md", "alias.md"],
            "a symlink inside the vault stays listed; none leading out is"
        );
        assert_eq!(
            block_on(host.read("alias.md")).unwrap().unwrap().as_deref(),
            Some("inside")
        );
        assert!(confine(vault, "../x.md").is_err());
    }

    #[test]
    fn the_case_probe_reads_the_file_system_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let host = NativeHost::new(dir.path());
        // The test folders live on a case-sensitive file system (Linux).
        #[cfg(target_os = "linux")]
        assert!(!host.case_insensitive());
        let _ = host.case_insensitive();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
