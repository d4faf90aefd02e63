//! The transition engine: a sans-IO, deterministic state machine that walks a
//! plan.
//!
//! The runner (the CLI, the browser worker) feeds [`Event`]s in and carries
//! [`Effect`]s out: write this status, ask the model this, run this command,
//! append this trace entry, finish. The engine never touches a file, a socket
//! or a clock, so the same code runs natively and in wasm, and the same
//! events always give the same effects.
//!
//! Every answer from outside is keyed by the request that asked for it and
//! recorded in the [`Journal`]. An engine built with a journal serves the
//! requests it already has answers for without emitting them: that is both
//! replay (zero model calls, the same effects) and the safety net of resume
//! (a decision already made is never asked again, so a resumed run cannot
//! take the other branch).

pub mod grid;
pub mod inert;
pub mod journal;
mod planmd_run;
pub mod prompt;
pub mod trace;
mod vault_run;
mod waves_run;

pub use journal::{Answer, Journal, JournalEntry, JournalError, OrderLine, ORDER_KEY};
pub use trace::{DecidedBy, TraceEntry};
pub use vault_run::{renamed_active_note, renamed_note_told};

use crate::model::{Plan, PlanFormat, Status};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Who speaks in a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One chat message, as OpenAI-compatible endpoints take it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
        }
    }
}

/// Who decides a `@human` node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Autonomy {
    /// The run decides, and records the call.
    #[default]
    Full,
    /// The run halts with `awaiting_human` until a person answers.
    Ask,
}

/// What a generated plan does after a step fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureMode {
    /// Start nothing after a wave that failed.
    #[default]
    FailFast,
    /// Keep running everything that does not depend on a failure.
    ContinueIndependent,
}

/// The knobs of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub query: String,
    /// The global step budget under every per-node budget.
    pub max_steps: u32,
    pub autonomy: Autonomy,
    /// How many times one grid judgment is asked before the node fails.
    pub grid_attempts: u32,
    /// Every answer must come from the journal; a missing one ends the run.
    pub replay_only: bool,
    pub failure_mode: FailureMode,
    /// Replanning rounds a generated plan may spend.
    pub max_replans: u32,
    /// A PLAN.md's independent items run together, in waves (Leopold's
    /// `--parallel`). Otherwise one item at a time, in the order Leopold's
    /// serial loop, its default, takes them: a taken route's target
    /// first, else the lowest item that can run.
    pub parallel: bool,
    /// A PLAN.md run out of attempts on an item asks, once, for a
    /// different approach and tries it one last time (Leopold's rescue).
    /// Off for a run begun before it: a Temporal run's history says so,
    /// and a journal without the run's order ([`Engine::new`]).
    pub rescue: bool,
    /// Waves count failures in a row across the run, in the order they
    /// settle, as Leopold's `runParallel` does (its `consecutive_failures`,
    /// as the serial loop's): the last to fail when the count reaches the
    /// ceiling is out of attempts. Off, each item's own failures count: a
    /// run begun before, as its journal's order says ([`Engine::new`]);
    /// nor does its stop write `failed` an item it would have asked again.
    pub waves_in_a_row: bool,
    /// With `parallel`, at most this many items in a wave, the first in
    /// Leopold's order (its `--parallel N`); none: every item that can run.
    pub parallel_at_most: Option<u32>,
    /// A feedback item's amendments are written to the PLAN.md before its
    /// note says done, so a run cut off between the two finds them there.
    /// Off only for a Temporal run begun before, which wrote them after.
    pub amend_first: bool,
    /// A resume that serves a judgment made on other conditions than the
    /// note's now says so in the trace. Off only for a Temporal run begun
    /// before, whose history has no such write.
    pub tell_edited_conditions: bool,
    /// A resume that starts at its active note counts the earlier visits
    /// and steps of a note renamed since (found by what its answers were
    /// made from) as that note's, so its `max_visits` and the run's
    /// `max_steps` hold across the rename. Off only for a Temporal run
    /// begun before, which counted them afresh.
    pub count_renamed_visits: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            query: String::new(),
            max_steps: 100,
            autonomy: Autonomy::Full,
            grid_attempts: 3,
            replay_only: false,
            failure_mode: FailureMode::FailFast,
            max_replans: 2,
            parallel: false,
            rescue: true,
            waves_in_a_row: true,
            parallel_at_most: None,
            amend_first: true,
            tell_edited_conditions: true,
            count_renamed_visits: true,
        }
    }
}

