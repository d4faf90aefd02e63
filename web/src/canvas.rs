//! Draws a plan on a 2D canvas: nodes as cards in layers by distance from
//! the start, edges as arrows.

use planvault_core::{Plan, Status};
use std::collections::VecDeque;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

const CARD_WIDTH: f64 = 160.0;
const CARD_HEIGHT: f64 = 48.0;
const LAYER_GAP: f64 = 220.0;
const ROW_GAP: f64 = 80.0;
const MARGIN: f64 = 24.0;

pub fn draw(canvas: &HtmlCanvasElement, plan: &Plan) {
    let Some(context) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let positions = layered_positions(plan);
    let width = positions.iter().map(|p| p.0).fold(0.0, f64::max) + CARD_WIDTH + 2.0 * MARGIN;
    let height = positions.iter().map(|p| p.1).fold(0.0, f64::max) + CARD_HEIGHT + 2.0 * MARGIN;
    canvas.set_width(width.max(320.0) as u32);
    canvas.set_height(height.max(120.0) as u32);

    context.set_fill_style_str("#fafafa");
    context.fill_rect(0.0, 0.0, canvas.width() as f64, canvas.height() as f64);
    if plan.nodes.is_empty() {
        context.set_font("15px sans-serif");
        context.set_fill_style_str("#555");
        context.fill_text("This plan has no notes yet.", MARGIN, MARGIN + 20.0).ok();
        return;
    }

    context.set_stroke_style_str("#555");
    context.set_line_width(1.5);
    for edge in &plan.edges {
        let Some(to) = edge.to else { continue };
        let (x1, y1) = positions[edge.from];
        let (x2, y2) = positions[to];
        let from = (x1 + CARD_WIDTH, y1 + CARD_HEIGHT / 2.0);
        let to = (x2, y2 + CARD_HEIGHT / 2.0);
        context.set_line_dash(&dash(edge.is_conditional())).ok();
        context.begin_path();
        context.move_to(from.0, from.1);
        context.line_to(to.0, to.1);
        context.stroke();
        context.set_line_dash(&dash(false)).ok();
        arrow_head(&context, from, to);
    }

    context.set_font("13px sans-serif");
    for (node, &(x, y)) in plan.nodes.iter().zip(&positions) {
        context.set_fill_style_str(status_colour(node.status));
        context.fill_rect(x, y, CARD_WIDTH, CARD_HEIGHT);
        context.set_stroke_style_str("#333");
        context.stroke_rect(x, y, CARD_WIDTH, CARD_HEIGHT);
        context.set_fill_style_str("#111");
        context.fill_text_with_max_width(&node.title, x + 8.0, y + 20.0, CARD_WIDTH - 16.0).ok();
        context.set_fill_style_str("#555");
        context.fill_text(node.kind.as_str(), x + 8.0, y + 38.0).ok();
    }
}

/// Layer = breadth-first distance from the start (iterative: plans can be
/// long); nodes the start never reaches go in one layer after the rest.
fn layered_positions(plan: &Plan) -> Vec<(f64, f64)> {
    let successors = plan.successors();
    let mut layer = vec![usize::MAX; plan.nodes.len()];
    let mut queue = VecDeque::new();
    if let Some(start) = plan.start.or(if plan.nodes.is_empty() { None } else { Some(0) }) {
        layer[start] = 0;
        queue.push_back(start);
    }
    while let Some(node) = queue.pop_front() {
        for &next in &successors[node] {
            if layer[next] == usize::MAX {
                layer[next] = layer[node] + 1;
                queue.push_back(next);
            }
        }
    }
    let unreached = layer.iter().filter(|&&l| l != usize::MAX).max().map_or(0, |l| l + 1);
    let mut rows = Vec::new();
    layer
        .iter()
        .map(|&l| {
            let l = if l == usize::MAX { unreached } else { l };
            if rows.len() <= l {
                rows.resize(l + 1, 0usize);
            }
            let row = rows[l];
            rows[l] += 1;
            (MARGIN + l as f64 * LAYER_GAP, MARGIN + row as f64 * ROW_GAP)
        })
        .collect()
}

fn dash(conditional: bool) -> js_sys::Array {
    let pattern = js_sys::Array::new();
    if conditional {
        pattern.push(&6.0.into());
        pattern.push(&4.0.into());
    }
    pattern
}

fn arrow_head(context: &CanvasRenderingContext2d, from: (f64, f64), to: (f64, f64)) {
    let angle = (to.1 - from.1).atan2(to.0 - from.0);
    let size = 8.0;
    context.begin_path();
    context.move_to(to.0, to.1);
    context.line_to(to.0 - size * (angle - 0.4).cos(), to.1 - size * (angle - 0.4).sin());
    context.line_to(to.0 - size * (angle + 0.4).cos(), to.1 - size * (angle + 0.4).sin());
    context.close_path();
    context.set_fill_style_str("#555");
    context.fill();
}

fn status_colour(status: Status) -> &'static str {
    match status {
        Status::Pending => "#e8eef7",
        Status::Active => "#fff1c2",
        Status::Done => "#d7f0d8",
    }
}
