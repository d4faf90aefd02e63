//! What the CLI's Temporal commands call: a worker, a submission, the list
//! of runs, a decision, a cancel. Each opens its own tokio runtime (the CLI
//! is otherwise synchronous).

use crate::activities::VaultActivities;
use crate::workflow::PlanvaultRun;
use crate::{Decision, RunState, Submission};
use futures_util::StreamExt;
use std::time::Duration;
use temporalio_client::errors::{
    WorkflowGetResultError, WorkflowInteractionError, WorkflowStartError,
};
use temporalio_client::{
    Client, ClientOptions, Connection, ConnectionOptions, Url, WorkflowCancelOptions,
    WorkflowDescribeOptions, WorkflowExecuteUpdateOptions, WorkflowExecutionInfo,
    WorkflowExecutionStatus, WorkflowGetResultOptions, WorkflowHandle, WorkflowIdConflictPolicy,
    WorkflowIdReusePolicy, WorkflowListOptions, WorkflowQueryOptions, WorkflowStartOptions,
};
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

/// A failure talking to Temporal, as one line for the person.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TemporalError(pub String);

fn fail(context: &str, e: impl std::fmt::Display) -> TemporalError {
    TemporalError(format!("{context}: {e}"))
}

/// Where the cluster is.
#[derive(Debug, Clone)]
pub struct Target {
    /// `host:port`, or a URL.
    pub address: String,
    pub namespace: String,
    pub task_queue: String,
}

fn runtime() -> Result<tokio::runtime::Runtime, TemporalError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| fail("cannot start an async runtime", e))
}

async fn connect(target: &Target) -> Result<Client, TemporalError> {
    let address = if target.address.contains("://") {
        target.address.clone()
    } else {
        format!("http://{}", target.address)
    };
    let url = Url::parse(&address).map_err(|e| fail(&format!("--temporal {address}"), e))?;
    let options = ConnectionOptions::new(url)
        .identity(format!(
            "planvault@{}:{}",
            planvault_runner::native::host_name(),
            std::process::id()
        ))
        .build();
    let connection = Connection::connect(options)
        .await
        .map_err(|e| fail(&format!("cannot reach Temporal at {address}"), e))?;
    Client::new(
        connection,
        ClientOptions::new(target.namespace.clone()).build(),
    )
    .map_err(|e| fail("cannot make a Temporal client", e))
}

/// Poll the task queue until the process is killed: run workflows and
/// activities of planvault runs.
pub fn run_worker(target: &Target) -> Result<(), TemporalError> {
    // Clones of runs this machine's ended workers left behind, and this
    // worker's own unused ones (then again on checkouts, hourly).
    crate::git_vault::tend_cache();
    runtime()?.block_on(async {
        let runtime = Runtime::from_current_tokio(Default::default())
            .map_err(|e| fail("cannot start the Temporal runtime", e))?;
        let client = connect(target).await?;
        let options = WorkerOptions::new(target.task_queue.clone())
            .register_activities(VaultActivities)
            .register_activities(crate::mcp::McpActivities)
            .register_activities(crate::lock::LockActivities)
            .register_workflow::<PlanvaultRun>()
            .map_err(|e| fail("cannot register the workflow", e))?
            // The driver's inbox wakes the run from the `decide` update's
            // handler, on the workflow's own thread during an activation:
            // deterministic, but not a wake the SDK's detector knows.
            .detect_nondeterministic_futures(false)
            .build();
        let mut worker = Worker::new(&runtime, client, options)
            .map_err(|e| fail("cannot start the worker", e))?;
        worker
            .run()
            .await
            .map_err(|e| fail("the worker stopped", e))
    })
}

/// What a submission did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    /// A new workflow started.
    Started { workflow_id: String },
    /// A workflow with this id runs (or completed) already: nothing started.
    Exists { workflow_id: String },
}