/// Something the engine needs from outside, answered by [`Event::Answered`]
/// with the same `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Stable across runs of the same plan: it is the journal key.
    pub id: String,
    pub node: String,
    pub visit: u32,
    pub body: RequestBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RequestBody {
    /// Do a node's work with these tools, through this role's endpoint.
    Work {
        messages: Vec<Message>,
        tools: Vec<String>,
        role: Option<String>,
        /// `@gate` / `@verify` / `@feedback`: no editing tool may be offered.
        review_only: bool,
    },
    /// Judge every label in one YES/NO grid.
    Judge {
        messages: Vec<Message>,
        labels: Vec<String>,
        role: Option<String>,
        attempt: u32,
    },
    /// Run a `@tool` node's command (refused where commands cannot run).
    Command { command: String },
    /// Ask a person to decide (`@human`, or a vault `type: human` note, under
    /// `autonomy: ask`). `choices` are the labels a person may pick (a vault
    /// note's outgoing conditions); empty means approve or reject.
    Human {
        question: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        choices: Vec<String>,
    },
    /// Invoke a generated step's tool with resolved arguments.
    Invoke {
        capability: String,
        args: serde_json::Value,
    },
    /// Ask for a revised plan for everything that has not completed (a
    /// generated plan), or for a new approach to a PLAN.md item out of
    /// attempts (its rescue, keyed `item#attempt:rescue`).
    Replan {
        messages: Vec<Message>,
        role: Option<String>,
    },
}

impl RequestBody {
    /// The [`Answer`] kind this request takes.
    pub fn answer_kind(&self) -> &'static str {
        match self {
            RequestBody::Work { .. } => "work",
            RequestBody::Judge { .. } => "judgment",
            RequestBody::Command { .. } => "command",
            RequestBody::Human { .. } => "human",
            RequestBody::Invoke { .. } => "invoke",
            RequestBody::Replan { .. } => "revision",
        }
    }
}

impl Request {
    /// The request as the engine keeps it while it waits: everything but the
    /// prompt, which only the runner needs (and which is the costly part).
    fn without_messages(&self) -> Request {
        let body = match &self.body {
            RequestBody::Work {
                tools,
                role,
                review_only,
                ..
            } => RequestBody::Work {
                messages: Vec::new(),
                tools: tools.clone(),
                role: role.clone(),
                review_only: *review_only,
            },
            RequestBody::Judge {
                labels,
                role,
                attempt,
                ..
            } => RequestBody::Judge {
                messages: Vec::new(),
                labels: labels.clone(),
                role: role.clone(),
                attempt: *attempt,
            },
            RequestBody::Replan { role, .. } => RequestBody::Replan {
                messages: Vec::new(),
                role: role.clone(),
            },
            other => other.clone(),
        };
        Request {
            id: self.id.clone(),
            node: self.node.clone(),
            visit: self.visit,
            body,
        }
    }
}

/// What the runner must do, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "kebab-case")]
pub enum Effect {
    /// Write `status:` of this node (surgically, compare-before-write).
    WriteStatus { node: String, status: Status },
    /// Answer this request with an [`Event::Answered`].
    Request(Request),
    /// Append this live answer to the journal before acting on anything else.
    Record(JournalEntry),
    /// Append this entry to `00_plan-trace/trace.md`.
    Trace(TraceEntry),
    /// Keep a node's output as a note under `00_plan-trace/`.
    Output {
        node: String,
        title: String,
        visit: u32,
        text: String,
        /// From an answer the journal served (a resume): the note was
        /// written by the run that got it, and a person may have edited it
        /// since, so one that is there is kept as it is.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        replayed: bool,
    },
    /// Append an accepted amendment to the plan (a PLAN.md work item).
    Amend { text: String },
    /// The run is over.
    Finish(Finish),
}

/// What happened outside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A request was answered.
    Answered { id: String, answer: Answer },
    /// A request could not be served even after retries (network, endpoint):
    /// the run stops resumably, the node stays active.
    Unavailable { id: String, error: String },
    /// A request is refused where it cannot run (a command in the browser):
    /// the node fails with the reason.
    Refused { id: String, reason: String },
    /// The runner cannot answer this request now (a person must decide and
    /// nobody is asked here): the run pauses, `awaiting_human` for a `@human`
    /// item, and resumes when the answer is in the journal.
    Deferred { id: String },
    /// Stop now (Ctrl-C, an outside budget): the run stops resumably.
    Stop { reason: String },
}

