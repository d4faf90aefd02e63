//! Waves: Kahn's layers over the dependency edges. A wave is every step whose
//! dependencies all finished in earlier waves, so the schedule is a pure
//! function of the plan (a replay forms the same waves).

use crate::{EdgeKind, Plan};

/// The plan's nodes in dependency layers, each ascending by declaration.
/// Nodes on or behind a dependency cycle appear in no wave.
#[cfg_attr(planvault_size, optimize(size))]
pub fn waves(plan: &Plan) -> Vec<Vec<usize>> {
    let n = plan.nodes.len();
    let mut indegree = vec![0usize; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for edge in &plan.edges {
        if let (EdgeKind::After, Some(to)) = (edge.kind, edge.to) {
            indegree[to] += 1;
            dependents[edge.from].push(to);
        }
    }
    let mut current: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut out = Vec::new();
    while !current.is_empty() {
        let mut next = Vec::new();
        for &u in &current {
            for &v in &dependents[u] {
                indegree[v] -= 1;
                if indegree[v] == 0 {
                    next.push(v);
                }
            }
        }
        next.sort_unstable();
        out.push(std::mem::replace(&mut current, next));
    }
    out
}
