//! A run's vault in a git repository: the second place a Temporal run's
//! vault can live (the first is a folder every worker mounts).
//!
//! Each worker keeps a clone per run in its cache folder; the run works on
//! the branch `planvault/<run>`, made from the base branch by its first
//! write. Every activity that reads first brings the clone to the remote's
//! run branch (so a person's push, say an edit made while the run waits at
//! a gate, is seen), and every activity that changes the vault makes
//! exactly one commit and pushes it before it completes: the history never
//! says a write happened that the remote lacks. A rejected push is never
//! forced: the clone is brought to the remote's tip and the change made
//! again under the same compare-and-swap, so a note a person changed since
//! the run read it is refused, not overwritten. A retry of an activity
//! whose push landed (its worker died before reporting) finds its change
//! already there and commits nothing.
//!
//! The URL carries no credentials ([`credentials_in_url`]): workers
//! authenticate with git's own credential helper or ssh agent, so nothing
//! secret enters the workflow's input or history.

use planvault_runner::git::{git_in, GitError};
use planvault_runner::HostError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

/// What a git run's vault string starts with (then the [`GitSource`] as
/// JSON); a shared folder's is an absolute path, never this.
pub const LOCATOR: &str = "planvault-git:";

/// How often a change is made again over a remote that moved meanwhile
/// before the activity fails (and Temporal retries it, with backoff).
const ROUNDS: usize = 8;

/// Why a git vault could not be served. The activity fails with it and
/// Temporal retries it (the remote may be back, or another worker may
/// reach it); the run itself never sees it.
#[derive(Debug, thiserror::Error)]
pub enum GitVaultError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("the base branch {branch} is not on {url}")]
    NoBase { url: String, branch: String },
    #[error("{url}: the run branch {branch} moved under every one of {ROUNDS} pushes")]
    Contended { url: String, branch: String },
    #[error("{0}")]
    Refused(String),
}

fn io(path: &Path, e: std::io::Error) -> GitVaultError {
    GitVaultError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// A git run's vault: which repository, which branch it starts from, which
/// folder of it is the vault, and the run it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitSource {
    /// The remote, as `git clone` takes it; never with credentials.
    pub url: String,
    /// The branch a new run starts from.
    pub base: String,
    /// The vault's folder in the repository, `/`-separated ("" the top).
    pub dir: String,
    /// The run's name: its branch is `planvault/<run>`.
    pub run: String,
}

impl GitSource {
    /// A source whose parts are checked: no credentials in the URL, a
    /// vault folder inside the repository, branch names git accepts.
    pub fn new(url: &str, base: &str, dir: &str, run: &str) -> Result<GitSource, String> {
        if credentials_in_url(url) {
            return Err(format!(
                "--git {}: the URL carries credentials; give the workers a git credential \
                 helper or an ssh agent instead (the URL is kept in the run's history)",
                redact_url(url)
            ));
        }
        let parts: Vec<&str> = dir
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if dir.starts_with('/') || parts.iter().any(|p| *p == ".." || p.starts_with(".git")) {
            return Err(format!("--vault-dir {dir}: a folder inside the repository"));
        }
        let source = GitSource {
            url: url.to_string(),
            base: base.to_string(),
            dir: parts.join("/"),
            run: run.to_string(),
        };
        for branch in [source.base.clone(), source.branch()] {
            let full = format!("refs/heads/{branch}");
            if branch.starts_with('-')
                || git_in(Path::new("/"), &["check-ref-format", &full]).is_err()
            {
                return Err(format!("{branch}: not a branch name git accepts"));
            }
        }
        Ok(source)
    }

    /// The branch the run commits to.
    pub fn branch(&self) -> String {
        format!("planvault/{}", self.run)
    }

    /// The vault string of a submission and its activities.
    pub fn locator(&self) -> String {
        let json = serde_json::to_string(self).expect("strings always serialize");
        format!("{LOCATOR}{json}")
    }

    /// The source a vault string names, if it is a git run's.
    pub fn parse(vault: &str) -> Option<Result<GitSource, GitVaultError>> {
        let json = vault.strip_prefix(LOCATOR)?;
        Some(
            serde_json::from_str(json).map_err(|e| {
                GitVaultError::Refused(format!("a git vault that does not parse: {e}"))
            }),
        )
    }

    /// What the run's workflow id is derived from (without the run name,
    /// which the id adds).
    pub fn place(&self) -> String {
        format!("{}#{}:{}", self.url, self.base, self.dir)
    }
}

