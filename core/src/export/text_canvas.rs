//! A JSON Canvas 1.0 document of text nodes, laid out in layers: what the
//! single-file formats (PLAN.md, generated plans) draw for `graph --canvas`,
//! where there is no note per node for a file node to point at.

use serde::Serialize;

const WIDTH: i64 = 360;
const HEIGHT: i64 = 200;
const GAP_X: i64 = 60;
const GAP_Y: i64 = 100;
/// Canvas colour "1" (red): a placeholder for a route target that does not exist.
pub(crate) const MISSING_COLOR: &str = "1";
/// Canvas colour "4" (green): a node already done.
pub(crate) const DONE_COLOR: &str = "4";

/// One card: its text (markdown), its layer, an optional colour.
pub(crate) struct Card {
    pub id: String,
    pub text: String,
    pub layer: usize,
    pub color: Option<&'static str>,
}

/// One arrow between two cards, optionally labeled.
pub(crate) struct Arrow {
    pub from: String,
    pub to: String,
    pub label: Option<String>,
}

/// A JSON Canvas 1.0 document: the one schema both canvas exporters write.
#[derive(Serialize)]
pub(crate) struct Canvas {
    pub nodes: Vec<CanvasNode>,
    pub edges: Vec<CanvasEdge>,
}

/// A canvas node: a `file` node points at a note, a `text` node carries text.
#[derive(Serialize)]
pub(crate) struct CanvasNode {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CanvasEdge {
    pub id: String,
    pub from_node: String,
    pub from_side: &'static str,
    pub to_node: String,
    pub to_side: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Cards top to bottom by layer, left to right in the order given.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn render(cards: Vec<Card>, arrows: Vec<Arrow>) -> String {
    let mut per_layer: Vec<i64> = Vec::new();
    let nodes = cards
        .into_iter()
        .map(|card| {
            if per_layer.len() <= card.layer {
                per_layer.resize(card.layer + 1, 0);
            }
            let column = per_layer[card.layer];
            per_layer[card.layer] += 1;
            CanvasNode {
                id: card.id,
                kind: "text",
                file: None,
                text: Some(card.text),
                x: column * (WIDTH + GAP_X),
                y: card.layer as i64 * (HEIGHT + GAP_Y),
                width: WIDTH,
                height: HEIGHT,
                color: card.color,
            }
        })
        .collect();
    let edges = arrows
        .into_iter()
        .enumerate()
        .map(|(i, a)| CanvasEdge {
            id: format!("e{}", i + 1),
            from_node: a.from,
            from_side: "bottom",
            to_node: a.to,
            to_side: "top",
            label: a.label,
        })
        .collect();
    let mut out =
        serde_json::to_string_pretty(&Canvas { nodes, edges }).expect("canvas serializes");
    out.push('\n');
    out
}
