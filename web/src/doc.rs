//! The open vault as the app holds it: the notes' text exactly as last read
//! or written, the plan and diagnostics parsed from them, the positions kept
//! in `plan.canvas`, and the drawing laid out from all of it.
//!
//! The notes are the source of truth; everything else here is derived again
//! whenever a note changes, so what the canvas shows is always what Obsidian
//! would read.
//!
//! A vault's plan may be one folder of it (`VaultDoc::folder`): its notes
//! are the nodes, their links resolve against the whole vault, as
//! `planvault validate VAULT/FOLDER` does (`vault::check_in_folder`, which
//! also leaves out the templates folder and `.planvaultignore`'s entries).

use crate::canvas_file;
use crate::explorer_order::{explorer_order, folder_order};
use crate::later_checks::{self, Listings};
use planvault_core::vault::{check_in_folder_read, silverbullet, Unread};
use planvault_core::{Checked, Code, NodeExt, NodeKind};
use planvault_layout::{
    extend, folders, layout, plan_graph, Folders, Graph, Layout, Options, Point, Previous, Rect,
    Route,
};
use std::collections::BTreeMap;

/// The JSON Canvas file that keeps node positions next to the notes (in the
/// plan's folder: [`VaultDoc::canvas_file`]).
pub const CANVAS_FILE: &str = "plan.canvas";

/// A vault as read from its folder.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Path → text, byte-exact (BOM kept).
    pub files: BTreeMap<String, String>,
    /// The notes whose text is not their bytes, and why: not UTF-8 (read
    /// with U+FFFD), or too large to read (their text empty).
    pub unread: Vec<(String, Unread)>,
}

/// A folder of the vault that holds plan notes (a note with a `## Next`
/// section or `type: start`): one the plan can be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFolder {
    /// Vault-relative, no trailing `/`.
    pub folder: String,
    /// Plan notes in it and in its subfolders.
    pub notes: usize,
    /// Plan notes directly in it.
    pub own: usize,
}

#[derive(Debug, Clone)]
pub struct VaultDoc {
    /// Every note: vault-relative path → text. Plus each `plan.canvas` and
    /// the settings that say what to skip (`.obsidian/templates.json`, ...)
    /// when the vault has them.
    pub files: BTreeMap<String, String>,
    /// The notes whose text is not their bytes, as read ([`Reading`]):
    /// each is `unreadable-note` where it is one of the plan's.
    pub unread: Vec<(String, Unread)>,
    /// The plan's folder, vault-relative (empty: the whole vault).
    pub folder: String,
    /// The folders the plan could be, in explorer order (none: the notes are
    /// all at the top).
    pub folders: Vec<PlanFolder>,
    pub checked: Checked,
    /// Positions the user set (top-left corners), by node id.
    pub positions: BTreeMap<String, Point>,
    pub layout: Layout,
    /// Node id → index, for selections kept by id across edits.
    pub ids: std::collections::HashMap<String, usize>,
    /// The nodes (indices) in the order Obsidian's file explorer lists their
    /// notes ([`explorer_order`]): the list view's, the loose notes' grid's.
    pub listed: Vec<usize>,
    /// What the browser knows of MCP servers: `checked` has an
    /// `unknown-tool` diagnostic per declared tool a browser run would not
    /// offer, and the other checks the first paint does not wait for
    /// ([`later_checks`]).
    pub listings: Listings,
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
    /// The vault with the plan in the folder [`default_folder`] picks.
    pub fn new(files: BTreeMap<String, String>) -> VaultDoc {
        VaultDoc::open(files, None)
    }

    /// The vault with the plan in `wanted` when the vault still has that
    /// folder of plan notes (or it is empty: the whole vault), else in the
    /// folder [`default_folder`] picks.
    pub fn open(files: BTreeMap<String, String>, wanted: Option<&str>) -> VaultDoc {
        VaultDoc::open_read(
            Reading {
                files,
                unread: Vec::new(),
            },
            wanted,
        )
    }

