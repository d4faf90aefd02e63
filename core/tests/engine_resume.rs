//! Resume after an interruption at every point of a run, and properties of
//! random runs: budgets hold, replay reproduces, resume never re-runs work.

use crate::engine_support::*;
use planvault_core::engine::{
    drive, journal, renamed_active_note, Answer, Effect, Engine, Event, FinishReason, Journal,
    JournalEntry, Request, RequestBody, RunConfig,
};
use planvault_core::{Plan, Status};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// What the runner has on disk after applying `effects`: statuses in the
/// notes, answers in the journal, outputs as notes.
fn crash_after(plan: &Plan, effects: &[Effect]) -> (Plan, Journal, Vec<(String, String)>) {
    let mut plan = plan.clone();
    apply_statuses(&mut plan, effects);
    let outputs = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Output { node, text, .. } => Some((node.clone(), text.clone())),
            _ => None,
        })
        .collect();
    (plan, journal_of(effects), outputs)
}

fn resume(
    plan: Plan,
    journal: &Journal,
    outputs: &[(String, String)],
    answer: &mut dyn FnMut(&Request) -> Event,
) -> Vec<Effect> {
    let mut engine = Engine::new(plan, config(), journal).unwrap();
    for (node, text) in outputs {
        engine.set_prior_output(node, text.clone());
    }
    drive(&mut engine, |r| answer(r))
}

fn final_statuses(plan: &Plan, prefix: &[Effect], rest: &[Effect]) -> Vec<Status> {
    let mut plan = plan.clone();
    apply_statuses(&mut plan, prefix);
    apply_statuses(&mut plan, rest);
    plan.nodes.iter().map(|n| n.status).collect()
}

fn work_ids(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) if matches!(r.body, RequestBody::Work { .. }) => Some(r.id.clone()),
            _ => None,
        })
        .collect()
}

/// Interrupt the run after each effect the runner applied, resume, and check
/// the resumed run finishes exactly as the uninterrupted one, asks for no
/// work already recorded, and together with the first part does exactly the
/// uninterrupted run's work (never both branches).
fn check_resume_everywhere(plan: &Plan, answer: &dyn Fn(&Request) -> Answer) {
    let mut respond = |r: &Request| Event::Answered {
        id: r.id.clone(),
        answer: answer(r),
    };
    let mut engine = Engine::new(plan.clone(), config(), &Journal::new()).unwrap();
    let live = drive(&mut engine, &mut respond);
    let live_finish = finish(&live);
    let live_work: BTreeSet<String> = work_ids(&live).into_iter().collect();
    let live_statuses = final_statuses(plan, &live, &[]);

    for cut in 0..=live.len() {
        let prefix = &live[..cut];
        let (on_disk, journal, outputs) = crash_after(plan, prefix);
        let resumed = resume(on_disk, &journal, &outputs, &mut respond);
        let f = finish(&resumed);
        assert_eq!(f.reason, live_finish.reason, "cut {cut}");
        assert_eq!(f.answer, live_finish.answer, "cut {cut}");
        assert_eq!(
            final_statuses(plan, prefix, &resumed),
            live_statuses,
            "cut {cut}"
        );
        let recorded: BTreeSet<String> = journal.entries.iter().map(|e| e.key.clone()).collect();
        let again: Vec<String> = work_ids(&resumed);
        for id in &again {
            assert!(
                !recorded.contains(id),
                "cut {cut}: finished work {id} ran again"
            );
        }
        let done_work: BTreeSet<String> = recorded
            .iter()
            .filter(|k| k.ends_with(":work"))
            .cloned()
            .chain(again.iter().cloned())
            .collect();
        assert_eq!(
            done_work, live_work,
            "cut {cut}: the resumed run did different work"
        );
    }
}

fn loop_answers(r: &Request) -> Answer {
    match (r.id.as_str(), &r.body) {
        ("review#1:judge.1", _) => Answer::Judgment {
            raw: "1. NO\n2. YES - fix it".into(),
            labels: Vec::new(),
        },
        ("review#2:judge.1", _) => Answer::Judgment {
            raw: "garbled".into(),
            labels: Vec::new(),
        },
        ("review#2:judge.2", _) => Answer::Judgment {
            raw: "1. YES\n2. NO".into(),
            labels: Vec::new(),
        },
        (id, RequestBody::Work { .. }) => Answer::Work {
            output: format!("output of {id}"),
        },
        (id, _) => panic!("unexpected {id}"),
    }
}

