//! The grammar of one checkbox item: its leading `(after: …)` and kind
//! markers, its label, its text, and the `@…` marker lines under it.
//!
//! Markers are recognised only at the start of the item's text or at the
//! start of a line under it; `@gate` written after some words is just words.

use super::items::{RawItem, RawLine};
use crate::position::offset_in;
use crate::NodeKind;

/// An `@on` line as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RouteDecl {
    pub condition: String,
    /// The target as written (`"5"`), empty when the line named none.
    pub target: String,
    /// Byte offset of the `@on`.
    pub at: usize,
}

/// Everything one item declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ItemDecl {
    pub kind: NodeKind,
    pub label: Option<String>,
    /// `(after: …)` indices in the order written, with the marker's offset.
    pub after: Vec<u32>,
    pub after_at: Option<usize>,
    pub title: String,
    /// Non-marker continuation lines.
    pub body_lines: Vec<String>,
    /// A `@tool` command given on its own marker line.
    pub command_line: Option<String>,
    pub scenarios: Vec<String>,
    pub emits: Vec<(String, String)>,
    pub needs: Vec<String>,
    pub routes: Vec<RouteDecl>,
}

impl Default for ItemDecl {
    #[cfg_attr(planvault_size, optimize(size))]
    fn default() -> Self {
        ItemDecl {
            kind: NodeKind::Work,
            label: None,
            after: Vec::new(),
            after_at: None,
            title: String::new(),
            body_lines: Vec::new(),
            command_line: None,
            scenarios: Vec::new(),
            emits: Vec::new(),
            needs: Vec::new(),
            routes: Vec::new(),
        }
    }
}

const KINDS: [(&str, NodeKind); 6] = [
    ("work", NodeKind::Work),
    ("gate", NodeKind::Gate),
    ("verify", NodeKind::Verify),
    ("tool", NodeKind::Tool),
    ("human", NodeKind::Human),
    ("feedback", NodeKind::Feedback),
];

/// Read one item from its raw lines (offsets are into the whole PLAN.md).
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn parse_item(item: &RawItem<'_>) -> ItemDecl {
    let mut decl = ItemDecl::default();
    let mut lines = item.lines.iter();
    if let Some(first) = lines.next() {
        parse_item_line(first, &mut decl);
    }
    for line in lines {
        parse_marker_line(line, &mut decl);
    }
    decl
}

/// Parse the text of an item line alone (used for amendments too).
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn parse_item_text(text: &str) -> ItemDecl {
    let mut decl = ItemDecl::default();
    parse_item_line(&RawLine { start: 0, text }, &mut decl);
    decl
}

