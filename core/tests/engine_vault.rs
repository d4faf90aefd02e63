//! Vault execution semantics (seed 000), one rule per test, with scripted answers.

use crate::engine_support::*;
use planvault_core::engine::{
    drive, Answer, DecidedBy, Effect, Engine, Event, FinishReason, Journal, RequestBody, RunConfig,
};
use planvault_core::Status;

#[test]
fn a_path_runs_active_then_done_and_finishes_with_the_terminal_output() {
    let plan = vault(&[
        ("a", 3, &[("", "b")]),
        ("b", 3, &[("next", "c")]),
        ("c", 3, &[]),
    ]);
    let mut script = Script::new().work("c#1:work", "the answer");
    let effects = run(plan, config(), &Journal::new(), &mut script);
    assert_eq!(
        status_writes(&effects),
        ["a=active", "a=done", "b=active", "b=done", "c=active", "c=done"]
    );
    assert_eq!(script.asked_ids(), ["a#1:work", "b#1:work", "c#1:work"]);
    assert_eq!(
        trace_lines(&effects),
        [
            "a#1: took `next` → [[b]] [unconditional]",
            "b#1: took `next` → [[c]] [unconditional]",
            "c#1: finished: a node with no outgoing edges [terminal]"
        ]
    );
    let f = finish(&effects);
    assert_eq!(f.reason, FinishReason::Completed);
    assert_eq!(f.answer.as_deref(), Some("the answer"));
}

#[test]
fn the_status_is_written_before_the_work_is_asked_and_done_before_the_judgment() {
    let mut script = Script::new().judge("review#1:judge.1", "1. YES\n2. NO");
    let effects = run(draft_review_send(), config(), &Journal::new(), &mut script);
    let kinds: Vec<String> = effects
        .iter()
        .take(9)
        .map(|e| match e {
            Effect::WriteStatus { node, status } => format!("status {node}={}", status.as_str()),
            Effect::Request(r) => format!("ask {}", r.id),
            Effect::Record(r) => format!("record {}", r.key),
            Effect::Output { node, visit, .. } => format!("output {node}#{visit}"),
            Effect::Trace(t) => format!("trace {}", t.node),
            Effect::Amend { .. } => "amend".into(),
            Effect::Finish(_) => "finish".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "status draft=active",
            "ask draft#1:work",
            "record draft#1:work",
            "status draft=done",
            "output draft#1",
            "trace draft",
            "status review=active",
            "ask review#1:work",
            "record review#1:work",
        ]
    );
}

#[test]
fn one_grid_request_judges_every_conditional_label_and_keeps_the_raw_rationale() {
    let mut script = Script::new()
        .work("review#1:work", "two typos")
        .judge(
            "review#1:judge.1",
            "1. NO - typos remain\n2. YES - fix the typos",
        )
        .judge("review#2:judge.1", "1. YES - clean now\n2. NO");
    let effects = run(draft_review_send(), config(), &Journal::new(), &mut script);
    let judges: Vec<_> = script
        .asked
        .iter()
        .filter(|r| matches!(r.body, RequestBody::Judge { .. }))
        .collect();
    assert_eq!(judges.len(), 2, "one grid per visit of review");
    let RequestBody::Judge {
        labels, messages, ..
    } = &judges[0].body
    else {
        unreachable!()
    };
    assert_eq!(labels, &["approved", "needs revision"]);
    assert!(
        messages[1].content.contains("two typos"),
        "judged against the freshest output"
    );
    assert_eq!(
        trace_lines(&effects),
        [
            "draft#1: took `next` → [[review]] [unconditional]",
            "review#1: took `needs revision` → [[draft]] [grid]",
            "draft#2: took `next` → [[review]] [unconditional]",
            "review#2: took `approved` → [[send]] [grid]",
            "send#1: finished: a node with no outgoing edges [terminal]",
        ]
    );
    let rationale = effects.iter().find_map(|e| match e {
        Effect::Trace(t) if t.decided_by == DecidedBy::Grid => t.rationale.clone(),
        _ => None,
    });
    assert_eq!(
        rationale.as_deref(),
        Some("1. NO - typos remain\n2. YES - fix the typos")
    );
}

