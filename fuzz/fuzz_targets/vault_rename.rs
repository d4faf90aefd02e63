//! A rename in a vault from arbitrary bytes (laid out as for `vault_load`):
//! the first note becomes `renamed/Note 1`. It must never panic, touch only
//! notes whose links it rewrites, and leave every edge that reached a note
//! reaching the same note (the renamed one under its new name).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "vault_bytes.rs"]
mod vault_bytes;
use planvault_core::vault::{self, links, rename::rename_note};
use std::collections::{BTreeMap, BTreeSet};

const NEW_ID: &str = "renamed/Note 1";

/// Each edge as (from, item line, to), ids mapped by `map`.
fn edges(
    files: &BTreeMap<String, String>,
    map: impl Fn(&str) -> String,
) -> BTreeSet<(String, Option<u32>, String)> {
    let (plan, _) = vault::load(files);
    plan.edges
        .iter()
        .filter_map(|e| {
            let to = e.to?;
            Some((
                map(&plan.nodes[e.from].id),
                e.pos.as_ref().map(|p| p.line),
                map(&plan.nodes[to].id),
            ))
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let files = vault_bytes::vault(data);
    // No link can name a note whose path holds `#`, `|`, `^`, `[` or `]`
    // (Obsidian refuses such names), so no rename can keep one reachable.
    if !files.keys().all(|p| links::can_be_linked(p)) {
        return;
    }
    // Two notes of one id (`draft.md` and `draft.Md` on a case-sensitive
    // disk) are one name to a link: which an edge left is not this check's
    // to tell (the loader names the clash).
    let notes: Vec<&String> = files.keys().filter(|p| vault::is_plan_note(p)).collect();
    let ids: BTreeSet<&str> = notes.iter().map(|p| vault::node_id(p)).collect();
    if ids.len() != notes.len() {
        return;
    }
    let Some(old_path) = files.keys().find(|p| vault::is_plan_note(p)).cloned() else {
        return;
    };
    let new_path = format!("{NEW_ID}.md");
    if files.keys().any(|p| p.eq_ignore_ascii_case(&new_path)) {
        return;
    }
    let old_id = vault::node_id(&old_path).to_string();
    let changed = rename_note(&files, &old_id, NEW_ID);
    let mut after = files.clone();
    let own = after.remove(&old_path).unwrap();
    after.insert(new_path, own);
    for (path, text) in changed {
        assert_ne!(files[&path], text, "{path} is reported changed but is not");
        let path = if path == old_path {
            format!("{NEW_ID}.md")
        } else {
            path
        };
        after.insert(path, text);
    }
    let moved = |id: &str| {
        if id == old_id {
            NEW_ID.to_string()
        } else {
            id.to_string()
        }
    };
    let before = edges(&files, moved);
    let now = edges(&after, |id| id.to_string());
    for edge in &before {
        assert!(
            now.contains(edge),
            "{edge:?} is lost after the rename: {now:?}"
        );
    }
});
