//! A plan run as the app shows it, reduced from the worker's messages.
//!
//! Pure (tested natively): [`RunView::apply`] folds one [`FromWorker`] into
//! the view, [`RunView::sent`] notes what the app asked for, and
//! [`RunView::overlay`] says what the canvas draws for it. The browser side
//! (`run_client`) only posts messages and calls these.

use crate::doc::VaultDoc;
use planvault_core::engine::FinishReason;
use planvault_core::Status;
use planvault_protocol::{
    AskKind, ErrorCode, FromWorker, PauseReason, PersonReply, ReplyKind, RunError, ToWorker,
};
use std::collections::BTreeMap;

/// Whether the worker can take messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WorkerState {
    #[default]
    Starting,
    Ready,
    /// It could not start, or it speaks another protocol version.
    Broken(String),
}

/// Where the run is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Phase {
    #[default]
    Idle,
    /// Start was sent; the worker has not said `Started` yet.
    Starting,
    Running,
    /// Pause was asked for; the worker pauses before its next request.
    Pausing,
    Paused(PauseReason),
    /// A question is open ([`RunView::ask`]).
    AwaitingPerson,
    Finished {
        reason: FinishReason,
        answer: Option<String>,
        error: Option<RunError>,
    },
}

impl Phase {
    /// The run is under way (a worker is working on it, or waiting).
    pub fn live(&self) -> bool {
        matches!(
            self,
            Phase::Starting
                | Phase::Running
                | Phase::Pausing
                | Phase::Paused(_)
                | Phase::AwaitingPerson
        )
    }

    /// Stable name for the UI and the tests.
    pub fn code(&self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Starting => "starting",
            Phase::Running => "running",
            Phase::Pausing => "pausing",
            Phase::Paused(_) => "paused",
            Phase::AwaitingPerson => "awaiting-person",
            Phase::Finished { .. } => "finished",
        }
    }

    /// One line for the run panel.
    pub fn describe(&self) -> String {
        match self {
            Phase::Idle => "Not running".into(),
            Phase::Starting => "Starting…".into(),
            Phase::Running => "Running".into(),
            Phase::Pausing => "Pausing after the current request…".into(),
            Phase::Paused(reason) => match reason {
                PauseReason::Requested => "Paused".into(),
                PauseReason::Step { node } => format!("Paused after one step ({node})"),
                PauseReason::Breakpoint { node } => format!("Paused at the breakpoint on {node}"),
                PauseReason::RunTo { node } => format!("Paused: reached {node}"),
            },
            Phase::AwaitingPerson => "Waiting for your answer".into(),
            Phase::Finished { reason, .. } => match reason {
                FinishReason::Completed => "Finished: completed".into(),
                other => capitalized(&finish_line(other)),
            },
        }
    }

    /// After a run that can be taken up again: what each button will do.
    pub fn next_step(&self) -> Option<&'static str> {
        match self {
            Phase::Finished {
                reason: FinishReason::Completed | FinishReason::NodeFailed { .. },
                ..
            } => None,
            Phase::Finished { .. } => Some(NEXT_STEP),
            _ => None,
        }
    }
}

/// What Resume run and Run do once a run stopped short of its end.
pub const NEXT_STEP: &str =
    "Resume run continues from where it stopped, keeping the work already done. \
     Run starts over: every note back to pending, the trace and outputs cleared.";

/// How a run ended, in the app's words: core's line without the terminal's
/// "(run again to resume)", which in the app would point at the wrong
/// button ([`NEXT_STEP`] says which does what).
pub fn finish_line(reason: &FinishReason) -> String {
    match reason {
        FinishReason::Stopped { reason } => format!("stopped: {reason}"),
        FinishReason::Interrupted { node, reason } => format!("interrupted at {node}: {reason}"),
        other => other.describe(),
    }
}

/// The status line once a run ended.
pub fn finish_message(reason: &FinishReason) -> String {
    match reason {
        FinishReason::Completed | FinishReason::NodeFailed { .. } => {
            format!("Run {}", finish_line(reason))
        }
        _ => format!(
            "Run {}. Resume run continues it; Run starts over.",
            finish_line(reason)
        ),
    }
}

/// `text` with its first letter in upper case (for a sentence on screen).
/// The sentences are planvault's own (`finish_line`), each begins with an
/// English word: ASCII's upper case spares the app std's Unicode table.
pub fn capitalized(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text
}

/// An open question from the worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub request: String,
    pub node: String,
    pub visit: u32,
    pub ask: AskKind,
}

/// The last edge the run moved along; `seq` counts hops so the canvas
/// animates each one once, even the same edge twice in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    pub from: String,
    pub to: String,
    pub label: Option<String>,
    pub seq: u32,
}

