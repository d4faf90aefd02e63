//! YAML text for a parsed frontmatter value, byte for byte what
//! `yaml_serde::to_string` writes, without linking yaml_serde's serializer
//! and libyaml's emitter (~14 KB of the npm package's gzipped wasm). Only the
//! rare paths use it: a frontmatter key that is not a name (its message shows
//! the key) and an entry the line split cannot see (a flow mapping).
//!
//! What it reproduces, from yaml_serde 0.10 and libyaml-rs 0.3: yaml_serde's
//! choice of scalar style (a string with a line break asks for a literal
//! block, one that would read back as another type for single quotes) and
//! its tag handling (a tag on a tag, or a one-entry mapping whose first key
//! defers its start again, fails: `None`); libyaml's emitter in block style
//! with a two-space indent, unlimited width (no folding) and unicode output:
//! its scalar analysis, style downgrades, simple-key rule, indentless
//! sequences in mappings, empty collections as `[]`/`{}`, tag shorthands and
//! escapes. The tests compare it with yaml_serde on generated values.
//!
//! Size over speed: nothing here is on a hot path. Recursion follows the
//! value's nesting, which yaml_serde's parser bounds.

use std::borrow::Cow;
use yaml_serde::{Number, Value};

/// `yaml_serde::to_string(value).ok()`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn to_string(value: &Value) -> Option<String> {
    if fails(value, false) {
        return None;
    }
    let mut emitter = Emitter {
        out: String::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        whitespace: true,
        indention: true,
    };
    emitter.node(value, None, false, false);
    // The implicit document end.
    emitter.write_indent();
    Some(emitter.out)
}

/// Where yaml_serde's serializer fails. It defers the start of an untagged
/// one-entry mapping (the entry might be a tag); a first key that defers its
/// own start (a tagged value, another one-entry mapping) loses one start.
/// A tag on a tag is refused.
#[cfg_attr(planvault_size, optimize(size))]
fn fails(value: &Value, tagged: bool) -> bool {
    match value {
        Value::Sequence(items) => items.iter().any(|item| fails(item, false)),
        Value::Mapping(mapping) => {
            let defers = |key: &Value| {
                matches!(key, Value::Tagged(_)) || matches!(key, Value::Mapping(m) if m.len() == 1)
            };
            (mapping.len() == 1 && !tagged && mapping.keys().next().is_some_and(defers))
                || mapping
                    .iter()
                    .any(|(k, v)| fails(k, false) || fails(v, false))
        }
        Value::Tagged(inner) => tagged || fails(&inner.value, true),
        _ => false,
    }
}

/// The scalar style yaml_serde asks for (libyaml may still downgrade it).
#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// A scalar's text and the style yaml_serde asks for; `None` for a collection.
#[cfg_attr(planvault_size, optimize(size))]
fn scalar(value: &Value) -> Option<(Cow<'_, str>, Style)> {
    let plain = |text: String| Some((Cow::Owned(text), Style::Plain));
    match value {
        Value::Null => plain("null".into()),
        Value::Bool(b) => plain(b.to_string()),
        Value::Number(n) => plain(number(n)),
        Value::String(s) => {
            let style = if s.contains('\n') {
                Style::Literal
            } else if reads_as_non_string(s) {
                Style::SingleQuoted
            } else {
                Style::Plain
            };
            Some((Cow::Borrowed(s), style))
        }
        _ => None,
    }
}

/// The tag the serializer writes for a `Tag` (its Display is `!` + the tag
/// without its own `!`; the serializer keeps what follows that first `!`,
/// adding one), as libyaml splits it: the `!` handle and the suffix, or the
/// whole tag verbatim (`!<!>`) when nothing follows the `!`.
struct TagText(String);

impl TagText {
    #[cfg_attr(planvault_size, optimize(size))]
    fn new(tag: &yaml_serde::value::Tag) -> Self {
        TagText(tag.to_string())
    }

