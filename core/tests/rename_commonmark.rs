//! A rename rewrites a link where Obsidian would: never in a code block.
//! CommonMark as pulldown-cmark reads it (footnotes on, as Obsidian has
//! them) is the oracle: in each case below, a `[[old]]` that pulldown-cmark
//! reads inside a code block must stay, and any other must be renamed.
//! [`DIFFERS`] names the cases planvault deliberately reads otherwise.

use planvault_core::vault::edit::rewrite_links;
use planvault_core::vault::frontmatter::{split, Split};
use pulldown_cmark::{Event, Options, Parser, Tag};

const CASES: &[(&str, &str)] = &[
    ("code after a blank line", "A paragraph.\n\n    [[old]]\n"),
    ("a paragraph's indented line", "A paragraph\n    [[old]]\n"),
    ("right after an ATX heading", "# H\n    [[old]]\n"),
    (
        "right after the frontmatter",
        "---\na: 1\n---\n    [[old]]\n",
    ),
    ("tab-indented after a blank line", "p\n\n\t[[old]]\n"),
    ("after a setext heading (=)", "Title\n=====\n    [[old]]\n"),
    ("after a setext heading (-)", "Title\n-----\n    [[old]]\n"),
    ("after a thematic break ***", "p\n\n***\n    [[old]]\n"),
    ("after a thematic break ---", "p\n\n---\n    [[old]]\n"),
    ("after a fenced block", "```\nx\n```\n    [[old]]\n"),
    ("a quote's lazy line", "> q\n    [[old]]\n"),
    (
        "an item's code, then its paragraph",
        "- item\n\n        code\n    para [[old]]\n",
    ),
    ("an item's own code", "- item\n\n        [[old]]\n"),
    ("an item's paragraph", "- item\n\n    [[old]]\n"),
    ("an ordered item's paragraph", "1.  item\n\n    [[old]]\n"),
    (
        "code after a list a paragraph ended",
        "- a\n\nb\n\n    [[old]]\n",
    ),
    ("a footnote's paragraph", "[^1]: a\n\n    [[old]]\n"),
    ("a footnote's code", "[^1]: a\n\n        [[old]]\n"),
    (
        "an item after a footnote",
        "[^1]: a\n\n- item\n\n    [[old]]\n",
    ),
    (
        "code after a footnote and a paragraph",
        "[^1]: a\n\nb\n\n    [[old]]\n",
    ),
    ("after a table", "| a |\n|---|\n| b |\n    [[old]]\n"),
    ("a line under 4 after code", "p\n\n    code\n  [[old]]\n"),
    ("code, a blank line, code", "p\n\n    code\n\n    [[old]]\n"),
    ("a nested item's paragraph", "- a\n  - b\n\n      [[old]]\n"),
    ("a nested item's code", "- a\n  - b\n\n          [[old]]\n"),
    ("a paragraph after code", "p\n\n    code\nafter [[old]]\n"),
    ("a task's paragraph (tab)", "- [ ] task\n\n\tmore [[old]]\n"),
    (
        "a task's paragraph (4 spaces)",
        "- [ ] task\n\n    more [[old]]\n",
    ),
    (
        "a done task's paragraph (tab)",
        "- [x] task\n\n\tmore [[old]]\n",
    ),
    (
        "an item's heading, then its paragraph",
        "- item\n\n  # H\n\n    [[old]]\n",
    ),
    (
        "a heading after code, then indented",
        "p\n\n    code\n# H\n    [[old]]\n",
    ),
];

/// Cases planvault reads otherwise, and why.
const DIFFERS: &[(&str, &str)] = &[(
    "a `## Next` item's text past five spaces",
    // CommonMark: the item holds indented code. The loader reads a `## Next`
    // item's text past its marker (the edge it follows), and a rename keeps
    // to the loader, so the edge joins the same notes after it.
    "## Next\n-      [[old]]\n",
)];

