//! The journal reader as crashes, races and hand edits leave its file:
//! whole entries (answers of every kind under keys of the example vault's
//! nodes, visits 0–4), some lines duplicated and reordered, the last one
//! torn at any byte, a garbage tail. Invariants:
//! - `split_torn` (what the runner does on open) keeps only whole lines, and
//!   what it keeps reads back entry for entry; the next append reads back
//!   as the last entry;
//! - `Journal::from_jsonl` never panics on any text;
//! - `journal::decisions` names every human line the kept journal holds,
//!   reads a torn file as the kept one, and never panics on any text;
//! - a note renamed since (its entries' `from` that of a note of the
//!   example, or none), when `renamed_active_note` finds it, changes the
//!   name of its entries and of no other;
//! - an engine built on the kept journal, from any mix of statuses, never
//!   panics, finishes within its step budget, and never asks again for an
//!   answer the journal holds (no key answered twice).
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use planvault_core::engine::journal::entry_line;
use planvault_core::engine::{
    drive, Answer, Effect, Engine, Event, Journal, JournalEntry, RequestBody, RunConfig,
};
use planvault_core::Status;
use planvault_runner::driver::split_torn;
use std::collections::BTreeMap;

const NODES: [&str; 4] = ["draft", "review", "send", "gone"];
const KINDS: [&str; 6] = ["work", "judge.1", "judge.2", "human", "command", "x"];

fn answer(u: &mut Unstructured) -> Result<Answer> {
    let text: String = u.arbitrary()?;
    Ok(match u.int_in_range(0..=5u8)? {
        0 => Answer::Work { output: text },
        1 => Answer::Judgment {
            raw: match u.int_in_range(0..=3u8)? {
                0 => "1. YES - ok\n2. NO".into(),
                1 => "1. NO\n2. YES - again".into(),
                2 => "1. NO\n2. NO".into(),
                _ => text,
            },
            labels: Vec::new(),
        },
        2 => Answer::Command {
            exit: u.arbitrary()?,
            output: text,
        },
        3 => Answer::Human {
            decision: text,
            approved: u.arbitrary()?,
            choice: u.arbitrary()?,
        },
        4 => Answer::Invoke {
            value: None,
            error: Some(text),
        },
        _ => Answer::Revision { text },
    })
}

fn entry(u: &mut Unstructured) -> Result<JournalEntry> {
    let node = *u.choose(&NODES)?;
    let visit = u.int_in_range(0..=4u32)?;
    let kind = *u.choose(&KINDS)?;
    // What an answer was made from: one of the example's notes (as a run
    // records it), or none (an older journal).
    let made_from = match u.int_in_range(0..=3u8)? {
        0 => None,
        k => {
            static MADE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
            let made = MADE.get_or_init(|| {
                let plan = example();
                plan.nodes
                    .iter()
                    .map(planvault_core::engine::journal::made_from)
                    .collect()
            });
            made.get(usize::from(k - 1)).cloned()
        }
    };
    Ok(JournalEntry {
        key: format!("{node}#{visit}:{kind}"),
        answer: answer(u)?,
        made_from,
    })
}

fn example() -> planvault_core::Plan {
    let files: BTreeMap<String, String> = [
        (
            "draft.md",
            include_str!("../../static/example-vault/draft.md"),
        ),
        (
            "review.md",
            include_str!("../../static/example-vault/review.md"),
        ),
        (
            "send.md",
            include_str!("../../static/example-vault/send.md"),
        ),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t.to_string()))
    .collect();
    planvault_core::vault::load(&files).0
}

