//! PLAN.md execution semantics (seed 001) on the grammar's worked example and
//! small plans, with scripted answers.

use crate::engine_support::*;
use planvault_core::engine::{
    drive, Answer, Autonomy, Effect, Engine, Event, FinishReason, Journal, Request, RequestBody,
    RunConfig,
};
use planvault_core::{planmd, Plan, Status};

const MIGRATION: &str = "# Plan

- [ ] Add the `users.locale` column and its migration — done when: `make migrate` applies cleanly on a fresh database
      @scenario a fresh database → `make migrate` → the column exists with default `en`
- [ ] (after: 1) @tool make migrate
      @on exit=0  -> 3
      @on exit!=0 -> 5
- [ ] (after: 2) @verify Prove the app boots and reads locales against the migrated schema
      @emit migrated=true
      @emit migrated=false
      @on migrated=false -> 5
- [ ] (after: 3) @gate release Review the staged diff for anything that should not ship
- [ ] (after: 2) Roll the migration back and record why it failed — done when: the schema is back at the previous revision
- [ ] (after: 4) @feedback Read this run's evidence and propose at most 3 follow-ups
- [ ] (after: 6) @human Decide whether this ships today
      @needs migrated
";

fn plan(text: &str) -> Plan {
    let (plan, diagnostics) = planmd::parse("PLAN.md", text);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    plan
}

/// Answers by item: `exit` for the command, `verify` for item 3's reply.
fn answers(exit: i32, verify: &'static str) -> impl FnMut(&Request) -> Event {
    move |r: &Request| {
        let answer = match (&r.body, r.node.as_str()) {
            (RequestBody::Command { command }, _) => {
                assert_eq!(command, "make migrate");
                Answer::Command {
                    exit,
                    output: format!("exit {exit}"),
                }
            }
            (RequestBody::Work { .. }, "3") => Answer::Work {
                output: verify.into(),
            },
            (RequestBody::Work { .. }, "4") => Answer::Work {
                output: "Nothing risky.\nSTATUS: done".into(),
            },
            (RequestBody::Work { .. }, id) => Answer::Work {
                output: format!("item {id} done\nSTATUS: done\nSIGNALS: none"),
            },
            (other, id) => panic!("unexpected request for {id}: {other:?}"),
        };
        Event::Answered {
            id: r.id.clone(),
            answer,
        }
    }
}

fn ran(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) => Some(r.node.clone()),
            _ => None,
        })
        .collect()
}

/// The request ids asked, in order.
fn asked_ids(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) => Some(r.id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn exit_zero_runs_the_verify_branch_and_bypasses_the_rollback() {
    let mut engine = Engine::new(plan(MIGRATION), config(), &Journal::new()).unwrap();
    let effects = drive(
        &mut engine,
        answers(0, "Boots fine.\nSTATUS: done\nSIGNALS: migrated=true"),
    );
    assert_eq!(ran(&effects), ["1", "2", "3", "4", "6", "7"]);
    let lines = trace_lines(&effects);
    assert!(
        lines.contains(&"2#1: settled: ok; signals exit=0 [command]".to_string()),
        "{lines:#?}"
    );
    assert!(lines.contains(&"2#1: took route `exit=0` → item 3 (Prove the app boots and reads locales against the migrated schema) [route]".to_string()));
    assert!(lines.contains(&"5#0: bypassed: item 2 steered elsewhere [route]".to_string()));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("7#1: settled: ok; decided by the run under autonomy: full")));
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
    let statuses: Vec<Status> = engine.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(
        statuses[4],
        Status::Pending,
        "the bypassed rollback never ran"
    );
}

#[test]
fn a_failed_command_steers_to_the_rollback_and_the_verify_cone_is_bypassed() {
    let mut engine = Engine::new(plan(MIGRATION), config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, answers(2, "unused"));
    assert_eq!(ran(&effects), ["1", "2", "5"], "exactly one branch runs");
    let lines = trace_lines(&effects);
    for item in ["3", "4", "6", "7"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{item}#0: bypassed"))),
            "{item}: {lines:#?}"
        );
    }
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

#[test]
fn a_later_route_into_a_bypassed_item_runs_it_and_the_route_latches() {
    let mut engine = Engine::new(plan(MIGRATION), config(), &Journal::new()).unwrap();
    let effects = drive(
        &mut engine,
        answers(
            0,
            "It does not boot.\nSTATUS: done\nSIGNALS: migrated=false",
        ),
    );
    assert_eq!(ran(&effects), ["1", "2", "3", "5"]);
    let lines = trace_lines(&effects);
    assert!(
        lines.contains(&"4#0: bypassed: item 3 steered elsewhere [route]".to_string()),
        "{lines:#?}"
    );
}

#[test]
fn under_autonomy_ask_a_human_item_pauses_and_resumes_with_the_recorded_answer() {
    let cfg = RunConfig {
        autonomy: Autonomy::Ask,
        ..config()
    };
    let mut engine = Engine::new(plan(MIGRATION), cfg.clone(), &Journal::new()).unwrap();
    let mut respond = answers(0, "Boots.\nSTATUS: done\nSIGNALS: migrated=true");
    let effects = drive(&mut engine, |r| match &r.body {
        RequestBody::Human { question, .. } => {
            assert_eq!(question, "Item 7: Decide whether this ships today");
            Event::Deferred { id: r.id.clone() }
        }
        _ => respond(r),
    });
    assert_eq!(
        finish(&effects).reason,
        FinishReason::AwaitingHuman {
            node: "7".into(),
            question: "Item 7: Decide whether this ships today".into()
        }
    );
    // The person answers; the run resumes from the notes and the journal.
    let mut on_disk = plan(MIGRATION);
    apply_statuses(&mut on_disk, &effects);
    assert_eq!(on_disk.nodes[6].status, Status::Active);
    let mut journal = journal_of(&effects);
    journal.push(
        "7#1:human",
        Answer::Human {
            decision: "Ship it.".into(),
            approved: true,
            choice: None,
        },
    );
    let mut engine = Engine::new(on_disk, cfg, &journal).unwrap();
    let resumed = drive(&mut engine, |r| panic!("resume asked {}", r.id));
    let f = finish(&resumed);
    assert_eq!(f.reason, FinishReason::Completed);
    assert_eq!(f.answer.as_deref(), Some("Ship it."));
    assert!(all_trace_lines(&resumed).contains(&"7#1: settled: ok [human]".to_string()));
}

#[test]
fn independent_items_form_one_wave_and_a_wave_is_a_barrier() {
    let mut engine = Engine::new(
        plan("- [ ] A\n- [ ] B\n- [ ] (after: 1, 2) C\n"),
        parallel(),
        &Journal::new(),
    )
    .unwrap();
    let first = engine.start();
    let asked: Vec<String> = ran(&first);
    assert_eq!(asked, ["1", "2"]);
    // B answers first; nothing moves until A is in too.
    let b = engine.handle(Event::Answered {
        id: "2#1:work".into(),
        answer: Answer::Work {
            output: "b\nSTATUS: done".into(),
        },
    });
    assert_eq!(b.len(), 1, "only the record: {b:?}");
    let a = engine.handle(Event::Answered {
        id: "1#1:work".into(),
        answer: Answer::Work {
            output: "a\nSTATUS: done".into(),
        },
    });
    let order: Vec<String> = a
        .iter()
        .filter_map(|e| match e {
            Effect::WriteStatus { node, status } => Some(format!("{node}={}", status.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        ["1=done", "2=done", "3=active"],
        "settled in item order, whatever the arrival order"
    );
}

#[test]
fn undeclared_signals_are_refused_and_an_absent_key_never_matches() {
    let text = "- [ ] Probe\n      @emit ready\n      @on migrated!=true -> 3\n      @on ready -> 2\n- [ ] (after: 1) Next\n- [ ] (after: 1) Other\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| {
        let output = if r.node == "1" {
            "x\nSTATUS: done\nSIGNALS: ready, migrated=false"
        } else {
            "y\nSTATUS: done"
        };
        Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: output.into(),
            },
        }
    });
    let lines = trace_lines(&effects);
    assert!(
        lines[0].contains("signals ready=true, refused migrated=false (declared-keys-only"),
        "{lines:#?}"
    );
    assert!(lines.contains(&"1#1: took route `ready` → item 2 (Next) [route]".to_string()));
    assert!(
        !lines.iter().any(|l| l.contains("migrated!=true")),
        "an absent key never matches"
    );
    assert_eq!(ran(&effects), ["1", "2"]);
}

#[test]
fn a_gate_is_review_only_and_its_block_is_a_failure_a_route_can_catch() {
    let text = "- [ ] @gate Review the diff\n      @on fail -> 3\n- [ ] (after: 1) Ship\n- [ ] (after: 1) Fix what the gate found\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let mut seen = Vec::new();
    let effects = drive(&mut engine, |r| {
        seen.push(r.clone());
        let output = if r.node == "1" {
            "Secrets in the diff.\nSTATUS: blocked"
        } else {
            "fixed\nSTATUS: done"
        };
        Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: output.into(),
            },
        }
    });
    let RequestBody::Work {
        review_only,
        tools,
        messages,
        ..
    } = &seen[0].body
    else {
        unreachable!()
    };
    assert!(*review_only && tools.is_empty());
    assert!(messages[0].content.contains("must not change anything"));
    assert_eq!(ran(&effects), ["1", "3"]);
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
    // The gate's block was handled, not undone: its note says it failed, as
    // Leopold leaves its box open (a differential run found it `done`).
    let statuses: Vec<Status> = engine.statuses().into_iter().map(|(_, s)| s).collect();
    assert_eq!(statuses[0], Status::Failed);
    assert_eq!(statuses[2], Status::Done);
}

