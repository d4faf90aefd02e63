//! The journal's hand reader (`journal::read_line`) against serde's derived
//! reading of a `JournalEntry`, which it replaces where the run worker's
//! size matters: every line one accepts the other accepts as the same
//! entry, every line one refuses the other refuses.

use planvault_core::engine::journal::{chained_line, entry_line, read_line, GENESIS};
use planvault_core::engine::{Answer, JournalEntry};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn derived(line: &str) -> Option<JournalEntry> {
    serde_json::from_str::<JournalEntry>(line).ok()
}

fn by_hand(line: &str) -> Option<JournalEntry> {
    read_line(line).ok().map(|(entry, _)| entry)
}

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "",
        "[a-z ]{0,8}",
        "\\PC{0,6}",
        Just("\u{2028}\"\\\n".to_string())
    ]
}

fn arb_answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        arb_text().prop_map(|output| Answer::Work { output }),
        (arb_text(), proptest::collection::vec(arb_text(), 0..3))
            .prop_map(|(raw, labels)| Answer::Judgment { raw, labels }),
        (any::<i32>(), arb_text()).prop_map(|(exit, output)| Answer::Command { exit, output }),
        (arb_text(), any::<bool>(), proptest::option::of(arb_text())).prop_map(
            |(decision, approved, choice)| Answer::Human {
                decision,
                approved,
                choice
            }
        ),
        (
            proptest::option::of(arb_value()),
            proptest::option::of(arb_text())
        )
            .prop_map(|(value, error)| Answer::Invoke {
                // A `null` value is written as none.
                value: value.filter(|v| !v.is_null()),
                error
            }),
        arb_text().prop_map(|text| Answer::Revision { text }),
        (
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(any::<u32>())
        )
            .prop_map(|(parallel, in_a_row, at_most)| Answer::Order {
                parallel,
                in_a_row,
                at_most
            }),
    ]
}

/// Any JSON value, the awkward numbers included.
fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop_oneof![Just(1.0f64), Just(-0.5), Just(1e300), Just(2147483648.0)]
            .prop_map(|n| json!(n)),
        arb_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const NAMES: [&str; 17] = [
    "key", "kind", "output", "raw", "labels", "exit", "decision", "approved", "choice", "value",
    "error", "text", "parallel", "prev", "from", "other", "",
];
const KINDS: [&str; 9] = [
    "work", "judgment", "command", "human", "invoke", "revision", "order", "Work", "replan",
];

/// A line of any shape: an entry's fields, some changed, some dropped,
/// others added, of any type.
fn arb_object() -> impl Strategy<Value = String> {
    (
        arb_answer(),
        proptest::option::of(arb_text()),
        proptest::collection::vec((0..NAMES.len(), arb_value()), 0..4),
        proptest::collection::vec(0..NAMES.len(), 0..2),
        0..KINDS.len() + 3,
    )
        .prop_map(|(answer, made_from, set, drop, kind)| {
            let entry = JournalEntry {
                key: "draft#1:work".into(),
                answer,
                made_from,
            };
            let Value::Object(mut fields) = serde_json::to_value(&entry).unwrap() else {
                unreachable!()
            };
            if let Some(kind) = KINDS.get(kind) {
                fields.insert("kind".into(), json!(kind));
            }
            for (name, value) in set {
                fields.insert(NAMES[name].into(), value);
            }
            for name in drop {
                fields.remove(NAMES[name]);
            }
            Value::Object(fields).to_string()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn an_entry_reads_back_as_written(
        key in arb_text(),
        answer in arb_answer(),
        made_from in proptest::option::of(arb_text()),
    ) {
        let entry = JournalEntry { key, answer, made_from };
        let line = entry_line(&entry);
        prop_assert_eq!(by_hand(&line), Some(entry.clone()));
        prop_assert_eq!(derived(&line), Some(entry.clone()));
        let (read, prev) = read_line(&chained_line(&entry, GENESIS)).unwrap();
        prop_assert_eq!((read, prev), (entry, Some(json!(GENESIS))));
    }

    #[test]
    fn any_line_reads_as_serde_reads_it(line in arb_object()) {
        prop_assert_eq!(by_hand(&line), derived(&line), "{}", line);
    }

    #[test]
    fn any_text_reads_as_serde_reads_it(line in "\\PC{0,40}") {
        prop_assert_eq!(by_hand(&line), derived(&line), "{}", line);
    }
}

#[test]
fn lines_that_are_not_entries_are_refused_by_both() {
    for line in [
        "[]",
        "null",
        "\"work\"",
        r#"{"key":"a#1:work"}"#,
        r#"{"kind":"work","output":""}"#,
        r#"{"key":"a#1:work","kind":"work"}"#,
        r#"{"key":"a#1:command","kind":"command","exit":1.0,"output":""}"#,
        r#"{"key":"a#1:command","kind":"command","exit":4294967296,"output":""}"#,
        r#"{"key":"a#1:human","kind":"human","decision":"ok","approved":"yes"}"#,
        r#"{"key":"a#1:judge.1","kind":"judgment","raw":"","labels":null}"#,
        r#"{"key":"a#1:judge.1","kind":"judgment","raw":"","labels":[1]}"#,
        r#"{"key":"run:order","kind":"order"}"#,
        r#"{"key":1,"kind":"work","output":""}"#,
    ] {
        assert_eq!((by_hand(line), derived(line)), (None, None), "{line}");
    }
    let mut extra = Map::new();
    extra.insert("key".into(), json!("a#1:work"));
    extra.insert("kind".into(), json!("work"));
    extra.insert("output".into(), json!("x"));
    extra.insert("prev".into(), json!(5));
    extra.insert("note".into(), json!({"any": [1, 2]}));
    let line = Value::Object(extra).to_string();
    assert_eq!(by_hand(&line), derived(&line));
    assert!(by_hand(&line).is_some());
}
