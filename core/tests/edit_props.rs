//! Property tests for `vault::edit`: whatever the note looks like, the lines
//! an edit is not about survive byte for byte (line endings and BOM included).

use planvault_core::vault::edit::{self, KnobValue};
use planvault_core::vault::links::LinkForm;
use planvault_core::vault::{self, rename};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

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

/// Whether a generated line, after an item, continues it as Obsidian reads
/// it (a paragraph's lazy continuation): not blank, and nothing that starts
/// a block (a heading, a list item, a fence).
fn continues_item(line: &str) -> bool {
    let line = line.trim_end_matches(['\r', '\n']);
    let content = line.trim_start();
    !content.is_empty() && !content.starts_with(['#', '-', '*']) && !content.starts_with("```")
}

/// How many of the lines after an item's first line are the item's:
/// prose that continues it lazily (none after indented code, `code`), and,
/// past blank lines, lines indented as its content (two columns, past
/// `- `), which CommonMark keeps in the item, with the blank lines before
/// them.
fn item_lines(rest: &[&str], code: bool) -> usize {
    let blank = |l: &str| l.trim().is_empty();
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let (mut taken, mut lazy) = (0, !code);
    while taken < rest.len() {
        let line = rest[taken];
        if blank(line) {
            match rest[taken..].iter().position(|l| !blank(l)) {
                Some(gap) if indent(rest[taken + gap]) >= 2 => {
                    taken += gap;
                    // An indented line after a blank one is a paragraph of
                    // the item (or its code): prose may continue it.
                    lazy = indent(rest[taken]) < 6;
                }
                _ => break,
            }
        } else if indent(line) >= 2 || (lazy && continues_item(line)) {
            taken += 1;
        } else {
            break;
        }
    }
    taken
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

/// A piece of a `## Next` section as people and tools write one: items
/// on one line or wrapped, tasks, markdown links, nested items, comments,
/// code, prose.
fn next_piece() -> impl Strategy<Value = String> {
    let label = "[a-z]{1,6}( [a-z]{1,6})?";
    let target = "[a-z]{1,5}";
    prop_oneof![
        (label, target).prop_map(|(l, t)| format!("- {l} -> [[{t}]]\n")),
        target.prop_map(|t| format!("* [[{t}|alias]]\n")),
        (label, target).prop_map(|(l, t)| format!("- [ ] {l} => [{t}]({t}.md)\n")),
        (label, target).prop_map(|(l, t)| format!("1. {l} ->\n   [[{t}]] later\n")),
        (label, label, target).prop_map(|(a, b, t)| format!("- {a}\n  {b} →\n  [[{t}]]\n")),
        (label, target).prop_map(|(l, t)| format!("  - {l} [[{t}]]\n")),
        target.prop_map(|t| format!("%%\n- old -> [[{t}]]\n%%\n")),
        target.prop_map(|t| format!("```\n- [[{t}]]\n```\n")),
        label.prop_map(|l| format!("{l}\n")),
        Just("\n".to_string()),
        Just("- \n".to_string()),
    ]
}

prop_compose! {
    fn next_note()(
        front in any::<bool>(),
        pieces in proptest::collection::vec(next_piece(), 0..8),
        crlf in any::<bool>(),
        after in proptest::option::of(Just("## Notes\n- [[x]]\n")),
    ) -> String {
        let mut text = String::new();
        if front { text.push_str("---\ntype: step\n---\n"); }
        text.push_str("# Note\n\n## Next\n");
        for piece in pieces { text.push_str(&piece); }
        if let Some(after) = after { text.push_str(after); }
        if crlf { text = text.replace('\n', "\r\n"); }
        text
    }
}

/// The edges a note declares, as the loader reads them: target, label and
/// the line of the link.
fn declared(text: &str) -> Vec<(String, Option<String>, u32)> {
    let mut files = BTreeMap::new();
    files.insert("n.md".to_string(), text.to_string());
    let (plan, _) = vault::load(&files);
    plan.edges
        .iter()
        .map(|e| {
            (
                e.target.clone(),
                e.label.clone(),
                e.pos.as_ref().map_or(0, |p| p.line),
            )
        })
        .collect()
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

const FOLDERS: [&str; 4] = ["", "a/", "b/", "a/c/"];
const NAMES: [&str; 4] = ["draft", "Send", "review", "first"];

/// The path a link in note `from` writes to reach `to` in `way`: by name,
/// by path, from the root, from the note's folder, or a name no note has.
fn written(from: &str, to: &str, way: usize) -> String {
    let folder: Vec<&str> = from.split('/').collect();
    let folder = &folder[..folder.len() - 1];
    match way {
        0 => to.rsplit('/').next().unwrap().to_string(),
        1 => to.to_string(),
        2 => format!("/{to}"),
        3 => {
            let ups = "../".repeat(folder.len());
            if ups.is_empty() {
                format!("./{to}")
            } else {
                format!("{ups}{to}")
            }
        }
        _ => "nowhere".to_string(),
    }
}

prop_compose! {
    /// A vault of same-named notes in nested folders linked every way
    /// Obsidian reads (wikilinks and markdown links, with and without
    /// `.md`), a note of it and a new name nothing has yet.
    fn renamed_vault()(
        notes in proptest::collection::btree_set((0..4usize, 0..3usize), 2..7),
        links in proptest::collection::vec((0..7usize, 0..7usize, 0..5usize, any::<bool>(), any::<bool>()), 0..16),
        renamed in 0..7usize,
        new in (0..4usize, 0..4usize),
    ) -> (BTreeMap<String, String>, String, String) {
        let ids: Vec<String> = notes.iter().map(|&(f, n)| format!("{}{}", FOLDERS[f], NAMES[n])).collect();
        let mut texts: Vec<String> = ids.iter().map(|_| "# Note\n\n## Next\n".to_string()).collect();
        for (from, to, way, markdown, md) in links {
            let (from, to) = (from % ids.len(), to % ids.len());
            let path = format!("{}{}", written(&ids[from], &ids[to], way), if md { ".md" } else { "" });
            let item = if markdown {
                format!("- go -> [x]({})\n", path.replace(' ', "%20"))
            } else {
                format!("- go -> [[{path}|x]]\n")
            };
            texts[from].push_str(&item);
        }
        let old = ids[renamed % ids.len()].clone();
        let mut new = format!("{}{}", FOLDERS[new.0], NAMES[new.1]);
        if ids.iter().any(|id| id.eq_ignore_ascii_case(&new)) {
            new = format!("{}{} v2", FOLDERS[new.len() % 4], NAMES[new.len() % 4]);
        }
        let files = ids.iter().zip(texts).map(|(id, text)| (format!("{id}.md"), text)).collect();
        (files, old, new)
    }
}

/// A rename of `old` to `new` in `files` changes only lines with links,
/// keeps every edge joining the same notes and, in a SilverBullet space,
/// leaves no edge SilverBullet read as its note read otherwise.
fn check_rename(
    files: &BTreeMap<String, String>,
    old: &str,
    new: &str,
) -> Result<(), TestCaseError> {
    let changed: BTreeMap<String, String> =
        rename::rename_note(files, old, new).into_iter().collect();
    let old_path = format!("{old}.md");
    let mut after_files = files.clone();
    let renamed = after_files.remove(&old_path).unwrap();
    after_files.insert(
        format!("{new}.md"),
        changed.get(&old_path).cloned().unwrap_or(renamed),
    );
    for (path, text) in &changed {
        // Only lines with links change, and none is added or lost.
        let (_, before_lines) = lines(&files[path]);
        let (_, after_lines) = lines(text);
        prop_assert_eq!(before_lines.len(), after_lines.len());
        for (a, b) in before_lines.iter().zip(&after_lines) {
            if !a.contains("[[") && !a.contains("](") {
                prop_assert_eq!(a, b);
            }
        }
        if path != &old_path {
            after_files.insert(path.clone(), text.clone());
        }
    }
    let moved = |id: &str| {
        if id == old {
            new.to_string()
        } else {
            id.to_string()
        }
    };
    let edges = |files: &BTreeMap<String, String>, map: &dyn Fn(&str) -> String| {
        let (plan, _) = vault::load(files);
        plan.edges
            .iter()
            .map(|e| {
                (
                    map(&plan.nodes[e.from].id),
                    e.pos.as_ref().map(|p| p.line),
                    e.to.map(|to| map(&plan.nodes[to].id)),
                )
            })
            .collect::<BTreeSet<_>>()
    };
    let before = edges(files, &moved);
    let after = edges(&after_files, &|id: &str| id.to_string());
    for edge in before.iter().filter(|(_, _, to)| to.is_some()) {
        prop_assert!(after.contains(edge), "{:?} is lost: {:?}", edge, after);
    }
    if vault::silverbullet::is_space(files) {
        let warned = |files: &BTreeMap<String, String>, map: &dyn Fn(&str) -> String| {
            let (plan, _) = vault::load(files);
            vault::silverbullet::check(files, &plan)
                .into_iter()
                .filter(|d| d.nodes.len() == 2)
                .map(|d| (map(&d.nodes[0]), d.line, map(&d.nodes[1])))
                .collect::<BTreeSet<_>>()
        };
        let was_warned = warned(files, &moved);
        // Only edges that joined notes before: a rename may make a link
        // that was ambiguous resolve, and SilverBullet's reading of that
        // new edge is its own.
        let now_warned = warned(&after_files, &|id: &str| id.to_string());
        for (from, line, to) in now_warned {
            let edge = (from.clone(), line, Some(to.clone()));
            if before.contains(&edge) {
                prop_assert!(
                    was_warned.contains(&(from, line, to)),
                    "{:?} read otherwise now",
                    edge
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn append_edge_only_adds_lines(text in note(), label in "[a-z ]{0,10}", target in "[a-z]{1,8}") {
        let (after, line) = match edit::append_edge(&text, &label, &target, LinkForm::Wiki) {
            Ok(written) => written,
            Err(e) => {
                // Refused only where the note ends inside a code block
                // never closed (the generated fences are "```" lines).
                prop_assert_eq!(e, edit::EditError::NewEdgeReadOtherwise);
                let fences = text.trim_start_matches('\u{feff}').lines().filter(|l| l.trim_end() == "```").count();
                prop_assert!(fences % 2 == 1, "{:?}", text);
                return Ok(());
            }
        };
        let (bom_before, before_lines) = lines(&text);
        let (bom_after, mut after_lines) = lines(&after);
        prop_assert_eq!(bom_before, bom_after);
        let item = after_lines.remove(line as usize - 1);
        prop_assert_eq!(item.trim_end_matches(['\r', '\n']), edit::edge_item(&label, &target, LinkForm::Wiki));
        // The loader reads it, on that line.
        let parsed = vault::note::parse_note("n.md", "n", &after, &mut Vec::new());
        prop_assert!(parsed.edges.iter().any(|e| e.pos.line == line && e.target == target), "{:?}", after);
        // Without a `## Next` section the heading (and a blank line) came
        // too; after a block that would take the item in, a blank line.
        let added = after_lines.len() - before_lines.len();
        prop_assert!(added <= 2);
        let above = line as usize - 2;
        let kept: Vec<&str> = if added > 0 && after_lines[above].trim_end() == "## Next" {
            after_lines[..before_lines.len()].to_vec()
        } else if added == 1 && after_lines[above].trim().is_empty() {
            after_lines.remove(above);
            after_lines.clone()
        } else {
            prop_assert_eq!(added, 0, "{:?}\n=>\n{:?}", text, after);
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
                // The item goes with the prose lines that continue it (the
                // generated items hold their link on their first line).
                let mut expected = before_lines.clone();
                // (Text five spaces past the marker is indented code, which
                // no lazy line continues.)
                let code = before_lines[index].get(1..6) == Some("     ");
                let continued = item_lines(&expected[index + 1..], code);
                let gone = expected.drain(index..=index + continued).next_back().unwrap();
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
    fn edge_edits_change_the_edge_the_graph_shows_and_no_other(
        text in next_note(), label in "[a-z]{1,6}", target in "[a-z]{1,5}",
    ) {
        let edges = declared(&text);
        let unlined = |edges: Vec<(String, Option<String>, u32)>| {
            // `[a](a.md)` and `[[a]]` name the same note.
            edges.into_iter().map(|(t, l, _)| (t.trim_end_matches(".md").to_string(), l)).collect::<Vec<_>>()
        };
        for (i, (_, _, line)) in edges.iter().enumerate() {
            let mut expected = unlined(edges.clone());
            expected[i].0 = target.clone();
            // Retargeting or relabelling leaves every item where it was;
            // a removal may be refused as changing more (the items after
            // it would read differently), never made wrong.
            let after = edit::retarget_edge(&text, *line, &target).expect("every edge can be retargeted");
            prop_assert_eq!(unlined(declared(&after)), expected, "{:?}\n=>\n{:?}", text, after);

            let mut expected = unlined(edges.clone());
            expected[i].1 = Some(label.clone());
            let after = edit::relabel_edge(&text, *line, &label).unwrap();
            prop_assert_eq!(unlined(declared(&after)), expected, "{:?}\n=>\n{:?}", text, after);
            let after = edit::relabel_edge(&text, *line, "").unwrap();
            prop_assert_eq!(declared(&after)[i].1.clone(), None, "{:?}\n=>\n{:?}", text, after);
            prop_assert_eq!(declared(&after).len(), edges.len());

            let mut expected = unlined(edges.clone());
            expected.remove(i);
            match edit::remove_edge(&text, *line) {
                Err(edit::EditError::ChangesOtherEdges { .. }) => {}
                after => {
                    let after = after.unwrap();
                    prop_assert_eq!(unlined(declared(&after)), expected, "{:?}\n=>\n{:?}", text, after);
                }
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
    fn a_rename_keeps_every_edge_joining_the_same_notes(
        (files, old, new) in renamed_vault(),
    ) {
        check_rename(&files, &old, &new)?;
    }

    /// The same in a SilverBullet space, where SilverBullet's reading is
    /// kept too: no edge it read as its note reads otherwise after.
    #[test]
    fn a_rename_in_a_silverbullet_space_keeps_both_readings(
        (mut files, old, new) in renamed_vault(),
    ) {
        files.insert("CONFIG.md".into(), "```space-lua\n```\n".into());
        check_rename(&files, &old, &new)?;
    }

    #[test]
    fn replace_body_keeps_frontmatter(text in note(), body in "[a-z\n]{0,40}") {
        let after = edit::replace_body(&text, &body);
        let head = &text[..text.len() - edit::body(&text).len()];
        prop_assert!(after.starts_with(head));
        prop_assert_eq!(edit::body(&after).replace("\r\n", "\n"), body);
    }
}
