//! Vault semantics (seed 000): one node at a time, `active` on entry, `done`
//! after the work, then the transition: predicates, one YES/NO grid for the
//! remaining conditional labels, the unconditional edge, or re-work; guarded
//! by per-node `max_visits` and the global `max_steps`.
//!
//! Resume: an `active` node is where an interrupted run stopped, so the run
//! continues there; without one, a run over `done` nodes walks from the start
//! and every `done` node goes straight to its transition (served from the
//! journal when the decision was already made, so a resumed run never takes
//! the other branch).

use super::grid::{self, GridError};
use super::journal::node_of_key;
use super::prompt;
use super::{
    Answer, Autonomy, DecidedBy, FinishReason, JournalEntry, Message, Request, RequestBody, Shared,
};
use crate::model::{EdgeKind, NodeKind, Status};
use std::collections::BTreeMap;

struct Judging {
    node: usize,
    visit: u32,
    attempt: u32,
    /// Edge indices judged by the grid, in label order.
    edges: Vec<usize>,
    labels: Vec<String>,
    messages: Vec<Message>,
    /// What the predicates said before the grid was asked.
    predicate_notes: Option<String>,
}

pub(crate) struct VaultRun {
    visits: Vec<u32>,
    /// Resuming over `done` nodes: skip their work, go to their transitions.
    walking: bool,
    /// Done nodes walked past while resuming (their hops are already in the
    /// trace, so they are not written again).
    walked: u32,
    judging: Option<Judging>,
}

impl VaultRun {
    pub fn new(plan: &crate::Plan) -> Self {
        VaultRun {
            visits: vec![0; plan.nodes.len()],
            walking: false,
            walked: 0,
            judging: None,
        }
    }

    pub fn start(&mut self, s: &mut Shared) {
        let Some(start) = s.plan.start else {
            s.finish(FinishReason::PlanFailed {
                reason: "the plan has no start node".into(),
            });
            return;
        };
        // A node left active by an interruption, or one that failed, is where
        // the run picks up: its work is done again. Only a node the start
        // reaches: a note no link leads to (a tool's note, a person's
        // draft), whatever its status says, is no step of this run.
        let reached = s.plan.reached_from(start);
        let first =
            |status: Status| (0..s.statuses.len()).find(|&i| reached[i] && s.statuses[i] == status);
        let (resume_at, any_done) = (
            first(Status::Active).or_else(|| first(Status::Failed)),
            first(Status::Done).is_some(),
        );
        // A node this run left active or failed that the start no longer
        // reaches (a person moved the link to it meanwhile) is no step of
        // the run any more: back to pending, so its note does not say it
        // runs. A note the run never visited is left as it is.
        let cut_off: Vec<usize> = (0..s.statuses.len())
            .filter(|&i| !reached[i] && matches!(s.statuses[i], Status::Active | Status::Failed))
            .filter(|&i| {
                let id = s.plan.nodes[i].id.as_str();
                s.recorded_order
                    .iter()
                    .any(|e| split_key(&e.key).is_some_and(|(node, _, _)| node == id))
            })
            .collect();
        for node in cut_off {
            s.set_status(node, Status::Pending);
        }
        if let Some(active) = resume_at {
            let visit = self.restore_counters(s, active);
            self.begin_visit(s, active, visit, true);
        } else if any_done {
            self.walking = true;
            self.enter(s, start);
        } else {
            self.enter(s, start);
        }
    }

    /// Visits and steps of an interrupted run, from its journal; returns the
    /// visit the `active` (or failed) node is in. If the journal's last
    /// answer is that active node's work, the work finished but `done` was never written: the same
    /// visit continues (served). Otherwise it is a new visit.
    fn restore_counters(&mut self, s: &mut Shared, active: usize) -> u32 {
        let mut worked = std::collections::BTreeSet::new();
        let mut last_key = None;
        let renamed = renamed_notes(s);
        for entry in &s.recorded_order {
            if let Some((id, visit, kind)) = split_key(&entry.key) {
                if let Some(i) = s.node_index(id).or_else(|| renamed.get(id).copied()) {
                    self.visits[i] = self.visits[i].max(visit);
                    // A person's decision at a human note is that visit's work.
                    let work = kind == "work" || kind == "human";
                    if work {
                        worked.insert((i, visit));
                    }
                    last_key = Some((i, visit, work));
                }
            }
        }
        s.steps = worked.len() as u32;
        s.mark_all_read();
        match last_key {
            // A failed node's recorded work led to the failure: it is done
            // again in a new visit, never served.
            Some((i, visit, true)) if i == active && s.statuses[active] != Status::Failed => {
                s.steps -= 1;
                self.visits[active] = visit - 1;
                visit
            }
            _ => self.visits[active] + 1,
        }
    }

