//! Layered (Sugiyama-style) layout of a plan graph, for the canvas.
//!
//! The phases are the classic ones, each in its own module:
//! 1. `acyclic`: a depth-first walk from the start node marks the edges that
//!    loop back (the feedback arcs) so the rest sees a DAG that flows away from
//!    the start, the way a reader follows a plan;
//! 2. `layering`: longest-path layers, the start on top;
//! 3. `ordering`: long edges split into dummy vertices, one per layer they
//!    cross, then barycentre sweeps reduce crossings (the best order seen wins);
//! 4. `coords`: x by repeated isotonic regression towards the neighbours'
//!    mean (order and spacing kept), y by layer.
//!
//! Every walk is iterative (plans of thousands of notes must not overflow
//! wasm's small stack) and the result depends only on the input, so the same
//! plan always draws the same way. Positions the user dragged are pinned: they
//! are returned as given, and their edges lose their bend points.
//!
//! After an edit, [`extend`] keeps what was drawn and places only what is
//! new (`incremental`), so an edit moves no card the user did not touch.

#![forbid(unsafe_code)]

mod acyclic;
mod coords;
mod incremental;
mod layering;
mod ordering;

pub use incremental::{extend, Previous};
use planvault_core::Plan;
use std::collections::HashMap;

/// A point on the canvas, in canvas units (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// A node's box: top-left corner and size.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Rect {
    pub fn center(&self) -> Point {
        Point {
            x: self.x + self.width / 2.0,
            y: self.y + self.height / 2.0,
        }
    }
}

/// Spacing of the drawing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub node_width: f64,
    pub node_height: f64,
    /// Vertical space between two layers.
    pub layer_gap: f64,
    /// Horizontal space between neighbours in a layer.
    pub node_gap: f64,
    /// Width a long edge's bend point takes in its layer.
    pub dummy_width: f64,
    /// Crossing-reduction sweeps (each one down and one up).
    pub sweeps: usize,
    /// Edges spanning more layers than this are drawn without bend points,
    /// so one far jump cannot fill the drawing with dummies.
    pub max_dummy_span: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            node_width: 200.0,
            node_height: 72.0,
            layer_gap: 72.0,
            node_gap: 40.0,
            dummy_width: 16.0,
            sweeps: 4,
            max_dummy_span: 64,
        }
    }
}

/// What to lay out: nodes `0..node_count` and directed edges between them.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub node_count: usize,
    pub edges: Vec<(usize, usize)>,
    /// Where a reader starts; the top layer. Without one, nodes nothing points
    /// at come first.
    pub start: Option<usize>,
    /// Top-left corners the user chose, by node.
    pub pinned: HashMap<usize, Point>,
}

/// How one edge is drawn between its two nodes' boxes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route {
    /// Bend points from the source towards the target (empty: draw direct).
    pub bends: Vec<Point>,
    /// The edge loops back against the flow (a feedback arc).
    pub back: bool,
    /// Source and target are the same node.
    pub self_loop: bool,
}

/// The drawing: one box per node, one route per edge (same indices as the
/// input), and the layer each node sits in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    pub nodes: Vec<Rect>,
    pub routes: Vec<Route>,
    pub layers: Vec<usize>,
    /// The box around everything.
    pub bounds: Rect,
}

/// The graph's edges (those between its nodes) along the flow.
struct Flow {
    /// Per edge: it loops back (a feedback arc).
    back: Vec<bool>,
    /// The DAG every later phase sees: back edges turned around,
    /// self-loops out.
    dag: Vec<Option<(usize, usize)>>,
}

fn flow(graph: &Graph) -> Flow {
    let n = graph.node_count;
    let edges: Vec<(usize, usize)> = graph
        .edges
        .iter()
        .copied()
        .filter(|&(a, b)| a < n && b < n)
        .collect();
    let back = acyclic::feedback_arcs(n, &edges, graph.start);
    let dag = edges
        .iter()
        .zip(&back)
        .map(|(&(a, b), &r)| (a != b).then_some(if r { (b, a) } else { (a, b) }))
        .collect();
    Flow { back, dag }
}

