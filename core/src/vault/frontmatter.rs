//! A note's YAML frontmatter: where the block is, its top-level entries as
//! written, and the execution knobs read from it.
//!
//! Dialect: YAML 1.2 as `yaml_serde` reads it (`yes` is a string, and so is
//! `012`: never octal). Only a block that opens on the file's first line counts,
//! as in Obsidian. The block is split into top-level entries by text first, so
//! every diagnostic names the key's own line and unknown keys can be carried
//! back byte for byte; the values themselves come from the YAML parser.

use super::text::{chomp, lines_with_offsets};
use super::yaml_depth::{too_deep_at, MAX_FLOW_DEPTH};
use crate::{Code, Diagnostic, NodeKind, Status, DEFAULT_MAX_VISITS};
use yaml_serde::Value;

/// A closed `---` … `---` block at the top of a note.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    /// The YAML between the fences.
    pub yaml: &'a str,
    /// Byte offset of `yaml` in the (BOM-less) note text.
    pub yaml_offset: usize,
    /// Byte offset where the closing fence line starts.
    pub close_offset: usize,
    /// Byte offset where the note body starts (after the closing fence line).
    pub body_offset: usize,
}

/// How a note begins.
#[derive(Debug, Clone, Copy)]
pub enum Split<'a> {
    /// No frontmatter: the body is the whole text.
    Absent,
    Closed(Block<'a>),
    /// An opening fence with no closing one: reported, and the text after the
    /// opening line is read as the body.
    Unclosed {
        body_offset: usize,
    },
}

fn is_fence(line: &str) -> bool {
    // Most lines fail on their first byte, before any trimming.
    line.starts_with("---") && chomp(line).trim_end() == "---"
}

/// Whether a note opens a block: exactly `---` and a line break, as both of
/// Obsidian's readers require (`--- ` opens none; a closing fence may
/// carry trailing spaces, as its metadata cache allows).
fn opens_block(text: &str, first_end: usize) -> bool {
    first_end < text.len() && chomp(&text[..first_end]) == "---"
}

/// Every property of a frontmatter block as the loader's YAML reader reads
/// it (what Obsidian's Properties view shows), for the tests that compare
/// the two readings; the loader itself reads only the knobs.
#[doc(hidden)]
pub fn properties(yaml: &str) -> Result<Value, String> {
    super::yaml_value::from_str(yaml).map_err(|e| e.to_string())
}

/// Find the frontmatter block of a BOM-less note text.
pub fn split(text: &str) -> Split<'_> {
    let bytes = text.as_bytes();
    let first_end = memchr::memchr(b'\n', bytes).unwrap_or(text.len());
    if !opens_block(text, first_end) {
        return Split::Absent;
    }
    let yaml_offset = (first_end + 1).min(text.len());
    // Only a line starting with `---` can close the block: look at the
    // bytes after each line break, not at every line.
    let mut breaks =
        memchr::memchr_iter(b'\n', &bytes[yaml_offset..]).map(|at| yaml_offset + at + 1);
    let mut offset = yaml_offset;
    while offset < text.len() {
        let next = breaks.next();
        if bytes[offset..].starts_with(b"---") {
            let line = &text[offset..next.map_or(text.len(), |start| start - 1)];
            if is_fence(line) {
                let body_offset = (offset + line.len() + 1).min(text.len());
                return Split::Closed(Block {
                    yaml: &text[yaml_offset..offset],
                    yaml_offset,
                    close_offset: offset,
                    body_offset,
                });
            }
        }
        let Some(start) = next else { break };
        offset = start;
    }
    Split::Unclosed {
        body_offset: yaml_offset,
    }
}

/// One top-level `key: value` entry as written, with its continuation lines.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub key: &'a str,
    /// The entry's text from its key to its last non-blank line.
    pub raw: &'a str,
    /// Byte offset of the entry in the YAML text.
    pub offset: usize,
    /// 0-based line of the key within the YAML text.
    pub line: u32,
    /// 1-based character column where the value starts on the key line (the
    /// key's column when the value sits on the following lines).
    pub value_column: u32,
    /// The value as written on the key line, comment excluded.
    pub inline_value: &'a str,
    /// Byte offset of `inline_value` in the YAML text.
    pub value_offset: usize,
}

/// The key a top-level line starts, and the byte length of `key:`; `None`
/// for continuation lines, comments and blank lines.
fn entry_key(line: &str) -> Option<(&str, usize)> {
    let first = line.chars().next()?;
    if matches!(first, ' ' | '\t' | '#' | '-' | '}' | ']' | '?' | '\r') {
        return None;
    }
    if first == '"' || first == '\'' {
        let close = line[1..].find(first)? + 1;
        let rest = &line[close + 1..];
        let after = rest.strip_prefix(':')?;
        if !(after.is_empty() || after.starts_with([' ', '\t', '\r'])) {
            return None;
        }
        return Some((&line[1..close], close + 2));
    }
    let bytes = line.as_bytes();
    let colon = (1..bytes.len()).find(|&i| {
        bytes[i] == b':' && (i + 1 == bytes.len() || matches!(bytes[i + 1], b' ' | b'\t' | b'\r'))
    })?;
    Some((line[..colon].trim_end(), colon + 1))
}

