//! `plan.canvas`: node positions in a JSON Canvas 1.0 file that Obsidian's
//! Canvas opens beside the notes.
//!
//! Each note the user placed is a `file` node pointing at the note by its
//! path as Obsidian keys it (composed: macOS may store a name decomposed);
//! the app reads its `x`/`y` back as a pinned position. Edges are written too, so the
//! canvas shows the plan in Obsidian, but they are regenerated from the notes
//! on every write: the notes stay the source of truth for edges. Everything
//! else in the file (text cards, groups, links, the user's own edges, unknown
//! fields) is kept as it was.

use planvault_core::vault::links::composed;
use planvault_core::{NodeExt, Plan};
use planvault_layout::Point;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Edge ids this app writes start with this, so it only replaces its own.
const EDGE_PREFIX: &str = "planvault-edge-";

/// A note's path as Obsidian keys it, and so writes it in a card:
/// composed (NFC), where macOS may have stored the name decomposed.
fn as_keyed(path: &str) -> String {
    composed(path).into_owned()
}

/// Positions by node id of the plan's notes that have a card. A file that
/// is not JSON Canvas yields no positions rather than an error: the layout
/// fills in.
pub fn positions(text: &str, plan: &Plan) -> BTreeMap<String, Point> {
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return BTreeMap::new();
    };
    let ids: HashMap<String, &str> = (0..plan.nodes.len())
        .map(|i| (as_keyed(&note_file(plan, i)), plan.nodes[i].id.as_str()))
        .collect();
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
        // A note may have several cards (Obsidian's canvas allows it): its
        // first is the one this app places.
        if let Some(&id) = ids.get(&as_keyed(file)) {
            out.entry(id.to_string()).or_insert(Point { x, y });
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

/// JSON as the file has it: an object keeps its keys in their order, so a
/// card Obsidian wrote keeps its bytes when only its `x` and `y` change.
/// (Nested at most serde_json's recursion limit deep, 128.)
#[derive(Debug, Clone)]
enum Json {
    Object(Vec<(String, Json)>),
    List(Vec<Json>),
    Scalar(Value),
}

// A key an object repeats means its last value, as `JSON.parse` (Obsidian)
// and serde_json read it, so that is the one read and the one written.
impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Json::Scalar(v) => v.as_str(),
            _ => None,
        }
    }

    /// Replaces an object's `key` where it is (its last time), or appends it.
    fn set(&mut self, key: &str, value: Value) {
        if let Json::Object(fields) = self {
            match fields.iter_mut().rev().find(|(k, _)| k == key) {
                Some((_, v)) => *v = Json::Scalar(value),
                None => fields.push((key.to_string(), Json::Scalar(value))),
            }
        }
    }

    /// On one line, as Obsidian writes a card: `{"id":"…","type":"file",…}`.
    fn compact(&self, out: &mut String) {
        match self {
            Json::Scalar(v) => out.push_str(&v.to_string()),
            Json::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.compact(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::from(k.as_str()).to_string());
                    out.push(':');
                    v.compact(out);
                }
                out.push('}');
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{MapAccess, SeqAccess, Visitor};
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Json>()? {
                    fields.push(entry);
                }
                Ok(Json::Object(fields))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Json>()? {
                    items.push(item);
                }
                Ok(Json::List(items))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Scalar(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Scalar(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Scalar(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Scalar(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Scalar(Value::from(v)))
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Scalar(Value::Null))
            }
        }
        d.deserialize_any(InOrder)
    }
}

/// The file as JSON Canvas: its `nodes` and `edges` lists, and every other
/// key in its order (a `nodes` that is not a list among them).
#[derive(Default)]
struct Canvas {
    nodes: Vec<Json>,
    edges: Vec<Json>,
    rest: Vec<(String, Json)>,
}

impl Canvas {
    fn parse(text: &str) -> Result<Canvas, String> {
        let json: Json = serde_json::from_str(text)
            .map_err(|e| format!("line {}, column {}: {e}", e.line(), e.column()))?;
        let Json::Object(fields) = json else {
            return Err("line 1, column 1: not a JSON object".into());
        };
        let mut canvas = Canvas::default();
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("nodes", Json::List(items)) => canvas.nodes = items,
                ("edges", Json::List(items)) => canvas.edges = items,
                (_, value) => canvas.rest.push((key, value)),
            }
        }
        Ok(canvas)
    }
}

