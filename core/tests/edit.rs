//! Data-driven tests for `vault::edit`: one folder per case under
//! `tests/edit/`, holding the note (`before.md`), the edit (`op.json`) and the
//! expected result beside them (`after.md`, or `error.txt` when the edit must
//! be refused). `UPDATE_FIXTURES=1 cargo test --test edit` rewrites the
//! expectations; review the diff before committing it.

use planvault_core::vault::edit::{self, KnobValue};
use planvault_core::NodeKind;
use serde_json::Value;
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
            let (text, line) = edit::append_edge(before, &s("label"), &s("target"));
            // The reported line must be the item just written.
            let written = text
                .strip_prefix('\u{feff}')
                .unwrap_or(&text)
                .lines()
                .nth(line as usize - 1)
                .unwrap();
            assert!(
                written.contains(&format!("[[{}]]", s("target"))),
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
            Ok(edit::rename_links(before, &s("old"), &s("new"))
                .unwrap_or_else(|| before.to_string()))
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
    let update = std::env::var_os("UPDATE_FIXTURES").is_some();
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
    let mut failures = Vec::new();
    for case in &cases {
        let before = fs::read_to_string(case.join("before.md")).unwrap();
        let op: Value =
            serde_json::from_str(&fs::read_to_string(case.join("op.json")).unwrap()).unwrap();
        let (file, actual) = match apply(&before, &op) {
            Ok(text) => ("after.md", text),
            Err(message) => ("error.txt", format!("{message}\n")),
        };
        let expected_path = case.join(file);
        if update {
            let _ = fs::remove_file(case.join("after.md"));
            let _ = fs::remove_file(case.join("error.txt"));
            fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        match fs::read(&expected_path) {
            Ok(expected) if expected == actual.as_bytes() => {}
            Ok(expected) => failures.push(format!(
                "{}: {file} differs\n--- expected\n{:?}\n--- actual\n{:?}",
                case.display(),
                String::from_utf8_lossy(&expected),
                actual
            )),
            Err(_) => failures.push(format!(
                "{}: expected {file}, got {actual:?}",
                case.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
