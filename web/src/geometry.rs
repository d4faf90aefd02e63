//! What the canvas shows, in world coordinates, and the mapping to the
//! screen. Drawing and hit-testing both read the same shapes from
//! [`Scene`], so a click hits exactly what was drawn at any zoom: the screen
//! point is mapped back to the world with the exact inverse transform and
//! tested against the shapes, with tolerances given in screen pixels.

use crate::doc::VaultDoc;
use planvault_core::EdgeKind;
use planvault_layout::{Point, Rect};

/// Screen = (world − offset) × zoom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    pub offset: Point,
    pub zoom: f64,
    /// The canvas size in CSS pixels.
    pub width: f64,
    pub height: f64,
}

/// Far enough out to fit a plan thousands of layers deep.
pub const MIN_ZOOM: f64 = 0.001;
pub const MAX_ZOOM: f64 = 4.0;

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            offset: Point { x: -40.0, y: -40.0 },
            zoom: 1.0,
            width: 800.0,
            height: 600.0,
        }
    }
}

impl Viewport {
    pub fn to_screen(&self, p: Point) -> Point {
        Point {
            x: (p.x - self.offset.x) * self.zoom,
            y: (p.y - self.offset.y) * self.zoom,
        }
    }

    pub fn to_world(&self, p: Point) -> Point {
        Point {
            x: p.x / self.zoom + self.offset.x,
            y: p.y / self.zoom + self.offset.y,
        }
    }

    /// The world rectangle the canvas shows.
    pub fn visible(&self) -> Rect {
        Rect {
            x: self.offset.x,
            y: self.offset.y,
            width: self.width / self.zoom,
            height: self.height / self.zoom,
        }
    }

    /// Zoom by `factor` keeping the world point under `screen` in place.
    pub fn zoom_at(&mut self, screen: Point, factor: f64) {
        let anchor = self.to_world(screen);
        self.zoom = (self.zoom * factor).clamp(MIN_ZOOM, MAX_ZOOM);
        self.offset = Point {
            x: anchor.x - screen.x / self.zoom,
            y: anchor.y - screen.y / self.zoom,
        };
    }

    pub fn pan_by_screen(&mut self, dx: f64, dy: f64) {
        self.offset.x -= dx / self.zoom;
        self.offset.y -= dy / self.zoom;
    }

    /// Show all of `bounds` with a margin (in screen pixels), never zoomed
    /// in past 1:1.
    pub fn fit(&mut self, bounds: Rect, margin: f64) {
        let w = (self.width - 2.0 * margin).max(10.0);
        let h = (self.height - 2.0 * margin).max(10.0);
        let zoom = if bounds.width <= 0.0 || bounds.height <= 0.0 {
            1.0
        } else {
            (w / bounds.width).min(h / bounds.height).min(1.0)
        };
        self.zoom = zoom.clamp(MIN_ZOOM, MAX_ZOOM);
        let c = bounds.center();
        self.offset = Point {
            x: c.x - self.width / 2.0 / self.zoom,
            y: c.y - self.height / 2.0 / self.zoom,
        };
    }

    /// Scroll so `r` is in view (keyboard focus moving off screen).
    pub fn reveal(&mut self, r: Rect, margin: f64) {
        let v = self.visible();
        let m = margin / self.zoom;
        if r.x < v.x + m {
            self.offset.x = r.x - m;
        } else if r.x + r.width > v.x + v.width - m {
            self.offset.x = r.x + r.width + m - v.width;
        }
        if r.y < v.y + m {
            self.offset.y = r.y - m;
        } else if r.y + r.height > v.y + v.height - m {
            self.offset.y = r.y + r.height + m - v.height;
        }
    }
}

/// The minimap's size and its margin from the canvas's edges, in screen
/// pixels; below [`MINIMAP_MIN_WIDTH`] of canvas there is no minimap.
pub const MINIMAP: (f64, f64) = (200.0, 130.0);
pub const MINIMAP_MARGIN: f64 = 12.0;
pub const MINIMAP_MIN_WIDTH: f64 = 600.0;

