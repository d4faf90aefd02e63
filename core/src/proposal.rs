//! Proposal mode: everything a plan does before a person approves it is
//! read-only. A plan asks for it in its own text ([`requested`]): a vault's
//! start note says `proposal: true` in its frontmatter, a PLAN.md has a line
//! `@proposal` before its first item, a generated plan has
//! `"proposal": true` at the top of its object; a vault's config can ask
//! too (`[run] proposal = true`, read by the caller).
//!
//! The approval gates are the nodes a person decides (`@human`, `type:
//! human`). A node that can run before every gate ([`before_approval`]) must
//! not mutate ([`mutation`]): no `@tool` command, no writing tool. [`check`]
//! reports each such node (`mutation-before-approval`) and a plan with no
//! gate (`no-approval-gate`). An MCP tool's nature is known only once its
//! server lists it: the runner refuses such a call at run time.
//!
//! Not part of [`crate::check`], since a vault's config may ask too: the
//! CLI's `validate`, `run`, the runner and the npm package call it.

use crate::diagnostic::{Code, Diagnostic};
use crate::model::{NodeExt, NodeKind, Plan, PlanFormat, SourcePos};
use crate::PlanSource;

/// The built-in model tools that write (see `planvault_llm::tools`).
pub const WRITING_TOOLS: &[&str] = &["write_note"];

/// Where the plan's own text asks for proposal mode, if it does.
pub fn requested(source: &PlanSource, plan: &Plan) -> Option<SourcePos> {
    match source {
        PlanSource::Vault(files) => requested_in_vault(files, plan),
        PlanSource::PlanMd { file, text } => requested_in_plan_md(file, text, plan),
        PlanSource::Generated { file, text, .. } => requested_in_generated(file, text),
    }
}

/// Where a PLAN.md asks for proposal mode: a line `@proposal` before its
/// first item.
#[cfg_attr(planvault_size, optimize(size))]
pub fn requested_in_plan_md(file: &str, text: &str, plan: &Plan) -> Option<SourcePos> {
    let first_item = plan
        .nodes
        .iter()
        .filter_map(|n| n.pos.as_ref().map(|p| p.line))
        .min()
        .unwrap_or(u32::MAX);
    text.lines()
        .zip(1..first_item)
        .find(|(line, _)| line.trim() == "@proposal")
        .map(|(line, n)| {
            let column = line.chars().take_while(|c| c.is_whitespace()).count() as u32 + 1;
            SourcePos::new(file.to_string(), n, column)
        })
}

/// Where a generated plan asks for proposal mode: `"proposal": true` at the
/// top of its object.
#[cfg_attr(planvault_size, optimize(size))]
pub fn requested_in_generated(file: &str, text: &str) -> Option<SourcePos> {
    let root: serde_json::Value = serde_json::from_str(text).ok()?;
    if root.get("proposal") != Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let at = text.find("\"proposal\"").unwrap_or(0);
    let line = text[..at].matches('\n').count() as u32 + 1;
    let column = text[..at].rsplit('\n').next().unwrap_or("").chars().count() as u32 + 1;
    Some(SourcePos::new(file.to_string(), line, column))
}

/// Where a vault's start note asks for proposal mode (`proposal: true`).
pub fn requested_in_vault(
    files: &std::collections::BTreeMap<String, String>,
    plan: &Plan,
) -> Option<SourcePos> {
    let start = plan.nodes.get(plan.start?)?;
    let NodeExt::Vault(v) = &start.ext else {
        return None;
    };
    requested_in_note(&v.file, files.get(&v.file)?)
}

/// Where a vault note (`file`, its `text`) asks for proposal mode in its
/// frontmatter (`proposal: true`): what the plan asks when it is the start.
#[cfg_attr(planvault_size, optimize(size))]
pub fn requested_in_note(file: &str, text: &str) -> Option<SourcePos> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let crate::vault::frontmatter::Split::Closed(block) = crate::vault::frontmatter::split(text)
    else {
        return None;
    };
    crate::vault::frontmatter::entries(block.yaml)
        .into_iter()
        .find(|e| e.key == "proposal" && e.inline_value.trim() == "true")
        // The fence is line 1: the YAML's line 0 is line 2.
        .map(|e| SourcePos::new(file.to_string(), e.line + 2, 1))
}

