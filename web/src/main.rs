//! The browser app (Leptos). Filled in by the web work.
fn main() {}