/// Where the minimap goes on the screen: the first corner (bottom right,
/// bottom left, top right, top left) where it covers no card; none when
/// every corner would, on a small screen, or for a plan of one card.
pub fn minimap_place(scene: &Scene, v: &Viewport) -> Option<Rect> {
    if v.width < MINIMAP_MIN_WIDTH || v.height < 2.0 * MINIMAP.1 || scene.nodes.len() < 2 {
        return None;
    }
    let (w, h, m) = (MINIMAP.0, MINIMAP.1, MINIMAP_MARGIN);
    let (left, right) = (m, v.width - w - m);
    let (top, bottom) = (m, v.height - h - m);
    [(right, bottom), (left, bottom), (right, top), (left, top)]
        .into_iter()
        .map(|(x, y)| Rect {
            x,
            y,
            width: w,
            height: h,
        })
        .find(|r| {
            // The corner's area in the world, a few pixels larger.
            let a = v.to_world(Point {
                x: r.x - 4.0,
                y: r.y - 4.0,
            });
            let b = v.to_world(Point {
                x: r.x + r.width + 4.0,
                y: r.y + r.height + 4.0,
            });
            scene.nodes_in(rect_between(a, b)).next().is_none()
        })
}

/// One edge as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeShape {
    /// Index into the plan's edges.
    pub edge: usize,
    /// From the source card's border to the target card's border.
    pub points: Vec<Point>,
    pub label: Option<String>,
    /// Where the label's box is, when the edge has a label.
    pub label_box: Option<Rect>,
    pub conditional: bool,
    pub back: bool,
    pub self_loop: bool,
    /// The link names no note.
    pub dangling: bool,
    /// Box around the whole shape, for culling.
    pub bbox: Rect,
}

impl EdgeShape {
    pub fn head(&self) -> Point {
        *self.points.last().expect("an edge shape has points")
    }

    /// The point a fraction `t` (0 to 1) of the way along the edge, by
    /// length: where the run's hop marker is drawn while it animates.
    pub fn point_along(&self, t: f64) -> Point {
        let lengths: Vec<f64> = self
            .points
            .windows(2)
            .map(|w| distance(w[0], w[1]))
            .collect();
        let total: f64 = lengths.iter().sum();
        let mut left = t.clamp(0.0, 1.0) * total;
        for (w, len) in self.points.windows(2).zip(lengths) {
            if left <= len && len > 0.0 {
                let f = left / len;
                return Point {
                    x: w[0].x + (w[1].x - w[0].x) * f,
                    y: w[0].y + (w[1].y - w[0].y) * f,
                };
            }
            left -= len;
        }
        self.head()
    }
}

/// Everything drawn on the canvas, in world coordinates.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    pub nodes: Vec<Rect>,
    pub edges: Vec<EdgeShape>,
    /// Per node, where its new-edge handle sits: a spot on the card's
    /// border that no edge of the card passes ([`handle_spot`]).
    pub handles: Vec<Point>,
    pub bounds: Rect,
}

/// Below this zoom the canvas draws the overview (blocks, no labels, no
/// arrow heads), so hit-testing leaves labels and heads out too.
pub const DETAIL_ZOOM: f64 = 0.35;
/// Hit tolerance in screen pixels (divided by the zoom for the world).
pub const TOLERANCE_PX: f64 = 6.0;

/// Label font size and the width a character takes at it, in world units.
pub const LABEL_FONT: f64 = 12.0;
const LABEL_CHAR: f64 = 6.6;
/// The connection handle under each card, radius in world units.
pub const HANDLE_RADIUS: f64 = 7.0;

pub fn label_size(text: &str) -> (f64, f64) {
    (
        text.chars().count() as f64 * LABEL_CHAR + 12.0,
        LABEL_FONT + 8.0,
    )
}

/// The run breakpoint's dot at a card's top-left corner, radius in world units.
pub const BREAKPOINT_RADIUS: f64 = 7.0;

/// Where a card's breakpoint dot sits (drawn when set, hinted on hover;
/// clicking it toggles the breakpoint).
pub fn breakpoint_center(r: &Rect) -> Point {
    Point { x: r.x, y: r.y }
}

/// Where a card's new-edge handle may sit, best first: on its bottom border
/// near a corner (outgoing edges mostly leave from the middle), then the
/// middle, then the sides.
fn handle_candidates(r: &Rect) -> [Point; 6] {
    let (x0, y0, x1, y1) = (r.x, r.y, r.x + r.width, r.y + r.height);
    [
        Point {
            x: x1 - 24.0,
            y: y1,
        },
        Point {
            x: x0 + 24.0,
            y: y1,
        },
        Point {
            x: x0 + r.width / 2.0,
            y: y1,
        },
        Point {
            x: x1,
            y: y1 - 14.0,
        },
        Point {
            x: x0,
            y: y1 - 14.0,
        },
        Point {
            x: x1 - 24.0,
            y: y0,
        },
    ]
}

