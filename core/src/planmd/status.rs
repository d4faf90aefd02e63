//! A worker's status block, read as Leopold reads it (`parseStatus` in its
//! `packages/driver/src/protocol.ts`), so an item's reply ends the same way
//! in both:
//!
//! - the last fenced ` ```leopold-status ` block is the status, and what
//!   lies outside it is not read; without one, the text from the last
//!   `STATUS:` on (anywhere, in any case: `EXIT_STATUS: 0` counts) is.
//!   Leopold finds it in the upper-cased text and cuts the original there,
//!   so each `ß` or ligature before it (longer in upper case) moves the cut
//!   a character on and the status goes unread; planvault cuts at the
//!   marker;
//! - in it, the first `STATUS:` and the first `SIGNALS:` line count (the
//!   colon may follow spaces, the value may start on the next line);
//! - the status is the first kind its value starts with (`done.` is done;
//!   `ok` and `failed` are no kind: still working), in lower case;
//! - a reply with no `STATUS:` at all has no status ([`parse_status`] is
//!   `None`): the item is not done.
//!
//! Whitespace, trimming and case are JavaScript's, as in the plan's grammar.

use super::items::{js_space, js_trim};

/// What a worker says of its item, in Leopold's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Done,
    NeedsDecision,
    Blocked,
    /// Any other word (`ok`, `failed`, nothing): the item is not done.
    Working,
}

/// A reply's status block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerStatus {
    pub kind: StatusKind,
    /// The `STATUS:` value as written, trimmed (for the trace).
    pub word: String,
    /// The `SIGNALS:` pairs, each key once (the last value wins).
    pub signals: Vec<(String, String)>,
}

const FENCE: &str = "```leopold-status";

/// Read the status block of a worker's reply, or `None` when it has no
/// `STATUS:` at all.
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse_status(text: &str) -> Option<WorkerStatus> {
    let body = last_fence_body(text).or_else(|| from_last_status(text))?;
    let word = field(&body, "STATUS").unwrap_or_default();
    let lower = word.to_lowercase();
    let kind = [
        ("done", StatusKind::Done),
        ("needs-decision", StatusKind::NeedsDecision),
        ("blocked", StatusKind::Blocked),
    ]
    .into_iter()
    .find(|(prefix, _)| lower.starts_with(prefix))
    .map_or(StatusKind::Working, |(_, kind)| kind);
    let signals = parse_signals(&field(&body, "SIGNALS").unwrap_or_default());
    Some(WorkerStatus {
        kind,
        word: word.to_string(),
        signals,
    })
}

/// `/```leopold-status\s*([\s\S]*?)```/gi`, its last match's body.
fn last_fence_body(text: &str) -> Option<String> {
    let mut body = None;
    let mut from = 0;
    while let Some(open) = find_ascii_ci(&text[from..], FENCE).map(|i| from + i) {
        let after = &text[open + FENCE.len()..];
        let inner = after.trim_start_matches(js_space);
        let inner_start = text.len() - inner.len();
        match inner.find("```") {
            Some(close) => {
                body = Some(text[inner_start..inner_start + close].to_string());
                from = inner_start + close + 3;
            }
            // No closing fence after this opening: none after a later one.
            None => break,
        }
    }
    body
}

/// The text from the last `STATUS:`, in any ASCII case, on.
fn from_last_status(text: &str) -> Option<String> {
    let at = text
        .as_bytes()
        .windows(7)
        .rposition(|w| w.eq_ignore_ascii_case(b"STATUS:"))?;
    Some(text[at..].to_string())
}

/// `body.match(/^\s*NAME\s*:\s*(.*)$/im)?.[1].trim()`: the first line (after
/// any blank ones) that starts with `NAME:`; its value may begin on a later
/// line, since `\s` crosses lines. Every line start inside a run of
/// whitespace reads the same, so each run is skipped once (a reply ending
/// in 100,000 blank lines reads in linear time).
fn field(body: &str, name: &str) -> Option<String> {
    let mut start = 0;
    loop {
        let rest = body[start..].trim_start_matches(js_space);
        let at = body.len() - rest.len();
        if let Some(value) = strip_ascii_ci(rest, name)
            .and_then(|r| r.trim_start_matches(js_space).strip_prefix(':'))
        {
            let value = value.trim_start_matches(js_space);
            let line = value.split(is_line_terminator).next().unwrap_or_default();
            return Some(js_trim(line).to_string());
        }
        // The next line start past `at` (`at` is no line end: line ends are
        // whitespace).
        let (end, c) = body[at..]
            .char_indices()
            .find(|&(_, c)| is_line_terminator(c))?;
        start = at + end + c.len_utf8();
    }
}