/// One kept output.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Output {
    pub node: String,
    pub visit: u32,
    pub text: String,
}

/// One tool a node ran, and why it failed (`None`: it worked).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolRun {
    pub node: String,
    pub name: String,
    pub error: Option<String>,
}

/// One model reply as it streams in: whose, for what, and its text so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub node: String,
    pub kind: ReplyKind,
    /// 1 for a node's work; a re-asked judgment counts up.
    pub attempt: u32,
    pub text: String,
}

impl Live {
    /// `review: work`, `review: judgment, attempt 2`, `review: a new
    /// approach` (a rescue).
    pub fn label(&self) -> String {
        match (self.kind, self.attempt) {
            (ReplyKind::Work, _) => format!("{}: work", self.node),
            (ReplyKind::Judgment, 1) => format!("{}: judgment", self.node),
            (ReplyKind::Judgment, n) => format!("{}: judgment, attempt {n}", self.node),
            (ReplyKind::Revision, _) => format!("{}: a new approach", self.node),
        }
    }
}

/// `step · failed: the YES/NO judgment could not…`: a card's status line
/// when the run failed at it, cut to what a card holds.
pub fn failure_line(kind: &str, reason: &str) -> String {
    const MAX: usize = 44;
    let line = format!("{kind} · failed: {reason}");
    if line.chars().count() <= MAX {
        return line;
    }
    let mut cut: String = line.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}

/// A call failed and will be tried again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub node: String,
    pub error: RunError,
    pub wait_ms: u32,
}

/// Everything the run panel and the canvas show about a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunView {
    pub worker: WorkerState,
    pub phase: Phase,
    pub resumed: bool,
    /// The node being worked on (or where the run stopped).
    pub active: Option<String>,
    pub visits: BTreeMap<String, u32>,
    /// Statuses the worker wrote during this run.
    pub statuses: BTreeMap<String, Status>,
    pub hop: Option<Hop>,
    /// `trace.md` entries as appended, in order.
    pub trace: Vec<String>,
    pub outputs: Vec<Output>,
    /// The reply streaming in.
    pub live: Option<Live>,
    /// The earlier, unreadable replies of the judgment being asked again
    /// (each attempt on its own, never run together), kept when the node
    /// fails.
    pub attempts: Vec<Live>,
    /// The node the run failed at, and why.
    pub failed: Option<(String, String)>,
    pub retry: Option<Retry>,
    /// The last failure (also when the run goes on, e.g. a refused message).
    pub error: Option<RunError>,
    pub ask: Option<Ask>,
    /// Tools that ran, in order.
    pub tools: Vec<ToolRun>,
    /// How many retry notices this run had (for the panel and the tests).
    pub retries: u32,
}

