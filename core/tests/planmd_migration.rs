//! The spec's worked migration example (seed 001), the plan the bundled
//! `static/examples/PLAN.md` carries: it must validate clean, and every
//! route, kind, label and scenario it declares must be read as written.

use planvault_core::planmd::{self, Condition, SignalOp};
use planvault_core::{check, EdgeKind, NodeKind, PlanSource, Status};

const EXAMPLE: &str = include_str!("../../static/examples/PLAN.md");

fn routes(plan: &planvault_core::Plan) -> Vec<(u32, u32, String)> {
    plan.edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Route)
        .map(|e| {
            (
                e.from as u32 + 1,
                e.to.unwrap() as u32 + 1,
                e.label.clone().unwrap(),
            )
        })
        .collect()
}

#[test]
fn validates_clean() {
    let checked = check(&PlanSource::PlanMd {
        file: "PLAN.md".into(),
        text: EXAMPLE.into(),
    });
    assert_eq!(checked.diagnostics, vec![]);
    assert_eq!(checked.plan.nodes.len(), 7);
}

#[test]
fn kinds_labels_and_commands() {
    let (plan, _) = planmd::parse("PLAN.md", EXAMPLE);
    let kinds: Vec<NodeKind> = plan.nodes.iter().map(|n| n.kind).collect();
    use NodeKind::*;
    assert_eq!(kinds, vec![Work, Tool, Verify, Gate, Work, Feedback, Human]);
    let labels: Vec<Option<&str>> = plan
        .nodes
        .iter()
        .map(|n| planmd::item(n).unwrap().label.as_deref())
        .collect();
    assert_eq!(
        labels,
        vec![None, None, None, Some("release"), None, None, None]
    );
    assert_eq!(
        planmd::item(&plan.nodes[1]).unwrap().command.as_deref(),
        Some("make migrate")
    );
    assert!(plan.nodes.iter().all(|n| n.status == Status::Pending));
    assert_eq!(plan.nodes[6].title, "Decide whether this ships today");
}

#[test]
fn routes_and_dependencies() {
    let (plan, _) = planmd::parse("PLAN.md", EXAMPLE);
    assert_eq!(
        routes(&plan),
        vec![
            (2, 3, "exit=0".into()),
            (2, 5, "exit!=0".into()),
            (3, 5, "migrated=false".into())
        ]
    );
    let after: Vec<(usize, usize)> = plan
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::After)
        .map(|e| (e.from + 1, e.to.unwrap() + 1))
        .collect();
    assert_eq!(after, vec![(1, 2), (2, 3), (3, 4), (2, 5), (4, 6), (6, 7)]);
    assert_eq!(
        Condition::parse("exit!=0"),
        Condition::Signal {
            key: "exit".into(),
            op: SignalOp::Ne,
            value: "0".into()
        }
    );
}

#[test]
fn scenarios_signals_and_needs() {
    let (plan, _) = planmd::parse("PLAN.md", EXAMPLE);
    let first = planmd::item(&plan.nodes[0]).unwrap();
    assert_eq!(
        first.scenarios,
        vec![
            "a fresh database → `make migrate` → the column exists with default `en`",
            "a database already migrated → `make migrate` → exits 0 and changes nothing",
        ]
    );
    let verify = planmd::item(&plan.nodes[2]).unwrap();
    assert_eq!(
        verify.emits,
        vec![
            ("migrated".into(), "true".into()),
            ("migrated".into(), "false".into())
        ]
    );
    assert_eq!(
        planmd::item(&plan.nodes[6]).unwrap().needs,
        vec!["migrated"]
    );
    assert_eq!(
        planmd::emitted_keys(&plan.nodes[1]),
        vec!["exit"],
        "a tool emits exit without declaring it"
    );
}

#[test]
fn waves_follow_the_dependencies() {
    let (plan, _) = planmd::parse("PLAN.md", EXAMPLE);
    assert_eq!(
        planvault_core::generated::waves(&plan),
        vec![vec![0], vec![1], vec![2, 4], vec![3], vec![5], vec![6]]
    );
}