/// Split the YAML text into its top-level entries, in file order.
pub fn entries(yaml: &str) -> Vec<Entry<'_>> {
    let mut found: Vec<Entry<'_>> = Vec::new();
    // End of the last non-blank, non-comment line of the open entry.
    let mut open_end = 0;
    for (index, (offset, line)) in lines_with_offsets(yaml).enumerate() {
        let content = chomp(line);
        if let Some((key, key_len)) = entry_key(content) {
            if let Some(last) = found.last_mut() {
                last.raw = &yaml[last.offset..open_end];
            }
            let after = &content[key_len..];
            let value_start = key_len + (after.len() - after.trim_start().len());
            let inline = strip_comment(&content[value_start..]);
            let value_column = if inline.is_empty() {
                1
            } else {
                content[..value_start].chars().count() as u32 + 1
            };
            found.push(Entry {
                key,
                raw: "",
                offset,
                line: index as u32,
                value_column,
                inline_value: inline,
                value_offset: offset + value_start,
            });
            open_end = offset + content.len();
        } else if !content.trim().is_empty() && !content.trim_start().starts_with('#') {
            open_end = offset + content.len();
        }
    }
    if let Some(last) = found.last_mut() {
        last.raw = &yaml[last.offset..open_end];
    }
    found
}

/// A plain value without its trailing ` # comment`.
pub(super) fn strip_comment(value: &str) -> &str {
    if let Some(quote) = value.chars().next().filter(|c| *c == '"' || *c == '\'') {
        return match value[1..].find(quote) {
            Some(close) => &value[..close + 2],
            None => value.trim_end(),
        };
    }
    // A `#` where the value would begin is a comment's, whatever follows.
    if value.starts_with('#') {
        return "";
    }
    match value.find(" #").or_else(|| value.find("\t#")) {
        Some(i) => value[..i].trim_end(),
        None => value.trim_end(),
    }
}

/// The execution knobs of one note (seed 000), defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    pub kind: NodeKind,
    pub status: Status,
    pub tools: Vec<String>,
    pub role: Option<String>,
    pub max_visits: u32,
    /// Keys planvault does not interpret, with their raw entry text.
    pub extra: Vec<(String, String)>,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            kind: NodeKind::Step,
            status: Status::Pending,
            tools: Vec::new(),
            role: None,
            max_visits: DEFAULT_MAX_VISITS,
            extra: Vec::new(),
        }
    }
}

/// The keys planvault reads; every other key is carried along untouched.
pub const KNOWN_KEYS: [&str; 5] = ["type", "status", "tools", "role", "max_visits"];

/// Where diagnostics about one note go.
pub struct NoteContext<'a> {
    pub file: &'a str,
    pub node_id: &'a str,
    /// 1-based line of the block's first YAML line in the file.
    pub first_line: u32,
    /// Whether [`Knobs::extra`] is filled (see `note::Detail`).
    pub keep_unknown_keys: bool,
}

impl NoteContext<'_> {
    fn bad(&self, line: u32, column: u32, message: String) -> Diagnostic {
        let mut d = Diagnostic::error(Code::BadFrontmatter, message)
            .in_file(self.file)
            .with_nodes([self.node_id]);
        d.line = Some(line);
        d.column = Some(column);
        d
    }
}

/// Read the knobs of a closed frontmatter block. Broken YAML is reported
/// and each entry that parses on its own is still used, so one typo does not
/// hide the rest of the note.
pub fn read_knobs(yaml: &str, ctx: &NoteContext<'_>, diagnostics: &mut Vec<Diagnostic>) -> Knobs {
    let mut knobs = Knobs::default();
    if yaml.trim().is_empty() {
        return knobs;
    }
    // Nearly every block is plain `key: word` lines with valid knobs: set
    // those straight from the text.
    if let Some(knobs) = super::simple_yaml::read_plain_knobs(yaml, ctx.keep_unknown_keys) {
        return knobs;
    }
    // Most other blocks are still plain lines: read those without the full
    // parser (same values, a fraction of the time).
    if let Some(fast) = super::simple_yaml::parse(yaml, &KNOWN_KEYS) {
        for (entry, value) in fast {
            match value {
                Some(value) => apply(&mut knobs, entry.key, value, Some(&entry), ctx, diagnostics),
                None if ctx.keep_unknown_keys => knobs
                    .extra
                    .push((entry.key.to_string(), normalize_raw(entry.raw))),
                None => {}
            }
        }
        return knobs;
    }
    read_knobs_parsed(yaml, ctx, diagnostics, knobs)
}

