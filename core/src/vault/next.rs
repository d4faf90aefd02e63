//! A note body's outline: its title heading and the list items under
//! `## Next`, found with pulldown-cmark so a `## Next` inside a code block or
//! a link in prose never becomes an edge.

use super::links::{hidden_spans, hides, in_order, links_outside, NoteLink};
use super::text::{without_comments, without_inline_comments, Fence};
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use std::borrow::Cow;
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

/// A heading that looks meant as `## Next` but is not read as it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss<'a> {
    /// Its byte offset in the body.
    pub at: usize,
    /// Its line as written.
    pub heading: &'a str,
    /// `## Next` itself, inside a `%%` comment (which Obsidian hides too).
    pub commented: bool,
}

/// An ATX heading's `#` count and text, closing `#`s trimmed.
#[cfg_attr(planvault_size, optimize(size))]
fn atx_text(content: &str) -> Option<(usize, &str)> {
    let hashes = content.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0
        || hashes > 6
        || !content[hashes..].is_empty() && !content[hashes..].starts_with([' ', '\t'])
    {
        return None;
    }
    Some((
        hashes,
        content[hashes..].trim().trim_end_matches('#').trim_end(),
    ))
}

/// The first heading that looks meant as `## Next` but is not it (`## Next:`,
/// `### Next`, `# Next`, `## Next steps`, `##Next`, or `## Next` itself in a
/// `%%` comment), outside fenced code. Only asked of a note without a
/// `## Next` section, whose edges such a heading would otherwise lose in
/// silence.
#[cfg_attr(planvault_size, optimize(size))]
pub fn near_miss_next_heading(body: &str) -> Option<NearMiss<'_>> {
    if !may_have_next_heading(body) {
        return None;
    }
    let comments = super::text::comment_blocks(body);
    let mut fence = Fence::default();
    let mut at = 0;
    // The line before, where it reads `Next` alone: a `===` under it makes
    // it a setext `# Next`.
    let mut next_above: Option<(usize, &str)> = None;
    // Whether the line before ended a paragraph (or there was none): a
    // setext heading's text is the whole paragraph above its `===`.
    let mut after_blank = true;
    for raw in body.split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        let above = next_above.take();
        let starts_paragraph = std::mem::replace(&mut after_blank, line.trim().is_empty());
        if fence.step(line) {
            // A fence's line ends the block before; the line after one
            // starts its own.
            after_blank = true;
            continue;
        }
        if indent > 3 {
            continue;
        }
        if let Some((above_at, heading)) = above {
            let underline = content.trim_end();
            if !underline.is_empty() && underline.bytes().all(|b| b == b'=') {
                return Some(NearMiss {
                    at: above_at,
                    heading,
                    commented: false,
                });
            }
        }
        let commented = comments
            .iter()
            .any(|c| c.start <= start + indent && start < c.end);
        if commented {
            // The real heading, hidden in a `%%` comment.
            if atx_text(content)
                .is_some_and(|(hashes, text)| hashes == 2 && text.eq_ignore_ascii_case("next"))
            {
                return Some(NearMiss {
                    at: start + indent,
                    heading: line[indent..].trim_end(),
                    commented: true,
                });
            }
            continue;
        }
        let hashes = content.bytes().take_while(|&b| b == b'#').count();
        if hashes == 0
            && starts_paragraph
            && content
                .trim_end()
                .trim_end_matches(':')
                .eq_ignore_ascii_case("next")
        {
            next_above = Some((start + indent, line[indent..].trim_end()));
        }
        if hashes == 0 || hashes > 6 {
            continue;
        }
        // An ATX heading is a block of one line: the next starts its own.
        after_blank |= atx_text(content).is_some();
        let text = content[hashes..].trim().trim_end_matches('#').trim_end();
        // A heading linking a note named Next (`## [[Next]]`) reads as
        // that word to a person.
        let linked = text.strip_prefix("[[").and_then(|t| t.strip_suffix("]]"));
        let text = linked.unwrap_or(text);
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
            "" => linked.is_some() || !(hashes == 2 && spaced && !text.ends_with(':')),
            "step" | "steps" | "node" | "nodes" | "edges" | "up" => true,
            _ => text[4..].trim_start().starts_with([':', '-']),
        };
        if near {
            return Some(NearMiss {
                at: start + indent,
                heading: line[indent..].trim_end(),
                commented: false,
            });
        }
    }
    None
}

