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
    pub bounds: Rect,
}

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

/// The handle a drag starts a new edge from: bottom centre of the card.
pub fn handle_center(r: &Rect) -> Point {
    Point {
        x: r.x + r.width / 2.0,
        y: r.y + r.height,
    }
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
        Scene {
            nodes,
            edges,
            bounds,
        }
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

    /// What lies under the world point `p`; `tolerance` is in world units.
    /// Handles and edge heads win over cards (so the small targets stay
    /// reachable), cards over labels and edge lines (as they are drawn).
    pub fn hit(&self, p: Point, tolerance: f64) -> Hit {
        // Small targets grow by the tolerance only up to their own size, so
        // zoomed far out they never swallow the card they sit on.
        let small = tolerance.min(HANDLE_RADIUS);
        for (i, r) in self.nodes.iter().enumerate().rev() {
            if distance(p, handle_center(r)) <= HANDLE_RADIUS + small {
                return Hit::Handle(i);
            }
            if distance(p, breakpoint_center(r)) <= BREAKPOINT_RADIUS + small {
                return Hit::Breakpoint(i);
            }
        }
        for e in self.edges.iter().rev() {
            if distance(p, e.head()) <= small + 4.0 {
                return Hit::EdgeHead(e.edge);
            }
        }
        // Cards are drawn over edges and their labels: they win here too.
        if let Some(i) = self.nodes.iter().rposition(|r| contains(r, p)) {
            return Hit::Node(i);
        }
        for e in self.edges.iter().rev() {
            if e.label_box.is_some_and(|b| contains(&b, p)) {
                return Hit::Label(e.edge);
            }
        }
        let near = self
            .edges
            .iter()
            .filter(|e| contains(&inflate(e.bbox, tolerance), p))
            .map(|e| (polyline_distance(p, &e.points), e.edge))
            .filter(|(d, _)| *d <= tolerance)
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match near {
            Some((_, edge)) => Hit::Edge(edge),
            None => Hit::Empty,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
            scene.hit(stub.label_box.unwrap().center(), 6.0),
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
            let tol = 6.0 / zoom;
            assert_eq!(scene.hit(r.center(), tol), Hit::Node(review));
            assert_eq!(scene.hit(handle_center(&r), tol), Hit::Handle(review));
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
            assert_eq!(
                scene.hit(shape.label_box.unwrap().center(), tol),
                Hit::Label(approved)
            );
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
                6.0
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
}
