//! The browser app (Leptos, client-side rendered, built by Trunk).
//!
//! This is the minimal shell the build plumbing needs: it checks the bundled
//! example vault with `planvault-core`, draws the plan on a `<canvas>`, and
//! hands the same vault to the Web Worker (the second wasm binary) to prove
//! both binaries load. The web work grows the real app from here.

mod canvas;
mod example;
mod worker;

use leptos::prelude::*;
use planvault_core::{check, PlanSource};

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

#[component]
fn App() -> impl IntoView {
    let checked = check(&PlanSource::Vault(example::files()));
    let errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
    let summary = format!(
        "Example vault: {} notes, {} edges, {} errors, {} warnings",
        checked.plan.nodes.len(),
        checked.plan.edges.len(),
        errors,
        checked.diagnostics.len() - errors,
    );

    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let plan = StoredValue::new(checked.plan);
    Effect::new(move |_| {
        if let Some(element) = canvas_ref.get() {
            plan.with_value(|plan| canvas::draw(&element, plan));
        }
    });

    let worker_status = worker::start(example::files());

    view! {
        <main>
            <h1>"planvault"</h1>
            <p id="summary">{summary}</p>
            <canvas
                id="plan-canvas"
                node_ref=canvas_ref
                width="960"
                height="540"
                aria-label="The example plan as a graph"
            ></canvas>
            <p id="worker-status" role="status">{move || worker_status.get()}</p>
        </main>
    }
}
