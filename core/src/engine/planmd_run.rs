//! PLAN.md semantics (seed 001): items scheduled by their `(after:)`
//! dependencies, one at a time in Leopold's serial order or, with
//! `parallel`, in waves (independent items run together, at most
//! `parallel_at_most` of them; a wave is a barrier so the schedule is a
//! pure function of the recorded answers),
//! `@needs` gates on the signal channel, `@on` routes that fire on a signal or
//! the item's outcome, bypass the item's other static successors and latch,
//! node kinds with their own effects (`@tool` runs a command, `@gate` /
//! `@verify` / `@feedback` are review-only, `@human` asks or decides by
//! autonomy), and `@feedback` amendments through the amendment bounds.

use super::prompt;
use super::{Answer, Autonomy, DecidedBy, Effect, FinishReason, Request, RequestBody, Shared};
use crate::model::{EdgeKind, NodeKind, Status};
use crate::planmd::{self, amend, channel::Channel, status::StatusKind, Condition};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Settled,
    /// Not run: a dependency steered elsewhere (or was itself bypassed).
    Bypassed,
    /// Not run: blocked by a failure.
    Skipped(String),
    /// Not run: waiting for what never came, a `@needs` nobody sent or a
    /// dependency a box checked before the run steered away from. A run
    /// that took no route ends failed on it (Leopold's deadlock).
    Stranded(String),
}

pub(crate) struct PlanMdRun {
    state: Vec<State>,
    deps: Vec<Vec<usize>>,
    /// Route edge indices leaving each item.
    routes_out: Vec<Vec<usize>>,
    /// Items with a route into each item.
    routes_in: Vec<Vec<usize>>,
    /// An `@on` route fired into the item.
    routed: Vec<bool>,
    /// The items a settled item's fired routes point to (empty: it did not steer).
    fired: Vec<BTreeSet<usize>>,
    outcomes: Vec<Option<String>>,
    channel: Channel,
    /// The wave in flight and the answers that came back for it.
    wave: Vec<usize>,
    answers: BTreeMap<usize, (Request, Answer)>,
    /// Items that failed with nothing routing around them.
    failures: Vec<(usize, String)>,
    /// The PLAN.md text, for `@feedback` amendments.
    plan_text: Option<String>,
    amendments_spent: u32,
    /// Each item's attempt, from 1: its request ids and trace visits.
    attempts: Vec<u32>,
    /// The attempt each item's current round of attempts began at: a run
    /// started again after the item failed gives it a new round.
    round_start: Vec<u32>,
    /// Items the run starts at `failed` (their note says so): run again,
    /// they get a new round once the journal's attempts are replayed.
    failed_at_start: Vec<bool>,
    /// Why each item's last attempt was not done, told to the next one.
    last_failure: Vec<Option<String>>,
    /// Items checked `[x]` before the run: done, and their routes tested
    /// against the channel as it stands, every round ([`Self::live_routes`]).
    checked: Vec<bool>,
    /// Failures in a row across the run, of any items: what Leopold's
    /// loops stop on (`consecutive_failures`). A wave's failures add up;
    /// an item done in it ends the streak once it has settled.
    failures_in_a_row: u32,
    /// The wave's failed attempts, tried again or not once it has settled.
    wave_failures: Vec<Attempted>,
    /// An item of the wave was done: the streak ends as it settles.
    done_in_wave: bool,
    /// The run's one rescue (Leopold's `failure_rescue_used`) is spent: it
    /// was asked. A run started again after a failure gets it back.
    rescue_spent: bool,
    /// Items out of attempts whose rescue is to be decided once their wave
    /// has settled, what each one's last attempt reported, and after how
    /// many failures.
    rescuable: Vec<(usize, String, u32)>,
    /// Items whose rescue is asked and not answered yet.
    rescuing: BTreeSet<usize>,
    /// The approach a rescue decided, told to the item's last attempt.
    rescue_lead: Vec<Option<String>>,
    /// The item and attempt a rescue granted.
    rescued: Option<(usize, u32)>,
}

/// An item's settled attempt, whose failure may be decided once its wave
/// has: what concluding it needs.
struct Attempted {
    i: usize,
    /// The request's kind of work (`work`, `command`); none for a person's.
    key: Option<&'static str>,
    output: String,
    outcome: Option<String>,
    failure_why: Option<String>,
    rederive: bool,
    already_done: bool,
    /// Failed, with no route taken.
    failed: bool,
    command: bool,
    /// Its answer came from the journal.
    served: bool,
}

/// How many times a worker is asked to do an item that fails with no route
/// taken: Leopold's `max_failures` default (its serial loop picks the failed
/// item again until that many failures in a row stop the run).
pub(crate) const MAX_ATTEMPTS: u32 = 3;

const STATUS_BLOCK_HELP: &str = "End your reply with a status block:\n```leopold-status\nSTATUS: done | blocked | failed\nSIGNALS: key=value, ... (or none)\n```";

impl PlanMdRun {
    pub fn new(s: &Shared) -> Self {
        let n = s.plan.nodes.len();
        let mut run = PlanMdRun {
            state: vec![State::Pending; n],
            deps: vec![Vec::new(); n],
            routes_out: vec![Vec::new(); n],
            routes_in: vec![Vec::new(); n],
            routed: vec![false; n],
            fired: vec![BTreeSet::new(); n],
            outcomes: vec![None; n],
            channel: Channel::new(),
            wave: Vec::new(),
            answers: BTreeMap::new(),
            failures: Vec::new(),
            plan_text: None,
            amendments_spent: 0,
            attempts: vec![1; n],
            round_start: vec![1; n],
            failed_at_start: s.statuses.iter().map(|&st| st == Status::Failed).collect(),
            last_failure: vec![None; n],
            checked: vec![false; n],
            failures_in_a_row: 0,
            wave_failures: Vec::new(),
            done_in_wave: false,
            rescue_spent: false,
            rescuable: Vec::new(),
            rescuing: BTreeSet::new(),
            rescue_lead: vec![None; n],
            rescued: None,
        };
        run.index_edges(s, 0);
        run
    }

    pub fn set_plan_text(&mut self, text: String) {
        self.plan_text = Some(text);
    }

    /// Index the edges leaving items from `first_edge` on (all at start, the
    /// new ones after an amendment).
    fn index_edges(&mut self, s: &Shared, first_edge: usize) {
        for (i, e) in s.plan.edges.iter().enumerate().skip(first_edge) {
            let Some(to) = e.to else { continue };
            match e.kind {
                EdgeKind::After => self.deps[to].push(e.from),
                EdgeKind::Route => {
                    self.routes_out[e.from].push(i);
                    self.routes_in[to].push(e.from);
                }
                _ => {}
            }
        }
    }

