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
    /// Per node, the group (a vault's folder) its loose notes are kept
    /// together by, each group its own block; empty: one group.
    pub groups: Vec<usize>,
    /// The nodes in the order a reader lists them (a vault's file explorer
    /// order): loose notes fill their grid in it. Empty: by index.
    pub order: Vec<usize>,
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

impl Layout {
    /// The drawing of these boxes and routes, with the box around them.
    pub fn new(nodes: Vec<Rect>, routes: Vec<Route>, layers: Vec<usize>) -> Layout {
        let bounds = bounds(&nodes, &routes);
        Layout {
            nodes,
            routes,
            layers,
            bounds,
        }
    }
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

/// Lays a graph out. Loose notes (no edge in or out, not the start) are not
/// part of the flow: they go in a grid under it, in index order (a vault's
/// path order, so a folder's notes sit together), about as wide as the
/// flow or, without one, near a 16:10 screen's shape. In the flow's layers
/// they made one row as wide as they are many (173 help notes: a strip
/// 41,000 units wide).
pub fn layout(graph: &Graph, options: &Options) -> Layout {
    let n = graph.node_count;
    let mut linked = vec![false; n];
    for &(a, b) in &graph.edges {
        if a < n && b < n {
            linked[a] = true;
            linked[b] = true;
        }
    }
    if let Some(s) = graph.start.filter(|&s| s < n) {
        linked[s] = true;
    }
    if linked.iter().all(|&l| l) {
        return layered(graph, options);
    }

    // The flow alone, by compact indices; loose ends of edges out of range.
    let mut compact = vec![usize::MAX; n];
    let kept: Vec<usize> = (0..n).filter(|&v| linked[v]).collect();
    for (i, &v) in kept.iter().enumerate() {
        compact[v] = i;
    }
    let m = kept.len();
    let to_flow = |v: usize| if v < n { compact[v].min(m) } else { m };
    let flow_graph = Graph {
        node_count: m,
        edges: graph
            .edges
            .iter()
            .map(|&(a, b)| (to_flow(a), to_flow(b)))
            .collect(),
        start: graph.start.filter(|&s| s < n).map(to_flow),
        pinned: graph
            .pinned
            .iter()
            .filter(|&(&v, _)| v < n && linked[v])
            .map(|(&v, &p)| (compact[v], p))
            .collect(),
        groups: Vec::new(),
        order: Vec::new(),
    };
    let drawn = layered(&flow_graph, options);

    let loose: Vec<usize> = if graph.order.len() == n {
        graph
            .order
            .iter()
            .copied()
            .filter(|&v| !linked[v])
            .collect()
    } else {
        (0..n).filter(|&v| !linked[v]).collect()
    };
    let cell_width = options.node_width + options.node_gap;
    let cell_height = options.node_height + options.layer_gap;
    let (origin, flow_columns, first_row) = if m == 0 {
        (Point::default(), 0, 0)
    } else {
        let b = drawn.bounds;
        let below = Point {
            x: b.x,
            y: b.y + b.height + options.layer_gap,
        };
        let columns = ((b.width + options.node_gap) / cell_width).floor() as usize;
        (
            below,
            columns,
            drawn.layers.iter().max().map_or(0, |&l| l + 1),
        )
    };
    let slots = loose_slots(
        &loose,
        &graph.groups,
        flow_columns,
        cell_height / cell_width,
    );

    let mut nodes = vec![Rect::default(); n];
    let mut layers = vec![0; n];
    for (i, &v) in kept.iter().enumerate() {
        nodes[v] = drawn.nodes[i];
        layers[v] = drawn.layers[i];
    }
    for (&v, &(column, row)) in loose.iter().zip(&slots) {
        let p = graph.pinned.get(&v).copied().unwrap_or(Point {
            x: origin.x + column * cell_width,
            y: origin.y + row * cell_height,
        });
        nodes[v] = Rect {
            x: p.x,
            y: p.y,
            width: options.node_width,
            height: options.node_height,
        };
        layers[v] = first_row + row.floor() as usize;
    }
    Layout::new(nodes, drawn.routes, layers)
}

/// Cells between two folders' blocks of loose notes side by side.
const BLOCK_GAP: f64 = 0.5;
/// Rows of cells between two shelves of blocks.
const SHELF_GAP: f64 = 1.0;

impl Options {
    /// The least room between two folders' blocks of loose notes (from one
    /// block's cards to the next's): across, and from one shelf to the next.
    /// What the overview's folder regions must stay within.
    pub fn folder_gaps(&self) -> Point {
        let (cell_width, cell_height) = (
            self.node_width + self.node_gap,
            self.node_height + self.layer_gap,
        );
        Point {
            x: BLOCK_GAP * cell_width + self.node_gap,
            y: SHELF_GAP * cell_height + self.layer_gap,
        }
    }
}

/// Each loose note's slot under the flow, in cells (column, row). One
/// group fills rows as wide as the flow or near a 16:10 screen's shape;
/// several are each a block of that shape,
/// laid left to right in shelves, so a folder's notes make one rectangle:
/// half a cell apart side by side, a cell from one shelf to the next (room
/// for the overview's folder labels).
fn loose_slots(
    loose: &[usize],
    groups: &[usize],
    flow_columns: usize,
    cell_ratio: f64,
) -> Vec<(f64, f64)> {
    // Columns for `k` notes so that columns / rows ≈ 1.6 on screen, with
    // cells `cell_ratio` (height / width) as high as wide.
    let shaped = |k: usize| ((k as f64 * 1.6 * cell_ratio).sqrt().ceil() as usize).clamp(1, k);
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    for (i, &v) in loose.iter().enumerate() {
        let group = groups.get(v).copied();
        match blocks.last_mut() {
            Some(block) if groups.get(loose[block[0]]).copied() == group => block.push(i),
            _ => blocks.push(vec![i]),
        }
    }
    let mut slots = vec![(0.0, 0.0); loose.len()];
    if blocks.len() == 1 {
        let columns = shaped(loose.len()).max(flow_columns).min(loose.len());
        for (i, slot) in slots.iter_mut().enumerate() {
            *slot = ((i % columns) as f64, (i / columns) as f64);
        }
        return slots;
    }
    // The shelves' width: near 16:10 for the blocks' area, gaps included.
    let shape = |block: &Vec<usize>| {
        let columns = shaped(block.len());
        (columns, block.len().div_ceil(columns))
    };
    let area: f64 = blocks
        .iter()
        .map(|b| {
            let (columns, rows) = shape(b);
            (columns as f64 + BLOCK_GAP) * (rows as f64 + SHELF_GAP)
        })
        .sum();
    let width = (area * 1.6 * cell_ratio)
        .sqrt()
        .ceil()
        .max(flow_columns as f64);
    let (mut x, mut y, mut shelf) = (0.0, 0.0, 0.0_f64);
    for block in &blocks {
        let (columns, rows) = shape(block);
        if x > 0.0 && x + columns as f64 > width {
            (x, y) = (0.0, y + shelf + SHELF_GAP);
            shelf = 0.0;
        }
        for (j, &i) in block.iter().enumerate() {
            slots[i] = (x + (j % columns) as f64, y + (j / columns) as f64);
        }
        x += columns as f64 + BLOCK_GAP;
        shelf = shelf.max(rows as f64);
    }
    slots
}

/// The layered layout of every node: the four phases.
fn layered(graph: &Graph, options: &Options) -> Layout {
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

    Layout::new(nodes, routes, layers)
}

/// A parsed plan as a graph to lay out: its edges (one to a missing note
/// gets an out-of-range target, which the layout skips), its start, the
/// top-left corners `pinned` gives by node id, and its [`folders`].
pub fn plan_graph(plan: &Plan, pinned: impl Fn(&str) -> Option<Point>) -> Graph {
    let n = plan.nodes.len();
    Graph {
        node_count: n,
        edges: plan
            .edges
            .iter()
            .map(|e| (e.from, e.to.unwrap_or(n)))
            .collect(),
        start: plan.start,
        pinned: plan
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(i, node)| pinned(&node.id).map(|p| (i, p)))
            .collect(),
        groups: folders(plan).of_node,
        order: Vec::new(),
    }
}

