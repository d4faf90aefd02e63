//! A fast path for the frontmatter nearly every note has: one `key: value`
//! per line, values plain words, whole numbers or flat `[a, b]` lists.
//!
//! Parsing a 200-byte block with the full YAML parser costs more than the
//! rest of the note together (the 10,000-note benchmark spent half its time
//! there). This reader accepts only a subset that is surely valid YAML. For
//! the keys planvault interprets it returns exactly the `Value` `yaml_serde`
//! would, and gives up when unsure (`yes`, `012`, quotes, nesting...); other
//! keys are kept as raw text anyway, so their values only need to be valid
//! and come back as plain strings. Anything else returns `None` and goes to
//! `yaml_serde`. A property test checks the agreement.

use super::frontmatter::{Entry, Knobs};
use crate::{NodeKind, Status};
use rustc_hash::FxBuildHasher;
use std::collections::HashSet;
use yaml_serde::Value;

/// Words YAML might resolve to something other than a string, in this
/// dialect or a neighbouring one: never taken on the fast path (refused by
/// [`is_unambiguous`]; a test holds it to this list).
#[cfg(test)]
const AMBIGUOUS: [&str; 22] = [
    "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y", "yes",
    "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON",
];

/// Byte classes for the scans: one table lookup a byte, and a value's
/// classes are the AND of its bytes' (see [`classes`]).
const KEY_CHAR: u8 = 1; // [A-Za-z0-9_-]
const WORD_CHAR: u8 = 2; // [A-Za-z0-9_./-]
const WORD_OR_SPACE: u8 = 4; // a word character or a space
const UNTYPED_CHAR: u8 = 8; // a word character, `+` or a space
const VALUE_CHAR: u8 = 16; // printable ASCII but `#`

static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let alnum = c.is_ascii_alphanumeric();
        let word = alnum || matches!(c, b'_' | b'-' | b'.' | b'/');
        let mut class = 0;
        if alnum || matches!(c, b'_' | b'-') {
            class |= KEY_CHAR;
        }
        if word {
            class |= WORD_CHAR | WORD_OR_SPACE | UNTYPED_CHAR;
        }
        if c == b' ' {
            class |= WORD_OR_SPACE | UNTYPED_CHAR;
        }
        if c == b'+' {
            class |= UNTYPED_CHAR;
        }
        if c >= b' ' && c <= b'~' && c != b'#' {
            class |= VALUE_CHAR;
        }
        table[b] = class;
        b += 1;
    }
    table
};

/// The classes every byte of `text` has.
fn classes(text: &[u8]) -> u8 {
    text.iter().fold(u8::MAX, |all, &b| all & CLASS[b as usize])
}

/// A plain word: ASCII letter or `_` first, then letters, digits, `_-./`
/// and (`allow_space`) inner spaces, never one of the ambiguous words.
fn is_plain_word(text: &[u8], allow_space: bool) -> bool {
    is_plain_word_of(text, classes(text), allow_space)
}

/// [`is_plain_word`] with `text`'s [`classes`] known.
fn is_plain_word_of(text: &[u8], classes: u8, allow_space: bool) -> bool {
    let Some(&first) = text.first() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == b'_')
        && classes & (if allow_space { WORD_OR_SPACE } else { WORD_CHAR }) != 0
        && text.last() != Some(&b' ')
        // The ambiguous words are all five letters or shorter.
        && (text.len() > 5 || is_unambiguous(text))
}

fn is_unambiguous(text: &[u8]) -> bool {
    // `AMBIGUOUS` as a `match` (a length switch and word compares; a test
    // holds the two equal): asked for most keys and short values.
    !matches!(
        text,
        b"null"
            | b"Null"
            | b"NULL"
            | b"true"
            | b"True"
            | b"TRUE"
            | b"false"
            | b"False"
            | b"FALSE"
            | b"y"
            | b"Y"
            | b"yes"
            | b"Yes"
            | b"YES"
            | b"n"
            | b"N"
            | b"no"
            | b"No"
            | b"NO"
            | b"on"
            | b"On"
            | b"ON"
            | b"off"
            | b"Off"
            | b"OFF"
    )
}

