//! planvault on Temporal across workers: the Temporal CLI's dev server
//! (testkit/temporal-dev), real `planvault worker` processes, runs submitted
//! with `planvault submit`, and the scripted model (testkit/llm-stub) whose
//! request log counts every model call. Each Temporal vault is compared byte
//! for byte (run ids and times normalised) with the same plan run by a plain
//! `planvault run`.
//!
//! Without the Temporal CLI the tests skip with a notice (they fail when `CI`
//! is set): `scripts/setup` installs it. The benchmark at the end runs with
//! `--ignored` (BENCHMARKS.md).

// The Temporal tests need the `temporal` feature; the plain-run baselines
// (what they compare with) run without it.
#![cfg_attr(not(feature = "temporal"), allow(dead_code, unused_imports))]
// The tests report their timings and the benchmark its figures.
#![allow(clippy::print_stderr)]

use llm_stub::{Reply, Script, Stub};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
#[cfg(feature = "temporal")]
use temporal_dev::DevServer;

const SECRET: &str = "sk-test-never-written-0123456789";
const BIN: &str = env!("CARGO_BIN_EXE_planvault");

// --- the generated vault ----------------------------------------------------

/// The nodes of the generated vault, in the order a run walks them: a start,
/// a step whose way on is judged by the model, the judged edge's target.
const GATHER: &str = "Gather the facts";
const ANALYSE: &str = "Analyse the facts";
const PUBLISH: &str = "Publish the summary";

/// What identifies each model call in a request's text.
fn call_needles() -> [(&'static str, String); 4] {
    [
        ("gather", format!("Step: {GATHER}")),
        ("analyse", format!("Step: {ANALYSE}")),
        ("judge", format!("The step \"{ANALYSE}\" just finished")),
        ("publish", format!("Step: {PUBLISH}")),
    ]
}

/// The vault's `.planvault/config.toml`: the stub as its model, then `extra`.
fn write_config(dir: &Path, stub: &Stub, extra: &str) {
    std::fs::create_dir_all(dir.join(".planvault")).unwrap();
    std::fs::write(
        dir.join(".planvault/config.toml"),
        format!(
            "[default]\nendpoint = \"{}\"\nmodel = \"stub-model\"\n{extra}",
            stub.base_url()
        ),
    )
    .unwrap();
}

/// A copy of the generated vault at `dir`, its model the stub.
fn write_vault(dir: &Path, stub: &Stub) {
    write_config(dir, stub, "\n[http]\nretry_base_ms = 20\nattempts = 3\n");
    std::fs::write(
        dir.join("gather.md"),
        format!("---\ntype: start\nstatus: pending\n---\n# {GATHER}\n\nList what is known about the ticket.\n\n## Next\n- [[analyse]]\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("analyse.md"),
        format!("---\ntype: step\nstatus: pending\nmax_visits: 2\n---\n# {ANALYSE}\n\nWeigh the facts [[gather]] listed.\n\n## Next\n- ready -> [[publish]]\n- needs more facts -> [[gather]]\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("publish.md"),
        format!("---\ntype: step\nstatus: pending\n---\n# {PUBLISH}\n\nWrite the summary for the team.\n"),
    )
    .unwrap();
}

/// The model's answers: instant unless `slow_analyse` holds the first
/// `n` analyse calls back for that long.
fn script(slow_analyse: Option<(u32, u64)>) -> Script {
    let always = |contains: &str, content: &str| Reply {
        times: Some(0),
        ..Reply::when(contains, content)
    };
    let needles = call_needles();
    let mut replies = Vec::new();
    if let Some((n, delay_ms)) = slow_analyse {
        replies.push(Reply {
            times: Some(n),
            delay_ms,
            ..Reply::when(&needles[1].1, "The facts suffice.")
        });
    }
    replies.extend([
        always(&needles[0].1, "Three facts: A, B and C."),
        always(&needles[1].1, "The facts suffice."),
        always(&needles[2].1, "1. YES - they suffice\n2. NO"),
        always(&needles[3].1, "Summary: A, B and C hold."),
    ]);
    Script {
        replies,
        default: None,
    }
}

fn query(run: usize) -> String {
    format!("ticket {run:03}")
}

/// The model calls per run and node, from the stub's request log.
fn calls_by_run(stub: &Stub) -> BTreeMap<(String, &'static str), usize> {
    let mut out = BTreeMap::new();
    for request in stub.requests() {
        let text = request.text();
        let run = text
            .lines()
            .find_map(|l| l.strip_prefix("The run's query: "))
            .unwrap_or("<no query>")
            .to_string();
        let node = call_needles()
            .into_iter()
            .find(|(_, needle)| text.contains(needle.as_str()))
            .map(|(name, _)| name)
            .unwrap_or("<unknown>");
        *out.entry((run, node)).or_insert(0) += 1;
    }
    out
}

/// The calls a plain `planvault run` of the generated vault makes, per node.
fn plain_calls(stub: &Stub, dir: &Path) -> BTreeMap<&'static str, usize> {
    let vault = dir.join("plain-calls");
    write_vault(&vault, stub);
    let before = stub.requests().len();
    let out = plain_run(&vault, "ticket plain", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut calls = BTreeMap::new();
    for request in &stub.requests()[before..] {
        let text = request.text();
        let node = call_needles()
            .into_iter()
            .find(|(_, needle)| text.contains(needle.as_str()))
            .map(|(name, _)| name)
            .unwrap_or("<unknown>");
        *calls.entry(node).or_insert(0) += 1;
    }
    calls
}

// --- the processes ----------------------------------------------------------

/// The built `planvault` with the key in its environment (only there).
fn planvault_command() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("OPENAI_API_KEY")
        .env("PLANVAULT_API_KEY", SECRET)
        .stdin(Stdio::null());
    cmd
}

fn plain_run(vault: &Path, query: &str, extra: &[&str]) -> Output {
    planvault_command()
        .args(["run", "--trust-config"])
        .arg(vault)
        .args(["--query", query])
        .args(extra)
        .output()
        .unwrap()
}

/// A `planvault worker` process; SIGKILLed on drop.
#[cfg(feature = "temporal")]
struct Worker {
    child: Child,
    log: PathBuf,
}

#[cfg(feature = "temporal")]
impl Worker {
    fn start(server: &DevServer, queue: &str, log: PathBuf) -> Worker {
        let file = std::fs::File::create(&log).unwrap();
        let child = planvault_command()
            .args([
                "worker",
                "--temporal",
                &server.address(),
                "--task-queue",
                queue,
            ])
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap();
        Worker { child, log }
    }

    /// SIGKILL: the process gets no chance to finish anything.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn assert_alive(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("the worker exited ({status}):\n{}", self.log());
        }
    }
}