/// How a run ended and what it collected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finish {
    pub reason: FinishReason,
    /// The terminal node's output, or the freshest output collected.
    pub answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum FinishReason {
    /// A terminal node (or every item / step) finished.
    Completed,
    /// Safety stop: a node was entered more often than its `max_visits`.
    VisitBudget { node: String, max_visits: u32 },
    /// Safety stop: the run took more than `max_steps` steps.
    StepBudget { max_steps: u32 },
    /// A node failed and nothing routes around it.
    NodeFailed { node: String, reason: String },
    /// A `@human` node waits for a person (`autonomy: ask`).
    AwaitingHuman { node: String, question: String },
    /// A request could not be served; resuming retries it.
    Interrupted { node: String, reason: String },
    /// Stopped from outside; resumable.
    Stopped { reason: String },
    /// A replay needed an answer the journal does not have.
    ReplayDiverged { request: String },
    /// The plan cannot run at all (no start node, a dangling edge, ...).
    PlanFailed { reason: String },
}

impl FinishReason {
    /// One line for the terminal and the trace.
    pub fn describe(&self) -> String {
        match self {
            FinishReason::Completed => "completed".into(),
            FinishReason::VisitBudget { node, max_visits } => {
                format!("safety stop: {node} would exceed its max_visits of {max_visits}")
            }
            FinishReason::StepBudget { max_steps } => {
                format!("safety stop: the run would exceed max_steps of {max_steps}")
            }
            FinishReason::NodeFailed { node, reason } => format!("node {node} failed: {reason}"),
            FinishReason::AwaitingHuman { node, question } => {
                format!("awaiting_human at {node}: {question}")
            }
            FinishReason::Interrupted { node, reason } => {
                format!("interrupted at {node}: {reason} (run again to resume)")
            }
            FinishReason::Stopped { reason } => format!("stopped: {reason} (run again to resume)"),
            FinishReason::ReplayDiverged { request } => {
                format!("replay diverged: the journal has no answer for {request}")
            }
            FinishReason::PlanFailed { reason } => format!("plan failed: {reason}"),
        }
    }

    /// The snake_case name (`awaiting_human`, `visit_budget`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            FinishReason::Completed => "completed",
            FinishReason::VisitBudget { .. } => "visit_budget",
            FinishReason::StepBudget { .. } => "step_budget",
            FinishReason::NodeFailed { .. } => "node_failed",
            FinishReason::AwaitingHuman { .. } => "awaiting_human",
            FinishReason::Interrupted { .. } => "interrupted",
            FinishReason::Stopped { .. } => "stopped",
            FinishReason::ReplayDiverged { .. } => "replay_diverged",
            FinishReason::PlanFailed { .. } => "plan_failed",
        }
    }
}

/// What a predicate sees when it decides a label.
#[derive(Debug, Clone, Copy)]
pub struct PredicateInput<'a> {
    pub node: &'a str,
    pub label: &'a str,
    pub visit: u32,
    pub output: &'a str,
    pub query: &'a str,
}

/// Deterministic code that decides one label instead of the model.
pub type Predicate = Box<dyn Fn(&PredicateInput<'_>) -> bool + Send + Sync>;

/// How many nodes' outputs stay in the recency list.
const RECENCY: usize = 16;

/// Which journal entries a run has read, for a resume that reads them in
/// the order they were written ([`Shared::adopt_renamed`]).
struct ReadOrder {
    read: Vec<bool>,
    /// Each key's places in the journal (a key recorded twice has two).
    places: BTreeMap<String, Vec<usize>>,
    /// Every entry before this one has been read.
    first_unread: usize,
}

impl ReadOrder {
    fn new(entries: &[JournalEntry]) -> ReadOrder {
        let mut places: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            places.entry(entry.key.clone()).or_default().push(i);
        }
        ReadOrder {
            read: vec![false; entries.len()],
            places,
            first_unread: 0,
        }
    }

    fn mark(&mut self, key: &str) {
        for &i in self.places.get(key).into_iter().flatten() {
            self.read[i] = true;
        }
    }

    fn mark_all(&mut self) {
        self.read.fill(true);
    }

    fn next_unread(&mut self) -> Option<usize> {
        while self.read.get(self.first_unread) == Some(&true) {
            self.first_unread += 1;
        }
        (self.first_unread < self.read.len()).then_some(self.first_unread)
    }

    fn rename(&mut self, from: &str, to: &str) {
        if let Some(places) = self.places.remove(from) {
            self.places
                .entry(to.to_string())
                .or_default()
                .extend(places);
        }
    }
}