/// The file in the layout Obsidian writes: tab-indented, one card or edge
/// per line, so a move changes only the lines of the cards that moved.
fn render(canvas: &Canvas) -> String {
    let list = |key: &str, entries: &[Json]| {
        let mut out = format!("\t\"{key}\":[");
        for (i, entry) in entries.iter().enumerate() {
            out.push_str(if i == 0 { "\n\t\t" } else { ",\n\t\t" });
            entry.compact(&mut out);
        }
        if !entries.is_empty() {
            out.push_str("\n\t");
        }
        out.push(']');
        out
    };
    let mut parts = vec![list("nodes", &canvas.nodes), list("edges", &canvas.edges)];
    for (key, value) in &canvas.rest {
        let mut part = format!("\t{}:", Value::from(key.as_str()));
        value.compact(&mut part);
        parts.push(part);
    }
    format!("{{\n{}\n}}", parts.join(",\n"))
}

/// The canvas file with `positions` written for the plan's notes. `existing`
/// is the file as it is now (if any); what this app does not own survives,
/// byte for byte where Obsidian wrote it. A file that is there but is not a
/// JSON object is never overwritten: the reason, with its line and column.
pub fn write(
    existing: Option<&str>,
    plan: &Plan,
    positions: &BTreeMap<String, Point>,
    size: (f64, f64),
) -> Result<String, String> {
    let old = match existing {
        Some(text) if !text.trim().is_empty() => Canvas::parse(text)?,
        _ => Canvas::default(),
    };
    let note_card = |e: &Json| {
        (e.str("type") == Some("file"))
            .then(|| e.str("file"))
            .flatten()
            .filter(|file| file.ends_with(".md"))
            .map(as_keyed)
    };
    // The plan's notes this app places (indexed once: a plan of thousands
    // of notes is rewritten on every move), and the ones it forgets. A
    // note's first card is the one placed; any later card of it is the
    // user's, kept as it is.
    let mut old_cards: HashMap<String, &Json> = HashMap::new();
    for entry in &old.nodes {
        if let Some(file) = note_card(entry) {
            old_cards.entry(file).or_insert(entry);
        }
    }
    let mut cards: HashMap<String, (usize, Json)> = HashMap::new();
    let mut plan_files: HashSet<String> = HashSet::new();
    let mut canvas_id = BTreeMap::new();
    for (index, node) in plan.nodes.iter().enumerate() {
        let file = as_keyed(&note_file(plan, index));
        plan_files.insert(file.clone());
        let Some(p) = positions.get(&node.id) else {
            continue;
        };
        // Keep the card's own id, size, colour and key order when it was there.
        let mut card = match old_cards.get(&file) {
            Some(&old) => old.clone(),
            None => Json::Object(
                [
                    ("id", json!(format!("planvault-node-{}", node.id))),
                    ("type", json!("file")),
                    ("file", json!(file)),
                    ("x", json!(0)),
                    ("y", json!(0)),
                    ("width", json!(size.0.round() as i64)),
                    ("height", json!(size.1.round() as i64)),
                ]
                .map(|(k, v)| (k.to_string(), Json::Scalar(v)))
                .into(),
            ),
        };
        card.set("x", json!(p.x.round() as i64));
        card.set("y", json!(p.y.round() as i64));
        canvas_id.insert(index, card.get("id").cloned());
        cards.insert(file, (index, card));
    }
    let mut canvas = Canvas {
        nodes: Vec::with_capacity(old.nodes.len() + cards.len()),
        edges: Vec::new(),
        rest: old.rest,
    };
    // The file's order stays (Obsidian draws later cards over earlier
    // ones); cards of notes outside the plan are the user's and stay too.
    let mut placed_files = HashSet::new();
    for entry in old.nodes {
        match note_card(&entry) {
            Some(file) if plan_files.contains(&file) && placed_files.insert(file.clone()) => {
                if let Some((_, card)) = cards.remove(&file) {
                    canvas.nodes.push(card);
                }
            }
            _ => canvas.nodes.push(entry),
        }
    }
    let mut added: Vec<(usize, Json)> = cards.into_values().collect();
    added.sort_by_key(|(index, _)| *index);
    canvas.nodes.extend(added.into_iter().map(|(_, card)| card));

    let ids: HashSet<&str> = canvas.nodes.iter().filter_map(|e| e.str("id")).collect();
    canvas.edges = old
        .edges
        .into_iter()
        .filter(|e| match e.str("id") {
            // Regenerated below from the notes.
            Some(id) if id.starts_with(EDGE_PREFIX) => false,
            // The user's own edges stay while both their ends do.
            _ if matches!(e, Json::Object(_)) => {
                e.str("fromNode").is_some_and(|id| ids.contains(id))
                    && e.str("toNode").is_some_and(|id| ids.contains(id))
            }
            _ => true,
        })
        .collect();
    for (i, edge) in plan.edges.iter().enumerate() {
        let Some(to) = edge.to else { continue };
        let (Some(Some(from_id)), Some(Some(to_id))) =
            (canvas_id.get(&edge.from), canvas_id.get(&to))
        else {
            continue;
        };
        let mut fields = vec![
            (
                "id".to_string(),
                Json::Scalar(json!(format!("{EDGE_PREFIX}{i}"))),
            ),
            ("fromNode".to_string(), from_id.clone()),
            ("fromSide".to_string(), Json::Scalar(json!("bottom"))),
            ("toNode".to_string(), to_id.clone()),
            ("toSide".to_string(), Json::Scalar(json!("top"))),
        ];
        if let Some(label) = &edge.label {
            fields.push(("label".to_string(), Json::Scalar(json!(label))));
        }
        canvas.edges.push(Json::Object(fields));
    }
    Ok(render(&canvas))
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

    fn at(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    #[test]
    fn positions_round_trip_and_edges_follow_the_notes() {
        let mut pos = BTreeMap::new();
        pos.insert("draft".to_string(), at(10.0, 20.0));
        pos.insert("send".to_string(), at(10.0, 200.0));
        let text = write(None, &plan(), &pos, (220.0, 76.0)).unwrap();
        assert_eq!(positions(&text, &plan()), pos);
        assert_eq!(
            text,
            "{\n\t\"nodes\":[\n\
             \t\t{\"id\":\"planvault-node-draft\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":10,\"y\":20,\"width\":220,\"height\":76},\n\
             \t\t{\"id\":\"planvault-node-send\",\"type\":\"file\",\"file\":\"send.md\",\"x\":10,\"y\":200,\"width\":220,\"height\":76}\n\
             \t],\n\t\"edges\":[\n\
             \t\t{\"id\":\"planvault-edge-0\",\"fromNode\":\"planvault-node-draft\",\"fromSide\":\"bottom\",\"toNode\":\"planvault-node-send\",\"toSide\":\"top\",\"label\":\"go\"}\n\
             \t]\n}",
            "Obsidian's layout: tabs, a card per line, keys in its order"
        );
    }

    /// A canvas as Obsidian saves it, with the user's own cards and edge.
    const OBSIDIAN: &str = "{\n\
        \t\"nodes\":[\n\
        \t\t{\"id\":\"8132d4d894c80022\",\"type\":\"file\",\"file\":\"readme.md\",\"x\":-280,\"y\":-200,\"width\":570,\"height\":560,\"color\":\"6\"},\n\
        \t\t{\"id\":\"59e896bc8da20699\",\"type\":\"text\",\"text\":\"Learn more:\\n\\n- [[draft]]\",\"x\":40,\"y\":-440,\"width\":250,\"height\":160},\n\
        \t\t{\"id\":\"a1\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":1,\"y\":2,\"width\":300,\"height\":100,\"color\":\"4\"},\n\
        \t\t{\"id\":\"a2\",\"type\":\"file\",\"file\":\"send.md\",\"x\":1,\"y\":200,\"width\":300,\"height\":100}\n\
        \t],\n\
        \t\"edges\":[\n\
        \t\t{\"id\":\"6fa11ab87f90b8af\",\"fromNode\":\"8132d4d894c80022\",\"fromSide\":\"right\",\"toNode\":\"59e896bc8da20699\",\"toSide\":\"left\"},\n\
        \t\t{\"id\":\"planvault-edge-0\",\"fromNode\":\"a1\",\"fromSide\":\"bottom\",\"toNode\":\"a2\",\"toSide\":\"top\",\"label\":\"go\"}\n\
        \t]\n\
        }";

    /// Obsidian's canvas may show a note twice: a move places its first
    /// card, and the second, with the user's edge to the first, stays.
    #[test]
    fn a_second_card_of_a_note_and_the_user_s_edges_survive_a_move() {
        let two = "{\n\t\"nodes\":[\n\
            \t\t{\"id\":\"c1\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":0,\"y\":0},\n\
            \t\t{\"id\":\"c2\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":9,\"y\":9},\n\
            \t\t{\"id\":\"t\",\"type\":\"text\",\"text\":\"x\",\"x\":0,\"y\":0}\n\
            \t],\n\t\"edges\":[\n\
            \t\t{\"id\":\"u1\",\"fromNode\":\"t\",\"toNode\":\"c1\"}\n\
            \t]\n}";
        let mut pos = positions(two, &plan());
        assert_eq!(
            pos.get("draft"),
            Some(&at(0.0, 0.0)),
            "the first card's place"
        );
        pos.insert("draft".to_string(), at(50.0, 60.0));
        let text = write(Some(two), &plan(), &pos, (220.0, 76.0)).unwrap();
        assert!(
            text.contains(
                "{\"id\":\"c1\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":50,\"y\":60}"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "{\"id\":\"c2\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":9,\"y\":9}"
            ),
            "{text}"
        );
        assert!(
            text.contains("{\"id\":\"u1\",\"fromNode\":\"t\",\"toNode\":\"c1\"}"),
            "{text}"
        );
        assert_eq!(
            positions(&text, &plan()).get("draft"),
            Some(&at(50.0, 60.0))
        );
    }

    /// A card that repeats a key is read by its last value, as Obsidian
    /// reads it, and a move writes there; the earlier value, which nothing
    /// reads, keeps its bytes.
    #[test]
    fn a_repeated_key_is_read_and_written_where_obsidian_reads_it() {
        let repeated = "{\n\t\"nodes\":[\n\
            \t\t{\"id\":\"c1\",\"type\":\"text\",\"type\":\"file\",\"file\":\"send.md\",\"file\":\"draft.md\",\"x\":0,\"y\":0,\"x\":5}\n\
            \t],\n\t\"edges\":[]\n}";
        let mut pos = positions(repeated, &plan());
        assert_eq!(pos.get("draft"), Some(&at(5.0, 0.0)));
        assert_eq!(pos.get("send"), None);
        pos.insert("draft".to_string(), at(50.0, 60.0));
        pos.insert("send".to_string(), at(0.0, 300.0));
        let text = write(Some(repeated), &plan(), &pos, (220.0, 76.0)).unwrap();
        assert!(
            text.contains("{\"id\":\"c1\",\"type\":\"text\",\"type\":\"file\",\"file\":\"send.md\",\"file\":\"draft.md\",\"x\":0,\"y\":60,\"x\":50}"),
            "{text}"
        );
        let read = positions(&text, &plan());
        assert_eq!(read.get("draft"), Some(&at(50.0, 60.0)));
        assert_eq!(
            read.get("send"),
            Some(&at(0.0, 300.0)),
            "send gets its own card"
        );
    }

    #[test]
    fn a_move_changes_only_the_moved_cards_line() {
        let mut pos = positions(OBSIDIAN, &plan());
        assert_eq!(pos.len(), 2, "the plan's notes only: {pos:?}");
        pos.insert("draft".to_string(), at(50.0, 60.0));
        let text = write(Some(OBSIDIAN), &plan(), &pos, (220.0, 76.0)).unwrap();
        let changed: Vec<(&str, &str)> = OBSIDIAN
            .lines()
            .zip(text.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(
            changed,
            [(
                "\t\t{\"id\":\"a1\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":1,\"y\":2,\"width\":300,\"height\":100,\"color\":\"4\"},",
                "\t\t{\"id\":\"a1\",\"type\":\"file\",\"file\":\"draft.md\",\"x\":50,\"y\":60,\"width\":300,\"height\":100,\"color\":\"4\"},"
            )]
        );
        assert_eq!(text.lines().count(), OBSIDIAN.lines().count());
        // Written again unmoved, the file is the same bytes.
        assert_eq!(
            write(Some(&text), &plan(), &pos, (220.0, 76.0)).unwrap(),
            text
        );
    }

    #[test]
    fn keeps_what_it_does_not_own() {
        let existing = r#"{"nodes":[{"id":"t1","type":"text","text":"hello","x":0,"y":0,"width":10,"height":10},
            {"id":"mine","type":"file","file":"draft.md","x":1,"y":2,"width":300,"height":100,"color":"4"},
            {"id":"other","type":"file","file":"ideas.md","x":9,"y":9,"width":10,"height":10}, 7],
            "edges":[{"id":"u1","fromNode":"t1","toNode":"mine"}],"extra":{"b":1,"a":[true]}}"#;
        let mut pos = BTreeMap::new();
        pos.insert("draft".to_string(), at(50.0, 60.0));
        let text = write(Some(existing), &plan(), &pos, (220.0, 76.0)).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["extra"], json!({"b": 1, "a": [true]}));
        assert_eq!(doc["nodes"][0]["text"], "hello");
        assert_eq!(doc["nodes"][1]["id"], "mine");
        assert_eq!(doc["nodes"][1]["color"], "4");
        assert_eq!(doc["nodes"][1]["x"], 50);
        assert_eq!(
            doc["nodes"][2]["file"], "ideas.md",
            "a card of a note outside the plan stays"
        );
        assert_eq!(doc["nodes"][3], 7);
        assert_eq!(doc["edges"][0]["id"], "u1");
        // Forgetting every position drops only the plan's cards.
        let reset = write(Some(&text), &plan(), &BTreeMap::new(), (220.0, 76.0)).unwrap();
        let doc: Value = serde_json::from_str(&reset).unwrap();
        let files: Vec<&str> = doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n["file"].as_str())
            .collect();
        assert_eq!(files, ["ideas.md"]);
    }

    /// A file that is not JSON (a merge's conflict markers, a hand edit
    /// gone wrong) is never overwritten: the user's cards are in it.
    #[test]
    fn a_file_that_is_not_json_canvas_is_not_overwritten() {
        let mut pos = BTreeMap::new();
        pos.insert("draft".to_string(), at(5.0, 5.0));
        for broken in [
            "<<<<<<< HEAD\n{\"nodes\":[]}\n=======\n",
            "[1, 2]",
            "{\"nodes\":[{\"id\":",
        ] {
            let err = write(Some(broken), &plan(), &pos, (220.0, 76.0)).unwrap_err();
            assert!(err.starts_with("line "), "{broken:?}: {err}");
        }
        assert!(write(Some("  \n"), &plan(), &pos, (220.0, 76.0)).is_ok());
    }

    /// A note macOS stored decomposed (`Cafe\u{301}.md`, as Korean names
    /// mostly are there): Obsidian keys its path composed, and writes its
    /// card so. The card is that note's: read as its place, moved in
    /// place, never a second card beside it; a new card names it composed.
    #[test]
    fn a_decomposed_note_name_is_the_card_obsidian_wrote_composed() {
        let mut files = BTreeMap::new();
        files.insert(
            "Cafe\u{301}.md".to_string(),
            "---\ntype: start\n---\n# C\n\n## Next\n- go -> [[send]]\n".to_string(),
        );
        files.insert("\u{1100}\u{1161}.md".to_string(), "# K\n".to_string());
        files.insert("send.md".to_string(), "# S\n".to_string());
        let plan = VaultDoc::new(files).checked.plan;
        let obsidian = "{\n\t\"nodes\":[\n\
            \t\t{\"id\":\"c1\",\"type\":\"file\",\"file\":\"Caf\u{e9}.md\",\"x\":10,\"y\":20,\"width\":300,\"height\":100}\n\
            \t],\n\t\"edges\":[]\n}";
        let mut pos = positions(obsidian, &plan);
        assert_eq!(pos.get("Cafe\u{301}"), Some(&at(10.0, 20.0)), "{pos:?}");
        pos.insert("Cafe\u{301}".to_string(), at(50.0, 60.0));
        pos.insert("\u{1100}\u{1161}".to_string(), at(0.0, 300.0));
        pos.insert("send".to_string(), at(0.0, 600.0));
        let text = write(Some(obsidian), &plan, &pos, (220.0, 76.0)).unwrap();
        assert!(
            text.contains(
                "{\"id\":\"c1\",\"type\":\"file\",\"file\":\"Caf\u{e9}.md\",\"x\":50,\"y\":60,"
            ),
            "{text}"
        );
        assert!(!text.contains("Cafe\u{301}"), "no second card: {text}");
        assert!(
            text.contains("\"file\":\"\u{ac00}.md\""),
            "a new card names the note composed: {text}"
        );
        assert!(
            text.contains("\"fromNode\":\"c1\""),
            "the edge leaves Obsidian's card: {text}"
        );
        assert_eq!(positions(&text, &plan), pos);
    }

    #[test]
    fn garbage_yields_no_positions() {
        assert!(positions("not json", &plan()).is_empty());
        assert!(positions("{\"nodes\": 3}", &plan()).is_empty());
    }
}
