//! The Web Worker (a second wasm binary, loaded through Trunk's loader shim).
//!
//! Minimal protocol the build plumbing needs: post "ready" once the wasm is
//! running (messages sent earlier are lost), then answer each message (a
//! vault as JSON `{path: text}`) with a one-line check summary from
//! `planvault-core`. The worker work grows plan runs from here.

use planvault_core::{check, PlanSource};
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

fn main() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let answer = answer(&event.data().as_string().unwrap_or_default());
        reply_to.post_message(&JsValue::from_str(&answer)).ok();
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler must outlive `main`: the worker runs until the page closes.
    on_message.forget();
    scope.post_message(&JsValue::from_str("ready")).ok();
}

fn answer(request: &str) -> String {
    match serde_json::from_str::<BTreeMap<String, String>>(request) {
        Ok(files) => {
            let checked = check(&PlanSource::Vault(files));
            let errors = checked.diagnostics.iter().filter(|d| d.is_error()).count();
            format!(
                "checked {} notes: {} errors, {} warnings",
                checked.plan.nodes.len(),
                errors,
                checked.diagnostics.len() - errors
            )
        }
        Err(err) => format!("not a vault: {err}"),
    }
}