/// Whether `url` names a secret: a password in any URL, or any user part
/// of an http(s) URL (tokens travel as the user name). `ssh://git@host/…`
/// and `git@host:…` name an account, not a secret.
pub fn credentials_in_url(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let Some((user, _)) = authority.rsplit_once('@') else {
        return false;
    };
    user.contains(':') || !scheme.eq_ignore_ascii_case("ssh")
}

/// `url` with any user part replaced, for messages.
fn redact_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://<redacted>@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// The folder every worker on this machine keeps its own folder in:
/// `PLANVAULT_GIT_CACHE`, or the temporary folder's `planvault-git`.
pub fn cache_base() -> PathBuf {
    std::env::var_os("PLANVAULT_GIT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("planvault-git"))
}

/// The folder this worker keeps its clones in: [`cache_base`], then this
/// process's id, so two workers on one machine never share a clone.
pub fn cache_root() -> PathBuf {
    cache_base().join(format!("worker-{}", std::process::id()))
}

/// A clone its worker has not used this long is removed by the worker's
/// sweep (a run waiting longer clones again when it goes on).
pub const UNUSED: Duration = Duration::from_secs(24 * 60 * 60);
/// A worker sweeps its cache at start, then at most this often (on a
/// checkout).
const SWEEP_EVERY: Duration = Duration::from_secs(60 * 60);
/// In a worker's folder: the machine the worker runs on. A cache shared
/// over NFS holds other machines' workers, whose process ids mean nothing
/// here; a folder without it is never swept by another process.
const HOST_MARKER: &str = "host";
/// In a clone's `.git`: when its worker last used it (seconds since the
/// epoch, by the worker's clock: the only sweeper of a live worker's clones
/// is that worker).
const USED_MARKER: &str = "planvault-used";

/// Sweep this worker's cache if it has not been swept for
/// an hour: cheap enough to call on every checkout. Best effort:
/// what cannot be removed now is tried again at the next sweep.
pub fn tend_cache() {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|at| at.elapsed() < SWEEP_EVERY) {
            return;
        }
        *last = Some(Instant::now());
    }
    let host = planvault_runner::native::host_name();
    let _ = mark_worker(&cache_root(), &host);
    let _ = sweep(
        &cache_base(),
        std::process::id(),
        &host,
        SystemTime::now(),
        UNUSED,
    );
}

/// Make a worker's folder and say which machine it belongs to.
fn mark_worker(folder: &Path, host: &str) -> Result<(), GitVaultError> {
    std::fs::create_dir_all(folder).map_err(|e| io(folder, e))?;
    let marker = folder.join(HOST_MARKER);
    if !marker.is_file() {
        std::fs::write(&marker, format!("{host}\n")).map_err(|e| io(&marker, e))?;
    }
    Ok(())
}

/// Remove from the cache `base`: the clones in `me`'s own folder not used
/// for `unused` (before `now`) that no activity holds, and the folders of
/// workers marked as `host`'s whose process has ended. Another machine's
/// folder, an unmarked one, and a live worker's are kept. The paths
/// removed.
pub fn sweep(
    base: &Path,
    me: u32,
    host: &str,
    now: SystemTime,
    unused: Duration,
) -> Result<Vec<PathBuf>, GitVaultError> {
    let mut removed = Vec::new();
    let entries = match std::fs::read_dir(base) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(io(base, e)),
    };
    for entry in entries.flatten() {
        let folder = entry.path();
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix("worker-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            removed.extend(sweep_own(&folder, now, unused));
            continue;
        }
        let marked = std::fs::read_to_string(folder.join(HOST_MARKER)).unwrap_or_default();
        // `stale` is the run lock's own test: this machine's process that
        // has ended.
        let holder = planvault_runner::lock::Holder::process(pid, marked.trim());
        if marked.trim() == host
            && planvault_runner::native::stale(&holder)
            && std::fs::remove_dir_all(&folder).is_ok()
        {
            removed.push(folder);
        }
    }
    Ok(removed)
}