/// What every format's machine shares: the plan, the budgets, the answers
/// already known, the outputs collected, and the effects being emitted.
pub(crate) struct Shared {
    pub plan: Plan,
    pub config: RunConfig,
    pub statuses: Vec<Status>,
    recorded: BTreeMap<String, Answer>,
    /// What each recorded answer was made from, where its entry says
    /// ([`JournalEntry::made_from`]).
    made_from: BTreeMap<String, String>,
    /// The recorded journal in arrival order (resume restores counters from it).
    pub recorded_order: Vec<JournalEntry>,
    /// Which of `recorded_order`'s entries this run has read (served or
    /// walked past): a resume reads them in the order they were written.
    read: ReadOrder,
    pub predicates: BTreeMap<String, Predicate>,
    /// Each node's freshest output.
    pub outputs: BTreeMap<usize, String>,
    /// Node indices by recency of output, newest last (bounded: prompts
    /// only ever carry the freshest few).
    pub recency: Vec<usize>,
    /// Edge indices leaving each node, in declaration order.
    pub out_edges: Vec<Vec<usize>>,
    /// Node id → index.
    index: BTreeMap<String, usize>,
    pub steps: u32,
    trace_seq: u32,
    out: Vec<Effect>,
    inbox: VecDeque<(Request, Answer, bool)>,
    /// Whether the answer being handled came from the journal.
    pub answer_served: bool,
    outstanding: BTreeMap<String, Request>,
    finished: Option<Finish>,
}

impl Shared {
    /// Ask for an answer: served from the journal when it has one (no
    /// effect), emitted as a request otherwise.
    pub fn ask(&mut self, request: Request) {
        if self.finished.is_some() {
            return;
        }
        if !self.recorded.contains_key(&request.id) {
            self.adopt_renamed(&request.id);
        }
        if let Some(answer) = self.recorded.get(&request.id) {
            if answer.kind() == request.body.answer_kind() {
                let answer = answer.clone();
                self.mark_read(&request.id);
                self.tell_if_edited_since(&request);
                self.inbox.push_back((request, answer, true));
                return;
            }
        }
        if self.config.replay_only {
            let id = request.id.clone();
            self.finish(FinishReason::ReplayDiverged { request: id });
            return;
        }
        self.outstanding
            .insert(request.id.clone(), request.without_messages());
        self.out.push(Effect::Request(request));
    }

    /// A resume serves an answer (a model's, a command's or a person's
    /// decision) to a node edited since it was asked (a person's edit after
    /// a kill): the answer is kept, as a run going on keeps it when the same
    /// edit stops it, and the trace says so.
    fn tell_if_edited_since(&mut self, request: &Request) {
        let (Some(then), Some(node)) = (
            self.made_from.get(&request.id),
            self.node_index(&request.node),
        ) else {
            return;
        };
        if *then != journal::made_from(&self.plan.nodes[node]) {
            let what = match self.plan.format {
                PlanFormat::Vault => "note",
                PlanFormat::PlanMd => "item",
                PlanFormat::Generated => "step",
            };
            // A person's decision was made on the question as it was; a
            // model's answer was made from the note.
            let (answer, made) = match request.body {
                RequestBody::Human { .. } => ("decision", "made on"),
                _ => ("answer", "made from"),
            };
            let what = format!(
                "resumed: the {what} was edited after its {answer} was journaled; that {answer}, \
                 {made} the {what} as it was, is kept (start afresh to redo it now)"
            );
            self.trace(node, request.visit, what, DecidedBy::Resume, None);
        }
    }

    /// Whether a `done` node's work for this visit may be taken as done on
    /// resume: the journal has it, or there is no journal to ask (then the
    /// status alone is the checkpoint). A loop that re-enters a `done` node
    /// for a visit the journal never saw means that work is still to do.
    pub fn work_recorded_or_unknown(&mut self, node: usize, visit: u32) -> bool {
        if self.recorded.is_empty() {
            return true;
        }
        let key = format!("{}#{visit}:work", self.plan.nodes[node].id);
        self.recorded.contains_key(&key) || self.adopt_renamed(&key)
    }

