//! A vault kept parsed between edits: re-reading one note costs one note.
//!
//! The plan is held in the same shape `vault::load` builds (nodes in path
//! order, each node's edges contiguous, in declaration order), so the graph
//! checks run on it unchanged and give the bytes a full load gives. Notes
//! are read for checks only (`Detail::Checks`: no bodies, no unknown
//! frontmatter keys), which the checks never read and an editor would
//! otherwise hold a copy of.
//! - A note's text changes: only that note is parsed, its node replaced and
//!   its edges re-resolved in place against the kept link index (the set of
//!   note ids, and so every other link's resolution, is unchanged).
//! - A note appears or disappears: node indices shift and links may resolve
//!   differently, so the link and path indices and the edges are renumbered
//!   in place and every edge's target is resolved again (no note is parsed
//!   again, no index rebuilt).
//!
//! A vault can hold its plan in one folder (`IncrementalVault::in_folder`):
//! then only that folder's notes are parsed and are nodes, every other note
//! is a link target only (its id sits after the plan's in the link index;
//! one appearing or going makes the vault stale, see below),
//! and the graph checks are `scope::validate_in_folder`'s, so the
//! diagnostics are `scope::check_in_folder`'s, `planvault validate
//! VAULT/FOLDER`'s. What the vault's settings skip (templates folders,
//! `.planvaultignore`) is left out as there (the caller builds the vault
//! again when those settings change); a note outside the plan added or
//! removed leaves the vault [`IncrementalVault::stale`]: it must be built
//! again from all its files.
//!
//! Pure Rust with no wasm-bindgen, so it is tested natively against `check`
//! and `check_in_folder`.

use planvault_core::diagnostic::sort_by_position;
use planvault_core::vault::links::{LinkIndex, Resolution};
use planvault_core::vault::note::{parse_note_as, DeclaredEdge};
use planvault_core::vault::scope::{self, is_skipped, resolve_in_folder};
use planvault_core::vault::{find_start, in_folder, is_plan_note, node_id, Detail, StartRule};
use planvault_core::{Diagnostic, Edge, Node, NodeExt, Plan, PlanFormat, SourcePos};
use std::collections::HashMap;
use std::ops::Range;

/// One plan note's share of the plan.
#[derive(Debug, Clone)]
struct NoteState {
    /// What parsing this note reported.
    diagnostics: Vec<Diagnostic>,
    /// Its edges as written, to re-resolve when the set of notes changes.
    declared: Vec<DeclaredEdge>,
    /// Its edges' range in `Plan::edges`.
    edges: Range<usize>,
    /// Where its frontmatter asks for proposal mode (`proposal: true`): the
    /// plan's request when it is the start.
    asks_proposal: Option<SourcePos>,
}

pub struct IncrementalVault {
    plan: Plan,
    /// Plan-note paths in path order; `paths[i]` is `plan.nodes[i]`.
    paths: Vec<String>,
    notes: Vec<NoteState>,
    position: HashMap<String, usize>,
    /// Every note id, for link resolution: the plan's (`paths`), then those
    /// of `outside`; valid until a note appears or disappears.
    links: LinkIndex<'static>,
    /// The plan's folder, vault-relative (empty: the whole vault).
    folder: String,
    /// The vault's other notes (outside `folder`, or skipped), in path order:
    /// link targets only, at `links` index `paths.len()` and on.
    outside: Vec<String>,
    /// What the vault's settings skip (`scope::skipped`).
    skip: Vec<String>,
    /// An edit changed those settings: build the vault again from its files.
    stale: bool,
    /// The graph checks' diagnostics, until an edit changes the graph.
    graph_diagnostics: Option<Vec<Diagnostic>>,
    /// Parse plus graph diagnostics, until the next change.
    cached: Option<Vec<Diagnostic>>,
}

