//! The engine's own overhead per hop, with instant answers and no I/O: a
//! 1,000-node path plan walked from start to terminal (1,000 work requests,
//! 999 unconditional hops), and a 1,000-step draft/review loop plan where
//! every hop goes through a YES/NO grid.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use planvault_core::engine::{drive, Answer, Engine, Event, Journal, RequestBody, RunConfig};
use planvault_core::{
    Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, Status, VaultNode,
};
use std::hint::black_box;

fn node(i: usize, max_visits: u32) -> Node {
    Node {
        id: format!("step-{i:04}"),
        title: format!("Step {i}"),
        body: format!("Do step {i} of the plan."),
        kind: if i == 0 {
            NodeKind::Start
        } else {
            NodeKind::Step
        },
        status: Status::Pending,
        tools: vec![],
        role: None,
        max_visits,
        pos: None,
        ext: NodeExt::Vault(VaultNode {
            file: format!("step-{i:04}.md"),
            ..Default::default()
        }),
    }
}

fn edge(from: usize, to: usize, label: Option<&str>) -> Edge {
    Edge {
        from,
        to: Some(to),
        target: format!("step-{to:04}"),
        label: label.map(str::to_string),
        kind: if label.is_some() {
            EdgeKind::Conditional
        } else {
            EdgeKind::Unconditional
        },
        pos: None,
        written: None,
    }
}

fn path_plan(n: usize) -> Plan {
    let mut plan = Plan::new(PlanFormat::Vault);
    plan.nodes = (0..n).map(|i| node(i, 3)).collect();
    plan.edges = (1..n).map(|i| edge(i - 1, i, None)).collect();
    plan.start = Some(0);
    plan
}

/// Each node: `ok` → next, `again` → itself (so every hop is a grid judgment).
fn grid_plan(n: usize) -> Plan {
    let mut plan = Plan::new(PlanFormat::Vault);
    plan.nodes = (0..n).map(|i| node(i, 3)).collect();
    for i in 1..n {
        plan.edges.push(edge(i - 1, i, Some("ok")));
        plan.edges.push(edge(i - 1, i - 1, Some("again")));
    }
    plan.start = Some(0);
    plan
}

fn answer(request: &planvault_core::engine::Request) -> Event {
    let answer = match &request.body {
        RequestBody::Judge { .. } => Answer::Judgment {
            raw: "1. YES\n2. NO".into(),
            labels: Vec::new(),
        },
        _ => Answer::Work {
            output: "ok".into(),
        },
    };
    Event::Answered {
        id: request.id.clone(),
        answer,
    }
}

fn bench(c: &mut Criterion) {
    let config = RunConfig {
        max_steps: 10_000,
        ..RunConfig::default()
    };
    let path = path_plan(1_000);
    c.bench_function("path_1000_nodes", |b| {
        b.iter_batched(
            || Engine::new(path.clone(), config.clone(), &Journal::new()).unwrap(),
            |mut engine| black_box(drive(&mut engine, answer)),
            BatchSize::SmallInput,
        )
    });
    let grid = grid_plan(1_000);
    c.bench_function("grid_1000_nodes", |b| {
        b.iter_batched(
            || Engine::new(grid.clone(), config.clone(), &Journal::new()).unwrap(),
            |mut engine| black_box(drive(&mut engine, answer)),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