/// Under `autonomy: ask`, Leopold's `runParallel` stops before a pass
/// with a ready `@human` item dispatches anything; its serial loop stops
/// only when that item is the one it takes. Found by hand: a wave asked
/// the others beside the person, and a terminal run, stopping to wait for
/// them, threw their paid answers away and asked them again on resume.
#[test]
fn a_person_decides_before_the_rest_of_a_wave_starts() {
    let text = "- [ ] Build A\n- [ ] @human Approve\n- [ ] Build B\n";
    let ask = |config: RunConfig| RunConfig {
        autonomy: Autonomy::Ask,
        ..config
    };
    for (config, first) in [(ask(parallel()), "2#1:human"), (ask(config()), "1#1:work")] {
        let mut engine = Engine::new(plan(text), config.clone(), &Journal::new()).unwrap();
        let asked = engine.start();
        assert_eq!(asked_ids(&asked), [first], "parallel: {}", config.parallel);
    }
    let mut engine = Engine::new(plan(text), ask(parallel()), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| Event::Answered {
        id: r.id.clone(),
        answer: match &r.body {
            RequestBody::Human { .. } => Answer::Human {
                decision: "yes".into(),
                approved: true,
                choice: None,
            },
            _ => Answer::Work {
                output: "ok\nSTATUS: done".into(),
            },
        },
    });
    assert_eq!(asked_ids(&effects), ["2#1:human", "1#1:work", "3#1:work"]);
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

/// Leopold's repeated-failure rescue (`rescue.ts`, and its test
/// `repeated-failure-rescue.test.ts`): an item out of attempts gets ONE
/// more, under an approach a model decides from the failures.
mod rescue {
    use super::*;

    const ITEM: &str = "- [ ] Import the legacy rows\n";
    const BLOCKED: &str = "the batch writer rejects the payload\nSTATUS: blocked";
    const APPROACH: &str =
        "Import ONE row end to end through the existing loader before touching batching at all.";
    const DIFFERENT: &str = "Every failed attempt started from the batch writer; this starts from a single row and never opens it.";

    fn rescue_json() -> String {
        serde_json::json!({
            "approach": APPROACH,
            "different": DIFFERENT,
            "decision": "Take the single-row path on the last attempt.",
            "why": "The smaller slice is the reversible one.",
            "reversal": "Revert src/import.ts.",
        })
        .to_string()
    }

    /// Drive `text` with workers answered by `work` and a rescue by
    /// `rescue`; the work prompts and the rescue requests asked.
    fn run_with(
        engine: &mut Engine,
        work: impl Fn(&str, &str) -> &'static str,
        rescue: &str,
    ) -> (Vec<Effect>, Vec<String>, Vec<Request>) {
        let mut prompts = Vec::new();
        let mut rescues = Vec::new();
        let effects = drive(engine, |r| {
            let answer = match &r.body {
                RequestBody::Replan { .. } => {
                    rescues.push(r.clone());
                    Answer::Revision {
                        text: rescue.into(),
                    }
                }
                RequestBody::Work { messages, .. } => {
                    let prompt = messages.last().unwrap().content.clone();
                    let output = work(&r.node, &prompt).into();
                    prompts.push(prompt);
                    Answer::Work { output }
                }
                other => panic!("unexpected {other:?}"),
            };
            Event::Answered {
                id: r.id.clone(),
                answer,
            }
        });
        (effects, prompts, rescues)
    }

    #[test]
    fn three_failures_buy_one_last_attempt_under_a_new_approach_then_the_run_stops() {
        let mut engine = Engine::new(plan(ITEM), rescued(), &Journal::new()).unwrap();
        let (effects, prompts, rescues) = run_with(&mut engine, |_, _| BLOCKED, &rescue_json());
        assert_eq!(
            prompts.len(),
            4,
            "3 allowed failures + exactly ONE last attempt"
        );
        assert_eq!(rescues.len(), 1, "the approach is decided once");
        for p in &prompts[..3] {
            assert!(!p.contains("THIS IS THE LAST ATTEMPT"), "{p}");
        }
        let last = &prompts[3];
        assert!(
            last.contains("THIS IS THE LAST ATTEMPT ON THIS ITEM"),
            "{last}"
        );
        assert!(
            last.contains(&format!("NEW APPROACH: {APPROACH}")),
            "{last}"
        );
        assert!(
            last.contains(&format!("HOW IT DIFFERS: {DIFFERENT}")),
            "{last}"
        );
        assert!(last.contains("This is attempt 4: the last one was not done (it ended blocked)"));
        assert_eq!(
            asked_ids(&effects),
            ["1#1:work", "1#2:work", "1#3:work", "1#3:rescue", "1#4:work"]
        );
        let RequestBody::Replan { messages, .. } = &rescues[0].body else {
            unreachable!()
        };
        assert!(messages[0]
            .content
            .contains("failed the maximum number of times"));
        assert!(messages[0].content.contains("may not raise any budget"));
        let ask = &messages[1].content;
        assert!(ask.contains("Import the legacy rows"), "{ask}");
        assert!(ask.contains("failed 3 time(s) in a row"), "{ask}");
        assert!(
            ask.contains("the batch writer rejects the payload"),
            "{ask}"
        );
        let trace = trace_lines(&effects);
        assert!(
            trace.contains(&format!(
                "1#3: rescued: one last attempt, a new approach: {APPROACH} [schedule]"
            )),
            "{trace:#?}"
        );
        assert_eq!(
            finish(&effects).reason,
            FinishReason::NodeFailed {
                node: "1".into(),
                reason:
                    "ended blocked on attempt 4, its last, under the new approach a rescue decided"
                        .into()
            }
        );
    }

    #[test]
    fn a_reply_with_no_approach_or_no_difference_buys_no_fourth_try() {
        for reply in [
            "not json",
            r#"{"different":"nothing concrete"}"#,
            r#"{"approach":"do X"}"#,
            r#"{"approach":"  ","different":"y"}"#,
        ] {
            let mut engine = Engine::new(plan(ITEM), rescued(), &Journal::new()).unwrap();
            let (effects, prompts, rescues) = run_with(&mut engine, |_, _| BLOCKED, reply);
            assert_eq!((prompts.len(), rescues.len()), (3, 1), "{reply}");
            assert!(matches!(
                finish(&effects).reason,
                FinishReason::NodeFailed { .. }
            ));
            assert!(
                trace_lines(&effects)
                    .iter()
                    .any(|l| l
                        .starts_with("1#3: not rescued: no different approach (the reply names")),
                "never silent: {reply}"
            );
        }
    }

    #[test]
    fn a_run_that_succeeds_spends_no_rescue_and_a_rescued_success_goes_on() {
        let text = "- [ ] Import the legacy rows\n- [ ] (after: 1) Backfill the audit table\n";
        let mut engine = Engine::new(plan(text), rescued(), &Journal::new()).unwrap();
        let (effects, _, rescues) = run_with(&mut engine, |_, _| "done\nSTATUS: done", "");
        assert!(rescues.is_empty());
        assert_eq!(finish(&effects).reason, FinishReason::Completed);

        // Only the attempt under the new approach succeeds: the run goes on.
        let mut engine = Engine::new(plan(text), rescued(), &Journal::new()).unwrap();
        let work = |node: &str, prompt: &str| match (node, prompt.contains(APPROACH)) {
            ("1", false) => BLOCKED,
            _ => "done\nSTATUS: done",
        };
        let (effects, _, rescues) = run_with(&mut engine, work, &rescue_json());
        assert_eq!(rescues.len(), 1);
        assert_eq!(ran(&effects), ["1", "1", "1", "1", "1", "2"]);
        assert_eq!(finish(&effects).reason, FinishReason::Completed);
    }

    #[test]
    fn the_rescue_is_the_runs_one_and_a_run_started_again_gets_it_back() {
        // Item 1 is rescued and then done; item 2 fails three times: the
        // rescue is spent, the run stops.
        let text = "- [ ] Import the legacy rows\n- [ ] (after: 1) Backfill the audit table\n";
        let work = |node: &str, prompt: &str| match (node, prompt.contains(APPROACH)) {
            ("1", true) => "done\nSTATUS: done",
            _ => BLOCKED,
        };
        let mut engine = Engine::new(plan(text), rescued(), &Journal::new()).unwrap();
        let (first, _, rescues) = run_with(&mut engine, work, &rescue_json());
        assert_eq!(rescues.len(), 1);
        assert_eq!(ran(&first), ["1", "1", "1", "1", "1", "2", "2", "2"]);
        assert!(
            matches!(finish(&first).reason, FinishReason::NodeFailed { node, .. } if node == "2")
        );

        // Run again: item 2 gets a new round and the run's rescue back
        // (Leopold: a new run's `failure_rescue_used` is false).
        let mut on_disk = plan(text);
        apply_statuses(&mut on_disk, &first);
        let mut engine = Engine::new(on_disk, rescued(), &as_begun(&rescued(), &first)).unwrap();
        let (again, _, _) = run_with(&mut engine, work, &rescue_json());
        assert_eq!(
            asked_ids(&again),
            ["2#4:work", "2#5:work", "2#6:work", "2#6:rescue", "2#7:work"]
        );
        let both: Vec<Effect> = first.iter().chain(&again).cloned().collect();
        let replay_cfg = RunConfig {
            replay_only: true,
            ..rescued()
        };
        let mut replay = Engine::new(
            plan(text),
            replay_cfg.clone(),
            &as_begun(&replay_cfg, &both),
        )
        .unwrap();
        let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
        assert_eq!(finish(&replayed).reason, finish(&again).reason);
    }

    /// Every work item blocked, every command exit 1; a rescue answered
    /// `rescue` (`None`: refused, as a runner with no model does).
    fn failing(rescue: Option<&'static str>) -> impl FnMut(&Request) -> Event {
        move |r: &Request| {
            let id = r.id.clone();
            let answer = match (&r.body, rescue) {
                (RequestBody::Replan { .. }, None) => {
                    return Event::Refused {
                        id,
                        reason: "manual mode has none".into(),
                    }
                }
                (RequestBody::Replan { .. }, Some(text)) => Answer::Revision { text: text.into() },
                (RequestBody::Command { .. }, _) => Answer::Command {
                    exit: 1,
                    output: "boom".into(),
                },
                _ => Answer::Work {
                    output: BLOCKED.into(),
                },
            };
            Event::Answered { id, answer }
        }
    }

    /// The first run's effects, then the effects of a run started again
    /// on the notes it left (`checked`: items a person checked `[x]`).
    fn run_again(
        text: &str,
        config: &RunConfig,
        first: impl FnMut(&Request) -> Event,
        checked: &[usize],
        then: impl FnMut(&Request) -> Event,
    ) -> (Vec<Effect>, Vec<Effect>) {
        let mut engine = Engine::new(plan(text), config.clone(), &Journal::new()).unwrap();
        let before = drive(&mut engine, first);
        let mut on_disk = plan(text);
        apply_statuses(&mut on_disk, &before);
        for &i in checked {
            on_disk.nodes[i].status = Status::Done;
        }
        let journal = as_begun(config, &before);
        let mut engine = Engine::new(on_disk, config.clone(), &journal).unwrap();
        let after = drive(&mut engine, then);
        (before, after)
    }

    /// Leopold's `runParallel`: waves count failures in a row across the
    /// run, in the order they settle, and the rescue goes to the last item
    /// to fail when the count reaches three; the others stay open and run
    /// beside its last attempt. When the count reaches the ceiling again,
    /// the rescue is spent: the run stops on the last to fail.
    #[test]
    fn waves_count_failures_in_a_row_and_rescue_the_last_to_fail() {
        let text = "- [ ] Import A\n- [ ] Import B\n";
        let config = RunConfig {
            rescue: true,
            ..parallel()
        };
        let mut engine = Engine::new(plan(text), config, &Journal::new()).unwrap();
        let (effects, prompts, rescues) = run_with(&mut engine, |_, _| BLOCKED, &rescue_json());
        assert_eq!(
            asked_ids(&effects),
            [
                "1#1:work",
                "2#1:work",
                "1#2:work",
                "2#2:work",
                "2#2:rescue",
                "1#3:work",
                "2#3:work"
            ]
        );
        let RequestBody::Replan { messages, .. } = &rescues[0].body else {
            unreachable!()
        };
        let ask = &messages[1].content;
        assert!(ask.contains("failed 4 time(s) in a row"), "{ask}");
        assert!(
            ask.contains("ended blocked on attempt 2, the run's failure 4 in a row"),
            "{ask}"
        );
        let lasts: Vec<bool> = prompts
            .iter()
            .map(|p| p.contains("THIS IS THE LAST ATTEMPT"))
            .collect();
        assert_eq!(lasts, [false, false, false, false, false, true]);
        let trace = trace_lines(&effects);
        assert!(
            trace.contains(
                &"1#2: asked again once the run goes on: attempt 3 of 3 [schedule]".to_string()
            ),
            "{trace:#?}"
        );
        assert_eq!(
            finish(&effects).reason,
            FinishReason::NodeFailed {
                node: "2".into(),
                reason:
                    "ended blocked on attempt 3, its last, under the new approach a rescue decided"
                        .into()
            }
        );
        // Both failed in their notes: the one the run stopped on, and the
        // one whose last attempt failed with attempts left.
        let mut on_disk = plan(text);
        apply_statuses(&mut on_disk, &effects);
        assert_eq!(
            [on_disk.nodes[0].status, on_disk.nodes[1].status],
            [Status::Failed, Status::Failed]
        );
    }

    /// Review, F1: two items out of attempts in one wave stopped the run
    /// with no rescue, and every run started again asked nothing and
    /// stopped on the same failure. Each stop's "no rescue" is journaled:
    /// run again, both get a new round. (Only a run begun when waves
    /// counted each item's failures has two out of attempts at once.)
    #[test]
    fn two_items_out_of_attempts_at_once_are_not_rescued_and_each_gets_a_new_round() {
        let text = "- [ ] Import A\n- [ ] Import B\n";
        let config = RunConfig {
            rescue: true,
            waves_in_a_row: false,
            ..parallel()
        };
        let approach = Some(r#"{"approach":"one row first","different":"no batch"}"#);
        let (first, again) = run_again(text, &config, failing(None), &[], failing(approach));
        assert!(trace_lines(&first).contains(
            &"1#3: not rescued: no different approach (more than one item failed at once) [stop]"
                .to_string()
        ));
        assert_eq!(
            asked_ids(&again)[..6],
            ["1#4:work", "2#4:work", "1#5:work", "2#5:work", "1#6:work", "2#6:work"]
        );
    }

    /// Review, F1b: an item rescued before, out of attempts again beside
    /// another item: neither is rescued, and run again gives both a new
    /// round, whichever settles first.
    #[test]
    fn a_rescued_item_failing_beside_another_gives_both_a_new_round_when_run_again() {
        for text in [
            "- [ ] A\n- [ ] C\n- [ ] (after: 2) B\n",
            "- [ ] C\n- [ ] (after: 1) B\n- [ ] A\n",
        ] {
            let config = RunConfig {
                rescue: true,
                ..parallel()
            };
            let c = if text.starts_with("- [ ] A") {
                "2"
            } else {
                "1"
            };
            let answer = move |r: &Request| match &r.body {
                RequestBody::Replan { .. } => Event::Answered {
                    id: r.id.clone(),
                    answer: Answer::Revision {
                        text: r#"{"approach":"one row first","different":"no batch"}"#.into(),
                    },
                },
                _ => Event::Answered {
                    id: r.id.clone(),
                    answer: Answer::Work {
                        output: if r.node == c {
                            "done\nSTATUS: done"
                        } else {
                            BLOCKED
                        }
                        .into(),
                    },
                },
            };
            let (first, again) = run_again(text, &config, answer, &[], answer);
            let rescues = |e: &[Effect]| {
                asked_ids(e)
                    .into_iter()
                    .filter(|id| id.ends_with(":rescue"))
                    .count()
            };
            assert_eq!(rescues(&first), 1, "{text}");
            // A new round each: two worker attempts before any rescue.
            let again = asked_ids(&again);
            assert!(
                !again[..2].iter().any(|id| id.ends_with(":rescue")),
                "{text}: {again:?}"
            );
        }
    }

    /// Review, F2: a rescue the runner could not ask (no model) was not
    /// journaled, so a run started again asked it instead of giving the
    /// item three attempts more.
    #[test]
    fn a_run_started_again_after_a_refused_rescue_gives_a_new_round() {
        let text = "- [ ] Import the legacy rows\n";
        for (then, expected) in [
            (
                Some("no idea"),
                &["1#4:work", "1#5:work", "1#6:work", "1#6:rescue"][..],
            ),
            (
                Some(r#"{"approach":"one row first","different":"no batch"}"#),
                &["1#4:work", "1#5:work", "1#6:work", "1#6:rescue", "1#7:work"][..],
            ),
            (
                None,
                &["1#4:work", "1#5:work", "1#6:work", "1#6:rescue"][..],
            ),
        ] {
            let (first, again) = run_again(text, &rescued(), failing(None), &[], failing(then));
            assert_eq!(
                asked_ids(&first),
                ["1#1:work", "1#2:work", "1#3:work", "1#3:rescue"]
            );
            assert_eq!(asked_ids(&again), expected, "{then:?}");
        }
    }

    /// Review, F3: the rescue was asked with no step left for the attempt
    /// it buys (Leopold checks its iteration budget first).
    #[test]
    fn no_rescue_is_asked_when_no_step_is_left() {
        let config = RunConfig {
            max_steps: 3,
            ..rescued()
        };
        let mut engine = Engine::new(plan(ITEM), config, &Journal::new()).unwrap();
        let effects = drive(&mut engine, failing(Some("unused")));
        assert_eq!(asked_ids(&effects), ["1#1:work", "1#2:work", "1#3:work"]);
        assert!(trace_lines(&effects).contains(
            &"1#3: not rescued: no different approach (no step is left for another attempt) [stop]"
                .to_string()
        ));
        let mut on_disk = plan(ITEM);
        apply_statuses(&mut on_disk, &effects);
        assert_eq!(on_disk.nodes[0].status, Status::Failed);
    }

    /// Review, F4: after an item checked by hand, whether the run started
    /// again had its rescue depended on how the first run's had ended.
    #[test]
    fn a_run_started_again_after_a_box_checked_by_hand_has_its_rescue() {
        let text = "- [ ] Import A\n- [ ] (after: 1) Import B\n";
        for first in [
            None,
            Some("no idea"),
            Some(r#"{"approach":"x","different":"y"}"#),
        ] {
            let (_, again) = run_again(text, &rescued(), failing(first), &[0], failing(Some("no")));
            assert_eq!(
                asked_ids(&again),
                ["2#1:work", "2#2:work", "2#3:work", "2#3:rescue"],
                "{first:?}"
            );
        }
    }

    /// Review, F5: a replay of a journal cut off at the rescue (its call
    /// failed) ended as a failure the run never had; it diverges, as at
    /// any other answer the journal lacks.
    #[test]
    fn a_replay_cut_off_at_the_rescue_diverges() {
        let mut engine = Engine::new(plan(ITEM), rescued(), &Journal::new()).unwrap();
        let live = drive(&mut engine, |r| match &r.body {
            RequestBody::Replan { .. } => Event::Unavailable {
                id: r.id.clone(),
                error: "connection reset".into(),
            },
            _ => failing(None)(r),
        });
        assert!(matches!(
            finish(&live).reason,
            FinishReason::Interrupted { .. }
        ));
        let replay_cfg = RunConfig {
            replay_only: true,
            ..rescued()
        };
        let mut replay = Engine::new(
            plan(ITEM),
            replay_cfg.clone(),
            &as_begun(&replay_cfg, &live),
        )
        .unwrap();
        let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
        assert_eq!(
            finish(&replayed).reason,
            FinishReason::ReplayDiverged {
                request: "1#3:rescue".into()
            }
        );
    }

    /// As Leopold's `runToolNode`, a command takes no approach: rescued, it
    /// runs once more as it is, and the trace says so.
    #[test]
    fn a_command_rescued_runs_once_more_as_it_is() {
        let text = "- [ ] @tool make test\n";
        let mut engine = Engine::new(plan(text), rescued(), &Journal::new()).unwrap();
        let effects = drive(
            &mut engine,
            failing(Some(r#"{"approach":"run one test","different":"not all"}"#)),
        );
        assert_eq!(
            asked_ids(&effects),
            [
                "1#1:command",
                "1#2:command",
                "1#3:command",
                "1#3:rescue",
                "1#4:command"
            ]
        );
        assert!(trace_lines(&effects).contains(&"1#3: rescued: one last attempt (its command runs as it is; the new approach, run one test, reaches only a worker) [schedule]".to_string()));
    }

    /// A journal with answers and no order began before the rescue: it
    /// goes on without one.
    #[test]
    fn a_run_begun_before_the_rescue_goes_on_without_one() {
        let mut engine = Engine::new(plan(ITEM), rescued(), &Journal::new()).unwrap();
        let effects = drive(&mut engine, failing(Some("unused")));
        let first_two: Vec<Effect> = effects
            .iter()
            .take_while(|e| !matches!(e, Effect::Request(r) if r.id == "1#3:work"))
            .cloned()
            .collect();
        let mut engine = Engine::new(plan(ITEM), rescued(), &journal_of(&first_two)).unwrap();
        let resumed = drive(
            &mut engine,
            failing(Some(r#"{"approach":"x","different":"y"}"#)),
        );
        assert_eq!(asked_ids(&resumed), ["1#3:work"]);
    }

    #[test]
    fn a_runner_with_no_model_and_a_replay_of_a_run_without_one_stop_as_before() {
        let mut engine = Engine::new(plan(ITEM), rescued(), &Journal::new()).unwrap();
        let effects = drive(&mut engine, |r| match &r.body {
            RequestBody::Replan { .. } => Event::Refused {
                id: r.id.clone(),
                reason: "manual mode has none".into(),
            },
            _ => Event::Answered {
                id: r.id.clone(),
                answer: Answer::Work {
                    output: BLOCKED.into(),
                },
            },
        });
        assert_eq!(ran(&effects), ["1", "1", "1", "1"]);
        assert!(trace_lines(&effects).contains(
            &"1#3: not rescued: no different approach (refused: manual mode has none) [stop]"
                .to_string()
        ));
        let stopped = finish(&effects).reason;
        assert!(matches!(stopped, FinishReason::NodeFailed { .. }));
        // A journal with no rescue (a run without one, or before it was
        // made) replays to the same stop.
        let replay_cfg = RunConfig {
            replay_only: true,
            ..rescued()
        };
        let mut replay = Engine::new(
            plan(ITEM),
            replay_cfg.clone(),
            &as_begun(&replay_cfg, &effects),
        )
        .unwrap();
        let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
        assert_eq!(finish(&replayed).reason, stopped);
    }
}

#[test]
fn an_unrouted_failure_is_asked_again_then_stops_the_run() {
    let text = "- [ ] Build\n- [ ] (after: 1) Test\n- [ ] Docs\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let mut prompts = Vec::new();
    let effects = drive(&mut engine, |r| {
        let output = if r.node == "1" {
            if let RequestBody::Work { messages, .. } = &r.body {
                prompts.push(messages.last().unwrap().content.clone());
            }
            "broken\nSTATUS: failed"
        } else {
            "ok\nSTATUS: done"
        };
        Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: output.into(),
            },
        }
    });
    // Leopold's serial loop: the failed item again (three attempts in
    // all), then the run stops; neither its dependent nor the item after
    // it starts.
    assert_eq!(ran(&effects), ["1", "1", "1"]);
    assert_eq!(asked_ids(&effects), ["1#1:work", "1#2:work", "1#3:work"]);
    assert!(!prompts[0].contains("attempt"));
    assert!(
        prompts[1].contains("This is attempt 2 of 3: the last one was not done (it ended fail)")
    );
    let trace = trace_lines(&effects);
    assert!(
        trace.contains(&"1#1: asked again: attempt 2 of 3 [schedule]".to_string()),
        "{trace:?}"
    );
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "1".into(),
            reason: "ended fail on attempt 3 of 3".into()
        }
    );
}

#[test]
fn an_unmet_need_is_skipped_once_nothing_else_can_emit_it() {
    // Two declared values: which one is the worker's to say, and it says none.
    let text = "- [ ] Probe\n      @emit ready=yes\n      @emit ready=no\n- [ ] (after: 1) Use it\n      @needs ready\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: "STATUS: done".into(),
        },
    });
    assert_eq!(ran(&effects), ["1"]);
    assert!(trace_lines(&effects).contains(
        &"2#0: skipped: @needs ready, which is not on the channel [schedule]".to_string()
    ));
}

#[test]
fn a_refused_command_fails_with_exit_126_and_routes_on_it() {
    let text = "- [ ] @tool make test\n      @on exit!=0 -> 2\n- [ ] Report the failure\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| match &r.body {
        RequestBody::Command { .. } => Event::Refused {
            id: r.id.clone(),
            reason: "commands do not run in the browser".into(),
        },
        _ => Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: "reported\nSTATUS: done".into(),
            },
        },
    });
    assert!(trace_lines(&effects)
        .contains(&"1#1: took route `exit!=0` → item 2 (Report the failure) [route]".to_string()));
}