/// The rest of [`read_knobs`]: a block the fast path does not take, read
/// by yaml_serde (whose parser dominates the time here, so this glue is
/// compiled for size in the npm package, like the error paths below).
#[cfg_attr(planvault_size, optimize(size))]
#[inline(never)]
fn read_knobs_parsed(
    yaml: &str,
    ctx: &NoteContext<'_>,
    diagnostics: &mut Vec<Diagnostic>,
    mut knobs: Knobs,
) -> Knobs {
    // The fast reads take no such block: their lines are ASCII.
    if let Some(d) = line_separator(yaml, ctx) {
        diagnostics.push(d);
        return knobs;
    }
    let written = entries(yaml);
    if let Some(at) = too_deep_at(yaml, MAX_FLOW_DEPTH) {
        let index = crate::position::LineIndex::new(yaml);
        let (line, column) = index.line_col(at);
        let mut d = Diagnostic::error(
            Code::NestingTooDeep,
            format!(
                "frontmatter nests `[` and `{{` collections deeper than the limit of {MAX_FLOW_DEPTH} levels; the block is not read as YAML"
            ),
        )
        .in_file(ctx.file)
        .with_nodes([ctx.node_id]);
        d.line = Some(ctx.first_line + line - 1);
        d.column = Some(column);
        diagnostics.push(d);
        salvage(&written, ctx, &mut knobs);
        return knobs;
    }
    let parsed = super::yaml_value::from_str(yaml);
    match parsed {
        Ok(Value::Mapping(mapping)) => {
            // Entries by key, the first of each (looked up once a key, so a
            // block of many keys stays linear).
            let mut by_name: std::collections::HashMap<
                &str,
                &Entry<'_>,
                rustc_hash::FxBuildHasher,
            > = Default::default();
            for e in &written {
                by_name.entry(e.key).or_insert(e);
            }
            let mut by_value: Option<std::collections::HashMap<Value, &Entry<'_>>> = None;
            for (key, value) in mapping {
                let Some(key) = key.as_str() else {
                    let text = super::yaml_emit::to_string(&key).unwrap_or_default();
                    // The key's own entry when it is written plainly (`TRUE:`,
                    // `1.5:`); a complex key (`? [a]`) falls back to the block.
                    let entries = by_value.get_or_insert_with(|| {
                        let mut entries = std::collections::HashMap::new();
                        for e in &written {
                            if let Ok(read) = super::yaml_value::from_str(e.key) {
                                entries.entry(read).or_insert(e);
                            }
                        }
                        entries
                    });
                    let entry = entries.get(&key).copied();
                    // A number, a boolean or null is a property name to
                    // Obsidian (`2023: 12 books` is the property "2023"), as
                    // written; no knob has such a name.
                    if matches!(key, Value::Bool(_) | Value::Number(_) | Value::Null) {
                        let name = entry
                            .map_or_else(|| text.trim_end().to_string(), |e| e.key.to_string());
                        apply(&mut knobs, &name, value, entry, ctx, diagnostics);
                        continue;
                    }
                    diagnostics.push(ctx.bad(
                        ctx.first_line + entry.map_or(0, |e| e.line),
                        1,
                        format!("frontmatter key `{}` is not a name", text.trim_end()),
                    ));
                    continue;
                };
                let entry = by_name.get(key).copied();
                apply(&mut knobs, key, value, entry, ctx, diagnostics);
            }
        }
        Ok(Value::Null) => {}
        Ok(other) => {
            diagnostics.push(ctx.bad(
                ctx.first_line,
                1,
                format!(
                    "frontmatter must be `key: value` pairs, found {}",
                    describe(&other)
                ),
            ));
        }
        Err(err) => {
            let mut message = yaml_message(&err);
            let (line, column) = match error_at(&mut message, yaml, &written) {
                Some((line, column)) => (ctx.first_line + line - 1, column),
                None => err.location().map_or((ctx.first_line, 1), |l| {
                    (ctx.first_line + l.line() as u32 - 1, l.column() as u32)
                }),
            };
            diagnostics.push(ctx.bad(
                line,
                column,
                format!("frontmatter is not valid YAML: {message}"),
            ));
            salvage(&written, ctx, &mut knobs);
        }
    }
    knobs
}

/// A character the YAML reader takes for a line end and Obsidian does not
/// (U+2028, U+2029, U+0085: pasted from web pages, invisible in the
/// editor): `# reviewed<U+2028>type: human` would be a human gate here and
/// a comment there. Such a block is not read; the character is named.
#[cfg_attr(planvault_size, optimize(size))]
fn line_separator(yaml: &str, ctx: &NoteContext<'_>) -> Option<Diagnostic> {
    let (at, c) = yaml
        .char_indices()
        .find(|&(_, c)| matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}'))?;
    let (line, column) = crate::position::LineIndex::new(yaml).line_col(at);
    Some(ctx.bad(
        ctx.first_line + line - 1,
        column,
        format!(
            "frontmatter holds U+{:04X}, an invisible line separator: the YAML reader would end the line there and Obsidian does not, so the note would read differently in each; delete it",
            c as u32
        ),
    ))
}

/// The knob `key` spells in other letter cases (`Type`, `STATUS`): Obsidian
/// shows it as that knob's property, planvault reads only the lower case.
pub fn knob_in_other_case(key: &str) -> Option<&'static str> {
    KNOWN_KEYS
        .into_iter()
        .find(|known| key != *known && key.eq_ignore_ascii_case(known))
}

