//! Guarded, isolated runs (`planvault run --isolate`): every mutation in a
//! git worktree on a branch `planvault/<run-id>`, the verifier's files
//! locked by their hashes, bounded attempts, and on the end either a commit
//! bound to a receipt or a rollback that leaves a learnings note.
//!
//! Where things live, all under the repository's git directory so the
//! checkout stays byte-for-byte untouched for the whole run:
//! - `.git/planvault/runs/<key>/vault/` — the run's vault (statuses, trace,
//!   journal, receipts): a copy of the plan's vault, or a PLAN.md's run
//!   vault; `<key>` names the plan by its path in the repository.
//! - `.git/planvault/runs/<key>/guard.jsonl` — this module's log: one line
//!   per step (worktree made, hashes taken, attempt, verification, staged
//!   tree, receipt, commit, rollback), fsync'd before the step's effect is
//!   relied on, so a resumed run knows what happened and repeats nothing.
//! - `.git/planvault/runs/<key>/attempts/<n>/` — each failed attempt's trace.
//! - `.git/planvault/worktrees/<run-id>/` — the worktree.
//!
//! The one write outside: a rolled-back run's learnings note, into the
//! plan's own vault (`00_plan-trace/learnings/<run-id>.md`).

use crate::git::{GitError, Repo};
use planvault_core::engine::journal::sha256_hex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How many attempts a run gets when the config does not say.
pub const DEFAULT_ATTEMPTS: u32 = 3;
/// The guard's log, in the run's state folder.
pub const LOG_FILE: &str = "guard.jsonl";
/// How much of the verifier's output is kept.
const OUTPUT_CHARS: usize = 4000;

/// `[guard]` of the vault's config.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GuardConfig {
    /// The verifier: a shell command run in the worktree; exit 0 passes.
    pub verify: Option<String>,
    /// Globs of repository paths the work may not change (`tests/**`).
    pub protected: Vec<String>,
    /// Attempts before the run is rolled back (at least 1).
    pub attempts: u32,
    /// Environment variables the verifier keeps beyond the commands' list.
    pub env: Vec<String>,
}

/// Why a guarded step failed.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}:{line}: not a guard log line: {message}")]
    Log {
        path: String,
        line: usize,
        message: String,
    },
    #[error("the receipt could not be written: {0}")]
    Receipt(String),
    /// A person's edit in the checkout and the run's own change to its
    /// copy touch the same lines.
    #[error("{path}: changed in the checkout where the run changed its copy too ({count} conflicting part(s)):\n{excerpt}")]
    Conflict {
        path: String,
        count: usize,
        /// The first conflicting part, with git's markers.
        excerpt: String,
    },
}

fn io_err(path: &Path, e: std::io::Error) -> GuardError {
    GuardError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// One step of the guard's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// A new isolated run; the checkout's untracked files at its start.
    Started {
        run_id: String,
        untracked: Vec<String>,
        head: String,
    },
    /// The worktree exists on its branch.
    WorktreeAdded {
        path: String,
        branch: String,
    },
    /// The verifier's files and the protected files, hashed before the
    /// first mutation (git blob ids).
    Baseline {
        hashes: BTreeMap<String, String>,
    },
    /// An attempt's run has started (its fresh reset is done).
    AttemptRunning {
        attempt: u32,
    },
    /// The verifier's verdict on an attempt.
    Verified {
        attempt: u32,
        exit: i32,
        output: String,
    },
    /// A protected file changed: the run stops.
    Tampered {
        attempt: u32,
        file: String,
    },
    /// A failed attempt's trace was kept aside; the next one begins.
    NextAttempt {
        attempt: u32,
    },
    /// Notes the run's `write_note` wrote in its vault, put in the
    /// worktree before the verifier ran: repository path → SHA-256 of the
    /// text put there (a later attempt may write its own over it).
    NotesCarried {
        notes: BTreeMap<String, String>,
    },
    /// The worktree was staged: its tree.
    Staged {
        tree: String,
    },
    /// The receipt was written.
    Receipt {
        id: String,
    },
    /// The branch's commit.
    Committed {
        commit: String,
    },
    /// The learnings note of a rolled-back run.
    Learnings {
        path: String,
    },
    WorktreeRemoved,
    BranchDeleted,
    /// `committed` or `escalated`.
    Finished {
        outcome: String,
    },
}

/// What [`Guard::carry_notes`] did: repository paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CarriedNotes {
    /// In the worktree as the run wrote them.
    pub carried: Vec<String>,
    /// Left as the worktree has them, each with why; the run's text stays
    /// in its vault.
    pub kept: Vec<(String, String)>,
}

/// What a receipt is made of, handed to whoever writes it.
#[derive(Debug, Clone)]
pub struct ReceiptFacts<'a> {
    pub run_id: &'a str,
    /// The staged tree (a committed run).
    pub tree: Option<&'a str>,
    pub attempts: u32,
    /// `committed` or `escalated`.
    pub outcome: &'a str,
    pub verify: Option<&'a str>,
    /// The locked files' git blob ids at the run's start.
    pub verifier_hashes: &'a BTreeMap<String, String>,
    /// The guard's log, as written so far.
    pub log: &'a Path,
    /// The repository (the locked files' blobs are read from it).
    pub repo: &'a Repo,
}

/// Writes a receipt and returns its id.
pub type ReceiptWriter<'a> = dyn FnMut(&ReceiptFacts<'_>) -> Result<String, String> + 'a;

/// An isolated run's guard: its repository, its state and its log.
#[derive(Debug)]
pub struct Guard {
    repo: Repo,
    state: PathBuf,
    config: GuardConfig,
    steps: Vec<Step>,
}

/// Whether a `/`-separated path matches a glob: `*` and `?` within a
/// name, `**` across folders (`tests/**` is everything under `tests/`).
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    let parts: Vec<&str> = path.split('/').collect();
    // Explicit stack: (pattern index, path index).
    let mut stack = vec![(0usize, 0usize)];
    let mut seen = std::collections::BTreeSet::new();
    while let Some((p, s)) = stack.pop() {
        if !seen.insert((p, s)) {
            continue;
        }
        if p == pat.len() {
            if s == parts.len() {
                return true;
            }
            continue;
        }
        if pat[p] == "**" {
            stack.push((p + 1, s));
            if s < parts.len() {
                stack.push((p, s + 1));
            }
        } else if s < parts.len() && name_match(pat[p], parts[s]) {
            stack.push((p + 1, s + 1));
        }
    }
    false
}

/// `*` and `?` within one name.
fn name_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The files a verifier command names (its words that are files of the
/// worktree): its script is locked like a protected file.
pub fn verifier_files(command: &str, worktree: &Path) -> Vec<String> {
    verifier_words(command)
        .filter(|w| worktree.join(w).is_file())
        .map(str::to_string)
        .collect()
}

/// The words of a verifier command that could name a file of the
/// worktree (relative, not an option, not out of it).
fn verifier_words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .map(|w| w.strip_prefix("./").unwrap_or(w))
        .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.starts_with('/'))
        .filter(|w| !w.split('/').any(|c| c == ".."))
}

