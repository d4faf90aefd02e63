//! Draws a [`Scene`] on a 2D canvas: cards, arrows, labels, the drag
//! previews and the minimap. Only what intersects the view is drawn, and at
//! small zoom cards lose their text (level of detail), so big plans stay
//! smooth. Shapes come from the scene unchanged, so what is drawn is what
//! hit-testing tests.

use crate::doc::FolderGroup;
use crate::geometry::{
    breakpoint_center, EdgeShape, Scene, Viewport, BREAKPOINT_RADIUS, DETAIL_ZOOM, HANDLE_RADIUS,
    LABEL_FONT,
};
use crate::run::Overlay;
use crate::theme::Palette;
use planvault_core::{NodeKind, Status};
use planvault_layout::{Point, Rect};
use web_sys::CanvasRenderingContext2d as Ctx;

/// A drag in progress, drawn over the scene.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Preview {
    #[default]
    None,
    /// A new edge from a card's handle to the pointer (snapped to `target`).
    Connect {
        from: usize,
        to: Point,
        target: Option<usize>,
    },
    /// An edge's head dragged to the pointer.
    Retarget {
        edge: usize,
        to: Point,
        target: Option<usize>,
    },
    Marquee(Rect),
}

/// Per node, what the diagnostics say about it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Badge {
    pub errors: u32,
    pub warnings: u32,
}

/// One node's text and state as the card shows it.
#[derive(Debug, Clone)]
pub struct Card {
    pub title: String,
    pub kind: NodeKind,
    pub status: Status,
    pub start: bool,
    pub badge: Badge,
}

pub struct Frame<'a> {
    pub scene: &'a Scene,
    pub cards: &'a [Card],
    pub viewport: Viewport,
    pub selected: &'a [usize],
    pub selected_edge: Option<usize>,
    /// Keyboard focus (drawn as a focus ring).
    pub focused: Option<usize>,
    pub hovered: Option<usize>,
    pub preview: &'a Preview,
    pub device_pixel_ratio: f64,
    /// Edges whose source has a diagnostic about it, drawn in red.
    pub flagged_edges: &'a [usize],
    /// Where the minimap is drawn (`geometry::minimap_place`), if anywhere.
    pub minimap: Option<Rect>,
    /// Nodes in the order their titles are given room when zoomed out
    /// (`Open::landmarks`).
    pub landmarks: &'a [usize],
    /// The folders the plan's notes are spread over (`VaultDoc::folder_groups`),
    /// drawn as labelled regions when zoomed out.
    pub groups: &'a [FolderGroup],
    /// The plan run, when there is one to show.
    pub run: RunFrame<'a>,
}

/// What a zoomed-out frame found room for (nothing at reading zoom).
#[derive(Debug, Default)]
pub struct Overview {
    /// The nodes whose titles were drawn.
    pub titled: Vec<usize>,
    /// The folder regions drawn: index in `Frame::groups`, whether its
    /// label had room, its area (world units).
    pub groups: Vec<(usize, bool, Rect)>,
}

/// What a run adds to the drawing.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunFrame<'a> {
    pub overlay: Option<&'a Overlay>,
    /// Nodes with a breakpoint (a red dot on the card).
    pub breakpoints: &'a [usize],
    /// How far the last hop's marker has travelled (0 to 1) while it animates.
    pub hop_progress: Option<f64>,
}

/// The world → minimap (at `area` on the screen) mapping: scale and the
/// world point at its corner.
fn minimap_transform(scene: &Scene, viewport: &Viewport, area: Rect) -> (f64, Point, Rect) {
    let world = crate::geometry::union(scene.bounds, viewport.visible());
    let scale = ((area.width - 8.0) / world.width.max(1.0))
        .min((area.height - 8.0) / world.height.max(1.0));
    (
        scale,
        Point {
            x: world.x,
            y: world.y,
        },
        area,
    )
}