fn check(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let mut lines = Vec::new();
    for _ in 0..u.int_in_range(0..=12u8)? {
        lines.push(entry(&mut u)?);
    }
    // Duplicated and reordered lines (two runs at once, a hand edit).
    for _ in 0..u.int_in_range(0..=3u8)? {
        if lines.is_empty() {
            break;
        }
        let i = u.choose_index(lines.len())?;
        let j = u.choose_index(lines.len() + 1)?;
        let line = lines[i].clone();
        lines.insert(j, line);
        let k = u.choose_index(lines.len())?;
        lines.swap(i, k);
    }
    let whole: String = lines.iter().map(|e| entry_line(e) + "\n").collect();
    // A crash mid-append: the last line cut at any byte.
    let mut text = whole.clone();
    // (where the last line starts, where it was cut)
    let mut tear = None;
    if u.arbitrary::<bool>()? && !text.is_empty() {
        let last = text[..text.len() - 1].rfind('\n').map_or(0, |i| i + 1);
        let mut at = last + u.choose_index(text.len() - last)?;
        while !text.is_char_boundary(at) {
            at += 1;
        }
        text.truncate(at);
        tear = Some((last, at));
    }

    let (kept, cut) = split_torn(&text);
    assert!(
        kept.is_empty() || kept.ends_with('\n'),
        "kept a partial line"
    );
    let journal = Journal::from_jsonl(&kept).expect("whole lines read back");
    let n = lines.len();
    match tear {
        // Only the newline was lost: the entry is whole and kept.
        Some((_, at)) if at + 1 == whole.len() => {
            assert_eq!(journal.entries, lines);
            assert_eq!(cut, None);
        }
        // The last entry is lost, and what there was of it is kept aside.
        Some((last, at)) => {
            assert_eq!(journal.entries[..], lines[..n - 1]);
            assert_eq!(cut, Some(&text[last..at]).filter(|c| !c.is_empty()));
        }
        None => {
            assert_eq!(journal.entries, lines);
            assert_eq!(cut, None);
        }
    }
    let next = entry(&mut u).unwrap_or(JournalEntry {
        key: "draft#1:work".into(),
        answer: Answer::Work {
            output: String::new(),
        },
        made_from: None,
    });
    let appended = kept.clone() + &entry_line(&next) + "\n";
    let after = Journal::from_jsonl(&appended).expect("an append reads back");
    assert_eq!(after.entries.last(), Some(&next));

    let decided = planvault_core::engine::journal::decisions(&kept);
    let human: Vec<&String> = journal
        .entries
        .iter()
        .filter(|e| matches!(e.answer, Answer::Human { .. }))
        .map(|e| &e.key)
        .collect();
    assert_eq!(decided.iter().map(|d| &d.key).collect::<Vec<_>>(), human);
    assert_eq!(planvault_core::engine::journal::decisions(&text), decided);

    // Any text at all: the reader refuses or reads, never panics.
    let garbage: String = u.arbitrary()?;
    let _ = Journal::from_jsonl(&(kept.clone() + &garbage));
    let _ = split_torn(&(kept.clone() + &garbage));
    let _ = planvault_core::engine::journal::decisions(&(kept.clone() + &garbage));

    // An engine resuming on this journal from any statuses.
    let mut plan = example();
    for node in &mut plan.nodes {
        node.status = *u.choose(&[
            Status::Pending,
            Status::Active,
            Status::Done,
            Status::Failed,
        ])?;
    }
    // A note renamed since the journal was written (Obsidian moves it).
    if u.arbitrary()? {
        let k = u.choose_index(plan.nodes.len())?;
        plan.nodes[k].id = "renamed".into();
    }
    // A renamed active note found and adopted as a resume does: only its
    // entries change name, every other stays as it was.
    let mut journal = journal;
    if let Some((old, new)) = planvault_core::engine::renamed_active_note(&plan, &journal.entries) {
        let before = journal.clone();
        journal.rename_note(&old, &new);
        for (was, now) in before.entries.iter().zip(&journal.entries) {
            let node = planvault_core::engine::journal::node_of_key(&was.key);
            if node == Some(old.as_str()) {
                assert_eq!(now.key, format!("{new}{}", &was.key[old.len()..]));
            } else {
                assert_eq!(now, was);
            }
        }
    }
    let replay_only = u.arbitrary()?;
    let config = RunConfig {
        max_steps: 20,
        replay_only,
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
    let mut asked = 0;
    let effects = drive(&mut engine, |request| {
        asked += 1;
        assert!(asked <= 200, "the engine keeps asking");
        let answer = match &request.body {
            RequestBody::Work { .. } => Answer::Work {
                output: "done".into(),
            },
            RequestBody::Judge { .. } => Answer::Judgment {
                raw: "1. YES - ok\n2. NO".into(),
                labels: Vec::new(),
            },
            RequestBody::Human { .. } => Answer::Human {
                decision: "ok".into(),
                approved: true,
                choice: None,
            },
            _ => {
                return Event::Refused {
                    id: request.id.clone(),
                    reason: "no".into(),
                }
            }
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