/// A value the fast path is sure about. `text` is ASCII (the caller checked).
fn scalar(text: &str, allow_space: bool) -> Option<Value> {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Some(Value::Null);
    }
    if bytes.iter().all(u8::is_ascii_digit) {
        // `0` or no leading zero: `012` is left to the real parser.
        if bytes.len() > 1 && bytes[0] == b'0' {
            return None;
        }
        return text.parse::<u64>().ok().map(|n| Value::Number(n.into()));
    }
    is_plain_word(bytes, allow_space).then(|| Value::String(text.to_string()))
}

/// A plain scalar that is valid YAML whatever type it resolves to (a date,
/// a version, a number): for keys whose value is never interpreted.
fn untyped(text: &[u8]) -> bool {
    let Some(&first) = text.first() else {
        return false;
    };
    (first.is_ascii_alphanumeric() || first == b'_')
        && classes(text) & UNTYPED_CHAR != 0
        && text.last() != Some(&b' ')
}

/// `text` without spaces at either end (the fast path's values are ASCII
/// without control characters, so spaces are all the whitespace there is).
/// Byte by byte: `trim_matches(' ')` runs a char searcher per call.
fn trim_spaces(text: &str) -> &str {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut end = bytes.len();
    while start < end && bytes[start] == b' ' {
        start += 1;
    }
    while end > start && bytes[end - 1] == b' ' {
        end -= 1;
    }
    &text[start..end]
}

/// The items of a flow list's inside (`a, b` of `[a, b]`), spaces trimmed.
/// (`str::split` by a char runs a searcher per item; these lists are a few
/// short ASCII words.)
fn list_items(inner: &str) -> impl Iterator<Item = &str> {
    let bytes = inner.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start > bytes.len() {
            return None;
        }
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b',')
            .map_or(bytes.len(), |at| start + at);
        let item = trim_spaces(&inner[start..end]);
        start = end + 1;
        Some(item)
    })
}

/// Whether a line the key scan did not take is blank or a comment: skipped,
/// as YAML skips it. Anything else there (indentation, a quoted key, a list)
/// is for the real parser. Only spaces count as blank: YAML's whitespace is
/// spaces and tabs, and a tab opening a block line is an error to libyaml.
#[cold]
fn is_blank_or_comment(line: &str) -> bool {
    let content = line.trim_start_matches(' ');
    content.is_empty() || (content.starts_with('#') && is_comment_text(content))
}

/// Whether a comment (from its `#` to the line's end, the `\r` of a `\r\n`
/// excluded) holds only what the YAML reader accepts as one comment.
/// libyaml refuses control characters anywhere, comments included (C0 but
/// tab, DEL, C1, U+FFFE, U+FFFF), and breaks lines at a lone `\r`, U+0085,
/// U+2028 and U+2029, which the line scan does not: such a block is the
/// parser's. (Keys and values are printable ASCII already.)
#[cold]
fn is_comment_text(comment: &str) -> bool {
    let ascii_fine = comment
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80);
    ascii_fine
        && (comment.is_ascii()
            || !comment.chars().any(|c| {
                matches!(
                    c,
                    '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
                )
            }))
}