/// The world point a click at `screen` on the minimap at `area` means.
pub fn minimap_to_world(scene: &Scene, viewport: &Viewport, area: Rect, screen: Point) -> Point {
    let (scale, origin, area) = minimap_transform(scene, viewport, area);
    Point {
        x: (screen.x - area.x - 4.0) / scale + origin.x,
        y: (screen.y - area.y - 4.0) / scale + origin.y,
    }
}

fn status_colour(status: Status) -> &'static str {
    let p = pal();
    match status {
        Status::Pending => p.pending,
        Status::Active => p.active,
        Status::Done => p.done,
        Status::Failed => p.failed,
    }
}

/// The colours of the theme shown (light or dark).
fn pal() -> &'static Palette {
    crate::theme::palette()
}

/// Draws one frame; returns what the overview drew (nothing at reading
/// zoom, where every visible card has its text).
pub fn draw(ctx: &Ctx, frame: &Frame<'_>) -> Overview {
    let v = frame.viewport;
    let dpr = frame.device_pixel_ratio;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.set_fill_style_str(pal().background);
    ctx.fill_rect(0.0, 0.0, v.width, v.height);
    let _ = ctx.set_transform(
        dpr * v.zoom,
        0.0,
        0.0,
        dpr * v.zoom,
        -v.offset.x * v.zoom * dpr,
        -v.offset.y * v.zoom * dpr,
    );

    let visible = v.visible();
    // The folder regions in view, worked out once for both passes.
    let groups = if v.zoom < DETAIL_ZOOM {
        group_areas(frame, visible)
    } else {
        Vec::new()
    };
    if v.zoom >= DETAIL_ZOOM {
        for shape in frame.scene.edges_in(visible) {
            draw_edge(ctx, frame, shape);
        }
        for i in frame.scene.nodes_in(visible) {
            draw_card(ctx, frame, i);
        }
    } else {
        draw_groups(ctx, frame, &groups);
        draw_overview(ctx, frame, visible);
    }
    draw_run(ctx, frame);
    draw_preview(ctx, frame);

    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    let overview = if v.zoom < DETAIL_ZOOM {
        let mut placed = Vec::new();
        let groups = draw_group_labels(ctx, frame, &groups, &mut placed);
        let titled = draw_overview_titles(ctx, frame, visible, placed);
        Overview { titled, groups }
    } else {
        Overview::default()
    };
    if let Some(area) = frame.minimap {
        draw_minimap(ctx, frame, area);
    }
    draw_run_banner(ctx, frame);
    overview
}

/// The regions of the folders in view, by index in `Frame::groups`: round
/// each one's cards, with room for its label above them. The room is in
/// screen pixels but never more than the layout leaves between two
/// folders' blocks ([`Options::folder_gaps`](planvault_layout::Options::folder_gaps)),
/// so neighbouring regions never overlap however far out the view is;
/// there the label sits over the region's first cards.
fn group_areas(frame: &Frame<'_>, visible: Rect) -> Vec<(usize, Rect)> {
    let px = 1.0 / frame.viewport.zoom;
    let o = crate::doc::layout_options();
    let gaps = o.folder_gaps();
    let pad_x = (10.0 * px).min((o.node_width + o.node_gap) / 4.0);
    let pad_y = (10.0 * px).min((o.node_height + o.layer_gap) / 4.0);
    let above = ((GROUP_FONT + 10.0) * px).min(gaps.y - 2.0 * pad_y);
    frame
        .groups
        .iter()
        .enumerate()
        .filter_map(|(k, group)| {
            let cards = group
                .nodes
                .iter()
                .filter_map(|&i| frame.scene.nodes.get(i).copied())
                .reduce(crate::geometry::union)?;
            let area = Rect {
                x: cards.x - pad_x,
                y: cards.y - pad_y - above,
                width: cards.width + 2.0 * pad_x,
                height: cards.height + 2.0 * pad_y + above,
            };
            crate::geometry::intersects(&area, &visible).then_some((k, area))
        })
        .collect()
}

/// The screen size of a folder's label.
const GROUP_FONT: f64 = 13.0;

