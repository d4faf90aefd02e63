//! Property tests for generated plans: random JSON never panics the parser or
//! the validator, and every refusal names a rule.

use planvault_core::{check, generated, Code, PlanSource};
use proptest::prelude::*;
use serde_json::{json, Value};

const RULES: [Code; 18] = [
    Code::MalformedPlan,
    Code::EmptyPlan,
    Code::UnknownTool,
    Code::ToolNotPermitted,
    Code::TooManySteps,
    Code::TooManyDependencies,
    Code::TooManyReferences,
    Code::TooManyPreconditions,
    Code::ArgsTooLarge,
    Code::DuplicateId,
    Code::MalformedId,
    Code::UnknownDependency,
    Code::SelfDependency,
    Code::MalformedRef,
    Code::DanglingRef,
    Code::UndeclaredRef,
    Code::ReservedPathSegment,
    Code::Cycle,
];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-e]".prop_map(String::from),
        1 => Just("__proto__".to_string()),
        1 => Just("9x".to_string()),
        1 => "\\PC{0,6}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,8}".prop_map(Value::String),
    ]
}

/// Arguments with bindings (legal or not) mixed into arbitrary JSON.
fn args() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => scalar(),
        2 => (name(), prop::collection::vec("[a-z_]{0,9}|__proto__|constructor|prototype|0", 0..3))
            .prop_map(|(s, path)| json!({"$from": std::iter::once(s).chain(path).collect::<Vec<_>>().join(".")})),
        1 => scalar().prop_map(|v| json!({"$from": v})),
        1 => (name(), scalar()).prop_map(|(s, v)| json!({"$from": s, "extra": v})),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn deps() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::collection::vec(name(), 0..4).prop_map(|v| json!(v)),
        1 => scalar(),
    ]
}

fn flat_step() -> impl Strategy<Value = Value> {
    (
        name(),
        prop_oneof![Just(json!("t")), Just(json!("u")), scalar()],
        args(),
        prop::option::of(deps()),
    )
        .prop_map(|(n, tool, args, after)| {
            let mut step = json!({"name": n, "tool": tool, "args": args});
            if let Some(after) = after {
                step["after"] = after;
            }
            step
        })
}

fn dag_node() -> impl Strategy<Value = Value> {
    let precondition = (
        name(),
        prop_oneof![Just(json!("exists")), Just(json!("equals")), scalar()],
    )
        .prop_map(|(r, test)| json!({"ref": r, "test": test, "value": 1}));
    (name(), prop_oneof![Just(json!("t")), scalar()], args(), deps(), prop::collection::vec(precondition, 0..3))
        .prop_map(|(id, cap, args, deps, pre)| json!({"id": id, "capability": cap, "args": args, "dependsOn": deps, "preconditions": pre}))
}

fn plan() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(flat_step(), 0..8).prop_map(Value::Array),
        prop::collection::vec(dag_node(), 0..8)
            .prop_map(|nodes| json!({"goal": "g", "nodes": nodes})),
        prop::collection::vec(flat_step(), 0..4).prop_map(|steps| json!({"steps": steps})),
        args(),
    ]
}

