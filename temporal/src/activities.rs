//! The activities: every effect a run has on the world, each delegating to
//! the terminal's [`NativeHost`] (one implementation of files, HTTP and
//! commands). A failure the run must see (a missing file, a refused write,
//! an HTTP error) is the activity's *result*, recorded in the history and
//! read the same on replay; only a worker that cannot serve the activity
//! (the vault is not mounted, the worker died) fails it, so Temporal retries
//! it, on this worker or another. A vault in a git repository
//! ([`crate::git_vault`]) is worked on in this worker's clone: synced before
//! every activity, every change one commit pushed before it completes.

use crate::git_vault::{self, GitSource};
use planvault_llm::LlmError;
use planvault_runner::native::{
    command_env, confine, io_error, no_symlink_at, run_command, write_atomic_unless_changed,
    NativeHost,
};
use planvault_runner::{block_on, Host, HostError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

/// How often a long activity tells the server its worker is alive.
const BEAT: Duration = Duration::from_secs(1);

/// A vault read or write that failed, as the history holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireHostError {
    pub path: String,
    pub message: String,
    pub disk_full: bool,
    /// Absent in a history written before it was kept: a refusal.
    #[serde(default)]
    pub failed: bool,
}

impl From<HostError> for WireHostError {
    fn from(e: HostError) -> Self {
        WireHostError {
            path: e.path,
            message: e.message,
            disk_full: e.disk_full,
            failed: e.failed,
        }
    }
}

impl From<WireHostError> for HostError {
    fn from(e: WireHostError) -> Self {
        HostError {
            path: e.path,
            message: e.message,
            disk_full: e.disk_full,
            failed: e.failed,
        }
    }
}

/// A model call's failure, as the history holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WireLlmError {
    Timeout {
        url: String,
    },
    Connect {
        url: String,
        reason: String,
    },
    Status {
        url: String,
        status: u16,
        message: String,
        retry_after: Option<u64>,
    },
    Malformed {
        url: String,
        reason: String,
    },
    CutOff {
        url: String,
        reason: String,
    },
    BrokeOff {
        url: String,
        reason: String,
    },
    Interrupted,
}

impl From<LlmError> for WireLlmError {
    fn from(e: LlmError) -> Self {
        match e {
            LlmError::Timeout { url } => WireLlmError::Timeout { url },
            LlmError::Connect { url, reason } => WireLlmError::Connect { url, reason },
            LlmError::Status {
                url,
                status,
                message,
                retry_after,
            } => WireLlmError::Status {
                url,
                status,
                message,
                retry_after,
            },
            LlmError::Malformed { url, reason } => WireLlmError::Malformed { url, reason },
            LlmError::CutOff { url, reason } => WireLlmError::CutOff { url, reason },
            LlmError::BrokeOff { url, reason } => WireLlmError::BrokeOff { url, reason },
            // The driver raises the others itself, before a call.
            other => WireLlmError::Malformed {
                url: String::new(),
                reason: other.to_string(),
            },
        }
    }
}

impl From<WireLlmError> for LlmError {
    fn from(e: WireLlmError) -> Self {
        match e {
            WireLlmError::Timeout { url } => LlmError::Timeout { url },
            WireLlmError::Connect { url, reason } => LlmError::Connect { url, reason },
            WireLlmError::Status {
                url,
                status,
                message,
                retry_after,
            } => LlmError::Status {
                url,
                status,
                message,
                retry_after,
            },
            WireLlmError::Malformed { url, reason } => LlmError::Malformed { url, reason },
            WireLlmError::CutOff { url, reason } => LlmError::CutOff { url, reason },
            WireLlmError::BrokeOff { url, reason } => LlmError::BrokeOff { url, reason },
            WireLlmError::Interrupted => LlmError::Interrupted,
        }
    }
}

/// A file of the vault.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileIn {
    pub vault: String,
    pub path: String,
    /// The plan's folder in the vault (empty: the whole vault is the plan):
    /// a change must really land in it, as [`NativeHost::with_plan_folder`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
}

