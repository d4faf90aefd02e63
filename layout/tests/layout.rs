//! Layout invariants on hand-made plans and on random graphs.

use planvault_layout::{crossings, layout, Graph, Options, Point, Route};
use proptest::prelude::*;

fn graph(n: usize, edges: &[(usize, usize)], start: Option<usize>) -> Graph {
    Graph {
        node_count: n,
        edges: edges.to_vec(),
        start,
        ..Graph::default()
    }
}

#[test]
fn draft_review_send_reads_top_down_with_one_loop_back() {
    // draft -> review; review -approved-> send; review -needs revision-> draft
    let g = graph(3, &[(0, 1), (1, 2), (1, 0)], Some(0));
    let l = layout(&g, &Options::default());
    assert_eq!(l.layers, vec![0, 1, 2]);
    assert!(l.nodes[0].y < l.nodes[1].y && l.nodes[1].y < l.nodes[2].y);
    assert_eq!(
        l.routes.iter().map(|r| r.back).collect::<Vec<_>>(),
        vec![false, false, true]
    );
}

#[test]
fn self_loops_are_marked_and_have_no_bends() {
    let l = layout(&graph(2, &[(0, 1), (1, 1)], Some(0)), &Options::default());
    assert!(l.routes[1].self_loop);
    assert!(l.routes[1].bends.is_empty());
}

#[test]
fn long_edge_bends_once_per_crossed_layer() {
    let l = layout(
        &graph(4, &[(0, 1), (1, 2), (2, 3), (0, 3)], Some(0)),
        &Options::default(),
    );
    let bends = &l.routes[3].bends;
    assert_eq!(bends.len(), 2);
    assert!(bends[0].y > l.nodes[0].y + l.nodes[0].height && bends[1].y < l.nodes[3].y);
    // Going down: the first bend is above the second.
    assert!(bends[0].y < bends[1].y);
}

#[test]
fn back_edge_bends_run_from_source_to_target() {
    let l = layout(
        &graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0)], Some(0)),
        &Options::default(),
    );
    let route = &l.routes[3];
    assert!(route.back);
    assert_eq!(route.bends.len(), 2);
    assert!(
        route.bends[0].y > route.bends[1].y,
        "a back edge climbs: {:?}",
        route.bends
    );
}

#[test]
fn pinned_nodes_stay_put_and_their_edges_go_straight() {
    let mut g = graph(4, &[(0, 1), (1, 2), (2, 3), (0, 3)], Some(0));
    g.pinned.insert(3, Point { x: -500.0, y: 12.5 });
    let l = layout(&g, &Options::default());
    assert_eq!((l.nodes[3].x, l.nodes[3].y), (-500.0, 12.5));
    assert!(l.routes[3].bends.is_empty() && l.routes[2].bends.is_empty());
    assert_eq!(l.bounds.x, -500.0);
}

#[test]
fn dangling_edges_get_an_empty_route() {
    let l = layout(&graph(2, &[(0, 1), (1, 7)], Some(0)), &Options::default());
    assert_eq!(l.routes.len(), 2);
    assert_eq!(l.routes[1], Default::default());
}

#[test]
fn empty_graph() {
    let l = layout(&graph(0, &[], None), &Options::default());
    assert!(l.nodes.is_empty());
    assert_eq!(l.bounds, Default::default());
}

#[test]
fn crossing_reduction_untangles_a_ladder() {
    // Two parallel chains whose rungs are listed crosswise.
    let edges = [
        (0, 2),
        (0, 1),
        (1, 3),
        (2, 4),
        (3, 5),
        (4, 6),
        (1, 4),
        (2, 3),
    ];
    let g = graph(7, &edges, Some(0));
    let no_sweeps = Options {
        sweeps: 0,
        ..Options::default()
    };
    assert!(crossings(&g, &Options::default()) <= crossings(&g, &no_sweeps));
}