/// Zoomed out, the folders the notes are spread over: a tinted region
/// round each one's cards (two tints taking turns, so neighbours differ),
/// under the edges and cards.
fn draw_groups(ctx: &Ctx, frame: &Frame<'_>, areas: &[(usize, Rect)]) {
    ctx.set_line_width(1.0 / frame.viewport.zoom);
    for &(k, area) in areas {
        ctx.set_fill_style_str(pal().group_fill[k % 2]);
        ctx.fill_rect(area.x, area.y, area.width, area.height);
        ctx.set_stroke_style_str(pal().group_border);
        ctx.stroke_rect(area.x, area.y, area.width, area.height);
    }
}

/// Each visible folder region's name and size at its top-left corner, in
/// screen pixels, before any title (titles go where these left room).
fn draw_group_labels(
    ctx: &Ctx,
    frame: &Frame<'_>,
    areas: &[(usize, Rect)],
    placed: &mut Vec<Rect>,
) -> Vec<(usize, bool, Rect)> {
    let v = frame.viewport;
    ctx.set_font(&format!("700 {GROUP_FONT}px system-ui, sans-serif"));
    ctx.set_text_align("left");
    ctx.set_text_baseline("middle");
    let mut drawn = Vec::new();
    for &(k, area) in areas {
        let group = &frame.groups[k];
        let notes = group.nodes.len();
        let text = format!(
            "{}/ · {notes} note{}",
            group.name,
            if notes == 1 { "" } else { "s" }
        );
        let corner = v.to_screen(Point {
            x: area.x,
            y: area.y,
        });
        // Kept on screen when the region's corner is scrolled off.
        let at = Point {
            x: corner.x.max(4.0),
            y: corner.y.max(4.0),
        };
        let width = ctx
            .measure_text(&text)
            .map_or(text.len() as f64 * 7.5, |m| m.width())
            + 10.0;
        let height = GROUP_FONT + 6.0;
        // At the corner, else a line lower inside the region (a narrow
        // neighbour's label may reach over this corner when zoomed far out).
        let bottom = corner.y + area.height * v.zoom;
        let spot = [0.0, height + 2.0]
            .into_iter()
            .filter(|down| *down == 0.0 || at.y + 2.0 + down + height <= bottom)
            .map(|down| Rect {
                x: at.x + 2.0,
                y: at.y + 2.0 + down,
                width,
                height,
            })
            .find(|label| {
                placed
                    .iter()
                    .all(|p| !crate::geometry::intersects(p, label))
            });
        let room = spot.is_some();
        if let Some(label) = spot {
            placed.push(label);
            ctx.set_fill_style_str(pal().label);
            ctx.fill_rect(label.x, label.y, label.width, label.height);
            ctx.set_fill_style_str(pal().text);
            let _ = ctx.fill_text(&text, label.x + 5.0, label.y + label.height / 2.0 + 0.5);
        }
        drawn.push((k, room, area));
    }
    drawn
}