    fn enter(&mut self, s: &mut Shared, node: usize) {
        let visit = self.visits[node] + 1;
        self.begin_visit(s, node, visit, false);
    }

    fn begin_visit(&mut self, s: &mut Shared, node: usize, visit: u32, resumed_active: bool) {
        let max_visits = s.plan.nodes[node].max_visits;
        if visit > max_visits {
            s.trace(
                node,
                visit - 1,
                format!("safety stop: max_visits {max_visits} reached"),
                DecidedBy::Stop,
                None,
            );
            s.finish(FinishReason::VisitBudget {
                node: s.node_id(node),
                max_visits,
            });
            return;
        }
        if s.steps >= s.config.max_steps {
            let max_steps = s.config.max_steps;
            s.trace(
                node,
                visit,
                format!("safety stop: max_steps {max_steps} reached"),
                DecidedBy::Stop,
                None,
            );
            s.finish(FinishReason::StepBudget { max_steps });
            return;
        }
        self.visits[node] = visit;
        s.steps += 1;
        if self.walking && s.statuses[node] == Status::Done && asks_a_person(s, node) {
            // The person's recorded decision is the transition (served from
            // the journal; a lost journal asks again rather than guess).
            self.walked += 1;
            self.ask_human(s, node, visit);
            return;
        }
        if self.walking
            && s.statuses[node] == Status::Done
            && s.work_recorded_or_unknown(node, visit)
        {
            // The recorded output of this very visit is the freshest truth;
            // re-emitting its note repairs one lost to the interruption.
            if let Some(output) = s.recorded_work(node, visit) {
                s.replay_output(node, visit, output);
            }
            self.walked += 1;
            self.judge(s, node, visit);
            return;
        }
        self.end_walk(s, node, visit);
        if resumed_active {
            let what = if s.statuses[node] == Status::Failed {
                "resumed: the node had failed; its work is done again"
            } else {
                "resumed: the node was active"
            };
            s.trace(node, visit, what.into(), DecidedBy::Resume, None);
        }
        s.set_status(node, Status::Active);
        if asks_a_person(s, node) {
            self.ask_human(s, node, visit);
            return;
        }
        let n = &s.plan.nodes[node];
        let tools = granted_tools(&s.plan, n);
        let earlier = s.freshest(prompt::earlier_limit(), None);
        let messages = prompt::work_messages(&s.config.query, n, false, &earlier, None);
        let request = Request {
            id: format!("{}#{visit}:work", n.id),
            node: n.id.clone(),
            visit,
            body: RequestBody::Work {
                messages,
                tools,
                role: n.role.clone(),
                review_only: false,
            },
        };
        s.ask(request);
    }

    pub fn on_answer(&mut self, s: &mut Shared, request: Request, answer: Answer) {
        let Some(node) = s.node_index(&request.node) else {
            return;
        };
        match answer {
            Answer::Work { output } => {
                s.set_status(node, Status::Done);
                s.record_output(node, request.visit, output);
                self.judge(s, node, request.visit);
            }
            Answer::Judgment { raw, labels } => self.on_judgment(s, raw, labels),
            Answer::Human {
                decision,
                approved,
                choice,
            } => self.on_decision(s, node, request.visit, decision, approved, choice),
            other => s.finish(FinishReason::Interrupted {
                node: request.node,
                reason: format!("a vault node takes no {} answer", other.kind()),
            }),
        }
    }

    /// A `type: human` note under `autonomy: ask`: a person decides, picking
    /// one of its conditional labels or approving / rejecting.
    fn ask_human(&mut self, s: &mut Shared, node: usize, visit: u32) {
        let n = &s.plan.nodes[node];
        let choices: Vec<String> = s.out_edges[node]
            .iter()
            .filter(|&&e| s.plan.edges[e].kind == EdgeKind::Conditional)
            .map(|&e| edge_label(s, e))
            .collect();
        let text = prompt::step_text(n);
        let question = if text.is_empty() {
            n.title.clone()
        } else {
            format!("{}\n\n{text}", n.title)
        };
        let request = Request {
            id: format!("{}#{visit}:human", n.id),
            node: n.id.clone(),
            visit,
            body: RequestBody::Human { question, choices },
        };
        s.ask(request);
    }

