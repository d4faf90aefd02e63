//! Proposal mode (`planvault_core::proposal`), data-driven: each folder
//! under `tests/fixtures/proposal/` holds a plan in one format (`PLAN.md`,
//! `plan.json`, or a vault under `vault/`), and `config.txt` when the
//! vault's config asks for proposal mode instead of the plan. Its
//! `expected.snap` is the plan and the format's own diagnostics (as
//! `fixtures.rs` renders them), where the plan asked for proposal mode,
//! and the proposal-mode diagnostics. The npm package replays those the
//! plan asks for itself (`npm/test/fixtures.test.mjs`): it reads no config.
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration proposal_fixtures::`

use planvault_core::{check, generated, proposal, PlanSource};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

fn source(dir: &Path) -> PlanSource {
    let read = |name: &str| fs::read_to_string(dir.join(name)).ok();
    if let Some(text) = read("PLAN.md") {
        PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text,
        }
    } else if let Some(text) = read("plan.json") {
        PlanSource::Generated {
            file: "plan.json".into(),
            text,
            options: generated::Options::default(),
        }
    } else {
        PlanSource::Vault(super::vault_fixtures::read_folder(&dir.join("vault")))
    }
}

fn render(dir: &Path) -> String {
    let source = source(dir);
    let mut out = super::fixtures::render(&source);
    let plan = check(&source).plan;
    let asked = proposal::requested(&source, &plan);
    let by_config = dir.join("config.txt").exists();
    match (&asked, by_config) {
        (Some(pos), _) => writeln!(
            out,
            "proposal: asked at {}:{}:{}",
            pos.file, pos.line, pos.column
        ),
        (None, true) => writeln!(out, "proposal: asked by the config"),
        (None, false) => writeln!(out, "proposal: not asked"),
    }
    .unwrap();
    if asked.is_some() || by_config {
        out.push_str("proposal diagnostics:\n");
        for d in proposal::check(&plan, asked.as_ref()) {
            writeln!(out, "  {}", d.render_human()).unwrap();
            writeln!(out, "    nodes={:?} items={:?}", d.nodes, d.items).unwrap();
        }
    }
    out
}

#[test]
fn proposal_fixtures() {
    let dirs = super::fixtures::cases("proposal");
    assert!(dirs.len() >= 3, "{} proposal fixtures", dirs.len());
    for dir in dirs {
        super::fixtures::assert_case(&dir, render(&dir));
    }
}
