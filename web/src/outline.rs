//! The plan as a list, for the list view beside the canvas: a row per node
//! (its kind, status, the run's mark, its edges and its diagnostics), the
//! items a keyboard walks through in order, and where each key goes from
//! one item (the ARIA tree pattern: Up/Down, Home/End, Right opens a node
//! or enters it, Left closes it or goes back to it). Pure: tested natively.

use crate::doc::VaultDoc;
use planvault_core::{Code, NodeKind, Severity};
use std::collections::{BTreeSet, HashMap};

/// One focusable item of the list, by what survives edits: a node by id,
/// an edge by its note's node and the line it is written on, a diagnostic
/// by its node and place under it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Item {
    Node(String),
    Edge(String, u32),
    Diagnostic(String, usize),
}

impl Item {
    /// The node the item is under (or is).
    pub fn node(&self) -> &str {
        match self {
            Item::Node(id) | Item::Edge(id, _) | Item::Diagnostic(id, _) => id,
        }
    }

    /// A DOM id for the item: every character outside `[A-Za-z0-9-]`
    /// written as `_hex_`, so two node ids never share one.
    pub fn dom_id(&self) -> String {
        let (kind, id, n) = match self {
            Item::Node(id) => ("n", id, None),
            Item::Edge(id, line) => ("e", id, Some(*line as usize)),
            Item::Diagnostic(id, i) => ("d", id, Some(*i)),
        };
        let mut out = format!("list-{kind}-");
        for c in id.chars() {
            if c.is_ascii_alphanumeric() || c == '-' {
                out.push(c);
            } else {
                out.push_str(&format!("_{:x}_", c as u32));
            }
        }
        if let Some(n) = n {
            out.push_str(&format!("-{n}"));
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EdgeRow {
    /// The line of its `## Next` item in the note.
    pub line: u32,
    /// "approved → Send the email", "→ Review (unconditional)".
    pub text: String,
    /// An error is reported on its line.
    pub flagged: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DiagnosticRow {
    pub error: bool,
    pub text: String,
    /// A frontmatter problem: Enter opens the note's text to fix it.
    pub repair: bool,
}

/// What the run shows on a node, from the run view's ids.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunMarks {
    pub active: Option<String>,
    pub asking: Option<String>,
    pub failed: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub title: String,
    /// The note's folder below the plan's ("research/deep/"), empty for a
    /// note directly in it: the list is in explorer order, folders first.
    pub folder: String,
    /// "start", "step" or "human".
    pub kind: &'static str,
    pub status: &'static str,
    /// "running", "waiting for your answer", "the run failed here: …".
    pub run: Option<String>,
    pub edges: Vec<EdgeRow>,
    pub diagnostics: Vec<DiagnosticRow>,
}

impl Row {
    pub fn has_children(&self) -> bool {
        !self.edges.is_empty() || !self.diagnostics.is_empty()
    }

    /// The line under the title: folder, kind, status, run mark, error
    /// count.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = (!self.folder.is_empty())
            .then(|| self.folder.clone())
            .into_iter()
            .collect();
        parts.extend([self.kind.to_string(), self.status.to_string()]);
        parts.extend(self.run.clone());
        let errors = self.diagnostics.iter().filter(|d| d.error).count();
        let warnings = self.diagnostics.len() - errors;
        for (n, what) in [(errors, "error"), (warnings, "warning")] {
            match n {
                0 => {}
                1 => parts.push(format!("1 {what}")),
                n => parts.push(format!("{n} {what}s")),
            }
        }
        parts.join(" · ")
    }
}

/// The rows in the order Obsidian's file explorer lists the notes
/// ([`VaultDoc::listed`]), and where each id's is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    pub rows: Vec<Row>,
    index: HashMap<String, usize>,
}

/// What the list shows for one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub text: String,
    /// A node's summary line (empty for an edge or a diagnostic).
    pub meta: String,
    pub class: &'static str,
    /// A node's status (empty otherwise).
    pub status: &'static str,
    /// A node with edges or diagnostics under it.
    pub branch: bool,
}