    /// `(handle, suffix)`; no handle: verbatim.
    #[cfg_attr(planvault_size, optimize(size))]
    fn split(&self) -> (Option<&str>, &str) {
        let bare = &self.0[1..];
        match bare.strip_prefix('!') {
            Some("") => (None, bare),
            Some(rest) => (Some("!"), rest),
            None => (Some("!"), bare),
        }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn len(&self) -> usize {
        let (handle, suffix) = self.split();
        handle.map_or(0, str::len) + suffix.len()
    }
}

/// itoa for integers; ryu's layout for floats (shortest digits, which
/// `{:e}` also gives), `.inf`, `-.inf`, `.nan`: what `Number`'s own
/// `Display` writes, without linking ryu and its tables (~10 KB gzipped in
/// the npm package), so messages quote numbers through this too.
#[cfg_attr(planvault_size, optimize(size))]
pub(super) fn number(n: &Number) -> String {
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push_str("0.0");
        return out;
    }
    // ryu's digits: the fewest that read back, and of those the closest to
    // the value. Display gives the fewest (never with an exponent), not
    // always the closest (17-digit cases), so the exact expansion (1074
    // places hold every f64) is rounded again to that many digits, half to
    // even. (Display's own formatting is linked already; `{:e}` is not.)
    let count = significant(&f.abs().to_string()).0.len();
    let (exact, exact_point) = significant(&format!("{:.1074}", f.abs()));
    let mut digits: Vec<u8> = exact.as_bytes()[..count].to_vec();
    let rest = &exact.as_bytes()[count..];
    let round_up = match rest.first() {
        Some(b'6'..=b'9') => true,
        Some(b'5') => rest[1..].iter().any(|&d| d != b'0') || digits[count - 1] % 2 == 1,
        _ => false,
    };
    let mut point = exact_point;
    if round_up {
        // Round up, carrying; all nines become 1 and the point moves.
        match digits.iter().rposition(|&d| d != b'9') {
            Some(at) => {
                digits[at] += 1;
                digits.truncate(at + 1);
            }
            None => {
                digits = vec![b'1'];
                point += 1;
            }
        }
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    let digits = String::from_utf8(digits).unwrap_or_default();
    let length = digits.len() as i32;
    if (1..=16).contains(&point) {
        // 1234e7 → 12340000000.0, 1234e-2 → 12.34
        let split = (point.min(length)) as usize;
        out.push_str(&digits[..split]);
        out.extend(std::iter::repeat_n(
            '0',
            (point - point.min(length)) as usize,
        ));
        out.push('.');
        out.push_str(if point >= length {
            "0"
        } else {
            &digits[split..]
        });
    } else if -5 < point && point <= 0 {
        // 1234e-6 → 0.001234
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(&digits);
    } else {
        // 1e30, 1.234e33
        out.push_str(&digits[..1]);
        if length > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push_str(&(point - 1).to_string());
    }
    out
}

/// The significant digits of a plain decimal (no sign, no exponent) and
/// where the point falls: the value is 0.digits × 10^point. Leading zeros
/// go; trailing zeros stay (the caller decides).
#[cfg_attr(planvault_size, optimize(size))]
fn significant(decimal: &str) -> (String, i32) {
    let (int, frac) = decimal.split_once('.').unwrap_or((decimal, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let lead = all.bytes().take_while(|&b| b == b'0').count();
    (
        all[lead..].trim_end_matches('0').to_string(),
        int.len() as i32 - lead as i32,
    )
}

/// Would this text, written plain, read back as null, a boolean or a
/// number? yaml_serde asks its own scalar resolution; reading the text as a
/// document asks the same for every text that can be written plain (the
/// only case where the answer matters: otherwise libyaml quotes it anyway),
/// and the parser is linked already. Digits after a leading zero read as a
/// string but are quoted all the same. (Through `yaml_value`, the reader the
/// frontmatter uses, so `Value`'s own is not linked; an integer too large
/// for `Value` is a number there and an error in `Value`: quoted either way.)
#[cfg_attr(planvault_size, optimize(size))]
fn reads_as_non_string(v: &str) -> bool {
    digits_but_not_number(v)
        || !matches!(super::yaml_value::from_str(v), Ok(Value::String(read)) if read == v)
}

#[cfg_attr(planvault_size, optimize(size))]
fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg_attr(planvault_size, optimize(size))]
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's IS_BLANKZ; the end of the text counts (libyaml's copy ends in NUL).
#[cfg_attr(planvault_size, optimize(size))]
fn is_blankz(c: Option<char>) -> bool {
    c.is_none_or(|c| c == ' ' || c == '\t' || c == '\0' || is_break(c))
}

/// libyaml's IS_PRINTABLE, on characters.
#[cfg_attr(planvault_size, optimize(size))]
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~')
        || (c >= '\u{a0}' && !matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}'))
}