/// The outline the loader reads: the line scan where it is sure, the full
/// parse otherwise. For tests that hold the loader's reading against
/// Obsidian's.
#[doc(hidden)]
pub fn loaded_outline(body: &str, next_levels: &[HeadingLevel]) -> Outline {
    super::scan::outline_for(body, next_levels, false)
}

/// Outline a body with a full CommonMark parse (see `scan` for the fast way). `next_level` is the heading level of the `Next` section
/// (2 in a note; a plan document accepts its own level too).
pub fn outline_full(body: &str, next_levels: &[HeadingLevel]) -> Outline {
    // Parsed with Obsidian's `%%` block comments blanked: no heading, item
    // or link in one is read, and every offset stays the body's.
    outline_of(body, &without_comments(body), next_levels, true)
}

/// [`outline_full`] with `%%` read as text, as SilverBullet reads it.
#[cfg(feature = "silverbullet")]
pub(super) fn outline_comments_shown(body: &str, next_levels: &[HeadingLevel]) -> Outline {
    outline_of(body, body, next_levels, false)
}

/// The outline of `body` as parsed in `parsed` (`body` itself, or with
/// bytes blanked, so every offset is the body's); a heading's inline `%%`
/// comments left out of its text when `comments_hidden`.
fn outline_of(
    body: &str,
    parsed: &str,
    next_levels: &[HeadingLevel],
    comments_hidden: bool,
) -> Outline {
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

    for (event, range) in Parser::new(parsed).into_offset_iter() {
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
                let text = if comments_hidden {
                    without_inline_comments(&text)
                } else {
                    Cow::Borrowed(text.as_str())
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
                    // Without the blank lines a comment left at its end.
                    let end = own_end.min(range.end);
                    let end = start + parsed[start..end].trim_end().len();
                    out.items.push(start..end);
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
    /// The arrow before the link (its byte range), when there is one.
    pub arrow: Option<Range<usize>>,
    /// The target link (the first one after the arrow).
    pub link: Option<NoteLink<'a>>,
    /// Text before the link but no arrow (`- approved [[send]]`).
    pub missing_arrow: bool,
    /// More links after the target, which are ignored.
    pub extra_links: usize,
}

/// The status of a task item (`- [ ] …`, `- [x] …`, or any one character
/// between the brackets, as Obsidian reads custom statuses), given the
/// item's text after its marker: the status and the text after the
/// checkbox. The checkbox must be followed by a space or end the line
/// (`[x](x.md)` is a link, not a task).
pub fn task_status(content: &str) -> Option<(char, &str)> {
    let mut chars = content.strip_prefix('[')?.chars();
    let status = chars.next().filter(|c| !matches!(c, '\n' | '\r'))?;
    let after = chars.as_str().strip_prefix(']')?;
    (after.is_empty() || after.starts_with([' ', '\t', '\r', '\n'])).then_some((status, after))
}

/// The text of a list item without its marker (`-`, `*`, `+`, `1.`, `1)`)
/// and, for a task, its checkbox (Obsidian draws a checkbox, not `[ ]`, so
/// the text a user reads is what follows it), and the byte offset where
/// that text starts.
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
    let mut content = rest.trim_start();
    if marker_len > 0 && content.len() < rest.len() {
        if let Some((_, after)) = task_status(content) {
            content = after.trim_start();
        }
    }
    (lead + marker_len + (rest.len() - content.len()), content)
}

/// The last arrow in `text`: its byte offset and length. The arrows start
/// with different bytes, so at most one starts at any offset.
fn last_arrow(text: &str, hidden: &[Range<usize>]) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    (0..bytes.len())
        .rev()
        .filter(|&at| !hides(hidden, at))
        .find_map(|at| {
            ARROWS
                .iter()
                .find(|arrow| bytes[at..].starts_with(arrow.as_bytes()))
                .map(|arrow| (at, arrow.len()))
        })
}