    /// [`VaultDoc::open`] of a vault as read from its folder.
    pub fn open_read(read: Reading, wanted: Option<&str>) -> VaultDoc {
        VaultDoc::open_after(read, wanted, None)
    }

    fn open_after(read: Reading, wanted: Option<&str>, before: Option<&VaultDoc>) -> VaultDoc {
        let Reading { files, unread } = read;
        let whole = check_in_folder_read(&files, "", &unread);
        let folders = plan_folders(&whole);
        let folder = match wanted {
            Some(w) if w.is_empty() || folders.iter().any(|f| f.folder == w) => w.to_string(),
            _ => default_folder(&whole, &folders),
        };
        let checked = if folder.is_empty() {
            whole
        } else {
            check_in_folder_read(&files, &folder, &unread)
        };
        let before = before.filter(|b| b.folder == folder);
        let listings = before.map(|b| b.listings.clone()).unwrap_or_default();
        let mut checked = checked;
        if before.is_some() {
            let later = later_checks::check(&checked.plan, &files, &listings);
            checked.diagnostics.extend(later);
        }
        VaultDoc::derive((files, unread), folder, folders, checked, before, listings)
    }

    /// The same vault with the plan in `folder` (empty: the whole vault).
    pub fn in_folder(&self, folder: &str) -> VaultDoc {
        let mut checked = check_in_folder_read(&self.files, folder, &self.unread);
        checked.diagnostics.extend(later_checks::check(
            &checked.plan,
            &self.files,
            &self.listings,
        ));
        VaultDoc::derive(
            (self.files.clone(), self.unread.clone()),
            folder.to_string(),
            self.folders.clone(),
            checked,
            None,
            self.listings.clone(),
        )
    }

    /// The same vault laid out afresh ("Auto layout"): edits keep cards in
    /// place, this is the one way to let the layout move them all.
    pub fn laid_out_afresh(&self) -> VaultDoc {
        VaultDoc {
            layout: place(&self.checked, &self.positions, &self.listed, None),
            ..self.clone()
        }
    }

    /// The vault as read again from disk, its plan in the same folder when
    /// it still has it, drawn as this one was (cards keep their places;
    /// only new notes are placed).
    pub fn reread(&self, read: Reading) -> VaultDoc {
        VaultDoc::open_after(read, Some(&self.folder), Some(self))
    }

    /// The same doc with what the browser now knows of MCP servers (the
    /// later checks' diagnostics told again; nothing else recomputed).
    pub fn with_listings(&self, listings: Listings) -> VaultDoc {
        let mut doc = self.clone();
        let diagnostics = &mut doc.checked.diagnostics;
        diagnostics.retain(|d| !later_checks::CODES.contains(&d.code));
        diagnostics.extend(later_checks::check(
            &doc.checked.plan,
            &doc.files,
            &listings,
        ));
        doc.listings = listings;
        doc
    }

    /// Where this plan's positions are kept: `plan.canvas` in its folder.
    pub fn canvas_file(&self) -> String {
        canvas_path(&self.folder)
    }