/// Files of the vault, read in one activity ([`VaultActivities::read_each`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FilesIn {
    pub vault: String,
    pub paths: Vec<String>,
}

/// The most text one [`VaultActivities::read_each`] returns (one file
/// always, whatever its size): Temporal refuses a payload over 2 MB and
/// warns past 512 KB. The files after it are read by the next activity.
pub const READ_EACH_BYTES: usize = 256 * 1024;

/// The first of `paths` under `root`, read in order, as many as fit in
/// `budget` bytes of text (at least one).
fn read_prefix(
    root: &Path,
    paths: &[String],
    budget: usize,
) -> Vec<Result<Option<String>, WireHostError>> {
    let host = NativeHost::new(root);
    let mut texts = Vec::new();
    let mut bytes = 0;
    for path in paths {
        let text = block_on(host.read(path)).expect("the native host never waits");
        let size = text
            .as_ref()
            .ok()
            .and_then(Option::as_ref)
            .map_or(0, String::len);
        if !texts.is_empty() && bytes + size > budget {
            break;
        }
        bytes += size;
        texts.push(text.map_err(Into::into));
    }
    texts
}

/// The vault's files, and whether its file system ignores case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Listed {
    pub files: Vec<String>,
    pub case_insensitive: bool,
}

/// What the run last saw of a file it writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expected {
    /// The run never read it: written as it is.
    Unseen,
    /// The run saw no such file.
    Absent,
    /// The run read (or wrote) this text.
    Text(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriteIn {
    pub vault: String,
    pub path: String,
    /// As [`FileIn::folder`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
    pub text: String,
    /// Compare-and-swap: the write is refused when the file is neither this
    /// nor already `text` (a retried write that had landed).
    pub expected: Expected,
    /// A tool's note: never written through a symlink at its name
    /// ([`planvault_runner::native::no_symlink_at`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub as_itself: bool,
}

/// A file a tool changed, to be put back to `text` (`None`: no file).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PutBackIn {
    pub vault: String,
    pub path: String,
    /// As [`FileIn::folder`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
    pub text: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppendIn {
    pub vault: String,
    pub path: String,
    /// As [`FileIn::folder`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PostIn {
    pub url: String,
    /// A [`crate::key_ref`], resolved on the worker; never a key.
    pub key_ref: Option<String>,
    pub body: String,
    pub timeout_ms: u32,
    pub total_timeout_ms: Option<u64>,
    /// Variables whose values MCP servers are given: scrubbed from the
    /// reply on the worker, as the key is.
    #[serde(default)]
    pub scrub_env: Vec<String>,
}

/// A whole model reply: its head and body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PostOut {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<u64>,
    pub body: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FetchIn {
    pub url: String,
    pub fetch_allow: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandIn {
    pub vault: String,
    pub command: String,
    pub command_env: Vec<String>,
}

/// The activities a worker registers.
pub struct VaultActivities;

/// The vault folder, if this worker has it; else a retryable failure (the
/// activity goes to a worker that has it, or waits for the mount).
pub(crate) fn vault_root(vault: &str) -> Result<PathBuf, ActivityError> {
    let root = PathBuf::from(vault);
    if root.is_absolute() && root.is_dir() {
        Ok(root)
    } else {
        Err(failure(format!(
            "the vault {vault} is not a folder on this worker"
        )))
    }
}

/// Where a vault activity works.
enum Place {
    /// A folder every worker mounts.
    Folder(PathBuf),
    /// A git repository: this worker's clone of the run's branch.
    Git(GitSource),
}

fn place(vault: &str) -> Result<Place, ActivityError> {
    match GitSource::parse(vault) {
        Some(Ok(source)) => Ok(Place::Git(source)),
        Some(Err(e)) => Err(failure(e.to_string())),
        None => vault_root(vault).map(Place::Folder),
    }
}

/// Run `work` on this worker's clone of a git vault, sweeping the cache
/// first when it is due.
fn checked_out<T>(
    source: &GitSource,
    work: impl FnOnce(&git_vault::Checkout) -> Result<T, git_vault::GitVaultError>,
) -> Result<T, git_vault::GitVaultError> {
    git_vault::tend_cache();
    git_vault::with_checkout(source, &git_vault::cache_root(), work)
}

/// Run blocking git work, heartbeating while it runs: a first clone of a
/// large repository outlasts any fixed bound, and a worker lost meanwhile
/// is noticed at the heartbeat timeout, not at the end of the bound.
async fn git_work<T: Send + 'static>(
    ctx: &ActivityContext,
    work: impl FnOnce() -> Result<T, git_vault::GitVaultError> + Send + 'static,
) -> Result<T, ActivityError> {
    let (_tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    beating(ctx, &mut rx, tokio::task::spawn_blocking(work))
        .await?
        .map_err(|e| failure(e.to_string()))
}

/// Run `work` over the vault's folder: a shared folder as it is, a git
/// vault's clone once it is the remote's run branch (a person's push is
/// seen).
async fn in_vault<T: Send + 'static>(
    ctx: &ActivityContext,
    vault: &str,
    work: impl FnOnce(&Path) -> T + Send + 'static,
) -> Result<T, ActivityError> {
    match place(vault)? {
        Place::Folder(root) => blocking(move || work(&root)).await,
        Place::Git(source) => {
            git_work(ctx, move || checked_out(&source, |c| Ok(work(&c.vault())))).await
        }
    }
}

/// Make one change to `path` by `apply`: in a shared folder as it is; in a
/// git vault as one commit on the run's branch, pushed before the activity
/// completes (made again over the remote's tip when the push is rejected).
async fn changing(
    ctx: &ActivityContext,
    vault: &str,
    path: String,
    what: &'static str,
    mut apply: impl FnMut(&Path) -> Result<(), HostError> + Send + 'static,
) -> Result<Result<(), WireHostError>, ActivityError> {
    match place(vault)? {
        Place::Folder(root) => blocking(move || apply(&root).map_err(Into::into)).await,
        Place::Git(source) => git_work(ctx, move || {
            checked_out(&source, |c| {
                c.change(&path, &format!("{what} {path}"), apply)
            })
        })
        .await
        .map(|done| done.map_err(Into::into)),
    }
}

/// A failure Temporal retries (the worker, not the run, could not go on).
pub(crate) fn failure(message: String) -> ActivityError {
    ActivityError::from(std::io::Error::other(message))
}

/// Run blocking native-host work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ActivityError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| failure(e.to_string()))
}

