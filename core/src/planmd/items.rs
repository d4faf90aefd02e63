//! Which lines of a PLAN.md are items, and which lines belong to which item.
//!
//! This is Leopold's rule, line by line, not markdown structure: a line is an
//! item when it is `- [ ]`, `- [x]` or `- [X]` after any run of spaces and
//! tabs (so `- [ ]text` is one, and `* [ ]`, `+ [ ]`, `1. [ ]`, `-  [ ]` and
//! `> - [ ]` are not); every other line after an item belongs to that item,
//! whatever its indentation and whatever blank lines, headings or bullets
//! stand between them. Which of those lines are markers is
//! [`super::markers`]'s business.
//!
//! Where planvault deliberately reads differently (the README's PLAN.md
//! section lists these): a CRLF line ending is a line ending (Leopold reads a
//! CRLF file as zero items), and the lines of a fenced code block or of an
//! HTML comment are nobody's — neither items nor markers — so a
//! `leopold-amend` proposal or a commented-out item never counts.

/// One line of the document, without its `\n` or a `\r` before it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLine<'a> {
    /// Byte offset of `text` in the whole document.
    pub start: usize,
    pub text: &'a str,
}

/// A line under an item.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnderLine<'a> {
    pub line: RawLine<'a>,
    /// Indented and joined to the item line by no blank line: prose that
    /// continues the item (its body), when it is not a marker.
    pub continuation: bool,
}

/// A checkbox item in document order.
#[derive(Debug, Clone)]
pub(crate) struct RawItem<'a> {
    pub done: bool,
    /// Byte offset of the item's `-`.
    pub bullet: usize,
    /// The item's own text: what follows the box and one whitespace character.
    pub text: RawLine<'a>,
    /// Every non-blank line after the item line up to the next item, outside
    /// fences and comments.
    pub under: Vec<UnderLine<'a>>,
}

/// A PLAN.md cut into items.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scan<'a> {
    pub items: Vec<RawItem<'a>>,
    /// Non-blank lines before the first item (outside fences and comments).
    pub before_first: Vec<RawLine<'a>>,
}

/// A character JavaScript's `\s` matches (and `String#trim` removes).
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// JavaScript's `String#trim`.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(js_space)
}

/// Whether JavaScript's `.` matches every character of `s` (no line
/// terminator inside), which every `(.*)$` of the grammar requires.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn one_line(s: &str) -> bool {
    !s.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}

/// `- [ ]` / `- [x]` / `- [X]` after spaces and tabs: `(done, bullet offset in
/// the line, the item text)`.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn checkbox(line: &str) -> Option<(bool, usize, &str)> {
    let body = line.trim_start_matches([' ', '\t']);
    let bullet = line.len() - body.len();
    let after = body.strip_prefix("- [")?;
    let done = match after.as_bytes().first()? {
        b' ' => false,
        b'x' | b'X' => true,
        _ => return None,
    };
    let after = after[1..].strip_prefix(']')?;
    // `\s?(.*)$`: one optional whitespace character, then no line terminator.
    if let Some(c) = after.chars().next().filter(|&c| js_space(c)) {
        let rest = &after[c.len_utf8()..];
        if one_line(rest) {
            return Some((done, bullet, rest));
        }
    }
    one_line(after).then_some((done, bullet, after))
}

/// Cut `text` into items.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn scan(text: &str) -> Scan<'_> {
    let mut scan = Scan::default();
    let mut fence: Option<(u8, usize)> = None;
    let mut in_comment = false;
    // Whether the last line was blank (or there was none since the item).
    let mut joined = false;
    let mut at = 0;
    for piece in text.split_inclusive('\n') {
        let start = at;
        at += piece.len();
        // A CR ends a line only before its LF: Leopold splits on LF alone
        // and reads a line holding a CR as no item (a CRLF file is read as
        // LF on purpose; a bare CR at the very end is not a CRLF).
        let line = match piece.strip_suffix('\n') {
            Some(line) => line.strip_suffix('\r').unwrap_or(line),
            None => piece,
        };
        if let Some((ch, len)) = fence {
            if closes_fence(line, ch, len) {
                fence = None;
            }
            joined = false;
            continue;
        }
        if in_comment {
            in_comment = !line.contains("-->");
            joined = false;
            continue;
        }
        let lead = line.trim_start_matches([' ', '\t']);
        if let Some(open) = opens_fence(lead) {
            fence = Some(open);
            joined = false;
            continue;
        }
        if let Some(rest) = lead.strip_prefix("<!--") {
            in_comment = !rest.contains("-->");
            joined = false;
            continue;
        }
        if let Some((done, bullet, item_text)) = checkbox(line) {
            let offset = item_text.as_ptr() as usize - text.as_ptr() as usize;
            scan.items.push(RawItem {
                done,
                bullet: start + bullet,
                text: RawLine {
                    start: offset,
                    text: item_text,
                },
                under: Vec::new(),
            });
            joined = true;
            continue;
        }
        if js_trim(line).is_empty() {
            joined = false;
            continue;
        }
        let raw = RawLine { start, text: line };
        match scan.items.last_mut() {
            Some(item) => {
                let indented = line.starts_with([' ', '\t']);
                item.under.push(UnderLine {
                    line: raw,
                    continuation: joined && indented,
                });
                joined = joined && indented;
            }
            None => scan.before_first.push(raw),
        }
    }
    scan
}