#[test]
fn feedback_amendments_go_through_the_bounds_and_accepted_items_run() {
    let text = "- [ ] Build it\n- [ ] (after: 1) @feedback Propose follow-ups\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    engine.set_plan_text(text);
    let effects = drive(&mut engine, |r| {
        let output = match r.node.as_str() {
            "2" => "Two ideas.\n```leopold-amend\nadd: Write the changelog\ndelete 1\nadd: @tool rm -rf /\n```\nSTATUS: done",
            _ => "done\nSTATUS: done",
        };
        Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: output.into(),
            },
        }
    });
    let lines = trace_lines(&effects);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("amendment refused (no-delete)")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("amendment refused (work-only)")),
        "{lines:#?}"
    );
    assert!(lines.contains(&"2#1: amendment accepted: item 3 appended [schedule]".to_string()));
    let amended = effects.iter().find_map(|e| match e {
        Effect::Amend { text } => Some(text.clone()),
        _ => None,
    });
    assert!(amended.unwrap().ends_with("- [ ] Write the changelog\n"));
    assert_eq!(ran(&effects), ["1", "2", "3"], "the accepted item runs");
    let RequestBody::Work { review_only, .. } = &effects
        .iter()
        .find_map(|e| match e {
            Effect::Request(r) if r.node == "2" => Some(r.body.clone()),
            _ => None,
        })
        .unwrap()
    else {
        unreachable!()
    };
    assert!(review_only, "feedback is read-only");
}