/// Where `text`'s body starts, past its frontmatter (Obsidian's
/// properties, split off as Obsidian does).
fn body_offset(text: &str) -> usize {
    match split(text) {
        Split::Absent => 0,
        Split::Closed(block) => block.body_offset,
        Split::Unclosed { body_offset } => body_offset,
    }
}

/// Where pulldown-cmark reads code blocks in `text`'s body.
fn code_blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let body = body_offset(text);
    let options = Options::ENABLE_FOOTNOTES | Options::ENABLE_TABLES;
    Parser::new_ext(&text[body..], options)
        .into_offset_iter()
        .filter_map(|(event, range)| {
            matches!(event, Event::Start(Tag::CodeBlock(_)))
                .then_some(range.start + body..range.end + body)
        })
        .collect()
}

/// Each `[[old]]` and `[a](old.md)` of `text`'s body: whether
/// pulldown-cmark reads it in code, and whether a rename of `old` rewrote
/// it. (In the frontmatter, a YAML value, neither is code.)
fn readings(text: &str) -> Vec<(bool, bool)> {
    let code = code_blocks(text);
    let out = rewrite_links(text, |link| match link.target.as_ref() {
        "old" => Some("new".to_string()),
        "old.md" => Some("new.md".to_string()),
        _ => None,
    })
    .unwrap_or_else(|| text.to_string());
    // `old` and `new` are as long: a link is where it was.
    let wiki = text
        .match_indices("[[old]]")
        .map(|(at, _)| (at, out[at..].starts_with("[[new]]")));
    let markdown = text
        .match_indices("[a](old.md)")
        .map(|(at, _)| (at, out[at..].starts_with("[a](new.md)")));
    let body = body_offset(text);
    wiki.chain(markdown)
        .filter(|(at, _)| *at >= body)
        .map(|(at, renamed)| (code.iter().any(|block| block.contains(&at)), renamed))
        .collect()
}

#[test]
fn a_rename_leaves_what_commonmark_reads_as_code() {
    let wrong: Vec<String> = CASES
        .iter()
        .flat_map(|(name, text)| {
            readings(text)
                .into_iter()
                .filter(|(in_code, renamed)| in_code == renamed)
                .map(move |(in_code, _)| {
                    let reading = if in_code { "code" } else { "text" };
                    format!("{name}: CommonMark reads {reading} in {text:?}")
                })
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_declared_differences_still_differ() {
    for (name, text) in DIFFERS {
        assert!(
            readings(text)
                .iter()
                .any(|(in_code, renamed)| in_code == renamed),
            "{name} now reads as CommonMark does: remove it from DIFFERS"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    /// Notes made of lines that open and close blocks (items, tasks,
    /// footnotes, fences, headings, breaks, indented lines) around links.
    #[test]
    fn a_rename_reads_code_as_commonmark_does(
        lines in proptest::collection::vec(proptest::sample::select(LINES), 1..8)
    ) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let differs = readings(&text).into_iter().any(|(in_code, renamed)| in_code == renamed);
        proptest::prop_assert!(!differs, "{:?}", text);
    }
}

/// What [`a_rename_reads_code_as_commonmark_does`] builds notes from.
const LINES: &[&str] = &[
    "p",
    "    [[old]]",
    "\t[[old]]",
    "- item",
    "- [ ] task",
    "1.  item",
    "",
    "# H",
    "Title",
    "=====",
    "***",
    "[^1]: a",
    "  [[old]]",
    "      [[old]]",
    "        [[old]]",
    "x [[old]]",
    "---",
    "--",
    "___",
    "- - -",
    "  - nested",
    "10) ten",
    "-\titem",
    "* [x] done",
    "   # h3",
    "  ## in item",
    "```",
    "  ```",
    "~~~",
    "\t\t[[old]]",
    "  \t[[old]]",
    "+ plus",
    "2. [ ] task",
    "[^n]:",
    "-",
    "1.",
    "> quote [[old]]",
    ">     [a](old.md)",
    "    [a](old.md)",
    "see [a](old.md)",
    "\t[a](old.md) and [[old]]",
];