/// Whether each node (by index) can run before any approval gate: it is
/// reached from where the run starts without passing a gate. Gates
/// themselves are not before approval.
#[cfg_attr(planvault_size, optimize(size))]
pub fn before_approval(plan: &Plan) -> Vec<bool> {
    let n = plan.nodes.len();
    let mut incoming = vec![false; n];
    for e in &plan.edges {
        if let Some(to) = e.to {
            if to < n {
                incoming[to] = true;
            }
        }
    }
    let mut seen = vec![false; n];
    let mut stack: Vec<usize> = match plan.start {
        Some(start) if plan.format == PlanFormat::Vault => vec![start],
        // PLAN.md items and generated steps start wherever nothing leads in.
        _ => (0..n).filter(|&i| !incoming[i]).collect(),
    };
    let out = plan.successors();
    while let Some(i) = stack.pop() {
        if i >= n || seen[i] || is_gate(plan, i) {
            continue;
        }
        seen[i] = true;
        stack.extend(out[i].iter().copied());
    }
    seen
}

/// A node a person decides.
pub fn is_gate(plan: &Plan, node: usize) -> bool {
    plan.nodes[node].kind == NodeKind::Human
}

/// How a node would mutate: its command, or a writing tool it may use.
#[cfg_attr(planvault_size, optimize(size))]
pub fn mutation(plan: &Plan, node: usize) -> Option<String> {
    let node = &plan.nodes[node];
    if let NodeExt::PlanMd(item) = &node.ext {
        if node.kind == NodeKind::Tool {
            let command = item.command.as_deref().unwrap_or_default();
            return Some(format!("runs the command `{command}`"));
        }
    }
    if let NodeExt::Generated(step) = &node.ext {
        if WRITING_TOOLS.contains(&step.capability.as_str()) {
            return Some(format!("invokes the writing tool `{}`", step.capability));
        }
    }
    node.tools
        .iter()
        .find(|t| WRITING_TOOLS.contains(&t.as_str()))
        .map(|t| format!("may use the writing tool `{t}`"))
}

/// How a diagnostic names a node.
#[cfg_attr(planvault_size, optimize(size))]
fn name(plan: &Plan, node: usize) -> String {
    let n = &plan.nodes[node];
    match plan.format {
        PlanFormat::PlanMd => format!("item {} ({:?})", n.id, n.title),
        PlanFormat::Vault => format!("note `{}`", n.id),
        PlanFormat::Generated => format!("step `{}`", n.id),
    }
}

/// The first gate reachable from `node` (else the plan's first gate).
#[cfg_attr(planvault_size, optimize(size))]
fn gate_after(plan: &Plan, node: usize, out: &[Vec<usize>]) -> Option<usize> {
    let mut seen = vec![false; plan.nodes.len()];
    let mut queue = std::collections::VecDeque::from([node]);
    while let Some(i) = queue.pop_front() {
        if i >= seen.len() || seen[i] {
            continue;
        }
        seen[i] = true;
        if is_gate(plan, i) {
            return Some(i);
        }
        queue.extend(out[i].iter().copied());
    }
    (0..plan.nodes.len()).find(|&i| is_gate(plan, i))
}

/// The proposal-mode rules of a plan that asked for it at `asked` (where
/// `no-approval-gate` points; the start node when `None`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn check(plan: &Plan, asked: Option<&SourcePos>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let has_gate = (0..plan.nodes.len()).any(|i| is_gate(plan, i));
    if !has_gate {
        let mut d = Diagnostic::error(
            Code::NoApprovalGate,
            "proposal mode is asked for but the plan has no approval gate (`@human`, `type: human`): \
             nothing would wait for a person, so nothing may mutate",
        );
        if let Some(pos) =
            asked.or_else(|| plan.start.and_then(|s| plan.nodes.get(s)?.pos.as_ref()))
        {
            d = d.at(pos);
        }
        diagnostics.push(d);
    }
    let out = plan.successors();
    for (i, before) in before_approval(plan).into_iter().enumerate() {
        let Some(how) = before.then(|| mutation(plan, i)).flatten() else {
            continue;
        };
        let gate = match gate_after(plan, i, &out) {
            Some(g) => format!("the approval gate {}", name(plan, g)),
            None => "any approval (the plan has none)".into(),
        };
        let node = &plan.nodes[i];
        let mut d = Diagnostic::error(
            Code::MutationBeforeApproval,
            format!(
                "{} {how} before {gate}: in proposal mode nothing may change before a person approves",
                name(plan, i)
            ),
        )
        .with_nodes([node.id.clone()]);
        if plan.format == PlanFormat::PlanMd {
            d.items = node.id.parse().ok().into_iter().collect();
        }
        if let Some(pos) = &node.pos {
            d = d.at(pos);
        }
        diagnostics.push(d);
    }
    diagnostics
}
