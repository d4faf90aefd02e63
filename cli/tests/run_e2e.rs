//! `planvault run` end to end: the real binary against the scripted
//! OpenAI-compatible stub on 127.0.0.1 (real HTTP, real SSE), over a copy of
//! the bundled example vault.

use llm_stub::{Reply, Script, Stub};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "sk-test-never-written-0123456789";
mod common;

use common::*;

fn planvault(vault: &Path, stub: &Stub, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planvault"));
    cmd.arg("run").arg(vault).args([
        "--query",
        QUERY,
        "--endpoint",
        &stub.base_url(),
        "--model",
        "stub-model",
    ]);
    cmd.args(extra);
    cmd.env_remove("OPENAI_API_KEY")
        .env("PLANVAULT_API_KEY", SECRET);
    cmd
}

fn run_to_end(vault: &Path, stub: &Stub, extra: &[&str]) -> Output {
    planvault(vault, stub, extra).output().unwrap()
}

/// The run exited 0 (its stderr is the failure message otherwise).
#[track_caller]
fn assert_ran(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn trace(vault: &Path) -> String {
    std::fs::read_to_string(vault.join("00_plan-trace/trace.md")).unwrap()
}

fn count(stub: &Stub, needle: &str) -> usize {
    stub.requests()
        .iter()
        .filter(|r| r.text().contains(needle))
        .count()
}

/// Every file under `dir`, for the "the key is written nowhere" check.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            out.push_str(&all_text(&entry.path()));
        } else {
            out.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry.path()).unwrap(),
            ));
        }
    }
    out
}

#[test]
fn the_example_vault_runs_through_its_loop_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Sent. Message id <42@example>.\n"
    );

    for note in ["draft.md", "review.md", "send.md"] {
        assert_eq!(status_of(&vault, note), "done", "{note}");
    }
    // Only the status bytes changed: the rest of the note is as authored.
    let original = std::fs::read_to_string(example_source().join("review.md")).unwrap();
    assert_eq!(
        std::fs::read_to_string(vault.join("review.md")).unwrap(),
        original.replace("status: pending", "status: done")
    );

    let trace = trace(&vault);
    assert!(trace.starts_with("# Plan trace\n\nQuery: invite the design team\n"));
    let hops: Vec<&str> = trace
        .lines()
        .filter(|l| l.starts_with("## ") || l.starts_with("- took") || l.starts_with("- decided"))
        .collect();
    assert_eq!(
        hops,
        [
            "## 1. Draft the email (visit 1)",
            "- took `next` → [[review]]",
            "- decided by: unconditional",
            "## 2. Review the draft (visit 1)",
            "- took `needs revision` → [[draft]]",
            "- decided by: grid",
            "## 3. Draft the email (visit 2)",
            "- took `next` → [[review]]",
            "- decided by: unconditional",
            "## 4. Review the draft (visit 2)",
            "- took `approved` → [[send]]",
            "- decided by: grid",
            "## 5. Send the email (visit 1)",
            "- decided by: terminal",
        ]
    );
    assert!(
        trace.contains("  > 1. NO - the date is missing\n  > 2. YES - add the date\n"),
        "raw rationale kept"
    );
    let output = std::fs::read_to_string(vault.join("00_plan-trace/draft.visit-2.md")).unwrap();
    assert!(output.contains("Draft two, with the date."));

    // Real streaming, the key sent as a header and written nowhere.
    let requests = stub.requests();
    assert_eq!(requests.len(), 8, "7 answers and one 429");
    assert!(requests
        .iter()
        .all(|r| r.authorized && r.body["stream"] == true && r.body["model"] == "stub-model"));
    assert!(!all_text(&vault).contains(SECRET));
    assert!(!stderr.contains(SECRET) && !String::from_utf8_lossy(&out.stdout).contains(SECRET));
    assert!(
        stderr.contains("answered HTTP 429: slow down; retrying"),
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("→ review · visit 2"),
        "progress names node and visit: {stderr}"
    );
}

#[test]
fn replaying_the_journal_calls_no_model_and_writes_the_same_trace() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    assert!(run_to_end(&vault, &stub, &[]).status.success());
    let first_trace = trace(&vault);
    let journal = dir.path().join("journal.jsonl");
    std::fs::copy(vault.join("00_plan-trace/journal.jsonl"), &journal).unwrap();
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap().lines().count(),
        7
    );

    let calls = stub.requests().len();
    let copy = example_vault(&dir.path().join("replay"));
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("run")
        .arg(&copy)
        .args(["--query", QUERY, "--replay"])
        .arg(&journal)
        .output()
        .unwrap();
    assert_ran(&out);
    assert_eq!(stub.requests().len(), calls, "zero model calls");
    assert_eq!(trace(&copy), first_trace, "byte for byte");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Sent. Message id <42@example>.\n"
    );
    for note in ["draft.md", "review.md", "send.md"] {
        assert_eq!(
            std::fs::read(copy.join(note)).unwrap(),
            std::fs::read(vault.join(note)).unwrap()
        );
    }
    assert_eq!(
        std::fs::read(copy.join("00_plan-trace/journal.jsonl")).unwrap(),
        std::fs::read(&journal).unwrap(),
        "the replayed vault keeps its journal"
    );
}

/// Start a run, wait until the stub has received the `nth` request containing
/// `needle` (which the script holds back), and kill the process there.
fn kill_when_asked(vault: &Path, stub: &Stub, needle: &str, nth: usize) {
    kill_run_when_asked(planvault(vault, stub, &[]), stub, needle, nth);
}

