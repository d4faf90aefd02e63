//! `planvault run --isolate` end to end: the real binary, real git
//! repositories in temp folders, the scripted model server. The checkout
//! must stay byte-for-byte as it was; the work lands on `planvault/<run-id>`
//! with a receipt, or is rolled back leaving a learnings note.

use llm_stub::{Reply, Script, Stub};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PROPOSE: &str = "Step: Propose a fix";

/// A gate (item 2) before the command that changes the code (item 3).
const GATED: &str = "# Fix the library

- [ ] Propose a fix
- [ ] (after: 1) @human Approve the fix
- [ ] (after: 2) @tool sh apply.sh
";

/// No gate: the command runs at once.
const UNGATED: &str = "# Fix the library

- [ ] Propose a fix
- [ ] (after: 1) @tool sh apply.sh
";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with a broken library, a verifier under `tests/`, the
/// plan, `apply.sh` (what the plan's command does) and the config; one
/// untracked file beside them.
fn repo(dir: &Path, plan: &str, apply: &str, guard: &str) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::create_dir_all(repo.join("PLAN.run/.planvault")).unwrap();
    std::fs::write(repo.join("src/lib.txt"), "broken\n").unwrap();
    std::fs::write(repo.join("tests/check.sh"), "grep -q fixed src/lib.txt\n").unwrap();
    std::fs::write(repo.join("PLAN.md"), plan).unwrap();
    std::fs::write(repo.join("apply.sh"), apply).unwrap();
    std::fs::write(
        repo.join("PLAN.run/.planvault/config.toml"),
        format!("[http]\nretry_base_ms = 20\nattempts = 2\n\n[guard]\n{guard}"),
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, ".", "start");
    std::fs::write(repo.join("scratch.txt"), "the user's own notes\n").unwrap();
    repo
}

/// Commit `path` (a file or folder) of the checkout.
fn commit(repo: &Path, path: &str, message: &str) {
    git(repo, &["add", path]);
    let who = ["-c", "user.name=t", "-c", "user.email=t@t"];
    git(repo, &[&who[..], &["commit", "-q", "-m", message]].concat());
}

/// `git status --porcelain` and every file's bytes (outside `.git`).
fn snapshot(repo: &Path) -> Snapshot {
    let mut files = BTreeMap::new();
    let mut pending = vec![repo.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() == ".git" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else {
                let rel = entry
                    .path()
                    .strip_prefix(repo)
                    .unwrap()
                    .display()
                    .to_string();
                files.insert(rel, std::fs::read(entry.path()).unwrap());
            }
        }
    }
    (
        git(repo, &["status", "--porcelain", "--untracked-files=all"]),
        files,
    )
}

