//! A PLAN.md checklist from arbitrary text: parse + validate never panics,
//! every edge points at an item (a dependency at an earlier one), and a text
//! without carriage returns reads the same with CRLF line endings.
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
        if edge.kind == planvault_core::EdgeKind::After {
            assert!(edge.to.is_some_and(|t| edge.from < t));
        }
    }
    if !text.contains('\r') {
        let crlf = planvault_core::check(&PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text: text.replace('\n', "\r\n"),
        });
        assert_eq!(checked.plan, crlf.plan);
        assert_eq!(checked.diagnostics, crlf.diagnostics);
    }
});
