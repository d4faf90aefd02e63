//! Which lines of a PLAN.md belong to which checkbox item.
//!
//! pulldown-cmark decides the markdown structure (so a `- [ ]` inside a fenced
//! block, such as a `leopold-amend` proposal, is not an item, and an indented
//! marker line is part of its item's paragraph exactly as CommonMark says); the
//! grammar of an item's own lines is then read from the raw source, which keeps
//! backticks, arrows and positions intact.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// One line of an item's own text: its first line starts after the checkbox.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLine<'a> {
    /// Byte offset of `text` in the whole document.
    pub start: usize,
    /// The line without its line ending, leading whitespace trimmed.
    pub text: &'a str,
}

/// A checkbox list item in document order.
#[derive(Debug, Clone)]
pub(crate) struct RawItem<'a> {
    pub done: bool,
    /// Byte offset of the list item's bullet.
    pub bullet: usize,
    /// The item line (after `[ ]`), then every continuation line that belongs
    /// to this item and not to a nested block.
    pub lines: Vec<RawLine<'a>>,
}

struct Frame {
    start: usize,
    /// `(slot in the output, marker end)` once the item is known to be a checkbox.
    task: Option<(usize, usize)>,
    /// Where the item's own text stops: its first nested block.
    own_end: Option<usize>,
}

/// Every checkbox item, open and done, in the order their boxes appear (a
/// parent before its nested children), which is the order of their indices.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn checkbox_items(text: &str) -> Vec<RawItem<'_>> {
    let mut out: Vec<RawItem<'_>> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TASKLISTS).into_offset_iter() {
        match event {
            Event::Start(Tag::Item) => stack.push(Frame {
                start: range.start,
                task: None,
                own_end: None,
            }),
            Event::TaskListMarker(done) => {
                if let Some(frame) = stack.last_mut() {
                    frame.task = Some((out.len(), range.end));
                    out.push(RawItem {
                        done,
                        bullet: frame.start,
                        lines: Vec::new(),
                    });
                }
            }
            Event::Start(
                Tag::List(_)
                | Tag::CodeBlock(_)
                | Tag::BlockQuote(_)
                | Tag::Heading { .. }
                | Tag::Table(_)
                | Tag::HtmlBlock
                | Tag::FootnoteDefinition(_),
            ) => {
                if let Some(frame) = stack.last_mut() {
                    frame.own_end.get_or_insert(range.start);
                }
            }
            Event::End(TagEnd::Item) => {
                if let Some(frame) = stack.pop() {
                    if let Some((slot, marker_end)) = frame.task {
                        let end = frame.own_end.unwrap_or(range.end).max(marker_end);
                        out[slot].lines = own_lines(text, marker_end, end);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Split `text[start..end]` into trimmed lines, dropping blank ones.
#[cfg_attr(planvault_size, optimize(size))]
fn own_lines(text: &str, start: usize, end: usize) -> Vec<RawLine<'_>> {
    let mut lines = Vec::new();
    let mut at = start;
    for piece in text[start..end].split_inclusive('\n') {
        let body = piece.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start();
        let lead = body.len() - trimmed.len();
        let trimmed = trimmed.trim_end();
        if !trimmed.is_empty() || lines.is_empty() {
            lines.push(RawLine {
                start: at + lead,
                text: trimmed,
            });
        }
        at += piece.len();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<(bool, Vec<&str>)> {
        checkbox_items(src)
            .into_iter()
            .map(|i| (i.done, i.lines.iter().map(|l| l.text).collect()))
            .collect()
    }

    #[test]
    fn nested_items_count_and_own_their_lines() {
        let src = "- [ ] parent\n  @emit a\n  - [X] child\n    @emit b\n- [ ] next\n";
        assert_eq!(
            texts(src),
            vec![
                (false, vec!["parent", "@emit a"]),
                (true, vec!["child", "@emit b"]),
                (false, vec!["next"]),
            ]
        );
    }

    #[test]
    fn a_checkbox_inside_a_fence_is_not_an_item() {
        let src = "- [ ] real\n\n```leopold-amend\n- [ ] proposed\n```\n";
        assert_eq!(texts(src), vec![(false, vec!["real"])]);
    }

    #[test]
    fn crlf_lines_lose_their_carriage_return() {
        assert_eq!(
            texts("- [ ] a\r\n      @emit x\r\n"),
            vec![(false, vec!["a", "@emit x"])]
        );
    }
}