#[test]
fn big_plans_lay_out_without_recursion() {
    let n = 20_000;
    let mut edges: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    edges.push((n - 1, 0));
    let l = layout(&graph(n, &edges, Some(0)), &Options::default());
    assert_eq!(l.layers[n - 1], n - 1);
    // The loop back spans more than `max_dummy_span` layers: drawn direct.
    assert!(l.routes[n - 1].back && l.routes[n - 1].bends.is_empty());
}

fn arb_graph() -> impl Strategy<Value = Graph> {
    (1usize..40).prop_flat_map(|n| {
        (
            proptest::collection::vec((0..n, 0..n), 0..n * 3),
            proptest::option::of(0..n),
        )
            .prop_map(move |(edges, start)| graph(n, &edges, start))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_forward_edge_points_down_and_boxes_never_overlap(g in arb_graph()) {
        let options = Options::default();
        let l = layout(&g, &options);
        prop_assert_eq!(l.nodes.len(), g.node_count);
        prop_assert_eq!(l.routes.len(), g.edges.len());
        for (&(a, b), route) in g.edges.iter().zip(&l.routes) {
            if a == b {
                prop_assert!(route.self_loop);
            } else if route.back {
                prop_assert!(l.layers[b] < l.layers[a]);
                prop_assert_eq!(route.bends.len(), l.layers[a] - l.layers[b] - 1);
            } else {
                prop_assert!(l.layers[a] < l.layers[b]);
                prop_assert_eq!(route.bends.len(), l.layers[b] - l.layers[a] - 1);
            }
        }
        if let Some(s) = g.start {
            prop_assert_eq!(l.layers[s], 0);
        }
        for i in 0..l.nodes.len() {
            for j in i + 1..l.nodes.len() {
                let (a, b) = (l.nodes[i], l.nodes[j]);
                let apart = a.x + a.width + options.node_gap - 1e-6 <= b.x
                    || b.x + b.width + options.node_gap - 1e-6 <= a.x
                    || a.y + a.height <= b.y
                    || b.y + b.height <= a.y;
                prop_assert!(apart, "nodes {} and {} overlap: {:?} {:?}", i, j, a, b);
            }
        }
        // Same input, same drawing.
        prop_assert_eq!(layout(&g, &options), l);
    }
}

#[test]
fn loose_notes_go_in_a_grid_under_the_flow_in_order() {
    // 0 -> 1 is the flow; 2..8 link nowhere (6 loose notes), 8 -> a missing note.
    let mut g = graph(9, &[(0, 1), (8, 99)], Some(0));
    g.pinned.insert(
        7,
        Point {
            x: -500.0,
            y: -500.0,
        },
    );
    let o = Options::default();
    let l = layout(&g, &o);
    let flow_bottom = l.nodes[1].y + l.nodes[1].height;
    let cell = (o.node_width + o.node_gap, o.node_height + o.layer_gap);
    // ceil(sqrt(7 · 1.6 · 144 / 240)) = 3 columns, from the flow's left edge.
    let left = l.nodes[0].x.min(l.nodes[1].x);
    for (i, v) in [2, 3, 4, 5, 6, 8].into_iter().enumerate() {
        let at = if v == 8 { 6 } else { i };
        assert_eq!(l.nodes[v].x, left + (at % 3) as f64 * cell.0, "note {v}");
        assert_eq!(
            l.nodes[v].y,
            flow_bottom + o.layer_gap + (at / 3) as f64 * cell.1,
            "note {v}"
        );
        assert_eq!(l.layers[v], 2 + at / 3);
    }
    // A pinned loose note stays where it was put; its slot stays free.
    assert_eq!((l.nodes[7].x, l.nodes[7].y), (-500.0, -500.0));
    assert_eq!(l.routes[1], Route::default());
}

#[test]
fn a_vault_with_no_links_is_a_grid_near_a_screens_shape() {
    let l = layout(&graph(173, &[], None), &Options::default());
    // 13 columns, 14 rows: 3,080 × 1,944, not one row 41,000 wide.
    assert_eq!((l.bounds.width, l.bounds.height), (3080.0, 1944.0));
    assert_eq!((l.nodes[12].y, l.nodes[13].y), (0.0, 144.0));
    assert_eq!(l.nodes[13].x, 0.0);
}

#[test]
fn loose_notes_fill_their_grid_in_the_order_given() {
    // 0 -> 1 is the flow; 2..6 are loose, listed 5, 2, 4, 3.
    let mut g = graph(6, &[(0, 1)], Some(0));
    let by_index = layout(&g, &Options::default());
    g.order = vec![1, 5, 0, 2, 4, 3];
    let l = layout(&g, &Options::default());
    let slot = |l: &planvault_layout::Layout, v: usize| (l.nodes[v].x, l.nodes[v].y);
    for (v, was) in [(5, 2), (2, 3), (4, 4), (3, 5)] {
        assert_eq!(slot(&l, v), slot(&by_index, was), "node {v}");
    }
    // The flow is laid out as before.
    assert_eq!(slot(&l, 0), slot(&by_index, 0));
    // An order that is not one of every node is not used.
    g.order = vec![3, 2];
    assert_eq!(layout(&g, &Options::default()), by_index);
}

#[test]
fn folders_are_named_below_the_folder_all_notes_share() {
    let plan = |ids: &[&str]| {
        let files = ids
            .iter()
            .map(|id| (format!("{id}.md"), "# Note\n".to_string()))
            .collect();
        planvault_core::vault::load(&files).0
    };
    let f = planvault_layout::folders(&plan(&[
        "plans/launch/start",
        "plans/launch/research/Sources",
        "plans/launch/research/deep/Notes",
        "plans/launch/build/Ship",
    ]));
    // Nodes come in path order: build/Ship, research/Sources,
    // research/deep/Notes, start.
    assert_eq!(f.names, ["build", "research", ""]);
    assert_eq!(f.of_node, [0, 1, 1, 2]);
    // All in one subfolder: that is the shared folder, its own subfolders
    // the groups.
    let f = planvault_layout::folders(&plan(&["a/x/1", "a/x/2", "a/y/3"]));
    assert_eq!(f.names, ["x", "y"]);
    assert_eq!(f.of_node, [0, 0, 1]);
}

#[test]
fn loose_notes_of_several_folders_are_a_block_each() {
    // 0 -> 1 is the flow; folder 1 has 4 loose notes, folder 2 has 2.
    let mut g = graph(8, &[(0, 1)], Some(0));
    g.groups = vec![0, 0, 1, 1, 1, 1, 2, 2];
    let o = Options::default();
    let l = layout(&g, &o);
    let (w, h) = (o.node_width + o.node_gap, o.node_height + o.layer_gap);
    let left = l.nodes[0].x.min(l.nodes[1].x);
    let top = l.nodes[1].y + l.nodes[1].height + o.layer_gap;
    let at = |v: usize| ((l.nodes[v].x - left) / w, (l.nodes[v].y - top) / h);
    // Folder 1: 2 × 2. Beside it the shelf would be 4.5 cells wide for 3
    // rows' worth of notes, so folder 2 starts the next shelf, a cell under
    // it: 2 × 1.
    assert_eq!(
        [at(2), at(3), at(4), at(5)],
        [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
    );
    assert_eq!([at(6), at(7)], [(0.0, 3.0), (1.0, 3.0)]);

    // Nine folders of four: shelves of three 2 × 2 blocks.
    let mut g = graph(36, &[], None);
    g.groups = (0..36).map(|v| v / 4).collect();
    let l = layout(&g, &o);
    let at = |v: usize| (l.nodes[v].x / w, l.nodes[v].y / h);
    assert_eq!(
        [at(0), at(4), at(8), at(12), at(35)],
        [(0.0, 0.0), (2.5, 0.0), (5.0, 0.0), (0.0, 3.0), (6.0, 7.0)]
    );
    // The room between blocks is what `folder_gaps` says (the overview's
    // regions stay within it).
    let gaps = o.folder_gaps();
    assert_eq!(l.nodes[4].x - (l.nodes[1].x + l.nodes[1].width), gaps.x);
    assert_eq!(l.nodes[12].y - (l.nodes[2].y + l.nodes[2].height), gaps.y);
}
