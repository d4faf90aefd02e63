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
fn a_missing_note_is_named_by_its_link_as_written() {
    let files: BTreeMap<String, String> = [(
        "start.md".to_string(),
        "---\ntype: start\n---\n## Next\n- go -> [Send it](Send%20it.md)\n- or -> [[Ask]]\n"
            .to_string(),
    )]
    .into();
    let plan = check(&PlanSource::Vault(files)).plan;
    let ascii = export::export(&plan, GraphFormat::Ascii);
    assert!(
        ascii.contains("✗ [Send it](Send%20it.md) (no such note)"),
        "{ascii}"
    );
    assert!(ascii.contains("✗ [[Ask]] (no such note)"), "{ascii}");
    let canvas = export::export(&plan, GraphFormat::Canvas);
    assert!(
        canvas.contains("Missing note [Send it](Send%20it.md)"),
        "{canvas}"
    );
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

/// A note macOS stored decomposed (`Cafe\u{301}.md`) is named composed in
/// its card, as Obsidian keys its path: the canvas opens the note there.
#[test]
fn canvas_names_a_decomposed_note_composed() {
    let files: BTreeMap<String, String> = [
        (
            "Cafe\u{301}.md",
            "---\ntype: start\n---\n# Caf\u{e9}\n\n## Next\n- [[\u{1100}\u{1161}]]\n",
        ),
        ("\u{1100}\u{1161}.md", "# K\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let plan = check(&PlanSource::Vault(files)).plan;
    let v: Value = serde_json::from_str(&export::export(&plan, GraphFormat::Canvas)).unwrap();
    let files: Vec<&str> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["file"].as_str())
        .collect();
    assert_eq!(files, ["Caf\u{e9}.md", "\u{ac00}.md"]);
}

/// A vault from `(note, [links under ## Next])`; the first note is the start.
fn vault(notes: &[(&str, &[&str])]) -> Plan {
    let files: BTreeMap<String, String> = notes
        .iter()
        .enumerate()
        .map(|(i, (name, next))| {
            let front = if i == 0 {
                "---\ntype: start\n---\n"
            } else {
                ""
            };
            let links: String = next.iter().map(|t| format!("- [[{t}]]\n")).collect();
            let next = if next.is_empty() {
                String::new()
            } else {
                format!("\n## Next\n{links}")
            };
            (format!("{name}.md"), format!("{front}# {name}\n{next}"))
        })
        .collect();
    check(&PlanSource::Vault(files)).plan
}

#[test]
fn ascii_draws_a_chain_inside_a_branch_under_its_parent() {
    // `b → d → e` hangs under `b`, not beside it as if from the start.
    let plan = vault(&[
        ("s", &["b", "c"]),
        ("b", &["d"]),
        ("c", &[]),
        ("d", &["e"]),
        ("e", &[]),
    ]);
    insta::assert_snapshot!(
        "ascii_chain_in_branch",
        export::export(&plan, GraphFormat::Ascii)
    );
}

#[test]
fn ascii_draws_a_diamond_once_and_refers_back() {
    let plan = vault(&[
        ("s", &["a", "b"]),
        ("a", &["join"]),
        ("b", &["join"]),
        ("join", &["end"]),
        ("end", &[]),
    ]);
    insta::assert_snapshot!("ascii_diamond", export::export(&plan, GraphFormat::Ascii));
}

#[test]
fn ascii_draws_a_loop_back_to_a_node_above() {
    let plan = vault(&[
        ("s", &["draft"]),
        ("draft", &["review"]),
        ("review", &["draft", "send"]),
        ("send", &[]),
    ]);
    insta::assert_snapshot!("ascii_loop", export::export(&plan, GraphFormat::Ascii));
}

#[test]
fn ascii_draws_a_tangle_each_node_once() {
    let plan = vault(&[
        ("s", &["a", "b", "c"]),
        ("a", &["b", "d"]),
        ("b", &["c", "a", "e"]),
        ("c", &["d", "s"]),
        ("d", &["e", "b"]),
        ("e", &[]),
    ]);
    let text = export::export(&plan, GraphFormat::Ascii);
    insta::assert_snapshot!("ascii_tangle", text);
    // Every node is drawn (not referred to) exactly once.
    for id in ["s", "a", "b", "c", "d", "e"] {
        let drawn = text
            .lines()
            .filter(|l| {
                let l = l.trim_start_matches([' ', '│', '├', '└', '─', '▶']);
                l == id || l.starts_with(&format!("{id}  "))
            })
            .count();
        assert_eq!(drawn, 1, "{id} in\n{text}");
    }
}

#[test]
fn ascii_moves_what_is_deeper_than_the_cap_down_to_the_margin() {
    let names: Vec<String> = (0..16).map(|i| format!("n{i:02}")).collect();
    let links: Vec<[&str; 1]> = names[1..].iter().map(|n| [n.as_str()]).collect();
    let mut notes: Vec<(&str, &[&str])> = names[..15]
        .iter()
        .zip(&links)
        .map(|(n, l)| (n.as_str(), &l[..]))
        .collect();
    notes.push((names[15].as_str(), &[]));
    let plan = vault(&notes);
    insta::assert_snapshot!(
        "ascii_deep_chain",
        export::export(&plan, GraphFormat::Ascii)
    );
}

/// `n` notes, each linking to three others picked by a fixed rule, `n00000`
/// the start: deep, cyclic and crossing everywhere.
fn tangle(n: usize) -> Plan {
    let files: BTreeMap<String, String> = (0..n)
        .map(|i| {
            let front = if i == 0 {
                "---\ntype: start\n---\n"
            } else {
                ""
            };
            let links: String = [i + 1, i * 7 + 3, i * 31 + 17]
                .iter()
                .map(|t| format!("- [[n{:05}]]\n", t % n))
                .collect();
            (
                format!("n{i:05}.md"),
                format!("{front}# Step {i}\n\n## Next\n{links}"),
            )
        })
        .collect();
    check(&PlanSource::Vault(files)).plan
}

#[test]
fn a_10k_note_tangle_draws_in_linear_size() {
    // Drawing every path would print gigabytes; each node once, each edge
    // one line, indentation capped: a fixed number of bytes per node and edge.
    let plan = tangle(10_000);
    let text = export::export(&plan, GraphFormat::Ascii);
    let size = plan.nodes.len() + plan.edges.len();
    assert_eq!(size, 40_000);
    assert!(text.len() <= 160 * size, "{} bytes", text.len());
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "a line of {widest} characters");
    // Every edge has its line: an arrow per edge.
    assert_eq!(text.matches('▶').count(), plan.edges.len());
}

#[test]
fn a_long_chain_stays_within_the_indent_cap() {
    // A staircase 2,000 deep would be quadratic in size; past the cap the
    // chain continues at the margin.
    let steps: Vec<String> = (0..2000).map(|i| format!("Step {i}")).collect();
    let plan = planvault_core::vault::path_graph_from_steps(&steps);
    let text = export::export(&plan, GraphFormat::Ascii);
    assert!(text.lines().count() < 2000 * 2);
    assert!(text.lines().all(|l| l.chars().count() < 80), "indent grew");
    assert_eq!(text.matches('▶').count(), 1999);
}

#[test]
fn a_100k_item_plan_md_draws_in_linear_time() {
    // Each item after the one before it: the listing looked up every item's
    // dependencies over every edge (10^10 steps here).
    let text: String = (1..=100_000)
        .map(|i| {
            if i == 1 {
                "- [ ] Step 1\n".to_string()
            } else {
                format!("- [ ] (after: {}) Step {i}\n", i - 1)
            }
        })
        .collect();
    let plan = check(&PlanSource::PlanMd {
        file: "PLAN.md".into(),
        text,
    })
    .plan;
    assert_eq!(plan.nodes.len(), 100_000);
    let drawing = export::export(&plan, GraphFormat::Ascii);
    assert_eq!(drawing.lines().count(), 100_000);
}

/// Cards as rectangles `(x, y, width, height)`.
fn cards(canvas: &str) -> Vec<(String, [i64; 4])> {
    let v: Value = serde_json::from_str(canvas).unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let at = |k: &str| n[k].as_i64().unwrap();
            (
                n["id"].as_str().unwrap().to_string(),
                [at("x"), at("y"), at("width"), at("height")],
            )
        })
        .collect()
}

fn assert_no_overlap(canvas: &str) {
    let cards = cards(canvas);
    for (i, (a, [ax, ay, aw, ah])) in cards.iter().enumerate() {
        for (b, [bx, by, bw, bh]) in &cards[i + 1..] {
            let apart = ax + aw <= *bx || bx + bw <= *ax || ay + ah <= *by || by + bh <= *ay;
            assert!(apart, "{a} and {b} overlap");
        }
    }
}

#[test]
fn canvas_cards_for_missing_notes_never_overlap() {
    // Several dangling links from one note, from neighbours in one row and
    // from the last row.
    let plan = vault(&[
        ("s", &["a", "b", "gone1", "gone2"]),
        ("a", &["gone3", "gone4", "gone5"]),
        ("b", &["c", "gone6"]),
        ("c", &["gone7"]),
    ]);
    let text = export::export(&plan, GraphFormat::Canvas);
    assert_eq!(text.matches("Missing note").count(), 7);
    assert_no_overlap(&text);
    assert_no_overlap(&export::export(&self::plan(), GraphFormat::Canvas));
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