impl RunView {
    /// Folds one message from the worker into the view.
    pub fn apply(&mut self, message: FromWorker) {
        match message {
            FromWorker::Ready { .. } => self.worker = WorkerState::Ready,
            FromWorker::Started {
                resumed, visits, ..
            } => {
                self.phase = Phase::Running;
                self.resumed = resumed;
                self.visits = visits;
                self.error = None;
            }
            FromWorker::Status { node, status } => {
                self.statuses.insert(node, status);
            }
            FromWorker::Visit { node, visit } => {
                self.visits.insert(node.clone(), visit);
                self.active = Some(node);
                self.live = None;
                self.retry = None;
            }
            FromWorker::Hop { from, to, label } => {
                let seq = self.hop.as_ref().map_or(1, |h| h.seq + 1);
                self.active = Some(to.clone());
                self.hop = Some(Hop {
                    from,
                    to,
                    label,
                    seq,
                });
            }
            FromWorker::ReplyStarts {
                node,
                kind,
                attempt,
            } => {
                let earlier = self.live.take().filter(|l| !l.text.is_empty());
                if kind == ReplyKind::Judgment && attempt > 1 {
                    // A re-ask: the reply that could not be read stays, apart.
                    self.attempts.extend(earlier.filter(|l| l.node == node));
                } else {
                    self.attempts.clear();
                }
                self.live = Some(Live {
                    node,
                    kind,
                    attempt,
                    text: String::new(),
                });
            }
            FromWorker::Delta { node, text } => match &mut self.live {
                Some(live) if live.node == node => live.text.push_str(&text),
                _ => {
                    self.live = Some(Live {
                        node,
                        kind: ReplyKind::Work,
                        attempt: 1,
                        text,
                    })
                }
            },
            FromWorker::Output { node, visit, text } => {
                if self.live.as_ref().is_some_and(|l| l.node == node) {
                    self.live = None;
                }
                self.retry = None;
                self.outputs.push(Output { node, visit, text });
            }
            FromWorker::Trace { markdown } => self.trace.push(markdown),
            FromWorker::Tool { node, name, error } => {
                self.tools.push(ToolRun { node, name, error })
            }
            // The Settings' server test: the run client keeps it.
            FromWorker::ToolList { .. } => {}
            FromWorker::Ask {
                request,
                node,
                visit,
                ask,
            } => {
                self.active = Some(node.clone());
                self.ask = Some(Ask {
                    request,
                    node,
                    visit,
                    ask,
                });
                self.phase = Phase::AwaitingPerson;
            }
            FromWorker::Retrying {
                node,
                error,
                wait_ms,
            } => {
                self.retries += 1;
                // A retry restarts the reply: what streamed so far is void.
                if self.live.as_ref().is_some_and(|l| l.node == node) {
                    self.live = None;
                }
                self.retry = Some(Retry {
                    node,
                    error,
                    wait_ms,
                });
            }
            FromWorker::Paused { reason } => {
                // A breakpoint pauses and asks at once: the question stays open.
                if self.ask.is_none() {
                    self.phase = Phase::Paused(reason);
                }
            }
            FromWorker::Resumed => {
                if self.ask.is_none() {
                    self.phase = Phase::Running;
                }
            }
            FromWorker::Finished {
                reason,
                answer,
                error,
            } => {
                self.ask = None;
                // The last unreadable judgment of a failed node stays beside
                // the earlier ones; any other cut-off reply is void.
                let last = self.live.take().filter(|l| {
                    !l.text.is_empty()
                        && l.kind == ReplyKind::Judgment
                        && matches!(&reason, FinishReason::NodeFailed { node, .. } if *node == l.node)
                });
                self.attempts.extend(last);
                self.retry = None;
                if let Some(e) = &error {
                    self.error = Some(e.clone());
                }
                // A failed node's output is no answer.
                let answer = match &reason {
                    FinishReason::NodeFailed { node, reason } => {
                        self.failed = Some((node.clone(), reason.clone()));
                        self.active = Some(node.clone());
                        None
                    }
                    _ => answer,
                };
                self.phase = Phase::Finished {
                    reason,
                    answer,
                    error,
                };
            }
            FromWorker::Failed { error } => {
                if self.phase == Phase::Starting {
                    self.phase = Phase::Idle;
                }
                if error.code == ErrorCode::Protocol {
                    self.worker = WorkerState::Broken(error.message.clone());
                }
                self.error = Some(error);
            }
        }
    }

    /// Notes what the app just sent.
    pub fn sent(&mut self, message: &ToWorker) {
        match message {
            ToWorker::Start(_) => {
                let worker = std::mem::take(&mut self.worker);
                *self = RunView {
                    worker,
                    phase: Phase::Starting,
                    ..RunView::default()
                };
            }
            ToWorker::Pause => {
                if matches!(self.phase, Phase::Running | Phase::Starting) {
                    self.phase = Phase::Pausing;
                }
            }
            ToWorker::Reply { request, .. } => {
                if self.ask.as_ref().is_some_and(|a| a.request == *request) {
                    self.ask = None;
                    self.phase = Phase::Running;
                }
            }
            ToWorker::Resume | ToWorker::Step => {
                if matches!(self.phase, Phase::Paused(_)) {
                    self.phase = Phase::Running;
                }
            }
            ToWorker::Stop
            | ToWorker::SetBreakpoints { .. }
            | ToWorker::RunTo { .. }
            | ToWorker::ListTools { .. } => {}
        }
    }

    /// The reply that answers the open question, if it is `request`.
    pub fn reply(&self, reply: PersonReply) -> Option<ToWorker> {
        let ask = self.ask.as_ref()?;
        Some(ToWorker::Reply {
            request: ask.request.clone(),
            reply,
        })
    }

    /// What the canvas draws for this run on `doc`.
    pub fn overlay(&self, doc: &VaultDoc) -> Overlay {
        let plan = &doc.checked.plan;
        let mut visits = vec![0; plan.nodes.len()];
        for (id, n) in &self.visits {
            if let Some(i) = doc.node_index(id) {
                visits[i] = *n;
            }
        }
        let hop = self.hop.as_ref().and_then(|h| {
            let (from, to) = (doc.node_index(&h.from)?, doc.node_index(&h.to)?);
            let between = |e: &&planvault_core::Edge| e.from == from && e.to == Some(to);
            // The labelled edge when the label names one, else any edge between them.
            let edge = plan
                .edges
                .iter()
                .position(|e| between(&e) && e.label == h.label)
                .or_else(|| plan.edges.iter().position(|e| between(&e)))?;
            Some((edge, h.seq))
        });
        let stopped = match &self.phase {
            Phase::Finished { reason, .. } => Some(match reason {
                FinishReason::Completed => "completed".to_string(),
                other => finish_line(other),
            }),
            _ => None,
        };
        Overlay {
            active: self.active.as_deref().and_then(|id| doc.node_index(id)),
            visits,
            hop,
            stopped,
            asking: self.ask.as_ref().and_then(|a| doc.node_index(&a.node)),
            failed: self
                .failed
                .as_ref()
                .and_then(|(id, reason)| Some((doc.node_index(id)?, reason.clone()))),
        }
    }
}