/// What the graph checks read of one note: whether it is the start, where
/// it and its `## Next` heading are, and its edges. An edit that leaves this
/// unchanged (a knob like `status`, prose below the `## Next` list) cannot
/// change their diagnostics; one that only moves it (prose typed above the
/// list) moves the diagnostics that point into the note, nothing else.
struct GraphFacts<'a> {
    kind: planvault_core::NodeKind,
    pos: Option<&'a SourcePos>,
    next_line: Option<u32>,
    edges: &'a [Edge],
}

impl<'a> GraphFacts<'a> {
    fn of(node: &'a Node, edges: &'a [Edge]) -> Self {
        let next_line = match &node.ext {
            NodeExt::Vault(v) => v.next_line,
            _ => None,
        };
        GraphFacts {
            kind: node.kind,
            pos: node.pos.as_ref(),
            next_line,
            edges,
        }
    }

    /// The same graph: start-ness and every edge's target, kind and label.
    fn same_shape(&self, other: &GraphFacts<'_>) -> bool {
        self.kind == other.kind
            && self.edges.len() == other.edges.len()
            && self.edges.iter().zip(other.edges).all(|(a, b)| {
                (a.from, a.to, &a.target, a.kind, &a.label)
                    == (b.from, b.to, &b.target, b.kind, &b.label)
            })
    }

    /// Every position a graph diagnostic can take from this note (the note's
    /// own, its `## Next` heading's, each edge's), in a fixed order.
    fn positions(&self) -> Vec<Option<SourcePos>> {
        let next = self
            .pos
            .zip(self.next_line)
            .map(|(p, line)| SourcePos::new(p.file.clone(), line, 1));
        let mut all = vec![self.pos.cloned(), next];
        all.extend(self.edges.iter().map(|e| e.pos.clone()));
        all
    }
}

/// The graph diagnostics after a note moved without changing shape: each one
/// pointing into the note follows its source; `None` when a position cannot
/// be traced to exactly one source (the caller re-runs the checks).
fn relocate(
    mut diagnostics: Vec<Diagnostic>,
    old: &GraphFacts<'_>,
    new: &GraphFacts<'_>,
) -> Option<Vec<Diagnostic>> {
    let moves: Vec<(SourcePos, SourcePos)> = old
        .positions()
        .into_iter()
        .zip(new.positions())
        .filter_map(|(a, b)| a.zip(b))
        .collect();
    let file = &old.pos?.file;
    for d in diagnostics
        .iter_mut()
        .filter(|d| d.file.as_ref() == Some(file))
    {
        let (line, column) = (d.line?, d.column?);
        let mut targets = moves
            .iter()
            .filter(|(from, _)| (from.line, from.column) == (line, column))
            .map(|(_, to)| to);
        let to = targets.next()?;
        if targets.any(|other| other != to) {
            return None;
        }
        d.line = Some(to.line);
        d.column = Some(to.column);
    }
    sort_by_position(&mut diagnostics);
    Some(diagnostics)
}

