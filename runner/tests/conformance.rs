//! One conformance suite for every host: the same scripted runs (fresh,
//! resumed at every step, replayed, human gates, a breakpoint, a budget
//! stop, a failing endpoint) go through the native host (a temporary folder
//! and the scripted server `planvault-llm-stub` on 127.0.0.1) and through
//! the in-memory host (the same script answered in memory), and must leave
//! the same files in the vault, byte for byte, and finish the same way.
//! A draft note with a byte-order mark and CRLF line ends is in every vault:
//! outside its `status:` line it must come out as it went in.

use llm_stub::{Reply as StubReply, Script, Stub};
use planvault_core::engine::trace::JOURNAL_FILE;
use planvault_core::engine::{Autonomy, FinishReason, Journal, JournalEntry};
use planvault_protocol::{
    AskKind, Endpoint, Endpoints, FromWorker, PersonReply, RetryPolicy, RunMode, StartRun, ToWorker,
};
use planvault_runner::memory::{HttpCall, MemoryHost, Reply};
use planvault_runner::native::NativeHost;
use planvault_runner::{block_on, run_with, Humans, Inbox, Options};
use std::collections::BTreeMap;
use std::path::Path;

const KEY: &str = "sk-conformance-0123";
const DRAFT: &str = "Step: Draft the email";
const REVIEW: &str = "Step: Review the draft";
const JUDGE: &str = "The step \"Review the draft\" just finished";
const SEND: &str = "Step: Send the email";

/// The draft note as a Windows editor saves it: a BOM and CRLF line ends.
fn bom_crlf_draft() -> String {
    format!(
        "\u{feff}{}",
        include_str!("../../static/example-vault/draft.md").replace('\n', "\r\n")
    )
}

fn example() -> BTreeMap<String, String> {
    [
        ("draft.md", bom_crlf_draft()),
        (
            "review.md",
            include_str!("../../static/example-vault/review.md").to_string(),
        ),
        (
            "send.md",
            include_str!("../../static/example-vault/send.md").to_string(),
        ),
        (
            "notes/agenda.md",
            "# Agenda\r\n\r\nNot part of the plan.\r\n".to_string(),
        ),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t))
    .collect()
}

/// The example with review decided by a person.
fn human_vault() -> BTreeMap<String, String> {
    let mut files = example();
    files.insert(
        "review.md".into(),
        "---\ntype: human\nstatus: pending\n---\n# Approve the draft\n\nRead the draft; send it or ask for a new one.\n\n## Next\n- send it -> [[send]]\n- redo -> [[draft]]\n"
            .into(),
    );
    files
}

fn reply(contains: &str, content: &str) -> StubReply {
    StubReply::when(contains, content)
}

/// Draft, a review asking for the date (its judgment rate-limited once),
/// a second draft, approval, send.
fn loop_script() -> Script {
    Script {
        replies: vec![
            reply(DRAFT, "Subject: Quarterly design review\n\nDraft one."),
            reply(REVIEW, "The date is missing."),
            StubReply {
                status: 429,
                content: "slow down".into(),
                ..reply(JUDGE, "")
            },
            reply(JUDGE, "1. NO - the date is missing\n2. YES - add the date"),
            reply(
                DRAFT,
                "Subject: Quarterly design review\n\nDraft two, with the date.",
            ),
            reply(REVIEW, "Approved."),
            reply(JUDGE, "1. YES - approved\n2. NO"),
            reply(SEND, "Sent. Message id <42@example>."),
        ],
        default: None,
    }
}

