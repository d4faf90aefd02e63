//! Starts the plan worker (`worker/`, built by Trunk as `planvault-worker`)
//! and reports what it answers.

use leptos::prelude::*;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// Trunk's loader shim for the worker binary: unhashed, next to index.html.
const WORKER_URL: &str = "./planvault-worker_loader.js";

/// Starts the worker, sends it `files` once it says "ready", and returns a
/// signal with the latest status line.
pub fn start(files: BTreeMap<String, String>) -> ReadSignal<String> {
    let (status, set_status) = signal(String::from("Worker: starting"));
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = match Worker::new_with_options(WORKER_URL, &options) {
        Ok(worker) => worker,
        Err(err) => {
            set_status.set(format!("Worker: failed to start ({err:?})"));
            return status;
        }
    };

    // Messages posted before the worker's wasm is ready are lost, so the
    // vault goes out only after its "ready".
    let request = JsValue::from_str(&serde_json::to_string(&files).unwrap_or_default());
    let reply_to = worker.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let text = event.data().as_string().unwrap_or_default();
        if text == "ready" {
            set_status.set(String::from("Worker: ready, checking the plan"));
            if let Err(err) = reply_to.post_message(&request) {
                set_status.set(format!("Worker: could not send the vault ({err:?})"));
            }
        } else {
            set_status.set(format!("Worker: {text}"));
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The app lives as long as the page: the handler (and the worker it
    // holds) stay alive for good.
    on_message.forget();
    status
}
