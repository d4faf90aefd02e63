//! Property tests for the vault format.
//! - Any generated vault survives `save_plan` → `load` unchanged (positions
//!   aside, since saving lays notes out anew), and saving is a fixed point.
//! - The validator agrees with a brute-force reference (transitive closure by
//!   matrix) on random small graphs.

use planvault_core::vault::{self, save_plan};
use planvault_core::{
    Code, Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, Status, VaultNode,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

// ---------- generated vaults ----------

#[derive(Debug, Clone)]
struct GenEdge {
    label: Option<String>,
    /// Index into the note list, or a name no note has.
    target: Result<usize, String>,
    arrow: &'static str,
    alias: bool,
}

#[derive(Debug, Clone)]
struct GenNote {
    folder: Option<String>,
    name: String,
    title: Option<String>,
    body: String,
    start: bool,
    status: Option<&'static str>,
    tools: Vec<String>,
    role: Option<String>,
    max_visits: Option<u32>,
    extra: Vec<(String, String)>,
    edges: Vec<GenEdge>,
    crlf: bool,
    bom: bool,
}

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,7}"
}

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..5).prop_map(|w| w.join(" "))
}

fn paragraph() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            words(),
            word().prop_map(|w| format!("see [[{w}]] here")),
            words().prop_map(|w| format!("- {w}")),
            words().prop_map(|w| format!("## {w}")),
        ],
        0..4,
    )
    .prop_map(|lines| lines.join("\n\n"))
}

fn edge(notes: usize) -> impl Strategy<Value = GenEdge> {
    (
        prop::option::of(prop_oneof![words(), Just("next".to_string())]),
        prop_oneof![4 => (0..notes).prop_map(Ok), 1 => word().prop_map(|w| Err(format!("missing-{w}")))],
        prop::sample::select(vec!["->", "=>", "→"]),
        any::<bool>(),
    )
        .prop_map(|(label, target, arrow, alias)| GenEdge { label, target, arrow, alias })
}

fn note(notes: usize) -> impl Strategy<Value = GenNote> {
    (
        (
            prop::option::of(word()),
            word(),
            prop::option::of(words()),
            paragraph(),
            any::<bool>(),
        ),
        (
            prop::option::of(prop::sample::select(vec!["pending", "active", "done"])),
            prop::collection::vec(word(), 0..3),
            prop::option::of(word()),
            prop::option::of(1u32..20),
        ),
        prop::collection::btree_map(word().prop_map(|w| format!("x_{w}")), words(), 0..3)
            .prop_map(|m| m.into_iter().collect::<Vec<_>>()),
        prop::collection::vec(edge(notes), 0..4),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                (folder, name, title, body, start),
                (status, tools, role, max_visits),
                extra,
                edges,
                (crlf, bom),
            )| {
                GenNote {
                    folder,
                    name,
                    title,
                    body,
                    start,
                    status,
                    tools,
                    role,
                    max_visits,
                    extra,
                    edges,
                    crlf,
                    bom,
                }
            },
        )
}

fn vault() -> impl Strategy<Value = Vec<GenNote>> {
    (1usize..7).prop_flat_map(|n| prop::collection::vec(note(n), n))
}

fn path(note: &GenNote, index: usize) -> String {
    // The index keeps names unique, so links by basename never tie.
    match &note.folder {
        Some(folder) => format!("{folder}/{}-{index}", note.name),
        None => format!("{}-{index}", note.name),
    }
}

