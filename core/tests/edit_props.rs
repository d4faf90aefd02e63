//! Property tests for `vault::edit`: whatever the note looks like, the lines
//! an edit is not about survive byte for byte (line endings and BOM included).

use planvault_core::vault::edit::{self, KnobValue};
use planvault_core::vault::links::LinkForm;
use proptest::prelude::*;

/// Lines with their endings, the BOM set apart.
fn lines(text: &str) -> (bool, Vec<&str>) {
    let (bom, rest) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    (bom, rest.split_inclusive('\n').collect())
}

/// Lines compared without the ending of the very last one, which an append
/// after a note lacking a final newline must add.
fn same_lines(a: &[&str], b: &[&str]) -> bool {
    let strip = |s: &str| s.trim_end_matches(['\r', '\n']).to_string();
    a.len() == b.len()
        && a.iter().zip(b).enumerate().all(|(i, (x, y))| {
            if i + 1 == a.len() {
                strip(x) == strip(y)
            } else {
                x == y
            }
        })
}

fn line_kind() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z ,.]{0,30}",
        Just("## Next".to_string()),
        Just("## Notes".to_string()),
        Just("# Title".to_string()),
        Just("```".to_string()),
        Just("".to_string()),
        (
            "[a-z ]{0,12}",
            prop_oneof![Just("->"), Just("=>"), Just("→")],
            "[a-z/]{1,8}"
        )
            .prop_map(|(label, arrow, target)| format!("- {label} {arrow} [[{target}]]")),
        "[a-z/]{1,8}".prop_map(|t| format!("* [[{t}|alias]]")),
        "[a-z ]{0,10}".prop_map(|t| format!("prose with [[{t}]] link")),
    ]
}

fn frontmatter_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("type: step".to_string()),
        Just("status: pending".to_string()),
        Just("tools: [a, b]".to_string()),
        Just("tools:\n  - fetch".to_string()),
        Just("role: review".to_string()),
        Just("max_visits: 3".to_string()),
        "[a-z]{1,6}: [a-z0-9 #]{0,10}",
    ]
}

