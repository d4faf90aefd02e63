//! Property tests for the PLAN.md grammar and validator.

use planvault_core::{check, planmd, Code, PlanSource};
use proptest::prelude::*;

fn source(text: String) -> PlanSource {
    PlanSource::PlanMd {
        file: "PLAN.md".into(),
        text,
    }
}

/// One line of an item that uses none of `@on`, `@emit`, `@needs`: any kind,
/// label, dependency (backward, forward, zero, huge), scenario or prose.
fn old_grammar_item() -> impl Strategy<Value = String> {
    let check = prop_oneof![Just("[ ]"), Just("[x]"), Just("[X]")];
    let after = prop_oneof![
        Just(String::new()),
        (0u32..40, 0u32..40).prop_map(|(a, b)| format!("(after: {a}, {b}) ")),
        (0u32..40).prop_map(|a| format!("(DEPS: {a}) ")),
        Just("(after: 99999999999) ".to_string()),
    ];
    let kind = prop_oneof![
        Just(""),
        Just("@work "),
        Just("@gate security "),
        Just("@verify "),
        Just("@tool build: "),
        Just("@tool "),
        Just("@human "),
        Just("@feedback "),
        Just("@node gate "),
        Just("@toolbox "),
    ];
    let indent = prop_oneof![Just(""), Just("  "), Just("    ")];
    let text = "[A-Za-z`→ ,.:()-]{0,30}";
    let extra = prop_oneof![
        Just(String::new()),
        "[a-z ]{1,20}".prop_map(|s| format!("\n      @scenario {s}")),
        Just("\n      @gate".to_string()),
        "[A-Za-z ]{1,20}".prop_map(|s| format!("\n      {s}")),
    ];
    (indent, check, after, kind, text, extra)
        .prop_map(|(i, c, a, k, t, e)| format!("{i}- {c} {a}{k}{t}{e}"))
}

fn old_grammar_plan() -> impl Strategy<Value = String> {
    let block = prop_oneof![
        4 => old_grammar_item(),
        1 => Just("# Heading".to_string()),
        1 => Just("Some prose.".to_string()),
        1 => Just("```\n- [ ] (after: 3) in a fence\n```".to_string()),
        1 => Just(String::new()),
    ];
    (prop::collection::vec(block, 0..40), any::<bool>()).prop_map(|(blocks, crlf)| {
        let text = blocks.join("\n") + "\n";
        if crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        }
    })
}

/// Lines using the whole grammar, routes and signals included.
fn full_grammar_plan() -> impl Strategy<Value = String> {
    let marker = prop_oneof![
        (0u32..12).prop_map(|n| format!("      @on fail -> {n}")),
        (0u32..12, "[a-c]").prop_map(|(n, k)| format!("      @on {k}=1 => {n}")),
        (0u32..12, "[a-c]").prop_map(|(n, k)| format!("      @on {k}!=1 → {n}")),
        Just("      @on ok".to_string()),
        "[a-c]".prop_map(|k| format!("      @emit {k}=1")),
        "[a-c]".prop_map(|k| format!("      @emit {k}")),
        "[a-c], [a-c]".prop_map(|k| format!("      @needs {k}")),
        "[a-z →=>!-]{0,12}".prop_map(|s| format!("      @on {s}")),
    ];
    let item =
        (old_grammar_item(), prop::collection::vec(marker, 0..4)).prop_map(|(item, markers)| {
            std::iter::once(item)
                .chain(markers)
                .collect::<Vec<_>>()
                .join("\n")
        });
    prop::collection::vec(item, 0..14).prop_map(|items| items.join("\n") + "\n")
}