    /// A vault note renamed since the journal recorded it: Obsidian moves
    /// the file and rewrites every link to it, so a resume walks to it
    /// under its new id and finds nothing recorded there. The engine being
    /// deterministic, a resume asks for the journal's answers in the order
    /// they were written: when the first entry not read yet is this very
    /// request of a note the plan no longer has, that note is this one, and
    /// its answers become this note's (those recorded under the new id
    /// since stay). Keeps a rename from costing a finished step's work, its
    /// side effects done twice among it.
    fn adopt_renamed(&mut self, key: &str) -> bool {
        if self.plan.format != PlanFormat::Vault {
            return false;
        }
        let Some((new_id, visit, kind)) = vault_run::split_key(key) else {
            return false;
        };
        let Some(next) = self.read.next_unread() else {
            return false;
        };
        let Some((old_id, old_visit, old_kind)) =
            vault_run::split_key(&self.recorded_order[next].key)
        else {
            return false;
        };
        if (old_visit, old_kind) != (visit, kind) || self.index.contains_key(old_id) {
            return false;
        }
        let (old_id, new_id) = (old_id.to_string(), new_id.to_string());
        let renamed = |key: &str| match vault_run::split_key(key) {
            Some((id, _, _)) if id == old_id => Some(format!("{new_id}{}", &key[id.len()..])),
            _ => None,
        };
        for entry in &mut self.recorded_order {
            if let Some(key) = renamed(&entry.key) {
                self.read.rename(&entry.key, &key);
                entry.key = key;
            }
        }
        let keys: Vec<String> = self
            .recorded
            .keys()
            .filter(|k| renamed(k).is_some())
            .cloned()
            .collect();
        for key in keys {
            if let Some(answer) = self.recorded.remove(&key) {
                let new_key = renamed(&key).unwrap_or_else(|| key.clone());
                if let Some(from) = self.made_from.remove(&key) {
                    self.made_from.entry(new_key.clone()).or_insert(from);
                }
                self.recorded.entry(new_key).or_insert(answer);
            }
        }
        if let Some(node) = self.node_index(&new_id) {
            let what = vault_run::renamed_note_told(&old_id, &new_id);
            self.trace(node, visit, what, DecidedBy::Resume, None);
        }
        true
    }

    /// A resume that starts at its active node reads no answer in order:
    /// nothing is adopted then (a loop back into a renamed note is new work).
    pub fn mark_all_read(&mut self) {
        self.read.mark_all();
    }

    fn mark_read(&mut self, key: &str) {
        self.read.mark(key);
    }

    /// Whether the journal holds an answer this run has not read yet.
    pub fn has_unread(&mut self) -> bool {
        self.read.next_unread().is_some()
    }

    /// Whether the journal holds an answer for this request id.
    pub fn has_recorded(&self, id: &str) -> bool {
        self.recorded.contains_key(id)
    }

    /// Add a node mid-run (an accepted amendment).
    pub fn add_node(&mut self, node: crate::Node) {
        let i = self.plan.nodes.len();
        self.index.insert(node.id.clone(), i);
        self.statuses.push(node.status);
        self.out_edges.push(Vec::new());
        self.plan.nodes.push(node);
    }

    /// Add an edge mid-run (an accepted amendment's dependencies).
    pub fn add_edge(&mut self, edge: crate::Edge) {
        self.out_edges[edge.from].push(self.plan.edges.len());
        self.plan.edges.push(edge);
    }

    /// The recorded output of one visit's work, if the journal has it.
    pub fn recorded_work(&mut self, node: usize, visit: u32) -> Option<String> {
        let key = format!("{}#{visit}:work", self.plan.nodes[node].id);
        match self.recorded.get(&key) {
            Some(Answer::Work { output }) => {
                let output = output.clone();
                self.mark_read(&key);
                Some(output)
            }
            _ => None,
        }
    }

    pub fn set_status(&mut self, node: usize, status: Status) {
        if self.finished.is_some() {
            return;
        }
        self.statuses[node] = status;
        self.out.push(Effect::WriteStatus {
            node: self.plan.nodes[node].id.clone(),
            status,
        });
    }

    pub fn record_output(&mut self, node: usize, visit: u32, text: String) {
        let replayed = self.answer_served;
        self.emit_output(node, visit, text, replayed);
    }

    /// [`Shared::record_output`] for the journal's output of a visit a
    /// resume walks past: its note is written again only where it is gone.
    pub fn replay_output(&mut self, node: usize, visit: u32, text: String) {
        self.emit_output(node, visit, text, true);
    }

    fn emit_output(&mut self, node: usize, visit: u32, text: String, replayed: bool) {
        if self.finished.is_some() {
            return;
        }
        let n = &self.plan.nodes[node];
        self.out.push(Effect::Output {
            node: n.id.clone(),
            title: n.title.clone(),
            visit,
            text: text.clone(),
            replayed,
        });
        self.remember_output(node, text);
    }

    /// Keep an output for later prompts without emitting a note (a prior
    /// output read back on resume).
    pub fn remember_output(&mut self, node: usize, text: String) {
        self.outputs.insert(node, text);
        self.recency.retain(|&n| n != node);
        self.recency.push(node);
        if self.recency.len() > RECENCY {
            self.recency.remove(0);
        }
    }

    /// The freshest outputs, newest last, at most `limit` of them.
    pub fn freshest(&self, limit: usize, except: Option<usize>) -> Vec<(String, String)> {
        let picked: Vec<usize> = self
            .recency
            .iter()
            .rev()
            .filter(|&&n| Some(n) != except)
            .take(limit)
            .copied()
            .collect();
        picked
            .into_iter()
            .rev()
            .map(|n| (self.plan.nodes[n].title.clone(), self.outputs[&n].clone()))
            .collect()
    }

