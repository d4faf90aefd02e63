//! `set_knob` on arbitrary note text, its value taken from the input too.
//! Invariants, where the note loaded without errors before:
//! - it never panics;
//! - what it writes loads without errors, reads the knob as set (or, when
//!   removed, as its default) and every other knob as before;
//! - the text after the frontmatter is byte-identical;
//! - a plain value is never refused in a frontmatter of plain `key: value`
//!   lines (a refusal must mean the note's text is unusual).
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::vault::edit::{self, KnobValue};
use planvault_core::vault::frontmatter::{split, Split};
use planvault_core::vault::load;
use planvault_core::{Node, Severity};
use std::collections::BTreeMap;

fn loaded(text: &str) -> Option<Node> {
    let files = BTreeMap::from([("note.md".to_string(), text.to_string())]);
    let (plan, diagnostics) = load(&files);
    let clean = !diagnostics.iter().any(|d| d.severity == Severity::Error);
    clean.then(|| plan.nodes.into_iter().next()).flatten()
}

fuzz_target!(|input: &str| {
    // The value is the input's first line, the note the rest.
    let (value, text) = input.split_once('\n').unwrap_or(("", input));
    let Some(before) = loaded(text) else { return };
    let plain_line = |line: &str| {
        line.split_once(": ").is_some_and(|(k, v)| {
            !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    };
    let plain = match split(text.trim_start_matches('\u{feff}')) {
        Split::Closed(block) => block.yaml.lines().all(plain_line),
        Split::Absent => true,
        Split::Unclosed { .. } => false,
    };
    if plain {
        let role = KnobValue::Text("writer".into());
        assert!(
            edit::set_knob(text, "role", Some(&role)).is_ok(),
            "a plain role refused: {text:?}"
        );
    }
    let tools: Vec<String> = value.split(',').map(str::to_string).collect();
    for (key, knob) in [
        ("role", Some(KnobValue::Text(value.to_string()))),
        ("tools", Some(KnobValue::List(tools.clone()))),
        (
            "max_visits",
            Some(KnobValue::Number(value.len() as u32 + 1)),
        ),
        ("role", None),
        ("tools", None),
    ] {
        let Ok(after) = edit::set_knob(text, key, knob.as_ref()) else {
            continue;
        };
        let node =
            loaded(&after).unwrap_or_else(|| panic!("set {key} broke a clean note: {after:?}"));
        let mut expected = before.clone();
        match (key, &knob) {
            ("role", Some(_)) => expected.role = Some(value.to_string()),
            ("role", None) => expected.role = None,
            ("tools", Some(_)) => expected.tools = tools.clone(),
            ("tools", None) => expected.tools = Vec::new(),
            (_, _) => expected.max_visits = value.len() as u32 + 1,
        }
        assert_eq!(
            (
                &node.role,
                &node.tools,
                node.max_visits,
                node.kind,
                node.status
            ),
            (
                &expected.role,
                &expected.tools,
                expected.max_visits,
                expected.kind,
                expected.status
            ),
            "set {key} read otherwise: {after:?}"
        );
        assert!(
            after.ends_with(edit::body(text)),
            "set {key} changed the body: {after:?}"
        );
    }
});
