//! A note body's outline: its title heading and the list items under
//! `## Next`, found with pulldown-cmark so a `## Next` inside a code block or
//! a link in prose never becomes an edge.

use super::links::{links, WikiLink};
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use std::ops::Range;

/// What the loader needs from a note body. Ranges are byte offsets in the body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outline {
    /// Text of the first `#` heading.
    pub title: Option<String>,
    /// That heading's range, when it is the body's first block (it is then
    /// the note's title line rather than part of the work description).
    pub leading_title: Option<Range<usize>>,
    /// Each `## Next` section, from its heading to the next heading of the
    /// same or a higher level.
    pub next_sections: Vec<Range<usize>>,
    /// Start of the first `## Next` heading.
    pub next_heading: Option<usize>,
    /// That heading's line in the body (0-based), when the line scan found
    /// it (it counts lines anyway); the full parse leaves it to the caller.
    pub next_heading_line: Option<usize>,
    /// The own text of each top-level list item under `## Next` (nested lists
    /// excluded).
    pub items: Vec<Range<usize>>,
}

/// Whether a body could contain a `Next` heading at all: a cheap line scan
/// that lets most of the work skip list tracking. False positives are fine.
fn may_have_next_heading(body: &str) -> bool {
    body.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"next"))
}

/// The first heading that looks meant as `## Next` but is not it (`## Next:`,
/// `### Next`, `# Next`, `## Next steps`, `##Next`), outside fenced code:
/// its byte offset in `body` and its line as written. Only asked of a note
/// without a `## Next` section, whose edges such a heading would otherwise
/// lose in silence.
pub fn near_miss_next_heading(body: &str) -> Option<(usize, &str)> {
    if !may_have_next_heading(body) {
        return None;
    }
    let mut fence: Option<(u8, usize)> = None;
    let mut at = 0;
    for raw in body.split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        if indent <= 3 {
            let ticks = content
                .bytes()
                .take_while(|&b| b == b'`' || b == b'~')
                .count();
            if ticks >= 3 {
                let ch = content.as_bytes()[0];
                if content.as_bytes()[..ticks].iter().all(|&b| b == ch) {
                    match fence {
                        None => fence = Some((ch, ticks)),
                        Some((open, len))
                            if open == ch && ticks >= len && content[ticks..].trim().is_empty() =>
                        {
                            fence = None
                        }
                        Some(_) => {}
                    }
                    continue;
                }
            }
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        let hashes = content.bytes().take_while(|&b| b == b'#').count();
        if hashes == 0 || hashes > 6 {
            continue;
        }
        let text = content[hashes..].trim().trim_end_matches('#').trim_end();
        let spaced = content[hashes..].starts_with([' ', '\t']);
        let Some(rest) = text
            .get(..4)
            .filter(|w| w.eq_ignore_ascii_case("next"))
            .map(|_| text[4..].trim())
        else {
            continue;
        };
        let rest = rest.trim_end_matches(':').trim_end();
        let rest_lower = rest.to_ascii_lowercase();
        let near = match rest_lower.as_str() {
            "" => !(hashes == 2 && spaced && !text.ends_with(':')),
            "step" | "steps" | "node" | "nodes" | "edges" | "up" => true,
            _ => text[4..].trim_start().starts_with([':', '-']),
        };
        if near {
            return Some((start + indent, line[indent..].trim_end()));
        }
    }
    None
}