    /// A person's decision: the picked label's edge; else approval takes the
    /// unconditional edge (or ends the run at a terminal note), and a
    /// rejection stops the run at this node.
    fn on_decision(
        &mut self,
        s: &mut Shared,
        node: usize,
        visit: u32,
        decision: String,
        approved: bool,
        choice: Option<String>,
    ) {
        if !s.answer_served {
            self.end_walk(s, node, visit);
        }
        if s.statuses[node] != Status::Done {
            s.set_status(node, Status::Done);
        }
        let verdict = match (&choice, approved) {
            (Some(label), _) => format!("chose `{label}`"),
            (None, true) => "approved".to_string(),
            (None, false) => "rejected".to_string(),
        };
        let output = if decision.trim().is_empty() || decision == verdict {
            verdict.clone()
        } else {
            format!("{verdict}: {decision}")
        };
        s.record_output(node, visit, output.clone());
        let edges = s.out_edges[node].clone();
        if let Some(label) = &choice {
            let picked = edges.iter().copied().find(|&e| {
                s.plan.edges[e].kind == EdgeKind::Conditional && edge_label(s, e) == *label
            });
            match picked {
                Some(e) => self.take(s, node, visit, e, DecidedBy::Human, Some(output)),
                None => {
                    let reason = format!(
                        "the person chose `{label}`, which is not a condition of {}",
                        s.node_id(node)
                    );
                    fail_node(s, node, visit, reason, DecidedBy::Human, None);
                }
            }
            return;
        }
        if !approved {
            let reason = format!("rejected by a person: {decision}");
            s.trace(
                node,
                visit,
                "rejected: the run stops here".into(),
                DecidedBy::Human,
                Some(output),
            );
            s.finish(FinishReason::NodeFailed {
                node: s.node_id(node),
                reason,
            });
            return;
        }
        if edges.is_empty() {
            let walked = self.quiet(s, DecidedBy::Human);
            s.trace_hop(
                walked,
                node,
                visit,
                "approved: a node with no outgoing edges".into(),
                DecidedBy::Human,
                Some(output.clone()),
            );
            s.finish_with(FinishReason::Completed, Some(output));
            return;
        }
        match edges
            .iter()
            .copied()
            .find(|&e| s.plan.edges[e].kind == EdgeKind::Unconditional)
        {
            Some(e) => self.take(s, node, visit, e, DecidedBy::Human, Some(output)),
            None => {
                let reason = format!(
                    "{} needs one of its conditions picked, not a bare approval",
                    s.node_id(node)
                );
                fail_node(s, node, visit, reason, DecidedBy::Human, None);
            }
        }
    }

    /// The transition of a node whose work is done.
    /// Leave the resume walk: one trace entry says where live work picks up.
    fn end_walk(&mut self, s: &mut Shared, node: usize, visit: u32) {
        if self.walking && self.walked > 0 {
            let what = format!(
                "resumed: walked past {} done node(s) on recorded decisions",
                self.walked
            );
            s.trace(node, visit, what, DecidedBy::Resume, None);
        }
        self.walking = false;
    }

    /// A hop decided while walking on recorded (or deterministic) decisions
    /// is already in the trace (unless a crash lost it: the runner looks).
    fn quiet(&self, s: &Shared, decided_by: DecidedBy) -> bool {
        self.walking && (decided_by != DecidedBy::Grid || s.answer_served)
    }

