//! The graph exports of `planvault graph`:
//! - on the seed's plan (a loop with an exit) plus a dangling edge and an
//!   unreachable note, so every branch of every drawing shows up in a
//!   snapshot (`tests/snapshots/`);
//! - for the single-file formats, one folder per case under
//!   `tests/fixtures/export/` with every drawing beside the input as an insta
//!   snapshot: `expected.json.snap`, `expected.mmd.snap`, `expected.txt.snap`
//!   (ASCII), `expected.canvas.snap`.
//!
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration export::`
//! rewrites the snapshots; review the diff before committing it.

use planvault_core::export::{self, GraphFormat};
use planvault_core::{check, generated, Plan, PlanSource};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

fn plan() -> Plan {
    let files: BTreeMap<String, String> = [
        ("draft.md", "---\ntype: start\ntools: [fetch_url]\nrole: writer\n---\n# Draft the email\n\n## Next\n- [[review]]\n"),
        ("review.md", "---\nrole: review\nstatus: active\n---\n# Review the \"draft\"\n\n## Next\n- approved -> [[send]]\n- needs revision -> [[draft]]\n- escalate -> [[boss]]\n"),
        ("send.md", "---\nstatus: done\nmax_visits: 1\n---\n# Send\n"),
        ("archive/old.md", "# Old idea\n\n## Next\n- [[send]]\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    check(&PlanSource::Vault(files)).plan
}

#[test]
fn json_has_the_documented_shape() {
    let text = export::export(&plan(), GraphFormat::Json);
    insta::assert_snapshot!("graph_json", text);
    let v: Value = serde_json::from_str(&text).unwrap();
    // Field order is part of the format: check it on the text itself.
    let in_order = |keys: &[&str], from: usize| {
        let at: Vec<usize> = keys
            .iter()
            .map(|k| from + text[from..].find(&format!("\"{k}\"")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{keys:?} out of order");
    };
    in_order(&["format", "start", "nodes", "edges"], 0);
    in_order(
        &[
            "id",
            "title",
            "kind",
            "status",
            "tools",
            "role",
            "max_visits",
            "file",
        ],
        text.find("\"nodes\"").unwrap(),
    );
    in_order(
        &["from", "to", "label", "conditional"],
        text.find("\"edges\"").unwrap(),
    );
    assert_eq!(
        v["nodes"].as_array().unwrap()[0].as_object().unwrap().len(),
        8
    );
    assert_eq!(
        v["edges"].as_array().unwrap()[0].as_object().unwrap().len(),
        4
    );
    assert_eq!(v["edges"][0]["label"], Value::Null);
}

#[test]
fn mermaid_is_a_labeled_flowchart() {
    let text = export::export(&plan(), GraphFormat::Mermaid);
    assert!(text.starts_with("flowchart TD\n"));
    insta::assert_snapshot!("mermaid", text);
}

#[test]
fn ascii_draws_the_tree_from_the_start() {
    insta::assert_snapshot!("ascii", export::export(&plan(), GraphFormat::Ascii));
}

#[test]
fn canvas_is_json_canvas_1_0() {
    let text = export::export(&plan(), GraphFormat::Canvas);
    insta::assert_snapshot!("canvas", text);
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut ids = BTreeSet::new();
    for node in v["nodes"].as_array().unwrap() {
        assert!(
            ids.insert(node["id"].as_str().unwrap().to_string()),
            "duplicate id"
        );
        for key in ["x", "y", "width", "height"] {
            assert!(node[key].is_i64(), "{key} must be an integer: {node}");
        }
        match node["type"].as_str().unwrap() {
            "file" => assert!(node["file"].as_str().unwrap().ends_with(".md")),
            "text" => assert!(node["text"].is_string()),
            other => panic!("unexpected node type {other}"),
        }
    }
    for edge in v["edges"].as_array().unwrap() {
        assert!(ids.contains(edge["fromNode"].as_str().unwrap()));
        assert!(ids.contains(edge["toNode"].as_str().unwrap()));
        for side in ["fromSide", "toSide"] {
            assert!(["top", "right", "bottom", "left"].contains(&edge[side].as_str().unwrap()));
        }
    }
}

#[test]
fn a_long_chain_draws_as_a_column() {
    // A staircase would be quadratic in size; the chain stays one column.
    let steps: Vec<String> = (0..2000).map(|i| format!("Step {i}")).collect();
    let plan = planvault_core::vault::path_graph_from_steps(&steps);
    let text = export::export(&plan, GraphFormat::Ascii);
    assert_eq!(text.lines().count(), 2000);
    assert!(text.lines().all(|l| l.chars().count() < 40), "indent grew");
}

const OUTPUTS: [(GraphFormat, &str); 4] = [
    (GraphFormat::Json, "expected.json"),
    (GraphFormat::Mermaid, "expected.mmd"),
    (GraphFormat::Ascii, "expected.txt"),
    (GraphFormat::Canvas, "expected.canvas"),
];

fn source(dir: &Path) -> PlanSource {
    if let Ok(text) = fs::read_to_string(dir.join("PLAN.md")) {
        PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text,
        }
    } else {
        let text = fs::read_to_string(dir.join("plan.json")).unwrap();
        PlanSource::Generated {
            file: "plan.json".into(),
            text,
            options: generated::Options::default(),
        }
    }
}

#[test]
fn export_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export");
    let mut dirs: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixtures under {}", root.display());
    for dir in dirs {
        let plan = check(&source(&dir)).plan;
        for (format, name) in OUTPUTS {
            insta::with_settings!({
                snapshot_path => dir.clone(),
                prepend_module_to_snapshot => false,
                description => dir.file_name().unwrap().to_string_lossy().to_string(),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(name, export::export(&plan, format));
            });
        }
    }
}

/// The JSON exports are valid JSON, and a canvas has integer geometry on
/// every node and edges that point at nodes it declares (JSON Canvas 1.0).
#[test]
fn json_and_canvas_are_well_formed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export");
    for entry in fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let plan = check(&source(&dir)).plan;
        let graph: serde_json::Value =
            serde_json::from_str(&export::export(&plan, GraphFormat::Json)).unwrap();
        assert_eq!(graph["nodes"].as_array().unwrap().len(), plan.nodes.len());
        let canvas: serde_json::Value =
            serde_json::from_str(&export::export(&plan, GraphFormat::Canvas)).unwrap();
        let ids: Vec<&str> = canvas["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap())
            .collect();
        for node in canvas["nodes"].as_array().unwrap() {
            for key in ["x", "y", "width", "height"] {
                assert!(node[key].is_i64(), "{key} of {node}");
            }
            assert_eq!(node["type"], "text");
        }
        for edge in canvas["edges"].as_array().unwrap() {
            assert!(ids.contains(&edge["fromNode"].as_str().unwrap()));
            assert!(ids.contains(&edge["toNode"].as_str().unwrap()));
        }
    }
}