/// The run as drawn on the canvas, by node and edge index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overlay {
    pub active: Option<usize>,
    /// Visit counts per node index (0: not visited).
    pub visits: Vec<u32>,
    /// The edge last taken and its hop number (a new number animates).
    pub hop: Option<(usize, u32)>,
    /// The run is over: completed, or why it stopped.
    pub stopped: Option<String>,
    /// A node waiting for a person.
    pub asking: Option<usize>,
    /// The node the run failed at, and why (drawn red with the reason).
    pub failed: Option<(usize, String)>,
}

/// What to do about a failure, when the worker gave no hint of its own.
pub fn hint(error: &RunError, origin: &str) -> String {
    if let Some(h) = &error.hint {
        return h.clone();
    }
    match error.code {
        ErrorCode::CorsOrNetwork => format!(
            "The browser could not read the endpoint's answer. Check that the server runs and that it allows \
             requests from {origin} (CORS). For Ollama start it with OLLAMA_ORIGINS={origin}; llama.cpp's server \
             and vLLM need their CORS options; some hosted providers refuse browsers altogether."
        ),
        ErrorCode::Unauthorized => "The endpoint refused the API key: check it in Run settings.".into(),
        ErrorCode::NotFound => {
            "Check the base URL (it usually ends in /v1) and that the model name exists on that server.".into()
        }
        ErrorCode::RateLimited => {
            "The endpoint kept answering 429 (too many requests). Wait a little, then resume the run.".into()
        }
        ErrorCode::ServerError => "The endpoint failed on its side. Resume the run once it is back.".into(),
        ErrorCode::Timeout => "No answer in time. Raise the timeout in Run settings or check the server.".into(),
        ErrorCode::MalformedReply => "The reply was not an OpenAI-compatible chat completion.".into(),
        ErrorCode::NoEndpoint => "Add an endpoint for this role (or a default) in Run settings.".into(),
        ErrorCode::ChangedOnDisk => "A note changed outside the run; reload and resume.".into(),
        ErrorCode::VaultIo => "The vault could not be read or written; check the folder's permission.".into(),
        ErrorCode::PlanInvalid => "Fix the errors listed under Diagnostics, then run again.".into(),
        ErrorCode::Journal => "The run's journal is unreadable; start a fresh run.".into(),
        ErrorCode::NodeFailed => "Edit the failed node's note (or the plan) and press Resume to do it again, \
             or press Run to start over."
            .into(),
        ErrorCode::Protocol => "The app and its worker come from different builds: reload the page.".into(),
        ErrorCode::BadState => "That does not apply right now.".into(),
        ErrorCode::PromptTooLarge => "A step's prompt is over the budget: shorten the note the error names \
            (or raise max_prompt_bytes under [run] in the vault's .planvault/config.toml), then press Resume."
            .into(),
        ErrorCode::VaultLocked => "Another run holds this vault (another tab, or planvault run in a terminal). \
            Wait for it to end; the error says how to break a stale lock."
            .into(),
        ErrorCode::DecisionsElsewhere => "Nothing ran.".into(),
    }
}

/// A run left unfinished in a vault, offered for resuming when it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeOffer {
    /// From `trace.md`'s `Query:` line.
    pub query: Option<String>,
}

/// Whether the vault holds an interrupted run: a journal beside notes that
/// are not all pending, and a trace that does not end the run, or ends it
/// without the receipt a run writes last (cut off just before it).
pub fn interrupted_run<'a>(
    statuses: impl IntoIterator<Item = Status>,
    journal: Option<&'a str>,
    trace: Option<&'a str>,
    receipt: Option<&'a str>,
) -> Option<ResumeOffer> {
    journal?;
    if statuses.into_iter().all(|s| s == Status::Pending) {
        return None;
    }
    let trace = trace.unwrap_or_default();
    // The last part of the trace (after the last resume marker) holds the
    // latest invocation; a terminal node there means it completed.
    let last = trace.rsplit("\n---\n").next().unwrap_or(trace);
    let receipt_whole = receipt.is_some_and(|r| r.trim_end().ends_with('}'));
    if last.contains("- decided by: terminal") && receipt_whole {
        return None;
    }
    let query = trace
        .lines()
        .find_map(|l| l.strip_prefix("Query:"))
        .map(|q| q.trim().to_string())
        .filter(|q| !q.is_empty());
    Some(ResumeOffer { query })
}