/// The stub's script answered in memory, exactly as the stub picks.
fn scripted(script: Script) -> impl FnMut(&HttpCall) -> Reply {
    let mut used = vec![0u32; script.replies.len()];
    move |call| {
        let picked = script.replies.iter().enumerate().find(|(i, r)| {
            let limit = r.times.unwrap_or(1);
            (limit == 0 || used[*i] < limit) && r.matcher.holds(&call.body)
        });
        let reply = match picked {
            Some((i, r)) => {
                used[i] += 1;
                r.clone()
            }
            None => match &script.default {
                Some(r) => r.clone(),
                None => {
                    return Reply::Status(
                        404,
                        r#"{"error":{"message":"the stub's script has no reply for this request","type":"stub_unscripted"}}"#.into(),
                        None,
                    )
                }
            },
        };
        if reply.status != 200 {
            let body = serde_json::json!({"error": {"message": reply.content, "type": "stub_error", "code": reply.status}});
            return Reply::Status(reply.status, body.to_string(), reply.retry_after);
        }
        Reply::streamed(&reply.content)
    }
}

/// One run of a scenario.
#[derive(Clone)]
struct Spec {
    fresh: bool,
    max_steps: u32,
    attempts: u32,
    breakpoints: Vec<String>,
    /// Stop the run when the n-th node visit begins.
    stop_at_visit: Option<usize>,
    /// Replay the journal the vault holds.
    replay: bool,
    humans: Humans,
    decisions: Vec<JournalEntry>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            fresh: false,
            max_steps: 50,
            attempts: 3,
            breakpoints: vec![],
            stop_at_visit: None,
            replay: false,
            humans: Humans::Ask,
            decisions: vec![],
        }
    }
}

/// The person at the other end: stops where told, edits a breakpoint's
/// output, and picks a human node's first condition.
fn person(spec: &Spec) -> impl FnMut(&FromWorker) -> Vec<ToWorker> {
    let stop_at = spec.stop_at_visit;
    let mut visits = 0;
    move |message| match message {
        FromWorker::Visit { .. } => {
            visits += 1;
            if Some(visits) == stop_at {
                vec![ToWorker::Stop]
            } else {
                vec![]
            }
        }
        FromWorker::Ask {
            request,
            ask: AskKind::Breakpoint { output, .. },
            ..
        } => vec![ToWorker::Reply {
            request: request.clone(),
            reply: PersonReply::Continue {
                output: format!("{output}\n\n(edited at the breakpoint)"),
            },
        }],
        FromWorker::Ask {
            request,
            ask: AskKind::Human { choices, .. },
            ..
        } => vec![ToWorker::Reply {
            request: request.clone(),
            reply: PersonReply::Human {
                approved: true,
                note: String::new(),
                choice: choices.first().cloned(),
            },
        }],
        _ => vec![],
    }
}

fn start(spec: &Spec, base_url: &str) -> StartRun {
    StartRun {
        query: "invite the design team".into(),
        mode: RunMode::Model {
            endpoints: Endpoints {
                default: Some(Endpoint {
                    base_url: base_url.into(),
                    model: "m".into(),
                    api_key: Some(KEY.into()),
                }),
                roles: BTreeMap::new(),
            },
        },
        fresh: spec.fresh,
        max_steps: spec.max_steps,
        autonomy: Autonomy::Ask,
        breakpoints: spec.breakpoints.clone(),
        run_to: None,
        max_prompt_bytes: None,
        retry: RetryPolicy {
            attempts: spec.attempts,
            base_delay_ms: 1,
            timeout_ms: 10_000,
        },
        mcp_servers: Vec::new(),
        mcp_terminal_only: Vec::new(),
        folder: String::new(),
        parallel: false,
        parallel_at_most: None,
        take_decisions: None,
        allow_hosts: Vec::new(),
    }
}

fn options(spec: &Spec, journal: Option<String>) -> Options {
    Options {
        replay: spec
            .replay
            .then(|| Journal::from_jsonl(&journal.unwrap_or_default()).unwrap()),
        decisions: spec.decisions.clone(),
        humans: spec.humans,
        // The one thing two hosts would make differently.
        run_id: Some("conformance-run".into()),
        ..Options::default()
    }
}

