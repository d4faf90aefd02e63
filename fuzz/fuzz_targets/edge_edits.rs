//! Retarget, relabel and remove on every edge of an arbitrary note, found
//! by the line the loader reports, and a new edge appended. Invariants:
//! - none panics, and none refuses an edge the loader read, except an
//!   edit that would change the note's other edges (`ChangesOtherEdges`)
//!   or an address two edges share (`SeveralEdgesOnLine`);
//! - what is written changes that edge as asked and no other: re-loaded,
//!   the note's other edges keep their targets and labels, in order;
//! - an appended edge is read, on the line reported, with every other edge
//!   kept; it is refused only where the note ends inside something never
//!   closed (`NewEdgeReadOtherwise`: a plain label is never at fault).
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::vault::edit::{self, EditError};
use planvault_core::vault::links::LinkForm;
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
    match edit::append_edge(text, "fuzzed label", "fuzzed target", LinkForm::Wiki) {
        Ok((after, line)) => {
            let now = edges(&after);
            let at = now
                .iter()
                .position(|(t, l, at)| {
                    t == "fuzzed target" && l.as_deref() == Some("fuzzed label") && *at == line
                })
                .unwrap_or_else(|| panic!("the appended edge is not read on line {line}"));
            let mut others = now.clone();
            others.remove(at);
            assert_eq!(
                unlined(&others),
                unlined(&before),
                "append changed other edges"
            );
        }
        Err(EditError::NewEdgeReadOtherwise) => {}
        Err(e) => panic!("append refused: {e}"),
    }
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