impl IncrementalVault {
    /// Read a vault as `vault::load_from` does: `(path, text)` in path
    /// order, each path once; plan notes kept.
    pub fn new<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self::in_folder(files, "", Vec::new())
    }

    /// [`IncrementalVault::new`] for the plan in `folder` (vault-relative,
    /// no `/` around it; empty: the whole vault), as
    /// `scope::check_in_folder` reads it, leaving out `skip` (what the
    /// vault's settings skip: `scope::skipped`).
    pub fn in_folder<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
        folder: &str,
        skip: Vec<String>,
    ) -> Self {
        let mut vault = IncrementalVault {
            plan: Plan::new(PlanFormat::Vault),
            paths: Vec::new(),
            notes: Vec::new(),
            position: HashMap::new(),
            links: LinkIndex::owned(std::iter::empty()),
            folder: folder.to_owned(),
            outside: Vec::new(),
            skip,
            stale: false,
            graph_diagnostics: None,
            cached: None,
        };
        for (path, text) in files {
            if !is_plan_note(path) {
                continue;
            }
            if vault.is_note(path) {
                let (node, state) = parse(path, text);
                vault.paths.push(path.to_owned());
                vault.plan.nodes.push(node);
                vault.notes.push(state);
            } else {
                vault.outside.push(path.to_owned());
            }
        }
        vault.reindex();
        vault.relink();
        vault
    }

    /// Whether an edit added or removed a note outside the plan, so this
    /// vault no longer answers for its files: build it again.
    pub fn stale(&self) -> bool {
        self.stale
    }

    /// A note of the plan: in its folder, not skipped by the loader or the
    /// vault's settings. Every other note is one the plan's links may still
    /// reach (Obsidian opens a template too), kept by its path.
    fn is_note(&self, path: &str) -> bool {
        is_plan_note(path) && !is_skipped(path, &self.skip) && in_folder(path, &self.folder)
    }

    /// A note outside the plan appears (`true`) or disappears: a link
    /// target more or less, which may change any edge's target, so the
    /// vault is [`IncrementalVault::stale`] (a rare edit; the size budget
    /// has no room for re-indexing in place). Editing one changes nothing.
    fn set_outside(&mut self, path: &str, present: bool) -> bool {
        let known = self
            .outside
            .binary_search_by(|p| p.as_str().cmp(path))
            .is_ok();
        self.stale |= known != present;
        known
    }

    /// Add or replace one file (a path the loader skips changes nothing).
    pub fn update(&mut self, path: &str, text: &str) {
        if !is_plan_note(path) {
            return;
        }
        if !self.is_note(path) {
            self.set_outside(path, true);
            return;
        }
        self.cached = None;
        let (node, mut state) = parse(path, text);
        if let Some(&i) = self.position.get(path) {
            // The same ids as before, so every other edge resolves as it did:
            // splice this note's new edges over its old ones.
            let old = self.notes[i].edges.clone();
            let new_edges = self.resolve_note(i, &state.declared, self.paths.len());
            let (was, now) = (
                GraphFacts::of(&self.plan.nodes[i], &self.plan.edges[old.clone()]),
                GraphFacts::of(&node, &new_edges),
            );
            self.graph_diagnostics = match self.graph_diagnostics.take() {
                Some(kept) if was.same_shape(&now) && was.positions() == now.positions() => {
                    Some(kept)
                }
                Some(kept) if was.same_shape(&now) => relocate(kept, &was, &now),
                _ => None,
            };
            let delta = new_edges.len() as isize - old.len() as isize;
            state.edges = old.start..old.start + new_edges.len();
            self.plan.edges.splice(old, new_edges);
            for later in &mut self.notes[i + 1..] {
                later.edges = shift(&later.edges, delta);
            }
            self.plan.nodes[i] = node;
            self.notes[i] = state;
        } else {
            // A new note: later notes move up one index. Renumber what
            // holds indices, then re-resolve every edge's target in place
            // (the new id may resolve or disambiguate any link).
            let at = self.paths.partition_point(|p| p.as_str() < path);
            for i in self.position.values_mut().filter(|i| **i >= at) {
                *i += 1;
            }
            self.position.insert(path.to_owned(), at);
            self.links.insert_at(at, node_id(path));
            for edge in self.plan.edges.iter_mut().filter(|e| e.from >= at) {
                edge.from += 1;
            }
            let edge_at = if at == 0 {
                0
            } else {
                self.notes[at - 1].edges.end
            };
            let new_edges = self.resolve_note(at, &state.declared, self.paths.len() + 1);
            state.edges = edge_at..edge_at + new_edges.len();
            for later in &mut self.notes[at..] {
                later.edges = shift(&later.edges, new_edges.len() as isize);
            }
            self.plan.edges.splice(edge_at..edge_at, new_edges);
            self.paths.insert(at, path.to_owned());
            self.plan.nodes.insert(at, node);
            self.notes.insert(at, state);
            self.re_resolve();
            self.graph_diagnostics = None;
        }
    }

    /// Forget one file; `false` when the vault had no such note.
    pub fn remove(&mut self, path: &str) -> bool {
        let Some(&at) = self.position.get(path) else {
            return self.set_outside(path, false);
        };
        self.cached = None;
        self.position.remove(path);
        for i in self.position.values_mut().filter(|i| **i > at) {
            *i -= 1;
        }
        self.links.remove_at(at);
        self.paths.remove(at);
        self.plan.nodes.remove(at);
        let gone = self.notes.remove(at).edges;
        let removed = gone.len() as isize;
        self.plan.edges.drain(gone);
        for later in &mut self.notes[at..] {
            later.edges = shift(&later.edges, -removed);
        }
        for edge in self.plan.edges.iter_mut().filter(|e| e.from > at) {
            edge.from -= 1;
        }
        self.re_resolve();
        self.graph_diagnostics = None;
        true
    }

    /// Every edge's target resolved again against the current notes, in
    /// place (no edge is rebuilt).
    fn re_resolve(&mut self) {
        let links = &self.links;
        let nodes = self.plan.nodes.len();
        for edge in &mut self.plan.edges {
            edge.to = match links.resolve(&edge.target, edge.from) {
                Resolution::Found(to) if to < nodes => Some(to),
                _ => None,
            };
        }
    }

    /// The plan as `vault::load_from_as(.., Detail::Checks)` would build it
    /// from the current files.
    pub fn plan(&mut self) -> &Plan {
        self.plan.start = match find_start(&self.plan) {
            StartRule::Found(start) => Some(start),
            _ => None,
        };
        &self.plan
    }

    /// Parse diagnostics (sorted by position, as `vault::load` sorts them)
    /// then the graph checks: what `planvault_core::check` gives; then
    /// proposal mode's rules where the start note asks for it, as
    /// `planvault validate` adds them.
    pub fn diagnostics(&mut self) -> &[Diagnostic] {
        if self.cached.is_none() {
            let asked = self
                .plan()
                .start
                .and_then(|i| self.notes[i].asks_proposal.clone());
            let mut all: Vec<Diagnostic> = self
                .notes
                .iter()
                .flat_map(|n| n.diagnostics.iter().cloned())
                .collect();
            sort_by_position(&mut all);
            let plan = &self.plan;
            let (links, folder, skip) = (&self.links, self.folder.as_str(), &self.skip);
            let graph = self
                .graph_diagnostics
                .get_or_insert_with(|| scope::validate_in_folder(plan, links, folder, skip));
            planvault_core::vault::drop_outside_plan(&mut all, graph, plan);
            all.extend_from_slice(graph);
            if let Some(asked) = asked {
                all.extend(planvault_core::proposal::check(plan, Some(&asked)));
            }
            self.cached = Some(all);
        }
        self.cached.as_deref().unwrap_or_default()
    }

    fn reindex(&mut self) {
        self.position = self
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        let outside = self.outside.iter().map(|p| node_id(p));
        self.links = LinkIndex::owned(self.plan.nodes.iter().map(|n| n.id.as_str()).chain(outside));
    }

    /// Note `i`'s declared edges as model edges, resolved against the kept
    /// index, whose first `nodes` notes are the plan's.
    fn resolve_note(&self, i: usize, declared: &[DeclaredEdge], nodes: usize) -> Vec<Edge> {
        declared
            .iter()
            .map(|d| resolve_in_folder(&self.links, nodes, i, d.clone()))
            .collect()
    }

    /// Resolve every note's declared edges against the current set of notes.
    fn relink(&mut self) {
        let links = &self.links;
        let nodes = self.notes.len();
        let mut edges = Vec::with_capacity(self.notes.iter().map(|n| n.declared.len()).sum());
        for (from, note) in self.notes.iter_mut().enumerate() {
            let start = edges.len();
            edges.extend(
                note.declared
                    .iter()
                    .map(|e| resolve_in_folder(links, nodes, from, e.clone())),
            );
            note.edges = start..edges.len();
        }
        self.plan.edges = edges;
    }
}

