//! The grammar of one checkbox item, as Leopold reads it: its leading
//! `(after: …)` and kind markers, its label, its text, and the marker lines
//! under it (`@scenario`, `@on`, `@emit`, `@needs`, and a kind on a line of
//! its own).
//!
//! Each rule here is one of Leopold's regular expressions spelled out, with
//! JavaScript's meaning of whitespace ([`js_space`]) and of `.` (no line
//! terminator, [`one_line`]), so an item reads the same in both.

use super::condition::unquote;
use super::items::{js_space, js_trim, one_line, RawItem, RawLine};
use crate::NodeKind;
use rustc_hash::FxBuildHasher;
use std::collections::HashSet;

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
    /// `(after: …)` indices in the order written, once each, with the
    /// marker's offset.
    pub after: Vec<u32>,
    pub after_at: Option<usize>,
    pub title: String,
    /// Prose continuing the item.
    pub body_lines: Vec<String>,
    /// A `@tool` command given on its own marker line.
    pub command_line: Option<String>,
    pub scenarios: Vec<String>,
    pub emits: Vec<(String, String)>,
    /// Each key once, in the order first written.
    pub needs: Vec<String>,
    /// Byte offset of the `@needs` that first declared each key of `needs`.
    pub needs_at: Vec<usize>,
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
            needs_at: Vec::new(),
            routes: Vec::new(),
        }
    }
}

const KINDS: [(&str, NodeKind); 6] = [
    ("work", NodeKind::Work),
    ("gate", NodeKind::Gate),
    ("human", NodeKind::Human),
    ("tool", NodeKind::Tool),
    ("verify", NodeKind::Verify),
    ("feedback", NodeKind::Feedback),
];

/// Read one item (offsets are into the whole PLAN.md).
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn parse_item(item: &RawItem<'_>) -> ItemDecl {
    let mut decl = ItemDecl::default();
    parse_item_line(&item.text, &mut decl);
    let mut needs_seen = HashSet::default();
    for under in &item.under {
        match marker_line(under.line.text) {
            Some(marker) => {
                let at = under.line.start + marker.at;
                apply(marker.what, at, &mut decl, &mut needs_seen);
            }
            None if under.continuation => {
                decl.body_lines.push(js_trim(under.line.text).to_string());
            }
            None => {}
        }
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

/// A leading `(after: …)` (once) and kind markers (any number, the last
/// wins), in either order; the rest is the title.
#[cfg_attr(planvault_size, optimize(size))]
fn parse_item_line(line: &RawLine<'_>, decl: &mut ItemDecl) {
    let mut rest = line.text;
    let mut saw_dep = false;
    loop {
        // Anchored: a `(after:` after a space is text, and so is a second one.
        if !saw_dep {
            if let Some((deps, after)) = after_marker(rest) {
                saw_dep = true;
                decl.after_at =
                    Some(line.start + (rest.as_ptr() as usize - line.text.as_ptr() as usize));
                // Once each, in the order first written: looked up in a
                // sorted copy, as a list of thousands of numbers would be
                // searched once per number (a sort is smaller in wasm than
                // a set).
                let mut sorted = deps.clone();
                sorted.sort_unstable();
                sorted.dedup();
                let mut taken = vec![false; sorted.len()];
                for dep in deps {
                    if let Ok(k) = sorted.binary_search(&dep) {
                        if !std::mem::replace(&mut taken[k], true) {
                            decl.after.push(dep);
                        }
                    }
                }
                rest = after;
                continue;
            }
        }
        match kind_marker(rest.trim_start_matches(js_space), true) {
            Some(k) => {
                decl.kind = k.kind;
                if let Some(label) = k.label {
                    decl.label = Some(label.to_string());
                }
                rest = k.rest;
            }
            None => break,
        }
    }
    decl.title = js_trim(rest).to_string();
}

/// `(after: 1, 3)` / `(deps: 2)`, any case, at the very start. Each
/// comma-separated piece counts by its leading digits (`1 2` is 1), as
/// `parseInt` reads it; pieces without digits and zeros count for nothing.
#[cfg_attr(planvault_size, optimize(size))]
fn after_marker(s: &str) -> Option<(Vec<u32>, &str)> {
    let inner = s.strip_prefix('(')?;
    let inner = ["after", "deps"]
        .iter()
        .find_map(|w| strip_prefix_ci(inner, w))?;
    let inner = inner.trim_start_matches(js_space).strip_prefix(':')?;
    let len = inner
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || js_space(c)))
        .unwrap_or(inner.len());
    if len == 0 || !inner[len..].starts_with(')') {
        return None;
    }
    let deps = inner[..len]
        .split(',')
        .filter_map(|piece| {
            let piece = js_trim(piece);
            let digits = piece.len() - piece.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (digits > 0).then(|| piece[..digits].parse::<u32>().unwrap_or(u32::MAX))
        })
        .filter(|&n| n >= 1)
        .collect();
    Some((deps, inner[len + 1..].trim_start_matches(js_space)))
}

