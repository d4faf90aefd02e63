//! What a pointer drag on the canvas means, as a small state machine kept
//! apart from the browser so it can be tested: press on a card and drag to
//! move it (with the rest of the selection), press on the handle under a card
//! and drop on another to connect, drag an arrow head onto another card to
//! retarget, drag the background to pan (Shift: marquee select).

use crate::geometry::{rect_between, Hit};
use planvault_layout::{Point, Rect};

/// Movement below this many screen pixels is a click, not a drag.
pub const DRAG_THRESHOLD: f64 = 4.0;

#[derive(Debug, Clone, PartialEq)]
pub enum Gesture {
    Idle,
    Pressed {
        hit: Hit,
        screen: Point,
        world: Point,
        additive: bool,
    },
    Panning {
        last: Point,
    },
    MovingNodes {
        nodes: Vec<usize>,
        from: Point,
        delta: Point,
    },
    Connecting {
        from: usize,
        to: Point,
    },
    Retargeting {
        edge: usize,
        to: Point,
    },
    Marquee {
        from: Point,
        to: Point,
        additive: bool,
    },
}

/// What a finished gesture asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Nothing,
    /// A click (no drag) on whatever was hit; `additive` with Shift/Ctrl.
    Click {
        hit: Hit,
        additive: bool,
    },
    Move {
        nodes: Vec<usize>,
        delta: Point,
    },
    Connect {
        from: usize,
        to: usize,
    },
    Retarget {
        edge: usize,
        to: usize,
    },
    Select {
        area: Rect,
        additive: bool,
    },
}

impl Gesture {
    pub fn press(hit: Hit, screen: Point, world: Point, additive: bool) -> Gesture {
        Gesture::Pressed {
            hit,
            screen,
            world,
            additive,
        }
    }

    /// The pointer moved. `selected` is the current node selection (a drag on
    /// a selected card moves all of it). Returns the pan in screen pixels to
    /// apply, if the gesture is a pan.
    pub fn drag(&mut self, screen: Point, world: Point, selected: &[usize]) -> Option<(f64, f64)> {
        match self {
            Gesture::Idle => None,
            Gesture::Pressed {
                hit,
                screen: start,
                world: start_world,
                additive,
            } => {
                let moved = ((screen.x - start.x).powi(2) + (screen.y - start.y).powi(2)).sqrt();
                if moved < DRAG_THRESHOLD {
                    return None;
                }
                let (hit, start, start_world, additive) = (*hit, *start, *start_world, *additive);
                *self = match hit {
                    Hit::Node(i) => {
                        let nodes = if selected.contains(&i) {
                            selected.to_vec()
                        } else {
                            vec![i]
                        };
                        Gesture::MovingNodes {
                            nodes,
                            from: start_world,
                            delta: Point::default(),
                        }
                    }
                    Hit::Handle(i) => Gesture::Connecting { from: i, to: world },
                    Hit::EdgeHead(e) => Gesture::Retargeting { edge: e, to: world },
                    Hit::Empty if additive => Gesture::Marquee {
                        from: start_world,
                        to: world,
                        additive,
                    },
                    _ => Gesture::Panning { last: start },
                };
                self.drag(screen, world, selected)
            }
            Gesture::Panning { last } => {
                let d = (screen.x - last.x, screen.y - last.y);
                *last = screen;
                Some(d)
            }
            Gesture::MovingNodes { from, delta, .. } => {
                *delta = Point {
                    x: world.x - from.x,
                    y: world.y - from.y,
                };
                None
            }
            Gesture::Connecting { to, .. }
            | Gesture::Retargeting { to, .. }
            | Gesture::Marquee { to, .. } => {
                *to = world;
                None
            }
        }
    }