    /// `before`: the doc this one is an edit of, whose drawing it keeps.
    fn derive(
        (files, unread): (BTreeMap<String, String>, Vec<(String, Unread)>),
        folder: String,
        folders: Vec<PlanFolder>,
        checked: Checked,
        before: Option<&VaultDoc>,
        listings: Listings,
    ) -> VaultDoc {
        let positions = files
            .get(&canvas_path(&folder))
            .map(|t| canvas_file::positions(t, &checked.plan))
            .unwrap_or_default();
        let plan = &checked.plan;
        let listed = match before {
            // The same notes (an edit of their text): the same order.
            Some(b)
                if b.checked
                    .plan
                    .nodes
                    .iter()
                    .map(|n| &n.id)
                    .eq(plan.nodes.iter().map(|n| &n.id)) =>
            {
                b.listed.clone()
            }
            _ => {
                let paths: Vec<&str> = plan
                    .nodes
                    .iter()
                    .map(|n| match &n.ext {
                        NodeExt::Vault(v) => v.file.as_str(),
                        _ => n.id.as_str(),
                    })
                    .collect();
                explorer_order(&paths)
            }
        };
        let layout = place(&checked, &positions, &listed, before);
        let ids = checked
            .plan
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.clone(), i))
            .collect();
        VaultDoc {
            listed,
            files,
            unread,
            folder,
            folders,
            checked,
            positions,
            layout,
            ids,
            listings,
        }
    }

    /// The doc after some files changed (`None`: deleted).
    pub fn with_changes<'a>(
        &self,
        changes: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> VaultDoc {
        let mut files = self.files.clone();
        let mut unread = self.unread.clone();
        let mut notes_changed = false;
        let canvas = self.canvas_file();
        for (path, text) in changes {
            notes_changed |= path != canvas;
            // Its text is now the app's (a write of it is refused: the
            // doc is read again from disk then).
            unread.retain(|(p, _)| p != path);
            match text {
                Some(text) => files.insert(path.to_string(), text.to_string()),
                None => files.remove(path),
            };
        }
        let checked = if notes_changed {
            let mut checked = check_in_folder_read(&files, &self.folder, &unread);
            let later = later_checks::check(&checked.plan, &files, &self.listings);
            checked.diagnostics.extend(later);
            checked
        } else {
            // Only positions moved: the notes, and so the plan and its
            // diagnostics, are what they were.
            self.checked.clone()
        };
        VaultDoc::derive(
            (files, unread),
            self.folder.clone(),
            self.folders.clone(),
            checked,
            Some(self),
            self.listings.clone(),
        )
    }

    /// The plan's nodes by the folder they sit in one level below the one
    /// they all share ([`folders`]), in explorer order, for the zoomed-out
    /// overview: none unless the notes are spread over two folders or more.
    /// Notes directly in the shared folder belong to no group.
    pub fn folder_groups(&self) -> Vec<FolderGroup> {
        let Folders { names, of_node } = folders(&self.checked.plan);
        let mut nodes: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
        // Folders as the explorer first lists one of their notes.
        let mut met = Vec::new();
        for &i in &self.listed {
            let folder = of_node[i];
            if nodes[folder].is_empty() {
                met.push(folder);
            }
            nodes[folder].push(i);
        }
        let groups: Vec<FolderGroup> = met
            .into_iter()
            .filter(|&f| !names[f].is_empty())
            .map(|f| FolderGroup {
                name: names[f].clone(),
                nodes: std::mem::take(&mut nodes[f]),
            })
            .collect();
        if groups.len() < 2 {
            return Vec::new();
        }
        groups
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

    /// The path a link in `form` from node `from` to node `to` is written
    /// with, in the vault's style (Obsidian's "New link format"; in a
    /// SilverBullet space, from its root, a markdown link's with a leading
    /// `/`), always reaching `to`.
    pub fn link_path(
        &self,
        from: usize,
        to: usize,
        form: planvault_core::vault::links::LinkForm,
    ) -> String {
        use planvault_core::vault::{is_plan_note, links::LinkIndex, node_id};
        // Every note of the vault, the plan's first (their indices are the
        // nodes'): a link resolves among them all in Obsidian, so a plan
        // kept in a folder gets a path where a namesake outside would win.
        let nodes = &self.checked.plan.nodes;
        let plan: std::collections::HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        let outside = self
            .files
            .keys()
            .filter(|path| is_plan_note(path))
            .map(|path| node_id(path))
            .filter(|id| !plan.contains(id));
        let index = LinkIndex::new(nodes.iter().map(|n| n.id.as_str()).chain(outside));
        if silverbullet::is_space(&self.files) {
            silverbullet::link_path(&index, to, from, form)
        } else {
            index.link_path(to, from, self.link_style().path)
        }
    }

    /// A new link from note `from` to note `to` as this vault writes one:
    /// its form and path.
    pub fn new_link(
        &self,
        from: usize,
        to: usize,
    ) -> (planvault_core::vault::links::LinkForm, String) {
        let form = self.link_style().form;
        (form, self.link_path(from, to, form))
    }

    /// How the vault writes new links (Obsidian's "Use `[[Wikilinks]]`" and
    /// "New link format").
    pub fn link_style(&self) -> planvault_core::vault::links::LinkStyle {
        use planvault_core::vault::links::{vault_link_style, APP_SETTINGS};
        vault_link_style(self.files.get(APP_SETTINGS).map(String::as_str))
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
/// direct, which keeps a drag on a big plan cheap. After an edit (`before`)
/// the cards drawn before stay put and only new ones are placed.
fn place(
    checked: &Checked,
    positions: &BTreeMap<String, Point>,
    listed: &[usize],
    before: Option<&VaultDoc>,
) -> Layout {
    let plan = &checked.plan;
    let options = layout_options();
    let all_placed =
        !plan.nodes.is_empty() && plan.nodes.iter().all(|n| positions.contains_key(&n.id));
    if !all_placed {
        let mut graph = plan_graph(plan, |id| positions.get(id).copied());
        graph.order = listed.to_vec();
        return match before {
            Some(before) => place_around(plan, &graph, before, &options),
            None => layout(&graph, &options),
        };
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
    let layers = vec![0; nodes.len()];
    Layout::new(nodes, routes, layers)
}

/// The layout of `plan` keeping what `before` drew: a card keeps its place
/// by id; a note renamed (or replaced) by the edit takes the place of the
/// one that went, so a rename moves nothing; an edge keeps its bends when
/// both its ends stay.
fn place_around(
    plan: &planvault_core::Plan,
    graph: &Graph,
    before: &VaultDoc,
    options: &Options,
) -> Layout {
    let old = &before.checked.plan;
    let mut was: Vec<Option<usize>> = plan
        .nodes
        .iter()
        .map(|n| before.node_index(&n.id))
        .collect();
    let mut gone =
        (0..old.nodes.len()).filter(|&j| !plan.nodes.iter().any(|n| n.id == old.nodes[j].id));
    for slot in was.iter_mut().filter(|w| w.is_none()) {
        match gone.next() {
            Some(j) => *slot = Some(j),
            None => break,
        }
    }
    let mut previous = Previous::default();
    for (i, w) in was.iter().enumerate() {
        if let Some(r) = w.and_then(|j| before.layout.nodes.get(j)) {
            previous.nodes.insert(i, Point { x: r.x, y: r.y });
        }
    }
    // An edge is the same edge when it joins the same two cards (the k-th
    // of those, for several).
    let mut routes: std::collections::HashMap<(usize, usize), Vec<&Route>> = Default::default();
    for (e, route) in old.edges.iter().zip(&before.layout.routes) {
        if let Some(to) = e.to {
            routes.entry((e.from, to)).or_default().push(route);
        }
    }
    let mut seen: std::collections::HashMap<(usize, usize), usize> = Default::default();
    for (i, e) in plan.edges.iter().enumerate() {
        let Some((a, b)) = e.to.and_then(|t| Some((was[e.from]?, was[t]?))) else {
            continue;
        };
        let k = seen.entry((a, b)).or_default();
        if let Some(route) = routes.get(&(a, b)).and_then(|r| r.get(*k)) {
            previous.bends.insert(i, route.bends.clone());
        }
        *k += 1;
    }
    extend(graph, &previous, options)
}

/// One folder of the plan's notes, drawn as a region when zoomed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderGroup {
    /// The folder's name (one level below the one all notes share).
    pub name: String,
    pub nodes: Vec<usize>,
}

pub fn basename(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

/// `plan.canvas` in `folder`.
fn canvas_path(folder: &str) -> String {
    if folder.is_empty() {
        CANVAS_FILE.to_string()
    } else {
        format!("{folder}/{CANVAS_FILE}")
    }
}

/// Whether a node of the whole vault's check is a plan note: it has a
/// `## Next` section or is `type: start`. (An ADR's `status: accepted` does
/// not make one.)
fn is_plan_note(node: &planvault_core::Node) -> bool {
    node.kind == NodeKind::Start || matches!(&node.ext, NodeExt::Vault(v) if v.next_line.is_some())
}

/// Every folder holding plan notes, itself or below, from the whole vault's
/// check (`check_in_folder(files, "")`), in explorer order ([`folder_order`]).
pub fn plan_folders(whole: &Checked) -> Vec<PlanFolder> {
    let mut folders: BTreeMap<&str, PlanFolder> = BTreeMap::new();
    for node in whole.plan.nodes.iter().filter(|n| is_plan_note(n)) {
        let mut parent = node.id.rsplit_once('/').map(|(f, _)| f);
        let mut own = 1;
        while let Some(folder) = parent {
            let entry = folders.entry(folder).or_insert_with(|| PlanFolder {
                folder: folder.to_string(),
                notes: 0,
                own: 0,
            });
            entry.notes += 1;
            entry.own += own;
            own = 0;
            parent = folder.rsplit_once('/').map(|(f, _)| f);
        }
    }
    let folders: Vec<PlanFolder> = folders.into_values().collect();
    let paths: Vec<&str> = folders.iter().map(|f| f.folder.as_str()).collect();
    let order = folder_order(&paths);
    order.into_iter().map(|i| folders[i].clone()).collect()
}

/// The plan's folder when the user has not picked one: the whole vault if
/// it is one plan (one start at most, every note reached), else the folder
/// holding the most plan notes itself (the top of the vault among them;
/// ties: the shallower, then the first in path order).
pub fn default_folder(whole: &Checked, folders: &[PlanFolder]) -> String {
    let one_plan = !whole.diagnostics.iter().any(|d| {
        matches!(
            d.code,
            Code::NotPartOfPlan | Code::Unreachable | Code::MultipleStarts
        )
    });
    if one_plan || folders.is_empty() {
        return String::new();
    }
    let top = whole
        .plan
        .nodes
        .iter()
        .filter(|n| is_plan_note(n) && !n.id.contains('/'))
        .count();
    let depth = |f: &str| f.matches('/').count();
    folders
        .iter()
        .filter(|f| f.own > top)
        .max_by(|a, b| {
            a.own
                .cmp(&b.own)
                .then(depth(&b.folder).cmp(&depth(&a.folder)))
                .then(b.folder.cmp(&a.folder))
        })
        .map(|f| f.folder.clone())
        .unwrap_or_default()
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
    fn notes_spread_over_folders_group_by_the_first_folder_below_the_plan() {
        let note = |next: &str| format!("# N\n\n## Next\n- [[{next}]]\n");
        let files: BTreeMap<String, String> = [
            (
                "plans/launch/start.md",
                "---\ntype: start\n---\n## Next\n- [[Sources]]\n".to_string(),
            ),
            ("plans/launch/research/Sources.md", note("Notes")),
            ("plans/launch/research/deep/Notes.md", note("Build")),
            ("plans/launch/build/Build.md", note("Ship")),
            ("plans/launch/build/Ship.md", "# Ship\n".to_string()),
            ("Inbox.md", "# Inbox\n".to_string()),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t))
        .collect();
        let doc = VaultDoc::open(files.clone(), Some("plans/launch"));
        assert_eq!(doc.folder, "plans/launch");
        let named = |doc: &VaultDoc| {
            doc.folder_groups()
                .into_iter()
                .map(|g| {
                    let mut ids: Vec<String> = g
                        .nodes
                        .iter()
                        .map(|&i| doc.checked.plan.nodes[i].id.clone())
                        .collect();
                    ids.sort();
                    (g.name, ids)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            named(&doc),
            [
                (
                    "build".to_string(),
                    vec![
                        "plans/launch/build/Build".to_string(),
                        "plans/launch/build/Ship".to_string()
                    ]
                ),
                (
                    "research".to_string(),
                    vec![
                        "plans/launch/research/Sources".to_string(),
                        "plans/launch/research/deep/Notes".to_string()
                    ]
                ),
            ]
        );
        // One folder is no grouping: nothing to tell apart.
        let one = doc.with_changes([
            ("plans/launch/build/Build.md", None),
            ("plans/launch/build/Ship.md", None),
        ]);
        assert_eq!(named(&one), []);
    }

    #[test]
    fn derives_plan_and_layout_from_notes() {
        let doc = VaultDoc::new(example());
        assert_eq!(doc.checked.plan.nodes.len(), 3);
        assert_eq!(doc.checked.plan.edges.len(), 3);
        assert_eq!(doc.layout.nodes.len(), 3);
        assert!(!doc.checked.has_errors(), "{:?}", doc.checked.diagnostics);
    }

    /// A vault whose plan is `plans/launch`, beside a templates folder, an
    /// ignored folder and unrelated notes (the e2e test's vault).
    pub fn big_vault() -> BTreeMap<String, String> {
        [
            (".obsidian/templates.json", "{\"folder\":\"Templates\"}"),
            (".planvaultignore", "Archive/\n"),
            (
                "Templates/Step.md",
                "---\ntype: step\n---\n## Next\n- [[<% tp.file.title %>]]\n",
            ),
            (
                "Archive/Old start.md",
                "---\ntype: start\n---\n## Next\n- [[Gone]]\n",
            ),
            ("Notes/ADR-001.md", "---\nstatus: accepted\n---\n# ADR 1\n"),
            ("Notes/Review.md", "# Another review\n"),
            ("Inbox.md", "# Inbox\n"),
            (
                "plans/launch/start.md",
                "---\ntype: start\n---\n# Launch\n\nSee [[ADR-001]].\n\n## Next\n- [[Draft]]\n",
            ),
            (
                "plans/launch/Draft.md",
                "# Draft\n\n## Next\n- [[Review]]\n",
            ),
            (
                "plans/launch/Review.md",
                "# Review\n\n## Next\n- approved -> [[Send]]\n- needs revision -> [[Draft]]\n",
            ),
            ("plans/launch/Send.md", "# Send\n"),
            (
                "plans/other/start.md",
                "---\ntype: start\n---\n# Other\n\n## Next\n- [[Done]]\n",
            ),
            ("plans/other/Done.md", "# Done\n"),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
    }

    fn ids(doc: &VaultDoc) -> Vec<&str> {
        doc.checked
            .plan
            .nodes
            .iter()
            .map(|n| n.id.as_str())
            .collect()
    }

    #[test]
    fn a_vault_whose_plans_are_folders_opens_on_the_biggest() {
        let doc = VaultDoc::new(big_vault());
        assert_eq!(doc.folder, "plans/launch");
        assert_eq!(
            ids(&doc),
            [
                "plans/launch/Draft",
                "plans/launch/Review",
                "plans/launch/Send",
                "plans/launch/start"
            ]
        );
        // `[[Review]]` is the plan's own, not Notes/Review.
        let draft = doc.node_index("plans/launch/Draft").unwrap();
        let edge = doc
            .checked
            .plan
            .edges
            .iter()
            .find(|e| e.from == draft)
            .unwrap();
        assert_eq!(edge.to, doc.node_index("plans/launch/Review"));
        assert!(
            doc.checked.diagnostics.is_empty(),
            "{:?}",
            doc.checked.diagnostics
        );
        let folders: Vec<(&str, usize, usize)> = doc
            .folders
            .iter()
            .map(|f| (f.folder.as_str(), f.notes, f.own))
            .collect();
        assert_eq!(
            folders,
            [
                ("plans", 4, 0),
                ("plans/launch", 3, 3),
                ("plans/other", 1, 1)
            ],
            "templates and ignored folders hold no plan; an ADR is no plan note"
        );
        assert_eq!(doc.canvas_file(), "plans/launch/plan.canvas");
    }

    #[test]
    fn the_picked_folder_is_kept_while_the_vault_has_it() {
        let files = big_vault();
        let other = VaultDoc::open(files.clone(), Some("plans/other"));
        assert_eq!(ids(&other), ["plans/other/Done", "plans/other/start"]);
        let whole = VaultDoc::open(files.clone(), Some(""));
        assert_eq!(whole.folder, "");
        assert_eq!(whole.checked.plan.nodes.len(), 9);
        assert!(whole
            .checked
            .diagnostics
            .iter()
            .any(|d| d.code == Code::MultipleStarts));
        // A folder the vault no longer holds plan notes in: the default.
        assert_eq!(
            VaultDoc::open(files, Some("plans/gone")).folder,
            "plans/launch"
        );
        // Edits keep the folder; a note outside it is a link target only.
        let edited =
            other.with_changes([("Inbox.md", Some("# Inbox\n\n## Next\n- [[Nowhere]]\n"))]);
        assert_eq!(edited.folder, "plans/other");
        assert!(edited.checked.diagnostics.is_empty());
        let edited = edited.with_changes([(
            "plans/other/Done.md",
            Some("# Done\n\n## Next\n- [[Inbox]]\n"),
        )]);
        let codes: Vec<&str> = edited
            .checked
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        // Its one way out leaves the plan, so the plan has no end either.
        assert_eq!(codes, ["edge-leaves-plan", "no-terminal-reachable"]);
    }

    /// A note the browser could not decode is `unreadable-note` where its
    /// first bad byte was, through every re-check (another plan folder, an
    /// edit of another note, a re-read); one that holds U+FFFD as text is not.
    #[test]
    fn a_note_read_with_bytes_that_are_not_utf8_says_so() {
        let mut files = example();
        let draft = files["draft.md"].replace("# Draft", "# Draft \u{fffd} caf\u{fffd}");
        files.insert("draft.md".into(), draft);
        let at = files["draft.md"].find("caf").unwrap() + 3;
        let unreadable = |doc: &VaultDoc| -> Vec<String> {
            doc.checked
                .diagnostics
                .iter()
                .filter(|d| d.code == planvault_core::Code::UnreadableNote)
                .map(|d| d.render_human())
                .collect()
        };
        let clean = VaultDoc::new(files.clone());
        assert!(unreadable(&clean).is_empty(), "{:?}", unreadable(&clean));
        let read = Reading {
            files,
            unread: vec![("draft.md".to_string(), Unread::NotUtf8(at))],
        };
        let doc = VaultDoc::open_read(read.clone(), None);
        let expected = ["draft.md:4:14: error[unreadable-note]: `draft.md` is not UTF-8 text: bytes here (the first of them) could not be read and show as U+FFFD; save the note as UTF-8"];
        assert_eq!(unreadable(&doc), expected);
        assert_eq!(unreadable(&doc.in_folder("")), expected);
        assert_eq!(unreadable(&doc.reread(read)), expected);
        let edited = doc.with_changes([("send.md", Some("# Send\n"))]);
        assert_eq!(unreadable(&edited), expected);
        // Its own text replaced by the app's: the app's text is the note's.
        let rewritten = doc.with_changes([("draft.md", Some("# Draft\n"))]);
        assert!(unreadable(&rewritten).is_empty());
        // A note too large to read, its text empty: the same, with its size.
        let mut files = example();
        files.insert("send.md".into(), String::new());
        let read = Reading {
            files,
            unread: vec![("send.md".to_string(), Unread::TooLarge(5 << 30))],
        };
        let doc = VaultDoc::open_read(read.clone(), None);
        let expected = ["send.md:1:1: error[unreadable-note]: `send.md` holds 5 GiB, more than the 64 MiB planvault reads of a file: make it smaller, or move it out of the plan"];
        assert_eq!(unreadable(&doc), expected);
        assert_eq!(unreadable(&doc.reread(read)), expected);
        let edited = doc.with_changes([("draft.md", Some("# Draft\n"))]);
        assert_eq!(unreadable(&edited), expected);
    }

    #[test]
    fn a_vault_that_is_one_plan_opens_whole() {
        let doc = VaultDoc::new(example());
        assert_eq!(doc.folder, "");
        assert!(doc.folders.is_empty());
        // One plan spread over folders, every note reached: still the whole vault.
        let mut files = example();
        let send = files.remove("send.md").unwrap();
        files.insert("out/send.md".into(), send);
        let doc = VaultDoc::new(files);
        assert_eq!((doc.folder.as_str(), doc.checked.plan.nodes.len()), ("", 3));
        // Stray notes in a folder beside a plan at the top: the top wins.
        let mut files = example();
        files.insert("misc/a.md".into(), "# A\n\n## Next\n- [[b]]\n".into());
        files.insert("misc/b.md".into(), "# B\n".into());
        assert_eq!(VaultDoc::new(files).folder, "");
    }

    #[test]
    fn notes_are_listed_and_gridded_in_explorer_order() {
        let mut files: BTreeMap<String, String> = (1..=12)
            .map(|k| (format!("Step {k}.md"), format!("# Step {k}\n")))
            .collect();
        files.insert("start.md".into(), "---\ntype: start\n---\n# Go\n".into());
        let doc = VaultDoc::new(files);
        let id = |i: usize| doc.checked.plan.nodes[i].id.as_str();
        let steps: Vec<String> = (1..=12).map(|k| format!("Step {k}")).collect();
        let listed: Vec<&str> = doc.listed.iter().map(|&i| id(i)).collect();
        // Case aside: "start" before "Step 1".
        assert_eq!(listed[0], "start");
        assert_eq!(listed[1..], steps);
        // The grid under the start fills its rows in the same order.
        let mut gridded: Vec<usize> = (0..13).filter(|&i| id(i) != "start").collect();
        gridded.sort_by(|&a, &b| {
            let (a, b) = (doc.layout.nodes[a], doc.layout.nodes[b]);
            (a.y, a.x).partial_cmp(&(b.y, b.x)).unwrap()
        });
        assert_eq!(gridded.iter().map(|&i| id(i)).collect::<Vec<_>>(), steps);
    }

    #[test]
    fn loose_notes_sit_under_the_plan_one_block_per_folder() {
        // The example's flow, and notes that link nowhere in two folders
        // (one with a sub-folder): as in a real notes vault.
        let mut files = example();
        for n in 0..7 {
            files.insert(format!("guide/g{n}.md"), format!("# G{n}\n"));
        }
        files.insert("guide/deep/d.md".into(), "# D\n".into());
        for n in 0..5 {
            files.insert(format!("ref/r{n}.md"), format!("# R{n}\n"));
        }
        let doc = VaultDoc::new(files);
        let rect = |id: &str| doc.layout.nodes[doc.node_index(id).unwrap()];
        let flow_bottom = ["draft", "review", "send"]
            .iter()
            .map(|id| rect(id).y + rect(id).height)
            .fold(f64::MIN, f64::max);
        let block = |ids: Vec<String>| {
            let rects: Vec<Rect> = ids.iter().map(|id| rect(id)).collect();
            assert!(
                rects.iter().all(|r| r.y > flow_bottom),
                "{ids:?} under the flow"
            );
            let x0 = rects.iter().map(|r| r.x).fold(f64::MAX, f64::min);
            let y0 = rects.iter().map(|r| r.y).fold(f64::MAX, f64::min);
            let x1 = rects.iter().map(|r| r.x + r.width).fold(f64::MIN, f64::max);
            let y1 = rects
                .iter()
                .map(|r| r.y + r.height)
                .fold(f64::MIN, f64::max);
            (x0, y0, x1, y1)
        };
        let mut guide: Vec<String> = (0..7).map(|n| format!("guide/g{n}")).collect();
        guide.push("guide/deep/d".into());
        let guide = block(guide);
        let reference = block((0..5).map(|n| format!("ref/r{n}")).collect());
        let apart = guide.2 <= reference.0
            || reference.2 <= guide.0
            || guide.3 <= reference.1
            || reference.3 <= guide.1;
        assert!(
            apart,
            "each folder's notes make their own rectangle: {guide:?} {reference:?}"
        );
    }

    #[test]
    fn link_path_is_the_basename_unless_ambiguous() {
        let mut files = example();
        files.insert("a/send.md".into(), "# Other send\n".into());
        let doc = VaultDoc::new(files);
        let review = doc.node_index("review").unwrap();
        let wiki = planvault_core::vault::links::LinkForm::Wiki;
        assert_eq!(doc.link_path(review, review, wiki), "review");
        assert_eq!(
            doc.link_path(review, doc.node_index("a/send").unwrap(), wiki),
            "a/send"
        );
    }
}