/// `word` at the start of `s`, any ASCII case.
#[cfg_attr(planvault_size, optimize(size))]
fn strip_prefix_ci<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let head = s.get(..word.len())?;
    head.eq_ignore_ascii_case(word).then(|| &s[word.len()..])
}

/// `word` at the start of `s`, any ASCII case, ending at a word boundary
/// (JavaScript's `\b`: no letter, digit or `_` follows).
#[cfg_attr(planvault_size, optimize(size))]
fn strip_word_ci<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let rest = strip_prefix_ci(s, word)?;
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    (!rest.starts_with(word_char)).then_some(rest)
}

/// A kind marker read off the start of a string.
struct KindMarker<'a> {
    kind: NodeKind,
    label: Option<&'a str>,
    /// The text after the marker and its label, trimmed.
    rest: &'a str,
}

/// `@node <kind>` or a shorthand, then an optional label: `name:` (any
/// case), or a bare lowercase word — on the item line only when text follows
/// it, and never on a `@tool`, whose text is its command.
#[cfg_attr(planvault_size, optimize(size))]
fn kind_marker(s: &str, on_item_line: bool) -> Option<KindMarker<'_>> {
    let body = s.strip_prefix('@')?;
    let (mut kind, rest) = [
        "node", "work", "gate", "human", "tool", "verify", "feedback",
    ]
    .iter()
    .find_map(|w| strip_word_ci(body, w).map(|rest| (*w, rest)))?;
    let mut rest = skip_colon(rest);
    if kind == "node" {
        let len = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        kind = KINDS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(&rest[..len]))?
            .0;
        rest = skip_colon(&rest[len..]);
    }
    let kind = KINDS.iter().find(|(name, _)| *name == kind)?.1;
    let mut label = None;
    if let Some((name, after)) = explicit_label(rest) {
        label = Some(name);
        rest = after;
    } else if kind != NodeKind::Tool {
        if let Some((name, after)) = bare_label(rest) {
            if !on_item_line || !js_trim(after).is_empty() {
                label = Some(name);
                rest = after;
            }
        }
    }
    Some(KindMarker {
        kind,
        label,
        rest: js_trim(rest),
    })
}

/// `[ \t]*:?[ \t]*`
#[cfg_attr(planvault_size, optimize(size))]
fn skip_colon(s: &str) -> &str {
    let s = s.trim_start_matches([' ', '\t']);
    s.strip_prefix(':')
        .unwrap_or(s)
        .trim_start_matches([' ', '\t'])
}

#[cfg_attr(planvault_size, optimize(size))]
fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// `name:` (any case), then spaces or tabs or the end.
#[cfg_attr(planvault_size, optimize(size))]
fn explicit_label(s: &str) -> Option<(&str, &str)> {
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let len = s.find(|c: char| !is_label_char(c)).unwrap_or(s.len());
    let after = s[len..].strip_prefix(':')?;
    if after.is_empty() || after.starts_with([' ', '\t']) {
        Some((&s[..len], after.trim_start_matches([' ', '\t'])))
    } else {
        None
    }
}

/// A bare lowercase word, then spaces or tabs or the end.
#[cfg_attr(planvault_size, optimize(size))]
fn bare_label(s: &str) -> Option<(&str, &str)> {
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        return None;
    }
    let len = s
        .find(|c: char| {
            !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | '-'))
        })
        .unwrap_or(s.len());
    let after = &s[len..];
    if after.is_empty() || after.starts_with([' ', '\t']) {
        Some((&s[..len], after.trim_start_matches([' ', '\t'])))
    } else {
        None
    }
}

