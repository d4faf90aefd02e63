//! Conformance with Leopold, the PLAN.md grammar's reference implementation.
//!
//! Every `tests/fixtures/planmd/leopold-*/` case holds a plan from Leopold's
//! own tests, documentation or an edge case of its grammar (`PLAN.md`), and
//! `leopold.json`: what Leopold's parser (`parsePlan`, `buildGraph`,
//! `validateGraph`) reads in it — its items, its edges, its diagnostics and
//! its verdict. planvault must read the same, field for field. A case with a
//! `differs.txt` is one where planvault deliberately reads differently (the
//! README's PLAN.md section lists them): there the test requires that it does
//! differ, so the note cannot go stale.
//!
//! planvault's own expectation for each case (its graph and every diagnostic,
//! positions included) is the `expected.snap` beside it, checked by
//! `fixtures.rs` like every other PLAN.md fixture.

use planvault_core::{check, planmd, EdgeKind, Plan, PlanSource, Severity, Status};
use serde::Deserialize;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize, PartialEq)]
struct Item {
    index: u32,
    done: bool,
    kind: String,
    text: String,
    label: String,
    scenarios: Vec<String>,
    emits: Vec<(String, String)>,
    needs: Vec<String>,
}

/// What a reading of a plan comes to.
#[derive(Debug, Deserialize, PartialEq)]
struct Reading {
    items: Vec<Item>,
    /// `1 -> 2 after`, `1 -> 3 route fail` (a route to no item as `0`).
    edges: Vec<String>,
    /// `error cycle 3,5`: severity, code, items.
    diagnostics: Vec<String>,
    verdict: String,
}

/// A route's target as Leopold records it: `5` or `#5` is 5, anything else 0.
fn leopold_target(written: &str) -> String {
    let digits = written.strip_prefix('#').unwrap_or(written);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let trimmed = digits.trim_start_matches('0');
        if trimmed.is_empty() {
            "0".into()
        } else {
            trimmed.into()
        }
    } else {
        "0".into()
    }
}

fn planvault_reading(text: &str) -> Reading {
    let checked = check(&PlanSource::PlanMd {
        file: "PLAN.md".into(),
        text: text.to_string(),
    });
    let plan: &Plan = &checked.plan;
    let items = plan
        .nodes
        .iter()
        .map(|n| {
            let it = planmd::item(n).expect("a PLAN.md node");
            Item {
                index: it.index,
                done: n.status == Status::Done,
                kind: n.kind.as_str().to_string(),
                text: n.title.clone(),
                label: it.label.clone().unwrap_or_default(),
                scenarios: it.scenarios.clone(),
                emits: it.emits.clone(),
                needs: it.needs.clone(),
            }
        })
        .collect();
    // Leopold lists every `after` edge, then every route, each in item order
    // and as written, which is planvault's order of each kind too.
    let mut after = Vec::new();
    let mut routes = Vec::new();
    for e in &plan.edges {
        let from = e.from + 1;
        match e.kind {
            EdgeKind::After => after.push(format!("{from} -> {} after", e.to.unwrap() + 1)),
            EdgeKind::Route => {
                let to =
                    e.to.map_or_else(|| leopold_target(&e.target), |t| (t + 1).to_string());
                routes.push(format!(
                    "{from} -> {to} route {}",
                    e.label.as_deref().unwrap_or("")
                ));
            }
            _ => {}
        }
    }
    let edges = after.into_iter().chain(routes).collect();
    let mut diagnostics: Vec<String> = checked
        .diagnostics
        .iter()
        // Parse warnings Leopold has no counterpart for.
        .filter(|d| !d.items.is_empty())
        .map(|d| {
            let items: Vec<String> = d.items.iter().map(u32::to_string).collect();
            let severity = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            format!("{severity} {} {}", d.code, items.join(","))
        })
        .collect();
    diagnostics.sort();
    Reading {
        items,
        edges,
        diagnostics,
        verdict: if checked.has_errors() {
            "unsound"
        } else {
            "sound"
        }
        .into(),
    }
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/planmd");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("leopold.json").exists())
        .collect();
    dirs.sort();
    dirs
}

#[test]
#[allow(clippy::print_stdout)] // the agreement count, shown with --nocapture
fn every_leopold_plan_reads_as_leopold_reads_it() {
    let dirs = cases();
    assert!(dirs.len() >= 100, "only {} Leopold cases", dirs.len());
    let mut agree = 0;
    let mut failures = Vec::new();
    for dir in &dirs {
        let text = String::from_utf8(fs::read(dir.join("PLAN.md")).unwrap()).unwrap();
        let mut leopold: Reading =
            serde_json::from_str(&fs::read_to_string(dir.join("leopold.json")).unwrap()).unwrap();
        leopold.diagnostics.sort();
        let ours = planvault_reading(&text);
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        match (
            fs::read_to_string(dir.join("differs.txt")).ok(),
            ours == leopold,
        ) {
            (None, true) => agree += 1,
            (None, false) => failures.push(format!(
                "--- {name}\nLeopold:   {leopold:?}\nplanvault: {ours:?}"
            )),
            (Some(_), false) => {}
            (Some(why), true) => failures.push(format!(
                "--- {name} reads as Leopold reads it, but differs.txt says: {why}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let differ = dirs.len() - agree;
    println!(
        "{agree} of {} plans read as Leopold reads them; {differ} differ deliberately",
        dirs.len()
    );
    assert!(
        differ <= 7,
        "{differ} deliberate differences: the README lists fewer"
    );
}

/// The deliberate differences, each shown on the one thing it changes.
#[test]
fn the_deliberate_differences() {
    let read = |text: &str| planvault_reading(text);
    // CRLF: planvault reads the items; Leopold reads none.
    let crlf = read("- [ ] a\r\n- [ ] (after: 1) b\r\n      @on fail -> 1\r\n");
    assert_eq!(crlf.items.len(), 2);
    assert_eq!(crlf.edges, vec!["1 -> 2 after", "2 -> 1 route fail"]);
    // A fenced block and an HTML comment are nobody's lines.
    let fenced = read("- [ ] a\n```\n- [ ] b\n  @on fail -> 9\n```\n<!--\n- [ ] c\n-->\n");
    assert_eq!((fenced.items.len(), fenced.edges.len()), (1, 0));
    // `@on blocked` tests an outcome planvault records: no warning.
    let blocked = read("- [ ] a\n  @on blocked -> 2\n- [ ] b\n");
    assert_eq!(blocked.diagnostics, Vec::<String>::new());
}