/// Read `yaml` if it lies inside the simple subset: its keys in order, with
/// the exact value of each key in `typed` (`None` for the others, which are
/// only checked to be valid).
///
/// One pass over each line's bytes: the key (`[A-Za-z_][A-Za-z0-9_-]*`),
/// `:` and spaces, the value up to a ` #` comment; a byte outside printable
/// ASCII (a tab among them) before the comment leaves the block to the parser.
pub fn parse<'a>(yaml: &'a str, typed: &[&str]) -> Option<Vec<(Entry<'a>, Option<Value>)>> {
    let bytes = yaml.as_bytes();
    let mut found: Vec<(Entry<'a>, Option<Value>)> = Vec::with_capacity(8);
    // The keys so far, for the duplicate check: a set, so a block of many
    // keys stays linear (it allocates only once a key is in it).
    let mut keys: HashSet<&str, FxBuildHasher> = HashSet::default();
    let mut start = 0;
    let mut index = 0u32;
    while start < bytes.len() {
        let line_offset = start;
        let line_index = index;
        let newline = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
        start = newline + 1;
        index += 1;
        let end = if newline > line_offset && bytes[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        let line = &bytes[line_offset..end];

        let Some(&first) = line.first() else { continue };
        if !(first.is_ascii_alphabetic() || first == b'_') {
            if is_blank_or_comment(&yaml[line_offset..end]) {
                continue;
            }
            return None;
        }
        let mut at = 1;
        while at < line.len() && CLASS[line[at] as usize] & KEY_CHAR != 0 {
            at += 1;
        }
        if line.get(at) != Some(&b':') {
            return None;
        }
        let colon = at;
        at += 1;
        if at < line.len() && line[at] != b' ' {
            return None;
        }
        while at < line.len() && line[at] == b' ' {
            at += 1;
        }
        let value_start = at;
        if line.get(value_start) == Some(&b'#') {
            return None;
        }
        // The value runs to a `#` after a space (a comment) or the line's end.
        let mut value_end = line.len();
        while at < line.len() {
            let byte = line[at];
            if byte == b'#' && line[at - 1] == b' ' {
                if !is_comment_text(&yaml[line_offset + at..end]) {
                    return None;
                }
                value_end = at;
                break;
            }
            if !(b' '..=b'~').contains(&byte) {
                return None;
            }
            at += 1;
        }
        while value_end > value_start && line[value_end - 1] == b' ' {
            value_end -= 1;
        }
        // Checked ASCII above, so these are character boundaries.
        let key = &yaml[line_offset..line_offset + colon];
        let value = &yaml[line_offset + value_start..line_offset + value_end];
        // A key YAML may read as null or a boolean (`TRUE:`) is no name; a
        // knob in other letters (`Type:`) is the checks' to name.
        if !keys.insert(key)
            || (key.len() <= 5 && !is_unambiguous(key.as_bytes()))
            || super::frontmatter::knob_in_other_case(key).is_some()
        {
            return None;
        }
        let entry = Entry {
            key,
            raw: &yaml[line_offset..end],
            offset: line_offset,
            line: line_index,
            // The subset is ASCII: bytes are characters.
            value_column: if value.is_empty() {
                1
            } else {
                value_start as u32 + 1
            },
            inline_value: value,
            value_offset: line_offset + value_start,
        };
        if !typed.contains(&key) {
            if !is_untyped_value(value) {
                return None;
            }
            found.push((entry, None));
            continue;
        }
        let parsed = if let Some(inner) = value.strip_prefix('[') {
            let inner = inner.strip_suffix(']')?;
            if trim_spaces(inner).is_empty() {
                Value::Sequence(Vec::new())
            } else {
                let mut items = Vec::with_capacity(4);
                for item in list_items(inner) {
                    match scalar(item, true)? {
                        Value::Null => return None,
                        v => items.push(v),
                    }
                }
                Value::Sequence(items)
            }
        } else {
            scalar(value, true)?
        };
        found.push((entry, Some(parsed)));
    }
    Some(found)
}

/// The knobs of a block in the commonest form of all, set straight from
/// its text in one pass: every line `key: value` with `\n` breaks, values
/// printable ASCII without `#`, and every knob's value one it accepts.
/// `None` as soon as anything needs a closer look (a blank or comment line,
/// a `\r`, a value a knob refuses, a key given twice, more than
/// `MAX_OTHER_KEYS` other keys): [`parse`] and the knob checks read the
/// block then, with their messages. When it answers, the answer is what
/// they give, without diagnostics (a property test holds the two equal).
///
/// Building [`parse`]'s entries and values, then applying them, cost ~10 ms
/// of the npm package's ~44 ms `parseVault` of the 10,000-note benchmark
/// vault, against ~1.5 ms for scanning the blocks' lines alone.
pub fn read_plain_knobs(yaml: &str, keep_unknown_keys: bool) -> Option<Knobs> {
    /// Other keys remembered for the duplicate check.
    const MAX_OTHER_KEYS: usize = 16;
    let bytes = yaml.as_bytes();
    let mut knobs = Knobs::default();
    let mut seen_known = 0u8;
    let mut others: [&str; MAX_OTHER_KEYS] = [""; MAX_OTHER_KEYS];
    let mut other_count = 0;
    // One pass over the bytes: a line's break is found by the value scan.
    let mut at = 0;
    while at < bytes.len() {
        let line_start = at;
        let first = bytes[at];
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return None;
        }
        at += 1;
        while at < bytes.len() && CLASS[bytes[at] as usize] & KEY_CHAR != 0 {
            at += 1;
        }
        let colon = at;
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        at += 1;
        if at < bytes.len() && !matches!(bytes[at], b' ' | b'\n') {
            return None;
        }
        while at < bytes.len() && bytes[at] == b' ' {
            at += 1;
        }
        let value_start = at;
        let mut value_classes = u8::MAX;
        while at < bytes.len() && bytes[at] != b'\n' {
            value_classes &= CLASS[bytes[at] as usize];
            at += 1;
        }
        let line_end = at;
        at += 1;
        if value_classes & VALUE_CHAR == 0 {
            return None;
        }
        let mut value_end = line_end;
        while value_end > value_start && bytes[value_end - 1] == b' ' {
            value_end -= 1;
        }
        // Checked ASCII above, so these are character boundaries.
        let key = &yaml[line_start..colon];
        let value = &yaml[value_start..value_end];
        let known = match key {
            "type" => 0,
            "status" => 1,
            "tools" => 2,
            "role" => 3,
            "max_visits" => 4,
            _ => {
                if (key.len() <= 5 && !is_unambiguous(key.as_bytes()))
                    || super::frontmatter::knob_in_other_case(key).is_some()
                    || others[..other_count].contains(&key)
                    || other_count == MAX_OTHER_KEYS
                    || !is_untyped_value_of(value, value_classes)
                {
                    return None;
                }
                others[other_count] = key;
                other_count += 1;
                if keep_unknown_keys {
                    knobs
                        .extra
                        .push((key.to_string(), yaml[line_start..line_end].to_string()));
                }
                continue;
            }
        };
        if seen_known & (1 << known) != 0 {
            return None;
        }
        seen_known |= 1 << known;
        if value.is_empty() {
            continue;
        }
        match known {
            0 => {
                knobs.kind = match value {
                    "start" => NodeKind::Start,
                    "step" => NodeKind::Step,
                    "human" => NodeKind::Human,
                    _ => return None,
                }
            }
            1 => knobs.status = Status::parse(value)?,
            2 => {
                let inner = trim_spaces(value.strip_prefix('[')?.strip_suffix(']')?);
                let mut tools = Vec::new();
                if !inner.is_empty() {
                    for item in list_items(inner) {
                        if !is_plain_word(item.as_bytes(), true) {
                            return None;
                        }
                        tools.push(item.to_string());
                    }
                }
                knobs.tools = tools;
            }
            3 => {
                // The trailing spaces cut from `value` are word-or-space bytes.
                if !is_plain_word_of(value.as_bytes(), value_classes, true) {
                    return None;
                }
                knobs.role = Some(value.to_string());
            }
            _ => {
                // `0` and leading zeros are the checks' to judge.
                if value.starts_with('0') || !value.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                knobs.max_visits = value.parse::<u32>().ok()?;
            }
        }
    }
    Some(knobs)
}

/// A value [`parse`] keeps for a key it does not type: a plain scalar or a
/// flow list of them.
fn is_untyped_value(value: &str) -> bool {
    is_untyped_value_of(value, classes(value.as_bytes()))
}

/// [`is_untyped_value`] with the [`classes`] of `value` (or of `value` with
/// spaces after it) known.
fn is_untyped_value_of(value: &str, classes: u8) -> bool {
    let Some(&first) = value.as_bytes().first() else {
        return true;
    };
    if classes & UNTYPED_CHAR != 0 {
        return (first.is_ascii_alphanumeric() || first == b'_') && !value.ends_with(' ');
    }
    match value.strip_prefix('[') {
        Some(inner) => match inner.strip_suffix(']') {
            Some(inner) => {
                trim_spaces(inner).is_empty()
                    || list_items(inner).all(|item| untyped(item.as_bytes()))
            }
            None => false,
        },
        None => value.is_empty() || untyped(value.as_bytes()),
    }
}

/// Whether a fast-path reading matches `yaml_serde`: same keys in the same
/// order, same values for the typed keys.
#[cfg(test)]
fn compare(yaml: &str, fast: &[(Entry<'_>, Option<Value>)], typed: &[&str]) -> Result<(), String> {
    // Each entry is what the general splitter sees.
    let written = super::frontmatter::entries(yaml);
    for (entry, _) in fast {
        let general = written
            .iter()
            .find(|e| e.key == entry.key)
            .ok_or(format!("{yaml:?}: no entry {}", entry.key))?;
        let same = (
            general.raw,
            general.offset,
            general.line,
            general.value_column,
            general.inline_value,
            general.value_offset,
        ) == (
            entry.raw,
            entry.offset,
            entry.line,
            entry.value_column,
            entry.inline_value,
            entry.value_offset,
        );
        if !same {
            return Err(format!("{yaml:?}: entry {entry:?} vs {general:?}"));
        }
    }
    let full: Value = super::yaml_value::from_str(yaml)
        .map_err(|e| format!("{yaml:?} taken but invalid: {e}"))?;
    let full = full.as_mapping().cloned().unwrap_or_default();
    let full_keys: Vec<&str> = full.keys().filter_map(Value::as_str).collect();
    let fast_keys: Vec<&str> = fast.iter().map(|(e, _)| e.key).collect();
    if full_keys != fast_keys || full.len() != fast.len() {
        return Err(format!("{yaml:?}: keys {fast_keys:?} vs {full_keys:?}"));
    }
    for (entry, value) in fast {
        let key = &entry.key;
        match (typed.contains(key), value) {
            (true, Some(v)) if full.get(*key) == Some(v) => {}
            (false, None) => {}
            _ => {
                return Err(format!(
                    "{yaml:?}: {key} read as {value:?}, yaml_serde says {:?}",
                    full.get(*key)
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPED: &[&str] = &["a", "type", "status", "tools", "role", "max_visits"];

    fn agrees(yaml: &str) -> bool {
        match parse(yaml, TYPED) {
            Some(fast) => {
                if let Err(problem) = compare(yaml, &fast, TYPED) {
                    panic!("{problem}");
                }
                true
            }
            None => false,
        }
    }

    #[test]
    fn the_byte_classes_are_the_predicates() {
        for c in 0..=255u8 {
            let class = CLASS[c as usize];
            let word = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/');
            assert_eq!(
                class & KEY_CHAR != 0,
                c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'),
                "{c}"
            );
            assert_eq!(class & WORD_CHAR != 0, word, "{c}");
            assert_eq!(class & WORD_OR_SPACE != 0, word || c == b' ', "{c}");
            assert_eq!(
                class & UNTYPED_CHAR != 0,
                word || matches!(c, b'+' | b' '),
                "{c}"
            );
            assert_eq!(
                class & VALUE_CHAR != 0,
                (b' '..=b'~').contains(&c) && c != b'#',
                "{c}"
            );
        }
        assert_eq!(trim_spaces("  a b  "), "a b");
        assert_eq!(trim_spaces("   "), "");
    }

    #[test]
    fn the_ambiguous_words_and_only_they_are_refused() {
        for word in AMBIGUOUS
            .iter()
            .map(|w| w.as_bytes())
            .chain([&b"off"[..], b"Off", b"OFF"])
        {
            assert!(!is_unambiguous(word), "{:?}", std::str::from_utf8(word));
        }
        for word in [
            "step", "start", "nulls", "Nul", "ye", "nO", "oFF", "tRUE", "writer", "", "x",
        ] {
            assert!(is_unambiguous(word.as_bytes()), "{word:?}");
        }
    }

    #[test]
    fn takes_the_common_block() {
        assert!(agrees(
            "type: start\nstatus: pending  # marker\ntools: [fetch_url, search]\nrole: review\nmax_visits: 3\n"
        ));
        assert!(agrees("tools: []\nrole:\n# comment\n\nowner: a b/c.d\n"));
        assert!(agrees("type: step\r\nmax_visits: 0\r\n"));
    }

    #[test]
    fn other_keys_only_need_to_be_valid() {
        let yaml = "created: 2026-11-30\nversion: 1.2.3\nflag: yes\ntags: [a, 2026]\n";
        assert!(agrees(yaml));
        assert!(parse("created: 12:30\n", TYPED).is_none());
        assert!(parse("max_visits: 012\n", TYPED).is_none());
    }

    /// Regression: an unknown key's integer beyond `u64` was taken here but
    /// refused by the parser (yaml_serde's `Value` cannot hold it), so the
    /// same entry was an error or not depending on the other lines. Both
    /// ways now read it (`yaml_value`); a knob's huge number is the parser's.
    #[test]
    fn an_integer_beyond_64_bits_reads_alike_both_ways() {
        assert!(agrees("owner: 99999999999999999999\ntags: [a, 18446744073709551616]\nid: 0xFFFFFFFFFFFFFFFFFFFFF\n"));
        assert!(parse("max_visits: 99999999999999999999\n", TYPED).is_none());
    }

    /// Regressions: a control character in a comment, which libyaml
    /// refuses anywhere, was skipped with the comment, and a key such as
    /// `TRUE`, a boolean to YAML, was taken as a name (both found by the
    /// `frontmatter` fuzz target); so were, by libyaml's reader rules, a
    /// tab-indented comment line and a comment running past a lone `\r`,
    /// which YAML reads as a line break.
    #[test]
    fn what_the_yaml_reader_refuses_anywhere_is_left_to_it() {
        for yaml in [
            "owner: me\n # o\0\n",
            "owner: me # \u{7f}\n",
            "owner: me # \u{85}\n",
            "owner: me # \u{2028} x\n",
            "owner: me # \u{ffff}\n",
            "\t# comment\nowner: me\n",
            "\u{a0}# comment\nowner: me\n",
            "owner: me # c\rtype: start\n",
            // A key that reads as a boolean or null.
            "TRUE: x\n",
            "null: x\n",
        ] {
            assert!(parse(yaml, TYPED).is_none(), "{yaml:?} taken");
        }
        assert!(agrees(
            "owner: me # tab\tand é fine\n  # indented comment\n"
        ));
    }

    /// Regression: the fast path trimmed a no-break space next to a value,
    /// which YAML keeps (`role: \u{a0}writer` is the role `\u{a0}writer`).
    #[test]
    fn a_no_break_space_is_part_of_the_value() {
        for yaml in [
            "role: \u{a0}writer\n",
            "role: writer\u{a0}\n",
            "tools: [a,\u{a0}b]\n",
            "owner: x\u{a0}\n",
        ] {
            assert!(
                parse(yaml, TYPED).is_none() || agrees(yaml),
                "{yaml:?} taken"
            );
        }
    }

    /// Regression: each key was compared with every key before it, so a
    /// block of 200,000 keys took minutes; a twice-given key is still found.
    #[test]
    fn a_block_of_many_keys_is_read_in_linear_time() {
        let mut yaml: String = (0..200_000).map(|i| format!("k{i}: v\n")).collect();
        assert_eq!(parse(&yaml, TYPED).map(|found| found.len()), Some(200_000));
        yaml.push_str("k0: again\n");
        assert!(parse(&yaml, TYPED).is_none());
    }

    #[test]
    fn leaves_everything_doubtful_to_the_parser() {
        for yaml in [
            "a: yes\n",
            "a: 012\n",
            "a: 2026-11-30\n",
            "a: 1.5\n",
            "a: \"quoted\"\n",
            "a:\n  - item\n",
            "a: 1\na: 2\n",
            "a: [x, [y]]\n",
            "a: [x,]\n",
            "a: -1\n",
            "a: x: y\n",
            "'k': v\n",
            "a: ~\n",
            "a: .inf\n",
            "a: off\n",
            "a: b #c d\n",
            "a:b\n",
            "- a\n",
        ] {
            assert!(
                parse(yaml, TYPED).is_none() || agrees(yaml),
                "{yaml:?} taken"
            );
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// Half the keys are typed ones, so both paths get exercised.
    const TYPED: &[&str] = &[
        "a",
        "b",
        "c",
        "type",
        "status",
        "tools",
        "role",
        "max_visits",
    ];

    fn line() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            "[a-z_][a-z0-9_-]{0,5}",
            "[abc]",
            "(true|True|TRUE|null|Null|yes|on|n)"
        ];
        let value = prop_oneof![
            "[a-zA-Z0-9_ ./:#-]{0,8}",
            "\\[[a-z0-9_ ,.-]{0,10}\\]",
            prop::sample::select(vec![
                "yes",
                "no",
                "~",
                "null",
                "true",
                "012",
                "0",
                "1e3",
                "-3",
                ".5",
                "a #b",
                "x  # c",
                "2026-11-30",
                "1.5",
                "+1",
                "0x1f",
                "1_000",
                "[1, 2.5, 2026-01-01]",
                "12:30",
                // What the byte scan must hand to the parser, or read as it does.
                "x  ",
                "a\tb",
                "x # c\td",
                "x #c é",
                "\u{a0}x",
                "x\u{a0}",
                "é",
                "x\r",
                "# c",
                "[a,\u{a0}b]",
                "[ a , b ]",
                "a#b",
                // Integers beyond `u64`, which `yaml_value` reads as floats.
                "18446744073709551615",
                "18446744073709551616",
                "99999999999999999999",
                "0xFFFFFFFFFFFFFFFFFFFFF",
                "[1, 99999999999999999999]",
                "340282366920938463463374607431768211456",
                "123456789012345678",
            ])
            .prop_map(str::to_string),
        ];
        // Most lines are `key: value`; some are indented, commented or blank.
        let prefix = prop::sample::select(vec!["", "", "", "", " ", "# ", "\u{a0}", "\t"]);
        (prefix, key, value, prop::bool::ANY).prop_map(|(prefix, k, v, space)| {
            if space {
                format!("{prefix}{k}: {v}")
            } else {
                format!("{prefix}{k}:{v}")
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_fast_path_agrees_with_yaml_serde(lines in prop::collection::vec(line(), 0..6)) {
            let yaml = lines.join("\n");
            if let Some(fast) = parse(&yaml, TYPED) {
                compare(&yaml, &fast, TYPED).map_err(TestCaseError::fail)?;
            }
        }
    }
}