/// A value as a message quotes it: at most 60 characters.
pub(super) fn shown(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Every entry that is valid YAML by itself still counts.
#[cfg_attr(planvault_size, optimize(size))]
fn salvage(written: &[Entry<'_>], ctx: &NoteContext<'_>, knobs: &mut Knobs) {
    for entry in written {
        let one = match too_deep_at(entry.raw, MAX_FLOW_DEPTH) {
            None => super::yaml_value::from_str(entry.raw).ok(),
            Some(_) => None,
        };
        if let Some(Value::Mapping(one)) = one {
            if let Some((_, value)) = one.into_iter().next() {
                apply(knobs, entry.key, value, Some(entry), ctx, &mut Vec::new());
            }
        } else if ctx.keep_unknown_keys && !KNOWN_KEYS.contains(&entry.key) {
            knobs
                .extra
                .push((entry.key.to_string(), normalize_raw(entry.raw)));
        }
    }
}

/// Where in `yaml` (1-based line and column) the error `message` is, when
/// the parser's own location is not it: a duplicate key's second entry
/// (the parser points at the mapping), a control character (the parser
/// gives a byte position in its message, cut from it here).
#[cfg_attr(planvault_size, optimize(size))]
fn error_at(message: &mut String, yaml: &str, written: &[Entry<'_>]) -> Option<(u32, u32)> {
    if let Some(key) = message
        .strip_prefix("duplicate entry with key \"")
        .and_then(|rest| rest.strip_suffix('"'))
    {
        let second = written.iter().filter(|e| e.key == key).nth(1)?;
        return Some((second.line + 1, 1));
    }
    let cut = message.find(" at position ")?;
    let at: usize = message[cut + " at position ".len()..].parse().ok()?;
    if !yaml.is_char_boundary(at.min(yaml.len())) {
        return None;
    }
    let found = crate::position::LineIndex::new(yaml).line_col(at);
    message.truncate(cut);
    Some(found)
}

/// The parser's message without its trailing position (the diagnostic has it).
#[cfg_attr(planvault_size, optimize(size))]
fn yaml_message(err: &yaml_serde::Error) -> String {
    let mut text = err.to_string();
    // Positions inside the message count from the block, not the file; the
    // diagnostic carries the file position instead.
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    while let Some(at) = text.find(" at line ") {
        let rest = &text[at + " at line ".len()..];
        let line_len = digits(rest);
        let Some(column) = rest[line_len..].strip_prefix(" column ") else {
            break;
        };
        let end = at + " at line ".len() + line_len + " column ".len() + digits(column);
        text.replace_range(at..end, "");
    }
    text
}

fn normalize_raw(raw: &str) -> String {
    if memchr::memchr(b'\r', raw.as_bytes()).is_some() {
        raw.replace("\r\n", "\n")
    } else {
        raw.to_string()
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("`{}`", super::yaml_emit::number(n)),
        Value::String(s) => format!("`{}`", shown(s)),
        Value::Sequence(_) => "a list".into(),
        Value::Mapping(_) => "a mapping".into(),
        Value::Tagged(t) => format!("a `{}` tagged value", t.tag),
    }
}

/// Whether a value as written on its key's line is a block scalar's header
/// (`|`, `>-`, `|2+`, a comment after it), the text on the lines below.
fn is_block_indicator(written: &str) -> bool {
    let header = written.split(" #").next().unwrap_or_default().trim();
    header.starts_with(['|', '>'])
        && header[1..]
            .chars()
            .all(|c| matches!(c, '-' | '+' | '1'..='9'))
}

/// A plain scalar this reader takes for a number where YAML 1.2's core
/// schema (Obsidian's) reads text: a binary number, or a signed hex or
/// octal one.
fn yaml_1_1_only_number(written: &str) -> bool {
    let lower = written.trim().to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    unsigned.starts_with("0b")
        || (unsigned.len() < lower.len()
            && unsigned.starts_with(['0'])
            && unsigned[1..].starts_with(['x', 'o']))
}

fn apply(
    knobs: &mut Knobs,
    key: &str,
    value: Value,
    entry: Option<&Entry<'_>>,
    ctx: &NoteContext<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    // Empty text or an empty list is no value, as Obsidian's Properties
    // show it: `type: []` is how a template leaves a list property blank.
    let blank = matches!(&value, Value::String(s) if s.is_empty())
        || matches!(&value, Value::Sequence(items) if items.is_empty());
    let value = match blank && KNOWN_KEYS.contains(&key) {
        true => Value::Null,
        false => value,
    };
    let line = ctx.first_line + entry.map_or(0, |e| e.line);
    let column = entry.map_or(1, |e| e.value_column);
    let found = || match (entry, &value) {
        // `type: |` and the value on the lines under it: the indicator is
        // no value; what it holds is, its line break included.
        (Some(e), Value::String(text)) if is_block_indicator(e.inline_value) => format!(
            "the block text `{}` (a block under the key: write the value on the key's line)",
            shown(text.trim_end())
        ),
        (Some(e), _) if !e.inline_value.is_empty() => format!("`{}`", shown(e.inline_value)),
        _ => describe(&value),
    };
    let mut bad = |message: String| diagnostics.push(ctx.bad(line, column, message));
    match key {
        "type" => match value {
            Value::Null => {}
            Value::String(s) if s == "start" => knobs.kind = NodeKind::Start,
            Value::String(s) if s == "step" => knobs.kind = NodeKind::Step,
            Value::String(s) if s == "human" => knobs.kind = NodeKind::Human,
            _ => bad(format!(
                "`type` must be `start`, `step` or `human` (a terminal is any note without `## Next` links), found {}",
                found()
            )),
        },
        "status" => match value {
            Value::Null => {}
            Value::String(s) if Status::parse(&s).is_some() => knobs.status = Status::parse(&s).unwrap_or_default(),
            _ => bad(format!("`status` must be `pending`, `active`, `done` or `failed`, found {}", found())),
        },
        "tools" => match value {
            Value::Null => {}
            Value::Sequence(items) => {
                let mut tools = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) => tools.push(s),
                        other => {
                            bad(format!("`tools` must list tool names, found {} in the list", describe(&other)));
                            return;
                        }
                    }
                }
                knobs.tools = tools;
            }
            _ => bad(format!("`tools` must be a list of tool names such as `[fetch_url]`, found {}", found())),
        },
        "role" => match value {
            Value::Null => {}
            Value::String(s) => knobs.role = Some(s),
            _ => bad(format!("`role` must be a name, found {}", found())),
        },
        // A whole number written with a point or an exponent (`3.0`, `1e1`)
        // is that number to Obsidian, whose numbers are JavaScript's.
        "max_visits" => match value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= f64::from(u32::MAX))
                .map(|f| f as u64)
        }) {
            // Obsidian's YAML 1.2 reads `0b101`, `+0x10` and `+0o7` as
            // text (only `0x10` and `0o7` are numbers), where this reader
            // finds numbers: they are no budget here either.
            _ if entry.is_some_and(|e| yaml_1_1_only_number(e.inline_value)) => bad(format!(
                "`max_visits` must be a positive whole number, found {} (Obsidian reads it as text)",
                found()
            )),
            Some(n) if n >= 1 && n <= u64::from(u32::MAX) => knobs.max_visits = n as u32,
            _ if value.is_null() => {}
            _ => bad(format!("`max_visits` must be a positive whole number, found {}", found())),
        },
        _ if knob_in_other_case(key).is_some() || ctx.keep_unknown_keys => {
            if let Some(knob) = knob_in_other_case(key) {
                diagnostics.push(ctx.bad(
                    line,
                    1,
                    format!(
                        "`{key}` is not read as the knob `{knob}`: knobs are lower case here, while Obsidian shows both as one property; write `{knob}:`"
                    ),
                ));
            }
            if !ctx.keep_unknown_keys {
                return;
            }
            let raw = match entry {
                Some(e) => normalize_raw(e.raw),
                // Written in a form the line split cannot see (a flow mapping):
                // re-serialise the one entry.
                None => {
                    let mut one = yaml_serde::Mapping::new();
                    one.insert(Value::String(key.to_string()), value);
                    super::yaml_emit::to_string(&Value::Mapping(one)).unwrap_or_default().trim_end().to_string()
                }
            };
            knobs.extra.push((key.to_string(), raw));
        }
        _ => {}
    }
}

