//! A PLAN.md and a generated JSON plan submitted to Temporal end as
//! `planvault run` leaves them: a real dev server (testkit/temporal-dev), a
//! real `planvault worker` process, the scripted OpenAI-compatible stub.

use llm_stub::{Reply, Script, Stub};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use temporal_dev::DevServer;

const QUERY: &str = "ship the release";

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn planvault() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planvault"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("PLANVAULT_API_KEY");
    cmd
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `planvault run PLAN` against `stub`, optionally replaying `journal`.
fn run_plan(plan: &Path, stub: &Stub, journal: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = planvault();
    cmd.arg("run")
        .arg(plan)
        .args(args)
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .args(["--model", "stub-model"]);
    if let Some(journal) = journal {
        cmd.arg("--replay").arg(journal);
    }
    cmd.output().unwrap()
}

/// Submit `plan` to a fresh dev server served by one worker, and wait for
/// its end. `None` where the dev server is not installed (skipped).
fn submit_and_wait(plan: &Path, stub: &Stub, args: &[&str]) -> Option<Output> {
    let mut server = DevServer::for_test()?;
    // The worker's folder is not the plan's: a command that finds its
    // file ran where the plan is.
    let _worker = Killed(
        planvault()
            .args(["worker", "--temporal", &server.address()])
            .args(["--task-queue", "plans"])
            .current_dir(std::env::temp_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = planvault()
        .arg("submit")
        .arg(plan)
        .args(args)
        .args(["--temporal", &server.address(), "--task-queue", "plans"])
        .args(["--query", QUERY, "--endpoint", &stub.base_url()])
        .args(["--model", "stub-model", "--wait"])
        .output()
        .unwrap();
    if !out.status.success() {
        out.stderr
            .extend(format!("\n{}", server.report()).into_bytes());
    }
    // The history, plan file read and materializing included, replays on
    // this build's workflow (the SDK's replayer): it is deterministic.
    if out.status.success() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let id = stdout
            .trim()
            .strip_prefix("submitted ")
            .unwrap_or_else(|| panic!("{}", text(&out)));
        let target = planvault_temporal::client::Target {
            address: server.address(),
            namespace: "default".into(),
            task_queue: "plans".into(),
        };
        planvault_temporal::client::replay(&target, id).expect("the history replays");
    }
    Some(out)
}

/// Every file under `root` (path → bytes), dot-folders left out.
fn files(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.split('/').any(|part| part.starts_with('.')) {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A folder's files with the run's id replaced, but the receipt (it holds
/// its moment): what two runs of the same plan with the same answers must
/// agree on byte for byte, the journal's hash chain included.
fn comparable(root: &Path) -> Vec<(String, String)> {
    let all = files(root);
    let id = all
        .iter()
        .find(|(path, _)| path.ends_with("00_plan-trace/run-id"))
        .map(|(_, id)| String::from_utf8_lossy(id).trim().to_string())
        .expect("a run id");
    all.into_iter()
        .filter(|(path, _)| !path.ends_with("receipt.json") && !path.ends_with("receipt.md"))
        .map(|(path, bytes)| {
            let text = String::from_utf8(bytes).unwrap();
            (path, text.replace(&id, "<run-id>"))
        })
        .collect()
}

fn assert_same(ours: &Path, theirs: &Path) {
    let (ours, theirs) = (comparable(ours), comparable(theirs));
    let names = |f: &[(String, String)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs));
    for ((path, a), (_, b)) in ours.iter().zip(&theirs) {
        assert_eq!(a, b, "{path} differs from `planvault run`'s");
    }
}

/// Three copies of the plan `name` with `text`, for `planvault run`, the
/// Temporal run and the replay.
fn three_copies(dir: &Path, name: &str, text: &str, extra: &[(&str, &str)]) -> [PathBuf; 3] {
    ["local", "temporal", "replayed"].map(|copy| {
        let folder = dir.join(copy);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(name), text).unwrap();
        for (file, content) in extra {
            std::fs::write(folder.join(file), content).unwrap();
        }
        folder
    })
}

/// The Temporal run ends as `planvault run` ended, and `planvault run
/// --replay` of its journal calls no model.
/// `args` go to both (`--parallel`).
fn compare(
    dir: &Path,
    name: &str,
    plan: &str,
    extra: &[(&str, &str)],
    script: Script,
    args: &[&str],
) {
    let [local, temporal, replayed] = three_copies(dir, name, plan, extra);
    let local_stub = Stub::start(script.clone(), 0, None).unwrap();
    let out = run_plan(&local.join(name), &local_stub, None, args);
    assert!(out.status.success(), "{}", text(&out));

    let stub = Stub::start(script, 0, None).unwrap();
    let Some(out) = submit_and_wait(&temporal.join(name), &stub, args) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        stub.requests().len(),
        local_stub.requests().len(),
        "the same model calls, each once"
    );
    assert_same(&temporal, &local);

    let run = temporal.join(name.replace(".md", ".run").replace(".json", ".run"));
    let silent = Stub::start(Script::default(), 0, None).unwrap();
    let out = run_plan(
        &replayed.join(name),
        &silent,
        Some(&run.join("00_plan-trace/journal.jsonl")),
        args,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(silent.requests().len(), 0, "a replay calls no model");
    // A replay calls no tool either (a `write_note`'s file is not made
    // again): every file it has is the run's.
    let theirs = comparable(&local);
    for (path, replayed) in comparable(&replayed) {
        let Some((_, ran)) = theirs.iter().find(|(p, _)| *p == path) else {
            panic!("the replay made {path}, which the run did not");
        };
        assert_eq!(&replayed, ran, "{path} differs from the run's");
    }
}

/// Built (its `@tool` command finds the flag in the plan's folder and
/// routes to 3), the follow-ups amend the plan with a fourth item, which
/// runs; the rollback is bypassed.
const PLAN_MD: &str = "# Release

- [ ] Build it
- [ ] (after: 1) @tool test -f built.flag
      @on exit=0 -> 3
      @on exit!=0 -> 4
- [ ] (after: 2) @feedback Propose follow-ups
- [ ] (after: 2) Roll it back
";

#[test]
fn a_plan_md_run_through_temporal_ends_as_planvault_run_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script {
        replies: vec![
            Reply::when("Step: Build it", "Built.\nSTATUS: done"),
            Reply::when(
                "Step: Propose follow-ups",
                "One idea.\n```leopold-amend\nadd: Write the changelog\n```\nSTATUS: done",
            ),
            Reply::when("Step: Write the changelog", "Written.\nSTATUS: done"),
        ],
        default: None,
    };
    compare(
        dir.path(),
        "PLAN.md",
        PLAN_MD,
        &[("built.flag", "")],
        script,
        &[],
    );
    if !dir.path().join("temporal/PLAN.run").exists() {
        return; // skipped: no dev server
    }
    // What the comparison stands on: the plan amended in place, each
    // item done checked (the bypassed rollback open), the command's route
    // taken, the amended item run.
    let checked = PLAN_MD
        .replace("- [ ] Build", "- [x] Build")
        .replace("- [ ] (after: 1) @tool", "- [x] (after: 1) @tool")
        .replace("- [ ] (after: 2) @feedback", "- [x] (after: 2) @feedback");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("temporal/PLAN.md")).unwrap(),
        format!("{checked}- [x] Write the changelog\n")
    );
    let statuses: Vec<String> = ["1", "2", "3", "4", "5"]
        .iter()
        .map(|n| {
            let note =
                std::fs::read_to_string(dir.path().join(format!("temporal/PLAN.run/{n}.md")))
                    .unwrap();
            note.lines()
                .find_map(|l| l.strip_prefix("status: "))
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(statuses, ["done", "done", "done", "pending", "done"]);
}

/// Two items emit one key: one at a time, the routed item 3 runs before 2
/// and 2's value steers item 4 to 5; in waves (`--parallel`, through
/// Temporal too) 3's, settled after 2's, steers it to 6.
#[test]
fn a_plan_md_submitted_with_parallel_runs_in_waves_as_planvault_run_does() {
    let plan = "- [ ] Step 1\n  @on ok -> 3\n- [ ] Step 2\n  @emit k=two\n- [ ] Step 3\n  @emit k=three\n- [ ] (after: 2, 3) Step 4\n  @on k=two -> 5\n  @on k=three -> 6\n- [ ] (after: 4) Step 5\n- [ ] (after: 4) Step 6\n";
    for (args, done) in [(&[][..], "5"), (&["--parallel"][..], "6")] {
        let dir = tempfile::tempdir().unwrap();
        let script = Script {
            replies: Vec::new(),
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        };
        compare(dir.path(), "PLAN.md", plan, &[], script, args);
        for copy in ["local", "temporal"] {
            let run = dir.path().join(copy).join("PLAN.run");
            if !run.exists() {
                continue; // skipped: no dev server
            }
            let note = std::fs::read_to_string(run.join(format!("{done}.md"))).unwrap();
            assert!(note.contains("status: done"), "{copy} {args:?}: {note}");
        }
    }
}

/// Leopold's `--parallel N` through Temporal as through `planvault run`:
/// in waves of at most two, item 1's route puts 4 before 3 in the second
/// wave, so 3's key, settled last, steers 5 to 6; in one wave of all four
/// (a bare `--parallel`), 4 settles last and steers it to 7.
#[test]
fn a_plan_md_submitted_with_parallel_n_runs_waves_of_at_most_n_as_planvault_run_does() {
    let plan = "- [ ] Step 1\n  @on ok -> 4\n- [ ] Step 2\n- [ ] Step 3\n  @emit k=three\n- [ ] Step 4\n  @emit k=four\n- [ ] (after: 3, 4) Step 5\n  @on k=three -> 6\n  @on k=four -> 7\n- [ ] (after: 5) Step 6\n- [ ] (after: 5) Step 7\n";
    for (args, done, not) in [
        (&["--parallel", "2"][..], "6", "7"),
        (&["--parallel"][..], "7", "6"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let script = Script {
            replies: Vec::new(),
            default: Some(Reply::when("", "Done.\nSTATUS: done")),
        };
        compare(dir.path(), "PLAN.md", plan, &[], script, args);
        for copy in ["local", "temporal"] {
            let run = dir.path().join(copy).join("PLAN.run");
            if !run.exists() {
                continue; // skipped: no dev server
            }
            let note = |n: &str| std::fs::read_to_string(run.join(format!("{n}.md"))).unwrap();
            assert!(
                note(done).contains("status: done"),
                "{copy} {args:?}: {}",
                note(done)
            );
            assert!(
                !note(not).contains("status: done"),
                "{copy} {args:?}: {}",
                note(not)
            );
        }
    }
}

/// In waves (`--parallel`), failures count in a row across the run through
/// Temporal as through `planvault run`: two items failing together reach
/// three at the second wave, the last to fail is rescued, and the other,
/// asked again beside its last attempt, is done; the run completes.
#[test]
fn a_plan_md_in_waves_rescues_the_last_to_fail_through_temporal_as_planvault_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "- [ ] Write the notes\n- [ ] Write the index\n- [ ] (after: 1, 2) Publish them\n";
    let script = Script {
        replies: vec![
            Reply {
                times: Some(0),
                ..Reply::when("NEW APPROACH: one page", "One page.\nSTATUS: done")
            },
            Reply {
                times: Some(0),
                ..Reply::when(
                    "The item that keeps failing",
                    r#"{"approach":"one page","different":"not all at once"}"#,
                )
            },
            Reply {
                times: Some(2),
                ..Reply::when("Step: Write the notes", "Failed.\nSTATUS: failed")
            },
            Reply {
                times: Some(0),
                ..Reply::when("Step: Write the index", "Failed.\nSTATUS: failed")
            },
        ],
        default: Some(Reply::when("", "Done.\nSTATUS: done")),
    };
    compare(dir.path(), "PLAN.md", plan, &[], script, &["--parallel"]);
    for copy in ["local", "temporal"] {
        let run = dir.path().join(copy).join("PLAN.run");
        if !run.exists() {
            continue; // skipped: no dev server
        }
        let trace = std::fs::read_to_string(run.join("00_plan-trace/trace.md")).unwrap();
        assert!(
            trace.contains("rescued: one last attempt, a new approach: one page"),
            "{copy}: {trace}"
        );
        for n in ["1", "2", "3"] {
            let note = std::fs::read_to_string(run.join(format!("{n}.md"))).unwrap();
            assert!(note.contains("status: done"), "{copy} {n}: {note}");
        }
    }
}

/// An item out of attempts is rescued once, through Temporal as through
/// `planvault run`: the same calls, the same vault, a replay that asks
/// nothing.
#[test]
fn a_plan_md_rescued_through_temporal_ends_as_planvault_run_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let plan = "- [ ] Write the notes\n- [ ] (after: 1) Publish them\n";
    let script = Script {
        replies: vec![
            Reply {
                times: Some(0),
                ..Reply::when("NEW APPROACH: one note", "One note.\nSTATUS: done")
            },
            Reply {
                times: Some(0),
                ..Reply::when(
                    "The item that keeps failing",
                    r#"{"approach":"one note","different":"not all at once"}"#,
                )
            },
            Reply {
                times: Some(0),
                ..Reply::when("Step: Write the notes", "Failed.\nSTATUS: failed")
            },
        ],
        default: Some(Reply::when("", "Done.\nSTATUS: done")),
    };
    compare(dir.path(), "PLAN.md", plan, &[], script, &[]);
    let run = dir.path().join("temporal/PLAN.run");
    if !run.exists() {
        return; // skipped: no dev server
    }
    let trace = std::fs::read_to_string(run.join("00_plan-trace/trace.md")).unwrap();
    assert!(
        trace.contains("rescued: one last attempt, a new approach: one note"),
        "{trace}"
    );
    let note = std::fs::read_to_string(run.join("2.md")).unwrap();
    assert!(note.contains("status: done"), "{note}");
}

