//! Runs as Temporal workflows, end to end: a real Temporal dev server
//! (`temporal server start-dev`, found and started by testkit/temporal-dev)
//! on a free 127.0.0.1 port with its own database, a real
//! `planvault worker` process, and the scripted OpenAI-compatible stub; for
//! MCP, server-everything from the root's `node_modules` (as `mcp_e2e.rs`).

mod common;

use common::*;
use llm_stub::{Reply, Script, Stub};
use planvault_core::engine::FinishReason;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use temporal_dev::DevServer;

const SECRET: &str = "sk-temporal-never-in-history-0123456789";

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The dev server (testkit/temporal-dev: skipped with a notice where set-up
/// has not installed it, a failure in CI).
type Server = DevServer;

fn planvault() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planvault"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY");
    cmd
}

/// A worker holding the key in its environment.
fn start_worker(server: &Server, queue: &str) -> Killed {
    start_worker_with(server, queue, &[])
}

/// A worker holding the key and `env` besides.
fn start_worker_with(server: &Server, queue: &str, env: &[(&str, &std::ffi::OsStr)]) -> Killed {
    Killed(
        planvault()
            .args([
                "worker",
                "--temporal",
                &server.address(),
                "--task-queue",
                queue,
            ])
            .env("PLANVAULT_API_KEY", SECRET)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Submit a run; the submitter holds the key too (it must not send it).
fn submit(server: &Server, queue: &str, vault: &Path, stub: &Stub, extra: &[&str]) -> Output {
    planvault()
        .env("PLANVAULT_API_KEY", SECRET)
        .args(["submit", "--trust-config"])
        .arg(vault)
        .args(["--temporal", &server.address(), "--task-queue", queue])
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .args(["--model", "stub-model"])
        .args(extra)
        .output()
        .unwrap()
}

/// `planvault run` of `plan` against `stub`, for comparison with a
/// submitted run; the key in its environment as the worker's.
fn run_locally(plan: &Path, stub: &Stub) -> Output {
    planvault()
        .arg("run")
        .arg(plan)
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .args(["--model", "stub-model"])
        .env("PLANVAULT_API_KEY", SECRET)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `planvault decide RUN SPEC` against `server`.
fn decide(server: &Server, run: &str, spec: &str) -> Output {
    planvault()
        .args(["decide", run, spec, "--temporal", &server.address()])
        .output()
        .unwrap()
}

/// The client's view of `server`'s `queue`.
fn target(server: &Server, queue: &str) -> planvault_temporal::client::Target {
    planvault_temporal::client::Target {
        address: server.address(),
        namespace: "default".into(),
        task_queue: queue.into(),
    }
}

/// Every file of a vault (path → text), without what differs between two
/// runs of the same plan by nature: the run's id and the receipt naming it.
fn vault_files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// `temporal workflow show --output json`, with every payload's base64
/// `data` decoded beside it (payloads are what a workflow's input, activity
/// inputs and results are stored as). The history is first replayed by
/// this build's workflow (the SDK's replayer): the driver is deterministic.
fn workflow_history(server: &Server, id: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = server
            .cli()
            .args(["workflow", "show", "--workflow-id", id, "--output", "json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if json["events"].as_array().is_some_and(|e| !e.is_empty()) {
            planvault_temporal::client::replay(&target(server, "e2e"), id)
                .expect("the history replays");
            let mut all = json.to_string();
            let mut stack = vec![&json];
            while let Some(value) = stack.pop() {
                match value {
                    serde_json::Value::Object(map) => {
                        if let Some(data) = map.get("data").and_then(|d| d.as_str()) {
                            all.push('\n');
                            all.push_str(&String::from_utf8_lossy(&base64(data)));
                        }
                        stack.extend(map.values());
                    }
                    serde_json::Value::Array(items) => stack.extend(items),
                    _ => {}
                }
            }
            return all;
        }
        assert!(Instant::now() < deadline, "no history: {}", text(&out));
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Standard base64 (with padding) → bytes.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}

#[test]
fn a_submitted_run_ends_as_planvault_run_ends_once_and_keeps_the_key_out_of_history() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let _worker = start_worker(&server, "e2e");

    // The same vault and script through `planvault run`, for comparison.
    let local = example_vault(&dir.path().join("local"));
    let local_stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = run_locally(&local, &local_stub);
    assert!(out.status.success(), "{}", text(&out));

    let shared = example_vault(&dir.path().join("shared"));
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = submit(
        &server,
        "e2e",
        &shared,
        &stub,
        &["--run", "first", "--wait"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let id = stdout
        .trim()
        .strip_prefix("submitted ")
        .unwrap_or_else(|| panic!("{}", text(&out)))
        .to_string();
    assert!(
        id.starts_with("planvault-") && id.ends_with("-first"),
        "{id}"
    );

    // Each model call once, as the terminal's run made them (the 429
    // retried by the driver on a durable timer), each with the key the
    // worker read from its own environment.
    let requests = stub.requests();
    assert_eq!(requests.len(), local_stub.requests().len(), "same calls");
    assert_eq!(requests.len(), 8, "7 answers and one 429");
    assert!(requests.iter().all(|r| r.authorized));

    // The vault ends as the terminal's run left its copy (but the run id).
    assert_same_vault(&shared, &local);
    for note in ["draft.md", "review.md", "send.md"] {
        assert_eq!(status_of(&shared, note), "done", "{note}");
    }

    // Submitting again starts nothing: one workflow for the vault and name.
    let again = submit(&server, "e2e", &shared, &stub, &["--run", "first"]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("exists already"),
        "{}",
        text(&again)
    );
    let runs = planvault()
        .args(["runs", "--temporal", &server.address()])
        .output()
        .unwrap();
    assert!(runs.status.success(), "{}", text(&runs));
    let listed = String::from_utf8_lossy(&runs.stdout);
    assert_eq!(
        listed.lines().filter(|l| l.starts_with(&id)).count(),
        1,
        "{listed}"
    );
    assert!(listed.contains("completed"), "{listed}");

    // The key is nowhere in the workflow's history (its payloads decoded),
    // nor in the vault.
    let history = workflow_history(&server, &id);
    assert!(!history.contains(SECRET), "the key is in the history");
    // A real history: the model's reply and the key's reference are in it.
    assert!(history.contains("Draft one."), "{history}");
    assert!(
        history.contains("planvault-key-from-worker-env:"),
        "{history}"
    );
    assert!(vault_files(&shared)
        .iter()
        .all(|(_, t)| !t.contains(SECRET)));

    // The journal is the contract: `planvault run --replay` of it makes the
    // same run with no model call.
    let silent = Stub::start(Script::default(), 0, None).unwrap();
    let replayed = example_vault(&dir.path().join("replayed"));
    let out = planvault()
        .arg("run")
        .arg(&replayed)
        .args(["--query", QUERY, "--endpoint", &silent.base_url()])
        .args(["--model", "stub-model", "--replay"])
        .arg(shared.join("00_plan-trace/journal.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(silent.requests().len(), 0, "a replay calls no model");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Sent. Message id <42@example>.\n"
    );
    for note in ["draft.md", "review.md", "send.md"] {
        assert_eq!(status_of(&replayed, note), "done", "{note}");
    }
}

#[test]
fn a_human_gate_waits_without_a_worker_and_decide_resumes_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let vault = human_gate_vault(dir.path());
    let stub = Stub::start(
        Script {
            replies: vec![
                Reply::when("Step: Write the note", "A fine note."),
                Reply::when("Step: Publish the note", "Published as #7."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let worker = start_worker(&server, "gate");
    let out = submit(&server, "gate", &vault, &stub, &["--autonomy", "ask"]);
    assert!(out.status.success(), "{}", text(&out));
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix("submitted ")
        .unwrap()
        .to_string();

    // The run reaches the gate and says whom it waits for.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = planvault()
            .args(["runs", "--temporal", &server.address()])
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&runs.stdout).into_owned();
        if listed.contains("waiting for a person: approve=publish|rewrite") {
            break;
        }
        assert!(Instant::now() < deadline, "never waited: {listed}");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(status_of(&vault, "approve.md"), "active");

    // Waiting holds no worker: the only one goes away, the run stays
    // running, and a new worker takes the decision up (replaying the whole
    // history so far: a driver that were not deterministic fails here).
    drop(worker);
    let runs = planvault()
        .args(["runs", "--temporal", &server.address()])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&runs.stdout).into_owned();
    assert!(listed.contains(&format!("{id}\trunning")), "{listed}");
    let _worker = start_worker(&server, "gate");
    let decide = |spec: &str| decide(&server, &id, spec);
    // Refused for an item nothing waits on.
    let wrong = decide("publish=approve");
    assert!(!wrong.status.success(), "{}", text(&wrong));
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("waits on approve"),
        "{}",
        text(&wrong)
    );
    let ok = decide("approve=publish:Looks right.");
    assert!(ok.status.success(), "{}", text(&ok));
    // A decision is never taken twice.
    let twice = decide("approve=publish");
    assert!(!twice.status.success(), "{}", text(&twice));

    let wait = planvault()
        .args(["submit"])
        .arg(&vault)
        .args(["--temporal", &server.address(), "--task-queue", "gate"])
        .args(["--query", QUERY, "--endpoint", &stub.base_url(), "--wait"])
        .output()
        .unwrap();
    assert!(wait.status.success(), "{}", text(&wait));
    assert!(String::from_utf8_lossy(&wait.stdout).contains("exists already"));
    assert_eq!(
        ["write.md", "approve.md", "publish.md"].map(|n| status_of(&vault, n)),
        ["done", "done", "done"]
    );
    assert_eq!(stub.requests().len(), 2, "nothing ran twice");
    let trace = std::fs::read_to_string(vault.join("00_plan-trace/trace.md")).unwrap();
    assert!(
        trace.contains("- took `publish` → [[publish]]\n- decided by: human"),
        "{trace}"
    );
}

/// `git` in `dir` as a person (an identity of their own), its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=person", "-c", "user.email=person@example"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A bare repository at `dir/<name>.git` (the remote) whose `main` holds
/// `vault` in its folder `plans`.
fn git_remote(dir: &Path, name: &str, vault: &Path) -> String {
    let seed = dir.join(format!("{name}-seed"));
    copy_dir(vault, &seed.join("plans"));
    git(&seed, &["init", "-q", "-b", "main"]);
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "the plan"]);
    let bare = dir.join(format!("{name}.git"));
    git(
        dir,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    bare.to_string_lossy().into_owned()
}

/// A worker with the key and its own git cache.
fn start_git_worker(server: &Server, queue: &str, cache: &Path) -> Killed {
    start_worker_with(server, queue, &[("PLANVAULT_GIT_CACHE", cache.as_os_str())])
}

fn submit_git(server: &Server, url: &str, stub: &Stub, extra: &[&str]) -> Output {
    planvault()
        .env("PLANVAULT_API_KEY", SECRET)
        .args(["submit", "--git", url, "--vault-dir", "plans"])
        .args(["--temporal", &server.address(), "--task-queue", "git"])
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .args(["--model", "stub-model"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_git_vault_run_ends_on_its_branch_as_planvault_run_ends_and_keeps_a_persons_push() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let cache = dir.path().join("cache");
    let worker = start_git_worker(&server, "git", &cache);
    let worker_folder = cache.join(format!("worker-{}", worker.0.id()));

    // Credentials in the URL are refused before anything is submitted.
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = submit_git(
        &server,
        "https://user:hunter2@example.com/p.git",
        &stub,
        &[],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("hunter2"), "{}", text(&out));
    assert!(text(&out).contains("credential"), "{}", text(&out));

    // The same vault and script through `planvault run`, for comparison.
    let local = example_vault(&dir.path().join("local"));
    let local_stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = run_locally(&local, &local_stub);
    assert!(out.status.success(), "{}", text(&out));

    let url = git_remote(dir.path(), "loop", &example_vault(&dir.path().join("seed")));
    let out = submit_git(&server, &url, &stub, &["--run", "first", "--wait"]);
    assert!(out.status.success(), "{}", text(&out));
    // The run ended: its clone is gone from the worker's cache, whose
    // folder names this machine (a shared cache's sweep keeps to its own).
    assert_eq!(clones(&worker_folder), Vec::<String>::new());
    assert_eq!(
        std::fs::read_to_string(worker_folder.join("host")).unwrap(),
        format!("{}\n", planvault_runner::native::host_name())
    );
    assert_eq!(
        stub.requests().len(),
        local_stub.requests().len(),
        "same calls"
    );

    // The run branch's tree is the terminal run's vault (but the run id);
    // the base branch is untouched; every commit after the plan is the run's.
    let result = dir.path().join("result");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            "planvault/first",
            &url,
            result.to_str().unwrap(),
        ],
    );
    let plans = result.join("plans");
    assert_same_vault(&plans, &local);
    let log = git(&result, &["log", "--format=%s", "planvault/first"]);
    let subjects: Vec<&str> = log.lines().collect();
    assert_eq!(subjects.last(), Some(&"the plan"));
    assert!(subjects.len() > 10, "{log}");
    assert!(
        subjects[..subjects.len() - 1]
            .iter()
            .all(|s| s.starts_with("planvault first: ")),
        "{log}"
    );
    assert_eq!(
        git(&result, &["rev-list", "--count", "origin/main"]).trim(),
        "1"
    );
    assert!(!log.contains(SECRET));

    // A human gate: while the run waits, a person pushes an edit to the
    // run branch; it survives the rest of the run.
    let gate_stub = Stub::start(
        Script {
            replies: vec![
                Reply::when("Step: Write the note", "A fine note."),
                Reply::when("Step: Publish the note", "Published as #7."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let gate_url = git_remote(dir.path(), "gate", &human_gate_vault(&dir.path().join("g")));
    let out = submit_git(
        &server,
        &gate_url,
        &gate_stub,
        &["--run", "gate", "--autonomy", "ask"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix("submitted ")
        .unwrap()
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let runs = planvault()
            .args(["runs", "--temporal", &server.address()])
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&runs.stdout).into_owned();
        if listed.contains(&id) && listed.contains("waiting for a person: approve=") {
            break;
        }
        assert!(Instant::now() < deadline, "never waited: {listed}");
        std::thread::sleep(Duration::from_millis(300));
    }
    let mine = dir.path().join("mine");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            "planvault/gate",
            &gate_url,
            mine.to_str().unwrap(),
        ],
    );
    assert_eq!(status_of(&mine.join("plans"), "approve.md"), "active");
    let note = mine.join("plans/write.md");
    let edited = format!(
        "{}\nA line a person added during the gate.\n",
        std::fs::read_to_string(&note).unwrap()
    );
    std::fs::write(&note, &edited).unwrap();
    git(&mine, &["commit", "-q", "-am", "a person's edit"]);
    git(&mine, &["push", "-q"]);

    let ok = decide(&server, &id, "approve=publish");
    assert!(ok.status.success(), "{}", text(&ok));
    let target = target(&server, "git");
    let state = planvault_temporal::client::wait(&target, &id).unwrap();
    assert_eq!(
        state.finished,
        Some(planvault_core::engine::FinishReason::Completed)
    );
    git(&mine, &["pull", "-q", "--ff-only"]);
    let plans = mine.join("plans");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), edited);
    assert_eq!(
        ["write.md", "approve.md", "publish.md"].map(|n| status_of(&plans, n)),
        ["done", "done", "done"]
    );
    assert_eq!(gate_stub.requests().len(), 2, "nothing ran twice");
    assert_eq!(clones(&worker_folder), Vec::<String>::new());
}

#[test]
fn a_git_clone_longer_than_the_heartbeat_timeout_finishes_in_its_first_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    // The worker's git takes 13 s to clone (more than the 10 s heartbeat
    // timeout): only an activity that heartbeats while git works gets
    // through in one attempt.
    let real = String::from_utf8(Command::new("which").arg("git").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\ncase \"$1\" in clone) sleep 13;; esac\nexec {real} \"$@\"\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let _worker = Killed(
        planvault()
            .args(["worker", "--temporal", &server.address()])
            .args(["--task-queue", "slow-git"])
            .env("PLANVAULT_API_KEY", SECRET)
            .env("PLANVAULT_GIT_CACHE", dir.path().join("cache"))
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let url = git_remote(dir.path(), "slow", &example_vault(&dir.path().join("seed")));
    let out = planvault()
        .env("PLANVAULT_API_KEY", SECRET)
        .args(["submit", "--git", &url, "--vault-dir", "plans"])
        .args(["--temporal", &server.address(), "--task-queue", "slow-git"])
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .args(["--model", "stub-model", "--run", "slow", "--wait"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let id = said
        .lines()
        .find_map(|l| l.strip_prefix("submitted "))
        .unwrap_or_else(|| panic!("{said}"))
        .trim();
    let history = workflow_history(&server, id);
    assert!(
        history.contains("\"attempt\":1"),
        "attempts are in the history"
    );
    assert!(
        !history.contains("\"attempt\":2"),
        "an activity was retried"
    );
}

/// The clones in a worker's cache folder.
fn clones(worker_folder: &Path) -> Vec<String> {
    std::fs::read_dir(worker_folder)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// A value only the workers hold, given to the MCP server by name.
const MCP_SECRET: &str = "mcp-value-held-by-the-worker-only-8642";

/// A worker holding the key and the MCP server's variable.
fn start_mcp_worker(server: &Server, queue: &str) -> Killed {
    start_worker_with(server, queue, &[("MCP_TEST_PASSED", MCP_SECRET.as_ref())])
}

/// server-everything (the root `package.json`'s dev dependency, run from
/// `node_modules/.bin`), launched through a script that copies what the
/// client sends it (JSON-RPC lines) to `logs/log.<worker's pid>`: the test
/// counts each worker's listings and calls.
fn logged_everything(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} is missing: run `npm ci` at the repository's root (scripts/setup does)",
        bin.display()
    );
    let logs = dir.join("mcp-logs");
    std::fs::create_dir_all(&logs).unwrap();
    let script = dir.join("everything.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntee -a '{}/log.'\"$PPID\" | '{}' stdio\n",
            logs.display(),
            bin.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, logs)
}

/// How often `needle` was sent to servers, per worker pid.
fn sent(logs: &Path, needle: &str) -> Vec<(u32, usize)> {
    let mut out: Vec<(u32, usize)> = std::fs::read_dir(logs)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let pid = e.file_name().to_str()?.strip_prefix("log.")?.parse().ok()?;
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((pid, text.matches(needle).count()))
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    out.sort();
    out
}

/// A one-note vault whose node may call `tool` of the `ev` server.
fn mcp_vault(dir: &Path, script: &Path, tool: &str) -> std::path::PathBuf {
    let vault = dir.join("mcp-vault");
    std::fs::create_dir_all(vault.join(".planvault")).unwrap();
    std::fs::write(
        vault.join("look.md"),
        format!("---\ntype: start\nstatus: pending\ntools: [ev.{tool}]\n---\n# Look around\n\nAsk the server.\n"),
    )
    .unwrap();
    std::fs::write(
        vault.join(".planvault/config.toml"),
        format!(
            "[mcp.servers.ev]\ncommand = {:?}\nenv = [\"MCP_TEST_PASSED\"]\n",
            script.display().to_string()
        ),
    )
    .unwrap();
    vault
}

/// The model calls `tool` once, then answers.
fn tool_script(tool: &str, arguments: serde_json::Value) -> Script {
    Script {
        replies: vec![
            Reply {
                tool_calls: vec![llm_stub::ToolCall {
                    name: format!("ev__{tool}"),
                    arguments,
                }],
                ..Reply::when("Step: Look around", "")
            },
            Reply::when("Step: Look around", "Looked."),
        ],
        default: None,
    }
}

fn submitted_id(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix("submitted ")
        .unwrap_or_else(|| panic!("{}", text(out)))
        .to_string()
}

#[test]
fn an_mcp_tool_is_listed_once_called_once_and_its_value_stays_on_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let (script, logs) = logged_everything(dir.path());
    let vault = mcp_vault(dir.path(), &script, "get-env");
    let stub = Stub::start(tool_script("get-env", serde_json::json!({})), 0, None).unwrap();
    let _worker = start_mcp_worker(&server, "mcp");
    let out = submit(&server, "mcp", &vault, &stub, &["--wait"]);
    assert!(out.status.success(), "{}", text(&out));
    let id = submitted_id(&out);
    assert_eq!(status_of(&vault, "look.md"), "done");

    // The server had the value; the model read the answer without it.
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    let answer = requests[1].text();
    assert!(
        answer.contains(r#""MCP_TEST_PASSED": "<redacted>""#),
        "{answer}"
    );
    // One listing and one call reached a server, whatever was replayed.
    assert_eq!(
        sent(&logs, "tools/list")
            .iter()
            .map(|(_, n)| n)
            .sum::<usize>(),
        1
    );
    assert_eq!(
        sent(&logs, "tools/call")
            .iter()
            .map(|(_, n)| n)
            .sum::<usize>(),
        1
    );

    let history = workflow_history(&server, &id);
    assert_eq!(
        history.matches("McpActivities::list").count(),
        1,
        "{history}"
    );
    assert_eq!(
        history.matches("McpActivities::call").count(),
        1,
        "{history}"
    );
    assert!(
        history.contains("<redacted>"),
        "the answer is in the history"
    );
    assert!(
        !history.contains(MCP_SECRET),
        "the server's value is in the history"
    );
    assert!(history.contains("MCP_TEST_PASSED"), "its name travels");
    assert!(vault_files(&vault)
        .iter()
        .all(|(_, t)| !t.contains(MCP_SECRET)));
    // The run gave the vault back.
    assert!(!vault.join(".planvault/run.lock").exists());
}

/// A writing tool's change of the plan's next note is put back on the
/// worker as the terminal puts it back (what it wrote kept beside it, the
/// model told), and the run goes on to the note as the person wrote it.
/// Before, a Temporal run stopped there, and each resume made the call again.
#[test]
fn a_plan_note_a_tool_rewrote_is_put_back_on_the_worker_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let vault = common::scribble_vault(dir.path(), "");
    let send = vault.join("send.md").canonicalize().unwrap();
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![llm_stub::ToolCall {
                    name: "scribble__scribble".into(),
                    arguments: serde_json::json!({
                        "path": send.display().to_string(),
                        "content": common::INJECTED_NOTE,
                    }),
                }],
                ..Reply::when("Step: Write the email", "")
            },
            Reply::when("Step: Write the email", "Written."),
            Reply::when("Step: Send the email", "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let _worker = start_worker(&server, "put-back");
    let out = submit(&server, "put-back", &vault, &stub, &["--wait"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&send).unwrap(),
        common::SEND_NOTE.replace("pending", "done")
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("send.md.from-tool")).unwrap(),
        common::INJECTED_NOTE
    );
    let requests = stub.requests();
    assert!(
        requests[1]
            .text()
            .contains("planvault undid this call's change to the plan's send.md"),
        "{}",
        requests[1].text()
    );
    assert!(
        !requests[2].text().contains("INJECTED"),
        "{}",
        requests[2].text()
    );
    let history = workflow_history(&server, &submitted_id(&out));
    assert_eq!(
        history.matches("VaultActivities::put_back").count(),
        1,
        "{history}"
    );
    // The plan's notes read in one activity at the start and each way
    // around the call (the config on its own), not one per note: three
    // events each, in a history Temporal bounds.
    let names = activity_names(&history);
    assert_eq!(
        names[1..3],
        ["VaultActivities::list", "VaultActivities::read_each"]
    );
    let call = names
        .iter()
        .position(|n| n == "McpActivities::call")
        .unwrap();
    assert_eq!(
        names[call - 2..call + 4],
        [
            "VaultActivities::read",
            "VaultActivities::read_each",
            "McpActivities::call",
            "VaultActivities::read",
            "VaultActivities::read_each",
            "VaultActivities::put_back"
        ],
        "{names:?}"
    );
}

/// The activities of a history ([`workflow_history`]: its JSON first, on
/// one line), in the order they were scheduled.
fn activity_names(history: &str) -> Vec<String> {
    let json = history.lines().next().unwrap_or_default();
    let history: serde_json::Value = serde_json::from_str(json).unwrap();
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["activityTaskScheduledEventAttributes"]["activityType"]["name"].as_str())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_worker_killed_mid_call_is_a_lost_call_the_run_goes_on_without_repeating() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let (script, logs) = logged_everything(dir.path());
    let tool = "trigger-long-running-operation";
    let vault = mcp_vault(dir.path(), &script, tool);
    let stub = Stub::start(
        tool_script(tool, serde_json::json!({"duration": 8, "steps": 8})),
        0,
        None,
    )
    .unwrap();
    let mut workers = vec![
        start_mcp_worker(&server, "kill"),
        start_mcp_worker(&server, "kill"),
    ];
    let out = submit(&server, "kill", &vault, &stub, &[]);
    assert!(out.status.success(), "{}", text(&out));

    // The call reaches a server: its worker dies with it in flight.
    let deadline = Instant::now() + Duration::from_secs(60);
    let calling = loop {
        if let Some((pid, _)) = sent(&logs, "tools/call").first() {
            break *pid;
        }
        assert!(Instant::now() < deadline, "no call was made");
        std::thread::sleep(Duration::from_millis(100));
    };
    let at = workers
        .iter()
        .position(|w| w.0.id() == calling)
        .expect("a worker made the call");
    drop(workers.remove(at));

    let wait = submit(&server, "kill", &vault, &stub, &["--wait"]);
    assert!(wait.status.success(), "{}", text(&wait));
    assert_eq!(status_of(&vault, "look.md"), "done");
    // Not made again, by Temporal or the driver: the model was told.
    assert_eq!(
        sent(&logs, "tools/call")
            .iter()
            .map(|(_, n)| n)
            .sum::<usize>(),
        1
    );
    let requests = stub.requests();
    assert_eq!(requests.len(), 2, "each model call once");
    let told = requests[1].text();
    assert!(
        told.contains("the worker making the call was lost"),
        "{told}"
    );
}

#[test]
fn a_temporal_run_and_a_terminal_run_refuse_each_others_vault() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let _worker = start_worker(&server, "lock");
    let vault = human_gate_vault(&dir.path().join("held"));
    let lock = vault.join(".planvault/run.lock");
    let stub = Stub::start(
        Script {
            replies: vec![
                Reply::when("Step: Write the note", "A fine note."),
                Reply::when("Step: Publish the note", "Published as #7."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = submit(&server, "lock", &vault, &stub, &["--autonomy", "ask"]);
    assert!(out.status.success(), "{}", text(&out));
    let id = submitted_id(&out);
    let deadline = Instant::now() + Duration::from_secs(60);
    let at_gate = || {
        std::fs::read_to_string(vault.join("approve.md"))
            .is_ok_and(|t| t.contains("status: active"))
    };
    while !at_gate() {
        assert!(Instant::now() < deadline, "never reached the gate");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        format!("host=temporal\nrun={id}\n")
    );

    // While it waits for a person, the vault is the run's.
    let local = planvault()
        .arg("run")
        .arg(&vault)
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .output()
        .unwrap();
    assert!(!local.status.success(), "{}", text(&local));
    assert!(
        text(&local).contains(&format!("the Temporal run {id}")),
        "{}",
        text(&local)
    );
    let other = submit(
        &server,
        "lock",
        &vault,
        &stub,
        &["--run", "other", "--wait"],
    );
    assert!(!other.status.success(), "{}", text(&other));
    assert!(
        text(&other).contains(&format!("the Temporal run {id}")),
        "{}",
        text(&other)
    );
    let ok = decide(&server, &id, "approve=publish");
    assert!(ok.status.success(), "{}", text(&ok));
    let done = submit(
        &server,
        "lock",
        &vault,
        &stub,
        &["--autonomy", "ask", "--wait"],
    );
    assert!(done.status.success(), "{}", text(&done));
    assert_eq!(stub.requests().len(), 2, "the refused runs called nothing");
    assert!(!lock.exists(), "given back at the end");

    // A terminal run in progress (its model slow to answer) holds a vault
    // a Temporal run is then refused.
    let busy = human_gate_vault(&dir.path().join("busy"));
    let slow = Stub::start(
        Script {
            replies: vec![Reply {
                delay_ms: 4000,
                ..Reply::when("Step: Write the note", "A slow note.")
            }],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let terminal = Killed(
        planvault()
            .arg("run")
            .arg(&busy)
            .args(["--query", QUERY, "--endpoint", &slow.base_url()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let lock = busy.join(".planvault/run.lock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !lock.exists() {
        assert!(Instant::now() < deadline, "the terminal run took no lock");
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = submit(&server, "lock", &busy, &slow, &["--run", "late", "--wait"]);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains(&format!("process {} on", terminal.0.id())),
        "{}",
        text(&refused)
    );
    // The terminal run goes on undisturbed (to the gate it defers).
    let mut terminal = terminal;
    terminal.0.wait().unwrap();
    assert_eq!(status_of(&busy, "write.md"), "done");
    let asked: Vec<String> = slow.requests().iter().map(|r| r.text()).collect();
    // The refused run would have asked for the first step again.
    assert_eq!(
        asked
            .iter()
            .filter(|t| t.contains("Step: Write the note"))
            .count(),
        1,
        "the refused run called nothing: {asked:#?}"
    );
    assert!(!lock.exists());
}

/// `ours` holds the files `planvault run` left in `theirs`, byte for byte
/// but the run id; the receipt and journal carry times and are left out.
fn assert_same_vault(ours: &Path, theirs: &Path) {
    let same = |vault: &Path| -> Vec<(String, String)> {
        let id = std::fs::read_to_string(vault.join("00_plan-trace/run-id")).unwrap();
        vault_files(vault)
            .into_iter()
            .map(|(p, t)| (p, t.replace(id.trim(), "<run-id>")))
            .collect()
    };
    let (ours, theirs) = (same(ours), same(theirs));
    let names = |f: &[(String, String)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs));
    for ((path, a), (_, b)) in ours.iter().zip(&theirs) {
        if path.ends_with("journal.jsonl") || path.contains("receipt") {
            continue;
        }
        assert_eq!(a, b, "{path} differs from `planvault run`'s");
    }
}

/// A plan folder of a larger vault, submitted through Temporal, runs as
/// `planvault run` runs it, and the worker checks each change as the
/// terminal does: a model's note written through a symlinked folder (out of
/// the plan, or into another run's trace) or outside the plan's folder is
/// refused and the refusal told to the model; a symlinked note leading out
/// of the folder is no note of the plan.
#[cfg(unix)]
#[test]
fn a_plan_folder_runs_through_temporal_as_in_the_terminal_and_its_writes_stay_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let _worker = start_worker(&server, "folder");
    let write = write_note_call;
    let script = || Script {
        replies: vec![
            Reply {
                tool_calls: vec![
                    write("plans/launch/notes/escaped.md"),
                    write("plans/launch/trace/escaped.md"),
                    write("Notes/outside.md"),
                    write("plans/launch/Linked.md"),
                    write("plans/launch/out/Draft text.md"),
                ],
                ..reply("Step: Write the draft", "")
            },
            reply("outside the plan's folder", "Drafted."),
        ],
        default: Some(reply("", "Done.")),
    };
    let make = |name: &str| {
        let vault = plan_in_a_vault(&dir.path().join(name));
        let folder = vault.join("plans/launch");
        std::fs::create_dir_all(vault.join("Other/00_plan-trace")).unwrap();
        std::os::unix::fs::symlink("../../Notes", folder.join("notes")).unwrap();
        std::os::unix::fs::symlink("../../Other/00_plan-trace", folder.join("trace")).unwrap();
        std::os::unix::fs::symlink("../../Notes/Background.md", folder.join("Linked.md")).unwrap();
        vault
    };

    let local = make("local");
    let local_stub = Stub::start(script(), 0, None).unwrap();
    let out = run_locally(&local.join("plans/launch"), &local_stub);
    assert!(out.status.success(), "{}", text(&out));

    let shared = make("shared");
    let stub = Stub::start(script(), 0, None).unwrap();
    let out = submit(
        &server,
        "folder",
        &shared.join("plans/launch"),
        &stub,
        &["--wait"],
    );
    assert!(out.status.success(), "{}", text(&out));

    assert_same_vault(&shared.join("plans/launch"), &local.join("plans/launch"));
    assert_eq!(tool_messages(&stub), tool_messages(&local_stub));
    let told = tool_messages(&stub);
    for why in [
        "plans/launch/notes is a symlinked folder (it leads to Notes)",
        "plans/launch/trace is a symlinked folder (it leads to Other/00_plan-trace)",
        "outside the plan's folder",
        // Not listed, so no note of the plan: written as the note it leads to.
        "plans/launch/Linked.md reaches an existing note under another spelling",
    ] {
        assert!(told.contains(why), "{why}\n{told}");
    }
    for vault in [&shared, &local] {
        for escaped in [
            "Notes/escaped.md",
            "Other/00_plan-trace/escaped.md",
            "Notes/outside.md",
            "00_plan-trace",
        ] {
            assert!(!vault.join(escaped).exists(), "{escaped}");
        }
        assert_eq!(
            std::fs::read_to_string(vault.join("Notes/Background.md")).unwrap(),
            "# Background\n"
        );
        assert_eq!(
            std::fs::read_to_string(vault.join("plans/launch/out/Draft text.md")).unwrap(),
            "x"
        );
        assert_eq!(status_of(&vault.join("plans/launch"), "Send.md"), "done");
    }
    assert!(!shared.join("plans/launch/.planvault/run.lock").exists());

    // The folder run as a vault of its own meanwhile (this test's process
    // stands in for it) holds the folder's lock: the submission is refused
    // and gives the vault's lock back.
    let folder_lock = shared.join("plans/launch/.planvault/run.lock");
    let host = planvault_runner::native::host_name();
    std::fs::create_dir_all(folder_lock.parent().unwrap()).unwrap();
    std::fs::write(
        &folder_lock,
        format!("pid={}\nhost={host}\n", std::process::id()),
    )
    .unwrap();
    let refused = submit(
        &server,
        "folder",
        &shared.join("plans/launch"),
        &stub,
        &["--run", "again", "--fresh", "--wait"],
    );
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains(&format!("process {} on {host}", std::process::id()))
            && text(&refused).contains("delete plans/launch/.planvault/run.lock"),
        "{}",
        text(&refused)
    );
    assert!(!shared.join(".planvault/run.lock").exists());
}

/// A repository's config is trusted as the repository, branch and folder
/// it is checked out from (each submission's checkout is new): one that
/// starts a server is refused before anything reaches the cluster, unless
/// `--trust-config`.
#[test]
fn a_git_vaults_config_that_starts_a_server_is_refused_before_submitting() {
    let dir = tempfile::tempdir().unwrap();
    let seed = example_vault(&dir.path().join("seed"));
    std::fs::write(
        seed.join(".planvault/config.toml"),
        "[mcp.servers.files]\ncommand = \"npx\"\nargs = [\"server-filesystem\"]\n",
    )
    .unwrap();
    let url = git_remote(dir.path(), "trust", &seed);
    // No cluster listens here: a submission that got past the trust
    // fails to connect instead.
    let submit = |extra: &[&str]| {
        planvault()
            .args(["submit", "--git", &url, "--vault-dir", "plans"])
            .args(["--temporal", "127.0.0.1:9", "--query", QUERY])
            .args(["--endpoint", "http://127.0.0.1:9/v1"])
            .args(extra)
            .env("PLANVAULT_CONFIG_HOME", dir.path().join("home"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = submit(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(
            "  - starts the MCP server `files`: `npx server-filesystem`\nand it is not trusted, so nothing ran.\n  hint: read it; if you would run it as your own code, pass --trust-config"
        ),
        "{}",
        text(&out)
    );
    let out = submit(&["--trust-config"]);
    assert!(!text(&out).contains("not trusted"), "{}", text(&out));
    assert!(!out.status.success());
}

/// The model writes the note every time, refuses the first publish (a
/// bad key: the run stops resumably) and publishes after.
fn publish_refused_once() -> Stub {
    Stub::start(
        Script {
            replies: vec![
                Reply {
                    times: Some(0),
                    ..Reply::when("Step: Write the note", "A fine note.")
                },
                Reply {
                    status: 401,
                    ..Reply::when("Step: Publish the note", "bad key")
                },
                Reply {
                    times: Some(0),
                    ..Reply::when("Step: Publish the note", "Published as #7.")
                },
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap()
}

/// How many of `stub`'s requests were for `step`.
fn asked(stub: &Stub, step: &str) -> usize {
    stub.requests()
        .iter()
        .filter(|r| r.text().contains(step))
        .count()
}

/// A vault copied with its run's journal, which holds a person's approval
/// taken on another machine: `submit` starts nothing until the person
/// takes it as given (`planvault trust` here); and a decision written into
/// the journal after the submission is refused by the worker, naming it.
#[test]
fn a_copied_vaults_journaled_approval_is_submitted_only_once_the_person_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let vault = human_gate_vault(dir.path());
    let stub = publish_refused_once();
    let publishes = || asked(&stub, "Step: Publish the note");
    let state = |name: &str| dir.path().join(name);
    // Decided on the first machine, and the publish refused: the journal
    // holds the approval, `publish` is active.
    let here = |extra: &[&str]| {
        planvault()
            .arg("run")
            .arg(&vault)
            .args(["--query", QUERY, "--endpoint", &stub.base_url()])
            .args(["--model", "stub-model", "--autonomy", "ask"])
            .args(extra)
            .env("PLANVAULT_API_KEY", SECRET)
            .env("XDG_STATE_HOME", state("here"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    assert_eq!(here(&[]).status.code(), Some(4));
    let out = here(&["--decide", "approve=publish"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let journal = std::fs::read_to_string(vault.join("00_plan-trace/journal.jsonl")).unwrap();
    let refused = publishes();

    let _worker = start_worker(&server, "taken");
    // Submitted by a person whose decisions record is in `state`.
    let submit_as = |vault: &Path, queue: &str, state: &Path, extra: &[&str]| {
        planvault()
            .env("PLANVAULT_API_KEY", SECRET)
            .env("XDG_STATE_HOME", state)
            .args(["submit", "--trust-config"])
            .arg(vault)
            .args(["--temporal", &server.address(), "--task-queue", queue])
            .args(["--query", QUERY, "--endpoint", &stub.base_url()])
            .args(["--model", "stub-model", "--autonomy", "ask"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };

    // Elsewhere: nothing is submitted, and the approval is named.
    let cloned = dir.path().join("cloned");
    copy_dir(&vault, &cloned);
    let out = submit_as(&cloned, "taken", &state("elsewhere"), &["--wait"]);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("00_plan-trace/journal.jsonl holds decisions no run here took; resuming takes them as given:\n  - line ")
            && said.contains(": approve#1:human approved (publish)\n  hint: nothing was submitted;"),
        "{said}"
    );
    assert!(!said.contains("submitted planvault"), "{said}");
    assert_eq!(publishes(), refused);
    assert_eq!(status_of(&cloned, "publish.md"), "active");

    // Taken ahead with `planvault trust`: submitted, and the run ends.
    let trusted = planvault()
        .arg("trust")
        .arg(&cloned)
        .env("XDG_STATE_HOME", state("elsewhere"))
        .env("PLANVAULT_CONFIG_HOME", state("elsewhere-config"))
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", text(&trusted));
    let out = submit_as(&cloned, "taken", &state("elsewhere"), &["--wait"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(status_of(&cloned, "publish.md"), "done");
    assert_eq!(publishes(), refused + 1);

    // Written into the journal after the submission (no worker on its
    // queue yet): the worker goes past no decision the submission lacks.
    let late = dir.path().join("late");
    copy_dir(&vault, &late);
    let journal_file = late.join("00_plan-trace/journal.jsonl");
    let cut = journal
        .find("\"approve#1:human\"")
        .and_then(|at| journal[..at].rfind('\n'))
        .map(|at| at + 1)
        .expect("the approval is journaled");
    std::fs::write(&journal_file, &journal[..cut]).unwrap();
    let out = submit_as(&late, "late", &state("late"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let id = submitted_id(&out);
    std::fs::write(&journal_file, &journal).unwrap();
    let _late_worker = start_worker(&server, "late");
    let target = target(&server, "late");
    let failed = match planvault_temporal::client::wait(&target, &id) {
        Ok(state) => state.failed.unwrap_or_default(),
        Err(e) => e.to_string(),
    };
    assert!(
        failed.contains("holds decisions no run here took")
            && failed.contains(": approve#1:human approved (publish)"),
        "{failed}"
    );
    assert_eq!(publishes(), refused + 1, "nothing ran past it");
    assert_eq!(status_of(&late, "publish.md"), "active");
    // Listed with why, and what to do.
    let listed = runs(&server);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(&format!("{id}\tfailed\t"))
                && l.contains("holds decisions no run here took")
                && l.ends_with("(submit it again to resume)")),
        "{listed}"
    );

    // Taken now, the same run is submitted again and resumes to its end,
    // as a failed run may be.
    let trusted = planvault()
        .arg("trust")
        .arg(&late)
        .env("XDG_STATE_HOME", state("late"))
        .env("PLANVAULT_CONFIG_HOME", state("late-config"))
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", text(&trusted));
    let out = submit_as(&late, "late", &state("late"), &["--wait"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(submitted_id(&out), id);
    assert_eq!(status_of(&late, "publish.md"), "done");
}

/// A run its endpoint stopped (a refused key) ends as `planvault run` ends
/// (exit 5, resumable), and submitting the same run again resumes it from
/// the vault, the step done before not asked again.
#[test]
fn a_run_its_endpoint_stopped_is_submitted_again_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(
        vault.join("write.md"),
        "---\ntype: start\n---\n# Write the note\n\n## Next\n- [[publish]]\n",
    )
    .unwrap();
    std::fs::write(vault.join("publish.md"), "# Publish the note\n").unwrap();
    let stub = publish_refused_once();
    let worker = start_worker(&server, "stopped");
    let out = submit(&server, "stopped", &vault, &stub, &["--wait"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    assert!(text(&out).contains("run again to resume"), "{}", text(&out));
    let id = submitted_id(&out);
    assert_eq!(
        ["write.md", "publish.md"].map(|n| status_of(&vault, n)),
        ["done", "active"]
    );
    // Listed as failed, and why: it stopped, to be resumed. The reason is
    // the cluster's, so it is told with no worker up to ask.
    drop(worker);
    let stopped = format!("{id}\tfailed\tinterrupted at publish: ");
    let listed = runs(&server);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(&stopped) && l.ends_with("(run again to resume)")),
        "{listed}"
    );

    let _worker = start_worker(&server, "stopped");
    let again = submit(&server, "stopped", &vault, &stub, &["--wait"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(submitted_id(&again), id);
    assert_eq!(status_of(&vault, "publish.md"), "done");
    assert_eq!(
        (
            asked(&stub, "Step: Write the note"),
            asked(&stub, "Step: Publish the note")
        ),
        (1, 2),
        "the write is not asked again"
    );
    // The earlier run of that name is still listed with its own ending.
    let listed = runs(&server);
    let lines: Vec<&str> = listed.lines().filter(|l| l.starts_with(&id)).collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{id}\tcompleted\t"))),
        "{listed}"
    );
    assert!(lines.iter().any(|l| l.starts_with(&stopped)), "{listed}");
}

/// What `planvault runs` prints.
fn runs(server: &Server) -> String {
    let out = planvault()
        .args(["runs", "--temporal", &server.address()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A gate decided with `planvault decide`, then the run stopped (its
/// endpoint refused the publish): submitted again, the run resumes past
/// the decision without asking about it, as `planvault run` resumes past
/// its own. The decision was journaled on the cluster, not recorded on
/// the submitter's machine; the earlier run's state says it took it.
#[test]
fn a_decision_made_on_the_cluster_is_not_asked_about_when_the_run_is_submitted_again() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let vault = human_gate_vault(dir.path());
    let stub = publish_refused_once();
    let _worker = start_worker(&server, "decided");
    let state = dir.path().join("state");
    let submit_here = |extra: &[&str]| {
        planvault()
            .env("PLANVAULT_API_KEY", SECRET)
            .env("XDG_STATE_HOME", &state)
            .args(["submit", "--trust-config"])
            .arg(&vault)
            .args(["--temporal", &server.address(), "--task-queue", "decided"])
            .args(["--query", QUERY, "--endpoint", &stub.base_url()])
            .args(["--model", "stub-model", "--autonomy", "ask"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = submit_here(&[]);
    assert!(out.status.success(), "{}", text(&out));
    let id = submitted_id(&out);
    let deadline = Instant::now() + Duration::from_secs(60);
    let at_gate = || {
        std::fs::read_to_string(vault.join("approve.md"))
            .unwrap_or_default()
            .contains("status: active")
    };
    while !at_gate() {
        assert!(Instant::now() < deadline, "the run never reached the gate");
        std::thread::sleep(Duration::from_millis(100));
    }
    let decided = decide(&server, &id, "approve=publish");
    assert!(decided.status.success(), "{}", text(&decided));
    let target = target(&server, "decided");
    let ended = planvault_temporal::client::wait(&target, &id).unwrap();
    assert!(
        matches!(ended.finished, Some(FinishReason::Interrupted { .. })),
        "{ended:?}"
    );
    assert_eq!(status_of(&vault, "publish.md"), "active");

    let again = submit_here(&["--wait"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(submitted_id(&again), id);
    assert_eq!(status_of(&vault, "publish.md"), "done");
    assert_eq!(asked(&stub, "Step: Publish the note"), 2);
}