/// This worker's clones (and clones cut short) unused since `now -
/// unused`, skipping any an activity holds.
fn sweep_own(folder: &Path, now: SystemTime, unused: Duration) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return removed;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let clone = folder.join(name.strip_prefix(".partial-").unwrap_or(&name));
        let lock = clone_lock(&clone);
        let held = match lock.try_lock() {
            Ok(held) => held,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => continue,
        };
        let used = last_used(&path);
        if now.duration_since(used).is_ok_and(|idle| idle >= unused)
            && std::fs::remove_dir_all(&path).is_ok()
        {
            removed.push(path);
        }
        drop(held);
        forget_lock(&clone, lock);
    }
    removed
}

/// When a clone was last used: its marker, else when its folder changed.
fn last_used(clone: &Path) -> SystemTime {
    std::fs::read_to_string(clone.join(".git").join(USED_MARKER))
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .or_else(|| std::fs::metadata(clone).and_then(|m| m.modified()).ok())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The clone of `source`'s run branch in the worker folder `cache`.
fn clone_dir(source: &GitSource, cache: &Path) -> PathBuf {
    let key = Sha256::digest(format!("{}\n{}", source.url, source.branch()).as_bytes());
    let name: String = key.iter().take(8).map(|b| format!("{b:02x}")).collect();
    cache.join(name)
}

/// Remove the run's clone from the worker folder `cache` (the run has
/// ended): waits for an activity that holds it, so no git command loses
/// its folder halfway.
pub fn remove_clone(source: &GitSource, cache: &Path) -> Result<(), GitVaultError> {
    let root = clone_dir(source, cache);
    let lock = clone_lock(&root);
    let held = lock.lock().unwrap_or_else(|e| e.into_inner());
    let partial = cache.join(format!(
        ".partial-{}",
        root.file_name().unwrap_or_default().to_string_lossy()
    ));
    let mut result = Ok(());
    for dir in [&root, &partial] {
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => result = Err(io(dir, e)),
            _ => {}
        }
    }
    drop(held);
    forget_lock(&root, lock);
    result
}

/// One lock per clone in this process: a run's activities come one at a
/// time, but a timed-out attempt may still be at work beside its retry.
fn clone_lock(dir: &Path) -> Arc<Mutex<()>> {
    let mut locks = locks().lock().unwrap_or_else(|e| e.into_inner());
    locks.entry(dir.to_path_buf()).or_default().clone()
}

fn locks() -> &'static Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>> {
    static LOCKS: OnceLock<Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    LOCKS.get_or_init(Default::default)
}

/// Drop a removed clone's lock unless someone else has it (holds it or
/// waits on it): the table does not grow with every run a worker served.
fn forget_lock(dir: &Path, lock: Arc<Mutex<()>>) {
    let mut locks = locks().lock().unwrap_or_else(|e| e.into_inner());
    // Only the table's reference and ours: no one can take it meanwhile,
    // since a new taker goes through the table, held here.
    if Arc::strong_count(&lock) == 2 {
        locks.remove(dir);
    }
}

/// A run's clone in a worker's cache, held for one activity.
pub struct Checkout {
    source: GitSource,
    root: PathBuf,
}

/// Run `work` on the run's clone under `cache` (made on first use),
/// brought to the remote's run branch (or the base, before the run's
/// first write) first.
pub fn with_checkout<T>(
    source: &GitSource,
    cache: &Path,
    work: impl FnOnce(&Checkout) -> Result<T, GitVaultError>,
) -> Result<T, GitVaultError> {
    let root = clone_dir(source, cache);
    let lock = clone_lock(&root);
    let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
    let checkout = Checkout {
        source: source.clone(),
        root,
    };
    checkout.open()?;
    checkout.touch();
    checkout.sync()?;
    work(&checkout)
}

impl Checkout {
    fn git(&self, args: &[&str]) -> Result<String, GitError> {
        git_in(&self.root, args)
    }

    /// The vault's folder in the clone.
    pub fn vault(&self) -> PathBuf {
        if self.source.dir.is_empty() {
            self.root.clone()
        } else {
            self.root.join(&self.source.dir)
        }
    }

    /// Mark the clone used now (its worker's sweep keeps it a while).
    fn touch(&self) {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let _ = std::fs::write(self.root.join(".git").join(USED_MARKER), format!("{now}\n"));
    }