    pub fn start(&mut self, s: &mut Shared) {
        // An item checked before the run (no answer of it journaled) is done,
        // as Leopold reads a checked box: it waits for no dependency and no
        // `@needs`, is never skipped or bypassed, and its dependents wait
        // only for it. It settles with no outcome and emits nothing.
        for i in 0..self.state.len() {
            if s.statuses[i] == Status::Done && !ran_in_this_run(s, i) {
                let node = &s.plan.nodes[i];
                let request = Request {
                    id: format!("{}#1:work", node.id),
                    node: node.id.clone(),
                    visit: 1,
                    body: RequestBody::Work {
                        messages: Vec::new(),
                        tools: Vec::new(),
                        role: None,
                        review_only: false,
                    },
                };
                let output = s.outputs.get(&i).cloned().unwrap_or_default();
                self.checked[i] = true;
                self.settle(s, i, request, Answer::Work { output });
            }
        }
        self.decide_failures(s);
        self.advance(s);
    }

    /// Schedule: settle what can be decided without running anything, then
    /// start the next wave, or finish.
    fn advance(&mut self, s: &mut Shared) {
        loop {
            if s.is_finished() || !self.wave.is_empty() || !self.rescuing.is_empty() {
                return;
            }
            // A failure nothing routes around (after its attempts) stops the
            // run once its wave has settled, as Leopold's loop stops on
            // repeated failure: no later item starts. Unless the run's
            // rescue gives it one last attempt.
            if !self.failures.is_empty() {
                if self.decide_rescues(s) {
                    return;
                }
                if self.failures.is_empty() {
                    continue;
                }
                // Failed in their notes, those the rescue might have
                // saved too, and those whose last attempt failed with
                // attempts left (the stop asks them no more). Not in a
                // run begun before it wrote those: its resume must write
                // what it wrote, and a note it left `active` must not
                // read as one a stop was on ([`Self::run_again`]) where
                // two items were out of attempts at once.
                let retried = (0..self.state.len()).filter(|&i| {
                    s.config.waves_in_a_row
                        && self.state[i] == State::Pending
                        && self.last_failure[i].is_some()
                        && s.statuses[i] == Status::Active
                });
                let stopped: Vec<usize> = self
                    .failures
                    .iter()
                    .map(|&(f, _)| f)
                    .chain(retried)
                    .collect();
                for f in stopped {
                    if s.statuses[f] != Status::Failed {
                        s.set_status(f, Status::Failed);
                    }
                }
                self.finish(s);
                return;
            }
            let mut changed = false;
            let mut wave = Vec::new();
            let live = self.live_routes(s);
            for i in 0..self.state.len() {
                if self.state[i] != State::Pending {
                    continue;
                }
                match self.readiness(s, i, &live, false) {
                    Readiness::Wait => {}
                    Readiness::Bypass(by) => {
                        self.state[i] = State::Bypassed;
                        s.trace_answered(
                            i,
                            0,
                            format!("bypassed: item {} steered elsewhere", by + 1),
                            DecidedBy::Route,
                            None,
                        );
                        changed = true;
                    }
                    Readiness::Skip(reason, stranded) => {
                        s.trace_answered(
                            i,
                            0,
                            format!("skipped: {reason}"),
                            DecidedBy::Schedule,
                            None,
                        );
                        self.state[i] = skipped(reason, stranded);
                        changed = true;
                    }
                    Readiness::Ready => wave.push(i),
                }
            }
            if !wave.is_empty() {
                // Leopold's order (`dispatchPlan(…).order`): a taken route's
                // target outranks the items' order. The serial loop takes
                // the first; a wave is asked and settled in that order.
                let routed = |i: &usize| self.routed[*i] || live.routed.contains(i);
                wave.sort_by_key(|i| !routed(i));
                // Under `autonomy: ask` a person decides a `@human` item
                // before anything else of its wave starts (Leopold's
                // `haltsRun` in `runParallel`): the others, asked beside
                // it, would be paid for and lost when the run stops to
                // wait for them.
                let waits_for_a_person = |i: &&usize| {
                    s.config.autonomy == Autonomy::Ask && s.plan.nodes[**i].kind == NodeKind::Human
                };
                match wave.iter().find(waits_for_a_person) {
                    Some(&person) if s.config.parallel => wave = vec![person],
                    _ if !s.config.parallel => wave.truncate(1),
                    // Leopold's `--parallel N` starts the first N.
                    _ => wave.truncate(
                        s.config
                            .parallel_at_most
                            .map_or(usize::MAX, |n| n.max(1) as usize),
                    ),
                }
                self.start_wave(s, wave);
                return;
            }
            if changed {
                continue;
            }
            // Nothing runnable and nothing decided: whatever still waits
            // waits for something that will never come.
            let mut forced = false;
            for i in 0..self.state.len() {
                if self.state[i] == State::Pending {
                    match self.readiness(s, i, &live, true) {
                        Readiness::Bypass(by) => {
                            forced = true;
                            self.state[i] = State::Bypassed;
                            s.trace_answered(
                                i,
                                0,
                                format!("bypassed: item {} steered elsewhere", by + 1),
                                DecidedBy::Route,
                                None,
                            );
                        }
                        Readiness::Skip(reason, stranded) => {
                            forced = true;
                            s.trace_answered(
                                i,
                                0,
                                format!("skipped: {reason}"),
                                DecidedBy::Schedule,
                                None,
                            );
                            self.state[i] = skipped(reason, stranded);
                        }
                        _ => {}
                    }
                }
            }
            if forced {
                continue;
            }
            self.finish(s);
            return;
        }
    }

    /// [`LiveRoutes`] as the channel stands.
    fn live_routes(&self, s: &Shared) -> LiveRoutes {
        let mut live = LiveRoutes::default();
        for c in (0..self.checked.len()).filter(|&c| self.checked[c]) {
            for &e in &self.routes_out[c] {
                let edge = &s.plan.edges[e];
                let Some(to) = edge.to else { continue };
                let condition = Condition::parse(edge.label.as_deref().unwrap_or_default());
                // No outcome: a bare word reads the signal of that name.
                if condition.matches(None, self.channel.signals()) {
                    live.steered.insert(c);
                    if self.state[to] != State::Settled {
                        live.routed.insert(to);
                    }
                }
            }
        }
        live
    }