/// Wait for `work` while telling the server every second that this worker
/// is alive (and at every `beat` it sends).
pub(crate) async fn beating<T: Send + 'static>(
    ctx: &ActivityContext,
    beats: &mut tokio::sync::mpsc::UnboundedReceiver<()>,
    work: tokio::task::JoinHandle<T>,
) -> Result<T, ActivityError> {
    let mut ticker = tokio::time::interval(BEAT);
    tokio::pin!(work);
    let mut chunks = 0u64;
    loop {
        tokio::select! {
            done = &mut work => {
                return done.map_err(|e| failure(e.to_string()));
            }
            Some(()) = beats.recv() => {
                chunks += 1;
                let _ = ctx.record_heartbeat(chunks).await;
            }
            _ = ticker.tick() => {
                let _ = ctx.record_heartbeat(chunks).await;
            }
        }
    }
}

/// Whether a file's bytes are what the run expects (or already `text`).
fn unchanged(current: Option<&[u8]>, expected: &Expected, text: &str) -> bool {
    if current == Some(text.as_bytes()) {
        return true;
    }
    match expected {
        Expected::Unseen => true,
        Expected::Absent => current.is_none(),
        Expected::Text(seen) => current == Some(seen.as_bytes()),
    }
}

#[activities]
impl VaultActivities {
    #[activity]
    pub async fn list(
        ctx: ActivityContext,
        vault: String,
    ) -> Result<Result<Listed, WireHostError>, ActivityError> {
        in_vault(&ctx, &vault, move |root| {
            let host = NativeHost::new(root);
            let files = block_on(host.list()).expect("the native host never waits")?;
            Ok(Listed {
                files,
                case_insensitive: host.case_insensitive(),
            })
        })
        .await
    }

