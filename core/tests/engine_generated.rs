//! Generated-plan semantics (seeds 002, 004): waves, `$from` bindings,
//! preconditions, undeclared tools, failure modes, bounded replanning.

use crate::engine_support::*;
use planvault_core::engine::{
    drive, Answer, Effect, Engine, Event, FailureMode, FinishReason, Journal, Request, RequestBody,
    RunConfig,
};
use planvault_core::{generated, Plan};
use serde_json::{json, Value};

fn plan(text: &str) -> Plan {
    let (plan, diagnostics) = generated::parse("plan.json", text, &generated::Options::default());
    assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
    plan
}

fn invoked(effects: &[Effect]) -> Vec<(String, Value)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(Request {
                node,
                body: RequestBody::Invoke { args, .. },
                ..
            }) => Some((node.clone(), args.clone())),
            _ => None,
        })
        .collect()
}

fn ok(r: &Request, value: Value) -> Event {
    Event::Answered {
        id: r.id.clone(),
        answer: Answer::Invoke {
            value: Some(value),
            error: None,
        },
    }
}

fn err(r: &Request, reason: &str) -> Event {
    Event::Answered {
        id: r.id.clone(),
        answer: Answer::Invoke {
            value: None,
            error: Some(reason.into()),
        },
    }
}

const DAG: &str = r#"{"goal": "report", "nodes": [
  {"id": "fetch", "capability": "fetch_url", "args": {"url": "http://127.0.0.1/a"}},
  {"id": "list", "capability": "list_notes"},
  {"id": "summarize", "capability": "llm", "args": {"text": {"$from": "fetch.body"}}, "dependsOn": ["fetch", "list"],
   "preconditions": [{"ref": "fetch.status", "test": "equals", "value": 200}]},
  {"id": "save", "capability": "write_note", "args": {"content": {"$from": "summarize"}}, "dependsOn": ["summarize"]}
]}"#;

fn dag_answers(r: &Request) -> Event {
    match r.node.as_str() {
        "fetch" => ok(r, json!({"status": 200, "body": "hello"})),
        "list" => ok(r, json!(["a.md"])),
        "summarize" => ok(r, json!("a summary")),
        _ => ok(r, json!("saved")),
    }
}

#[test]
fn waves_run_with_bindings_resolved_from_recorded_outputs() {
    let mut engine = Engine::new(plan(DAG), config(), &Journal::new()).unwrap();
    let first = engine.start();
    let wave1: Vec<String> = invoked(&first).into_iter().map(|(n, _)| n).collect();
    assert_eq!(wave1, ["fetch", "list"], "independent steps form one wave");
    let mut engine = Engine::new(plan(DAG), config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, dag_answers);
    let calls = invoked(&effects);
    assert_eq!(
        calls[2],
        ("summarize".to_string(), json!({"text": "hello"}))
    );
    assert_eq!(
        calls[3],
        ("save".to_string(), json!({"content": "a summary"}))
    );
    let f = finish(&effects);
    assert_eq!(f.reason, FinishReason::Completed);
    assert_eq!(f.answer.as_deref(), Some("saved"));
}

#[test]
fn a_precondition_that_does_not_hold_fails_the_step_before_it_runs() {
    let mut engine = Engine::new(
        plan(DAG),
        RunConfig {
            max_replans: 0,
            ..config()
        },
        &Journal::new(),
    )
    .unwrap();
    let effects = drive(&mut engine, |r| match r.node.as_str() {
        "fetch" => ok(r, json!({"status": 404, "body": ""})),
        _ => dag_answers(r),
    });
    assert!(
        !invoked(&effects).iter().any(|(n, _)| n == "summarize"),
        "the capability never ran"
    );
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "summarize".into(),
            reason: "precondition: fetch.status equals does not hold".into()
        }
    );
}

#[test]
fn a_tool_the_plan_did_not_declare_is_refused() {
    let mut p = plan(DAG);
    p.grant.as_mut().unwrap().remove("write_note");
    let mut engine = Engine::new(
        p,
        RunConfig {
            max_replans: 0,
            ..config()
        },
        &Journal::new(),
    )
    .unwrap();
    let effects = drive(&mut engine, dag_answers);
    assert!(!invoked(&effects).iter().any(|(n, _)| n == "save"));
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "save".into(),
            reason: "refused: tool write_note was not declared by the plan".into()
        }
    );
}

const WIDE: &str = r#"{"nodes": [
  {"id": "a", "capability": "t"},
  {"id": "b", "capability": "t", "dependsOn": ["a"]},
  {"id": "c", "capability": "t"},
  {"id": "d", "capability": "t", "dependsOn": ["c"]}
]}"#;

