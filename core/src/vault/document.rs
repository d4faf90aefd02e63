//! Plans that start in memory: one LLM-emitted document with a `## node-id`
//! section per node, and the linear fallback when a model's graph is unusable.
//!
//! A document section reads exactly like a note: an optional `---` block of
//! the same knobs, a `#` title, the body, and a `Next` list (`## Next` or
//! `### Next` inside the section). Nodes get `<id>.md` as their file so
//! `save_plan` can persist them into a run vault.

use super::note::{parse_note_with, DeclaredEdge, Detail};
use super::text::{chomp, lines_with_offsets};
use crate::{
    Code, Diagnostic, Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, Status, VaultNode,
};
use crate::{SourcePos, DEFAULT_MAX_VISITS};
use pulldown_cmark::HeadingLevel;
use std::collections::BTreeSet;

/// The name diagnostics give a plan document.
pub const DOCUMENT_FILE: &str = "<plan document>";

/// Headings that open a section's `Next` list inside a document.
const DOCUMENT_NEXT_LEVELS: &[HeadingLevel] = &[HeadingLevel::H2, HeadingLevel::H3];

/// A `## id` heading: the id and where its section's text begins and ends.
struct Section {
    id: String,
    heading_start: usize,
    text_start: usize,
}

/// The `## id` headings of a document, found line by line: a section's
/// `---` knob block would read as a setext heading to a markdown parser, so
/// the document's outer structure is scanned here (fenced code skipped) and
/// each section's inside goes through the note parser.
fn sections(text: &str) -> Vec<Section> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut in_knobs = false;
    let mut expect_knobs = false;
    for (offset, line) in lines_with_offsets(text) {
        let content = chomp(line);
        let trimmed = content.trim_start();
        if in_knobs {
            in_knobs = content.trim_end() != "---";
            continue;
        }
        if expect_knobs && !content.trim().is_empty() {
            expect_knobs = false;
            if content.trim_end() == "---" {
                in_knobs = true;
                continue;
            }
        }
        let indent = content.len() - trimmed.len();
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        if let Some(c) = fence_char {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= 3 && indent <= 3 {
                match fence {
                    None => fence = Some((c, run)),
                    Some((open, len))
                        if open == c && run >= len && trimmed[run..].trim().is_empty() =>
                    {
                        fence = None
                    }
                    Some(_) => {}
                }
                continue;
            }
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        let Some(rest) = trimmed.strip_prefix("##") else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            continue;
        }
        let id = rest
            .trim()
            .trim_end_matches('#')
            .trim()
            .trim_matches('`')
            .trim();
        if id.eq_ignore_ascii_case("next") {
            continue;
        }
        found.push(Section {
            id: id.to_string(),
            heading_start: offset,
            text_start: (offset + line.len() + 1).min(text.len()),
        });
        expect_knobs = true;
    }
    found
}

/// Parse one document into a vault-format plan (checked by the same
/// validator). Text before the first `## id` heading is ignored.
pub fn parse_plan_document(text: &str) -> (Plan, Vec<Diagnostic>) {
    let mut plan = Plan::new(PlanFormat::Vault);
    let mut diagnostics = Vec::new();
    let mut declared: Vec<(usize, DeclaredEdge)> = Vec::new();
    let found = sections(text);
    let mut seen = BTreeSet::new();
    for (i, section) in found.iter().enumerate() {
        let end = found
            .get(i + 1)
            .map_or(text.len(), |next| next.heading_start);
        let heading_line = text[..section.heading_start].matches('\n').count() as u32 + 1;
        if section.id.is_empty() || !seen.insert(section.id.to_lowercase()) {
            let message = if section.id.is_empty() {
                "a `##` section has no node id".to_string()
            } else {
                format!(
                    "node id `{}` is used by an earlier section; ids must be unique",
                    section.id
                )
            };
            diagnostics.push(
                Diagnostic::error(Code::DuplicateId, message)
                    .at(&SourcePos::new(DOCUMENT_FILE, heading_line, 1))
                    .with_nodes([section.id.as_str()]),
            );
            continue;
        }
        // Blank lines between the heading and a `---` block are allowed.
        let mut start = section.text_start.min(end);
        while let Some(rest) = text[start..end]
            .split_inclusive('\n')
            .next()
            .filter(|l| l.trim().is_empty() && !l.is_empty())
        {
            start += rest.len();
        }
        let line_offset = text[..start].matches('\n').count() as u32;
        let mut parsed = parse_note_with(
            DOCUMENT_FILE,
            &section.id,
            &text[start..end],
            DOCUMENT_NEXT_LEVELS,
            line_offset,
            Detail::Full,
            &mut diagnostics,
        );
        if let NodeExt::Vault(v) = &mut parsed.node.ext {
            v.file = format!("{}.md", section.id);
        }
        parsed.node.pos = Some(SourcePos::new(DOCUMENT_FILE, heading_line, 1));
        let from = plan.nodes.len();
        plan.nodes.push(parsed.node);
        declared.extend(parsed.edges.into_iter().map(|e| (from, e)));
    }
    super::finish(plan, declared, diagnostics)
}