/// The handle a drag starts a new edge from: the first candidate spot on
/// the card's border that none of the card's edges (`paths`) passes
/// within the handle's size, so the handle never covers an edge.
pub fn handle_spot<'a>(r: &Rect, paths: impl Iterator<Item = &'a [Point]> + Clone) -> Point {
    let spots = handle_candidates(r);
    spots
        .iter()
        .copied()
        .find(|&c| {
            paths
                .clone()
                .all(|p| polyline_distance(c, p) > HANDLE_RADIUS + 4.0)
        })
        .unwrap_or(spots[0])
}

impl Scene {
    /// The scene for a vault, with `moved` nodes shifted by `(dx, dy)` while
    /// a drag is under way (their edges then go straight).
    pub fn build(doc: &VaultDoc, moved: &[usize], delta: Point) -> Scene {
        let plan = &doc.checked.plan;
        let mut nodes = doc.layout.nodes.clone();
        for &m in moved {
            if let Some(r) = nodes.get_mut(m) {
                r.x += delta.x;
                r.y += delta.y;
            }
        }
        let mut edges = Vec::with_capacity(plan.edges.len());
        for (i, edge) in plan.edges.iter().enumerate() {
            let Some(to) = edge.to else {
                // An edge to a missing note: a short red stub named after
                // the link, so it can be seen, selected and deleted.
                let r = nodes[edge.from];
                let start = Point {
                    x: r.x + r.width * 0.85,
                    y: r.y + r.height,
                };
                let points = vec![
                    start,
                    Point {
                        x: start.x + 36.0,
                        y: start.y + 54.0,
                    },
                ];
                let text = format!("{} (missing)", edge.target);
                let (w, h) = label_size(&text);
                let label_box = Rect {
                    x: start.x + 36.0 - w / 2.0,
                    y: start.y + 56.0,
                    width: w,
                    height: h,
                };
                let bbox = union(bbox_of(&points), label_box);
                edges.push(EdgeShape {
                    edge: i,
                    points,
                    label: Some(text),
                    label_box: Some(label_box),
                    conditional: matches!(edge.kind, EdgeKind::Conditional | EdgeKind::Route),
                    back: false,
                    self_loop: false,
                    dangling: true,
                    bbox,
                });
                continue;
            };
            let route = doc.layout.routes.get(i).cloned().unwrap_or_default();
            let (a, b) = (nodes[edge.from], nodes[to]);
            let straight = moved.contains(&edge.from) || moved.contains(&to);
            let points = if edge.from == to {
                self_loop(&a)
            } else {
                let mut bends = if straight {
                    Vec::new()
                } else {
                    route.bends.clone()
                };
                let back = b.y + b.height <= a.y + 1.0;
                if bends.is_empty() && (route.back || back) {
                    // A loop back with no room of its own would lie on the
                    // forward edge: bow it out to the right.
                    let (ca, cb) = (a.center(), b.center());
                    let bow = a.width.max(b.width) / 2.0 + 36.0;
                    bends = vec![
                        Point {
                            x: ca.x.max(cb.x) + bow,
                            y: ca.y,
                        },
                        Point {
                            x: ca.x.max(cb.x) + bow,
                            y: cb.y,
                        },
                    ];
                }
                connect(&a, &b, &bends)
            };
            let label = edge.label.clone().filter(|l| !l.is_empty());
            let label_box = label.as_ref().map(|text| {
                let (w, h) = label_size(text);
                let at = midpoint(&points);
                Rect {
                    x: at.x - w / 2.0,
                    y: at.y - h / 2.0,
                    width: w,
                    height: h,
                }
            });
            let mut bbox = bbox_of(&points);
            if let Some(l) = label_box {
                bbox = union(bbox, l);
            }
            edges.push(EdgeShape {
                edge: i,
                points,
                label,
                label_box,
                conditional: matches!(edge.kind, EdgeKind::Conditional | EdgeKind::Route),
                back: route.back,
                self_loop: edge.from == to,
                dangling: false,
                bbox,
            });
        }
        let bounds = nodes
            .iter()
            .copied()
            .chain(edges.iter().map(|e| e.bbox))
            .reduce(union)
            .unwrap_or_default();
        // Each card's edges, to keep its handle off them.
        let mut touching: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (shape, edge) in edges.iter().zip(&plan.edges) {
            touching[edge.from].push(shape.edge);
            if let Some(to) = edge.to.filter(|&t| t != edge.from) {
                touching[to].push(shape.edge);
            }
        }
        let handles = nodes
            .iter()
            .zip(&touching)
            .map(|(r, own)| handle_spot(r, own.iter().map(|&e| edges[e].points.as_slice())))
            .collect();
        Scene {
            nodes,
            edges,
            handles,
            bounds,
        }
    }

