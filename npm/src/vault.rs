//! The incremental handle an editor plugin keeps: one note changes, only
//! that note is read again, the graph checks run over the whole plan.

use crate::types::{read_files, to_js, ValidateReport};
use planvault_core::{Diagnostic, PlanSource};
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

/// The wasm side of `Vault`; the package's JavaScript `Vault` wraps it so it
/// can rebuild itself after an internal panic.
#[wasm_bindgen]
pub struct VaultCore {
    files: BTreeMap<String, String>,
    diagnostics: Option<Vec<Diagnostic>>,
}

#[wasm_bindgen]
impl VaultCore {
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "VaultFiles")] files: JsValue) -> Result<VaultCore, JsValue> {
        let files = read_files(&files)?;
        Ok(VaultCore { files, diagnostics: None })
    }

    /// Add or replace one note.
    pub fn update(&mut self, path: String, text: String) {
        self.files.insert(path, text);
        self.diagnostics = None;
    }

    /// Forget one note (a no-op for a path the vault does not have).
    pub fn remove(&mut self, path: &str) {
        if self.files.remove(path).is_some() {
            self.diagnostics = None;
        }
    }

    /// What `planvault validate --json` would print for the vault as it is now.
    #[wasm_bindgen(unchecked_return_type = "ValidateReport")]
    pub fn validate(&mut self) -> Result<JsValue, JsValue> {
        let files = &self.files;
        let diagnostics =
            self.diagnostics.get_or_insert_with(|| planvault_core::check(&PlanSource::Vault(files.clone())).diagnostics);
        Ok(to_js(&ValidateReport::from_core(diagnostics))?)
    }
}