/// Leopold's `parseSignals`: comma-separated `key=value` (a bare key is
/// `key=true`), one pair of quotes around a value removed, a repeated key
/// keeping its first place and its last value.
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse_signals(raw: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for token in raw.split(',').map(js_trim).filter(|t| !t.is_empty()) {
        let (key, value) = match token.split_once('=') {
            Some((key, value)) => (js_trim(key), unquote(js_trim(value))),
            None => (token, "true"),
        };
        if key.is_empty() {
            continue;
        }
        match out.iter_mut().find(|(k, _)| k == key) {
            Some(pair) => pair.1 = value.to_string(),
            None => out.push((key.to_string(), value.to_string())),
        }
    }
    out
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn strip_ascii_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<(StatusKind, Vec<(String, String)>)> {
        parse_status(text).map(|s| (s.kind, s.signals))
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Each case as Leopold's `parseStatus` reads it (run under Node).
    #[test]
    fn replies_read_as_leopold_reads_them() {
        use StatusKind::*;
        type Case<'a> = (&'a str, Option<(StatusKind, &'a [(&'a str, &'a str)])>);
        let cases: &[Case<'_>] = &[
            ("I implemented it and the tests pass.", None),
            ("STATUS: done", Some((Done, &[]))),
            ("STATUS: done.\n", Some((Done, &[]))),
            ("status:DONE - all good", Some((Done, &[]))),
            ("STATUS: ok", Some((Working, &[]))),
            ("STATUS: completed", Some((Working, &[]))),
            ("STATUS: failed", Some((Working, &[]))),
            ("STATUS: needs-decision", Some((NeedsDecision, &[]))),
            ("STATUS: blocked on review", Some((Blocked, &[]))),
            // No `STATUS:` substring (a space before the colon), no fence.
            ("STATUS :\n  done", None),
            (
                "```leopold-status\nSTATUS :\n  done\n```",
                Some((Done, &[])),
            ),
            ("- STATUS: done", Some((Done, &[]))),
            ("**STATUS:** done", Some((Working, &[]))),
            // The last `STATUS:` is inside `EXIT_STATUS:`: the status read
            // is `0`, no kind.
            (
                "STATUS: done\nEVIDENCE: make test, EXIT_STATUS: 0",
                Some((Working, &[])),
            ),
            (
                "Done.\n```leopold-status\nSTATUS: done\nSIGNALS: mode=fast\n```\nSTATUS: blocked",
                Some((Done, &[("mode", "fast")])),
            ),
            (
                "```leopold-status\nSIGNALS: mode=fast\n```",
                Some((Working, &[("mode", "fast")])),
            ),
            ("STATUS: done\n```leopold-status\n```", Some((Working, &[]))),
            ("SIGNALS: mode=fast\nSTATUS: done", Some((Done, &[]))),
            (
                "STATUS: done\nSIGNALS: mode=slow\nSIGNALS: mode=fast",
                Some((Done, &[("mode", "slow")])),
            ),
            (
                "STATUS: done\nSIGNALS: mode=\"fast\", b='x', c=\", ready, mode=2, =v, none",
                Some((
                    Done,
                    &[
                        ("mode", "2"),
                        ("b", "x"),
                        ("c", "\""),
                        ("ready", "true"),
                        ("none", "true"),
                    ],
                )),
            ),
            ("```LEOPOLD-STATUS\nSTATUS: Done\n```", Some((Done, &[]))),
            ("```leopold-status STATUS: done```", Some((Done, &[]))),
            ("```leopold-status\nSTATUS: done", Some((Done, &[]))),
        ];
        for (text, want) in cases {
            let want = want.map(|(k, s)| (k, pairs(s)));
            assert_eq!(kind(text), want, "{text:?}");
        }
    }

    /// Leopold cuts "Die Größe passt.\nSTATUS: done" one character past
    /// the marker ("TATUS: done": not done); planvault reads it as written.
    #[test]
    fn a_longer_upper_case_before_the_marker_moves_no_cut() {
        assert_eq!(
            kind("Die Größe passt.\nSTATUS: done"),
            Some((StatusKind::Done, vec![]))
        );
        assert_eq!(kind("xSTATUS: done"), Some((StatusKind::Done, vec![])));
    }

    /// A model stuck emitting newlines until its token limit.
    #[test]
    fn a_reply_ending_in_many_blank_lines_reads_in_linear_time() {
        let text = format!("STATUS: done\n{}", "\n \r\n".repeat(200_000));
        assert_eq!(kind(&text), Some((StatusKind::Done, vec![])));
        let text = format!("{}STATUS: blocked\nSIGNALS: a=1", "\n".repeat(200_000));
        assert_eq!(
            kind(&text),
            Some((StatusKind::Blocked, pairs(&[("a", "1")])))
        );
    }

    #[test]
    fn js_whitespace_and_line_ends() {
        assert_eq!(
            kind("\u{feff}STATUS:\u{a0}done"),
            Some((StatusKind::Done, vec![]))
        );
        assert_eq!(
            kind("intro\u{2028}STATUS: blocked"),
            Some((StatusKind::Blocked, vec![]))
        );
        // U+0085 is no space to JavaScript.
        assert_eq!(
            kind("```leopold-status\n\u{85}STATUS: done\n```"),
            Some((StatusKind::Working, vec![]))
        );
    }
}
