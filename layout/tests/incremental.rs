//! The incremental layout an edit uses: what was drawn stays put, only the
//! new is placed, and nothing overlaps.

use planvault_layout::{extend, layout, Graph, Options, Point, Previous};
use proptest::prelude::*;

fn graph(n: usize, edges: &[(usize, usize)], start: Option<usize>) -> Graph {
    Graph {
        node_count: n,
        edges: edges.to_vec(),
        start,
        ..Graph::default()
    }
}

/// The drawing of `before` as what an edit keeps: every node and edge of
/// it, by index (the edit appends nodes and edges after them).
fn previous_of(before: &Graph, options: &Options) -> Previous {
    let drawn = layout(before, options);
    Previous {
        nodes: drawn
            .nodes
            .iter()
            .enumerate()
            .map(|(i, r)| (i, Point { x: r.x, y: r.y }))
            .collect(),
        bends: drawn
            .routes
            .iter()
            .enumerate()
            .map(|(i, r)| (i, r.bends.clone()))
            .collect(),
    }
}

#[test]
fn an_added_edge_moves_no_card() {
    let options = Options::default();
    let before = graph(4, &[(0, 1), (0, 2), (1, 3)], Some(0));
    let after = graph(4, &[(0, 1), (0, 2), (1, 3), (2, 3)], Some(0));
    let kept = previous_of(&before, &options);
    let l = extend(&after, &kept, &options);
    assert_eq!(l.nodes, layout(&before, &options).nodes);
    // The new edge goes direct (it crosses no card).
    assert!(l.routes[3].bends.is_empty());
    // A full layout of the new graph would have moved some card.
    assert_ne!(layout(&after, &options).nodes, l.nodes);
}

#[test]
fn a_new_note_goes_under_the_card_that_links_to_it() {
    let options = Options::default();
    let before = graph(2, &[(0, 1)], Some(0));
    let after = graph(3, &[(0, 1), (1, 2)], Some(0));
    let kept = previous_of(&before, &options);
    let l = extend(&after, &kept, &options);
    let (parent, new) = (l.nodes[1], l.nodes[2]);
    assert_eq!(new.x, parent.x);
    assert_eq!(new.y, parent.y + options.node_height + options.layer_gap);
}

#[test]
fn a_new_edge_that_would_cross_a_card_goes_round_it() {
    // A chain 0 -> 1 -> 2 drawn in one column; a new edge 0 -> 2 would run
    // straight through 1, and a new loop back 2 -> 0 too.
    let options = Options::default();
    let before = graph(3, &[(0, 1), (1, 2)], Some(0));
    let after = graph(3, &[(0, 1), (1, 2), (0, 2), (2, 0)], Some(0));
    let l = extend(&after, &previous_of(&before, &options), &options);
    let middle = l.nodes[1];
    let forward = &l.routes[2].bends;
    assert_eq!(forward.len(), 2);
    assert!(
        forward.iter().all(|p| p.x < middle.x),
        "left of the cards: {forward:?}"
    );
    let back = &l.routes[3].bends;
    assert!(l.routes[3].back);
    assert!(
        back.iter().all(|p| p.x > middle.x + middle.width),
        "right of them: {back:?}"
    );
}

#[test]
fn nothing_kept_is_the_full_layout() {
    let options = Options::default();
    let g = graph(3, &[(0, 1), (1, 2)], Some(0));
    assert_eq!(
        extend(&g, &Previous::default(), &options),
        layout(&g, &options)
    );
}

#[test]
fn a_pinned_position_wins_over_the_kept_one() {
    let options = Options::default();
    let before = graph(2, &[(0, 1)], Some(0));
    let mut after = before.clone();
    let at = Point { x: 900.0, y: -40.0 };
    after.pinned.insert(1, at);
    let l = extend(&after, &previous_of(&before, &options), &options);
    assert_eq!((l.nodes[1].x, l.nodes[1].y), (at.x, at.y));
}

/// A graph, and an edit of it: new nodes and edges appended.
fn arb_edit() -> impl Strategy<Value = (Graph, Graph)> {
    (1usize..30, 0usize..6).prop_flat_map(|(n, added)| {
        let total = n + added;
        (
            proptest::collection::vec((0..n, 0..n), 0..n * 2),
            proptest::collection::vec((0..total, 0..total), 0..added * 2 + 3),
            proptest::option::of(0..n),
        )
            .prop_map(move |(old, new, start)| {
                let before = graph(n, &old, start);
                let mut all = old.clone();
                all.extend(new);
                (before, graph(total, &all, start))
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn kept_cards_never_move_and_new_ones_never_overlap((before, after) in arb_edit()) {
        let options = Options::default();
        let drawn = layout(&before, &options);
        let l = extend(&after, &previous_of(&before, &options), &options);
        prop_assert_eq!(l.nodes.len(), after.node_count);
        prop_assert_eq!(l.routes.len(), after.edges.len());
        prop_assert_eq!(&l.nodes[..before.node_count], &drawn.nodes[..]);
        for (i, route) in drawn.routes.iter().enumerate() {
            prop_assert_eq!(&l.routes[i].bends, &route.bends);
        }
        for i in before.node_count..l.nodes.len() {
            for j in 0..l.nodes.len() {
                if i == j {
                    continue;
                }
                let (a, b) = (l.nodes[i], l.nodes[j]);
                let apart = a.x + a.width <= b.x
                    || b.x + b.width <= a.x
                    || a.y + a.height <= b.y
                    || b.y + b.height <= a.y;
                prop_assert!(apart, "new node {} overlaps {}: {:?} {:?}", i, j, a, b);
            }
        }
        // Same input, same drawing.
        prop_assert_eq!(extend(&after, &previous_of(&before, &options), &options), l);
    }
}
