//! `update_status` on arbitrary note text, for every status. Invariants:
//! - it never panics, and applying it twice changes nothing more;
//! - re-loading the result reads that status (unless the note's frontmatter
//!   is broken in a way the loader reports as an error);
//! - only the status line changes: the text outside the frontmatter is
//!   byte-identical, and every line that is new names `status`;
//! - `checked_update_status` never panics; what it accepts re-loads with
//!   that status wherever the note loaded without errors before, and is the
//!   line edit's text wherever that read back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::vault::frontmatter::{split, Split};
use planvault_core::vault::{checked_update_status, load, update_status};
use planvault_core::{Severity, Status};
use std::collections::{BTreeMap, HashMap};

const BOM: &str = "\u{feff}";

fn is_status_line(line: &str) -> bool {
    line.trim_start_matches(['"', '\'']).starts_with("status")
}

fuzz_target!(|text: &str| {
    let before = BTreeMap::from([("note.md".to_string(), text.to_string())]);
    let loaded_clean = !load(&before)
        .1
        .iter()
        .any(|d| d.severity == Severity::Error);
    for status in [Status::Pending, Status::Active, Status::Done] {
        if let Ok(checked) = checked_update_status(text, status) {
            let files = BTreeMap::from([("note.md".to_string(), checked.clone())]);
            let (plan, diagnostics) = load(&files);
            if loaded_clean {
                assert!(
                    !diagnostics.iter().any(|d| d.severity == Severity::Error),
                    "a checked write broke a clean note: {checked:?}"
                );
                assert_eq!(
                    plan.nodes[0].status, status,
                    "checked write reads another status"
                );
            }
        }
        let out = update_status(text, status);
        assert_eq!(update_status(&out, status), out, "not idempotent");

        let files = BTreeMap::from([("note.md".to_string(), out.clone())]);
        let (plan, diagnostics) = load(&files);
        if !diagnostics.iter().any(|d| d.severity == Severity::Error) {
            assert_eq!(plan.nodes[0].status, status, "re-load reads another status");
        }

        let bom = if text.starts_with(BOM) { BOM.len() } else { 0 };
        assert!(out.starts_with(&text[..bom]), "BOM lost");
        let (content, out_content) = (&text[bom..], &out[bom..]);
        match split(content) {
            Split::Closed(block) => {
                // Everything up to the YAML and everything after the block stays.
                assert_eq!(
                    &out_content[..block.yaml_offset],
                    &content[..block.yaml_offset]
                );
                let Split::Closed(out_block) = split(out_content) else {
                    panic!("block lost")
                };
                assert_eq!(
                    &out_content[out_block.body_offset..],
                    &content[block.body_offset..],
                    "body changed"
                );
                // Within the block, the only new lines are the status entry.
                let mut before: HashMap<&str, usize> = HashMap::new();
                for line in content.lines() {
                    *before.entry(line).or_default() += 1;
                }
                for line in out_content.lines() {
                    match before.get_mut(line) {
                        Some(n) if *n > 0 => *n -= 1,
                        _ => assert!(is_status_line(line), "new line {line:?} is not the status"),
                    }
                }
            }
            Split::Absent | Split::Unclosed { .. } => {
                // A fresh block goes on top; the old text follows unchanged.
                assert!(out_content.starts_with("---"), "no fresh block");
                assert!(
                    out_content.ends_with(content),
                    "text after the fresh block changed"
                );
                let head = &out_content[..out_content.len() - content.len()];
                assert!(head.contains(&format!("status: {}", status.as_str())));
            }
        }
    }
});
