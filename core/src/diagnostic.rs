//! Diagnostics are data: a stable code, a severity, a message naming every
//! offender, and where it is. The same input gives the same bytes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Every diagnostic code planvault emits. The kebab-case spelling is a
/// public, stable interface: tools match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    // Vault (seed 000).
    DanglingEdge,
    CycleWithoutExit,
    NoStart,
    MultipleStarts,
    NoTerminalReachable,
    AmbiguousLink,
    BadFrontmatter,
    Unreachable,
    EmptyPlan,
    MalformedEdge,
    EdgeToNonNote,
    NearMissNextHeading,
    /// A link under `## Next` that no top-level item holds.
    LinkNotEdge,
    UnreadableNote,
    SkippedSymlink,
    EdgeLeavesPlan,
    NotPartOfPlan,
    /// Frontmatter or JSON nested deeper than its parser is given.
    NestingTooDeep,
    // PLAN.md (seed 001); `dangling-edge` and `unreachable` are shared.
    Cycle,
    UnmetNeed,
    UnroutableSignal,
    OrphanMarker,
    /// A line Leopold reads as nothing where planvault reads an item or a
    /// marker (a CRLF line among LF ones).
    LeopoldReadsOtherwise,
    // Generated plans (seeds 002, 004).
    MalformedPlan,
    UnknownTool,
    ToolNotPermitted,
    TooManySteps,
    TooManyDependencies,
    TooManyReferences,
    TooManyPreconditions,
    ArgsTooLarge,
    DuplicateId,
    MalformedId,
    UnknownDependency,
    SelfDependency,
    MalformedRef,
    DanglingRef,
    UndeclaredRef,
    ReservedPathSegment,
    // Proposal mode (seed 003): `core::proposal`, not in the npm package.
    #[cfg(feature = "proposal")]
    MutationBeforeApproval,
    #[cfg(feature = "proposal")]
    NoApprovalGate,
    // SilverBullet's reading of a vault (`vault::silverbullet`), asked for
    // by `planvault validate --silverbullet`; not in the npm package.
    #[cfg(feature = "silverbullet")]
    SilverbulletReadsOtherwise,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::DanglingEdge => "dangling-edge",
            Code::CycleWithoutExit => "cycle-without-exit",
            Code::NoStart => "no-start",
            Code::MultipleStarts => "multiple-starts",
            Code::NoTerminalReachable => "no-terminal-reachable",
            Code::AmbiguousLink => "ambiguous-link",
            Code::BadFrontmatter => "bad-frontmatter",
            Code::Unreachable => "unreachable",
            Code::EmptyPlan => "empty-plan",
            Code::MalformedEdge => "malformed-edge",
            Code::EdgeToNonNote => "edge-to-non-note",
            Code::NearMissNextHeading => "near-miss-next-heading",
            Code::LinkNotEdge => "link-not-edge",
            Code::UnreadableNote => "unreadable-note",
            Code::SkippedSymlink => "skipped-symlink",
            Code::EdgeLeavesPlan => "edge-leaves-plan",
            Code::NotPartOfPlan => "not-part-of-plan",
            Code::NestingTooDeep => "nesting-too-deep",
            Code::Cycle => "cycle",
            Code::UnmetNeed => "unmet-need",
            Code::UnroutableSignal => "unroutable-signal",
            Code::OrphanMarker => "orphan-marker",
            Code::LeopoldReadsOtherwise => "leopold-reads-otherwise",
            Code::MalformedPlan => "malformed-plan",
            Code::UnknownTool => "unknown-tool",
            Code::ToolNotPermitted => "tool-not-permitted",
            Code::TooManySteps => "too-many-steps",
            Code::TooManyDependencies => "too-many-dependencies",
            Code::TooManyReferences => "too-many-references",
            Code::TooManyPreconditions => "too-many-preconditions",
            Code::ArgsTooLarge => "args-too-large",
            Code::DuplicateId => "duplicate-id",
            Code::MalformedId => "malformed-id",
            Code::UnknownDependency => "unknown-dependency",
            Code::SelfDependency => "self-dependency",
            Code::MalformedRef => "malformed-ref",
            Code::DanglingRef => "dangling-ref",
            Code::UndeclaredRef => "undeclared-ref",
            Code::ReservedPathSegment => "reserved-path-segment",
            #[cfg(feature = "proposal")]
            Code::MutationBeforeApproval => "mutation-before-approval",
            #[cfg(feature = "proposal")]
            Code::NoApprovalGate => "no-approval-gate",
            #[cfg(feature = "silverbullet")]
            Code::SilverbulletReadsOtherwise => "silverbullet-reads-otherwise",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding about a plan. Field order is the JSON order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Vault-relative file (or the plan file's name).
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based, in characters.
    pub column: Option<u32>,
    /// `column` in UTF-16 code units, 1-based: what CodeMirror and
    /// Obsidian's editor count (an emoji is two). Filled by
    /// [`fill_utf16_columns`] from the file's text; `None` until then.
    #[serde(default)]
    pub column_utf16: Option<u32>,
    /// Where the offending text ends (exclusive, UTF-16, 1-based) when it is
    /// a `[[link]]` on the line: underline `column_utf16..end_column_utf16`.
    #[serde(default)]
    pub end_column_utf16: Option<u32>,
    /// Ids of the nodes involved.
    pub nodes: Vec<String>,
    /// PLAN.md: the 1-based item indices involved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<u32>,
    /// The target a dangling edge or route names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The signal key a channel diagnostic is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Diagnostic {
    pub fn new(code: Code, severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            file: None,
            line: None,
            column: None,
            column_utf16: None,
            end_column_utf16: None,
            nodes: Vec::new(),
            items: Vec::new(),
            target: None,
            key: None,
        }
    }

    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, message)
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, message)
    }

    pub fn at(mut self, pos: &crate::SourcePos) -> Self {
        self.file = Some(pos.file.clone());
        self.line = Some(pos.line);
        self.column = Some(pos.column);
        self
    }

    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    pub fn with_nodes<I, S>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.nodes = nodes.into_iter().map(Into::into).collect();
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Compiler-style: `file:line:col: error[code]: message`.
    /// `file:line:col: severity[code]: message` on one line, for a
    /// terminal: control characters in the file name or the message (which
    /// quotes the plan's own text) are escaped.
    pub fn render_human(&self) -> String {
        let mut out = String::new();
        if let Some(file) = &self.file {
            out.push_str(file);
            if let Some(line) = self.line {
                out.push_str(&format!(":{line}"));
                if let Some(col) = self.column {
                    out.push_str(&format!(":{col}"));
                }
            }
            out.push_str(": ");
        }
        out.push_str(&format!(
            "{}[{}]: {}",
            self.severity.as_str(),
            self.code,
            self.message
        ));
        match crate::terminal::escape_controls(&out, false) {
            std::borrow::Cow::Borrowed(_) => out,
            std::borrow::Cow::Owned(escaped) => escaped,
        }
    }
}