/// libyaml's scalar analysis: which styles can hold the text (the flow
/// style is never needed: only empty collections are written in it).
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

#[cfg_attr(planvault_size, optimize(size))]
fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut edge_space_or_break, mut trailing_space) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let mut chars = value.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_whitespace = is_blankz(next);
        let indicator = if first {
            "#,[]{}&*!|>'\"%@`".contains(c)
                || ((c == '-' || c == '?' || c == ':') && followed_by_whitespace)
        } else {
            (c == ':' && followed_by_whitespace) || (c == '#' && preceded_by_whitespace)
        };
        block_indicators |= indicator;
        special |= !is_printable(c);
        let space = c == ' ';
        let line_break = is_break(c);
        line_breaks |= line_break;
        if space || line_break {
            edge_space_or_break |= first || last;
            trailing_space |= space && last;
            break_space |= space && previous_break;
            space_break |= line_break && previous_space;
        }
        previous_space = space;
        previous_break = line_break;
        preceded_by_whitespace = is_blankz(Some(c));
        first = false;
    }
    let unquotable = break_space || space_break || special;
    Analysis {
        multiline: line_breaks,
        block_plain_allowed: !(edge_space_or_break
            || line_breaks
            || block_indicators
            || unquotable),
        single_quoted_allowed: !unquotable,
        block_allowed: !(trailing_space || space_break || special),
    }
}

