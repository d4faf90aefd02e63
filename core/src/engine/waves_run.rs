//! Generated-plan semantics (seeds 002, 004): steps run in Kahn waves (a wave
//! is a barrier, so the schedule is a pure function of recorded outcomes),
//! each step's `$from` bindings resolved from recorded outputs and its
//! preconditions checked before it runs, a tool the plan did not declare
//! refused, `fail-fast` or `continue-independent` after a failure (the blocked
//! cone reported as skipped), and bounded replanning that keeps every
//! completed step and never reuses an id.

use super::{
    Answer, DecidedBy, FailureMode, FinishReason, Message, Request, RequestBody, Role, Shared,
};
use crate::generated::{self, refs, resolve_refs};
use crate::model::{EdgeKind, PreconditionTest, Status};
use crate::Code;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Completed,
    Failed(String),
    Skipped(String),
    /// Replaced by a replanning round before it ran.
    Superseded,
}

pub(crate) struct WavesRun {
    state: Vec<State>,
    deps: Vec<Vec<usize>>,
    outputs: BTreeMap<String, Value>,
    /// Every id any round introduced: a revision may reuse none of them.
    used_ids: BTreeSet<String>,
    wave: Vec<usize>,
    answers: BTreeMap<usize, Answer>,
    replans: u32,
    /// Failures of the wave that just finished.
    wave_failures: Vec<usize>,
    /// Where the latest round's steps begin (0 until a replan).
    round_start: usize,
}

impl WavesRun {
    pub fn new(s: &Shared) -> Self {
        let n = s.plan.nodes.len();
        let mut run = WavesRun {
            state: vec![State::Pending; n],
            deps: vec![Vec::new(); n],
            outputs: BTreeMap::new(),
            used_ids: s.plan.nodes.iter().map(|n| n.id.clone()).collect(),
            wave: Vec::new(),
            answers: BTreeMap::new(),
            replans: 0,
            wave_failures: Vec::new(),
            round_start: 0,
        };
        run.index_edges(s, 0);
        run
    }

    fn index_edges(&mut self, s: &Shared, first_edge: usize) {
        for e in s.plan.edges.iter().skip(first_edge) {
            if let (EdgeKind::After, Some(to)) = (e.kind, e.to) {
                self.deps[to].push(e.from);
            }
        }
    }

    pub fn start(&mut self, s: &mut Shared) {
        self.advance(s);
    }

    fn advance(&mut self, s: &mut Shared) {
        loop {
            if s.is_finished() || !self.wave.is_empty() {
                return;
            }
            let mut changed = false;
            let mut wave = Vec::new();
            for i in 0..self.state.len() {
                if self.state[i] != State::Pending {
                    continue;
                }
                let blocked = self.deps[i]
                    .iter()
                    .find(|&&d| matches!(self.state[d], State::Failed(_) | State::Skipped(_)));
                if let Some(&d) = blocked {
                    let reason = format!("depends on {}, which did not complete", s.node_id(d));
                    s.trace_answered(
                        i,
                        0,
                        format!("skipped: {reason}"),
                        DecidedBy::Schedule,
                        None,
                    );
                    self.state[i] = State::Skipped(reason);
                    changed = true;
                } else if self.deps[i]
                    .iter()
                    .all(|&d| self.state[d] == State::Completed)
                {
                    wave.push(i);
                }
            }
            if !wave.is_empty() {
                self.start_wave(s, wave);
                return;
            }
            if !changed {
                self.finish(s);
                return;
            }
        }
    }

    fn start_wave(&mut self, s: &mut Shared, wave: Vec<usize>) {
        if s.steps as usize + wave.len() > s.config.max_steps as usize {
            let max_steps = s.config.max_steps;
            s.finish(FinishReason::StepBudget { max_steps });
            return;
        }
        self.wave = wave.clone();
        self.wave_failures.clear();
        for &i in &wave {
            self.state[i] = State::Running;
            s.steps += 1;
        }
        for &i in &wave {
            if s.is_finished() {
                return;
            }
            let request_id = format!("{}#1:invoke", s.node_id(i));
            if s.statuses[i] == Status::Done && !s.has_recorded(&request_id) {
                // Done in an interrupted run that left no journal: never re-run it.
                let prior = s
                    .outputs
                    .get(&i)
                    .map(|t| serde_json::from_str(t).unwrap_or(Value::String(t.clone())));
                self.answers.insert(
                    i,
                    Answer::Invoke {
                        value: Some(prior.unwrap_or(Value::Null)),
                        error: None,
                    },
                );
                self.complete_wave_if_ready(s);
                continue;
            }
            match self.prepare(s, i) {
                Ok(args) => {
                    let node = &s.plan.nodes[i];
                    let capability = generated::step(node)
                        .map(|g| g.capability.clone())
                        .unwrap_or_default();
                    let id = node.id.clone();
                    if s.statuses[i] != Status::Done {
                        s.set_status(i, Status::Active);
                    }
                    let request = Request {
                        id: format!("{id}#1:invoke"),
                        node: id,
                        visit: 1,
                        body: RequestBody::Invoke { capability, args },
                    };
                    s.ask(request);
                }
                Err(reason) => {
                    self.answers.insert(
                        i,
                        Answer::Invoke {
                            value: None,
                            error: Some(reason),
                        },
                    );
                    self.complete_wave_if_ready(s);
                }
            }
        }
    }