#[cfg_attr(planvault_size, optimize(size))]
fn parse_item_line(line: &RawLine<'_>, decl: &mut ItemDecl) {
    let mut rest = line.text;
    loop {
        rest = rest.trim_start();
        if let Some((deps, after)) = after_marker(rest) {
            if decl.after_at.is_none() {
                decl.after_at = Some(line.start + offset_in(line.text, rest));
            }
            decl.after.extend(deps);
            rest = after;
        } else if let Some(after) = kind_marker(rest, decl, true) {
            rest = after;
        } else {
            break;
        }
    }
    if !arg_marker(line.start + offset_in(line.text, rest), rest, decl) {
        decl.title = rest.trim().to_string();
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn parse_marker_line(line: &RawLine<'_>, decl: &mut ItemDecl) {
    let text = line.text;
    if !text.starts_with('@') {
        decl.body_lines.push(text.to_string());
        return;
    }
    if arg_marker(line.start, text, decl) {
        return;
    }
    let mut rest = text;
    let mut any_kind = false;
    while let Some(after) = kind_marker(rest.trim_start(), decl, false) {
        rest = after;
        any_kind = true;
    }
    let rest = rest.trim();
    if !any_kind {
        decl.body_lines.push(text.to_string());
    } else if !rest.is_empty() {
        if decl.kind == NodeKind::Tool {
            decl.command_line = Some(rest.to_string());
        } else {
            decl.body_lines.push(rest.to_string());
        }
    }
}

/// `(after: 1, 3)` / `(deps: 2)`, any case. Returns the indices and the rest.
#[cfg_attr(planvault_size, optimize(size))]
fn after_marker(s: &str) -> Option<(Vec<u32>, &str)> {
    let inner = s.strip_prefix('(')?.trim_start();
    let word_len = ["after", "deps"]
        .iter()
        .find(|w| {
            inner
                .get(..w.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(w))
        })?
        .len();
    let inner = inner[word_len..].trim_start().strip_prefix(':')?;
    let close = inner.find(')')?;
    let list = &inner[..close];
    if !list
        .chars()
        .all(|c| c.is_ascii_digit() || c == ',' || c == ' ' || c == '\t')
    {
        return None;
    }
    let deps: Vec<u32> = list
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u32>().unwrap_or(u32::MAX))
        .collect();
    if deps.is_empty() {
        return None;
    }
    Some((deps, &inner[close + 1..]))
}

/// The `@word` at the start of `s`, when it ends at whitespace, `:` or the end.
#[cfg_attr(planvault_size, optimize(size))]
fn marker_word(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix('@')?;
    let len = body
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(body.len());
    let (word, rest) = body.split_at(len);
    if word.is_empty() {
        return None;
    }
    match rest.chars().next() {
        None => Some((word, rest)),
        Some(c) if c.is_whitespace() => Some((word, rest)),
        Some(':') => Some((word, &rest[1..])),
        Some(_) => None,
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn kind_named(word: &str) -> Option<NodeKind> {
    KINDS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(word))
        .map(|(_, k)| *k)
}

/// A kind marker and its optional label. `on_item_line` decides whether a
/// bare lowercase word needs text after it to count as a label.
#[cfg_attr(planvault_size, optimize(size))]
fn kind_marker<'a>(s: &'a str, decl: &mut ItemDecl, on_item_line: bool) -> Option<&'a str> {
    let (word, mut rest) = marker_word(s)?;
    let kind = if word.eq_ignore_ascii_case("node") {
        let trimmed = rest.trim_start();
        let len = trimmed
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(trimmed.len());
        let kind = kind_named(&trimmed[..len])?;
        let after = &trimmed[len..];
        if !(after.is_empty() || after.starts_with(char::is_whitespace) || after.starts_with(':')) {
            return None;
        }
        rest = after.strip_prefix(':').unwrap_or(after);
        kind
    } else {
        kind_named(word)?
    };
    decl.kind = kind;
    let trimmed = rest.trim_start();
    if let Some((label, after)) = explicit_label(trimmed) {
        decl.label = Some(label.to_string());
        return Some(after);
    }
    if kind != NodeKind::Tool {
        if let Some((label, after)) = bare_label(trimmed) {
            if !on_item_line || !after.trim().is_empty() {
                decl.label = Some(label.to_string());
                return Some(after);
            }
        }
    }
    Some(rest)
}

#[cfg_attr(planvault_size, optimize(size))]
fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// `name:` (any case) followed by whitespace or the end.
#[cfg_attr(planvault_size, optimize(size))]
fn explicit_label(s: &str) -> Option<(&str, &str)> {
    let first = s.chars().next()?;
    if !first.is_ascii_alphabetic() {
        return None;
    }
    let len = s.find(|c: char| !is_label_char(c)).unwrap_or(s.len());
    let after = s[len..].strip_prefix(':')?;
    if after.is_empty() || after.starts_with(char::is_whitespace) {
        Some((&s[..len], after))
    } else {
        None
    }
}

/// A bare lowercase word followed by whitespace or the end.
#[cfg_attr(planvault_size, optimize(size))]
fn bare_label(s: &str) -> Option<(&str, &str)> {
    let first = s.chars().next()?;
    if !first.is_ascii_lowercase() {
        return None;
    }
    let len = s
        .find(|c: char| {
            !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | '-'))
        })
        .unwrap_or(s.len());
    let after = &s[len..];
    if after.is_empty() || after.starts_with(char::is_whitespace) {
        Some((&s[..len], after))
    } else {
        None
    }
}

