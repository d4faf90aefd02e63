//! A generated JSON plan from arbitrary text, under the default options and
//! under a restrictive tool policy: parse + validate never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::generated::Options;
use planvault_core::PlanSource;

fuzz_target!(|text: &str| {
    let restrictive = Options {
        allowed_tools: Some(vec!["search".into()]),
        available_tools: Some(vec!["search".into(), "fetch".into()]),
        ..Options::default()
    };
    for options in [Options::default(), restrictive] {
        let source = PlanSource::Generated {
            file: "plan.json".into(),
            text: text.into(),
            options,
        };
        let checked = planvault_core::check(&source);
        let nodes = checked.plan.nodes.len();
        for edge in &checked.plan.edges {
            assert!(edge.from < nodes && edge.to.is_none_or(|t| t < nodes));
        }
    }
});
