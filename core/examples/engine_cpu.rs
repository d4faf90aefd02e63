//! CPU time (not wall time) of the engine walking a 1,000-node path plan with
//! instant answers: on a shared, loaded machine the wall-clock figure of the
//! criterion bench mostly measures the other processes. Linux only (reads
//! `/proc/self/stat`). Run: `cargo run --release -p planvault-core --example engine_cpu`.

// An example: it prints its measurements.
#![allow(clippy::print_stdout)]

use planvault_core::engine::{drive, Answer, Engine, Event, Journal, RunConfig};
use planvault_core::{
    Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, Status, VaultNode,
};

fn path_plan(n: usize) -> Plan {
    let mut plan = Plan::new(PlanFormat::Vault);
    plan.nodes = (0..n)
        .map(|i| Node {
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
            max_visits: 3,
            pos: None,
            ext: NodeExt::Vault(VaultNode {
                file: format!("step-{i:04}.md"),
                ..Default::default()
            }),
        })
        .collect();
    plan.edges = (1..n)
        .map(|i| Edge {
            from: i - 1,
            to: Some(i),
            target: format!("step-{i:04}"),
            label: None,
            kind: EdgeKind::Unconditional,
            pos: None,
            written: None,
        })
        .collect();
    plan.start = Some(0);
    plan
}

/// User + system CPU time of this process, in clock ticks (1/100 s).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn main() {
    let plan = path_plan(1_000);
    let config = RunConfig {
        max_steps: 10_000,
        ..RunConfig::default()
    };
    let runs = 300;
    let engines: Vec<Engine> = (0..runs)
        .map(|_| Engine::new(plan.clone(), config.clone(), &Journal::new()).unwrap())
        .collect();
    let start = cpu_ticks();
    for mut engine in engines {
        let effects = drive(&mut engine, |r| Event::Answered {
            id: r.id.clone(),
            answer: Answer::Work {
                output: "ok".into(),
            },
        });
        assert!(effects.len() > 1_000);
    }
    let ticks = cpu_ticks() - start;
    let per_run_ms = ticks as f64 * 10.0 / runs as f64;
    println!(
        "path_1000_nodes: {per_run_ms:.2} ms CPU per run ({:.2} µs per hop), over {runs} runs",
        per_run_ms
    );
}