/// The state of libyaml's emitter that matters in block style. Collections
/// are written in flow style only when empty, so the flow level is always 0
/// when a scalar is written.
struct Emitter {
    out: String,
    column: usize,
    indent: isize,
    indents: Vec<isize>,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    #[inline(never)]
    #[cfg_attr(planvault_size, optimize(size))]
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    #[inline(never)]
    #[cfg_attr(planvault_size, optimize(size))]
    fn write_break(&mut self, c: char) {
        self.out.push(c);
        self.column = 0;
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn push_indent(&mut self, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = 0;
        } else if !indentless {
            self.indent += 2;
        }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    #[inline(never)]
    #[cfg_attr(planvault_size, optimize(size))]
    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.write_break('\n');
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    #[inline(never)]
    #[cfg_attr(planvault_size, optimize(size))]
    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        indicator.chars().for_each(|c| self.put(c));
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn write_tag(&mut self, tag: &TagText) {
        let (handle, content) = tag.split();
        match handle {
            Some(handle) => self.write_indicator(handle, true, false, false),
            None => self.write_indicator("!<", true, false, false),
        }
        for c in content.chars() {
            if c.is_ascii_alphanumeric() || "-;/?:@&=+$,_.~*'()[]".contains(c) {
                self.put(c);
            } else {
                let mut bytes = [0; 4];
                for b in c.encode_utf8(&mut bytes).bytes() {
                    self.put('%');
                    self.hex(u32::from(b), 2);
                }
            }
        }
        if handle.is_none() {
            self.put('>');
        }
        self.whitespace = false;
        self.indention = false;
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn hex(&mut self, code: u32, width: u32) {
        for digit in (0..width).rev() {
            let d = (code >> (digit * 4)) & 15;
            self.put(char::from_digit(d, 16).unwrap_or('0').to_ascii_uppercase());
        }
    }

    /// libyaml's check: may this key be written `key: value`?
    #[cfg_attr(planvault_size, optimize(size))]
    fn is_simple_key(key: &Value) -> bool {
        let (tag_length, key) = match key {
            Value::Tagged(tagged) => (TagText::new(&tagged.tag).len(), &tagged.value),
            key => (0, key),
        };
        match key {
            Value::Sequence(items) => items.is_empty() && tag_length <= 128,
            Value::Mapping(entries) => entries.is_empty() && tag_length <= 128,
            _ => scalar(key).is_some_and(|(text, _)| {
                !analyze(&text).multiline && tag_length + text.len() <= 128
            }),
        }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn node(
        &mut self,
        value: &Value,
        tag: Option<&TagText>,
        mapping_context: bool,
        simple_key: bool,
    ) {
        if let Value::Tagged(tagged) = value {
            // `fails` has refused a tag on a tag.
            return self.node(
                &tagged.value,
                Some(&TagText::new(&tagged.tag)),
                mapping_context,
                simple_key,
            );
        }
        if let Some(tag) = tag {
            self.write_tag(tag);
        }
        match value {
            Value::Sequence(items) if items.is_empty() => {
                self.write_indicator("[", true, true, false);
                self.write_indicator("]", false, false, false);
            }
            Value::Mapping(entries) if entries.is_empty() => {
                self.write_indicator("{", true, true, false);
                self.write_indicator("}", false, false, false);
            }
            Value::Sequence(items) => {
                self.push_indent(mapping_context && !self.indention);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(item, None, false, false);
                }
                self.pop_indent();
            }
            Value::Mapping(entries) => {
                self.push_indent(false);
                for (key, value) in entries {
                    self.write_indent();
                    if Self::is_simple_key(key) {
                        self.node(key, None, true, true);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.node(key, None, true, false);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(value, None, true, false);
                }
                self.pop_indent();
            }
            _ => {
                let Some((text, style)) = scalar(value) else {
                    return;
                };
                self.scalar(&text, style, simple_key);
            }
        }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn scalar(&mut self, value: &str, mut style: Style, simple_key: bool) {
        let analysis = analyze(value);
        if simple_key && analysis.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain
            && (!analysis.block_plain_allowed || (value.is_empty() && simple_key))
        {
            style = Style::SingleQuoted;
        }
        if style == Style::SingleQuoted && !analysis.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!analysis.block_allowed || simple_key) {
            style = Style::DoubleQuoted;
        }
        // A scalar's own indentation level (flow: 2 at the top).
        self.indents.push(self.indent);
        self.indent = if self.indent < 0 { 2 } else { self.indent + 2 };
        match style {
            Style::Plain => {
                if !self.whitespace && !value.is_empty() {
                    self.put(' ');
                }
                // Plain text has no line breaks (the analysis refuses them).
                value.chars().for_each(|c| self.put(c));
            }
            Style::SingleQuoted => {
                self.write_indicator("'", true, false, false);
                let mut breaks = false;
                for c in value.chars() {
                    if is_break(c) {
                        if !breaks && c == '\n' {
                            self.write_break('\n');
                        }
                        self.write_break(c);
                        self.indention = true;
                        breaks = true;
                    } else if c == ' ' {
                        self.put(c);
                    } else {
                        if breaks {
                            self.write_indent();
                        }
                        if c == '\'' {
                            self.put('\'');
                        }
                        self.put(c);
                        self.indention = false;
                        breaks = false;
                    }
                }
                if breaks {
                    self.write_indent();
                }
                self.write_indicator("'", false, false, false);
            }
            Style::DoubleQuoted => {
                self.write_indicator("\"", true, false, false);
                for c in value.chars() {
                    if is_printable(c) && !is_break(c) && !matches!(c, '\u{feff}' | '"' | '\\') {
                        self.put(c);
                        continue;
                    }
                    self.put('\\');
                    const SHORT: [(char, char); 14] = [
                        ('\0', '0'),
                        ('\u{7}', 'a'),
                        ('\u{8}', 'b'),
                        ('\t', 't'),
                        ('\n', 'n'),
                        ('\u{b}', 'v'),
                        ('\u{c}', 'f'),
                        ('\r', 'r'),
                        ('\u{1b}', 'e'),
                        ('"', '"'),
                        ('\\', '\\'),
                        ('\u{85}', 'N'),
                        ('\u{2028}', 'L'),
                        ('\u{2029}', 'P'),
                    ];
                    match SHORT.iter().find(|(from, _)| *from == c) {
                        Some(&(_, short)) => self.put(short),
                        None => {
                            let code = u32::from(c);
                            let (marker, width) = match code {
                                0..=0xff => ('x', 2),
                                0x100..=0xffff => ('u', 4),
                                _ => ('U', 8),
                            };
                            self.put(marker);
                            self.hex(code, width);
                        }
                    }
                }
                self.write_indicator("\"", false, false, false);
            }
            Style::Literal => {
                self.write_indicator("|", true, false, false);
                // Block scalar hints: an indentation indicator when the text
                // starts with a space or a break, then the chomping indicator.
                if value.starts_with(' ') || value.starts_with(is_break) {
                    self.write_indicator("2", false, false, false);
                }
                let mut tail = value.chars().rev();
                let chomp = match (tail.next(), tail.next()) {
                    (Some(last), _) if !is_break(last) => "-",
                    (Some(_), None) => "+",
                    (Some(_), Some(before)) if is_break(before) => "+",
                    (Some(_), Some(_)) => "",
                    (None, _) => "-",
                };
                self.write_indicator(chomp, false, false, false);
                self.write_break('\n');
                self.indention = true;
                self.whitespace = true;
                let mut breaks = true;
                for c in value.chars() {
                    if is_break(c) {
                        self.write_break(c);
                        self.indention = true;
                        breaks = true;
                    } else {
                        if breaks {
                            self.write_indent();
                        }
                        self.put(c);
                        self.indention = false;
                        breaks = false;
                    }
                }
            }
        }
        if style != Style::Literal {
            self.whitespace = false;
            self.indention = false;
        }
        self.pop_indent();
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use yaml_serde::value::{Tag, TaggedValue};
    use yaml_serde::Mapping;

    fn oracle(value: &Value) -> Option<String> {
        yaml_serde::to_string(value).ok()
    }

    /// Text that exercises every style decision: indicators first and
    /// inside, breaks of each kind, spaces at the edges, quotes, escapes,
    /// non-printables, the BOM, and words that read as other types.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[ a-c0-9:#\\-?'\"!&*|>%@`,\\[\\]{}\t\n\r~.+_\u{0}\u{7}\u{1b}\u{7f}\u{85}\u{a0}\u{2028}\u{2029}\u{feff}\u{fffe}é😀]{0,10}",
            2 => "[a-c ]{0,6}",
            1 => prop::sample::select(vec![
                "", "null", "Null", "NULL", "~", "true", "False", "TRUE", "yes", "no", "0", "00", "012", "-012", "+12", "++1",
                "0x1F", "0x", "-0x1f", "0x+1", "0o17", "-0o7", "0b101", "0b102", "1e5", "1.5", ".5", "5.", "-.inf", ".NaN",
                ".nan", "+.inf", "inf", "nan", "1_000", "---", "...", "--- x", "- x", "-x", "? x", "?x", ": x", ":x", "a: b",
                "a:b", "a #b", "a#b", "#a", "a\n", "a\n\n", "\n", "\na", " a\nb", "a \nb", "a\n b", "a\nb ", "x\r\ny",
                "123456789012345678901234567890", "340282366920938463463374607431768211456", "-170141183460469231731687303715884105729",
            ]).prop_map(String::from),
        ]
    }

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<u64>().prop_map(|n| Value::Number(n.into())),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            any::<u64>().prop_map(|bits| Value::Number(f64::from_bits(bits).into())),
            prop::sample::select(vec![
                0.0,
                -0.0,
                1.0,
                0.1,
                1e15,
                1e16,
                1e-5,
                1e-6,
                1.5e-5,
                123456.789,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                -211995129166929.12
            ])
            .prop_map(|f| Value::Number(f.into())),
        ]
    }