/// The run over the plan: the taken edge (with a marker travelling along it
/// while it animates), a ring round the active node, visit counts, the
/// node waiting for a person, breakpoints.
fn draw_run(ctx: &Ctx, frame: &Frame<'_>) {
    let px = 1.0 / frame.viewport.zoom;
    for &i in frame.run.breakpoints {
        let Some(r) = frame.scene.nodes.get(i) else {
            continue;
        };
        let c = breakpoint_center(r);
        ctx.set_fill_style_str(pal().breakpoint);
        ctx.begin_path();
        let _ = ctx.arc(
            c.x,
            c.y,
            BREAKPOINT_RADIUS.max(3.0 * px),
            0.0,
            std::f64::consts::TAU,
        );
        ctx.fill();
    }
    let Some(o) = frame.run.overlay else { return };
    dash(ctx, &[]);
    if let Some(shape) = o.hop.and_then(|(e, _)| frame.scene.shape_of_edge(e)) {
        ctx.set_stroke_style_str(pal().hop);
        ctx.set_fill_style_str(pal().hop);
        ctx.set_line_width(4.0_f64.max(2.0 * px));
        polyline(ctx, &shape.points);
        let n = shape.points.len();
        arrow_head(ctx, shape.points[n - 2], shape.points[n - 1], 13.0);
        if let Some(t) = frame.run.hop_progress {
            let p = shape.point_along(t);
            ctx.begin_path();
            let _ = ctx.arc(p.x, p.y, 8.0_f64.max(4.0 * px), 0.0, std::f64::consts::TAU);
            ctx.fill();
        }
    }
    let ring = |i: usize, colour: &str, pattern: &[f64]| {
        if let Some(r) = frame.scene.nodes.get(i) {
            ctx.set_stroke_style_str(colour);
            ctx.set_line_width(4.0_f64.max(2.0 * px));
            dash(ctx, pattern);
            ctx.stroke_rect(r.x - 6.0, r.y - 6.0, r.width + 12.0, r.height + 12.0);
            dash(ctx, &[]);
        }
    };
    if let Some(i) = o.active {
        ring(i, pal().active_ring, &[]);
    }
    if let Some(i) = o.asking {
        ring(i, pal().asking, &[6.0, 4.0]);
    }
    if frame.viewport.zoom < DETAIL_ZOOM {
        return;
    }
    for (i, &visits) in o.visits.iter().enumerate() {
        let Some(r) = frame.scene.nodes.get(i) else {
            continue;
        };
        if visits == 0 {
            continue;
        }
        let (x, y) = (r.x + r.width - 20.0, r.y + r.height - 14.0);
        ctx.set_fill_style_str(pal().visits);
        ctx.fill_rect(x - 16.0, y - 9.0, 32.0, 18.0);
        ctx.set_fill_style_str(pal().on_badge);
        ctx.set_font("bold 12px system-ui, sans-serif");
        ctx.set_text_align("center");
        ctx.set_text_baseline("middle");
        let _ = ctx.fill_text(&format!("×{visits}"), x, y + 0.5);
    }
}

/// The run's end, said on the canvas: completed, or why it stopped.
fn draw_run_banner(ctx: &Ctx, frame: &Frame<'_>) {
    let Some(text) = frame.run.overlay.and_then(|o| o.stopped.as_ref()) else {
        return;
    };
    let (colour, text) = if text == "completed" {
        (pal().hop, "Run completed".to_string())
    } else {
        (pal().flagged, crate::run::capitalized(text))
    };
    ctx.set_font("600 13px system-ui, sans-serif");
    let width = ctx
        .measure_text(&text)
        .map_or(300.0, |m| m.width())
        .min(frame.viewport.width - 40.0)
        + 20.0;
    ctx.set_fill_style_str(pal().overlay);
    ctx.fill_rect(12.0, 12.0, width, 28.0);
    ctx.set_stroke_style_str(colour);
    ctx.set_line_width(2.0);
    ctx.stroke_rect(12.0, 12.0, width, 28.0);
    ctx.set_fill_style_str(colour);
    ctx.set_text_align("left");
    ctx.set_text_baseline("middle");
    let _ = ctx.fill_text_with_max_width(&text, 22.0, 26.5, width - 20.0);
}

