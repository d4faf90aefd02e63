//! How deep a YAML text nests its flow collections (`[` … `]`, `{` … `}`),
//! found in one linear pass before the text goes to the YAML parser.
//!
//! The parser (libyaml's scanner, inside yaml_serde) walks its stack of
//! possible simple keys, one entry per open flow collection, for every
//! token, so a block of `n` nested brackets costs `n²` steps: 100,000 of
//! them take minutes. yaml_serde refuses anything nested deeper than 128
//! levels after parsing anyway, so a block whose flow collections nest
//! deeper than [`MAX_FLOW_DEPTH`] is refused here, before the parser runs,
//! and every block the parser does get costs it at most that many steps a
//! token.
//!
//! The pass follows libyaml's tokenizer where it decides whether a bracket
//! is an indicator: comments, quoted scalars (which may span lines), plain
//! scalars (in block context a `[` inside one is text), tags, anchors, and
//! block scalars (`|`, `>`: their lines are text; where they end needs the
//! block indentation, so the pass keeps libyaml's indentation stack). It
//! never counts fewer open collections than the parser sees on a text the
//! parser accepts up to that point; after a text the parser rejects, it may
//! count anything, which is harmless: that text is an error either way.

/// The deepest flow nesting the YAML parser is given.
pub const MAX_FLOW_DEPTH: usize = 128;

/// The byte offset of the first `[` or `{` that opens a flow collection
/// nested deeper than `limit`, if any.
#[cfg_attr(planvault_size, optimize(size))]
pub fn too_deep_at(yaml: &str, limit: usize) -> Option<usize> {
    // Nothing can nest deeper than the brackets the text has.
    let opens = yaml
        .bytes()
        .filter(|b| matches!(b, b'[' | b'{'))
        .take(limit + 1)
        .count();
    if opens <= limit {
        return None;
    }
    Scan::new(yaml.as_bytes(), limit).run()
}

/// The deepest flow nesting of `yaml` as the scan sees it.
#[cfg(any(test, fuzzing))]
pub(crate) fn max_depth(yaml: &str) -> usize {
    let mut scan = Scan::new(yaml.as_bytes(), usize::MAX);
    scan.run();
    scan.max
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    line_start: usize,
    limit: usize,
    depth: usize,
    /// The deepest nesting seen so far.
    max: usize,
    /// libyaml's block indentation stack (columns), block context only.
    indents: Vec<usize>,
    /// Whether a simple key may start at the next token.
    key_allowed: bool,
    /// Column of the possible simple key on this line, block context.
    key_column: Option<usize>,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Length of the line break at `i` (libyaml's breaks: CR, LF, CRLF, NEL,
/// LS, PS), 0 if none.
fn break_len(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'\r') if b.get(i + 1) == Some(&b'\n') => 2,
        Some(b'\r' | b'\n') => 1,
        Some(0xC2) if b.get(i + 1) == Some(&0x85) => 2,
        Some(0xE2) if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9)) => 3,
        _ => 0,
    }
}

fn is_blankz(b: &[u8], i: usize) -> bool {
    i >= b.len() || is_blank(b[i]) || break_len(b, i) > 0
}