#[cfg(test)]
mod tests {
    use super::*;
    use planvault_protocol::{PersonReply, StartRun};

    /// Every end a run can come to is said in a sentence that starts with
    /// an English word, whatever the node, reason or question: so the ASCII
    /// capital `capitalized` writes is the sentence's capital.
    #[test]
    fn every_finish_line_starts_with_an_ascii_letter_it_capitalizes() {
        let node = || "école".to_string();
        let text = || "Éclair".to_string();
        let reasons = [
            FinishReason::Completed,
            FinishReason::VisitBudget {
                node: node(),
                max_visits: 3,
            },
            FinishReason::StepBudget { max_steps: 9 },
            FinishReason::NodeFailed {
                node: node(),
                reason: text(),
            },
            FinishReason::AwaitingHuman {
                node: node(),
                question: text(),
            },
            FinishReason::Interrupted {
                node: node(),
                reason: text(),
            },
            FinishReason::Stopped { reason: text() },
            FinishReason::ReplayDiverged { request: text() },
            FinishReason::PlanFailed { reason: text() },
        ];
        for reason in &reasons {
            // A new way to end fails to compile here until it is listed above.
            match reason {
                FinishReason::Completed
                | FinishReason::VisitBudget { .. }
                | FinishReason::StepBudget { .. }
                | FinishReason::NodeFailed { .. }
                | FinishReason::AwaitingHuman { .. }
                | FinishReason::Interrupted { .. }
                | FinishReason::Stopped { .. }
                | FinishReason::ReplayDiverged { .. }
                | FinishReason::PlanFailed { .. } => {}
            }
            let line = capitalized(&finish_line(reason));
            assert!(line.starts_with(|c: char| c.is_ascii_uppercase()), "{line}");
            assert_eq!(line.to_lowercase(), finish_line(reason).to_lowercase());
        }
        assert_eq!(
            capitalized("élan"),
            "élan",
            "not a sentence of ours: left as it is"
        );
        assert_eq!(capitalized(""), "");
    }

    /// The example's shape: draft → review → (approved: send | needs revision: draft).
    fn doc() -> VaultDoc {
        VaultDoc::new(crate::doc::tests::example())
    }

    fn start() -> ToWorker {
        ToWorker::Start(StartRun {
            query: "q".into(),
            mode: planvault_protocol::RunMode::Manual,
            fresh: true,
            max_steps: 50,
            autonomy: planvault_core::engine::Autonomy::Ask,
            breakpoints: vec![],
            run_to: None,
            max_prompt_bytes: None,
            retry: Default::default(),
            mcp_servers: Vec::new(),
            mcp_terminal_only: Vec::new(),
            folder: String::new(),
            parallel: false,
            parallel_at_most: None,
            take_decisions: None,
            allow_hosts: Vec::new(),
        })
    }

    fn hop(from: &str, to: &str, label: Option<&str>) -> FromWorker {
        FromWorker::Hop {
            from: from.into(),
            to: to.into(),
            label: label.map(str::to_string),
        }
    }

    #[test]
    fn a_run_to_the_end_moves_active_node_visits_hops_and_finishes() {
        let mut v = RunView::default();
        v.apply(FromWorker::Ready { version: 1 });
        assert_eq!(v.worker, WorkerState::Ready);
        v.sent(&start());
        assert_eq!(v.phase, Phase::Starting);
        assert_eq!(
            v.worker,
            WorkerState::Ready,
            "a new run keeps the worker's state"
        );
        v.apply(FromWorker::Started {
            resumed: false,
            done: 0,
            recorded: 0,
            visits: BTreeMap::new(),
        });
        assert_eq!(v.phase, Phase::Running);
        v.apply(FromWorker::Visit {
            node: "draft".into(),
            visit: 1,
        });
        v.apply(FromWorker::Status {
            node: "draft".into(),
            status: Status::Active,
        });
        v.apply(FromWorker::Delta {
            node: "draft".into(),
            text: "Subj".into(),
        });
        v.apply(FromWorker::Delta {
            node: "draft".into(),
            text: "ect".into(),
        });
        assert_eq!(
            v.live,
            Some(Live {
                node: "draft".into(),
                kind: ReplyKind::Work,
                attempt: 1,
                text: "Subject".into()
            })
        );
        v.apply(FromWorker::Output {
            node: "draft".into(),
            visit: 1,
            text: "Subject".into(),
        });
        assert_eq!(v.live, None, "the kept output replaces the live text");
        v.apply(FromWorker::Status {
            node: "draft".into(),
            status: Status::Done,
        });
        v.apply(FromWorker::Trace {
            markdown: "\n## 1. Draft (visit 1)\n".into(),
        });
        v.apply(hop("draft", "review", None));
        v.apply(FromWorker::Visit {
            node: "review".into(),
            visit: 1,
        });
        v.apply(hop("review", "draft", Some("needs revision")));
        v.apply(FromWorker::Visit {
            node: "draft".into(),
            visit: 2,
        });
        assert_eq!(v.active.as_deref(), Some("draft"));
        assert_eq!(v.visits.get("draft"), Some(&2));
        assert_eq!(v.hop.as_ref().map(|h| h.seq), Some(2));

        let o = v.overlay(&doc());
        let d = doc();
        let (draft, review) = (
            d.node_index("draft").unwrap(),
            d.node_index("review").unwrap(),
        );
        assert_eq!(o.active, Some(draft));
        assert_eq!((o.visits[draft], o.visits[review]), (2, 1));
        let (edge, seq) = o.hop.unwrap();
        assert_eq!(
            d.checked.plan.edges[edge].label.as_deref(),
            Some("needs revision")
        );
        assert_eq!(seq, 2);
        assert_eq!(o.stopped, None);

        v.apply(FromWorker::Finished {
            reason: FinishReason::Completed,
            answer: Some("Sent.".into()),
            error: None,
        });
        assert_eq!(v.phase.code(), "finished");
        assert_eq!(v.overlay(&d).stopped.as_deref(), Some("completed"));
        assert_eq!(v.statuses.get("draft"), Some(&Status::Done));
        assert_eq!(v.trace.len(), 1);
        assert_eq!(v.outputs.len(), 1);
    }