/// The linear plan: one node per step, each leading unconditionally to the
/// next, the first the start. What a run falls back to when a model's graph
/// does not validate — never worse than a plain step list.
pub fn path_graph_from_steps(steps: &[String]) -> Plan {
    let mut plan = Plan::new(PlanFormat::Vault);
    let width = steps.len().to_string().len().max(2);
    for (i, step) in steps.iter().enumerate() {
        let id = format!("step-{:0width$}", i + 1);
        let first_line = step
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default();
        let title = first_line.trim_start_matches('#').trim();
        plan.nodes.push(Node {
            title: if title.is_empty() {
                id.clone()
            } else {
                title.to_string()
            },
            body: step.trim().to_string(),
            kind: if i == 0 {
                NodeKind::Start
            } else {
                NodeKind::Step
            },
            status: Status::Pending,
            tools: Vec::new(),
            role: None,
            max_visits: DEFAULT_MAX_VISITS,
            pos: None,
            ext: NodeExt::Vault(VaultNode {
                file: format!("{id}.md"),
                ..VaultNode::default()
            }),
            id,
        });
    }
    plan.edges = (1..plan.nodes.len())
        .map(|to| Edge {
            from: to - 1,
            to: Some(to),
            target: plan.nodes[to].id.clone(),
            label: None,
            kind: EdgeKind::Unconditional,
            pos: None,
            written: None,
        })
        .collect();
    plan.start = (!plan.nodes.is_empty()).then_some(0);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_like_a_vault() {
        let doc = "Here is the plan.\n\n## draft\n\n---\ntype: start\ntools: [write]\n---\n# Draft the email\nWrite it.\n\n### Next\n- [[review]]\n\n## review\n# Review\nCheck [[draft]].\n## Next\n- approved -> [[send]]\n- needs revision -> [[draft]]\n\n## send\nSend it.\n";
        let (plan, diags) = parse_plan_document(doc);
        assert!(diags.is_empty(), "{diags:?}");
        let ids: Vec<_> = plan.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["draft", "review", "send"]);
        assert_eq!(plan.nodes[0].title, "Draft the email");
        assert_eq!(plan.nodes[0].tools, ["write"]);
        assert_eq!(plan.nodes[2].title, "send");
        assert_eq!(plan.start, Some(0));
        let edges: Vec<_> = plan
            .edges
            .iter()
            .map(|e| (e.from, e.to, e.label.as_deref()))
            .collect();
        assert_eq!(
            edges,
            [
                (0, Some(1), None),
                (1, Some(2), Some("approved")),
                (1, Some(0), Some("needs revision"))
            ]
        );
        assert_eq!(
            plan.edges[1].pos.as_ref().map(|p| (p.line, p.column)),
            Some((19, 15))
        );
        assert!(super::super::validate(&plan).is_empty());
    }

    #[test]
    fn duplicate_sections_are_reported() {
        let (plan, diags) = parse_plan_document("## a\n## A\n");
        assert_eq!(plan.nodes.len(), 1);
        assert_eq!(
            diags[0].render_human(),
            "<plan document>:2:1: error[duplicate-id]: node id `A` is used by an earlier section; ids must be unique"
        );
    }

    #[test]
    fn steps_become_a_path() {
        let steps: Vec<String> = (1..=10)
            .map(|i| format!("Do thing {i}\nin detail"))
            .collect();
        let plan = path_graph_from_steps(&steps);
        assert_eq!(plan.nodes[9].id, "step-10");
        assert_eq!(plan.nodes[0].title, "Do thing 1");
        assert_eq!(plan.edges.len(), 9);
        assert!(super::super::validate(&plan).is_empty());
        assert!(path_graph_from_steps(&[]).nodes.is_empty());
    }
}
