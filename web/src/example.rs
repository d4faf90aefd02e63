//! The bundled example vault, embedded at compile time (see `build.rs`).

use std::collections::BTreeMap;

include!(concat!(env!("OUT_DIR"), "/example_vault.rs"));

/// The example vault as the in-memory map `planvault_core` loads.
pub fn files() -> BTreeMap<String, String> {
    FILES
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect()
}
