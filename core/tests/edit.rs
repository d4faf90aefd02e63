//! Data-driven tests for `vault::edit`: one folder per case under
//! `tests/edit/`, holding the note (`before.md`), the edit (`op.json`) and the
//! expected result beside them as an insta snapshot: the new note byte for
//! byte (`after.snap.md`, a binary snapshot, so line endings, a BOM and a
//! missing last newline are compared too; `after.snap` is its metadata), or
//! `error.snap` when the edit must be refused.
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration edit::`
//! rewrites the snapshots; review the diff before committing it.

use planvault_core::vault::edit::{self, KnobValue};
use planvault_core::vault::links::LinkForm;
use planvault_core::vault::rename;
use planvault_core::NodeKind;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

fn knob_value(value: &Value) -> KnobValue {
    match value {
        Value::Number(n) => KnobValue::Number(n.as_u64().expect("knob number") as u32),
        Value::String(s) => KnobValue::Text(s.clone()),
        Value::Array(items) => KnobValue::List(
            items
                .iter()
                .map(|i| i.as_str().expect("list of strings").to_string())
                .collect(),
        ),
        other => panic!("unsupported knob value {other}"),
    }
}

/// Applies `op` to `before`: the new text, or the error's message.
fn apply(before: &str, op: &Value) -> Result<String, String> {
    let s = |k: &str| {
        op[k]
            .as_str()
            .unwrap_or_else(|| panic!("op needs {k}"))
            .to_string()
    };
    let line = || op["line"].as_u64().expect("op needs line") as u32;
    let err = |e: edit::EditError| e.to_string();
    match op["op"].as_str().expect("op name") {
        "append-edge" => {
            let form = match op["form"].as_str() {
                Some("markdown") => LinkForm::Markdown,
                _ => LinkForm::Wiki,
            };
            let (text, line) =
                edit::append_edge(before, &s("label"), &s("target"), form).map_err(err)?;
            // The reported line must be the item just written.
            let written = text
                .strip_prefix('\u{feff}')
                .unwrap_or(&text)
                .lines()
                .nth(line as usize - 1)
                .unwrap();
            assert!(
                written.ends_with(&edit::edge_item(&s("label"), &s("target"), form)[2..]),
                "line {line} is {written:?}"
            );
            Ok(text)
        }
        "remove-edge" => edit::remove_edge(before, line()).map_err(err),
        "retarget-edge" => edit::retarget_edge(before, line(), &s("target")).map_err(err),
        "relabel-edge" => edit::relabel_edge(before, line(), &s("label")).map_err(err),
        "set-knob" => {
            edit::set_knob(before, &s("key"), Some(&knob_value(&op["value"]))).map_err(err)
        }
        "remove-knob" => edit::set_knob(before, &s("key"), None).map_err(err),
        "replace-body" => Ok(edit::replace_body(before, &s("body"))),
        "rename-links" => {
            // The note is `path` (`note.md` unless said) in a vault that also
            // holds the renamed note and the notes `others` names.
            let path = op["path"].as_str().unwrap_or("note.md");
            let others = op["others"].as_array().into_iter().flatten();
            let mut files: BTreeMap<String, String> = others
                .map(|id| {
                    (
                        format!("{}.md", id.as_str().expect("others are ids")),
                        String::new(),
                    )
                })
                .collect();
            files.insert(format!("{}.md", s("old")), String::new());
            files.insert(path.to_string(), before.to_string());
            let changed = rename::rename_note(&files, &s("old"), &s("new"));
            let note = changed.into_iter().find(|(changed, _)| changed == path);
            Ok(note.map_or_else(|| before.to_string(), |(_, text)| text))
        }
        "new-note" => {
            let kind = if s("kind") == "start" {
                NodeKind::Start
            } else {
                NodeKind::Step
            };
            Ok(edit::new_note(&s("title"), kind))
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn edit_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edit");
    let mut cases: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 30,
        "fixture folders went missing: {}",
        cases.len()
    );
    for case in &cases {
        let before = fs::read_to_string(case.join("before.md")).unwrap();
        let op: Value =
            serde_json::from_str(&fs::read_to_string(case.join("op.json")).unwrap()).unwrap();
        let result = apply(&before, &op);
        // A case that changed between success and refusal keeps no stale
        // expectation of the other kind.
        let stale = if result.is_ok() {
            "error.snap"
        } else {
            "after.snap"
        };
        assert!(
            !case.join(stale).exists(),
            "{}: remove the stale {stale}",
            case.display()
        );
        insta::with_settings!({
            snapshot_path => case.clone(),
            prepend_module_to_snapshot => false,
            description => case.file_name().unwrap().to_string_lossy().to_string(),
            omit_expression => true,
        }, {
            match result {
                Ok(text) => insta::assert_binary_snapshot!("after.md", text.into_bytes()),
                Err(message) => insta::assert_snapshot!("error", message),
            }
        });
    }
}