    fn judge(&mut self, s: &mut Shared, node: usize, visit: u32) {
        let edges: Vec<usize> = s.out_edges[node].clone();
        if edges.is_empty() {
            let answer = s.outputs.get(&node).cloned().or_else(|| s.last_output());
            let walked = self.quiet(s, DecidedBy::Terminal);
            s.trace_hop(
                walked,
                node,
                visit,
                "finished: a node with no outgoing edges".into(),
                DecidedBy::Terminal,
                None,
            );
            s.finish_with(FinishReason::Completed, answer);
            return;
        }
        let conditional: Vec<usize> = edges
            .iter()
            .copied()
            .filter(|&e| s.plan.edges[e].kind == EdgeKind::Conditional)
            .collect();
        let output = s.outputs.get(&node).cloned().unwrap_or_default();

        // Predicates win over the model.
        let mut notes = Vec::new();
        let mut grid_edges = Vec::new();
        for &e in &conditional {
            let label = edge_label(s, e);
            if let Some(predicate) = s.predicates.get(&label) {
                let input = super::PredicateInput {
                    node: &s.plan.nodes[node].id,
                    label: &label,
                    visit,
                    output: &output,
                    query: &s.config.query,
                };
                let held = predicate(&input);
                notes.push(format!(
                    "predicate `{label}`: {}",
                    if held { "held" } else { "did not hold" }
                ));
                if held {
                    self.take(
                        s,
                        node,
                        visit,
                        e,
                        DecidedBy::Predicate,
                        Some(notes.join("\n")),
                    );
                    return;
                }
            } else {
                grid_edges.push(e);
            }
        }
        let predicate_notes = (!notes.is_empty()).then(|| notes.join("\n"));
        if grid_edges.is_empty() {
            self.fallback(s, node, visit, predicate_notes);
            return;
        }
        let labels: Vec<String> = grid_edges.iter().map(|&e| edge_label(s, e)).collect();
        let n = &s.plan.nodes[node];
        let messages = grid::grid_messages(&s.config.query, &n.title, &output, &labels);
        self.judging = Some(Judging {
            node,
            visit,
            attempt: 1,
            edges: grid_edges,
            labels,
            messages,
            predicate_notes,
        });
        self.ask_grid(s);
    }

    fn ask_grid(&mut self, s: &mut Shared) {
        let j = self.judging.as_ref().expect("judging");
        let n = &s.plan.nodes[j.node];
        let request = Request {
            id: format!("{}#{}:judge.{}", n.id, j.visit, j.attempt),
            node: n.id.clone(),
            visit: j.visit,
            body: RequestBody::Judge {
                messages: j.messages.clone(),
                labels: j.labels.clone(),
                role: n.role.clone(),
                attempt: j.attempt,
            },
        };
        s.ask(request);
    }

    fn on_judgment(&mut self, s: &mut Shared, raw: String, judged: Vec<String>) {
        let Some(mut j) = self.judging.take() else {
            return;
        };
        if !s.answer_served {
            self.end_walk(s, j.node, j.visit);
        }
        let read = if judged.is_empty() || judged == j.labels {
            grid::parse_grid_labelled(&raw, &j.labels)
        } else {
            // Judged while the note's conditions stood otherwise (reordered,
            // added or removed since): the branch it chose, by its label.
            match grid::parse_grid_labelled(&raw, &judged) {
                Ok(verdicts) => match verdicts.iter().position(|&held| held) {
                    None => {
                        tell_if_conditions_edited(s, &j, &judged, None);
                        Ok(vec![false; j.labels.len()])
                    }
                    Some(i) => match j.labels.iter().position(|l| *l == judged[i]) {
                        Some(now) => {
                            tell_if_conditions_edited(s, &j, &judged, Some(&judged[i]));
                            Ok((0..j.labels.len()).map(|k| k == now).collect())
                        }
                        None => {
                            let reason = format!(
                                "the journal's judgment of {} took `{}`, which its `## Next` no longer has: \
                                 put that condition back to resume, or start afresh",
                                s.node_id(j.node),
                                judged[i]
                            );
                            s.finish(FinishReason::Interrupted {
                                node: s.node_id(j.node),
                                reason,
                            });
                            return;
                        }
                    },
                },
                Err(problem) => Err(problem),
            }
        };
        match read {
            Ok(verdicts) => {
                let rationale = match &j.predicate_notes {
                    Some(notes) => format!("{notes}\n{raw}"),
                    None => raw,
                };
                match verdicts.iter().position(|&held| held) {
                    Some(i) => self.take(
                        s,
                        j.node,
                        j.visit,
                        j.edges[i],
                        DecidedBy::Grid,
                        Some(rationale),
                    ),
                    None => self.fallback(s, j.node, j.visit, Some(rationale)),
                }
            }
            Err(problem) if j.attempt < s.config.grid_attempts => {
                j.messages
                    .extend(grid::reask_messages(&raw, &problem, &j.labels));
                j.attempt += 1;
                self.judging = Some(j);
                self.ask_grid(s);
            }
            Err(problem) => self.grid_failed(s, j, problem, raw),
        }
    }

    fn grid_failed(&mut self, s: &mut Shared, j: Judging, problem: GridError, raw: String) {
        let reason = format!(
            "the YES/NO judgment could not be read after {} attempt(s): {problem}",
            j.attempt
        );
        fail_node(s, j.node, j.visit, reason, DecidedBy::Stop, Some(raw));
    }

