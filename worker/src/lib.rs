//! The run worker's engine side: a driver that runs a vault plan with the
//! core transition engine and serves every effect through a [`Host`]
//! (the vault, HTTP, the clock, the message port).
//!
//! The driver holds all the control logic (pause, step, run-to,
//! breakpoints, manual mode, retries, resume) and no browser code, so it is
//! tested natively against [`memory::MemoryHost`]; `browser` is the Host
//! over a `FileSystemDirectoryHandle` and `fetch`, compiled for wasm32 only.

pub mod driver;
pub mod host;
pub mod inbox;
pub mod memory;

#[cfg(target_arch = "wasm32")]
pub mod browser;

pub use driver::run;
pub use host::{Host, HostError, HttpHead};
pub use inbox::Inbox;

/// What a `@tool` command gets in the browser.
pub const COMMAND_REFUSED: &str =
    "commands cannot run in the browser: run this plan with `planvault run`";