/// Zoomed out, cards are a few pixels wide: draw them and the edges in a
/// handful of batched paths (one per colour) instead of one call per shape,
/// so thousands of nodes stay smooth. Selection, focus and badges still show.
fn draw_overview(ctx: &Ctx, frame: &Frame<'_>, visible: Rect) {
    let px = 1.0 / frame.viewport.zoom;
    dash(ctx, &[]);
    for (conditional, colour) in [(false, pal().edge), (true, pal().conditional)] {
        ctx.begin_path();
        for shape in frame
            .scene
            .edges_in(visible)
            .filter(|e| e.conditional == conditional)
        {
            ctx.move_to(shape.points[0].x, shape.points[0].y);
            for p in &shape.points[1..] {
                ctx.line_to(p.x, p.y);
            }
        }
        ctx.set_stroke_style_str(colour);
        ctx.set_line_width(px);
        ctx.stroke();
    }
    if let Some(shape) = frame
        .selected_edge
        .and_then(|e| frame.scene.shape_of_edge(e))
    {
        ctx.set_stroke_style_str(pal().select);
        ctx.set_line_width(3.0 * px);
        polyline(ctx, &shape.points);
    }
    let nodes: Vec<usize> = frame.scene.nodes_in(visible).collect();
    for status in Status::ALL {
        ctx.begin_path();
        for &i in nodes.iter().filter(|&&i| frame.cards[i].status == status) {
            let r = frame.scene.nodes[i];
            ctx.rect(r.x, r.y, r.width, r.height);
        }
        ctx.set_fill_style_str(status_colour(status));
        ctx.fill();
    }
    ctx.begin_path();
    for &i in nodes.iter().filter(|&&i| frame.cards[i].badge.errors > 0) {
        let r = frame.scene.nodes[i];
        ctx.rect(r.x + r.width * 0.75, r.y, r.width * 0.25, r.height * 0.4);
    }
    ctx.set_fill_style_str(pal().flagged);
    ctx.fill();
    ctx.set_line_width(3.0 * px);
    ctx.set_stroke_style_str(pal().select);
    for &i in frame.selected {
        if let Some(r) = frame.scene.nodes.get(i) {
            ctx.stroke_rect(r.x, r.y, r.width, r.height);
        }
    }
    if let Some(r) = frame.focused.and_then(|i| frame.scene.nodes.get(i)) {
        ctx.set_stroke_style_str(pal().text);
        ctx.stroke_rect(
            r.x - 4.0 * px,
            r.y - 4.0 * px,
            r.width + 8.0 * px,
            r.height + 8.0 * px,
        );
    }
}

/// Most titles a zoomed-out frame draws, and their screen font.
const OVERVIEW_TITLES: usize = 80;
const OVERVIEW_FONT: f64 = 12.0;
const OVERVIEW_CHAR: f64 = 6.4;
const OVERVIEW_CHARS: usize = 28;

/// The nodes whose titles a zoomed-out frame gives room first: what the
/// person and the run point at (selected, focused, active, asking, failed).
fn overview_first(frame: &Frame<'_>) -> Vec<usize> {
    let run = frame.run.overlay;
    let mut first: Vec<usize> = frame.selected.to_vec();
    first.extend(frame.focused);
    first.extend(run.and_then(|o| o.active));
    first.extend(run.and_then(|o| o.asking));
    first.extend(run.and_then(|o| o.failed.as_ref().map(|(i, _)| *i)));
    let mut seen = Vec::with_capacity(first.len());
    first.retain(|i| {
        let new = !seen.contains(i);
        seen.push(*i);
        new
    });
    first
}

/// Zoomed out, a card is too small for its text: titles are drawn at a
/// readable screen size on the cards that have room for one (first what
/// is selected, focused or running, then landmarks: the start, cards with
/// errors, the most linked), never over another title, so the overview
/// reads as a map. Drawn in screen pixels.
fn draw_overview_titles(
    ctx: &Ctx,
    frame: &Frame<'_>,
    visible: Rect,
    mut placed: Vec<Rect>,
) -> Vec<usize> {
    let v = frame.viewport;
    ctx.set_font(&format!("600 {OVERVIEW_FONT}px system-ui, sans-serif"));
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    let first = overview_first(frame);
    let order = first
        .iter()
        .chain(frame.landmarks.iter().filter(|i| !first.contains(*i)));
    let mut titled = Vec::with_capacity(OVERVIEW_TITLES);
    for &i in order {
        if titled.len() == OVERVIEW_TITLES {
            break;
        }
        let Some(r) = frame.scene.nodes.get(i) else {
            continue;
        };
        if !crate::geometry::intersects(r, &visible) {
            continue;
        }
        let title = &frame.cards[i].title;
        let chars = title.chars().count().min(OVERVIEW_CHARS);
        let (w, h) = (chars as f64 * OVERVIEW_CHAR + 8.0, OVERVIEW_FONT + 6.0);
        let c = v.to_screen(r.center());
        let label = Rect {
            x: c.x - w / 2.0,
            y: c.y - h / 2.0,
            width: w,
            height: h,
        };
        let room = Rect {
            x: label.x - 4.0,
            y: label.y - 2.0,
            width: label.width + 8.0,
            height: label.height + 4.0,
        };
        if placed.iter().any(|p| crate::geometry::intersects(p, &room)) {
            continue;
        }
        placed.push(room);
        titled.push(i);
        ctx.set_fill_style_str(pal().label);
        ctx.fill_rect(label.x, label.y, label.width, label.height);
        if first.contains(&i) {
            ctx.set_stroke_style_str(pal().select);
            ctx.set_line_width(1.5);
            ctx.stroke_rect(label.x, label.y, label.width, label.height);
        }
        ctx.set_fill_style_str(pal().text);
        let _ = ctx.fill_text_with_max_width(title, c.x, c.y + 0.5, w - 6.0);
    }
    titled
}

