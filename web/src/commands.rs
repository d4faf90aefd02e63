//! Every edit the canvas and the side panel offer, as a pure function from
//! the open vault to a [`Change`]: the files to write, each with the text it
//! must still have on disk (`before`) and the text it gets (`after`).
//!
//! A change carries both sides so it can be checked against the disk before
//! it is written (a note edited in Obsidian meanwhile is a conflict, never
//! overwritten) and undone by writing its inverse. The note text itself is
//! only ever touched through `planvault_core::vault::edit`, so every write
//! is surgical.

use crate::canvas_file;
use crate::doc::{layout_options, VaultDoc};
use planvault_core::vault::edit::{self, EditError, KnobValue};
use planvault_core::vault::links::LinkForm;
use planvault_core::NodeKind;
use planvault_layout::Point;
use std::collections::BTreeMap;
use thiserror::Error;

/// One file's part of a change. `None` means the file does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What one user action does to the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// For the status line and the undo button: "add edge review → send".
    pub summary: String,
    pub files: Vec<FileChange>,
}

impl Change {
    /// The change that undoes this one.
    pub fn inverse(&self) -> Change {
        Change {
            summary: self.summary.clone(),
            files: self
                .files
                .iter()
                .map(|f| FileChange {
                    path: f.path.clone(),
                    before: f.after.clone(),
                    after: f.before.clone(),
                })
                .collect(),
        }
    }