#[cfg(feature = "temporal")]
impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(feature = "temporal")]
fn planvault(server: &DevServer, args: &[&str]) -> Output {
    planvault_command()
        .args(args)
        .args(["--temporal", &server.address()])
        .output()
        .unwrap()
}

#[cfg(feature = "temporal")]
fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The Temporal tests run one at a time: each has its own server and
/// workers, and the kill test's timing must not share 2 cores with the rest.
#[cfg(feature = "temporal")]
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `planvault submit`: starts the run, returns its workflow id (what
/// `decide` takes).
#[cfg(feature = "temporal")]
fn submit(server: &DevServer, vault: &Path, queue: &str, query: &str, extra: &[&str]) -> String {
    let vault = vault.to_str().unwrap();
    let mut args = vec![
        "submit",
        vault,
        "--trust-config",
        "--task-queue",
        queue,
        "--query",
        query,
    ];
    args.extend(extra);
    let printed = ok(planvault(server, &args), "submit");
    printed
        .trim()
        .strip_prefix("submitted ")
        .unwrap_or_else(|| panic!("submit printed {printed:?}"))
        .to_string()
}

/// Workflow executions by status, from the server (the `temporal` CLI).
#[cfg(feature = "temporal")]
fn count_workflows(server: &DevServer, status: &str) -> usize {
    let out = server
        .cli()
        .args([
            "workflow",
            "count",
            "--query",
            &format!("ExecutionStatus='{status}'"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "temporal workflow count: {text}");
    text.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .next()
        .unwrap_or(0)
}

/// Waits until `n` workflows completed, `stopped` stopped short (a run
/// that stops resumably fails its workflow, so it may be submitted again)
/// and none runs, failing on any other failed one or a dead worker.
#[cfg(feature = "temporal")]
fn wait_ended(
    server: &DevServer,
    workers: &mut [&mut Worker],
    (n, stopped): (usize, usize),
    within: Duration,
) {
    let deadline = Instant::now() + within;
    loop {
        for worker in workers.iter_mut() {
            worker.assert_alive();
        }
        let completed = count_workflows(server, "Completed");
        let failed = count_workflows(server, "Failed") + count_workflows(server, "Terminated");
        if failed > stopped {
            // Which, and why: a run that stops short fails its workflow.
            let listed = server
                .cli()
                .args(["workflow", "list", "--query", "ExecutionStatus='Failed'"])
                .output()
                .unwrap();
            let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout)
                .split_whitespace()
                .filter(|w| w.starts_with("planvault-"))
                .map(str::to_string)
                .collect();
            let why: Vec<String> = ids
                .iter()
                .map(|id| {
                    let shown = server
                        .cli()
                        .args(["workflow", "show", "--workflow-id", id])
                        .output()
                        .unwrap();
                    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
                    let tail: String = text.chars().rev().take(1500).collect();
                    format!("{id}: …{}", tail.chars().rev().collect::<String>())
                })
                .collect();
            panic!("{failed} run(s) failed:\n{}", why.join("\n"));
        }
        if completed >= n && failed == stopped && count_workflows(server, "Running") == 0 {
            assert_eq!(completed, n);
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{completed} of {n} runs completed after {} s",
            within.as_secs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

// --- comparing vaults ---------------------------------------------------------

/// Every file under `dir` (relative path → bytes), `.planvault/` left out
/// (the run lock and config are the host's, not the plan's).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".planvault" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// A vault's files with what differs between two runs of one plan replaced:
/// the run id, timestamps, and the hashes that chain them.
fn normalised(dir: &Path) -> BTreeMap<String, String> {
    let run_id = std::fs::read_to_string(dir.join("00_plan-trace/run-id"))
        .map(|id| id.trim().to_string())
        .unwrap_or_default();
    files(dir)
        .into_iter()
        .map(|(path, bytes)| {
            let mut text =
                String::from_utf8(bytes).unwrap_or_else(|_| panic!("{path} is not UTF-8"));
            if !run_id.is_empty() {
                text = text.replace(&run_id, "<run-id>");
                text = hide_hex_after(&text, "<run-id>-");
            }
            (path, normalise_text(&text))
        })
        .collect()
}

/// `marker` followed by hex digits (a receipt id's hash of its run) keeps
/// the marker, the digits become `<hash>`.
fn hide_hex_after(text: &str, marker: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let after = at + marker.len();
        out.push_str(&rest[..after]);
        let hex = rest[after..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        if hex > 0 {
            out.push_str("<hash>");
        }
        rest = &rest[after + hex..];
    }
    out.push_str(rest);
    out
}

/// Timestamps (RFC 3339, with or without fractions) and 64-hex hashes.
fn normalise_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(len) = timestamp_at(&bytes[i..]) {
            out.push_str("<time>");
            i += len;
        } else if i + 64 <= bytes.len()
            && bytes[i..i + 64].iter().all(u8::is_ascii_hexdigit)
            && (i == 0 || !bytes[i - 1].is_ascii_hexdigit())
            && bytes.get(i + 64).is_none_or(|b| !b.is_ascii_hexdigit())
        {
            out.push_str("<hash>");
            i += 64;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of an RFC 3339 timestamp starting at `b` (YYYY-MM-DDTHH:MM:SS,
/// optional fraction, optional Z or offset).
fn timestamp_at(b: &[u8]) -> Option<usize> {
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: u8| b.get(i) == Some(&c);
    let shape = [0, 1, 2, 3].iter().all(|&i| digit(i))
        && is(4, b'-')
        && digit(5)
        && digit(6)
        && is(7, b'-')
        && digit(8)
        && digit(9)
        && (is(10, b'T') || is(10, b' '))
        && digit(11)
        && digit(12)
        && is(13, b':')
        && digit(14)
        && digit(15)
        && is(16, b':')
        && digit(17)
        && digit(18);
    if !shape {
        return None;
    }
    let mut len = 19;
    if is(len, b'.') {
        len += 1;
        while digit(len) {
            len += 1;
        }
    }
    if is(len, b'Z') {
        len += 1;
    } else if (is(len, b'+') || is(len, b'-'))
        && digit(len + 1)
        && digit(len + 2)
        && is(len + 3, b':')
    {
        len += 6;
    }
    Some(len)
}

/// Asserts two vaults hold the same files with the same normalised text,
/// naming the first difference.
fn assert_same_vault(temporal: &Path, plain: &Path) {
    let (a, b) = (normalised(temporal), normalised(plain));
    let paths_a: BTreeSet<_> = a.keys().collect();
    let paths_b: BTreeSet<_> = b.keys().collect();
    assert_eq!(
        paths_a,
        paths_b,
        "the same files in {} and {}",
        temporal.display(),
        plain.display()
    );
    for (path, text) in &a {
        assert_eq!(
            text,
            &b[path],
            "{path} differs from the plain run's ({})",
            temporal.display()
        );
    }
}

#[test]
fn normalising_replaces_times_and_hashes_only() {
    assert_eq!(
        normalise_text("at 2026-12-02T16:11:52.123Z and 2026-12-02T16:11:52+01:00, 2026-12-02"),
        "at <time> and <time>, 2026-12-02"
    );
    let hash = "ab".repeat(32);
    assert_eq!(normalise_text(&format!("prev {hash}.")), "prev <hash>.");
    assert_eq!(
        normalise_text(&format!("{hash}0")),
        format!("{hash}0"),
        "65 hex digits are no hash"
    );
    assert_eq!(
        hide_hex_after(
            "PV-RECEIPT-<run-id>-3303c60244f1\nrun <run-id>-",
            "<run-id>-"
        ),
        "PV-RECEIPT-<run-id>-<hash>\nrun <run-id>-"
    );
}

/// What the Temporal tests compare with: a plain run of the generated vault
/// calls the model once per node and judges once, and two plain runs leave
/// the same files once run ids and times are normalised (an output that
/// differs is caught).
#[test]
fn plain_runs_of_the_generated_vault_are_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let stub = Stub::start(script(None), 0, None).unwrap();
    assert_eq!(
        plain_calls(&stub, dir.path()),
        BTreeMap::from([("analyse", 1), ("gather", 1), ("judge", 1), ("publish", 1)])
    );
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for vault in [&a, &b] {
        write_vault(vault, &stub);
        let out = plain_run(vault, &query(1), &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_ne!(
        std::fs::read(a.join("00_plan-trace/run-id")).unwrap(),
        std::fs::read(b.join("00_plan-trace/run-id")).unwrap()
    );
    assert_same_vault(&a, &b);

    let output = b.join("00_plan-trace/publish.visit-1.md");
    let text = std::fs::read_to_string(&output).unwrap();
    std::fs::write(&output, text.replace("A, B and C hold", "A and B hold")).unwrap();
    let caught = std::panic::catch_unwind(|| assert_same_vault(&a, &b));
    assert!(caught.is_err(), "a changed output is a difference");
}

// --- the Temporal tests -------------------------------------------------------

/// Two workers, 50 runs: every run completes; every model call is made
/// exactly once (per run and node, the calls a plain run makes); every
/// vault ends as a plain run leaves it.
#[cfg(feature = "temporal")]
#[test]
fn fifty_runs_on_two_workers_complete_with_each_model_call_made_once() {
    let _serial = one_at_a_time();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stub = Stub::start(script(None), 0, Some(dir.path().join("model-calls.jsonl"))).unwrap();
    let expected = plain_calls(&stub, dir.path());
    assert_eq!(
        expected.values().sum::<usize>(),
        4,
        "a plain run calls the model once per node and judges once: {expected:?}"
    );
    let plain_requests = stub.requests().len();

    let queue = "fifty";
    let mut a = Worker::start(&server, queue, dir.path().join("worker-a.log"));
    let mut b = Worker::start(&server, queue, dir.path().join("worker-b.log"));
    const RUNS: usize = 50;
    let started = Instant::now();
    for run in 0..RUNS {
        let vault = dir.path().join(format!("vault-{run:03}"));
        write_vault(&vault, &stub);
        submit(&server, &vault, queue, &query(run), &[]);
    }
    wait_ended(
        &server,
        &mut [&mut a, &mut b],
        (RUNS, 0),
        Duration::from_secs(600),
    );
    eprintln!(
        "{RUNS} runs on two workers in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // The stub's log file holds every call (the plain run's first).
    let logged = std::fs::read_to_string(dir.path().join("model-calls.jsonl")).unwrap();
    assert_eq!(logged.lines().count(), plain_requests + RUNS * 4);
    let calls = calls_by_run(&stub);
    for run in 0..RUNS {
        for (node, n) in &expected {
            assert_eq!(
                calls.get(&(query(run), *node)).copied().unwrap_or(0),
                *n,
                "{node} of {} was called once, as in a plain run",
                query(run)
            );
        }
    }

    // Each vault as a plain run of its query leaves it.
    let plain_stub = Stub::start(script(None), 0, None).unwrap();
    for run in [0, RUNS / 2, RUNS - 1] {
        let plain = dir.path().join(format!("plain-{run:03}"));
        write_vault(&plain, &stub);
        let out = plain_run(&plain, &query(run), &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_same_vault(&dir.path().join(format!("vault-{run:03}")), &plain);
    }
    drop(plain_stub);
    for run in 0..RUNS {
        let vault = dir.path().join(format!("vault-{run:03}"));
        for note in ["gather.md", "analyse.md", "publish.md"] {
            let text = std::fs::read_to_string(vault.join(note)).unwrap();
            assert!(text.contains("status: done"), "{note} of run {run}: {text}");
        }
    }
}

/// SIGKILL one of two workers while every run waits for its analyse call:
/// the runs finish on the other; a call completed before the kill is never
/// made again (only the calls in flight at the kill may be); every note ends
/// as a plain run leaves it, and a person's edit made during the run stays.
#[cfg(feature = "temporal")]
#[test]
fn a_worker_killed_mid_run_loses_no_step_and_no_note_text() {
    let _serial = one_at_a_time();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    const RUNS: usize = 10;
    const HOLD_MS: u64 = 20_000;
    // The run whose note a person edits mid-run.
    const EDITED: usize = 3;
    // Every run's first analyse call is held 20 s: all runs are then in
    // flight at the same place when the worker dies, and everything before it
    // has completed (a workflow schedules analyse only after gather's result
    // is recorded).
    let stub = Stub::start(
        script(Some((RUNS as u32, HOLD_MS))),
        0,
        Some(dir.path().join("model-calls.jsonl")),
    )
    .unwrap();
    let queue = "kill";
    let analysing = |stub: &Stub| {
        calls_by_run(stub)
            .iter()
            .filter(|((_, node), _)| *node == "analyse")
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    // When the first held call was seen: the kill must come before its answer.
    let held_since = std::cell::Cell::new(None);
    let wait_analysing = |n: usize, workers: &mut [&mut Worker]| loop {
        let seen = analysing(&stub);
        if seen > 0 && held_since.get().is_none() {
            held_since.set(Some(Instant::now()));
        }
        if seen >= n {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {} of {n} runs reached their analyse call",
            analysing(&stub)
        );
        for worker in workers.iter_mut() {
            worker.assert_alive();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Worker A alone takes the first half (so it surely holds runs when it
    // dies), then B joins.
    let mut a = Worker::start(&server, queue, dir.path().join("worker-a.log"));
    for run in 0..RUNS {
        if run == RUNS / 2 {
            wait_analysing(RUNS / 2, &mut [&mut a]);
        }
        let vault = dir.path().join(format!("vault-{run:03}"));
        write_vault(&vault, &stub);
        submit(&server, &vault, queue, &query(run), &[]);
    }
    let mut b = Worker::start(&server, queue, dir.path().join("worker-b.log"));
    wait_analysing(RUNS, &mut [&mut a, &mut b]);
    let before_kill = calls_by_run(&stub);
    // A person edits the body of a note that is yet to run, in one vault.
    let edited_vault = dir.path().join(format!("vault-{EDITED:03}"));
    let edit = |text: &str| text.replace("for the team.", "for the team, in two lines.");
    let publish = std::fs::read_to_string(edited_vault.join("publish.md")).unwrap();
    std::fs::write(edited_vault.join("publish.md"), edit(&publish)).unwrap();
    assert!(
        held_since.get().unwrap().elapsed() < Duration::from_millis(HOLD_MS - 2_000),
        "too slow: the first held answers were (nearly) sent before the kill"
    );
    a.kill();

    // The edited run stops where its note changed on disk, resumably, as
    // the plain run with the same edit does.
    wait_ended(
        &server,
        &mut [&mut b],
        (RUNS - 1, 1),
        Duration::from_secs(300),
    );

    // The calls that completed before the kill (every gather) ran once; the
    // analyse calls in flight at the kill at most twice; the rest once.
    let calls = calls_by_run(&stub);
    for run in 0..RUNS {
        let q = query(run);
        assert_eq!(
            before_kill.get(&(q.clone(), "gather")),
            Some(&1),
            "{q}: gather before the kill"
        );
        assert_eq!(
            calls.get(&(q.clone(), "gather")),
            Some(&1),
            "{q}: gather is not repeated"
        );
        let analysed = calls.get(&(q.clone(), "analyse")).copied().unwrap_or(0);
        assert!((1..=2).contains(&analysed), "{q}: analyse {analysed} times");
        if run == EDITED {
            continue; // as the plain run with the same edit: below
        }
        assert_eq!(
            calls.get(&(q.clone(), "judge")),
            Some(&1),
            "{q}: judged once"
        );
        assert_eq!(
            calls.get(&(q.clone(), "publish")),
            Some(&1),
            "{q}: published once"
        );
    }
    let repeated = (0..RUNS)
        .filter(|&run| calls.get(&(query(run), "analyse")) == Some(&2))
        .count();
    // At least worker A's first five in-flight calls (B may have picked up
    // none of the others) were made again, by B.
    assert!(
        repeated >= RUNS / 2,
        "{repeated} of worker A's in-flight calls were made again"
    );

    // No note text lost: every vault is what a plain run leaves; the edited
    // one what a plain run leaves with the same edit at the same point
    // (while its analyse call is out).
    let plain_stub = Stub::start(script(None), 0, None).unwrap();
    for run in 0..RUNS {
        let plain = dir.path().join(format!("plain-{run:03}"));
        if run == EDITED {
            let held = Stub::start(script(Some((1, 1_500))), 0, None).unwrap();
            write_vault(&plain, &held);
            let child = planvault_command()
                .args(["run", "--trust-config"])
                .arg(&plain)
                .args(["--query", &query(run)])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            while calls_by_run(&held)
                .keys()
                .all(|(_, node)| *node != "analyse")
            {
                assert!(Instant::now() < deadline, "the plain run never analysed");
                std::thread::sleep(Duration::from_millis(10));
            }
            let text = std::fs::read_to_string(plain.join("publish.md")).unwrap();
            std::fs::write(plain.join("publish.md"), edit(&text)).unwrap();
            child.wait_with_output().unwrap();
            // The Temporal run made the calls this plain run made (the
            // terminal's run stops at the edited note: no blind write).
            for ((_, node), n) in calls_by_run(&held) {
                if node == "judge" || node == "publish" {
                    assert_eq!(
                        calls.get(&(query(run), node)),
                        Some(&n),
                        "{node} of the edited run as in the plain run"
                    );
                }
            }
            assert_eq!(
                calls_by_run(&held)
                    .keys()
                    .any(|(_, node)| *node == "publish"),
                calls.contains_key(&(query(run), "publish")),
                "published in both or neither"
            );
        } else {
            write_vault(&plain, &plain_stub);
            let out = plain_run(&plain, &query(run), &[]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_same_vault(&dir.path().join(format!("vault-{run:03}")), &plain);
    }
    assert!(
        std::fs::read_to_string(edited_vault.join("publish.md"))
            .unwrap()
            .contains("for the team, in two lines."),
        "the person's edit survives"
    );
}

// --- a human gate -------------------------------------------------------------

fn write_gate_vault(dir: &Path, stub: &Stub) {
    write_config(dir, stub, "");
    std::fs::write(
        dir.join("write.md"),
        "---\ntype: start\nstatus: pending\n---\n# Write the note\n\n## Next\n- [[approve]]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("approve.md"),
        "---\ntype: human\nstatus: pending\n---\n# Approve the note\n\nIs it good to publish?\n\n## Next\n- publish -> [[publish]]\n- rewrite -> [[write]]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("publish.md"),
        "---\ntype: step\nstatus: pending\n---\n# Publish the note\n",
    )
    .unwrap();
}

fn gate_script() -> Script {
    Script {
        replies: vec![
            Reply::when("Step: Write the note", "A fine note."),
            Reply::when("Step: Publish the note", "Published as #7."),
        ],
        default: None,
    }
}

fn status_of(vault: &Path, note: &str) -> String {
    std::fs::read_to_string(vault.join(note))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("status: "))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The one workflow on the server: its id and `temporal workflow describe`.
#[cfg(feature = "temporal")]
fn describe_only_workflow(server: &DevServer) -> (String, serde_json::Value) {
    let out = server
        .cli()
        .args(["workflow", "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = list.as_array().expect("a JSON array of workflows");
    assert_eq!(list.len(), 1, "one run: {list:?}");
    let id = list[0]["execution"]["workflowId"]
        .as_str()
        .unwrap()
        .to_string();
    let out = server
        .cli()
        .args(["workflow", "describe", "--workflow-id", &id, "-o", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (id, serde_json::from_slice(&out.stdout).unwrap())
}

/// A run at a human gate holds no worker: no activity is pending while it
/// waits, and it survives every worker being killed. `planvault decide`
/// (with a new worker) resumes it, and the vault ends as `planvault run
/// --autonomy ask` then `--decide` with the same decision leaves it.
#[cfg(feature = "temporal")]
#[test]
fn a_run_waits_for_a_person_without_a_worker_and_decide_resumes_it() {
    let _serial = one_at_a_time();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stub = Stub::start(gate_script(), 0, None).unwrap();
    let vault = dir.path().join("vault");
    write_gate_vault(&vault, &stub);
    let queue = "gate";
    let mut first = Worker::start(&server, queue, dir.path().join("worker-1.log"));
    let run = submit(
        &server,
        &vault,
        queue,
        "the launch note",
        &["--autonomy", "ask"],
    );

    let deadline = Instant::now() + Duration::from_secs(120);
    while status_of(&vault, "approve.md") != "active" {
        assert!(
            Instant::now() < deadline,
            "the run never reached the gate:\n{}",
            first.log()
        );
        first.assert_alive();
        std::thread::sleep(Duration::from_millis(50));
    }
    // Settled at the gate: nothing scheduled, nothing running.
    std::thread::sleep(Duration::from_secs(1));
    let (_, described) = describe_only_workflow(&server);
    assert_eq!(
        described["workflowExecutionInfo"]["status"].as_str(),
        Some("WORKFLOW_EXECUTION_STATUS_RUNNING")
    );
    let pending = described["pendingActivities"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(
        pending, 0,
        "no activity runs while a person decides: {described}"
    );
    let listed = ok(planvault(&server, &["runs"]), "runs");
    assert!(
        listed.contains(&format!("{run}\trunning\twaiting for a person: approve=")),
        "{listed}"
    );

    // No worker at all while it waits; a new one picks it up after.
    first.kill();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        count_workflows(&server, "Running"),
        1,
        "the run outlives its workers"
    );
    let mut second = Worker::start(&server, queue, dir.path().join("worker-2.log"));
    ok(
        planvault(&server, &["decide", &run, "approve=publish:Looks right."]),
        "decide",
    );
    wait_ended(
        &server,
        &mut [&mut second],
        (1, 0),
        Duration::from_secs(120),
    );
    assert_eq!(
        ["write.md", "approve.md", "publish.md"].map(|n| status_of(&vault, n)),
        ["done", "done", "done"]
    );
    assert_eq!(
        stub.requests().len(),
        2,
        "the decision is no model call; nothing ran twice"
    );

    let plain_stub = Stub::start(gate_script(), 0, None).unwrap();
    let plain = dir.path().join("plain");
    write_gate_vault(&plain, &plain_stub);
    let out = plain_run(&plain, "the launch note", &["--autonomy", "ask"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = plain_run(
        &plain,
        "the launch note",
        &[
            "--autonomy",
            "ask",
            "--decide",
            "approve=publish:Looks right.",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The terminal's run ended at the gate and a second process resumed
    // it, which its trace records (numbered on: the entry after it is 3);
    // the Temporal run never ended. Nothing else may differ.
    let trace = plain.join("00_plan-trace/trace.md");
    let text = std::fs::read_to_string(&trace).unwrap();
    let resumed = "---\n\n*resumed by a new run*\n\n## 2. Approve the note (visit 1)\n\n\
                   - node: [[approve]]\n- resumed: the node was active\n- decided by: resume\n\n";
    assert!(text.contains(resumed), "{text}");
    let numbered_on = text
        .replace(resumed, "")
        .replace("\n## 3. ", "\n## 2. ")
        .replace("\n## 4. ", "\n## 3. ");
    std::fs::write(&trace, numbered_on).unwrap();
    assert_same_vault(&vault, &plain);
}

// --- the benchmark (BENCHMARKS.md) -----------------------------------------

/// A chain of `hops` steps, every answer instant.
fn write_chain_vault(dir: &Path, stub: &Stub, hops: usize) {
    write_config(dir, stub, "");
    for hop in 0..hops {
        let kind = if hop == 0 { "start" } else { "step" };
        let next = if hop + 1 < hops {
            format!("\n## Next\n- [[hop-{:02}]]\n", hop + 1)
        } else {
            String::new()
        };
        std::fs::write(
            dir.join(format!("hop-{hop:02}.md")),
            format!("---\ntype: {kind}\nstatus: pending\n---\n# Hop {hop}\n{next}"),
        )
        .unwrap();
    }
}

fn instant_script() -> Script {
    Script {
        replies: Vec::new(),
        default: Some(Reply {
            times: Some(0),
            ..Reply::when("", "Done.")
        }),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs per minute through one and two workers (the generated vault, instant
/// model answers; all runs submitted first, timed from the workers' start to
/// the last completion), and the overhead per hop of a Temporal run over a
/// plain `planvault run` (a 20-step chain, median of 3). Prints the figures.
///
/// `cargo test --release -p planvault --features temporal --test temporal_e2e -- --ignored --nocapture`
#[cfg(feature = "temporal")]
#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn bench_runs_per_minute_and_overhead_per_hop() {
    let _serial = one_at_a_time();
    let Some(server) = DevServer::for_test() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let stub = Stub::start(script(None), 0, None).unwrap();
    let runs: usize = std::env::var("PLANVAULT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);

    // Plain runs, one after another, for the peer figure.
    let started = Instant::now();
    for run in 0..20 {
        let vault = dir.path().join(format!("plain-{run:03}"));
        write_vault(&vault, &stub);
        let out = plain_run(&vault, &query(run), &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let plain_per_min = 20.0 / started.elapsed().as_secs_f64() * 60.0;
    eprintln!("plain `planvault run`, one after another: {plain_per_min:.0} runs/min");

    for workers in [1usize, 2] {
        let queue = format!("bench-{workers}");
        for run in 0..runs {
            let vault = dir.path().join(format!("{queue}-{run:03}"));
            write_vault(&vault, &stub);
            submit(&server, &vault, &queue, &query(run), &[]);
        }
        let before = count_workflows(&server, "Completed");
        let started = Instant::now();
        let mut pool: Vec<Worker> = (0..workers)
            .map(|i| {
                Worker::start(
                    &server,
                    &queue,
                    dir.path().join(format!("{queue}-w{i}.log")),
                )
            })
            .collect();
        let mut refs: Vec<&mut Worker> = pool.iter_mut().collect();
        wait_ended(
            &server,
            &mut refs,
            (before + runs, 0),
            Duration::from_secs(1800),
        );
        let elapsed = started.elapsed().as_secs_f64();
        eprintln!(
            "{workers} worker(s): {runs} runs in {elapsed:.1} s = {:.0} runs/min",
            runs as f64 / elapsed * 60.0
        );
    }

    // Overhead per hop: one 20-hop run, plain and on Temporal (one worker).
    const HOPS: usize = 20;
    let chain_stub = Stub::start(instant_script(), 0, None).unwrap();
    let queue = "bench-hops";
    let mut worker = Worker::start(&server, queue, dir.path().join("hops-worker.log"));
    let (mut plain, mut temporal) = (Vec::new(), Vec::new());
    for round in 0..3 {
        let vault = dir.path().join(format!("chain-plain-{round}"));
        write_chain_vault(&vault, &chain_stub, HOPS);
        let started = Instant::now();
        let out = plain_run(&vault, "", &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        plain.push(started.elapsed().as_secs_f64());

        let vault = dir.path().join(format!("chain-temporal-{round}"));
        write_chain_vault(&vault, &chain_stub, HOPS);
        let before = count_workflows(&server, "Completed");
        let started = Instant::now();
        submit(&server, &vault, queue, &format!("chain {round}"), &[]);
        // Timed to the last hop's status (polling the note is cheaper than
        // asking the server); then the workflow must have completed.
        let last = format!("hop-{:02}.md", HOPS - 1);
        let deadline = Instant::now() + Duration::from_secs(600);
        while status_of(&vault, &last) != "done" {
            assert!(Instant::now() < deadline, "the chain never finished");
            worker.assert_alive();
            std::thread::sleep(Duration::from_millis(5));
        }
        temporal.push(started.elapsed().as_secs_f64());
        wait_ended(
            &server,
            &mut [&mut worker],
            (before + 1, 0),
            Duration::from_secs(60),
        );
    }
    let (plain, temporal) = (median(plain), median(temporal));
    eprintln!(
        "a {HOPS}-hop run: plain {:.0} ms, Temporal {:.0} ms: {:.1} ms overhead per hop",
        plain * 1e3,
        temporal * 1e3,
        (temporal - plain) / HOPS as f64 * 1e3
    );
}