#[test]
fn replay_and_resume_of_a_plan_md_run_ask_nothing_again() {
    let mut engine = Engine::new(plan(MIGRATION), config(), &Journal::new()).unwrap();
    let live = drive(
        &mut engine,
        answers(0, "Boots.\nSTATUS: done\nSIGNALS: migrated=false"),
    );
    let journal = journal_of(&live);

    let cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut replay = Engine::new(plan(MIGRATION), cfg, &journal).unwrap();
    let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
    assert_eq!(observable(&replayed), observable(&live));

    // Interrupted right after item 3 settled: items 1-3 done, the rest pending.
    let cut = live
        .iter()
        .position(
            |e| matches!(e, Effect::WriteStatus { node, status: Status::Done } if node == "3"),
        )
        .unwrap()
        + 1;
    let mut on_disk = plan(MIGRATION);
    apply_statuses(&mut on_disk, &live[..cut]);
    let mut resumed = Engine::new(on_disk, config(), &journal_of(&live[..cut])).unwrap();
    let mut respond = answers(0, "unused");
    let effects = drive(&mut resumed, |r| respond(r));
    assert_eq!(
        ran(&effects),
        ["5"],
        "the recorded migrated=false still routes to the rollback; nothing re-runs"
    );
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A run ends, asks nothing twice, each item after its
        /// dependencies; its replay and a resume from any cut end as it did.
        #[test]
        fn items_run_once_after_their_dependencies_and_replay_and_resume_agree(text in arb_plan(), seed in any::<u64>(), cut in any::<u64>(), waves in any::<bool>(), rescue in any::<bool>(), in_a_row in any::<bool>(), at_most in proptest::option::of(1u32..4)) {
            let plan = plan_any(&text);
            let answer = oracle(seed);
            let cfg = RunConfig { rescue, waves_in_a_row: in_a_row, parallel_at_most: at_most, ..if waves { parallel() } else { config() } };
            let mut engine = Engine::new(plan.clone(), cfg.clone(), &Journal::new()).unwrap();
            let live = drive(&mut engine, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
            let f = finish(&live);
            let ended = matches!(f.reason, FinishReason::Completed | FinishReason::NodeFailed { .. });
            prop_assert!(ended, "ended with {:?}", f.reason);
            let ids = asked_ids(&live);
            prop_assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len(), "asked twice: {:?}", ids);

            // An item is asked again only after a worker's failure, each
            // attempt under its own request id, never a fourth time with
            // nothing else asked between (an item's success between its
            // failures starts the count again, as Leopold's
            // `consecutive_failures`), in waves a fifth (a success in the
            // wave of its first failure, asked before it, ends the streak
            // after it). The run's one rescue, asked right after the
            // attempt it follows, buys one more.
            let rescues: Vec<usize> = ids.iter().enumerate().filter(|(_, id)| id.ends_with(":rescue")).map(|(at, _)| at).collect();
            prop_assert!(rescues.len() <= usize::from(rescue), "rescued twice: {:?}", ids);
            for &at in &rescues {
                let attempt = ids[at].trim_end_matches("rescue");
                prop_assert!(ids[..at].iter().any(|id| id.starts_with(attempt)), "rescued before its attempt: {:?}", ids);
            }
            let ids: Vec<String> = ids.into_iter().filter(|id| !id.ends_with(":rescue")).collect();
            let order: Vec<String> = ids.iter().map(|id| id.split_once('#').unwrap().0.to_string()).collect();
            let extra = usize::from(!rescues.is_empty());
            let mut attempts: BTreeMap<&str, u32> = BTreeMap::new();
            for (item, id) in order.iter().zip(&ids) {
                let n = attempts.entry(item.as_str()).or_default();
                *n += 1;
                prop_assert!(id.starts_with(&format!("{item}#{n}:")), "{} asked as {}", item, id);
                prop_assert!(*n == 1 || !id.ends_with(":human"), "a person asked again: {}", id);
            }
            let streak = if waves { 5 } else { 4 } + extra;
            prop_assert!(!order.windows(streak).any(|w| w.iter().all(|i| *i == w[0])), "asked too often in a row: {:?}", ids);
            // A run begun when waves counted each item's own failures.
            let per_item = waves && !in_a_row;
            prop_assert!(!per_item || attempts.values().all(|&n| n as usize <= 3 + extra), "an item ran more than three times: {:?}", order);
            let first: BTreeMap<&str, usize> = order.iter().enumerate().rev().map(|(i, id)| (id.as_str(), i)).collect();
            let last: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
            for e in plan.edges.iter().filter(|e| e.kind == planvault_core::EdgeKind::After) {
                let (dep, item) = (plan.nodes[e.from].id.as_str(), plan.nodes[e.to.unwrap()].id.as_str());
                // A route is a jump: its target waits for no dependency.
                let routed = plan.edges.iter().any(|r| r.kind == planvault_core::EdgeKind::Route && r.to == e.to);
                if let (Some(&at), false) = (first.get(item), routed) {
                    // A dependency that ran was done (its last attempt
                    // asked) in an earlier wave.
                    if let Some(&d) = last.get(dep) {
                        prop_assert!(d < at, "{} ran before its dependency {}: {:?}", item, dep, ids);
                    }
                }
            }

            // The journal as the runner writes it, its order first: a
            // replay or a resume given the other order goes on in the
            // run's own.
            let given = RunConfig { parallel: !waves, waves_in_a_row: !in_a_row, parallel_at_most: at_most.map_or(Some(2), |_| None), ..cfg.clone() };
            let replay_cfg = RunConfig { replay_only: true, ..given.clone() };
            let mut replay = Engine::new(plan.clone(), replay_cfg, &as_begun(&cfg, &live)).unwrap();
            let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
            prop_assert_eq!(observable(&replayed), observable(&live));

            // Cut anywhere before the stop's failure is written: run again
            // from there, that item starts a new round (see below).
            let stop = match &f.reason { FinishReason::NodeFailed { node, .. } => Some(node.clone()), _ => None };
            let failed_at = live.iter().position(|e| matches!(e, Effect::WriteStatus { status: Status::Failed, node } if Some(node) == stop.as_ref()));
            let cut = (cut as usize) % (failed_at.unwrap_or(live.len()) + 1);
            let mut on_disk = plan.clone();
            apply_statuses(&mut on_disk, &live[..cut]);
            let journal = as_begun(&cfg, &live[..cut]);
            let mut resumed = Engine::new(on_disk, given, &journal).unwrap();
            let again = drive(&mut resumed, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
            prop_assert_eq!(finish(&again).reason, f.reason);
            let recorded: BTreeSet<String> = journal.entries.iter().map(|e| e.key.clone()).collect();
            for r in again.iter().filter_map(|e| match e { Effect::Request(r) => Some(r), _ => None }) {
                prop_assert!(!recorded.contains(&r.id), "{} was asked again after it was recorded", r.id);
            }
        }
    }

    /// Drive `engine` answering the request asked last first, as a runner
    /// whose answers to a wave arrive in any order may.
    fn drive_last_first(
        engine: &mut Engine,
        mut answer: impl FnMut(&Request) -> Event,
    ) -> Vec<Effect> {
        let requests = |effects: &[Effect]| -> Vec<Request> {
            effects
                .iter()
                .filter_map(|e| match e {
                    Effect::Request(r) => Some(r.clone()),
                    _ => None,
                })
                .collect()
        };
        let mut all = engine.start();
        let mut asked = requests(&all);
        while let Some(request) = asked.pop() {
            if engine.finished().is_some() {
                break;
            }
            let effects = engine.handle(answer(&request));
            asked.extend(requests(&effects));
            all.extend(effects);
        }
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A wave's answers journaled in the order they arrive (here the
        /// last asked first), in a first run or one started again after
        /// its stop: a resume from any cut asks nothing recorded and ends
        /// as the run did. (Found by a review; a run begun when waves
        /// counted each item's own failures can still differ when cut
        /// between two rescues of one wave, which only it has.)
        #[test]
        fn answers_in_any_order_resume_as_they_ran(text in arb_plan(), seed in any::<u64>(), seed2 in any::<u64>(), cut in any::<u64>(), waves in any::<bool>(), rescue in any::<bool>(), started_again in any::<bool>()) {
            let plan = plan_any(&text);
            let cfg = RunConfig { rescue, ..if waves { parallel() } else { config() } };
            let (answer, answer2) = (oracle(seed), oracle(seed2));
            let mut engine = Engine::new(plan.clone(), cfg.clone(), &Journal::new()).unwrap();
            let mut live = drive_last_first(&mut engine, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
            let mut on_disk = plan.clone();
            let mut before: Vec<Effect> = Vec::new();
            if started_again {
                let FinishReason::NodeFailed { .. } = finish(&live).reason else { return Ok(()); };
                apply_statuses(&mut on_disk, &live);
                before = live.clone();
                let mut engine = Engine::new(on_disk.clone(), cfg.clone(), &as_begun(&cfg, &before)).unwrap();
                live = drive_last_first(&mut engine, |r| Event::Answered { id: r.id.clone(), answer: answer2(r) });
            }
            let answer_now = |r: &Request| if started_again { answer2(r) } else { answer(r) };
            let f = finish(&live);
            // A failed run's last record is its stop: cut before it.
            let stop = live.iter().rposition(|e| matches!(e, Effect::Record(_)));
            let stop = stop.filter(|_| matches!(f.reason, FinishReason::NodeFailed { .. }));
            let cut = (cut as usize) % (stop.unwrap_or(live.len()) + 1);
            let mut disk = on_disk.clone();
            apply_statuses(&mut disk, &live[..cut]);
            let part: Vec<Effect> = before.iter().chain(&live[..cut]).cloned().collect();
            let journal = as_begun(&cfg, &part);
            let mut resumed = Engine::new(disk, cfg.clone(), &journal).unwrap();
            let again = drive_last_first(&mut resumed, |r| Event::Answered { id: r.id.clone(), answer: answer_now(r) });
            let recorded: BTreeSet<String> = journal.entries.iter().map(|e| e.key.clone()).collect();
            for r in again.iter().filter_map(|e| match e { Effect::Request(r) => Some(r), _ => None }) {
                prop_assert!(!recorded.contains(&r.id), "{} was asked again after it was recorded", r.id);
            }
            prop_assert_eq!(finish(&again).reason, f.reason);
        }
    }

    fn plan_any(text: &str) -> Plan {
        planmd::parse("PLAN.md", text).0
    }

    /// Plans with signals: work items that emit `k`, `@needs k`, routes on
    /// `k`, outcomes and `exit`, boxes checked before the run (whose
    /// routes flip as `k` is overwritten).
    fn arb_plan() -> impl Strategy<Value = String> {
        (2usize..9).prop_flat_map(|n| {
            proptest::collection::vec(
                (
                    0u8..4,
                    any::<u8>(),
                    proptest::collection::vec((0u8..7, any::<u8>()), 0..3),
                    0u8..4,
                    0u8..5,
                ),
                n,
            )
            .prop_map(move |items| {
                let mut text = String::from("# Plan\n\n");
                for (i, (kind, deps, routes, checked, needs)) in items.iter().enumerate() {
                    let after: Vec<String> = (0..i)
                        .filter(|d| deps >> (d % 8) & 1 == 1)
                        .map(|d| (d + 1).to_string())
                        .collect();
                    let after = match after.is_empty() {
                        true => String::new(),
                        false => format!("(after: {}) ", after.join(", ")),
                    };
                    let body = match kind {
                        0 | 3 => format!("Work item {}", i + 1),
                        1 => format!("@tool check-{}", i + 1),
                        _ => format!("@gate Review item {}", i + 1),
                    };
                    let check = if *checked == 0 { 'x' } else { ' ' };
                    text.push_str(&format!("- [{check}] {after}{body}\n"));
                    if *kind == 0 || *kind == 3 {
                        text.push_str("      @emit k=a\n      @emit k=b\n");
                    }
                    if *needs == 0 {
                        text.push_str("      @needs k\n");
                    }
                    for (cond, target) in routes {
                        if i + 1 < n {
                            let to = i + 2 + (*target as usize % (n - i - 1));
                            let cond =
                                ["exit=0", "exit!=0", "fail", "ok", "blocked", "k=a", "k!=a"]
                                    [*cond as usize];
                            text.push_str(&format!("      @on {cond} -> {to}\n"));
                        }
                    }
                }
                text
            })
        })
    }

    fn oracle(seed: u64) -> impl Fn(&Request) -> Answer {
        move |r: &Request| {
            let mut h = seed;
            for b in r.id.bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100000001b3);
            }
            match &r.body {
                RequestBody::Command { .. } => Answer::Command {
                    exit: (h % 3) as i32,
                    output: String::new(),
                },
                // A rescue decides an approach, or gives none.
                RequestBody::Replan { .. } => Answer::Revision {
                    text: match h % 2 {
                        0 => r#"{"approach":"smaller","different":"one row"}"#.into(),
                        _ => "no idea".into(),
                    },
                },
                _ => Answer::Work {
                    output: format!(
                        "out\nSTATUS: {}\nSIGNALS: {}",
                        ["done", "done", "blocked", "failed"][(h % 4) as usize],
                        ["k=a", "k=b", "none"][((h >> 8) % 3) as usize]
                    ),
                },
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Run again after a stop: it asks nothing recorded, ends, and a
        /// replay of both runs' journal (where the second asked anything)
        /// and a resume of the second from any cut end as it did.
        #[test]
        fn a_run_started_again_replays_and_resumes_as_it_ran(text in arb_plan(), seed in any::<u64>(), seed2 in any::<u64>(), cut in any::<u64>(), waves in any::<bool>(), rescue in any::<bool>(), refuse in any::<bool>(), in_a_row in any::<bool>()) {
            let plan = plan_any(&text);
            let cfg = RunConfig { rescue, waves_in_a_row: in_a_row, ..if waves { parallel() } else { config() } };
            let first_answer = oracle(seed);
            let mut engine = Engine::new(plan.clone(), cfg.clone(), &Journal::new()).unwrap();
            // A runner with no model refuses the rescue.
            let first = drive(&mut engine, |r| match (&r.body, refuse) {
                (RequestBody::Replan { .. }, true) => Event::Refused { id: r.id.clone(), reason: "no model".into() },
                _ => Event::Answered { id: r.id.clone(), answer: first_answer(r) },
            });
            let FinishReason::NodeFailed { node: stopped_on, reason: stopped_why } = finish(&first).reason else {
                return Ok(());
            };
            let mut on_disk = plan.clone();
            apply_statuses(&mut on_disk, &first);
            let answer = oracle(seed2);
            // Started again, replayed and resumed given the other order:
            // the journal's, first in it, holds.
            let given = RunConfig { parallel: !waves, waves_in_a_row: !in_a_row, ..cfg.clone() };
            let mut engine = Engine::new(on_disk.clone(), given.clone(), &as_begun(&cfg, &first)).unwrap();
            let second = drive(&mut engine, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
            let f2 = finish(&second);
            prop_assert!(matches!(f2.reason, FinishReason::Completed | FinishReason::NodeFailed { .. }), "{:?}", f2.reason);
            // An item a worker's or a command's failures stopped the run on
            // gets a new round: run again, the run asks a worker something
            // (found by the review: it could ask nothing, for ever).
            let last = asked_ids(&first).into_iter().rfind(|id| id.starts_with(&format!("{stopped_on}#")) && !id.ends_with(":rescue"));
            if stopped_why.starts_with("ended") && last.is_some_and(|id| id.ends_with(":work") || id.ends_with(":command")) && plan.nodes.iter().any(|n| n.id == stopped_on && n.kind != planvault_core::NodeKind::Human) {
                let moved = asked_ids(&second).iter().any(|id| !id.ends_with(":rescue"));
                let first_reason = FinishReason::NodeFailed { node: stopped_on.clone(), reason: stopped_why.clone() };
                prop_assert!(moved || f2.reason != first_reason, "run again asked nothing: {:?}; first asked {:?}", f2.reason, asked_ids(&first));
            }
            let recorded: BTreeSet<String> = journal_of(&first).entries.iter().map(|e| e.key.clone()).collect();
            for id in asked_ids(&second) {
                prop_assert!(!recorded.contains(&id), "run again asked recorded {}", id);
            }
            let both: Vec<Effect> = first.iter().chain(&second).cloned().collect();
            let replay_cfg = RunConfig { replay_only: true, ..given.clone() };
            let mut replay = Engine::new(plan.clone(), replay_cfg, &as_begun(&cfg, &both)).unwrap();
            let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
            if !asked_ids(&second).is_empty() {
                prop_assert_eq!(&finish(&replayed).reason, &f2.reason);
            }
            let stop = second.iter().rposition(|e| matches!(e, Effect::Record(_)));
            let stop = stop.filter(|_| matches!(f2.reason, FinishReason::NodeFailed { .. }));
            let cut = (cut as usize) % (stop.unwrap_or(second.len()) + 1);
            let mut disk = on_disk.clone();
            apply_statuses(&mut disk, &second[..cut]);
            let part: Vec<Effect> = first.iter().chain(&second[..cut]).cloned().collect();
            let mut resumed = Engine::new(disk, given, &as_begun(&cfg, &part)).unwrap();
            let again = drive(&mut resumed, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
            prop_assert_eq!(&finish(&again).reason, &f2.reason);
        }
    }
}

/// How Leopold runs a plan (its scheduler: `settleNode`, `signalsFor`,
/// `dispatchable` in dispatch.ts, `routeDecision` in graph.ts), on the
/// smallest plans where a differential run of the two once differed. Each
/// item answers its `STATUS` (and `SIGNALS`), a `@tool` its exit; the items
/// asked, in order, and the run's end must be what Leopold's waves do.
#[test]
fn plans_run_as_leopold_runs_them() {
    struct Case {
        name: &'static str,
        text: &'static str,
        /// Item → its reply's status block (`exit N` for a command).
        replies: &'static [(&'static str, &'static str)],
        ran: &'static [&'static str],
        failed: Option<&'static str>,
    }
    let cases = [
        Case {
            name: "a blocked item with no @on blocked takes its @on fail",
            text: "- [ ] Step 1\n  @on fail -> 3\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n",
            replies: &[("1", "STATUS: blocked")],
            ran: &["1", "3"],
            failed: None,
        },
        Case {
            name: "@on blocked still comes first",
            text: "- [ ] Step 1\n  @on fail -> 2\n  @on blocked -> 3\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n",
            replies: &[("1", "STATUS: blocked")],
            ran: &["1", "3"],
            failed: None,
        },
        Case {
            name: "a box checked before the run steers once a later item emits its signal",
            text: "- [ ] @tool make t1\n- [ ] Step 2\n- [x] Step 3\n  @on exit!=0 -> 2\n",
            replies: &[("1", "exit 1")],
            // exit=1 on the channel: 3's route holds, and 2 outranks the
            // retry; its success starts the count of failures again.
            ran: &["1", "2", "1", "1", "1"],
            failed: Some("1"),
        },
        Case {
            name: "a checked box's route that holds leaves its other successors waiting: stuck",
            text: "- [x] Step 1\n  @on a=x -> 3\n- [ ] Step 2\n  @emit a=x\n- [ ] (after: 1) Step 3\n- [ ] (after: 1) Step 4\n",
            replies: &[],
            ran: &["2", "3"],
            failed: Some("4"),
        },
        Case {
            name: "an item steered past runs once a checked box's route to it holds",
            text: "- [ ] Step 1\n  @on ok -> 2\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n- [x] Step 4\n  @on k=v -> 3\n- [ ] (after: 2) Step 5\n  @emit k=v\n",
            replies: &[],
            ran: &["1", "2", "5", "3"],
            failed: None,
        },
        Case {
            name: "a blocked item's @on fail fires beside a signal route it took",
            text: "- [ ] Step 1\n  @emit k=v\n  @on k=v -> 2\n  @on fail -> 3\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n",
            replies: &[("1", "STATUS: blocked\nSIGNALS: k=v")],
            ran: &["1", "2", "3"],
            failed: None,
        },
        Case {
            name: "a read-only item's blocked is a failure (@feedback as @gate and @verify)",
            text: "- [ ] @feedback Read the evidence\n  @on blocked -> 3\n  @on fail -> 2\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n",
            replies: &[("1", "STATUS: blocked")],
            ran: &["1", "2"],
            failed: None,
        },
        Case {
            name: "an @emit with one value is on the channel when the item ends ok",
            text: "- [ ] Step 1\n  @emit ready=true\n  @on ready=true -> 3\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n",
            replies: &[],
            ran: &["1", "3"],
            failed: None,
        },
        Case {
            name: "a command's declared signal meets a @needs",
            text: "- [ ] @tool make build\n  @emit built=true\n- [ ] (after: 1) Step 2\n  @needs built\n",
            replies: &[("1", "exit 0")],
            ran: &["1", "2"],
            failed: None,
        },
        Case {
            name: "no default where the item failed",
            text: "- [ ] @tool make build\n  @emit built=true\n- [ ] Step 2\n  @needs built\n",
            replies: &[("1", "exit 2")],
            ran: &["1", "1", "1"],
            failed: Some("1"),
        },
        Case {
            name: "an item done before the run does not steer on ok",
            text: "- [x] Step 1\n  @on ok -> 3\n- [ ] (after: 1) Step 2\n- [ ] (after: 1) Step 3\n",
            replies: &[],
            ran: &["2", "3"],
            failed: None,
        },
        Case {
            name: "an item checked before the run is done whatever its dependencies did",
            text: "- [ ] Step 1\n- [x] (after: 1) Step 2\n- [ ] (after: 2) Step 3\n",
            replies: &[("1", "STATUS: failed")],
            // 3 waits for nothing, but 1 comes first and is asked three times.
            ran: &["1", "1", "1"],
            failed: Some("1"),
        },
        Case {
            name: "an item checked before the run waits for no @needs",
            text: "- [x] Step 1\n  @emit b\n  @needs b\n- [ ] (after: 1) Step 2\n",
            replies: &[],
            ran: &["2"],
            failed: None,
        },
        Case {
            name: "an item checked before the run is never bypassed",
            text: "- [ ] Step 1\n  @on ok -> 3\n- [x] (after: 1) Step 2\n- [ ] Step 3\n- [ ] (after: 2) Step 4\n",
            replies: &[],
            ran: &["1", "3", "4"],
            failed: None,
        },
        Case {
            name: "a route to an item waiting on @needs handles no failure",
            text: "- [ ] Step 1\n  @on fail -> 2\n- [ ] Step 2\n  @needs k\n- [ ] (after: 1) Step 3\n  @emit k=v\n",
            replies: &[("1", "STATUS: failed")],
            ran: &["1", "1", "1"],
            failed: Some("1"),
        },
        Case {
            name: "a route to an item waiting on @needs is not taken; it runs when they come",
            text: "- [ ] Step 1\n  @on ok -> 2\n- [ ] Step 2\n  @needs k\n- [ ] (after: 1) Step 3\n  @emit k=v\n",
            replies: &[],
            ran: &["1", "3", "2"],
            failed: None,
        },
        Case {
            name: "a route to an item already done handles no failure",
            text: "- [ ] Step 1\n- [ ] (after: 1) Step 2\n  @on fail -> 1\n",
            replies: &[("2", "STATUS: failed")],
            ran: &["1", "2", "2", "2"],
            failed: Some("2"),
        },
        Case {
            name: "an item left waiting for a signal nobody sent is a stuck run",
            text: "- [ ] Step 1\n  @emit a=x\n  @emit a=y\n- [ ] Step 2\n  @needs a\n",
            replies: &[],
            ran: &["1"],
            failed: Some("2"),
        },
        Case {
            name: "one a route steered past is not",
            text: "- [ ] Step 1\n  @on ok -> 3\n- [ ] (after: 1) Step 2\n  @emit a=x\n- [ ] (after: 1) Step 3\n- [ ] Step 4\n  @needs a\n",
            replies: &[],
            ran: &["1", "3"],
            failed: None,
        },
        Case {
            name: "a routed target waits for no (after:) dependency",
            text: "- [ ] Step 1\n  @on ok -> 4\n- [ ] Step 2\n- [ ] (after: 2) Step 3\n- [ ] (after: 3) Step 4\n",
            replies: &[],
            // And it outranks the items' order (`dispatchPlan`).
            ran: &["1", "4", "2", "3"],
            failed: None,
        },
        Case {
            name: "of two items emitting one key, the routed one's value is read first",
            text: "- [ ] Step 1\n  @on ok -> 3\n- [ ] Step 2\n  @emit k=two\n- [ ] Step 3\n  @emit k=three\n- [ ] (after: 2, 3) Step 4\n  @on k=two -> 5\n  @on k=three -> 6\n- [ ] (after: 4) Step 5\n- [ ] (after: 4) Step 6\n",
            replies: &[],
            // 3 runs before 2, so 2's value is on the channel when 4 ends.
            ran: &["1", "3", "2", "4", "5"],
            failed: None,
        },
        Case {
            name: "a routed target runs before the dependency that waits on its signal",
            text: "- [ ] Step 1\n  @needs k\n- [ ] Step 2\n  @on ok -> 3\n- [ ] (after: 1) Step 3\n  @emit k=v\n",
            replies: &[],
            ran: &["2", "3", "1"],
            failed: None,
        },
        Case {
            name: "failures are counted in a row across the run: a success between gives three more",
            text: "- [ ] Step 1\n  @needs k\n- [ ] Step 2\n  @emit k=v\n",
            replies: &[("2", "STATUS: failed\nSIGNALS: k=v")],
            // 2's failed attempt put k on the channel: 1 can run, and comes first.
            ran: &["2", "1", "2", "2", "2"],
            failed: Some("2"),
        },
        Case {
            name: "failures are counted in a row across the run: of any items",
            text: "- [ ] Step 1\n  @needs k\n- [ ] Step 2\n  @emit k=v\n",
            replies: &[("2", "STATUS: failed\nSIGNALS: k=v"), ("1", "STATUS: failed")],
            ran: &["2", "1", "1"],
            failed: Some("1"),
        },
    ];
    // With `parallel` (Leopold's `--parallel`), independent items run
    // together in waves, each wave settled in the items' order.
    let waves = [
        Case {
            name: "waves: an item beside a failing one runs, and its success starts the count again",
            text: "- [ ] Step 1\n- [x] (after: 1) Step 2\n- [ ] (after: 2) Step 3\n",
            replies: &[("1", "STATUS: failed")],
            ran: &["1", "3", "1", "1", "1"],
            failed: Some("1"),
        },
        Case {
            name: "waves: an item done ends the streak of its wave, whatever the wave's order",
            text: "- [ ] Step 1\n- [ ] Step 2\n",
            replies: &[("2", "STATUS: failed")],
            ran: &["1", "2", "2", "2", "2"],
            failed: Some("2"),
        },
        Case {
            name: "waves: a routed target goes first in the next wave",
            text: "- [ ] Step 1\n  @on ok -> 4\n- [ ] Step 2\n- [ ] (after: 2) Step 3\n- [ ] (after: 3) Step 4\n",
            replies: &[],
            ran: &["1", "2", "4", "3"],
            failed: None,
        },
    ];
    // Leopold's `--parallel N`: a wave starts the first N items that can
    // run, a taken route's target first.
    let at_most_two = [Case {
        name: "waves of at most two: the routed item comes before the third",
        text: "- [ ] Step 1\n  @on ok -> 4\n- [ ] Step 2\n- [ ] Step 3\n- [ ] Step 4\n",
        replies: &[],
        ran: &["1", "2", "4", "3"],
        failed: None,
    }];
    let two = RunConfig {
        parallel_at_most: Some(2),
        ..parallel()
    };
    let runs = (cases.into_iter().map(|c| (config(), c)))
        .chain(waves.into_iter().map(|c| (parallel(), c)))
        .chain(at_most_two.into_iter().map(|c| (two.clone(), c)));
    for (cfg, case) in runs {
        let mut engine = Engine::new(plan(case.text), cfg, &Journal::new()).unwrap();
        let reply = |item: &str| {
            case.replies
                .iter()
                .find(|(i, _)| *i == item)
                .map_or("STATUS: done", |(_, r)| r)
        };
        let effects = drive(&mut engine, |r| {
            let answer = match &r.body {
                RequestBody::Command { .. } => {
                    let exit = reply(&r.node).trim_start_matches("exit ").parse().unwrap();
                    Answer::Command {
                        exit,
                        output: String::new(),
                    }
                }
                _ => Answer::Work {
                    output: format!("item {}\n{}", r.node, reply(&r.node)),
                },
            };
            Event::Answered {
                id: r.id.clone(),
                answer,
            }
        });
        assert_eq!(ran(&effects), case.ran, "{}", case.name);
        let reason = finish(&effects).reason;
        match case.failed {
            None => assert_eq!(reason, FinishReason::Completed, "{}", case.name),
            Some(item) => assert!(
                matches!(&reason, FinishReason::NodeFailed { node, .. } if node == item),
                "{}: {reason:?}",
                case.name
            ),
        }
    }
}

/// A run begun when waves counted each item's own failures (its order
/// line has no `in_a_row`) replays and resumes counting them so: an item
/// beside another's success still stops the run at its third failure.
#[test]
fn a_run_begun_when_waves_counted_each_items_failures_goes_on_so() {
    let text = "- [ ] Step 1\n- [ ] Step 2\n";
    let answer = |r: &Request| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: if r.node == "2" {
                "ok\nSTATUS: done"
            } else {
                "no\nSTATUS: failed"
            }
            .into(),
        },
    };
    let per_item = RunConfig {
        waves_in_a_row: false,
        ..parallel()
    };
    let mut engine = Engine::new(plan(text), per_item, &Journal::new()).unwrap();
    let before = drive(&mut engine, answer);
    assert_eq!(
        asked_ids(&before),
        ["1#1:work", "2#1:work", "1#2:work", "1#3:work"]
    );
    let mut engine = Engine::new(plan(text), parallel(), &Journal::new()).unwrap();
    let now = drive(&mut engine, answer);
    assert_eq!(
        asked_ids(&now),
        ["1#1:work", "2#1:work", "1#2:work", "1#3:work", "1#4:work"],
        "the success of item 2 started the count again"
    );

    // The journal as that version wrote it: its order line has no `in_a_row`.
    let old = format!(
        "{{\"key\":\"run:order\",\"kind\":\"order\",\"parallel\":true}}\n{}",
        journal_of(&before).to_jsonl()
    );
    let journal = Journal::from_jsonl(&old).unwrap();
    let replay_cfg = RunConfig {
        replay_only: true,
        ..parallel()
    };
    let mut replay = Engine::new(plan(text), replay_cfg, &journal).unwrap();
    let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
    assert_eq!(finish(&replayed).reason, finish(&before).reason);
    // Cut after item 1's second failure: the resume asks its third, its last.
    let cut = old.lines().take(4).collect::<Vec<_>>().join("\n");
    let mut engine =
        Engine::new(plan(text), parallel(), &Journal::from_jsonl(&cut).unwrap()).unwrap();
    let resumed = drive(&mut engine, answer);
    assert_eq!(asked_ids(&resumed), ["1#3:work"]);
    assert_eq!(finish(&resumed).reason, finish(&before).reason);
}