    pub fn last_output(&self) -> Option<String> {
        self.recency.last().map(|n| self.outputs[n].clone())
    }

    pub fn trace(
        &mut self,
        node: usize,
        visit: u32,
        what: String,
        decided_by: DecidedBy,
        rationale: Option<String>,
    ) {
        self.trace_hop(false, node, visit, what, decided_by, rationale);
    }

    /// [`Shared::trace`] for a hop made on an answer: one the journal
    /// served is a hop an earlier run took (a resume walking past it),
    /// written only where the trace lacks it. The PLAN.md and generated
    /// plans' machines trace so; the vault's tells walked hops itself.
    pub fn trace_answered(
        &mut self,
        node: usize,
        visit: u32,
        what: String,
        decided_by: DecidedBy,
        rationale: Option<String>,
    ) {
        let walked = self.answer_served;
        self.trace_hop(walked, node, visit, what, decided_by, rationale);
    }

    /// [`Shared::trace`], for a hop a resume may be walking past on a
    /// recorded decision (`walked`: see [`TraceEntry::walked`]).
    pub fn trace_hop(
        &mut self,
        walked: bool,
        node: usize,
        visit: u32,
        what: String,
        decided_by: DecidedBy,
        rationale: Option<String>,
    ) {
        if self.finished.is_some() {
            return;
        }
        self.trace_seq += 1;
        let n = &self.plan.nodes[node];
        self.out.push(Effect::Trace(TraceEntry {
            seq: self.trace_seq,
            node: n.id.clone(),
            title: n.title.clone(),
            visit,
            what,
            decided_by,
            rationale,
            walked,
        }));
    }

    pub fn emit(&mut self, effect: Effect) {
        if self.finished.is_none() {
            self.out.push(effect);
        }
    }

    /// End the run. A failed node's output is no answer: a run that ends
    /// with [`FinishReason::NodeFailed`] has none.
    pub fn finish(&mut self, reason: FinishReason) {
        let answer = match reason {
            FinishReason::NodeFailed { .. } => None,
            _ => self.last_output(),
        };
        self.finish_with(reason, answer);
    }

    /// End the run with this answer. A failed node is written
    /// `status: failed` first, so its note says so (and a resume starts
    /// it again); the journal's answers lead a replay to the same failure.
    pub fn finish_with(&mut self, reason: FinishReason, answer: Option<String>) {
        if self.finished.is_some() {
            return;
        }
        if let FinishReason::NodeFailed { node, .. } = &reason {
            if let Some(i) = self.node_index(node) {
                self.set_status(i, Status::Failed);
            }
        }
        let finish = Finish { reason, answer };
        self.out.push(Effect::Finish(finish.clone()));
        self.finished = Some(finish);
        self.outstanding.clear();
        self.inbox.clear();
    }

    pub fn is_finished(&self) -> bool {
        self.finished.is_some()
    }

    /// The index of a node by id, in O(log n).
    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub fn node_id(&self, node: usize) -> String {
        self.plan.nodes[node].id.clone()
    }
}

/// The format-specific walker.
enum Machine {
    Vault(vault_run::VaultRun),
    PlanMd(Box<planmd_run::PlanMdRun>),
    Generated(waves_run::WavesRun),
}

impl Machine {
    fn start(&mut self, s: &mut Shared) {
        match self {
            Machine::Vault(m) => m.start(s),
            Machine::PlanMd(m) => m.start(s),
            Machine::Generated(m) => m.start(s),
        }
    }

    fn on_answer(&mut self, s: &mut Shared, request: Request, answer: Answer) {
        match self {
            Machine::Vault(m) => m.on_answer(s, request, answer),
            Machine::PlanMd(m) => m.on_answer(s, request, answer),
            Machine::Generated(m) => m.on_answer(s, request, answer),
        }
    }

    fn on_deferred(&mut self, s: &mut Shared, request: Request) {
        match self {
            Machine::PlanMd(m) => m.on_deferred(s, request),
            Machine::Vault(_) => match request.body {
                RequestBody::Human { question, .. } => s.finish(FinishReason::AwaitingHuman {
                    node: request.node,
                    question,
                }),
                _ => s.finish(FinishReason::Interrupted {
                    node: request.node,
                    reason: "deferred by the runner".into(),
                }),
            },
            _ => s.finish(FinishReason::Interrupted {
                node: request.node,
                reason: "deferred by the runner".into(),
            }),
        }
    }

