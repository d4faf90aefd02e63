//! The fast way to a note's outline: a line scan finds the headings and the
//! items of a plain `## Next` list, and pulldown-cmark parses only what the
//! scan cannot place (a `## Next` section with nesting or other blocks, a
//! title with inline markup). A full CommonMark parse of every body cost more
//! than the rest of loading together; most of a note is prose no rule looks at.
//!
//! The scan trusts only what is certain line by line: an ATX heading whose
//! `#` sits in column 0 (outside a column-0 fenced code block) is a top-level
//! heading, and such a heading is a clean block boundary, so a section parsed
//! alone parses as it would inside the whole note. Anything that could make
//! a line mean something else — a `#` after indentation, a list marker or
//! `>`, an indented fence, an HTML block, a possible setext underline —
//! sends the note to the full parse instead. A property test checks that
//! both ways agree.

use super::next::{outline_full, Outline};
use super::text::{lines_inclusive, without_inline_comments};
use pulldown_cmark::{Event, HeadingLevel, Parser};
use std::borrow::Cow;
use std::ops::Range;

/// A column-0 ATX heading found by the scan.
struct Heading<'a> {
    start: usize,
    /// The heading's line in the body, 0-based.
    line: usize,
    /// End of the heading's line (its line break excluded).
    end: usize,
    level: HeadingLevel,
    content: &'a str,
}

fn level(hashes: usize) -> HeadingLevel {
    match hashes {
        1 => HeadingLevel::H1,
        2 => HeadingLevel::H2,
        3 => HeadingLevel::H3,
        4 => HeadingLevel::H4,
        5 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    }
}

/// The ATX heading on a line starting with `#`, if it is one.
fn atx(line: &str) -> Option<(usize, &str)> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &line[hashes..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut content = rest.trim();
    // An optional closing sequence: spaces then only `#`s.
    let without_closing = content.trim_end_matches('#');
    if without_closing.is_empty() {
        content = "";
    } else if without_closing.len() < content.len() && without_closing.ends_with([' ', '\t']) {
        content = without_closing.trim_end();
    }
    Some((hashes, content))
}

/// Whether the content of a line, past indentation, `>` and list markers,
/// starts with something the scan cannot place for sure.
fn needs_full_parse(line: &str, previous_blank: bool) -> bool {
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let rest = &line[indent..];
    // An Obsidian `%%` block comment hides what it spans.
    if rest.starts_with("%%") {
        return true;
    }
    if indent > 0 && rest.starts_with(['#', '`', '~']) {
        return true;
    }
    if indent <= 3 && rest.starts_with('<') {
        return true;
    }
    // A possible setext underline (`Title` over `===` or `---`).
    if !previous_blank && indent <= 3 && !rest.is_empty() {
        let t = rest.trim_end();
        if !t.is_empty() && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-')) {
            return true;
        }
    }
    // A heading or fence inside a blockquote or list item.
    let mut inner = rest;
    loop {
        let before = inner;
        inner = inner.trim_start_matches([' ', '\t', '>']);
        let marker = if inner.starts_with(['-', '*', '+']) {
            1
        } else {
            let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && inner[digits..].starts_with(['.', ')']) {
                digits + 1
            } else {
                0
            }
        };
        if marker > 0 && inner[marker..].starts_with([' ', '\t']) {
            inner = &inner[marker..];
        }
        if inner.len() == before.len() {
            break;
        }
    }
    inner.len() != rest.len() && inner.starts_with(['#', '`', '~', '<'])
}

/// A heading's text as pulldown-cmark renders it: the raw content when it
/// has no inline markup, else the content parsed.
fn heading_text(content: &str) -> Cow<'_, str> {
    if !content.contains(['*', '_', '`', '[', ']', '<', '&', '\\', '!']) {
        return Cow::Borrowed(content);
    }
    let mut text = String::new();
    for event in Parser::new(content) {
        if let Event::Text(t) | Event::Code(t) = event {
            text.push_str(&t);
        }
    }
    Cow::Owned(text)
}