    /// Clone the remote unless this worker has already.
    fn open(&self) -> Result<(), GitVaultError> {
        if self.root.join(".git").is_dir() {
            return Ok(());
        }
        let parent = self.root.parent().unwrap_or(Path::new("."));
        mark_worker(parent, &planvault_runner::native::host_name())?;
        // Cloned beside, then renamed: a clone cut short is never taken
        // for a whole one.
        let partial = parent.join(format!(
            ".partial-{}",
            self.root.file_name().unwrap_or_default().to_string_lossy()
        ));
        let _ = std::fs::remove_dir_all(&partial);
        let target = partial.to_string_lossy().into_owned();
        git_in(
            parent,
            &[
                "clone",
                "-q",
                "--no-checkout",
                "--",
                &self.source.url,
                &target,
            ],
        )?;
        if git_in(&partial, &["config", "user.email"]).is_err() {
            git_in(&partial, &["config", "user.name", "planvault"])?;
            git_in(&partial, &["config", "user.email", "planvault@localhost"])?;
        }
        std::fs::rename(&partial, &self.root).map_err(|e| io(&self.root, e))
    }

    /// The remote's tip of `branch`, if it has the branch (after a fetch).
    fn remote_tip(&self, branch: &str) -> Option<String> {
        self.git(&[
            "rev-parse",
            "-q",
            "--verify",
            &format!("refs/remotes/origin/{branch}^{{commit}}"),
        ])
        .ok()
        .map(|s| s.trim().to_string())
    }

    /// Fetch, and make the clone exactly the remote's run branch (or its
    /// base before the run's first write): whatever an earlier attempt
    /// left behind, pushed or not, is dropped.
    pub fn sync(&self) -> Result<(), GitVaultError> {
        self.git(&["fetch", "-q", "--prune", "origin"])?;
        let branch = self.source.branch();
        let tip = match self.remote_tip(&branch) {
            Some(tip) => tip,
            None => self
                .remote_tip(&self.source.base)
                .ok_or_else(|| GitVaultError::NoBase {
                    url: self.source.url.clone(),
                    branch: self.source.base.clone(),
                })?,
        };
        self.git(&["checkout", "-q", "-f", "-B", &branch, &tip])?;
        self.git(&["clean", "-q", "-f", "-d"])?;
        Ok(())
    }