    #[test]
    fn questions_open_and_close_with_the_reply_that_names_them() {
        let mut v = RunView::default();
        v.sent(&start());
        v.apply(FromWorker::Started {
            resumed: false,
            done: 0,
            recorded: 0,
            visits: BTreeMap::new(),
        });
        v.apply(FromWorker::Paused {
            reason: PauseReason::Breakpoint {
                node: "draft".into(),
            },
        });
        v.apply(FromWorker::Ask {
            request: "draft#1:breakpoint".into(),
            node: "draft".into(),
            visit: 1,
            ask: AskKind::Breakpoint {
                title: "Draft".into(),
                output: "text".into(),
            },
        });
        assert_eq!(v.phase, Phase::AwaitingPerson);
        // A late Paused does not hide the open question.
        v.apply(FromWorker::Paused {
            reason: PauseReason::Breakpoint {
                node: "draft".into(),
            },
        });
        assert_eq!(v.phase, Phase::AwaitingPerson);
        // Another request id does not close it.
        v.sent(&ToWorker::Reply {
            request: "other".into(),
            reply: PersonReply::Continue {
                output: String::new(),
            },
        });
        assert!(v.ask.is_some());
        let reply = v
            .reply(PersonReply::Continue {
                output: "edited".into(),
            })
            .unwrap();
        assert!(
            matches!(&reply, ToWorker::Reply { request, .. } if request == "draft#1:breakpoint")
        );
        v.sent(&reply);
        assert_eq!((v.ask.clone(), v.phase.clone()), (None, Phase::Running));
        assert_eq!(v.overlay(&doc()).asking, None);
    }

    #[test]
    fn pause_step_resume_and_retry_notices() {
        let mut v = RunView::default();
        v.sent(&start());
        v.apply(FromWorker::Started {
            resumed: true,
            done: 1,
            recorded: 2,
            visits: [("draft".to_string(), 1)].into(),
        });
        assert!(v.resumed);
        assert_eq!(
            v.visits.get("draft"),
            Some(&1),
            "visits from the journal on resume"
        );
        v.sent(&ToWorker::Pause);
        assert_eq!(v.phase, Phase::Pausing);
        v.apply(FromWorker::Paused {
            reason: PauseReason::Requested,
        });
        assert_eq!(v.phase.describe(), "Paused");
        v.sent(&ToWorker::Step);
        assert_eq!(v.phase, Phase::Running);
        v.apply(FromWorker::Paused {
            reason: PauseReason::Step {
                node: "review".into(),
            },
        });
        assert_eq!(v.phase.code(), "paused");
        v.apply(FromWorker::Resumed);
        assert_eq!(v.phase, Phase::Running);
        v.apply(FromWorker::Delta {
            node: "review".into(),
            text: "half a rep".into(),
        });
        let error = RunError::new(ErrorCode::RateLimited, "429 Too Many Requests");
        v.apply(FromWorker::Retrying {
            node: "review".into(),
            error: error.clone(),
            wait_ms: 500,
        });
        assert_eq!(v.live, None, "a retry restarts the stream");
        assert_eq!(v.retries, 1);
        assert_eq!(v.retry.as_ref().map(|r| r.wait_ms), Some(500));
        v.apply(FromWorker::Output {
            node: "review".into(),
            visit: 1,
            text: "ok".into(),
        });
        assert_eq!(v.retry, None);
    }