fn polyline(ctx: &Ctx, points: &[Point]) {
    ctx.begin_path();
    ctx.move_to(points[0].x, points[0].y);
    for p in &points[1..] {
        ctx.line_to(p.x, p.y);
    }
    ctx.stroke();
}

fn arrow_head(ctx: &Ctx, from: Point, to: Point, size: f64) {
    let [left, right] = crate::geometry::arrow_corners(from, to, size);
    ctx.begin_path();
    ctx.move_to(to.x, to.y);
    ctx.line_to(left.x, left.y);
    ctx.line_to(right.x, right.y);
    ctx.close_path();
    ctx.fill();
}

fn dash(ctx: &Ctx, pattern: &[f64]) {
    let array = js_sys::Array::new();
    for d in pattern {
        array.push(&(*d).into());
    }
    let _ = ctx.set_line_dash(&array);
}

fn draw_edge(ctx: &Ctx, frame: &Frame<'_>, shape: &EdgeShape) {
    let selected = frame.selected_edge == Some(shape.edge);
    let flagged = shape.dangling || frame.flagged_edges.contains(&shape.edge);
    let colour = if selected {
        pal().select
    } else if flagged {
        pal().flagged
    } else if shape.conditional {
        pal().conditional
    } else {
        pal().edge
    };
    ctx.set_stroke_style_str(colour);
    ctx.set_fill_style_str(colour);
    ctx.set_line_width(if selected { 3.0 } else { 1.6 });
    // Conditional edges are dashed, unconditional ones solid; loops back
    // get a dotted line so a reader tells them from the forward flow.
    if shape.dangling {
        dash(ctx, &[3.0, 3.0]);
    } else if shape.back || shape.self_loop {
        dash(ctx, &[2.0, 4.0]);
    } else if shape.conditional {
        dash(ctx, &[8.0, 5.0]);
    } else {
        dash(ctx, &[]);
    }
    polyline(ctx, &shape.points);
    dash(ctx, &[]);
    let n = shape.points.len();
    arrow_head(ctx, shape.points[n - 2], shape.points[n - 1], 11.0);
    if selected {
        // The head is draggable: show where to grab it.
        ctx.begin_path();
        let head = shape.head();
        let _ = ctx.arc(head.x, head.y, 6.0, 0.0, std::f64::consts::TAU);
        ctx.stroke();
    }
    if let (Some(label), Some(b)) = (&shape.label, shape.label_box) {
        ctx.set_fill_style_str(pal().label);
        ctx.fill_rect(b.x, b.y, b.width, b.height);
        ctx.set_line_width(1.0);
        ctx.stroke_rect(b.x, b.y, b.width, b.height);
        ctx.set_fill_style_str(colour);
        ctx.set_font(&format!("{LABEL_FONT}px system-ui, sans-serif"));
        ctx.set_text_align("center");
        ctx.set_text_baseline("middle");
        let _ = ctx.fill_text_with_max_width(
            label,
            b.x + b.width / 2.0,
            b.y + b.height / 2.0 + 0.5,
            b.width - 4.0,
        );
    }
}

