//! A PLAN.md run resumed on any journal: entries for its items' attempts
//! (`N#1:work` to `N#6:command`), answers that end an item done, failed,
//! blocked or with no status, rescues that decide an approach or none
//! (`N#3:rescue`), the run's order, any statuses in its notes. The engine never
//! panics, finishes within its step budget, and never asks again for an
//! answer the journal holds, whatever the retries and new rounds do.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use planvault_core::engine::{
    drive, Answer, Effect, Engine, Event, Journal, JournalEntry, RequestBody, RunConfig, ORDER_KEY,
};
use planvault_core::{planmd, Status};
use std::collections::BTreeMap;

const PLAN: &str = "# Plan

- [ ] Build it
      @emit built=true
      @on fail -> 4
- [ ] (after: 1) @tool make test
      @on exit!=0 -> 4
- [ ] (after: 2) @gate Review the diff
      @needs built
- [ ] Roll back
- [ ] (after: 3) @feedback Propose follow-ups
";

const REPLIES: [&str; 6] = [
    "STATUS: done",
    "STATUS: failed",
    "STATUS: blocked",
    "no status at all",
    "```leopold-status\nSTATUS: done\nSIGNALS: built=true\n```",
    "```leopold-amend\nadd: Write the changelog\n```\nSTATUS: done",
];

const RESCUES: [&str; 3] = [
    r#"{"approach":"a smaller slice","different":"one at a time"}"#,
    "no idea",
    r#"```json
{"approach":"x","different":"y","why":"z"}
```"#,
];

fn answer(u: &mut Unstructured) -> Result<Answer> {
    Ok(match u.int_in_range(0..=3u8)? {
        3 => Answer::Revision {
            text: u.choose(&RESCUES)?.to_string(),
        },
        0 => Answer::Command {
            exit: u.int_in_range(0..=2)?,
            output: String::new(),
        },
        1 => Answer::Human {
            decision: "ok".into(),
            approved: u.arbitrary()?,
            choice: None,
        },
        _ => Answer::Work {
            output: u.choose(&REPLIES)?.to_string(),
        },
    })
}

fn check(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let mut journal = Journal::new();
    for _ in 0..u.int_in_range(0..=16u8)? {
        let item = u.int_in_range(1..=6u8)?;
        let attempt = u.int_in_range(1..=6u8)?;
        let kind = *u.choose(&["work", "command", "human", "rescue"])?;
        journal.entries.push(JournalEntry {
            key: format!("{item}#{attempt}:{kind}"),
            answer: answer(&mut u)?,
            made_from: None,
        });
    }
    if u.arbitrary()? {
        let at = u.choose_index(journal.entries.len() + 1)?;
        let order = JournalEntry {
            key: ORDER_KEY.into(),
            answer: Answer::Order {
                parallel: u.arbitrary()?,
                in_a_row: u.arbitrary()?,
                at_most: u.arbitrary()?,
            },
            made_from: None,
        };
        journal.entries.insert(at, order);
    }
    let mut plan = planmd::parse("PLAN.md", PLAN).0;
    for node in &mut plan.nodes {
        node.status = *u.choose(&[
            Status::Pending,
            Status::Active,
            Status::Done,
            Status::Failed,
        ])?;
    }
    let config = RunConfig {
        max_steps: 40,
        replay_only: u.arbitrary()?,
        parallel: u.arbitrary()?,
        rescue: u.arbitrary()?,
        waves_in_a_row: u.arbitrary()?,
        parallel_at_most: u.arbitrary::<Option<u8>>()?.map(u32::from),
        ..RunConfig::default()
    };
    let recorded: BTreeMap<String, &'static str> = journal
        .entries
        .iter()
        .map(|e| (e.key.clone(), e.answer.kind()))
        .collect();
    let Ok(mut engine) = Engine::new(plan, config, &journal) else {
        return Ok(());
    };
    engine.set_plan_text(PLAN.to_string());
    let live: Vec<u8> = u.arbitrary()?;
    let mut asked = 0;
    let effects = drive(&mut engine, |request| {
        let pick = live.get(asked).copied().unwrap_or(0) as usize;
        asked += 1;
        assert!(asked <= 200, "the engine keeps asking");
        let answer = match &request.body {
            RequestBody::Command { .. } => Answer::Command {
                exit: (pick % 2) as i32,
                output: String::new(),
            },
            RequestBody::Human { .. } => Answer::Human {
                decision: "ok".into(),
                approved: pick % 2 == 0,
                choice: None,
            },
            RequestBody::Replan { .. } => Answer::Revision {
                text: RESCUES[pick % RESCUES.len()].into(),
            },
            _ => Answer::Work {
                output: REPLIES[pick % REPLIES.len()].into(),
            },
        };
        Event::Answered {
            id: request.id.clone(),
            answer,
        }
    });
    for effect in &effects {
        if let Effect::Request(request) = effect {
            assert_ne!(
                recorded.get(&request.id).copied(),
                Some(request.body.answer_kind()),
                "{} was asked again although the journal answers it",
                request.id
            );
        }
    }
    assert!(engine.finished().is_some(), "the run never finished");
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = check(data);
});