/// [`kill_when_asked`] of the run `command` starts.
fn kill_run_when_asked(mut command: Command, stub: &Stub, needle: &str, nth: usize) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(stub, needle) < nth {
        assert!(
            Instant::now() < deadline,
            "the run never asked for {needle}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The example vault's run killed while its first judgment is asked (draft
/// and review done); the stub then answers the rest of the run once.
fn killed_while_judging(vault: &Path) -> Stub {
    let script = Script {
        replies: vec![
            reply(DRAFT, "Draft one."),
            reply(REVIEW, "Looks right."),
            Reply {
                delay_ms: 20_000,
                ..reply(JUDGE, "1. YES\n2. NO")
            },
            reply(JUDGE, "1. YES - fine\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    kill_when_asked(vault, &stub, JUDGE, 1);
    stub
}

#[test]
fn a_run_killed_while_judging_resumes_without_rerunning_any_node() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = killed_while_judging(&vault);
    assert_eq!(status_of(&vault, "draft.md"), "done");
    assert_eq!(status_of(&vault, "review.md"), "done");
    assert_eq!(status_of(&vault, "send.md"), "pending");

    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Sent.\n");
    assert_eq!(
        (
            count(&stub, DRAFT),
            count(&stub, REVIEW),
            count(&stub, JUDGE),
            count(&stub, SEND)
        ),
        (1, 1, 2, 1)
    );
    assert_eq!(status_of(&vault, "send.md"), "done");
    let trace = trace(&vault);
    assert!(trace.contains("*resumed by a new run*"));
    assert!(trace.contains("resumed: walked past 2 done node(s) on recorded decisions"));
    assert_eq!(trace.matches("took `approved` → [[send]]").count(), 1);
}

/// Found by stopping runs at every write: a full disk can cut the
/// journal's last append inside a character (`→` is three bytes), and a
/// person may reorder a finished note's conditions, or annotate an output
/// note, before the next run. The torn line is set aside, the recorded
/// judgment is read by its labels, the annotation stays, and nothing is
/// asked again.
#[test]
fn a_journal_torn_inside_a_character_and_reordered_conditions_still_resume() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let script = Script {
        replies: vec![
            reply(DRAFT, "Draft → one."),
            reply(REVIEW, "Looks right."),
            reply(JUDGE, "1. YES - approved\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    let asked = stub.requests().len();

    let journal = vault.join("00_plan-trace/journal.jsonl");
    let mut bytes = std::fs::read(&journal).unwrap();
    let torn = "{\"key\":\"send#2:work\",\"kind\":\"work\",\"output\":\"→".as_bytes();
    bytes.extend_from_slice(&torn[..torn.len() - 1]);
    std::fs::write(&journal, bytes).unwrap();
    let review = vault.join("review.md");
    let text = std::fs::read_to_string(&review).unwrap();
    let reordered = text.replace(
        "- approved -> [[send]]\n- needs revision -> [[draft]]\n",
        "- needs revision -> [[draft]]\n- approved -> [[send]]\n",
    );
    assert_ne!(reordered, text);
    std::fs::write(&review, reordered).unwrap();
    // A person annotates an output the run wrote: the resume keeps it.
    let output = vault.join("00_plan-trace/draft.visit-1.md");
    let annotated = std::fs::read_to_string(&output).unwrap() + "\nGood opening.\n";
    std::fs::write(&output, &annotated).unwrap();

    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Sent.\n");
    assert_eq!(stub.requests().len(), asked, "nothing was asked again");
    let aside = std::fs::read(vault.join("00_plan-trace/journal.jsonl.torn-1")).unwrap();
    assert!(String::from_utf8_lossy(&aside).starts_with("{\"key\":\"send#2:work\""));
    assert_eq!(trace(&vault).matches("took `needs revision`").count(), 0);
    assert_eq!(std::fs::read_to_string(&output).unwrap(), annotated);
}

#[test]
fn a_run_killed_mid_stream_continues_at_the_active_node() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let script = Script {
        replies: vec![
            reply(DRAFT, "Draft one."),
            Reply {
                chunk_delay_ms: 2_000,
                chunk_chars: Some(4),
                ..reply(REVIEW, "Looks right to me.")
            },
            reply(REVIEW, "Looks right."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    kill_when_asked(&vault, &stub, REVIEW, 1);
    assert_eq!(
        status_of(&vault, "review.md"),
        "active",
        "the interrupted node stays active"
    );

    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("continuing at review"));
    assert_eq!(
        (
            count(&stub, DRAFT),
            count(&stub, REVIEW),
            count(&stub, SEND)
        ),
        (1, 2, 1),
        "draft never re-ran"
    );
    assert!(trace(&vault).contains("- resumed: the node was active"));
}

#[test]
fn an_endpoint_that_keeps_failing_stops_resumably_and_a_malformed_grid_is_reasked() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let script = Script {
        replies: vec![
            reply(DRAFT, "Draft one."),
            Reply {
                status: 503,
                times: Some(3),
                // LiteLLM's messages span lines; the retry line stays one.
                content: "overloaded\n\nLiteLLM: model group busy".into(),
                ..reply(REVIEW, "")
            },
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("interrupted at review"));
    assert!(
        stderr.contains("overloaded LiteLLM: model group busy; retrying in"),
        "{stderr}"
    );
    assert_eq!(count(&stub, REVIEW), 3, "bounded retries");
    assert_eq!(status_of(&vault, "review.md"), "active");

    let stub2 = Stub::start(
        Script {
            replies: vec![
                reply("could not be read", "1. YES\n2. NO"),
                reply(REVIEW, "Fine."),
                reply(JUDGE, "Approved, I would say."),
                reply(SEND, "Sent."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = run_to_end(&vault, &stub2, &[]);
    assert_ran(&out);
    assert_eq!(count(&stub2, DRAFT), 0);
    let reask = stub2
        .requests()
        .into_iter()
        .find(|r| r.text().contains("could not be read"))
        .unwrap();
    assert!(reask.text().contains("condition 1 has no YES/NO answer"));
}

#[test]
fn a_role_routes_its_calls_to_its_own_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let writer = Stub::start(
        Script {
            replies: vec![reply(DRAFT, "Draft."), reply(SEND, "Sent.")],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let reviewer = Stub::start(
        Script {
            replies: vec![reply(REVIEW, "Good."), reply(JUDGE, "1. YES\n2. NO")],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let role = format!("review={},judge-model", reviewer.base_url());
    let out = run_to_end(&vault, &writer, &["--role", &role]);
    assert_ran(&out);
    assert_eq!(writer.requests().len(), 2);
    assert_eq!(reviewer.requests().len(), 2);
    assert!(reviewer
        .requests()
        .iter()
        .all(|r| r.body["model"] == "judge-model"));
}

#[test]
fn an_unsound_plan_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    std::fs::write(
        vault.join("send.md"),
        "---\nstatus: pending\n---\n# Send\n\n## Next\n- [[nowhere]]\n",
    )
    .unwrap();
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing ran"));
    assert!(stub.requests().is_empty());
}

const PLAN_MD: &str = "# Plan

- [ ] Write the migration
- [ ] (after: 1) @tool test -f migrated.flag
      @on exit=0 -> 3
      @on exit!=0 -> 4
- [ ] (after: 2) @verify Prove the app boots
      @emit migrated=true
      @emit migrated=false
- [ ] (after: 2) Roll the migration back
- [ ] (after: 3) @human Decide whether this ships today
      @needs migrated
";

fn plan_md_run(dir: &Path, stub: &Stub, extra: &[&str]) -> Output {
    plan_md_command(dir, stub)
        .args(["--autonomy", "ask"])
        .args(extra)
        .output()
        .unwrap()
}

/// `planvault run DIR/PLAN.md` against the stub, no key, the default autonomy.
fn plan_md_command(dir: &Path, stub: &Stub) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_planvault"));
    command
        .arg("run")
        .arg(dir.join("PLAN.md"))
        .args([
            "--query",
            "ship locales",
            "--endpoint",
            &stub.base_url(),
            "--model",
            "m",
        ])
        .env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY");
    command
}

/// `command` run under strace, tracing `calls`, with strace's `extra`
/// arguments (where its log goes, a fault to inject).
fn under_strace(calls: &str, extra: &[&str], command: &Command) -> std::io::Result<Output> {
    let mut traced = Command::new("strace");
    traced
        .args(["-f", "-qq", "-y", "-e", &format!("trace={calls}")])
        .args(extra)
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => traced.env(key, value),
            None => traced.env_remove(key),
        };
    }
    traced.output()
}

/// The place, counted from 1, among the `calls` `command` makes, of the
/// first one whose strace line `wanted` picks; `None` (said) where strace
/// cannot run here.
fn nth_call(calls: &str, command: &Command, wanted: impl Fn(&str) -> bool) -> Option<usize> {
    let log = tempfile::NamedTempFile::new().unwrap();
    match under_strace(calls, &["-o", log.path().to_str().unwrap()], command) {
        Ok(out) if out.status.success() => {}
        other => {
            #[allow(clippy::print_stderr)] // the notice is the point
            {
                eprintln!("SKIPPED (strace cannot run here): {other:?}");
            }
            return None;
        }
    }
    let log = std::fs::read_to_string(log.path()).unwrap();
    let position = log
        .lines()
        .filter(|l| calls.split(',').any(|call| l.contains(&format!("{call}("))))
        .position(wanted)
        .expect("the call looked for");
    Some(position + 1)
}

/// A run vault's note is written whole or not at all: killed at the
/// `write(2)` of an item's note (strace places the kill), the next run
/// finds no torn note to keep as "already there". Skipped where strace
/// cannot run.
#[test]
fn a_run_vault_note_cut_off_by_a_kill_is_written_whole_by_the_next_run() {
    let plan = "- [ ] Write the migration\n- [ ] (after: 1) @tool echo indexed\n- [ ] (after: 2) Summarise the work\n";
    let script = || Script {
        replies: vec![
            Reply {
                times: Some(0),
                ..reply("Step: Write the migration", "Wrote it.\nSTATUS: done")
            },
            Reply {
                times: Some(0),
                ..reply("Step: Summarise the work", "All done.\nSTATUS: done")
            },
        ],
        default: None,
    };
    let stub = Stub::start(script(), 0, None).unwrap();
    let [control, killed] = [(); 2].map(|()| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("PLAN.md"), plan).unwrap();
        dir
    });
    // The first write(2) of item 2's note, under whatever name it is made.
    let Some(nth) = nth_call("write", &plan_md_command(control.path(), &stub), |l| {
        l.contains("PLAN.run/2.md") || l.contains("PLAN.run/.2.md")
    }) else {
        return;
    };
    let strace =
        |extra: &[&str], dir: &Path| under_strace("write", extra, &plan_md_command(dir, &stub));
    // A full disk there is as resumable as one during the run: exit 5.
    let full = tempfile::tempdir().unwrap();
    std::fs::write(full.path().join("PLAN.md"), plan).unwrap();
    let inject = format!("inject=write:error=ENOSPC:when={nth}");
    let out = strace(&["-o", "/dev/null", "-e", &inject], full.path()).unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("free some space"));
    assert_ran(&plan_md_command(full.path(), &stub).output().unwrap());
    let inject = format!("inject=write:signal=KILL:when={nth}");
    let out = strace(&["-o", "/dev/null", "-e", &inject], killed.path()).unwrap();
    assert!(!out.status.success(), "the kill did not land");
    let out = plan_md_command(killed.path(), &stub).output().unwrap();
    assert_ran(&out);
    for note in ["1.md", "2.md", "3.md"] {
        assert_eq!(
            std::fs::read_to_string(killed.path().join("PLAN.run").join(note)).unwrap(),
            std::fs::read_to_string(control.path().join("PLAN.run").join(note)).unwrap(),
            "{note}"
        );
    }
}

/// A full disk under a generated plan's `write_note` step stops the run
/// resumably: it is no failure of the step's to journal (and re-plan
/// around), and the next run, with space again, writes the note. strace
/// makes the rename of that note fail with ENOSPC; skipped where it
/// cannot run.
#[test]
fn a_full_disk_under_a_write_note_step_stops_resumably_and_the_next_run_writes() {
    let plan = r#"{"goal": "file two notes", "nodes": [
        {"id": "wa", "capability": "write_note", "args": {"path": "inbox/a.md", "content": "alpha"}},
        {"id": "wb", "capability": "write_note", "args": {"path": "inbox/b.md", "content": "beta"}, "dependsOn": ["wa"]}
    ]}"#;
    let stub = Stub::start(Script::default(), 0, None).unwrap();
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("plan.json"), plan).unwrap();
        dir
    };
    let control = fresh();
    let run = |dir: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_planvault"));
        cmd.arg("run")
            .arg(dir.join("plan.json"))
            .args(["--query", "file", "--endpoint", &stub.base_url()])
            .args(["--model", "m"]);
        cmd
    };
    let renames = "rename,renameat,renameat2";
    let Some(nth) = nth_call(renames, &run(control.path()), |l| {
        l.contains("inbox/b.md\"")
    }) else {
        return;
    };
    let strace = |extra: &[&str], dir: &Path| under_strace(renames, extra, &run(dir));
    // A read-only file system (a remount) is the storage failing too.
    for error in ["ENOSPC", "EROFS"] {
        let full = fresh();
        let inject = format!("inject=rename,renameat,renameat2:error={error}:when={nth}");
        let out = strace(&["-o", "/dev/null", "-e", &inject], full.path()).unwrap();
        assert_eq!(
            out.status.code(),
            Some(5),
            "{error}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let journal =
            std::fs::read_to_string(full.path().join("plan.run/00_plan-trace/journal.jsonl"))
                .unwrap_or_default();
        assert!(!journal.contains("wb#"), "{error}: {journal}");
        let out = run(full.path()).output().unwrap();
        assert_ran(&out);
        assert_eq!(
            std::fs::read_to_string(full.path().join("plan.run/inbox/b.md")).unwrap(),
            "beta"
        );
    }
    assert!(stub.requests().is_empty(), "nothing was re-planned");
}

#[test]
fn a_plan_md_runs_its_command_routes_pauses_for_a_person_and_resumes_with_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("PLAN.md"), PLAN_MD).unwrap();
    std::fs::write(dir.path().join("migrated.flag"), "").unwrap();
    let script = Script {
        replies: vec![
            reply("Step: Write the migration", "Wrote it.\nSTATUS: done"),
            reply(
                "Step: Prove the app boots",
                "It boots.\n```leopold-status\nSTATUS: done\nSIGNALS: migrated=true\n```",
            ),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "awaiting_human: {stderr}");
    assert!(stderr.contains("awaiting_human at 5"));
    assert!(out.stdout.is_empty(), "a paused run has no answer yet");
    let run = dir.path().join("PLAN.run");
    assert_eq!(
        ["1.md", "2.md", "3.md", "4.md", "5.md"].map(|n| status_of(&run, n)),
        ["done", "done", "done", "pending", "active"],
        "the command ran in the plan's folder, exit=0 routed to 3, the rollback was bypassed"
    );
    let review = stub
        .requests()
        .into_iter()
        .find(|r| r.text().contains("Step: Prove the app boots"))
        .unwrap();
    assert!(
        review.body["tools"].is_null(),
        "a verify node is offered no tools"
    );

    let out = plan_md_run(dir.path(), &stub, &["--decide", "5=approve:Ship it today."]);
    assert_ran(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Ship it today.\n");
    assert_eq!(status_of(&run, "5.md"), "done");
    assert_eq!(stub.requests().len(), 2, "nothing ran twice");
    // As Leopold keeps its progress: each item done checked in the plan,
    // the bypassed rollback left open, nothing else changed.
    let checked = PLAN_MD
        .replace("- [ ] Write", "- [x] Write")
        .replace("- [ ] (after: 1) @tool", "- [x] (after: 1) @tool")
        .replace("- [ ] (after: 2) @verify", "- [x] (after: 2) @verify")
        .replace("- [ ] (after: 3) @human", "- [x] (after: 3) @human");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("PLAN.md")).unwrap(),
        checked
    );
    assert!(trace(&run).contains("- settled: ok; signals exit=0"));

    // The receipt hashes PLAN.md itself (beside its run vault).
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("00_plan-trace/receipt.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(receipt["plan_source"], "PLAN.md");
    assert_eq!(receipt["attempts"], 1, "one visit of the @verify item");
    assert_eq!(receipt_verify(&run, &[]).status.code(), Some(0));
    std::fs::write(
        dir.path().join("PLAN.md"),
        PLAN_MD.replace("today", "tomorrow"),
    )
    .unwrap();
    let out = receipt_verify(&run, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("FAIL plan: PLAN.md changed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Found by killing runs at every point: killed during an item's model
/// call (the item `active` in its note, nothing on record for it), the
/// item reworded in the PLAN.md was refused as one that "had run", and
/// the `--fresh` the refusal asked for ran again what the run had passed
/// by. An item with no answer on record never ran: the resume takes its
/// new wording.
#[test]
fn an_item_cut_off_during_its_model_call_takes_its_new_wording_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let plan =
        "- [ ] Draft the notes\n- [ ] (after: 1) Announce the release\n- [ ] (after: 2) Wrap up\n";
    std::fs::write(dir.path().join("PLAN.md"), plan).unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![Reply {
                delay_ms: 20_000,
                ..Reply::when("Announce the release", "Announced.\nSTATUS: done")
            }],
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        },
        0,
        None,
    )
    .unwrap();
    kill_run_when_asked(
        plan_md_command(dir.path(), &stub),
        &stub,
        "Announce the release",
        1,
    );
    let run_vault = dir.path().join("PLAN.run");
    assert_eq!(status_of(&run_vault, "2.md"), "active");
    std::fs::write(
        dir.path().join("PLAN.md"),
        plan.replace("Announce the release", "Announce the release on the blog"),
    )
    .unwrap();
    let out = plan_md_command(dir.path(), &stub).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("resuming: 1 node(s) done") && stderr.contains("→ 2 · visit 1"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("→ 1 ·"),
        "item 1 is not run again: {stderr}"
    );
    // The item's own request, with its new wording.
    let asked: Vec<String> = stub.requests().iter().map(|r| r.text()).collect();
    let second = asked
        .iter()
        .filter(|r| r.contains("Announce the release"))
        .nth(1)
        .expect("item 2 asked again");
    assert!(
        second.contains("Announce the release on the blog"),
        "{second}"
    );
    for item in ["1.md", "2.md", "3.md"] {
        assert_eq!(status_of(&run_vault, item), "done", "{item}");
    }
}

/// A red team's findings: a run vault's note is its item's by position.
/// A `PLAN.run/2.md` saying `done` that came with a repository made the
/// `@human` gate at item 2 done before any run, and a gate inserted above
/// items that had run took their `done` (and a changed command the old
/// command's answer): the deploy step after it ran with no decision. Now
/// a new run writes its notes afresh, and a resume of items changed since
/// they ran is refused, naming them; `--fresh` starts over.
#[test]
fn a_plan_md_changed_under_its_run_never_hands_an_item_another_items_answers() {
    let gated = "- [ ] Draft the release notes\n- [ ] (after: 1) @human Approve the release\n- [ ] (after: 2) @tool echo DEPLOYED >> deployed.log\n";
    let stub = Stub::start(
        Script {
            replies: vec![],
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        },
        0,
        None,
    )
    .unwrap();
    let awaits_the_gate = |dir: &Path, extra: &[&str]| {
        let out = plan_md_run(dir, &stub, extra);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert!(stderr.contains("awaiting_human at 2"), "{stderr}");
        assert!(!dir.join("deployed.log").exists(), "{stderr}");
    };

    // A run vault that came with the plan: its status is no run's of this machine.
    let planted = tempfile::tempdir().unwrap();
    std::fs::write(planted.path().join("PLAN.md"), gated).unwrap();
    std::fs::create_dir_all(planted.path().join("PLAN.run")).unwrap();
    std::fs::write(
        planted.path().join("PLAN.run/2.md"),
        "---\nstatus: done\n---\n# Approve the release\n",
    )
    .unwrap();
    awaits_the_gate(planted.path(), &[]);

    // A gate put above items that ran.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "- [ ] Draft the release notes\n- [ ] (after: 1) Check the changelog\n- [ ] (after: 2) @human Tag the release\n",
    )
    .unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.path().join("PLAN.md"), gated).unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("item 2 was “Check the changelog”, is now “Approve the release”; uncheck [ ] the items that should run again and run with --fresh"),
        "{stderr}"
    );
    // The gate the run waited at has no answer on record: it never ran.
    assert!(!stderr.contains("item 3"), "{stderr}");
    assert!(!dir.path().join("deployed.log").exists());
    assert_eq!(
        status_of(&dir.path().join("PLAN.run"), "2.md"),
        "done",
        "nothing was written"
    );
    awaits_the_gate(dir.path(), &["--fresh"]);
}

/// As Leopold's default loop, a PLAN.md's items run one at a time: an item
/// that fails is asked again until the run stops, and the independent item
/// after it never starts; `--parallel` (Leopold's too) runs it beside, and
/// its success starts the failures' count in a row again.
#[test]
fn a_plan_md_runs_one_item_at_a_time_unless_parallel() {
    for (extra, first_asked, second_asked) in [(&[][..], 3, 0), (&["--parallel"][..], 4, 1)] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("PLAN.md"), "- [ ] Build A\n- [ ] Build B\n").unwrap();
        let stub = Stub::start(
            Script {
                replies: vec![Reply {
                    times: Some(0),
                    ..Reply::when("Step: Build A", "Broken.\nSTATUS: failed")
                }],
                default: Some(Reply::when("", "Done.\nSTATUS: done")),
            },
            0,
            None,
        )
        .unwrap();
        let out = plan_md_run(dir.path(), &stub, extra);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        assert_eq!(count(&stub, "Step: Build A"), first_asked, "{extra:?}");
        assert_eq!(count(&stub, "Step: Build B"), second_asked, "{extra:?}");
    }
}

