//! The open vault as the app holds it: the notes' text exactly as last read
//! or written, the plan and diagnostics parsed from them, the positions kept
//! in `plan.canvas`, and the drawing laid out from all of it.
//!
//! The notes are the source of truth; everything else here is derived again
//! whenever a note changes, so what the canvas shows is always what Obsidian
//! would read.

use crate::canvas_file;
use planvault_core::{check, Checked, PlanSource};
use planvault_layout::{layout_plan, Layout, Options, Point, Rect, Route};
use std::collections::BTreeMap;

/// The JSON Canvas file that keeps node positions next to the notes.
pub const CANVAS_FILE: &str = "plan.canvas";

#[derive(Debug, Clone)]
pub struct VaultDoc {
    /// Every plan note: vault-relative path → text. Plus [`CANVAS_FILE`] when
    /// the vault has one.
    pub files: BTreeMap<String, String>,
    pub checked: Checked,
    /// Positions the user set (top-left corners), by node id.
    pub positions: BTreeMap<String, Point>,
    pub layout: Layout,
    /// Node id → index, for selections kept by id across edits.
    pub ids: std::collections::HashMap<String, usize>,
}

pub fn layout_options() -> Options {
    Options {
        node_width: 220.0,
        node_height: 76.0,
        layer_gap: 90.0,
        node_gap: 48.0,
        ..Options::default()
    }
}

impl VaultDoc {
    pub fn new(files: BTreeMap<String, String>) -> VaultDoc {
        let notes: BTreeMap<String, String> = files
            .iter()
            .filter(|(p, _)| p.as_str() != CANVAS_FILE)
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        let checked = check(&PlanSource::Vault(notes));
        VaultDoc::derive(files, checked)
    }

    fn derive(files: BTreeMap<String, String>, checked: Checked) -> VaultDoc {
        let positions = files
            .get(CANVAS_FILE)
            .map(|t| canvas_file::positions(t))
            .unwrap_or_default();
        let layout = place(&checked, &positions);
        let ids = checked
            .plan
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
        VaultDoc {
            files,
            checked,
            positions,
            layout,
            ids,
        }
    }

    /// The doc after some files changed (`None`: deleted).
    pub fn with_changes<'a>(
        &self,
        changes: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> VaultDoc {
        let mut files = self.files.clone();
        let mut notes_changed = false;
        for (path, text) in changes {
            notes_changed |= path != CANVAS_FILE;
            match text {
                Some(text) => files.insert(path.to_string(), text.to_string()),
                None => files.remove(path),
            };
        }
        if notes_changed {
            VaultDoc::new(files)
        } else {
            // Only positions moved: the notes, and so the plan and its
            // diagnostics, are what they were.
            VaultDoc::derive(files, self.checked.clone())
        }
    }

    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.ids.get(id).copied()
    }

    /// The note file of node `index`.
    pub fn file_of(&self, index: usize) -> Option<&str> {
        match &self.checked.plan.nodes.get(index)?.ext {
            planvault_core::NodeExt::Vault(v) => Some(v.file.as_str()),
            _ => None,
        }
    }

    /// The text to write inside `[[...]]` to reach node `to`: its basename,
    /// as Obsidian writes links, unless another note shares that basename.
    pub fn link_text(&self, to: usize) -> String {
        let id = &self.checked.plan.nodes[to].id;
        let base = basename(id);
        let clashes = self
            .checked
            .plan
            .nodes
            .iter()
            .filter(|n| basename(&n.id).eq_ignore_ascii_case(base))
            .count();
        if clashes > 1 {
            id.clone()
        } else {
            base.to_string()
        }
    }

    /// Diagnostics mentioning node `index` (by id or by its file).
    pub fn diagnostics_of(
        &self,
        index: usize,
    ) -> impl Iterator<Item = &planvault_core::Diagnostic> {
        let node = &self.checked.plan.nodes[index];
        let file = self.file_of(index).map(str::to_string);
        self.checked
            .diagnostics
            .iter()
            .filter(move |d| d.nodes.contains(&node.id) || (d.file.is_some() && d.file == file))
    }
}

/// Node boxes and edge routes. When every node has a position the user set,
/// there is nothing to lay out: the boxes are the positions and edges go
/// direct, which keeps a drag on a big plan cheap.
fn place(checked: &Checked, positions: &BTreeMap<String, Point>) -> Layout {
    let plan = &checked.plan;
    let options = layout_options();
    let all_placed =
        !plan.nodes.is_empty() && plan.nodes.iter().all(|n| positions.contains_key(&n.id));
    if !all_placed {
        let pinned = positions.iter().map(|(id, p)| (id.clone(), *p)).collect();
        return layout_plan(plan, &pinned, &options);
    }
    let nodes: Vec<Rect> = plan
        .nodes
        .iter()
        .map(|n| {
            let p = positions[&n.id];
            Rect {
                x: p.x,
                y: p.y,
                width: options.node_width,
                height: options.node_height,
            }
        })
        .collect();
    let routes = plan
        .edges
        .iter()
        .map(|e| Route {
            bends: Vec::new(),
            back: e
                .to
                .is_some_and(|t| nodes[t].y + nodes[t].height <= nodes[e.from].y),
            self_loop: e.to == Some(e.from),
        })
        .collect();
    let bounds = nodes.iter().copied().reduce(|a, b| {
        let x = a.x.min(b.x);
        let y = a.y.min(b.y);
        Rect {
            x,
            y,
            width: (a.x + a.width).max(b.x + b.width) - x,
            height: (a.y + a.height).max(b.y + b.height) - y,
        }
    });
    Layout {
        layers: vec![0; nodes.len()],
        nodes,
        routes,
        bounds: bounds.unwrap_or_default(),
    }
}

pub fn basename(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn example() -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        files.insert(
            "draft.md".into(),
            "---\ntype: start\n---\n# Draft\n\n## Next\n- [[review]]\n".into(),
        );
        files.insert(
            "review.md".into(),
            "# Review\n\n## Next\n- approved -> [[send]]\n- needs revision -> [[draft]]\n".into(),
        );
        files.insert("send.md".into(), "# Send\n".into());
        files
    }

    #[test]
    fn derives_plan_and_layout_from_notes() {
        let doc = VaultDoc::new(example());
        assert_eq!(doc.checked.plan.nodes.len(), 3);
        assert_eq!(doc.checked.plan.edges.len(), 3);
        assert_eq!(doc.layout.nodes.len(), 3);
        assert!(!doc.checked.has_errors(), "{:?}", doc.checked.diagnostics);
    }

    #[test]
    fn link_text_is_the_basename_unless_ambiguous() {
        let mut files = example();
        files.insert("a/send.md".into(), "# Other send\n".into());
        let doc = VaultDoc::new(files);
        let review = doc.node_index("review").unwrap();
        assert_eq!(doc.link_text(review), "review");
        assert_eq!(doc.link_text(doc.node_index("a/send").unwrap()), "a/send");
    }
}
