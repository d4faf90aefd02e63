//! Small text helpers shared by the vault modules: BOM, line endings,
//! fenced code, Obsidian's `%%` comments and byte offset → (line, column)
//! conversion.

use std::cell::Cell;

/// The UTF-8 byte order mark some editors put at the start of a file.
pub const BOM: char = '\u{feff}';

/// `text` without a leading BOM, and the BOM's length in bytes (0 or 3).
pub fn strip_bom(text: &str) -> (&str, usize) {
    match text.strip_prefix(BOM) {
        Some(rest) => (rest, BOM.len_utf8()),
        None => (text, 0),
    }
}

/// The line ending a file uses, judged by its first line break.
pub fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// A line without its trailing `\r` (the `\n` is already gone).
pub fn chomp(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// Lines with their byte offsets, the terminator excluded (`\r` kept so the
/// offsets stay exact; use [`chomp`] for the content).
pub fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    lines_inclusive(text).map(|(start, raw)| (start, raw.strip_suffix('\n').unwrap_or(raw)))
}

/// `text.split_inclusive('\n')` with each line's byte offset. The breaks are
/// found with `memchr`, which runs a word or a vector at a time; the std
/// searcher also calls `memcmp` once per line, the loader's hottest loop.
pub fn lines_inclusive(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    let mut breaks = memchr::memchr_iter(b'\n', text.as_bytes());
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = breaks.next().map_or(text.len(), |at| at + 1);
        let line = (start, &text[start..end]);
        start = end;
        Some(line)
    })
}

/// Byte offset → 1-based line and character column, for one text. Lookups
/// come in increasing order (frontmatter, then `## Next` items), so it counts
/// line breaks forward from the last answer instead of indexing every line.
pub struct LineIndex<'a> {
    text: &'a str,
    /// Start of the line of the last lookup, and that line's 0-based number.
    last: Cell<(usize, usize)>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        LineIndex {
            text,
            last: Cell::new((0, 0)),
        }
    }

    /// Tell the index that line `line` (1-based) starts at byte `line_start`,
    /// when the caller has counted lines already: later lookups count from
    /// there instead of from the last one.
    pub fn known_line(&self, line_start: usize, line: u32) {
        debug_assert!(
            line >= 1 && (line_start == 0 || self.text.as_bytes()[line_start - 1] == b'\n')
        );
        debug_assert_eq!(
            memchr::memchr_iter(b'\n', &self.text.as_bytes()[..line_start]).count() + 1,
            line as usize
        );
        self.last.set((line_start, line as usize - 1));
    }

    /// `(line, column)`, both 1-based; the column counts characters and skips
    /// a BOM at the very start of the file.
    pub fn position(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let (mut line_start, mut line) = self.last.get();
        if offset < line_start {
            (line_start, line) = (0, 0);
        }
        let skipped = &self.text.as_bytes()[line_start..offset];
        line += memchr::memchr_iter(b'\n', skipped).count();
        if let Some(last_break) = memchr::memrchr(b'\n', skipped) {
            line_start += last_break + 1;
        }
        self.last.set((line_start, line));
        let prefix = &self.text[line_start..offset];
        let prefix = if line == 0 {
            prefix.strip_prefix(BOM).unwrap_or(prefix)
        } else {
            prefix
        };
        (line as u32 + 1, prefix.chars().count() as u32 + 1)
    }
}

/// Tracks fenced code blocks, in which `#` lines are not headings and
/// wikilinks are not links.
#[derive(Default)]
pub struct Fence {
    open: Option<(char, usize)>,
}

impl Fence {
    /// Feeds one line; `true` when the line belongs to a fence (including
    /// the fence lines themselves).
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn step(&mut self, line: &str) -> bool {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
        match (self.open, marker) {
            // A backtick fence's info string has no backtick (CommonMark):
            // "```a`" opens no fence.
            (None, Some(c))
                if indent <= 3 && run >= 3 && (c == '~' || !trimmed[run..].contains('`')) =>
            {
                self.open = Some((c, run));
                true
            }
            (Some((c, n)), Some(m))
                if m == c && run >= n && indent <= 3 && trimmed[run..].trim().is_empty() =>
            {
                self.open = None;
                true
            }
            (Some(_), _) => true,
            (None, _) => false,
        }
    }
}