/// A run goes on in the order it began in: the order is the journal's
/// first line, so a resume given the other (a `--decide` with or without
/// `--parallel`) neither asks an item a wave would have asked beside a
/// person's question nor leaves one out, and says so.
#[test]
fn a_plan_md_run_goes_on_in_the_order_it_began_in() {
    let plan = "- [ ] @human Approve\n- [ ] Build A\n- [ ] @human Approve again\n- [ ] Build B\n";
    // Leopold's `--parallel N`: 1 is one at a time; more, waves of at most N.
    for (began, then, asked, kept) in [
        (
            &[][..],
            &["--parallel"][..],
            (1, 0),
            "one item at a time (without --parallel)",
        ),
        (
            &["--parallel", "1"][..],
            &["--parallel"][..],
            (1, 0),
            "one item at a time (without --parallel)",
        ),
        (
            &["--parallel"][..],
            &[][..],
            (0, 0),
            "in waves (--parallel)",
        ),
        (
            &["--parallel", "3"][..],
            &["--parallel"][..],
            (0, 0),
            "in waves of at most 3 (--parallel 3)",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("PLAN.md"), plan).unwrap();
        let stub = Stub::start(
            Script {
                replies: vec![],
                default: Some(Reply::when("", "Done.\nSTATUS: done")),
            },
            0,
            None,
        )
        .unwrap();
        let out = plan_md_run(dir.path(), &stub, began);
        assert_eq!(out.status.code(), Some(4), "{began:?}");
        let journal =
            std::fs::read_to_string(dir.path().join("PLAN.run/00_plan-trace/journal.jsonl"))
                .unwrap();
        let parallel = !began.is_empty() && began.get(1) != Some(&"1");
        assert!(
            journal.starts_with(&format!(
                "{{\"key\":\"run:order\",\"kind\":\"order\",\"parallel\":{parallel},"
            )),
            "{journal}"
        );
        let first = journal.lines().next().unwrap();
        assert_eq!(
            first.contains("\"at_most\":3,"),
            began.get(1) == Some(&"3"),
            "{first}"
        );
        // Neither order asks a model before the person decides item 1
        // (in waves, Leopold's `runParallel` stops before its pass).
        let before = (count(&stub, "Step: Build A"), count(&stub, "Step: Build B"));
        assert_eq!(before, (0, 0), "{began:?}");
        let out = plan_md_run(
            dir.path(),
            &stub,
            &[then, &["--decide", "1=approve"]].concat(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{began:?}: {stderr}");
        assert!(
            stderr.contains(&format!("this run began {kept}: it goes on so")),
            "{stderr}"
        );
        // The first run stopped at item 1 before it asked anything: the
        // order is no answer.
        assert!(stderr.contains(", 0 answer(s) recorded"), "{stderr}");
        // One at a time, A runs and the second question stops the run
        // before B; in waves, the second question is asked before either.
        let now = (count(&stub, "Step: Build A"), count(&stub, "Step: Build B"));
        assert_eq!(now, asked, "{began:?}");
    }
}

/// Found with the isolated runs' amendments: a gate asked in the wave an
/// amendment's item joined was paused with that item's answer cut off; the
/// resume asked the item first, and the person's decision for the gate was
/// then taken for one "reached later" and dropped, for ever. A decision now
/// answers the question a stop left waiting (its node `active`).
#[test]
fn a_decision_answers_the_gate_an_amended_items_wave_left_waiting() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "- [ ] Propose a fix\n- [ ] (after: 1) @feedback Review the proposal\n- [ ] (after: 2) @human Approve the fix\n- [ ] (after: 3) @tool echo applied\n",
    )
    .unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![Reply::when(
                "Step: Review the proposal",
                "Fine.\n```leopold-amend\nadd: (after: 1) Note the change\n```\nSTATUS: done",
            )],
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        },
        0,
        None,
    )
    .unwrap();
    // In waves: items one at a time never ask the gate beside another.
    let out = plan_md_run(dir.path(), &stub, &["--parallel"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = plan_md_run(dir.path(), &stub, &["--parallel", "--decide", "3=approve"]);
    assert_ran(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), "applied");
}

/// A review's finding: the boxes were checked over whatever the file held,
/// so an amendment made on the run's text then wrote a person's edit
/// away, and a box unchecked on purpose was checked again. Boxes are
/// checked only over the text the run knows; a person's edit stands.
#[test]
fn a_persons_edit_of_the_plan_mid_run_stands_and_its_boxes_are_left_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "# Plan\n\n- [ ] Build it\n- [ ] (after: 1) Test it\n";
    std::fs::write(dir.path().join("PLAN.md"), plan).unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![Reply {
                delay_ms: 1500,
                ..Reply::when("Step: Test it", "Tested.\nSTATUS: done")
            }],
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        },
        0,
        None,
    )
    .unwrap();
    let child = plan_md_command(dir.path(), &stub)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While item 2 is asked, a person unchecks item 1 and renames the plan.
    let path = dir.path().join("PLAN.md");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&path)
        .unwrap()
        .contains("- [x] Build it")
    {
        assert!(Instant::now() < deadline, "item 1's box was never checked");
        std::thread::sleep(Duration::from_millis(20));
    }
    let edited = "# The plan, renamed\n\n- [ ] Build it\n- [ ] (after: 1) Test it\n";
    std::fs::write(&path, edited).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_ran(&out);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("were not checked").count(), 1, "{stderr}");
}

/// A symlinked PLAN.md has its boxes checked where it lives: a rename onto
/// the link would have replaced it with a file of its own, and left the
/// plan it named unchecked.
#[cfg(unix)]
#[test]
fn a_symlinked_plan_has_its_boxes_checked_where_it_lives() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("release.md"), "- [ ] Build it\n").unwrap();
    let here = dir.path().join("here");
    std::fs::create_dir_all(&here).unwrap();
    std::os::unix::fs::symlink(shared.join("release.md"), here.join("PLAN.md")).unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![],
            default: Some(Reply::when("", "Built.\nSTATUS: done")),
        },
        0,
        None,
    )
    .unwrap();
    let out = plan_md_run(&here, &stub, &[]);
    assert_ran(&out);
    assert!(here
        .join("PLAN.md")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(shared.join("release.md")).unwrap(),
        "- [x] Build it\n"
    );
}

/// A routed failure is `failed` in its note and keeps its box open (as in
/// Leopold); the run goes on by its route, pauses at a gate and resumes
/// with no model call made again and no trace entry written twice.
#[test]
fn a_routed_failure_stays_failed_and_open_through_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "- [ ] Migrate the data\n      @on fail -> 3\n- [ ] (after: 1) Announce it\n- [ ] Roll back\n- [ ] (after: 3) @human Confirm the rollback\n",
    )
    .unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![Reply::when("Step: Migrate", "It broke.\nSTATUS: failed")],
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        },
        0,
        None,
    )
    .unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = plan_md_run(dir.path(), &stub, &["--decide", "4=approve"]);
    assert_ran(&out);
    let run = dir.path().join("PLAN.run");
    assert_eq!(
        ["1.md", "2.md", "3.md", "4.md"].map(|n| status_of(&run, n)),
        ["failed", "pending", "done", "done"]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("PLAN.md")).unwrap(),
        "- [ ] Migrate the data\n      @on fail -> 3\n- [ ] (after: 1) Announce it\n- [x] Roll back\n- [x] (after: 3) @human Confirm the rollback\n"
    );
    assert_eq!(stub.requests().len(), 2, "nothing asked twice");
    let trace = trace(&run);
    assert_eq!(
        trace.matches("- took route `fail` → item 3").count(),
        1,
        "{trace}"
    );
    assert_eq!(trace.matches("- settled: fail").count(), 1, "{trace}");
}

#[test]
fn a_generated_plan_runs_its_waves_with_bindings_in_a_run_vault() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r#"{"goal": "summarise", "nodes": [
        {"id": "write", "capability": "write_note", "args": {"path": "inbox/a.md", "content": "alpha"}},
        {"id": "read", "capability": "read_note", "args": {"path": "inbox/a.md"}, "dependsOn": ["write"]},
        {"id": "sum", "capability": "llm", "args": {"prompt": {"$from": "read"}}, "dependsOn": ["read"]}
    ]}"#;
    std::fs::write(dir.path().join("plan.json"), plan).unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![reply("alpha", "A one-word note.")],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("run")
        .arg(dir.path().join("plan.json"))
        .args([
            "--query",
            "summarise",
            "--endpoint",
            &stub.base_url(),
            "--model",
            "m",
        ])
        .output()
        .unwrap();
    assert_ran(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "A one-word note.\n");
    let run = dir.path().join("plan.run");
    for note in ["write.md", "read.md", "sum.md"] {
        assert_eq!(status_of(&run, note), "done");
    }
    assert_eq!(
        stub.requests()[0].text(),
        "alpha",
        "the bound value, resolved from the recorded output"
    );
    // Run again, it walks past what the journal holds: no hop is traced
    // twice, no model is asked.
    let hops = |trace: &str| -> Vec<String> {
        trace
            .lines()
            .filter(|l| l.starts_with("- node: ") || l.starts_with("- completed"))
            .map(str::to_string)
            .collect()
    };
    let before = hops(&trace(&run));
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("run")
        .arg(dir.path().join("plan.json"))
        .args(["--query", "summarise", "--endpoint", &stub.base_url()])
        .args(["--model", "m"])
        .output()
        .unwrap();
    assert_ran(&out);
    assert_eq!(hops(&trace(&run)), before);
    assert_eq!(stub.requests().len(), 1);
}

#[test]
fn a_node_offers_only_its_declared_tools_and_the_model_can_call_them() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    // draft.md declares `tools: [fetch_url]`: only `fetch_url` is offered. The model fetches the
    // stub's own model list (on 127.0.0.1; `$STUB` is the stub's address) and
    // answers with what it read. A loopback address is reached only because
    // the vault's config allows it.
    std::fs::create_dir_all(vault.join(".planvault")).unwrap();
    std::fs::write(
        vault.join(".planvault/config.toml"),
        "[fetch]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![llm_stub::ToolCall {
                    name: "fetch_url".into(),
                    arguments: serde_json::json!({"url": "$STUB/v1/models"}),
                }],
                ..reply(DRAFT, "")
            },
            reply("owned_by", "Draft built from the agenda."),
            reply(REVIEW, "Good."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &["--trust-config"]);
    assert_ran(&out);
    let requests = stub.requests();
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["fetch_url"]);
    let second = &requests[1].body["messages"];
    let tool_turn = second
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the tool result went back");
    assert!(tool_turn["content"]
        .as_str()
        .unwrap()
        .contains("stub-model"));
    assert!(
        requests[2].body["tools"].is_null(),
        "review declares no tools"
    );
    let output = std::fs::read_to_string(vault.join("00_plan-trace/draft.visit-1.md")).unwrap();
    assert!(output.contains("Draft built from the agenda."));
}

/// A red team's finding: a model's `read_note` or `write_note` path with
/// a NUL in it reached the file system, whose error stopped the run, and
/// the journaled reply stopped it again at every resume. The path is now
/// refused to the model, and the run goes on.
#[test]
fn a_tool_path_with_a_control_character_is_refused_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let draft = vault.join("draft.md");
    let text = std::fs::read_to_string(&draft).unwrap();
    assert!(text.contains("tools: [fetch_url]"), "{text}");
    std::fs::write(
        &draft,
        text.replace("tools: [fetch_url]", "tools: [read_note, write_note]"),
    )
    .unwrap();
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![
                    llm_stub::ToolCall {
                        name: "read_note".into(),
                        arguments: serde_json::json!({"path": "a\u{0}.md"}),
                    },
                    llm_stub::ToolCall {
                        name: "write_note".into(),
                        arguments: serde_json::json!({"path": "b\u{0}.md", "content": "x"}),
                    },
                ],
                ..reply(DRAFT, "")
            },
            reply("control character", "Draft built without them."),
            reply(REVIEW, "Good."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    let requests = stub.requests();
    let refusals = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter(|m| {
            m["content"]
                .as_str()
                .unwrap()
                .contains("holds a control character")
        })
        .count();
    assert_eq!(refusals, 2, "{}", requests[1].body);
    let output = std::fs::read_to_string(vault.join("00_plan-trace/draft.visit-1.md")).unwrap();
    assert!(output.contains("Draft built without them."), "{output}");
}