    fn tag() -> impl Strategy<Value = Tag> {
        prop::sample::select(vec![
            "t",
            "!t",
            "!!t",
            "!",
            "!!",
            "a b",
            "é",
            "x%y",
            "tag:yaml.org,2002:str",
            "a/b;c?d:e@f&g=h+i$j,k_l.m~n*o'p(q)r[s]",
        ])
        .prop_map(Tag::new)
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            1 => Just(Value::Null),
            1 => any::<bool>().prop_map(Value::Bool),
            2 => number(),
            6 => text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Sequence),
                prop::collection::vec((inner.clone(), inner.clone()), 0..4)
                    .prop_map(|entries| Value::Mapping(entries.into_iter().collect::<Mapping>())),
                (tag(), inner)
                    .prop_map(|(tag, value)| Value::Tagged(Box::new(TaggedValue { tag, value }))),
            ]
        })
    }

    fn has_tag_or_nan(value: &Value) -> bool {
        match value {
            Value::Tagged(_) => true,
            Value::Number(n) => n.as_f64().is_some_and(f64::is_nan),
            Value::Sequence(items) => items.iter().any(has_tag_or_nan),
            Value::Mapping(m) => m
                .iter()
                .any(|(k, v)| has_tag_or_nan(k) || has_tag_or_nan(v)),
            _ => false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(8000))]

        /// The same bytes as yaml_serde's serializer, and the same failures.
        #[test]
        fn writes_what_yaml_serde_writes(value in value()) {
            prop_assert_eq!(to_string(&value), oracle(&value));
        }

        /// Floats as ryu lays them out (shortest, closest digits).
        #[test]
        fn writes_floats_like_yaml_serde(bits in any::<u64>()) {
            let value = Value::Number(f64::from_bits(bits).into());
            prop_assert_eq!(to_string(&value), oracle(&value));
        }

        /// A number as `Number`'s `Display` writes it (the messages' form).
        #[test]
        fn numbers_read_as_number_displays_them(value in number()) {
            let Value::Number(n) = &value else { return Err(TestCaseError::fail(format!("{value:?}"))) };
            prop_assert_eq!(super::number(n), n.to_string());
        }

        /// As the frontmatter code calls it: one entry under a name.
        #[test]
        fn writes_one_named_entry_like_yaml_serde(key in text(), value in value()) {
            let mut one = Mapping::new();
            one.insert(Value::String(key), value);
            let one = Value::Mapping(one);
            prop_assert_eq!(to_string(&one), oracle(&one));
        }

        /// What it writes reads back as the value (tags and NaN aside,
        /// which do not compare equal after a round trip).
        #[test]
        fn reads_back(value in value()) {
            if let (false, Some(text)) = (has_tag_or_nan(&value), to_string(&value)) {
                let back: Value = yaml_serde::from_str(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
                prop_assert_eq!(back, value, "{:?}", text);
            }
        }
    }

    #[test]
    fn shapes_by_hand() {
        let cases = [
            "a: b",
            "k: [1, 2, {x: y}]",
            "k: {}",
            "? [a, b]\n: c",
            "? {a: 1, b: 2}\n: c",
            "k: !t [a]",
            "k: !t {a: 1}",
            "k: !t {}",
            "k: |\n  two\n  lines\n",
            "k: \"tab\\there\"",
            "- - a\n  - b\n- c: d\n  e: f",
            "1.5: x",
            "~: x",
            "[a, b]: x",
        ];
        for yaml in cases {
            let value: Value = yaml_serde::from_str(yaml).unwrap();
            assert_eq!(to_string(&value), oracle(&value), "{yaml}");
            if let Value::Mapping(m) = &value {
                for (k, _) in m {
                    assert_eq!(to_string(k), oracle(k), "key of {yaml}");
                }
            }
        }
    }
}