/// Obsidian's block comments, whose notes, headings and links Obsidian does
/// not read (its metadata cache gives them a `comment` section): from a line
/// that starts with `%%` (after indentation, outside fenced code) through
/// the next `%%`, or to the end of the text when nothing closes it. A `%%`
/// later in a line is an inline comment, which Obsidian's metadata cache
/// still reads links in, so it is no block.
#[cfg_attr(planvault_size, optimize(size))]
pub fn comment_blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut blocks = Vec::new();
    if !text.contains("%%") {
        return blocks;
    }
    let mut fence = Fence::default();
    let mut in_comment_until = 0;
    for (start, raw) in lines_inclusive(text) {
        if start < in_comment_until {
            continue;
        }
        let line = chomp(raw.strip_suffix('\n').unwrap_or(raw));
        if fence.step(line) {
            continue;
        }
        let content = line.trim_start_matches([' ', '\t']);
        if !content.starts_with("%%") {
            continue;
        }
        let open = start + (line.len() - content.len());
        let end = text[open + 2..]
            .find("%%")
            .map_or(text.len(), |at| open + 2 + at + 2);
        blocks.push(open..end);
        in_comment_until = end;
    }
    blocks
}

/// A heading's text as Obsidian shows it: each `%%…%%` comment closed on
/// its line left out (`Next %% why %%` shows `Next`). A `%%` that nothing
/// closes is text.
#[cfg_attr(planvault_size, optimize(size))]
pub fn without_inline_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("%%") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("%%") {
        let Some(close) = rest[open + 2..].find("%%") else {
            break;
        };
        shown.push_str(&rest[..open]);
        rest = &rest[open + 2 + close + 2..];
    }
    shown.push_str(rest);
    std::borrow::Cow::Owned(shown)
}

/// `text` with its `%%` block comments blanked (every byte but line breaks
/// a space), so a parse of it keeps every offset and sees no structure in
/// a comment.
#[cfg_attr(planvault_size, optimize(size))]
pub fn without_comments(text: &str) -> std::borrow::Cow<'_, str> {
    blank_comments(text, b"\n\r")
}

/// `text` with what its `%%` comments hold blanked but their `%%` marks
/// kept (offsets kept): a parse sees a comment's lines as text, where
/// Obsidian's blocks have them (a comment line ends a list as a
/// paragraph's would), and nothing of what the comment holds.
pub fn comments_as_marks(text: &str) -> std::borrow::Cow<'_, str> {
    blank_comments(text, b"\n\r%")
}

/// `text` with every byte of its `%%` comments a space, but those `kept`.
fn blank_comments<'a>(text: &'a str, kept: &[u8]) -> std::borrow::Cow<'a, str> {
    let blocks = comment_blocks(text);
    if blocks.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    for block in blocks {
        for byte in &mut bytes[block] {
            if !kept.contains(byte) {
                *byte = b' ';
            }
        }
    }
    // A block starts and ends at ASCII `%`, and `kept` is ASCII: no
    // character is cut.
    String::from_utf8(bytes).map_or(std::borrow::Cow::Borrowed(text), std::borrow::Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters_and_skip_the_bom() {
        let text = "\u{feff}ab\r\nçé [[x]]\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(3), (1, 1));
        let link = text.find("[[").unwrap();
        assert_eq!(index.position(link), (2, 4));
        // Out of order lookups start over.
        assert_eq!(index.position(4), (1, 2));
        assert_eq!(index.position(text.len()), (3, 1));
    }

    #[test]
    fn lines_split_like_split_inclusive() {
        for text in ["", "a", "a\n", "\n\n", "a\r\nb", "é\nü\n\nx", "\nlast"] {
            let ours: Vec<(usize, &str)> = lines_inclusive(text).collect();
            let mut offset = 0;
            let std: Vec<(usize, &str)> = text
                .split_inclusive('\n')
                .map(|line| {
                    offset += line.len();
                    (offset - line.len(), line)
                })
                .collect();
            assert_eq!(ours, std, "{text:?}");
        }
    }

    #[test]
    fn line_ending_follows_the_first_break() {
        assert_eq!(line_ending("a\r\nb\n"), "\r\n");
        assert_eq!(line_ending("a\nb\r\n"), "\n");
        assert_eq!(line_ending("no break"), "\n");
    }

    #[test]
    fn fences_open_as_commonmark_opens_them() {
        let fenced = |text: &str| {
            let mut fence = Fence::default();
            text.lines()
                .map(|line| fence.step(line))
                .collect::<Vec<_>>()
        };
        assert_eq!(fenced("```rust\nx\n```\ny"), [true, true, true, false]);
        assert_eq!(fenced("~~~ a`b\nx\n~~~"), [true, true, true]);
        // Found by fuzzing: a backtick in a backtick fence's info string
        // makes the line a paragraph, as pulldown-cmark and Obsidian read it.
        assert_eq!(fenced("```a`\nx"), [false, false]);
        assert_eq!(fenced("    ```\nx"), [false, false]);
    }
}
