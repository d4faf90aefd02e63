//! Retarget, relabel and remove on every edge of an arbitrary note, found
//! by the line the loader reports. Invariants:
//! - none panics, and none refuses an edge the loader read, except an
//!   edit that would change the note's other edges (`ChangesOtherEdges`)
//!   or an address two edges share (`SeveralEdgesOnLine`);
//! - what is written changes that edge as asked and no other: re-loaded,
//!   the note's other edges keep their targets and labels, in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::vault::edit::{self, EditError};
use planvault_core::vault::load;
use std::collections::BTreeMap;

/// The note's edges as the loader reads them: target, label, link's line.
fn edges(text: &str) -> Vec<(String, Option<String>, u32)> {
    let files = BTreeMap::from([("note.md".to_string(), text.to_string())]);
    let (plan, _) = load(&files);
    plan.edges
        .iter()
        .map(|e| {
            let line = e.pos.as_ref().map_or(0, |p| p.line);
            (e.target.clone(), e.label.clone(), line)
        })
        .collect()
}

fn unlined(edges: &[(String, Option<String>, u32)]) -> Vec<(String, Option<String>)> {
    // `[a](a.md)`, what a retarget writes in a markdown link, names note `a`.
    edges
        .iter()
        .map(|(t, l, _)| (t.trim_end_matches(".md").to_string(), l.clone()))
        .collect()
}

fuzz_target!(|text: &str| {
    let before = edges(text);
    for (i, (_, _, line)) in before.iter().enumerate() {
        // A bare `\r` ends an item but no line number: such an address is
        // refused, not guessed at.
        if before.iter().filter(|(_, _, l)| l == line).count() > 1 {
            let refused = edit::retarget_edge(text, *line, "x");
            assert!(matches!(refused, Err(EditError::SeveralEdgesOnLine { .. })));
            continue;
        }
        match edit::retarget_edge(text, *line, "fuzzed target") {
            Ok(after) => {
                let mut expected = unlined(&before);
                expected[i].0 = "fuzzed target".to_string();
                assert_eq!(unlined(&edges(&after)), expected, "retarget line {line}");
            }
            Err(EditError::ChangesOtherEdges { .. }) => {}
            Err(e) => panic!("retarget refused the loader's edge on line {line}: {e}"),
        }
        match edit::relabel_edge(text, *line, "fuzzed label") {
            Ok(after) => {
                let mut expected = unlined(&before);
                expected[i].1 = Some("fuzzed label".to_string());
                assert_eq!(unlined(&edges(&after)), expected, "relabel line {line}");
            }
            Err(EditError::ChangesOtherEdges { .. }) => {}
            Err(e) => panic!("relabel refused the loader's edge on line {line}: {e}"),
        }
        match edit::remove_edge(text, *line) {
            Ok(after) => {
                let mut expected = unlined(&before);
                expected.remove(i);
                assert_eq!(unlined(&edges(&after)), expected, "remove line {line}");
            }
            Err(EditError::ChangesOtherEdges { .. }) => {}
            Err(e) => panic!("remove refused the loader's edge on line {line}: {e}"),
        }
    }
});