    /// Whether a pending item can run. `final_say`: nothing else can change,
    /// so a postponed decision is taken now.
    fn readiness(&self, s: &Shared, i: usize, live: &LiveRoutes, final_say: bool) -> Readiness {
        let settled = |d: usize| {
            matches!(
                self.state[d],
                State::Settled | State::Bypassed | State::Skipped(_) | State::Stranded(_)
            )
        };
        // A route is an explicit jump: its target waits for no `(after:)`
        // dependency (Leopold's `routeDecision`), only for its `@needs`.
        let routed = self.routed[i] || live.routed.contains(&i);
        if !routed && !self.deps[i].iter().all(|&d| settled(d)) {
            return Readiness::Wait;
        }
        // A route source still to settle might yet route here, and so might
        // a box checked before the run until the run ends ([`LiveRoutes`]).
        let route_pending = self.routes_in[i].iter().any(|&src| {
            self.checked[src] || matches!(self.state[src], State::Pending | State::Running)
        });
        if !routed {
            for &d in &self.deps[i] {
                // Steered away from for as long as that route holds.
                if live.steered.contains(&d) {
                    return if final_say {
                        Readiness::Skip(
                            format!("item {}, checked before the run, steered elsewhere", d + 1),
                            true,
                        )
                    } else {
                        Readiness::Wait
                    };
                }
                let steered_away = self.state[d] == State::Settled
                    && !self.fired[d].is_empty()
                    && !self.fired[d].contains(&i);
                if steered_away || self.state[d] == State::Bypassed {
                    return if route_pending && !final_say {
                        Readiness::Wait
                    } else {
                        Readiness::Bypass(d)
                    };
                }
                let blocked = match &self.state[d] {
                    State::Skipped(_) | State::Stranded(_) => {
                        Some(format!("item {} did not run", d + 1))
                    }
                    State::Settled
                        if self.fired[d].is_empty() && is_failure(self.outcomes[d].as_deref()) =>
                    {
                        Some(format!(
                            "item {} ended {}",
                            d + 1,
                            self.outcomes[d].as_deref().unwrap_or("")
                        ))
                    }
                    _ => None,
                };
                if let Some(reason) = blocked {
                    return if route_pending && !final_say {
                        Readiness::Wait
                    } else {
                        Readiness::Skip(reason, false)
                    };
                }
            }
        }
        if let Some(missing) = self.missing_need(s, i) {
            return if final_say {
                Readiness::Skip(
                    format!("@needs {missing}, which is not on the channel"),
                    true,
                )
            } else {
                Readiness::Wait
            };
        }
        Readiness::Ready
    }

    /// The first `@needs` key not on the channel.
    fn missing_need(&self, s: &Shared, i: usize) -> Option<String> {
        let item = planmd::item(&s.plan.nodes[i])?;
        item.needs
            .iter()
            .find(|k| self.channel.get(k).is_none())
            .cloned()
    }

    fn start_wave(&mut self, s: &mut Shared, wave: Vec<usize>) {
        let budget_left = s.config.max_steps.saturating_sub(s.steps) as usize;
        if wave.len() > budget_left {
            let max_steps = s.config.max_steps;
            s.trace_answered(
                wave[budget_left.min(wave.len() - 1)],
                0,
                format!("safety stop: max_steps {max_steps} reached"),
                DecidedBy::Stop,
                None,
            );
            s.finish(FinishReason::StepBudget { max_steps });
            return;
        }
        self.wave = wave.clone();
        for &i in &wave {
            self.state[i] = State::Running;
            s.steps += 1;
        }
        for &i in &wave {
            if s.is_finished() {
                return;
            }
            self.ask(s, i);
        }
    }

    fn ask(&mut self, s: &mut Shared, i: usize) {
        let node = &s.plan.nodes[i];
        let id = node.id.clone();
        let already_done = s.statuses[i] == Status::Done;
        let kind = node.kind;
        let (key, body) = match kind {
            NodeKind::Tool => {
                let command = planmd::item(node)
                    .and_then(|it| it.command.clone())
                    .unwrap_or_else(|| node.title.clone());
                ("command", RequestBody::Command { command })
            }
            NodeKind::Human if s.config.autonomy == Autonomy::Ask => {
                let question = format!("Item {}: {}", id, node.title);
                (
                    "human",
                    RequestBody::Human {
                        question,
                        choices: Vec::new(),
                    },
                )
            }
            _ => {
                let review_only =
                    matches!(kind, NodeKind::Gate | NodeKind::Verify | NodeKind::Feedback);
                let mut extra = String::new();
                if let Some(why) = &self.last_failure[i] {
                    extra.push_str(&format!(
                        "This is {}: the last one was not done ({why}). \
                         Finish the item, or say why it is blocked.\n\n",
                        self.attempt_of(i)
                    ));
                }
                if let Some(lead) = self.rescue_lead[i].take() {
                    extra.push_str(&format!("{lead}\n\n"));
                }
                extra.push_str(&work_extra(s, i));
                let earlier = s.freshest(prompt::earlier_limit(), None);
                let messages = prompt::work_messages(
                    &s.config.query,
                    node,
                    review_only,
                    &earlier,
                    Some(&extra),
                );
                let tools = super::vault_run::granted_tools(&s.plan, node);
                let tools = if review_only { Vec::new() } else { tools };
                (
                    "work",
                    RequestBody::Work {
                        messages,
                        tools,
                        role: node.role.clone(),
                        review_only,
                    },
                )
            }
        };
        let attempt = self.attempts[i];
        let request = Request {
            id: format!("{id}#{attempt}:{key}"),
            node: id,
            visit: attempt,
            body,
        };
        // A done item (a resumed run) with its answer recorded is re-derived
        // from the journal; without one it simply counts as done.
        if already_done && !s.has_recorded(&request.id) {
            self.answers.insert(
                i,
                (
                    request,
                    Answer::Work {
                        output: s.outputs.get(&i).cloned().unwrap_or_default(),
                    },
                ),
            );
            self.complete_wave_if_ready(s);
            return;
        }
        // A failed item's note keeps `failed` while it is tried again, until
        // it settles: a resume of a new round interrupted before its first
        // answer was journaled knows the round only by that status.
        if !already_done && s.statuses[i] != Status::Failed {
            s.set_status(i, Status::Active);
        }
        s.ask(request);
    }

    pub fn on_answer(&mut self, s: &mut Shared, request: Request, answer: Answer) {
        if let RequestBody::Replan { .. } = request.body {
            let text = match answer {
                Answer::Revision { text } => text,
                _ => String::new(),
            };
            let served = s.answer_served;
            self.on_rescue(s, request, text, served);
            return;
        }
        let Some(i) = s.node_index(&request.node) else {
            return;
        };
        if !self.wave.contains(&i) {
            return;
        }
        self.answers.insert(i, (request, answer));
        self.complete_wave_if_ready(s);
    }

    fn complete_wave_if_ready(&mut self, s: &mut Shared) {
        if self.answers.len() < self.wave.len() {
            return;
        }
        let wave = std::mem::take(&mut self.wave);
        let mut answers = std::mem::take(&mut self.answers);
        for i in wave {
            if let Some((request, answer)) = answers.remove(&i) {
                self.settle(s, i, request, answer);
            }
        }
        self.decide_failures(s);
        self.advance(s);
    }

