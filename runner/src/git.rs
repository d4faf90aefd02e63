//! The one way planvault touches git: the `git` command line through
//! `std::process`, with typed errors. A [`Repo`] is the repository a vault
//! lives in (`git rev-parse --show-toplevel` from the vault); every command
//! runs in that repository's checkout or in a worktree this run made under
//! its git directory, never anywhere else, and never inherits `GIT_DIR`,
//! `GIT_WORK_TREE` or `GIT_INDEX_FILE` from the caller.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a git step failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error("git could not be started: {0}")]
    Spawn(String),
    #[error("{path} is not inside a git repository (an isolated run needs one)")]
    NotARepository { path: String },
    #[error("git {args} failed (exit {code}): {stderr}")]
    Failed {
        args: String,
        code: i32,
        stderr: String,
    },
    #[error("{path} is neither the checkout of {root} nor a worktree of this run; refused")]
    Outside { path: String, root: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

/// The repository a vault lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The checkout's top folder (real path).
    root: PathBuf,
    /// The git directory shared by every worktree (real path).
    common_dir: PathBuf,
}

/// Run git in `dir` with `args`: its stdout, or its failure. Public for
/// the Temporal host's git vault, whose clones are not a [`Repo`]'s
/// checkout or worktrees.
pub fn git_in(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    run(git().args(args).current_dir(dir), args)
}

fn run(command: &mut Command, args: &[&str]) -> Result<String, GitError> {
    let output = command
        .output()
        .map_err(|e| GitError::Spawn(e.to_string()))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(GitError::Failed {
            args: args.join(" "),
            code: output.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        })
    }
}

/// The `git` command, never told of another repository by the caller's
/// environment, never asking for a password, reading nothing.
fn git() -> Command {
    let mut command = Command::new("git");
    command
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    command
}

/// What `git merge-file` made of two changes to one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Both sides' changes, as git merges them.
    Clean(Vec<u8>),
    /// Changes to the same lines: how many, and the text with git's
    /// conflict markers (labelled with the three names given).
    Conflicts(usize, Vec<u8>),
}

/// Git's own three-way merge of the changes from `base` to `ours` and
/// from `base` to `theirs` (`git merge-file -p`), so a text two parties
/// changed merges exactly as it would in the user's repository. `labels`
/// name ours, the base and theirs in conflict markers. Nothing is written.
pub fn merge_file(
    ours: &Path,
    base: &Path,
    theirs: &Path,
    labels: [&str; 3],
) -> Result<Merged, GitError> {
    let mut args: Vec<std::ffi::OsString> = vec!["merge-file".into(), "-p".into()];
    for label in labels {
        args.push("-L".into());
        args.push(label.into());
    }
    args.extend([ours, base, theirs].map(|p| p.as_os_str().to_owned()));
    let output = git()
        .args(&args)
        .output()
        .map_err(|e| GitError::Spawn(e.to_string()))?;
    // Its exit is the number of conflicts (at most 127); above that, or
    // killed, it failed.
    match output.status.code() {
        Some(0) => Ok(Merged::Clean(output.stdout)),
        Some(n @ 1..=127) => Ok(Merged::Conflicts(n as usize, output.stdout)),
        code => Err(GitError::Failed {
            args: "merge-file".to_string(),
            code: code.unwrap_or(-1),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        }),
    }
}

