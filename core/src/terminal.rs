//! Text bound for a terminal: plan text (titles, links, ids, file names) is
//! written by whoever wrote the plan, so a title holding `ESC [2J` would
//! clear the screen and `ESC ]52;c;…` write the clipboard if printed raw.
//! Every human-readable rendering (diagnostics, `graph --ascii`, progress
//! lines) passes through [`escape_controls`] at its edge; JSON output keeps
//! the exact text, JSON-escaped.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as itself: C0 and C1 controls and
/// DEL (escape sequences, bells, carriage returns that overwrite a line),
/// and the bidirectional overrides and isolates that reorder what is shown.
fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character written as a `\u{…}` escape (as
/// Rust's `escape_unicode` writes it); line breaks too unless `keep_newlines`
/// (for text whose lines the renderer made itself). Borrowed when there is
/// nothing to escape.
#[cfg_attr(planvault_size, optimize(size))]
pub fn escape_controls(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    // Every hazard is an ASCII control, or starts with 0xC2 (C1) or 0xE2
    // (the bidi marks) in UTF-8.
    let maybe = |b: &u8| *b < 0x20 || *b == 0x7F || *b == 0xC2 || *b == 0xE2;
    if !text.as_bytes().iter().any(maybe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hazard(c) && !(keep_newlines && c == '\n') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_bidi_marks_are_written_out() {
        let title = "Plan\u{1b}[2J\u{1b}]52;c;ZWNobyBoaQ==\u{7}\r\u{9b}31m \u{202E}txt.exe";
        assert_eq!(
            escape_controls(title, false),
            "Plan\\u{1b}[2J\\u{1b}]52;c;ZWNobyBoaQ==\\u{7}\\u{d}\\u{9b}31m \\u{202e}txt.exe"
        );
        assert_eq!(escape_controls("a\nb\tc", true), "a\nb\\u{9}c");
        assert_eq!(escape_controls("a\nb", false), "a\\u{a}b");
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for text in ["", "Step — ñ “quoted” ✓ ─▶", "C:\\vault\\note.md"] {
            assert!(matches!(escape_controls(text, false), Cow::Borrowed(t) if t == text));
        }
    }
}
