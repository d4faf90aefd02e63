//! The one graph model every plan format parses into.
//!
//! Vault folders, PLAN.md files and generated JSON plans all become a [`Plan`]:
//! nodes and edges with source positions. Validator, engine, layout and
//! exporters read this model only; what is peculiar to one format lives in
//! [`NodeExt`] so the shared code never has to guess.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Which grammar a plan was written in. Each keeps its own validation rules
/// (a vault may loop with an exit and a visit budget; a PLAN.md may not cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlanFormat {
    /// A folder of markdown notes, one per node.
    Vault,
    /// A single PLAN.md checklist.
    PlanMd,
    /// A model-emitted JSON plan (flat step list or DAG with bindings).
    Generated,
}

impl PlanFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanFormat::Vault => "vault",
            PlanFormat::PlanMd => "plan-md",
            PlanFormat::Generated => "generated",
        }
    }
}

/// A position in a source file, 1-based, `column` counted in characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourcePos {
    /// Path relative to the vault root (or the plan file's name).
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl SourcePos {
    pub fn new(file: impl Into<String>, line: u32, column: u32) -> Self {
        SourcePos {
            file: file.into(),
            line,
            column,
        }
    }
}

/// What a node does when the engine reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeKind {
    /// Vault `type: start`: where a run begins.
    Start,
    /// Vault `type: step` (the default for notes).
    Step,
    /// PLAN.md `@work` (the default for items).
    Work,
    /// PLAN.md `@gate`: review-only, its verdict is the outcome.
    Gate,
    /// PLAN.md `@verify`: review-only, aimed at proof.
    Verify,
    /// PLAN.md `@tool`: runs a command, no model turn.
    Tool,
    /// PLAN.md `@human`: a person decides (or the run does, under `autonomy: full`).
    Human,
    /// PLAN.md `@feedback`: reads the run's evidence, may propose amendments.
    Feedback,
    /// A generated plan's step: invokes one tool (capability) with arguments.
    Invoke,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Start => "start",
            NodeKind::Step => "step",
            NodeKind::Work => "work",
            NodeKind::Gate => "gate",
            NodeKind::Verify => "verify",
            NodeKind::Tool => "tool",
            NodeKind::Human => "human",
            NodeKind::Feedback => "feedback",
            NodeKind::Invoke => "invoke",
        }
    }
}

/// The resume marker: `status:` in a note, `[x]` in a PLAN.md.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    #[default]
    Pending,
    Active,
    Done,
    /// The node's work or judgment failed and the run stopped there; a
    /// resume starts the node again.
    Failed,
}

impl Status {
    /// Every status, in order.
    pub const ALL: [Status; 4] = [
        Status::Pending,
        Status::Active,
        Status::Done,
        Status::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Active => "active",
            Status::Done => "done",
            Status::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "pending" => Some(Status::Pending),
            "active" => Some(Status::Active),
            "done" => Some(Status::Done),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

/// The default per-node visit budget (seed 000).
pub const DEFAULT_MAX_VISITS: u32 = 3;

/// One node of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Stable identity: a note's vault-relative path without `.md`, a PLAN.md
    /// item's 1-based index, a generated step's name.
    pub id: String,
    pub title: String,
    /// The work description handed to the worker.
    pub body: String,
    pub kind: NodeKind,
    pub status: Status,
    /// Tools offered at this node (vault `tools:`; a generated step's tool).
    pub tools: Vec<String>,
    /// Routes this node's LLM calls to the endpoint configured for the role.
    pub role: Option<String>,
    pub max_visits: u32,
    /// Where the node is declared (a note's first line, an item's line).
    pub pos: Option<SourcePos>,
    pub ext: NodeExt,
}

/// What one format knows about a node that the others do not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "kebab-case")]
pub enum NodeExt {
    Vault(VaultNode),
    PlanMd(PlanMdNode),
    Generated(GeneratedNode),
}

/// A note's file-level facts, kept so writes can stay surgical.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VaultNode {
    /// Vault-relative path of the note, with `.md`.
    pub file: String,
    /// Frontmatter keys planvault does not interpret, in file order, with
    /// their raw YAML text so a rewrite keeps them byte for byte.
    pub extra_frontmatter: Vec<(String, String)>,
    /// 1-based line of the `## Next` heading, when the note has one.
    pub next_line: Option<u32>,
}

/// A PLAN.md checkbox item.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PlanMdNode {
    /// 1-based index among all checkboxes.
    pub index: u32,
    pub label: Option<String>,
    /// A `@tool` item's command.
    pub command: Option<String>,
    pub scenarios: Vec<String>,
    /// Declared signals: `(key, value)`, `@emit key` meaning `key=true`.
    pub emits: Vec<(String, String)>,
    pub needs: Vec<String>,
    /// Where each of `needs` was first declared (its `@needs` line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_at: Vec<SourcePos>,
}