    /// Node `i`'s new-edge handle.
    pub fn handle(&self, i: usize) -> Point {
        self.handles.get(i).copied().unwrap_or_default()
    }

    /// Indices of the nodes that intersect `area`.
    pub fn nodes_in(&self, area: Rect) -> impl Iterator<Item = usize> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, r)| intersects(r, &area))
            .map(|(i, _)| i)
    }

    pub fn edges_in(&self, area: Rect) -> impl Iterator<Item = &EdgeShape> + '_ {
        self.edges
            .iter()
            .filter(move |e| intersects(&e.bbox, &area))
    }

    pub fn shape_of_edge(&self, edge: usize) -> Option<&EdgeShape> {
        self.edges.iter().find(|e| e.edge == edge)
    }

    /// What lies under the world point `p` at `zoom`, as drawn there.
    /// Handles and edge heads win over cards (so the small targets stay
    /// reachable), cards over labels and edge lines (as they are drawn).
    /// Among edges the nearest wins, never the first found; zoomed out
    /// past [`DETAIL_ZOOM`] labels and heads are not drawn, so not hit.
    pub fn hit(&self, p: Point, zoom: f64) -> Hit {
        let tolerance = TOLERANCE_PX / zoom;
        let detail = zoom >= DETAIL_ZOOM;
        // Small targets grow by the tolerance only up to their own size, so
        // zoomed far out they never swallow the card they sit on.
        let small = tolerance.min(HANDLE_RADIUS);
        for (i, r) in self.nodes.iter().enumerate().rev() {
            if distance(p, self.handle(i)) <= HANDLE_RADIUS + small {
                return Hit::Handle(i);
            }
            if distance(p, breakpoint_center(r)) <= BREAKPOINT_RADIUS + small {
                return Hit::Breakpoint(i);
            }
        }
        if detail {
            // Heads of edges into one card can lie close together: the
            // edge whose drawn line is nearest owns the point.
            let head = self
                .edges
                .iter()
                .filter(|e| distance(p, e.head()) <= small + 4.0)
                .map(|e| (polyline_distance(p, &e.points), e.edge))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, edge)) = head {
                return Hit::EdgeHead(edge);
            }
        }
        // Cards are drawn over edges and their labels: they win here too.
        if let Some(i) = self.nodes.iter().rposition(|r| contains(r, p)) {
            return Hit::Node(i);
        }
        if detail {
            // Labels are drawn over lines, the last drawn on top.
            if let Some(e) = self
                .edges
                .iter()
                .rev()
                .find(|e| e.label_box.is_some_and(|b| contains(&b, p)))
            {
                return Hit::Label(e.edge);
            }
        }
        match self.nearest_edge(p, tolerance) {
            Some(edge) => Hit::Edge(edge),
            None => Hit::Empty,
        }
    }

    /// The edge whose drawn path passes nearest `p`, within `tolerance`.
    pub fn nearest_edge(&self, p: Point, tolerance: f64) -> Option<usize> {
        self.edges
            .iter()
            .filter(|e| contains(&inflate(e.bbox, tolerance), p))
            .map(|e| (polyline_distance(p, &e.points), e.edge))
            .filter(|(d, _)| *d <= tolerance)
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, edge)| edge)
    }
}

/// What a pointer is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    Empty,
    Node(usize),
    /// The handle under a card, where new edges start.
    Handle(usize),
    Edge(usize),
    /// The arrow head: drag it onto another card to retarget.
    EdgeHead(usize),
    /// The breakpoint dot at a card's corner: a click toggles it.
    Breakpoint(usize),
    Label(usize),
}

fn self_loop(r: &Rect) -> Vec<Point> {
    let right = r.x + r.width;
    let cy = r.y + r.height / 2.0;
    vec![
        Point {
            x: right,
            y: cy - 14.0,
        },
        Point {
            x: right + 34.0,
            y: cy - 26.0,
        },
        Point {
            x: right + 34.0,
            y: cy + 26.0,
        },
        Point {
            x: right,
            y: cy + 14.0,
        },
    ]
}

/// The polyline from `a`'s border through `bends` to `b`'s border.
fn connect(a: &Rect, b: &Rect, bends: &[Point]) -> Vec<Point> {
    let first = bends.first().copied().unwrap_or(b.center());
    let last = bends.last().copied().unwrap_or(a.center());
    let mut points = Vec::with_capacity(bends.len() + 2);
    points.push(border_point(a, first));
    points.extend_from_slice(bends);
    points.push(border_point(b, last));
    points
}

