//! Phase 3: the order within each layer. Edges longer than one layer are split
//! into dummy vertices (the bend points of the drawing); barycentre sweeps,
//! down then up, reduce crossings, and the order with the fewest crossings
//! seen is kept.

use crate::Options;
use std::collections::VecDeque;

/// Items are real nodes (`0..n`) followed by dummies (`n..`).
#[derive(Debug, Clone)]
pub struct Ordering {
    pub node_count: usize,
    /// Items per layer, left to right.
    pub layers: Vec<Vec<usize>>,
    /// Neighbours of each item in the layer above / below.
    pub up: Vec<Vec<usize>>,
    pub down: Vec<Vec<usize>>,
    /// Dummies of each (non-self-loop) edge, top to bottom; indexed like the
    /// edges handed to [`order`].
    chains: Vec<Vec<usize>>,
}

impl Ordering {
    pub fn item_count(&self) -> usize {
        self.up.len()
    }

    pub fn chain(&self, edge: usize) -> &[usize] {
        self.chains.get(edge).map_or(&[], Vec::as_slice)
    }

    /// Crossings between every pair of consecutive layers.
    pub fn crossings(&self) -> usize {
        let mut pos = vec![0usize; self.item_count()];
        for layer in &self.layers {
            for (i, &v) in layer.iter().enumerate() {
                pos[v] = i;
            }
        }
        self.layers
            .windows(2)
            .map(|pair| bilayer_crossings(&pair[0], &pair[1], &self.down, &pos))
            .sum()
    }
}

/// Splits long edges and orders every layer.
pub fn order(
    n: usize,
    dag: &[Option<(usize, usize)>],
    layer_of_node: &[usize],
    start: Option<usize>,
    options: &Options,
) -> Ordering {
    let depth = layer_of_node.iter().copied().max().map_or(0, |m| m + 1);
    let mut layer_of: Vec<usize> = layer_of_node.to_vec();
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut chains = vec![Vec::new(); dag.len()];
    for (i, &(a, b)) in dag
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_ref().map(|e| (i, e)))
    {
        let span = layer_of[b] - layer_of[a];
        if span > options.max_dummy_span {
            continue; // drawn direct; too long to route through every layer
        }
        let mut prev = a;
        for l in layer_of[a] + 1..layer_of[b] {
            let d = up.len();
            up.push(Vec::new());
            down.push(Vec::new());
            layer_of.push(l);
            chains[i].push(d);
            down[prev].push(d);
            up[d].push(prev);
            prev = d;
        }
        down[prev].push(b);
        up[b].push(prev);
    }

    // Initial order: breadth-first from the start, then from every other
    // top item, each item appended to its layer when first reached.
    let items = up.len();
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); depth];
    let mut seen = vec![false; items];
    let roots = start.filter(|&s| s < n).into_iter().chain(0..items);
    let mut queue = VecDeque::new();
    for root in roots {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        queue.push_back(root);
        while let Some(v) = queue.pop_front() {
            layers[layer_of[v]].push(v);
            for &w in &down[v] {
                if !seen[w] {
                    seen[w] = true;
                    queue.push_back(w);
                }
            }
        }
    }

    let mut ordering = Ordering {
        node_count: n,
        layers,
        up,
        down,
        chains,
    };
    let mut best = ordering.layers.clone();
    let mut best_crossings = ordering.crossings();
    let mut pos = vec![0usize; items];
    for _ in 0..options.sweeps {
        if best_crossings == 0 {
            break;
        }
        for l in 1..depth {
            sweep_layer(&mut ordering.layers, l, &ordering.up, &mut pos, l - 1);
        }
        for l in (0..depth.saturating_sub(1)).rev() {
            sweep_layer(&mut ordering.layers, l, &ordering.down, &mut pos, l + 1);
        }
        let c = ordering.crossings();
        if c < best_crossings {
            best_crossings = c;
            best = ordering.layers.clone();
        }
    }
    ordering.layers = best;
    ordering
}

/// Reorders layer `l` by the mean position of each item's neighbours in the
/// fixed layer `fixed`; items without such neighbours keep their place.
fn sweep_layer(
    layers: &mut [Vec<usize>],
    l: usize,
    neighbours: &[Vec<usize>],
    pos: &mut [usize],
    fixed: usize,
) {
    for (i, &v) in layers[fixed].iter().enumerate() {
        pos[v] = i;
    }
    let mut keyed: Vec<(f64, usize, usize)> = layers[l]
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let ns = &neighbours[v];
            let key = if ns.is_empty() {
                i as f64
            } else {
                ns.iter().map(|&w| pos[w] as f64).sum::<f64>() / ns.len() as f64
            };
            (key, i, v)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    layers[l] = keyed.into_iter().map(|(_, _, v)| v).collect();
}

/// Crossings between two consecutive layers: inversions among the segments'
/// lower ends once sorted by their upper ends (a Fenwick tree, O(E log V)).
fn bilayer_crossings(
    upper: &[usize],
    lower: &[usize],
    down: &[Vec<usize>],
    pos: &[usize],
) -> usize {
    let mut segments: Vec<(usize, usize)> = upper
        .iter()
        .flat_map(|&v| down[v].iter().map(move |&w| (pos[v], pos[w])))
        .collect();
    segments.sort_unstable();
    let size = lower.len() + 1;
    let mut tree = vec![0usize; size + 1];
    let mut count = 0;
    for (seen, &(_, p)) in segments.iter().enumerate() {
        // Segments already in the tree whose lower end lies right of p cross this one.
        let mut i = p + 1;
        let mut not_greater = 0;
        while i > 0 {
            not_greater += tree[i];
            i -= i & i.wrapping_neg();
        }
        count += seen - not_greater;
        let mut i = p + 1;
        while i <= size {
            tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_a_single_crossing() {
        // upper: a b, lower: c d, edges a->d, b->c
        let down = vec![vec![3], vec![2], vec![], vec![]];
        let pos = vec![0, 1, 0, 1];
        assert_eq!(bilayer_crossings(&[0, 1], &[2, 3], &down, &pos), 1);
        let down = vec![vec![2], vec![3], vec![], vec![]];
        assert_eq!(bilayer_crossings(&[0, 1], &[2, 3], &down, &pos), 0);
    }

    #[test]
    fn long_edges_get_one_dummy_per_layer() {
        let dag = [Some((0, 1)), Some((1, 2)), Some((0, 2))];
        let o = order(3, &dag, &[0, 1, 2], Some(0), &Options::default());
        assert_eq!(o.chain(2).len(), 1);
        assert_eq!(o.chain(0).len(), 0);
        assert_eq!(o.item_count(), 4);
    }

    #[test]
    fn sweeps_remove_an_avoidable_crossing() {
        // 0 -> {1, 2}; 1 -> 4, 2 -> 3; BFS puts 3 before 4 only if 2 came
        // first, so the initial order crosses and the sweep must fix it.
        let dag = [
            Some((0, 2)),
            Some((0, 1)),
            Some((1, 4)),
            Some((2, 3)),
            Some((1, 3)),
        ];
        let layers = [0, 1, 1, 2, 2];
        let o = order(5, &dag, &layers, Some(0), &Options::default());
        assert_eq!(o.crossings(), 0);
    }
}
