//! A PLAN.md checklist from arbitrary text: parse + validate never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::PlanSource;

fuzz_target!(|text: &str| {
    let source = PlanSource::PlanMd {
        file: "PLAN.md".into(),
        text: text.into(),
    };
    let checked = planvault_core::check(&source);
    let nodes = checked.plan.nodes.len();
    for edge in &checked.plan.edges {
        assert!(edge.from < nodes && edge.to.is_none_or(|t| t < nodes));
    }
});