    fn judgment(v: &mut RunView, attempt: u32, text: &str) {
        v.apply(FromWorker::ReplyStarts {
            node: "review".into(),
            kind: ReplyKind::Judgment,
            attempt,
        });
        v.apply(FromWorker::Delta {
            node: "review".into(),
            text: text.into(),
        });
    }

    #[test]
    fn each_judgment_attempt_streams_apart_and_a_failed_node_is_no_answer() {
        let mut v = RunView::default();
        v.sent(&start());
        v.apply(FromWorker::Visit {
            node: "review".into(),
            visit: 1,
        });
        v.apply(FromWorker::ReplyStarts {
            node: "review".into(),
            kind: ReplyKind::Work,
            attempt: 1,
        });
        v.apply(FromWorker::Delta {
            node: "review".into(),
            text: "Looks fine.".into(),
        });
        v.apply(FromWorker::Output {
            node: "review".into(),
            visit: 1,
            text: "Looks fine.".into(),
        });
        judgment(&mut v, 1, "NO");
        assert_eq!(v.live.as_ref().unwrap().label(), "review: judgment");
        let rescue = Live {
            node: "review".into(),
            kind: ReplyKind::Revision,
            attempt: 1,
            text: String::new(),
        };
        assert_eq!(rescue.label(), "review: a new approach");
        judgment(&mut v, 2, "NO");
        judgment(&mut v, 3, "NO");
        let live = v.live.clone().unwrap();
        assert_eq!(
            (live.label().as_str(), live.text.as_str()),
            ("review: judgment, attempt 3", "NO"),
            "never NONONO"
        );
        let earlier: Vec<(u32, &str)> = v
            .attempts
            .iter()
            .map(|l| (l.attempt, l.text.as_str()))
            .collect();
        assert_eq!(earlier, [(1, "NO"), (2, "NO")]);

        let reason = "the YES/NO judgment could not be read after 3 attempt(s)".to_string();
        let error = RunError::new(ErrorCode::NodeFailed, format!("review failed: {reason}"));
        v.apply(FromWorker::Status {
            node: "review".into(),
            status: Status::Failed,
        });
        v.apply(FromWorker::Finished {
            reason: FinishReason::NodeFailed {
                node: "review".into(),
                reason: reason.clone(),
            },
            answer: Some("Looks fine.".into()),
            error: Some(error.clone()),
        });
        let Phase::Finished { answer, .. } = &v.phase else {
            panic!("{:?}", v.phase);
        };
        assert_eq!(*answer, None, "the failed node's output is not the answer");
        assert_eq!(v.failed, Some(("review".into(), reason.clone())));
        assert_eq!(v.statuses.get("review"), Some(&Status::Failed));
        assert_eq!(v.live, None);
        assert_eq!(v.attempts.len(), 3, "the last unreadable reply is kept too");
        assert!(v.phase.describe().starts_with("Node review failed: "));
        assert!(hint(&error, "x").contains("Resume"));
        let d = doc();
        let o = v.overlay(&d);
        assert_eq!(o.failed, Some((d.node_index("review").unwrap(), reason)));
        assert_eq!(o.active, d.node_index("review"));

        // A new run starts clean.
        v.sent(&start());
        assert_eq!((v.failed.clone(), v.attempts.len()), (None, 0));
    }

    #[test]
    fn a_first_judgment_or_new_work_drops_earlier_attempts() {
        let mut v = RunView::default();
        judgment(&mut v, 1, "NO");
        judgment(&mut v, 2, "1. YES\n2. NO");
        assert_eq!(v.attempts.len(), 1);
        v.apply(FromWorker::ReplyStarts {
            node: "send".into(),
            kind: ReplyKind::Work,
            attempt: 1,
        });
        assert!(v.attempts.is_empty());
        v.apply(FromWorker::Finished {
            reason: FinishReason::Stopped {
                reason: "stop".into(),
            },
            answer: None,
            error: None,
        });
        assert!(v.attempts.is_empty(), "a cut-off work reply is not kept");
    }

    #[test]
    fn a_failure_line_fits_a_card() {
        assert_eq!(failure_line("step", "rejected"), "step · failed: rejected");
        let long = failure_line(
            "step",
            "the YES/NO judgment could not be read after 3 attempt(s)",
        );
        assert_eq!(long.chars().count(), 44);
        assert!(long.starts_with("step · failed: the YES/NO") && long.ends_with('…'));
    }

