//! A plan that is one folder of a larger vault: the folder's notes are the
//! plan's nodes, and their links resolve against every note of the vault,
//! as Obsidian resolves them. Notes outside the folder are never parsed, so
//! their own properties (an ADR's `status: accepted`) are never judged by
//! the plan's knob rules.

use super::links::LinkIndex;
use super::note::{parse_note_as, DeclaredEdge, Unread};
use super::validate::{validate_in, Enclosing};
use super::{is_plan_note, node_id, resolve_edge, Detail};
use crate::diagnostic::sort_by_position;
use crate::{Checked, Diagnostic, Edge, Plan, PlanFormat};
use std::collections::BTreeMap;

/// Obsidian's core Templates plugin settings (`folder`).
pub const TEMPLATES_SETTINGS: &str = ".obsidian/templates.json";
/// The Templater plugin's settings (`templates_folder`).
pub const TEMPLATER_SETTINGS: &str = ".obsidian/plugins/templater-obsidian/data.json";
/// One vault-relative folder or note a line that planvault skips (`#`
/// starts a comment; no glob patterns).
pub const IGNORE_FILE: &str = ".planvaultignore";

/// What a vault's own settings say holds no plan notes: the templates
/// folders of Obsidian's Templates and of Templater, and the entries of
/// `.planvaultignore`, read from `files` at those paths.
pub fn skipped(files: &BTreeMap<String, String>) -> Vec<String> {
    let folder = |file: &str, key: &str| {
        let settings = serde_json::from_str::<serde_json::Value>(files.get(file)?).ok()?;
        settings.get(key)?.as_str().map(str::to_string)
    };
    let templates = [
        folder(TEMPLATES_SETTINGS, "folder"),
        folder(TEMPLATER_SETTINGS, "templates_folder"),
    ];
    skipped_from(
        &templates.each_ref().map(Option::as_deref),
        files.get(IGNORE_FILE).map(String::as_str),
    )
}

/// Whether `path` is one of the files [`skipped`] reads: a change to it may
/// change what is skipped.
pub fn is_setting(path: &str) -> bool {
    [TEMPLATES_SETTINGS, TEMPLATER_SETTINGS, IGNORE_FILE].contains(&path)
}

/// [`skipped`] from what the settings say: the templates folders as the two
/// plugins' settings name them (`folder`, `templates_folder`) and the text
/// of `.planvaultignore`. For a caller that reads the JSON itself (the npm
/// package, whose markdown build has no JSON parser: `JSON.parse` is free).
#[cfg_attr(planvault_size, optimize(size))]
pub fn skipped_from(templates: &[Option<&str>], ignore: Option<&str>) -> Vec<String> {
    let text = ignore.unwrap_or_default();
    let mut lines = memchr::memchr_iter(b'\n', text.as_bytes()).chain([text.len()]);
    let mut start = 0;
    let mut out = Vec::new();
    // The templates folders, then `.planvaultignore`'s lines, which may be
    // `#` comments.
    for (i, entry) in templates
        .iter()
        .copied()
        .chain(std::iter::repeat(None))
        .enumerate()
    {
        let (entry, comments) = match (entry, i < templates.len()) {
            (Some(entry), _) => (entry, false),
            (None, true) => continue,
            (None, false) => {
                let Some(end) = lines.next() else { break };
                let line = &text[start..end];
                start = end + 1;
                (line, true)
            }
        };
        // White space and `/` around an entry are not part of it.
        let bytes = entry.as_bytes();
        let trimmed = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'/');
        let (mut from, mut to) = (0, bytes.len());
        while from < to && trimmed(bytes[from]) {
            from += 1;
        }
        while to > from && trimmed(bytes[to - 1]) {
            to -= 1;
        }
        if from < to && !(comments && bytes[from] == b'#') {
            out.push(entry[from..to].to_string());
        }
    }
    out
}

/// Whether [`skipped`]'s list `skip` leaves `path` out: it is one of the
/// entries or lies in one.
pub fn is_skipped(path: &str, skip: &[String]) -> bool {
    skip.iter().any(|s| path == s || in_folder(path, s))
}

