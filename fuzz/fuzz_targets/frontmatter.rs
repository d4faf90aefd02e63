//! A frontmatter block from arbitrary bytes, read both ways: the fast path
//! for plain blocks (`simple_yaml`) must give exactly the knobs and
//! diagnostics the YAML parser gives, whether unknown keys are kept or
//! not; and the parser planvault reads through (`yaml_value`) must answer
//! as yaml_serde's `Value` does, but where `Value` refuses an integer it
//! cannot hold. The depth scan run before the parser never sees a block
//! the parser reads as nested deeper than it is (that would refuse valid
//! YAML).
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::vault::{frontmatter, yaml_value};

fuzz_target!(|data: &[u8]| {
    let Some((&flag, yaml)) = data.split_first() else {
        return;
    };
    let yaml = String::from_utf8_lossy(yaml);
    let [fast, parsed] = frontmatter::read_both_ways(&yaml, flag & 1 == 1);
    assert_eq!(fast, parsed, "{yaml:?}");

    let [ours, theirs] = yaml_value::read_both_ways(&yaml);
    if let Ok(value) = &theirs {
        let scanned = yaml_value::scanned_flow_depth(&yaml);
        assert!(scanned <= nesting(value), "{yaml:?}: scanned {scanned}");
    }
    match &theirs {
        // `Value` stopped at the integer; this reader reads on, and may
        // still find a later error, but not that one.
        Err(message) if message.contains(" as u128") || message.contains(" as i128") => {
            if let Err(ours) = &ours {
                assert!(
                    !ours.contains(" as u128") && !ours.contains(" as i128"),
                    "{yaml:?}: {ours}"
                );
            }
        }
        _ => assert_eq!(ours, theirs, "{yaml:?}"),
    }
});

/// How deep a value nests collections (a scalar is 0).
fn nesting(value: &yaml_value::FuzzValue) -> usize {
    use yaml_value::FuzzValue as Value;
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Sequence(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            Value::Mapping(map) => {
                deepest = deepest.max(depth + 1);
                for (k, v) in map {
                    stack.push((k, depth + 1));
                    stack.push((v, depth + 1));
                }
            }
            Value::Tagged(t) => stack.push((&t.value, depth)),
            _ => {}
        }
    }
    deepest
}