/// The last `lines` lines of a text.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Guard {
    /// The guard of the plan `key` (its path in the repository) in `repo`:
    /// the run recorded there (ended or not), or a new one named `new_id` (always a new
    /// one when `fresh`, after removing an unfinished run's worktree and
    /// branch).
    pub fn open(
        repo: Repo,
        key: &str,
        fresh: bool,
        mut config: GuardConfig,
        new_id: &str,
    ) -> Result<Guard, GuardError> {
        config.attempts = config.attempts.max(1);
        let slug: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let slug = if slug.trim_matches(['-', '.']).is_empty() {
            "plan".to_string()
        } else {
            slug
        };
        let state = repo.planvault_dir().join("runs").join(slug);
        std::fs::create_dir_all(&state).map_err(|e| io_err(&state, e))?;
        let mut guard = Guard {
            repo,
            state,
            config,
            steps: Vec::new(),
        };
        guard.steps = guard.read_log()?;
        let finished = guard.finished().is_some();
        if fresh && !guard.steps.is_empty() && !finished {
            // An abandoned run: nothing of it may stay behind.
            guard.teardown(false)?;
        }
        if fresh || guard.steps.is_empty() {
            guard.begin(new_id)?;
        }
        Ok(guard)
    }

    /// A new run: the old log kept beside, the checkout's untracked files
    /// recorded.
    fn begin(&mut self, run_id: &str) -> Result<(), GuardError> {
        let log = self.state.join(LOG_FILE);
        if let Some(id) = self.steps.iter().find_map(|s| match s {
            Step::Started { run_id, .. } => Some(run_id.clone()),
            _ => None,
        }) {
            let kept = self.state.join(format!("guard-{id}.jsonl"));
            std::fs::rename(&log, &kept).map_err(|e| io_err(&log, e))?;
        }
        let attempts = self.state.join("attempts");
        if attempts.exists() {
            std::fs::remove_dir_all(&attempts).map_err(|e| io_err(&attempts, e))?;
        }
        self.steps.clear();
        let root = self.repo.root().to_path_buf();
        let step = Step::Started {
            run_id: run_id.to_string(),
            untracked: self.repo.untracked()?,
            head: self.repo.head(&root)?,
        };
        self.log(step)
    }

    fn read_log(&self) -> Result<Vec<Step>, GuardError> {
        let path = self.state.join(LOG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&path, e)),
        };
        let mut steps = Vec::new();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            match serde_json::from_str(line) {
                Ok(step) => steps.push(step),
                // A torn last line (killed mid-write): the step never happened.
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
                Err(e) => {
                    return Err(GuardError::Log {
                        path: path.display().to_string(),
                        line: i + 1,
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(steps)
    }

    /// Append a step to the log, durably, then remember it.
    fn log(&mut self, step: Step) -> Result<(), GuardError> {
        let path = self.state.join(LOG_FILE);
        let mut line = serde_json::to_string(&step).map_err(|e| GuardError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        // A torn line left by a kill is cut before the next is written.
        let len = file.metadata().map_err(|e| io_err(&path, e))?.len();
        if len > 0 {
            let text = std::fs::read(&path).map_err(|e| io_err(&path, e))?;
            if text.last() != Some(&b'\n') {
                let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                file.set_len(keep as u64).map_err(|e| io_err(&path, e))?;
            }
        }
        file.write_all(line.as_bytes())
            .and_then(|_| file.sync_data())
            .map_err(|e| io_err(&path, e))?;
        self.steps.push(step);
        Ok(())
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    pub fn config(&self) -> &GuardConfig {
        &self.config
    }

    /// The steps logged so far.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The run's state folder.
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// The guard's log file.
    pub fn log_path(&self) -> PathBuf {
        self.state.join(LOG_FILE)
    }

    /// The run's vault (statuses, trace, journal, receipts).
    pub fn vault_dir(&self) -> PathBuf {
        self.state.join("vault")
    }

    /// The checkout's files as the run's copy was taken from them: what a
    /// resume tells a person's edits since from the run's own changes by
    /// ([`take_checkout_edits`]).
    pub fn base_dir(&self) -> PathBuf {
        self.state.join("base")
    }

    pub fn run_id(&self) -> String {
        self.steps
            .iter()
            .find_map(|s| match s {
                Step::Started { run_id, .. } => Some(run_id.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// `planvault/<run-id>`.
    pub fn branch(&self) -> String {
        format!("planvault/{}", self.run_id())
    }

    /// Where the worktree is (or will be).
    pub fn worktree(&self) -> PathBuf {
        self.repo
            .planvault_dir()
            .join("worktrees")
            .join(self.run_id())
    }

    /// `committed` or `escalated` once the run is over.
    pub fn finished(&self) -> Option<&str> {
        self.steps.iter().find_map(|s| match s {
            Step::Finished { outcome } => Some(outcome.as_str()),
            _ => None,
        })
    }

    /// The attempt under way (1-based).
    pub fn attempt(&self) -> u32 {
        1 + self
            .steps
            .iter()
            .filter(|s| matches!(s, Step::NextAttempt { .. }))
            .count() as u32
    }

    /// Whether this attempt's run has begun (its fresh reset done).
    pub fn attempt_running(&self) -> bool {
        let n = self.attempt();
        self.steps
            .iter()
            .any(|s| matches!(s, Step::AttemptRunning { attempt } if *attempt == n))
    }

    /// Record that this attempt's run has begun.
    pub fn mark_running(&mut self) -> Result<(), GuardError> {
        if !self.attempt_running() {
            let attempt = self.attempt();
            self.log(Step::AttemptRunning { attempt })?;
        }
        Ok(())
    }

    /// The verifier's failures so far: (attempt, exit, output).
    pub fn failures(&self) -> Vec<(u32, i32, String)> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Verified {
                    attempt,
                    exit,
                    output,
                } if *exit != 0 => Some((*attempt, *exit, output.clone())),
                _ => None,
            })
            .collect()
    }

    /// The verdict on this attempt, when the verifier has given one.
    pub fn verdict(&self) -> Option<(i32, String)> {
        let n = self.attempt();
        self.steps.iter().find_map(|s| match s {
            Step::Verified {
                attempt,
                exit,
                output,
            } if *attempt == n => Some((*exit, output.clone())),
            _ => None,
        })
    }

    /// The tampered file, if one was found.
    pub fn tampered(&self) -> Option<String> {
        self.steps.iter().find_map(|s| match s {
            Step::Tampered { file, .. } => Some(file.clone()),
            _ => None,
        })
    }

    /// The locked files' hashes taken before the first mutation.
    pub fn baseline(&self) -> Option<&BTreeMap<String, String>> {
        self.steps.iter().find_map(|s| match s {
            Step::Baseline { hashes } => Some(hashes),
            _ => None,
        })
    }

    fn worktree_added(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::WorktreeAdded { .. }))
    }

    fn has(&self, want: impl Fn(&Step) -> bool) -> bool {
        self.steps.iter().any(want)
    }

    /// The worktree, made on the run's branch (and the locked files hashed)
    /// the first time a mutation needs it; found again on a resume.
    pub fn ensure_worktree(&mut self) -> Result<PathBuf, GuardError> {
        let path = self.worktree();
        let listed = self.repo.worktrees()?.iter().any(|w| {
            std::fs::canonicalize(w).ok() == std::fs::canonicalize(&path).ok() && path.exists()
        });
        if !self.worktree_added() {
            // Not logged: a kill may have cut `worktree add` short (a folder
            // half checked out). Nothing ran in it yet, so it is made again.
            if listed || path.exists() {
                self.repo.worktree_remove(&path)?;
                if path.exists() {
                    std::fs::remove_dir_all(&path).map_err(|e| io_err(&path, e))?;
                }
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
            }
            self.repo.worktree_add(&path, &self.branch())?;
            let step = Step::WorktreeAdded {
                path: path.display().to_string(),
                branch: self.branch(),
            };
            self.log(step)?;
        } else if !listed {
            // Logged, then lost (removed by hand): back on its branch, whose
            // commits are all the run has kept.
            if path.exists() {
                std::fs::remove_dir_all(&path).map_err(|e| io_err(&path, e))?;
            }
            self.repo.worktree_add(&path, &self.branch())?;
        }
        if self.baseline().is_none() {
            let hashes = self.hash_locked(None)?;
            self.log(Step::Baseline { hashes })?;
        }
        // Its `.git` pointing back, whatever ran in it since: the
        // verifier's own git commands find this run's branch.
        self.repo.reattach(&path)?;
        Ok(path)
    }

    /// The locked files of the worktree now: the protected globs' files
    /// and the verifier's own, plus `also` (files locked at the start).
    fn hash_locked(
        &self,
        also: Option<&BTreeMap<String, String>>,
    ) -> Result<BTreeMap<String, String>, GuardError> {
        let wt = self.worktree();
        let mut files: Vec<String> = self
            .repo
            .files(&wt)?
            .into_iter()
            .filter(|f| self.is_protected(f))
            .collect();
        files.extend(protected_on_disk(&wt, &self.config.protected));
        if let Some(verify) = &self.config.verify {
            files.extend(verifier_files(verify, &wt));
        }
        if let Some(also) = also {
            files.extend(also.keys().cloned());
        }
        files.sort();
        files.dedup();
        Ok(self.repo.hash_files(&wt, &files)?.into_iter().collect())
    }

    /// Whether a repository path is protected by `[guard] protected`.
    pub fn is_protected(&self, rel: &str) -> bool {
        protected_by(&self.config.protected, rel)
    }

    /// Whether the work may not write a repository path: protected, or
    /// named by the verifier (locked once it exists, so the run writing
    /// it would be stopped as tampering).
    pub fn is_locked(&self, rel: &str) -> bool {
        self.is_protected(rel)
            || self
                .config
                .verify
                .as_deref()
                .is_some_and(|verify| verifier_words(verify).any(|w| w == rel))
    }

    /// The first locked file that changed since the start (by name), or
    /// `None`. A changed file is logged as tampering.
    pub fn check_tamper(&mut self) -> Result<Option<String>, GuardError> {
        let baseline = self.baseline().cloned().unwrap_or_default();
        let now = self.hash_locked(Some(&baseline))?;
        let mut names: Vec<&String> = baseline.keys().chain(now.keys()).collect();
        names.sort();
        names.dedup();
        let changed = names
            .into_iter()
            .find(|n| baseline.get(*n) != now.get(*n))
            .cloned();
        // A `.gitattributes` anywhere (ignored or not: git reads it all
        // the same) changes the bytes `git add` commits from the bytes the
        // verifier judged.
        let changed = match changed {
            Some(file) => Some(file),
            None => self
                .repo
                .changed_attributes(&self.worktree())?
                .into_iter()
                .next(),
        };
        if let Some(file) = &changed {
            let attempt = self.attempt();
            self.log(Step::Tampered {
                attempt,
                file: file.clone(),
            })?;
        }
        Ok(changed)
    }

    /// Put the notes the run wrote in its vault (its `write_note` notes:
    /// any `.md` that differs from the checkout's as the run took it, but
    /// the plan's own notes, its trace and dot-folders) at the vault's place
    /// in the worktree, where the verifier judges them and the commit takes
    /// them with the rest of the work. A note is written over only where
    /// the worktree still has it as committed, or as an earlier carry put
    /// it: one the run's commands or tools changed there too, a protected
    /// path, a symlink or a path git ignores is left as it is, and said.
    pub fn carry_notes(
        &mut self,
        vault_rel: &str,
        plan_notes: &[String],
    ) -> Result<CarriedNotes, GuardError> {
        let run = self.vault_dir();
        let base = self.base_dir();
        if !base.exists() {
            // A run begun before the checkout's notes were kept beside it:
            // what it changed cannot be told from what it took.
            return Ok(CarriedNotes::default());
        }
        let wt = self.ensure_worktree()?;
        let wt = std::fs::canonicalize(&wt).map_err(|e| io_err(&wt, e))?;
        let mut before = BTreeMap::new();
        for step in &self.steps {
            if let Step::NotesCarried { notes } = step {
                before.extend(notes.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let mut done = CarriedNotes::default();
        let mut logged = BTreeMap::new();
        let trace = planvault_core::engine::trace::TRACE_DIR;
        for rel in files_under(&run, &[trace])? {
            if !rel.ends_with(".md")
                || rel.split('/').any(|c| c.starts_with('.'))
                || plan_notes.contains(&rel)
            {
                continue;
            }
            let ours = std::fs::read(run.join(&rel)).map_err(|e| io_err(&run.join(&rel), e))?;
            if std::fs::read(base.join(&rel)).ok().as_ref() == Some(&ours) {
                continue;
            }
            let path = if vault_rel.is_empty() {
                rel.clone()
            } else {
                format!("{vault_rel}/{rel}")
            };
            let hash = sha256_hex(&ours);
            match self.carry_note(&wt, &path, &ours, before.get(&path))? {
                Ok(()) => {
                    done.carried.push(path.clone());
                    logged.insert(path, hash);
                }
                Err(why) => done.kept.push((path, why)),
            }
        }
        if !logged.is_empty() && logged.iter().any(|(k, v)| before.get(k) != Some(v)) {
            self.log(Step::NotesCarried { notes: logged })?;
        }
        Ok(done)
    }

    /// One note of [`Guard::carry_notes`]: `Err(why)` where it is left.
    /// Only a full disk stops the run: anything else about one note (a
    /// name git refuses, a folder in its place, a path past the system's
    /// limit) leaves that note in the run's vault, said.
    fn carry_note(
        &self,
        wt: &Path,
        path: &str,
        text: &[u8],
        carried: Option<&String>,
    ) -> Result<Result<(), String>, GuardError> {
        if self.is_locked(path) {
            return Ok(Err(
                "locked: protected ([guard] protected) or named by the verifier".into(),
            ));
        }
        let target = match plain_path(wt, path) {
            Ok(target) => target,
            Err(why) => return Ok(Err(why)),
        };
        let now = match std::fs::read(&target) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Ok(Err(format!("cannot be read in the worktree: {e}"))),
        };
        match self.repo.ignored(wt, path) {
            Ok(false) => {}
            Ok(true) => return Ok(Err("git ignores it, so no commit would hold it".into())),
            Err(e) => return Ok(Err(format!("git cannot take it ({})", git_said(&e)))),
        }
        if now.as_deref() == Some(text) {
            return Ok(Ok(()));
        }
        // Once carried, the run's own only while it holds what was carried
        // (a command that removed or reverted it had the last word); never
        // carried, only while git sees it as committed.
        let ours = match carried {
            Some(carried) => now.as_deref().map(sha256_hex).as_ref() == Some(carried),
            None => match self.repo.unchanged(wt, path) {
                Ok(unchanged) => unchanged,
                Err(e) => return Ok(Err(format!("git cannot take it ({})", git_said(&e)))),
            },
        };
        if !ours {
            return Ok(Err(
                "the run's commands or tools changed it in the worktree too".into(),
            ));
        }
        let Ok(text) = std::str::from_utf8(text) else {
            return Ok(Err("not UTF-8".into()));
        };
        // The folders this write makes, outermost last: taken away again
        // with the note where git will not take it.
        let made: Vec<&Path> = target
            .ancestors()
            .skip(1)
            .take_while(|dir| !dir.exists())
            .collect();
        let written = target
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| crate::native::write_atomic(&target, text));
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => {
                return Err(io_err(&target, e))
            }
            Err(e) => return Ok(Err(format!("cannot be written in the worktree: {e}"))),
        }
        // A name git will not commit (`GIT~1/`, an alias of `.git` on
        // NTFS, refused everywhere) would fail the commit after the
        // verifier passed, at every resume: what was there is put back.
        if let Err(e) = self.repo.stageable(wt, path) {
            let put_back = match &now {
                Some(before) => std::fs::write(&target, before),
                None => std::fs::remove_file(&target),
            };
            put_back.map_err(|e| io_err(&target, e))?;
            for dir in made {
                let _ = std::fs::remove_dir(dir);
            }
            return Ok(Err(format!("git will not commit it ({})", git_said(&e))));
        }
        Ok(Ok(()))
    }

    /// Run the verifier in the worktree and log its verdict. Without a
    /// verifier every attempt passes.
    pub fn verify(
        &mut self,
        stop: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Option<(i32, String)>, GuardError> {
        let wt = self.ensure_worktree()?;
        let (exit, output) = match &self.config.verify {
            Some(command) => {
                let env = crate::native::command_env(std::env::vars(), &self.config.env);
                crate::native::run_command(command, Some(&wt), &env, stop)
            }
            None => (0, "no verifier is configured ([guard] verify)".to_string()),
        };
        // Cut off by a stop: no verdict (nothing logged); a resume verifies
        // again.
        let stopped = stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst));
        if exit == 130 && stopped {
            return Ok(None);
        }
        let output = tail(&output, 200)
            .chars()
            .take(OUTPUT_CHARS)
            .collect::<String>();
        let attempt = self.attempt();
        self.log(Step::Verified {
            attempt,
            exit,
            output: output.clone(),
        })?;
        Ok(Some((exit, output)))
    }

    /// A failed attempt's trace goes to `attempts/<n>/`, then the next
    /// attempt begins.
    pub fn next_attempt(&mut self) -> Result<(), GuardError> {
        let n = self.attempt();
        let from = self
            .vault_dir()
            .join(planvault_core::engine::trace::TRACE_DIR);
        let to = self.state.join("attempts").join(n.to_string());
        copy_files(&from, &to, &[])?;
        self.log(Step::NextAttempt { attempt: n })
    }

    /// The trace of every attempt so far, oldest first.
    fn traces(&self) -> Vec<(u32, String)> {
        let trace_file = "trace.md";
        let mut out = Vec::new();
        for n in 1..self.attempt() {
            let path = self
                .state
                .join("attempts")
                .join(n.to_string())
                .join(trace_file);
            out.push((n, std::fs::read_to_string(path).unwrap_or_default()));
        }
        let current = self
            .vault_dir()
            .join(planvault_core::engine::trace::TRACE_DIR)
            .join(trace_file);
        out.push((
            self.attempt(),
            std::fs::read_to_string(current).unwrap_or_default(),
        ));
        out
    }

    /// Stage the worktree, write the receipt with its tree, and commit with
    /// the receipt's id in the message; then remove the worktree (the
    /// branch stays). Each step is logged, and skipped on a resume that
    /// finds it done. The commit's id.
    pub fn commit(&mut self, receipt: &mut ReceiptWriter<'_>) -> Result<String, GuardError> {
        let tree = match self.steps.iter().find_map(|s| match s {
            Step::Staged { tree } => Some(tree.clone()),
            _ => None,
        }) {
            Some(tree) => tree,
            None => {
                let wt = self.ensure_worktree()?;
                self.repo.add_all(&wt)?;
                let tree = self.repo.write_tree(&wt)?;
                self.log(Step::Staged { tree: tree.clone() })?;
                tree
            }
        };
        let id = self.receipt_once("committed", Some(&tree), receipt)?;
        let commit = match self.steps.iter().find_map(|s| match s {
            Step::Committed { commit } => Some(commit.clone()),
            _ => None,
        }) {
            Some(c) => c,
            None => {
                // Killed after the commit, before its step was logged: the
                // branch's tip already carries the receipt.
                let (tip_tree, message) = self.repo.tip(&self.branch())?;
                let commit = if message.contains(&id) && tip_tree == tree {
                    let wt = self.ensure_worktree()?;
                    self.repo.head(&wt)?
                } else {
                    let wt = self.ensure_worktree()?;
                    let message = format!(
                        "planvault run {}\n\nVerified in {} attempt(s) by `{}`.\n\n{}: {id}\n",
                        self.run_id(),
                        self.attempt(),
                        self.config.verify.as_deref().unwrap_or("(no verifier)"),
                        crate::receipt::TRAILER
                    );
                    self.repo.commit(&wt, &message)?
                };
                self.log(Step::Committed {
                    commit: commit.clone(),
                })?;
                commit
            }
        };
        if !self.has(|s| matches!(s, Step::WorktreeRemoved)) {
            self.repo.worktree_remove(&self.worktree())?;
            self.log(Step::WorktreeRemoved)?;
        }
        if self.finished().is_none() {
            self.log(Step::Finished {
                outcome: "committed".into(),
            })?;
        }
        Ok(commit)
    }

    fn receipt_once(
        &mut self,
        outcome: &str,
        tree: Option<&str>,
        receipt: &mut ReceiptWriter<'_>,
    ) -> Result<String, GuardError> {
        if let Some(id) = self.steps.iter().find_map(|s| match s {
            Step::Receipt { id } => Some(id.clone()),
            _ => None,
        }) {
            return Ok(id);
        }
        let hashes = self.baseline().cloned().unwrap_or_default();
        let log = self.log_path();
        let run_id = self.run_id();
        let facts = ReceiptFacts {
            run_id: &run_id,
            tree,
            attempts: self.attempt(),
            outcome,
            verify: self.config.verify.as_deref(),
            verifier_hashes: &hashes,
            log: &log,
            repo: &self.repo,
        };
        let id = receipt(&facts).map_err(GuardError::Receipt)?;
        self.log(Step::Receipt { id: id.clone() })?;
        Ok(id)
    }

    /// Roll back: the learnings note written into the plan's vault at
    /// `note_dir` first, the escalated receipt, then the worktree and the
    /// branch removed. The note's path.
    pub fn roll_back(
        &mut self,
        note_dir: &Path,
        why: &str,
        receipt: &mut ReceiptWriter<'_>,
    ) -> Result<PathBuf, GuardError> {
        let rel = format!("00_plan-trace/learnings/{}.md", self.run_id());
        let path = note_dir.join(&rel);
        if !self.has(|s| matches!(s, Step::Learnings { .. })) {
            let note = self.learnings_note(why)?;
            crate::native::write_atomic(&path, &note).map_err(|e| io_err(&path, e))?;
            self.log(Step::Learnings {
                path: path.display().to_string(),
            })?;
        }
        self.receipt_once("escalated", None, receipt)?;
        self.teardown(true)?;
        if self.finished().is_none() {
            self.log(Step::Finished {
                outcome: "escalated".into(),
            })?;
        }
        Ok(path)
    }

    /// Remove the worktree and delete the branch.
    fn teardown(&mut self, log: bool) -> Result<(), GuardError> {
        let wt = self.worktree();
        if !self.has(|s| matches!(s, Step::WorktreeRemoved)) {
            self.repo.worktree_remove(&wt)?;
            if log {
                self.log(Step::WorktreeRemoved)?;
            }
        }
        if !self.has(|s| matches!(s, Step::BranchDeleted)) {
            self.repo.branch_delete(&self.branch())?;
            if log {
                self.log(Step::BranchDeleted)?;
            }
        }
        Ok(())
    }

    /// What a rolled-back run teaches the next: why it stopped, what it
    /// changed, every verdict, and the end of each attempt's trace.
    pub fn learnings_note(&self, why: &str) -> Result<String, GuardError> {
        let wt = self.worktree();
        let changed = if wt.exists() {
            self.repo.status(&wt)?
        } else {
            String::new()
        };
        let mut note = format!(
            "---\ntype: learnings\nrun: {}\nattempts: {}\n---\n\n# What run {} learned\n\n{why}\n\n",
            self.run_id(),
            self.attempt(),
            self.run_id()
        );
        if let Some(verify) = &self.config.verify {
            note.push_str(&format!("Verifier: `{verify}`\n\n"));
        }
        note.push_str("## What was tried\n\nThe worktree's changes when it was removed (`git status --porcelain`):\n\n```\n");
        note.push_str(if changed.trim().is_empty() {
            "(no changes)\n"
        } else {
            &changed
        });
        note.push_str("```\n\n## The verifier's output\n\n");
        for (attempt, exit, output) in self.failures() {
            note.push_str(&format!(
                "### Attempt {attempt} (exit {exit})\n\n```\n{}\n```\n\n",
                output.trim_end()
            ));
        }
        if let Some(file) = self.tampered() {
            note.push_str(&format!("A locked file changed: `{file}`.\n\n"));
        }
        note.push_str("## Trace excerpt\n\n");
        for (attempt, trace) in self.traces() {
            note.push_str(&format!(
                "### Attempt {attempt}\n\n{}\n\n",
                tail(&trace, 30).trim_end()
            ));
        }
        Ok(note)
    }

    /// Where a repository path the plan names is in the worktree (an MCP
    /// server's root, a command's folder): the same place under the
    /// worktree; `None` when it is not in the checkout.
    pub fn remap(&self, path: &Path) -> Option<PathBuf> {
        let rel = self.repo.relative(path)?;
        Some(if rel.is_empty() {
            self.worktree()
        } else {
            self.worktree().join(rel)
        })
    }

    /// Why a tool may not write `path` (absolute, or relative to the
    /// worktree): it is protected. `None`: allowed.
    pub fn refuse_write(&self, path: &str) -> Option<String> {
        if let Err(why) = planvault_llm::tools::readable_name(path) {
            return Some(why);
        }
        let wt = self.worktree();
        let wt = std::fs::canonicalize(&wt).unwrap_or(wt);
        let p = Path::new(path);
        // Where it lands, however it is spelled (`x/../`, `./`, a
        // symlinked folder): as the server's file system will resolve it.
        let full = resolved(&if p.is_absolute() {
            p.to_path_buf()
        } else {
            wt.join(p)
        });
        let rel = full
            .strip_prefix(&wt)
            .ok()
            .or_else(|| full.strip_prefix(self.repo.root()).ok())?;
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        self.locked_why(&rel)
    }

    /// Why the work's tools may not write a repository path, as a tool is
    /// told: [`Guard::is_locked`], or git's own (`.git/`, `GIT~1/`, a
    /// `.gitattributes`). (A note
    /// carried there is refused by git itself, `.git` being no name git
    /// stages.)
    pub fn locked_why(&self, rel: &str) -> Option<String> {
        if self.is_protected(rel) {
            Some(format!("{rel} is protected ([guard] protected): the work may not change what judges it; refused"))
        } else if git_reads(rel) {
            Some(format!("{rel} is part of how git reads and commits the work (`.git/`, `.gitattributes`): the work may not change it; refused"))
        } else if self.is_locked(rel) {
            Some(format!("{rel} is named by the verifier ([guard] verify): the work may not change what judges it; refused"))
        } else {
            None
        }
    }
}

/// Whether a repository path is git's own (`.git/`, or `GIT~1/`, its
/// alias on NTFS) or a `.gitattributes`, which decides what bytes `git
/// add` takes from a file: the work changing it would commit other bytes
/// than the verifier judged, or run a hook at the guard's commit.
fn git_reads(rel: &str) -> bool {
    let mut parts = rel.split('/');
    let last = parts.next_back().unwrap_or_default();
    last.eq_ignore_ascii_case(".gitattributes")
        || parts
            .chain([last])
            .any(|part| part.eq_ignore_ascii_case(".git") || part.eq_ignore_ascii_case("git~1"))
}

/// What git said, in one line: its message's first, else the error.
fn git_said(e: &GitError) -> String {
    match e {
        GitError::Failed { stderr, .. } if !stderr.trim().is_empty() => {
            stderr.lines().next().unwrap_or_default().trim().to_string()
        }
        _ => e.to_string(),
    }
}

/// Where `rel` is in the worktree `wt`, each of its folders that exists a
/// real folder (git takes no file beyond a symlink, and a protected path
/// could lie where one leads) and the file itself a regular file or none;
/// `Err(why)` otherwise.
fn plain_path(wt: &Path, rel: &str) -> Result<PathBuf, String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut at = wt.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        if matches!(*part, "" | "." | "..") {
            return Err("not a plain path".into());
        }
        at.push(part);
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(format!("cannot be read in the worktree: {e}")),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "a symlink stands at {} in the worktree",
                    parts[..=i].join("/")
                ))
            }
            Ok(meta) if !last && !meta.is_dir() => {
                return Err(format!(
                    "{} is a file in the worktree",
                    parts[..=i].join("/")
                ))
            }
            Ok(meta) if last && !meta.is_file() => {
                return Err("something other than a file stands there in the worktree".into())
            }
            Ok(_) => {}
        }
    }
    Ok(wt.join(rel))
}