/// Lays a graph out.
pub fn layout(graph: &Graph, options: &Options) -> Layout {
    let n = graph.node_count;
    let Flow { back, dag } = flow(graph);
    let layers = layering::longest_path(n, &dag, graph.start);
    let order = ordering::order(n, &dag, &layers, graph.start, options);
    let placed = coords::place(&order, options);

    let mut nodes: Vec<Rect> = (0..n)
        .map(|v| {
            let p = placed.node_center(v);
            Rect {
                x: p.x - options.node_width / 2.0,
                y: p.y - options.node_height / 2.0,
                width: options.node_width,
                height: options.node_height,
            }
        })
        .collect();
    for (&v, p) in &graph.pinned {
        if let Some(rect) = nodes.get_mut(v) {
            rect.x = p.x;
            rect.y = p.y;
        }
    }

    let mut routes = Vec::with_capacity(graph.edges.len());
    let mut kept = 0;
    for &(a, b) in &graph.edges {
        if a >= n || b >= n {
            routes.push(Route::default());
            continue;
        }
        let i = kept;
        kept += 1;
        let pinned_end = graph.pinned.contains_key(&a) || graph.pinned.contains_key(&b);
        let mut bends: Vec<Point> = if pinned_end {
            Vec::new()
        } else {
            order
                .chain(i)
                .iter()
                .map(|&d| placed.dummy_center(d))
                .collect()
        };
        if back[i] {
            bends.reverse();
        }
        routes.push(Route {
            bends,
            back: back[i],
            self_loop: a == b,
        });
    }

    let bounds = bounds(&nodes, &routes);
    Layout {
        nodes,
        routes,
        layers,
        bounds,
    }
}

/// Lays out a parsed plan. `pinned` maps node ids to the top-left corners the
/// user dragged them to; edges to missing notes get an empty route.
pub fn layout_plan(plan: &Plan, pinned: &HashMap<String, Point>, options: &Options) -> Layout {
    let n = plan.nodes.len();
    // Dangling edges get an out-of-range target, which `layout` skips.
    let edges = plan
        .edges
        .iter()
        .map(|e| (e.from, e.to.unwrap_or(n)))
        .collect();
    let pinned = plan
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, node)| pinned.get(&node.id).map(|p| (i, *p)))
        .collect();
    layout(
        &Graph {
            node_count: n,
            edges,
            start: plan.start,
            pinned,
        },
        options,
    )
}

fn bounds(nodes: &[Rect], routes: &[Route]) -> Rect {
    let mut min = Point {
        x: f64::INFINITY,
        y: f64::INFINITY,
    };
    let mut max = Point {
        x: f64::NEG_INFINITY,
        y: f64::NEG_INFINITY,
    };
    let mut grow = |x0: f64, y0: f64, x1: f64, y1: f64| {
        min.x = min.x.min(x0);
        min.y = min.y.min(y0);
        max.x = max.x.max(x1);
        max.y = max.y.max(y1);
    };
    for r in nodes {
        grow(r.x, r.y, r.x + r.width, r.y + r.height);
    }
    for p in routes.iter().flat_map(|r| &r.bends) {
        grow(p.x, p.y, p.x, p.y);
    }
    if min.x > max.x {
        return Rect::default();
    }
    Rect {
        x: min.x,
        y: min.y,
        width: max.x - min.x,
        height: max.y - min.y,
    }
}

/// Number of crossings between consecutive layers of a finished layout,
/// counted on the drawn segments (for tests and the benchmark's report).
pub fn crossings(graph: &Graph, options: &Options) -> usize {
    let n = graph.node_count;
    let Flow { dag, .. } = flow(graph);
    let layers = layering::longest_path(n, &dag, graph.start);
    ordering::order(n, &dag, &layers, graph.start, options).crossings()
}