/// Review: a run begun when waves counted each item's own failures writes
/// at its stop what it wrote then. Writing `failed` an item it would have
/// asked again (as a run begun now does) made that note read, in the run
/// started again, as one a stop was on: a resume cut between two rescues
/// of one wave gave it a new round and stopped on the other item.
#[test]
fn a_run_begun_when_waves_counted_each_items_failures_resumes_between_two_rescues() {
    let text = "- [ ] Work item 1\n- [ ] (after: 1) Work item 2\n- [ ] Work item 3\n- [ ] (after: 1) Work item 4\n";
    let reply = |r: &Request| {
        let done = ["1#1:work", "3#4:work"].contains(&r.id.as_str());
        let answer = match &r.body {
            RequestBody::Replan { .. } => Answer::Revision {
                text: "no idea".into(),
            },
            _ => Answer::Work {
                output: format!("out\nSTATUS: {}", if done { "done" } else { "failed" }),
            },
        };
        Event::Answered {
            id: r.id.clone(),
            answer,
        }
    };
    let cfg = RunConfig {
        rescue: true,
        waves_in_a_row: false,
        ..parallel()
    };
    let run = |plan: &Plan, journal: &Journal| {
        let mut engine = Engine::new(plan.clone(), cfg.clone(), journal).unwrap();
        drive(&mut engine, reply)
    };
    let first = run(&plan(text), &Journal::new());
    assert!(
        matches!(finish(&first).reason, FinishReason::NodeFailed { ref node, .. } if node == "3")
    );
    let mut on_disk = plan(text);
    apply_statuses(&mut on_disk, &first);
    assert_eq!(
        on_disk.nodes[1].status,
        Status::Active,
        "as that version wrote it"
    );

    let second = run(&on_disk, &as_begun(&cfg, &first));
    let cut = second
        .iter()
        .position(|e| matches!(e, Effect::Record(j) if j.key == "2#3:rescue"))
        .unwrap()
        + 1;
    let mut disk = on_disk.clone();
    apply_statuses(&mut disk, &second[..cut]);
    let part: Vec<Effect> = first.iter().chain(&second[..cut]).cloned().collect();
    let resumed = run(&disk, &as_begun(&cfg, &part));
    let recorded: std::collections::BTreeSet<String> = journal_of(&part)
        .entries
        .iter()
        .map(|e| e.key.clone())
        .collect();
    assert!(asked_ids(&resumed).iter().all(|id| !recorded.contains(id)));
    assert_eq!(finish(&resumed).reason, finish(&second).reason);
}