/// Hand each column-0 heading to `each`, in order; `false` when the body
/// needs the full parse (what `each` saw until then is to be dropped).
fn headings<'a>(body: &'a str, mut each: impl FnMut(Heading<'a>)) -> bool {
    let mut fence: Option<(u8, usize)> = None;
    let mut previous_blank = true;
    for (line_number, (start, raw)) in lines_inclusive(body).enumerate() {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let bytes = line.as_bytes();
        // A bare `\r` ends a line for markdown, not for this scan.
        if memchr::memchr(b'\r', bytes).is_some() {
            return false;
        }
        if let Some((c, len)) = fence {
            let run = bytes.iter().take_while(|&&b| b == c).count();
            let indent = line.len() - line.trim_start_matches(' ').len();
            if indent <= 3 && run == 0 {
                let inner = &line[indent..];
                let run = inner.bytes().take_while(|&b| b == c).count();
                if run >= len && inner[run..].trim().is_empty() {
                    fence = None;
                }
            } else if run >= len && line[run..].trim().is_empty() {
                fence = None;
            }
            previous_blank = true;
            continue;
        }
        match bytes.first() {
            // Prose: a line starting with a letter is paragraph text whatever
            // came before it (the commonest line, so it skips the checks).
            Some(b) if b.is_ascii_alphabetic() => {
                previous_blank = false;
                continue;
            }
            // The next commonest, which `needs_full_parse` would pass too: a
            // blank line, and a list item whose text starts with a letter.
            None => {
                previous_blank = true;
                continue;
            }
            Some(b'-' | b'*' | b'+')
                if bytes.get(1) == Some(&b' ')
                    && bytes.get(2).is_some_and(u8::is_ascii_alphabetic) =>
            {
                previous_blank = false;
                continue;
            }
            Some(b'#') => {
                if let Some((hashes, content)) = atx(line) {
                    let end = start + line.len();
                    each(Heading {
                        start,
                        line: line_number,
                        end,
                        level: level(hashes),
                        content,
                    });
                    previous_blank = true;
                    continue;
                }
            }
            Some(&c @ (b'`' | b'~')) => {
                let run = bytes.iter().take_while(|&&b| b == c).count();
                if run >= 3 && !(c == b'`' && line[run..].contains('`')) {
                    fence = Some((c, run));
                    previous_blank = true;
                    continue;
                }
            }
            _ => {}
        }
        if needs_full_parse(line, previous_blank) {
            return false;
        }
        previous_blank = line.trim().is_empty();
    }
    true
}

/// The items of a `Next` section (its heading line first) when the section
/// is one plain list: every other line blank or a top-level item on one line
/// (`- `, `* `, `+ ` or `1. `, one space, then text that opens no block of its
/// own). Ranges run from the marker to the line's end. `None` when anything
/// else is there (nesting, continuation lines, prose, code, a sub-heading), for
/// the full parse; a property test checks both ways agree.
#[cfg(test)]
fn plain_list_items(section: &str) -> Option<Vec<Range<usize>>> {
    let mut items = Vec::new();
    plain_list_items_into(section, 0, &mut items).then_some(items)
}

/// [`plain_list_items`] appended to `items`, shifted by `at`; `false` (and
/// `items` as it was) when the section is not a plain list.
fn plain_list_items_into(section: &str, at: usize, items: &mut Vec<Range<usize>>) -> bool {
    let before = items.len();
    let scanned = scan_plain_list(section, at, items).is_some();
    if !scanned {
        items.truncate(before);
    }
    scanned
}

fn scan_plain_list(section: &str, at: usize, items: &mut Vec<Range<usize>>) -> Option<()> {
    let mut previous_blank = true;
    // The first line is the heading.
    for (start, raw) in lines_inclusive(section).skip(1) {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let bytes = line.as_bytes();
        if bytes.iter().all(|&b| b == b' ' || b == b'\t') {
            previous_blank = true;
            continue;
        }
        let marker = match bytes[0] {
            b'-' | b'*' | b'+' => 1,
            b'0'..=b'9' => {
                let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
                // Right after an item's text only `1.` starts another item;
                // any other number would continue that text.
                if digits > 9
                    || !matches!(bytes.get(digits), Some(b'.' | b')'))
                    || (!previous_blank && &line[..digits] != "1")
                {
                    return None;
                }
                digits + 1
            }
            _ => return None,
        };
        // Exactly one space, then text whose first character starts no block
        // (heading, quote, fence, HTML, nested list, thematic break, indented code).
        if bytes.get(marker) != Some(&b' ') {
            return None;
        }
        match bytes.get(marker + 1) {
            None => return None,
            Some(
                b' '
                | b'\t'
                | b'#'
                | b'>'
                | b'`'
                | b'~'
                | b'<'
                | b'-'
                | b'*'
                | b'+'
                | b'_'
                | b'='
                | b'0'..=b'9',
            ) => return None,
            Some(_) => {}
        }
        items.push(at + start..at + start + line.len());
        previous_blank = false;
    }
    Some(())
}

/// [`outline_for`] with the sections.
#[cfg(test)]
pub fn outline(body: &str, next_levels: &[HeadingLevel]) -> Outline {
    outline_for(body, next_levels, true)
}

