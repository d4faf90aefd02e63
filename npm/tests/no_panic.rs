//! Whatever text a plugin hands over, the parsers and checks the package
//! calls return diagnostics: no input may panic (in wasm a panic costs the
//! instance). Random notes, PLAN.md files and JSON plans, natively.

use planvault_core::{check, generated, PlanSource};
use planvault_wasm::incremental::IncrementalVault;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Text built from the pieces the grammars react to, plus arbitrary characters.
fn plan_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("---\n".to_owned()),
        Just("---\r\n".to_owned()),
        Just("\u{feff}".to_owned()),
        Just("type: start\n".to_owned()),
        Just("max_visits: [1, {a: b}]\n".to_owned()),
        Just("status: &x *x\n".to_owned()),
        Just("## Next\n".to_owned()),
        Just("- a -> [[b|c#d]]\n".to_owned()),
        Just("- [[]]\n".to_owned()),
        Just("- é → [[ü]] [[x]]\n".to_owned()),
        Just("12) => [[n]]\n".to_owned()),
        Just("7".to_owned()),
        Just("\n".to_owned()),
        Just("- [ ] (after: 2, 9) @tool `x` @on exit=0 -> 3\n".to_owned()),
        Just("- [x] @emit k=v @needs k\n".to_owned()),
        Just("```leopold-amend\n".to_owned()),
        Just(
            "{\"id\": \"a\", \"dependsOn\": [\"a\"], \"args\": {\"$from\": \"__proto__.x\"}}"
                .to_owned()
        ),
        Just("[{\"name\": \"s\", \"tool\": \"t\", \"after\": []}]".to_owned()),
        "\\PC{0,12}",
    ];
    prop::collection::vec(piece, 0..16).prop_map(|parts| parts.concat())
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a.md".to_owned()),
        Just("sub/a.md".to_owned()),
        Just("ä/ß.MD".to_owned()),
        Just(".obsidian/x.md".to_owned()),
        "[a-z/]{1,8}\\.md",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn vault_text_never_panics(files in prop::collection::btree_map(path(), plan_text(), 0..5), edits in prop::collection::vec((path(), plan_text()), 0..4)) {
        let mut now: BTreeMap<String, String> = files.clone();
        let mut vault = IncrementalVault::new(files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        for (p, t) in edits {
            vault.update(&p, &t);
            now.insert(p, t);
            let full = check(&PlanSource::Vault(now.clone()));
            prop_assert_eq!(vault.diagnostics(), &full.diagnostics[..]);
        }
        let _ = planvault_core::export::canvas(vault.plan());
        let _ = planvault_core::export::mermaid(vault.plan());
    }

    #[test]
    fn plan_md_text_never_panics(text in plan_text()) {
        let checked = check(&PlanSource::PlanMd { file: "PLAN.md".into(), text });
        let _ = planvault_core::export::mermaid(&checked.plan);
    }

    #[test]
    fn generated_text_never_panics(text in plan_text()) {
        let checked = check(&PlanSource::Generated { file: "plan.json".into(), text, options: generated::Options::default() });
        let _ = planvault_core::export::canvas(&checked.plan);
    }

    #[test]
    fn update_status_never_panics(text in plan_text()) {
        for status in [planvault_core::Status::Pending, planvault_core::Status::Done] {
            let _ = planvault_core::vault::update_status(&text, status);
        }
    }
}