    fn on_refused(&mut self, s: &mut Shared, request: Request, reason: String) {
        match (self, &request.body) {
            // A refused command is a command that could not execute (126):
            // the item fails and an `@on fail` / `exit!=0` route can catch it.
            (Machine::PlanMd(m), RequestBody::Command { .. }) => m.on_answer(
                s,
                request,
                Answer::Command {
                    exit: 126,
                    output: format!("refused: {reason}"),
                },
            ),
            // A rescue the host cannot ask (no model): no new approach.
            (Machine::PlanMd(m), RequestBody::Replan { .. }) => {
                m.on_rescue_refused(s, request, &reason)
            }
            // A tool the host refuses is that step's failure (a replan can answer it).
            (Machine::Generated(m), RequestBody::Invoke { .. }) => m.on_answer(
                s,
                request,
                Answer::Invoke {
                    value: None,
                    error: Some(format!("refused: {reason}")),
                },
            ),
            _ => {
                let node = request.node;
                s.finish(FinishReason::NodeFailed { node, reason });
            }
        }
    }
}

/// Why a run could not even be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Two nodes share an id, so answers and statuses could not be told apart.
    #[error("node id {0:?} is used by more than one node")]
    DuplicateNodeId(String),
}

/// One run of one plan.
pub struct Engine {
    shared: Shared,
    machine: Machine,
    started: bool,
}

impl Engine {
    /// A run of `plan`, whose node statuses are the checkpoint to resume from,
    /// with the answers `recorded` so far (empty for a fresh run). A PLAN.md
    /// run goes on in the order its journal records ([`Journal::order_line`]),
    /// whatever `config` says: its answers were asked in that order, its
    /// waves' failures counted as they were; one whose journal has answers
    /// and no order began before the rescue, and has none.
    pub fn new(
        plan: Plan,
        mut config: RunConfig,
        recorded: &Journal,
    ) -> Result<Engine, EngineError> {
        if plan.format == PlanFormat::PlanMd {
            match recorded.order_line() {
                Some(order) => {
                    config.parallel = order.parallel;
                    config.waves_in_a_row = order.in_a_row;
                    config.parallel_at_most = order.at_most;
                }
                // Begun before the order was journaled, before the rescue
                // and before waves counted failures in a row or were
                // bounded: it goes on as it began.
                None if !recorded.entries.is_empty() => {
                    config.rescue = false;
                    config.waves_in_a_row = false;
                    config.parallel_at_most = None;
                }
                None => {}
            }
        }
        // The order is no answer: nothing asks for it, nothing reads it.
        let recorded = &Journal {
            entries: recorded.answers().cloned().collect(),
        };
        let statuses = plan.nodes.iter().map(|n| n.status).collect();
        let mut out_edges = vec![Vec::new(); plan.nodes.len()];
        for (i, e) in plan.edges.iter().enumerate() {
            if e.from < out_edges.len() {
                out_edges[e.from].push(i);
            }
        }
        let mut index = BTreeMap::new();
        for (i, n) in plan.nodes.iter().enumerate() {
            if index.insert(n.id.clone(), i).is_some() {
                return Err(EngineError::DuplicateNodeId(n.id.clone()));
            }
        }
        let shared = Shared {
            plan,
            config,
            statuses,
            recorded: recorded.by_key(),
            // As for answers, a later entry for the same key wins.
            made_from: recorded
                .entries
                .iter()
                .fold(BTreeMap::new(), |mut made_from, e| {
                    match &e.made_from {
                        Some(from) => made_from.insert(e.key.clone(), from.clone()),
                        None => made_from.remove(&e.key),
                    };
                    made_from
                }),
            recorded_order: recorded.entries.clone(),
            read: ReadOrder::new(&recorded.entries),
            predicates: BTreeMap::new(),
            outputs: BTreeMap::new(),
            recency: Vec::new(),
            out_edges,
            index,
            steps: 0,
            trace_seq: 0,
            out: Vec::new(),
            inbox: VecDeque::new(),
            answer_served: false,
            outstanding: BTreeMap::new(),
            finished: None,
        };
        let machine = match shared.plan.format {
            PlanFormat::Vault => Machine::Vault(vault_run::VaultRun::new(&shared.plan)),
            PlanFormat::PlanMd => Machine::PlanMd(Box::new(planmd_run::PlanMdRun::new(&shared))),
            PlanFormat::Generated => Machine::Generated(waves_run::WavesRun::new(&shared)),
        };
        Ok(Engine {
            shared,
            machine,
            started: false,
        })
    }

    /// The PLAN.md text, so `@feedback` amendments can be applied to it.
    pub fn set_plan_text(&mut self, text: impl Into<String>) {
        if let Machine::PlanMd(m) = &mut self.machine {
            m.set_plan_text(text.into());
        }
    }

