//! JavaScript bindings of planvault's validator: the `planvault` npm package.
//!
//! Everything here is glue. Parsing and validation live in `planvault-core`;
//! this crate moves text in and diagnostics out across the wasm boundary,
//! one call per plan (not per note) because the boundary cost dominates.
//!
//! Two builds come from this crate. The full one (default features) is the
//! `planvault` entry. `planvault/markdown` is built without default
//! features: vaults and PLAN.md only, no `parseGeneratedPlan` (`json-plans`)
//! and no exporters (`exports`), so an editor plugin ships the validator
//! alone (see BENCHMARKS.md for the sizes).
//!
//! Failure model, as JavaScript sees it:
//! - user data never fails: a broken plan yields diagnostics;
//! - a misuse of the API (a non-string note, an unknown status) throws an
//!   `Error` whose `code` names the misuse ([`error::BindingError`]);
//! - a panic inside the wasm (a bug) throws an `Error` with
//!   `code: "internal-panic"` and schedules a fresh wasm instance for the
//!   next call ([`panic`](mod@panic)), so a bug can never take the host down.

// Only the tests write through raw pointers, as JavaScript does (`staging`).
#![cfg_attr(not(test), forbid(unsafe_code))]

pub mod error;
#[cfg(feature = "exports")]
pub mod export;
#[cfg(feature = "json-plans")]
pub mod generated;
pub mod incremental;
pub mod panic;
pub mod plan;
pub mod staging;
pub mod types;
pub mod vault;

use wasm_bindgen::prelude::*;

/// Runs once per wasm instance (again after a reinit).
#[wasm_bindgen(start)]
pub fn start() {
    panic::install_hook();
    // Note names compared composed, as Obsidian keys its paths.
    planvault_core::vault::links::install_nfc(|text| {
        js_sys::JsString::from(text).normalize("NFC").into()
    });
}

/// Small blocks from size-class pages (see `planvault-npm-alloc`); wasm only.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: planvault_npm_alloc::Global = planvault_npm_alloc::Global::new();