#[test]
fn a_predicate_decides_its_label_before_the_model_is_asked() {
    let mut engine = Engine::new(draft_review_send(), config(), &Journal::new()).unwrap();
    engine.register_predicate("approved", Box::new(|input| input.output.contains("LGTM")));
    let mut script = Script::new().work("review#1:work", "LGTM");
    let effects = drive(&mut engine, |r| script.answer(r));
    assert!(
        script
            .asked
            .iter()
            .all(|r| !matches!(r.body, RequestBody::Judge { .. })),
        "no grid asked"
    );
    assert!(trace_lines(&effects)
        .contains(&"review#1: took `approved` → [[send]] [predicate]".to_string()));
}

#[test]
fn a_predicate_that_does_not_hold_leaves_only_the_other_labels_to_the_grid() {
    let mut engine = Engine::new(draft_review_send(), config(), &Journal::new()).unwrap();
    engine.register_predicate("approved", Box::new(|_| false));
    let mut script = Script::new()
        .judge("review#1:judge.1", "1. YES")
        .judge("review#2:judge.1", "1. NO")
        .judge("review#3:judge.1", "1. NO");
    let mut cfg_engine = engine;
    let effects = drive(&mut cfg_engine, |r| script.answer(r));
    let RequestBody::Judge { labels, .. } = &script
        .asked
        .iter()
        .find(|r| r.id == "review#1:judge.1")
        .unwrap()
        .body
    else {
        unreachable!()
    };
    assert_eq!(labels, &["needs revision"]);
    // Visit 2: the predicate fails, the grid says no, there is no
    // unconditional edge, so review works again; visit 3 is its last.
    assert!(trace_lines(&effects)
        .contains(&"review#2: no condition held: the node works again [re-work]".to_string()));
    assert_eq!(
        finish(&effects).reason,
        FinishReason::VisitBudget {
            node: "review".into(),
            max_visits: 3
        }
    );
    let rationale = effects.iter().find_map(|e| match e {
        Effect::Trace(t) if t.decided_by == DecidedBy::Grid => t.rationale.clone(),
        _ => None,
    });
    assert_eq!(
        rationale.as_deref(),
        Some("predicate `approved`: did not hold\n1. YES")
    );
}

#[test]
fn when_no_condition_holds_the_unconditional_edge_is_taken() {
    let plan = vault(&[
        ("a", 3, &[("urgent", "b"), ("", "c")]),
        ("b", 3, &[]),
        ("c", 3, &[]),
    ]);
    let mut script = Script::new().judge("a#1:judge.1", "1. NO - not urgent");
    let effects = run(plan, config(), &Journal::new(), &mut script);
    assert_eq!(
        trace_lines(&effects)[0],
        "a#1: took `next` → [[c]] [unconditional]"
    );
}

#[test]
fn when_nothing_holds_and_nothing_is_unconditional_the_node_reworks_until_its_budget() {
    let plan = vault(&[("a", 2, &[("ready", "b")]), ("b", 3, &[])]);
    let mut script = Script::new()
        .judge("a#1:judge.1", "1. NO")
        .judge("a#2:judge.1", "1. NO");
    let effects = run(plan, config(), &Journal::new(), &mut script);
    assert_eq!(
        trace_lines(&effects),
        [
            "a#1: no condition held: the node works again [re-work]",
            "a#2: no condition held: the node works again [re-work]",
            "a#2: safety stop: max_visits 2 reached [stop]",
        ]
    );
    let f = finish(&effects);
    assert_eq!(
        f.reason,
        FinishReason::VisitBudget {
            node: "a".into(),
            max_visits: 2
        }
    );
    assert_eq!(
        f.answer.as_deref(),
        Some("output of a#2:work"),
        "finalizes with what was collected"
    );
    assert_eq!(
        f.reason.describe(),
        "safety stop: a would exceed its max_visits of 2"
    );
}

#[test]
fn the_global_step_budget_stops_a_run_that_every_node_budget_allows() {
    let plan = vault(&[("a", 10, &[("", "b")]), ("b", 10, &[("", "a")])]);
    let cfg = RunConfig {
        max_steps: 5,
        ..config()
    };
    let mut script = Script::new();
    let effects = run(plan, cfg, &Journal::new(), &mut script);
    assert_eq!(script.asked.len(), 5);
    assert_eq!(
        finish(&effects).reason,
        FinishReason::StepBudget { max_steps: 5 }
    );
}

