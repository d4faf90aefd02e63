//! One run of a plan: a driver that builds the core transition engine
//! (fresh, resumed from statuses, journal and prior outputs, or replayed)
//! and serves every effect through a [`Host`] (the vault, HTTP, commands,
//! the clock, the message port).
//!
//! The driver holds all the control logic (pause, step, run-to,
//! breakpoints, manual mode, human decisions, retries, the tool loop) and
//! no platform code, so it is tested natively against
//! [`memory::MemoryHost`]. The browser host lives in `planvault-worker`.

#![forbid(unsafe_code)]

pub mod driver;
#[cfg(feature = "native")]
pub mod git;
#[cfg(feature = "native")]
pub mod guard;
pub mod host;
pub mod inbox;
pub mod lock;
#[cfg(feature = "native")]
pub mod mcp;
#[cfg(feature = "native")]
mod mcp_child;
#[cfg(feature = "mcp-http")]
pub mod mcp_http;
pub mod memory;
#[cfg(feature = "native")]
pub mod native;
pub mod receipt;
pub mod settings;

pub use driver::{run, run_with, Humans, Options};
pub use host::{read_one_by_one, Host, HostError, HttpHead, Progress, CANNOT_PUT_BACK};
pub use inbox::Inbox;
pub use memory::block_on;

/// What a `@tool` command gets where the host cannot run commands.
pub const COMMAND_REFUSED: &str =
    "commands cannot run in the browser: run this plan with `planvault run`";
