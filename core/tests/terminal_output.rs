//! A plan's text cannot drive the terminal it is shown on: escape sequences
//! in titles and links (clear screen, an OSC 52 clipboard write) reach the
//! human renderings escaped, and the JSON ones exact.

use planvault_core::export::{self, GraphFormat};
use planvault_core::{check, diagnostic, PlanSource};
use std::collections::BTreeMap;

const CLEAR: &str = "\u{1b}[2J";
const CLIPBOARD: &str = "\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}";

fn hostile_vault() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "start.md".to_string(),
            format!("---\ntype: start\n---\n# Start{CLEAR}{CLIPBOARD}\n\n## Next\n- [[gone{CLEAR}{CLIPBOARD}]]\n- [[end]]\n"),
        ),
        ("end.md".to_string(), "# End\n".to_string()),
    ])
}

fn assert_inert(text: &str) {
    assert!(
        !text.contains(['\u{1b}', '\u{7}']),
        "raw control characters in {text:?}"
    );
    assert!(text.contains("\\u{1b}[2J"), "{text:?}");
    assert!(
        text.contains("\\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\\u{7}"),
        "{text:?}"
    );
}

#[test]
fn diagnostics_for_a_terminal_escape_the_plans_text() {
    let checked = check(&PlanSource::Vault(hostile_vault()));
    let dangling: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.message.contains(CLEAR))
        .collect();
    assert_eq!(dangling.len(), 1, "{:?}", checked.diagnostics);
    assert_inert(&dangling[0].render_human());

    // JSON keeps the exact text, JSON-escaped.
    let json = diagnostic::to_json(&checked.diagnostics);
    assert!(!json.contains('\u{1b}'));
    let back: serde_json::Value = serde_json::from_str(&json).unwrap();
    let messages: Vec<&str> = back["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert!(messages
        .iter()
        .any(|m| m.contains(CLEAR) && m.contains(CLIPBOARD)));
}

#[test]
fn the_ascii_tree_escapes_titles_and_links() {
    let checked = check(&PlanSource::Vault(hostile_vault()));
    let tree = export::export(&checked.plan, GraphFormat::Ascii);
    assert_inert(&tree);
    assert!(tree.lines().count() >= 3, "{tree}");

    let json = export::export(&checked.plan, GraphFormat::Json);
    let back: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(back.to_string().contains("\\u001b[2J"), "{json}");
    assert!(
        json.contains("Start\\u001b[2J\\u001b]52;c;Y3VybCBldmlsIHwgc2g=\\u0007"),
        "{json}"
    );
}