fn worktrees(repo: &Path) -> usize {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

fn run_branches(repo: &Path) -> Vec<String> {
    git(
        repo,
        &[
            "branch",
            "--list",
            "planvault/*",
            "--format=%(refname:short)",
        ],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

fn reply(contains: &str, content: &str) -> Reply {
    Reply {
        times: Some(0),
        ..Reply::when(contains, content)
    }
}

fn stub(delay_ms: u64) -> Stub {
    Stub::start(
        Script {
            replies: vec![Reply {
                delay_ms,
                ..reply(PROPOSE, "Change src/lib.txt.\nSTATUS: done")
            }],
            default: None,
        },
        0,
        None,
    )
    .unwrap()
}

fn planvault(repo: &Path, stub: &Stub, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planvault"));
    cmd.args(["run", "--trust-config"])
        .arg(repo.join("PLAN.md"))
        .args([
            "--query",
            "fix the library",
            "--endpoint",
            &stub.base_url(),
            "--model",
            "m",
            "--autonomy",
            "ask",
            "--isolate",
        ])
        .args(extra)
        .current_dir(repo.parent().unwrap())
        .env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY");
    cmd
}

fn run(repo: &Path, stub: &Stub, extra: &[&str]) -> Output {
    planvault(repo, stub, extra).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The run's state folder under the git directory.
fn state(repo: &Path) -> PathBuf {
    repo.join(".git/planvault/runs/PLAN.md")
}

/// The checkout as it was.
type Snapshot = (String, BTreeMap<String, Vec<u8>>);

/// A repository whose ungated plan runs `apply`, its snapshot, and one
/// isolated run of it to its end.
fn ungated_run(dir: &Path, apply: &str, guard: &str) -> (PathBuf, Snapshot, Stub, Output) {
    let repo = repo(dir, UNGATED, apply, guard);
    let before = snapshot(&repo);
    let stub = stub(0);
    let out = run(&repo, &stub, &[]);
    (repo, before, stub, out)
}

fn receipt_verify(vault: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["receipt", "verify"])
        .arg(vault)
        .output()
        .unwrap()
}

fn guard_log(repo: &Path) -> String {
    std::fs::read_to_string(state(repo).join("guard.jsonl")).unwrap_or_default()
}

#[test]
fn an_approved_run_commits_on_its_branch_and_never_touches_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(
        dir.path(),
        GATED,
        "echo fixed > src/lib.txt\necho new > src/added.txt\n",
        "verify = \"sh tests/check.sh\"\nprotected = [\"tests/**\"]\n",
    );
    let before = snapshot(&repo);
    let stub = stub(0);

    let out = run(&repo, &stub, &[]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "awaiting the gate: {}",
        stderr(&out)
    );
    assert_eq!(snapshot(&repo), before, "nothing changed before approval");
    assert_eq!(worktrees(&repo), 1, "no worktree before approval");
    assert!(run_branches(&repo).is_empty());
    assert!(!guard_log(&repo).contains("worktree-added"));
    assert!(
        guard_log(&repo).contains("\"untracked\":[\"scratch.txt\"]"),
        "the untracked file is recorded: {}",
        guard_log(&repo)
    );

    let out = run(&repo, &stub, &["--decide", "2=approve"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        snapshot(&repo),
        before,
        "the checkout is byte-for-byte untouched"
    );
    assert_eq!(worktrees(&repo), 1, "the worktree is gone after the commit");
    let branches = run_branches(&repo);
    assert_eq!(branches.len(), 1, "{branches:?}");
    let branch = &branches[0];
    assert_eq!(
        git(&repo, &["show", &format!("{branch}:src/lib.txt")]),
        "fixed\n"
    );
    assert_eq!(
        git(&repo, &["show", &format!("{branch}:src/added.txt")]),
        "new\n"
    );
    let message = git(&repo, &["log", "-1", "--format=%B", branch]);
    let receipt = err
        .split("(receipt ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no receipt named: {err}"));
    assert!(message.contains(receipt), "{message}");
    assert_eq!(
        git(&repo, &["rev-parse", "main"]),
        git(&repo, &["rev-parse", &format!("{branch}~1")]),
        "one commit on top of where the run began"
    );
    assert_eq!(stub.requests().len(), 1, "nothing ran twice");
    // The receipt binds the branch's tree and the locked verifier.
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state(&repo).join("vault/00_plan-trace/receipt.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["id"], receipt);
    assert_eq!(
        format!("planvault/{}", json["run_id"].as_str().unwrap()),
        *branch,
        "the receipt's run is the branch's"
    );
    assert_eq!(json["outcome"], "completed");
    assert_eq!(json["attempts"], 1);
    assert_eq!(
        json["tree"].as_str().unwrap(),
        git(&repo, &["rev-parse", &format!("{branch}^{{tree}}")]).trim()
    );
    assert!(
        json["verifier_hashes"]["tests/check.sh"].is_string(),
        "{json}"
    );
    assert!(
        message.contains(&format!("Planvault-Receipt: {receipt}")),
        "{message}"
    );
    let verified = receipt_verify(&state(&repo).join("vault"));
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    // A branch that no longer carries the receipt's commit is caught.
    git(&repo, &["branch", "-f", branch, "main"]);
    let verified = receipt_verify(&state(&repo).join("vault"));
    assert_eq!(verified.status.code(), Some(1));
    // A second run of an ended one changes nothing.
    let out = run(&repo, &stub, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("already ended (committed)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(run_branches(&repo).len(), 1);
}

/// A red team's finding: a PLAN.md's accepted amendment (text a model
/// chose) was appended to the checkout's PLAN.md, a tracked file, during an
/// isolated run, and the run's receipt no longer verified. Now the run
/// amends its own copy, beside its run vault, and a resume goes on with it.
#[test]
fn an_isolated_runs_amendment_goes_to_its_own_copy_of_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "# Fix the library\n\n- [ ] Propose a fix\n- [ ] (after: 1) @feedback Review the proposal\n- [ ] (after: 2) @human Approve the fix\n- [ ] (after: 3) @tool sh apply.sh\n";
    let repo = repo(
        dir.path(),
        plan,
        "echo fixed > src/lib.txt\n",
        "verify = \"sh tests/check.sh\"\n",
    );
    let before = snapshot(&repo);
    let stub = Stub::start(
        Script {
            replies: vec![
                reply(PROPOSE, "Change src/lib.txt.\nSTATUS: done"),
                reply(
                    "Step: Review the proposal",
                    "Fine.\n```leopold-amend\nadd: (after: 1) Note the change in the changelog\n```\nSTATUS: done",
                ),
                reply("Step: Note the change", "Noted.\nSTATUS: done"),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = run(&repo, &stub, &[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("item 5 appended"), "{}", stderr(&out));
    // Said of the copy it was written to, not of the checkout's plan.
    assert!(
        stderr(&out).contains("  amended the run's copy ") && !stderr(&out).contains("  amended /"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        snapshot(&repo),
        before,
        "the checkout's PLAN.md is untouched"
    );
    let copy = std::fs::read_to_string(state(&repo).join("PLAN.md")).unwrap();
    assert!(
        copy.ends_with("- [ ] (after: 1) Note the change in the changelog\n"),
        "{copy}"
    );

    let out = run(&repo, &stub, &["--decide", "3=approve"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        snapshot(&repo),
        before,
        "the checkout is byte-for-byte untouched"
    );
    assert!(
        stub.requests()
            .iter()
            .any(|r| r.text().contains("Step: Note the change")),
        "the amended item ran on the resume"
    );
    let verified = receipt_verify(&state(&repo).join("vault"));
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
}

/// A repository whose gated plan runs `apply`, verified by `guard`, and
/// its first run, waiting at the gate (item 2).
fn paused_at_the_gate(dir: &Path, apply: &str, guard: &str) -> (PathBuf, Stub) {
    let repo = repo(dir, GATED, apply, guard);
    let stub = stub(0);
    let out = run(&repo, &stub, &[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    (repo, stub)
}

/// An edit a person made to the checkout's PLAN.md while an isolated run
/// waited at its gate was ignored: the resume went on with the run's copy
/// (where it had checked a box). Now the run's own changes are laid over
/// the edit: the edited command is the one that runs.
#[test]
fn an_edit_of_the_checkouts_plan_while_paused_is_taken_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, stub) = paused_at_the_gate(
        dir.path(),
        "echo still broken > src/lib.txt\n",
        "verify = \"sh tests/check.sh\"\nattempts = 1\n",
    );
    let edited = GATED.replace("@tool sh apply.sh", "@tool echo fixed > src/lib.txt");
    std::fs::write(repo.join("PLAN.md"), &edited).unwrap();
    let before = snapshot(&repo);

    let out = run(&repo, &stub, &["--decide", "2=approve"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("taken with the run's own: PLAN.md"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        snapshot(&repo),
        before,
        "the checkout keeps the person's text"
    );
    let branch = &run_branches(&repo)[0];
    assert_eq!(
        git(&repo, &["show", &format!("{branch}:src/lib.txt")]),
        "fixed\n",
        "the edited command ran"
    );
    let copy = std::fs::read_to_string(state(&repo).join("PLAN.md")).unwrap();
    assert_eq!(copy, edited.replace("- [ ]", "- [x]"));
    assert_eq!(stub.requests().len(), 1, "nothing ran twice");
}

/// A person's edit on a line the run changed too (the box it checked)
/// cannot be merged: the resume says where, changes nothing, and goes on
/// once the edit is undone.
#[test]
fn an_edit_that_meets_the_runs_own_change_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, stub) = paused_at_the_gate(
        dir.path(),
        "echo fixed > src/lib.txt\n",
        "verify = \"sh tests/check.sh\"\n",
    );
    let copy = std::fs::read_to_string(state(&repo).join("PLAN.md")).unwrap();
    assert!(copy.contains("- [x] Propose a fix"), "{copy}");
    let edited = GATED.replace("Propose a fix", "Propose a better fix");
    std::fs::write(repo.join("PLAN.md"), &edited).unwrap();
    let before = snapshot(&repo);

    let out = run(&repo, &stub, &["--decide", "2=approve"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    for said in [
        "PLAN.md: changed in the checkout where the run changed its copy too",
        "<<<<<<< the run's copy",
        "- [x] Propose a fix",
        "- [ ] Propose a better fix",
        "nothing was changed",
    ] {
        assert!(err.contains(said), "{said:?} in {err}");
    }
    assert_eq!(snapshot(&repo), before);
    assert_eq!(
        std::fs::read_to_string(state(&repo).join("PLAN.md")).unwrap(),
        copy,
        "the run's copy is as it was"
    );
    assert!(run_branches(&repo).is_empty(), "nothing ran");

    std::fs::write(repo.join("PLAN.md"), GATED).unwrap();
    let out = run(&repo, &stub, &["--decide", "2=approve"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(run_branches(&repo).len(), 1);
}

/// A review's finding: a Ctrl-C while the verifier ran killed it, and its
/// exit was taken for a failed verification: on the last attempt the run
/// was rolled back, its branch deleted. Now the verifier is killed as a
/// stop, gives no verdict, and the run stops resumably.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_while_the_verifier_runs_stops_the_run_resumably_without_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(
        dir.path(),
        UNGATED,
        "echo fixed > src/lib.txt\n",
        "verify = \"sleep 31\"\nattempts = 1\n",
    );
    let stub = stub(0);
    let child = planvault(&repo, &stub, &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The verifier is running once its `sleep 31` is.
    let verifying = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .any(|p| std::fs::read(p.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x0031\x00"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !verifying() {
        assert!(std::time::Instant::now() < deadline, "{}", guard_log(&repo));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(err.contains("interrupted while the verifier ran"), "{err}");
    assert!(!err.contains("rolled back"), "{err}");
    assert!(
        !guard_log(&repo).contains("\"verified\""),
        "{}",
        guard_log(&repo)
    );
}

#[test]
fn work_that_edits_a_protected_test_is_stopped_as_tampering_and_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, before, _stub, out) = ungated_run(
        dir.path(),
        "echo 'exit 0' > tests/check.sh\n",
        "verify = \"sh tests/check.sh\"\nprotected = [\"tests/**\"]\n",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("tampering") && err.contains("tests/check.sh"),
        "{err}"
    );
    assert!(
        !guard_log(&repo).contains("\"step\":\"verified\""),
        "the changed verifier never ran"
    );
    assert_eq!(worktrees(&repo), 1);
    assert!(run_branches(&repo).is_empty());
    let (status, mut files) = snapshot(&repo);
    let notes: Vec<String> = files
        .keys()
        .filter(|k| k.starts_with("PLAN.run/00_plan-trace/learnings/"))
        .cloned()
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = String::from_utf8(files.remove(&notes[0]).unwrap()).unwrap();
    assert!(note.contains("`tests/check.sh`"), "{note}");
    assert_eq!(files, before.1, "only the learnings note was added");
    let mut lines: Vec<String> = before.0.lines().map(str::to_string).collect();
    lines.push(format!("?? {}", notes[0]));
    lines.sort();
    assert_eq!(status.lines().collect::<Vec<_>>(), lines);
}

/// A red team's note: work that wrote `.gitattributes` (`eol=crlf`) had
/// `git add` commit other bytes than the verifier judged, under a receipt
/// binding that commit. It is stopped as tampering, as a changed test is.
#[test]
fn work_that_writes_gitattributes_is_stopped_as_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _before, _stub, out) = ungated_run(
        dir.path(),
        "printf '* text eol=crlf\\n' > .gitattributes\n",
        "verify = \"sh tests/check.sh\"\nprotected = [\"tests/**\"]\n",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("tampering") && err.contains("`.gitattributes`"),
        "{err}"
    );
    assert!(run_branches(&repo).is_empty(), "nothing committed");
}

#[test]
fn three_failed_verifications_roll_back_and_keep_what_was_learned() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, before, stub, out) = ungated_run(
        dir.path(),
        "echo try >> src/tries.txt\n",
        "verify = \"sh tests/check.sh || (echo 'lib.txt is still broken'; exit 3)\"\nprotected = [\"tests/**\"]\n",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rolled back"), "{err}");
    assert_eq!(stub.requests().len(), 3, "the plan ran once per attempt");
    let asked: Vec<String> = stub.requests().iter().map(|r| r.text()).collect();
    assert!(
        !asked[0].contains("failed verification")
            && asked[1].contains("Attempt 1 of 3 failed verification")
            && asked[2].contains("Attempt 2 of 3 failed verification")
            && asked[2].contains("lib.txt is still broken"),
        "each attempt is told why the last failed"
    );
    assert_eq!(worktrees(&repo), 1, "no worktree left");
    assert!(run_branches(&repo).is_empty(), "no branch left");
    assert!(!state(&repo)
        .join("../../worktrees")
        .read_dir()
        .unwrap()
        .any(|_| true));
    let log = guard_log(&repo);
    assert_eq!(log.matches("\"step\":\"verified\"").count(), 3, "{log}");
    assert!(log.contains("\"outcome\":\"escalated\""), "{log}");
    let learnings = log.find("\"step\":\"learnings\"").unwrap();
    let removed = log.find("\"step\":\"worktree-removed\"").unwrap();
    assert!(
        learnings < removed,
        "the note is written before the teardown"
    );
    let (_, files) = snapshot(&repo);
    let note = files
        .iter()
        .find(|(k, _)| k.starts_with("PLAN.run/00_plan-trace/learnings/"))
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .expect("a learnings note");
    for needed in [
        "The verifier failed 3 time(s)",
        "### Attempt 3 (exit 3)",
        "lib.txt is still broken",
        "?? src/tries.txt",
        "settled: ok; signals exit=0",
    ] {
        assert!(note.contains(needed), "{needed} in {note}");
    }
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state(&repo).join("vault/00_plan-trace/receipt.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(receipt["outcome"], "escalated");
    assert_eq!(receipt["attempts"], 3);
    assert!(receipt["tree"].is_null());
    let verified = receipt_verify(&state(&repo).join("vault"));
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let mut without_note = files.clone();
    without_note.retain(|k, _| !k.starts_with("PLAN.run/00_plan-trace/learnings/"));
    assert_eq!(without_note, before.1, "the checkout is as it was");
}

/// A vault's `type: human` note is the gate: nothing of the repository is
/// made before the person approves.
#[test]
fn a_vaults_human_note_gates_the_worktree() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path(), UNGATED, "true\n", "");
    for (name, text) in [
        (
            "propose.md",
            "---\ntype: start\nstatus: pending\n---\n# Propose a fix\n\n## Next\n- [[approve]]\n",
        ),
        (
            "approve.md",
            "---\ntype: human\nstatus: pending\n---\n# Approve the fix\n\n## Next\n- [[apply]]\n",
        ),
        ("apply.md", "---\nstatus: pending\n---\n# Apply the fix\n"),
        (
            ".planvault/config.toml",
            "[http]\nattempts = 1\n\n[guard]\nverify = \"sh tests/check.sh\"\n",
        ),
    ] {
        let path = repo.join("plan").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(repo.join("src/lib.txt"), "fixed\n").unwrap();
    commit(&repo, ".", "plan");
    let before = snapshot(&repo);
    let stub = Stub::start(
        Script {
            replies: vec![
                Reply::when("Propose a fix", "Fix lib.txt."),
                Reply::when("Apply the fix", "Applied."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let vault_run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
            .args(["run", "--trust-config"])
            .arg(repo.join("plan"))
            .args([
                "--query",
                "fix",
                "--endpoint",
                &stub.base_url(),
                "--model",
                "m",
            ])
            .args(["--autonomy", "ask", "--isolate"])
            .args(extra)
            .env_remove("OPENAI_API_KEY")
            .env_remove("PLANVAULT_API_KEY")
            .output()
            .unwrap()
    };
    let out = vault_run(&[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(worktrees(&repo), 1, "no worktree before approval");
    assert!(run_branches(&repo).is_empty());
    assert_eq!(snapshot(&repo), before);
    // While it waits, a person adds to the next note's instructions in
    // the checkout: the resume reads them, and the run's own statuses stay.
    let apply = repo.join("plan/apply.md");
    let edited = "---\nstatus: pending\n---\n# Apply the fix\n\nKeep the old name.\n";
    std::fs::write(&apply, edited).unwrap();
    // And a knob on the line after the status the run changed (git's own
    // merge would call that a conflict).
    let propose = repo.join("plan/propose.md");
    let text = std::fs::read_to_string(&propose).unwrap();
    std::fs::write(
        &propose,
        text.replace("status: pending\n", "status: pending\nmax_visits: 2\n"),
    )
    .unwrap();
    let before = snapshot(&repo);
    let out = vault_run(&["--decide", "approve=approve"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("taken with the run's own: apply.md, propose.md"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        snapshot(&repo),
        before,
        "the vault's notes in the checkout keep their status"
    );
    assert_eq!(run_branches(&repo).len(), 1);
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].text().contains("Keep the old name."),
        "{}",
        requests[1].text()
    );
    let run_vault = repo.join(".git/planvault/runs/plan/vault");
    assert!(std::fs::read_to_string(run_vault.join("propose.md"))
        .unwrap()
        .contains("status: done\nmax_visits: 2\n"));
}

/// Found while testing the resume's merge: a vault at the repository's
/// root (a repository that is an Obsidian vault) was copied with its
/// `.git`, the run's own state inside it, into that state, again and
/// again, until the path was too long. The run's copies leave `.git` out.
#[test]
fn a_vault_at_the_repositorys_root_runs_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("vault");
    for (name, text) in [
        (
            "propose.md",
            "---\ntype: start\n---\n# Propose a fix\n\n## Next\n- [[approve]]\n",
        ),
        ("approve.md", "---\ntype: human\n---\n# Approve the fix\n"),
        (".planvault/config.toml", "[guard]\nverify = \"true\"\n"),
    ] {
        let path = repo.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, ".", "vault");
    let stub = stub(0);
    let vault_run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
            .args(["run", "--trust-config"])
            .arg(&repo)
            .args(["--query", "fix", "--endpoint", &stub.base_url()])
            .args(["--model", "m", "--autonomy", "ask", "--isolate"])
            .args(extra)
            .env_remove("OPENAI_API_KEY")
            .env_remove("PLANVAULT_API_KEY")
            .output()
            .unwrap()
    };
    let out = vault_run(&[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let state = repo.join(".git/planvault/runs/plan");
    for copy in ["vault", "base"] {
        assert!(state.join(copy).join("propose.md").is_file(), "{copy}");
        assert!(
            !state.join(copy).join(".git").exists(),
            "{copy} holds no .git"
        );
    }
    let out = vault_run(&["--decide", "approve=approve"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(run_branches(&repo).len(), 1);
}

/// A gated vault under `plan/`, its verifier `verify`, committed.
fn gated_vault(repo: &Path, verify: &str) {
    for (name, text) in [
        (
            "propose.md",
            "---\ntype: start\nstatus: pending\n---\n# Propose a fix\n\n## Next\n- [[approve]]\n",
        ),
        (
            "approve.md",
            "---\ntype: human\nstatus: pending\n---\n# Approve the fix\n\n## Next\n- [[apply]]\n",
        ),
        ("apply.md", "---\nstatus: pending\n---\n# Apply the fix\n"),
        (
            ".planvault/config.toml",
            &format!("[http]\nattempts = 1\n\n[guard]\nverify = {verify:?}\n"),
        ),
    ] {
        let path = repo.join("plan").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(repo.join("src/lib.txt"), "fixed\n").unwrap();
    commit(repo, ".", "plan");
}

fn gated_vault_stub() -> Stub {
    let replies = vec![
        Reply::when("Propose a fix", "Fix lib.txt."),
        Reply::when("Apply the fix", "Applied."),
    ];
    Stub::start(
        Script {
            replies,
            default: None,
        },
        0,
        None,
    )
    .unwrap()
}

fn gated_vault_run(repo: &Path, stub: &Stub, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["run", "--trust-config"])
        .arg(repo.join("plan"))
        .args(["--query", "fix", "--endpoint", &stub.base_url()])
        .args(["--model", "m", "--autonomy", "ask", "--isolate"])
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY")
        .output()
        .unwrap()
}

/// A review's finding: a resume another run's lock refused had already
/// taken the checkout's edits into the vault that run held (and moved the
/// base on, so that run could write the edit away for good). The edits are
/// taken once the vault is the resume's own.
#[test]
fn a_resume_the_lock_refuses_takes_no_edit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path(), UNGATED, "true\n", "");
    gated_vault(&repo, "sh tests/check.sh");
    let stub = gated_vault_stub();
    let out = gated_vault_run(&repo, &stub, &[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let state = repo.join(".git/planvault/runs/plan");
    std::fs::write(
        state.join("vault/.planvault/run.lock"),
        "host=browser\ntab=another\n",
    )
    .unwrap();
    let read = |path: &str| std::fs::read_to_string(state.join(path)).unwrap();
    let (run_note, base_note) = (read("vault/apply.md"), read("base/apply.md"));
    std::fs::write(
        repo.join("plan/apply.md"),
        "---\nstatus: pending\n---\n# Apply the fix\n\nAlso drop the old table.\n",
    )
    .unwrap();
    let out = gated_vault_run(&repo, &stub, &["--decide", "approve=approve"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(read("vault/apply.md"), run_note);
    assert_eq!(read("base/apply.md"), base_note);
}

/// A review's finding: a resume after the verifier had judged the work
/// (the commit cut off) took a person's edit into the run's vault: the
/// edit never ran, and the receipt no longer verified. Past the verdict,
/// nothing is taken.
#[test]
fn an_edit_made_after_the_verdict_is_not_taken() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path(), UNGATED, "true\n", "");
    // The verifier passes, and the first time locks the worktree's index:
    // the commit after it fails as a kill there would stop it.
    let once = dir.path().join("once");
    gated_vault(
        &repo,
        &format!(
            "[ -e {0} ] || {{ touch {0}; touch \"$(git rev-parse --git-dir)/index.lock\"; }}; grep -q fixed src/lib.txt",
            once.display()
        ),
    );
    let stub = gated_vault_stub();
    let out = gated_vault_run(&repo, &stub, &[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let out = gated_vault_run(&repo, &stub, &["--decide", "approve=approve"]);
    assert!(!out.status.success(), "{}", stderr(&out));
    let log = std::fs::read_to_string(repo.join(".git/planvault/runs/plan/guard.jsonl")).unwrap();
    assert!(log.contains("verified"), "{log}");
    for worktree in std::fs::read_dir(repo.join(".git/worktrees")).unwrap() {
        let _ = std::fs::remove_file(worktree.unwrap().path().join("index.lock"));
    }
    std::fs::write(
        repo.join("plan/apply.md"),
        "---\nstatus: pending\n---\n# Apply the fix\n\nAlso drop the old table.\n",
    )
    .unwrap();
    let out = gated_vault_run(&repo, &stub, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("taken with the run's own"), "{err}");
    let verified = receipt_verify(&repo.join(".git/planvault/runs/plan/vault"));
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
}

#[test]
fn a_safety_stop_rolls_the_run_back_instead_of_leaving_its_worktree() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "# Fix\n\n- [ ] @tool sh apply.sh\n- [ ] (after: 1) Propose a fix\n";
    let repo = repo(
        dir.path(),
        plan,
        "echo half > src/lib.txt\n",
        "verify = \"sh tests/check.sh\"\n",
    );
    let before = snapshot(&repo);
    let stub = stub(0);
    let out = run(&repo, &stub, &["--max-steps", "1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("safety stop") && err.contains("rolled back"),
        "{err}"
    );
    assert!(
        guard_log(&repo).contains("\"step\":\"worktree-added\""),
        "the command ran isolated"
    );
    assert_eq!(worktrees(&repo), 1);
    assert!(run_branches(&repo).is_empty());
    let (_, mut files) = snapshot(&repo);
    files.retain(|k, _| !k.starts_with("PLAN.run/00_plan-trace/learnings/"));
    assert_eq!(files, before.1);
}

/// A tiny deterministic generator, seeded from the clock (every failure
/// names the seed; `PLANVAULT_KILL_SEED=N` replays it).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn a_run_killed_at_random_points_resumes_in_its_worktree_and_repeats_no_mutation() {
    let seed = std::env::var("PLANVAULT_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    // Three model steps and three commands, each appending one line; the
    // verifier passes on the second attempt, and is slow.
    let plan = "# Fix in steps

- [ ] Propose a fix
- [ ] (after: 1) @tool sh apply.sh one
- [ ] (after: 2) Propose a fix again
- [ ] (after: 3) @tool sh apply.sh two
- [ ] (after: 4) Propose a fix at last
- [ ] (after: 5) @tool sh apply.sh three
";
    let marker = dir.path().join("verifying");
    let repo = repo(
        dir.path(),
        plan,
        "echo $1 >> src/log.txt\nif [ \"$(grep -c one src/log.txt)\" -ge 2 ]; then echo fixed > src/lib.txt; fi\n",
        &format!(
            "verify = \"touch {} && sleep 1 && sh tests/check.sh\"\nprotected = [\"tests/**\"]\n",
            marker.display()
        ),
    );
    let before = snapshot(&repo);
    let stub = stub(300);
    let mut kills = 0;
    let mut finished = None;
    for _ in 0..40 {
        let _ = std::fs::remove_file(&marker);
        let mut child = planvault(&repo, &stub, &[])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Kill at a random moment of a model call in flight (the k-th
        // request from now, each answered after 300 ms), or while the
        // verifier runs. (A command killed halfway would be run again on
        // resume: the one call in flight, as for every run.)
        let asked = stub.requests().len();
        let point = rng.below(2);
        let wait_for = asked + 1 + rng.below(3) as usize;
        let within = Duration::from_millis(rng.below(250));
        let started = Instant::now();
        let mut seen_at = None;
        let killed = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Err(status);
            }
            let due = match point {
                0 => {
                    if seen_at.is_none() && stub.requests().len() >= wait_for {
                        seen_at = Some(Instant::now());
                    }
                    seen_at.is_some_and(|t| t.elapsed() >= within)
                }
                _ => marker.exists(),
            };
            if due {
                child.kill().unwrap();
                child.wait().unwrap();
                break Ok(());
            }
            assert!(started.elapsed() < Duration::from_secs(60), "the run hung");
            std::thread::sleep(Duration::from_millis(5));
        };
        // During the run: the checkout as it was.
        assert_eq!(snapshot(&repo), before, "seed {seed}");
        match killed {
            Ok(()) => kills += 1,
            Err(status) => {
                let mut err = String::new();
                use std::io::Read;
                child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                assert!(status.success(), "seed {seed}: {err}");
                finished = Some(err);
                break;
            }
        }
    }
    let err = finished.unwrap_or_else(|| panic!("seed {seed}: the run never finished"));
    assert!(kills >= 1, "seed {seed}: the first run is always killed");
    assert!(err.contains("committed"), "{err}");
    assert_eq!(
        snapshot(&repo),
        before,
        "seed {seed}: the checkout is untouched"
    );
    assert_eq!(worktrees(&repo), 1, "seed {seed}: no orphaned worktree");
    let branches = run_branches(&repo);
    assert_eq!(branches.len(), 1, "seed {seed}: {branches:?}");
    // Every command ran once per attempt: two attempts, three commands.
    let log = git(&repo, &["show", &format!("{}:src/log.txt", branches[0])]);
    assert_eq!(
        log, "one\ntwo\nthree\none\ntwo\nthree\n",
        "seed {seed}: a command ran twice or not at all"
    );
    let guard = guard_log(&repo);
    assert_eq!(
        guard.matches("\"step\":\"worktree-added\"").count(),
        1,
        "seed {seed}: the worktree was found again, not made twice: {guard}"
    );
    assert_eq!(
        guard.matches("\"step\":\"committed\"").count(),
        1,
        "{guard}"
    );
}

/// A repository whose vault plan `plan/` is one step offered
/// server-filesystem (rooted at the checkout) and `write_note`; `guard`
/// is its config's `[guard]` table. Committed.
fn files_server_plan(dir: &Path, guard: &str) -> PathBuf {
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/mcp-server-filesystem");
    assert!(server.exists(), "run `npm ci` at the repository's root");
    let repo = repo(dir, UNGATED, "true\n", "");
    let real = std::fs::canonicalize(&repo).unwrap();
    std::fs::create_dir_all(repo.join("plan/.planvault")).unwrap();
    std::fs::write(
        repo.join("plan/fix.md"),
        "---\ntype: start\nstatus: pending\ntools: [files.write_file, write_note]\n---\n# Fix the library\n\nWrite the fix.\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("plan/.planvault/config.toml"),
        format!(
            "[http]\nattempts = 1\n\n[mcp.servers.files]\ncommand = {:?}\nargs = [{:?}]\n\n[guard]\n{guard}",
            server.display().to_string(),
            real.display().to_string()
        ),
    )
    .unwrap();
    commit(&repo, "plan", "plan");
    repo
}

/// A tool call of `name` with a path and a content.
fn call(name: &str, path: &str, content: &str) -> llm_stub::ToolCall {
    llm_stub::ToolCall {
        name: name.into(),
        arguments: serde_json::json!({"path": path, "content": content}),
    }
}

/// A model that makes `calls` in the step's first round, then is done.
fn one_step_of_calls(calls: Vec<llm_stub::ToolCall>) -> Stub {
    let step = |tool_calls: Vec<llm_stub::ToolCall>, content: &str| Reply {
        tool_calls,
        ..reply("Step: Fix the library", content)
    };
    let first = Reply {
        times: None,
        ..step(calls, "")
    };
    Stub::start(
        Script {
            replies: vec![first, step(vec![], "Fixed.")],
            default: None,
        },
        0,
        None,
    )
    .unwrap()
}

/// `planvault run plan --isolate` of [`files_server_plan`]'s repository.
fn files_server_plan_run(repo: &Path, stub: &Stub) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["run", "--trust-config"])
        .arg(repo.join("plan"))
        .args(["--query", "fix", "--endpoint", &stub.base_url()])
        .args(["--model", "m", "--isolate"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY")
        .output()
        .unwrap()
}

/// A vault plan in the repository whose node writes through
/// server-filesystem, pointed at the checkout: the server is pointed at the
/// worktree instead, and its write to a protected test is refused.
#[test]
fn an_mcp_filesystem_server_writes_in_the_worktree_and_never_a_protected_path() {
    let dir = tempfile::tempdir().unwrap();
    let repo = files_server_plan(
        dir.path(),
        "verify = \"sh tests/check.sh\"\nprotected = [\"tests/**\", \"plan/rules/**\"]\n",
    );
    let before = snapshot(&repo);
    let stub = one_step_of_calls(vec![
        call("files__write_file", "tests/check.sh", "exit 0\n"),
        call("files__write_file", "src/lib.txt", "fixed\n"),
        call("write_note", "rules/holdout.md", "anything goes"),
    ]);
    let out = files_server_plan_run(&repo, &stub);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let told = stub.requests()[1].text();
    assert!(
        told.contains("tests/check.sh is protected"),
        "the model is told the write was refused: {told}"
    );
    assert!(
        told.contains("plan/rules/holdout.md is protected"),
        "write_note refuses a protected path too: {told}"
    );
    assert_eq!(snapshot(&repo), before, "the checkout is untouched");
    let branches = run_branches(&repo);
    assert_eq!(branches.len(), 1, "{err}");
    assert_eq!(
        git(&repo, &["show", &format!("{}:src/lib.txt", branches[0])]),
        "fixed\n"
    );
    assert_eq!(
        git(&repo, &["show", &format!("{}:tests/check.sh", branches[0])]),
        "grep -q fixed src/lib.txt\n"
    );
    assert_eq!(worktrees(&repo), 1);
}

/// A vault plan's step writes its findings with `write_note`: the note was
/// left in the run's vault under the git directory, never in the commit,
/// while what the step's server wrote was. It is in the worktree before
/// the verifier runs (this verifier requires it) and committed at the
/// vault's place; a note the server changed there too is left as the
/// server made it, and said.
#[test]
fn notes_a_vault_run_writes_are_verified_and_committed_with_its_work() {
    let dir = tempfile::tempdir().unwrap();
    let repo = files_server_plan(
        dir.path(),
        "verify = \"grep -rq cause plan/findings && sh tests/check.sh && test ! -e plan/judged.md\"\nattempts = 1\n",
    );
    std::fs::write(repo.join("plan/known.md"), "Known issues: none.\n").unwrap();
    commit(&repo, "plan", "a note");
    let before = snapshot(&repo);
    let stub = one_step_of_calls(vec![
        call("files__write_file", "src/lib.txt", "fixed\n"),
        call("files__write_file", "plan/clash.md", "the server's\n"),
        call("write_note", "findings/today.md", "The cause: a typo.\n"),
        call("write_note", "clash.md", "the note's\n"),
        call("write_note", "judged.md", "what judges the work\n"),
    ]);
    let out = files_server_plan_run(&repo, &stub);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("notes the run wrote, in the worktree for the verifier and the commit: plan/findings/today.md\n"),
        "{err}"
    );
    assert!(
        err.contains("warning: plan/clash.md is not in the commit as the run wrote it: the run's commands or tools changed it in the worktree too"),
        "{err}"
    );
    let told = stub.requests()[1].text();
    assert!(
        told.contains("plan/judged.md is named by the verifier ([guard] verify)"),
        "a file the verifier names is refused, as a protected one is: {told}"
    );
    assert_eq!(snapshot(&repo), before, "the checkout is untouched");
    let branches = run_branches(&repo);
    assert_eq!(branches.len(), 1, "{err}");
    let at = |path: &str| git(&repo, &["show", &format!("{}:{path}", branches[0])]);
    assert_eq!(at("plan/findings/today.md"), "The cause: a typo.\n");
    assert_eq!(at("plan/known.md"), "Known issues: none.\n");
    assert_eq!(at("plan/clash.md"), "the server's\n");
    assert_eq!(at("src/lib.txt"), "fixed\n");
    assert!(
        at("plan/fix.md").contains("status: pending"),
        "the plan's notes are the run's state, not its work"
    );
    let run_vault = repo.join(".git/planvault/runs/plan/vault");
    assert_eq!(
        std::fs::read_to_string(run_vault.join("clash.md")).unwrap(),
        "the note's\n",
        "the note the commit does not hold is kept"
    );
    let verified = receipt_verify(&run_vault);
    assert!(verified.status.success(), "{}", stderr(&verified));
}

/// A red team's finding: a writing tool wrote the worktree's `.git` file
/// to name the checkout's repository, and the run's commit landed on
/// `main`, its index and branch changed under the person, and every
/// resume failed ("does not point back"). git is told the worktree's own
/// git directory, and the file is written back.
#[test]
fn a_tool_that_rewrites_the_worktrees_dot_git_changes_nothing_of_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(repo.join("src/lib.txt"), "broken\n").unwrap();
    std::fs::write(repo.join("tests/check.sh"), "grep -q fixed src/lib.txt\n").unwrap();
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/mcp-server-filesystem");
    for (name, text) in [
        (
            "fix.md",
            "---\ntype: start\nstatus: pending\ntools: [files.write_file]\n---\n# Fix the library\n".to_string(),
        ),
        (
            ".planvault/config.toml",
            format!(
                "[http]\nattempts = 1\n\n[guard]\nverify = \"sh tests/check.sh\"\nprotected = [\"tests/**\"]\n\n[mcp.servers.files]\ncommand = {:?}\nargs = [{:?}]\n",
                server.display().to_string(),
                repo.display().to_string()
            ),
        ),
    ] {
        let path = repo.join("plan").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, ".", "start");
    let main_before = git(&repo, &["rev-parse", "main"]);
    let write = |path: &str, content: String| Reply {
        tool_calls: vec![llm_stub::ToolCall {
            name: "files__write_file".into(),
            arguments: serde_json::json!({"path": path, "content": content}),
        }],
        ..Reply::when("Step: Fix the library", "")
    };
    let gitdir = format!("gitdir: {}\n", repo.join(".git").display());
    let stub = Stub::start(
        Script {
            replies: vec![
                write("src/lib.txt", "fixed\n".into()),
                write(".git", gitdir),
                Reply::when("Step: Fix the library", "Fixed."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["run", "--trust-config"])
        .arg(repo.join("plan"))
        .args(["--query", "fix", "--endpoint", &stub.base_url()])
        .args(["--model", "m", "--autonomy", "full", "--isolate"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(git(&repo, &["rev-parse", "main"]), main_before);
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(repo.join("src/lib.txt")).unwrap(),
        "broken\n"
    );
    let branches = run_branches(&repo);
    assert_eq!(branches.len(), 1, "{branches:?}");
    let fixed = git(&repo, &["show", &format!("{}:src/lib.txt", branches[0])]);
    assert_eq!(fixed, "fixed\n");
    assert_eq!(worktrees(&repo), 1);
}

/// A server given its root as `--root=/checkout/…` writes in the run's
/// worktree, not the checkout; a protected path spelled another way
/// (`x/../tests/…`) is still refused; and a root the run cannot point at
/// its worktree (`-r/checkout/…`) stops the run before anything starts.
/// (A red-team pass had such a server write into the checkout, and a
/// protected test config written under another spelling.)
#[test]
fn a_servers_flag_root_is_pointed_at_the_worktree_and_a_respelled_protected_path_refused() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path(), UNGATED, "true\n", "");
    let real = std::fs::canonicalize(&repo).unwrap();
    // One tool, write_file(path, content), under the folder `--root=DIR`
    // names, as many real servers take their root.
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testkit/mcp-test-server/server.cjs");
    let config = |args: &str| {
        format!(
            "[http]\nattempts = 1\n\n[mcp.servers.fs]\ncommand = \"node\"\nargs = [{:?}, \"write\", {args}]\n\n[guard]\nverify = \"sh tests/check.sh\"\nprotected = [\"tests/**\"]\n",
            script.display().to_string(),
        )
    };
    std::fs::create_dir_all(repo.join("plan/.planvault")).unwrap();
    std::fs::write(
        repo.join("plan/fix.md"),
        "---\ntype: start\nstatus: pending\ntools: [fs.write_file]\n---\n# Fix the library\n\nWrite the fix.\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("plan/.planvault/config.toml"),
        config(&format!("\"--root={}\"", real.display())),
    )
    .unwrap();
    commit(&repo, "plan", "plan");
    let before = snapshot(&repo);
    let write = |path: &str, content: &str| llm_stub::ToolCall {
        name: "fs__write_file".into(),
        arguments: serde_json::json!({"path": path, "content": content}),
    };
    let stub = Stub::start(
        Script {
            replies: vec![
                Reply {
                    times: None,
                    tool_calls: vec![
                        write("x/../tests/check.sh", "exit 0\n"),
                        write("src/lib.txt", "fixed\n"),
                        write("out/report.txt", "written by the model\n"),
                    ],
                    ..reply("Step: Fix the library", "")
                },
                reply("Step: Fix the library", "Fixed."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
            .args(["run", "--trust-config"])
            .arg(repo.join("plan"))
            .args(["--query", "fix", "--endpoint", &stub.base_url()])
            .args(["--model", "m", "--isolate"])
            .args(extra)
            .env_remove("OPENAI_API_KEY")
            .env_remove("PLANVAULT_API_KEY")
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let told = stub.requests()[1].text();
    assert!(
        told.contains("tests/check.sh is protected"),
        "the respelled protected path is refused: {told}"
    );
    assert_eq!(snapshot(&repo), before, "the checkout is untouched");
    let branches = run_branches(&repo);
    assert_eq!(branches.len(), 1, "{err}");
    assert_eq!(
        git(&repo, &["show", &format!("{}:out/report.txt", branches[0])]),
        "written by the model\n"
    );

    // A root the run cannot point at its worktree is refused up front.
    std::fs::write(
        repo.join("plan/.planvault/config.toml"),
        config(&format!("\"-r{}\"", real.join("out").display())),
    )
    .unwrap();
    commit(&repo, "plan", "a root as -rPATH");
    let out = run(&["--fresh"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("MCP server fs: `-r") && err.contains("names the checkout"),
        "{err}"
    );
}