/// The outline of a body: scanned when the scan is sure, else fully parsed;
/// `next_sections` left empty unless `sections` (only a read that keeps
/// bodies cuts them out).
pub fn outline_for(body: &str, next_levels: &[HeadingLevel], sections: bool) -> Outline {
    let mut out = Outline::default();
    // The `Next` section being read: a later heading of its level or higher
    // ends it, deeper ones belong to it.
    let mut open: Option<Heading<'_>> = None;
    let scanned = headings(body, |h| {
        if let Some(next) = &open {
            if h.level > next.level {
                return;
            }
            end_next_section(body, next, h.start, next_levels, sections, &mut out);
            open = None;
        }
        let text = heading_text(h.content);
        let text = without_inline_comments(&text);
        let text_trimmed = text.trim();
        if next_levels.contains(&h.level) && text_trimmed.eq_ignore_ascii_case("next") {
            open = Some(h);
        } else if h.level == HeadingLevel::H1 && out.title.is_none() {
            out.title = Some(text_trimmed.to_string());
            if body[..h.start].trim().is_empty() {
                out.leading_title = Some(h.start..h.end);
            }
        }
    });
    if !scanned {
        let mut full = outline_full(body, next_levels);
        if !sections {
            full.next_sections = Vec::new();
        }
        return full;
    }
    if let Some(next) = &open {
        end_next_section(body, next, body.len(), next_levels, sections, &mut out);
    }
    out
}

