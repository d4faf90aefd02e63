//! Scale without recursion limits: a 100,000-note chain and a 100,000-note
//! single loop load, validate and draw without overflowing the stack. No file
//! I/O, so the same tests run natively and under wasm-bindgen-test in
//! headless Chromium, whose stack is far smaller.

use planvault_core::export::{self, GraphFormat};
use planvault_core::{check, Code, PlanSource};
use std::collections::BTreeMap;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

const NOTES: usize = 100_000;

/// `n00000 → n00001 → … → n99999`; with `close_loop`, the last links back to
/// the first.
fn chain(close_loop: bool) -> BTreeMap<String, String> {
    (0..NOTES)
        .map(|i| {
            let frontmatter = if i == 0 {
                "---\ntype: start\n---\n"
            } else {
                ""
            };
            let next = if i + 1 < NOTES {
                format!("\n## Next\n- [[n{:05}]]\n", i + 1)
            } else if close_loop {
                "\n## Next\n- again -> [[n00000]]\n".to_string()
            } else {
                String::new()
            };
            (
                format!("n{i:05}.md"),
                format!("{frontmatter}# Step {i}\n\nDo step {i}.\n{next}"),
            )
        })
        .collect()
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_100k_chain_validates_clean() {
    let checked = check(&PlanSource::Vault(chain(false)));
    assert_eq!(checked.plan.nodes.len(), NOTES);
    assert_eq!(checked.plan.edges.len(), NOTES - 1);
    assert!(
        checked.diagnostics.is_empty(),
        "{:?}",
        &checked.diagnostics[..checked.diagnostics.len().min(3)]
    );
    // Each note drawn once; past the indent cap the chain goes on at the
    // margin, a section per cap's worth of notes.
    let tree = export::export(&checked.plan, GraphFormat::Ascii);
    assert_eq!(tree.matches('▶').count(), NOTES - 1);
    assert!(tree.lines().count() < NOTES + NOTES / 4);
    assert!(tree.lines().all(|l| l.chars().count() < 80));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_100k_loop_is_one_cycle_without_exit() {
    let checked = check(&PlanSource::Vault(chain(true)));
    let codes: Vec<Code> = checked.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::NoTerminalReachable, Code::CycleWithoutExit]);
    let cycle = &checked.diagnostics[1];
    assert_eq!(cycle.nodes.len(), NOTES);
    assert!(
        cycle.message.contains("and 99990 more"),
        "{}",
        cycle.message
    );
    assert_eq!(cycle.file.as_deref(), Some("n00000.md"));
}

/// A 200 KB note of 100,000 nested brackets in its frontmatter (minutes of
/// YAML parsing, quadratic in the depth) is refused by a linear scan before
/// the parser sees it, at the first bracket past the limit; the rest of the
/// note still counts.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn frontmatter_nested_100k_deep_is_refused_at_the_limit() {
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        let note = format!(
            "---\ntype: start\ndeep: {}{}\n---\n# Deep\n",
            open.repeat(100_000),
            close.repeat(100_000)
        );
        let files = BTreeMap::from([("deep.md".to_string(), note)]);
        let checked = check(&PlanSource::Vault(files));
        let d = &checked.diagnostics;
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, Code::NestingTooDeep);
        assert_eq!(d[0].file.as_deref(), Some("deep.md"));
        assert_eq!(d[0].line, Some(3));
        // The 129th opening bracket, after `deep: `.
        assert_eq!(d[0].column, Some(7 + 128 * open.len() as u32));
        assert!(
            d[0].message.contains("limit of 128 levels"),
            "{}",
            d[0].message
        );
        assert_eq!(checked.plan.start, Some(0), "`type: start` still read");
    }
}