#[test]
fn resume_after_an_interruption_at_every_step_of_a_loop() {
    check_resume_everywhere(&draft_review_send(), &loop_answers);
}

#[test]
fn resume_after_an_interruption_at_every_step_of_a_budget_stop() {
    let plan = vault(&[
        ("a", 3, &[("", "b")]),
        ("b", 2, &[("done", "c")]),
        ("c", 3, &[]),
    ]);
    check_resume_everywhere(&plan, &|r| match &r.body {
        RequestBody::Judge { .. } => Answer::Judgment {
            raw: "1. NO".into(),
            labels: Vec::new(),
        },
        _ => Answer::Work {
            output: format!("out {}", r.id),
        },
    });
}

#[test]
fn an_active_node_continues_and_done_nodes_go_straight_to_their_transitions() {
    // As a person would find the notes: draft done, review active, no journal.
    let mut plan = draft_review_send();
    plan.nodes[0].status = Status::Done;
    plan.nodes[1].status = Status::Active;
    let mut script = Script::new().judge("review#1:judge.1", "1. YES\n2. NO");
    let effects = run(plan, config(), &Journal::new(), &mut script);
    assert_eq!(
        script.asked_ids(),
        ["review#1:work", "review#1:judge.1", "send#1:work"]
    );
    assert_eq!(
        trace_lines(&effects)[0],
        "review#1: resumed: the node was active [resume]"
    );

    // No active node: the walk starts at the start and a done node is not re-worked.
    let mut plan = draft_review_send();
    plan.nodes[0].status = Status::Done;
    let mut script = Script::new().judge("review#1:judge.1", "1. YES\n2. NO");
    let effects = run(plan, config(), &Journal::new(), &mut script);
    assert_eq!(
        script.asked_ids(),
        ["review#1:work", "review#1:judge.1", "send#1:work"]
    );
    assert_eq!(
        trace_lines(&effects)[0],
        "review#1: resumed: walked past 1 done node(s) on recorded decisions [resume]"
    );
}

#[test]
fn a_rerun_of_a_finished_vault_asks_nothing_and_answers_with_the_terminal_output() {
    let mut script = Script::new().judge("review#1:judge.1", "1. YES\n2. NO");
    let live = run(draft_review_send(), config(), &Journal::new(), &mut script);
    let mut plan = draft_review_send();
    apply_statuses(&mut plan, &live);
    let mut again = Script::new();
    let effects = run(plan, config(), &journal_of(&live), &mut again);
    assert!(again.asked.is_empty());
    assert!(
        trace_lines(&effects).is_empty(),
        "nothing new happened, nothing new is traced"
    );
    assert_eq!(finish(&effects), finish(&live));
}

#[test]
fn a_recorded_decision_is_never_asked_again_so_the_other_branch_never_runs() {
    // The run chose `needs revision`, then crashed before draft went active.
    let mut plan = draft_review_send();
    plan.nodes[0].status = Status::Done;
    plan.nodes[1].status = Status::Done;
    let mut journal = Journal::new();
    journal.push(
        "draft#1:work",
        Answer::Work {
            output: "d1".into(),
        },
    );
    journal.push(
        "review#1:work",
        Answer::Work {
            output: "r1".into(),
        },
    );
    journal.push(
        "review#1:judge.1",
        Answer::Judgment {
            raw: "1. NO\n2. YES".into(),
            labels: Vec::new(),
        },
    );
    let mut script = Script::new().judge("review#2:judge.1", "1. YES\n2. NO");
    run(plan, config(), &journal, &mut script);
    assert_eq!(
        script.asked_ids(),
        [
            "draft#2:work",
            "review#2:work",
            "review#2:judge.1",
            "send#1:work"
        ]
    );
}