impl Repo {
    /// The repository `path` (a folder, or a file's folder) lives in.
    pub fn discover(path: &Path) -> Result<Repo, GitError> {
        let dir = if path.is_dir() {
            path.to_path_buf()
        } else {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        };
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let not_a_repo = || GitError::NotARepository {
            path: path.display().to_string(),
        };
        let ask = |args: &[&str]| {
            git_in(&dir, args).map_err(|e| match e {
                GitError::Failed { .. } => not_a_repo(),
                other => other,
            })
        };
        let out = ask(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-common-dir",
            "--is-inside-git-dir",
        ])?;
        let mut lines = out.lines();
        let (Some(common), Some(inside)) = (lines.next(), lines.next()) else {
            return Err(not_a_repo());
        };
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let common = real(Path::new(common));
        let root = if inside == "true" {
            // A folder inside `.git` (an isolated run's state): the
            // checkout is the one that `.git` belongs to.
            match common.parent() {
                Some(top) if common.file_name().is_some_and(|n| n == ".git") => top.to_path_buf(),
                _ => return Err(not_a_repo()),
            }
        } else {
            real(Path::new(ask(&["rev-parse", "--show-toplevel"])?.trim()))
        };
        Ok(Repo {
            root,
            common_dir: common,
        })
    }

    /// The checkout's top folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The git directory every worktree shares (`.git` of the checkout).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Where planvault keeps its own files in this repository: under the
    /// git directory, so the checkout never changes.
    pub fn planvault_dir(&self) -> PathBuf {
        self.common_dir.join("planvault")
    }

    /// Git in the checkout or in one of this tool's worktrees, refusing any
    /// other folder.
    ///
    /// In a worktree, git is told its git directory and work tree rather
    /// than finding them by the worktree's `.git` file, which whatever ran
    /// there (a tool, a command) can rewrite: a `gitdir:` naming the
    /// checkout's repository would have the run's commit land on its
    /// branch and index, another repository's would have it land there.
    /// The file is written back as git made it, for git's own checks
    /// (`worktree remove`) and for the verifier's commands.
    fn git(&self, dir: &Path, args: &[&str]) -> Result<String, GitError> {
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if real == self.root {
            return git_in(&real, args);
        }
        let outside = || GitError::Outside {
            path: dir.display().to_string(),
            root: self.root.display().to_string(),
        };
        let worktrees = self.planvault_dir().join("worktrees");
        let top = real
            .strip_prefix(&worktrees)
            .ok()
            .and_then(|rest| rest.components().next())
            .map(|name| worktrees.join(name))
            .ok_or_else(outside)?;
        let admin = self.reattach(&top)?.ok_or_else(outside)?;
        let mut command = git();
        command
            .args(args)
            .current_dir(&real)
            .env("GIT_DIR", &admin)
            .env("GIT_WORK_TREE", &top);
        run(&mut command, args)
    }

    /// The git directory git keeps for the worktree at `top`
    /// (`.git/worktrees/<name>`, whose `gitdir` leads back to `top`), its
    /// `.git` file written back to name it where anything else stands
    /// there; `None` when git keeps none for `top`.
    pub fn reattach(&self, top: &Path) -> Result<Option<PathBuf>, GitError> {
        let io = |e: std::io::Error| GitError::Io {
            path: top.display().to_string(),
            message: e.to_string(),
        };
        let Ok(entries) = std::fs::read_dir(self.common_dir.join("worktrees")) else {
            return Ok(None);
        };
        let top_real = std::fs::canonicalize(top).map_err(io)?;
        // A path git wrote relative (`worktree.useRelativePaths`) is from
        // the file's own folder.
        let admin = entries.flatten().map(|e| e.path()).find(|admin| {
            std::fs::read_to_string(admin.join("gitdir")).is_ok_and(|back| {
                admin
                    .join(back.trim())
                    .parent()
                    .and_then(|wt| std::fs::canonicalize(wt).ok())
                    .is_some_and(|wt| wt == top_real)
            })
        });
        let Some(admin) = admin else {
            return Ok(None);
        };
        let dot_git = top.join(".git");
        let wanted = format!("gitdir: {}\n", admin.display());
        let meta = std::fs::symlink_metadata(&dot_git).ok();
        let points_back = meta.as_ref().is_some_and(|m| m.is_file())
            && std::fs::read_to_string(&dot_git).is_ok_and(|now| {
                now.trim()
                    .strip_prefix("gitdir:")
                    .and_then(|to| std::fs::canonicalize(top.join(to.trim())).ok())
                    .is_some_and(|to| std::fs::canonicalize(&admin).ok() == Some(to))
            });
        if !points_back {
            if meta.is_some_and(|m| m.is_dir()) {
                std::fs::remove_dir_all(&dot_git).map_err(io)?;
            } else {
                let _ = std::fs::remove_file(&dot_git);
            }
            std::fs::write(&dot_git, wanted).map_err(io)?;
        }
        Ok(Some(admin))
    }

    /// `path` relative to the checkout's root, `/`-separated; `None` when
    /// it is not inside the checkout.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let real = std::fs::canonicalize(path).ok()?;
        let rel = real.strip_prefix(&self.root).ok()?;
        Some(
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        )
    }

    /// A new worktree at `path` on a new branch `branch` from `HEAD`; or,
    /// when the branch exists already (a run killed halfway through this
    /// step), on that branch.
    pub fn worktree_add(&self, path: &Path, branch: &str) -> Result<(), GitError> {
        let shown = path.display().to_string();
        // A worktree whose folder vanished is forgotten first.
        self.git(&self.root, &["worktree", "prune"])?;
        if self.branch_exists(branch)? {
            self.git(&self.root, &["worktree", "add", &shown, branch])?;
        } else {
            self.git(
                &self.root,
                &["worktree", "add", "-b", branch, &shown, "HEAD"],
            )?;
        }
        Ok(())
    }

    /// Remove a worktree and its folder (changes in it are discarded); a
    /// missing one is fine.
    pub fn worktree_remove(&self, path: &Path) -> Result<(), GitError> {
        if path.exists() {
            // git refuses a worktree whose `.git` no longer points back.
            self.reattach(path)?;
            let shown = path.display().to_string();
            self.git(&self.root, &["worktree", "remove", "--force", &shown])?;
        }
        self.git(&self.root, &["worktree", "prune"])?;
        Ok(())
    }

    /// The folders of every worktree of the repository, the checkout first.
    pub fn worktrees(&self) -> Result<Vec<PathBuf>, GitError> {
        let out = self.git(&self.root, &["worktree", "list", "--porcelain"])?;
        Ok(out
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(PathBuf::from)
            .collect())
    }

    pub fn branch_exists(&self, branch: &str) -> Result<bool, GitError> {
        let name = format!("refs/heads/{branch}");
        match self.git(&self.root, &["rev-parse", "--verify", "--quiet", &name]) {
            Ok(_) => Ok(true),
            Err(GitError::Failed { code: 1, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Delete a branch (merged or not); a missing one is fine.
    pub fn branch_delete(&self, branch: &str) -> Result<(), GitError> {
        if self.branch_exists(branch)? {
            self.git(&self.root, &["branch", "-D", branch])?;
        }
        Ok(())
    }

    /// `git status --porcelain` of a checkout or worktree, untracked files
    /// listed one by one.
    pub fn status(&self, dir: &Path) -> Result<String, GitError> {
        self.git(dir, &["status", "--porcelain", "--untracked-files=all"])
    }

    /// Whether one file of a worktree is as its commit has it (or absent
    /// from both). The path is taken as written, never as a pattern.
    pub fn unchanged(&self, dir: &Path, rel: &str) -> Result<bool, GitError> {
        let out = self.git(
            dir,
            &[
                "--literal-pathspecs",
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--",
                rel,
            ],
        )?;
        Ok(out.trim().is_empty())
    }

    /// The `.gitattributes` files of a worktree that differ from its
    /// commit: changed, removed, new, or new and ignored.
    pub fn changed_attributes(&self, dir: &Path) -> Result<Vec<String>, GitError> {
        let out = self.git(
            dir,
            &[
                "status",
                "--porcelain",
                "-z",
                "--no-renames",
                "--ignored",
                "--untracked-files=all",
                "--",
                ":(glob,icase)**/.gitattributes",
            ],
        )?;
        Ok(out
            .split('\0')
            .filter_map(|entry| entry.get(3..))
            .filter(|path| !path.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// Whether git ignores a file a worktree does not track (so no commit
    /// takes it), whether it exists yet or not.
    pub fn ignored(&self, dir: &Path, rel: &str) -> Result<bool, GitError> {
        // `./` first: a name beginning `:(` is a name, not pathspec magic.
        let path = format!("./{rel}");
        match self.git(dir, &["check-ignore", "-q", "--", &path]) {
            Ok(_) => Ok(true),
            Err(GitError::Failed { code: 1, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether git stages a file of a worktree: staged and unstaged again
    /// (`--dry-run` checks no name), its message where it will not be (a
    /// name git refuses, such as `GIT~1/`; a file in a submodule).
    pub fn stageable(&self, dir: &Path, rel: &str) -> Result<(), GitError> {
        self.git(dir, &["--literal-pathspecs", "add", "--", rel])?;
        self.git(dir, &["--literal-pathspecs", "reset", "-q", "--", rel])
            .map(|_| ())
    }

    /// The checkout's untracked files (not ignored), relative to its root.
    pub fn untracked(&self) -> Result<Vec<String>, GitError> {
        let out = self.git(
            &self.root,
            &["ls-files", "--others", "--exclude-standard", "-z"],
        )?;
        Ok(out
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// Every file of a worktree git would see: tracked and untracked, not
    /// ignored, relative to its root.
    pub fn files(&self, dir: &Path) -> Result<Vec<String>, GitError> {
        let out = self.git(
            dir,
            &[
                "ls-files",
                "--cached",
                "--others",
                "--exclude-standard",
                "-z",
            ],
        )?;
        let mut files: Vec<String> = out
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// The git blob ids of files of `dir` (relative paths; a missing file
    /// is left out).
    pub fn hash_files(
        &self,
        dir: &Path,
        files: &[String],
    ) -> Result<Vec<(String, String)>, GitError> {
        let present: Vec<&String> = files.iter().filter(|f| dir.join(f).is_file()).collect();
        if present.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["hash-object", "--no-filters", "--"];
        args.extend(present.iter().map(|s| s.as_str()));
        let out = self.git(dir, &args)?;
        Ok(present
            .into_iter()
            .cloned()
            .zip(out.lines().map(str::to_string))
            .collect())
    }

    /// A blob's bytes by its id.
    pub fn read_blob(&self, id: &str) -> Result<Vec<u8>, GitError> {
        let output = Command::new("git")
            .args(["cat-file", "blob", id])
            .current_dir(&self.root)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_COMMON_DIR")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| GitError::Spawn(e.to_string()))?;
        if !output.status.success() {
            return Err(GitError::Failed {
                args: format!("cat-file blob {id}"),
                code: output.status.code().unwrap_or(-1),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(output.stdout)
    }

    /// Stage everything of a worktree (new, changed and removed files).
    pub fn add_all(&self, dir: &Path) -> Result<(), GitError> {
        self.git(dir, &["add", "--all"]).map(|_| ())
    }

    /// The tree id of what is staged in a worktree.
    pub fn write_tree(&self, dir: &Path) -> Result<String, GitError> {
        Ok(self.git(dir, &["write-tree"])?.trim().to_string())
    }

    /// Commit what is staged in a worktree (also when nothing changed); the
    /// new commit's id. Without a configured identity the commit is by
    /// `planvault <planvault@localhost>`.
    pub fn commit(&self, dir: &Path, message: &str) -> Result<String, GitError> {
        let named = self.git(dir, &["config", "user.email"]).is_ok();
        let mut args = Vec::new();
        if !named {
            args.extend([
                "-c",
                "user.name=planvault",
                "-c",
                "user.email=planvault@localhost",
            ]);
        }
        args.extend([
            "commit",
            "--allow-empty",
            "--no-verify",
            "-q",
            "-m",
            message,
        ]);
        self.git(dir, &args)?;
        self.head(dir)
    }

    /// The commit a checkout or worktree is at.
    pub fn head(&self, dir: &Path) -> Result<String, GitError> {
        Ok(self.git(dir, &["rev-parse", "HEAD"])?.trim().to_string())
    }

    /// `(commit, tree)` of every commit of any branch whose message
    /// carries `text`.
    pub fn commits_naming(&self, text: &str) -> Result<Vec<(String, String)>, GitError> {
        let grep = format!("--grep={text}");
        let out = self.git(
            &self.root,
            &["log", "--all", "--fixed-strings", &grep, "--format=%H %T"],
        )?;
        Ok(out
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(c, t)| (c.to_string(), t.to_string()))
            .collect())
    }

    /// The tree id and message of a branch's newest commit.
    pub fn tip(&self, branch: &str) -> Result<(String, String), GitError> {
        let out = self.git(&self.root, &["log", "-1", "--format=%T%n%B", branch, "--"])?;
        let (tree, message) = out.split_once('\n').unwrap_or((out.as_str(), ""));
        Ok((tree.trim().to_string(), message.trim().to_string()))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A repository on `main` with `files` committed.
    pub(crate) fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        git_in(dir.path(), &["init", "-q", "-b", "main"]).unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        git_in(dir.path(), &["add", "."]).unwrap();
        let who = ["-c", "user.name=t", "-c", "user.email=t@t"];
        git_in(
            dir.path(),
            &[&who[..], &["commit", "-q", "-m", "init"]].concat(),
        )
        .unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        (dir, repo)
    }

    fn repo() -> (tempfile::TempDir, Repo) {
        repo_with(&[("a.txt", "a\n")])
    }

    #[test]
    fn a_worktree_is_made_committed_in_and_removed_without_touching_the_checkout() {
        let (dir, repo) = repo();
        std::fs::write(dir.path().join("loose.txt"), "untracked\n").unwrap();
        assert_eq!(repo.untracked().unwrap(), ["loose.txt"]);
        let before = repo.status(repo.root()).unwrap();
        let wt = repo.planvault_dir().join("worktrees/r1");
        repo.worktree_add(&wt, "planvault/r1").unwrap();
        assert!(repo.worktrees().unwrap().iter().any(|p| p.ends_with("r1")));
        std::fs::write(wt.join("b.txt"), "b\n").unwrap();
        repo.add_all(&wt).unwrap();
        let tree = repo.write_tree(&wt).unwrap();
        let commit = repo.commit(&wt, "work\n\nreceipt: R-1").unwrap();
        assert_eq!(commit.len(), 40);
        assert_eq!(
            repo.tip("planvault/r1").unwrap(),
            (tree, "work\n\nreceipt: R-1".into())
        );
        assert_eq!(repo.status(repo.root()).unwrap(), before);
        assert!(!dir.path().join("b.txt").exists());
        repo.worktree_remove(&wt).unwrap();
        assert!(!wt.exists());
        assert!(repo.branch_exists("planvault/r1").unwrap());
        repo.branch_delete("planvault/r1").unwrap();
        assert!(!repo.branch_exists("planvault/r1").unwrap());
        assert_eq!(repo.worktrees().unwrap().len(), 1);
        // A second add after a half-done first (the branch made, the
        // folder gone) takes the branch over.
        git_in(dir.path(), &["branch", "planvault/r2"]).unwrap();
        let wt2 = repo.planvault_dir().join("worktrees/r2");
        repo.worktree_add(&wt2, "planvault/r2").unwrap();
        assert!(wt2.join("a.txt").exists());
    }

    /// A worktree's `.git` rewritten (by a tool, a command) to name the
    /// checkout's repository: git in the worktree still works on its own
    /// branch, and the file is written back; paths git wrote relative
    /// (`worktree.useRelativePaths`) are read from their own folders.
    #[test]
    fn a_worktree_whose_dot_git_was_rewritten_is_reattached() {
        let (dir, repo) = repo();
        let wt = repo.planvault_dir().join("worktrees/r1");
        repo.worktree_add(&wt, "planvault/r1").unwrap();
        let checkout = format!("gitdir: {}\n", repo.common_dir().display());
        std::fs::write(wt.join(".git"), &checkout).unwrap();
        std::fs::write(wt.join("b.txt"), "b\n").unwrap();
        repo.add_all(&wt).unwrap();
        repo.commit(&wt, "work").unwrap();
        assert_eq!(repo.tip("planvault/r1").unwrap().1, "work");
        assert!(git_in(dir.path(), &["status", "--porcelain"])
            .unwrap()
            .is_empty());
        assert_ne!(std::fs::read_to_string(wt.join(".git")).unwrap(), checkout);
        // Both paths relative, as newer git may write them.
        let admin = repo.reattach(&wt).unwrap().unwrap();
        let admin_rel = format!(
            "../../../worktrees/{}",
            admin.file_name().unwrap().to_string_lossy()
        );
        std::fs::write(wt.join(".git"), format!("gitdir: {admin_rel}\n")).unwrap();
        std::fs::write(admin.join("gitdir"), "../../planvault/worktrees/r1/.git\n").unwrap();
        assert_eq!(repo.reattach(&wt).unwrap(), Some(admin.clone()));
        assert_eq!(
            std::fs::read_to_string(wt.join(".git")).unwrap(),
            format!("gitdir: {admin_rel}\n"),
            "a relative path that points back is kept"
        );
        assert!(repo.status(&wt).unwrap().is_empty());
    }

    #[test]
    fn folders_outside_the_repository_are_refused() {
        let (_dir, repo) = repo();
        let other = tempfile::tempdir().unwrap();
        let err = repo.status(other.path()).unwrap_err();
        assert!(matches!(err, GitError::Outside { .. }), "{err}");
        let err = Repo::discover(other.path()).unwrap_err();
        assert!(matches!(err, GitError::NotARepository { .. }), "{err}");
    }

    #[test]
    fn hashes_are_git_blob_ids_and_a_missing_file_is_left_out() {
        let (dir, repo) = repo();
        let hashed = repo
            .hash_files(dir.path(), &["a.txt".into(), "gone.txt".into()])
            .unwrap();
        // `printf 'a\n' | git hash-object --stdin`
        assert_eq!(
            hashed,
            [(
                "a.txt".to_string(),
                "78981922613b2afb6025042ff6bd878ac1994e85".to_string()
            )]
        );
    }
}
