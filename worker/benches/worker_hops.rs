//! Wall time of the worker's driver running a chain plan against the
//! in-memory host: the engine plus every effect the worker performs (status
//! writes, journal, trace, output notes, posted messages, the chat request
//! body and the SSE decoding of a one-token reply). Run:
//! `cargo bench -p planvault-worker --bench worker_hops`.

use divan::Bencher;
use planvault_core::engine::FinishReason;
use planvault_protocol::StartRun;
use planvault_worker::memory::{block_on, chain_vault, short_reply, MemoryHost};
use planvault_worker::{run, Inbox};

fn main() {
    divan::main();
}

fn start() -> StartRun {
    planvault_worker::memory::chain_start(Some("sk-bench".into()))
}

#[divan::bench(args = [100, 1000], sample_count = 20)]
fn chain_run(bencher: Bencher<'_, '_>, n: usize) {
    let files = chain_vault(n);
    bencher
        .with_inputs(|| files.clone())
        .bench_local_values(|files| {
            let inbox = Inbox::new();
            let host = MemoryHost::new(files, &inbox, short_reply);
            host.keep_posts.set(false);
            let reason = block_on(run(&host, &inbox, start())).unwrap();
            assert_eq!(reason, Some(FinishReason::Completed));
        });
}

/// Reading and checking the vault alone (part of every run, not of a hop).
#[divan::bench(args = [100, 1000], sample_count = 20)]
fn check_only(bencher: Bencher<'_, '_>, n: usize) {
    let files = chain_vault(n);
    bencher
        .with_inputs(|| files.clone())
        .bench_local_values(|files| {
            planvault_core::check(&planvault_core::PlanSource::Vault(files))
        });
}