/// `path` with its `.` and `..` taken away, and the longest part of it that
/// exists read through its symlinks: where a write to it lands.
fn resolved(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut normal = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    let mut existing = normal.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(mut real) = std::fs::canonicalize(existing) {
            real.extend(rest.iter().rev());
            return real;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return normal,
        }
    }
}

/// The files under `dir` that `protected` globs match, ignored or not
/// (`.gitignore` is the work's to write): each glob's subtree walked from
/// its part without wildcards, the `.git` folder and symlinked folders
/// left out.
fn protected_on_disk(dir: &Path, protected: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for glob in protected {
        let literal: Vec<&str> = glob
            .trim_matches('/')
            .split('/')
            .take_while(|part| !part.contains(['*', '?', '[']))
            .collect();
        let start = literal.join("/");
        let mut pending = vec![start];
        while let Some(rel) = pending.pop() {
            let full = dir.join(&rel);
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            if meta.is_dir() {
                let Ok(entries) = std::fs::read_dir(&full) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if rel.is_empty() && name == ".git" {
                        continue;
                    }
                    pending.push(if rel.is_empty() {
                        name
                    } else {
                        format!("{rel}/{name}")
                    });
                }
            } else if glob_match(glob, &rel) {
                found.push(rel);
            }
        }
    }
    found
}

