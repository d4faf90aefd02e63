//! Phase 1: find the edges that loop back, so the rest sees a DAG.
//!
//! A depth-first walk from the start (then from nodes nothing points at, then
//! from whatever is left, in index order) marks an edge as a feedback arc when
//! it reaches a node still on the walk's stack. For a plan that is exactly the
//! "needs revision → draft" kind of edge a reader sees as going back. The walk
//! keeps its own stack: no recursion, whatever the plan's depth.

/// `true` for each edge (same index) that is a feedback arc. Self-loops count
/// as feedback arcs; callers draw them separately. Every edge into the start
/// is one too.
pub fn feedback_arcs(n: usize, edges: &[(usize, usize)], start: Option<usize>) -> Vec<bool> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for (i, &(a, b)) in edges.iter().enumerate() {
        out[a].push(i);
        if a != b {
            indegree[b] += 1;
        }
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnStack,
        Done,
    }
    let mut mark = vec![Mark::New; n];
    let mut back = vec![false; edges.len()];
    let roots = start
        .into_iter()
        .filter(|&s| s < n)
        .chain((0..n).filter(|&v| indegree[v] == 0))
        .chain(0..n);
    // (node, index of the next outgoing edge to follow)
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in roots {
        if mark[root] != Mark::New {
            continue;
        }
        mark[root] = Mark::OnStack;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (v, next) = *top;
            if let Some(&e) = out[v].get(next) {
                top.1 += 1;
                let w = edges[e].1;
                match mark[w] {
                    Mark::New => {
                        mark[w] = Mark::OnStack;
                        stack.push((w, 0));
                    }
                    Mark::OnStack => back[e] = true,
                    // The start is the top of the drawing: whatever points at
                    // it points back, even from a part the start never reaches.
                    Mark::Done if Some(w) == start => back[e] = true,
                    Mark::Done => {}
                }
            } else {
                mark[v] = Mark::Done;
                stack.pop();
            }
        }
    }
    back
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_back_to_draft_is_the_feedback_arc() {
        // draft -> review, review -> send, review -> draft
        let arcs = feedback_arcs(3, &[(0, 1), (1, 2), (1, 0)], Some(0));
        assert_eq!(arcs, vec![false, false, true]);
    }

    #[test]
    fn start_decides_which_edge_goes_back() {
        let arcs = feedback_arcs(2, &[(0, 1), (1, 0)], Some(1));
        assert_eq!(arcs, vec![true, false]);
    }

    #[test]
    fn long_chain_does_not_recurse() {
        let n = 200_000;
        let mut edges: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        edges.push((n - 1, 0));
        let arcs = feedback_arcs(n, &edges, Some(0));
        assert_eq!(arcs.iter().filter(|b| **b).count(), 1);
        assert!(arcs[n - 1]);
    }
}