/// Start the run `workflow_id` unless it exists: a running one, or one that
/// completed (a failed, cancelled or terminated one may be submitted again:
/// it resumes from the vault).
pub fn submit(
    target: &Target,
    workflow_id: &str,
    submission: Submission,
) -> Result<Submitted, TemporalError> {
    if let Some(why) = submission.refuse() {
        return Err(TemporalError(why));
    }
    runtime()?.block_on(async {
        let client = connect(target).await?;
        let options = WorkflowStartOptions::new(target.task_queue.clone(), workflow_id.to_string())
            .id_reuse_policy(WorkflowIdReusePolicy::AllowDuplicateFailedOnly)
            .id_conflict_policy(WorkflowIdConflictPolicy::Fail)
            .build();
        match client
            .start_workflow(PlanvaultRun::run, submission, options)
            .await
        {
            Ok(_) => Ok(Submitted::Started {
                workflow_id: workflow_id.to_string(),
            }),
            Err(WorkflowStartError::AlreadyStarted { .. }) => Ok(Submitted::Exists {
                workflow_id: workflow_id.to_string(),
            }),
            Err(e) => Err(fail("cannot start the run", e)),
        }
    })
}

/// Whether submitting `workflow_id` would start a run: none by that id, or
/// one that failed, was cancelled, terminated or timed out ([`submit`]
/// starts no other).
pub fn would_start(target: &Target, workflow_id: &str) -> Result<bool, TemporalError> {
    runtime()?.block_on(async {
        let client = connect(target).await?;
        let described = client
            .get_workflow_handle::<PlanvaultRun>(workflow_id)
            .describe(WorkflowDescribeOptions::default())
            .await;
        match described {
            Ok(d) => Ok(!matches!(
                d.status(),
                WorkflowExecutionStatus::Running
                    | WorkflowExecutionStatus::Completed
                    | WorkflowExecutionStatus::ContinuedAsNew
            )),
            Err(WorkflowInteractionError::NotFound(_)) => Ok(true),
            Err(e) => Err(fail(&format!("run {workflow_id}"), e)),
        }
    })
}

/// The journal decisions the last run of `workflow_id` went past or took
/// (`RunState::decisions_taken`), asked of a worker, which reads them from
/// its history; none where no worker answers within 5 s.
pub fn previous_decisions(target: &Target, workflow_id: &str) -> Vec<String> {
    let Ok(runtime) = runtime() else {
        return Vec::new();
    };
    runtime.block_on(async {
        let Ok(client) = connect(target).await else {
            return Vec::new();
        };
        state_of(&client, workflow_id)
            .await
            .map(|state| state.decisions_taken)
            .unwrap_or_default()
    })
}

/// A run's state, asked of a worker (for a closed run, read from its
/// history); `None` where none answers within 5 s.
async fn state_of(client: &Client, workflow_id: &str) -> Option<RunState> {
    let handle = client.get_workflow_handle::<PlanvaultRun>(workflow_id);
    tokio::time::timeout(
        Duration::from_secs(5),
        handle.query(PlanvaultRun::status, (), WorkflowQueryOptions::default()),
    )
    .await
    .ok()
    .and_then(Result::ok)
}

/// Wait for a run's end: its state, or how it did not complete. A run that
/// stopped short fails its workflow (so it may be submitted again); its
/// state is then asked of a worker, which reads it from the history.
pub fn wait(target: &Target, workflow_id: &str) -> Result<RunState, TemporalError> {
    runtime()?.block_on(async {
        let client = connect(target).await?;
        let handle = client.get_workflow_handle::<PlanvaultRun>(workflow_id);
        let failure = match handle.get_result(WorkflowGetResultOptions::default()).await {
            Ok(state) => return Ok(state),
            Err(e) => fail(&format!("run {workflow_id}"), e),
        };
        match state_of(&client, workflow_id).await {
            Some(state) if state.finished.is_some() || state.failed.is_some() => Ok(state),
            _ => Err(failure),
        }
    })
}

/// One run as `planvault runs` lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub workflow_id: String,
    /// Temporal's word: running, completed, failed, canceled, terminated, …
    pub status: String,
    /// A running run's own state, when a worker answered the query.
    pub state: Option<RunState>,
    /// Why a failed run failed: for a run that stopped short, how it ended
    /// and that it resumes when submitted again. Read from the cluster's
    /// history, so no worker need be up.
    pub failure: Option<String>,
}

