//! A PLAN.md checklist from arbitrary text: parse + validate never panics,
//! every edge points at an item (a dependency at an earlier one), a text
//! without carriage returns reads the same with CRLF line endings (but for
//! Leopold's reading of an unended last line among CRLF ones), and
//! checking every item's box (`planmd::check_done`) turns only ` ` into `x`
//! inside boxes, and reads back as the same items, each done.
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
    let all: Vec<&planvault_core::Node> = checked.plan.nodes.iter().collect();
    if let Some(done) = planvault_core::planmd::check_done(text, &all) {
        assert_eq!(done.len(), text.len());
        for (a, b) in text.bytes().zip(done.bytes()) {
            assert!(a == b || (a == b' ' && b == b'x'));
        }
        let (again, _) = planvault_core::planmd::parse("PLAN.md", &done);
        assert_eq!(again.nodes.len(), nodes);
        for (was, now) in checked.plan.nodes.iter().zip(&again.nodes) {
            assert_eq!((&was.title, was.kind), (&now.title, now.kind));
            assert_eq!(now.status, planvault_core::Status::Done);
        }
    }
    if !text.contains('\r') {
        let crlf = planvault_core::check(&PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text: text.replace('\n', "\r\n"),
        });
        assert_eq!(checked.plan, crlf.plan);
        // Where the last line has no line ending, the CRLF text's other
        // lines end CR where it ends in none: Leopold reads that one line
        // alone, and the CRLF text says so (`leopold-reads-otherwise`).
        let mut said = crlf.diagnostics;
        if !text.ends_with('\n') {
            said.retain(|d| d.code != planvault_core::Code::LeopoldReadsOtherwise);
        }
        assert_eq!(checked.diagnostics, said);
    }
});