#[test]
fn a_generated_plan_run_through_temporal_ends_as_planvault_run_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r#"{"goal": "summarise", "nodes": [
        {"id": "write", "capability": "write_note", "args": {"path": "inbox/a.md", "content": "alpha"}},
        {"id": "read", "capability": "read_note", "args": {"path": "inbox/a.md"}, "dependsOn": ["write"]},
        {"id": "sum", "capability": "llm", "args": {"prompt": {"$from": "read"}}, "dependsOn": ["read"]}
    ]}"#;
    let script = Script {
        replies: vec![Reply::when("alpha", "A one-word note.")],
        default: None,
    };
    compare(dir.path(), "plan.json", plan, &[], script, &[]);
    if !dir.path().join("temporal/plan.run").exists() {
        return; // skipped: no dev server
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("temporal/plan.run/inbox/a.md")).unwrap(),
        "alpha"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_plan_file_is_refused_at_submit_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.md"), PLAN_MD).unwrap();
    let link = dir.path().join("PLAN.md");
    std::os::unix::fs::symlink(dir.path().join("real.md"), &link).unwrap();
    // Refused before any cluster is reached (none listens here).
    let out = planvault()
        .arg("submit")
        .arg(&link)
        .args(["--temporal", "127.0.0.1:9", "--query", QUERY])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: a symlinked plan file cannot run through Temporal",
            link.display()
        )),
        "{stderr}"
    );
    assert!(!dir.path().join("PLAN.run").exists(), "nothing was made");
}