fn render(notes: &[GenNote]) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for (i, n) in notes.iter().enumerate() {
        let mut text = String::new();
        let mut front = Vec::new();
        if n.start {
            front.push("type: start".to_string());
        }
        if let Some(s) = n.status {
            front.push(format!("status: {s}"));
        }
        if !n.tools.is_empty() {
            front.push(format!("tools: [{}]", n.tools.join(", ")));
        }
        if let Some(r) = &n.role {
            front.push(format!("role: {r}"));
        }
        if let Some(m) = n.max_visits {
            front.push(format!("max_visits: {m}"));
        }
        for (k, v) in &n.extra {
            front.push(format!("{k}: {v}"));
        }
        if !front.is_empty() {
            text.push_str(&format!("---\n{}\n---\n", front.join("\n")));
        }
        if let Some(t) = &n.title {
            text.push_str(&format!("# {t}\n\n"));
        }
        text.push_str(&n.body);
        if !n.edges.is_empty() {
            text.push_str("\n\n## Next\n");
            for e in &n.edges {
                let target = match &e.target {
                    Ok(t) => path(&notes[*t], *t).rsplit('/').next().unwrap().to_string(),
                    Err(missing) => missing.clone(),
                };
                let link = if e.alias {
                    format!("[[{target}|shown]]")
                } else {
                    format!("[[{target}]]")
                };
                match &e.label {
                    Some(l) => text.push_str(&format!("- {l} {} {link}\n", e.arrow)),
                    None => text.push_str(&format!("- {link}\n")),
                }
            }
        }
        if n.crlf {
            text = text.replace('\n', "\r\n");
        }
        if n.bom {
            text.insert(0, '\u{feff}');
        }
        files.insert(format!("{}.md", path(n, i)), text);
    }
    files
}

/// The plan without source positions, which a re-layout may move.
fn without_positions(mut plan: Plan) -> Plan {
    for edge in &mut plan.edges {
        edge.pos = None;
    }
    for node in &mut plan.nodes {
        if let NodeExt::Vault(v) = &mut node.ext {
            v.next_line = None;
        }
        // Saved notes use LF; a CRLF note's body keeps its own line endings
        // in the model, and LF is what comes back.
        node.body = node.body.replace("\r\n", "\n");
    }
    plan
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn save_then_load_is_unchanged(notes in vault()) {
        let files = render(&notes);
        let (plan, diagnostics) = vault::load(&files);
        prop_assert!(diagnostics.is_empty(), "generated vault should parse clean: {diagnostics:?}");
        let saved = save_plan(&plan);
        prop_assert_eq!(saved.keys().collect::<Vec<_>>(), files.keys().collect::<Vec<_>>());
        let (reloaded, diagnostics) = vault::load(&saved);
        prop_assert!(diagnostics.is_empty(), "{diagnostics:?}");
        prop_assert_eq!(without_positions(reloaded.clone()), without_positions(plan));
        prop_assert_eq!(save_plan(&reloaded), saved);
    }

    #[test]
    fn update_status_changes_only_the_status(notes in vault(), pick in any::<prop::sample::Index>(), status in prop::sample::select(vec![Status::Pending, Status::Active, Status::Done])) {
        let files = render(&notes);
        let (path, text) = files.iter().nth(pick.index(files.len())).unwrap();
        let updated = vault::update_status(text, status);
        let mut changed = files.clone();
        changed.insert(path.clone(), updated.clone());
        let (before, _) = vault::load(&files);
        let (after, diagnostics) = vault::load(&changed);
        prop_assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let i = before.node_index(&path[..path.len() - 3]).unwrap();
        prop_assert_eq!(after.nodes[i].status, status);
        let mut expected = before.clone();
        expected.nodes[i].status = status;
        prop_assert_eq!(without_positions(after), without_positions(expected));
        // Line endings and the BOM survive.
        prop_assert_eq!(updated.starts_with('\u{feff}'), text.starts_with('\u{feff}'));
        prop_assert_eq!(updated.contains("\r\n"), text.contains("\r\n"));
    }
}

// ---------- the validator against a brute-force reference ----------

#[derive(Debug, Clone)]
struct Graph {
    n: usize,
    starts: Vec<bool>,
    /// `(from, Some(to))`, or `(from, None)` for a dangling edge.
    edges: Vec<(usize, Option<usize>)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..7).prop_flat_map(|n| {
        (
            prop::collection::vec(prop::bool::weighted(0.2), n),
            prop::collection::vec((0..n, prop::option::weighted(0.9, 0..n)), 0..(2 * n + 2)),
        )
            .prop_map(move |(starts, edges)| Graph { n, starts, edges })
    })
}

