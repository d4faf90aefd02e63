//! The PLAN.md grammar (seed 001): one checkbox is one node, its 1-based
//! position among all checkboxes is its id, and markers on or under the item
//! declare its kind, label, dependencies, scenarios, signals and routes.
//!
//! Parsing never fails and never diagnoses: every defect the grammar can
//! express is a graph defect, reported by [`validate`] with the spec's five
//! codes. An `(after: N)` that does not point back at an existing item is not
//! a dependency, which is what lets the spec promise that a plan without
//! `@on`, `@emit` or `@needs` can never produce a diagnostic.

pub mod amend;
pub mod channel;
pub mod condition;
pub mod export;
mod items;
mod markers;
pub mod status;
mod validate;

pub use condition::{Condition, SignalOp};
pub use validate::validate;

use crate::position::LineIndex;
use crate::{
    Code, Diagnostic, Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, PlanMdNode,
    Status, DEFAULT_MAX_VISITS,
};
use markers::{first_code_span, ItemDecl};

/// The signal a `@tool` node always puts on the channel: its exit status.
pub const TOOL_EXIT_SIGNAL: &str = "exit";

/// Leopold splits a PLAN.md at LF alone and reads a line ending CR as no
/// item and no marker; planvault reads CRLF as a line ending. A file
/// wholly CRLF is then no plan to Leopold (it says so: no items), but a
/// CRLF line among LF ones (a pasted line, an editor's partial
/// conversion) silently renumbers its items, and so every `(after:)` and
/// `@on` after it: warned at the first such line.
fn crlf_among_lf(
    file: &str,
    text: &str,
    lines: &LineIndex<'_>,
    scan: &items::Scan<'_>,
) -> Option<Diagnostic> {
    let ends_cr = |line: &items::RawLine<'_>| {
        text.as_bytes().get(line.start + line.text.len()) == Some(&b'\r')
    };
    let leopold_items = scan.items.iter().filter(|i| !ends_cr(&i.text)).count();
    if leopold_items == 0 {
        return None;
    }
    let (at, shown, item) = scan.items.iter().find_map(|item| {
        if ends_cr(&item.text) {
            let line = &text[item.bullet..item.text.start + item.text.text.len()];
            return Some((item.bullet, line, true));
        }
        item.under
            .iter()
            .map(|under| under.line)
            .filter(|line| ends_cr(line))
            .find_map(|line| {
                Some((
                    line.start + markers::marker_line(line.text)?.at,
                    line.text,
                    false,
                ))
            })
    })?;
    let so = match item {
        true => format!(
            "it reads {leopold_items} of this plan's {} items and numbers them differently",
            scan.items.len()
        ),
        false => "this marker is lost to it".to_string(),
    };
    let message = format!(
        "`{}` ends its line with CRLF where other lines end with LF: Leopold reads no item or marker on a line ending CR, so {so}; save the file with one kind of line ending.",
        items::js_trim(shown),
    );
    let pos = lines.pos(file, at);
    Some(Diagnostic::warning(Code::LeopoldReadsOtherwise, message).at(&pos))
}

/// Parse a PLAN.md into the plan model. `file` names it in positions.
///
/// The diagnostics are warnings about lines the grammar reads as nothing: a
/// marker line before the first item (`orphan-marker`), a plan with no
/// item at all (`empty-plan`), and an item or marker line ending CRLF
/// among LF ones, which Leopold reads as nothing (`leopold-reads-otherwise`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse(file: &str, text: &str) -> (Plan, Vec<Diagnostic>) {
    let lines = LineIndex::new(text);
    let scan = items::scan(text);
    let decls: Vec<ItemDecl> = scan.items.iter().map(markers::parse_item).collect();
    let count = decls.len();
    let mut plan = Plan::new(PlanFormat::PlanMd);
    let mut diagnostics = Vec::new();

    for line in &scan.before_first {
        if let Some(marker) = markers::marker_line(line.text) {
            let shown = items::js_trim(line.text);
            let message = format!(
                "`{shown}` comes before the first item, so it belongs to no item and is ignored."
            );
            diagnostics.push(
                Diagnostic::warning(Code::OrphanMarker, message)
                    .at(&lines.pos(file, line.start + marker.at)),
            );
        }
    }
    if let Some(warning) = crlf_among_lf(file, text, &lines, &scan) {
        diagnostics.push(warning);
    }
    if count == 0 {
        diagnostics.push(
            Diagnostic::warning(
                Code::EmptyPlan,
                "the plan has no items: no line is a `- [ ]` or `- [x]` checkbox.",
            )
            .in_file(file),
        );
    }

    for (i, (item, decl)) in scan.items.iter().zip(&decls).enumerate() {
        let index = i as u32 + 1;
        let command = (decl.kind == NodeKind::Tool).then(|| {
            decl.command_line
                .clone()
                .or_else(|| first_code_span(&decl.title).map(str::to_string))
                .unwrap_or_else(|| decl.title.clone())
        });
        let mut body = decl.title.clone();
        for line in &decl.body_lines {
            body.push('\n');
            body.push_str(line);
        }
        plan.nodes.push(Node {
            id: index.to_string(),
            title: decl.title.clone(),
            body,
            kind: decl.kind,
            status: if item.done {
                Status::Done
            } else {
                Status::Pending
            },
            tools: Vec::new(),
            role: None,
            max_visits: DEFAULT_MAX_VISITS,
            pos: Some(lines.pos(file, item.bullet)),
            ext: NodeExt::PlanMd(PlanMdNode {
                index,
                label: decl.label.clone(),
                command,
                scenarios: decl.scenarios.clone(),
                emits: decl.emits.clone(),
                needs: decl.needs.clone(),
                needs_at: decl
                    .needs_at
                    .iter()
                    .map(|&at| lines.pos(file, at))
                    .collect(),
            }),
        });
    }

    for (i, decl) in decls.iter().enumerate() {
        for &dep in &decl.after {
            // Only a backward reference to an existing item is a dependency.
            if dep == 0 || dep as usize > i {
                continue;
            }
            plan.edges.push(Edge {
                from: dep as usize - 1,
                to: Some(i),
                target: (i + 1).to_string(),
                label: None,
                kind: EdgeKind::After,
                pos: decl.after_at.map(|at| lines.pos(file, at)),
                written: None,
            });
        }
    }
    for (i, decl) in decls.iter().enumerate() {
        for route in &decl.routes {
            let to = route_target(&route.target)
                .filter(|&t| t >= 1 && t as usize <= count)
                .map(|t| t as usize - 1);
            plan.edges.push(Edge {
                from: i,
                to,
                target: route.target.clone(),
                label: Some(route.condition.clone()),
                kind: EdgeKind::Route,
                pos: Some(lines.pos(file, route.at)),
                written: None,
            });
        }
    }
    (plan, diagnostics)
}

