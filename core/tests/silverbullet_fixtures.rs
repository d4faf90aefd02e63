//! SilverBullet's reading of vault plans (`vault::silverbullet`),
//! data-driven: each folder under `tests/fixtures/silverbullet/` holds a
//! vault under `vault/`, and its `expected.snap` is the plan and its own
//! diagnostics (as `fixtures.rs` renders them), then the links SilverBullet
//! reads otherwise. Not replayed by the npm package, which does not carry
//! the check.
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration silverbullet_fixtures::`

use planvault_core::{check, vault::silverbullet, PlanSource};
use std::fmt::Write as _;
use std::path::Path;

fn render(dir: &Path) -> String {
    let files = super::vault_fixtures::read_folder(&dir.join("vault"));
    let source = PlanSource::Vault(files.clone());
    let mut out = super::fixtures::render(&source);
    out.push_str("silverbullet:\n");
    for d in silverbullet::check(&files, &check(&source).plan) {
        writeln!(out, "  {}", d.render_human()).unwrap();
        writeln!(out, "    nodes={:?}", d.nodes).unwrap();
    }
    out
}

#[test]
fn silverbullet_fixtures() {
    let dirs = super::fixtures::cases("silverbullet");
    assert!(dirs.len() >= 3, "{} silverbullet fixtures", dirs.len());
    for dir in dirs {
        super::fixtures::assert_case(&dir, render(&dir));
    }
}

/// Every link the check suggests reads the same in both: written into the
/// notes, it leaves planvault's edges as they were and SilverBullet's
/// reading with nothing left to say.
#[test]
fn the_suggested_links_read_the_same_in_both() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/silverbullet/plan-in-a-folder");
    let mut files = super::vault_fixtures::read_folder(&dir.join("vault"));
    let before = check(&PlanSource::Vault(files.clone())).plan;
    let warned = silverbullet::check(&files, &before);
    assert_eq!(warned.len(), 5);
    for d in &warned {
        let quoted = |after: &str| {
            let rest = &d.message[d.message.find(after).unwrap() + after.len()..];
            rest[..rest.find('`').unwrap()].to_string()
        };
        let (link, fix) = (quoted("`"), quoted("write `"));
        let text = files.get_mut(d.file.as_ref().unwrap()).unwrap();
        let line_start: usize = text
            .split_inclusive('\n')
            .take(d.line.unwrap() as usize - 1)
            .map(str::len)
            .sum();
        let at = line_start + text[line_start..].find(&link).unwrap();
        text.replace_range(at..at + link.len(), &fix);
    }
    let after = check(&PlanSource::Vault(files.clone())).plan;
    let edges = |plan: &planvault_core::Plan| -> Vec<(String, Option<String>)> {
        plan.edges
            .iter()
            .map(|e| {
                (
                    plan.nodes[e.from].id.clone(),
                    e.to.map(|t| plan.nodes[t].id.clone()),
                )
            })
            .collect()
    };
    assert_eq!(edges(&after), edges(&before));
    assert_eq!(silverbullet::check(&files, &after), []);
}
