//! Vault format (seed 000): a folder of markdown notes, one per node.
//!
//! `load` reads an in-memory map of vault-relative path → note text (the
//! callers do the I/O) into the shared [`Plan`] model; `validate` applies the
//! vault's graph rules. Writing goes through `update_status` (surgical, for a
//! note on disk) and `save_plan` (whole notes, for an in-memory plan).

mod document;
pub mod edit;
pub mod frontmatter;
pub mod links;
pub mod next;
pub mod note;
pub mod rename;
mod scan;
pub mod scope;
#[cfg(feature = "silverbullet")]
pub mod silverbullet;
mod simple_yaml;
pub(crate) mod text;
mod validate;
mod write;
mod yaml_depth;
mod yaml_emit;
#[cfg(not(fuzzing))]
mod yaml_value;
#[cfg(fuzzing)]
pub mod yaml_value;

pub use document::{parse_plan_document, path_graph_from_steps, DOCUMENT_FILE};
pub use scope::{check_in_folder, check_in_folder_read, in_folder};
pub use validate::{drop_outside_plan, find_start, validate, StartRule};
pub use write::{
    checked_update_status, note_file, plan_changed, render_note, run_vault_note, run_vault_notes,
    save_plan, update_status, ChangedItem,
};

use crate::diagnostic::sort_by_position;
use crate::{Diagnostic, Edge, Plan, PlanFormat};
use links::{LinkIndex, Resolution};
use note::{parse_note_as, DeclaredEdge};
pub use note::{read_limit, too_large, Detail, Unread, NOTE_MAX_BYTES, RUN_FILE_MAX_BYTES};
use std::collections::BTreeMap;

/// The folder a run writes its trace into; never part of the plan.
pub const TRACE_FOLDER: &str = "00_plan-trace";

/// Whether a vault path is a plan note: a `.md` file outside dot-folders and
/// any run's trace folder (a plan folder's run keeps its trace in the plan's
/// folder, so a trace folder may lie at any depth).
pub fn is_plan_note(path: &str) -> bool {
    let is_markdown = path.len() > 3
        && path.is_char_boundary(path.len() - 3)
        && path[path.len() - 3..].eq_ignore_ascii_case(".md");
    let hidden = path.starts_with('.') || path.as_bytes().windows(2).any(|pair| pair == b"/.");
    is_markdown && !hidden && !in_trace_folder(path)
}

/// Whether `path` lies in a run's trace folder, at the vault's root or in
/// a plan's folder.
pub fn in_trace_folder(path: &str) -> bool {
    path.strip_prefix(TRACE_FOLDER)
        .is_some_and(|rest| rest.starts_with('/'))
        || path.contains("/00_plan-trace/")
}

/// A note's node id: its path without `.md`.
pub fn node_id(path: &str) -> &str {
    &path[..path.len() - 3]
}

/// Read a vault into a plan. Every note becomes a node, however broken; the
/// diagnostics say what was wrong (sorted by position). Link problems are
/// left to [`validate`], which sees the same unresolved edges.
pub fn load(files: &BTreeMap<String, String>) -> (Plan, Vec<Diagnostic>) {
    load_from(
        files
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str())),
    )
}

/// [`load`] from borrowed `(path, text)` pairs, which must come in path
/// (byte) order with each path once, as a `BTreeMap` iterates: for callers
/// that hold the notes in another shape (the npm package reads them out of
/// one buffer) and would otherwise copy every note into a map.
pub fn load_from<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> (Plan, Vec<Diagnostic>) {
    load_from_as(files, Detail::Full)
}

/// [`load_from`] with the given [`Detail`]: at `Detail::Checks` the same
/// plan without bodies and unknown frontmatter keys, the same diagnostics.
pub fn load_from_as<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    detail: Detail,
) -> (Plan, Vec<Diagnostic>) {
    let mut plan = Plan::new(PlanFormat::Vault);
    let mut diagnostics = Vec::new();
    let files = files.into_iter();
    // Nearly every file is a note with one edge or more: room for them all
    // at once rather than a copy of the nodes at every doubling.
    let expected = files.size_hint().0;
    plan.nodes.reserve(expected);
    let mut declared: Vec<(usize, DeclaredEdge)> = Vec::with_capacity(expected);
    for (path, text) in files.filter(|(path, _)| is_plan_note(path)) {
        let parsed = parse_note_as(path, node_id(path), text, detail, &mut diagnostics);
        let from = plan.nodes.len();
        plan.nodes.push(parsed.node);
        declared.extend(parsed.edges.into_iter().map(|e| (from, e)));
    }
    finish(plan, declared, diagnostics)
}

/// Resolve the declared edges, find the start and put the diagnostics in
/// their canonical order: the last step of every way a vault plan is read.
pub(crate) fn finish(
    mut plan: Plan,
    declared: Vec<(usize, DeclaredEdge)>,
    mut diagnostics: Vec<Diagnostic>,
) -> (Plan, Vec<Diagnostic>) {
    plan.edges = resolve_edges(&plan, declared);
    plan.start = match find_start(&plan) {
        StartRule::Found(start) => Some(start),
        _ => None,
    };
    sort_by_position(&mut diagnostics);
    (plan, diagnostics)
}

/// Turn declared edges into model edges, resolving each link Obsidian-style.
pub(crate) fn resolve_edges(plan: &Plan, declared: Vec<(usize, DeclaredEdge)>) -> Vec<Edge> {
    let index = LinkIndex::new(plan.nodes.iter().map(|n| n.id.as_str()));
    declared
        .into_iter()
        .map(|(from, e)| resolve_edge(&index, from, e))
        .collect()
}

/// One declared edge of node `from` as a model edge, its target resolved
/// against the vault's notes. Public for callers that keep a plan and
/// re-read one note at a time (the npm package's incremental `Vault`).
pub fn resolve_edge(index: &LinkIndex<'_>, from: usize, e: DeclaredEdge) -> Edge {
    Edge {
        from,
        to: match index.resolve(&e.target, from) {
            Resolution::Found(to) => Some(to),
            Resolution::Missing | Resolution::Ambiguous(_) => None,
        },
        target: e.target,
        label: e.label,
        kind: e.kind,
        pos: Some(e.pos),
        written: e.written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_what_is_not_a_plan_note() {
        assert!(is_plan_note("draft.md"));
        assert!(is_plan_note("sub/Draft.MD"));
        assert!(!is_plan_note("00_plan-trace/trace.md"));
        assert!(!is_plan_note(".obsidian/x.md"));
        assert!(!is_plan_note("a/.git/x.md"));
        assert!(!is_plan_note("image.png"));
        assert!(!is_plan_note(".md"));
        // A plan folder's run keeps its trace in the folder.
        assert!(!is_plan_note("plans/launch/00_plan-trace/trace.md"));
        assert!(is_plan_note("sub/00_plan-trace.md"));
        assert!(is_plan_note("00_plan-trace.md"));
        assert!(is_plan_note("00_plan-traces/x.md"));
        assert!(!is_plan_note("a/.x.md"));
    }
}