#[derive(Debug, PartialEq)]
struct Outcome {
    files: BTreeMap<String, String>,
    reasons: Vec<Option<FinishReason>>,
    calls: usize,
}

fn through_memory(
    vault: &BTreeMap<String, String>,
    script: &Script,
    runs: &[Spec],
    base_url: &str,
) -> Outcome {
    let inbox = Inbox::new();
    let host = MemoryHost::new(vault.clone(), &inbox, scripted(script.clone()));
    let mut reasons = Vec::new();
    for spec in runs {
        inbox.clear();
        host.respond(person(spec));
        let options = options(spec, host.file(JOURNAL_FILE));
        let reason = block_on(run_with(&host, &inbox, start(spec, base_url), options))
            .expect("the run waited for a message nobody sends");
        reasons.push(reason);
    }
    let files = host.files.borrow().clone();
    let calls = host.calls.borrow().len();
    Outcome {
        files,
        reasons,
        calls,
    }
}

fn read_folder(root: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.insert(
                    rel,
                    String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
                );
            }
        }
    }
    files
}

fn through_native(
    vault: &BTreeMap<String, String>,
    script: &Script,
    runs: &[Spec],
) -> (Outcome, String) {
    let stub = Stub::start(script.clone(), 0, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in vault {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let mut reasons = Vec::new();
    for spec in runs {
        let inbox = Inbox::new();
        let host = NativeHost::new(dir.path()).on_post({
            let inbox = inbox.clone();
            let mut person = person(spec);
            move |m| {
                for reply in person(m) {
                    inbox.push(reply);
                }
            }
        });
        let journal = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).ok();
        let options = options(spec, journal);
        let reason = block_on(run_with(
            &host,
            &inbox,
            start(spec, &stub.base_url()),
            options,
        ))
        .expect("a native run never waits");
        reasons.push(reason);
    }
    let outcome = Outcome {
        files: read_folder(dir.path()),
        reasons,
        calls: stub.requests().len(),
    };
    (outcome, stub.base_url())
}

/// Run a scenario through both hosts; they must agree. Returns what they did.
fn conform(vault: BTreeMap<String, String>, script: Script, runs: &[Spec]) -> Outcome {
    let (native, base_url) = through_native(&vault, &script, runs);
    let memory = through_memory(&vault, &script, runs, &base_url);
    for (path, text) in &native.files {
        assert_eq!(
            Some(text),
            memory.files.get(path),
            "{path} differs between the native and the in-memory host"
        );
    }
    assert_eq!(native, memory);
    // The BOM + CRLF note changed in its status line only.
    let draft = &native.files["draft.md"];
    let original = bom_crlf_draft();
    let status = draft.lines().find(|l| l.starts_with("status:")).unwrap();
    assert_eq!(
        *draft,
        original.replacen("status: pending", status.trim_end(), 1),
        "draft.md kept its BOM and CRLF line ends"
    );
    assert!(
        !native.files.values().any(|t| t.contains(KEY)),
        "no key in the vault"
    );
    native
}

fn completed(outcome: &Outcome) -> bool {
    outcome.reasons.last() == Some(&Some(FinishReason::Completed))
}

#[test]
fn a_fresh_run_leaves_the_same_vault_through_both_hosts() {
    let out = conform(example(), loop_script(), &[Spec::default()]);
    assert!(completed(&out), "{:?}", out.reasons);
    assert_eq!(out.calls, 8);
    assert!(out.files["draft.md"].contains("status: done\r\n"));
    assert!(out.files["00_plan-trace/draft.visit-2.md"].contains("Draft two, with the date."));
}

#[test]
fn a_run_stopped_at_any_visit_resumes_to_the_same_vault_through_both_hosts() {
    // The uninterrupted run visits draft, review, draft, review, send.
    for k in 1..=5 {
        let stopped = Spec {
            stop_at_visit: Some(k),
            ..Spec::default()
        };
        let out = conform(example(), loop_script(), &[stopped, Spec::default()]);
        assert!(
            matches!(out.reasons[0], Some(FinishReason::Stopped { .. })),
            "stop at visit {k}: {:?}",
            out.reasons
        );
        assert!(completed(&out), "stop at visit {k}: {:?}", out.reasons);
        assert_eq!(out.calls, 8, "stop at visit {k}: no model call made twice");
        if k > 1 {
            // A hop was traced before the stop; the new run says it resumed.
            assert!(out.files["00_plan-trace/trace.md"].contains("*resumed by a new run*"));
        }
    }
}

#[test]
fn a_replayed_run_calls_no_model_and_leaves_the_same_vault() {
    let replay = Spec {
        replay: true,
        ..Spec::default()
    };
    let out = conform(example(), loop_script(), &[Spec::default(), replay]);
    assert_eq!(out.reasons[0], out.reasons[1]);
    assert!(completed(&out), "{:?}", out.reasons);
    assert_eq!(out.calls, 8, "the replay made no call");
}

#[test]
fn a_human_gate_asked_or_deferred_ends_the_same_through_both_hosts() {
    let script = Script {
        replies: vec![reply(DRAFT, "Draft one."), reply(SEND, "Sent.")],
        default: None,
    };
    let asked = conform(human_vault(), script.clone(), &[Spec::default()]);
    assert!(completed(&asked), "{:?}", asked.reasons);
    let deferred = Spec {
        humans: Humans::Defer,
        ..Spec::default()
    };
    let decided = Spec {
        humans: Humans::Defer,
        decisions: vec![JournalEntry {
            key: "review#1:human".into(),
            answer: planvault_runner::driver::human_answer(
                true,
                String::new(),
                Some("send it".into()),
            ),
            made_from: None,
        }],
        ..Spec::default()
    };
    let out = conform(human_vault(), script, &[deferred, decided]);
    assert!(
        matches!(out.reasons[0], Some(FinishReason::AwaitingHuman { .. })),
        "{:?}",
        out.reasons
    );
    assert!(completed(&out), "{:?}", out.reasons);
    assert!(out.files["00_plan-trace/trace.md"].contains("took `send it` → [[send]]"));
}

#[test]
fn a_breakpoint_edit_reaches_the_vault_through_both_hosts() {
    let spec = Spec {
        breakpoints: vec!["draft".into()],
        ..Spec::default()
    };
    let out = conform(example(), loop_script(), &[spec]);
    assert!(completed(&out), "{:?}", out.reasons);
    assert!(out.files["00_plan-trace/draft.visit-1.md"].contains("(edited at the breakpoint)"));
    assert!(
        !out.files.keys().any(|p| p.contains(".held")),
        "no held output is left"
    );
}

#[test]
fn a_budget_stop_leaves_the_same_vault_through_both_hosts() {
    let spec = Spec {
        max_steps: 2,
        ..Spec::default()
    };
    let out = conform(example(), loop_script(), &[spec]);
    assert!(
        matches!(out.reasons[0], Some(FinishReason::StepBudget { .. })),
        "{:?}",
        out.reasons
    );
}

#[test]
fn a_failing_endpoint_stops_resumably_the_same_through_both_hosts() {
    let failing = Script {
        replies: vec![reply(DRAFT, "Draft one.")],
        default: Some(StubReply {
            status: 500,
            content: "the model is down".into(),
            ..StubReply::default()
        }),
    };
    let spec = Spec {
        attempts: 2,
        ..Spec::default()
    };
    let out = conform(example(), failing, &[spec]);
    assert!(
        matches!(&out.reasons[0], Some(FinishReason::Interrupted { node, .. }) if node == "review"),
        "{:?}",
        out.reasons
    );
    assert_eq!(out.calls, 3, "the draft, then review tried twice");
    assert!(out.files["review.md"].contains("status: active"));
}