/// Whether `path` lies in `folder` (vault-relative, no trailing `/`; empty
/// is the whole vault).
#[cfg_attr(planvault_size, optimize(size))]
pub fn in_folder(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Check the notes under `folder` (empty: the whole vault) as the plan,
/// their links resolved against every note in `files`; what [`skipped`]
/// names is not read (a link still reaches it, as in Obsidian, and an
/// edge to it is `edge-leaves-plan`). An edge to a note outside the folder is
/// `edge-leaves-plan`; a body link anywhere is fine. With an empty folder
/// and nothing skipped, what [`crate::check`] gives.
#[cfg_attr(planvault_size, optimize(size))]
pub fn check_in_folder(files: &BTreeMap<String, String>, folder: &str) -> Checked {
    check_in_folder_read(files, folder, &[])
}

/// [`check_in_folder`] of notes a reader read from bytes: `unread` names
/// each note whose text is not its bytes, and why (not UTF-8, too large to
/// read); such a note of the plan is `unreadable-note`
/// ([`super::note::Unread::diagnostic`]).
pub fn check_in_folder_read(
    files: &BTreeMap<String, String>,
    folder: &str,
    unread: &[(String, Unread)],
) -> Checked {
    let skip = skipped(files);
    let files = files.iter().map(|(p, t)| (p.as_str(), t.as_str()));
    check_in_folder_with(files, folder, &skip, Detail::Full, unread)
}

/// [`check_in_folder`] of `files` in path order, with what the vault's
/// settings skip already read (`skip`, [`skipped_from`]) and each note read
/// in `detail` (the npm package's `parseVault`: its files staged, its
/// settings parsed by `JSON.parse`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn check_in_folder_with<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    folder: &str,
    skip: &[String],
    detail: Detail,
    unread: &[(String, Unread)],
) -> Checked {
    let folder = folder.trim_matches('/');
    let mut plan = Plan::new(PlanFormat::Vault);
    let mut diagnostics = Vec::new();
    let files = files.into_iter();
    // Room for every note at once, as `load_from_as` makes it.
    let expected = files.size_hint().0;
    plan.nodes.reserve(expected);
    let mut declared = Vec::with_capacity(expected);
    let mut outside: Vec<&str> = Vec::new();
    // A skipped note (a template, an ignored one) is never read, but a link
    // still opens it in Obsidian: it is in the index, as a note outside.
    let kept = files.filter(|(path, _)| is_plan_note(path));
    for (path, text) in kept {
        if in_folder(path, folder) && !is_skipped(path, skip) {
            if let Some((_, why)) = unread.iter().find(|(p, _)| p == path) {
                diagnostics.push(why.diagnostic(path, text));
            }
            let parsed = parse_note_as(path, node_id(path), text, detail, &mut diagnostics);
            let from = plan.nodes.len();
            plan.nodes.push(parsed.node);
            declared.extend(parsed.edges.into_iter().map(|e| (from, e)));
        } else {
            outside.push(node_id(path));
        }
    }
    let ids: Vec<String> = plan
        .nodes
        .iter()
        .map(|n| n.id.clone())
        .chain(outside.iter().map(|id| id.to_string()))
        .collect();
    let index = LinkIndex::new(ids.iter().map(String::as_str));
    let nodes = plan.nodes.len();
    plan.edges = declared
        .into_iter()
        .map(|(from, e)| resolve_in_folder(&index, nodes, from, e))
        .collect();
    plan.start = match super::find_start(&plan) {
        super::StartRule::Found(start) => Some(start),
        _ => None,
    };
    sort_by_position(&mut diagnostics);
    let graph = validate_in_folder(&plan, &index, folder, skip);
    super::drop_outside_plan(&mut diagnostics, &graph, &plan);
    diagnostics.extend(graph);
    Checked { plan, diagnostics }
}

/// One declared edge of plan node `from` resolved in the whole vault's
/// `index` (the plan's `nodes` notes first, then the rest of the vault): a
/// note outside the plan is no target (`validate_in_folder` says
/// `edge-leaves-plan`).
pub fn resolve_in_folder(
    index: &LinkIndex<'_>,
    nodes: usize,
    from: usize,
    e: DeclaredEdge,
) -> Edge {
    let mut edge = resolve_edge(index, from, e);
    edge.to = edge.to.filter(|&to| to < nodes);
    edge
}

/// The graph checks of the plan in `folder` (vault-relative, no `/` around
/// it; empty: the whole vault), whose links resolve in `index`: the plan's nodes first, in
/// order, then every other note of the vault, those `skip` names included
/// (Obsidian opens them; an edge to one is `edge-leaves-plan`). What
/// [`check_in_folder`] runs; public for a caller that keeps the plan
/// between edits (the npm package's `Vault`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn validate_in_folder(
    plan: &Plan,
    index: &LinkIndex<'_>,
    folder: &str,
    skip: &[String],
) -> Vec<Diagnostic> {
    validate_in(
        plan,
        Some(&Enclosing {
            index,
            folder,
            skip,
        }),
    )
}
