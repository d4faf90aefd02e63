//! PLAN.md grammar (seed 001). Owned by the formats work.
use crate::{Diagnostic, Plan};

pub fn parse(_file: &str, _text: &str) -> (Plan, Vec<Diagnostic>) {
    todo!("PLAN.md parser")
}

pub fn validate(_plan: &Plan) -> Vec<Diagnostic> {
    todo!("PLAN.md validator")
}