fn draw_card(ctx: &Ctx, frame: &Frame<'_>, i: usize) {
    let r = frame.scene.nodes[i];
    let card = &frame.cards[i];
    let selected = frame.selected.contains(&i);
    ctx.set_fill_style_str(pal().card);
    ctx.set_stroke_style_str(if selected {
        pal().select
    } else {
        pal().card_border
    });
    ctx.set_line_width(if selected {
        3.0
    } else if card.start {
        2.0
    } else {
        1.0
    });
    ctx.fill_rect(r.x, r.y, r.width, r.height);
    ctx.stroke_rect(r.x, r.y, r.width, r.height);
    // The status stripe: pending grey, active amber, done green, failed red.
    ctx.set_fill_style_str(status_colour(card.status));
    ctx.fill_rect(r.x, r.y, 8.0, r.height);

    if frame.focused == Some(i) {
        ctx.set_stroke_style_str(pal().text);
        ctx.set_line_width(2.0);
        dash(ctx, &[4.0, 3.0]);
        ctx.stroke_rect(r.x - 5.0, r.y - 5.0, r.width + 10.0, r.height + 10.0);
        dash(ctx, &[]);
    }
    ctx.set_text_align("left");
    ctx.set_text_baseline("alphabetic");
    ctx.set_fill_style_str(pal().text);
    ctx.set_font("600 14px system-ui, sans-serif");
    let _ = ctx.fill_text_with_max_width(&card.title, r.x + 18.0, r.y + 28.0, r.width - 46.0);
    ctx.set_font("12px system-ui, sans-serif");
    ctx.set_fill_style_str(pal().muted);
    let kind = if card.start {
        "start"
    } else {
        card.kind.as_str()
    };
    // A node the run failed at says why, in red, where its status is.
    let failed = frame
        .run
        .overlay
        .and_then(|o| o.failed.as_ref())
        .filter(|(node, _)| *node == i);
    let status_line = match failed {
        Some((_, reason)) => {
            ctx.set_fill_style_str(status_colour(Status::Failed));
            crate::run::failure_line(kind, reason)
        }
        None => format!("{kind} · {}", card.status.as_str()),
    };
    let _ = ctx.fill_text_with_max_width(&status_line, r.x + 18.0, r.y + 52.0, r.width - 30.0);

    let badge = card.badge;
    if badge.errors + badge.warnings > 0 {
        let (colour, count) = if badge.errors > 0 {
            (pal().flagged, badge.errors)
        } else {
            (pal().warning, badge.warnings)
        };
        ctx.set_fill_style_str(colour);
        ctx.begin_path();
        let _ = ctx.arc(
            r.x + r.width - 16.0,
            r.y + 16.0,
            11.0,
            0.0,
            std::f64::consts::TAU,
        );
        ctx.fill();
        ctx.set_fill_style_str(pal().on_badge);
        ctx.set_font("bold 12px system-ui, sans-serif");
        ctx.set_text_align("center");
        ctx.set_text_baseline("middle");
        let _ = ctx.fill_text(&count.to_string(), r.x + r.width - 16.0, r.y + 16.5);
    }

    // The handle and the breakpoint spot show on the card under the
    // pointer and on the selected or focused one (keyboard users see them).
    let marked = selected || frame.hovered == Some(i) || frame.focused == Some(i);
    if marked {
        let h = frame.scene.handle(i);
        ctx.set_fill_style_str(pal().select);
        ctx.begin_path();
        let _ = ctx.arc(h.x, h.y, HANDLE_RADIUS, 0.0, std::f64::consts::TAU);
        ctx.fill();
    }
    if marked {
        // Where a click sets a breakpoint (the run layer fills it when set).
        let c = breakpoint_center(&r);
        ctx.set_stroke_style_str(pal().breakpoint);
        ctx.set_line_width(1.5);
        ctx.begin_path();
        let _ = ctx.arc(
            c.x,
            c.y,
            BREAKPOINT_RADIUS - 1.0,
            0.0,
            std::f64::consts::TAU,
        );
        ctx.stroke();
    }
}