fn to_plan(g: &Graph) -> Plan {
    let mut plan = Plan::new(PlanFormat::Vault);
    for i in 0..g.n {
        let id = format!("n{i}");
        plan.nodes.push(Node {
            title: id.clone(),
            body: String::new(),
            kind: if g.starts[i] {
                NodeKind::Start
            } else {
                NodeKind::Step
            },
            status: Status::Pending,
            tools: Vec::new(),
            role: None,
            max_visits: 3,
            pos: None,
            ext: NodeExt::Vault(VaultNode {
                file: format!("{id}.md"),
                ..VaultNode::default()
            }),
            id,
        });
    }
    plan.edges = g
        .edges
        .iter()
        .map(|&(from, to)| Edge {
            from,
            to,
            target: to.map_or("missing".to_string(), |t| format!("n{t}")),
            label: None,
            kind: EdgeKind::Unconditional,
            pos: None,
            written: None,
        })
        .collect();
    plan
}

/// What the rules say, computed the slow obvious way.
fn reference(g: &Graph) -> BTreeSet<(Code, Vec<String>)> {
    let name = |i: usize| format!("n{i}");
    let mut out = BTreeSet::new();
    // reach[i][j]: a path of one or more edges from i to j.
    let mut reach = vec![vec![false; g.n]; g.n];
    for &(f, t) in &g.edges {
        if let Some(t) = t {
            reach[f][t] = true;
        }
    }
    for k in 0..g.n {
        for i in 0..g.n {
            for j in 0..g.n {
                if reach[i][k] && reach[k][j] {
                    reach[i][j] = true;
                }
            }
        }
    }
    for &(f, t) in &g.edges {
        if t.is_none() {
            out.insert((Code::DanglingEdge, vec![name(f)]));
        }
    }
    let marked: Vec<usize> = (0..g.n).filter(|&i| g.starts[i]).collect();
    let roots: Vec<usize> = (0..g.n)
        .filter(|&i| !g.edges.iter().any(|&(_, t)| t == Some(i)))
        .collect();
    let start = match (marked.len(), roots.len()) {
        (1, _) => Some(marked[0]),
        (0, 1) => Some(roots[0]),
        (0, _) => {
            out.insert((Code::NoStart, roots.iter().map(|&i| name(i)).collect()));
            None
        }
        _ => {
            out.insert((
                Code::MultipleStarts,
                marked.iter().map(|&i| name(i)).collect(),
            ));
            None
        }
    };
    if let Some(s) = start {
        let reached = |i: usize| i == s || reach[s][i];
        let terminal = |i: usize| !g.edges.iter().any(|&(f, _)| f == i);
        if !(0..g.n).any(|i| reached(i) && terminal(i)) {
            out.insert((Code::NoTerminalReachable, vec![name(s)]));
        }
        for i in (0..g.n).filter(|&i| !reached(i)) {
            out.insert((Code::Unreachable, vec![name(i)]));
        }
    }
    let mut seen = vec![false; g.n];
    for i in 0..g.n {
        if seen[i] {
            continue;
        }
        let members: Vec<usize> = (0..g.n)
            .filter(|&j| j == i || (reach[i][j] && reach[j][i]))
            .collect();
        for &m in &members {
            seen[m] = true;
        }
        let cyclic = reach[i][i];
        let exits = g
            .edges
            .iter()
            .any(|&(f, t)| members.contains(&f) && t.is_none_or(|t| !members.contains(&t)));
        if cyclic && !exits {
            out.insert((
                Code::CycleWithoutExit,
                members.iter().map(|&m| name(m)).collect(),
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn validator_matches_the_reference(g in graph()) {
        let plan = to_plan(&g);
        let found: BTreeSet<(Code, Vec<String>)> =
            vault::validate(&plan).into_iter().map(|d| (d.code, d.nodes)).collect();
        prop_assert_eq!(found, reference(&g));
    }
}