/// Outline a body with a full CommonMark parse (see `scan` for the fast way). `next_level` is the heading level of the `Next` section
/// (2 in a note; a plan document accepts its own level too).
pub fn outline_full(body: &str, next_levels: &[HeadingLevel]) -> Outline {
    let mut out = Outline::default();
    let look_for_next = may_have_next_heading(body);
    let mut heading: Option<(HeadingLevel, usize, String)> = None;
    let mut first_block = true;
    // The level of the open `Next` section and where it began.
    let mut open_next: Option<(HeadingLevel, usize)> = None;
    let mut list_depth = 0usize;
    // Headings and lists inside a blockquote are quoted text, never structure.
    let mut quote_depth = 0usize;
    let mut item: Option<(usize, usize)> = None; // (start, own-text end)

    for (event, range) in Parser::new(body).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_)) => quote_depth += 1,
            Event::End(TagEnd::BlockQuote(_)) if quote_depth > 0 => {
                quote_depth -= 1;
                if quote_depth == 0 && list_depth == 0 {
                    first_block = false;
                }
            }
            // Only a top-level heading is the title or opens `Next`.
            Event::Start(Tag::Heading { .. }) if quote_depth > 0 || list_depth > 0 => {}
            Event::Start(Tag::Heading { level, .. }) => {
                if let Some((open_level, start)) = open_next {
                    if level <= open_level {
                        out.next_sections.push(start..range.start);
                        open_next = None;
                    }
                }
                heading = Some((level, range.start, String::new()));
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, _, collected)) = heading.as_mut() {
                    collected.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                let Some((_, start, text)) = heading.take() else {
                    continue;
                };
                let text = text.trim();
                if look_for_next
                    && next_levels.contains(&level)
                    && text.eq_ignore_ascii_case("next")
                {
                    // A deeper `Next` inside an open section is part of it.
                    if open_next.is_none() {
                        open_next = Some((level, start));
                        out.next_heading.get_or_insert(start);
                    }
                } else if level == HeadingLevel::H1 && out.title.is_none() {
                    out.title = Some(text.to_string());
                    if first_block {
                        out.leading_title = Some(start..range.end);
                    }
                }
                first_block = false;
            }
            Event::Start(Tag::List(_)) => {
                if let Some((_, own_end)) = item.as_mut() {
                    if list_depth == 1 && *own_end == usize::MAX {
                        *own_end = range.start;
                    }
                }
                list_depth += 1;
            }
            Event::End(TagEnd::List(_)) => {
                list_depth -= 1;
                if list_depth == 0 {
                    first_block = false;
                }
            }
            Event::Start(Tag::Item)
                if list_depth == 1 && quote_depth == 0 && open_next.is_some() =>
            {
                item = Some((range.start, usize::MAX));
            }
            Event::End(TagEnd::Item) if list_depth == 1 => {
                if let Some((start, own_end)) = item.take() {
                    out.items.push(start..own_end.min(range.end));
                }
            }
            Event::End(TagEnd::Paragraph | TagEnd::CodeBlock | TagEnd::HtmlBlock) | Event::Rule
                if list_depth == 0 =>
            {
                first_block = false;
            }
            _ => {}
        }
    }
    if let Some((_, start)) = open_next {
        out.next_sections.push(start..body.len());
    }
    out
}

/// The arrows that separate an edge's label from its target.
const ARROWS: [&str; 3] = ["->", "=>", "→"];

/// One `## Next` list item read as an edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemEdge<'a> {
    /// The label before the arrow, trimmed; `None` for `- [[t]]`.
    pub label: Option<&'a str>,
    /// The target link (the first one after the arrow).
    pub link: Option<WikiLink<'a>>,
    /// Text before the link but no arrow (`- approved [[send]]`).
    pub missing_arrow: bool,
    /// More links after the target, which are ignored.
    pub extra_links: usize,
}

/// The text of a list item without its marker (`-`, `*`, `+`, `1.`, `1)`),
/// and the byte offset where that text starts.
pub fn strip_marker(item: &str) -> (usize, &str) {
    let trimmed = item.trim_start();
    let lead = item.len() - trimmed.len();
    let marker_len = if trimmed.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        match trimmed.as_bytes().get(digits) {
            Some(b'.' | b')') if digits > 0 => digits + 1,
            _ => 0,
        }
    };
    let rest = &trimmed[marker_len..];
    let content = rest.trim_start();
    (lead + marker_len + (rest.len() - content.len()), content)
}

/// The last arrow in `text`: its byte offset and length. The arrows start
/// with different bytes, so at most one starts at any offset.
fn last_arrow(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    (0..bytes.len()).rev().find_map(|at| {
        ARROWS
            .iter()
            .find(|arrow| bytes[at..].starts_with(arrow.as_bytes()))
            .map(|arrow| (at, arrow.len()))
    })
}

