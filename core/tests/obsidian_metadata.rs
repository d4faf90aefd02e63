//! Conformance with Obsidian's own reading of notes.
//!
//! `tests/fixtures/obsidian-metadata/cases/` holds notes of a public vault
//! (obsidian-tasks' `Tasks-Demo`) with what a running Obsidian said of each:
//! its list items and links as `app.metadataCache` reads them, and where
//! `getFirstLinkpathDest` resolves each link among the vault's files
//! (`vault-files.txt`). obsidian-tasks captured them from Obsidian for its
//! own tests; `distill.mjs` beside them says how they were brought here.
//! The folders in [`MORE`] hold more such captures (obsidian-tasks' older
//! ones, and one of another plugin's vault), each case with the vault's
//! files at its capture; their `README.md` says where they come from.
//!
//! planvault reads knobs from the frontmatter and edges from list items, so
//! these check that planvault finds the frontmatter Obsidian finds and reads
//! the same properties from it, and that in every list item planvault finds
//! the links Obsidian finds (wikilinks, embeds and
//! markdown links, none in code or HTML comments), at the same place, naming
//! the same note, and that each resolves to the file Obsidian opens.

use planvault_core::vault::frontmatter::{properties, split, Split};
use planvault_core::vault::links::{links, LinkIndex, Resolution};
use planvault_core::vault::{self, next};
use pulldown_cmark::HeadingLevel;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
struct Case {
    path: String,
    /// The frontmatter's properties, as Obsidian's YAML reader gives them.
    frontmatter: Option<serde_json::Value>,
    /// UTF-16 offset where the closing `---` ends.
    #[serde(rename = "frontmatterEnd")]
    frontmatter_end: Option<usize>,
    /// Each list item's UTF-16 span, its task status (`" "`, `"x"`, …) or
    /// `None` when it is no task, and its parent: the 0-based line of the
    /// item it is nested in, or minus the line its list starts on.
    #[serde(rename = "listItems")]
    list_items: Vec<(usize, usize, Option<String>, i64)>,
    links: Vec<ObsidianLink>,
    resolve: BTreeMap<String, Option<String>>,
    /// The vault's files when this note was captured; without them, those
    /// of `vault-files.txt`. (A case's `source`, where it was taken from,
    /// is for people: it is not read.)
    #[serde(rename = "vaultFiles")]
    vault_files: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct ObsidianLink {
    /// UTF-16 offsets, as JavaScript counts.
    span: [usize; 2],
    original: String,
    link: String,
}

/// Links Obsidian reads and planvault deliberately does not, with why.
const DIFFERS: [(&str, &str); 3] = [
    (
        "[[|]]",
        "an empty link names no note; planvault warns that the item has no link",
    ),
    (
        "[[|alias]]",
        "an empty link names no note; planvault warns that the item has no link",
    ),
    (
        "[[|#alias]]",
        "an empty link names no note; planvault warns that the item has no link",
    ),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian-metadata")
}

/// Folders of more captures, each with its own `cases/`.
const MORE: [&str; 3] = ["tasks-history", "tasks-ts", "spaced-repetition"];

fn cases() -> Vec<(String, String, Case)> {
    let mut out = Vec::new();
    for set in [""].into_iter().chain(MORE) {
        let mut names: Vec<PathBuf> = fs::read_dir(dir().join(set).join("cases"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        for json in names {
            let stem = json.file_stem().unwrap().to_string_lossy();
            let name = match set {
                "" => stem.into_owned(),
                _ => format!("{set}/{stem}"),
            };
            let text = fs::read_to_string(json.with_extension("md")).unwrap();
            let case: Case = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
            out.push((name, text, case));
        }
    }
    assert!(out.len() >= 194, "only {} cases", out.len());
    out
}

/// The byte offset of UTF-16 offset `units` in `text`.
fn byte_offset(text: &str, units: usize) -> usize {
    let mut count = 0;
    for (at, c) in text.char_indices() {
        if count >= units {
            return at;
        }
        count += c.len_utf16();
    }
    text.len()
}

/// The note a link names, as planvault's `target` is: before `#`, trimmed.
fn named(link: &str) -> &str {
    link.split('#').next().unwrap_or_default().trim()
}

#[test]
fn list_items_hold_the_links_obsidian_reads() {
    let mut compared = 0;
    let mut wrong = Vec::new();
    for (name, text, case) in cases() {
        for (start, end, _, _) in &case.list_items {
            let (start, end) = (byte_offset(&text, *start), byte_offset(&text, *end));
            let ours: Vec<(usize, usize, String)> = links(&text[start..end])
                .map(|l| (start + l.start, start + l.end, l.target.into_owned()))
                .collect();
            let theirs: Vec<(usize, usize, String)> = case
                .links
                .iter()
                .filter(|l| !DIFFERS.iter().any(|(original, _)| *original == l.original))
                .map(|l| {
                    let (s, e) = (byte_offset(&text, l.span[0]), byte_offset(&text, l.span[1]));
                    // An embed's `!` is outside the link planvault reads.
                    let s = if l.original.starts_with('!') {
                        s + 1
                    } else {
                        s
                    };
                    (s, e, named(&l.link).to_string())
                })
                .filter(|(s, _, _)| (start..end).contains(s))
                .collect();
            compared += theirs.len();
            if ours != theirs {
                wrong.push(format!(
                    "{name}: item {:?}\n  Obsidian: {theirs:?}\n  planvault: {ours:?}",
                    &text[start..end]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(compared >= 221, "only {compared} links compared");
}

#[test]
fn tasks_are_the_items_obsidian_draws_a_checkbox_for() {
    let (mut tasks, mut items) = (0, 0);
    let mut wrong = Vec::new();
    for (name, text, case) in cases() {
        for (start, end, task, _) in &case.list_items {
            let item = &text[byte_offset(&text, *start)..byte_offset(&text, *end)];
            let line = item.lines().next().unwrap_or_default();
            let (_, content) = next::strip_marker(line);
            let after_marker = &line[line.find(['-', '*', '+', '.', ')']).map_or(0, |at| at + 1)..];
            let ours =
                next::task_status(after_marker.trim_start()).map(|(status, _)| status.to_string());
            // A task's text starts after its checkbox; any other item's,
            // after its marker.
            let text_after = match &ours {
                Some(_) => after_marker
                    .split_once(']')
                    .map_or("", |(_, rest)| rest.trim_start()),
                None => after_marker.trim_start(),
            };
            items += 1;
            tasks += usize::from(task.is_some());
            if ours != *task || content != text_after {
                wrong.push(format!(
                    "{name}: {line:?} is task {task:?} in Obsidian, {ours:?} here (text {content:?})"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        items >= 1048 && tasks >= 735,
        "only {items} items, {tasks} tasks"
    );
}

/// A note's items as Obsidian read them: byte span, 0-based line, and the
/// parent Obsidian gave (an item's line, or minus its list's first line).
fn items_of(text: &str, case: &Case) -> Vec<(usize, usize, i64, i64)> {
    let line_of = |offset: usize| text[..offset].matches('\n').count() as i64;
    case.list_items
        .iter()
        .map(|(s, e, _, parent)| {
            let (s, e) = (byte_offset(text, *s), byte_offset(text, *e));
            (s, e, line_of(s), *parent)
        })
        .collect()
}

/// Each top-level list of a note that is not quoted: its parent key (minus
/// its first line) and its whole lines, nested items included, as a byte
/// range of `text`.
fn list_regions(text: &str, items: &[(usize, usize, i64, i64)]) -> Vec<(i64, usize, usize)> {
    let mut roots: Vec<i64> = items.iter().map(|i| i.3).filter(|p| *p < 0).collect();
    roots.dedup();
    let mut regions = Vec::new();
    for root in roots {
        // The list's items and everything nested in them.
        let mut members: Vec<&(usize, usize, i64, i64)> =
            items.iter().filter(|i| i.3 == root).collect();
        loop {
            let lines: Vec<i64> = members.iter().map(|i| i.2).collect();
            let more: Vec<_> = items
                .iter()
                .filter(|i| lines.contains(&i.3) && !members.contains(i))
                .collect();
            if more.is_empty() {
                break;
            }
            members.extend(more);
        }
        let first = members.iter().map(|i| i.0).min().unwrap();
        let start = text[..first].rfind('\n').map_or(0, |at| at + 1);
        let last = members.iter().map(|i| i.1).max().unwrap();
        let end = text[last..]
            .find('\n')
            .map_or(text.len(), |at| last + at + 1);
        if text[start..end].trim_start().starts_with('>') {
            continue; // Quoted: never a plan's `## Next`.
        }
        regions.push((root, start, end));
    }
    regions
}

#[test]
fn a_list_under_next_splits_into_the_items_obsidian_reads() {
    // Each top-level list of a note, alone under a `## Next` heading: its
    // items are the top-level items Obsidian found in it, each from its
    // marker to the end of its own text (continuation lines included,
    // nested items not).
    let (mut lists, mut compared) = (0, 0);
    let mut wrong = Vec::new();
    for (name, text, case) in cases() {
        let items = items_of(&text, &case);
        for (root, start, end) in list_regions(&text, &items) {
            let region = &text[start..end];
            let body = format!("## Next\n{region}");
            let shift = |at: usize| at - "## Next\n".len() + start;
            let read = |outline: next::Outline| -> Vec<(usize, usize)> {
                outline
                    .items
                    .iter()
                    .map(|r| (shift(r.start), shift(r.end)))
                    .collect()
            };
            let ours = read(next::loaded_outline(&body, &[HeadingLevel::H2]));
            let full = read(next::outline_full(&body, &[HeadingLevel::H2]));
            let theirs: Vec<(usize, usize)> = items
                .iter()
                .filter(|i| i.3 == root)
                // Where a blank line follows, Obsidian's span takes in the
                // line break; planvault's ends with the text.
                .map(|i| (i.0, i.0 + text[i.0..i.1].trim_end().len()))
                .collect();
            lists += 1;
            compared += theirs.len();
            if ours != theirs || full != theirs {
                wrong.push(format!(
                    "{name}: list {region:?}\n  Obsidian: {theirs:?}\n  planvault: {ours:?}, parsed in full {full:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        lists >= 429 && compared >= 675,
        "only {lists} lists, {compared} items"
    );
}

#[test]
fn every_link_obsidian_reads_under_next_is_an_edge_or_is_warned_about() {
    // Each list alone under `## Next`, as above: every link Obsidian reads
    // in it is an edge (an item's first link), another link of an item that
    // is warned to hold several (`malformed-edge`), or, in a nested item, a
    // `link-not-edge` unless it is an embed (a screenshot under an edge is
    // no edge anybody meant); planvault reports no link Obsidian does not
    // read.
    let (mut checked, mut nested, mut embeds) = (0, 0, 0);
    let mut wrong = Vec::new();
    for (name, text, case) in cases() {
        let items = items_of(&text, &case);
        // Where each link starts (an embed's `!` is outside the link
        // planvault reads) and whether it is an embed.
        let obsidian: Vec<(usize, bool)> = case
            .links
            .iter()
            .filter(|l| !DIFFERS.iter().any(|(original, _)| *original == l.original))
            .map(|l| {
                let embed = l.original.starts_with('!');
                (byte_offset(&text, l.span[0]) + usize::from(embed), embed)
            })
            .collect();
        for (_, start, end) in list_regions(&text, &items) {
            let head = "## Next\n";
            let note = format!("{head}{}", &text[start..end]);
            // 1-based line and column (in characters) of a byte of `note`.
            let position = |at: usize| {
                let line_start = note[..at].rfind('\n').map_or(0, |i| i + 1);
                (
                    note[..at].matches('\n').count() as u32 + 1,
                    note[line_start..at].chars().count() as u32 + 1,
                )
            };
            let files = BTreeMap::from([("n.md".to_string(), note.clone())]);
            let (plan, diagnostics) = vault::load(&files);
            let edges: Vec<(u32, u32)> = plan
                .edges
                .iter()
                .filter_map(|e| e.pos.as_ref().map(|p| (p.line, p.column)))
                .collect();
            let located = |code: &str| -> Vec<(u32, u32)> {
                diagnostics
                    .iter()
                    .filter(|d| d.code.as_str() == code)
                    .filter_map(|d| Some((d.line?, d.column?)))
                    .collect()
            };
            let strays = located("link-not-edge");
            let several: Vec<u32> = diagnostics
                .iter()
                .filter(|d| d.message.contains("has several links"))
                .filter_map(|d| d.line)
                .collect();
            let outline = next::loaded_outline(&note, &[HeadingLevel::H2]);
            let theirs: Vec<(usize, bool)> = obsidian
                .iter()
                .filter(|(at, _)| (start..end).contains(at))
                .map(|&(at, embed)| (at - start + head.len(), embed))
                .collect();
            for &(at, embed) in &theirs {
                let here = position(at);
                let item = outline.items.iter().find(|item| item.contains(&at));
                checked += 1;
                let read = match item {
                    Some(item) => {
                        edges.contains(&here) || several.contains(&position(item.start).0)
                    }
                    None if embed => {
                        embeds += 1;
                        !strays.contains(&here)
                    }
                    None => {
                        nested += 1;
                        strays.contains(&here)
                    }
                };
                if !read {
                    wrong.push(format!(
                        "{name}: Obsidian's link at {here:?} of {note:?} is not read as it should be (an edge, or warned about in a nested item unless an embed)"
                    ));
                }
            }
            let ours = edges.iter().chain(&strays);
            for here in ours.filter(|here| !theirs.iter().any(|&(at, _)| position(at) == **here)) {
                wrong.push(format!(
                    "{name}: planvault reads a link at {here:?} of {note:?} that Obsidian does not"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        checked >= 221 && embeds >= 1,
        "only {checked} links, {embeds} of them embeds in nested items ({nested} other links in nested items)"
    );
}

#[test]
fn links_resolve_to_the_files_obsidian_opens() {
    let vault_files = fs::read_to_string(dir().join("vault-files.txt")).unwrap();
    let mut compared = 0;
    let mut wrong = Vec::new();
    for (name, _, case) in cases() {
        let files: Vec<&str> = match &case.vault_files {
            Some(files) => files.iter().map(String::as_str).collect(),
            None => vault_files.lines().collect(),
        };
        let ids: Vec<&str> = files
            .iter()
            .filter_map(|path| path.strip_suffix(".md"))
            .collect();
        let index = LinkIndex::new(ids.iter().copied());
        let from = ids
            .iter()
            .position(|id| Some(*id) == case.path.strip_suffix(".md"))
            .unwrap_or_else(|| panic!("{name}: {} is not among the vault's files", case.path));
        for (link, file) in &case.resolve {
            // planvault's plans are notes: a link to an attachment is no edge.
            let expected = file.as_deref().filter(|f| f.ends_with(".md"));
            let ours = match index.resolve(named(link), from) {
                Resolution::Found(i) => Some(format!("{}.md", ids[i])),
                Resolution::Missing => None,
                Resolution::Ambiguous(all) => Some(format!("ambiguous {all:?}")),
            };
            compared += 1;
            if ours.as_deref() != expected {
                wrong.push(format!(
                    "{name}: {link:?} is {expected:?} in Obsidian, {ours:?} here"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(compared >= 66, "only {compared} links compared");
}

#[test]
fn frontmatter_reads_as_obsidian_reads_it() {
    let mut compared = 0;
    let mut wrong = Vec::new();
    for (name, text, case) in cases() {
        let ours = match split(&text) {
            Split::Closed(block) => {
                let value = properties(block.yaml).map(|v| serde_json::to_value(v).unwrap());
                // An empty block (`---` twice) has no properties in either:
                // Obsidian leaves `frontmatter` out, planvault reads null.
                (value != Ok(serde_json::Value::Null)).then_some((block.close_offset + 3, value))
            }
            Split::Absent | Split::Unclosed { .. } => None,
        };
        let theirs = case
            .frontmatter
            .map(|f| (byte_offset(&text, case.frontmatter_end.unwrap()), Ok(f)));
        compared += usize::from(theirs.is_some());
        if ours != theirs {
            wrong.push(format!(
                "{name}:\n  Obsidian: {theirs:?}\n  planvault: {ours:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(compared >= 84, "only {compared} frontmatters compared");
}
