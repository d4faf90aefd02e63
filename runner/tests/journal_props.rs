//! The journal as a crash leaves it, over random journals: a torn last line
//! (cut at any byte), duplicated and reordered whole lines. The repair never
//! loses a whole entry, never keeps a partial one, and leaves a file the
//! next append cannot glue onto.

use planvault_core::engine::journal::entry_line;
use planvault_core::engine::{Answer, Journal, JournalEntry};
use planvault_runner::driver::split_torn;
use proptest::prelude::*;

fn entry() -> impl Strategy<Value = JournalEntry> {
    (
        "[a-z]{1,6}#[1-3]:(work|judge\\.1|command)",
        any::<i32>(),
        "\\PC{0,12}",
    )
        .prop_map(|(key, exit, output)| JournalEntry {
            key,
            answer: Answer::Command { exit, output },
            made_from: None,
        })
}

fn jsonl(entries: &[JournalEntry]) -> String {
    entries.iter().map(|e| entry_line(e) + "\n").collect()
}

proptest! {
    #[test]
    fn a_torn_last_line_is_cut_and_every_whole_entry_kept(
        entries in prop::collection::vec(entry(), 1..8),
        cut in any::<prop::sample::Index>(),
        next in entry(),
    ) {
        let whole = jsonl(&entries);
        let last_start = whole[..whole.len() - 1].rfind('\n').map_or(0, |i| i + 1);
        let mut at = last_start + cut.index(whole.len() - last_start);
        while !whole.is_char_boundary(at) {
            at += 1;
        }
        let text = &whole[..at];
        let (kept, torn) = split_torn(text);
        prop_assert!(kept.is_empty() || kept.ends_with('\n'));
        let journal = Journal::from_jsonl(&kept).unwrap();
        let n = entries.len();
        if at >= whole.len() - 1 {
            // Only the newline (or nothing) was lost: the entry is whole.
            prop_assert_eq!(&journal.entries, &entries);
            prop_assert_eq!(torn, None);
        } else {
            prop_assert_eq!(&journal.entries[..], &entries[..n - 1]);
            prop_assert_eq!(torn.map(str::len), Some(at - last_start).filter(|&l| l > 0));
        }
        // The next append starts on its own line.
        let appended = kept + &entry_line(&next) + "\n";
        let after = Journal::from_jsonl(&appended).unwrap();
        prop_assert_eq!(after.entries.last(), Some(&next));
    }

    #[test]
    fn duplicated_and_reordered_whole_lines_read_back_line_for_line(
        entries in prop::collection::vec(entry(), 1..8),
        dup in any::<prop::sample::Index>(),
        swap in any::<(prop::sample::Index, prop::sample::Index)>(),
    ) {
        let mut lines: Vec<JournalEntry> = entries.clone();
        let d = dup.index(lines.len());
        lines.insert(d, lines[d].clone());
        let (a, b) = (swap.0.index(lines.len()), swap.1.index(lines.len()));
        lines.swap(a, b);
        let text = jsonl(&lines);
        let (kept, torn) = split_torn(&text);
        prop_assert_eq!(&kept, &text);
        prop_assert_eq!(torn, None);
        prop_assert_eq!(Journal::from_jsonl(&kept).unwrap().entries, lines);
    }
}

fn command_or_decision() -> impl Strategy<Value = JournalEntry> {
    prop_oneof![
        entry(),
        (
            "[a-z]{1,6}#[1-3]:human",
            any::<bool>(),
            "\\PC{0,12}|.*\n.*|\u{1b}\\[2J\u{202e}|\\PC{100,120}"
        )
            .prop_map(|(key, approved, decision)| JournalEntry {
                key,
                answer: Answer::Human {
                    decision,
                    approved,
                    choice: None,
                },
                made_from: None,
            }),
    ]
}

/// Chained as a runner writes them.
fn chained(entries: &[JournalEntry]) -> String {
    use planvault_core::engine::journal::{chained_line, link, GENESIS};
    let mut chain = GENESIS.to_string();
    let mut text = String::new();
    for entry in entries {
        let line = chained_line(entry, &chain);
        chain = link(&chain, &line);
        text += &line;
        text.push('\n');
    }
    text
}

proptest! {
    /// A decision is named by the chain after its line: the journal's head
    /// where it ends, so the same decision after any other lines is
    /// another; and however hostile its text, it is one listed line.
    #[test]
    fn each_decision_is_named_by_the_chain_up_to_its_line_and_listed_on_one_line(
        entries in prop::collection::vec(command_or_decision(), 1..8),
        before in entry(),
    ) {
        use planvault_core::engine::journal::{decisions, verify_chain};
        let text = chained(&entries);
        let found = decisions(&text);
        let human: Vec<&JournalEntry> = entries
            .iter()
            .filter(|e| matches!(e.answer, Answer::Human { .. }))
            .collect();
        prop_assert_eq!(found.len(), human.len());
        let lines: Vec<&str> = text.lines().collect();
        for (d, e) in found.iter().zip(&human) {
            prop_assert_eq!(&d.key, &e.key);
            let upto = lines[..d.line].join("\n");
            prop_assert_eq!(&d.head, &verify_chain(&upto).unwrap().hash);
        }
        let mut moved = vec![before];
        moved.extend(entries.iter().cloned());
        let heads: Vec<&str> = found.iter().map(|d| d.head.as_str()).collect();
        prop_assert!(decisions(&chained(&moved)).iter().all(|d| !heads.contains(&d.head.as_str())));
        let listed: Vec<&planvault_core::engine::journal::Decision> = found.iter().collect();
        let listing = planvault_runner::driver::decisions_listing("00_plan-trace/journal.jsonl", &listed);
        prop_assert_eq!(listing.lines().count(), found.len() + 1);
        let hazard = |c: char| (c.is_control() && c != '\n') || c == '\u{202e}';
        prop_assert!(!listing.chars().any(hazard), "{}", listing);
        // A long note is cut at 80 characters: `  - line N: KEY approved
        // (80 characters…)` is at most 105 characters beside its key.
        for (d, line) in found.iter().zip(listing.lines().skip(1)) {
            if d.decision.chars().count() > 80 && !d.decision.chars().any(char::is_control) {
                prop_assert!(line.ends_with("…)"), "{}", line);
                prop_assert!(line.chars().count() <= 105 + d.key.len(), "{}", line);
            }
        }
    }
}
