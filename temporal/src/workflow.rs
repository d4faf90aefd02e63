//! The workflow: one planvault run. It builds [`TemporalHost`] over its own
//! context and calls the runner's `run_with`, nothing else; a person's
//! decision arrives as the `decide` update (pushed to the driver's inbox as
//! the reply to its open question), a Temporal cancel as a Stop. A run that
//! waits for a person is a workflow waiting: it holds no worker.

use crate::host::TemporalHost;
use crate::{Asking, Decision, RunState, Submission};
use planvault_core::engine::FinishReason;
use planvault_protocol::{AskKind, FromWorker, PersonReply, ToWorker};
use planvault_runner::{run_with, Humans, Inbox, Options};
use std::future::Future;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_workflow::common::error::ApplicationFailure;
use temporalio_workflow::{
    SyncWorkflowContext, WorkflowContext, WorkflowContextView, WorkflowResult, WorkflowTermination,
};

#[workflow]
pub struct PlanvaultRun {
    submission: Submission,
    state: RunState,
    /// The driver's mailbox: the `decide` update and a cancel push to it.
    inbox: Inbox,
}

impl PlanvaultRun {
    /// Keep what `planvault runs` shows of a driver's message.
    pub(crate) fn observe(&mut self, message: &FromWorker) {
        self.state.observe(message);
    }

    /// Keep journal decisions the run took (a later submission of it takes
    /// them as taken here).
    pub(crate) fn took_decisions(&mut self, heads: &[&str]) {
        self.state
            .decisions_taken
            .extend(heads.iter().map(|h| h.to_string()));
    }
}

impl RunState {
    /// Fold one of the driver's messages into the state.
    pub fn observe(&mut self, message: &FromWorker) {
        match message {
            FromWorker::Status { node, status } => {
                self.nodes.insert(node.clone(), status.as_str().to_string());
            }
            FromWorker::Ask {
                request, node, ask, ..
            } => {
                let (question, choices) = match ask {
                    AskKind::Human { question, choices } => (question.clone(), choices.clone()),
                    AskKind::Work { title, .. } => (format!("do the work of {title}"), Vec::new()),
                    AskKind::Judge { title, labels, .. } => {
                        (format!("judge the conditions of {title}"), labels.clone())
                    }
                    AskKind::Breakpoint { title, .. } => {
                        (format!("continue after {title}"), Vec::new())
                    }
                };
                self.asking = Some(Asking {
                    request: request.clone(),
                    node: node.clone(),
                    question,
                    choices,
                });
            }
            FromWorker::Finished { reason, .. } => {
                self.finished = Some(reason.clone());
                self.asking = None;
            }
            FromWorker::Failed { error } => self.failed = Some(error.message.clone()),
            _ => {}
        }
    }
}

/// How the workflow ends: a run that completed completes it; one that
/// stopped short (failed, interrupted, at a safety stop) fails it, so the
/// same run may be submitted again and resume from the vault, as `planvault
/// run` resumes when run again (Temporal reuses only a failed or cancelled
/// workflow's id, `client::submit`). Its state stays queryable
/// (`client::wait`). A run begun before this completed either way.
fn failed_or_done(ctx: &WorkflowContext<PlanvaultRun>) -> WorkflowResult<RunState> {
    let state = ctx.state(|s| s.state.clone());
    let short = match (&state.finished, &state.failed) {
        (Some(FinishReason::Completed), _) | (None, None) => None,
        (Some(reason), _) => Some(reason.describe()),
        // What `planvault runs` shows of it, with no worker to ask.
        (None, Some(why)) => Some(format!("{why} (submit it again to resume)")),
    };
    match short {
        Some(why) if ctx.patched("run-failure-fails-workflow") => Err(
            WorkflowTermination::failed_application(ApplicationFailure::non_retryable(why)),
        ),
        _ => Ok(state),
    }
}

#[workflow_methods]
impl PlanvaultRun {
    #[init]
    pub fn new(_ctx: &WorkflowContextView, submission: Submission) -> Self {
        PlanvaultRun {
            state: RunState {
                vault: submission.vault.clone(),
                ..RunState::default()
            },
            submission,
            inbox: Inbox::new(),
        }
    }