impl Rows {
    pub fn get(&self, id: &str) -> Option<&Row> {
        self.rows.get(*self.index.get(id)?)
    }

    pub fn entry(&self, item: &Item) -> Option<Entry> {
        let row = self.get(item.node())?;
        let child = |text: String, class| Entry {
            text,
            meta: String::new(),
            class,
            status: "",
            branch: false,
        };
        Some(match item {
            Item::Node(_) => Entry {
                text: row.title.clone(),
                meta: row.summary(),
                class: "list-node",
                status: row.status,
                branch: row.has_children(),
            },
            Item::Edge(_, line) => {
                let e = row.edges.iter().find(|e| e.line == *line)?;
                child(
                    e.text.clone(),
                    if e.flagged {
                        "list-edge flagged"
                    } else {
                        "list-edge"
                    },
                )
            }
            Item::Diagnostic(_, n) => {
                let d = row.diagnostics.get(*n)?;
                child(
                    d.text.clone(),
                    if d.error {
                        "list-diag error"
                    } else {
                        "list-diag warning"
                    },
                )
            }
        })
    }
}

pub fn rows(doc: &VaultDoc, marks: &RunMarks) -> Rows {
    let plan = &doc.checked.plan;
    let mut rows = Vec::with_capacity(plan.nodes.len());
    for &i in &doc.listed {
        let node = &plan.nodes[i];
        let edges = plan
            .outgoing_indexed(i)
            .filter_map(|(_, e)| {
                let pos = e.pos.as_ref()?;
                let to = match e.to {
                    Some(t) => plan.nodes[t].title.clone(),
                    None => format!("{} (missing)", e.target),
                };
                let text = match &e.label {
                    Some(label) => format!("{label} → {to}"),
                    None => format!("→ {to} (unconditional)"),
                };
                let flagged = doc.checked.diagnostics.iter().any(|d| {
                    d.severity == Severity::Error
                        && d.file.as_deref() == Some(&pos.file)
                        && d.line == Some(pos.line)
                });
                Some(EdgeRow {
                    line: pos.line,
                    text,
                    flagged,
                })
            })
            .collect();
        let diagnostics = doc
            .diagnostics_of(i)
            .map(|d| DiagnosticRow {
                error: d.severity == Severity::Error,
                text: d.render_human(),
                repair: matches!(d.code, Code::BadFrontmatter | Code::NestingTooDeep),
            })
            .collect();
        let id = node.id.clone();
        let run = if marks.asking.as_ref() == Some(&id) {
            Some("waiting for your answer".to_string())
        } else if let Some((_, why)) = marks.failed.as_ref().filter(|(f, _)| *f == id) {
            Some(format!("the run failed here: {why}"))
        } else {
            (marks.active.as_ref() == Some(&id)).then(|| "running".to_string())
        };
        let start = plan.start == Some(i) || node.kind == NodeKind::Start;
        let folder = doc
            .file_of(i)
            .map(|file| {
                let inside = file
                    .strip_prefix(doc.folder.as_str())
                    .map_or(file, |rest| rest.trim_start_matches('/'));
                inside.rsplit_once('/').map_or("", |(dir, _)| dir)
            })
            .filter(|dir| !dir.is_empty())
            .map_or_else(String::new, |dir| format!("{dir}/"));
        let row = Row {
            id: id.clone(),
            title: node.title.clone(),
            folder,
            kind: if start { "start" } else { node.kind.as_str() },
            status: node.status.as_str(),
            run,
            edges,
            diagnostics,
        };
        rows.push(row);
    }
    let index = rows
        .iter()
        .enumerate()
        .map(|(k, row)| (row.id.clone(), k))
        .collect();
    Rows { rows, index }
}