/// Lines Leopold's rule reads as nothing: blank lines, prose, headings,
/// bullets that are not `- [ ]`, and marker words not at a line's start.
fn noise_line() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(""),
        Just("   "),
        Just("Some prose."),
        Just("# A heading"),
        Just("## Notes: (after: 1)"),
        Just("- a plain bullet"),
        Just("  - a plain sub-bullet"),
        Just("\t* [ ] a star box"),
        Just("+ [ ] a plus box"),
        Just("1. [ ] a numbered box"),
        Just("> - [ ] a quoted box"),
        Just("-  [ ] two spaces after the dash"),
        Just("- [y] not a box"),
        Just("| a | table |"),
        Just("      wrapped prose that mentions @on fail -> 1"),
        Just("@nodemon is a word, @toolbox too"),
    ]
}

/// What a plan's reading comes to without positions or bodies: the items,
/// the edges and the diagnostics.
fn reading(text: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let checked = check(&source(text.to_string()));
    let nodes = checked
        .plan
        .nodes
        .iter()
        .map(|n| {
            let mut ext = planmd::item(n).cloned().unwrap();
            ext.needs_at.clear();
            format!("{} {:?} {:?} {:?} {ext:?}", n.id, n.title, n.kind, n.status)
        })
        .collect();
    let edges = checked
        .plan
        .edges
        .iter()
        .map(|e| {
            format!(
                "{} {:?} {:?} {:?} {:?}",
                e.from, e.to, e.target, e.label, e.kind
            )
        })
        .collect();
    let diagnostics = checked
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {:?} {} {:?} {:?} {:?}",
                d.code, d.severity, d.message, d.items, d.target, d.key
            )
        })
        .collect();
    (nodes, edges, diagnostics)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Items and edges depend only on the lines Leopold's rule reads: blank
    /// lines, prose, headings and bullets that are not items, inserted
    /// anywhere (between an item and its markers too), change nothing.
    #[test]
    fn lines_the_rule_does_not_read_change_nothing(
        text in full_grammar_plan(),
        noise in prop::collection::vec((any::<prop::sample::Index>(), noise_line()), 0..12),
    ) {
        let mut lines: Vec<&str> = text.lines().collect();
        // Before the first line would put noise before nothing that matters,
        // so anywhere from after the first line on.
        for (at, line) in noise {
            let at = 1 + at.index(lines.len().max(1));
            lines.insert(at.min(lines.len()), line);
        }
        let noisy = lines.join("\n") + "\n";
        prop_assert_eq!(reading(&text), reading(&noisy), "{}", noisy);
    }

    /// Seed 001's promise: validation is a gate for the new grammar, never a
    /// new way for an old plan to fail.
    /// (A plan with no item at all gets the `empty-plan` warning, and only it.)
    #[test]
    fn a_plan_without_on_emit_or_needs_never_yields_a_diagnostic(text in old_grammar_plan()) {
        prop_assume!(!text.contains("@on") && !text.contains("@emit") && !text.contains("@needs"));
        let checked = check(&source(text));
        let codes: Vec<Code> = checked.diagnostics.iter().map(|d| d.code).collect();
        if checked.plan.nodes.is_empty() {
            prop_assert_eq!(codes, vec![Code::EmptyPlan]);
            prop_assert!(!checked.has_errors());
        } else {
            prop_assert_eq!(codes, vec![]);
        }
    }

    /// Any plan: no panic, only the five codes (after the parse warnings), in
    /// the fixed class order,
    /// the same bytes twice, and CRLF exactly like LF.
    #[test]
    fn every_plan_gets_only_the_five_codes_in_order(text in full_grammar_plan()) {
        let checked = check(&source(text.clone()));
        if checked.plan.nodes.is_empty() {
            prop_assert!(checked.diagnostics.iter().any(|d| d.code == Code::EmptyPlan));
            prop_assert!(checked
                .diagnostics
                .iter()
                .all(|d| matches!(d.code, Code::EmptyPlan | Code::OrphanMarker | Code::LeopoldReadsOtherwise)));
            return Ok(());
        }
        let rank = |c: Code| match c {
            Code::OrphanMarker | Code::EmptyPlan | Code::LeopoldReadsOtherwise => 0,
            Code::Cycle => 1,
            Code::DanglingEdge => 2,
            Code::UnmetNeed => 3,
            Code::UnroutableSignal => 4,
            Code::Unreachable => 5,
            other => panic!("unexpected code {other}"),
        };
        let ranks: Vec<u8> = checked.diagnostics.iter().map(|d| rank(d.code)).collect();
        let mut sorted = ranks.clone();
        sorted.sort();
        prop_assert_eq!(&ranks, &sorted);
        for d in checked.diagnostics.iter().filter(|d| rank(d.code) > 0) {
            prop_assert!(!d.items.is_empty());
            let named = format!("item {}", d.items[0]);
            prop_assert!(d.message.contains(&named), "{} does not name {}", d.message, named);
        }
        let again = check(&source(text.clone()));
        prop_assert_eq!(&checked.diagnostics, &again.diagnostics);
        let crlf = check(&source(text.replace('\n', "\r\n")));
        prop_assert_eq!(&checked.plan, &crlf.plan);
        // A CRLF file whose last line has no line ending has one LF-less
        // line, the only one Leopold reads: warned.
        let others = |diagnostics: &[planvault_core::Diagnostic]| -> Vec<planvault_core::Diagnostic> {
            diagnostics.iter().filter(|d| d.code != Code::LeopoldReadsOtherwise).cloned().collect()
        };
        prop_assert_eq!(others(&checked.diagnostics), others(&crlf.diagnostics));
    }

    /// One item line made CRLF among LF ones: Leopold reads it as nothing,
    /// and the warning says so at that line, naming it; wholly LF or
    /// wholly CRLF (every line ended), no such warning.
    #[test]
    fn an_item_line_ending_crlf_among_lf_is_warned_at_it(
        text in full_grammar_plan(),
        pick in proptest::prelude::any::<proptest::sample::Index>(),
    ) {
        let text = format!("{}\n", text.trim_end_matches('\n'));
        let plain = check(&source(text.clone()));
        let crlf = check(&source(text.replace('\n', "\r\n")));
        for checked in [&plain, &crlf] {
            prop_assert!(checked.diagnostics.iter().all(|d| d.code != Code::LeopoldReadsOtherwise));
        }
        prop_assume!(plain.plan.nodes.len() >= 2);
        let node = &plain.plan.nodes[pick.index(plain.plan.nodes.len())];
        let line = node.pos.as_ref().unwrap().line as usize;
        let mixed: String = text
            .split_inclusive('\n')
            .enumerate()
            .map(|(i, l)| if i + 1 == line { l.replace('\n', "\r\n") } else { l.to_string() })
            .collect();
        let checked = check(&source(mixed));
        prop_assert_eq!(&checked.plan.nodes.len(), &plain.plan.nodes.len());
        let warned: Vec<_> = checked
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::LeopoldReadsOtherwise)
            .collect();
        prop_assert_eq!(warned.len(), 1);
        prop_assert_eq!(warned[0].line, Some(line as u32));
        prop_assert!(warned[0].message.contains(&node.title), "{}", warned[0].message);
    }

    /// Arbitrary text never panics the parser or the validator.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = check(&source(text));
    }
}

/// Graph walks are iterative: a 100,000-item chain whose last item routes
/// back to the first validates on a thread with a small (wasm-like) stack.
#[test]
fn a_hundred_thousand_items_validate_in_a_small_stack() {
    let mut text = String::from("- [ ] Item 1\n");
    for i in 2..=100_000 {
        text.push_str(&format!("- [ ] (after: {}) Item {i}\n", i - 1));
    }
    text.push_str("      @on fail -> 1\n");
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let (plan, _) = planmd::parse("PLAN.md", &text);
            planmd::validate(&plan)
        })
        .unwrap();
    let diagnostics = handle.join().expect("no stack overflow");
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].code, Code::Cycle);
    assert_eq!(diagnostics[0].items.len(), 100_000);
}
