//! The Web Worker binary (started through its loader; see scripts/build-web.mjs).
//! All of it is browser code; natively this is an empty program so the
//! workspace builds.

#![forbid(unsafe_code)]

#[cfg(target_arch = "wasm32")]
fn main() {
    planvault_worker::browser::main();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