/// A line opening a fenced code block: three or more backticks (with no
/// backtick after them) or tildes, after spaces and tabs.
#[cfg_attr(planvault_size, optimize(size))]
fn opens_fence(lead: &str) -> Option<(u8, usize)> {
    let ch = *lead.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = lead.bytes().take_while(|&b| b == ch).count();
    if len < 3 || (ch == b'`' && lead[len..].contains('`')) {
        return None;
    }
    Some((ch, len))
}

/// A line closing a fence opened by `len` times `ch`.
#[cfg_attr(planvault_size, optimize(size))]
fn closes_fence(line: &str, ch: u8, len: usize) -> bool {
    let lead = line.trim_start_matches([' ', '\t']);
    let run = lead.bytes().take_while(|&b| b == ch).count();
    run >= len && lead[run..].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(src: &str) -> Vec<(bool, &str, Vec<&str>)> {
        scan(src)
            .items
            .into_iter()
            .map(|i| {
                (
                    i.done,
                    i.text.text,
                    i.under.iter().map(|l| l.line.text.trim()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn nested_items_count_and_lines_go_to_the_item_above() {
        let src = "- [ ] parent\n  @emit a\n  - [X] child\n    @emit b\n- [ ] next\n";
        assert_eq!(
            items(src),
            vec![
                (false, "parent", vec!["@emit a"]),
                (true, "child", vec!["@emit b"]),
                (false, "next", vec![]),
            ]
        );
    }

    #[test]
    fn only_a_dash_and_one_space_make_an_item() {
        let src = "* [ ] a\n+ [ ] b\n1. [ ] c\n-  [ ] d\n> - [ ] e\n- [ ]f\n\t - [x] g\n-[ ] h\n- [y] i\n";
        assert_eq!(
            items(src),
            vec![(false, "f", vec![]), (true, "g", vec!["-[ ] h", "- [y] i"]),]
        );
        assert_eq!(scan(src).before_first.len(), 5);
    }

    #[test]
    fn one_whitespace_character_after_the_box_is_eaten() {
        assert_eq!(items("- [ ]  two")[0].1, " two");
        assert_eq!(items("- [ ]\u{a0}nbsp")[0].1, "nbsp");
        assert_eq!(items("- [ ]")[0].1, "");
    }

    #[test]
    fn a_line_terminator_inside_the_text_is_no_item() {
        assert!(items("- [ ] a\u{2028}b\n").is_empty());
        assert!(items("- [ ] a\rb\n").is_empty());
        assert_eq!(items("- [ ]\u{2028}ab\n")[0].1, "ab");
    }

    #[test]
    fn fences_and_comments_are_nobodys() {
        let src = "- [ ] real\n\n```leopold-amend\n- [ ] proposed\n  @on fail -> 1\n```\n<!-- - [ ] x\n- [ ] y -->\n<!-- one line -->\n  @emit k\n";
        assert_eq!(items(src), vec![(false, "real", vec!["@emit k"])]);
        let tilde = "~~~~\n- [ ] no\n~~~\n- [ ] still no\n~~~~\n- [ ] yes\n";
        assert_eq!(items(tilde), vec![(false, "yes", vec![])]);
        // Backticks after the opening run: inline code, not a fence.
        assert_eq!(items("```a`\n- [ ] yes\n").len(), 1);
    }

    #[test]
    fn crlf_lines_lose_their_carriage_return() {
        assert_eq!(
            items("- [ ] a\r\n      @emit x\r\n"),
            vec![(false, "a", vec!["@emit x"])]
        );
    }

    #[test]
    fn continuation_is_indented_prose_before_any_blank_line() {
        let s = scan("- [ ] a\n  more\nlazy\n  after lazy\n\n  after blank\n");
        let flags: Vec<bool> = s.items[0].under.iter().map(|l| l.continuation).collect();
        assert_eq!(flags, vec![true, false, false, false]);
    }
}