    /// No condition held: the unconditional edge, else re-work.
    fn fallback(&mut self, s: &mut Shared, node: usize, visit: u32, rationale: Option<String>) {
        let unconditional = s.out_edges[node]
            .iter()
            .copied()
            .find(|&e| s.plan.edges[e].kind == EdgeKind::Unconditional);
        match unconditional {
            Some(e) => self.take(s, node, visit, e, DecidedBy::Unconditional, rationale),
            None => {
                let walked = self.quiet(s, DecidedBy::Rework);
                s.trace_hop(
                    walked,
                    node,
                    visit,
                    "no condition held: the node works again".into(),
                    DecidedBy::Rework,
                    rationale,
                );
                self.enter(s, node);
            }
        }
    }

    fn take(
        &mut self,
        s: &mut Shared,
        node: usize,
        visit: u32,
        edge: usize,
        decided_by: DecidedBy,
        rationale: Option<String>,
    ) {
        let e = &s.plan.edges[edge];
        let label = e.label.clone().unwrap_or_else(|| "next".into());
        let Some(to) = e.to else {
            let reason = format!(
                "edge `{label}` of {} points to {}, which does not exist",
                s.node_id(node),
                e.target
            );
            s.finish(FinishReason::PlanFailed { reason });
            return;
        };
        let walked = self.quiet(s, decided_by);
        let what = format!("took `{label}` → [[{}]]", s.plan.nodes[to].id);
        s.trace_hop(walked, node, visit, what, decided_by, rationale);
        self.enter(s, to);
    }
}

/// A `type: human` note is a person's decision only when the run asks people;
/// under `autonomy: full` the run does its work and judges it like a step.
fn asks_a_person(s: &Shared, node: usize) -> bool {
    s.plan.nodes[node].kind == NodeKind::Human && s.config.autonomy == Autonomy::Ask
}

fn edge_label(s: &Shared, edge: usize) -> String {
    s.plan.edges[edge].label.clone().unwrap_or_default()
}

/// A node's tools, narrowed to the plan's grant when it declares one.
pub(crate) fn granted_tools(plan: &crate::Plan, node: &crate::Node) -> Vec<String> {
    node.tools
        .iter()
        .filter(|t| plan.grant.as_ref().is_none_or(|g| g.contains(*t)))
        .cloned()
        .collect()
}

/// `id#visit:kind[.attempt]` → `(id, visit, kind)`; `None` for a key no
/// run writes (visits count from 1: a hand-edited `#0` is not a visit).
pub(crate) fn split_key(key: &str) -> Option<(&str, u32, &str)> {
    let hash = key.rfind('#')?;
    let (id, rest) = (&key[..hash], &key[hash + 1..]);
    let (visit, kind) = rest.split_once(':')?;
    let kind = kind.split('.').next().unwrap_or(kind);
    let visit = visit.parse().ok().filter(|&v| v > 0)?;
    Some((id, visit, kind))
}

/// The note a run stopped in (the active note it resumes at) when a person
/// renamed it since: Obsidian moves the file and rewrites every link to
/// it, so the journal holds the visit's answers (its tool calls, its work)
/// under a name the plan no longer has. Returns that old id, and the
/// active note's, when
/// - the journal's last entry of a note the plan no longer has was made
///   from the active note exactly as it is now (its kind, text, tools and
///   role, not its name: [`made_from`](super::journal::made_from)), and
/// - the active note has no entry before it, and every entry after it is
///   the active note's (a resume that adopted them already and stopped).
///
/// Then those answers are the active note's
/// ([`rename_note`](super::Journal::rename_note)), as a finished note's are
/// when a resume walks past it renamed: a resumed visit makes no call
/// twice. A note deleted, or one renamed and edited, gives nothing: its
/// visit is asked again, the safe direction.
pub fn renamed_active_note(
    plan: &crate::Plan,
    entries: &[JournalEntry],
) -> Option<(String, String)> {
    if plan.format != crate::model::PlanFormat::Vault {
        return None;
    }
    let reached = plan.reached_from(plan.start?);
    let active = (0..plan.nodes.len())
        .find(|&i| reached[i] && plan.nodes[i].status == Status::Active)
        .map(|i| &plan.nodes[i])?;
    let mut ids: Vec<&str> = plan.nodes.iter().map(|n| n.id.as_str()).collect();
    ids.sort_unstable();
    let last = entries
        .iter()
        .rposition(|e| node_of_key(&e.key).is_some_and(|id| ids.binary_search(&id).is_err()))?;
    let old = node_of_key(&entries[last].key)?;
    let is_active = |e: &JournalEntry| node_of_key(&e.key) == Some(active.id.as_str());
    let after_only_active = entries[last + 1..]
        .iter()
        .all(|e| node_of_key(&e.key).is_none() || is_active(e));
    let made_from = super::journal::made_from(active);
    (entries[last].made_from.as_deref() == Some(made_from.as_str())
        && after_only_active
        && !entries[..last].iter().any(is_active))
    .then(|| (old.to_string(), active.id.clone()))
}