fn parse(path: &str, text: &str) -> (Node, NoteState) {
    let mut diagnostics = Vec::new();
    let parsed = parse_note_as(path, node_id(path), text, Detail::Checks, &mut diagnostics);
    (
        parsed.node,
        NoteState {
            diagnostics,
            declared: parsed.edges,
            edges: 0..0,
            asks_proposal: planvault_core::proposal::requested_in_note(path, text),
        },
    )
}

fn shift(range: &Range<usize>, delta: isize) -> Range<usize> {
    let move_by = |x: usize| x.saturating_add_signed(delta);
    move_by(range.start)..move_by(range.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use planvault_core::vault::{check_in_folder, load_from_as};
    use planvault_core::{check, PlanSource};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn open(files: &BTreeMap<String, String>) -> IncrementalVault {
        IncrementalVault::new(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))
    }

    /// The vault with its plan in `folder`, skipping what its settings say.
    fn open_in(files: &BTreeMap<String, String>, folder: &str) -> IncrementalVault {
        let skip = planvault_core::vault::scope::skipped(files);
        IncrementalVault::in_folder(
            files.iter().map(|(p, t)| (p.as_str(), t.as_str())),
            folder,
            skip,
        )
    }

    /// The incremental vault agrees with a full `check` of the same files,
    /// and holds the plan a load for checks builds.
    fn agrees(vault: &mut IncrementalVault, files: &BTreeMap<String, String>) {
        let full = check(&PlanSource::Vault(files.clone()));
        assert_eq!(vault.diagnostics(), &full.diagnostics[..]);
        let (for_checks, _) = load_from_as(
            files.iter().map(|(p, t)| (p.as_str(), t.as_str())),
            Detail::Checks,
        );
        assert_eq!(vault.plan(), &for_checks);
    }

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    const START: &str = "---\ntype: start\n---\n# Draft\n\n## Next\n- ok -> [[review]]\n";
    const REVIEW: &str = "# Review\n\n## Next\n- fix -> [[draft]]\n- [[send]]\n";

    #[test]
    fn editing_a_note_in_place_matches_a_full_load() {
        let mut now = files(&[
            ("draft.md", START),
            ("review.md", REVIEW),
            ("send.md", "# Send\n"),
        ]);
        let mut vault = open(&now);
        agrees(&mut vault, &now);
        // The review loses its exit: a loop with no way out, and `send` unreachable.
        let text = "# Review\n\n## Next\n- fix -> [[draft]]\n";
        vault.update("review.md", text);
        now.insert("review.md".into(), text.into());
        agrees(&mut vault, &now);
        assert!(vault
            .diagnostics()
            .iter()
            .any(|d| d.code == planvault_core::Code::CycleWithoutExit));
        // More edges than before in an earlier note shift the later ones.
        let text = "---\ntype: start\nmax_visits: three\n---\n# Draft\n\n## Next\n- ok -> [[review]]\n- [[send]]\n- [[nowhere]]\n";
        vault.update("draft.md", text);
        now.insert("draft.md".into(), text.into());
        agrees(&mut vault, &now);
    }

    #[test]
    fn knob_and_prose_edits_keep_the_graph_checks_and_their_diagnostics() {
        let review = "---\nstatus: pending\n---\n# Review\n\n## Next\n- fix -> [[draft]]\n- lost -> [[nowhere]]\n";
        let mut now = files(&[
            ("draft.md", START),
            ("review.md", review),
            ("send.md", "# Send\n"),
        ]);
        let mut vault = open(&now);
        agrees(&mut vault, &now);
        let done = review.replace("pending", "done");
        vault.update("review.md", &done);
        now.insert("review.md".into(), done.clone());
        assert!(
            vault.graph_diagnostics.is_some(),
            "a status change leaves the graph as it was"
        );
        agrees(&mut vault, &now);
        // Prose above the `## Next` list moves its diagnostics along.
        let moved = done.replace("# Review\n", "# Review\n\nMore prose.\n");
        vault.update("review.md", &moved);
        now.insert("review.md".into(), moved);
        assert!(
            vault.graph_diagnostics.is_some(),
            "moved, not changed: the diagnostics follow"
        );
        agrees(&mut vault, &now);
        let dangling = vault
            .diagnostics()
            .iter()
            .find(|d| d.code == planvault_core::Code::DanglingEdge)
            .cloned();
        assert_eq!(
            dangling.and_then(|d| d.line),
            Some(10),
            "the dangling edge's new line"
        );
        // A new edge changes the graph: the checks run again.
        let linked = review.replace("- fix -> [[draft]]\n", "- fix -> [[draft]]\n- [[send]]\n");
        vault.update("review.md", &linked);
        now.insert("review.md".into(), linked);
        assert!(vault.graph_diagnostics.is_none());
        agrees(&mut vault, &now);
    }

    #[test]
    fn adding_and_removing_notes_re_resolves_links() {
        let mut now = files(&[("draft.md", START), ("review.md", REVIEW)]);
        let mut vault = open(&now);
        agrees(&mut vault, &now);
        // `send` appears: the dangling link now resolves.
        vault.update("send.md", "# Send\n");
        now.insert("send.md".into(), "# Send\n".into());
        agrees(&mut vault, &now);
        // A second `send` makes the link ambiguous.
        vault.update("old/send.md", "# Old send\n");
        now.insert("old/send.md".into(), "# Old send\n".into());
        agrees(&mut vault, &now);
        assert!(vault.remove("send.md"));
        now.remove("send.md");
        agrees(&mut vault, &now);
        assert!(!vault.remove("send.md"));
        // What the loader skips changes nothing.
        vault.update(".obsidian/workspace.md", "# ignored\n");
        vault.update("00_plan-trace/run.md", "# ignored\n");
        agrees(&mut vault, &now);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Update(String, String),
        Remove(String),
    }

    fn path() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a.md",
            "b.md",
            "B.md",
            "c.md",
            "sub/a.md",
            "sub/d.md",
            ".obsidian/a.md",
            "x.txt",
        ])
        .prop_map(str::to_owned)
    }

    fn note() -> impl Strategy<Value = String> {
        let frontmatter = prop::sample::select(vec![
            "",
            "---\ntype: start\n---\n",
            "---\nstatus: done\nmax_visits: 2\n---\n",
            "---\nmax_visits: three\n---\n",
            "---\nstatus: active\nmax_visits: 2\n---\n",
            "---\nstatus: done\nmax_visits: 0\n---\n",
            "---\ntype: start\n",
        ]);
        let target = prop::sample::select(vec![
            "a", "b", "c", "d", "sub/a", "missing", "A|alias", "c#h",
        ]);
        let edge = (
            prop::sample::select(vec!["- ", "- yes -> ", "- next => ", "- no \u{2192} "]),
            target,
        )
            .prop_map(|(lead, t)| format!("{lead}[[{t}]]\n"));
        (
            frontmatter,
            prop::collection::vec(edge, 0..4),
            any::<bool>(),
        )
            .prop_map(|(fm, edges, crlf)| {
                let text = format!(
                    "{fm}# Title\n\nProse with [[b]].\n\n## Next\n{}",
                    edges.concat()
                );
                if crlf {
                    text.replace('\n', "\r\n")
                } else {
                    text
                }
            })
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (path(), note()).prop_map(|(p, t)| Op::Update(p, t)),
            1 => path().prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn any_edit_sequence_matches_a_full_load(
            initial in prop::collection::btree_map(path(), note(), 0..6),
            ops in prop::collection::vec(op(), 1..12),
        ) {
            let mut now = initial.clone();
            let mut vault = open(&now);
            agrees(&mut vault, &now);
            for op in ops {
                match op {
                    Op::Update(p, t) => { vault.update(&p, &t); now.insert(p, t); }
                    Op::Remove(p) => { vault.remove(&p); now.remove(&p); }
                }
                agrees(&mut vault, &now);
            }
        }
    }

    /// The vault with its plan in `folder` agrees with `check_in_folder` of
    /// the same files (diagnostics, nodes, edges and start).
    fn agrees_in(vault: &mut IncrementalVault, files: &BTreeMap<String, String>, folder: &str) {
        let full = check_in_folder(files, folder);
        assert_eq!(vault.diagnostics(), &full.diagnostics[..]);
        let ids = |plan: &Plan| plan.nodes.iter().map(|n| n.id.clone()).collect::<Vec<_>>();
        let plan = vault.plan();
        assert_eq!(ids(plan), ids(&full.plan));
        assert_eq!(plan.edges, full.plan.edges);
        assert_eq!(plan.start, full.plan.start);
    }

    /// A plan in `plans/launch` of a larger vault, with a templates folder
    /// and an ignore list (core's `vault-scoped/plan-in-a-big-vault`, small).
    fn big_vault() -> BTreeMap<String, String> {
        files(&[
            (".obsidian/templates.json", "{\"folder\":\"Templates\"}"),
            (".planvaultignore", "# kept for reference\nArchive/\n"),
            ("Archive/plans/launch/Send.md", "# An archived send\n"),
            ("Notes/ADR-001.md", "---\nstatus: accepted\n---\n# ADR\n\n## Next\n- [[Nowhere]]\n"),
            ("Notes/Review.md", "# Another review\n"),
            ("Templates/Step.md", "---\ntype: step\n---\n## Next\n- [[<% tp.file.title %>]]\n- [[Nowhere]]\n"),
            ("plans/launch/start.md", "---\ntype: start\n---\n# Launch\n\nSee [[ADR-001]].\n\n## Next\n- [[Draft]]\n"),
            ("plans/launch/Draft.md", "# Draft\n\n## Next\n- [[Review]]\n"),
            ("plans/launch/Review.md", "# Review\n\n## Next\n- needs revision -> [[./Draft]]\n- approved -> [[Send]]\n- escalate -> [[Notes/ADR-001]]\n"),
            ("plans/launch/Send.md", "# Send\n"),
        ])
    }

    #[test]
    fn a_plan_folder_resolves_its_links_in_the_whole_vault() {
        let mut now = big_vault();
        let folder = "plans/launch";
        let mut vault = open_in(&now, folder);
        agrees_in(&mut vault, &now, folder);
        let codes: Vec<&str> = vault
            .diagnostics()
            .iter()
            .map(|d| d.code.as_str())
            .collect();
        assert_eq!(codes, ["edge-leaves-plan"], "{:?}", vault.diagnostics());
        assert_eq!(vault.plan().nodes.len(), 4);
        // A note outside the plan changes: nothing to do.
        vault.update("Notes/Review.md", "# Edited elsewhere\n");
        now.insert("Notes/Review.md".into(), "# Edited elsewhere\n".into());
        assert!(!vault.stale());
        agrees_in(&mut vault, &now, folder);
        // One appears at the root: `[[Review]]` in Draft now means it (a
        // path from the vault root comes first in Obsidian), once the vault
        // is read again, and that edge leaves the plan.
        vault.update("Review.md", "# A review at the root\n");
        now.insert("Review.md".into(), "# A review at the root\n".into());
        assert!(vault.stale());
        let mut vault = open_in(&now, folder);
        agrees_in(&mut vault, &now, folder);
        let leaving = |vault: &mut IncrementalVault| {
            vault
                .diagnostics()
                .iter()
                .filter(|d| d.code.as_str() == "edge-leaves-plan")
                .count()
        };
        assert_eq!(leaving(&mut vault), 2, "{:?}", vault.diagnostics());
        // The ADR goes: the escalation edge now leads nowhere.
        assert!(vault.remove("Notes/ADR-001.md"));
        assert!(vault.stale());
        now.remove("Notes/ADR-001.md");
        let mut vault = open_in(&now, folder);
        agrees_in(&mut vault, &now, folder);
        assert!(
            vault
                .diagnostics()
                .iter()
                .any(|d| d.code.as_str() == "dangling-edge"),
            "{:?}",
            vault.diagnostics()
        );
        assert_eq!(leaving(&mut vault), 1);
        // A note in a skipped folder is never a node, but a link still
        // reaches it, as in Obsidian: one appearing makes the vault stale,
        // and read again, the escalation edge leaves the plan for it.
        vault.update("Archive/Notes/ADR-001.md", "# ADR\n");
        now.insert("Archive/Notes/ADR-001.md".into(), "# ADR\n".into());
        assert!(vault.stale());
        let mut vault = open_in(&now, folder);
        agrees_in(&mut vault, &now, folder);
        assert_eq!(leaving(&mut vault), 2, "{:?}", vault.diagnostics());
        assert_eq!(vault.plan().nodes.len(), 4);
        // The ignore list changes: the vault is built again with it (notes
        // once skipped were never kept).
        now.insert(".planvaultignore".into(), "Notes/\n".into());
        let mut vault = open_in(&now, folder);
        agrees_in(&mut vault, &now, folder);
        assert!(
            !vault.remove(".obsidian/templates.json"),
            "a setting is no note"
        );
    }

    #[test]
    fn the_whole_vault_skips_what_its_settings_skip() {
        let now = big_vault();
        let mut vault = open_in(&now, "");
        agrees_in(&mut vault, &now, "");
        let ids: Vec<&str> = vault.plan().nodes.iter().map(|n| n.id.as_str()).collect();
        assert!(
            !ids.iter()
                .any(|id| id.starts_with("Templates/") || id.starts_with("Archive/")),
            "{ids:?}"
        );
        assert!(ids.contains(&"Notes/ADR-001"));
    }

    fn scoped_path() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a.md",
            "c.md",
            "sub/a.md",
            "sub/b.md",
            "sub/c.md",
            "sub/deep/d.md",
            "T/a.md",
            "sub/T/e.md",
            ".obsidian/templates.json",
            ".planvaultignore",
        ])
        .prop_map(str::to_owned)
    }

    fn scoped_text(path: String) -> BoxedStrategy<(String, String)> {
        match path.as_str() {
            ".obsidian/templates.json" => prop::sample::select(vec![
                "{\"folder\":\"T\"}",
                "{\"folder\":\"sub/T/\"}",
                "not json",
            ])
            .prop_map(move |t| (path.clone(), t.to_owned()))
            .boxed(),
            ".planvaultignore" => {
                prop::sample::select(vec!["c.md\n", "# none\n", "sub/deep\nsub/c.md\n"])
                    .prop_map(move |t| (path.clone(), t.to_owned()))
                    .boxed()
            }
            _ => note().prop_map(move |t| (path.clone(), t)).boxed(),
        }
    }

    proptest! {
        #[test]
        fn any_edit_sequence_in_a_plan_folder_matches_check_in_folder(
            initial in prop::collection::vec(scoped_path().prop_flat_map(scoped_text), 0..8),
            ops in prop::collection::vec(
                (scoped_path().prop_flat_map(scoped_text), any::<bool>()),
                1..12,
            ),
        ) {
            let folder = "sub";
            let mut now: BTreeMap<String, String> = initial.into_iter().collect();
            let mut vault = open_in(&now, folder);
            agrees_in(&mut vault, &now, folder);
            for ((path, text), remove) in ops {
                if remove {
                    vault.remove(&path);
                    now.remove(&path);
                } else {
                    vault.update(&path, &text);
                    now.insert(path.clone(), text);
                }
                if vault.stale() || scope::is_setting(&path) {
                    vault = open_in(&now, folder);
                }
                agrees_in(&mut vault, &now, folder);
            }
        }
    }
}