fn draw_preview(ctx: &Ctx, frame: &Frame<'_>) {
    let highlight = |target: Option<usize>| {
        if let Some(t) = target.and_then(|t| frame.scene.nodes.get(t)) {
            ctx.set_stroke_style_str(pal().hop);
            ctx.set_line_width(3.0);
            ctx.stroke_rect(t.x - 3.0, t.y - 3.0, t.width + 6.0, t.height + 6.0);
        }
    };
    match frame.preview {
        Preview::None => {}
        Preview::Connect { from, to, target } => {
            if *from >= frame.scene.nodes.len() {
                return;
            }
            ctx.set_stroke_style_str(pal().select);
            ctx.set_fill_style_str(pal().select);
            ctx.set_line_width(2.0);
            dash(ctx, &[6.0, 4.0]);
            let start = frame.scene.handle(*from);
            polyline(ctx, &[start, *to]);
            dash(ctx, &[]);
            arrow_head(ctx, start, *to, 11.0);
            highlight(*target);
        }
        Preview::Retarget { edge, to, target } => {
            let Some(shape) = frame.scene.shape_of_edge(*edge) else {
                return;
            };
            ctx.set_stroke_style_str(pal().select);
            ctx.set_fill_style_str(pal().select);
            ctx.set_line_width(2.0);
            dash(ctx, &[6.0, 4.0]);
            let start = shape.points[0];
            polyline(ctx, &[start, *to]);
            dash(ctx, &[]);
            arrow_head(ctx, start, *to, 11.0);
            highlight(*target);
        }
        Preview::Marquee(area) => {
            ctx.set_fill_style_str(pal().marquee);
            ctx.fill_rect(area.x, area.y, area.width, area.height);
            ctx.set_stroke_style_str(pal().select);
            ctx.set_line_width(1.0 / frame.viewport.zoom);
            ctx.stroke_rect(area.x, area.y, area.width, area.height);
        }
    }
}

fn draw_minimap(ctx: &Ctx, frame: &Frame<'_>, area: Rect) {
    let (scale, origin, area) = minimap_transform(frame.scene, &frame.viewport, area);
    ctx.set_fill_style_str(pal().overlay);
    ctx.fill_rect(area.x, area.y, area.width, area.height);
    ctx.set_stroke_style_str(pal().overlay_border);
    ctx.set_line_width(1.0);
    ctx.stroke_rect(area.x, area.y, area.width, area.height);
    let map = |p: Point| Point {
        x: area.x + 4.0 + (p.x - origin.x) * scale,
        y: area.y + 4.0 + (p.y - origin.y) * scale,
    };
    // One path per colour: the minimap is drawn every frame.
    for status in Status::ALL {
        ctx.begin_path();
        for (i, r) in frame.scene.nodes.iter().enumerate() {
            if frame.cards[i].status == status {
                let p = map(Point { x: r.x, y: r.y });
                ctx.rect(
                    p.x,
                    p.y,
                    (r.width * scale).max(1.5),
                    (r.height * scale).max(1.5),
                );
            }
        }
        ctx.set_fill_style_str(status_colour(status));
        ctx.fill();
    }
    ctx.set_fill_style_str(pal().select);
    for &i in frame.selected {
        if let Some(r) = frame.scene.nodes.get(i) {
            let p = map(Point { x: r.x, y: r.y });
            ctx.fill_rect(
                p.x,
                p.y,
                (r.width * scale).max(2.5),
                (r.height * scale).max(2.5),
            );
        }
    }
    let vis = frame.viewport.visible();
    let p = map(Point { x: vis.x, y: vis.y });
    ctx.set_stroke_style_str(pal().select);
    ctx.set_line_width(1.5);
    ctx.stroke_rect(p.x, p.y, vis.width * scale, vis.height * scale);
}
