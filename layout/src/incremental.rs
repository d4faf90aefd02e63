//! Incremental layout, for edits: the nodes drawn before stay exactly where
//! they were and keep their edges' bends; only nodes new to the drawing are
//! placed, each next to a neighbour already placed (below what points at
//! it, else above what it points at) in the nearest free spot, and new edges
//! go direct. The full layout ([`crate::layout`]) stays the explicit
//! "lay everything out again".

use crate::{bounds, flow, layering, layout, Flow, Graph, Layout, Options, Point, Rect, Route};
use std::collections::HashMap;

/// What was drawn before an edit, by the new graph's indices.
#[derive(Debug, Clone, Default)]
pub struct Previous {
    /// Top-left corners of the nodes that stay where they were.
    pub nodes: HashMap<usize, Point>,
    /// Bend points of the edges that keep their route (both ends stay).
    pub bends: HashMap<usize, Vec<Point>>,
}

/// How far a new node may be pushed sideways, in slots, before the search
/// tries the next row.
const SIDEWAYS: i32 = 8;
const ROWS: i32 = 64;
/// How far right of the cards a new loop back detours (see [`detour`]).
const BACK_CLEAR: f64 = 110.0;

/// Lays `graph` out keeping `previous`: its nodes do not move (a pinned
/// position still wins), the rest are placed around them without overlap.
/// With nothing to keep it is the full layout.
pub fn extend(graph: &Graph, previous: &Previous, options: &Options) -> Layout {
    let n = graph.node_count;
    if !previous.nodes.keys().any(|&v| v < n) {
        return layout(graph, options);
    }
    let mut placed: Vec<Option<Point>> = vec![None; n];
    for (&v, &p) in previous.nodes.iter().chain(&graph.pinned) {
        if v < n {
            placed[v] = Some(p);
        }
    }
    let Flow { back, dag } = flow(graph);
    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in dag.iter().flatten() {
        parents[b].push(a);
        children[a].push(b);
    }

    let box_at = |p: Point| Rect {
        x: p.x,
        y: p.y,
        width: options.node_width,
        height: options.node_height,
    };
    let mut taken: Vec<Rect> = placed.iter().flatten().map(|&p| box_at(p)).collect();
    taken.extend(previous.bends.values().flatten().map(|p| Rect {
        x: p.x - options.dummy_width / 2.0,
        y: p.y - options.node_height / 2.0,
        width: options.dummy_width,
        height: options.node_height,
    }));
    let step_y = options.node_height + options.layer_gap;
    loop {
        let mut progress = false;
        for v in 0..n {
            if placed[v].is_some() {
                continue;
            }
            let below = parents[v].iter().find_map(|&u| placed[u]);
            let above = children[v].iter().find_map(|&w| placed[w]);
            let (want, down) = match (below, above) {
                (Some(p), _) => (
                    Point {
                        x: p.x,
                        y: p.y + step_y,
                    },
                    true,
                ),
                (None, Some(p)) => (
                    Point {
                        x: p.x,
                        y: p.y - step_y,
                    },
                    false,
                ),
                (None, None) => continue,
            };
            let p = free_spot(want, down, &taken, options);
            placed[v] = Some(p);
            taken.push(box_at(p));
            progress = true;
        }
        if !progress {
            break;
        }
    }
    // Nodes linked to nothing placed: a row under the drawing.
    if placed.iter().any(Option::is_none) {
        let all = bounds(&taken, &[]);
        let want = Point {
            x: all.x,
            y: all.y + all.height + options.layer_gap,
        };
        for slot in placed.iter_mut().filter(|p| p.is_none()) {
            let p = free_spot(want, true, &taken, options);
            *slot = Some(p);
            taken.push(box_at(p));
        }
    }
    let nodes: Vec<Rect> = placed
        .iter()
        .map(|p| box_at(p.unwrap_or_default()))
        .collect();

    let mut routes = Vec::with_capacity(graph.edges.len());
    let mut kept = 0;
    // Detours taken so far on each side, so two do not share a line.
    let mut bows = [0usize; 2];
    for (i, &(a, b)) in graph.edges.iter().enumerate() {
        if a >= n || b >= n {
            routes.push(Route::default());
            continue;
        }
        let pinned_end = graph.pinned.contains_key(&a) || graph.pinned.contains_key(&b);
        let bends = if pinned_end || a == b {
            Vec::new()
        } else if let Some(kept) = previous.bends.get(&i) {
            kept.clone()
        } else {
            detour(&nodes, a, b, back[kept], &mut bows, options)
        };
        routes.push(Route {
            bends,
            back: back[kept],
            self_loop: a == b,
        });
        kept += 1;
    }
    let layers = layering::longest_path(n, &dag, graph.start);
    Layout::new(nodes, routes, layers)
}