/// `@scenario`, `@emit`, `@needs` and `@on`, which take the rest of the line.
/// `at` is the byte offset of `s` in the document. Returns whether `s` was one.
#[cfg_attr(planvault_size, optimize(size))]
fn arg_marker(at: usize, s: &str, decl: &mut ItemDecl) -> bool {
    let Some((word, rest)) = marker_word(s) else {
        return false;
    };
    let rest = rest.trim();
    match word.to_ascii_lowercase().as_str() {
        "scenario" => {
            if !rest.is_empty() {
                decl.scenarios.push(rest.to_string());
            }
        }
        "emit" => {
            if let Some(eq) = rest.find('=') {
                decl.emits.push((
                    rest[..eq].trim().to_string(),
                    rest[eq + 1..].trim().to_string(),
                ));
            } else {
                decl.emits
                    .extend(split_keys(rest).map(|k| (k.to_string(), "true".to_string())));
            }
        }
        "needs" => decl.needs.extend(split_keys(rest).map(str::to_string)),
        "on" => decl.routes.push(route(rest, at)),
        _ => return false,
    }
    true
}

#[cfg_attr(planvault_size, optimize(size))]
fn split_keys(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|k| !k.is_empty())
}

/// `cond -> N`, `cond => N`, `cond → N`: the earliest arrow splits.
#[cfg_attr(planvault_size, optimize(size))]
fn route(rest: &str, at: usize) -> RouteDecl {
    let arrow = ["->", "=>", "→"]
        .iter()
        .filter_map(|a| rest.find(a).map(|i| (i, a.len())))
        .min();
    match arrow {
        Some((i, len)) => RouteDecl {
            condition: rest[..i].trim().to_string(),
            target: rest[i + len..].trim().to_string(),
            at,
        },
        None => RouteDecl {
            condition: rest.to_string(),
            target: String::new(),
            at,
        },
    }
}

/// The first backticked span of `text`, when it has one.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn first_code_span(text: &str) -> Option<&str> {
    let open = text.find('`')?;
    let ticks = text[open..].chars().take_while(|&c| c == '`').count();
    let fence = &text[open..open + ticks];
    let inner_start = open + ticks;
    let close = text[inner_start..].find(fence)?;
    let inner = text[inner_start..inner_start + close].trim();
    (!inner.is_empty()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str) -> ItemDecl {
        parse_item_text(text)
    }

    #[test]
    fn kind_label_and_text() {
        let d = item("@gate security Review the auth diff");
        assert_eq!(
            (d.kind, d.label.as_deref(), d.title.as_str()),
            (NodeKind::Gate, Some("security"), "Review the auth diff")
        );
        let d = item("@human Ask the team");
        assert_eq!(
            (d.kind, d.label.as_deref(), d.title.as_str()),
            (NodeKind::Human, None, "Ask the team")
        );
        let d = item("@tool build: make test");
        assert_eq!(
            (d.kind, d.label.as_deref(), d.title.as_str()),
            (NodeKind::Tool, Some("build"), "make test")
        );
        let d = item("@tool make test");
        assert_eq!(
            (d.kind, d.label.as_deref(), d.title.as_str()),
            (NodeKind::Tool, None, "make test")
        );
    }

    #[test]
    fn after_before_or_after_the_kind_any_case() {
        assert_eq!(item("(after: 1, 2) @verify Prove").after, vec![1, 2]);
        assert_eq!(item("@verify (AFTER: 3) Prove").after, vec![3]);
        assert_eq!(item("(Deps: 4 5) x").after, vec![4, 5]);
        let d = item("Deploy (after: 1)");
        assert!(d.after.is_empty());
        assert_eq!(d.title, "Deploy (after: 1)");
    }

    #[test]
    fn last_kind_wins_and_toolbox_is_text() {
        assert_eq!(item("@gate @node verify Prove it").kind, NodeKind::Verify);
        let d = item("@toolbox Sort the drawer");
        assert_eq!(
            (d.kind, d.title.as_str()),
            (NodeKind::Work, "@toolbox Sort the drawer")
        );
    }

    #[test]
    fn routes_accept_three_arrows() {
        for arrow in ["->", "=>", "→"] {
            let r = route(&format!("exit!=0 {arrow} 5"), 0);
            assert_eq!((r.condition.as_str(), r.target.as_str()), ("exit!=0", "5"));
        }
        assert_eq!(route("fail", 0).target, "");
    }

    #[test]
    fn code_span() {
        assert_eq!(
            first_code_span("run `make migrate` now"),
            Some("make migrate")
        );
        assert_eq!(first_code_span("no span"), None);
    }
}
