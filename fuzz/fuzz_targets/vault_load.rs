//! A whole vault from arbitrary bytes: NUL separates notes, each note's first
//! line is its vault path (`.md` added when missing), the rest its text.
//! Loading and validating must never panic, whatever the notes say.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::PlanSource;
use std::collections::BTreeMap;

/// Enough notes for links to resolve, clash and dangle; more only slows runs.
const MAX_NOTES: usize = 8;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut files = BTreeMap::new();
    for chunk in text.split('\0').take(MAX_NOTES) {
        let (path, note) = chunk.split_once('\n').unwrap_or((chunk, ""));
        let path = if path.to_ascii_lowercase().ends_with(".md") { path.to_string() } else { format!("{path}.md") };
        files.insert(path, note.to_string());
    }
    let checked = planvault_core::check(&PlanSource::Vault(files));
    // Every edge and the start must point at a node that exists.
    let nodes = checked.plan.nodes.len();
    assert!(checked.plan.start.is_none_or(|s| s < nodes));
    for edge in &checked.plan.edges {
        assert!(edge.from < nodes && edge.to.is_none_or(|t| t < nodes));
    }
});