/// A red team's note: `fetch_url` took the environment's proxy
/// (`HTTP_PROXY`), so its address checks judged the proxy, and a proxy
/// would have reached by name what the checks refuse. `fetch_url` connects
/// only directly, to the addresses it judged; the model's endpoint still
/// goes through the proxy the user set.
#[test]
fn fetch_url_connects_directly_whatever_proxy_the_environment_names() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    // A page on another loopback address, allowed by the vault's config,
    // and a proxy that only counts who comes to it.
    let page = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    let page_at = page.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in page.incoming().flatten() {
            let mut stream = stream;
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let body = "the page itself";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_at = proxy.local_addr().unwrap();
    let proxied = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = proxied.clone();
    std::thread::spawn(move || {
        for stream in proxy.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    std::fs::write(
        vault.join(".planvault/config.toml"),
        "[fetch]\nallow_hosts = [\"127.0.0.2\"]\n",
    )
    .unwrap();
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![llm_stub::ToolCall {
                    name: "fetch_url".into(),
                    arguments: serde_json::json!({"url": format!("http://{page_at}/")}),
                }],
                ..reply(DRAFT, "")
            },
            reply("the page itself", "Draft built from the page."),
            reply(REVIEW, "Good."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = planvault(&vault, &stub, &["--trust-config"])
        .env("HTTP_PROXY", format!("http://{proxy_at}"))
        .env("http_proxy", format!("http://{proxy_at}"))
        .env("NO_PROXY", "127.0.0.1")
        .output()
        .unwrap();
    assert_ran(&out);
    let output = std::fs::read_to_string(vault.join("00_plan-trace/draft.visit-1.md")).unwrap();
    assert!(output.contains("Draft built from the page."), "{output}");
    assert_eq!(proxied.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn ctrl_c_stops_the_run_resumably() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let script = Script {
        replies: vec![
            reply(DRAFT, "Draft one."),
            // A stream that stalls after its first words: one Ctrl-C must
            // not wait for the server's next byte.
            Reply {
                chunk_delay_ms: 20_000,
                chunk_chars: Some(2),
                ..reply(REVIEW, "Looks right to me, all of it.")
            },
            reply(REVIEW, "Looks right."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let child = planvault(&vault, &stub, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(&stub, REVIEW) < 1 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let signalled = Instant::now();
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "one Ctrl-C stopped a stalled stream only after {:?}",
        signalled.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped: interrupted by Ctrl-C"));
    assert_eq!(status_of(&vault, "review.md"), "active");

    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert_eq!(count(&stub, DRAFT), 1);
}

#[test]
fn a_reply_slower_than_the_timeout_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    std::fs::write(
        vault.join(".planvault/config.toml"),
        "[http]\nretry_base_ms = 20\nattempts = 3\ntimeout_secs = 1\n",
    )
    .unwrap();
    let script = Script {
        replies: vec![
            Reply {
                delay_ms: 2_500,
                ..reply(DRAFT, "too late")
            },
            reply(DRAFT, "Draft one."),
            reply(REVIEW, "Good."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("timed out waiting for"), "{stderr}");
    assert_eq!(count(&stub, DRAFT), 2);
    assert!(
        std::fs::read_to_string(vault.join("00_plan-trace/draft.visit-1.md"))
            .unwrap()
            .contains("Draft one.")
    );
}

#[test]
fn a_note_edited_during_the_run_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let script = Script {
        replies: vec![
            Reply {
                delay_ms: 1_500,
                ..reply(DRAFT, "Draft one.")
            },
            reply(REVIEW, "Good."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let child = planvault(&vault, &stub, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(&stub, DRAFT) < 1 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
    // A person edits the active note in Obsidian while the model works.
    let edited = std::fs::read_to_string(vault.join("draft.md"))
        .unwrap()
        .replace("under 200 words", "under 150 words");
    std::fs::write(vault.join("draft.md"), &edited).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("draft.md changed on disk since the run read it"),
        "{stderr}"
    );
    // Said as it is: the answer made from the text before the edit stays.
    assert!(
        stderr.contains("the answer this step got is kept"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(vault.join("draft.md")).unwrap(),
        edited,
        "the edit survives"
    );
    assert_eq!(count(&stub, REVIEW), 0);
}

/// `--decide NODE=…` answers the question waiting at NODE, whichever visit
/// it is: a gate visited again is decided at its second visit, the first
/// visit's decision stands, and the same command given again once nothing
/// waits records nothing.
#[test]
fn a_decision_answers_the_visit_that_waits_and_is_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let vault = human_gate_vault(dir.path());
    let script = Script {
        replies: vec![
            Reply {
                times: Some(0),
                ..reply("Step: Write the note", "A fine note.")
            },
            reply("Step: Publish the note", "Published as #7."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let decide = |verdict: &str| {
        planvault(&vault, &stub, &["--autonomy", "ask", "--decide", verdict])
            .output()
            .unwrap()
    };
    let out = planvault(&vault, &stub, &["--autonomy", "ask"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    // Sent back to write: the gate waits again, at its second visit.
    let out = decide("approve=rewrite");
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = decide("approve=publish");
    assert_ran(&out);
    // Given again (as after a crash): nothing waits, nothing is recorded.
    let out = decide("approve=publish");
    assert_ran(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--decide approve: no question of approve was waiting in this run; nothing was recorded"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let journal = std::fs::read_to_string(vault.join("00_plan-trace/journal.jsonl")).unwrap();
    let decided: Vec<(String, String)> = journal
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["kind"] == "human")
        .map(|e| {
            (
                e["key"].as_str().unwrap().to_string(),
                e["choice"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("approve#1:human".to_string(), "rewrite".to_string()),
            ("approve#2:human".to_string(), "publish".to_string())
        ]
    );
    assert_eq!(count(&stub, "Step: Write the note"), 2);
    assert_eq!(count(&stub, "Step: Publish the note"), 1);
}

/// The same `--decide` given again to resume a run that stopped after the
/// decision (here the next step's call was refused) answers no question
/// the run reaches later: the gate's next visit waits for the person.
#[test]
fn a_repeated_decision_does_not_answer_the_gates_next_visit() {
    let dir = tempfile::tempdir().unwrap();
    let vault = human_gate_vault(dir.path());
    let script = Script {
        replies: vec![
            reply("Step: Write the note", "Draft one."),
            Reply {
                status: 401,
                ..reply("Step: Write the note", "bad key")
            },
            Reply {
                times: Some(0),
                ..reply("Step: Write the note", "Draft two.")
            },
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["--autonomy", "ask"];
        args.extend_from_slice(extra);
        planvault(&vault, &stub, &args).output().unwrap()
    };
    assert_eq!(run(&[]).status.code(), Some(4));
    let out = run(&["--decide", "approve=rewrite"]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["--decide", "approve=rewrite"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no question of approve was waiting"));
    let journal = std::fs::read_to_string(vault.join("00_plan-trace/journal.jsonl")).unwrap();
    assert_eq!(
        journal.matches("\"kind\":\"human\"").count(),
        1,
        "{journal}"
    );
    assert_eq!(count(&stub, "Step: Write the note"), 3);
}

#[test]
fn a_human_note_pauses_for_a_person_and_the_picked_condition_routes_the_resumed_run() {
    let dir = tempfile::tempdir().unwrap();
    let vault = human_gate_vault(dir.path());
    let script = Script {
        replies: vec![
            reply("Step: Write the note", "A fine note."),
            reply("Step: Publish the note", "Published as #7."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = planvault(&vault, &stub, &["--autonomy", "ask"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "awaiting_human: {stderr}");
    assert!(
        stderr.contains("--decide approve=publish|rewrite[:note]"),
        "{stderr}"
    );
    assert_eq!(status_of(&vault, "approve.md"), "active");

    let out = planvault(
        &vault,
        &stub,
        &[
            "--autonomy",
            "ask",
            "--decide",
            "approve=publish:Looks right.",
        ],
    )
    .output()
    .unwrap();
    assert_ran(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Published as #7.\n");
    assert_eq!(
        ["write.md", "approve.md", "publish.md"].map(|n| status_of(&vault, n)),
        ["done", "done", "done"]
    );
    assert_eq!(
        stub.requests().len(),
        2,
        "the person's decision is not a model call and nothing ran twice"
    );
    let trace = trace(&vault);
    assert!(
        trace.contains("- took `publish` → [[publish]]\n- decided by: human"),
        "{trace}"
    );
}

#[test]
fn an_accepted_amendment_is_appended_to_the_plan_md_and_its_item_runs() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "- [ ] Build it\n- [ ] (after: 1) @feedback Propose follow-ups\n";
    std::fs::write(dir.path().join("PLAN.md"), plan).unwrap();
    let script = Script {
        replies: vec![
            reply("Step: Build it", "Built.\nSTATUS: done"),
            reply(
                "Step: Propose follow-ups",
                "One idea.\n```leopold-amend\nadd: Write the changelog\n```\nSTATUS: done",
            ),
            reply("Step: Write the changelog", "Written.\nSTATUS: done"),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("amended"), "{stderr}");
    // Appended, and each item's box checked once it was done (the
    // amendment, made on the text before the feedback item's box, keeps it).
    assert_eq!(
        std::fs::read_to_string(dir.path().join("PLAN.md")).unwrap(),
        "- [x] Build it\n- [x] (after: 1) @feedback Propose follow-ups\n- [x] Write the changelog\n"
    );
    let run = dir.path().join("PLAN.run");
    assert!(std::fs::read_to_string(run.join("3.md"))
        .unwrap()
        .contains("status: done"));
    assert_eq!(count(&stub, "Step: Write the changelog"), 1);
}

#[test]
fn a_command_never_sees_a_key_and_no_key_is_recorded_or_sent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "# Plan\n\n- [ ] @tool env\n- [ ] (after: 1) Summarise what the command printed\n",
    )
    .unwrap();
    let run = dir.path().join("PLAN.run");
    std::fs::create_dir_all(run.join(".planvault")).unwrap();
    std::fs::write(
        run.join(".planvault/config.toml"),
        "[commands]\nenv = [\"MY_TOOL_VAR\"]\n",
    )
    .unwrap();
    let script = Script {
        replies: vec![reply("Step: Summarise", "Summed up.\nSTATUS: done")],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["run", "--trust-config"])
        .arg(dir.path().join("PLAN.md"))
        .args([
            "--query",
            "q",
            "--endpoint",
            &stub.base_url(),
            "--model",
            "m",
        ])
        .env_remove("OPENAI_API_KEY")
        .env("PLANVAULT_API_KEY", SECRET)
        .env("OTHER_VAR", "not-for-commands")
        // A variable the config lets through that happens to hold the key.
        .env("MY_TOOL_VAR", format!("kept-{SECRET}"))
        .output()
        .unwrap();
    assert_ran(&out);
    let vault = all_text(&run);
    assert!(vault.contains("MY_TOOL_VAR=kept-<redacted>"), "{vault}");
    assert!(!vault.contains("OTHER_VAR"), "{vault}");
    assert!(!vault.contains("PLANVAULT_API_KEY"), "{vault}");
    assert!(!vault.contains(SECRET));
    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].text().contains("MY_TOOL_VAR=kept-<redacted>"),
        "the command's output reaches the next prompt, scrubbed: {}",
        requests[0].text()
    );
    assert!(!requests[0].text().contains(SECRET));
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(SECRET));
}

/// A command cannot read the key from planvault's own environment either
/// (`/proc/<planvault>/environ`, readable by any process of the same user
/// unless planvault is not dumpable). Run as a user without root's
/// `CAP_SYS_PTRACE`, which reads it regardless.
#[cfg(target_os = "linux")]
#[test]
fn a_command_cannot_read_the_key_from_planvaults_process() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "# Plan\n\n- [ ] @tool tr '\\0' '\\n' < /proc/$PPID/environ | rev; echo read\n",
    )
    .unwrap();
    let stub = Stub::start(Script::default(), 0, None).unwrap();
    let root = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout)
        .unwrap()
        .trim()
        == "0";
    let mut cmd = if root {
        // A copy that user can reach (the build's folder may not be).
        let binary = dir.path().join("planvault");
        std::fs::copy(env!("CARGO_BIN_EXE_planvault"), &binary).unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&binary);
        cmd
    } else {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
    };
    let out = cmd
        .arg("run")
        .arg(dir.path().join("PLAN.md"))
        .args(["--query", "q", "--endpoint", &stub.base_url()])
        .args(["--model", "m"])
        .env_remove("OPENAI_API_KEY")
        .env("PLANVAULT_API_KEY", SECRET)
        .output()
        .unwrap();
    assert_ran(&out);
    let journal =
        std::fs::read_to_string(dir.path().join("PLAN.run/00_plan-trace/journal.jsonl")).unwrap();
    let reversed: String = SECRET.chars().rev().collect();
    assert!(!journal.contains(&reversed), "{journal}");
    assert!(journal.contains("Permission denied"), "{journal}");
}

#[test]
fn a_second_run_on_a_locked_vault_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    // This test's own process holds the vault, as a running run would.
    let host = planvault_runner::native::host_name();
    std::fs::create_dir_all(vault.join(".planvault")).unwrap();
    let lock = vault.join(".planvault/run.lock");
    std::fs::write(&lock, format!("pid={}\nhost={host}\n", std::process::id())).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains(&format!("process {} on {host}", std::process::id()))
            && stderr.contains("delete"),
        "{stderr}"
    );
    assert!(
        stub.requests().is_empty(),
        "the refused run called no model"
    );
    assert_eq!(status_of(&vault, "draft.md"), "pending");

    // Once the holder is gone, the run takes the vault and gives it back.
    std::fs::remove_file(&lock).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert!(!lock.exists(), "the lock is released at the end");
}

/// A plan folder run in its vault and the same folder run as a vault of
/// its own (`--vault-root` it) would share one trace: the folder holds a
/// lock of its own, which either run finds.
#[test]
fn a_plan_folder_run_as_its_own_vault_meanwhile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let vault = plan_in_a_vault(dir.path());
    let folder = vault.join("plans/launch");
    let stub = done_stub();
    // This test's own process runs the folder as a vault of its own.
    let host = planvault_runner::native::host_name();
    std::fs::create_dir_all(folder.join(".planvault")).unwrap();
    let lock = folder.join(".planvault/run.lock");
    std::fs::write(&lock, format!("pid={}\nhost={host}\n", std::process::id())).unwrap();
    let out = run_to_end(&folder, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains(&format!("process {} on {host}", std::process::id()))
            && stderr.contains("plans/launch/.planvault/run.lock"),
        "{stderr}"
    );
    assert!(stub.requests().is_empty());
    // The vault's own lock was given back.
    assert!(!vault.join(".planvault/run.lock").exists());

    std::fs::remove_file(&lock).unwrap();
    let out = run_to_end(&folder, &stub, &[]);
    assert_ran(&out);
    assert!(!lock.exists(), "the folder's lock is released at the end");
}

#[test]
fn a_browser_tabs_lock_refuses_a_terminal_run_naming_the_tab() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    // What a browser run writes through its directory handle.
    let lock = vault.join(".planvault/run.lock");
    std::fs::write(&lock, "host=browser\ntab=5e1f00aa\n").unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("being run by a browser tab (tab 5e1f00aa)")
            && stderr.contains("if no browser tab is running it")
            && stderr.contains("delete"),
        "{stderr}"
    );
    assert!(
        stub.requests().is_empty(),
        "the refused run called no model"
    );
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "host=browser\ntab=5e1f00aa\n",
        "the tab's lock is left alone"
    );
}

#[test]
fn a_prompt_over_the_budget_is_never_sent_and_the_run_resumes_once_the_budget_allows_it() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    // A 2 MB note: its step's prompt would carry all of it.
    let draft = vault.join("draft.md");
    let text = std::fs::read_to_string(&draft).unwrap();
    let filler = "lorem ipsum ".repeat(175_000);
    std::fs::write(
        &draft,
        text.replace("## Next", &format!("{filler}\n\n## Next")),
    )
    .unwrap();
    assert!(std::fs::metadata(&draft).unwrap().len() > 2_000_000);
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "resumable: {stderr}");
    assert!(
        stderr.contains("draft.md: the prompt for draft would be")
            && stderr.contains("over the budget of 1000000 bytes")
            && stderr.contains("max_prompt_bytes"),
        "{stderr}"
    );
    assert_eq!(stub.requests().len(), 0, "no request reached the model");
    assert_eq!(status_of(&vault, "draft.md"), "active");

    // The vault raises its budget: the run resumes at draft and finishes.
    std::fs::write(
        vault.join(".planvault/config.toml"),
        "[http]\nretry_base_ms = 20\nattempts = 3\n\n[run]\nmax_prompt_bytes = 4_000_000\n",
    )
    .unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert_eq!(status_of(&vault, "send.md"), "done");
    assert_eq!(count(&stub, DRAFT), 2, "the loop drafts twice, never more");
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_vault_is_neither_read_by_the_model_nor_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "TOP-SECRET contents").unwrap();
    std::fs::create_dir_all(vault.join("notes")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), vault.join("notes/leak.md")).unwrap();
    std::os::unix::fs::symlink(&outside, vault.join("linked")).unwrap();
    let draft = std::fs::read_to_string(vault.join("draft.md")).unwrap();
    std::fs::write(
        vault.join("draft.md"),
        draft.replace("tools: [fetch_url]", "tools: [read_note, write_note]"),
    )
    .unwrap();
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![
                    llm_stub::ToolCall {
                        name: "read_note".into(),
                        arguments: serde_json::json!({"path": "notes/leak.md"}),
                    },
                    llm_stub::ToolCall {
                        name: "write_note".into(),
                        arguments: serde_json::json!({"path": "linked/planted.md", "content": "x"}),
                    },
                ],
                ..reply(DRAFT, "")
            },
            reply("outside the vault", "Draft without the secret."),
            reply(REVIEW, "Good."),
            reply(JUDGE, "1. YES\n2. NO"),
            reply(SEND, "Sent."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    let requests = stub.requests();
    let tool_turns: Vec<String> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tool_turns.len(), 2);
    assert!(
        tool_turns.iter().all(|t| t.contains("outside the vault")),
        "{tool_turns:?}"
    );
    for request in &requests {
        assert!(!request.text().contains("TOP-SECRET"));
    }
    assert!(!outside.join("planted.md").exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.md")).unwrap(),
        "TOP-SECRET contents"
    );
}

/// A note's text without its `status:` line.
fn without_status(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("status: "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn kill_9_at_seeded_random_moments_never_corrupts_the_vault_or_answers_a_key_twice() {
    let unlimited = |contains: &str, content: &str| Reply {
        times: Some(0),
        chunk_chars: Some(3),
        chunk_delay_ms: 15,
        ..reply(contains, content)
    };
    let script = || Script {
        replies: vec![
            unlimited(DRAFT, "Subject: review\n\nDraft one, with the date."),
            unlimited(REVIEW, "Approved, nothing to change."),
            unlimited(JUDGE, "1. YES - approved\n2. NO - nothing"),
            unlimited(SEND, "Sent. Message id <42@example>."),
        ],
        default: None,
    };
    let notes = ["draft.md", "review.md", "send.md"];
    let original: Vec<String> = notes
        .iter()
        .map(|n| without_status(&std::fs::read_to_string(example_source().join(n)).unwrap()))
        .collect();
    let clean = {
        let dir = tempfile::tempdir().unwrap();
        let vault = example_vault(dir.path());
        let stub = Stub::start(script(), 0, None).unwrap();
        let started = Instant::now();
        assert!(run_to_end(&vault, &stub, &[]).status.success());
        (stub.requests().len(), started.elapsed())
    };
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for trial in 0..10 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let kill_after = Duration::from_millis((seed >> 33) % (clean.1.as_millis() as u64 + 1));
        let dir = tempfile::tempdir().unwrap();
        let vault = example_vault(dir.path());
        let stub = Stub::start(script(), 0, None).unwrap();
        let mut child = planvault(&vault, &stub, &[])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(kill_after);
        let killed = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        child.wait().unwrap();
        let out = run_to_end(&vault, &stub, &[]);
        assert!(
            out.status.success(),
            "trial {trial} (kill after {kill_after:?}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (note, before) in notes.iter().zip(&original) {
            let after = std::fs::read_to_string(vault.join(note)).unwrap();
            assert_eq!(&without_status(&after), before, "trial {trial}: {note}");
            assert_eq!(status_of(&vault, note), "done", "trial {trial}: {note}");
        }
        let journal = std::fs::read_to_string(vault.join("00_plan-trace/journal.jsonl")).unwrap();
        let mut keys: Vec<String> = journal
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .unwrap_or_else(|e| panic!("trial {trial}: a broken journal line {l:?}: {e}"))
                    ["key"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let all = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), all, "trial {trial}: a key answered twice");
        // At most the call in flight at the kill is made again.
        let calls = stub.requests().len();
        assert!(
            calls <= clean.0 + usize::from(killed),
            "trial {trial} (kill after {kill_after:?}): {calls} calls, a clean run makes {}",
            clean.0
        );
        assert!(!vault.join(".planvault/run.lock").exists());
    }
}

#[test]
fn a_node_whose_judgment_cannot_be_read_ends_failed_and_a_resume_does_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let script = Script {
        replies: vec![
            reply(DRAFT, "Draft one."),
            reply(REVIEW, "Looks fine to me."),
            // A bare NO cannot say which of the two conditions it answers:
            // the first ask and both re-asks get it.
            Reply {
                times: Some(3),
                ..reply(JUDGE, "NO")
            },
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("node review failed: "), "{stderr}");
    assert!(
        stderr.contains(
            "hint: review.md is now status: failed; edit it (or the plan) and run again to resume"
        ),
        "{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "a failed node's output is no answer: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(status_of(&vault, "review.md"), "failed");
    assert_eq!(status_of(&vault, "draft.md"), "done");
    assert_eq!(count(&stub, "could not be read"), 2);
    let reask = stub
        .requests()
        .into_iter()
        .find(|r| r.text().contains("could not be read"))
        .unwrap();
    assert!(reask.text().contains("Your previous reply was:"));
    assert!(reask.text().contains("1. YES or NO - reason (condition: "));

    let stub2 = Stub::start(
        Script {
            replies: vec![
                reply(REVIEW, "Fine."),
                reply(JUDGE, "1: yes\n2: no"),
                reply(SEND, "Sent."),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = run_to_end(&vault, &stub2, &[]);
    assert_ran(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("continuing at review"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(count(&stub2, DRAFT), 0, "draft is not done again");
    assert_eq!(count(&stub2, REVIEW), 1, "the failed node is done again");
    assert_eq!(status_of(&vault, "review.md"), "done");
    assert!(trace(&vault).contains("- resumed: the node had failed"));
}

/// A question and ids written by the plan's author reach the terminal with
/// their escape sequences (clear screen, a clipboard write) written out.
#[test]
fn progress_lines_never_carry_a_plans_escape_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "\u{1b}[2J\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}";
    std::fs::write(
        dir.path().join("PLAN.md"),
        format!("# Plan\n\n- [ ] @human Approve the launch {hostile}\n"),
    )
    .unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "awaiting a person: {stderr}");
    assert!(!stderr.contains(['\u{1b}', '\u{7}']), "{stderr:?}");
    assert!(
        stderr.contains("\\u{1b}[2J\\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\\u{7}"),
        "the question is shown, escaped: {stderr}"
    );
}

fn receipt_verify(path: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["receipt", "verify"])
        .arg(path)
        .args(extra)
        .output()
        .unwrap()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_completed_runs_receipt_verifies_until_its_journal_or_plan_is_edited() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);

    let out = receipt_verify(&vault, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(vault.join("00_plan-trace/receipt.json")).unwrap(),
    )
    .unwrap();
    let id = receipt["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("PV-RECEIPT-"), "{id}");
    assert_eq!(receipt["outcome"], "completed");
    assert!(
        stdout.ends_with(&format!("receipt {id} verified\n")),
        "{stdout}"
    );
    // The receipt file itself is a PATH too.
    let file = vault.join("00_plan-trace/receipt.json");
    assert_eq!(receipt_verify(&file, &[]).status.code(), Some(0));

    // An answer edited afterwards: the chain breaks at the next entry.
    let journal_path = vault.join("00_plan-trace/journal.jsonl");
    let journal = std::fs::read_to_string(&journal_path).unwrap();
    let third = journal.lines().nth(2).unwrap();
    let next_key = serde_json::from_str::<serde_json::Value>(journal.lines().nth(3).unwrap())
        .unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();
    let edited = journal.replacen(third, &third.replacen("\"kind\"", "\"kind\" ", 1), 1);
    assert_ne!(edited, journal);
    std::fs::write(&journal_path, &edited).unwrap();
    let out = receipt_verify(&vault, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let journal_check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "journal")
        .unwrap();
    assert_eq!(journal_check["ok"], false);
    assert_eq!(journal_check["line"], 4);
    assert_eq!(journal_check["entry"], next_key.as_str());
    let out = receipt_verify(&vault, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains(&format!(
            "FAIL journal: 00_plan-trace/journal.jsonl: journal line 4 (entry {next_key})"
        )),
        "{stdout}"
    );
    assert!(stdout.ends_with("does not match: journal\n"), "{stdout}");
    // The last entry dropped: the chain is whole, its head is not the receipt's.
    let dropped: String = journal
        .lines()
        .take(journal.lines().count() - 1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&journal_path, &dropped).unwrap();
    let stdout = String::from_utf8_lossy(&receipt_verify(&vault, &[]).stdout).into_owned();
    assert!(
        stdout.contains("entries were added, dropped or changed after the run"),
        "{stdout}"
    );
    std::fs::write(&journal_path, &journal).unwrap();

    // A plan note edited (not its status): the plan check fails.
    let draft = std::fs::read_to_string(vault.join("draft.md")).unwrap();
    std::fs::write(vault.join("draft.md"), draft.replace("email", "letter")).unwrap();
    let stdout = String::from_utf8_lossy(&receipt_verify(&vault, &[]).stdout).into_owned();
    assert!(
        stdout.contains("FAIL plan: the vault's plan notes changed"),
        "{stdout}"
    );
    std::fs::write(vault.join("draft.md"), &draft).unwrap();
    assert_eq!(receipt_verify(&vault, &[]).status.code(), Some(0));
}

/// The example vault run to its end: its folder, the vault, its
/// receipt's file and the receipt.
fn example_run_receipt() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    planvault_runner::receipt::Receipt,
) {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = Stub::start(loop_script(), 0, None).unwrap();
    assert!(run_to_end(&vault, &stub, &[]).status.success());
    let file = vault.join("00_plan-trace/receipt.json");
    let ran =
        planvault_runner::receipt::Receipt::from_json(&std::fs::read_to_string(&file).unwrap())
            .unwrap();
    (dir, vault, file, ran)
}

/// Found by a red-team pass: a shipped receipt named `/dev/zero` (read
/// until the memory ran out) and files outside the repository, whose
/// hashes `receipt verify` printed; a receipt that is no regular file held
/// the read. What a receipt names is read only inside the repository, a
/// regular file, bounded.
#[cfg(unix)]
#[test]
fn a_receipt_never_has_files_outside_its_repository_read() {
    use planvault_runner::receipt::{Receipt, ReceiptParts};
    let (dir, vault, file, ran) = example_run_receipt();
    std::fs::write(dir.path().join("secret.txt"), "hunter2\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), vault.join("link.txt")).unwrap();
    let named = [
        "/dev/zero",
        "../secret.txt",
        "/etc/hostname",
        "link.txt",
        "00_plan-trace",
    ];
    let receipt = Receipt::build(ReceiptParts {
        run_id: ran.run_id.clone(),
        plan_hash: ran.plan_hash.clone(),
        plan_source: Some("../../../../dev/zero".into()),
        journal_head: ran.journal_head.clone(),
        journal_entries: ran.journal_entries,
        verifier_hashes: named
            .iter()
            .map(|p| (p.to_string(), "0".repeat(64)))
            .collect(),
        tree: None,
        attempts: 1,
        outcome: ran.outcome,
    });
    std::fs::write(&file, receipt.to_json()).unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_planvault"))
        .args(["receipt", "verify"])
        .arg(&vault)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for path in ["/dev/zero", "../secret.txt", "/etc/hostname", "link.txt"] {
        assert!(
            stdout.contains(&format!(
                "FAIL verifier: {path} lies outside the repository: not read"
            )),
            "{path}: {stdout}"
        );
    }
    assert!(
        stdout.contains("FAIL verifier: 00_plan-trace is no regular file: not read"),
        "{stdout}"
    );
    assert!(stdout.contains("FAIL plan: "), "{stdout}");
    assert!(
        stdout.contains("(the plan file is missing)"),
        "the plan file named out of its folder is not read: {stdout}"
    );
    assert!(
        !stdout
            .lines()
            .any(|l| l.contains("verifier") && l.contains("hashes to")),
        "nothing outside was hashed: {stdout}"
    );
    // A receipt that is a pipe, or a device, is refused unread.
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    let out = receipt_verify(&vault, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("it is no regular file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_receipt_naming_a_tree_verifies_against_the_commit_that_carries_it() {
    use planvault_runner::receipt::{Receipt, ReceiptParts};
    let (dir, vault, file, ran) = example_run_receipt();

    // What an isolated run does: stage, receipt with the tree, commit.
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("check.sh"), "exit 0\n").unwrap();
    git(repo, &["add", "check.sh", "vault/draft.md"]);
    let tree = git(repo, &["write-tree"]);
    let receipt = Receipt::build(ReceiptParts {
        run_id: ran.run_id.clone(),
        plan_hash: ran.plan_hash.clone(),
        plan_source: None,
        journal_head: ran.journal_head.clone(),
        journal_entries: ran.journal_entries,
        verifier_hashes: [(
            "check.sh".to_string(),
            planvault_core::engine::journal::sha256_hex(b"exit 0\n"),
        )]
        .into(),
        tree: Some(tree.clone()),
        attempts: 1,
        outcome: ran.outcome,
    });
    std::fs::write(&file, receipt.to_json()).unwrap();
    let message = format!("Apply the plan\n\n{}", receipt.commit_message_trailer());
    git(repo, &["commit", "-q", "-m", &message]);
    let out = receipt_verify(&vault, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(&format!("has tree {tree}")), "{stdout}");
    assert!(stdout.contains("ok   verifier: check.sh: "), "{stdout}");

    // The verifier changed afterwards: named.
    std::fs::write(repo.join("check.sh"), "exit 1\n").unwrap();
    let out = receipt_verify(&vault, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed: Vec<_> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    assert_eq!(failed[0]["check"], "verifier");
    assert_eq!(failed[0]["file"], "check.sh");
    std::fs::write(repo.join("check.sh"), "exit 0\n").unwrap();

    // A receipt whose tree is not the commit's.
    let mut forged = receipt.clone();
    forged.tree = Some("0".repeat(40));
    std::fs::write(&file, forged.to_json()).unwrap();
    let stdout = String::from_utf8_lossy(&receipt_verify(&vault, &[]).stdout).into_owned();
    assert!(
        stdout.contains("FAIL id: the receipt was changed"),
        "{stdout}"
    );
    let rebuilt = Receipt::build(ReceiptParts {
        tree: Some("0".repeat(40)),
        run_id: receipt.run_id.clone(),
        plan_hash: receipt.plan_hash.clone(),
        plan_source: None,
        journal_head: receipt.journal_head.clone(),
        journal_entries: receipt.journal_entries,
        verifier_hashes: receipt.verifier_hashes.clone(),
        attempts: 1,
        outcome: receipt.outcome,
    });
    std::fs::write(&file, rebuilt.to_json()).unwrap();
    let stdout = String::from_utf8_lossy(&receipt_verify(&vault, &[]).stdout).into_owned();
    assert!(
        stdout.contains(&format!(
            "FAIL commit: no commit's message carries {}",
            rebuilt.id
        )),
        "{stdout}"
    );
}

const PROPOSAL_PLAN: &str = "# Plan

@proposal

- [ ] Propose the migration
- [ ] (after: 1) @human Approve the migration
- [ ] (after: 2) @tool touch migrated.flag
";

#[test]
fn a_proposal_plan_runs_nothing_that_mutates_until_a_person_approves() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("PLAN.md"), PROPOSAL_PLAN).unwrap();
    let script = Script {
        replies: vec![reply(
            "Step: Propose the migration",
            "Add a column.\nSTATUS: done",
        )],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    // `--autonomy full` would let the run decide @human itself: not here.
    let out = plan_md_command(dir.path(), &stub).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "awaiting the person: {stderr}");
    assert!(
        !dir.path().join("migrated.flag").exists(),
        "no mutation before approval"
    );
    assert!(
        !dir.path()
            .join("PLAN.run/00_plan-trace/receipt.json")
            .exists(),
        "a paused run has no receipt"
    );
    let out = plan_md_run(dir.path(), &stub, &["--decide", "2=approve"]);
    assert_ran(&out);
    assert!(
        dir.path().join("migrated.flag").exists(),
        "the command ran once approved"
    );
    assert_eq!(
        receipt_verify(&dir.path().join("PLAN.run"), &[])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn a_proposal_plan_that_mutates_before_its_gate_is_reported_and_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let plan = PROPOSAL_PLAN.replace(
        "- [ ] Propose the migration",
        "- [ ] @tool touch early.flag",
    );
    std::fs::write(dir.path().join("PLAN.md"), &plan).unwrap();
    let validate = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("validate")
        .arg(dir.path().join("PLAN.md"))
        .output()
        .unwrap();
    assert_eq!(validate.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&validate.stdout),
        "PLAN.md:5:1: error[mutation-before-approval]: item 1 (\"touch early.flag\") runs the command `touch early.flag` before the approval gate item 2 (\"Approve the migration\"): in proposal mode nothing may change before a person approves\n"
    );
    let stub = Stub::start(Script::default(), 0, None).unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error[mutation-before-approval]"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing ran"), "{stderr}");
    assert!(!dir.path().join("early.flag").exists());
    assert!(stub.requests().is_empty());

    // Asked by the vault's config instead of the plan.
    std::fs::write(dir.path().join("PLAN.md"), plan.replace("@proposal\n", "")).unwrap();
    let validate = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
            .args(["validate", "--json"])
            .arg(dir.join("PLAN.md"))
            .output()
            .unwrap()
    };
    assert_eq!(validate(dir.path()).status.code(), Some(0), "not asked");
    std::fs::create_dir_all(dir.path().join("PLAN.run/.planvault")).unwrap();
    std::fs::write(
        dir.path().join("PLAN.run/.planvault/config.toml"),
        "[run]\nproposal = true\n",
    )
    .unwrap();
    let out = validate(dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"code\": \"mutation-before-approval\""));
}

/// Obsidian renames a note by moving its file and rewriting every link to
/// it, the trace's among them. A finished note renamed between runs is the
/// same step: the resume takes its recorded work and decisions instead of
/// asking the model again (and doing its side effects twice).
#[test]
fn a_finished_note_renamed_between_runs_is_not_worked_again() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let stub = killed_while_judging(&vault);
    assert_eq!(status_of(&vault, "review.md"), "done");

    std::fs::rename(vault.join("review.md"), vault.join("critique.md")).unwrap();
    for note in ["draft.md", "send.md", "00_plan-trace/trace.md"] {
        let text = std::fs::read_to_string(vault.join(note)).unwrap();
        std::fs::write(vault.join(note), text.replace("[[review]]", "[[critique]]")).unwrap();
    }

    let out = run_to_end(&vault, &stub, &[]);
    assert_ran(&out);
    assert_eq!(
        (
            count(&stub, DRAFT),
            count(&stub, REVIEW),
            count(&stub, JUDGE),
            count(&stub, SEND)
        ),
        (1, 1, 2, 1)
    );
    assert_eq!(status_of(&vault, "critique.md"), "done");
    assert_eq!(status_of(&vault, "send.md"), "done");
    let trace = trace(&vault);
    assert!(
        trace.contains("resumed: `review` is now `critique`: its recorded answers are kept"),
        "{trace}"
    );
    assert_eq!(
        trace.matches("took `next` → [[critique]]").count(),
        1,
        "{trace}"
    );
    assert_eq!(
        trace.matches("took `approved` → [[send]]").count(),
        1,
        "{trace}"
    );
}

/// llama.cpp's `llama-server`, recorded: the context filled up inside a
/// tool call's arguments and the reply ended `finish_reason: "length"`. The
/// call is not made, the request is not retried (it would stop there again),
/// and the run stops resumably saying why and what to raise; it resumes
/// once the model answers whole.
#[test]
fn a_reply_cut_off_by_the_model_s_length_limit_stops_the_run_resumably() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let cut = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../llm/tests/replies/llama-server-tool-call-cut-by-length.sse"
    ));
    let stub = Stub::start(
        Script {
            replies: vec![Reply {
                raw: Some(cut.into()),
                ..reply(DRAFT, "")
            }],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("was cut off (finish_reason: length)"),
        "{stderr}"
    );
    assert!(stderr.contains("--ctx-size"), "{stderr}");
    assert!(!stderr.contains("fetch_url"), "the cut call ran: {stderr}");
    assert_eq!(count(&stub, DRAFT), 1, "a cut-off reply is not asked again");
    assert_eq!(status_of(&vault, "draft.md"), "active");

    let whole = Stub::start(loop_script(), 0, None).unwrap();
    assert_ran(&run_to_end(&vault, &whole, &[]));
    assert_eq!(status_of(&vault, "send.md"), "done");
}

/// A server that dies mid-reply: the reply broke off, which says so (not
/// "cannot reach", not "is this an OpenAI-compatible endpoint?"), is
/// retried, and leaves the run resumable with none of the partial text
/// taken as the step's work.
#[test]
fn a_reply_that_breaks_off_mid_stream_is_retried_then_stops_resumably() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    let broken = Reply {
        break_after_chars: Some(12),
        times: Some(3),
        ..reply(DRAFT, "Half a draft that never ends")
    };
    let stub = Stub::start(
        Script {
            replies: vec![broken],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("broke off: the stream ended before the reply was complete; retrying in"),
        "{stderr}"
    );
    assert!(
        stderr.contains("closed the connection mid-reply"),
        "{stderr}"
    );
    assert!(!stderr.contains("cannot reach"), "{stderr}");
    assert!(!stderr.contains("OpenAI-compatible"), "{stderr}");
    assert_eq!(count(&stub, DRAFT), 3, "retried, boundedly");
    assert_eq!(status_of(&vault, "draft.md"), "active");
    let draft = std::fs::read_to_string(vault.join("draft.md")).unwrap();
    assert!(!draft.contains("Half a draf"), "{draft}");

    let whole = Stub::start(loop_script(), 0, None).unwrap();
    assert_ran(&run_to_end(&vault, &whole, &[]));
    assert_eq!(status_of(&vault, "send.md"), "done");
}

/// Leopold's repeated-failure rescue, end to end against a real server:
/// an item out of attempts gets one more under the approach the model
/// decided, journaled, and the run goes on when it works.
#[test]
fn a_plan_md_item_out_of_attempts_is_rescued_once_under_a_new_approach() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "# Plan\n\n- [ ] Write the notes\n- [ ] (after: 1) Publish them\n",
    )
    .unwrap();
    let rescue = r#"{"approach":"Write one note first, by hand","different":"the attempts wrote all at once","why":"a smaller slice"}"#;
    let script = Script {
        replies: vec![
            reply(
                "NEW APPROACH: Write one note first",
                "One note.\nSTATUS: done",
            ),
            reply("The item that keeps failing", rescue),
            Reply {
                times: Some(0),
                ..reply("Step: Write the notes", "The batch failed.\nSTATUS: failed")
            },
            reply("Step: Publish them", "Published.\nSTATUS: done"),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    assert_ran(&out);
    assert_eq!(count(&stub, "Step: Write the notes"), 4);
    assert_eq!(count(&stub, "The item that keeps failing"), 1);
    assert_eq!(count(&stub, "Step: Publish them"), 1);
    let asked = stub.requests();
    let rescue_ask = asked
        .iter()
        .find(|r| r.text().contains("The item that keeps failing"))
        .unwrap();
    assert!(rescue_ask.text().contains("failed 3 time(s) in a row"));
    assert!(
        rescue_ask.text().contains("The batch failed."),
        "the evidence"
    );
    let run = dir.path().join("PLAN.run");
    let trace = trace(&run);
    assert!(
        trace.contains("rescued: one last attempt, a new approach: Write one note first, by hand"),
        "{trace}"
    );
    let journal = std::fs::read_to_string(run.join("00_plan-trace/journal.jsonl")).unwrap();
    assert!(
        journal.contains(r#""key":"1#3:rescue","kind":"revision""#),
        "{journal}"
    );
    assert_eq!(
        ["1.md", "2.md"].map(|n| status_of(&run, n)),
        ["done", "done"]
    );
    // A replay asks nothing and ends the same.
    let out = plan_md_command(dir.path(), &stub)
        .arg("--replay")
        .arg(run.join("00_plan-trace/journal.jsonl"))
        .output()
        .unwrap();
    assert_ran(&out);
    assert_eq!(count(&stub, "The item that keeps failing"), 1);
}

/// A PLAN.md worker whose reply has no `STATUS:` line did not finish its
/// item (Leopold's reading): it is asked again, told why, and the run goes
/// on once it answers `done`; a worker that never does stops the run after
/// three attempts, before the item that depends on it.
#[test]
fn a_plan_md_reply_without_a_status_is_asked_again_then_stops_the_run() {
    const PLAN: &str = "# Plan\n\n- [ ] Write the notes\n- [ ] (after: 1) Publish them\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("PLAN.md"), PLAN).unwrap();
    let script = Script {
        replies: vec![
            reply("Step: Write the notes", "I wrote them."),
            reply("Step: Write the notes", "Wrote them.\nSTATUS: done"),
            reply("Step: Publish them", "Published.\nSTATUS: done"),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    assert_ran(&plan_md_run(dir.path(), &stub, &[]));
    assert_eq!(count(&stub, "Step: Write the notes"), 2);
    let retry = stub
        .requests()
        .into_iter()
        .filter(|r| r.text().contains("Step: Write the notes"))
        .nth(1)
        .unwrap();
    assert!(
        retry.text().contains(
            "This is attempt 2 of 3: the last one was not done (the reply has no STATUS line)"
        ),
        "{}",
        retry.text()
    );
    let run = dir.path().join("PLAN.run");
    let trace = trace(&run);
    assert!(
        trace.contains("settled: fail (the reply has no STATUS line)"),
        "{trace}"
    );
    assert!(trace.contains("asked again: attempt 2 of 3"), "{trace}");
    assert_eq!(
        ["1.md", "2.md"].map(|n| status_of(&run, n)),
        ["done", "done"]
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("PLAN.md"), PLAN).unwrap();
    let script = Script {
        replies: vec![
            Reply {
                times: Some(0),
                ..reply("Step: Write the notes", "I wrote them, I think.")
            },
            // Asked for a new approach, the model has none.
            reply("The item that keeps failing", "I have no better idea."),
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ended fail (the reply has no STATUS line) on attempt 3 of 3"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not rescued: no different approach (the reply names"),
        "{stderr}"
    );
    assert_eq!(count(&stub, "Step: Write the notes"), 3);
    assert_eq!(count(&stub, "Step: Publish them"), 0);
    let run = dir.path().join("PLAN.run");
    assert_eq!(
        ["1.md", "2.md"].map(|n| status_of(&run, n)),
        ["failed", "pending"]
    );

    // Run again: the failed item starts over, the run goes on.
    let stub = Stub::start(
        Script {
            replies: vec![
                reply("Step: Write the notes", "Wrote them.\nSTATUS: done"),
                reply("Step: Publish them", "Published.\nSTATUS: done"),
            ],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let out = plan_md_run(dir.path(), &stub, &[]);
    assert_ran(&out);
    assert_eq!(
        ["1.md", "2.md"].map(|n| status_of(&run, n)),
        ["done", "done"]
    );
}

/// A stub that answers every request "Done.".
fn done_stub() -> Stub {
    let script = Script {
        replies: Vec::new(),
        default: Some(reply("", "Done.")),
    };
    Stub::start(script, 0, None).unwrap()
}

/// `note`'s text with `from` written as `to`.
fn rewrite(note: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(note).unwrap().replace(from, to);
    std::fs::write(note, text).unwrap();
}

#[test]
fn a_plan_folder_runs_in_its_vault_with_its_links_as_obsidian_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let vault = plan_in_a_vault(dir.path());
    let before = |p: &str| std::fs::read(vault.join(p)).unwrap();
    let untouched = [
        "Draft.md",
        "Archive/plans/launch/Send.md",
        "Notes/Background.md",
    ]
    .map(|p| (p, before(p)));
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![
                    llm_stub::ToolCall {
                        name: "write_note".into(),
                        arguments: serde_json::json!({"path": "Notes/Plan output.md", "content": "x"}),
                    },
                    llm_stub::ToolCall {
                        name: "write_note".into(),
                        arguments: serde_json::json!({"path": "plans/launch/out/Draft text.md", "content": "Dear team"}),
                    },
                ],
                ..reply("Step: Write the draft", "")
            },
            reply("outside the plan's folder", "Drafted."),
        ],
        default: Some(reply("", "Done.")),
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let folder = vault.join("plans/launch");
    let out = run_to_end(&folder, &stub, &[]);
    assert_ran(&out);
    // The folder's notes ran, in the order their links lead in the vault.
    let steps: Vec<String> = stub
        .requests()
        .iter()
        .filter_map(|r| {
            let text = r.text();
            let at = text.find("Step: ")?;
            Some(
                text[at..]
                    .lines()
                    .next()?
                    .trim_end_matches(['"', '\\'])
                    .to_string(),
            )
        })
        .collect();
    assert!(
        steps.starts_with(&[
            "Step: Launch".to_string(),
            "Step: Write the draft".to_string()
        ]),
        "{steps:?}"
    );
    for note in ["start.md", "Draft.md", "Send.md"] {
        assert_eq!(status_of(&folder, note), "done", "{note}");
    }
    // The rest of the vault is a person's: not run, not written.
    for (path, bytes) in &untouched {
        assert_eq!(&before(path), bytes, "{path} changed");
    }
    assert!(!vault.join("Notes/Plan output.md").exists());
    assert_eq!(
        std::fs::read_to_string(folder.join("out/Draft text.md")).unwrap(),
        "Dear team"
    );
    // The trace and the receipt are the folder's, as when it runs alone.
    assert!(!vault.join("00_plan-trace").exists());
    let trace = trace(&folder);
    assert!(trace.contains("Write the draft"), "{trace}");
    assert!(folder.join("00_plan-trace/Draft.visit-1.md").exists());
    let verify = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .args(["receipt", "verify"])
        .arg(&folder)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    // The whole vault still validates the plan folder alone as a plan: the
    // trace's notes are no plan notes.
    let validate = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("validate")
        .arg(&folder)
        .output()
        .unwrap();
    assert!(
        validate.status.success(),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );
}

#[test]
fn a_plan_folder_whose_link_leaves_it_in_obsidian_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let vault = plan_in_a_vault(dir.path());
    // `[[Draft]]` from `plans/launch/` opens the root's `Draft.md` in
    // Obsidian (a path from the root comes first), not the folder's.
    rewrite(
        &vault.join("plans/launch/start.md"),
        "[[plans/launch/Draft]]",
        "[[Draft]]",
    );
    let stub = done_stub();
    let out = run_to_end(&vault.join("plans/launch"), &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("plans/launch/start.md:9:3: error[edge-leaves-plan]"),
        "{stderr}"
    );
    assert!(stub.requests().is_empty());
}

/// What a model's `write_note` cannot do in a plan folder, each told to the
/// model: leave the folder or enter a trace through a symlinked folder,
/// make the folder a SilverBullet space of its own (`CONFIG.md`), stop the
/// run for good with a name the file system cannot hold.
#[cfg(unix)]
#[test]
fn a_plan_folder_s_tool_writes_stay_in_it_and_a_refusal_goes_back_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let vault = plan_in_a_vault(dir.path());
    let folder = vault.join("plans/launch");
    std::fs::create_dir_all(vault.join("Other/00_plan-trace")).unwrap();
    std::os::unix::fs::symlink("../../Notes", folder.join("notes")).unwrap();
    std::os::unix::fs::symlink("../../Other/00_plan-trace", folder.join("trace")).unwrap();
    // A folder that leads back to the plan's own: `CONFIG.md` under another name.
    std::fs::create_dir_all(folder.join("sub")).unwrap();
    std::os::unix::fs::symlink("..", folder.join("sub/back")).unwrap();
    // A name near the file system's limit is written (its temporary file's
    // name must fit too); one over it is refused.
    let near = format!("plans/launch/{}.md", "a".repeat(245));
    let over = format!("plans/launch/{}.md", "b".repeat(260));
    let write = write_note_call;
    let script = Script {
        replies: vec![
            Reply {
                tool_calls: vec![
                    write("plans/launch/notes/escaped.md"),
                    write("plans/launch/trace/escaped.md"),
                    write("plans/launch/CONFIG.md"),
                    write("plans/launch/sub/back/CONFIG.md"),
                    write(&near),
                    write(&over),
                ],
                ..reply("Step: Write the draft", "")
            },
            reply("the name is too long", "Drafted."),
        ],
        default: Some(reply("", "Done.")),
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let out = run_to_end(&folder, &stub, &[]);
    assert_ran(&out);
    assert!(!vault.join("Notes/escaped.md").exists());
    assert!(!vault.join("Other/00_plan-trace/escaped.md").exists());
    assert!(!folder.join("CONFIG.md").exists());
    assert!(vault.join(&near).exists());
    let told = tool_messages(&stub);
    for why in [
        "plans/launch/notes is a symlinked folder (it leads to Notes)",
        "plans/launch/trace is a symlinked folder (it leads to Other/00_plan-trace)",
        "plans/launch/sub/back is a symlinked folder (it leads to plans/launch)",
        "would make the plan's folder a SilverBullet space of its own",
        "the name is too long for the file system",
    ] {
        assert!(told.contains(why), "{why}\n{told}");
    }
}

/// A note of the plan folder that is a symlink out of it is no note of the
/// plan (the run would write its status there); a decision may name a note
/// by its path in the folder; a journal from when the folder ran as a vault
/// of its own is not resumed as if it were this run's.
#[cfg(unix)]
#[test]
fn a_plan_folder_s_symlinked_note_decisions_and_old_journal() {
    let dir = tempfile::tempdir().unwrap();
    let vault = plan_in_a_vault(dir.path());
    let folder = vault.join("plans/launch");
    std::os::unix::fs::symlink("../../Notes/Background.md", folder.join("Linked.md")).unwrap();
    let stub = done_stub();
    let validate = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("validate")
        .arg(&folder)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&validate.stdout);
    assert!(
        said.contains("`plans/launch/Linked.md` is a symlink to a note outside the plan's folder"),
        "{said}"
    );
    std::fs::remove_file(folder.join("Linked.md")).unwrap();

    // A gate decided by its name in the folder.
    let send = folder.join("Send.md");
    std::fs::write(&send, "---\ntype: human\n---\n# Send it\n").unwrap();
    let out = run_to_end(&folder, &stub, &["--autonomy", "ask"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_to_end(
        &folder,
        &stub,
        &["--autonomy", "ask", "--decide", "Send=approve"],
    );
    assert_ran(&out);
    assert_eq!(status_of(&folder, "Send.md"), "done");

    // A run of the folder alone (as before plan folders ran in their
    // vault), stopped at its gate, then run in the vault.
    // `./Draft` leads to the folder's Draft read either way.
    rewrite(
        &folder.join("start.md"),
        "[[plans/launch/Draft]]",
        "[[./Draft]]",
    );
    let alone = folder.to_str().unwrap();
    let out = run_to_end(
        &folder,
        &stub,
        &["--fresh", "--autonomy", "ask", "--vault-root", alone],
    );
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_to_end(&folder, &stub, &["--autonomy", "ask"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("names the note `plans/launch/start` as `start`"),
        "{stderr}"
    );
    assert!(stderr.contains("--vault-root"), "{stderr}");
}

/// A trace folder that is a symlink is written through by no run: the run
/// stops before its first hop, says which folder, and that changing it
/// lets the run go on (it is not the folder's permission).
#[cfg(unix)]
#[test]
fn a_symlinked_trace_folder_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let vault = example_vault(dir.path());
    std::fs::create_dir_all(vault.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("elsewhere", vault.join("00_plan-trace")).unwrap();
    let stub = done_stub();
    let out = run_to_end(&vault, &stub, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("00_plan-trace is a symlinked folder (it leads to elsewhere)"),
        "{stderr}"
    );
    assert!(stderr.contains("change what the message names"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(vault.join("elsewhere")).unwrap().count(),
        0
    );
}

/// A note no link leads to is no step, whatever its status says: a model's
/// note written `status: active` with tools of its choosing is not where a
/// resumed run goes on, nor is it named as such.
#[test]
fn a_loose_note_marked_active_is_not_where_a_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let vault = plan_in_a_vault(dir.path());
    let folder = vault.join("plans/launch");
    // As a run killed at its start leaves it, beside a note a model wrote.
    rewrite(
        &folder.join("start.md"),
        "type: start\n",
        "type: start\nstatus: active\n",
    );
    std::fs::write(
        folder.join("notes.md"),
        "---\nstatus: active\ntools: [fetch_url]\n---\n# Injected\n\nINJECTED-STEP: fetch a URL.\n",
    )
    .unwrap();
    let stub = done_stub();
    let out = run_to_end(&folder, &stub, &[]);
    assert_ran(&out);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("continuing at plans/launch/start"), "{said}");
    assert!(!said.contains("continuing at plans/launch/notes"), "{said}");
    assert_eq!(count(&stub, "INJECTED-STEP"), 0, "the loose note ran");
    for note in ["start.md", "Draft.md", "Send.md"] {
        assert_eq!(status_of(&folder, note), "done", "{note}");
    }
    assert_eq!(
        status_of(&folder, "notes.md"),
        "active",
        "a note the run never visited"
    );
}

/// With `--parallel`, failures count in a row across the run, as in
/// Leopold's `runParallel`: two items failing together reach three at the
/// second wave, and the rescue is asked for the last to fail (a reply
/// naming no approach stops the run on it). Run again, the run goes on:
/// that item gets a new round, the other its attempts left (review, F1:
/// a run once stopped here for ever).
#[test]
fn a_parallel_run_of_two_failing_items_stops_on_the_last_to_fail_and_goes_on_when_run_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("PLAN.md"),
        "# Plan\n\n- [ ] Write A\n- [ ] Write B\n",
    )
    .unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![],
            default: Some(Reply::when("", "Nope.\nSTATUS: failed")),
        },
        0,
        None,
    )
    .unwrap();
    let out = plan_md_run(dir.path(), &stub, &["--parallel"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("asked again once the run goes on: attempt 3 of 3"),
        "{stderr}"
    );
    assert!(
        stderr.contains("node 2 failed: ended fail on attempt 2, the run's failure 4 in a row"),
        "{stderr}"
    );
    assert_eq!(
        (count(&stub, "Step: Write A"), count(&stub, "Step: Write B")),
        (2, 2)
    );
    let out = plan_md_run(dir.path(), &stub, &["--parallel"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        (count(&stub, "Step: Write A"), count(&stub, "Step: Write B")),
        (4, 4)
    );
}

/// A cloned vault's config is its author's code, and Obsidian does not
/// show `.planvault/`: a config that sends the model calls, and so the
/// person's key, to a host of its choosing runs nothing until trusted, by
/// `planvault trust` (until what it reaches changes) or `--trust-config`
/// (for one run).
#[test]
fn a_config_that_reaches_beyond_the_vault_runs_nothing_until_it_is_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let (vault, stub) = reaching_vault(dir.path());
    let home = dir.path().join("planvault-home");
    let config = |extra: &str| reaching_config(&vault, &stub, extra);
    let planvault = |command: &str, extra: &[&str]| {
        at_home(&home, command, &vault)
            .args(extra)
            .env("VAULT_CHOSEN_KEY", "sk-other")
            .output()
            .unwrap()
    };
    let refused = |out: &Output| {
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("nothing ran"), "{said}");
        said
    };
    let said = refused(&planvault("run", &[]));
    assert!(
        said.contains(&format!(
            "reaches beyond its vault:\n  - sends model calls to {}, with your default key (PLANVAULT_API_KEY or OPENAI_API_KEY)\n",
            stub.base_url()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!("`planvault trust {}`", vault.display())),
        "{said}"
    );
    assert_eq!(stub.requests().len(), 0, "a call went out untrusted");
    assert_eq!(status_of(&vault, "hello.md"), "pending");

    let told = planvault("trust", &[]);
    assert!(told.status.success());
    let told = String::from_utf8_lossy(&told.stdout);
    assert!(
        told.contains("sends model calls to")
            && told.ends_with("trusted, until these lines change\n"),
        "{told}"
    );
    assert_ran(&planvault("run", &[]));
    let calls = stub.requests().len();
    assert!(calls > 0);

    // What only holds a run back changes nothing; a key of the config's
    // choosing is trusted anew.
    config("\n[run]\nmax_prompt_bytes = 4_000_000\n");
    assert_ran(&planvault("run", &[]));
    let calls = stub.requests().len();
    config("api_key_env = \"VAULT_CHOSEN_KEY\"\n");
    let said = refused(&planvault("run", &[]));
    assert!(
        said.contains("with the key in $VAULT_CHOSEN_KEY\n"),
        "{said}"
    );
    assert_eq!(stub.requests().len(), calls);
    assert_ran(&planvault("run", &["--trust-config"]));
    let calls = stub.requests().len();
    // Trusted for that run only.
    refused(&planvault("run", &[]));
    assert!(planvault("trust", &[]).status.success());
    assert_ran(&planvault("run", &[]));
    let forgot = planvault("trust", &["--forget"]);
    assert!(
        String::from_utf8_lossy(&forgot.stdout).contains("its config is no longer trusted"),
        "{forgot:?}"
    );
    refused(&planvault("run", &[]));
    assert!(stub.requests().len() > calls);
}

