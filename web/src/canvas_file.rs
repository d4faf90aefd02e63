//! `plan.canvas`: node positions in a JSON Canvas 1.0 file that Obsidian's
//! Canvas opens beside the notes.
//!
//! Each note the user placed is a `file` node pointing at the note; the app
//! reads its `x`/`y` back as a pinned position. Edges are written too, so the
//! canvas shows the plan in Obsidian, but they are regenerated from the notes
//! on every write: the notes stay the source of truth for edges. Everything
//! else in the file (text cards, groups, links, the user's own edges, unknown
//! fields) is kept as it was.

use planvault_core::{NodeExt, Plan};
use planvault_layout::Point;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Edge ids this app writes start with this, so it only replaces its own.
const EDGE_PREFIX: &str = "planvault-edge-";

/// Positions by node id (a note's path without `.md`). A file that is not
/// JSON Canvas yields no positions rather than an error: the layout fills in.
pub fn positions(text: &str) -> BTreeMap<String, Point> {
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for node in doc["nodes"].as_array().into_iter().flatten() {
        if node["type"] != "file" {
            continue;
        }
        let (Some(file), Some(x), Some(y)) = (
            node["file"].as_str(),
            node["x"].as_f64(),
            node["y"].as_f64(),
        ) else {
            continue;
        };
        if let Some(id) = file.strip_suffix(".md") {
            out.insert(id.to_string(), Point { x, y });
        }
    }
    out
}

fn note_file(plan: &Plan, index: usize) -> String {
    match &plan.nodes[index].ext {
        NodeExt::Vault(v) => v.file.clone(),
        _ => format!("{}.md", plan.nodes[index].id),
    }
}

/// The canvas file with `positions` written for the plan's notes. `existing`
/// is the file as it is now (if any); what this app does not own survives.
pub fn write(
    existing: Option<&str>,
    plan: &Plan,
    positions: &BTreeMap<String, Point>,
    size: (f64, f64),
) -> String {
    let mut doc = existing
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let old_nodes: Vec<Value> = doc["nodes"].as_array().cloned().unwrap_or_default();
    let old_edges: Vec<Value> = doc["edges"].as_array().cloned().unwrap_or_default();

    let is_note_node =
        |n: &Value| n["type"] == "file" && n["file"].as_str().is_some_and(|f| f.ends_with(".md"));
    let mut nodes: Vec<Value> = old_nodes
        .iter()
        .filter(|n| !is_note_node(n))
        .cloned()
        .collect();
    // Indexed once: a plan of thousands of notes is rewritten on every move.
    let old_cards: HashMap<&str, &Value> = old_nodes
        .iter()
        .filter(|n| is_note_node(n))
        .filter_map(|n| Some((n["file"].as_str()?, n)))
        .collect();
    let mut canvas_id = BTreeMap::new();
    for (index, node) in plan.nodes.iter().enumerate() {
        let Some(p) = positions.get(&node.id) else {
            continue;
        };
        let file = note_file(plan, index);
        // Keep the card's own id, size and colour when it was there before.
        let mut entry = old_cards
            .get(file.as_str())
            .and_then(|n| n.as_object().cloned())
            .unwrap_or_else(|| {
                let mut m = Map::new();
                m.insert("id".into(), json!(format!("planvault-node-{}", node.id)));
                m.insert("type".into(), json!("file"));
                m.insert("file".into(), json!(file));
                m.insert("width".into(), json!(size.0.round() as i64));
                m.insert("height".into(), json!(size.1.round() as i64));
                m
            });
        entry.insert("x".into(), json!(p.x.round() as i64));
        entry.insert("y".into(), json!(p.y.round() as i64));
        canvas_id.insert(index, entry["id"].clone());
        nodes.push(Value::Object(entry));
    }

    let ids: HashSet<&str> = nodes.iter().filter_map(|n| n["id"].as_str()).collect();
    let mut edges: Vec<Value> = old_edges
        .into_iter()
        .filter(|e| {
            !e["id"]
                .as_str()
                .is_some_and(|id| id.starts_with(EDGE_PREFIX))
        })
        // The user's own edges stay while both their ends do.
        .filter(|e| {
            e["fromNode"].as_str().is_some_and(|id| ids.contains(id))
                && e["toNode"].as_str().is_some_and(|id| ids.contains(id))
        })
        .collect();
    for (i, edge) in plan.edges.iter().enumerate() {
        let Some(to) = edge.to else { continue };
        let (Some(from_id), Some(to_id)) = (canvas_id.get(&edge.from), canvas_id.get(&to)) else {
            continue;
        };
        let mut e = Map::new();
        e.insert("id".into(), json!(format!("{EDGE_PREFIX}{i}")));
        e.insert("fromNode".into(), from_id.clone());
        e.insert("fromSide".into(), json!("bottom"));
        e.insert("toNode".into(), to_id.clone());
        e.insert("toSide".into(), json!("top"));
        if let Some(label) = &edge.label {
            e.insert("label".into(), json!(label));
        }
        edges.push(Value::Object(e));
    }
    doc["nodes"] = Value::Array(nodes);
    doc["edges"] = Value::Array(edges);
    let mut text = serde_json::to_string_pretty(&doc).expect("canvas serialises");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::VaultDoc;

    fn plan() -> Plan {
        let mut files = BTreeMap::new();
        files.insert(
            "draft.md".to_string(),
            "---\ntype: start\n---\n# D\n\n## Next\n- go -> [[send]]\n".to_string(),
        );
        files.insert("send.md".to_string(), "# S\n".to_string());
        VaultDoc::new(files).checked.plan
    }

    #[test]
    fn positions_round_trip_and_edges_follow_the_notes() {
        let mut pos = BTreeMap::new();
        pos.insert("draft".to_string(), Point { x: 10.0, y: 20.0 });
        pos.insert("send".to_string(), Point { x: 10.0, y: 200.0 });
        let text = write(None, &plan(), &pos, (220.0, 76.0));
        assert_eq!(positions(&text), pos);
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["edges"][0]["label"], "go");
        assert_eq!(doc["nodes"][0]["file"], "draft.md");
    }

    #[test]
    fn keeps_what_it_does_not_own() {
        let existing = r#"{"nodes":[{"id":"t1","type":"text","text":"hello","x":0,"y":0,"width":10,"height":10},
            {"id":"mine","type":"file","file":"draft.md","x":1,"y":2,"width":300,"height":100,"color":"4"}],
            "edges":[{"id":"u1","fromNode":"t1","toNode":"mine"}],"extra":true}"#;
        let mut pos = BTreeMap::new();
        pos.insert("draft".to_string(), Point { x: 50.0, y: 60.0 });
        let text = write(Some(existing), &plan(), &pos, (220.0, 76.0));
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["extra"], true);
        assert_eq!(doc["nodes"][0]["text"], "hello");
        assert_eq!(doc["nodes"][1]["id"], "mine");
        assert_eq!(doc["nodes"][1]["color"], "4");
        assert_eq!(doc["nodes"][1]["x"], 50);
        assert_eq!(doc["edges"][0]["id"], "u1");
    }

    #[test]
    fn garbage_yields_no_positions() {
        assert!(positions("not json").is_empty());
        assert!(positions("{\"nodes\": 3}").is_empty());
    }
}
