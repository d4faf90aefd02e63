//! The browser app's entry point (built by scripts/build-web.mjs).

#![forbid(unsafe_code)]
// Natively it only says where it runs.
#![allow(clippy::print_stderr)]

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    // Note names compared composed, as Obsidian keys its paths.
    planvault_core::vault::links::install_nfc(|text| {
        js_sys::JsString::from(text).normalize("NFC").into()
    });
    leptos::mount::mount_to_body(planvault_web::app::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("planvault-web runs in the browser: build it with `node scripts/build-web.mjs` (see README.md)");
}
