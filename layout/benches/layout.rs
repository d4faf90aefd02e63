//! `cargo bench -p planvault-layout`: layout of generated plan-shaped graphs
//! (a main path with branches, loops back and skips, as plans have).

use planvault_layout::{layout, Graph, Options};

fn main() {
    divan::main();
}

/// A plan-like graph: a spine, every node also branching a little ahead,
/// every seventh node looping back a few steps (a revision loop).
pub fn plan_like(n: usize) -> Graph {
    let mut edges = Vec::with_capacity(n * 2);
    // A tiny fixed linear congruential generator: same graph every run.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % m.max(1)
    };
    for v in 0..n.saturating_sub(1) {
        edges.push((v, v + 1));
        if v % 3 == 0 && v + 2 < n {
            edges.push((v, v + 2 + next(4).min(n - v - 3)));
        }
        if v % 7 == 6 {
            edges.push((v, v - 1 - next(5).min(v - 1)));
        }
    }
    Graph {
        node_count: n,
        edges,
        start: Some(0),
        ..Graph::default()
    }
}

#[divan::bench(args = [100, 500, 2000, 5000], sample_count = 10)]
fn layered_layout(bencher: divan::Bencher<'_, '_>, n: usize) {
    let graph = plan_like(n);
    let options = Options::default();
    bencher.bench(|| layout(divan::black_box(&graph), &options));
}