    #[run]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<RunState> {
        let (submission, inbox) = ctx.state(|s| (s.submission.clone(), s.inbox.clone()));
        let mut host = TemporalHost::new(
            ctx.clone(),
            submission.vault.clone(),
            submission.host.clone(),
            submission.activity.clone(),
        )
        .with_mcp(submission.mcp.clone())
        .with_plan_folder(&submission.start.folder);
        // The decisions the submitter took as given: a run begun before
        // this check (or by a submitter without it) replays without the
        // journal read it makes.
        if submission.decisions_taken.is_some() && ctx.patched("journal-decisions-checked") {
            host = host.with_decisions_taken(submission.decisions_taken.clone());
            let carried = submission.decisions_taken.clone().unwrap_or_default();
            ctx.state_mut(|s| s.state.decisions_taken = carried);
        }
        // One run per vault, as every host: refused before anything is read.
        // A git vault's run has its own branch (`planvault/<run>`), named
        // with the workflow id's run name: no lock file to hold.
        let lock = crate::git_vault::GitSource::parse(&submission.vault)
            .is_none()
            .then(|| crate::lock::LockIn {
                vault: submission.vault.clone(),
                run: ctx.workflow_id().to_string(),
                folder: String::new(),
            });
        if let Some(lock) = &lock {
            if let Err(why) = crate::lock::hold(ctx, lock.clone(), host.vault_options()).await {
                ctx.state_mut(|s| s.state.failed = Some(why.clone()));
                return Err(WorkflowTermination::failed_application(
                    ApplicationFailure::non_retryable(why),
                ));
            }
        }
        // A plan folder holds its own lock too, as in every host: the
        // folder run as a vault of its own meanwhile would share its trace.
        // Runs begun before this step replay without it.
        let folder_lock = lock
            .as_ref()
            .filter(|_| !submission.start.folder.is_empty() && ctx.patched("plan-folder-lock"))
            .map(|lock| crate::lock::LockIn {
                folder: submission.start.folder.clone(),
                ..lock.clone()
            });
        if let (Some(lock), Some(folder)) = (&lock, &folder_lock) {
            if let Err(why) = crate::lock::hold(ctx, folder.clone(), host.vault_options()).await {
                crate::lock::give_back(ctx, lock.clone(), host.vault_options()).await;
                ctx.state_mut(|s| s.state.failed = Some(why.clone()));
                return Err(WorkflowTermination::failed_application(
                    ApplicationFailure::non_retryable(why),
                ));
            }
        }
        let mut options = Options {
            humans: Humans::Ask,
            stop_reason: "cancelled through Temporal".into(),
            max_prompt_bytes: submission.max_prompt_bytes,
            run_id: Some(submission.run_id.clone()),
            proposal: submission.proposal,
            ..Options::default()
        };
        // A PLAN.md or generated plan: read and put in its run vault first,
        // as `planvault run` does before it runs one.
        match crate::plans::prepare(ctx, &submission).await {
            Ok(None) => {}
            Ok(Some(prepared)) => {
                options.plan = Some(prepared.plan);
                options.plan_text = prepared.plan_text;
                options.plan_source = Some(prepared.plan_source);
                if let Some((folder, name)) = prepared.plan_file {
                    host = host.with_plan_file(folder, name);
                }
            }
            Err(error) => {
                ctx.state_mut(|s| s.observe(&FromWorker::Failed { error }));
                if let Some(folder) = folder_lock {
                    crate::lock::give_back(ctx, folder, host.vault_options()).await;
                }
                if let Some(lock) = lock {
                    crate::lock::give_back(ctx, lock, host.vault_options()).await;
                }
                host.forget_clone().await;
                return failed_or_done(ctx);
            }
        }
        // PLAN.md items one at a time unless the submission asked for
        // waves; a run begun before the serial order replays in waves.
        let mut start = submission.start.clone();
        if !ctx.patched("plan-md-serial-order") {
            start.parallel = true;
        }
        // The order journaled first, as every run does now; a run begun
        // before had no such write.
        options.journal_order = ctx.patched("plan-md-order-journaled");
        // An item out of attempts is rescued once; a run begun before
        // stops there, as it did.
        options.rescue = ctx.patched("plan-md-rescue");
        // Waves count failures in a row across the run; a run begun
        // before counts each item's own, as it did.
        options.waves_in_a_row = ctx.patched("plan-md-waves-in-a-row");
        // A feedback item's amendments are written before its note says
        // done; a run begun before wrote them after, as it replays.
        options.amend_first = ctx.patched("plan-md-amend-first");
        // A judgment served to edited conditions is told in the trace; a
        // run begun before wrote no such line, as it replays.
        options.tell_edited_conditions = ctx.patched("judgment-edit-told");
        // The note a stopped run was in, renamed since, keeps its visit's
        // answers, and calls record what their note was made from; a run
        // begun before asked that visit again and recorded no such thing.
        options.adopt_renamed_active = ctx.patched("renamed-active-note-adopted");
        // A resume at its active note counts a renamed note's earlier
        // visits and steps; a run begun before counted them afresh.
        options.count_renamed_visits = ctx.patched("renamed-visits-counted");
        let run = run_with(&host, &inbox, start, options);
        let mut run = std::pin::pin!(run);
        let watch = ctx.cancelled();
        let mut watch = std::pin::pin!(watch);
        let mut cancelled = false;
        // The cancel is polled before the run, always in this order: a
        // replay sees the Stop at the same point.
        std::future::poll_fn(|cx| {
            if !cancelled && watch.as_mut().poll(cx).is_ready() {
                cancelled = true;
                inbox.push(ToWorker::Stop);
            }
            run.as_mut().poll(cx)
        })
        .await;
        crate::mcp::close(&host).await;
        if let Some(folder) = folder_lock {
            crate::lock::give_back(ctx, folder, host.vault_options()).await;
        }
        if let Some(lock) = lock {
            crate::lock::give_back(ctx, lock, host.vault_options()).await;
        }
        host.forget_clone().await;
        if cancelled {
            return Err(WorkflowTermination::cancelled());
        }
        failed_or_done(ctx)
    }

    /// What the run is doing: node statuses, the question it waits on, how
    /// it ended.
    #[query]
    pub fn status(&self, _ctx: &WorkflowContextView) -> RunState {
        self.state.clone()
    }

    /// Only the question the run waits on can be answered, once: a second
    /// decision (or one for another item) is rejected before it enters the
    /// history.
    #[update_validator(decide)]
    pub fn validate_decide(
        &self,
        _ctx: &WorkflowContextView,
        decision: &Decision,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        match &self.state.asking {
            Some(asking) if asking.node == decision.item => Ok(()),
            Some(asking) => {
                Err(format!("the run waits on {}, not on {}", asking.node, decision.item).into())
            }
            None => Err(format!("the run waits on no decision (not on {})", decision.item).into()),
        }
    }

    #[update]
    pub fn decide(&mut self, _ctx: &mut SyncWorkflowContext<Self>, decision: Decision) -> String {
        let Some(asking) = self.state.asking.take() else {
            return format!("the run waits on no decision (not on {})", decision.item);
        };
        let verdict = if decision.approved {
            "approved"
        } else {
            "rejected"
        };
        self.inbox.push(ToWorker::Reply {
            request: asking.request,
            reply: PersonReply::Human {
                approved: decision.approved,
                note: decision.note,
                choice: decision.choice,
            },
        });
        format!("{} {verdict}", asking.node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_says_whom_a_run_waits_for_until_it_ends() {
        let mut state = RunState::default();
        state.observe(&FromWorker::Status {
            node: "write".into(),
            status: planvault_core::Status::Done,
        });
        state.observe(&FromWorker::Ask {
            request: "r1".into(),
            node: "approve".into(),
            visit: 1,
            ask: AskKind::Human {
                question: "Is it good?".into(),
                choices: vec!["publish".into(), "rewrite".into()],
            },
        });
        assert_eq!(state.nodes["write"], "done");
        let asking = state.asking.clone().unwrap();
        assert_eq!(
            (asking.request.as_str(), asking.node.as_str()),
            ("r1", "approve")
        );
        assert_eq!(asking.choices, ["publish", "rewrite"]);
        state.observe(&FromWorker::Finished {
            reason: FinishReason::Completed,
            answer: None,
            error: None,
        });
        assert_eq!(state.asking, None);
        assert_eq!(state.finished, Some(FinishReason::Completed));
    }
}