/// Whether `rel` matches one of the `protected` globs.
pub fn protected_by(protected: &[String], rel: &str) -> bool {
    protected.iter().any(|g| glob_match(g, rel))
}

/// Copy every file under `from` to `to` (folders made; existing files
/// replaced), but those [`files_under`] leaves out.
pub fn copy_files(from: &Path, to: &Path, skip: &[&str]) -> Result<(), GuardError> {
    for file in files_under(from, skip)? {
        let target = to.join(&file);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        }
        std::fs::copy(from.join(&file), &target).map_err(|e| io_err(&target, e))?;
    }
    Ok(())
}

/// A file's bytes; `None` when there is no such file.
type FileBytes = Option<Vec<u8>>;

/// Brings into the run's copy (`run`) the edits a person made in the
/// checkout since the copy was taken (`base`): for each of `files`
/// (relative paths) that differs in `checkout` from `base`, the checkout's
/// file where the run left its copy as taken, else git's merge of both
/// changes (the run's statuses, checked boxes and amendments kept beside
/// the person's edits); a file added or removed in the checkout likewise.
/// `base` then holds the checkout's files as taken. All or nothing: when
/// one file's changes conflict, nothing is written and the error shows
/// where. Returns the files taken.
pub fn take_checkout_edits(
    checkout: &Path,
    base: &Path,
    run: &Path,
    files: &[String],
) -> Result<Vec<String>, GuardError> {
    let read = |path: &Path| match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path, e)),
    };
    // (file, the run's copy's new bytes, the base's new bytes)
    let mut taken: Vec<(&String, FileBytes, FileBytes)> = Vec::new();
    for file in files {
        let theirs = read(&checkout.join(file))?;
        let was = read(&base.join(file))?;
        if theirs == was {
            continue;
        }
        let ours = read(&run.join(file))?;
        let laid = match (&ours, &was, &theirs) {
            (Some(ours), Some(was), Some(theirs)) => {
                match (
                    std::str::from_utf8(ours),
                    std::str::from_utf8(was),
                    std::str::from_utf8(theirs),
                ) {
                    (Ok(ours), Ok(was), Ok(theirs)) => lay_run_changes(was, ours, theirs),
                    _ => None,
                }
            }
            _ => None,
        };
        let merged = if ours == was || ours == theirs {
            theirs.clone()
        } else if let Some(laid) = laid {
            Some(laid.into_bytes())
        } else if [&ours, &was, &theirs].iter().any(|side| {
            side.as_deref()
                .is_some_and(|b| std::str::from_utf8(b).is_err())
        }) {
            return Err(GuardError::Conflict {
                path: file.clone(),
                count: 1,
                excerpt: "the checkout and the run both changed it, and it is not text".into(),
            });
        } else if let (Some(_), Some(_), Some(_)) = (&ours, &was, &theirs) {
            let labels = ["the run's copy", "as the run took it", "the checkout"];
            match crate::git::merge_file(
                &run.join(file),
                &base.join(file),
                &checkout.join(file),
                labels,
            )? {
                crate::git::Merged::Clean(bytes) => Some(bytes),
                crate::git::Merged::Conflicts(count, bytes) => {
                    return Err(GuardError::Conflict {
                        path: file.clone(),
                        count,
                        excerpt: first_conflict(&String::from_utf8_lossy(&bytes)),
                    })
                }
            }
        } else {
            let (person, run) = match (&was, &theirs) {
                (None, _) => ("added it", "added its own"),
                (_, None) => ("removed it", "changed it"),
                _ => ("changed it", "removed it"),
            };
            return Err(GuardError::Conflict {
                path: file.clone(),
                count: 1,
                excerpt: format!("the checkout {person}; the run {run}"),
            });
        };
        taken.push((file, merged, theirs));
    }
    let put = |path: &Path, bytes: &FileBytes| -> Result<(), GuardError> {
        match bytes {
            Some(bytes) => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
                }
                // Whole or not at all: a resume killed here merges again.
                let part = path.with_extension("planvault-part");
                std::fs::write(&part, bytes).map_err(|e| io_err(&part, e))?;
                std::fs::rename(&part, path).map_err(|e| io_err(path, e))
            }
            None => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(path, e)),
                _ => Ok(()),
            },
        }
    };
    // The run's copy first: killed between the two, the next resume finds
    // the person's change in both and merges it once.
    for (file, merged, theirs) in &taken {
        put(&run.join(file), merged)?;
        put(&base.join(file), theirs)?;
    }
    Ok(taken.into_iter().map(|(file, ..)| file.clone()).collect())
}