/// In a wave, a later item's route into an item that failed earlier in
/// the same wave is taken, even when that failure brought the run's count
/// to the ceiling: the route ends the streak, and Leopold's box of the item
/// is open. (Deciding each failure as it settled, the differential found
/// such a route refused as "already done".)
#[test]
fn a_route_into_an_item_failed_earlier_in_its_wave_is_taken() {
    let text = "- [ ] Step 1\n- [ ] Step 2\n  @emit k=x\n  @on k=x -> 1\n";
    let mut engine = Engine::new(plan(text), parallel(), &Journal::new()).unwrap();
    let effects = drive(&mut engine, |r| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: match r.id.as_str() {
                "1#3:work" => "fixed\nSTATUS: done",
                "2#2:work" => "no\nSTATUS: failed\nSIGNALS: k=x",
                _ => "no\nSTATUS: failed",
            }
            .into(),
        },
    });
    assert_eq!(
        asked_ids(&effects),
        ["1#1:work", "2#1:work", "1#2:work", "2#2:work", "1#3:work"]
    );
    assert!(
        trace_lines(&effects)
            .contains(&"2#2: took route `k=x` → item 1 (Step 1) [route]".to_string()),
        "{:#?}",
        trace_lines(&effects)
    );
    assert_eq!(finish(&effects).reason, FinishReason::Completed);
}