    pub fn on_deferred(&mut self, s: &mut Shared, request: Request) {
        match request.body {
            RequestBody::Human { question, .. } => s.finish(FinishReason::AwaitingHuman {
                node: request.node,
                question,
            }),
            _ => s.finish(FinishReason::Interrupted {
                node: request.node,
                reason: "deferred by the runner".into(),
            }),
        }
    }

    /// Record an item's result: channel, outcome, routes, status, trace.
    fn settle(&mut self, s: &mut Shared, i: usize, request: Request, answer: Answer) {
        let node = s.plan.nodes[i].clone();
        // A done item of a resumed run: re-derived from its recorded answer
        // (channel and routes exactly as before) or, without one, counted ok.
        let rederive = s.statuses[i] == Status::Done;
        let already_done = rederive && !s.has_recorded(&request.id);
        // Why a worker's reply is not done, when its status does not say.
        let mut failure_why = None;
        let (output, outcome, signals, decided_by) = match &answer {
            Answer::Command { exit, output } => {
                let outcome = if *exit == 0 { "ok" } else { "fail" };
                if *exit != 0 {
                    failure_why = Some(format!("exit {exit}"));
                }
                (
                    output.clone(),
                    Some(outcome.to_string()),
                    vec![(planmd::TOOL_EXIT_SIGNAL.to_string(), exit.to_string())],
                    DecidedBy::Command,
                )
            }
            Answer::Human {
                decision, approved, ..
            } => {
                let outcome = if *approved { "ok" } else { "fail" };
                (
                    decision.clone(),
                    Some(outcome.to_string()),
                    Vec::new(),
                    DecidedBy::Human,
                )
            }
            // Done before this run, nothing recorded: as in Leopold, its outcome
            // is unknown (an `@on ok` does not fire; a signal route reads the
            // channel) and it puts nothing on the channel.
            Answer::Work { output } if already_done => {
                (output.clone(), None, Vec::new(), DecidedBy::Resume)
            }
            Answer::Work { output } => {
                let (outcome, signals, why) = work_outcome(&node, output);
                failure_why = why;
                let by = if node.kind == NodeKind::Human {
                    DecidedBy::Human
                } else {
                    DecidedBy::Schedule
                };
                (output.clone(), Some(outcome.to_string()), signals, by)
            }
            // An answer of the wrong kind for an item (a corrupt journal): the item fails.
            other => (
                format!("unexpected {} answer", other.kind()),
                Some("fail".into()),
                Vec::new(),
                DecidedBy::Stop,
            ),
        };
        let attempt = self.attempts[i];
        self.state[i] = State::Settled;
        self.outcomes[i] = outcome.clone();
        let mut signals = signals;
        if outcome.as_deref() == Some("ok") {
            signals.extend(declared_defaults(&node, &signals));
        }
        let declared = planmd::channel::declared_keys(&node);
        let mut notes = Vec::new();
        for (key, value) in &signals {
            match self.channel.write(&declared, key, value) {
                Ok(()) => notes.push(format!("{key}={value}")),
                Err(err) => notes.push(format!("refused {key}={value} ({}: {err})", err.bound())),
            }
        }
        let mut what = match (&outcome, &failure_why) {
            (Some(o), Some(why)) => format!("settled: {o} ({why})"),
            (Some(o), None) => format!("settled: {o}"),
            (None, _) => "settled: no outcome reported".to_string(),
        };
        if rederive {
            what = format!("already done (resumed): {what}");
        }
        if !notes.is_empty() {
            what.push_str(&format!("; signals {}", notes.join(", ")));
        }
        let rationale = (decided_by == DecidedBy::Human && node.kind == NodeKind::Human)
            .then(|| output.clone());
        let what =
            if node.kind == NodeKind::Human && s.config.autonomy == Autonomy::Full && !rederive {
                format!("{what}; decided by the run under autonomy: full")
            } else {
                what
            };
        if !rederive {
            s.trace_answered(i, attempt, what, decided_by, rationale);
        }

        // Routes fire on the settled state and latch: computed once, here. A
        // `blocked` item no `@on blocked` route handles takes its `@on fail`
        // routes too, beside any signal route that fired: Leopold records
        // only `ok` and `fail`.
        let blocked_taken = self.take_routes(s, i, outcome.as_deref(), false, rederive);
        if !blocked_taken && outcome.as_deref() == Some("blocked") {
            self.take_routes(s, i, Some("fail"), true, rederive);
        }
        let failed = self.fired[i].is_empty() && is_failure(outcome.as_deref());
        // A failure no route handles is tried again, as Leopold's loop
        // picks the item again: a worker's reply, a command (a flaky test
        // passes on its second run); not a person's "no", which Leopold
        // never asks for (under `autonomy: ask` it stops before the item).
        let key = match answer {
            Answer::Work { .. } => Some("work"),
            Answer::Command { .. } => Some("command"),
            _ => None,
        };
        let work = key.is_some() && !already_done;
        if failed && work {
            self.failures_in_a_row += 1;
        } else if !failed && is_failure(outcome.as_deref()) {
            // A failure a route handled ends the streak as it settles.
            self.failures_in_a_row = 0;
        } else if !failed {
            // Any item done (a person's approval, one done before or by
            // hand) ends the streak once its wave has settled: Leopold
            // applies an item's success after the failures that end with
            // it (`runParallel`'s `serialize`), so in a wave with any item
            // done the streak ends, whatever the wave's order.
            self.done_in_wave = true;
        }
        let attempted = Attempted {
            i,
            key,
            output,
            outcome,
            failure_why,
            rederive,
            already_done,
            failed,
            command: matches!(answer, Answer::Command { .. }),
            served: s.answer_served,
        };
        if !(failed && work) {
            self.conclude(s, attempted, 0);
            return;
        }
        if self.counts_per_item(s) {
            let tried = attempt - self.round_start[i] + 1;
            if tried < MAX_ATTEMPTS {
                self.retry(s, attempted, false);
            } else {
                self.conclude(s, attempted, tried);
            }
            return;
        }
        // Tried again, unless the run's failures in a row reach the
        // ceiling with this one the last: decided once the wave has
        // settled ([`Self::decide_failures`]). Meanwhile its box is open,
        // as Leopold leaves it: a later item of the wave may route here.
        self.state[i] = State::Pending;
        self.wave_failures.push(attempted);
    }

    /// Whether waves count each item's own failures, as a run begun
    /// before they counted the run's in a row still does.
    fn counts_per_item(&self, s: &Shared) -> bool {
        s.config.parallel && !s.config.waves_in_a_row
    }