/// The run's own changes to a text (`base` to `ours`) laid over a
/// person's (`base` to `theirs`), where they are what a run makes: lines
/// replaced one for one (a `status:` line, a checked box) that the person
/// left as they were, and lines appended at the end (an amendment's
/// items). `None` when the run changed the text otherwise, or changed a
/// line the person changed or removed: git's merge decides then. Unlike
/// git's, an edit of the line beside one the run changed is no conflict:
/// a plan's items stand a line each, and the likeliest edit while a run
/// waits is of the item after the one it just checked.
fn lay_run_changes(base: &str, ours: &str, theirs: &str) -> Option<String> {
    use similar::{capture_diff_slices, Algorithm, DiffOp};
    let lines =
        |text: &'_ str| -> Vec<String> { text.split_inclusive('\n').map(str::to_string).collect() };
    let (base_lines, our_lines, their_lines) = (lines(base), lines(ours), lines(theirs));
    let mut replaced: BTreeMap<usize, &str> = BTreeMap::new();
    let mut appended: Vec<&str> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &base_lines, &our_lines) {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } if old_len == new_len => {
                for k in 0..old_len {
                    replaced.insert(old_index + k, &our_lines[new_index + k]);
                }
            }
            // The last lines replaced and more added (the last box checked
            // and an item appended after it).
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } if new_len > old_len
                && old_index + old_len == base_lines.len()
                && base.ends_with('\n') =>
            {
                for k in 0..old_len {
                    replaced.insert(old_index + k, &our_lines[new_index + k]);
                }
                appended.extend(
                    our_lines[new_index + old_len..new_index + new_len]
                        .iter()
                        .map(String::as_str),
                );
            }
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } if old_index == base_lines.len() && base.ends_with('\n') => {
                appended.extend(
                    our_lines[new_index..new_index + new_len]
                        .iter()
                        .map(String::as_str),
                );
            }
            _ => return None,
        }
    }
    // Where each line of the base the person left stands in their text.
    let mut kept: BTreeMap<usize, usize> = BTreeMap::new();
    for op in capture_diff_slices(Algorithm::Myers, &base_lines, &their_lines) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            kept.extend((0..len).map(|k| (old_index + k, new_index + k)));
        }
    }
    // Lines the run appended that the person wrote too, or line endings
    // the person changed: git's merge tells those apart.
    let mine: std::collections::BTreeSet<usize> = kept.values().copied().collect();
    let theirs_added: std::collections::BTreeSet<&str> = (0..their_lines.len())
        .filter(|at| !mine.contains(at))
        .map(|at| their_lines[at].trim_end())
        .collect();
    if appended
        .iter()
        .any(|line| theirs_added.contains(&line.trim_end()))
        || base.contains("\r\n") != theirs.contains("\r\n")
    {
        return None;
    }
    let mut laid = their_lines;
    for (line, now) in replaced {
        laid[*kept.get(&line)?] = now.to_string();
    }
    let mut text = laid.concat();
    if !appended.is_empty() && !text.is_empty() && !text.ends_with('\n') {
        text.push_str(if theirs.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        });
    }
    text.extend(appended);
    Some(text)
}

/// The first conflicting part of git's merge, markers included, at most
/// 20 lines of it.
fn first_conflict(merged: &str) -> String {
    let lines: Vec<&str> = merged.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("<<<<<<< "));
    let Some(start) = start else {
        return String::new();
    };
    let end = lines[start..]
        .iter()
        .position(|l| l.starts_with(">>>>>>> "))
        .map_or(lines.len(), |n| start + n + 1);
    let shown = &lines[start..end.min(start + 20)];
    let mut text = shown.join("\n");
    if end > start + 20 {
        text.push_str("\n…");
    }
    text
}