/// The folders a plan's notes are in, one level below the folder they all
/// share (the plan's own): a vault's loose notes are drawn folder by
/// folder ([`Graph::groups`]), and the canvas's overview outlines each.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Folders {
    /// Each folder's name, by number; `""` for the notes in the shared
    /// folder itself.
    pub names: Vec<String>,
    /// Per node, its folder's number (numbered as first met).
    pub of_node: Vec<usize>,
}

/// The [`Folders`] of a plan's notes, read from their ids (vault paths).
pub fn folders(plan: &Plan) -> Folders {
    fn folders_of(id: &str) -> Vec<&str> {
        let mut parts: Vec<&str> = id.split('/').collect();
        parts.pop();
        parts
    }
    let shared = plan
        .nodes
        .iter()
        .map(|node| folders_of(&node.id))
        .reduce(|a, b| {
            a.iter()
                .zip(&b)
                .take_while(|(x, y)| x == y)
                .map(|(x, _)| *x)
                .collect()
        })
        .map_or(0, |common| common.len());
    let mut numbers: HashMap<&str, usize> = HashMap::new();
    let mut names = Vec::new();
    let of_node = plan
        .nodes
        .iter()
        .map(|node| {
            let folder = node
                .id
                .split('/')
                .nth(shared)
                .filter(|_| folders_of(&node.id).len() > shared)
                .unwrap_or("");
            *numbers.entry(folder).or_insert_with(|| {
                names.push(folder.to_string());
                names.len() - 1
            })
        })
        .collect();
    Folders { names, of_node }
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