/// Emphasis, strikethrough and highlight marks: a run of them touching a
/// link (`**[[send]]**`) formats the link.
pub const LINK_MARKS: [char; 4] = ['*', '_', '~', '='];

/// A label as Obsidian shows it: emphasis, strikethrough, highlight and
/// code marks, backslash escapes and inline HTML tags are formatting, not
/// words, so `**approved**` is the condition "approved" and `*next*` is
/// `next`. A label markdown would read as more than a run of text (a
/// heading mark, a link) is taken as written, and so is one that would
/// show nothing.
pub fn label_as_shown(label: &str) -> std::borrow::Cow<'_, str> {
    use pulldown_cmark::Options;
    use std::borrow::Cow;
    if !label.contains(['*', '_', '~', '`', '\\', '<', '&', '=']) {
        return Cow::Borrowed(label);
    }
    // Obsidian's `==highlight==` pairs as strikethrough's `~~` does (the
    // same flanking rules), and pulldown-cmark reads no `==`: read as
    // `~~` where the label has no tilde of its own to be confused with.
    let highlight = label.contains("==") && !label.contains('~');
    let source = match highlight {
        true => Cow::Owned(label.replace("==", "~~")),
        false => Cow::Borrowed(label),
    };
    // Obsidian strikes text through between `~~` only: a pair of single
    // tildes (`~5 min~`) is shown as written, as subscript's marks are here.
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_SUBSCRIPT;
    let mut events = Parser::new_ext(&source, options).peekable();
    if events.next_if_eq(&Event::Start(Tag::Paragraph)).is_none() {
        return Cow::Borrowed(label);
    }
    let mut shown = String::with_capacity(label.len());
    for event in events {
        match event {
            Event::Text(text) | Event::Code(text) if highlight => {
                shown.push_str(&text.replace('~', "="))
            }
            Event::Text(text) | Event::Code(text) => shown.push_str(&text),
            Event::SoftBreak | Event::HardBreak => shown.push(' '),
            // Read for a highlight, every tilde stood for an `=`.
            Event::Start(Tag::Subscript) | Event::End(TagEnd::Subscript) => {
                shown.push_str(if highlight { "=" } else { "~" })
            }
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough)
            | Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Paragraph,
            )
            | Event::InlineHtml(_) => {}
            _ => return Cow::Borrowed(label),
        }
    }
    match shown.trim().is_empty() {
        true => Cow::Borrowed(label),
        false => Cow::Owned(shown),
    }
}

/// Read an item's text (marker already stripped) as an edge. Offsets in the
/// returned link are relative to `text`.
pub fn parse_item(text: &str) -> ItemEdge<'_> {
    let hidden = hidden_spans(text);
    // An embed of a file that is no note (an icon, a screenshot beside the
    // edge) is never meant as the edge, in either form.
    let mut links = links_outside(text, hidden.clone()).filter(|link| {
        let embed = text[..link.start].ends_with('!') || text[link.start..].starts_with('!');
        !(embed && super::validate::is_attachment(&link.target))
    });
    let Some(first) = links.next() else {
        return ItemEdge {
            label: None,
            arrow: None,
            link: None,
            missing_arrow: false,
            extra_links: 0,
        };
    };
    // A wikilink embed's `!` is the link's, not the label's.
    let before = &text[..first.start];
    let before = before.strip_suffix('!').unwrap_or(before);
    let arrow = last_arrow(before, &hidden);
    let (label, missing_arrow) = match arrow {
        Some((at, _)) => {
            let label = before[..at].trim();
            (Some(label).filter(|l| !l.is_empty()), false)
        }
        None => {
            // `yes: **[[send]]**`: the marks just before the link make the
            // link bold; they are not the label's.
            let label = before
                .trim_end_matches(LINK_MARKS)
                .trim()
                .trim_end_matches(':')
                .trim_end();
            (Some(label).filter(|l| !l.is_empty()), !label.is_empty())
        }
    };
    ItemEdge {
        label,
        arrow: arrow.map(|(at, len)| at..at + len),
        link: Some(first),
        missing_arrow,
        extra_links: links.count(),
    }
}