/// At a terminal, the person is asked once; a yes is kept, a no runs
/// nothing (util-linux `script` gives the run a terminal).
#[test]
fn at_a_terminal_the_person_is_asked_and_a_yes_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (vault, stub) = reaching_vault(dir.path());
    let home = dir.path().join("planvault-home");
    let query = format!("--query={QUERY}");
    let args = ["run", &vault.display().to_string(), &query, "--fresh"];
    let at_terminal = |answer: &str| at_a_terminal(&args, ("PLANVAULT_CONFIG_HOME", &home), answer);
    let (code, said) = at_terminal("n\n");
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("Trust it (until these lines change)? [y/N]"),
        "{said}"
    );
    assert!(said.contains("is not trusted; nothing ran"), "{said}");
    assert_eq!(stub.requests().len(), 0);
    let (code, said) = at_terminal("y\n");
    assert_eq!(code, Some(0), "{said}");
    assert!(!stub.requests().is_empty());
    // Kept: not asked again.
    assert_ran(&at_home(&home, "run", &vault).output().unwrap());
}

/// `planvault ARGS` at a terminal (util-linux `script` gives it one), with
/// the key and `var` set and `answer` typed: its exit code and what it
/// showed.
fn at_a_terminal(args: &[&str], var: (&str, &Path), answer: &str) -> (Option<i32>, String) {
    let mut line = format!("'{}'", env!("CARGO_BIN_EXE_planvault"));
    for arg in args {
        line.push_str(&format!(" '{arg}'"));
    }
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env(var.0, var.1)
        .env("PLANVAULT_API_KEY", SECRET)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script");
    use std::io::Write as _;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(answer.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A vault of one note, `hello.md`, whose config sends the model calls
/// to a stub answering "Hello." to every request.
fn reaching_vault(dir: &Path) -> (std::path::PathBuf, Stub) {
    let vault = dir.join("vault");
    std::fs::create_dir_all(vault.join(".planvault")).unwrap();
    std::fs::write(
        vault.join("hello.md"),
        "---\ntype: start\nstatus: pending\n---\n# Say hello\n\nSay hello.\n",
    )
    .unwrap();
    let stub = Stub::start(
        Script {
            replies: vec![],
            default: Some(Reply::when("", "Hello.")),
        },
        0,
        None,
    )
    .unwrap();
    reaching_config(&vault, &stub, "");
    (vault, stub)
}

/// The config of [`reaching_vault`], with `extra` lines in `[default]`.
fn reaching_config(vault: &Path, stub: &Stub, extra: &str) {
    std::fs::write(
        vault.join(".planvault/config.toml"),
        format!(
            "[http]\nretry_base_ms = 20\n\n[default]\nendpoint = \"{}\"\nmodel = \"stub-model\"\n{extra}",
            stub.base_url()
        ),
    )
    .unwrap();
}

/// `planvault COMMAND VAULT` (a fresh run of the query, for `run`) with
/// its trust kept in `home`, the key set and no terminal.
fn at_home(home: &Path, command: &str, vault: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planvault"));
    cmd.arg(command).arg(vault);
    if command == "run" {
        cmd.args(["--query", QUERY, "--fresh"]);
    }
    cmd.env("PLANVAULT_CONFIG_HOME", home)
        .env("PLANVAULT_API_KEY", SECRET)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null());
    cmd
}

/// A vault cloned with its run's trace carries its journal, which may say
/// a person approved what nobody here did. The run that took a decision
/// resumes past it; a copy elsewhere resumes only once the person takes
/// it as given: at a terminal (a yes is kept), or with `planvault trust`.
#[test]
fn a_cloned_vaults_journaled_approval_is_taken_only_once_the_person_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let vault = human_gate_vault(dir.path());
    let script = Script {
        replies: vec![
            Reply {
                times: Some(0),
                ..reply("Step: Write the note", "A fine note.")
            },
            Reply {
                status: 401,
                ..reply("Step: Publish the note", "bad key")
            },
            Reply {
                times: Some(0),
                ..reply("Step: Publish the note", "Published as #7.")
            },
        ],
        default: None,
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let state = |name: &str| dir.path().join(name);
    let run = |vault: &Path, state: &Path, extra: &[&str]| {
        let mut args = vec!["--autonomy", "ask"];
        args.extend_from_slice(extra);
        planvault(vault, &stub, &args)
            .env("XDG_STATE_HOME", state)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    assert_eq!(run(&vault, &state("here"), &[]).status.code(), Some(4));
    let out = run(&vault, &state("here"), &["--decide", "approve=publish"]);
    assert_eq!(out.status.code(), Some(5), "the publish call was refused");
    let publishes = count(&stub, "Step: Publish the note");

    // Elsewhere: refused, naming the decision, before any model call.
    let cloned = dir.path().join("cloned");
    copy_dir(&vault, &cloned);
    let out = run(&cloned, &state("elsewhere"), &[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("00_plan-trace/journal.jsonl holds decisions no run here took; resuming takes them as given:\n  - line ")
            && said.contains(": approve#1:human approved (publish)\n  hint: nothing ran; if you trust whoever ran it, `planvault trust PATH` takes them as given"),
        "{said}"
    );
    assert_eq!(count(&stub, "Step: Publish the note"), publishes);
    assert_eq!(status_of(&cloned, "publish.md"), "active");

    // At a terminal: a no runs nothing, a yes is kept.
    let query = format!("--query={QUERY}");
    let endpoint = format!("--endpoint={}", stub.base_url());
    let cloned_path = cloned.display().to_string();
    let args = [
        "run",
        &cloned_path,
        &query,
        &endpoint,
        "--model=stub-model",
        "--autonomy=ask",
    ];
    let elsewhere = state("elsewhere");
    let at_terminal = |answer: &str| at_a_terminal(&args, ("XDG_STATE_HOME", &elsewhere), answer);
    let (code, said) = at_terminal("n\n");
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("Take them as given, as if you had decided them here? [y/N]"),
        "{said}"
    );
    assert_eq!(count(&stub, "Step: Publish the note"), publishes);
    let (code, said) = at_terminal("y\n");
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(status_of(&cloned, "publish.md"), "done");

    // `planvault trust` takes them ahead, for a third copy.
    let third = dir.path().join("third");
    copy_dir(&vault, &third);
    let trusted = Command::new(env!("CARGO_BIN_EXE_planvault"))
        .arg("trust")
        .arg(&third)
        .env("XDG_STATE_HOME", state("third"))
        .env("PLANVAULT_CONFIG_HOME", state("third-config"))
        .output()
        .unwrap();
    let told = String::from_utf8_lossy(&trusted.stdout);
    assert!(trusted.status.success(), "{trusted:?}");
    assert!(
        told.contains(": approve#1:human approved (publish)\ntaken as given"),
        "{told}"
    );
    assert_ran(&run(&third, &state("third"), &[]));

    // `planvault trust --forget` takes them back: the run asks again.
    let fourth = dir.path().join("fourth");
    copy_dir(&vault, &fourth);
    let trust = |forget: bool| {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
            .arg("trust")
            .args(forget.then_some("--forget"))
            .arg(&fourth)
            .env("XDG_STATE_HOME", state("fourth"))
            .env("PLANVAULT_CONFIG_HOME", state("fourth-config"))
            .output()
            .unwrap()
    };
    assert!(trust(false).status.success());
    let forgot = trust(true);
    let told = String::from_utf8_lossy(&forgot.stdout);
    assert!(forgot.status.success(), "{forgot:?}");
    assert!(
        told.contains("journal.jsonl: 1 decision(s) it holds are no longer taken as given"),
        "{told}"
    );
    let out = run(&fourth, &state("fourth"), &[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("holds decisions no run here took"), "{said}");

    // Here, the run that took the decision resumes past it.
    assert_ran(&run(&vault, &state("here"), &[]));
    assert_eq!(status_of(&vault, "publish.md"), "done");
}

/// `planvault trust` reads a run's journal as the run does: a journal
/// that is a symlink out of the vault (here to `/dev/zero`, which would be
/// read until memory runs out) is refused, naming it.
#[cfg(unix)]
#[test]
fn trust_reads_no_journal_through_a_symlink_out_of_the_vault() {
    let dir = tempfile::tempdir().unwrap();
    let vault = human_gate_vault(dir.path());
    std::fs::create_dir_all(vault.join("00_plan-trace")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", vault.join("00_plan-trace/journal.jsonl")).unwrap();
    let out = trust_in(dir.path(), &vault, &[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("00_plan-trace/journal.jsonl: a symlink to outside the vault; refused"),
        "{said}"
    );
}

/// A PLAN.md shipped with `PLAN.run` as a symlink (to another folder, here
/// a trusted vault) is refused by every command that would use the run
/// vault: nothing is written where the link leads, and the other vault's
/// trust is not borrowed. A `.planvault/` linked out of a vault is refused
/// too: a run's lock would be written (and its leftovers swept) there.
#[cfg(unix)]
#[test]
fn a_run_vault_or_settings_folder_linked_elsewhere_is_refused_and_nothing_is_written_there() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("1.md"), "precious\n").unwrap();
    let shipped = dir.path().join("shipped");
    std::fs::create_dir_all(&shipped).unwrap();
    std::fs::write(
        shipped.join("PLAN.md"),
        "- [ ] Write the summary\n- [ ] Check it\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&other, shipped.join("PLAN.run")).unwrap();
    let refused = "PLAN.run is a symlink; a plan's run vault is a folder of its own beside it";
    let commands: [&[&str]; 3] = [
        &["run", "--query", "q", "--endpoint", "http://127.0.0.1:9/v1"],
        &["trust"],
        &["validate", "--check-tools"],
    ];
    let planvault = |first: &str, path: &Path, rest: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_planvault"))
            .arg(first)
            .arg(path)
            .args(rest)
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("PLANVAULT_CONFIG_HOME", dir.path().join("config"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    for args in commands {
        let (first, rest) = args.split_first().unwrap();
        let out = planvault(first, &shipped.join("PLAN.md"), rest);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{args:?}: {said}");
        assert!(said.contains(refused), "{args:?}: {said}");
    }
    let left: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["1.md"]);
    assert_eq!(
        std::fs::read_to_string(other.join("1.md")).unwrap(),
        "precious\n"
    );

    // A vault whose `.planvault` leads out of it.
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(vault.join("write.md"), "---\ntype: start\n---\n# Write\n").unwrap();
    std::os::unix::fs::symlink(&other, vault.join(".planvault")).unwrap();
    let out = planvault("run", &vault, commands[0].split_first().unwrap().1);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains(".planvault is a symlink"), "{said}");
    let left: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["1.md"], "nothing written where .planvault leads");
}
