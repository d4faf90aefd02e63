//! Vault format (seed 000): one note per node. Owned by the vault work.
pub mod edit;
use crate::{Diagnostic, Plan};
use std::collections::BTreeMap;

pub fn load(_files: &BTreeMap<String, String>) -> (Plan, Vec<Diagnostic>) {
    todo!("vault loader")
}

pub fn validate(_plan: &Plan) -> Vec<Diagnostic> {
    todo!("vault validator")
}