    /// Decide `label` by code instead of the model, wherever it appears.
    pub fn register_predicate(&mut self, label: impl Into<String>, predicate: Predicate) {
        self.shared.predicates.insert(label.into(), predicate);
    }

    /// An output a node produced in an earlier, interrupted run (read back
    /// from its note), so judging a `done` node sees what it produced.
    pub fn set_prior_output(&mut self, node_id: &str, text: impl Into<String>) {
        if let Some(i) = self.shared.node_index(node_id) {
            self.shared.remember_output(i, text.into());
        }
    }

    /// Begin (or resume) the run.
    pub fn start(&mut self) -> Vec<Effect> {
        if !self.started {
            self.started = true;
            self.machine.start(&mut self.shared);
            self.pump();
        }
        std::mem::take(&mut self.shared.out)
    }

    /// Feed one event; returns what to do next.
    pub fn handle(&mut self, event: Event) -> Vec<Effect> {
        if self.shared.finished.is_none() {
            match event {
                Event::Answered { id, answer } => {
                    if let Some(request) = self.shared.outstanding.remove(&id) {
                        if answer.kind() != request.body.answer_kind() {
                            let reason = format!(
                                "expected a {} answer for {id}, got {}",
                                request.body.answer_kind(),
                                answer.kind()
                            );
                            self.shared.finish(FinishReason::Interrupted {
                                node: request.node,
                                reason,
                            });
                        } else {
                            let mut answer = answer;
                            if let (
                                Answer::Judgment { labels, .. },
                                RequestBody::Judge { labels: asked, .. },
                            ) = (&mut answer, &request.body)
                            {
                                labels.clone_from(asked);
                            }
                            let made_from = match answer {
                                Answer::Work { .. }
                                | Answer::Command { .. }
                                | Answer::Human { .. } => self
                                    .shared
                                    .node_index(&request.node)
                                    .map(|i| journal::made_from(&self.shared.plan.nodes[i])),
                                _ => None,
                            };
                            self.shared.out.push(Effect::Record(JournalEntry {
                                key: id,
                                answer: answer.clone(),
                                made_from,
                            }));
                            self.shared.inbox.push_back((request, answer, false));
                        }
                    }
                }
                Event::Unavailable { id, error } => {
                    if let Some(request) = self.shared.outstanding.remove(&id) {
                        self.shared.finish(FinishReason::Interrupted {
                            node: request.node,
                            reason: error,
                        });
                    }
                }
                Event::Refused { id, reason } => {
                    if let Some(request) = self.shared.outstanding.remove(&id) {
                        self.machine.on_refused(&mut self.shared, request, reason);
                    }
                }
                Event::Deferred { id } => {
                    if let Some(request) = self.shared.outstanding.remove(&id) {
                        self.machine.on_deferred(&mut self.shared, request);
                    }
                }
                Event::Stop { reason } => self.shared.finish(FinishReason::Stopped { reason }),
            }
            self.pump();
        }
        std::mem::take(&mut self.shared.out)
    }

    fn pump(&mut self) {
        while let Some((request, answer, served)) = self.shared.inbox.pop_front() {
            if self.shared.finished.is_some() {
                break;
            }
            self.shared.answer_served = served;
            self.machine.on_answer(&mut self.shared, request, answer);
        }
    }

    /// The requests still waiting for an answer.
    pub fn outstanding(&self) -> impl Iterator<Item = &Request> {
        self.shared.outstanding.values()
    }

    pub fn finished(&self) -> Option<&Finish> {
        self.shared.finished.as_ref()
    }

    /// The statuses as the engine last wrote them.
    pub fn statuses(&self) -> Vec<(String, Status)> {
        self.shared
            .plan
            .nodes
            .iter()
            .zip(&self.shared.statuses)
            .map(|(n, s)| (n.id.clone(), *s))
            .collect()
    }

    pub fn plan(&self) -> &Plan {
        &self.shared.plan
    }
}

/// Run to the end with a function that answers every request in the order
/// they were asked: what tests, benchmarks and `--replay` use. Returns every
/// effect.
pub fn drive(engine: &mut Engine, mut answer: impl FnMut(&Request) -> Event) -> Vec<Effect> {
    fn requests(effects: &[Effect]) -> impl Iterator<Item = Request> + '_ {
        effects.iter().filter_map(|e| match e {
            Effect::Request(r) => Some(r.clone()),
            _ => None,
        })
    }
    let mut all = engine.start();
    let mut queue: VecDeque<Request> = requests(&all).collect();
    while let Some(request) = queue.pop_front() {
        if engine.finished().is_some() {
            break;
        }
        let effects = engine.handle(answer(&request));
        queue.extend(requests(&effects));
        all.extend(effects);
    }
    all
}
