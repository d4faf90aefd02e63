//! `planvault graph` outputs for the single-file formats, one folder per case
//! under `tests/fixtures/export/` with every drawing beside the input:
//! `expected.json`, `expected.mmd`, `expected.txt` (ASCII), `expected.canvas`.
//! `UPDATE_EXPECT=1` rewrites them.

use planvault_core::export::{export, GraphFormat};
use planvault_core::{check, generated, PlanSource};
use std::fs;
use std::path::Path;

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
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for dir in dirs {
        let plan = check(&source(&dir)).plan;
        for (format, name) in OUTPUTS {
            let actual = export(&plan, format);
            let path = dir.join(name);
            if fs::read_to_string(&path).ok().as_deref() != Some(actual.as_str()) {
                if update {
                    fs::write(&path, &actual).unwrap();
                } else {
                    failures.push(format!("--- {}\n{actual}", path.display()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "exports differ (UPDATE_EXPECT=1 to bless):\n{}",
        failures.join("\n")
    );
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
            serde_json::from_str(&export(&plan, GraphFormat::Json)).unwrap();
        assert_eq!(graph["nodes"].as_array().unwrap().len(), plan.nodes.len());
        let canvas: serde_json::Value =
            serde_json::from_str(&export(&plan, GraphFormat::Canvas)).unwrap();
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
        // No card sits on another, placeholders for missing targets included.
        let nodes = canvas["nodes"].as_array().unwrap();
        let rect =
            |n: &serde_json::Value| ["x", "y", "width", "height"].map(|k| n[k].as_i64().unwrap());
        for (i, a) in nodes.iter().enumerate() {
            let [ax, ay, aw, ah] = rect(a);
            for b in &nodes[i + 1..] {
                let [bx, by, bw, bh] = rect(b);
                assert!(
                    ax + aw <= bx || bx + bw <= ax || ay + ah <= by || by + bh <= ay,
                    "{} and {} overlap in {}",
                    a["id"],
                    b["id"],
                    dir.display()
                );
            }
        }
    }
}