/// A judgment is journaled with the labels it judged, so a resume after
/// the note's `## Next` items were reordered (or one was added) takes the
/// branch the answer chose, not the one now at its position.
#[test]
fn a_journaled_judgment_keeps_its_branch_when_the_conditions_are_reordered() {
    let mut script = Script::new().judge("review#1:judge.1", "1. YES - approved\n2. NO");
    let live = run(draft_review_send(), config(), &Journal::new(), &mut script);
    let journal = journal_of(&live);
    assert!(
        journal.entries.iter().any(|e| matches!(&e.answer,
            Answer::Judgment { labels, .. } if labels == &["approved", "needs revision"])),
        "{journal:?}"
    );
    let reordered = |conditions: &[(&str, &str)]| {
        let plan = vault(&[
            ("draft", 3, &[("", "review")]),
            ("review", 3, conditions),
            ("send", 3, &[]),
        ]);
        let mut again = Script::new();
        let effects = run(plan, config(), &journal, &mut again);
        (again.asked_ids(), finish(&effects), told_of(&effects))
    };
    let told_edited = |told: &[String]| {
        told.iter()
            .find(|what| what.contains("conditions were edited after its judgment"))
            .cloned()
    };
    let (asked, done, told) = reordered(&[("needs revision", "draft"), ("approved", "send")]);
    assert_eq!(asked, Vec::<String>::new(), "nothing runs again");
    assert_eq!(done.reason, finish(&live).reason);
    assert_eq!(told_edited(&told), None, "a reorder judges nothing anew");
    // A condition added before it: still the branch the answer chose, and
    // the trace says the new condition was never judged.
    let (asked, done, told) = reordered(&[
        ("blocked", "draft"),
        ("approved", "send"),
        ("needs revision", "draft"),
    ]);
    assert_eq!(asked, Vec::<String>::new());
    assert_eq!(done.reason, finish(&live).reason);
    let told = told_edited(&told).expect("an added condition is told");
    assert!(told.contains("took `approved` and is kept"), "{told}");
    // The chosen condition is gone: the run stops and says why.
    let (asked, done, _) = reordered(&[("needs revision", "draft"), ("shipped", "send")]);
    assert_eq!(asked, Vec::<String>::new());
    match done.reason {
        FinishReason::Interrupted { node, reason } => {
            assert_eq!(node, "review");
            assert!(
                reason.contains("took `approved`, which its `## Next` no longer has"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A judgment in which none of the conditions held, served after one was
/// added: the fallback it took is kept and told, for the added condition
/// was never put to the model.
#[test]
fn a_journaled_judgment_that_held_nothing_is_told_when_a_condition_was_added() {
    let mut script = Script::new().judge("review#1:judge.1", "1. NO\n2. NO");
    let plan = |conditions: &[(&str, &str)]| {
        vault(&[
            ("draft", 3, &[("", "review")]),
            ("review", 3, conditions),
            ("send", 3, &[]),
        ])
    };
    let first = [
        ("approved", "send"),
        ("needs revision", "draft"),
        ("", "send"),
    ];
    let live = run(plan(&first), config(), &Journal::new(), &mut script);
    let journal = journal_of(&live);
    let added = [
        ("approved", "send"),
        ("needs revision", "draft"),
        ("blocked", "draft"),
        ("", "send"),
    ];
    let mut again = Script::new();
    let effects = run(plan(&added), config(), &journal, &mut again);
    assert_eq!(
        again.asked_ids(),
        Vec::<String>::new(),
        "nothing judged again"
    );
    assert_eq!(finish(&effects).reason, finish(&live).reason);
    let told = told_of(&effects);
    assert!(
        told.iter().any(|what| what.contains(
            "conditions were edited after its judgment was journaled; that judgment, \
                 made on the conditions as they were, held none of them and is kept"
        )),
        "{told:?}"
    );
    // A Temporal run begun before replays without the line.
    let before = RunConfig {
        tell_edited_conditions: false,
        ..config()
    };
    let effects = run(plan(&added), before, &journal, &mut Script::new());
    assert_eq!(finish(&effects).reason, finish(&live).reason);
    assert!(!told_of(&effects)
        .iter()
        .any(|what| what.contains("conditions were edited")));
}

/// What the trace says, in order.
fn told_of(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Trace(t) => Some(t.what.clone()),
            _ => None,
        })
        .collect()
}

/// A chain where node i may jump back to an earlier node; the last is terminal.
fn arb_plan() -> impl Strategy<Value = (Plan, u64)> {
    (2usize..7, any::<u64>()).prop_flat_map(|(n, seed)| {
        (
            proptest::collection::vec((1u32..4, 0usize..7, any::<bool>()), n),
            Just(n),
            Just(seed),
        )
            .prop_map(|(specs, n, seed)| {
                let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
                let edges: Vec<Vec<(String, String)>> = (0..n)
                    .map(|i| {
                        if i + 1 == n {
                            return vec![];
                        }
                        let (_, back, unconditional) = specs[i];
                        let mut e = vec![("again".to_string(), ids[back.min(i)].clone())];
                        e.push((
                            if unconditional {
                                String::new()
                            } else {
                                "ok".into()
                            },
                            ids[i + 1].clone(),
                        ));
                        e
                    })
                    .collect();
                let pairs: Vec<Vec<(&str, &str)>> = edges
                    .iter()
                    .map(|e| e.iter().map(|(l, t)| (l.as_str(), t.as_str())).collect())
                    .collect();
                let borrowed: Vec<NodeSpec<'_>> = (0..n)
                    .map(|i| (ids[i].as_str(), specs[i].0, pairs[i].as_slice()))
                    .collect();
                (vault(&borrowed), seed)
            })
    })
}

/// Deterministic answers: a judgment's verdicts depend on the request id and the seed.
fn oracle(seed: u64) -> impl Fn(&Request) -> Answer {
    move |r: &Request| match &r.body {
        RequestBody::Judge { labels, .. } => {
            let mut h = seed ^ 0x9e3779b97f4a7c15;
            for b in r.id.bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100000001b3);
            }
            let raw: Vec<String> = labels
                .iter()
                .enumerate()
                .map(|(i, _)| {
                    format!(
                        "{}. {}",
                        i + 1,
                        if (h >> i) & 1 == 1 { "YES" } else { "NO" }
                    )
                })
                .collect();
            Answer::Judgment {
                raw: raw.join("\n"),
                labels: Vec::new(),
            }
        }
        _ => Answer::Work {
            output: format!("out {}", r.id),
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn budgets_hold_replay_reproduces_and_resume_never_reruns((plan, seed) in arb_plan(), max_steps in 1u32..20) {
        let answer = oracle(seed);
        let cfg = RunConfig { max_steps, ..config() };
        let mut engine = Engine::new(plan.clone(), cfg.clone(), &Journal::new()).unwrap();
        let live = drive(&mut engine, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
        let f = finish(&live);
        let works = work_ids(&live);
        prop_assert!(works.len() as u32 <= max_steps);
        for node in &plan.nodes {
            let visits = works.iter().filter(|id| id.starts_with(&format!("{}#", node.id))).count() as u32;
            prop_assert!(visits <= node.max_visits, "{} visited {visits} times", node.id);
        }
        let expected_end = matches!(
            f.reason,
            FinishReason::Completed | FinishReason::VisitBudget { .. } | FinishReason::StepBudget { .. }
        );
        prop_assert!(expected_end, "ended with {:?}", f.reason);

        let replay_cfg = RunConfig { replay_only: true, ..cfg.clone() };
        let mut replay = Engine::new(plan.clone(), replay_cfg, &journal_of(&live)).unwrap();
        let replayed = drive(&mut replay, |r| panic!("replay asked {}", r.id));
        prop_assert_eq!(observable(&replayed), observable(&live));

        let cut = (seed as usize) % (live.len() + 1);
        let (on_disk, journal, outputs) = crash_after(&plan, &live[..cut]);
        let mut resumed_engine = Engine::new(on_disk, cfg, &journal).unwrap();
        for (node, text) in &outputs {
            resumed_engine.set_prior_output(node, text.clone());
        }
        let resumed = drive(&mut resumed_engine, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
        let recorded: BTreeSet<String> = journal.entries.iter().map(|e| e.key.clone()).collect();
        for id in work_ids(&resumed) {
            prop_assert!(!recorded.contains(&id), "finished work {} ran again", id);
        }
        // Nothing was edited: no answer served is said to be made from
        // another text.
        for effect in &resumed {
            if let Effect::Trace(t) = effect {
                prop_assert!(!t.what.contains("was edited after"), "{}", t.what);
            }
        }
        prop_assert_eq!(finish(&resumed).reason, f.reason);
    }
}

/// The note a run stopped in, renamed since, is found by what its last
/// answers were made from: not when it was also edited, not from a journal
/// that never recorded it, not when the note has answers of its own before
/// them or another note answered after them.
#[test]
fn an_active_note_renamed_since_the_stop_is_found_by_what_it_was_made_from() {
    let mut stopped = draft_review_send();
    stopped.nodes[0].status = Status::Done;
    stopped.nodes[1].status = Status::Active;
    let made = |k: usize| Some(journal::made_from(&stopped.nodes[k]));
    let entry = |key: &str, made_from: Option<String>| JournalEntry {
        key: key.into(),
        answer: Answer::Invoke {
            value: None,
            error: None,
        },
        made_from,
    };
    let entries = vec![
        entry("draft#1:work", made(0)),
        entry("review#1/builtin.1", made(1)),
        entry("review#1/builtin.1", made(1)),
    ];
    let critique = renamed(&stopped, 1, "critique");
    let found = Some(("review".to_string(), "critique".to_string()));
    assert_eq!(renamed_active_note(&critique, &entries), found);
    assert_eq!(renamed_active_note(&stopped, &entries), None, "not renamed");
    let mut edited = critique.clone();
    edited.nodes[1].body.push_str(" Carefully.");
    assert_eq!(
        renamed_active_note(&edited, &entries),
        None,
        "renamed and edited"
    );
    let older: Vec<JournalEntry> = entries.iter().map(|e| entry(&e.key, None)).collect();
    assert_eq!(
        renamed_active_note(&critique, &older),
        None,
        "no record of it"
    );
    // A resume that adopted them, then stopped: the same again.
    let mut again = entries.clone();
    again.push(entry("critique#1/builtin.2", made(1)));
    assert_eq!(renamed_active_note(&critique, &again), found);
    let mut before = entries.clone();
    before.insert(0, entry("critique#1:work", made(1)));
    assert_eq!(
        renamed_active_note(&critique, &before),
        None,
        "its own before"
    );
    let mut other = entries.clone();
    other.push(entry("draft#2:work", made(0)));
    assert_eq!(
        renamed_active_note(&critique, &other),
        None,
        "another's after"
    );

    let mut journal = Journal {
        entries: [
            "a#b#1:work",
            "a#1:work",
            "a#1/tool.1:approve",
            "ab#1:work",
            "run:order",
        ]
        .map(|key| entry(key, None))
        .to_vec(),
    };
    journal.rename_note("a", "z");
    let keys: Vec<&str> = journal.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "a#b#1:work",
            "z#1:work",
            "z#1/tool.1:approve",
            "ab#1:work",
            "run:order"
        ]
    );
}

/// A resume at its active note with a note renamed since, from a journal
/// (the vault's own, which may come with the vault) naming a hundred
/// thousand notes the plan lacks: each is looked at once, not against the
/// whole journal again, and the renamed note's visit still counts.
#[test]
fn a_journal_naming_many_missing_notes_still_counts_a_renamed_notes_visits() {
    let mut stopped = draft_review_send();
    stopped.nodes[0].status = Status::Done;
    stopped.nodes[1].status = Status::Active;
    let mut journal = Journal::new();
    for i in 0..100_000 {
        journal.entries.push(JournalEntry {
            key: format!("gone {i}#1:work"),
            answer: Answer::Work {
                output: String::new(),
            },
            made_from: Some(format!("{i:016x}")),
        });
    }
    journal.entries.push(JournalEntry {
        key: "draft#1:work".into(),
        answer: Answer::Work {
            output: "the draft".into(),
        },
        made_from: Some(journal::made_from(&stopped.nodes[0])),
    });
    let moved = renamed(&stopped, 0, "first draft");
    let mut engine = Engine::new(moved, config(), &journal).unwrap();
    let effects = drive(&mut engine, |r| Event::Answered {
        id: r.id.clone(),
        answer: match &r.body {
            RequestBody::Judge { .. } => Answer::Judgment {
                raw: "1. NO\n2. YES - shorter".into(),
                labels: Vec::new(),
            },
            _ => Answer::Work {
                output: format!("output of {}", r.id),
            },
        },
    });
    let asked = work_ids(&effects);
    assert_eq!(asked[..2], ["review#1:work", "first draft#2:work"]);
}

/// `plan` with node `k` renamed as Obsidian renames a note: a new id, and
/// every link to it rewritten.
fn renamed(plan: &Plan, k: usize, new_id: &str) -> Plan {
    let mut plan = plan.clone();
    plan.nodes[k].id = new_id.to_string();
    for edge in &mut plan.edges {
        if edge.to == Some(k) {
            edge.target = new_id.to_string();
        }
    }
    plan
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A note renamed between runs (Obsidian moves it and rewrites every
    /// link to it) is the same step to a resume, wherever the run stopped:
    /// one that walks the recorded decisions (no note was active) adopts
    /// its answers in the order they were written, one that starts at its
    /// active note finds it by what it was made from (the stopped note
    /// adopted as the runner adopts it, [`renamed_active_note`]). Either
    /// asks for exactly what the resume without the rename asks, under the
    /// new name, and ends the same way: the renamed note's earlier visits
    /// count against its `max_visits`, its steps against `max_steps`.
    #[test]
    fn a_note_renamed_between_runs_changes_nothing_a_resume_does(
        (plan, seed) in arb_plan(),
        which in any::<prop::sample::Index>(),
        max_steps in 1u32..20,
    ) {
        let answer = oracle(seed);
        let cfg = RunConfig { max_steps, ..config() };
        let mut engine = Engine::new(plan.clone(), cfg.clone(), &Journal::new()).unwrap();
        let live = drive(&mut engine, |r| Event::Answered { id: r.id.clone(), answer: answer(r) });
        let k = which.index(plan.nodes.len());
        let (old, new) = (plan.nodes[k].id.clone(), format!("{}-renamed", plan.nodes[k].id));
        let back = |id: &str| match id.rsplit_once('#') {
            Some((node, rest)) if node == new => format!("{old}#{rest}"),
            _ => id.to_string(),
        };
        let run = |plan: Plan, journal: &Journal, outputs: &[(String, String)], asked: &mut Vec<String>, back: &dyn Fn(&str) -> String| {
            let mut engine = Engine::new(plan, cfg.clone(), journal).unwrap();
            for (node, text) in outputs {
                engine.set_prior_output(node, text.clone());
            }
            drive(&mut engine, |r| {
                let original = Request { id: back(&r.id), ..r.clone() };
                asked.push(original.id.clone());
                Event::Answered { id: r.id.clone(), answer: answer(&original) }
            })
        };
        for cut in 0..=live.len() {
            let (on_disk, journal, outputs) = crash_after(&plan, &live[..cut]);
            let mut asked_plain = Vec::new();
            let plain = run(on_disk.clone(), &journal, &outputs, &mut asked_plain, &|id| id.to_string());
            let moved = renamed(&on_disk, k, &new);
            let mut journal = journal.clone();
            if let Some((was, is)) = renamed_active_note(&moved, &journal.entries) {
                journal.rename_note(&was, &is);
            }
            let outputs: Vec<(String, String)> = outputs
                .iter()
                .map(|(node, text)| (if *node == old { new.clone() } else { node.clone() }, text.clone()))
                .collect();
            let mut asked_renamed = Vec::new();
            let again = run(moved, &journal, &outputs, &mut asked_renamed, &back);
            prop_assert_eq!(&asked_renamed, &asked_plain, "cut {}", cut);
            let ended = format!("{:?}", finish(&again).reason).replace(&new, &old);
            prop_assert_eq!(ended, format!("{:?}", finish(&plain).reason), "cut {}", cut);
        }
    }
}