/// `5` or `#5` (an item index); anything else names no item.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn route_target(text: &str) -> Option<u64> {
    let digits = text.strip_prefix('#').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// `text` (a PLAN.md) with the boxes of the `done` items checked, as
/// Leopold keeps a run's progress in the plan: each item by its index, and
/// only where the file's item there still reads as the node (its title and
/// kind: a person who inserted or rewrote an item meanwhile does not get
/// another item's box checked). Only the box's one character changes.
/// `None` when no box changes.
pub fn check_done(text: &str, done: &[&Node]) -> Option<String> {
    let scan = items::scan(text);
    let (now, _) = parse("PLAN.md", text);
    let mut out = text.to_string();
    let mut changed = false;
    for node in done {
        let Some(at) = item(node).and_then(|i| (i.index as usize).checked_sub(1)) else {
            continue;
        };
        let (Some(raw), Some(read)) = (scan.items.get(at), now.nodes.get(at)) else {
            continue;
        };
        if raw.done || read.title != node.title || read.kind != node.kind {
            continue;
        }
        // `- [ ]`: the box's space is three bytes past the bullet.
        let at = raw.bullet + 3;
        if out.as_bytes().get(at) == Some(&b' ') {
            out.replace_range(at..at + 1, "x");
            changed = true;
        }
    }
    changed.then_some(out)
}

/// The PLAN.md facts of a node, when it is a PLAN.md item.
#[cfg_attr(planvault_size, optimize(size))]
pub fn item(node: &Node) -> Option<&PlanMdNode> {
    match &node.ext {
        NodeExt::PlanMd(item) => Some(item),
        _ => None,
    }
}

/// The keys a node may write on the channel: its `@emit` keys, plus `exit`
/// for a `@tool` node, which reports it without declaring it.
#[cfg_attr(planvault_size, optimize(size))]
pub fn emitted_keys(node: &Node) -> Vec<&str> {
    let mut keys: Vec<&str> = item(node)
        .map(|i| i.emits.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    if node.kind == NodeKind::Tool && !keys.contains(&TOOL_EXIT_SIGNAL) {
        keys.push(TOOL_EXIT_SIGNAL);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the box of an item that still reads as the node is checked,
    /// and only its one character changes (CRLF, markers, spacing kept).
    #[test]
    fn check_done_checks_only_the_items_that_still_read_as_they_ran() {
        let text = "# Plan\r\n\r\n- [ ] Build it\r\n  @emit built\r\n- [x] Done by hand\r\n- [ ] (after: 1) @tool make test\r\n```\r\n- [ ] in a fence\r\n```\r\n- [ ] Ship\r\n";
        let (plan, _) = parse("PLAN.md", text);
        let all: Vec<&Node> = plan.nodes.iter().collect();
        assert_eq!(
            check_done(text, &all).unwrap(),
            text.replace("- [ ] Build", "- [x] Build")
                .replace("- [ ] (after: 1)", "- [x] (after: 1)")
                .replace("- [ ] Ship", "- [x] Ship")
        );
        // An item inserted above, or rewritten, since: no box checked for it.
        let edited = text.replace("- [ ] Build it", "- [ ] Lint\r\n- [ ] Build it");
        assert_eq!(check_done(&edited, &all[..1]), None);
        let rewritten = text.replace("@tool make test", "@tool make check");
        let checked = check_done(&rewritten, &all).unwrap();
        assert!(
            checked.contains("- [ ] (after: 1) @tool make check"),
            "{checked}"
        );
        // Nothing to check: none.
        assert_eq!(check_done(&checked, &all[..1]), None);
    }
}