/// A run started again after an item spent its attempts gives it a new
/// round; the journal of both runs replays to the same end, and a resume
/// of the finished run asks nothing.
#[test]
fn a_run_started_again_after_a_failure_gives_the_item_a_new_round_and_replays() {
    let text = "- [ ] Build\n- [ ] (after: 1) Ship\n";
    let reply = |good: bool| {
        move |r: &Request| Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: if good || r.node == "2" {
                    "STATUS: done".into()
                } else {
                    "no status".into()
                },
            },
        }
    };
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let first = drive(&mut engine, reply(false));
    assert!(matches!(
        finish(&first).reason,
        FinishReason::NodeFailed { .. }
    ));
    let mut on_disk = plan(text);
    apply_statuses(&mut on_disk, &first);
    assert_eq!(on_disk.nodes[0].status, Status::Failed);

    let mut engine = Engine::new(on_disk.clone(), config(), &journal_of(&first)).unwrap();
    let second = drive(&mut engine, reply(true));
    assert_eq!(asked_ids(&second), ["1#4:work", "2#1:work"]);
    // Made on the journal's answer for 1#3: written where the trace lacks it.
    assert!(all_trace_lines(&second)
        .contains(&"1#3: started again: the run was run again after it failed [schedule]".into()));
    assert_eq!(finish(&second).reason, FinishReason::Completed);

    let both: Vec<Effect> = first.iter().chain(&second).cloned().collect();
    let replay_cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut replay = Engine::new(plan(text), replay_cfg, &journal_of(&both)).unwrap();
    let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
    assert_eq!(finish(&replayed).reason, FinishReason::Completed);

    apply_statuses(&mut on_disk, &second);
    let mut resumed = Engine::new(on_disk, config(), &journal_of(&both)).unwrap();
    let again = drive(&mut resumed, |r| panic!("the finished run asked {}", r.id));
    assert_eq!(finish(&again).reason, FinishReason::Completed);
}

fn all_fail_but(ok: &'static [&'static str]) -> impl FnMut(&Request) -> Event {
    move |r: &Request| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: if ok.contains(&r.node.as_str()) {
                "STATUS: done".into()
            } else {
                "no status".into()
            },
        },
    }
}

/// Runs `text` `runs` times, each started again on the statuses and the
/// journal the ones before left, every item failing but those in `ok`;
/// `check` sees each run's effects and the statuses after it.
fn run_again(
    text: &str,
    ok: &'static [&'static str],
    runs: u32,
    mut check: impl FnMut(u32, &[Effect], &planvault_core::Plan),
) {
    run_again_with(config(), text, ok, runs, &mut check);
}

fn run_again_with(
    cfg: RunConfig,
    text: &str,
    ok: &'static [&'static str],
    runs: u32,
    mut check: impl FnMut(u32, &[Effect], &planvault_core::Plan),
) {
    let mut on_disk = plan(text);
    let mut journal_effects: Vec<Effect> = Vec::new();
    for run in 1..=runs {
        let mut engine = Engine::new(
            on_disk.clone(),
            cfg.clone(),
            &as_begun(&cfg, &journal_effects),
        )
        .unwrap();
        let effects = drive(&mut engine, all_fail_but(ok));
        apply_statuses(&mut on_disk, &effects);
        check(run, &effects, &on_disk);
        journal_effects.extend(effects);
    }
}

/// Run 1 fails item 1, run 2 (started again) fails it again after its new
/// round; run 3, started again as the hint says, should give it a third round.
#[test]
fn a_third_run_after_two_failed_rounds_gives_a_third_round() {
    run_again(
        "- [ ] Build\n- [ ] (after: 1) Ship\n",
        &["2"],
        3,
        |run, effects, on_disk| {
            assert!(
                matches!(finish(effects).reason, FinishReason::NodeFailed { .. }),
                "run {run}"
            );
            assert_eq!(on_disk.nodes[0].status, Status::Failed, "run {run}");
            let asked = asked_ids(effects);
            assert!(!asked.is_empty(), "run {run} asked nothing: {asked:?}");
        },
    );
}

/// Two independent items fail in the same wave: each run started again
/// should give the failed items a new round, not fail on replay alone.
#[test]
fn two_items_failing_in_one_wave_each_get_a_new_round_when_run_again() {
    run_again_with(
        parallel(),
        "- [ ] Build A\n- [ ] Build B\n- [ ] (after: 1, 2) Ship\n",
        &["3"],
        3,
        |run, effects, on_disk| {
            assert_eq!(
                [on_disk.nodes[0].status, on_disk.nodes[1].status],
                [Status::Failed, Status::Failed],
                "run {run}: both are written failed"
            );
            assert!(!asked_ids(effects).is_empty(), "run {run} asked nothing");
        },
    );
}

/// Run 2 (started again after item 1 failed) is interrupted while its new
/// round's first attempt is in flight; resuming it must ask that attempt.
#[test]
fn a_resume_of_an_interrupted_new_round_asks_its_first_attempt() {
    let text = "- [ ] Build\n- [ ] (after: 1) Ship\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let first = drive(&mut engine, all_fail_but(&["2"]));
    let mut on_disk = plan(text);
    apply_statuses(&mut on_disk, &first);
    assert_eq!(on_disk.nodes[0].status, Status::Failed);

    // Run 2: the new round's request is asked, then the model is unavailable.
    let mut engine = Engine::new(on_disk.clone(), config(), &journal_of(&first)).unwrap();
    let mut effects = engine.start();
    let req = effects
        .iter()
        .find_map(|e| match e {
            Effect::Request(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(req.id, "1#4:work");
    effects.extend(engine.handle(Event::Unavailable {
        id: req.id.clone(),
        error: "model down".into(),
    }));
    assert!(matches!(
        finish(&effects).reason,
        FinishReason::Interrupted { .. }
    ));
    apply_statuses(&mut on_disk, &effects);

    // Run 3: resume. It should ask 1#4:work, as run 2 did.
    let mut engine = Engine::new(on_disk.clone(), config(), &journal_of(&first)).unwrap();
    let third = drive(&mut engine, all_fail_but(&["1", "2"]));
    assert_eq!(
        asked_ids(&third).first().map(String::as_str),
        Some("1#4:work"),
        "status at resume {:?}; ended {:?}",
        on_disk.nodes[0].status,
        finish(&third).reason
    );
}

/// A `@tool` command the host refused (the browser runs none: exit 126,
/// not journaled) fails the run; run again where commands run, the item
/// should have three runs, as in any run, not six.
#[test]
fn a_command_refused_before_runs_at_most_three_times_when_run_again() {
    let text = "- [ ] @tool make test\n- [ ] (after: 1) Ship\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let first = drive(&mut engine, |r| Event::Refused {
        id: r.id.clone(),
        reason: "the browser runs no commands".into(),
    });
    assert!(matches!(
        finish(&first).reason,
        FinishReason::NodeFailed { .. }
    ));
    let mut on_disk = plan(text);
    apply_statuses(&mut on_disk, &first);
    assert_eq!(on_disk.nodes[0].status, Status::Failed);

    let mut engine = Engine::new(on_disk, config(), &journal_of(&first)).unwrap();
    let second = drive(&mut engine, |r| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Command {
            exit: 1,
            output: "FAIL".into(),
        },
    });
    let asked = asked_ids(&second);
    assert!(
        asked.len() <= 3,
        "the command ran {} times: {asked:?}",
        asked.len()
    );
}