#[test]
fn fail_fast_starts_nothing_after_a_failed_wave() {
    let mut engine = Engine::new(
        plan(WIDE),
        RunConfig {
            max_replans: 0,
            ..config()
        },
        &Journal::new(),
    )
    .unwrap();
    let effects = drive(&mut engine, |r| {
        if r.node == "a" {
            err(r, "boom")
        } else {
            ok(r, json!(1))
        }
    });
    let ran: Vec<String> = invoked(&effects).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        ran,
        ["a", "c"],
        "the sibling in the failing wave finishes, nothing after"
    );
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "a".into(),
            reason: "boom".into()
        }
    );
}

#[test]
fn continue_independent_runs_what_does_not_depend_on_the_failure_and_skips_the_cone() {
    let cfg = RunConfig {
        max_replans: 0,
        failure_mode: FailureMode::ContinueIndependent,
        ..config()
    };
    let mut engine = Engine::new(plan(WIDE), cfg, &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| {
        if r.node == "a" {
            err(r, "boom")
        } else {
            ok(r, json!(1))
        }
    });
    let ran: Vec<String> = invoked(&effects).into_iter().map(|(n, _)| n).collect();
    assert_eq!(ran, ["a", "c", "d"]);
    assert!(trace_lines(&effects)
        .contains(&"b#0: skipped: depends on a, which did not complete [schedule]".to_string()));
    assert!(matches!(
        finish(&effects).reason,
        FinishReason::NodeFailed { .. }
    ));
}

#[test]
fn a_replan_keeps_completed_steps_references_them_and_never_reuses_an_id() {
    let mut engine = Engine::new(plan(WIDE), config(), &Journal::new()).unwrap();
    let mut revisions = vec![
        // Round 1 reuses `b`: rejected, and costs the round.
        r#"{"nodes": [{"id": "b", "capability": "t"}]}"#,
        // Round 2: a fresh id that reads a completed step.
        r#"{"nodes": [{"id": "a2", "capability": "t", "args": {"x": {"$from": "c"}}, "dependsOn": ["c"]}]}"#,
    ]
    .into_iter();
    let mut replan_prompts = Vec::new();
    let effects = drive(&mut engine, |r| match &r.body {
        RequestBody::Replan { messages, .. } => {
            replan_prompts.push(messages[1].content.clone());
            Event::Answered {
                id: r.id.clone(),
                answer: Answer::Revision {
                    text: revisions.next().unwrap().into(),
                },
            }
        }
        _ if r.node == "a" => err(r, "boom"),
        _ if r.node == "c" => ok(r, json!("C")),
        _ => ok(r, json!("done")),
    });
    let ran: Vec<(String, Value)> = invoked(&effects);
    assert_eq!(
        ran.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["a", "c", "a2"],
        "c never re-runs; b, d superseded"
    );
    assert_eq!(ran[2].1, json!({"x": "C"}));
    assert!(replan_prompts[0].contains("Ids already used (never reuse one): a, b, c, d"));
    assert!(trace_lines(&effects)
        .iter()
        .any(|l| l.contains("the revision reuses id(s) b")));
    assert_eq!(
        finish(&effects).reason,
        FinishReason::Completed,
        "judged on the final plan"
    );

    // Replay: zero calls, the same effects.
    let cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut replay = Engine::new(plan(WIDE), cfg, &journal_of(&effects)).unwrap();
    let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
    assert_eq!(observable(&replayed), observable(&effects));
}

#[test]
fn an_empty_revision_gives_up_with_the_reason() {
    let mut engine = Engine::new(plan(WIDE), config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| match &r.body {
        RequestBody::Replan { .. } => Event::Answered {
            id: r.id.clone(),
            answer: Answer::Revision {
                text: r#"{"nodes": []}"#.into(),
            },
        },
        _ if r.node == "a" => err(r, "boom"),
        _ => ok(r, json!(1)),
    });
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "a".into(),
            reason: "the replan gave up (an empty plan)".into()
        }
    );
}

#[test]
fn a_resumed_generated_run_never_invokes_a_completed_step_again() {
    let mut engine = Engine::new(plan(DAG), config(), &Journal::new()).unwrap();
    let live = drive(&mut engine, dag_answers);
    for cut in 0..=live.len() {
        let mut on_disk = plan(DAG);
        apply_statuses(&mut on_disk, &live[..cut]);
        let journal = journal_of(&live[..cut]);
        let mut resumed = Engine::new(on_disk, config(), &journal).unwrap();
        let effects = drive(&mut resumed, dag_answers);
        for (step, _) in invoked(&effects) {
            assert!(
                !journal
                    .entries
                    .iter()
                    .any(|e| e.key == format!("{step}#1:invoke")),
                "cut {cut}: {step} ran again"
            );
        }
        assert_eq!(finish(&effects), finish(&live), "cut {cut}");
    }
}

#[test]
fn a_step_marked_done_without_a_journal_counts_as_done() {
    let mut p = plan(WIDE);
    p.nodes[0].status = planvault_core::Status::Done;
    let mut engine = Engine::new(p, config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| ok(r, json!(1)));
    let ran: Vec<String> = invoked(&effects).into_iter().map(|(n, _)| n).collect();
    assert_eq!(ran, ["c", "b", "d"]);
}