/// Where a link under `Next` sits that no top-level item holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrayPlace {
    /// In an item nested under another (`  - see [[x]]`).
    NestedItem,
    /// In a blockquote (`> - [[x]]`).
    Quote,
    /// In a paragraph, heading or table of the section.
    Prose,
}

/// The links in a `Next` section that no top-level item holds, so none is
/// an edge, though Obsidian draws each under the heading like the edges:
/// each with where it sits. `section` is the section's text from its
/// heading, `%%` comments blanked; `items` the top-level items' ranges in
/// it, in order. A link in code or HTML is no link, and an embed (`![[shot.png]]`)
/// or a link to a file that is no note (`[[paper.pdf]]`) is never meant
/// as an edge, so neither is returned.
#[cold]
#[cfg_attr(planvault_size, optimize(size))]
pub fn stray_links<'a>(
    section: &'a str,
    items: &[Range<usize>],
) -> Vec<(NoteLink<'a>, StrayPlace)> {
    let mut hidden = Vec::new();
    let mut nested = Vec::new();
    let mut quotes = Vec::new();
    let (mut lists, mut quoted) = (0usize, 0usize);
    for (event, range) in Parser::new(section).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock)
            | Event::Code(_)
            | Event::InlineHtml(_) => hidden.push(range),
            Event::Start(Tag::BlockQuote(_)) => {
                if quoted == 0 {
                    quotes.push(range);
                }
                quoted += 1;
            }
            Event::End(TagEnd::BlockQuote(_)) => quoted = quoted.saturating_sub(1),
            Event::Start(Tag::List(_)) => {
                if lists > 0 && quoted == 0 {
                    nested.push(range);
                }
                lists += 1;
            }
            Event::End(TagEnd::List(_)) => lists = lists.saturating_sub(1),
            _ => {}
        }
    }
    // Lists nested in nested lists overlap: joined, so each link is looked
    // up by binary search, not against every list and item of the section.
    let nested = in_order(nested);
    let mut strays = Vec::new();
    // A loop, not `filter`/`map`/`collect`: the link scanner's code is
    // shared with the item reader's instead of built again (0.7 KB).
    for link in links_outside(section, in_order(hidden)) {
        if hides(items, link.start)
            || section[..link.start].ends_with('!')
            || section[link.start..].starts_with('!')
            || super::validate::is_attachment(&link.target)
        {
            continue;
        }
        let place = if hides(&quotes, link.start) {
            StrayPlace::Quote
        } else if hides(&nested, link.start) {
            StrayPlace::NestedItem
        } else {
            StrayPlace::Prose
        };
        strays.push((link, place));
    }
    strays
}

