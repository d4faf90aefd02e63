//! The incremental handle an editor plugin keeps: one note changes, only
//! that note is read again, the graph checks run over the whole plan.

use crate::incremental::IncrementalVault;
use crate::staging::with_staged_files;
use crate::types::report_to_js;
use wasm_bindgen::prelude::*;

/// The wasm side of `Vault`; the package's JavaScript `Vault` wraps it so it
/// can rebuild itself after an internal panic.
#[wasm_bindgen]
pub struct VaultCore {
    vault: IncrementalVault,
}

#[wasm_bindgen]
impl VaultCore {
    /// The notes staged as for `parseVaultStaged`; the plan is the notes in
    /// `folder` (vault-relative; empty: the whole vault). The templates
    /// folders the vault's two settings name and `.planvaultignore`'s text
    /// say what to skip (`scope::skipped_from`).
    #[wasm_bindgen(js_name = fromStaged)]
    pub fn from_staged(
        used: usize,
        lengths: &[u32],
        folder: &str,
        templates: Option<String>,
        templater: Option<String>,
        ignore: Option<String>,
    ) -> Result<VaultCore, JsValue> {
        let skip = planvault_core::vault::scope::skipped_from(
            &[templates.as_deref(), templater.as_deref()],
            ignore.as_deref(),
        );
        Ok(VaultCore {
            vault: with_staged_files(used, lengths, |files| {
                IncrementalVault::in_folder(files, folder, skip)
            })?,
        })
    }

    /// An edit changed the settings that say what is skipped: build it again.
    #[wasm_bindgen(getter)]
    pub fn stale(&self) -> bool {
        self.vault.stale()
    }

    /// Add or replace one note: parses that note only.
    pub fn update(&mut self, path: &str, text: &str) {
        self.vault.update(path, text);
    }

    /// Forget one note; `false` when the vault had no such note.
    pub fn remove(&mut self, path: &str) -> bool {
        self.vault.remove(path)
    }

    /// What `planvault validate --json` would print for the vault as it is now.
    #[wasm_bindgen(unchecked_return_type = "ValidateReport")]
    pub fn validate(&mut self) -> Result<JsValue, JsValue> {
        Ok(report_to_js(self.vault.diagnostics())?)
    }
}