    /// The wave's failures, once it has settled (Leopold's loop tests its
    /// ceiling between dispatches): each is tried again, but the last one
    /// when the run's failures in a row reach the ceiling, no item of the
    /// wave done. That item is out of attempts: the run stops on it, or
    /// rescues it.
    fn decide_failures(&mut self, s: &mut Shared) {
        if std::mem::take(&mut self.done_in_wave) {
            self.failures_in_a_row = 0;
        }
        let failures = std::mem::take(&mut self.wave_failures);
        let tried = self.failures_in_a_row;
        let stop_on = failures
            .last()
            .map(|a| a.i)
            .filter(|_| tried >= MAX_ATTEMPTS);
        for attempted in failures {
            if Some(attempted.i) == stop_on {
                self.state[attempted.i] = State::Settled;
                self.conclude(s, attempted, tried);
            } else {
                self.retry(s, attempted, stop_on.is_some());
            }
        }
    }

    /// A worker's failed item asked again, told why its last attempt was
    /// not done; `held`: once the run goes on past another item's stop
    /// (its rescue).
    fn retry(&mut self, s: &mut Shared, a: Attempted, held: bool) {
        let why = a
            .failure_why
            .unwrap_or_else(|| format!("it ended {}", a.outcome.as_deref().unwrap_or_default()));
        let what = match held {
            true => format!(
                "asked again once the run goes on: {}",
                self.next_attempt_of(a.i)
            ),
            false => format!("asked again: {}", self.next_attempt_of(a.i)),
        };
        self.again(s, a.i, &a.output, a.rederive, why, what);
    }

    /// An item settled for good: done, failed with a route taken, or out
    /// of attempts after `tried` failures (its own, or the run's in a row).
    fn conclude(&mut self, s: &mut Shared, a: Attempted, tried: u32) {
        let Attempted {
            i,
            key,
            output,
            outcome,
            failure_why,
            rederive,
            already_done,
            failed,
            command,
            served,
        } = a;
        let work = key.is_some() && !already_done;
        let attempt = self.attempts[i];
        let node = s.plan.nodes[i].clone();
        // Its attempts spent: a run started again after this failure gives
        // it a new round, from its input. Such a run is known by the
        // journal holding the next attempt (it asked it), or, past the
        // journal's last answer, by the note saying `failed` (the stop wrote
        // it; an attempt in flight when a run is interrupted is not yet in
        // the journal).
        let next = format!("{}#{}:{}", node.id, attempt + 1, key.unwrap_or("work"));
        let run_again = self.run_again(s, i, served);
        // Out of attempts, the run's rescue is decided once the wave has
        // settled, and journaled whatever it is (a model's approach, or
        // none): a run that reaches this again reads it there, and a run
        // started again after the stop it caused knows that stop by it
        // ([`Self::on_rescue`]). Not where the journal goes on past this
        // failure without one, or the box was checked by hand since.
        let rescue_key = format!("{}#{attempt}:rescue", node.id);
        let rescue = failed
            && work
            && s.config.rescue
            && (s.has_recorded(&rescue_key) || !(rederive || s.has_recorded(&next)));
        if failed && work && !rescue && (s.has_recorded(&next) || run_again) {
            if !rederive {
                s.record_output(i, attempt, output);
            }
            self.start_round(s, i, !rederive);
            return;
        }
        // Checked `[x]` by a person after it failed: done by hand.
        if failed && rederive && !rescue {
            self.done_by_hand(s, i);
            return;
        }
        // A feedback item's amendments land in the PLAN.md before its
        // note says done: a run cut off between the two finds them there
        // on its resume (and adopts them); cut off before, it makes them.
        let amends = node.kind == NodeKind::Feedback && !already_done;
        if amends && s.config.amend_first {
            self.amend(s, i, &output, rederive, served);
        }
        if !rederive {
            // A failure a route handled is still a failure, in its note as
            // in Leopold (whose box stays open); the run goes on by the route.
            let handled = !failed && is_failure(outcome.as_deref());
            // One the rescue may yet save stays as it is until that is
            // decided: a resume meanwhile asks the rescue, not a new round.
            if !rescue {
                s.set_status(
                    i,
                    if failed || handled {
                        Status::Failed
                    } else {
                        Status::Done
                    },
                );
            }
            s.record_output(i, attempt, output.clone());
        } else if !output.is_empty() {
            // Marked done before the crash that cut off its output's note:
            // written again where it is gone.
            s.replay_output(i, attempt, output.clone());
        }
        if failed {
            let mut reason = format!("ended {}", outcome.as_deref().unwrap_or(""));
            if let Some(why) = &failure_why {
                reason.push_str(&format!(" ({why})"));
            }
            let own = attempt - self.round_start[i] + 1;
            if self.rescued == Some((i, attempt)) {
                reason.push_str(&format!(
                    " on attempt {own}, its last, under the new approach a rescue decided"
                ));
            } else if own == tried && tried > 1 {
                reason.push_str(&format!(" on attempt {tried} of {MAX_ATTEMPTS}"));
            } else if own != tried && tried > 0 {
                reason.push_str(&format!(
                    " on attempt {own}, the run's failure {tried} in a row"
                ));
            }
            if rescue {
                let why = failure_why.unwrap_or_else(|| {
                    format!("it ended {}", outcome.as_deref().unwrap_or_default())
                });
                // A reply ends with its status and why; a command's output
                // with what went wrong.
                let kept = if command { 600 } else { 1400 };
                let evidence = format!("{reason}\n\n{}", tail(&output, kept));
                self.rescuable.push((i, evidence, tried));
                self.last_failure[i] = Some(why);
            }
            self.failures.push((i, reason));
        }
        if amends && !s.config.amend_first {
            self.amend(s, i, &output, rederive, false);
        }
    }

    /// Item `i`, which failed, was checked `[x]` by a person since: this
    /// run was started again, and has its rescue back.
    fn done_by_hand(&mut self, s: &mut Shared, i: usize) {
        self.failures_in_a_row = 0;
        self.rescue_spent = false;
        self.outcomes[i] = None;
        s.trace_hop(
            true,
            i,
            self.attempts[i],
            "done by hand: checked after it failed".into(),
            DecidedBy::Resume,
            None,
        );
    }

    /// Whether this run was started again after item `i` failed and
    /// stopped it, as its answer `served` from the journal tells: its note
    /// says `failed`; in a replay, the journal goes on past this failure
    /// (its new round's item may not have been asked yet).
    fn run_again(&self, s: &mut Shared, i: usize, served: bool) -> bool {
        match s.config.replay_only {
            false => self.failed_at_start[i] && served,
            true => served && s.has_unread(),
        }
    }

