//! CPU time (not wall time) of the worker's driver running a 1,000-node
//! chain against the in-memory host, next to the core engine alone
//! (`cargo run --release -p planvault-core --example engine_cpu`). Linux only
//! (reads `/proc/self/stat`). Run:
//! `cargo run --release -p planvault-worker --example worker_cpu`.

// An example: it prints its measurements.
#![allow(clippy::print_stdout)]

use planvault_core::engine::FinishReason;
use planvault_worker::memory::{block_on, chain_vault, short_reply, MemoryHost};
use planvault_worker::{run, Inbox};

/// User + system CPU time of this process, in clock ticks (1/100 s).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn main() {
    let n = 1_000;
    let runs = 60;
    let start = planvault_worker::memory::chain_start(std::env::var("BENCH_KEY").ok());
    let vaults: Vec<_> = (0..runs).map(|_| chain_vault(n)).collect();
    let checks: Vec<_> = (0..runs).map(|_| chain_vault(n)).collect();

    let t = cpu_ticks();
    for files in checks {
        assert!(!planvault_core::check(&planvault_core::PlanSource::Vault(files)).has_errors());
    }
    let check_ms = (cpu_ticks() - t) as f64 * 10.0 / runs as f64;

    let t = cpu_ticks();
    for files in vaults {
        let inbox = Inbox::new();
        let host = MemoryHost::new(files, &inbox, short_reply);
        host.keep_posts.set(false);
        assert_eq!(
            block_on(run(&host, &inbox, start.clone())).unwrap(),
            Some(FinishReason::Completed)
        );
    }
    let run_ms = (cpu_ticks() - t) as f64 * 10.0 / runs as f64;
    let hop_us = (run_ms - check_ms) * 1000.0 / n as f64;
    println!(
        "chain_1000_nodes: {run_ms:.1} ms CPU per run, of which reading+checking the vault {check_ms:.1} ms; \
         {hop_us:.1} µs per hop for the engine and every effect, over {runs} runs"
    );
}