    /// The pointer was released over `hit`.
    pub fn release(self, hit: Hit) -> Outcome {
        let target = match hit {
            Hit::Node(i) | Hit::Handle(i) | Hit::Breakpoint(i) => Some(i),
            _ => None,
        };
        match self {
            Gesture::Idle | Gesture::Panning { .. } => Outcome::Nothing,
            Gesture::Pressed { hit, additive, .. } => Outcome::Click { hit, additive },
            Gesture::MovingNodes { nodes, delta, .. } if delta.x != 0.0 || delta.y != 0.0 => {
                Outcome::Move { nodes, delta }
            }
            Gesture::MovingNodes { .. } => Outcome::Nothing,
            Gesture::Connecting { from, .. } => {
                target.map_or(Outcome::Nothing, |to| Outcome::Connect { from, to })
            }
            Gesture::Retargeting { edge, .. } => {
                target.map_or(Outcome::Nothing, |to| Outcome::Retarget { edge, to })
            }
            Gesture::Marquee { from, to, additive } => Outcome::Select {
                area: rect_between(from, to),
                additive,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    #[test]
    fn small_moves_are_clicks() {
        let mut g = Gesture::press(Hit::Node(2), p(10.0, 10.0), p(10.0, 10.0), false);
        assert_eq!(g.drag(p(12.0, 11.0), p(12.0, 11.0), &[]), None);
        assert_eq!(
            g.release(Hit::Node(2)),
            Outcome::Click {
                hit: Hit::Node(2),
                additive: false
            }
        );
    }

    #[test]
    fn a_click_on_a_breakpoint_dot_is_a_click_on_it() {
        let mut g = Gesture::press(Hit::Breakpoint(1), p(0.0, 0.0), p(0.0, 0.0), false);
        g.drag(p(1.0, 1.0), p(1.0, 1.0), &[]);
        assert_eq!(
            g.release(Hit::Breakpoint(1)),
            Outcome::Click {
                hit: Hit::Breakpoint(1),
                additive: false
            }
        );
    }

    #[test]
    fn dragging_a_selected_card_moves_the_selection() {
        let mut g = Gesture::press(Hit::Node(2), p(0.0, 0.0), p(100.0, 100.0), false);
        g.drag(p(20.0, 0.0), p(120.0, 100.0), &[1, 2]);
        g.drag(p(40.0, 10.0), p(140.0, 110.0), &[1, 2]);
        assert_eq!(
            g.release(Hit::Empty),
            Outcome::Move {
                nodes: vec![1, 2],
                delta: p(40.0, 10.0)
            }
        );
    }

    #[test]
    fn handle_to_card_connects_and_head_to_card_retargets() {
        let mut g = Gesture::press(Hit::Handle(0), p(0.0, 0.0), p(0.0, 0.0), false);
        g.drag(p(50.0, 50.0), p(50.0, 50.0), &[]);
        assert_eq!(
            g.clone().release(Hit::Node(3)),
            Outcome::Connect { from: 0, to: 3 }
        );
        assert_eq!(g.release(Hit::Empty), Outcome::Nothing);
        let mut g = Gesture::press(Hit::EdgeHead(5), p(0.0, 0.0), p(0.0, 0.0), false);
        g.drag(p(50.0, 50.0), p(50.0, 50.0), &[]);
        assert_eq!(
            g.release(Hit::Handle(1)),
            Outcome::Retarget { edge: 5, to: 1 }
        );
    }

    #[test]
    fn background_drag_pans_or_selects() {
        let mut g = Gesture::press(Hit::Empty, p(0.0, 0.0), p(0.0, 0.0), false);
        assert_eq!(g.drag(p(10.0, 0.0), p(10.0, 0.0), &[]), Some((10.0, 0.0)));
        assert_eq!(g.drag(p(15.0, 5.0), p(15.0, 5.0), &[]), Some((5.0, 5.0)));
        let mut g = Gesture::press(Hit::Empty, p(0.0, 0.0), p(0.0, 0.0), true);
        g.drag(p(30.0, 40.0), p(30.0, 40.0), &[]);
        assert_eq!(
            g.release(Hit::Empty),
            Outcome::Select {
                area: Rect {
                    x: 0.0,
                    y: 0.0,
                    width: 30.0,
                    height: 40.0
                },
                additive: true
            }
        );
    }
}