#[test]
fn a_malformed_grid_is_asked_again_with_the_problem_then_read() {
    let mut script = Script::new()
        .judge("review#1:judge.1", "I think it looks good")
        .judge("review#1:judge.2", "1. YES\n2. NO");
    let effects = run(draft_review_send(), config(), &Journal::new(), &mut script);
    let second = script
        .asked
        .iter()
        .find(|r| r.id == "review#1:judge.2")
        .unwrap();
    let RequestBody::Judge {
        messages, attempt, ..
    } = &second.body
    else {
        unreachable!()
    };
    assert_eq!(*attempt, 2);
    assert_eq!(messages[2].content, "I think it looks good");
    assert!(messages[3]
        .content
        .contains("condition 1 has no YES/NO answer"));
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

#[test]
fn a_grid_that_never_parses_fails_the_node_with_the_reason() {
    let mut script = Script::new()
        .judge("review#1:judge.1", "hmm")
        .judge("review#1:judge.2", "1. YES")
        .judge("review#1:judge.3", "1. YES\n2. YES\n2. NO");
    let effects = run(draft_review_send(), config(), &Journal::new(), &mut script);
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "review".into(),
            reason: "the YES/NO judgment could not be read after 3 attempt(s): condition 2 is answered both YES and NO".into()
        }
    );
    assert_eq!(
        finish(&effects).answer,
        None,
        "a failed node's output is no answer"
    );
    // The failed node's note says so, written just before the finish.
    let n = effects.len();
    assert_eq!(
        effects[n - 2],
        Effect::WriteStatus {
            node: "review".into(),
            status: Status::Failed
        }
    );

    // A replay of the journal fails the same node the same way.
    let journal = Journal::from_jsonl(&journal_of(&effects).to_jsonl()).unwrap();
    let replay_cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut engine = Engine::new(draft_review_send(), replay_cfg, &journal).unwrap();
    let replayed = drive(&mut engine, |r| panic!("replay asked {}", r.id));
    assert_eq!(observable(&replayed), observable(&effects));
    assert!(replayed.contains(&Effect::WriteStatus {
        node: "review".into(),
        status: Status::Failed
    }));
}

#[test]
fn tools_and_role_of_the_node_travel_with_its_requests() {
    let mut plan = draft_review_send();
    plan.nodes[1].tools = vec!["fetch_url".into(), "read_note".into()];
    plan.nodes[1].role = Some("review".into());
    plan.grant = Some(["fetch_url".to_string()].into_iter().collect());
    let mut script = Script::new().judge("review#1:judge.1", "1. YES\n2. NO");
    run(plan, config(), &Journal::new(), &mut script);
    let work = script
        .asked
        .iter()
        .find(|r| r.id == "review#1:work")
        .unwrap();
    let RequestBody::Work { tools, role, .. } = &work.body else {
        unreachable!()
    };
    assert_eq!(tools, &["fetch_url"], "narrowed to the plan's grant");
    assert_eq!(role.as_deref(), Some("review"));
    let judge = script
        .asked
        .iter()
        .find(|r| r.id == "review#1:judge.1")
        .unwrap();
    assert!(matches!(&judge.body, RequestBody::Judge { role: Some(r), .. } if r == "review"));
}

#[test]
fn the_work_prompt_carries_the_query_the_step_and_the_earlier_outputs() {
    let mut script = Script::new()
        .work("draft#1:work", "first draft")
        .judge("review#1:judge.1", "1. YES\n2. NO");
    run(draft_review_send(), config(), &Journal::new(), &mut script);
    let RequestBody::Work { messages, .. } = &script.asked[1].body else {
        unreachable!()
    };
    let user = &messages[1].content;
    assert!(user.contains("write a note"));
    assert!(user.contains("Do review."));
    assert!(user.contains("### Title of draft\n```\nfirst draft\n```"));
}

#[test]
fn the_work_prompt_leaves_out_the_edges_and_keeps_a_next_heading_shown_as_an_example() {
    // A step that teaches the model to write plan notes shows a `## Next`
    // section in a code block; only the note's own section is the edges.
    let files: std::collections::BTreeMap<String, String> = [
        (
            "Write.md",
            "---\ntype: start\n---\nWrite the note like this:\n\n```markdown\n## Next\n- [[Review]]\n```\n\nThen name it after its step.\n\n## Next\n- [[Done]]\n",
        ),
        ("Done.md", "Nothing left.\n"),
    ]
    .into_iter()
    .map(|(path, text)| (path.to_string(), text.to_string()))
    .collect();
    let (plan, diagnostics) = planvault_core::vault::load(&files);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let mut script = Script::new();
    run(plan, config(), &Journal::new(), &mut script);
    let RequestBody::Work { messages, .. } = &script.asked[0].body else {
        unreachable!()
    };
    let user = &messages[1].content;
    assert!(
        user.contains("```markdown\n## Next\n- [[Review]]\n```"),
        "{user}"
    );
    assert!(user.contains("Then name it after its step."), "{user}");
    assert!(!user.contains("[[Done]]"), "{user}");
}