/// Every file under `dir` (relative, `/`-separated, sorted), but those
/// under `skip` folders (relative paths) and any `.git` (a vault at the
/// repository's root holds the run's own state there); none when `dir` is
/// missing. Symlinks are left out.
pub fn files_under(dir: &Path, skip: &[&str]) -> Result<Vec<String>, GuardError> {
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, rel)) = pending.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err(&folder, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_err(&folder, e))?;
            let kind = entry.file_type().map_err(|e| io_err(&folder, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_name() == ".git" {
                continue;
            }
            if kind.is_dir() && !skip.contains(&path.as_str()) {
                pending.push((entry.path(), path));
            } else if kind.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_and_folders() {
        for (pattern, path, expected) in [
            ("tests/**", "tests/a.rs", true),
            ("tests/**", "tests/deep/b.rs", true),
            ("tests/**", "src/tests.rs", false),
            ("**/*.lock", "a/b/Cargo.lock", true),
            ("**/*.lock", "Cargo.lock", true),
            (".github/**", ".github/workflows/ci.yml", true),
            ("check.sh", "check.sh", true),
            ("check.sh", "sub/check.sh", false),
            ("src/*.rs", "src/a/b.rs", false),
            ("src/?.rs", "src/a.rs", true),
            ("holdout/*.csv", "holdout/x.csv", true),
        ] {
            assert_eq!(glob_match(pattern, path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn a_verifiers_script_is_found_among_its_words() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/check.sh"), "exit 0").unwrap();
        std::fs::write(dir.path().join("verify.py"), "").unwrap();
        assert_eq!(
            verifier_files(
                "sh tests/check.sh --fast && python3 ./verify.py",
                dir.path()
            ),
            ["tests/check.sh", "verify.py"]
        );
        assert!(verifier_files("cargo test ../x /etc/passwd", dir.path()).is_empty());
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A repository with a verifier under `tests/`.
    fn repo() -> (tempfile::TempDir, Repo) {
        crate::git::tests::repo_with(&[("tests/check.sh", "exit 0\n")])
    }

    fn config() -> GuardConfig {
        GuardConfig {
            verify: Some("sh tests/check.sh".into()),
            protected: vec!["tests/**".into()],
            attempts: 3,
            env: Vec::new(),
        }
    }

    #[test]
    fn a_commit_interrupted_at_any_step_is_finished_once_on_resume() {
        let (dir, repo) = repo();
        let mut guard = Guard::open(
            repo.clone(),
            "PLAN.md",
            false,
            config(),
            "20261202-130501-abcdef",
        )
        .unwrap();
        let wt = guard.ensure_worktree().unwrap();
        std::fs::write(wt.join("work.txt"), "done\n").unwrap();
        assert_eq!(guard.check_tamper().unwrap(), None);
        assert_eq!(guard.verify(None).unwrap().unwrap().0, 0);
        // The receipt cannot be written: staged, nothing committed.
        let err = guard.commit(&mut |_| Err("disk full".into())).unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
        let mut ids = 0;
        let commit = guard
            .commit(&mut |f| {
                ids += 1;
                Ok(format!("PV-RECEIPT-{}-{}", f.run_id, f.tree.unwrap()))
            })
            .unwrap();
        assert_eq!(ids, 1);
        let log_path = guard.log_path();
        let log = std::fs::read_to_string(&log_path).unwrap();
        assert_eq!(log.matches("\"step\":\"staged\"").count(), 1, "{log}");
        // Killed right after the commit, before its step was logged: a
        // resume finds the commit on the branch and makes no second one.
        let kept: Vec<&str> = log
            .lines()
            .take_while(|l| !l.contains("\"step\":\"committed\""))
            .collect();
        std::fs::write(&log_path, kept.join("\n") + "\n").unwrap();
        // (the worktree is still there, as after such a kill)
        repo.worktree_add(&wt, &guard.branch()).unwrap();
        let mut again = Guard::open(repo.clone(), "PLAN.md", false, config(), "unused").unwrap();
        assert_eq!(again.run_id(), guard.run_id(), "the same run");
        let resumed = again.commit(&mut |_| panic!("no second receipt")).unwrap();
        assert_eq!(resumed, commit);
        let branch = guard.branch();
        assert_eq!(
            git(
                dir.path(),
                &["rev-list", "--count", &format!("main..{branch}")]
            )
            .trim(),
            "1"
        );
        assert_eq!(again.finished(), Some("committed"));
        assert_eq!(repo.worktrees().unwrap().len(), 1, "no orphaned worktree");
        // Killed after the worktree went, before the run was marked ended:
        // the resume ends it without making the worktree again.
        let log = std::fs::read_to_string(&log_path).unwrap();
        let kept: Vec<&str> = log
            .lines()
            .filter(|l| !l.contains("\"step\":\"finished\""))
            .collect();
        std::fs::write(&log_path, kept.join("\n") + "\n").unwrap();
        let mut third = Guard::open(repo.clone(), "PLAN.md", false, config(), "unused").unwrap();
        assert_eq!(
            third.commit(&mut |_| panic!("no second receipt")).unwrap(),
            commit
        );
        assert_eq!(repo.worktrees().unwrap().len(), 1, "no orphaned worktree");
    }

    #[test]
    fn a_worktree_cut_short_by_a_kill_is_made_again_before_anything_runs_in_it() {
        let (_dir, repo) = repo();
        let mut guard = Guard::open(
            repo.clone(),
            "PLAN.md",
            false,
            config(),
            "20261202-130501-abcdef",
        )
        .unwrap();
        // `worktree add` got as far as the branch and half the files.
        let wt = guard.worktree();
        repo.worktree_add(&wt, &guard.branch()).unwrap();
        std::fs::remove_file(wt.join("tests/check.sh")).unwrap();
        let made = guard.ensure_worktree().unwrap();
        assert_eq!(
            std::fs::read_to_string(made.join("tests/check.sh")).unwrap(),
            "exit 0\n"
        );
        assert_eq!(
            guard.baseline().unwrap().len(),
            1,
            "hashed from the whole checkout"
        );
        // Logged, it is found again as it is.
        std::fs::write(made.join("work.txt"), "kept\n").unwrap();
        let again = guard.ensure_worktree().unwrap();
        assert!(again.join("work.txt").exists());
        assert_eq!(repo.worktrees().unwrap().len(), 2);
    }

    /// An isolated vault run's `write_note` notes were left in its vault
    /// under the git directory, never in the commit, while what its
    /// commands and servers wrote was. They are carried to the worktree,
    /// never over what other work changed there, nor out of it.
    #[test]
    fn notes_the_run_wrote_are_carried_to_the_worktree_but_never_over_other_work() {
        let (_dir, repo) = crate::git::tests::repo_with(&[
            ("tests/check.sh", "exit 0\n"),
            ("v/plan.md", "---\nstatus: pending\n---\n"),
            ("v/kept.md", "committed\n"),
        ]);
        let config = GuardConfig {
            protected: vec!["tests/**".into(), "v/locked/**".into()],
            ..config()
        };
        let mut guard =
            Guard::open(repo.clone(), "v", false, config, "20261202-130501-abcdef").unwrap();
        let wt = guard.ensure_worktree().unwrap();
        let (run, base) = (guard.vault_dir(), guard.base_dir());
        let put = |dir: &Path, rel: &str, text: &str| {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        for dir in [&run, &base] {
            put(dir, "plan.md", "---\nstatus: pending\n---\n");
            put(dir, "kept.md", "committed\n");
        }
        put(&run, "plan.md", "---\nstatus: done\n---\n");
        put(&run, "kept.md", "ours\n");
        put(&run, "new/deep.md", "new\n");
        put(&run, "00_plan-trace/trace.md", "trace\n");
        put(&run, ".hidden/x.md", "hidden\n");
        put(&run, "locked/x.md", "locked\n");
        put(&run, "clash.md", "the note's\n");
        put(&run, "ign.md", "ignored\n");
        put(&run, "link/x.md", "through\n");
        // What the run's commands did in the worktree meanwhile.
        put(&wt, "v/clash.md", "the command's\n");
        put(&wt, ".gitignore", "v/ign.md\n");
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), wt.join("v/link")).unwrap();
        let plan_notes = ["plan.md".to_string()];

        let done = guard.carry_notes("v", &plan_notes).unwrap();
        assert_eq!(done.carried, ["v/kept.md", "v/new/deep.md"]);
        let kept: Vec<&str> = done.kept.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            kept,
            ["v/clash.md", "v/ign.md", "v/link/x.md", "v/locked/x.md"]
        );
        let why = |path: &str| done.kept.iter().find(|(p, _)| p == path).unwrap().1.clone();
        assert!(why("v/clash.md").contains("changed it in the worktree too"));
        assert!(why("v/ign.md").contains("git ignores it"));
        assert!(
            why("v/link/x.md").contains("symlink"),
            "{}",
            why("v/link/x.md")
        );
        assert!(why("v/locked/x.md").contains("protected"));
        let read = |rel: &str| std::fs::read_to_string(wt.join(rel)).ok();
        assert_eq!(read("v/kept.md").as_deref(), Some("ours\n"));
        assert_eq!(read("v/new/deep.md").as_deref(), Some("new\n"));
        assert_eq!(
            read("v/plan.md").as_deref(),
            Some("---\nstatus: pending\n---\n")
        );
        assert_eq!(read("v/clash.md").as_deref(), Some("the command's\n"));
        assert_eq!(read("v/00_plan-trace/trace.md"), None);
        assert_eq!(read("v/.hidden/x.md"), None);
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());

        // A later attempt writes over its own carry (the log read again, as
        // by a resume), never over a command's change since.
        let mut guard =
            Guard::open(repo.clone(), "v", false, guard.config.clone(), "unused").unwrap();
        put(&run, "kept.md", "second\n");
        put(&run, "new/deep.md", "second\n");
        put(&wt, "v/new/deep.md", "the command's\n");
        let done = guard.carry_notes("v", &plan_notes).unwrap();
        assert_eq!(done.carried, ["v/kept.md"]);
        assert!(done.kept.iter().any(|(p, _)| p == "v/new/deep.md"));
        assert_eq!(read("v/kept.md").as_deref(), Some("second\n"));
        assert_eq!(read("v/new/deep.md").as_deref(), Some("the command's\n"));
        // A carried note its command then deleted is not written again.
        std::fs::remove_file(wt.join("v/kept.md")).unwrap();
        put(&run, "kept.md", "third\n");
        let done = guard.carry_notes("v", &plan_notes).unwrap();
        assert!(done.kept.iter().any(|(p, _)| p == "v/kept.md"), "{done:?}");
        assert_eq!(read("v/kept.md"), None);
    }

    /// A red-team pass of the carry: a name git refuses (`GIT~1/`, NTFS's
    /// alias of `.git`) failed the commit after the verifier passed, and a
    /// symlinked folder in the vault, a folder at the note's path or a path
    /// past the system's limit failed the carry, each at every resume; a
    /// file the verifier names was carried and the run stopped as
    /// tampering; a new note carried, then moved away by a tool, came back.
    /// Each is left as the worktree has it, said, and the run goes on.
    #[test]
    fn a_note_the_worktree_or_git_cannot_take_is_left_and_the_run_goes_on() {
        let (_dir, repo) = crate::git::tests::repo_with(&[
            ("tests/check.sh", "exit 0\n"),
            ("v/plan.md", "---\nstatus: pending\n---\n"),
        ]);
        let config = GuardConfig {
            verify: Some("sh tests/check.sh && grep -q x v/judged.md".into()),
            ..config()
        };
        let mut guard =
            Guard::open(repo.clone(), "v", false, config, "20261202-130501-abcdef").unwrap();
        let wt = guard.ensure_worktree().unwrap();
        let run = guard.vault_dir();
        std::fs::create_dir_all(guard.base_dir()).unwrap();
        let put = |dir: &Path, rel: &str, text: &str| {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        // Within the system's path limit, but not the temporary file the
        // write goes through beside it.
        let room = 4095 - wt.join("v").as_os_str().len() - 1 - 5;
        let mut long = String::new();
        while long.len() + 5 < room {
            let name = (room - long.len() - 5).min(200);
            long.push_str(&"d".repeat(name));
            long.push('/');
        }
        long.push_str("x.md");
        assert!(wt.join("v").join(&long).as_os_str().len() + ".planvault-tmp".len() > 4095);
        for rel in [
            "GIT~1/x.md",
            "attach/x.md",
            "dir.md",
            "judged.md",
            "new.md",
            long.as_str(),
        ] {
            put(&run, rel, "x\n");
        }
        std::os::unix::fs::symlink("../tests", wt.join("v/attach")).unwrap();
        std::fs::create_dir_all(wt.join("v/dir.md")).unwrap();
        let done = guard.carry_notes("v", &["plan.md".into()]).unwrap();
        assert_eq!(done.carried, ["v/new.md"]);
        let why = |path: &str| {
            done.kept
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, why)| why.clone())
                .unwrap_or_else(|| panic!("{path} not kept: {done:?}"))
        };
        assert!(why("v/GIT~1/x.md").contains("git will not commit it (error: invalid path"));
        assert!(why("v/attach/x.md").contains("a symlink stands at v/attach"));
        assert!(why("v/dir.md").contains("something other than a file"));
        assert!(why("v/judged.md").contains("named by the verifier"));
        let told = guard.refuse_write("v/./judged.md").unwrap_or_default();
        assert!(
            told.contains("named by the verifier"),
            "and a tool's write: {told}"
        );
        let said = why(&format!("v/{long}"));
        assert!(said.contains("cannot be written in the worktree"), "{said}");
        assert_eq!(done.kept.len(), 5, "{done:?}");
        assert!(!wt.join("v/GIT~1").exists(), "put back as it was");
        assert!(!wt.join("tests/x.md").exists(), "never through the link");
        assert_eq!(guard.check_tamper().unwrap(), None);
        // Moved away by a tool once carried: not made again.
        std::fs::rename(wt.join("v/new.md"), wt.join("v/moved.md")).unwrap();
        let done = guard.carry_notes("v", &["plan.md".into()]).unwrap();
        assert!(done.carried.is_empty(), "{done:?}");
        assert!(!wt.join("v/new.md").exists());
    }

    /// A protected path is known however it is written (`x/../tests/…`,
    /// `./tests/…`, through a symlinked folder), and a protected file that
    /// `.gitignore` hides is locked too: a red-team pass had a model write
    /// an ignore line, then a test config under another spelling, and the
    /// verifier pass on it.
    #[test]
    fn a_protected_file_written_under_another_spelling_or_ignored_is_still_protected() {
        let (_dir, repo) = repo();
        let mut guard =
            Guard::open(repo.clone(), "v", false, config(), "20261202-130501-abcdef").unwrap();
        let wt = guard.ensure_worktree().unwrap();
        for spelled in ["x/../tests/zz.conf", "./tests/zz.conf", "tests//zz.conf"] {
            assert!(guard.refuse_write(spelled).is_some(), "{spelled}");
        }
        let beside = wt.join("x/../tests/zz.conf").display().to_string();
        assert!(guard.refuse_write(&beside).is_some());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(wt.join("tests"), wt.join("linked")).unwrap();
            assert!(guard.refuse_write("linked/zz.conf").is_some());
            std::fs::remove_file(wt.join("linked")).unwrap();
        }
        assert!(guard.refuse_write("tests/../src/x.rs").is_none());

        std::fs::write(wt.join(".gitignore"), "tests/*.conf\n").unwrap();
        std::fs::write(wt.join("tests/zz.conf"), "SKIP_ALL=1\n").unwrap();
        assert_eq!(
            guard.check_tamper().unwrap().as_deref(),
            Some("tests/zz.conf")
        );
    }

    /// A red team's note: the work wrote `.gitattributes` (`* text
    /// eol=crlf`, `working-tree-encoding`), so `git add` committed other
    /// bytes than the verifier judged; a writing MCP tool could reach the
    /// repository's own `.git/` (a `post-commit` hook runs at the guard's
    /// commit); and a name holding U+202E reads as another in the commit.
    /// How git reads the tree is locked as the verifier's files are.
    #[test]
    fn git_s_attributes_and_folder_are_locked_and_a_misleading_name_refused() {
        let (dir, repo) = repo();
        let mut guard =
            Guard::open(repo.clone(), "v", false, config(), "20261202-130501-abcdef").unwrap();
        let wt = guard.ensure_worktree().unwrap();
        for path in [
            ".gitattributes",
            "src/.gitattributes",
            "src/.GitAttributes",
            ".git/hooks/post-commit",
            "src/.git/config",
        ] {
            let why = guard.refuse_write(path).unwrap_or_default();
            assert!(why.contains("how git reads"), "{path}: {why:?}");
        }
        let hook = dir.path().join(".git/hooks/post-commit");
        assert!(guard
            .refuse_write(&hook.display().to_string())
            .unwrap_or_default()
            .contains("how git reads"));
        let why = guard
            .refuse_write("v/report\u{202e}dm.md")
            .unwrap_or_default();
        assert!(why.contains("U+202E"), "{why:?}");
        assert!(guard.refuse_write("v/報告 (draft).md").is_none());
        assert!(guard.refuse_write("src/x.rs").is_none());

        assert_eq!(guard.check_tamper().unwrap(), None);
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::write(wt.join("src/.gitattributes"), "* text eol=crlf\n").unwrap();
        assert_eq!(
            guard.check_tamper().unwrap().as_deref(),
            Some("src/.gitattributes")
        );
        std::fs::remove_file(wt.join("src/.gitattributes")).unwrap();
        assert_eq!(guard.check_tamper().unwrap(), None);
        // Hidden from git by an ignore line the work wrote: read by git all
        // the same, so locked all the same.
        std::fs::write(wt.join(".gitignore"), "gen/\n").unwrap();
        std::fs::create_dir_all(wt.join("gen")).unwrap();
        std::fs::write(wt.join("gen/.gitattributes"), "*.rs ident\n").unwrap();
        assert_eq!(
            guard.check_tamper().unwrap().as_deref(),
            Some("gen/.gitattributes")
        );
    }

    #[test]
    fn a_changed_or_added_protected_file_is_tampering_named_by_its_path() {
        let (_dir, repo) = repo();
        let mut guard =
            Guard::open(repo.clone(), "v", false, config(), "20261202-130501-abcdef").unwrap();
        let wt = guard.ensure_worktree().unwrap();
        assert_eq!(
            guard.baseline().unwrap().keys().collect::<Vec<_>>(),
            ["tests/check.sh"]
        );
        std::fs::write(wt.join("tests/new_test.sh"), "exit 0\n").unwrap();
        assert_eq!(
            guard.check_tamper().unwrap().as_deref(),
            Some("tests/new_test.sh")
        );
        std::fs::remove_file(wt.join("tests/new_test.sh")).unwrap();
        std::fs::remove_file(wt.join("tests/check.sh")).unwrap();
        assert_eq!(
            guard.check_tamper().unwrap().as_deref(),
            Some("tests/check.sh")
        );
        assert_eq!(guard.tampered().as_deref(), Some("tests/new_test.sh"));
        assert!(guard
            .refuse_write("tests/x.sh")
            .unwrap()
            .contains("tests/x.sh is protected"));
        assert!(guard
            .refuse_write(&wt.join("tests/x.sh").display().to_string())
            .is_some());
        assert!(guard.refuse_write("src/x.rs").is_none());
        // Rolled back: the note first, then nothing of the run is left.
        let vault = tempfile::tempdir().unwrap();
        let note = guard
            .roll_back(vault.path(), "Stopped as tampering.", &mut |f| {
                assert_eq!(f.outcome, "escalated");
                Ok("PV-RECEIPT-x".into())
            })
            .unwrap();
        assert!(std::fs::read_to_string(note)
            .unwrap()
            .contains("Stopped as tampering."));
        assert_eq!(repo.worktrees().unwrap().len(), 1);
        assert!(!repo.branch_exists(&guard.branch()).unwrap());
    }

    /// (file, as the run took it, the run's copy now, the checkout now;
    /// `None`: no such file), and what the run's copy becomes (`Err`: the
    /// conflict's excerpt begins so).
    #[allow(clippy::type_complexity)]
    const TAKES: &[(
        &str,
        Option<&str>,
        Option<&str>,
        Option<&str>,
        Result<Option<&str>, &str>,
    )] = &[
        (
            "same.md",
            Some("a\n"),
            Some("a\nrun\n"),
            Some("a\n"),
            Ok(Some("a\nrun\n")),
        ),
        (
            "theirs.md",
            Some("a\n"),
            Some("a\n"),
            Some("b\r\n"),
            Ok(Some("b\r\n")),
        ),
        (
            "both.md",
            Some("---\nstatus: pending\n---\none\n\ntwo\n"),
            Some("---\nstatus: done\n---\none\n\ntwo\n"),
            Some("---\nstatus: pending\n---\none\n\ntwo, edited\n"),
            Ok(Some("---\nstatus: done\n---\none\n\ntwo, edited\n")),
        ),
        (
            "alike.md",
            Some("a\n"),
            Some("b\n"),
            Some("b\n"),
            Ok(Some("b\n")),
        ),
        ("added.md", None, None, Some("new\n"), Ok(Some("new\n"))),
        ("removed.md", Some("a\n"), Some("a\n"), None, Ok(None)),
        (
            "clash.md",
            Some("a\n"),
            Some("run\n"),
            Some("person\n"),
            Err("<<<<<<< the run's copy\nrun\n=======\nperson\n>>>>>>> the checkout"),
        ),
        (
            "gone.md",
            Some("a\n"),
            Some("run\n"),
            None,
            Err("the checkout removed it; the run changed it"),
        ),
        (
            "both-added.md",
            None,
            Some("run\n"),
            Some("person\n"),
            Err("the checkout added it; the run added its own"),
        ),
        // Beside the line the run changed: laid over, where git's merge
        // would call it a conflict.
        (
            "beside.md",
            Some("- [ ] one\n- [ ] two\n"),
            Some("- [x] one\n- [ ] two\n"),
            Some("- [ ] one\n- [ ] two, reworded\n"),
            Ok(Some("- [x] one\n- [ ] two, reworded\n")),
        ),
        (
            "checked-and-appended.md",
            Some("- [ ] one\n"),
            Some("- [x] one\n- [ ] (after: 1) added\n"),
            Some("- [ ] one\n- [ ] the person's\n"),
            Ok(Some(
                "- [x] one\n- [ ] the person's\n- [ ] (after: 1) added\n",
            )),
        ),
        // Appended by both: git's merge calls it a conflict (never a line
        // twice).
        (
            "appended-by-both.md",
            Some("- a\n"),
            Some("- a\n- b\n"),
            Some("- a\n- b\n- c\n"),
            Err("<<<<<<< the run's copy"),
        ),
        // Its line endings changed by the person: git's merge decides.
        (
            "now-crlf.md",
            Some("- [ ] a\n"),
            Some("- [x] a\n"),
            Some("- [ ] a\r\n- [ ] b\r\n"),
            Err("<<<<<<< the run's copy"),
        ),
        (
            "status-beside-a-knob.md",
            Some("---\nstatus: pending\nmax_visits: 2\n---\n# A\n"),
            Some("---\nstatus: done\nmax_visits: 2\n---\n# A\n"),
            Some("---\nstatus: pending\nmax_visits: 3\n---\n# A\n"),
            Ok(Some("---\nstatus: done\nmax_visits: 3\n---\n# A\n")),
        ),
    ];

    #[test]
    fn a_checkout_edit_is_taken_with_the_runs_own_changes() {
        for &(file, was, ours, theirs, expected) in TAKES {
            let dir = tempfile::tempdir().unwrap();
            let [checkout, base, run] = ["checkout", "base", "run"].map(|d| dir.path().join(d));
            for (root, text) in [(&checkout, theirs), (&base, was), (&run, ours)] {
                std::fs::create_dir_all(root.join("sub")).unwrap();
                if let Some(text) = text {
                    std::fs::write(root.join("sub").join(file), text).unwrap();
                }
            }
            let files = [format!("sub/{file}")];
            let read = |root: &Path| std::fs::read_to_string(root.join(&files[0])).ok();
            match (
                take_checkout_edits(&checkout, &base, &run, &files),
                expected,
            ) {
                (Ok(taken), Ok(now)) => {
                    assert_eq!(read(&run).as_deref(), now, "{file}");
                    assert_eq!(
                        read(&base).as_deref(),
                        theirs,
                        "{file}: the base is taken too"
                    );
                    assert_eq!(taken.len(), usize::from(was != theirs), "{file}");
                }
                (
                    Err(GuardError::Conflict {
                        path,
                        count,
                        excerpt,
                    }),
                    Err(begins),
                ) => {
                    assert_eq!((path.as_str(), count), (files[0].as_str(), 1), "{file}");
                    assert!(excerpt.starts_with(begins), "{file}: {excerpt}");
                    assert_eq!(read(&run).as_deref(), ours, "{file}: nothing written");
                    assert_eq!(read(&base).as_deref(), was, "{file}: nothing written");
                }
                (got, _) => panic!("{file}: {got:?}"),
            }
        }
    }

    #[test]
    fn a_file_both_changed_that_is_not_text_is_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let [checkout, base, run] = ["checkout", "base", "run"].map(|d| dir.path().join(d));
        for (root, byte) in [(&checkout, 1u8), (&base, 2), (&run, 3)] {
            std::fs::create_dir_all(root).unwrap();
            std::fs::write(root.join("image.png"), [0xff, byte]).unwrap();
        }
        let taken = take_checkout_edits(&checkout, &base, &run, &["image.png".to_string()]);
        match taken {
            Err(GuardError::Conflict { excerpt, .. }) => assert!(excerpt.contains("not text")),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read(run.join("image.png")).unwrap(), [0xff, 3]);
    }

    #[test]
    fn one_conflict_takes_nothing_of_the_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let [checkout, base, run] = ["checkout", "base", "run"].map(|d| dir.path().join(d));
        for (root, a, b) in [
            (&checkout, "a2\n", "person\n"),
            (&base, "a\n", "b\n"),
            (&run, "a\n", "run\n"),
        ] {
            std::fs::create_dir_all(root).unwrap();
            std::fs::write(root.join("a.md"), a).unwrap();
            std::fs::write(root.join("b.md"), b).unwrap();
        }
        let files = ["a.md".to_string(), "b.md".to_string()];
        assert!(matches!(
            take_checkout_edits(&checkout, &base, &run, &files),
            Err(GuardError::Conflict { .. })
        ));
        assert_eq!(std::fs::read_to_string(run.join("a.md")).unwrap(), "a\n");
        assert_eq!(std::fs::read_to_string(base.join("a.md")).unwrap(), "a\n");
    }
}