/// After a failed run a person does the item by hand and checks its box in
/// PLAN.md (the CLI reads `[x]` as done); the run started again should take
/// it as done, not replay its recorded failures and stop again.
#[test]
fn an_item_checked_after_it_failed_counts_as_done() {
    let text = "- [ ] Build\n- [ ] (after: 1) Ship\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let first = drive(&mut engine, all_fail_but(&["2"]));
    assert!(matches!(
        finish(&first).reason,
        FinishReason::NodeFailed { .. }
    ));
    let checked = "- [x] Build\n- [ ] (after: 1) Ship\n";
    let on_disk = plan(checked);
    assert_eq!(on_disk.nodes[0].status, Status::Done);
    let mut engine = Engine::new(on_disk, config(), &journal_of(&first)).unwrap();
    let second = drive(&mut engine, all_fail_but(&["2"]));
    assert_eq!(
        asked_ids(&second),
        ["2#1:work"],
        "ended {:?}",
        finish(&second).reason
    );
}

/// A run cut off between an item's `done` and its output's note: the
/// resume writes that note (where it is gone) instead of losing it.
#[test]
fn a_resume_writes_the_output_note_of_an_item_marked_done_before_the_cut() {
    let text = "- [ ] Build\n- [ ] (after: 1) Ship\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let live = drive(&mut engine, |r: &Request| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: format!("Did {}.\nSTATUS: done", r.node),
        },
    });
    let cut = live
        .iter()
        .position(
            |e| matches!(e, Effect::WriteStatus { node, status: Status::Done } if node == "1"),
        )
        .unwrap()
        + 1;
    let mut on_disk = plan(text);
    apply_statuses(&mut on_disk, &live[..cut]);
    let mut engine = Engine::new(on_disk, config(), &journal_of(&live[..cut])).unwrap();
    let resumed = drive(&mut engine, |r: &Request| Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: format!("Did {}.\nSTATUS: done", r.node),
        },
    });
    assert!(
        resumed.iter().any(|e| matches!(
            e,
            Effect::Output { node, replayed: true, text, .. } if node == "1" && text.starts_with("Did 1.")
        )),
        "{resumed:#?}"
    );
    assert_eq!(asked_ids(&resumed), ["2#1:work"]);
}

/// A red team's finding: a run cut off after a feedback item's note said
/// done and before its amendment reached the PLAN.md resumed as if the
/// amendment were there, and completed without the accepted item. Now the
/// amendment is written first; a run cut off after it adopts it (never
/// appends it twice), one cut off before makes it.
#[test]
fn a_feedback_items_amendment_is_written_before_its_note_says_done() {
    let text = "- [ ] Build it\n- [ ] (after: 1) @feedback Propose follow-ups\n";
    let answer = |r: &Request| match r.node.as_str() {
        "2" => work(
            r,
            "Ideas.\n```leopold-amend\nadd: Write the changelog\n```\nSTATUS: done",
        ),
        _ => work(r, &format!("Did {}.\nSTATUS: done", r.node)),
    };
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    engine.set_plan_text(text);
    let live = drive(&mut engine, answer);
    let amend_at = live
        .iter()
        .position(|e| matches!(e, Effect::Amend { .. }))
        .unwrap();
    let done_at = live
        .iter()
        .position(
            |e| matches!(e, Effect::WriteStatus { node, status: Status::Done } if node == "2"),
        )
        .unwrap();
    assert!(amend_at < done_at, "{live:#?}");
    let Effect::Amend { text: amended } = &live[amend_at] else {
        unreachable!()
    };
    assert!(amended.ends_with("- [ ] Write the changelog\n"));

    // A person's own item added after the cut, below the amendment.
    let amended_then_edited = format!("{amended}- [ ] A person's own item\n");
    // Cut before the amendment, the same line in a comment: no item.
    let commented = format!("{text}<!--\n- [ ] Write the changelog\n-->\n");
    for (cut, on_file) in [
        (amend_at + 1, amended.as_str()),
        (amend_at + 1, amended_then_edited.as_str()),
        (amend_at, text),
        (amend_at, commented.as_str()),
    ] {
        let mut on_disk = plan(on_file);
        apply_statuses(&mut on_disk, &live[..cut]);
        let mut engine = Engine::new(on_disk, config(), &journal_of(&live[..cut])).unwrap();
        engine.set_plan_text(on_file);
        let resumed = drive(&mut engine, answer);
        let amends = resumed
            .iter()
            .filter(|e| matches!(e, Effect::Amend { .. }))
            .count();
        let unwritten = on_file == text || on_file == commented;
        assert_eq!(amends, usize::from(unwritten), "cut at {cut}: {on_file}");
        let added = usize::from(on_file == amended_then_edited);
        let asked: Vec<String> = (3..=3 + added).map(|i| format!("{i}#1:work")).collect();
        assert_eq!(asked_ids(&resumed), asked, "cut at {cut}: {on_file}");
        assert!(resumed.iter().any(
            |e| matches!(e, Effect::WriteStatus { node, status: Status::Done } if node == "2")
        ));
        assert_eq!(
            finish(&resumed).reason,
            FinishReason::Completed,
            "cut at {cut}"
        );
    }
}

fn work(r: &Request, output: &str) -> Event {
    Event::Answered {
        id: r.id.clone(),
        answer: Answer::Work {
            output: output.into(),
        },
    }
}

/// A review's finding: an item checked `[x]` by hand after its three
/// failures kept their count, so the next item's first failure stopped
/// the run. Done by hand is a success: the count starts again.
#[test]
fn an_item_done_by_hand_starts_the_count_of_failures_again() {
    let text = "- [ ] Build\n- [ ] (after: 1) Ship\n";
    let checked = "- [x] Build\n- [ ] (after: 1) Ship\n";
    let ship = |r: &Request| {
        work(
            r,
            if r.id == "2#1:work" {
                "no status"
            } else {
                "STATUS: done"
            },
        )
    };
    // After the stop, and cut off after two failures (its third attempt
    // interrupted).
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let stopped = drive(&mut engine, |r| work(r, "no status"));
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let cut = drive(&mut engine, |r| match r.id.as_str() {
        "1#3:work" => Event::Unavailable {
            id: r.id.clone(),
            error: "model down".into(),
        },
        _ => work(r, "no status"),
    });
    assert!(matches!(
        finish(&cut).reason,
        FinishReason::Interrupted { .. }
    ));
    for first in [stopped, cut] {
        let mut engine = Engine::new(plan(checked), config(), &journal_of(&first)).unwrap();
        let second = drive(&mut engine, ship);
        assert_eq!(asked_ids(&second), ["2#1:work", "2#2:work"]);
        assert_eq!(finish(&second).reason, FinishReason::Completed);
    }
}

/// A review's finding: a person's approval left the count of failures
/// before it standing, where the run's own decision (autonomy full)
/// started it again.
#[test]
fn a_persons_approval_starts_the_count_of_failures_again() {
    let text = "- [ ] @human Approve the release\n      @needs probe\n- [ ] Probe\n      @emit probe=yes\n";
    let probe = |r: &Request| match r.id.as_str() {
        "2#2:work" => work(r, "STATUS: blocked\nSIGNALS: probe=yes"),
        "2#4:work" => work(r, "STATUS: done"),
        "1#1:work" => work(r, "Approved.\nSTATUS: done"),
        _ => work(r, "no status"),
    };
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let full = drive(&mut engine, probe);
    assert_eq!(finish(&full).reason, FinishReason::Completed);
    let ask = RunConfig {
        autonomy: Autonomy::Ask,
        ..config()
    };
    let mut engine = Engine::new(plan(text), ask, &Journal::new()).unwrap();
    let asked = drive(&mut engine, |r| match &r.body {
        RequestBody::Human { .. } => Event::Answered {
            id: r.id.clone(),
            answer: Answer::Human {
                decision: "Ship it.".into(),
                approved: true,
                choice: None,
            },
        },
        _ => probe(r),
    });
    assert_eq!(finish(&asked).reason, FinishReason::Completed);
}

/// A review's finding: a worker was told the run's count of failures in a
/// row as its own attempt ("attempt 3 of 3" on its second). It is told
/// its own; the stop names both.
#[test]
fn a_worker_is_told_its_own_attempt_and_the_stop_the_runs_count() {
    let text = "- [ ] Use\n      @needs x\n- [ ] Make\n      @emit x=1\n";
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let mut prompts = Vec::new();
    let effects = drive(&mut engine, |r| {
        if let RequestBody::Work { messages, .. } = &r.body {
            prompts.push((r.id.clone(), messages.last().unwrap().content.clone()));
        }
        match r.node.as_str() {
            "2" => work(r, "STATUS: blocked\nSIGNALS: x=1"),
            _ => work(r, "no status"),
        }
    });
    assert_eq!(asked_ids(&effects), ["2#1:work", "1#1:work", "1#2:work"]);
    let (_, second) = prompts.iter().find(|(id, _)| id == "1#2:work").unwrap();
    assert!(second.contains("This is attempt 2 of 3"), "{second}");
    assert_eq!(
        finish(&effects).reason,
        FinishReason::NodeFailed {
            node: "1".into(),
            reason: "ended fail (the reply has no STATUS line) on attempt 2, the run's failure 3 in a row".into()
        }
    );
}

/// A review's finding: run again, the failed item got a new round but a
/// lower item went first and stopped the run before it was asked; a
/// replay of both runs' journal stopped where the first run had.
#[test]
fn a_replay_of_a_run_started_again_ends_as_it_ended() {
    let text = "- [ ] Y\n      @needs x\n- [ ] X\n      @emit x=1\n";
    let reply = |r: &Request| match r.id.as_str() {
        "2#3:work" => work(r, "STATUS: blocked\nSIGNALS: x=1"),
        _ => work(r, "no status"),
    };
    let mut engine = Engine::new(plan(text), config(), &Journal::new()).unwrap();
    let first = drive(&mut engine, reply);
    assert_eq!(asked_ids(&first), ["2#1:work", "2#2:work", "2#3:work"]);
    let mut on_disk = plan(text);
    apply_statuses(&mut on_disk, &first);
    let mut engine = Engine::new(on_disk, config(), &journal_of(&first)).unwrap();
    let second = drive(&mut engine, reply);
    assert_eq!(asked_ids(&second), ["1#1:work", "1#2:work", "1#3:work"]);
    let both: Vec<Effect> = first.iter().chain(&second).cloned().collect();
    let cfg = RunConfig {
        replay_only: true,
        ..config()
    };
    let mut replay = Engine::new(plan(text), cfg, &journal_of(&both)).unwrap();
    let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
    assert_eq!(finish(&replayed).reason, finish(&second).reason);
}