/// Every planvault run the namespace knows, newest first. The running
/// runs' states are asked of the workers all at once, so a cluster with
/// no worker up answers in one query's wait, not one per run.
pub fn list(target: &Target) -> Result<Vec<Listed>, TemporalError> {
    runtime()?.block_on(async {
        let client = connect(target).await?;
        let mut stream = client.list_workflows(
            "WorkflowType = 'PlanvaultRun'",
            WorkflowListOptions::default(),
        );
        let mut executions = Vec::new();
        while let Some(item) = stream.next().await {
            let execution = item.map_err(|e| fail("cannot list the runs", e))?;
            executions.push((
                execution.id().to_string(),
                execution.run_id().to_string(),
                execution.status(),
            ));
        }
        let details = executions.iter().map(|(id, run_id, status)| async {
            match status {
                WorkflowExecutionStatus::Running => (state_of(&client, id).await, None),
                WorkflowExecutionStatus::Failed => {
                    (None, failure_of(&client, target, id, run_id).await)
                }
                _ => (None, None),
            }
        });
        let details = futures_util::future::join_all(details).await;
        Ok(executions
            .into_iter()
            .zip(details)
            .map(|((workflow_id, _, status), (state, failure))| Listed {
                workflow_id,
                status: format!("{status:?}").to_ascii_lowercase(),
                state,
                failure,
            })
            .collect())
    })
}

/// The failure one failed run of `workflow_id` (not a later one of that
/// id) ended with, from its history's close event.
async fn failure_of(
    client: &Client,
    target: &Target,
    workflow_id: &str,
    run_id: &str,
) -> Option<String> {
    let execution = WorkflowExecutionInfo::builder()
        .namespace(target.namespace.clone())
        .workflow_id(workflow_id)
        .run_id(run_id)
        .build();
    let handle = WorkflowHandle::<_, PlanvaultRun>::new(client.clone(), execution);
    let options = WorkflowGetResultOptions::builder()
        .follow_runs(false)
        .build();
    match handle.get_result(options).await {
        Err(WorkflowGetResultError::Failed(failure)) => Some(failure.failure().message.clone()),
        _ => None,
    }
}

/// Answer the question a run waits on; refused unless it waits on `item`.
pub fn decide(
    target: &Target,
    workflow_id: &str,
    decision: Decision,
) -> Result<String, TemporalError> {
    runtime()?.block_on(async {
        let client = connect(target).await?;
        client
            .get_workflow_handle::<PlanvaultRun>(workflow_id)
            .execute_update(
                PlanvaultRun::decide,
                decision,
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
            .map_err(|e| fail(&format!("run {workflow_id}"), e))
    })
}

/// Ask a run to stop: it stops resumably at its next checkpoint.
pub fn cancel(target: &Target, workflow_id: &str) -> Result<(), TemporalError> {
    runtime()?.block_on(async {
        let client = connect(target).await?;
        client
            .get_workflow_handle::<PlanvaultRun>(workflow_id)
            .cancel(WorkflowCancelOptions::default())
            .await
            .map_err(|e| fail(&format!("run {workflow_id}"), e))
    })
}

/// Replay a run's history, fetched from the cluster, against this build's
/// workflow (the SDK's replayer): `Err` when the code would not take the
/// same steps (the driver is not deterministic, or changed incompatibly for
/// runs in flight).
pub fn replay(target: &Target, workflow_id: &str) -> Result<(), TemporalError> {
    use temporalio_client::WorkflowFetchHistoryOptions;
    use temporalio_sdk::workflow_replayer::{WorkflowReplayer, WorkflowReplayerOptions};
    runtime()?.block_on(async {
        let client = connect(target).await?;
        let history = client
            .get_workflow_handle::<PlanvaultRun>(workflow_id)
            .fetch_history(WorkflowFetchHistoryOptions::default());
        let options = WorkflowReplayerOptions::new()
            .register_workflow::<PlanvaultRun>()
            .map_err(|e| fail("cannot register the workflow", e))?
            .detect_nondeterministic_futures(false)
            .build();
        WorkflowReplayer::new(options)
            .map_err(|e| fail("cannot make a replayer", e))?
            .replay_workflow(history)
            .await
            .map_err(|e| fail("the history does not replay", e))
    })
}