/// Whether a `Next` section (`section`, a range of `body`) may hold a link
/// outside its top-level `items` (ranges of `body`, in order): `[[` or `](`
/// between them. Most sections hold items only, and skip [`stray_links`].
pub fn may_hold_stray_links(body: &str, section: &Range<usize>, items: &[Range<usize>]) -> bool {
    let mut at = section.start;
    let gap_has_link = |gap: &str| gap.contains("[[") || gap.contains("](");
    for item in items.iter().filter(|i| section.contains(&i.start)) {
        if gap_has_link(&body[at..item.start.max(at)]) {
            return true;
        }
        at = item.end.max(at);
    }
    gap_has_link(&body[at..section.end.max(at)])
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

    /// Regression: each link, and each byte searched for an arrow, was
    /// looked for among every code span, so an item of 100,000 code spans
    /// and as many links took minutes.
    #[test]
    fn an_item_of_many_code_spans_and_links_is_read_in_linear_time() {
        let spans = 100_000;
        let text = format!("{}{}", "`a` ".repeat(spans), "[[x]] ".repeat(spans));
        let e = parse_item(&text);
        assert_eq!(e.link.map(|link| link.start), Some(4 * spans));
        assert_eq!((e.arrow, e.missing_arrow), (None, true));
        assert_eq!(e.extra_links, spans - 1);
    }

    /// Regression: each stray link was looked for among every item and
    /// nested list of its section, so 25,000 items took half a minute (debug).
    #[test]
    fn many_stray_links_are_placed_in_linear_time() {
        let strays = 25_000;
        let heading = "## Next\n";
        let (item, nested) = ("- [[x]]", "\n  - see [[y]]\n    - [[z]]\n");
        let section = format!("{heading}{}", format!("{item}{nested}").repeat(strays));
        // An item's own text, without the items nested in it.
        let items: Vec<Range<usize>> = (0..strays)
            .map(|i| heading.len() + i * (item.len() + nested.len()))
            .map(|start| start..start + item.len())
            .collect();
        let found = stray_links(&section, &items);
        assert_eq!(found.len(), 2 * strays);
        assert!(found
            .iter()
            .all(|(_, place)| *place == StrayPlace::NestedItem));
    }

    #[test]
    fn items_read_as_edges() {
        let e = parse_item("approved -> [[send|Send it]]");
        assert_eq!(
            (e.label, &*e.link.unwrap().target, e.missing_arrow),
            (Some("approved"), "send", false)
        );
        let e = parse_item("needs revision => [[draft#Body]]");
        assert_eq!(
            (e.label, &*e.link.unwrap().target),
            (Some("needs revision"), "draft")
        );
        let e = parse_item("retry → [[a/b]]");
        assert_eq!((e.label, &*e.link.unwrap().target), (Some("retry"), "a/b"));
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
    fn markdown_links_read_as_edges_like_wikilinks() {
        let e = parse_item("approved -> [Send it](Send%20it.md)");
        let link = e.link.unwrap();
        assert_eq!((e.label, &*link.target), (Some("approved"), "Send it.md"));
        assert_eq!(e.arrow, Some(9..11));
        let e = parse_item("[Draft](../drafts/Draft.md#Body \"title\")");
        assert_eq!(
            (e.label, &*e.link.unwrap().target),
            (None, "../drafts/Draft.md")
        );
        let e = parse_item("retry -> [x](<a b.md>)");
        assert_eq!(&*e.link.unwrap().target, "a b.md");
        // An embed is a link in either form, as Obsidian records both.
        let e = parse_item("see -> ![chart](chart.md)");
        assert_eq!(
            (e.label, &*e.link.unwrap().target),
            (Some("see"), "chart.md")
        );
        let e = parse_item("see -> ![[chart]]");
        assert_eq!((e.label, &*e.link.unwrap().target), (Some("see"), "chart"));
        // Its `!` is no label; an embed of a file that is no note (an
        // icon) is never the edge, nor counted as another link.
        for text in ["![[chart]]", "![c](chart.md)"] {
            let e = parse_item(text);
            assert_eq!((e.label, e.missing_arrow), (None, false), "{text}");
        }
        for text in [
            "![icon](icon.svg) approved -> [[b]]",
            "![[icon.svg]] approved -> [[b]]",
            "approved -> [![badge](badge.png)](b.md)",
        ] {
            let e = parse_item(text);
            let link = e.link.unwrap();
            assert_eq!(
                (link.target.trim_end_matches(".md"), e.extra_links),
                ("b", 0),
                "{text}"
            );
        }
        // A URL and an empty destination are no edges.
        for text in [
            "docs -> [site](https://example.com/a.md)",
            "x -> [empty]()",
            "mail -> [me](mailto:a@b.c)",
        ] {
            assert_eq!(parse_item(text).link, None, "{text}");
        }
        // Both forms in one item: the first is the edge, the other extra.
        let e = parse_item("ok -> [Send](Send.md) or [[Draft]]");
        assert_eq!((&*e.link.unwrap().target, e.extra_links), ("Send.md", 1));
        // A wikilink wins over a markdown link around or after it.
        let e = parse_item("ok -> [[Send]](Other.md)");
        assert_eq!((&*e.link.unwrap().target, e.extra_links), ("Send", 0));
        // Hidden in an HTML comment, as Obsidian hides it.
        let e = parse_item("ok -> <!-- [[Old]] --> [[New]]");
        assert_eq!(
            (e.label, &*e.link.unwrap().target, e.extra_links),
            (Some("ok"), "New", 0)
        );
        // Nor is an arrow in code or a comment the label's end.
        let e = parse_item("a -> `b -> c` [[t]]");
        assert_eq!(e.label, Some("a"));
    }

    #[test]
    fn a_label_reads_as_obsidian_shows_it() {
        for (written, shown) in [
            ("**next**", "next"),
            ("*needs* a `second` ~~look~~", "needs a second look"),
            ("approved\\* <b>now</b>", "approved* now"),
            ("__done__ & dusted", "done & dusted"),
            ("a*b*c", "abc"),
            ("==urgent== `a==b`", "urgent a==b"),
            ("a == b and x=y", "a == b and x=y"),
            ("===", "==="),
            ("\\==\\== shown", "==== shown"),
            // Struck through between `~~` only: single tildes as written.
            ("takes ~5 min~ or less", "takes ~5 min~ or less"),
            ("costs ~$5 or ~$10", "costs ~$5 or ~$10"),
            ("a ~b~ ~~c~~ *d*", "a ~b~ c d"),
            // Nothing that formats: as written.
            (
                "2 * 3 > 4 and snake_case_name",
                "2 * 3 > 4 and snake_case_name",
            ),
            ("C:\\temp", "C:\\temp"),
            // More than a run of text, or nothing shown: as written.
            ("# heading", "# heading"),
            ("> quoted *x*", "> quoted *x*"),
            ("[see](https://x) *it*", "[see](https://x) *it*"),
            ("<br>", "<br>"),
            ("** **", "** **"),
        ] {
            assert_eq!(label_as_shown(written), shown, "{written}");
        }
    }

    #[test]
    fn marks_just_before_a_link_are_the_links() {
        let e = parse_item("yes: **[[send]]**");
        assert_eq!((e.label, e.missing_arrow), (Some("yes"), true));
        let e = parse_item("~~old~~ [[x]]");
        assert_eq!(e.label, Some("~~old~~"));
    }

    #[test]
    fn the_last_arrow_wins_whichever_it_is() {
        assert_eq!(last_arrow("a -> b => c", &[]), Some((7, 2)));
        assert_eq!(last_arrow("a => b → c -> d", &[]), Some((13, 2)));
        assert_eq!(last_arrow("a -> b → c", &[]), Some((7, 3)));
        assert_eq!(last_arrow("no arrow - > here", &[]), None);
        assert_eq!(last_arrow("", &[]), None);
    }

    #[test]
    fn near_miss_next_headings_are_found_and_the_real_one_is_not() {
        let near = |body: &str| {
            near_miss_next_heading(body)
                .filter(|m| !m.commented)
                .map(|m| (m.at, m.heading.to_string()))
        };
        for heading in [
            "## Next:",
            "### Next",
            "# Next",
            "## Next steps",
            "##Next",
            "## next step:",
            "## Next - after review",
            "## NEXT ##x",
            "## [[Next]]",
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
        // A setext `# Next` (`===` under it); `---` under it is `## Next`.
        assert_eq!(
            near("# T\n\nNext\n====\n- [[a]]\n"),
            Some((5, "Next".to_string()))
        );
        assert_eq!(near("Next\n---\n- [[a]]\n"), None);
        assert_eq!(near("Next\n\n====\n"), None);
        // The heading is the whole paragraph above the `===`.
        assert_eq!(near("We do this and then the\nnext\n===\n"), None);
        // A heading or a fence above ends the block before: `Next` starts
        // its own paragraph there, as after a blank line.
        assert_eq!(
            near("## Steps\nNext\n===\n- [[a]]\n"),
            Some((9, "Next".to_string()))
        );
        assert_eq!(
            near("```\ncode\n```\nNext\n===\n"),
            Some((13, "Next".to_string()))
        );
    }

    #[test]
    fn a_commented_out_next_section_is_no_section_and_is_named() {
        let body = "# T\n\n%%\n## Next\n- [[a]]\n%%\n";
        let o = outline_full(body, &[NOTE]);
        assert_eq!((o.next_heading, o.items.len()), (None, 0));
        let miss = near_miss_next_heading(body).unwrap();
        assert_eq!(
            (miss.at, miss.heading, miss.commented),
            (8, "## Next", true)
        );
        // Unclosed, the comment runs to the end, as in Obsidian.
        assert_eq!(
            outline_full("%% draft\n## Next\n- [[a]]\n", &[NOTE])
                .items
                .len(),
            0
        );
        // `%%` in fenced code or later in a line opens no block comment.
        assert_eq!(items("```\n%%\n```\n## Next\n- [[a]]\n"), ["- [[a]]"]);
        assert_eq!(items("Text %%\n## Next\n- [[a]]\n"), ["- [[a]]"]);
    }

    #[test]
    fn a_comment_in_a_heading_is_hidden_as_obsidian_shows_it() {
        // `## Next %% why %%` shows as `Next`, like `## Next <!-- why -->`.
        for body in [
            "## Next %% where to go %%\n- [[a]]\n",
            "## %%draft%% Next\n- [[a]]\n",
            "## Next %% *not* yet %% %%%%\n- [[a]]\n",
        ] {
            assert_eq!(items(body), ["- [[a]]"], "{body:?}");
        }
        let o = outline_full("# Plan %% v2 %%\n", &[NOTE]);
        assert_eq!(o.title.as_deref(), Some("Plan"));
        // A `%%` that nothing closes on the line is text.
        assert_eq!(items("## Next %% draft\n- [[a]]\n"), Vec::<&str>::new());
        // SilverBullet has no `%%` comments: its heading is as written.
        #[cfg(feature = "silverbullet")]
        assert_eq!(
            outline_comments_shown("## Next %% c %%\n- [[a]]\n", &[NOTE])
                .items
                .len(),
            0
        );
    }

    #[test]
    fn commented_out_items_are_no_edges() {
        let body = "## Next\n- [[a]]\n%%\n- [[b]]\n%%\n- [[c]]\n%% - [[d]] %%\n  %%- [[e]]%%\n- [[f]] %% inline %%\n";
        assert_eq!(items(body), ["- [[a]]", "- [[c]]", "- [[f]] %% inline %%"]);
    }

    #[test]
    fn markers_are_stripped() {
        assert_eq!(strip_marker("- [[t]]"), (2, "[[t]]"));
        assert_eq!(strip_marker("  12) x"), (6, "x"));
        assert_eq!(strip_marker("*   y"), (4, "y"));
        assert_eq!(strip_marker("- [ ] go -> [[t]]"), (6, "go -> [[t]]"));
        assert_eq!(strip_marker("1. [x]  [[t]]"), (8, "[[t]]"));
        assert_eq!(strip_marker("- [/]"), (5, ""));
        assert_eq!(strip_marker("- [é] é"), (7, "é"));
        // No checkbox: a link, a wikilink, a bracket without a space after.
        assert_eq!(strip_marker("- [x](x.md)"), (2, "[x](x.md)"));
        assert_eq!(strip_marker("- [[x]]"), (2, "[[x]]"));
        assert_eq!(strip_marker("- [xy] z"), (2, "[xy] z"));
        assert_eq!(strip_marker("- []"), (2, "[]"));
    }
}