    /// Before a step runs: its tool is in the plan's grant, its bindings
    /// resolve, its preconditions hold. A miss is the step's typed failure.
    fn prepare(&self, s: &Shared, i: usize) -> Result<Value, String> {
        let node = &s.plan.nodes[i];
        let step = generated::step(node).ok_or("not a generated step")?;
        if !generated::permits(&s.plan, &step.capability) {
            return Err(format!(
                "refused: tool {} was not declared by the plan",
                step.capability
            ));
        }
        let args =
            resolve_refs(&step.args, &self.outputs).map_err(|e| format!("ref-unresolved: {e}"))?;
        for pre in &step.preconditions {
            let value = refs::lookup(&pre.reference, &self.outputs).ok();
            let holds = match pre.test {
                PreconditionTest::Exists => value.is_some(),
                PreconditionTest::Truthy => value.is_some_and(truthy),
                PreconditionTest::Equals => value.is_some() && value == pre.value.as_ref(),
            };
            if !holds {
                let test = match pre.test {
                    PreconditionTest::Exists => "exists",
                    PreconditionTest::Truthy => "truthy",
                    PreconditionTest::Equals => "equals",
                };
                return Err(format!(
                    "precondition: {} {test} does not hold",
                    pre.reference
                ));
            }
        }
        Ok(args)
    }

    pub fn on_answer(&mut self, s: &mut Shared, request: Request, answer: Answer) {
        if let RequestBody::Replan { .. } = request.body {
            if let Answer::Revision { text } = answer {
                self.revise(s, &text);
            }
            return;
        }
        let Some(i) = s.node_index(&request.node) else {
            return;
        };
        if !self.wave.contains(&i) {
            return;
        }
        self.answers.insert(i, answer);
        self.complete_wave_if_ready(s);
    }

    fn complete_wave_if_ready(&mut self, s: &mut Shared) {
        if self.answers.len() < self.wave.len() {
            return;
        }
        let wave = std::mem::take(&mut self.wave);
        let mut answers = std::mem::take(&mut self.answers);
        for i in wave {
            let answer = answers.remove(&i);
            let id = s.node_id(i);
            match answer {
                Some(Answer::Invoke {
                    value: Some(value),
                    error: None,
                }) => {
                    self.state[i] = State::Completed;
                    s.set_status(i, Status::Done);
                    let text = match &value {
                        Value::String(t) => t.clone(),
                        other => serde_json::to_string_pretty(other).unwrap_or_default(),
                    };
                    s.record_output(i, 1, text);
                    self.outputs.insert(id, value);
                    s.trace_answered(i, 1, "completed".into(), DecidedBy::Schedule, None);
                }
                Some(Answer::Invoke {
                    error: Some(reason),
                    ..
                }) => self.fail(s, i, reason),
                _ => self.fail(s, i, "the tool returned nothing".into()),
            }
        }
        if !self.wave_failures.is_empty() {
            if self.replans < s.config.max_replans {
                self.ask_replan(s);
                return;
            }
            if s.config.failure_mode == FailureMode::FailFast {
                self.finish(s);
                return;
            }
        }
        self.advance(s);
    }

    fn fail(&mut self, s: &mut Shared, i: usize, reason: String) {
        s.trace_answered(i, 1, format!("failed: {reason}"), DecidedBy::Stop, None);
        self.state[i] = State::Failed(reason);
        self.wave_failures.push(i);
    }

    /// Ask for a plan replacing every step that has not completed.
    fn ask_replan(&mut self, s: &mut Shared) {
        self.replans += 1;
        let mut user = format!("Goal: {}\n\n", s.config.query);
        user.push_str("Completed steps (reference them with {\"$from\": \"<id>.<path>\"}; never redeclare them):\n");
        for (id, value) in &self.outputs {
            user.push_str(&format!("- {id}: {}\n", truncate(&value.to_string(), 500)));
        }
        user.push_str("\nFailed steps:\n");
        for (i, st) in self.state.iter().enumerate() {
            if let State::Failed(reason) = st {
                user.push_str(&format!("- {}: {reason}\n", s.node_id(i)));
            }
        }
        user.push_str("\nSteps that did not run:\n");
        for (i, st) in self.state.iter().enumerate() {
            if matches!(st, State::Pending | State::Skipped(_)) {
                user.push_str(&format!("- {}\n", s.node_id(i)));
            }
        }
        let used: Vec<&str> = self.used_ids.iter().map(String::as_str).collect();
        user.push_str(&format!(
            "\nIds already used (never reuse one): {}\n\nReply with a JSON plan {{\"nodes\": [...]}} for the remaining work, or {{\"nodes\": []}} to give up.",
            used.join(", ")
        ));
        let messages = vec![
            Message::new(
                Role::System,
                "You revise a failed plan. Reply with JSON only.",
            ),
            Message::new(Role::User, user),
        ];
        let node = self
            .wave_failures
            .first()
            .map(|&i| s.node_id(i))
            .unwrap_or_default();
        let request = Request {
            id: format!("replan#{}:revision", self.replans),
            node,
            visit: self.replans,
            body: RequestBody::Replan {
                messages,
                role: None,
            },
        };
        s.ask(request);
    }