/// Every item the keyboard can reach, top to bottom: a closed node's
/// edges and diagnostics are skipped.
pub fn visible(rows: &Rows, closed: &BTreeSet<String>) -> Vec<Item> {
    let mut out = Vec::with_capacity(rows.rows.len());
    for row in &rows.rows {
        let id = &row.id;
        out.push(Item::Node(id.clone()));
        if closed.contains(id) {
            continue;
        }
        out.extend(row.edges.iter().map(|e| Item::Edge(id.clone(), e.line)));
        out.extend((0..row.diagnostics.len()).map(|n| Item::Diagnostic(id.clone(), n)));
    }
    out
}

/// What a key does on the focused item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    Focus(Item),
    Open(String),
    Close(String),
}

/// Where `key` goes from `current` among the `visible` items.
pub fn key_move(
    rows: &Rows,
    closed: &BTreeSet<String>,
    visible: &[Item],
    current: &Item,
    key: &str,
) -> Option<Move> {
    let at = visible.iter().position(|i| i == current);
    let focus = |i: usize| visible.get(i).cloned().map(Move::Focus);
    let parent = |item: &Item| item.node().to_string();
    match key {
        "ArrowDown" => focus(at.map_or(0, |a| a + 1)),
        "ArrowUp" => focus(at?.checked_sub(1)?),
        "Home" => focus(0),
        "End" => focus(visible.len().checked_sub(1)?),
        "ArrowRight" => match current {
            Item::Node(id) if rows.get(id).is_some_and(Row::has_children) => {
                if closed.contains(id) {
                    Some(Move::Open(id.clone()))
                } else {
                    focus(at? + 1)
                }
            }
            _ => None,
        },
        "ArrowLeft" => match current {
            Item::Node(id)
                if rows.get(id).is_some_and(Row::has_children) && !closed.contains(id) =>
            {
                Some(Move::Close(id.clone()))
            }
            Item::Node(_) => None,
            child => Some(Move::Focus(Item::Node(parent(child)))),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn doc() -> VaultDoc {
        let files: BTreeMap<String, String> = [
            (
                "a.md",
                "---\ntype: start\n---\n# Draft\n\n## Next\n- ok -> [[b]]\n- [[c]]\n",
            ),
            ("b.md", "---\nstatus: [oops\n---\n# Review\n"),
            ("c.md", "# Send\n\n## Next\n- [[nowhere]]\n"),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
        VaultDoc::new(files)
    }

    #[test]
    fn rows_come_in_explorer_order_each_found_by_its_id() {
        let files: BTreeMap<String, String> = [
            ("Step 10.md", "# Ten\n"),
            ("Step 2.md", "# Two\n"),
            ("sub/deeper/Deep.md", "# Deep\n"),
            (
                "a.md",
                "---\ntype: start\n---\n# Go\n\n## Next\n- [[Step 2]]\n",
            ),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
        let rows = rows(&VaultDoc::new(files), &RunMarks::default());
        let ids: Vec<&str> = rows.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["sub/deeper/Deep", "a", "Step 2", "Step 10"]);
        // Not the node's index in the plan (path order): the row's place.
        assert_eq!(rows.get("Step 10").unwrap().title, "Ten");
        assert_eq!(rows.get("Step 2").unwrap().title, "Two");
        // Folders come first: the row says which.
        let deep = rows.get("sub/deeper/Deep").unwrap();
        // (Unreachable from the start: a warning.)
        assert_eq!(deep.summary(), "sub/deeper/ · step · pending · 1 warning");
        assert_eq!(rows.get("a").unwrap().summary(), "start · pending");
    }

    #[test]
    fn rows_carry_edges_statuses_diagnostics_and_the_run() {
        let marks = RunMarks {
            active: Some("a".into()),
            failed: Some(("c".into(), "no answer".into())),
            ..RunMarks::default()
        };
        let rows = rows(&doc(), &marks);
        let ids: Vec<&str> = rows.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        let a = rows.get("a").unwrap();
        assert_eq!(a.kind, "start");
        assert_eq!(a.run.as_deref(), Some("running"));
        let texts: Vec<&str> = a.edges.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(texts, ["ok → Review", "→ Send (unconditional)"]);
        assert_eq!(a.summary(), "start · pending · running");
        let b = rows.get("b").unwrap();
        assert!(
            b.diagnostics.iter().any(|d| d.repair
                && d.error
                && d.text.starts_with("b.md:3:1: error[bad-frontmatter]")),
            "{b:?}"
        );
        let c = rows.get("c").unwrap();
        assert_eq!(c.run.as_deref(), Some("the run failed here: no answer"));
        assert_eq!(c.edges[0].text, "→ nowhere (missing) (unconditional)");
        assert!(c.edges[0].flagged);
        assert!(c.summary().ends_with("1 error"), "{}", c.summary());
        // What the list shows for each kind of item.
        let node = rows.entry(&Item::Node("c".into())).unwrap();
        assert_eq!(
            (node.text.as_str(), node.class, node.status, node.branch),
            ("Send", "list-node", "pending", true)
        );
        assert_eq!(node.meta, c.summary());
        let edge = rows.entry(&Item::Edge("c".into(), 4)).unwrap();
        assert_eq!(
            (edge.text.as_str(), edge.class, edge.meta.as_str()),
            (
                "→ nowhere (missing) (unconditional)",
                "list-edge flagged",
                ""
            )
        );
        let diagnostic = rows.entry(&Item::Diagnostic("b".into(), 0)).unwrap();
        assert_eq!(diagnostic.class, "list-diag error");
        assert_eq!(rows.entry(&Item::Edge("c".into(), 9)), None);
        assert_eq!(rows.entry(&Item::Node("gone".into())), None);
    }

    #[test]
    fn keys_walk_the_tree_and_open_and_close_nodes() {
        let rows = rows(&doc(), &RunMarks::default());
        let mut closed = BTreeSet::new();
        let all = visible(&rows, &closed);
        let a = Item::Node("a".into());
        let first_edge = Item::Edge("a".into(), 7);
        assert_eq!(
            all[..3],
            [a.clone(), first_edge.clone(), Item::Edge("a".into(), 8)]
        );
        let go = |closed: &BTreeSet<String>, from: &Item, key| {
            key_move(&rows, closed, &visible(&rows, closed), from, key)
        };
        assert_eq!(
            go(&closed, &a, "ArrowDown"),
            Some(Move::Focus(first_edge.clone()))
        );
        assert_eq!(
            go(&closed, &a, "ArrowRight"),
            Some(Move::Focus(first_edge.clone()))
        );
        assert_eq!(
            go(&closed, &first_edge, "ArrowLeft"),
            Some(Move::Focus(a.clone()))
        );
        assert_eq!(
            go(&closed, &first_edge, "ArrowUp"),
            Some(Move::Focus(a.clone()))
        );
        assert_eq!(go(&closed, &a, "ArrowUp"), None);
        assert_eq!(go(&closed, &a, "ArrowLeft"), Some(Move::Close("a".into())));
        assert_eq!(
            go(&closed, &a, "End"),
            Some(Move::Focus(all.last().unwrap().clone()))
        );
        closed.insert("a".to_string());
        assert_eq!(
            go(&closed, &a, "ArrowDown"),
            Some(Move::Focus(Item::Node("b".into())))
        );
        assert_eq!(go(&closed, &a, "ArrowRight"), Some(Move::Open("a".into())));
        assert_eq!(go(&closed, &a, "ArrowLeft"), None);
        assert_eq!(
            go(&closed, &Item::Node("b".into()), "Home"),
            Some(Move::Focus(a))
        );
    }

    #[test]
    fn dom_ids_are_distinct_for_ids_that_differ_only_in_punctuation() {
        let one = Item::Node("plans/a b".into()).dom_id();
        let two = Item::Node("plans_a-b".into()).dom_id();
        assert_ne!(one, two);
        assert_eq!(one, "list-n-plans_2f_a_20_b");
        assert_eq!(Item::Edge("x".into(), 3).dom_id(), "list-e-x-3");
    }
}