/// The notes a person renamed since the journal recorded them, each with
/// the plan's node it is now, for a resume that starts at its active note:
/// it walks past no finished note (where a rename is found by the order
/// the answers were written in), yet the renamed notes' earlier visits and
/// steps still count against `max_visits` and `max_steps`. A note whose
/// journal id the plan no longer has is the plan's node
/// - that is now made exactly as its last recorded answer was made from
///   (kind, text, tools and role, not its name), the only node so made, and
/// - that has no entry before that answer (the two never stood side by
///   side).
///
/// A note renamed and edited, or deleted, counts afresh, as before.
fn renamed_notes(s: &Shared) -> BTreeMap<String, usize> {
    let mut renamed = BTreeMap::new();
    if !s.config.count_renamed_visits || s.plan.format != crate::model::PlanFormat::Vault {
        return renamed;
    }
    let entries = &s.recorded_order;
    // One pass, as a journal a vault brings may hold any number of names:
    // where each name first answers, and where it last recorded what its
    // note was made from.
    let (mut first, mut last_made) = (BTreeMap::new(), BTreeMap::new());
    for (at, entry) in entries.iter().enumerate() {
        let Some(id) = node_of_key(&entry.key) else {
            continue;
        };
        if !first.contains_key(id) {
            first.insert(id.to_string(), at);
        }
        if entry.made_from.is_some() && s.node_index(id).is_none() {
            last_made.insert(id.to_string(), at);
        }
    }
    if last_made.is_empty() {
        return renamed;
    }
    // The plan's nodes by what they are made from; one made like another
    // is no one's (`usize::MAX`).
    let mut made = BTreeMap::new();
    for (i, node) in s.plan.nodes.iter().enumerate() {
        let is = made.entry(super::journal::made_from(node)).or_insert(i);
        if *is != i {
            *is = usize::MAX;
        }
    }
    for (old, last) in last_made {
        let then = entries[last].made_from.as_deref().unwrap_or_default();
        let Some(&i) = made.get(then).filter(|&&i| i != usize::MAX) else {
            continue;
        };
        // The two never stood side by side: the node answered only after.
        if first.get(&s.plan.nodes[i].id).is_none_or(|&at| at > last) {
            renamed.insert(old, i);
        }
    }
    renamed
}

/// What the trace says of a renamed note whose recorded answers a resume
/// keeps.
pub fn renamed_note_told(old: &str, new: &str) -> String {
    format!("resumed: `{old}` is now `{new}`: its recorded answers are kept")
}

/// Ends the run at `node`: the trace says why, and the finish names it.
fn fail_node(
    s: &mut Shared,
    node: usize,
    visit: u32,
    reason: String,
    decided_by: DecidedBy,
    output: Option<String>,
) {
    s.trace(node, visit, format!("failed: {reason}"), decided_by, output);
    s.finish(FinishReason::NodeFailed {
        node: s.node_id(node),
        reason,
    });
}

/// A resume serves a judgment made while the note's conditions said other
/// than they say now (one added, removed or reworded; a reorder changes
/// nothing judged): the branch it took (`took`, or none of them) is kept,
/// as for any answer served to an edited note, and the trace says so,
/// since a condition added since was never put to the model.
fn tell_if_conditions_edited(s: &mut Shared, j: &Judging, judged: &[String], took: Option<&str>) {
    let within = |a: &[String], b: &[String]| a.iter().all(|label| b.contains(label));
    let same =
        judged.len() == j.labels.len() && within(judged, &j.labels) && within(&j.labels, judged);
    if same || !s.config.tell_edited_conditions {
        return;
    }
    let took = match took {
        Some(label) => format!("took `{label}`"),
        None => "held none of them".to_string(),
    };
    let what = format!(
        "resumed: the note's conditions were edited after its judgment was journaled; \
         that judgment, made on the conditions as they were, {took} and is kept \
         (start afresh to judge them now)"
    );
    s.trace(j.node, j.visit, what, DecidedBy::Resume, None);
}
