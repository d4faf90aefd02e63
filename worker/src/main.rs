//! The Web Worker that runs plans. Filled in by the worker work.
fn main() {}
