//! A whole vault from arbitrary bytes: NUL separates notes, each note's first
//! line is its vault path (`.md` added when missing), the rest its text.
//! Loading and validating must never panic, whatever the notes say, and a
//! load for checks only (the npm package's) must be the full load without
//! bodies and unknown frontmatter keys. SilverBullet's reading of the same
//! plan (`validate --silverbullet`) must not panic either, and names only
//! the plan's own nodes.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "vault_bytes.rs"]
mod vault_bytes;
use planvault_core::vault::{self, Detail};
use planvault_core::{NodeExt, PlanSource};

fuzz_target!(|data: &[u8]| {
    let files = vault_bytes::vault(data);
    let pairs = || files.iter().map(|(p, t)| (p.as_str(), t.as_str()));
    let (for_checks, for_checks_diagnostics) = vault::load_from_as(pairs(), Detail::Checks);
    let (mut full, full_diagnostics) = vault::load_from(pairs());
    assert_eq!(for_checks_diagnostics, full_diagnostics);
    for node in &mut full.nodes {
        node.body.clear();
        if let NodeExt::Vault(v) = &mut node.ext {
            v.extra_frontmatter.clear();
        }
    }
    assert_eq!(for_checks, full);

    let source = PlanSource::Vault(files);
    let checked = planvault_core::check(&source);
    // Every edge and the start must point at a node that exists.
    let nodes = checked.plan.nodes.len();
    assert!(checked.plan.start.is_none_or(|s| s < nodes));
    for edge in &checked.plan.edges {
        assert!(edge.from < nodes && edge.to.is_none_or(|t| t < nodes));
    }
    if let PlanSource::Vault(files) = &source {
        for d in vault::silverbullet::check(files, &checked.plan) {
            assert!(d
                .nodes
                .iter()
                .all(|id| checked.plan.nodes.iter().any(|n| &n.id == id)));
        }
    }
});