/// Where the ray from `r`'s centre towards `towards` leaves `r`.
pub fn border_point(r: &Rect, towards: Point) -> Point {
    let c = r.center();
    let (dx, dy) = (towards.x - c.x, towards.y - c.y);
    if dx == 0.0 && dy == 0.0 {
        return c;
    }
    let sx = if dx != 0.0 {
        (r.width / 2.0) / dx.abs()
    } else {
        f64::INFINITY
    };
    let sy = if dy != 0.0 {
        (r.height / 2.0) / dy.abs()
    } else {
        f64::INFINITY
    };
    let s = sx.min(sy).min(1.0);
    Point {
        x: c.x + dx * s,
        y: c.y + dy * s,
    }
}

fn midpoint(points: &[Point]) -> Point {
    let total: f64 = points.windows(2).map(|w| distance(w[0], w[1])).sum();
    let mut left = total / 2.0;
    for w in points.windows(2) {
        let d = distance(w[0], w[1]);
        if d >= left && d > 0.0 {
            let t = left / d;
            return Point {
                x: w[0].x + (w[1].x - w[0].x) * t,
                y: w[0].y + (w[1].y - w[0].y) * t,
            };
        }
        left -= d;
    }
    points[0]
}

pub fn distance(a: Point, b: Point) -> f64 {
    ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt()
}

fn segment_distance(p: Point, a: Point, b: Point) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len2 = dx * dx + dy * dy;
    if len2 == 0.0 {
        return distance(p, a);
    }
    let t = (((p.x - a.x) * dx + (p.y - a.y) * dy) / len2).clamp(0.0, 1.0);
    distance(
        p,
        Point {
            x: a.x + t * dx,
            y: a.y + t * dy,
        },
    )
}

pub fn polyline_distance(p: Point, points: &[Point]) -> f64 {
    points
        .windows(2)
        .map(|w| segment_distance(p, w[0], w[1]))
        .fold(f64::INFINITY, f64::min)
}

pub fn contains(r: &Rect, p: Point) -> bool {
    p.x >= r.x && p.x <= r.x + r.width && p.y >= r.y && p.y <= r.y + r.height
}

pub fn intersects(a: &Rect, b: &Rect) -> bool {
    a.x <= b.x + b.width && b.x <= a.x + a.width && a.y <= b.y + b.height && b.y <= a.y + a.height
}

fn inflate(r: Rect, by: f64) -> Rect {
    Rect {
        x: r.x - by,
        y: r.y - by,
        width: r.width + 2.0 * by,
        height: r.height + 2.0 * by,
    }
}

pub fn union(a: Rect, b: Rect) -> Rect {
    let x = a.x.min(b.x);
    let y = a.y.min(b.y);
    Rect {
        x,
        y,
        width: (a.x + a.width).max(b.x + b.width) - x,
        height: (a.y + a.height).max(b.y + b.height) - y,
    }
}

fn bbox_of(points: &[Point]) -> Rect {
    let (mut x0, mut y0, mut x1, mut y1) = (
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    );
    for p in points {
        x0 = x0.min(p.x);
        y0 = y0.min(p.y);
        x1 = x1.max(p.x);
        y1 = y1.max(p.y);
    }
    Rect {
        x: x0,
        y: y0,
        width: x1 - x0,
        height: y1 - y0,
    }
}

/// The rectangle spanned by two corners, in any order.
pub fn rect_between(a: Point, b: Point) -> Rect {
    Rect {
        x: a.x.min(b.x),
        y: a.y.min(b.y),
        width: (a.x - b.x).abs(),
        height: (a.y - b.y).abs(),
    }
}