    #[test]
    fn a_stop_keeps_where_and_why() {
        let mut v = RunView::default();
        v.sent(&start());
        v.apply(FromWorker::Visit {
            node: "review".into(),
            visit: 1,
        });
        let error = RunError::new(ErrorCode::CorsOrNetwork, "Failed to fetch");
        v.apply(FromWorker::Finished {
            reason: FinishReason::Interrupted {
                node: "review".into(),
                reason: "Failed to fetch".into(),
            },
            answer: None,
            error: Some(error.clone()),
        });
        assert_eq!(v.error, Some(error.clone()));
        assert!(!v.phase.live());
        assert!(
            v.phase
                .describe()
                .starts_with("Interrupted at review: Failed to fetch"),
            "{}",
            v.phase.describe()
        );
        let o = v.overlay(&doc());
        assert_eq!(o.active, doc().node_index("review"));
        assert!(o.stopped.unwrap().contains("interrupted at review"));
        assert!(
            hint(&error, "http://127.0.0.1:8080").contains("OLLAMA_ORIGINS=http://127.0.0.1:8080")
        );
        let own = error.with_hint("the worker's own hint");
        assert_eq!(hint(&own, "x"), "the worker's own hint");
    }

    #[test]
    fn after_stop_the_panel_says_what_resume_and_run_do() {
        let stopped = FinishReason::Stopped {
            reason: "stopped by the person".into(),
        };
        let phase = Phase::Finished {
            reason: stopped.clone(),
            answer: None,
            error: None,
        };
        assert_eq!(phase.describe(), "Stopped: stopped by the person");
        assert_eq!(phase.next_step(), Some(NEXT_STEP));
        assert!(
            NEXT_STEP.contains("Resume run continues") && NEXT_STEP.contains("Run starts over")
        );
        assert_eq!(
            finish_message(&stopped),
            "Run stopped: stopped by the person. Resume run continues it; Run starts over."
        );
        let cut = FinishReason::Interrupted {
            node: "review".into(),
            reason: "Failed to fetch".into(),
        };
        assert!(!finish_line(&cut).contains("run again"));
        let done = Phase::Finished {
            reason: FinishReason::Completed,
            answer: None,
            error: None,
        };
        assert_eq!((done.next_step(), Phase::Running.next_step()), (None, None));
        assert_eq!(finish_message(&FinishReason::Completed), "Run completed");
    }

    #[test]
    fn a_refused_start_goes_back_to_idle_and_a_version_mismatch_breaks_the_worker() {
        let mut v = RunView::default();
        v.sent(&start());
        v.apply(FromWorker::Failed {
            error: RunError::new(ErrorCode::PlanInvalid, "no start node"),
        });
        assert_eq!(v.phase, Phase::Idle);
        assert_eq!(
            v.error.as_ref().map(|e| e.code),
            Some(ErrorCode::PlanInvalid)
        );
        v.apply(FromWorker::Failed {
            error: RunError::new(ErrorCode::Protocol, "message version 2"),
        });
        assert!(matches!(v.worker, WorkerState::Broken(_)));
    }

    #[test]
    fn a_hop_to_a_node_not_in_the_plan_draws_nothing() {
        let mut v = RunView::default();
        v.apply(hop("draft", "gone", None));
        assert_eq!(v.overlay(&doc()).hop, None);
    }

    #[test]
    fn an_interrupted_run_is_offered_with_its_query() {
        let trace = "# Plan trace\n\nQuery: invite the design team\n\n## 1. Draft (visit 1)\n\n- decided by: unconditional\n";
        let some = [Status::Done, Status::Pending];
        assert_eq!(
            interrupted_run(some, Some("{}\n"), Some(trace), None),
            Some(ResumeOffer {
                query: Some("invite the design team".into())
            })
        );
        assert_eq!(
            interrupted_run(some, None, Some(trace), None),
            None,
            "no journal: never run"
        );
        assert_eq!(
            interrupted_run([Status::Pending; 3], Some(""), Some(trace), None),
            None,
            "all pending"
        );
        let done = format!("{trace}\n## 2. Send (visit 1)\n\n- decided by: terminal\n");
        assert_eq!(
            interrupted_run(some, Some(""), Some(&done), Some("{\"run\": 1}\n")),
            None,
            "completed"
        );
        // Found by an audit reloading the page at every moment: the last hop
        // traced, the receipt not yet (or half) written.
        for receipt in [None, Some(""), Some("{\"run\":")] {
            assert!(
                interrupted_run(some, Some(""), Some(&done), receipt).is_some(),
                "{receipt:?}"
            );
        }
        let resumed = format!("{done}\n---\n\n*resumed by a new run*\n\n## 3. Draft (visit 2)\n");
        assert!(
            interrupted_run(some, Some(""), Some(&resumed), None).is_some(),
            "only the latest invocation counts"
        );
        assert_eq!(
            interrupted_run(some, Some(""), None, None),
            Some(ResumeOffer { query: None })
        );
    }
}
