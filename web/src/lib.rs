//! planvault's browser app: open a vault, see the plan on a canvas, edit it
//! by dragging, every edit written back into the notes.
//!
//! Pure parts (tested natively and in headless Chromium): [`doc`] (the open
//! vault and what is derived from it), [`commands`] (every edit as a file
//! change), [`history`] (undo/redo), [`canvas_file`] (`plan.canvas`),
//! [`geometry`] (shapes, viewport, hit-testing), [`gesture`] (what a
//! pointer drag means) and [`theme`] (light or dark, the canvas's palettes). The browser parts (wasm32 only): `fs` (File System
//! Access, OPFS, IndexedDB), `render` (Canvas 2D) and `app` (the Leptos
//! components).

#![forbid(unsafe_code)]

pub mod canvas_file;
pub mod commands;
pub mod doc;
pub mod explorer_order;
pub mod geometry;
pub mod gesture;
pub mod history;
pub mod later_checks;
pub mod outline;
pub mod repair;
pub mod run;
pub mod search;
pub mod settings;
pub mod theme;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(target_arch = "wasm32")]
mod appearance;
#[cfg(target_arch = "wasm32")]
mod ask;
#[cfg(target_arch = "wasm32")]
mod canvas_input;
#[cfg(target_arch = "wasm32")]
mod canvas_keys;
#[cfg(target_arch = "wasm32")]
mod canvas_view;
#[cfg(target_arch = "wasm32")]
mod dialog;
#[cfg(target_arch = "wasm32")]
mod dock;
pub mod example;
#[cfg(target_arch = "wasm32")]
pub mod fs;
#[cfg(target_arch = "wasm32")]
mod help;
#[cfg(target_arch = "wasm32")]
mod list_view;
#[cfg(target_arch = "wasm32")]
mod modal_focus;
#[cfg(target_arch = "wasm32")]
mod note_editor;
#[cfg(target_arch = "wasm32")]
mod note_picker;
#[cfg(target_arch = "wasm32")]
mod on_demand;
#[cfg(target_arch = "wasm32")]
mod panel;
#[cfg(target_arch = "wasm32")]
pub mod render;
#[cfg(target_arch = "wasm32")]
pub mod run_client;
#[cfg(target_arch = "wasm32")]
mod run_panel;
#[cfg(target_arch = "wasm32")]
mod settings_dialog;
#[cfg(target_arch = "wasm32")]
pub mod state;
#[cfg(target_arch = "wasm32")]
mod test_hook;
#[cfg(target_arch = "wasm32")]
mod toolbar;
