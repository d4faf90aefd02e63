//! Generated JSON plans (seeds 002, 004). Owned by the formats work.
use crate::{Diagnostic, Plan};

/// What the host permits and how big a plan may be.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Tools the host permits; `None` permits every tool the plan names.
    pub allowed_tools: Option<Vec<String>>,
}

pub fn parse(_file: &str, _text: &str, _options: &Options) -> (Plan, Vec<Diagnostic>) {
    todo!("generated plan parser")
}

pub fn validate(_plan: &Plan) -> Vec<Diagnostic> {
    todo!("generated plan validator")
}