#[test]
fn replaying_the_journal_makes_zero_model_calls_and_reproduces_every_effect() {
    let mut script = Script::new()
        .judge("review#1:judge.1", "nonsense")
        .judge("review#1:judge.2", "1. NO\n2. YES")
        .judge("review#2:judge.1", "1. YES\n2. NO");
    let live = run(draft_review_send(), config(), &Journal::new(), &mut script);
    let journal = journal_of(&live);
    assert_eq!(journal.entries.len(), script.asked.len());
    let text = journal.to_jsonl();
    let journal = Journal::from_jsonl(&text).unwrap();

    let replay_cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut engine = Engine::new(draft_review_send(), replay_cfg, &journal).unwrap();
    let replayed = drive(&mut engine, |r| panic!("replay asked {}", r.id));
    assert_eq!(observable(&replayed), observable(&live));
    assert!(replayed
        .iter()
        .all(|e| !matches!(e, Effect::Request(_) | Effect::Record(_))));
    assert_eq!(
        serde_json::to_string(&observable(&replayed)).unwrap(),
        serde_json::to_string(&observable(&live)).unwrap()
    );
}

#[test]
fn a_replay_missing_an_answer_diverges_instead_of_calling_the_model() {
    let mut journal = Journal::new();
    journal.push("draft#1:work", Answer::Work { output: "x".into() });
    let cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut engine = Engine::new(draft_review_send(), cfg, &journal).unwrap();
    let effects = drive(&mut engine, |r| panic!("replay asked {}", r.id));
    assert_eq!(
        finish(&effects).reason,
        FinishReason::ReplayDiverged {
            request: "review#1:work".into()
        }
    );
}

#[test]
fn the_same_events_give_the_same_effects() {
    let make = || {
        Script::new()
            .judge("review#1:judge.1", "1. NO\n2. YES")
            .judge("review#2:judge.1", "1. YES\n2. NO")
    };
    let a = run(draft_review_send(), config(), &Journal::new(), &mut make());
    let b = run(draft_review_send(), config(), &Journal::new(), &mut make());
    assert_eq!(a, b);
}

#[test]
fn an_unavailable_endpoint_interrupts_resumably_and_a_stop_does_too() {
    let mut engine = Engine::new(draft_review_send(), config(), &Journal::new()).unwrap();
    let effects = engine.start();
    assert!(matches!(effects.last(), Some(Effect::Request(r)) if r.id == "draft#1:work"));
    let effects = engine.handle(Event::Unavailable {
        id: "draft#1:work".into(),
        error: "HTTP 503 after 3 tries".into(),
    });
    assert_eq!(
        finish(&effects).reason,
        FinishReason::Interrupted {
            node: "draft".into(),
            reason: "HTTP 503 after 3 tries".into()
        }
    );
    assert_eq!(
        engine.statuses()[0],
        ("draft".into(), Status::Active),
        "left active: the resume point"
    );

    let mut engine = Engine::new(draft_review_send(), config(), &Journal::new()).unwrap();
    engine.start();
    let effects = engine.handle(Event::Stop {
        reason: "interrupted by the user".into(),
    });
    assert_eq!(
        finish(&effects).reason,
        FinishReason::Stopped {
            reason: "interrupted by the user".into()
        }
    );
    assert!(engine
        .handle(Event::Answered {
            id: "draft#1:work".into(),
            answer: Answer::Work {
                output: "late".into()
            }
        })
        .is_empty());
}

#[test]
fn a_plan_without_a_start_fails_before_any_call() {
    let mut plan = draft_review_send();
    plan.start = None;
    let mut script = Script::new();
    let effects = run(plan, config(), &Journal::new(), &mut script);
    assert!(script.asked.is_empty());
    assert!(matches!(
        finish(&effects).reason,
        FinishReason::PlanFailed { .. }
    ));
}