    /// Take a revision: validated like any plan, no id reused, completed
    /// steps kept and referenced, every unrun step superseded.
    fn revise(&mut self, s: &mut Shared, text: &str) {
        let completed: BTreeSet<String> = self.outputs.keys().cloned().collect();
        let grant: Vec<String> = s.plan.grant.iter().flatten().cloned().collect();
        let options = generated::Options {
            allowed_tools: (!grant.is_empty()).then_some(grant),
            ..Default::default()
        };
        let (revision, mut diagnostics) = generated::parse("replan.json", text, &options);
        diagnostics.extend(generated::validate(&revision));
        // References to completed steps are legal: they are outside the revision.
        diagnostics.retain(|d| {
            let about_completed = completed
                .iter()
                .any(|id| d.message.contains(&format!("{id:?}, which is not")));
            !(about_completed
                && matches!(
                    d.code,
                    Code::UnknownDependency | Code::DanglingRef | Code::UndeclaredRef
                ))
        });
        let reused: Vec<&str> = revision
            .nodes
            .iter()
            .map(|n| n.id.as_str())
            .filter(|id| self.used_ids.contains(*id))
            .collect();
        let anchor = self.wave_failures.first().copied().unwrap_or(0);
        // `{"nodes": []}` is the reviser's way to give up, not a malformed plan.
        let gave_up =
            revision.nodes.is_empty() && diagnostics.iter().all(|d| d.code == Code::EmptyPlan);
        if gave_up {
            diagnostics.clear();
        }
        let rejection = if let Some(d) = diagnostics.iter().find(|d| d.is_error()) {
            Some(format!("the revision was rejected: {}", d.message))
        } else if !reused.is_empty() {
            Some(format!("the revision reuses id(s) {}", reused.join(", ")))
        } else {
            None
        };
        if let Some(reason) = rejection {
            s.trace_answered(
                anchor,
                self.replans,
                reason.clone(),
                DecidedBy::Stop,
                Some(text.to_string()),
            );
            if self.replans < s.config.max_replans {
                self.ask_replan(s);
            } else {
                s.finish(FinishReason::NodeFailed {
                    node: s.node_id(anchor),
                    reason,
                });
            }
            return;
        }
        if revision.nodes.is_empty() {
            let reason = "the replan gave up (an empty plan)".to_string();
            s.trace_answered(anchor, self.replans, reason.clone(), DecidedBy::Stop, None);
            s.finish(FinishReason::NodeFailed {
                node: s.node_id(anchor),
                reason,
            });
            return;
        }
        for st in self.state.iter_mut() {
            if matches!(st, State::Pending | State::Skipped(_)) {
                *st = State::Superseded;
            }
        }
        let offset = s.plan.nodes.len();
        self.round_start = offset;
        let first_edge = s.plan.edges.len();
        for node in &revision.nodes {
            self.used_ids.insert(node.id.clone());
            s.add_node(node.clone());
            self.state.push(State::Pending);
            self.deps.push(Vec::new());
        }
        for e in &revision.edges {
            let mut e = e.clone();
            e.from += offset;
            e.to = e.to.map(|t| t + offset);
            s.add_edge(e);
        }
        if let Some(grant) = &revision.grant {
            s.plan
                .grant
                .get_or_insert_with(BTreeSet::new)
                .extend(grant.iter().cloned());
        }
        self.index_edges(s, first_edge);
        let ids: Vec<&str> = revision.nodes.iter().map(|n| n.id.as_str()).collect();
        s.trace_answered(
            anchor,
            self.replans,
            format!("replanned (round {}): {}", self.replans, ids.join(", ")),
            DecidedBy::Schedule,
            None,
        );
        self.wave_failures.clear();
        self.advance(s);
    }

    fn finish(&mut self, s: &mut Shared) {
        // Judged on the final plan: a failure a later round replaced is history.
        let failure = self
            .state
            .iter()
            .enumerate()
            .skip(self.round_start)
            .find_map(|(i, st)| match st {
                State::Failed(reason) => Some((i, reason.clone())),
                _ => None,
            });
        match failure {
            Some((i, reason)) => s.finish(FinishReason::NodeFailed {
                node: s.node_id(i),
                reason,
            }),
            None => s.finish(FinishReason::Completed),
        }
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}
