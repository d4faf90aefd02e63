//! A frontmatter block from arbitrary bytes, read both ways: the fast path
//! for plain blocks (`simple_yaml`) must give exactly the knobs and
//! diagnostics the YAML parser gives, whether unknown keys are kept or
//! not; and the parser planvault reads through (`yaml_value`) must answer
//! as yaml_serde's `Value` does, but where `Value` refuses an integer it
//! cannot hold.
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