    /// [`Self::list`] of a plan folder's run (`input.folder`; `path` is
    /// unused): a symlinked note in the folder that leads out of it is not
    /// listed, as the terminal's host lists it.
    #[activity]
    pub async fn list_in(
        ctx: ActivityContext,
        input: FileIn,
    ) -> Result<Result<Listed, WireHostError>, ActivityError> {
        in_vault(&ctx, &input.vault.clone(), move |root| {
            let host = NativeHost::new(root).with_plan_folder(&input.folder);
            let files = block_on(host.list()).expect("the native host never waits")?;
            Ok(Listed {
                files,
                case_insensitive: host.case_insensitive(),
            })
        })
        .await
    }

    #[activity]
    pub async fn read(
        ctx: ActivityContext,
        input: FileIn,
    ) -> Result<Result<Option<String>, WireHostError>, ActivityError> {
        in_vault(&ctx, &input.vault.clone(), move |root| {
            let host = NativeHost::new(root);
            block_on(host.read(&input.path))
                .expect("the native host never waits")
                .map_err(Into::into)
        })
        .await
    }

    /// The first of `paths`, in order, as [`VaultActivities::read`] reads
    /// each, as many as fit [`READ_EACH_BYTES`] (at least one).
    #[activity]
    pub async fn read_each(
        ctx: ActivityContext,
        input: FilesIn,
    ) -> Result<Vec<Result<Option<String>, WireHostError>>, ActivityError> {
        in_vault(&ctx, &input.vault.clone(), move |root| {
            read_prefix(root, &input.paths, READ_EACH_BYTES)
        })
        .await
    }