/// Read the `Next` section that `heading` opens and `end` ends into `out`.
fn end_next_section(
    body: &str,
    heading: &Heading<'_>,
    end: usize,
    next_levels: &[HeadingLevel],
    sections: bool,
    out: &mut Outline,
) {
    let section = &body[heading.start..end];
    if !plain_list_items_into(section, heading.start, &mut out.items) {
        let items = outline_full(section, next_levels).items;
        out.items.extend(
            items
                .into_iter()
                .map(|r| r.start + heading.start..r.end + heading.start),
        );
    }
    if sections {
        out.next_sections.push(heading.start..end);
    }
    if out.next_heading.is_none() {
        out.next_heading = Some(heading.start);
        out.next_heading_line = Some(heading.line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &[HeadingLevel] = &[HeadingLevel::H2];

    /// What the loader takes from an outline, comparable across both ways.
    fn summary(
        body: &str,
        o: &Outline,
    ) -> (
        Option<String>,
        Vec<String>,
        Vec<String>,
        bool,
        Option<usize>,
    ) {
        let lead = o
            .leading_title
            .clone()
            .map(|r| body[..r.start].trim().is_empty());
        (
            o.title.clone(),
            o.items
                .iter()
                .map(|r| body[r.clone()].trim_end().to_string())
                .collect(),
            o.next_sections
                .iter()
                .map(|r| body[r.clone()].trim_end().to_string())
                .collect(),
            lead.unwrap_or(false),
            o.next_heading,
        )
    }

    fn agrees(body: &str) {
        let scanned = outline(body, NOTE);
        assert_eq!(
            summary(body, &scanned),
            summary(body, &outline_full(body, NOTE)),
            "{body:?}"
        );
        if let (Some(at), Some(line)) = (scanned.next_heading, scanned.next_heading_line) {
            assert_eq!(body[..at].matches('\n').count(), line, "{body:?}");
        }
    }

    #[test]
    fn the_common_note_is_scanned() {
        let body = "# Review the *draft*\n\nSee [[x]].\n\n```\n## Next\n- [[no]]\n```\n\n## Next\n- approved -> [[send]]\n  - nested [[n]]\n- [[draft]]\n\n## Notes\n- [[not]]\n";
        assert!(headings(body, |_| {}));
        agrees(body);
        let o = outline(body, NOTE);
        assert_eq!(o.title.as_deref(), Some("Review the draft"));
        assert_eq!(o.items.len(), 2);
    }

    #[test]
    fn doubtful_notes_take_the_full_parse() {
        for body in [
            "## Next\n- a -> [[A]]\r- b -> [[B]]\n",
            "Title\n=====\n",
            "text\n---\n",
            "- # heading in a list\n",
            "> ## Next\n> - [[q]]\n",
            "  ## indented\n",
            "<div>\n## Next\n</div>\n",
            "- item\n  ```\n# x\n  ```\n",
        ] {
            assert!(!headings(body, |_| {}), "{body:?} scanned");
            agrees(body);
        }
    }

    #[test]
    fn a_plain_next_list_is_scanned_and_anything_else_is_parsed() {
        let plain =
            "## Next\n- [[a]]\n* x -> [[b]]\n\n+ y => [[c]]\r\n1. [[d]]\n1) [[e]]\n\n7. [[f]]\n\n";
        let items = plain_list_items(plain).expect("a plain list is scanned");
        let texts: Vec<&str> = items.iter().map(|r| &plain[r.clone()]).collect();
        assert_eq!(
            texts,
            [
                "- [[a]]",
                "* x -> [[b]]",
                "+ y => [[c]]",
                "1. [[d]]",
                "1) [[e]]",
                "7. [[f]]"
            ]
        );
        agrees(plain);
        for section in [
            "## Next\n- [[a]]\n  - nested [[b]]\n",
            "## Next\n- [[a]]\ncontinued\n",
            "## Next\n- [[a]]\n2. [[b]]\n",
            "## Next\n- ---\n",
            "## Next\n-\n",
            "## Next\n- \n",
            "## Next\n12\n",
            "## Next\n-  [[two spaces]]\n",
            "## Next\n- > [[quoted]]\n",
            "## Next\n### Sub\n- [[a]]\n",
        ] {
            assert_eq!(plain_list_items(section), None, "{section:?}");
            agrees(section);
        }
    }

    #[test]
    fn closing_sequences_and_empty_headings() {
        for body in [
            "## Next ##\n- [[a]]\n",
            "#\n\nbody\n",
            "# Title #\n",
            "#hashtag\n",
            "## Next\\#\n- [[a]]\n",
            "## Next %% c %%\n- [[a]]\n",
            "# Title %% *c* %%\n",
        ] {
            agrees(body);
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "# Title",
            "# The *title*",
            "## Next",
            "## next ##",
            "### Next",
            "## Other",
            "#",
            "#tag",
            "- [[a]]",
            "- x -> [[b]]",
            "  - nested [[c]]",
            "1. [[d]]",
            "* y => [[e]]",
            "```",
            "~~~",
            "````md",
            "text with [[link]]",
            "",
            "",
            "> quote",
            "> ## Next",
            "    indented",
            "  # two spaces",
            "---",
            "===",
            "<div>",
            "- # in item",
            "\tTabbed",
            "+ [[f]]",
            "2. [[g]]",
            "1) [[h]]",
            "12. [[i]]",
            "- - -",
            "- ---",
            "* * *",
            "-",
            "- ",
            "-\t[[j]]",
            "-   [[k]]",
            "-     code [[l]]",
            "- > q [[m]]",
            "- `c` [[n]]",
            "- <b>[[o]]</b>",
            "- [x] done [[p]]",
            "- [ref]: /url",
            "- _x_ [[q]]",
            "continuation [[r]]",
            "- a -> [[s]]  ",
            "- ## x",
            "*",
            "- 1. [[t]]",
            "  ",
            "7",
            "2024",
            "%%",
            "%% note %%",
            "  %%- [[u]]%%",
            "- [[v]] %% inline %%",
            "## Next %% why %%",
            "# T %% v2 %%",
            "- [w](w.md)",
            "- x -> [y](y%20z.md)",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_scan_agrees_with_the_full_parse(lines in prop::collection::vec(line(), 0..14), crlf in any::<bool>()) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let body = lines.join(eol);
            for levels in [&[HeadingLevel::H2][..], &[HeadingLevel::H2, HeadingLevel::H3][..]] {
                let fast = outline(&body, levels);
                let full = outline_full(&body, levels);
                let texts = |o: &Outline| (
                    o.title.clone(),
                    o.items.iter().map(|r| body[r.clone()].trim_end().to_string()).collect::<Vec<_>>(),
                    o.next_sections.iter().map(|r| body[r.clone()].trim_end().to_string()).collect::<Vec<_>>(),
                    o.leading_title.is_some(),
                    o.next_heading,
                );
                prop_assert_eq!(texts(&fast), texts(&full), "{:?}", body);
                if let (Some(at), Some(line)) = (fast.next_heading, fast.next_heading_line) {
                    prop_assert_eq!(body[..at].matches('\n').count(), line, "{:?}", body);
                }
            }
        }

        /// Bodies whose `## Next` section is mostly list items, so the
        /// section scan is taken often and its edge cases meet.
        #[test]
        fn the_list_scan_agrees_with_the_full_parse(
            items in prop::collection::vec(prop_oneof![4 => line(), 1 => Just("- [[a]]"), 1 => Just("")], 0..10),
            crlf in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let body = format!("# T{eol}{eol}Prose.{eol}{eol}## Next{eol}{}", items.join(eol));
            let fast = outline(&body, &[HeadingLevel::H2]);
            let full = outline_full(&body, &[HeadingLevel::H2]);
            let texts = |o: &Outline| o.items.iter().map(|r| body[r.clone()].trim_end().to_string()).collect::<Vec<_>>();
            prop_assert_eq!(texts(&fast), texts(&full), "{:?}", body);
        }
    }
}