prop_compose! {
    fn note()(
        bom in any::<bool>(),
        front in proptest::option::of(proptest::collection::vec(frontmatter_line(), 0..6)),
        body in proptest::collection::vec(line_kind(), 0..14),
        crlf in proptest::collection::vec(any::<bool>(), 24),
        final_newline in any::<bool>(),
    ) -> String {
        let mut all = Vec::new();
        if let Some(front) = front {
            all.push("---".to_string());
            // Duplicate keys are bad frontmatter the loader reports; not an edit's business.
            let mut seen = std::collections::HashSet::new();
            all.extend(front.into_iter().filter(|l| seen.insert(l.split(':').next().unwrap_or("").to_string())));
            all.push("---".to_string());
        }
        all.extend(body);
        let mut text = String::new();
        if bom { text.push('\u{feff}'); }
        let count = all.len();
        for (i, line) in all.into_iter().enumerate() {
            text.push_str(&line);
            if i + 1 < count || final_newline {
                text.push_str(if crlf[i % crlf.len()] { "\r\n" } else { "\n" });
            }
        }
        text
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn append_edge_only_adds_lines(text in note(), label in "[a-z ]{0,10}", target in "[a-z]{1,8}") {
        let (after, line) = edit::append_edge(&text, &label, &target, LinkForm::Wiki);
        let (bom_before, before_lines) = lines(&text);
        let (bom_after, mut after_lines) = lines(&after);
        prop_assert_eq!(bom_before, bom_after);
        let item = after_lines.remove(line as usize - 1);
        prop_assert_eq!(item.trim_end_matches(['\r', '\n']), edit::edge_item(&label, &target, LinkForm::Wiki));
        // Without a `## Next` section the heading (and a blank line) came too.
        let added = after_lines.len() - before_lines.len();
        prop_assert!(added <= 2);
        let kept: Vec<&str> = if added > 0 {
            let heading = line as usize - 2;
            prop_assert_eq!(after_lines[heading].trim_end(), "## Next");
            after_lines[..before_lines.len()].to_vec()
        } else {
            after_lines.clone()
        };
        prop_assert!(same_lines(&before_lines, &kept), "{:?}\n=>\n{:?}", text, after);
    }

    #[test]
    fn edge_edits_touch_only_their_line(text in note(), label in "[a-z ]{0,10}", target in "[a-z]{1,8}") {
        let (_, before_lines) = lines(&text);
        for line in 1..=before_lines.len() as u32 {
            let index = line as usize - 1;
            if let Ok(after) = edit::retarget_edge(&text, line, &target) {
                let (_, after_lines) = lines(&after);
                prop_assert_eq!(after_lines.len(), before_lines.len());
                for (i, (a, b)) in before_lines.iter().zip(&after_lines).enumerate() {
                    if i != index { prop_assert_eq!(a, b); }
                }
                let target_link = format!("[[{}]]", target);
                prop_assert!(after_lines[index].contains(&target_link));
                let relabelled = edit::relabel_edge(&text, line, &label).expect("an edge for retarget is one for relabel");
                let (_, relabel_lines) = lines(&relabelled);
                for (i, (a, b)) in before_lines.iter().zip(&relabel_lines).enumerate() {
                    if i != index { prop_assert_eq!(a, b); }
                }
                let removed = edit::remove_edge(&text, line).expect("an edge for retarget is one for remove");
                let mut expected = before_lines.clone();
                let gone = expected.remove(index);
                let mut expected: String = expected.concat();
                if !gone.ends_with('\n') {
                    // The last line went: the one before it gives up its newline.
                    let trimmed = expected.strip_suffix("\r\n").or_else(|| expected.strip_suffix('\n')).unwrap_or(&expected);
                    expected = trimmed.to_string();
                }
                let removed = removed.strip_prefix('\u{feff}').unwrap_or(&removed);
                prop_assert_eq!(removed, expected);
            } else {
                prop_assert!(edit::remove_edge(&text, line).is_err());
            }
        }
    }

    #[test]
    fn knobs_touch_only_their_key(text in note(), status in prop_oneof![Just("done"), Just("active")]) {
        let Ok(after) = edit::set_knob(&text, "status", Some(&KnobValue::Text(status.to_string()))) else {
            return Ok(()); // An unclosed frontmatter block is refused, not guessed at.
        };
        let (_, before_lines) = lines(&text);
        let (bom, after_lines) = lines(&after);
        prop_assert_eq!(bom, text.starts_with('\u{feff}'));
        let status_line = format!("status: {}", status);
        prop_assert_eq!(after_lines.iter().filter(|l| l.trim_end() == status_line).count()
            - before_lines.iter().filter(|l| l.trim_end() == status_line).count().min(1), 1);
        let not_status = |l: &&&str| !l.starts_with("status:") && l.trim_end() != "---";
        let before_rest: Vec<&&str> = before_lines.iter().filter(not_status).collect();
        let after_rest: Vec<&&str> = after_lines.iter().filter(not_status).collect();
        prop_assert_eq!(before_rest, after_rest);
        // Removing it again leaves no status line at all.
        let removed = edit::set_knob(&after, "status", None).unwrap();
        let body_start = edit::body(&removed);
        let front = &removed[..removed.len() - body_start.len()];
        prop_assert!(!front.lines().any(|l| l.starts_with("status:")));
    }

    #[test]
    fn rename_touches_only_lines_with_links(text in note(), new in "[a-z]{1,8}") {
        if let Some(after) = edit::rename_links(&text, "draft", &new) {
            let (_, before_lines) = lines(&text);
            let (_, after_lines) = lines(&after);
            prop_assert_eq!(before_lines.len(), after_lines.len());
            for (a, b) in before_lines.iter().zip(&after_lines) {
                if !a.contains("[[") { prop_assert_eq!(a, b); }
            }
        }
    }

    #[test]
    fn replace_body_keeps_frontmatter(text in note(), body in "[a-z\n]{0,40}") {
        let after = edit::replace_body(&text, &body);
        let head = &text[..text.len() - edit::body(&text).len()];
        prop_assert!(after.starts_with(head));
        prop_assert_eq!(edit::body(&after).replace("\r\n", "\n"), body);
    }
}