/// For the `frontmatter` fuzz target (`cargo fuzz` sets `--cfg fuzzing`)
/// and the property test below: `yaml` read by [`read_knobs`] and by the
/// parser alone, knobs and rendered diagnostics each, which must be equal.
/// (A block of whitespace alone is empty either way, by [`read_knobs`]'s
/// first rule.)
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub fn read_both_ways(yaml: &str, keep_unknown_keys: bool) -> [(Knobs, Vec<String>); 2] {
    let ctx = NoteContext {
        file: "n.md",
        node_id: "n",
        first_line: 2,
        keep_unknown_keys,
    };
    let read = |fast: bool| {
        let mut diagnostics = Vec::new();
        let knobs = if fast || yaml.trim().is_empty() {
            read_knobs(yaml, &ctx, &mut diagnostics)
        } else {
            read_knobs_parsed(yaml, &ctx, &mut diagnostics, Knobs::default())
        };
        (
            knobs,
            diagnostics.iter().map(Diagnostic::render_human).collect(),
        )
    };
    [read(true), read(false)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(yaml: &str) -> (Knobs, Vec<String>) {
        let ctx = NoteContext {
            file: "n.md",
            node_id: "n",
            first_line: 2,
            keep_unknown_keys: true,
        };
        let mut diagnostics = Vec::new();
        let knobs = read_knobs(yaml, &ctx, &mut diagnostics);
        (
            knobs,
            diagnostics.iter().map(Diagnostic::render_human).collect(),
        )
    }

    /// Without unknown keys kept (a read for checks), every path through the
    /// reader gives the same knobs and diagnostics, only no `extra`.
    #[test]
    fn unknown_keys_can_be_left_out_on_every_path() {
        let blocks = [
            // The fast path.
            "type: step\nowner: me\ntags: [a, b]\n",
            // yaml_serde: quotes, a block list, a nested map.
            "owner: \"me\"\ntools:\n  - search\nmeta:\n  a: 1\n",
            // A flow mapping the line split cannot see: re-serialised entries.
            "{owner: me, type: start}\n",
            // Broken YAML: each entry salvaged alone.
            "owner: me\ntype: [step\nrole: writer\n",
            // Broken YAML whose unknown entry is itself broken: kept raw.
            "owner: [a\ntype: step\n",
        ];
        for yaml in blocks {
            let (full, full_diagnostics) = knobs(yaml);
            assert!(!full.extra.is_empty(), "{yaml:?} has unknown keys");
            let ctx = NoteContext {
                file: "n.md",
                node_id: "n",
                first_line: 2,
                keep_unknown_keys: false,
            };
            let mut diagnostics = Vec::new();
            let checks = read_knobs(yaml, &ctx, &mut diagnostics);
            let diagnostics: Vec<String> =
                diagnostics.iter().map(Diagnostic::render_human).collect();
            assert_eq!(diagnostics, full_diagnostics, "{yaml:?}");
            assert_eq!(
                checks,
                Knobs {
                    extra: Vec::new(),
                    ..full
                },
                "{yaml:?}"
            );
        }
    }

    #[test]
    fn splits_a_closed_block_and_finds_the_body() {
        let text = "---\r\ntype: start\r\n---\r\n# T\r\n";
        let Split::Closed(block) = split(text) else {
            panic!("no block")
        };
        assert_eq!(block.yaml, "type: start\r\n");
        assert_eq!(&text[block.body_offset..], "# T\r\n");
    }

    #[test]
    fn an_unclosed_block_is_reported_by_the_caller() {
        assert!(matches!(
            split("---\ntype: start\n"),
            Split::Unclosed { body_offset: 4 }
        ));
        assert!(matches!(split("# no frontmatter\n---\n"), Split::Absent));
    }

    #[test]
    fn only_a_bare_fence_and_a_line_break_open_a_block_as_in_obsidian() {
        for text in [
            "--- \ntype: start\n---\n",
            "---\t\ntype: start\n---\n",
            "---",
        ] {
            assert!(matches!(split(text), Split::Absent), "{text:?}");
        }
        // A closing fence may carry trailing spaces.
        assert!(matches!(
            split("---\r\ntype: start\r\n--- \r\n"),
            Split::Closed(_)
        ));
    }

    #[test]
    fn entries_keep_continuation_lines_and_skip_comments() {
        let yaml = "tools:\n- a   # first\n- b\n\n# trailing\nowner: \"x\" # who\n";
        let found = entries(yaml);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].raw, "tools:\n- a   # first\n- b");
        assert_eq!(
            (found[1].key, found[1].line, found[1].value_column),
            ("owner", 5, 8)
        );
        assert_eq!(found[1].inline_value, "\"x\"");
    }

    #[test]
    fn reads_every_knob() {
        let (k, diags) =
            knobs("type: start\nstatus: active\ntools: [fetch_url, search]\nrole: review\nmax_visits: 5\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(k.kind, NodeKind::Start);
        assert_eq!(k.status, Status::Active);
        assert_eq!(k.tools, ["fetch_url", "search"]);
        assert_eq!(k.role.as_deref(), Some("review"));
        assert_eq!(k.max_visits, 5);
    }

    #[test]
    fn a_long_value_is_quoted_cut_short() {
        let long = "x".repeat(100_000);
        let (_, diags) = knobs(&format!("status: {long}\n"));
        let [d] = &diags[..] else { panic!("{diags:?}") };
        assert!(d.len() < 200, "{d}");
        assert!(d.ends_with(&format!("found `{}…`", "x".repeat(60))), "{d}");
        let (_, diags) = knobs(&format!("-- {long}\n"));
        assert!(diags[0].len() < 200, "{}", diags[0]);
    }

    #[test]
    fn wrong_types_name_the_key_and_its_line() {
        let (k, diags) = knobs("role: review\nmax_visits: three\nstatus: finished # later\n");
        assert_eq!(k.max_visits, DEFAULT_MAX_VISITS);
        assert_eq!(k.role.as_deref(), Some("review"));
        assert_eq!(
            diags,
            [
                "n.md:3:13: error[bad-frontmatter]: `max_visits` must be a positive whole number, found `three`",
                "n.md:4:9: error[bad-frontmatter]: `status` must be `pending`, `active`, `done` or `failed`, found `finished`",
            ]
        );
    }

    #[test]
    fn broken_yaml_is_located_and_good_entries_survive() {
        let (k, diags) = knobs("type: start\ntools: [a, b\nowner: me\n");
        assert_eq!(k.kind, NodeKind::Start);
        assert_eq!(k.extra, [("owner".to_string(), "owner: me".to_string())]);
        assert_eq!(diags.len(), 1);
        assert!(diags[0].starts_with("n.md:"), "{diags:?}");
        assert!(
            diags[0].contains("error[bad-frontmatter]: frontmatter is not valid YAML"),
            "{diags:?}"
        );
    }

    /// A blank property as Obsidian shows it (a template's `type: []`, an
    /// emptied text) is no value; a list with a value is still refused.
    #[test]
    fn an_empty_text_or_list_is_no_value() {
        for yaml in [
            "type: []\nstatus: ''\nrole: \"\"\nmax_visits: []\n",
            "type: \"\"\ntools: \"\"\n",
            "type:\n  []\n",
        ] {
            let (k, diags) = knobs(yaml);
            assert!(diags.is_empty(), "{yaml:?}: {diags:?}");
            assert_eq!(k.kind, NodeKind::Step, "{yaml:?}");
            assert_eq!(
                (k.role, k.max_visits, k.tools.len()),
                (None, 3, 0),
                "{yaml:?}"
            );
        }
        let (_, diags) = knobs("type: [start]\n");
        assert!(diags[0].contains("`type` must be"), "{diags:?}");
        let (_, diags) = knobs("type: ' '\n");
        assert!(diags[0].contains("`type` must be"), "{diags:?}");
    }

    #[test]
    fn unknown_keys_keep_their_raw_text() {
        let (k, diags) = knobs("aliases:\n  - Draft\ncreated: 2026-01-02\nflag: yes\n");
        assert!(diags.is_empty());
        assert_eq!(
            k.extra,
            [
                ("aliases".to_string(), "aliases:\n  - Draft".to_string()),
                ("created".to_string(), "created: 2026-01-02".to_string()),
                ("flag".to_string(), "flag: yes".to_string()),
            ]
        );
    }

    /// A number, a boolean or null is a property name to Obsidian (a
    /// fidelity pass: `2023: 12 books` made the note unsound); a list or a
    /// mapping as a key is no name, and is shown as YAML.
    #[test]
    fn a_scalar_key_is_a_name_and_a_collection_key_is_shown_as_yaml() {
        let (_, diags) = knobs("a: x\n? [a, 'b c']\n: y\n");
        assert_eq!(
            diags,
            // One line per diagnostic: the key's own line break is escaped.
            ["n.md:2:1: error[bad-frontmatter]: frontmatter key `- a\\u{a}- b c` is not a name"]
        );
        let (k, diags) = knobs("1.5: x\n~: z\n2023: 12 books\nTRUE: yes\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            k.extra,
            [
                ("1.5".to_string(), "1.5: x".to_string()),
                ("~".to_string(), "~: z".to_string()),
                ("2023".to_string(), "2023: 12 books".to_string()),
                ("TRUE".to_string(), "TRUE: yes".to_string()),
            ]
        );
    }

    #[test]
    fn entries_of_a_flow_block_are_written_back_as_yaml() {
        let (k, diags) = knobs("{role: r, owner: me, tags: [a, 'x: y'], when: {at: 1e20}}\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(k.role.as_deref(), Some("r"));
        assert_eq!(
            k.extra,
            [
                ("owner".to_string(), "owner: me".to_string()),
                ("tags".to_string(), "tags:\n- a\n- 'x: y'".to_string()),
                ("when".to_string(), "when:\n  at: 1e20".to_string()),
            ]
        );
    }

    /// Valid YAML that yaml_serde's `Value` cannot hold is no error; a knob
    /// set to it is told what it must be.
    #[test]
    fn integers_beyond_64_bits_are_valid_yaml() {
        // The quoted value sends the block to the parser.
        let (k, diags) = knobs("owner: 99999999999999999999\nrole: \"writer\"\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(k.role.as_deref(), Some("writer"));
        assert_eq!(
            k.extra[0],
            (
                "owner".to_string(),
                "owner: 99999999999999999999".to_string()
            )
        );
        let (k, diags) = knobs("max_visits: 99999999999999999999\n");
        assert_eq!(k.max_visits, DEFAULT_MAX_VISITS);
        assert_eq!(
            diags,
            ["n.md:2:13: error[bad-frontmatter]: `max_visits` must be a positive whole number, found `99999999999999999999`"]
        );
    }

    #[test]
    fn dialect_is_yaml_1_2() {
        // `012` is the string "012" (neither octal ten nor twelve), so it is
        // no visit budget; `yes` is a string, not a boolean.
        let (k, diags) = knobs("max_visits: 012\n");
        assert_eq!(k.max_visits, DEFAULT_MAX_VISITS);
        assert_eq!(
            diags,
            ["n.md:2:13: error[bad-frontmatter]: `max_visits` must be a positive whole number, found `012`"]
        );
        let (_, diags) = knobs("role: yes\n");
        assert!(diags.is_empty(), "{diags:?}");
        // Numbers only YAML 1.1 has are no budget; 1.2's are.
        for text in ["0b101", "+0x10", "+0o7", "-0x1"] {
            let (k, diags) = knobs(&format!("max_visits: {text}\n"));
            assert_eq!(k.max_visits, DEFAULT_MAX_VISITS, "{text}");
            assert_eq!(
                diags,
                [format!("n.md:2:13: error[bad-frontmatter]: `max_visits` must be a positive whole number, found `{text}` (Obsidian reads it as text)")]
            );
        }
        for (text, n) in [("0x10", 16), ("0o7", 7), ("+5", 5)] {
            let (k, diags) = knobs(&format!("max_visits: {text}\n"));
            assert_eq!((k.max_visits, diags), (n, Vec::<String>::new()), "{text}");
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// Knob lines, right and wrong, most of which the fast path takes.
    fn line() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "type",
            "status",
            "tools",
            "role",
            "max_visits",
            "owner",
        ]);
        let value = prop::sample::select(vec![
            "",
            "start",
            "step",
            "human",
            "begin",
            "Start",
            "pending",
            "active",
            "done",
            "failed",
            "finished",
            "[]",
            "[a]",
            "[fetch_url, search]",
            "[a, 1]",
            "[1, 2]",
            "x",
            "my role",
            "0",
            "1",
            "3",
            "4294967295",
            "4294967296",
            "99999999999999999999",
            "three",
            "[ ]",
            "yes",
            "2026-11-30",
        ]);
        (key, value).prop_map(|(k, v)| format!("{k}: {v}"))
    }

    /// Lines around what the plain read takes: other keys, spaces, lists
    /// with odd items, `#`, CRLF, words YAML types.
    fn plain_line() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "type",
            "status",
            "tools",
            "role",
            "max_visits",
            "tags",
            "created",
            "owner",
            "TRUE",
            "n",
            "a-b",
            "_x",
            "Type",
        ]);
        let value = prop::sample::select(vec![
            "",
            "start",
            "step",
            "human",
            "Step",
            "pending",
            "done",
            "[]",
            "[ ]",
            "[fetch_url, search]",
            "[ a , b ]",
            "[a,]",
            "[a, 1]",
            "[yes]",
            "[my tool]",
            "[a",
            "a]",
            "x",
            "my role",
            "my  role",
            "yes",
            "1",
            "3",
            "0",
            "03",
            "4294967295",
            "4294967296",
            "2026-11-30",
            "1.5",
            "a#b",
            "a # b",
            "~",
            "null",
            "[2026-11-30, v1.2]",
            "{a: b}",
            "'q'",
            "a: b",
            "-x",
            "step ",
        ]);
        let ending = prop::sample::select(vec!["\n", "\n", "\n", "\r\n"]);
        let any_line = (key, value, ending).prop_map(|(k, v, e)| format!("{k}: {v}{e}"));
        let good_line = prop::sample::select(vec![
            "type: step\n",
            "type: start\n",
            "type: human\n",
            "status: done\n",
            "status:\n",
            "tools: [a, b]\n",
            "tools: []\n",
            "tools: [my tool]\n",
            "role: writer\n",
            "role: my role\n",
            "max_visits: 7\n",
            "max_visits: 4294967295\n",
            "tags: [x, y]\n",
            "created: 2026-11-30\n",
            "owner: me\n",
            "_x: 1.5\n",
            "a-b: v1.2\n",
            "owner:\n",
        ])
        .prop_map(String::from);
        // Mostly lines it takes, so whole blocks get through.
        prop_oneof![3 => good_line, 1 => any_line]
    }

    #[test]
    fn the_plain_read_takes_the_benchmark_block() {
        let yaml = "type: step\nstatus: pending\ntools: [fetch_url, search, write_file]\nrole: writer\nmax_visits: 3\ntags: [plan, generated]\ncreated: 2026-11-30\n";
        let knobs = super::super::simple_yaml::read_plain_knobs(yaml, true).expect("taken");
        let [(parsed, diagnostics), _] = read_both_ways(yaml, true);
        assert!(diagnostics.is_empty());
        assert_eq!(knobs, parsed);
        assert_eq!(knobs.tools, ["fetch_url", "search", "write_file"]);
        assert_eq!(
            knobs.extra[1],
            ("created".to_string(), "created: 2026-11-30".to_string())
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// What the plain read takes, it reads as the parser does, and the
        /// parser finds nothing wrong there.
        #[test]
        fn the_plain_read_is_the_parsed_read(lines in prop::collection::vec(plain_line(), 0..8), keep in any::<bool>()) {
            let yaml = lines.concat();
            if let Some(plain) = super::super::simple_yaml::read_plain_knobs(&yaml, keep) {
                let [_, (parsed, diagnostics)] = read_both_ways(&yaml, keep);
                prop_assert!(diagnostics.is_empty(), "{:?}: {:?}", yaml, diagnostics);
                prop_assert_eq!(plain, parsed, "{:?}", yaml);
            }
        }
    }

    /// [`split`] as it was, line by line: the oracle for the byte scan.
    fn split_by_lines(text: &str) -> Option<(usize, usize, usize)> {
        let mut lines = lines_with_offsets(text);
        match lines.next() {
            Some((_, first)) if chomp(first) == "---" && text.contains('\n') => {}
            _ => return None,
        }
        let yaml_offset = text.find('\n').map_or(text.len(), |i| i + 1);
        for (offset, line) in lines {
            if is_fence(line) {
                return Some((
                    yaml_offset,
                    offset,
                    (offset + line.len() + 1).min(text.len()),
                ));
            }
        }
        Some((yaml_offset, usize::MAX, yaml_offset))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_fence_scan_is_the_line_scan(
            lines in prop::collection::vec(prop::sample::select(vec![
                "---", "--- ", "---\r", "----", "-- -", "---x", " ---", "a: b", "", "\r", "---\t",
            ]), 0..7),
            ending in prop::sample::select(vec!["", "\n"]),
        ) {
            let text = lines.join("\n") + ending;
            let scanned = match split(&text) {
                Split::Absent => None,
                Split::Closed(b) => {
                    prop_assert_eq!(b.yaml, &text[b.yaml_offset..b.close_offset]);
                    Some((b.yaml_offset, b.close_offset, b.body_offset))
                }
                Split::Unclosed { body_offset } => Some((body_offset, usize::MAX, body_offset)),
            };
            prop_assert_eq!(scanned, split_by_lines(&text), "{:?}", text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whichever way a block is read, its knobs and diagnostics are the
        /// parser's, byte for byte.
        #[test]
        fn the_fast_read_is_the_parsed_read(lines in prop::collection::vec(line(), 0..6), keep in any::<bool>()) {
            let yaml = lines.join("\n") + "\n";
            let [fast, parsed] = read_both_ways(&yaml, keep);
            prop_assert_eq!(fast, parsed, "{:?}", yaml);
        }
    }
}