    /// The rescues of the items out of attempts (Leopold's `rescueLead`):
    /// one the journal holds is served; else the run's one rescue is asked
    /// for the one item a failure stops the run on, while a step is left
    /// for the attempt it would buy; every other item gets none, journaled
    /// so. Whether any is outstanding.
    fn decide_rescues(&mut self, s: &mut Shared) -> bool {
        let rescuable = std::mem::take(&mut self.rescuable);
        let alone = rescuable.len() == 1 && self.failures.len() == 1;
        let why_not = if self.rescue_spent {
            "the run's one rescue is spent"
        } else if !alone {
            "more than one item failed at once"
        } else {
            "no step is left for another attempt"
        };
        let can_ask = !self.rescue_spent && alone && s.steps < s.config.max_steps;
        for (i, evidence, failures) in rescuable {
            let node = &s.plan.nodes[i];
            let attempt = self.attempts[i];
            let id = format!("{}#{attempt}:rescue", node.id);
            if can_ask || s.has_recorded(&id) || s.config.replay_only {
                let request = Request {
                    id,
                    node: node.id.clone(),
                    visit: attempt,
                    body: RequestBody::Replan {
                        messages: prompt::rescue_messages(
                            &s.config.query,
                            node,
                            failures,
                            &evidence,
                        ),
                        role: node.role.clone(),
                    },
                };
                self.rescue_spent = true;
                self.rescuing.insert(i);
                s.ask(request);
                continue;
            }
            let text = none_asked(s, &id, why_not);
            self.decide_rescue(s, i, &text, false);
        }
        !self.rescuing.is_empty()
    }

    /// A rescue the runner could not ask (no model): none, journaled so.
    pub fn on_rescue_refused(&mut self, s: &mut Shared, request: Request, reason: &str) {
        let text = none_asked(s, &request.id, &format!("refused: {reason}"));
        self.on_rescue(s, request, text, false);
    }

    /// A rescue's reply (`served`: from the journal); the run goes on once
    /// every rescue asked is decided.
    pub fn on_rescue(&mut self, s: &mut Shared, request: Request, text: String, served: bool) {
        let Some(i) = s
            .node_index(&request.node)
            .filter(|i| self.rescuing.remove(i))
        else {
            return;
        };
        self.decide_rescue(s, i, &text, served);
        if self.rescuing.is_empty() {
            self.advance(s);
        }
    }

    /// Item `i`'s rescue, decided by `text`. An approach gives it one last
    /// attempt under it. None stops the run on it as the failure would
    /// have; unless the box was checked by hand since, or this run was
    /// started again after that stop: then the item gets a new round, and
    /// the run its rescue back (a new Leopold run's).
    fn decide_rescue(&mut self, s: &mut Shared, i: usize, text: &str, served: bool) {
        let attempt = self.attempts[i];
        let command = s.plan.nodes[i].kind == NodeKind::Tool;
        match prompt::parse_rescue(text) {
            Some(rescue) => {
                let what = match command {
                    // Leopold's `runToolNode` takes no lead either.
                    true => format!(
                        "rescued: one last attempt (its command runs as it is; the new approach, {}, reaches only a worker)",
                        rescue.approach
                    ),
                    false => format!("rescued: one last attempt, a new approach: {}", rescue.approach),
                };
                s.trace_answered(
                    i,
                    attempt,
                    what,
                    DecidedBy::Schedule,
                    Some(format!(
                        "How it differs: {}\nWhy: {}",
                        rescue.different, rescue.why
                    )),
                );
                self.failures.retain(|&(f, _)| f != i);
                self.rescue_lead[i] = (!command).then(|| rescue.lead());
                self.state[i] = State::Pending;
                self.attempts[i] = attempt + 1;
                self.rescued = Some((i, attempt + 1));
            }
            None => {
                let why = prompt::rescue_none(text)
                    .unwrap_or_else(|| "the reply names no approach and how it differs".into());
                s.trace_answered(
                    i,
                    attempt,
                    format!("not rescued: no different approach ({why})"),
                    DecidedBy::Stop,
                    None,
                );
                let next = format!("{}#{}:", s.plan.nodes[i].id, attempt + 1);
                let asked_next = ["work", "command"]
                    .iter()
                    .any(|key| s.has_recorded(&format!("{next}{key}")));
                let checked_since = s.statuses[i] == Status::Done;
                if !asked_next && checked_since {
                    self.failures.retain(|&(f, _)| f != i);
                    self.done_by_hand(s, i);
                } else if asked_next || self.run_again(s, i, served) {
                    self.failures.retain(|&(f, _)| f != i);
                    self.start_round(s, i, true);
                }
            }
        }
    }

    /// Item `i`'s current attempt in its round, as told to its worker:
    /// `attempt 2 of 3`, or past three (another item's success between
    /// its failures gave it more) `attempt 5`.
    fn attempt_of(&self, i: usize) -> String {
        self.attempt_label(i, self.attempts[i])
    }

    /// The attempt item `i` is asked next, as told to its worker.
    fn next_attempt_of(&self, i: usize) -> String {
        self.attempt_label(i, self.attempts[i] + 1)
    }

    fn attempt_label(&self, i: usize, attempt: u32) -> String {
        match attempt - self.round_start[i] + 1 {
            n if n <= MAX_ATTEMPTS => format!("attempt {n} of {MAX_ATTEMPTS}"),
            n => format!("attempt {n}"),
        }
    }

    /// Ask a worker's failed item again: `why` the last attempt was not
    /// done, told to the next; `what` traced.
    fn again(
        &mut self,
        s: &mut Shared,
        i: usize,
        output: &str,
        rederive: bool,
        why: String,
        what: String,
    ) {
        let attempt = self.attempts[i];
        self.state[i] = State::Pending;
        self.attempts[i] = attempt + 1;
        if !rederive {
            s.record_output(i, attempt, output.to_string());
            s.trace_answered(i, attempt, what, DecidedBy::Schedule, None);
        }
        self.last_failure[i] = Some(why);
    }

    /// A new round of attempts for item `i`: the run was started again
    /// after it failed and stopped it, and has its rescue back (a new
    /// Leopold run's).
    fn start_round(&mut self, s: &mut Shared, i: usize, traced: bool) {
        let attempt = self.attempts[i];
        self.round_start[i] = attempt + 1;
        self.failures_in_a_row = 0;
        self.rescue_spent = false;
        self.state[i] = State::Pending;
        self.attempts[i] = attempt + 1;
        self.last_failure[i] = None;
        if traced {
            let what = "started again: the run was run again after it failed".into();
            s.trace_answered(i, attempt, what, DecidedBy::Schedule, None);
        }
    }