    /// The files as the change leaves them, for [`VaultDoc::with_changes`].
    pub fn results(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.files
            .iter()
            .map(|f| (f.path.as_str(), f.after.as_deref()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    #[error("there is no node {0}")]
    NoSuchNode(usize),
    #[error("there is no edge {0}")]
    NoSuchEdge(usize),
    #[error("edge {0} points at no note")]
    DanglingEdge(usize),
    #[error("a note named {0} already exists")]
    NameTaken(String),
    #[error("no link can reach {0}: a `#`, `|`, `^`, `[` or `]` in its path cuts a link short, and a space at either end of it is dropped; rename it (or its folder) first")]
    Unlinkable(String),
    #[error("{0:?} is not a usable note name")]
    BadName(String),
    #[error("{0}")]
    Edit(#[from] EditError),
    #[error(
        "{path} is not JSON Canvas ({why}): positions are not saved until it is fixed or deleted"
    )]
    CanvasUnreadable { path: String, why: String },
}

type Result<T> = std::result::Result<T, CommandError>;

fn note(doc: &VaultDoc, node: usize) -> Result<(&str, &str)> {
    let file = doc.file_of(node).ok_or(CommandError::NoSuchNode(node))?;
    let text = doc.files.get(file).ok_or(CommandError::NoSuchNode(node))?;
    Ok((file, text))
}

fn id(doc: &VaultDoc, node: usize) -> &str {
    &doc.checked.plan.nodes[node].id
}

fn edit_note(file: &str, before: &str, after: String) -> FileChange {
    FileChange {
        path: file.to_string(),
        before: Some(before.to_string()),
        after: Some(after),
    }
}

/// The line of edge `edge` in its note, and the node it leaves.
fn edge_at(doc: &VaultDoc, edge: usize) -> Result<(usize, u32)> {
    let e = doc
        .checked
        .plan
        .edges
        .get(edge)
        .ok_or(CommandError::NoSuchEdge(edge))?;
    let line = e
        .pos
        .as_ref()
        .map(|p| p.line)
        .ok_or(CommandError::NoSuchEdge(edge))?;
    Ok((e.from, line))
}

fn describe_edge(doc: &VaultDoc, edge: usize) -> String {
    let e = &doc.checked.plan.edges[edge];
    let to = e.to.map_or(e.target.as_str(), |t| id(doc, t));
    format!("{} → {}", id(doc, e.from), to)
}

/// Refuses a new link to a note no link can name: written, it would reach
/// another note or none.
fn linkable(doc: &VaultDoc, to: usize) -> Result<()> {
    let to = id(doc, to);
    if planvault_core::vault::links::can_be_linked(to) {
        Ok(())
    } else {
        Err(CommandError::Unlinkable(to.to_string()))
    }
}

/// Drag from `from`'s handle onto `to`: `- label -> [[to]]` under `## Next`
/// (`[to](to.md)` in a vault that writes markdown links).
pub fn add_edge(doc: &VaultDoc, from: usize, to: usize, label: &str) -> Result<Change> {
    if to >= doc.checked.plan.nodes.len() {
        return Err(CommandError::NoSuchNode(to));
    }
    linkable(doc, to)?;
    let (file, text) = note(doc, from)?;
    let (form, path) = doc.new_link(from, to);
    let (after, _) = edit::append_edge(text, label, &path, form)?;
    Ok(Change {
        summary: format!("add edge {} → {}", id(doc, from), id(doc, to)),
        files: vec![edit_note(file, text, after)],
    })
}

/// Select an edge and press Delete: its `## Next` item goes.
pub fn remove_edge(doc: &VaultDoc, edge: usize) -> Result<Change> {
    let (from, line) = edge_at(doc, edge)?;
    let (file, text) = note(doc, from)?;
    let after = edit::remove_edge(text, line)?;
    Ok(Change {
        summary: format!("delete edge {}", describe_edge(doc, edge)),
        files: vec![edit_note(file, text, after)],
    })
}

/// Drag an edge's head onto another node.
pub fn retarget_edge(doc: &VaultDoc, edge: usize, to: usize) -> Result<Change> {
    if to >= doc.checked.plan.nodes.len() {
        return Err(CommandError::NoSuchNode(to));
    }
    linkable(doc, to)?;
    let (from, line) = edge_at(doc, edge)?;
    let (file, text) = note(doc, from)?;
    // The item keeps its link's form (`edit::retarget_edge`): its path is
    // written for that form.
    let form = match doc.checked.plan.edges[edge].is_markdown_link() {
        true => LinkForm::Markdown,
        false => LinkForm::Wiki,
    };
    let after = edit::retarget_edge(text, line, &doc.link_path(from, to, form))?;
    Ok(Change {
        summary: format!("retarget {} to {}", describe_edge(doc, edge), id(doc, to)),
        files: vec![edit_note(file, text, after)],
    })
}

/// Double-click a label and type: an empty label makes the edge unconditional.
pub fn relabel_edge(doc: &VaultDoc, edge: usize, label: &str) -> Result<Change> {
    let (from, line) = edge_at(doc, edge)?;
    let (file, text) = note(doc, from)?;
    let after = edit::relabel_edge(text, line, label)?;
    Ok(Change {
        summary: format!("relabel {}", describe_edge(doc, edge)),
        files: vec![edit_note(file, text, after)],
    })
}

/// A knob from the side panel (`None` removes it from the frontmatter).
pub fn set_knob(
    doc: &VaultDoc,
    node: usize,
    key: &str,
    value: Option<KnobValue>,
) -> Result<Change> {
    let (file, text) = note(doc, node)?;
    let after = edit::set_knob(text, key, value.as_ref())?;
    Ok(Change {
        summary: format!("set {key} of {}", id(doc, node)),
        files: vec![edit_note(file, text, after)],
    })
}

/// The note's text after its frontmatter, as the side panel edits it.
pub fn body_of(doc: &VaultDoc, node: usize) -> Result<String> {
    let (_, text) = note(doc, node)?;
    Ok(edit::body(text).to_string())
}

pub fn set_body(doc: &VaultDoc, node: usize, body: &str) -> Result<Change> {
    let (file, text) = note(doc, node)?;
    let after = edit::replace_body(text, body);
    Ok(Change {
        summary: format!("edit body of {}", id(doc, node)),
        files: vec![edit_note(file, text, after)],
    })
}

/// A note name from what the user typed: characters Obsidian refuses in file
/// names become `-`; empty or dot-leading names are refused.
pub fn note_name(typed: &str) -> Result<String> {
    let name: String = typed
        .trim()
        .chars()
        .map(|c| {
            if "*\"\\<>:|?#^[]".contains(c) || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .collect();
    let name = name.trim().trim_end_matches(".md").trim().to_string();
    if name.is_empty()
        || name.starts_with('.')
        || name
            .split('/')
            .any(|p| p.trim().is_empty() || p.starts_with('.'))
    {
        return Err(CommandError::BadName(typed.to_string()));
    }
    Ok(name)
}

fn taken(doc: &VaultDoc, path: &str) -> bool {
    doc.files.keys().any(|p| p.eq_ignore_ascii_case(path))
}

/// The canvas file after positions change, as a file change (none when the
/// text stays the same). A canvas file that cannot be read is left as it is.
fn canvas_change(
    doc: &VaultDoc,
    after_doc: &VaultDoc,
    positions: &BTreeMap<String, Point>,
) -> Result<Option<FileChange>> {
    let canvas = doc.canvas_file();
    let before = doc.files.get(&canvas).cloned();
    let o = layout_options();
    let after = canvas_file::write(
        before.as_deref(),
        &after_doc.checked.plan,
        positions,
        (o.node_width, o.node_height),
    )
    .map_err(|why| CommandError::CanvasUnreadable {
        path: canvas.clone(),
        why,
    })?;
    Ok(
        (before.as_deref() != Some(after.as_str())).then_some(FileChange {
            path: canvas,
            before,
            after: Some(after),
        }),
    )
}

/// Every node's drawn top-left corner: the positions to write the first time
/// the user places anything, so the canvas keeps the whole drawing.
fn drawn_positions(doc: &VaultDoc) -> BTreeMap<String, Point> {
    let mut positions = doc.positions.clone();
    if positions.is_empty() {
        for (i, node) in doc.checked.plan.nodes.iter().enumerate() {
            let r = doc.layout.nodes[i];
            positions.insert(node.id.clone(), Point { x: r.x, y: r.y });
        }
    }
    positions
}

/// A new note titled `title` whose card sits at `at`, in the plan's folder.
pub fn create_node(doc: &VaultDoc, title: &str, at: Point) -> Result<Change> {
    let name = note_name(title)?;
    let name = if doc.folder.is_empty() {
        name
    } else {
        format!("{}/{name}", doc.folder)
    };
    let mut path = format!("{name}.md");
    let mut n = 2;
    while taken(doc, &path) {
        path = format!("{name} {n}.md");
        n += 1;
    }
    let kind = if doc.checked.plan.nodes.is_empty() {
        NodeKind::Start
    } else {
        NodeKind::Step
    };
    let text = edit::new_note(title, kind);
    let mut files = vec![FileChange {
        path: path.clone(),
        before: None,
        after: Some(text.clone()),
    }];
    let after_doc = doc.with_changes([(path.as_str(), Some(text.as_str()))]);
    let mut positions = drawn_positions(doc);
    positions.insert(path.trim_end_matches(".md").to_string(), at);
    // The notes change even where the canvas file cannot be read.
    files.extend(canvas_change(doc, &after_doc, &positions).ok().flatten());
    Ok(Change {
        summary: format!("create {}", path.trim_end_matches(".md")),
        files,
    })
}

/// Renames a note (the file, keeping its folder) and rewrites every link to
/// it in every note, as Obsidian does.
pub fn rename_node(doc: &VaultDoc, node: usize, new_name: &str) -> Result<Change> {
    let (file, text) = note(doc, node)?;
    let name = note_name(new_name)?;
    let old_id = id(doc, node).to_string();
    let folder = old_id.rsplit_once('/').map(|(f, _)| f);
    let new_id = match folder {
        Some(folder) if !name.contains('/') => format!("{folder}/{name}"),
        _ => name,
    };
    let new_path = format!("{new_id}.md");
    if new_id == old_id {
        return Err(CommandError::NameTaken(new_id));
    }
    if taken(doc, &new_path) && !new_path.eq_ignore_ascii_case(file) {
        return Err(CommandError::NameTaken(new_id));
    }
    let mut relinked = planvault_core::vault::rename::rename_note(&doc.files, &old_id, &new_id);
    let mut files = vec![
        FileChange {
            path: file.to_string(),
            before: Some(text.to_string()),
            after: None,
        },
        FileChange {
            path: new_path.clone(),
            before: None,
            after: Some(match relinked.iter().position(|(path, _)| path == file) {
                Some(at) => relinked.remove(at).1,
                None => text.to_string(),
            }),
        },
    ];
    for (path, after) in relinked {
        files.push(edit_note(&path, &doc.files[&path], after));
    }
    let after_doc = doc.with_changes(files.iter().map(|f| (f.path.as_str(), f.after.as_deref())));
    if !doc.positions.is_empty() {
        let mut positions = doc.positions.clone();
        if let Some(p) = positions.remove(&old_id) {
            positions.insert(new_id.clone(), p);
        }
        // The notes change even where the canvas file cannot be read.
        files.extend(canvas_change(doc, &after_doc, &positions).ok().flatten());
    }
    Ok(Change {
        summary: format!("rename {old_id} to {new_id}"),
        files,
    })
}

/// The edges that point at `node` from other notes: shown before a delete.
pub fn incoming_edges(doc: &VaultDoc, node: usize) -> Vec<usize> {
    let plan = &doc.checked.plan;
    plan.edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.to == Some(node) && e.from != node)
        .map(|(i, _)| i)
        .collect()
}

/// Deletes a note and the `## Next` items of other notes that point at it.
pub fn delete_node(doc: &VaultDoc, node: usize) -> Result<Change> {
    let (file, text) = note(doc, node)?;
    let mut files = vec![FileChange {
        path: file.to_string(),
        before: Some(text.to_string()),
        after: None,
    }];
    // Per source note, its incoming items, removed bottom-up so lines hold.
    let mut by_source: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for edge in incoming_edges(doc, node) {
        let (from, line) = edge_at(doc, edge)?;
        by_source.entry(from).or_default().push(line);
    }
    for (from, mut lines) in by_source {
        let (source, before) = note(doc, from)?;
        lines.sort_unstable_by(|a, b| b.cmp(a));
        lines.dedup();
        let mut after = before.to_string();
        for line in lines {
            after = edit::remove_edge(&after, line)?;
        }
        files.push(edit_note(source, before, after));
    }
    let old_id = id(doc, node).to_string();
    if doc.positions.contains_key(&old_id) {
        let after_doc =
            doc.with_changes(files.iter().map(|f| (f.path.as_str(), f.after.as_deref())));
        let mut positions = doc.positions.clone();
        positions.remove(&old_id);
        // The notes change even where the canvas file cannot be read.
        files.extend(canvas_change(doc, &after_doc, &positions).ok().flatten());
    }
    Ok(Change {
        summary: format!("delete {old_id}"),
        files,
    })
}

/// Nodes dragged to new top-left corners (no change when none moved).
pub fn move_nodes(doc: &VaultDoc, moves: &[(usize, Point)]) -> Result<Option<Change>> {
    let mut positions = drawn_positions(doc);
    for &(node, p) in moves {
        positions.insert(id(doc, node).to_string(), p);
    }
    let Some(file) = canvas_change(doc, doc, &positions)? else {
        return Ok(None);
    };
    let summary = match moves {
        [(node, _)] => format!("move {}", id(doc, *node)),
        _ => format!("move {} nodes", moves.len()),
    };
    Ok(Some(Change {
        summary,
        files: vec![file],
    }))
}

/// Forget every placed position: the automatic layout draws everything.
pub fn reset_layout(doc: &VaultDoc) -> Result<Option<Change>> {
    let Some(file) = canvas_change(doc, doc, &BTreeMap::new())? else {
        return Ok(None);
    };
    Ok(Some(Change {
        summary: "automatic layout".to_string(),
        files: vec![file],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> VaultDoc {
        let mut files = BTreeMap::new();
        files.insert(
            "draft.md".into(),
            "---\ntype: start\n---\n# Draft\n\n## Next\n- [[review]]\n".into(),
        );
        files.insert(
            "review.md".into(),
            "# Review\r\n\r\n## Next\r\n- approved -> [[send]]\r\n- needs revision -> [[draft|the draft]]\r\n".into(),
        );
        files.insert("send.md".into(), "# Send\n".into());
        VaultDoc::new(files)
    }

    fn apply(doc: &VaultDoc, change: &Change) -> VaultDoc {
        for f in &change.files {
            assert_eq!(
                doc.files.get(&f.path),
                f.before.as_ref(),
                "before of {}",
                f.path
            );
        }
        doc.with_changes(change.results())
    }

    fn edge(doc: &VaultDoc, from: &str, to: &str) -> Option<usize> {
        let (f, t) = (doc.node_index(from)?, doc.node_index(to)?);
        doc.checked
            .plan
            .edges
            .iter()
            .position(|e| e.from == f && e.to == Some(t))
    }

    #[test]
    fn add_edge_appends_under_next_and_undo_restores() {
        let d = doc();
        let (send, draft) = (
            d.node_index("send").unwrap(),
            d.node_index("draft").unwrap(),
        );
        let change = add_edge(&d, send, draft, "resend").unwrap();
        let after = apply(&d, &change);
        assert_eq!(
            after.files["send.md"],
            "# Send\n\n## Next\n- resend -> [[draft]]\n"
        );
        assert!(edge(&after, "send", "draft").is_some());
        let undone = apply(&after, &change.inverse());
        assert_eq!(undone.files, d.files);
    }

    /// A label markdown reads as more than a label (a link: the edge would
    /// go to `review`) is refused, the note unwritten.
    #[test]
    fn a_new_edge_whose_label_reads_as_markdown_is_refused() {
        let d = doc();
        let (send, draft) = (
            d.node_index("send").unwrap(),
            d.node_index("draft").unwrap(),
        );
        let refused = add_edge(&d, send, draft, "see [[review]]").unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("the label `see [[review]]` reads as markdown"),
            "{refused}"
        );
    }

    #[test]
    fn a_vault_that_writes_markdown_links_gets_one() {
        let mut files = doc().files;
        files.insert(
            ".obsidian/app.json".into(),
            "{\"useMarkdownLinks\": true}".into(),
        );
        files.insert("plans/send it.md".into(), "# Send it\n".into());
        let d = VaultDoc::new(files);
        let (draft, send_it) = (
            d.node_index("draft").unwrap(),
            d.node_index("plans/send it").unwrap(),
        );
        let after = apply(&d, &add_edge(&d, draft, send_it, "ship").unwrap());
        assert_eq!(
            after.files["draft.md"],
            "---\ntype: start\n---\n# Draft\n\n## Next\n- [[review]]\n- ship -> [send it](send%20it.md)\n"
        );
        assert!(edge(&after, "draft", "plans/send it").is_some());
    }

    #[test]
    fn a_vault_that_writes_relative_paths_gets_them() {
        let mut files = doc().files;
        files.insert(
            ".obsidian/app.json".into(),
            "{\"useMarkdownLinks\": true, \"newLinkFormat\": \"relative\"}".into(),
        );
        files.insert("plans/send it.md".into(), "# Send it\n".into());
        let d = VaultDoc::new(files);
        let (send, send_it) = (
            d.node_index("send").unwrap(),
            d.node_index("plans/send it").unwrap(),
        );
        let after = apply(&d, &add_edge(&d, send_it, send, "again").unwrap());
        assert_eq!(
            after.files["plans/send it.md"],
            "# Send it\n\n## Next\n- again -> [send](../send.md)\n"
        );
        assert!(edge(&after, "plans/send it", "send").is_some());
    }

    /// In a SilverBullet space a new link is written from its root (and a
    /// markdown one with a leading `/`), which both apps read as the same
    /// note; Obsidian's shortest `[[ship]]` would be the root's page there.
    #[test]
    fn a_silverbullet_space_gets_links_from_its_root() {
        let config = "```space-lua\n-- mine\n```\n";
        for (app_json, written) in [
            (None, "[[plans/ship]]"),
            (
                Some("{\"useMarkdownLinks\": true}"),
                "[ship](/plans/ship.md)",
            ),
        ] {
            let mut files = doc().files;
            files.insert("CONFIG.md".into(), config.into());
            files.insert("plans/ship.md".into(), "# Ship\n".into());
            files.insert("plans/again.md".into(), "# Again\n".into());
            if let Some(app_json) = app_json {
                files.insert(".obsidian/app.json".into(), app_json.into());
            }
            let d = VaultDoc::open(files, Some(""));
            let (again, ship) = (
                d.node_index("plans/again").unwrap(),
                d.node_index("plans/ship").unwrap(),
            );
            let after = apply(&d, &add_edge(&d, again, ship, "go").unwrap());
            assert_eq!(
                after.files["plans/again.md"],
                format!("# Again\n\n## Next\n- go -> {written}\n")
            );
            assert!(edge(&after, "plans/again", "plans/ship").is_some());
            let read =
                planvault_core::vault::silverbullet::check(&after.files, &after.checked.plan);
            assert_eq!(read, [], "{written}");
        }
    }

    /// An item retargeted in a space whose vault writes wikilinks keeps its
    /// form, with a path SilverBullet reads from the root too: a markdown
    /// link stays one, and so does a wikilink with an alias (kept as written
    /// for messages; the alias named the old note).
    #[test]
    fn a_retargeted_item_in_a_silverbullet_space_keeps_its_form_and_reads_alike_in_both() {
        for (link, retargeted) in [
            ("[Ship](ship.md)", "[dock](/plans/dock.md)"),
            ("[[ship|Ship it]]", "[[plans/dock]]"),
        ] {
            let mut files = doc().files;
            files.insert("CONFIG.md".into(), "```space-lua\n```\n".into());
            files.insert(
                "plans/again.md".into(),
                format!("# Again\n\n## Next\n- go -> {link}\n"),
            );
            files.insert("plans/ship.md".into(), "# Ship\n".into());
            files.insert("plans/dock.md".into(), "# Dock\n".into());
            let d = VaultDoc::open(files, Some(""));
            let go = edge(&d, "plans/again", "plans/ship").unwrap();
            let dock = d.node_index("plans/dock").unwrap();
            let after = apply(&d, &retarget_edge(&d, go, dock).unwrap());
            assert_eq!(
                after.files["plans/again.md"],
                format!("# Again\n\n## Next\n- go -> {retargeted}\n")
            );
            assert!(edge(&after, "plans/again", "plans/dock").is_some());
            let read =
                planvault_core::vault::silverbullet::check(&after.files, &after.checked.plan);
            assert_eq!(read, [], "{link}");
        }
    }

    #[test]
    fn rename_leaves_links_to_a_same_named_note_alone() {
        let mut files = doc().files;
        files.insert("b/draft.md".into(), "# Other draft\n".into());
        files.insert("b/list.md".into(), "## Next\n- [[draft]]\n".into());
        let d = VaultDoc::new(files);
        // `[[draft]]` means the vault root's draft in Obsidian, wherever it
        // is written (a path from the root comes first): renaming the other
        // one changes neither link.
        let change = rename_node(&d, d.node_index("b/draft").unwrap(), "first draft").unwrap();
        let after = apply(&d, &change);
        assert_eq!(after.files["b/list.md"], "## Next\n- [[draft]]\n");
        assert!(edge(&after, "b/list", "draft").is_some());
        assert!(edge(&after, "review", "draft").is_some());
        assert!(change
            .files
            .iter()
            .all(|f| f.path != "b/list.md" && f.path != "review.md"));
    }

    #[test]
    fn edge_edits_reach_an_item_whose_link_is_wrapped_onto_its_next_line() {
        let mut files = doc().files;
        files.insert(
            "review.md".into(),
            "# Review\n\n## Next\n- [ ] approved, once legal\n  has signed off ->\n  [[send]]\n- [[draft]]\n".into(),
        );
        let d = VaultDoc::new(files);
        let e = edge(&d, "review", "send").unwrap();
        let after = apply(&d, &relabel_edge(&d, e, "approved").unwrap());
        assert_eq!(
            after.files["review.md"],
            "# Review\n\n## Next\n- [ ] approved ->\n  [[send]]\n- [[draft]]\n"
        );
        let e = edge(&after, "review", "send").unwrap();
        let draft = after.node_index("draft").unwrap();
        let after = apply(&after, &retarget_edge(&after, e, draft).unwrap());
        assert!(after.files["review.md"].contains("->\n  [[draft]]\n"));
        let e = edge(&after, "review", "draft").unwrap();
        let after = apply(&after, &remove_edge(&after, e).unwrap());
        assert_eq!(
            after.files["review.md"],
            "# Review\n\n## Next\n- [[draft]]\n"
        );
    }

    #[test]
    fn no_edge_is_drawn_to_a_note_no_link_can_name() {
        let mut files = doc().files;
        files.insert("issue #12.md".into(), "# Issue 12\n".into());
        let d = VaultDoc::new(files);
        let (review, issue) = (
            d.node_index("review").unwrap(),
            d.node_index("issue #12").unwrap(),
        );
        assert_eq!(
            add_edge(&d, review, issue, "").unwrap_err(),
            CommandError::Unlinkable("issue #12".into())
        );
        let e = edge(&d, "review", "send").unwrap();
        assert_eq!(
            retarget_edge(&d, e, issue).unwrap_err(),
            CommandError::Unlinkable("issue #12".into())
        );
        // Its own edges are edited as any others.
        assert!(add_edge(&d, issue, review, "").is_ok());
        // A link's path is read trimmed: a name ending in a space is none.
        let mut files = doc().files;
        files.insert("Tweets .md".into(), "# Tweets\n".into());
        let d = VaultDoc::new(files);
        let (review, tweets) = (
            d.node_index("review").unwrap(),
            d.node_index("Tweets ").unwrap(),
        );
        assert_eq!(
            add_edge(&d, review, tweets, "").unwrap_err(),
            CommandError::Unlinkable("Tweets ".into())
        );
    }

    #[test]
    fn edge_edits_keep_crlf() {
        let d = doc();
        let e = edge(&d, "review", "send").unwrap();
        let draft = d.node_index("draft").unwrap();
        let after = apply(&d, &retarget_edge(&d, e, draft).unwrap());
        assert!(after.files["review.md"].contains("- approved -> [[draft]]\r\n"));
        let e = edge(&after, "review", "draft").unwrap();
        let after = apply(&after, &relabel_edge(&after, e, "").unwrap());
        assert!(after.files["review.md"].contains("\r\n- [[draft]]\r\n"));
        let e = edge(&after, "review", "draft").unwrap();
        let after = apply(&after, &remove_edge(&after, e).unwrap());
        assert_eq!(
            after.files["review.md"],
            "# Review\r\n\r\n## Next\r\n- needs revision -> [[draft|the draft]]\r\n"
        );
    }

    #[test]
    fn rename_moves_the_file_and_rewrites_links() {
        let d = doc();
        let change = rename_node(&d, d.node_index("draft").unwrap(), "first draft").unwrap();
        let after = apply(&d, &change);
        assert!(!after.files.contains_key("draft.md"));
        assert!(after.files.contains_key("first draft.md"));
        assert!(after.files["review.md"].contains("[[first draft|the draft]]"));
        assert!(edge(&after, "review", "first draft").is_some());
        assert!(rename_node(&d, d.node_index("draft").unwrap(), "send").is_err());
    }

    #[test]
    fn delete_removes_the_note_and_its_incoming_items() {
        let d = doc();
        let review = d.node_index("review").unwrap();
        assert_eq!(incoming_edges(&d, review).len(), 1);
        let after = apply(&d, &delete_node(&d, review).unwrap());
        assert!(!after.files.contains_key("review.md"));
        assert_eq!(
            after.files["draft.md"],
            "---\ntype: start\n---\n# Draft\n\n## Next\n"
        );
    }

    #[test]
    fn create_and_move_write_the_canvas() {
        let d = doc();
        let after = apply(
            &d,
            &create_node(&d, "Publish: the post", Point { x: 5.0, y: 6.0 }).unwrap(),
        );
        assert!(after.files["Publish- the post.md"].contains("# Publish: the post"));
        assert_eq!(
            after.positions["Publish- the post"],
            Point { x: 5.0, y: 6.0 }
        );
        // Every card is placed once anything is.
        assert_eq!(after.positions.len(), 4);
        let send = after.node_index("send").unwrap();
        let moved = apply(
            &after,
            &move_nodes(&after, &[(send, Point { x: -40.0, y: 0.0 })])
                .unwrap()
                .unwrap(),
        );
        assert_eq!(moved.layout.nodes[send].x, -40.0);
        let reset = apply(&moved, &reset_layout(&moved).unwrap().unwrap());
        assert!(reset.positions.is_empty());
    }

    /// A canvas file with a merge's conflict markers holds the user's
    /// cards: a move says why it is not saved and leaves the file alone; a
    /// new note is still written.
    #[test]
    fn an_unreadable_canvas_file_is_never_overwritten() {
        let conflicted = "<<<<<<< HEAD\n{\"nodes\":[]}\n=======\n{}\n>>>>>>> theirs\n";
        let d = doc().with_changes([("plan.canvas", Some(conflicted))]);
        let send = d.node_index("send").unwrap();
        let err = move_nodes(&d, &[(send, Point { x: 1.0, y: 1.0 })]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "plan.canvas is not JSON Canvas (line 1, column 1: expected value at line 1 column 1): \
             positions are not saved until it is fixed or deleted"
        );
        assert!(reset_layout(&d).is_err());
        let change = create_node(&d, "Later", Point { x: 1.0, y: 2.0 }).unwrap();
        let paths: Vec<&str> = change.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["Later.md"]);
    }

    #[test]
    fn in_a_plan_folder_new_notes_and_the_canvas_go_into_it() {
        let d = VaultDoc::new(crate::doc::tests::big_vault());
        assert_eq!(d.folder, "plans/launch");
        let change = create_node(&d, "Announce", Point { x: 1.0, y: 2.0 }).unwrap();
        let paths: Vec<&str> = change.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["plans/launch/Announce.md", "plans/launch/plan.canvas"]
        );
        let after = apply(&d, &change);
        assert_eq!(after.checked.plan.nodes.len(), 5);
        assert_eq!(
            after.positions["plans/launch/Announce"],
            Point { x: 1.0, y: 2.0 }
        );
        // Renaming rewrites links in every note of the vault, never the
        // settings or the canvas.
        let mut files = crate::doc::tests::big_vault();
        files.insert("Notes/Log.md".into(), "Sent: [[Send]].\n".into());
        let d = VaultDoc::new(files);
        let send = d.node_index("plans/launch/Send").unwrap();
        let change = rename_node(&d, send, "Ship").unwrap();
        let mut paths: Vec<&str> = change.files.iter().map(|f| f.path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(
            paths,
            [
                "Notes/Log.md",
                "plans/launch/Review.md",
                "plans/launch/Send.md",
                "plans/launch/Ship.md"
            ]
        );
    }

    #[test]
    fn knobs_and_body() {
        let d = doc();
        let send = d.node_index("send").unwrap();
        let after = apply(
            &d,
            &set_knob(&d, send, "status", Some(KnobValue::Text("done".into()))).unwrap(),
        );
        assert_eq!(
            after.checked.plan.nodes[send].status,
            planvault_core::Status::Done
        );
        let after = apply(&after, &set_body(&after, send, "# Send now\n").unwrap());
        assert_eq!(
            after.files["send.md"],
            "---\nstatus: done\n---\n# Send now\n"
        );
        assert_eq!(body_of(&after, send).unwrap(), "# Send now\n");
    }

    /// Every card's top-left corner, by node id.
    fn corners(doc: &VaultDoc) -> BTreeMap<String, (f64, f64)> {
        doc.checked
            .plan
            .nodes
            .iter()
            .zip(&doc.layout.nodes)
            .map(|(n, r)| (n.id.clone(), (r.x, r.y)))
            .collect()
    }

    #[test]
    fn edits_move_no_card_they_do_not_add_and_auto_layout_moves_them() {
        // No plan.canvas: every card is where the layout put it.
        let mut files = BTreeMap::new();
        files.insert(
            "a.md".into(),
            "---\ntype: start\n---\n# A\n\n## Next\n- [[b]]\n- [[c]]\n".into(),
        );
        files.insert("b.md".into(), "# B\n\n## Next\n- [[d]]\n".into());
        files.insert("c.md".into(), "# C\n".into());
        files.insert("d.md".into(), "# D\n".into());
        let d = VaultDoc::new(files);
        assert!(d.positions.is_empty());
        let before = corners(&d);
        let (c, dd) = (d.node_index("c").unwrap(), d.node_index("d").unwrap());
        // An edge c -> d: the full layout would move cards; the edit does not.
        let added = apply(&d, &add_edge(&d, c, dd, "").unwrap());
        assert_eq!(corners(&added), before);
        assert!(edge(&added, "c", "d").is_some());
        let afresh = added.laid_out_afresh();
        assert_ne!(
            corners(&afresh),
            before,
            "the test needs an edge the full layout reacts to"
        );
        // Removing it again, and renaming a note, move nothing either.
        let removed = apply(
            &added,
            &remove_edge(&added, edge(&added, "c", "d").unwrap()).unwrap(),
        );
        assert_eq!(corners(&removed), before);
        let renamed = apply(&removed, &rename_node(&removed, c, "sea").unwrap());
        let mut expected = before.clone();
        let at = expected.remove("c").unwrap();
        expected.insert("sea".into(), at);
        assert_eq!(corners(&renamed), expected);
        // A note read from disk with a link to it goes under the linking
        // card; the rest stay.
        let mut files = renamed.files.clone();
        files.insert("b.md".into(), "# B\n\n## Next\n- [[d]]\n- [[e]]\n".into());
        files.insert("e.md".into(), "# E\n".into());
        let grown = renamed.reread(crate::doc::Reading {
            files,
            unread: Default::default(),
        });
        let now = corners(&grown);
        for (id, at) in &expected {
            assert_eq!(now[id], *at, "{id} moved");
        }
        let (b, e) = (now["b"], now["e"]);
        assert!(
            e.1 > b.1,
            "the new note sits below what links to it: {b:?} {e:?}"
        );
    }
}
