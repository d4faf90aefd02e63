//! Panics become thrown `Error`s instead of a dead instance.
//!
//! wasm32 builds abort on panic: the `unreachable` trap leaves the instance's
//! memory mid-operation, so it must never be used again. The hook below runs
//! before the abort: it asks wasm-bindgen to build a fresh instance from the
//! same module on the next call (`schedule_reinit`) and throws a JavaScript
//! `Error` with `code: "internal-panic"` and the panic message. Throwing
//! unwinds the wasm frames without running Rust code, which is fine because
//! the old memory is discarded. Handles (`Plan`, `Vault`) made before the
//! panic belong to the discarded instance; the JavaScript wrapper rebuilds a
//! `Vault` from its own copy of the notes and reports `stale-handle` for a
//! `Plan`.

#[cfg(target_arch = "wasm32")]
use crate::error::coded_error;
use wasm_bindgen::prelude::*;

/// Install the hook (idempotent: it replaces any previous one).
pub fn install_hook() {
    #[cfg(target_arch = "wasm32")]
    std::panic::set_hook(Box::new(|info| {
        wasm_bindgen::handler::schedule_reinit();
        let message = format!("planvault internal error (please report it): {info}");
        wasm_bindgen::throw_val(coded_error("internal-panic", &message));
    }));
}

/// Panics on purpose, so the package's tests can prove the recovery path on
/// the built artifact. Not part of the typed API.
#[wasm_bindgen(js_name = "__selfTestPanic", skip_typescript)]
pub fn self_test_panic() {
    panic!("deliberate panic from __selfTestPanic");
}
