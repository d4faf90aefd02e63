//! Byte offsets to 1-based line/column positions: the one place the
//! single-file formats compute positions, so every diagnostic counts columns
//! the same way (in characters) and a look-up costs O(log lines).

use crate::SourcePos;
use std::cell::Cell;

/// Line starts of one text, for offset → (line, column) look-ups.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// The last look-up: `(line, byte offset, column)`. Look-ups mostly move
    /// forward, so counting characters from there keeps a long single-line
    /// file (minified JSON) linear instead of quadratic.
    last: Cell<(usize, usize, usize)>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            text,
            starts,
            last: Cell::new((0, 0, 0)),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let (last_line, last_offset, last_column) = self.last.get();
        let (from, base) = if last_line == line && last_offset <= offset {
            (last_offset, last_column)
        } else {
            (self.starts[line], 0)
        };
        let column = base + self.text.get(from..offset).map_or(0, |s| s.chars().count());
        self.last.set((line, offset, column));
        (line as u32 + 1, column as u32 + 1)
    }

    /// The byte offset of a 1-based line and byte column (serde_json's,
    /// which counts bytes), on a character's start.
    pub(crate) fn offset_of(&self, line: usize, byte_column: usize) -> usize {
        let start = self.starts[line.clamp(1, self.starts.len()) - 1];
        let mut offset = (start + byte_column.saturating_sub(1)).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    pub(crate) fn pos(&self, file: &str, offset: usize) -> SourcePos {
        let (line, column) = self.line_col(offset);
        SourcePos::new(file, line, column)
    }
}

/// Offset of `inner` inside `outer`, when `inner` is a sub-slice of it.
pub(crate) fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_lines_start_at_one() {
        let text = "ab\r\n→x\ny";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(0), (1, 1));
        assert_eq!(index.line_col(4), (2, 1));
        assert_eq!(index.line_col(4 + '→'.len_utf8()), (2, 2));
        assert_eq!(index.line_col(text.len() - 1), (3, 1));
        // Backwards after forwards still counts from the line start.
        assert_eq!(index.line_col(4 + '→'.len_utf8()), (2, 2));
        assert_eq!(index.line_col(4), (2, 1));
    }
}