/// `true` when any diagnostic is an error.
/// How many names a message lists before it says "and N more" (a
/// diagnostic's `nodes` always lists them all).
pub const NAMES_IN_MESSAGE: usize = 10;

/// `a`, `a and b`, `a, b and c`; past [`NAMES_IN_MESSAGE`] names, the first
/// ten and `and N more` (once). Only the names shown are formatted, so a
/// 100,000-name list costs ten.
#[cfg_attr(planvault_size, optimize(size))]
pub fn name_list<T: fmt::Display>(names: impl ExactSizeIterator<Item = T>) -> String {
    let total = names.len();
    let shown = names
        .take(NAMES_IN_MESSAGE)
        .map(|n| n.to_string())
        .collect();
    join_names(shown, total)
}

/// The part of [`name_list`] that is the same for every caller, compiled
/// once (the npm wasm is size-budgeted).
#[inline(never)]
#[cfg_attr(planvault_size, optimize(size))]
fn join_names(mut shown: Vec<String>, total: usize) -> String {
    let last = if total > NAMES_IN_MESSAGE {
        format!("{} more", total - NAMES_IN_MESSAGE)
    } else {
        shown.pop().unwrap_or_default()
    };
    if shown.is_empty() {
        last
    } else {
        format!("{} and {last}", shown.join(", "))
    }
}