    /// Fire item `i`'s routes whose condition holds. As in Leopold
    /// (`settleNode`, `dispatchable`), a route fires only to an item that can
    /// still run: one not done (in the plan or this run) whose `@needs` are
    /// on the channel. A route nobody can follow handles nothing, so the
    /// item's failure stays a failure; the trace names the route.
    /// `words_only`: only the outcome-word routes (the others were tried).
    /// Whether an `@on blocked` route was taken.
    fn take_routes(
        &mut self,
        s: &mut Shared,
        i: usize,
        outcome: Option<&str>,
        words_only: bool,
        rederive: bool,
    ) -> bool {
        let mut blocked_taken = false;
        for &e in &self.routes_out[i] {
            let edge = &s.plan.edges[e];
            let label = edge.label.clone().unwrap_or_default();
            let Some(to) = edge.to else { continue };
            let condition = Condition::parse(&label);
            if (words_only && !condition.is_status_word())
                || !condition.matches(outcome, self.channel.signals())
            {
                continue;
            }
            let target = s.plan.nodes[to].title.clone();
            // Done before this run began (a resume re-derives the items this
            // run did: their answers are recorded), or settled in it already.
            let done_before = s.statuses[to] == Status::Done && !ran_in_this_run(s, to);
            let unreachable = if done_before || self.state[to] == State::Settled {
                Some("which is already done".to_string())
            } else {
                self.missing_need(s, to)
                    .map(|k| format!("which waits for @needs {k}, not on the channel"))
            };
            if let Some(why) = unreachable {
                if !rederive {
                    s.trace_answered(
                        i,
                        self.attempts[i],
                        format!(
                            "route `{label}` not taken: item {} ({target}) {why}",
                            to + 1
                        ),
                        DecidedBy::Route,
                        None,
                    );
                }
                continue;
            }
            self.fired[i].insert(to);
            self.routed[to] = true;
            blocked_taken |= condition.is_word("blocked");
            if !rederive {
                s.trace_answered(
                    i,
                    self.attempts[i],
                    format!("took route `{label}` → item {} ({target})", to + 1),
                    DecidedBy::Route,
                    None,
                );
            }
        }
        blocked_taken
    }

    /// Apply a feedback item's proposals under the amendment bounds.
    /// `rederive`: the amendments of a resumed run's feedback item are
    /// already in the PLAN.md; only what they spent of the budget counts.
    /// `served`: its answer came from the journal, of a run cut off after
    /// its amendments were written and before its note said done: the
    /// PLAN.md that ends with the items they add has them already.
    fn amend(&mut self, s: &mut Shared, i: usize, output: &str, rederive: bool, served: bool) {
        let Some(block) = amend::extract_block(output) else {
            return;
        };
        let Some(text) = self.plan_text.clone() else {
            s.trace_answered(
                i,
                1,
                "amendments proposed, but this run has no PLAN.md text to amend".into(),
                DecidedBy::Stop,
                Some(block),
            );
            return;
        };
        let proposals = amend::parse_block(&block);
        let outcome = amend::apply(&text, &proposals, self.amendments_spent);
        self.amendments_spent = outcome.spent;
        if rederive {
            return;
        }
        // Its items each an item of the PLAN.md, in their order, after
        // this one (a person may have added their own since): a run cut
        // off after it wrote them. A line that reads as no item (in a
        // comment, a fence) is none of them.
        let written = |text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            let mut items = s.plan.nodes[i + 1..]
                .iter()
                .filter_map(|n| n.pos.as_ref())
                .filter_map(|pos| lines.get((pos.line as usize).checked_sub(1)?))
                .map(|line| line.trim_end());
            outcome
                .accepted
                .iter()
                .all(|a| items.any(|line| line == a.line))
        };
        if served && !outcome.accepted.is_empty() && written(&text) {
            s.trace_answered(
                i,
                1,
                format!(
                    "amendments already in the PLAN.md (written before the run was cut off): {} item(s)",
                    outcome.accepted.len()
                ),
                DecidedBy::Resume,
                None,
            );
            return;
        }
        for refusal in &outcome.refused {
            s.trace_answered(
                i,
                1,
                format!(
                    "amendment refused ({}): {}",
                    refusal.bound.as_str(),
                    refusal.reason
                ),
                DecidedBy::Stop,
                Some(refusal.proposal.clone()),
            );
        }
        if outcome.accepted.is_empty() {
            return;
        }
        let (new_plan, _) = planmd::parse("PLAN.md", &outcome.plan_text);
        let first_new = s.plan.nodes.len();
        let first_edge = s.plan.edges.len();
        for accepted in &outcome.accepted {
            let idx = accepted.index as usize - 1;
            if idx < first_new || idx >= new_plan.nodes.len() {
                continue;
            }
            let mut node = new_plan.nodes[idx].clone();
            node.status = Status::Pending;
            s.add_node(node);
            s.trace_answered(
                i,
                1,
                format!("amendment accepted: item {} appended", accepted.index),
                DecidedBy::Schedule,
                Some(format!("Reversal: delete the line `{}`", accepted.line)),
            );
        }
        for e in new_plan
            .edges
            .iter()
            .filter(|e| e.from >= first_new || e.to.is_some_and(|t| t >= first_new))
        {
            if e.from < s.plan.nodes.len() && e.to.is_none_or(|t| t < s.plan.nodes.len()) {
                s.add_edge(e.clone());
            }
        }
        let added = s.plan.nodes.len() - first_new;
        self.state
            .extend(std::iter::repeat_n(State::Pending, added));
        self.deps.extend(std::iter::repeat_n(Vec::new(), added));
        self.routes_out
            .extend(std::iter::repeat_n(Vec::new(), added));
        self.routes_in
            .extend(std::iter::repeat_n(Vec::new(), added));
        self.routed.extend(std::iter::repeat_n(false, added));
        self.fired
            .extend(std::iter::repeat_n(BTreeSet::new(), added));
        self.outcomes.extend(std::iter::repeat_n(None, added));
        self.attempts.extend(std::iter::repeat_n(1, added));
        self.round_start.extend(std::iter::repeat_n(1, added));
        self.failed_at_start
            .extend(std::iter::repeat_n(false, added));
        self.last_failure.extend(std::iter::repeat_n(None, added));
        self.rescue_lead.extend(std::iter::repeat_n(None, added));
        self.checked.extend(std::iter::repeat_n(false, added));
        self.index_edges(s, first_edge);
        self.plan_text = Some(outcome.plan_text.clone());
        s.emit(Effect::Amend {
            text: outcome.plan_text,
        });
    }

    fn finish(&mut self, s: &mut Shared) {
        // A run that took no route and still left an item waiting for a
        // signal nobody put on the channel is stuck, not complete (Leopold
        // stops it as a deadlock); one that steered left it by choice.
        let steered = self.fired.iter().any(|f| !f.is_empty());
        let stranded = (!steered)
            .then(|| {
                self.state.iter().enumerate().find_map(|(i, st)| match st {
                    State::Stranded(reason) => Some((i, format!("never ran: {reason}"))),
                    _ => None,
                })
            })
            .flatten();
        match self.failures.first().cloned().or(stranded) {
            Some((i, reason)) => {
                let node = s.node_id(i);
                s.finish(FinishReason::NodeFailed { node, reason });
            }
            None => s.finish(FinishReason::Completed),
        }
    }
}