/// Read an item's text (marker already stripped) as an edge. Offsets in the
/// returned link are relative to `text`.
pub fn parse_item(text: &str) -> ItemEdge<'_> {
    let mut links = links(text);
    let Some(first) = links.next() else {
        return ItemEdge {
            label: None,
            link: None,
            missing_arrow: false,
            extra_links: 0,
        };
    };
    let before = &text[..first.start];
    let arrow = last_arrow(before);
    let (label, missing_arrow) = match arrow {
        Some((at, _)) => {
            let label = before[..at].trim();
            (Some(label).filter(|l| !l.is_empty()), false)
        }
        None => {
            let label = before.trim().trim_end_matches(':').trim_end();
            (Some(label).filter(|l| !l.is_empty()), !label.is_empty())
        }
    };
    ItemEdge {
        label,
        link: Some(first),
        missing_arrow,
        extra_links: links.count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: HeadingLevel = HeadingLevel::H2;

    fn items(body: &str) -> Vec<&str> {
        outline_full(body, &[NOTE])
            .items
            .into_iter()
            .map(|r| body[r].trim_end())
            .collect()
    }

    #[test]
    fn only_items_under_next_count() {
        let body = "# Title\n\nSee [[elsewhere]].\n\n- [[not-an-edge]]\n\n## Next\n- approved -> [[send]]\n  - nested [[no]]\n- [[draft]]\n\n## Notes\n- [[also-not]]\n";
        assert_eq!(
            items(body),
            ["- approved -> [[send]]\n", "- [[draft]]"].map(str::trim_end)
        );
        let o = outline_full(body, &[NOTE]);
        assert_eq!(o.title.as_deref(), Some("Title"));
        assert_eq!(o.leading_title, Some(0..8));
        assert_eq!(o.next_sections.len(), 1);
        assert_eq!(
            &body[o.next_sections[0].clone()],
            "## Next\n- approved -> [[send]]\n  - nested [[no]]\n- [[draft]]\n\n"
        );
    }

    #[test]
    fn a_next_heading_in_a_code_block_is_not_one() {
        let body = "```\n## Next\n- [[x]]\n```\n";
        assert!(items(body).is_empty());
        assert_eq!(outline_full(body, &[NOTE]).next_heading, None);
    }

    #[test]
    fn a_title_after_prose_is_not_the_leading_title() {
        let o = outline_full("Intro.\n\n# Title\n", &[NOTE]);
        assert_eq!(o.title.as_deref(), Some("Title"));
        assert_eq!(o.leading_title, None);
    }

    #[test]
    fn items_read_as_edges() {
        let e = parse_item("approved -> [[send|Send it]]");
        assert_eq!(
            (e.label, e.link.unwrap().target, e.missing_arrow),
            (Some("approved"), "send", false)
        );
        let e = parse_item("needs revision => [[draft#Body]]");
        assert_eq!(
            (e.label, e.link.unwrap().target),
            (Some("needs revision"), "draft")
        );
        let e = parse_item("retry → [[a/b]]");
        assert_eq!((e.label, e.link.unwrap().target), (Some("retry"), "a/b"));
        let e = parse_item("[[t]]");
        assert_eq!((e.label, e.missing_arrow), (None, false));
        let e = parse_item("approved [[t]] or [[u]]");
        assert_eq!(
            (e.label, e.missing_arrow, e.extra_links),
            (Some("approved"), true, 1)
        );
        assert_eq!(parse_item("just prose").link, None);
    }

    #[test]
    fn the_last_arrow_wins_whichever_it_is() {
        assert_eq!(last_arrow("a -> b => c"), Some((7, 2)));
        assert_eq!(last_arrow("a => b → c -> d"), Some((13, 2)));
        assert_eq!(last_arrow("a -> b → c"), Some((7, 3)));
        assert_eq!(last_arrow("no arrow - > here"), None);
        assert_eq!(last_arrow(""), None);
    }

    #[test]
    fn near_miss_next_headings_are_found_and_the_real_one_is_not() {
        let near = |body: &str| near_miss_next_heading(body).map(|(at, h)| (at, h.to_string()));
        for heading in [
            "## Next:",
            "### Next",
            "# Next",
            "## Next steps",
            "##Next",
            "## next step:",
            "## Next - after review",
            "## NEXT ##x",
        ] {
            let body = format!("# T\n\n{heading}\n- [[a]]\n");
            if heading == "## NEXT ##x" {
                assert_eq!(near(&body), None, "{heading}");
                continue;
            }
            assert_eq!(near(&body), Some((5, heading.to_string())), "{heading}");
        }
        for body in [
            "## Next\n",
            "## next ##\n",
            "## Next.js setup\n",
            "## Nextcloud\n",
            "```\n# Next\n```\n",
            "    # Next\n",
            "Next:\n",
        ] {
            assert_eq!(near(body), None, "{body:?}");
        }
        assert_eq!(
            near("~~~\n# Next\n~~~\n### Next\n"),
            Some((15, "### Next".to_string()))
        );
    }

    #[test]
    fn markers_are_stripped() {
        assert_eq!(strip_marker("- [[t]]"), (2, "[[t]]"));
        assert_eq!(strip_marker("  12) x"), (6, "x"));
        assert_eq!(strip_marker("*   y"), (4, "y"));
    }
}