/// Fill `column_utf16` and `end_column_utf16` of every diagnostic with a
/// line and column, from the text of its file as its positions count it
/// (a vault note without its BOM; `text_of` gives `None` for a file it does
/// not have, and that diagnostic keeps `None`). Linear in the texts' lines
/// and the diagnostics' lines. The npm package does the same in JavaScript
/// (`npm/js/api.js`), from the notes its caller passed.
pub fn fill_utf16_columns<'t>(
    diagnostics: &mut [Diagnostic],
    text_of: impl Fn(&str) -> Option<&'t str>,
) {
    let mut line_starts: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for d in diagnostics {
        let (Some(file), Some(line), Some(column)) = (&d.file, d.line, d.column) else {
            continue;
        };
        let Some(text) = text_of(file) else {
            continue;
        };
        let starts = line_starts.entry(file.clone()).or_insert_with(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
                .collect()
        });
        let Some(&start) = (line as usize).checked_sub(1).and_then(|l| starts.get(l)) else {
            continue;
        };
        let rest = &text[start..];
        let line_text = rest.split('\n').next().unwrap_or(rest);
        let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
        let mut units = 0u32;
        let mut chars = line_text.char_indices();
        let mut at = line_text.len();
        for _ in 1..column {
            match chars.next() {
                Some((_, c)) => units += c.len_utf16() as u32,
                // Past the line's end: one unit per column, as CodeMirror
                // clips.
                None => units += 1,
            }
        }
        if let Some((i, _)) = chars.next() {
            at = i;
        }
        d.column_utf16 = Some(units + 1);
        let tail = &line_text[at..];
        d.end_column_utf16 = tail
            .starts_with("[[")
            .then(|| tail.find("]]"))
            .flatten()
            .map(|close| units + 1 + tail[..close + 2].encode_utf16().count() as u32);
    }
}

pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// The canonical order for diagnostics that carry positions: by file, line,
/// column, then code and message, so output never depends on hash order.
pub fn sort_by_position(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.code, &a.message)
            .cmp(&(&b.file, b.line, b.column, b.code, &b.message))
    });
}

/// `{"diagnostics": [...]}` as `planvault validate --json` prints it.
pub fn to_json(diagnostics: &[Diagnostic]) -> String {
    #[derive(Serialize)]
    struct Report<'a> {
        diagnostics: &'a [Diagnostic],
    }
    serde_json::to_string_pretty(&Report { diagnostics }).expect("diagnostics serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_past_ten_say_how_many_more_once() {
        let names = |n: usize| (0..n).map(|i| format!("n{i}")).collect::<Vec<_>>();
        assert_eq!(name_list(names(0).iter()), "");
        assert_eq!(name_list(names(1).iter()), "n0");
        assert_eq!(name_list(names(3).iter()), "n0, n1 and n2");
        assert_eq!(
            name_list(names(10).iter()),
            "n0, n1, n2, n3, n4, n5, n6, n7, n8 and n9"
        );
        assert_eq!(
            name_list(names(11).iter()),
            "n0, n1, n2, n3, n4, n5, n6, n7, n8, n9 and 1 more"
        );
        let long = name_list(names(100_000).iter());
        assert!(long.ends_with("n9 and 99990 more"), "{long}");
        assert_eq!(long.matches("and").count(), 1, "{long}");
    }

    fn at(file: &str, line: u32, column: u32) -> Diagnostic {
        Diagnostic::error(Code::DanglingEdge, "m").at(&crate::SourcePos::new(file, line, column))
    }

    #[test]
    fn utf16_columns_count_what_editors_count() {
        let text = "# T 🚀\r\n- 😀 é 計 -> [[🎯 x]] tail\r\nshort\n";
        let mut d = vec![
            at("a.md", 2, 12),    // the `[[`: after 11 characters, 12 units
            at("a.md", 2, 3),     // the emoji itself
            at("a.md", 3, 8),     // past the end of `short`
            at("a.md", 9, 1),     // no such line
            at("other.md", 1, 1), // no such file
            Diagnostic::error(Code::EmptyPlan, "no position"),
        ];
        fill_utf16_columns(&mut d, |f| (f == "a.md").then_some(text));
        let got: Vec<_> = d
            .iter()
            .map(|d| (d.column_utf16, d.end_column_utf16))
            .collect();
        let line = "- 😀 é 計 -> [[🎯 x]] tail";
        let link = line.find("[[").unwrap();
        let start = line[..link].encode_utf16().count() as u32 + 1;
        let end = start + "[[🎯 x]]".encode_utf16().count() as u32;
        assert_eq!((start, end), (13, 21));
        assert_eq!(
            got,
            [
                (Some(start), Some(end)),
                (Some(3), None),
                (Some(8), None),
                (None, None),
                (None, None),
                (None, None)
            ]
        );
        let json = to_json(&d[..1]);
        assert!(
            json.contains(
                "\"column_utf16\": 13,\n      \"end_column_utf16\": 21,\n      \"nodes\""
            ),
            "{json}"
        );
    }
}
