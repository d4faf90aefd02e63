//! The run worker: the browser [`Host`] of `planvault-runner` over a
//! `FileSystemDirectoryHandle` and `fetch`, and the message loop that wires
//! the app's messages to the runner's driver. Compiled for wasm32 only;
//! natively it re-exports the runner so the workspace builds.

#![forbid(unsafe_code)]

pub use planvault_runner::{driver, host, inbox, memory, run, Host, HostError, HttpHead, Inbox};

#[cfg(target_arch = "wasm32")]
pub mod browser;
