//! A plan that is one folder of a larger vault: the folder's notes are the
//! plan's nodes, and their links resolve against every note of the vault,
//! as Obsidian resolves them. Notes outside the folder are never parsed, so
//! their own properties (an ADR's `status: accepted`) are never judged by
//! the plan's knob rules.

use super::links::LinkIndex;
use super::note::parse_note_as;
use super::validate::{validate_in, Enclosing};
use super::{is_plan_note, node_id, resolve_edge, Detail};
use crate::diagnostic::sort_by_position;
use crate::{Checked, Plan, PlanFormat};
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
#[cfg_attr(planvault_size, optimize(size))]
pub fn skipped(files: &BTreeMap<String, String>) -> Vec<String> {
    let clean = |s: &str| s.trim().trim_matches('/').to_string();
    let mut out = Vec::new();
    for (file, key) in [
        (TEMPLATES_SETTINGS, "folder"),
        (TEMPLATER_SETTINGS, "templates_folder"),
    ] {
        let folder = files
            .get(file)
            .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
            .and_then(|v| v.get(key).and_then(|f| f.as_str()).map(clean));
        out.extend(folder.filter(|f| !f.is_empty()));
    }
    if let Some(text) = files.get(IGNORE_FILE) {
        out.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(clean)
                .filter(|l| !l.is_empty()),
        );
    }
    out
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
/// names is not read at all. An edge to a note outside the folder is
/// `edge-leaves-plan`; a body link anywhere is fine. With an empty folder
/// and nothing skipped, what [`crate::check`] gives.
#[cfg_attr(planvault_size, optimize(size))]
pub fn check_in_folder(files: &BTreeMap<String, String>, folder: &str) -> Checked {
    let skip = skipped(files);
    let folder = folder.trim_matches('/');
    let mut plan = Plan::new(PlanFormat::Vault);
    let mut diagnostics = Vec::new();
    let mut declared = Vec::new();
    let mut outside: Vec<&str> = Vec::new();
    let kept = files.iter().filter(|(path, _)| {
        is_plan_note(path)
            && !skip
                .iter()
                .any(|s| path.as_str() == s || in_folder(path, s))
    });
    for (path, text) in kept {
        if in_folder(path, folder) {
            let parsed = parse_note_as(path, node_id(path), text, Detail::Full, &mut diagnostics);
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
    plan.edges = declared
        .into_iter()
        .map(|(from, e)| resolve_edge(&index, from, e))
        .collect();
    let nodes = plan.nodes.len();
    for edge in &mut plan.edges {
        if edge.to.is_some_and(|to| to >= nodes) {
            edge.to = None;
        }
    }
    plan.start = match super::find_start(&plan) {
        super::StartRule::Found(start) => Some(start),
        _ => None,
    };
    sort_by_position(&mut diagnostics);
    let enclosing = Enclosing {
        index: &index,
        ids: &ids,
        folder,
    };
    let graph = validate_in(&plan, Some(&enclosing));
    super::drop_outside_plan(&mut diagnostics, &graph);
    diagnostics.extend(graph);
    Checked { plan, diagnostics }
}