/// The free spot for a card nearest `want`: sideways in slots first
/// (right, left, further out), then row by row away from the anchor
/// (`down`: below it). A spot is free when the card keeps half the gaps
/// clear of everything taken.
fn free_spot(want: Point, down: bool, taken: &[Rect], options: &Options) -> Point {
    let step_x = options.node_width + options.node_gap;
    let step_y = (options.node_height + options.layer_gap) * if down { 1.0 } else { -1.0 };
    let (mx, my) = (options.node_gap / 2.0, options.layer_gap / 2.0);
    let free = |p: Point| {
        taken.iter().all(|t| {
            p.x + options.node_width + mx <= t.x
                || t.x + t.width + mx <= p.x
                || p.y + options.node_height + my <= t.y
                || t.y + t.height + my <= p.y
        })
    };
    for row in 0..ROWS {
        for k in 0..=2 * SIDEWAYS {
            // 0, 1, -1, 2, -2, ...
            let slot = if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) };
            let p = Point {
                x: want.x + f64::from(slot) * step_x,
                y: want.y + f64::from(row) * step_y,
            };
            if free(p) {
                return p;
            }
        }
    }
    // Everything near is full: past the far right of the drawing.
    let right = taken.iter().map(|t| t.x + t.width).fold(want.x, f64::max);
    Point {
        x: right + options.node_gap,
        y: want.y,
    }
}

/// The bends of a new edge from `a` to `b`: none when the straight line
/// between their centres crosses no other card; else a detour beside the
/// cards it would cross (to the left along the flow, to the right for a
/// loop back, as the canvas bows those), each further out than the last.
fn detour(
    nodes: &[Rect],
    a: usize,
    b: usize,
    back: bool,
    bows: &mut [usize; 2],
    options: &Options,
) -> Vec<Point> {
    let (ca, cb) = (nodes[a].center(), nodes[b].center());
    let crossed: Vec<&Rect> = nodes
        .iter()
        .enumerate()
        .filter(|&(v, r)| v != a && v != b && segment_crosses(ca, cb, r))
        .map(|(_, r)| r)
        .collect();
    if crossed.is_empty() {
        return Vec::new();
    }
    let side = usize::from(back);
    // Loops back the layout left without bends are bowed 36 units out on
    // the right by the canvas, their label on the bow: a new one goes
    // clear of that line and its label.
    let base = if back {
        BACK_CLEAR
    } else {
        options.node_gap / 2.0
    };
    let out = base + bows[side] as f64 * options.node_gap;
    bows[side] += 1;
    let spans = crossed.iter().copied().chain([&nodes[a], &nodes[b]]);
    let x = if back {
        spans
            .map(|r| r.x + r.width)
            .fold(f64::NEG_INFINITY, f64::max)
            + out
    } else {
        spans.map(|r| r.x).fold(f64::INFINITY, f64::min) - out
    };
    vec![Point { x, y: ca.y }, Point { x, y: cb.y }]
}

/// Whether the segment from `p` to `q` passes through `r`.
fn segment_crosses(p: Point, q: Point, r: &Rect) -> bool {
    // Clip the segment's parameter range to the box, one axis at a time.
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (start, delta, low, high) in [
        (p.x, q.x - p.x, r.x, r.x + r.width),
        (p.y, q.y - p.y, r.y, r.y + r.height),
    ] {
        if delta == 0.0 {
            if start <= low || start >= high {
                return false;
            }
            continue;
        }
        let (mut a, mut b) = ((low - start) / delta, (high - start) / delta);
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        t0 = t0.max(a);
        t1 = t1.min(b);
        if t0 >= t1 {
            return false;
        }
    }
    true
}