/// draft → gate (type: human) → (ship: send | rework: draft)
fn gated() -> planvault_core::Plan {
    let mut plan = vault(&[
        ("draft", 3, &[("", "gate")]),
        ("gate", 3, &[("ship", "send"), ("rework", "draft")]),
        ("send", 3, &[]),
    ]);
    plan.nodes[1].kind = planvault_core::NodeKind::Human;
    plan
}

fn ask() -> RunConfig {
    RunConfig {
        autonomy: planvault_core::engine::Autonomy::Ask,
        ..config()
    }
}

#[test]
fn a_human_note_asks_a_person_to_pick_one_of_its_conditions_and_takes_that_edge() {
    let mut script = Script::new().human("gate#1:human", true, "looks right", Some("ship"));
    let effects = run(gated(), ask(), &Journal::new(), &mut script);
    assert_eq!(
        script.asked_ids(),
        ["draft#1:work", "gate#1:human", "send#1:work"]
    );
    let RequestBody::Human { question, choices } = &script.asked[1].body else {
        unreachable!()
    };
    assert_eq!(choices, &["ship", "rework"]);
    assert_eq!(question, "Title of gate\n\nDo gate.");
    assert_eq!(
        status_writes(&effects)[2..4],
        ["gate=active".to_string(), "gate=done".into()]
    );
    let lines = trace_lines(&effects);
    assert_eq!(lines[1], "gate#1: took `ship` → [[send]] [human]");
    let output = effects.iter().find_map(|e| match e {
        Effect::Output { node, text, .. } if node == "gate" => Some(text.clone()),
        _ => None,
    });
    assert_eq!(output.as_deref(), Some("chose `ship`: looks right"));
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

#[test]
fn a_rejection_stops_the_run_at_the_human_note_and_an_unknown_choice_fails_it() {
    let mut script = Script::new().human("gate#1:human", false, "not today", None);
    let effects = run(gated(), ask(), &Journal::new(), &mut script);
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "gate".into(),
            reason: "rejected by a person: not today".into()
        }
    );
    let mut script = Script::new().human("gate#1:human", true, "", Some("launch"));
    let effects = run(gated(), ask(), &Journal::new(), &mut script);
    assert!(
        matches!(finish(&effects).reason, FinishReason::NodeFailed { ref reason, .. } if reason.contains("`launch`"))
    );
}

#[test]
fn an_approval_takes_the_unconditional_edge_or_finishes_at_a_terminal() {
    let mut plan = vault(&[
        ("a", 3, &[("", "check")]),
        ("check", 3, &[("", "b")]),
        ("b", 3, &[]),
    ]);
    plan.nodes[1].kind = planvault_core::NodeKind::Human;
    let mut script = Script::new().human("check#1:human", true, "approved", None);
    let effects = run(plan.clone(), ask(), &Journal::new(), &mut script);
    assert_eq!(
        trace_lines(&effects)[1],
        "check#1: took `next` → [[b]] [human]"
    );

    let mut plan = vault(&[("a", 3, &[("", "sign")]), ("sign", 3, &[])]);
    plan.nodes[1].kind = planvault_core::NodeKind::Human;
    let mut script = Script::new().human("sign#1:human", true, "signed", None);
    let effects = run(plan, ask(), &Journal::new(), &mut script);
    let f = finish(&effects);
    assert_eq!(
        (f.reason, f.answer.as_deref()),
        (FinishReason::Completed, Some("approved: signed"))
    );
}