/// The back corners of an arrow head at `to`, `size` long, its sides 0.45
/// rad either side of the line from `from`: the line's direction turned by
/// that angle's cosine and sine, so no trigonometry (libm's, in wasm) is
/// linked into the app for it.
pub fn arrow_corners(from: Point, to: Point, size: f64) -> [Point; 2] {
    const COS: f64 = 0.900_447_102_352_676_9; // cos 0.45
    const SIN: f64 = 0.434_965_534_111_230_23; // sin 0.45
    let (dx, dy) = (to.x - from.x, to.y - from.y);
    let length = (dx * dx + dy * dy).sqrt();
    // A line of no length points along x, as atan2(0, 0) = 0 would.
    let (ux, uy) = if length > 0.0 {
        (dx / length, dy / length)
    } else {
        (1.0, 0.0)
    };
    [
        Point {
            x: to.x - size * (ux * COS + uy * SIN),
            y: to.y - size * (uy * COS - ux * SIN),
        },
        Point {
            x: to.x - size * (ux * COS - uy * SIN),
            y: to.y - size * (uy * COS + ux * SIN),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrow_corners_are_the_line_turned_0_45_either_way() {
        let by_angle = |from: Point, to: Point, size: f64| {
            let angle = (to.y - from.y).atan2(to.x - from.x);
            [-0.45, 0.45].map(|turn: f64| Point {
                x: to.x - size * (angle + turn).cos(),
                y: to.y - size * (angle + turn).sin(),
            })
        };
        let to = Point { x: 40.0, y: -7.5 };
        for k in 0..=72 {
            let a = f64::from(k) * std::f64::consts::PI / 36.0;
            let from = Point {
                x: to.x - 30.0 * a.cos(),
                y: to.y - 30.0 * a.sin(),
            };
            let (got, want) = (arrow_corners(from, to, 13.0), by_angle(from, to, 13.0));
            for (g, w) in got.iter().zip(&want) {
                assert!(distance(*g, *w) < 1e-9, "{k}: {g:?} {w:?}");
            }
        }
        // A line of no length: the head points along x, as atan2(0, 0) does.
        let (got, want) = (arrow_corners(to, to, 11.0), by_angle(to, to, 11.0));
        assert!(distance(got[0], want[0]) < 1e-9 && distance(got[1], want[1]) < 1e-9);
    }

    #[test]
    fn a_point_along_an_edge_goes_by_length_over_its_bends() {
        let shape = EdgeShape {
            edge: 0,
            points: vec![
                Point { x: 0.0, y: 0.0 },
                Point { x: 30.0, y: 0.0 },
                Point { x: 30.0, y: 10.0 },
            ],
            label: None,
            label_box: None,
            conditional: false,
            back: false,
            self_loop: false,
            dangling: false,
            bbox: Rect::default(),
        };
        assert_eq!(shape.point_along(0.0), Point { x: 0.0, y: 0.0 });
        assert_eq!(shape.point_along(0.5), Point { x: 20.0, y: 0.0 });
        assert_eq!(shape.point_along(0.9), Point { x: 30.0, y: 6.0 });
        assert_eq!(shape.point_along(2.0), Point { x: 30.0, y: 10.0 });
    }
    use std::collections::BTreeMap;

    fn doc() -> VaultDoc {
        let mut files = BTreeMap::new();
        files.insert(
            "draft.md".into(),
            "---\ntype: start\n---\n# Draft\n\n## Next\n- [[review]]\n".into(),
        );
        files.insert(
            "review.md".into(),
            "# Review\n\n## Next\n- approved -> [[send]]\n- needs revision -> [[draft]]\n- [[review]]\n".into(),
        );
        files.insert(
            "send.md".into(),
            "# Send\n\n## Next\n- [[nowhere]]\n".into(),
        );
        VaultDoc::new(files)
    }

    #[test]
    fn dangling_edges_are_drawn_and_hit() {
        let d = doc();
        let scene = Scene::build(&d, &[], Point::default());
        let stub = scene
            .edges
            .iter()
            .find(|e| e.dangling)
            .expect("a stub for [[nowhere]]");
        assert_eq!(stub.label.as_deref(), Some("nowhere (missing)"));
        assert_eq!(
            scene.hit(stub.label_box.unwrap().center(), 1.0),
            Hit::Label(stub.edge)
        );
    }

    #[test]
    fn viewport_round_trips_at_any_zoom() {
        let mut v = Viewport::default();
        for zoom in [0.02, 0.37, 1.0, 3.9] {
            v.zoom = zoom;
            let p = Point { x: 123.25, y: -7.5 };
            let back = v.to_world(v.to_screen(p));
            assert!((back.x - p.x).abs() < 1e-9 && (back.y - p.y).abs() < 1e-9);
        }
        let before = v.to_world(Point { x: 100.0, y: 50.0 });
        v.zoom_at(Point { x: 100.0, y: 50.0 }, 1.7);
        let after = v.to_world(Point { x: 100.0, y: 50.0 });
        assert!((before.x - after.x).abs() < 1e-9 && (before.y - after.y).abs() < 1e-9);
    }

    #[test]
    fn hits_cards_handles_labels_and_edges_at_every_zoom() {
        let d = doc();
        let scene = Scene::build(&d, &[], Point::default());
        let review = d.node_index("review").unwrap();
        let r = scene.nodes[review];
        for zoom in [0.05, 0.5, 1.0, 2.5] {
            let tol = zoom;
            assert_eq!(scene.hit(r.center(), tol), Hit::Node(review));
            assert_eq!(scene.hit(scene.handle(review), tol), Hit::Handle(review));
            assert_eq!(
                scene.hit(breakpoint_center(&r), tol),
                Hit::Breakpoint(review)
            );
            let approved = d
                .checked
                .plan
                .edges
                .iter()
                .position(|e| e.label.as_deref() == Some("approved"))
                .unwrap();
            let shape = scene.shape_of_edge(approved).unwrap();
            // Zoomed out the label is not drawn: its line is what is hit.
            let label = if zoom >= DETAIL_ZOOM {
                Hit::Label(approved)
            } else {
                Hit::Edge(approved)
            };
            assert_eq!(scene.hit(shape.label_box.unwrap().center(), tol), label);
            if zoom >= 1.0 {
                assert_eq!(scene.hit(shape.head(), tol), Hit::EdgeHead(approved));
            }
        }
        // Far from everything.
        assert_eq!(
            scene.hit(
                Point {
                    x: -5000.0,
                    y: -5000.0
                },
                1.0
            ),
            Hit::Empty
        );
    }

    #[test]
    fn loops_back_and_self_loops_are_separate_shapes() {
        let d = doc();
        let scene = Scene::build(&d, &[], Point::default());
        let back = scene
            .edges
            .iter()
            .find(|e| e.label.as_deref() == Some("needs revision"))
            .unwrap();
        assert!(back.back);
        assert!(
            back.points.len() > 2,
            "a loop back bows out: {:?}",
            back.points
        );
        let own = scene.edges.iter().find(|e| e.self_loop).unwrap();
        assert_eq!(own.points.len(), 4);
    }

    #[test]
    fn fit_shows_everything() {
        let d = doc();
        let scene = Scene::build(&d, &[], Point::default());
        let mut v = Viewport {
            width: 1280.0,
            height: 720.0,
            ..Viewport::default()
        };
        v.fit(scene.bounds, 20.0);
        let vis = v.visible();
        for r in &scene.nodes {
            assert!(
                contains(&vis, Point { x: r.x, y: r.y })
                    && contains(
                        &vis,
                        Point {
                            x: r.x + r.width,
                            y: r.y + r.height
                        }
                    )
            );
        }
    }

    fn line(edge: usize, points: &[(f64, f64)], label: Option<Rect>) -> EdgeShape {
        let points: Vec<Point> = points.iter().map(|&(x, y)| Point { x, y }).collect();
        let mut bbox = bbox_of(&points);
        if let Some(l) = label {
            bbox = union(bbox, l);
        }
        EdgeShape {
            edge,
            points,
            label: label.map(|_| "label".into()),
            label_box: label,
            conditional: false,
            back: false,
            self_loop: false,
            dangling: false,
            bbox,
        }
    }

    fn scene_of(edges: Vec<EdgeShape>) -> Scene {
        Scene {
            nodes: Vec::new(),
            handles: Vec::new(),
            bounds: edges
                .iter()
                .map(|e| e.bbox)
                .reduce(union)
                .unwrap_or_default(),
            edges,
        }
    }

    #[test]
    fn near_parallel_edges_each_own_the_points_nearest_them() {
        // Two edges 10 units apart, the second with a bend: every point
        // along either, up to 4.9 units off towards the other, hits it, in
        // whichever order the edges were drawn.
        let a = line(0, &[(0.0, 0.0), (300.0, 0.0)], None);
        let b = line(1, &[(0.0, 10.0), (150.0, 10.0), (300.0, 10.0)], None);
        for scene in [
            scene_of(vec![a.clone(), b.clone()]),
            scene_of(vec![b.clone(), a.clone()]),
        ] {
            for x in (10..290).step_by(7) {
                let x = x as f64;
                for off in [0.0, 2.0, 4.9] {
                    assert_eq!(
                        scene.hit(Point { x, y: off }, 1.0),
                        Hit::Edge(0),
                        "x {x} off {off}"
                    );
                    assert_eq!(
                        scene.hit(Point { x, y: 10.0 - off }, 1.0),
                        Hit::Edge(1),
                        "x {x} off {off}"
                    );
                }
            }
            assert_eq!(scene.hit(Point { x: 100.0, y: -7.0 }, 1.0), Hit::Empty);
        }
    }

    #[test]
    fn a_bent_edge_is_hit_along_its_bends_not_its_chord() {
        let bent = line(0, &[(0.0, 0.0), (100.0, 80.0), (200.0, 0.0)], None);
        let scene = scene_of(vec![bent]);
        assert_eq!(scene.hit(Point { x: 100.0, y: 78.0 }, 1.0), Hit::Edge(0));
        assert_eq!(scene.hit(Point { x: 100.0, y: 2.0 }, 1.0), Hit::Empty);
    }

    #[test]
    fn of_two_heads_side_by_side_the_nearer_edge_is_hit() {
        // Two edges into one card, their heads 9 units apart.
        let left = line(0, &[(0.0, 0.0), (100.0, 100.0)], None);
        let right = line(1, &[(200.0, 0.0), (109.0, 100.0)], None);
        for edges in [vec![left.clone(), right.clone()], vec![right, left]] {
            let scene = scene_of(edges);
            assert_eq!(
                scene.hit(Point { x: 101.0, y: 100.0 }, 1.0),
                Hit::EdgeHead(0)
            );
            assert_eq!(
                scene.hit(Point { x: 108.0, y: 100.0 }, 1.0),
                Hit::EdgeHead(1)
            );
        }
    }

    #[test]
    fn a_label_is_hit_only_where_it_is_drawn() {
        // Edge 0's label lies over edge 1's line.
        let label = Rect {
            x: 40.0,
            y: 40.0,
            width: 60.0,
            height: 20.0,
        };
        let labelled = line(0, &[(70.0, 0.0), (70.0, 100.0)], Some(label));
        let other = line(1, &[(0.0, 52.0), (300.0, 52.0)], None);
        let scene = scene_of(vec![labelled, other]);
        let on_both = Point { x: 90.0, y: 52.0 };
        assert_eq!(scene.hit(on_both, 1.0), Hit::Label(0));
        // Zoomed out no label is drawn: the line under the pointer is hit.
        assert_eq!(scene.hit(on_both, 0.2), Hit::Edge(1));
    }

    #[test]
    fn handles_sit_off_every_edge_of_their_card() {
        let d = doc();
        let scene = Scene::build(&d, &[], Point::default());
        let plan = &d.checked.plan;
        for (i, r) in scene.nodes.iter().enumerate() {
            let h = scene.handle(i);
            let on_border = (h.y - (r.y + r.height)).abs() < 1e-9
                || (h.y - r.y).abs() < 1e-9
                || (h.x - r.x).abs() < 1e-9
                || (h.x - (r.x + r.width)).abs() < 1e-9;
            assert!(on_border, "handle {h:?} of {r:?}");
            for shape in &scene.edges {
                let e = &plan.edges[shape.edge];
                if e.from == i || e.to == Some(i) {
                    assert!(
                        polyline_distance(h, &shape.points) > HANDLE_RADIUS + 4.0,
                        "handle of {} on edge {}",
                        plan.nodes[i].id,
                        shape.edge
                    );
                }
            }
        }
        // An edge leaving where the first spot is moves the handle on.
        let r = Rect {
            x: 0.0,
            y: 0.0,
            width: 220.0,
            height: 76.0,
        };
        let first = handle_spot(&r, std::iter::empty());
        let through = [
            Point {
                x: first.x,
                y: first.y - 20.0,
            },
            Point {
                x: first.x,
                y: first.y + 50.0,
            },
        ];
        let moved = handle_spot(&r, std::iter::once(&through[..]));
        assert_ne!(moved, first);
        assert!(polyline_distance(moved, &through) > HANDLE_RADIUS + 4.0);
    }

    #[test]
    fn the_minimap_takes_a_corner_free_of_cards_or_none() {
        let card = |x: f64, y: f64| Rect {
            x,
            y,
            width: 100.0,
            height: 50.0,
        };
        let v = Viewport {
            offset: Point { x: 0.0, y: 0.0 },
            zoom: 1.0,
            width: 1000.0,
            height: 600.0,
        };
        let scene = |nodes: Vec<Rect>| Scene {
            nodes,
            ..Scene::default()
        };
        let middle = vec![card(450.0, 270.0), card(300.0, 100.0)];
        let bottom_right = minimap_place(&scene(middle.clone()), &v).unwrap();
        assert_eq!((bottom_right.x, bottom_right.y), (788.0, 458.0));
        // A card in the bottom right corner: the minimap moves aside.
        let mut cards = middle.clone();
        cards.push(card(850.0, 500.0));
        let moved = minimap_place(&scene(cards.clone()), &v).unwrap();
        assert_eq!((moved.x, moved.y), (12.0, 458.0));
        // Cards in every corner: no minimap rather than one over a card.
        cards.extend([card(20.0, 500.0), card(850.0, 20.0), card(20.0, 20.0)]);
        assert_eq!(minimap_place(&scene(cards), &v), None);
        // A phone has no minimap.
        let phone = Viewport {
            width: 390.0,
            height: 700.0,
            ..v
        };
        assert_eq!(minimap_place(&scene(middle), &phone), None);
    }
}