    /// Whether the index differs from HEAD.
    fn staged(&self) -> Result<bool, GitError> {
        match self.git(&["diff", "--cached", "--quiet"]) {
            Ok(_) => Ok(false),
            Err(GitError::Failed { code: 1, .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Push HEAD to the run branch: `Ok(false)` when the remote moved
    /// (never forced).
    fn push(&self, branch: &str) -> Result<bool, GitError> {
        let refspec = format!("HEAD:refs/heads/{branch}");
        match self.git(&["push", "-q", "origin", &refspec]) {
            Ok(_) => Ok(true),
            Err(GitError::Failed { stderr, .. })
                if ["[rejected]", "non-fast-forward", "fetch first"]
                    .iter()
                    .any(|s| stderr.contains(s)) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// The vault-relative `path` as a literal pathspec of the clone.
    fn pathspec(&self, path: &str) -> String {
        if self.source.dir.is_empty() {
            format!(":(literal){path}")
        } else {
            format!(":(literal){}/{path}", self.source.dir)
        }
    }

    /// Make one change to `path` (by `apply`, over the vault folder), as
    /// one commit on the run branch, pushed. `apply`'s refusal is the
    /// run's answer and nothing is committed; a change already on the
    /// remote (a retry whose first push landed) commits nothing. A push
    /// the remote rejected is made again over the remote's new tip.
    pub fn change(
        &self,
        path: &str,
        message: &str,
        mut apply: impl FnMut(&Path) -> Result<(), HostError>,
    ) -> Result<Result<(), HostError>, GitVaultError> {
        let branch = self.source.branch();
        for round in 0..ROUNDS {
            if round > 0 {
                self.sync()?;
            }
            if let Err(refused) = apply(&self.vault()) {
                return Ok(Err(refused));
            }
            // Forced: the run's own files land even where a .gitignore
            // would leave them out.
            self.git(&["add", "-f", "-A", "--", &self.pathspec(path)])?;
            if !self.staged()? {
                return Ok(Ok(()));
            }
            let subject = format!("planvault {}: {message}", self.source.run);
            self.git(&["commit", "-q", "--no-verify", "-m", &subject])?;
            if self.push(&branch)? {
                return Ok(Ok(()));
            }
        }
        Err(GitVaultError::Contended {
            url: self.source.url.clone(),
            branch,
        })
    }

    /// Commit and push what a `@tool` command changed in the clone. When
    /// the remote moved and the command's commit does not rebase onto it,
    /// the commit goes to `planvault/<run>-unmerged-<commit>` instead (the
    /// run branch keeps the person's change): the returned line says so.
    pub fn commit_command(&self, command: &str) -> Result<Option<String>, GitVaultError> {
        self.git(&["add", "-A"])?;
        if !self.staged()? {
            return Ok(None);
        }
        let shown: String = command.chars().take(60).collect();
        let subject = format!("planvault {}: @tool {shown}", self.source.run);
        self.git(&["commit", "-q", "--no-verify", "-m", &subject])?;
        let branch = self.source.branch();
        for _ in 0..ROUNDS {
            if self.push(&branch)? {
                return Ok(None);
            }
            self.git(&["fetch", "-q", "origin"])?;
            let upstream = format!("refs/remotes/origin/{branch}");
            if self.git(&["rebase", "-q", &upstream]).is_err() {
                let _ = self.git(&["rebase", "--abort"]);
                let head = self.git(&["rev-parse", "--short=12", "HEAD"])?;
                let aside = format!("{branch}-unmerged-{}", head.trim());
                self.git(&["push", "-q", "origin", &format!("HEAD:refs/heads/{aside}")])?;
                return Ok(Some(format!(
                    "planvault: the command's changes conflict with {branch} as it is now; \
                     they were pushed to {aside} instead"
                )));
            }
        }
        Err(GitVaultError::Contended {
            url: self.source.url.clone(),
            branch,
        })
    }
}

/// Check out what `submit` reads of a git vault into `into` (an empty
/// folder): the run branch when the run has one (a resubmitted run goes
/// on from it), else the base. The vault's folder in it.
pub fn checkout_for_submit(source: &GitSource, into: &Path) -> Result<PathBuf, GitVaultError> {
    let target = into.to_string_lossy().into_owned();
    git_in(
        into.parent().unwrap_or(Path::new(".")),
        &["clone", "-q", "--no-checkout", "--", &source.url, &target],
    )?;
    let checkout = Checkout {
        source: source.clone(),
        root: into.to_path_buf(),
    };
    checkout.sync()?;
    let vault = checkout.vault();
    if !vault.is_dir() {
        return Err(GitVaultError::Refused(format!(
            "{} has no folder {} on {}",
            source.url,
            if source.dir.is_empty() {
                "."
            } else {
                &source.dir
            },
            source.base
        )));
    }
    Ok(vault)
}

#[cfg(test)]
mod tests {
    use super::*;
    use planvault_runner::native::NativeHost;
    use planvault_runner::{block_on, Host};

    /// A bare repository (the remote) whose `main` holds `files`, and a
    /// folder for everything else the test makes.
    fn remote(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("remote.git");
        let seed = dir.path().join("seed");
        git_in(
            dir.path(),
            &["init", "-q", "--bare", "-b", "main", "remote.git"],
        )
        .unwrap();
        git_in(dir.path(), &["init", "-q", "-b", "main", "seed"]).unwrap();
        for (path, text) in files {
            let path = seed.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        person(&seed, &["add", "."]);
        person(&seed, &["commit", "-q", "-m", "plan"]);
        person(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
        (dir, bare.to_string_lossy().into_owned())
    }

    fn person(dir: &Path, args: &[&str]) -> String {
        let who = ["-c", "user.name=person", "-c", "user.email=p@example"];
        git_in(dir, &[&who[..], args].concat()).unwrap()
    }

    /// A person's clone of the run branch.
    fn person_clone(dir: &Path, url: &str, name: &str) -> PathBuf {
        git_in(dir, &["clone", "-q", "-b", "planvault/r1", url, name]).unwrap();
        dir.join(name)
    }

    fn source(url: &str) -> GitSource {
        GitSource::new(url, "main", "plan", "r1").unwrap()
    }

    fn write(
        source: &GitSource,
        cache: &Path,
        path: &str,
        text: &str,
        expected: Option<&str>,
    ) -> Result<(), HostError> {
        with_checkout(source, cache, |c| {
            c.change(path, &format!("write {path}"), |root| {
                let current = std::fs::read_to_string(root.join(path)).ok();
                if current.as_deref() != Some(text)
                    && expected.is_some()
                    && current.as_deref() != expected
                {
                    return Err(HostError::new(
                        path,
                        "changed on disk since the run read it",
                    ));
                }
                block_on(NativeHost::new(root).write(path, text)).unwrap()
            })
        })
        .unwrap()
    }

    fn commits(url: &str) -> usize {
        git_in(Path::new(url), &["rev-list", "--count", "planvault/r1"])
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    fn on_branch(url: &str, path: &str) -> String {
        git_in(
            Path::new(url),
            &["show", &format!("planvault/r1:plan/{path}")],
        )
        .unwrap()
    }

    #[test]
    fn every_write_is_one_pushed_commit_and_a_landed_retry_makes_none() {
        let (dir, url) = remote(&[("plan/a.md", "status: pending\n")]);
        let source = source(&url);
        let worker = dir.path().join("w1");
        write(
            &source,
            &worker,
            "a.md",
            "status: done\n",
            Some("status: pending\n"),
        )
        .unwrap();
        assert_eq!(on_branch(&url, "a.md"), "status: done\n");
        assert_eq!(commits(&url), 2, "the plan and one write");
        // The same write again, by another worker (the first died before
        // reporting it): already there, nothing committed.
        let other = dir.path().join("w2");
        write(
            &source,
            &other,
            "a.md",
            "status: done\n",
            Some("status: pending\n"),
        )
        .unwrap();
        assert_eq!(commits(&url), 2);
        // The base branch is never written.
        let main = git_in(Path::new(&url), &["show", "main:plan/a.md"]).unwrap();
        assert_eq!(main, "status: pending\n");
    }

    #[test]
    fn a_rejected_push_is_made_again_over_the_persons_push_and_keeps_it() {
        let (dir, url) = remote(&[("plan/a.md", "a\n"), ("plan/b.md", "b\n")]);
        let source = source(&url);
        let worker = dir.path().join("w1");
        write(&source, &worker, "a.md", "a1\n", Some("a\n")).unwrap();
        let mine = person_clone(dir.path(), &url, "mine");
        std::fs::write(mine.join("plan/b.md"), "b, by a person\n").unwrap();
        person(&mine, &["commit", "-q", "-am", "edit b"]);
        person(&mine, &["push", "-q"]);
        // The worker's clone is behind: its push is rejected, the write is
        // made again over the person's commit, and both survive.
        let made = std::cell::Cell::new(0);
        with_checkout(&source, &worker, |c| {
            // The person pushes again between the worker's sync and its push.
            std::fs::write(mine.join("plan/b.md"), "b, twice\n").unwrap();
            person(&mine, &["commit", "-q", "-am", "edit b again"]);
            person(&mine, &["push", "-q"]);
            c.change("a.md", "write a.md", |root| {
                made.set(made.get() + 1);
                block_on(NativeHost::new(root).write("a.md", "a2\n")).unwrap()
            })
        })
        .unwrap()
        .unwrap();
        assert_eq!(made.get(), 2, "made once, rejected, made again");
        assert_eq!(on_branch(&url, "a.md"), "a2\n");
        assert_eq!(on_branch(&url, "b.md"), "b, twice\n");
        let log = git_in(Path::new(&url), &["log", "--format=%s", "planvault/r1"]).unwrap();
        assert_eq!(
            log.lines().collect::<Vec<_>>(),
            [
                "planvault r1: write a.md",
                "edit b again",
                "edit b",
                "planvault r1: write a.md",
                "plan"
            ]
        );
    }

    #[test]
    fn a_note_the_person_changed_since_the_run_read_it_is_refused() {
        let (dir, url) = remote(&[("plan/a.md", "a\n")]);
        let source = source(&url);
        let worker = dir.path().join("w1");
        write(&source, &worker, "a.md", "a1\n", Some("a\n")).unwrap();
        let mine = person_clone(dir.path(), &url, "mine");
        std::fs::write(mine.join("plan/a.md"), "a1, and mine\n").unwrap();
        person(&mine, &["commit", "-q", "-am", "edit a"]);
        person(&mine, &["push", "-q"]);
        let refused = write(&source, &worker, "a.md", "a2\n", Some("a1\n")).unwrap_err();
        assert!(refused.message.contains("changed"), "{refused:?}");
        assert_eq!(on_branch(&url, "a.md"), "a1, and mine\n");
    }

    #[test]
    fn a_read_sees_the_persons_push() {
        let (dir, url) = remote(&[("plan/a.md", "a\n")]);
        let source = source(&url);
        let worker = dir.path().join("w1");
        write(&source, &worker, "a.md", "a1\n", Some("a\n")).unwrap();
        let mine = person_clone(dir.path(), &url, "mine");
        std::fs::write(mine.join("plan/a.md"), "a1, and mine\n").unwrap();
        person(&mine, &["commit", "-q", "-am", "edit a"]);
        person(&mine, &["push", "-q"]);
        let read = with_checkout(&source, &worker, |c| {
            Ok(std::fs::read_to_string(c.vault().join("a.md")).unwrap())
        })
        .unwrap();
        assert_eq!(read, "a1, and mine\n");
    }

    #[test]
    fn a_command_that_conflicts_is_pushed_aside_and_said() {
        let (dir, url) = remote(&[("plan/a.md", "a\n")]);
        let source = source(&url);
        let worker = dir.path().join("w1");
        write(&source, &worker, "a.md", "a1\n", Some("a\n")).unwrap();
        let mine = person_clone(dir.path(), &url, "mine");
        let said = with_checkout(&source, &worker, |c| {
            std::fs::write(c.vault().join("a.md"), "by the command\n").unwrap();
            std::fs::write(mine.join("plan/a.md"), "by a person\n").unwrap();
            person(&mine, &["commit", "-q", "-am", "edit a"]);
            person(&mine, &["push", "-q"]);
            c.commit_command("sed -i s/a1/x/ a.md")
        })
        .unwrap()
        .unwrap();
        assert!(said.contains("planvault/r1-unmerged-"), "{said}");
        assert_eq!(on_branch(&url, "a.md"), "by a person\n");
        let aside = said.rsplit(' ').nth(1).unwrap();
        let theirs = git_in(Path::new(&url), &["show", &format!("{aside}:plan/a.md")]).unwrap();
        assert_eq!(theirs, "by the command\n");
        // One that does not conflict is rebased onto the person's push.
        let said = with_checkout(&source, &worker, |c| {
            std::fs::write(c.vault().join("new.md"), "made\n").unwrap();
            std::fs::write(mine.join("plan/other.md"), "theirs\n").unwrap();
            person(&mine, &["add", "."]);
            person(&mine, &["commit", "-q", "-m", "other"]);
            person(&mine, &["push", "-q"]);
            c.commit_command("touch new.md")
        })
        .unwrap();
        assert_eq!(said, None);
        assert_eq!(on_branch(&url, "new.md"), "made\n");
        assert_eq!(on_branch(&url, "other.md"), "theirs\n");
    }

    /// A fake clone in `folder`, last used `ago` before `now`.
    fn clone_used(folder: &Path, name: &str, now: SystemTime, ago: Duration) -> PathBuf {
        let clone = folder.join(name);
        std::fs::create_dir_all(clone.join(".git")).unwrap();
        let at = now.duration_since(SystemTime::UNIX_EPOCH).unwrap() - ago;
        std::fs::write(
            clone.join(".git").join(USED_MARKER),
            at.as_secs().to_string(),
        )
        .unwrap();
        clone
    }

    #[test]
    fn the_sweep_removes_stale_clones_and_dead_workers_and_keeps_the_rest() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path();
        let here = planvault_runner::native::host_name();
        let now = SystemTime::now();
        let hour = Duration::from_secs(3600);
        let me = std::process::id();
        let own = base.join(format!("worker-{me}"));
        mark_worker(&own, &here).unwrap();
        let fresh = clone_used(&own, "00000000000000f1", now, hour);
        let stale = clone_used(&own, "00000000000000a1", now, UNUSED + hour);
        let held = clone_used(&own, "00000000000000b1", now, UNUSED + hour);
        // A clone cut short (no marker) long ago: its folder's time says.
        let partial = own.join(".partial-00000000000000c1");
        std::fs::create_dir_all(&partial).unwrap();
        // A worker of this machine that has ended, one that runs (pid 1
        // always does), another machine's, and an unmarked one.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dead_here = base.join(format!("worker-{dead}"));
        mark_worker(&dead_here, &here).unwrap();
        clone_used(&dead_here, "00000000000000d1", now, hour);
        let live_here = base.join("worker-1");
        mark_worker(&live_here, &here).unwrap();
        let elsewhere = base.join(format!("worker-{}", dead.wrapping_add(1)));
        mark_worker(&elsewhere, "another-machine").unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let unmarked = base.join(format!("worker-{}", child.id()));
        child.wait().unwrap();
        std::fs::create_dir_all(&unmarked).unwrap();
        let unrelated = base.join("notes");
        std::fs::create_dir_all(&unrelated).unwrap();

        let lock = clone_lock(&held);
        let guard = lock.lock().unwrap();
        // A day and more from now: every clone unused since is stale.
        let removed = sweep(base, me, &here, now + UNUSED + hour, UNUSED).unwrap();
        let mut removed: Vec<_> = removed.iter().map(|p| p.as_path()).collect();
        removed.sort();
        let mut expected = vec![
            fresh.as_path(),
            stale.as_path(),
            partial.as_path(),
            dead_here.as_path(),
        ];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(!stale.exists() && !partial.exists() && !dead_here.exists());
        for kept in [&held, &own, &live_here, &elsewhere, &unmarked, &unrelated] {
            assert!(kept.exists(), "{}", kept.display());
        }
        drop(guard);

        // At `now` itself, a clone used an hour ago is kept, and once
        // released the held one goes.
        let fresh = clone_used(&own, "00000000000000f2", now, hour);
        let removed = sweep(base, me, &here, now, UNUSED).unwrap();
        assert_eq!(removed, vec![held.clone()]);
        assert!(fresh.exists());
        assert_eq!(
            std::fs::read_to_string(own.join(HOST_MARKER)).unwrap(),
            format!("{here}\n")
        );
    }

    #[test]
    fn a_run_that_ended_has_its_clone_removed_and_a_later_checkout_clones_again() {
        let (dir, url) = remote(&[("plan/a.md", "a\n")]);
        let source = source(&url);
        let worker = dir.path().join("worker-1");
        write(&source, &worker, "a.md", "a1\n", Some("a\n")).unwrap();
        let clone = clone_dir(&source, &worker);
        assert!(clone.join(".git").is_dir());
        let here = planvault_runner::native::host_name();
        assert_eq!(
            std::fs::read_to_string(worker.join(HOST_MARKER)).unwrap(),
            format!("{here}\n"),
            "the worker folder names its machine"
        );
        let used = last_used(&clone);
        let age = SystemTime::now().duration_since(used).unwrap();
        assert!(age < Duration::from_secs(60), "touched on use: {age:?}");
        // Another run's clone on the same worker stays.
        let other = GitSource::new(&url, "main", "plan", "r2").unwrap();
        with_checkout(&other, &worker, |_| Ok(())).unwrap();

        // The removal waits for an activity that holds the clone.
        let lock = clone_lock(&clone);
        let guard = lock.lock().unwrap();
        let remover = {
            let (source, worker) = (source.clone(), worker.clone());
            std::thread::spawn(move || remove_clone(&source, &worker))
        };
        std::thread::sleep(Duration::from_millis(200));
        assert!(clone.join(".git").is_dir(), "not removed while held");
        drop(guard);
        drop(lock);
        remover.join().unwrap().unwrap();
        assert!(!clone.exists());
        assert!(clone_dir(&other, &worker).join(".git").is_dir());
        // Removing it again is no error; a later activity clones again.
        remove_clone(&source, &worker).unwrap();
        let read = with_checkout(&source, &worker, |c| {
            Ok(std::fs::read_to_string(c.vault().join("a.md")).unwrap())
        })
        .unwrap();
        assert_eq!(read, "a1\n");
    }

    #[test]
    fn credentials_in_a_url_are_refused_and_an_account_is_not() {
        for url in [
            "https://token@example.com/team/plans.git",
            "https://user:pw@example.com/team/plans.git",
            "ssh://git:pw@example.com/plans.git",
        ] {
            let err = GitSource::new(url, "main", "", "r").unwrap_err();
            assert!(!err.contains("pw") && !err.contains("token"), "{err}");
        }
        for url in [
            "https://example.com/team/plans.git",
            "ssh://git@example.com/plans.git",
            "git@example.com:team/plans.git",
            "/srv/plans.git",
        ] {
            assert!(GitSource::new(url, "main", "", "r").is_ok(), "{url}");
        }
        assert!(GitSource::new("/x", "main", "../up", "r").is_err());
        assert!(GitSource::new("/x", "-main", "", "r").is_err());
        let s = GitSource::new("/x", "main", "./plans/", "r").unwrap();
        assert_eq!(s.dir, "plans");
        assert_eq!(GitSource::parse(&s.locator()).unwrap().unwrap(), s);
        assert!(GitSource::parse("/srv/vault").is_none());
    }
}