enum Readiness {
    Wait,
    Ready,
    Bypass(usize),
    /// Not to run, and why; `true`: stranded ([`State::Stranded`]).
    Skip(String, bool),
}

fn skipped(reason: String, stranded: bool) -> State {
    match stranded {
        true => State::Stranded(reason),
        false => State::Skipped(reason),
    }
}

/// The routes of the items checked before the run that hold on the channel
/// as it stands. Leopold latches the routes an item takes as it ends, but
/// leaves an item checked before the run out of its latch (`latchOf`), so
/// `routeDecision` tests that item's routes again every round: one fires
/// once a later item puts its signal on the channel, and holds while the
/// signal does.
#[derive(Default)]
struct LiveRoutes {
    /// Targets of such a route: they go first, waiting for no `(after:)`.
    routed: BTreeSet<usize>,
    /// Items with such a route: their other successors wait meanwhile.
    steered: BTreeSet<usize>,
}

/// Whether the journal holds item `i`'s answer: it ran in this run (or the
/// run this one resumes), whatever its checkbox says now.
fn ran_in_this_run(s: &Shared, i: usize) -> bool {
    let id = &s.plan.nodes[i].id;
    ["work", "command", "human"]
        .iter()
        .any(|key| s.has_recorded(&format!("{id}#1:{key}")))
}

/// The signals an item that ended `ok` puts on the channel without
/// reporting them: each key it declared with exactly one value (`@emit
/// migrated=true` means what it reads like), as Leopold's `signalsFor`. A key
/// declared with two values is the worker's to decide.
fn declared_defaults(node: &crate::Node, reported: &[(String, String)]) -> Vec<(String, String)> {
    let Some(item) = planmd::item(node) else {
        return Vec::new();
    };
    let emits = &item.emits;
    emits
        .iter()
        .enumerate()
        .filter(|&(i, (key, value))| {
            let first = !emits[..i].iter().any(|(k, _)| k == key);
            let one_value = emits.iter().all(|(k, v)| k != key || v == value);
            first && one_value && !reported.iter().any(|(k, _)| k == key)
        })
        .map(|(_, pair)| pair.clone())
        .collect()
}

/// No rescue for request `id`, and `why`, journaled as its reply (a run
/// that reaches it again reads it there): the reply's text.
fn none_asked(s: &mut Shared, id: &str, why: &str) -> String {
    let text = prompt::rescue_none_text(why);
    s.emit(Effect::Record(super::JournalEntry {
        key: id.to_string(),
        answer: Answer::Revision { text: text.clone() },
        made_from: None,
    }));
    text
}

/// The last `max` characters of `text`.
fn tail(text: &str, max: usize) -> &str {
    let skip = text.chars().count().saturating_sub(max);
    text.char_indices()
        .nth(skip)
        .map_or("", |(at, _)| &text[at..])
}

fn is_failure(outcome: Option<&str>) -> bool {
    matches!(outcome, Some("fail") | Some("blocked"))
}

/// What a worker is told beyond the step: the definition of done, the
/// signals it may report, and how to report its status.
fn work_extra(s: &Shared, i: usize) -> String {
    let node = &s.plan.nodes[i];
    let mut extra = String::new();
    if let Some(item) = planmd::item(node) {
        if !item.scenarios.is_empty() {
            extra.push_str("Done when every scenario holds:\n");
            for sc in &item.scenarios {
                extra.push_str(&format!("- {sc}\n"));
            }
            extra.push('\n');
        }
        if !item.emits.is_empty() {
            let options: Vec<String> = item.emits.iter().map(|(k, v)| format!("{k}={v}")).collect();
            extra.push_str(&format!(
                "Signals you may report (and only these): {}\n\n",
                options.join(", ")
            ));
        }
    }
    if node.kind == NodeKind::Human {
        extra.push_str(
            "No person is available to decide this item. Take the role the decision needs, decide it, \
             and state the decision, the reasons, and a line `Reversal: <how to undo it>`.\n\n",
        );
    }
    if node.kind == NodeKind::Feedback {
        extra.push_str(&format!(
            "You may propose at most {} follow-up items in a fenced `{}` block, one `add: <item text>` per line. \
             You never change the plan yourself.\n\n",
            amend::MAX_ADDED_PER_RUN,
            amend::FENCE
        ));
    }
    extra.push_str(STATUS_BLOCK_HELP);
    extra
}

/// How a worker's reply ends its item, as in Leopold: `done` is `ok`,
/// `blocked` is `blocked` (a read-only item's is `fail`), and anything else
/// (another word, `needs-decision`, no status at all) is not done: `fail`,
/// with why. A reply with no status reports no signals. A bare `none`, which
/// the prompt offers for "no signals", is none unless the item declares it.
fn work_outcome(
    node: &crate::Node,
    output: &str,
) -> (&'static str, Vec<(String, String)>, Option<String>) {
    let Some(status) = planmd::status::parse_status(output) else {
        return (
            "fail",
            Vec::new(),
            Some("the reply has no STATUS line".into()),
        );
    };
    // Leopold's read-only items (`@gate`, `@verify`, `@feedback`) are done
    // only on `done`: their `blocked` is a failure.
    let review = matches!(
        node.kind,
        NodeKind::Gate | NodeKind::Verify | NodeKind::Feedback
    );
    let (outcome, why) = match status.kind {
        StatusKind::Done => ("ok", None),
        StatusKind::Blocked if !review => ("blocked", None),
        StatusKind::Blocked => ("fail", None),
        StatusKind::NeedsDecision => (
            "fail",
            Some("the worker asks for a decision (STATUS: needs-decision)".into()),
        ),
        // `failed`, as the prompt offers, says why itself.
        StatusKind::Working if status.word.to_lowercase().starts_with("fail") => ("fail", None),
        StatusKind::Working => (
            "fail",
            Some(format!(
                "STATUS `{}` is not done, blocked or needs-decision",
                status.word
            )),
        ),
    };
    let declared = planmd::channel::declared_keys(node);
    let mut signals = status.signals;
    signals.retain(|(k, v)| !(k == "none" && v == "true" && !declared.contains(k)));
    (outcome, signals, why)
}
