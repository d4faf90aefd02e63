//! Data-driven tests: one folder per case under `tests/fixtures/<format>/`,
//! the input beside `expected.snap` (an insta snapshot), which holds the
//! parsed graph and every diagnostic exactly as `planvault validate` prints it.
//!
//! `INSTA_UPDATE=always cargo test -p planvault-core --test integration fixtures::`
//! rewrites the snapshots; review the diff before committing it.

use planvault_core::{check, generated, planmd, EdgeKind, NodeExt, Plan, PlanSource};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn summary(plan: &Plan) -> String {
    let mut out = String::from("nodes:\n");
    for node in &plan.nodes {
        let pos = node
            .pos
            .as_ref()
            .map(|p| format!("{}:{}", p.line, p.column))
            .unwrap_or_default();
        write!(
            out,
            "  {} {} {} @{pos} {:?}",
            node.id,
            node.kind.as_str(),
            node.status.as_str(),
            node.title
        )
        .unwrap();
        match &node.ext {
            NodeExt::PlanMd(item) => {
                if let Some(label) = &item.label {
                    write!(out, " label={label:?}").unwrap();
                }
                if let Some(command) = &item.command {
                    write!(out, " command={command:?}").unwrap();
                }
                for s in &item.scenarios {
                    write!(out, "\n    scenario {s:?}").unwrap();
                }
                for (k, v) in &item.emits {
                    write!(out, "\n    emit {k}={v}").unwrap();
                }
                for k in &item.needs {
                    write!(out, "\n    needs {k}").unwrap();
                }
            }
            NodeExt::Generated(step) => {
                write!(out, " tool={:?} args={}", step.capability, step.args).unwrap();
                for p in &step.preconditions {
                    write!(
                        out,
                        "\n    precondition {:?} {:?} {:?}",
                        p.reference, p.test, p.value
                    )
                    .unwrap();
                }
            }
            NodeExt::Vault(_) => {}
        }
        out.push('\n');
    }
    out.push_str("edges:\n");
    for edge in &plan.edges {
        let from = &plan.nodes[edge.from].id;
        let to = edge.to.map_or_else(
            || format!("<missing {:?}>", edge.target),
            |t| plan.nodes[t].id.clone(),
        );
        let kind = match edge.kind {
            EdgeKind::After => "after",
            EdgeKind::Route => "route",
            EdgeKind::Conditional => "conditional",
            EdgeKind::Unconditional => "unconditional",
        };
        let pos = edge
            .pos
            .as_ref()
            .map(|p| format!(" @{}:{}", p.line, p.column))
            .unwrap_or_default();
        let label = edge
            .label
            .as_ref()
            .map(|l| format!(" {l:?}"))
            .unwrap_or_default();
        writeln!(out, "  {from} -> {to} {kind}{label}{pos}").unwrap();
    }
    if let Some(grant) = &plan.grant {
        writeln!(
            out,
            "grant: {}",
            grant.iter().cloned().collect::<Vec<_>>().join(", ")
        )
        .unwrap();
    }
    out
}

pub(crate) fn render(source: &PlanSource) -> String {
    let checked = check(source);
    let mut out = summary(&checked.plan);
    out.push_str("diagnostics:\n");
    for d in &checked.diagnostics {
        writeln!(out, "  {}", d.render_human()).unwrap();
        if !d.items.is_empty() || d.target.is_some() || d.key.is_some() {
            writeln!(
                out,
                "    items={:?} target={:?} key={:?}",
                d.items, d.target, d.key
            )
            .unwrap();
        }
    }
    out
}

/// The case folders under `tests/fixtures/<format>/`, in name order.
pub(crate) fn cases(format: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format);
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no fixtures under {}", root.display());
    dirs
}

fn options(dir: &Path) -> generated::Options {
    let mut options = generated::Options::default();
    let read_list = |name: &str| {
        fs::read_to_string(dir.join(name)).ok().map(|t| {
            t.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        })
    };
    options.allowed_tools = read_list("allowed_tools.txt");
    options.available_tools = read_list("available_tools.txt");
    if let Ok(text) = fs::read_to_string(dir.join("max_nodes.txt")) {
        options.limits.max_nodes = text.trim().parse().unwrap();
    }
    options
}

fn run(format: &str, input: &str, source: impl Fn(&Path, String) -> PlanSource) {
    for dir in cases(format) {
        let text = String::from_utf8(fs::read(dir.join(input)).unwrap()).unwrap();
        assert_case(&dir, render(&source(&dir, text)));
    }
}

/// `actual` against the `expected.snap` in the case's folder.
pub(crate) fn assert_case(dir: &Path, actual: String) {
    insta::with_settings!({
        snapshot_path => dir,
        prepend_module_to_snapshot => false,
        description => dir.file_name().unwrap().to_string_lossy().to_string(),
        omit_expression => true,
    }, {
        insta::assert_snapshot!("expected", actual);
    });
}

#[test]
fn planmd_fixtures() {
    run("planmd", "PLAN.md", |_, text| PlanSource::PlanMd {
        file: "PLAN.md".into(),
        text,
    });
}

#[test]
fn generated_fixtures() {
    run("generated", "plan.json", |dir, text| {
        PlanSource::Generated {
            file: "plan.json".into(),
            text,
            options: options(dir),
        }
    });
}

/// Every planmd fixture parses identically with CRLF line endings.
#[test]
fn planmd_crlf_parses_like_lf() {
    for dir in cases("planmd") {
        let lf = fs::read_to_string(dir.join("PLAN.md"))
            .unwrap()
            .replace("\r\n", "\n");
        let crlf = lf.replace('\n', "\r\n");
        let unended = !lf.ends_with('\n') && lf.contains('\n');
        let a = check(&PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text: lf,
        });
        let b = check(&PlanSource::PlanMd {
            file: "PLAN.md".into(),
            text: crlf,
        });
        assert_eq!(a.plan, b.plan, "{}", dir.display());
        // But for one warning: a CRLF file whose last line has no line
        // ending is LF-less there only, and Leopold reads that one item.
        let leopold_reads_otherwise =
            |d: &&planvault_core::Diagnostic| d.code == planvault_core::Code::LeopoldReadsOtherwise;
        let warned = b.diagnostics.iter().filter(leopold_reads_otherwise).count();
        assert!(warned <= usize::from(unended), "{}", dir.display());
        let b_rest: Vec<_> = b
            .diagnostics
            .iter()
            .filter(|d| !leopold_reads_otherwise(d))
            .collect();
        assert_eq!(
            a.diagnostics.iter().collect::<Vec<_>>(),
            b_rest,
            "{}",
            dir.display()
        );
    }
    let _ = planmd::TOOL_EXIT_SIGNAL;
}
