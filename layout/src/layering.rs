//! Phase 2: layers. Longest path from the sources of the DAG, so every edge
//! points down and the start sits in layer 0.

use std::collections::VecDeque;

/// The layer of each node. `dag` holds the edges as the acyclic phase turned
/// them (`None` for self-loops).
pub fn longest_path(n: usize, dag: &[Option<(usize, usize)>], start: Option<usize>) -> Vec<usize> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for &(a, b) in dag.iter().flatten() {
        out[a].push(b);
        indegree[b] += 1;
    }
    let mut layer = vec![0usize; n];
    // Kahn's order; the start first so ties never push it down.
    let mut queue: VecDeque<usize> = start
        .filter(|&s| s < n && indegree[s] == 0)
        .into_iter()
        .collect();
    queue.extend((0..n).filter(|&v| indegree[v] == 0 && Some(v) != start));
    while let Some(v) = queue.pop_front() {
        for &w in &out[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push_back(w);
            }
        }
    }
    layer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_follow_the_longest_path() {
        // 0 -> 1 -> 2, 0 -> 2: node 2 goes below 1, not beside it.
        let layers = longest_path(3, &[Some((0, 1)), Some((1, 2)), Some((0, 2))], Some(0));
        assert_eq!(layers, vec![0, 1, 2]);
    }

    #[test]
    fn self_loops_do_not_count() {
        assert_eq!(longest_path(2, &[None, Some((0, 1))], Some(0)), vec![0, 1]);
    }
}
