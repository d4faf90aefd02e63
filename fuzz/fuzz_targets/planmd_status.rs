//! A worker's reply as PLAN.md's status block reader sees it (any text a
//! model may send): it never panics, and every signal it reads has a
//! non-empty key with no comma in it and no space around it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::planmd::status::parse_status;

fuzz_target!(|text: &str| {
    if let Some(status) = parse_status(text) {
        for (key, value) in &status.signals {
            assert!(!key.is_empty() && !key.contains(','), "{key:?}");
            assert!(
                !key.starts_with([' ', '\t', '\n', '\r'])
                    && !key.ends_with([' ', '\t', '\n', '\r'])
            );
            assert!(!value.contains(','), "{value:?}");
        }
        let mut keys: Vec<&String> = status.signals.iter().map(|(k, _)| k).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), status.signals.len(), "a key read twice");
    }
});