/// What a marker line declares.
pub(crate) enum Marker<'a> {
    Scenario(&'a str),
    On(&'a str),
    Emit(&'a str),
    Needs(&'a str),
    Kind(NodeKind, Option<&'a str>, &'a str),
}

/// How a marker line's argument becomes a [`Marker`].
type MakeMarker<'a> = fn(&'a str) -> Marker<'a>;

/// A marker line and the offset of its `@` in the line.
pub(crate) struct MarkerLine<'a> {
    pub what: Marker<'a>,
    pub at: usize,
}

/// Whether (and how) a line under an item is a marker line: `@scenario`,
/// `@on`, `@emit` or `@needs` after spaces and tabs, any case, an optional
/// colon; or a line that starts (trimmed) with a kind marker.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn marker_line<'a>(line: &'a str) -> Option<MarkerLine<'a>> {
    let lead = line.trim_start_matches([' ', '\t']);
    let at = line.len() - lead.len();
    if let Some(body) = lead.strip_prefix('@') {
        let words: [(&str, MakeMarker<'a>); 4] = [
            ("scenario", Marker::Scenario),
            ("on", Marker::On),
            ("emit", Marker::Emit),
            ("needs", Marker::Needs),
        ];
        for (word, make) in words {
            if let Some(rest) = strip_word_ci(body, word) {
                let rest = rest.trim_start_matches([' ', '\t', ':']);
                if one_line(rest) {
                    return Some(MarkerLine {
                        what: make(rest),
                        at,
                    });
                }
            }
        }
    }
    let bare = js_trim(line);
    let k = kind_marker(bare, false)?;
    Some(MarkerLine {
        what: Marker::Kind(k.kind, k.label, k.rest),
        at: bare.as_ptr() as usize - line.as_ptr() as usize,
    })
}

#[cfg_attr(planvault_size, optimize(size))]
/// `needs_seen` holds the keys of `decl.needs`: an item may list thousands,
/// each looked up once.
fn apply<'a>(
    marker: Marker<'a>,
    at: usize,
    decl: &mut ItemDecl,
    needs_seen: &mut HashSet<&'a str, FxBuildHasher>,
) {
    match marker {
        Marker::Scenario(rest) => {
            let rest = js_trim(rest);
            if !rest.is_empty() {
                decl.scenarios.push(rest.to_string());
            }
        }
        Marker::On(rest) => {
            if let Some(route) = route(rest, at) {
                decl.routes.push(route);
            }
        }
        Marker::Emit(rest) => {
            let rest = js_trim(rest);
            if rest.is_empty() {
                return;
            }
            decl.emits.push(match rest.find('=') {
                Some(eq) => (
                    js_trim(&rest[..eq]).to_string(),
                    unquote(js_trim(&rest[eq + 1..])).to_string(),
                ),
                None => (rest.to_string(), "true".to_string()),
            });
        }
        Marker::Needs(rest) => {
            let keys = rest
                .split(|c: char| c == ',' || js_space(c))
                .map(|token| js_trim(token.split('=').next().unwrap_or("")))
                .filter(|k| !k.is_empty());
            for key in keys {
                if needs_seen.insert(key) {
                    decl.needs.push(key.to_string());
                    decl.needs_at.push(at);
                }
            }
        }
        Marker::Kind(kind, label, rest) => {
            decl.kind = kind;
            if let Some(label) = label {
                decl.label = Some(label.to_string());
            }
            if kind == NodeKind::Tool && !rest.is_empty() {
                decl.command_line = Some(rest.to_string());
            }
        }
    }
}