#[test]
fn under_full_autonomy_a_human_note_is_worked_and_judged_like_a_step() {
    let mut script = Script::new().judge("gate#1:judge.1", "1. YES\n2. NO");
    let effects = run(gated(), config(), &Journal::new(), &mut script);
    assert_eq!(
        script.asked_ids(),
        [
            "draft#1:work",
            "gate#1:work",
            "gate#1:judge.1",
            "send#1:work"
        ]
    );
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

#[test]
fn a_deferred_human_note_pauses_awaiting_a_person_and_resumes_on_the_recorded_decision() {
    let plan = gated();
    let mut engine = Engine::new(plan.clone(), ask(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| match r.body {
        RequestBody::Human { .. } => Event::Deferred { id: r.id.clone() },
        _ => Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: "draft one".into(),
            },
        },
    });
    assert!(
        matches!(finish(&effects).reason, FinishReason::AwaitingHuman { ref node, .. } if node == "gate")
    );
    let mut resumed = plan.clone();
    apply_statuses(&mut resumed, &effects);
    let mut journal = journal_of(&effects);
    journal.push(
        "gate#1:human",
        Answer::Human {
            decision: "ok".into(),
            approved: true,
            choice: Some("ship".into()),
        },
    );
    let mut script = Script::new();
    let effects = run(resumed.clone(), ask(), &journal, &mut script);
    assert_eq!(
        script.asked_ids(),
        ["send#1:work"],
        "the decision is served from the journal"
    );
    assert_eq!(finish(&effects).reason, FinishReason::Completed);

    // Once past the gate (draft and gate done, send not yet begun), a
    // resumed walk re-takes the person's recorded choice rather than asking.
    let mut walked = plan.clone();
    for id in ["draft", "gate"] {
        let i = walked.node_index(id).unwrap();
        walked.nodes[i].status = Status::Done;
    }
    let mut journal = Journal::new();
    journal.push(
        "draft#1:work",
        Answer::Work {
            output: "draft one".into(),
        },
    );
    journal.push(
        "gate#1:human",
        Answer::Human {
            decision: "ok".into(),
            approved: true,
            choice: Some("ship".into()),
        },
    );
    let mut script = Script::new();
    let effects = run(walked, ask(), &journal, &mut script);
    assert_eq!(script.asked_ids(), ["send#1:work"]);
    assert_eq!(
        trace_lines(&effects)[0],
        "send#1: resumed: walked past 2 done node(s) on recorded decisions [resume]"
    );
}

/// A note no link leads to is no step of the run, whatever its status says:
/// a run does not resume at a loose note marked `active` or `failed` (a
/// tool's note, a person's draft), nor walk because one is `done`; it
/// resumes where the start's path stopped.
#[test]
fn a_loose_note_marked_active_is_no_resume_point() {
    let mut plan = vault(&[
        ("a", 3, &[("", "b")]),
        ("b", 3, &[]),
        ("loose", 3, &[]),
        ("aside", 3, &[]),
    ]);
    plan.nodes[1].status = Status::Active;
    plan.nodes[2].status = Status::Active;
    plan.nodes[3].status = Status::Failed;
    let mut script = Script::new().work("b#1:work", "the answer");
    let effects = run(plan.clone(), config(), &Journal::new(), &mut script);
    assert_eq!(script.asked_ids(), ["b#1:work"]);
    assert_eq!(finish(&effects).reason, FinishReason::Completed);

    // Only loose notes are marked: the run starts at the start.
    plan.nodes[1].status = Status::Pending;
    plan.nodes[3].status = Status::Done;
    let mut script = Script::new().work("b#1:work", "the answer");
    run(plan, config(), &Journal::new(), &mut script);
    assert_eq!(script.asked_ids(), ["a#1:work", "b#1:work"]);
}

/// A node the run left failed (its judgment never read) that a person then
/// cut off from the start (the link to it moved elsewhere) goes back to
/// pending on resume, and the run continues where the start's path now
/// leads. A note the run never visited keeps its status (see above).
#[test]
fn a_node_cut_off_from_the_start_mid_run_goes_back_to_pending() {
    let plan = vault(&[
        ("s", 3, &[("", "a")]),
        ("a", 3, &[("approved", "d"), ("rejected", "d")]),
        ("c", 3, &[]),
        ("d", 3, &[]),
    ]);
    let mut script = Script::new()
        .judge("a#1:judge.1", "hmm")
        .judge("a#1:judge.2", "hmm")
        .judge("a#1:judge.3", "hmm");
    let effects = run(plan.clone(), config(), &Journal::new(), &mut script);
    assert!(matches!(
        finish(&effects).reason,
        FinishReason::NodeFailed { .. }
    ));
    let journal = journal_of(&effects);
    let mut resumed = plan.clone();
    apply_statuses(&mut resumed, &effects);
    assert_eq!(resumed.nodes[1].status, Status::Failed);
    // A person points the start's link at c instead.
    let edge = resumed.edges.iter_mut().find(|e| e.from == 0).unwrap();
    edge.to = Some(2);
    edge.target = "c".into();
    let mut script = Script::new();
    let effects = run(resumed, config(), &journal, &mut script);
    assert_eq!(status_writes(&effects)[0], "a=pending");
    assert_eq!(script.asked_ids(), ["c#1:work"]);
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}