    /// Compare-and-swap: the file is replaced only when it is still what
    /// the run last saw (a person's edit since is never overwritten).
    #[activity]
    pub async fn write(
        ctx: ActivityContext,
        input: WriteIn,
    ) -> Result<Result<(), WireHostError>, ActivityError> {
        let (vault, path) = (input.vault.clone(), input.path.clone());
        changing(&ctx, &vault, path, "write", move |root| {
            // Where the change really lands, checked as the terminal's host
            // checks it: no symlinked folder on the way, in the plan's folder.
            let full = NativeHost::new(root)
                .with_plan_folder(&input.folder)
                .write_path(&input.path)?;
            if input.as_itself {
                no_symlink_at(root, &input.path)?;
            }
            let current = match std::fs::read(&full) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(HostError::new(&input.path, e.to_string())),
            };
            let same = |now: Option<&[u8]>| unchanged(now, &input.expected, &input.text);
            if !same(current.as_deref()) {
                return Err(HostError::changed(&input.path));
            }
            // Looked at again just before the rename: an edit saved while
            // the new text was written is kept too.
            match write_atomic_unless_changed(&full, &input.text, same) {
                Ok(true) => Ok(()),
                Ok(false) => Err(HostError::changed(&input.path)),
                Err(e) => Err(io_error(&input.path, e)),
            }
        })
        .await
    }

    /// Idempotent: a retried append whose first attempt landed (the file
    /// already ends with exactly `text`) is not made twice. Journal lines
    /// are unique by their hash chain, so a first attempt never skips.
    #[activity]
    pub async fn append(
        ctx: ActivityContext,
        input: AppendIn,
    ) -> Result<Result<(), WireHostError>, ActivityError> {
        let retried = ctx.info().attempt > 1;
        let (vault, path) = (input.vault.clone(), input.path.clone());
        changing(&ctx, &vault, path, "append to", move |root| {
            let full = confine(root, &input.path)?;
            if retried {
                if let Ok(bytes) = std::fs::read(&full) {
                    if bytes.ends_with(input.text.as_bytes()) {
                        return Ok(());
                    }
                }
            }
            let host = NativeHost::new(root).with_plan_folder(&input.folder);
            block_on(host.append(&input.path, &input.text)).expect("the native host never waits")
        })
        .await
    }

    /// As the terminal puts back a file a tool changed
    /// ([`NativeHost::put_back`]: what the tool left kept beside it, a
    /// symlink moved aside): where what the tool left was kept. A retry
    /// whose first attempt landed (the file is `text` again) changes
    /// nothing, so the tool's copy stays (and its name is not told again).
    #[activity]
    pub async fn put_back(
        ctx: ActivityContext,
        input: PutBackIn,
    ) -> Result<Result<Option<String>, WireHostError>, ActivityError> {
        let (vault, path) = (input.vault.clone(), input.path.clone());
        let kept = std::sync::Arc::new(std::sync::Mutex::new(None));
        let kept_in = kept.clone();
        let done = changing(&ctx, &vault, path, "put back", move |root| {
            let host = NativeHost::new(root).with_plan_folder(&input.folder);
            let now = block_on(host.read(&input.path)).expect("the native host never waits");
            if matches!(&now, Ok(now) if *now == input.text) {
                return Ok(());
            }
            let aside = block_on(host.put_back(&input.path, input.text.as_deref()))
                .expect("the native host never waits")?;
            *kept_in.lock().unwrap_or_else(|e| e.into_inner()) = aside;
            Ok(())
        })
        .await?;
        let aside = kept.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(done.map(|()| aside))
    }

    #[activity]
    pub async fn remove(
        ctx: ActivityContext,
        input: FileIn,
    ) -> Result<Result<(), WireHostError>, ActivityError> {
        let (vault, path) = (input.vault.clone(), input.path.clone());
        changing(&ctx, &vault, path, "remove", move |root| {
            let host = NativeHost::new(root).with_plan_folder(&input.folder);
            block_on(host.remove(&input.path)).expect("the native host never waits")
        })
        .await
    }

    /// One whole model call: streamed here, a heartbeat per chunk, the key
    /// read from this worker's environment and scrubbed from the reply.
    #[activity]
    pub async fn post_json(
        ctx: ActivityContext,
        input: PostIn,
    ) -> Result<Result<PostOut, WireLlmError>, ActivityError> {
        let key = crate::resolve_key(input.key_ref.as_deref());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let work = tokio::task::spawn_blocking(move || {
            let host = NativeHost::new(Path::new("/"))
                .with_total_timeout(input.total_timeout_ms.map(Duration::from_millis));
            let call = async {
                let (head, mut body) = host
                    .post_json(&input.url, key.as_deref(), &input.body, input.timeout_ms)
                    .await?;
                let mut bytes = Vec::new();
                while let Some(chunk) = host.read_chunk(&mut body).await? {
                    bytes.extend_from_slice(&chunk);
                    let _ = tx.send(());
                }
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if let Some(key) = key.as_deref().filter(|k| k.len() >= 4) {
                    text = text.replace(key, "<redacted>");
                }
                let text = crate::mcp::scrub_env(text, &input.scrub_env);
                Ok::<_, LlmError>(PostOut {
                    status: head.status,
                    content_type: head.content_type,
                    retry_after: head.retry_after,
                    body: text,
                })
            };
            block_on(call)
                .expect("the native host never waits")
                .map_err(WireLlmError::from)
        });
        beating(&ctx, &mut rx, work).await
    }

    /// The run has ended: its clone on this worker goes (the other workers
    /// that served it sweep theirs once unused for [`git_vault::UNUSED`]).
    /// A shared folder's run has nothing to remove.
    #[activity]
    pub async fn forget(ctx: ActivityContext, vault: String) -> Result<(), ActivityError> {
        match place(&vault) {
            Ok(Place::Git(source)) => {
                git_work(&ctx, move || {
                    git_vault::remove_clone(&source, &git_vault::cache_root())
                })
                .await
            }
            _ => Ok(()),
        }
    }

    #[activity]
    pub async fn fetch_text(
        _ctx: ActivityContext,
        input: FetchIn,
    ) -> Result<Result<String, String>, ActivityError> {
        blocking(move || {
            let host = NativeHost::new(Path::new("/")).with_fetch_allow(&input.fetch_allow);
            block_on(host.fetch_text(&input.url)).expect("the native host never waits")
        })
        .await
    }

    /// A `@tool` command, run in the vault folder with the runner's
    /// environment allow-list; heartbeats while it runs. In a git vault
    /// what it changed is committed and pushed (or pushed aside, said in
    /// its output, when it conflicts with the run branch as it is now).
    #[activity]
    pub async fn command(
        ctx: ActivityContext,
        input: CommandIn,
    ) -> Result<(i32, String), ActivityError> {
        let place = place(&input.vault)?;
        let (_tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let work = tokio::task::spawn_blocking(move || {
            let env = command_env(std::env::vars(), &input.command_env);
            match place {
                Place::Folder(root) => Ok(run_command(&input.command, Some(&root), &env, None)),
                Place::Git(source) => checked_out(&source, |c| {
                    let (code, mut output) =
                        run_command(&input.command, Some(&c.vault()), &env, None);
                    let said = match c.commit_command(&input.command) {
                        Ok(said) => said,
                        Err(e) => Some(format!(
                            "planvault: the command's changes were not pushed: {e}"
                        )),
                    };
                    if let Some(said) = said {
                        output.push_str(if output.ends_with('\n') || output.is_empty() {
                            ""
                        } else {
                            "\n"
                        });
                        output.push_str(&said);
                    }
                    Ok((code, output))
                }),
            }
        });
        beating(&ctx, &mut rx, work)
            .await?
            .map_err(|e| failure(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    /// A read of many notes stops where its text would pass the budget,
    /// one note at least, and goes on from there in the next.
    #[test]
    fn notes_read_at_once_stay_under_the_budget_and_come_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for (name, size) in [("a.md", 40), ("b.md", 50), ("c.md", 200), ("d.md", 10)] {
            std::fs::write(dir.path().join(name), "x".repeat(size)).unwrap();
        }
        let paths: Vec<String> = ["a.md", "b.md", "gone.md", "c.md", "d.md"]
            .map(String::from)
            .to_vec();
        let sizes = |read: Vec<Result<Option<String>, super::WireHostError>>| {
            read.into_iter()
                .map(|t| t.unwrap().map_or(0, |t| t.len()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            sizes(super::read_prefix(dir.path(), &paths, 100)),
            [40, 50, 0]
        );
        assert_eq!(
            sizes(super::read_prefix(dir.path(), &paths[3..], 100)),
            [200]
        );
        assert_eq!(
            sizes(super::read_prefix(dir.path(), &paths[4..], 100)),
            [10]
        );
        assert_eq!(
            sizes(super::read_prefix(dir.path(), &paths, 1000)),
            [40, 50, 0, 200, 10]
        );
    }

    use super::*;

    #[test]
    fn a_write_lands_only_over_what_the_run_saw_or_its_own_text() {
        let seen = Expected::Text("status: pending\n".into());
        assert!(unchanged(
            Some(b"status: pending\n"),
            &seen,
            "status: done\n"
        ));
        // A retried write that landed before the worker died.
        assert!(unchanged(Some(b"status: done\n"), &seen, "status: done\n"));
        // A person's edit since the read.
        assert!(!unchanged(
            Some(b"status: pending\nmine\n"),
            &seen,
            "status: done\n"
        ));
        assert!(!unchanged(None, &seen, "x"));
        assert!(unchanged(None, &Expected::Absent, "x"));
        assert!(!unchanged(
            Some(b"made by a person"),
            &Expected::Absent,
            "x"
        ));
        assert!(unchanged(Some(b"anything"), &Expected::Unseen, "x"));
    }
}