/// `cond -> N`, `cond => N`, `cond → N`: the last arrow splits. `None` when
/// the line carries nothing at all (a bare `@on` is dropped).
#[cfg_attr(planvault_size, optimize(size))]
fn route(rest: &str, at: usize) -> Option<RouteDecl> {
    let written = js_trim(rest);
    if written.is_empty() {
        return None;
    }
    let arrow = written.char_indices().rev().find_map(|(i, _)| {
        ["->", "=>", "→"]
            .iter()
            .find(|a| written[i..].starts_with(**a))
            .map(|a| (i, a.len()))
    });
    Some(match arrow {
        Some((i, len)) => RouteDecl {
            condition: js_trim(&written[..i]).to_string(),
            target: js_trim(&written[i + len..]).to_string(),
            at,
        },
        None => RouteDecl {
            condition: written.to_string(),
            target: String::new(),
            at,
        },
    })
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

    fn under(lines: &str) -> ItemDecl {
        let mut decl = ItemDecl::default();
        let mut needs_seen = HashSet::default();
        for line in lines.lines() {
            if let Some(m) = marker_line(line) {
                apply(m.what, m.at, &mut decl, &mut needs_seen);
            }
        }
        decl
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
        let d = item("@gate Security: Review");
        assert_eq!(d.label.as_deref(), Some("Security"));
        let d = item("@node the graph builder into place");
        assert_eq!(
            (d.kind, d.title.as_str()),
            (NodeKind::Work, "@node the graph builder into place")
        );
    }

    #[test]
    fn after_before_or_after_the_kind_any_case() {
        assert_eq!(item("(after: 1, 2) @verify Prove").after, vec![1, 2]);
        assert_eq!(item("@verify (AFTER: 3) Prove").after, vec![3]);
        assert_eq!(item("(Deps: 4, 5) x").after, vec![4, 5]);
        let d = item("Deploy (after: 1)");
        assert!(d.after.is_empty());
        assert_eq!(d.title, "Deploy (after: 1)");
    }

    #[test]
    fn after_reads_as_parse_int_does() {
        // Leading digits of each comma-separated piece; `1 2` is 1.
        assert_eq!(item("(after: 1 2) x").after, vec![1]);
        assert_eq!(item("(after:  1 ,, 1 ) x").after, vec![1]);
        assert_eq!(item("(after: 0, 3) x").after, vec![3]);
        // An empty list is still a marker, and is stripped.
        let d = item("(after: ) x");
        assert_eq!((d.after.len(), d.title.as_str()), (0, "x"));
        // Not markers: a space inside the parenthesis, a space before it, a
        // second marker, a non-digit.
        for text in [
            "( after: 1) x",
            " (after: 1) x",
            "(after:) x",
            "(after: x) y",
        ] {
            let d = item(text);
            assert!(d.after.is_empty(), "{text}");
            assert_eq!(d.title, js_trim(text), "{text}");
        }
        let d = item("(after: 1) (deps: 2) two");
        assert_eq!((d.after, d.title.as_str()), (vec![1], "(deps: 2) two"));
    }

    #[test]
    fn last_kind_wins_and_toolbox_is_text() {
        assert_eq!(item("@gate @node verify Prove it").kind, NodeKind::Verify);
        let d = item("@toolbox Sort the drawer");
        assert_eq!(
            (d.kind, d.title.as_str()),
            (NodeKind::Work, "@toolbox Sort the drawer")
        );
        // A marker on the item line is the item's text unless it is a kind.
        assert_eq!(item("@emit x").title, "@emit x");
    }

    #[test]
    fn marker_arguments() {
        let d = under("  @emit a b\n  @emit note = \"v 3\"\n  @emit\n  @emit k");
        assert_eq!(
            d.emits,
            vec![
                ("a b".to_string(), "true".to_string()),
                ("note".to_string(), "v 3".to_string()),
                ("k".to_string(), "true".to_string()),
            ]
        );
        let d = under("@needs migrated=true, b\n\t@needs b a\n@Needs: migrated");
        assert_eq!(d.needs, vec!["migrated", "b", "a"]);
        assert_eq!(d.needs_at, vec![0, 0, 1]);
        let d = under("  @on\n  @on fail\n  @on a -> b -> 3\n  @on: x → #4");
        let routes: Vec<(&str, &str)> = d
            .routes
            .iter()
            .map(|r| (r.condition.as_str(), r.target.as_str()))
            .collect();
        assert_eq!(routes, vec![("fail", ""), ("a -> b", "3"), ("x", "#4")]);
        let d = under("@Scenario: colon form\n@scenario\n@scenarios x");
        assert_eq!(d.scenarios, vec!["colon form"]);
    }

    /// Regression: each key was compared with every key before it, so an
    /// item of 200,000 `@needs` lines took minutes.
    #[test]
    fn many_needs_are_read_in_linear_time() {
        let keys = 200_000;
        let lines: String = (0..keys).map(|i| format!("@needs k{i}\n")).collect();
        let d = under(&format!("{lines}@needs k0 k{}\n", keys - 1));
        assert_eq!(d.needs.len(), keys);
        assert_eq!((d.needs[0].as_str(), d.needs_at.len()), ("k0", keys));
    }

    /// Regression: each number of an `(after: …)` was looked for among
    /// those before it, so an item after 64,000 others took 14 s to read.
    #[test]
    fn a_long_after_list_is_read_in_linear_time() {
        let deps = 200_000u32;
        let list: Vec<String> = (1..=deps).chain([1, deps]).map(|d| d.to_string()).collect();
        let d = parse_item_text(&format!("(after: {}) last", list.join(", ")));
        assert_eq!(d.after.len(), deps as usize);
        assert_eq!((d.after[0], d.after[deps as usize - 1]), (1, deps));
        assert_eq!(d.title, "last");
        let d = parse_item_text("(after: 3, 1, 3,2, 1) x");
        assert_eq!(d.after, [3, 1, 2]);
    }

    #[test]
    fn a_kind_line_sets_the_kind_and_ignores_its_prose() {
        let d = under("  @node human ops\n");
        assert_eq!((d.kind, d.label.as_deref()), (NodeKind::Human, Some("ops")));
        let d = under("  - @gate\n  @gatekeeper\n");
        assert_eq!(d.kind, NodeKind::Work);
    }

    #[test]
    fn routes_accept_three_arrows() {
        for arrow in ["->", "=>", "→"] {
            let r = route(&format!("exit!=0 {arrow} 5"), 0).unwrap();
            assert_eq!((r.condition.as_str(), r.target.as_str()), ("exit!=0", "5"));
        }
        assert_eq!(route("fail", 0).unwrap().target, "");
        assert!(route("  ", 0).is_none());
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