fn run(text: String) -> planvault_core::Checked {
    let options = generated::Options {
        allowed_tools: Some(vec!["t".into()]),
        available_tools: Some(vec!["t".into(), "u".into()]),
        limits: generated::Limits {
            max_nodes: 6,
            max_dependencies: 3,
            max_references: 4,
            max_preconditions: 2,
            max_args_bytes: 200,
            max_args_depth: 4,
        },
    };
    check(&PlanSource::Generated {
        file: "plan.json".into(),
        text,
        options,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_plans_never_panic_and_every_refusal_names_a_rule(value in plan()) {
        let checked = run(value.to_string());
        for d in &checked.diagnostics {
            prop_assert!(RULES.contains(&d.code), "{} is not a generated-plan rule", d.code);
            prop_assert!(!d.message.is_empty());
            prop_assert!(d.line.is_some() && d.column.is_some(), "{:?} has no position", d);
        }
        // A plan with no refusal is schedulable: every step is in a wave.
        if checked.diagnostics.is_empty() {
            let scheduled: usize = generated::waves(&checked.plan).iter().map(Vec::len).sum();
            prop_assert_eq!(scheduled, checked.plan.nodes.len());
        }
        let again = run(value.to_string());
        prop_assert_eq!(checked.diagnostics, again.diagnostics);
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        let checked = run(text);
        prop_assert!(checked.diagnostics.iter().all(|d| RULES.contains(&d.code)));
    }

    /// Resolution agrees with `lookup`, binding by binding: it succeeds
    /// exactly when every binding is exact and resolves, and then each bound
    /// position holds the value its reference names.
    #[test]
    fn resolution_agrees_with_lookup(args in args(), output in args()) {
        let outputs = [("a".to_string(), output.clone()), ("b".to_string(), output)].into();
        let bindings = generated::refs::bindings(&args);
        let all_resolve = bindings
            .iter()
            .all(|b| b.exact && generated::refs::lookup(b.reference.as_deref().unwrap(), &outputs).is_ok());
        let result = generated::resolve_refs(&args, &outputs);
        prop_assert_eq!(result.is_ok(), all_resolve);
        if let Ok(resolved) = result {
            for b in &bindings {
                let expected = generated::refs::lookup(b.reference.as_deref().unwrap(), &outputs).unwrap();
                prop_assert_eq!(resolved.pointer(&b.pointer), Some(expected));
            }
        }
    }
}

/// Deep JSON is refused by the parser's own nesting limit, not by a crash.
#[test]
fn hostile_nesting_is_refused() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let checked = run(text);
    assert_eq!(checked.diagnostics.len(), 1);
    assert_eq!(checked.diagnostics[0].code, Code::MalformedPlan);
}

/// Kahn, the cycle search and the binding walks are iterative: a 20,000-step
/// chain closed into a loop (far past any recursion a 256 KiB stack allows)
/// validates on a thread with that small a stack.
#[test]
fn twenty_thousand_steps_validate_in_a_small_stack() {
    const STEPS: usize = 20_000;
    let mut nodes =
        vec![json!({"id": "s0", "capability": "t", "dependsOn": [format!("s{}", STEPS - 1)]})];
    for i in 1..STEPS {
        let prev = format!("s{}", i - 1);
        nodes.push(json!({"id": format!("s{i}"), "capability": "t", "dependsOn": [prev.clone()], "args": {"x": {"$from": format!("{prev}.out")}}}));
    }
    let text = json!({"nodes": nodes}).to_string();
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let mut options = generated::Options::default();
            options.limits.max_nodes = STEPS;
            check(&PlanSource::Generated {
                file: "plan.json".into(),
                text,
                options,
            })
            .diagnostics
        })
        .unwrap();
    let diagnostics = handle.join().expect("no stack overflow");
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec![Code::Cycle]);
    assert_eq!(diagnostics[0].nodes.len(), STEPS);
}

/// A plan of a million steps is refused for its size in one pass over the
/// text: the steps past the ceiling are counted, never read into values.
#[test]
fn a_million_steps_are_counted_not_read() {
    let steps: Vec<String> = (0..1_000_000)
        .map(|i| format!(r#"{{"name":"s{i}","tool":"t","args":{{"q":[1,2,3]}}}}"#))
        .collect();
    let checked = check(&PlanSource::Generated {
        file: "plan.json".into(),
        text: format!("[{}]", steps.join(",\n")),
        options: generated::Options::default(),
    });
    let d = &checked.diagnostics;
    assert_eq!(d.len(), 1, "{:?}", &d[..d.len().min(3)]);
    assert_eq!(d[0].code, Code::TooManySteps);
    assert_eq!(
        d[0].message,
        "the plan has 1000000 steps; the ceiling is 32"
    );
    // The 33rd step, the first past the ceiling.
    assert_eq!((d[0].line, d[0].column), (Some(33), Some(1)));
    assert!(checked.plan.nodes.is_empty());

    // Broken JSON after the ceiling is still broken JSON.
    let checked = check(&PlanSource::Generated {
        file: "plan.json".into(),
        text: format!("[{}, {{]", steps[..40].join(",\n")),
        options: generated::Options::default(),
    });
    assert_eq!(checked.diagnostics.len(), 1);
    assert_eq!(checked.diagnostics[0].code, Code::MalformedPlan);
}