fn is_flow_indicator(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

impl<'a> Scan<'a> {
    fn new(b: &'a [u8], limit: usize) -> Self {
        Scan {
            b,
            i: 0,
            line_start: 0,
            limit,
            depth: 0,
            max: 0,
            indents: Vec::new(),
            key_allowed: true,
            key_column: None,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// The current block indentation (libyaml's `parser.indent`), -1 at
    /// the top.
    fn indent(&self) -> isize {
        self.indents.last().map_or(-1, |&c| c as isize)
    }

    fn roll(&mut self, column: usize) {
        if self.depth == 0 && self.indent() < column as isize {
            self.indents.push(column);
        }
    }

    /// Step over the line break at `self.i` (of length `len`).
    fn new_line(&mut self, len: usize) {
        self.i += len;
        self.line_start = self.i;
        self.key_column = None;
        if self.depth == 0 {
            self.key_allowed = true;
        }
    }

    /// A token that may be a simple key starts at `column`.
    fn key_candidate(&mut self, column: usize) {
        if self.key_allowed && self.depth == 0 {
            self.key_column = Some(column);
        }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn run(&mut self) -> Option<usize> {
        let n = self.b.len();
        loop {
            // To the next token: blanks, comments, line breaks.
            while self.i < n {
                let c = self.b[self.i];
                if is_blank(c) {
                    self.i += 1;
                } else if c == b'#' {
                    while self.i < n && break_len(self.b, self.i) == 0 {
                        self.i += 1;
                    }
                } else {
                    let len = break_len(self.b, self.i);
                    if len == 0 {
                        break;
                    }
                    self.new_line(len);
                }
            }
            if self.i >= n {
                return None;
            }
            let column = self.i - self.line_start;
            if self.depth == 0 {
                while self.indent() > column as isize {
                    self.indents.pop();
                }
            }
            let c = self.b[self.i];
            let next_blankz = is_blankz(self.b, self.i + 1);
            if column == 0
                && (self.b[self.i..].starts_with(b"---") || self.b[self.i..].starts_with(b"..."))
                && is_blankz(self.b, self.i + 3)
            {
                self.indents.clear();
                self.key_allowed = c == b'-';
                self.key_column = None;
                self.i += 3;
                continue;
            }
            match c {
                b'%' if column == 0 => self.skip_to_break(),
                b'[' | b'{' => {
                    self.key_candidate(column);
                    self.depth += 1;
                    self.max = self.max.max(self.depth);
                    if self.depth > self.limit {
                        return Some(self.i);
                    }
                    self.key_allowed = true;
                    self.i += 1;
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.key_allowed = false;
                    self.i += 1;
                }
                b',' => {
                    self.key_allowed = true;
                    self.i += 1;
                }
                b'-' if next_blankz => {
                    self.roll(column);
                    self.key_allowed = true;
                    self.key_column = None;
                    self.i += 1;
                }
                b'?' | b':' if self.depth > 0 || next_blankz => {
                    if self.depth == 0 {
                        let at = match (c, self.key_column) {
                            (b':', Some(key)) => key,
                            _ => column,
                        };
                        self.roll(at);
                    }
                    self.key_allowed = self.depth == 0;
                    self.key_column = None;
                    self.i += 1;
                }
                b'*' | b'&' => {
                    self.key_candidate(column);
                    self.i += 1;
                    while self.at(self.i).is_ascii_alphanumeric()
                        || matches!(self.at(self.i), b'_' | b'-')
                    {
                        self.i += 1;
                    }
                    self.key_allowed = false;
                }
                b'!' => {
                    self.key_candidate(column);
                    self.tag();
                    self.key_allowed = false;
                }
                b'|' | b'>' if self.depth == 0 => {
                    self.block_scalar();
                    self.key_allowed = true;
                    self.key_column = None;
                }
                b'\'' | b'"' => {
                    self.key_candidate(column);
                    self.quoted(c);
                    self.key_allowed = false;
                }
                b'@' | b'`' => return None, // cannot start a token: the parser stops here
                _ => {
                    self.key_candidate(column);
                    let crossed = self.plain();
                    self.key_allowed = crossed;
                }
            }
        }
    }

    fn skip_to_break(&mut self) {
        while self.i < self.b.len() && break_len(self.b, self.i) == 0 {
            self.i += 1;
        }
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn tag(&mut self) {
        self.i += 1;
        if self.at(self.i) == b'<' {
            // Verbatim `!<…>`: brackets and commas are part of it.
            while self.i < self.b.len() && self.b[self.i] != b'>' && !is_blankz(self.b, self.i) {
                self.i += 1;
            }
            if self.at(self.i) == b'>' {
                self.i += 1;
            }
            return;
        }
        while self.at(self.i).is_ascii_alphanumeric()
            || matches!(
                self.at(self.i),
                b'_' | b'-'
                    | b';'
                    | b'/'
                    | b'?'
                    | b':'
                    | b'@'
                    | b'&'
                    | b'='
                    | b'+'
                    | b'$'
                    | b'.'
                    | b'%'
                    | b'!'
                    | b'~'
                    | b'*'
                    | b'\''
                    | b'('
                    | b')'
            )
        {
            self.i += 1;
        }
    }

    /// A quoted scalar from its opening quote to past its closing one (or
    /// the end of the text).
    #[cfg_attr(planvault_size, optimize(size))]
    fn quoted(&mut self, quote: u8) {
        self.i += 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if quote == b'\'' && c == b'\'' {
                if self.at(self.i + 1) == b'\'' {
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                return;
            }
            if quote == b'"' && c == b'"' {
                self.i += 1;
                return;
            }
            if quote == b'"' && c == b'\\' {
                let len = break_len(self.b, self.i + 1);
                if len > 0 {
                    self.i += 1;
                    self.new_line(len);
                } else {
                    self.i += 2;
                }
                continue;
            }
            let len = break_len(self.b, self.i);
            if len > 0 {
                self.new_line(len);
            } else {
                self.i += 1;
            }
        }
    }

    /// A plain scalar, possibly over several lines; whether it ended after
    /// a line break (libyaml then allows a simple key).
    #[cfg_attr(planvault_size, optimize(size))]
    fn plain(&mut self) -> bool {
        let n = self.b.len();
        let min_column = (self.indent() + 1).max(0) as usize;
        let mut crossed = false;
        loop {
            let column = self.i - self.line_start;
            if column == 0
                && (self.b[self.i..].starts_with(b"---") || self.b[self.i..].starts_with(b"..."))
                && is_blankz(self.b, self.i + 3)
            {
                return crossed;
            }
            if self.at(self.i) == b'#' {
                return crossed;
            }
            let start = self.i;
            while !is_blankz(self.b, self.i) {
                let c = self.b[self.i];
                if c == b':' && is_blankz(self.b, self.i + 1) {
                    break;
                }
                if self.depth > 0
                    && (is_flow_indicator(c)
                        // `:` before a flow indicator is an error there.
                        || c == b':' && matches!(self.at(self.i + 1), b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                self.i += 1;
            }
            if self.i == start && !is_blankz(self.b, self.i) {
                return crossed;
            }
            if !is_blankz(self.b, self.i) || self.i >= n {
                return crossed;
            }
            // Blanks and line breaks: the scalar goes on if the next text is
            // indented enough (block context) and is not a comment.
            let mut broke = false;
            while self.i < n {
                if is_blank(self.b[self.i]) {
                    self.i += 1;
                    continue;
                }
                let len = break_len(self.b, self.i);
                if len == 0 {
                    break;
                }
                self.new_line(len);
                broke = true;
            }
            if broke {
                crossed = true;
                // `new_line` reset these as the parser does at a break.
                self.key_allowed = true;
            }
            if self.i >= n {
                return crossed;
            }
            if self.depth == 0 && broke && self.i - self.line_start < min_column {
                return crossed;
            }
        }
    }

    /// A block scalar from its `|` or `>` to past its last text line.
    #[cfg_attr(planvault_size, optimize(size))]
    fn block_scalar(&mut self) {
        let n = self.b.len();
        self.i += 1;
        let mut explicit = 0usize;
        while matches!(self.at(self.i), b'+' | b'-' | b'1'..=b'9') {
            if self.at(self.i).is_ascii_digit() {
                explicit = usize::from(self.at(self.i) - b'0');
            }
            self.i += 1;
        }
        // The rest of the header line: blanks and a comment (anything else
        // is a parser error).
        self.skip_to_break();
        let len = break_len(self.b, self.i);
        if len == 0 {
            return;
        }
        self.new_line(len);
        let parent = self.indent();
        let mut indent = match (explicit, usize::try_from(parent)) {
            (0, _) => 0,
            (n, Ok(parent)) => parent + n,
            (n, Err(_)) => n,
        };
        // Leading blank lines, then each line indented at least `indent`.
        let mut max_indent = 0;
        loop {
            while (indent == 0 || self.i - self.line_start < indent) && self.at(self.i) == b' ' {
                self.i += 1;
            }
            max_indent = max_indent.max(self.i - self.line_start);
            let len = break_len(self.b, self.i);
            if len == 0 {
                break;
            }
            self.new_line(len);
        }
        if indent == 0 {
            indent = max_indent.max((parent + 1).max(1) as usize);
        }
        while self.i < n && self.i - self.line_start == indent {
            self.skip_to_break();
            let len = break_len(self.b, self.i);
            if len == 0 {
                return;
            }
            self.new_line(len);
            while self.i - self.line_start < indent && self.at(self.i) == b' ' {
                self.i += 1;
            }
            while break_len(self.b, self.i) > 0 {
                let len = break_len(self.b, self.i);
                self.new_line(len);
                while self.i - self.line_start < indent && self.at(self.i) == b' ' {
                    self.i += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_brackets_the_parser_sees() {
        for (yaml, depth) in [
            ("a: [[b], {c: [d]}]\n", 3),
            ("a: \"[[[\"\nb: '{{{'\n", 0),
            ("a: x [[[ y\nb: x{{\n", 0),
            ("a: 1 # [[[\n# {{{\n", 0),
            ("a: |\n  [[[\n  \"\nb: [x]\n", 1),
            ("a: >-\n  {{{\n\n   [[\nb: [[x]]\n", 2),
            ("- a: |\n    [[[\n  b: [[[x]]]\n", 3),
            ("a: \"x\n  [[[ \\\" ]]]\"\nb: [y]\n", 1),
            ("a: 'it''s [['\nb: {c: [d]}\n", 2),
            ("a: !t [b, !u [c]]\n", 2),
            ("a: &x [b, *x]\n", 1),
            ("a: [b\n  [c], \"d]\"]\n", 2),
            ("a: [b:c, d]\n", 1),
            ("a: plain\n  continued [[[\nb: [c]\n", 1),
            ("a: [\"x\":[y]]\n", 2),
        ] {
            assert_eq!(max_depth(yaml), depth, "{yaml:?}");
        }
    }

    #[test]
    fn names_the_first_bracket_past_the_limit() {
        let yaml = format!("a: {}{}\n", "[".repeat(5), "]".repeat(5));
        assert_eq!(too_deep_at(&yaml, 5), None);
        assert_eq!(too_deep_at(&yaml, 4), Some(7));
        assert_eq!(too_deep_at("a: \"[[[[[[\"\n", 2), None);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;
    use yaml_serde::Value;

    /// How deep a value nests collections (a scalar is 0).
    fn nesting(value: &Value) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(value, 0)];
        while let Some((value, depth)) = stack.pop() {
            match value {
                Value::Sequence(items) => {
                    deepest = deepest.max(depth + 1);
                    stack.extend(items.iter().map(|v| (v, depth + 1)));
                }
                Value::Mapping(map) => {
                    deepest = deepest.max(depth + 1);
                    for (k, v) in map {
                        stack.push((k, depth + 1));
                        stack.push((v, depth + 1));
                    }
                }
                Value::Tagged(t) => stack.push((&t.value, depth)),
                _ => {}
            }
        }
        deepest
    }

    /// Text that may hide brackets from the parser, or not.
    fn junk() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "[", "]", "{", "}", "\"", "'", "#", " #", ": ", ":", ",", "-", " ", "x", "\\", "|",
                ">", "!", "&", "*",
            ]),
            0..8,
        )
        .prop_map(|parts| parts.concat())
    }

    /// A flow value nesting at most `depth` levels.
    fn flow() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            "[a-z]{1,3}",
            junk().prop_map(|j| format!("\"{}\"", j.replace(['\\', '"'], ""))),
            junk().prop_map(|j| format!("'{}'", j.replace('\'', "''"))),
            Just("!t x".to_string()),
            Just("&a y".to_string()),
        ];
        leaf.prop_recursive(5, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|items| format!("[{}]", items.join(",\n  "))),
                prop::collection::vec(("[a-z]{1,2}", inner), 0..3).prop_map(|items| {
                    let items: Vec<String> =
                        items.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                    format!("{{{}}}", items.join(", "))
                }),
            ]
        })
    }

    /// One top-level entry (or a comment) whose only collections are flow ones.
    fn entry() -> impl Strategy<Value = String> {
        prop_oneof![
            flow(),
            junk().prop_map(|j| format!("|\n  {j}\n  {j}")),
            (junk(), junk()).prop_map(|(a, b)| format!(">-\n\n   {a}\n   {b}")),
            junk().prop_map(|j| format!(
                "\"{}\n  {}\"",
                j.replace(['\\', '"'], ""),
                j.replace(['\\', '"'], "")
            )),
            junk().prop_map(|j| format!("plain {}", j.replace([':', '#'], ""))),
            junk().prop_map(|j| format!("x # {j}")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// On every block the parser reads, the scan sees exactly its flow
        /// nesting: never less (the parser would get a deeper block than the
        /// limit) and never more (a valid block would be refused).
        #[test]
        fn the_scan_depth_is_the_parsed_depth(values in prop::collection::vec(entry(), 1..5)) {
            let yaml: String = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("k{i}: {v}\n"))
                .collect();
            if let Ok(value) = yaml_serde::from_str::<Value>(&yaml) {
                // The block mapping itself is the one level that is not flow.
                prop_assert_eq!(max_depth(&yaml) + 1, nesting(&value).max(1), "{:?}", yaml);
            }
        }
    }
}
