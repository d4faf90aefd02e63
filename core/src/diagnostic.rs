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
            Code::UnreadableNote => "unreadable-note",
            Code::SkippedSymlink => "skipped-symlink",
            Code::EdgeLeavesPlan => "edge-leaves-plan",
            Code::NotPartOfPlan => "not-part-of-plan",
            Code::NestingTooDeep => "nesting-too-deep",
            Code::Cycle => "cycle",
            Code::UnmetNeed => "unmet-need",
            Code::UnroutableSignal => "unroutable-signal",
            Code::OrphanMarker => "orphan-marker",
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
    let mut shown: Vec<String> = names
        .take(NAMES_IN_MESSAGE)
        .map(|n| n.to_string())
        .collect();
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
}