/// A generated plan's step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GeneratedNode {
    /// The tool (capability) the step invokes.
    pub capability: String,
    /// Arguments; may contain `{"$from": "step.path"}` bindings.
    pub args: serde_json::Value,
    pub preconditions: Vec<Precondition>,
}

/// A generated step's precondition on an earlier step's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// `step.path` into a recorded output.
    pub reference: String,
    pub test: PreconditionTest,
    pub value: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionTest {
    Exists,
    Truthy,
    Equals,
}

/// How an edge was declared, which decides how the engine treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    /// Vault `- [[t]]` or `- next -> [[t]]`: taken when no condition held.
    Unconditional,
    /// Vault `- label -> [[t]]`: a natural-language condition.
    Conditional,
    /// A dependency (PLAN.md `(after: N)`, generated `after`/`dependsOn`),
    /// drawn from the dependency to the dependent.
    After,
    /// PLAN.md `@on cond -> N`: control may take it, the scheduler never waits on it.
    Route,
}

/// A directed edge between two nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Index into [`Plan::nodes`].
    pub from: usize,
    /// Index into [`Plan::nodes`]; `None` when the target does not exist.
    pub to: Option<usize>,
    /// The target as written: a link target, an item index, a step name.
    pub target: String,
    /// A vault edge's label, a route's condition text (`exit=0`, `fail`).
    pub label: Option<String>,
    pub kind: EdgeKind,
    /// Where the edge is declared (the `## Next` list item, the `@on` line).
    pub pos: Option<SourcePos>,
    /// A vault edge's link as written when it says more than `[[target]]`
    /// (a markdown link, `[Send it](Send%20it.md)`; `[[Send|it]]`,
    /// `[[Send ]]`), so a message names it as the note shows it; `None` for
    /// `[[target]]` and in other formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
}

impl Edge {
    /// The link as a note shows it, for messages and drawings.
    pub fn link_as_written(&self) -> String {
        match &self.written {
            Some(written) => written.clone(),
            None => format!("[[{}]]", self.target),
        }
    }

    /// Whether the link is a markdown link (`[text](path.md)`): an edit or
    /// a suggested fix keeps its form. A wikilink ends in `]]`, a markdown
    /// link (inline, the only kind read as an edge) in `)`.
    pub fn is_markdown_link(&self) -> bool {
        self.written.as_deref().is_some_and(|w| !w.ends_with("]]"))
    }

    pub fn is_conditional(&self) -> bool {
        matches!(self.kind, EdgeKind::Conditional | EdgeKind::Route)
    }
}

/// A parsed plan in any format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: PlanFormat,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// Index of the start node, when one could be determined.
    pub start: Option<usize>,
    /// The tools the plan declared: for generated plans, the run's grant.
    /// `None` means the plan does not narrow the host's tools.
    pub grant: Option<BTreeSet<String>>,
}

impl Plan {
    /// Which nodes `start` reaches over the plan's edges (an explicit
    /// stack: no recursion over user data).
    pub fn reached_from(&self, start: usize) -> Vec<bool> {
        let mut reached = vec![false; self.nodes.len()];
        let mut out: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for edge in &self.edges {
            if let (Some(from), Some(to)) = (out.get_mut(edge.from), edge.to) {
                from.push(to);
            }
        }
        let mut pending = vec![start];
        while let Some(node) = pending.pop() {
            if reached.get(node) == Some(&false) {
                reached[node] = true;
                pending.extend(&out[node]);
            }
        }
        reached
    }

    pub fn new(format: PlanFormat) -> Self {
        Plan {
            format,
            nodes: Vec::new(),
            edges: Vec::new(),
            start: None,
            grant: None,
        }
    }

    /// The index of the node with this id.
    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// Edges leaving `node`, in declaration order.
    pub fn outgoing(&self, node: usize) -> impl Iterator<Item = &Edge> {
        self.edges.iter().filter(move |e| e.from == node)
    }

    /// Edges leaving `node` paired with their index in [`Plan::edges`].
    pub fn outgoing_indexed(&self, node: usize) -> impl Iterator<Item = (usize, &Edge)> {
        self.edges
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.from == node)
    }

    /// A node's outgoing adjacency for every node at once (resolved edges only),
    /// so walks over big plans stay O(V + E).
    pub fn successors(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.nodes.len()];
        for edge in &self.edges {
            if let Some(to) = edge.to {
                out[edge.from].push(to);
            }
        }
        out
    }
}
