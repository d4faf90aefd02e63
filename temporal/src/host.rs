//! [`TemporalHost`]: the runner's `Host` inside a workflow. Whatever touches
//! the world is an activity (its answer is in the history, so a replay
//! reads it back instead of doing it again); the clock is workflow time, a
//! sleep a durable timer; messages become the workflow's state.

use crate::activities::{
    AppendIn, CommandIn, Expected, FetchIn, FileIn, FilesIn, PostIn, PutBackIn, VaultActivities,
    WriteIn,
};
use crate::workflow::PlanvaultRun;
use crate::{ActivityConfig, HostConfig};
use planvault_core::Plan;
use planvault_llm::{LlmError, Surface};
use planvault_protocol::FromWorker;
use planvault_runner::{Host, HostError, HttpHead};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use temporalio_workflow::{
    ActivityExecutionError, ActivityOptions, RetryPolicy, WorkflowCancellationToken,
    WorkflowContext,
};

/// How long one vault activity (a read, a write) may take.
const VAULT_ACTIVITY: Duration = Duration::from_secs(60);
/// A long activity's worker is taken for dead after this long without a
/// heartbeat (they beat every second).
const HEARTBEAT: Duration = Duration::from_secs(10);
/// A git vault activity's bound: it heartbeats while git works, so a lost
/// worker is noticed at [`HEARTBEAT`]; this only ends a git that hangs.
const GIT_ACTIVITY: Duration = Duration::from_secs(30 * 60);
/// A `@tool` command's bound (the native host kills it at 30 minutes).
const COMMAND_ACTIVITY: Duration = Duration::from_secs(31 * 60);
/// A model call's bound when the config sets no total.
const MODEL_ACTIVITY: Duration = Duration::from_secs(60 * 60);

pub struct TemporalHost {
    ctx: WorkflowContext<PlanvaultRun>,
    vault: String,
    /// The plan's folder in the vault (empty: the vault is the plan).
    folder: String,
    config: HostConfig,
    activity: ActivityConfig,
    /// What the run last read or wrote of each file: a write is a
    /// compare-and-swap against it.
    seen: RefCell<BTreeMap<String, Expected>>,
    case_insensitive: Cell<bool>,
    /// A PLAN.md run: the host over the plan file's folder (the same
    /// activities, so the same compare-and-swap) and the file's name.
    plan_file: Option<(Box<TemporalHost>, String)>,
    /// The vault's MCP servers (`crate::mcp`).
    mcp: crate::mcp::McpState,
    /// The journal decisions this run may go past (`Submission::
    /// decisions_taken` and those it journals itself); `None`: no record.
    decisions: Option<RefCell<BTreeSet<String>>>,
}

impl TemporalHost {
    pub fn new(
        ctx: WorkflowContext<PlanvaultRun>,
        vault: String,
        config: HostConfig,
        activity: ActivityConfig,
    ) -> Self {
        TemporalHost {
            ctx,
            vault,
            folder: String::new(),
            config,
            activity,
            seen: RefCell::new(BTreeMap::new()),
            case_insensitive: Cell::new(false),
            plan_file: None,
            mcp: crate::mcp::McpState::default(),
            decisions: None,
        }
    }

    /// Resume past only these journal decisions and those the run takes
    /// itself (`None`: every decision stands as written).
    pub fn with_decisions_taken(mut self, taken: Option<Vec<String>>) -> Self {
        self.decisions = taken.map(|heads| RefCell::new(heads.into_iter().collect()));
        self
    }

    /// Amend the PLAN.md `name` through `folder` (the host that read it,
    /// over its folder) and run `@tool` commands in that folder, as a
    /// terminal run of a PLAN.md does.
    pub fn with_plan_file(mut self, folder: TemporalHost, name: String) -> Self {
        self.plan_file = Some((Box::new(folder), name));
        self
    }

    /// A plan folder's run: every change must really land in `folder`, as
    /// the terminal's host checks it (`NativeHost::with_plan_folder`).
    pub fn with_plan_folder(mut self, folder: &str) -> Self {
        self.folder = folder.trim_matches('/').to_string();
        self
    }

    /// The run's MCP servers, reached through `crate::mcp`'s activities.
    pub fn with_mcp(mut self, servers: Vec<crate::mcp::McpServerSpec>) -> Self {
        self.mcp = crate::mcp::McpState::new(servers);
        self
    }

    pub(crate) fn mcp_state(&self) -> &crate::mcp::McpState {
        &self.mcp
    }

    pub(crate) fn context(&self) -> &WorkflowContext<PlanvaultRun> {
        &self.ctx
    }

    pub(crate) fn activity_config(&self) -> &ActivityConfig {
        &self.activity
    }

    /// The config's attempts and backoff, for every vault activity.
    fn vault_retries(&self) -> RetryPolicy {
        RetryPolicy::builder()
            .initial_interval(Duration::from_millis(self.activity.retry_base_ms.max(1)))
            .maximum_attempts(self.activity.attempts.max(1))
            .build()
    }

    /// A vault activity: retried by Temporal (the config's attempts and
    /// backoff) when its worker cannot serve it; never cancelled halfway by
    /// a run's cancellation (the driver stops at its next checkpoint).
    pub(crate) fn vault_options(&self) -> ActivityOptions {
        ActivityOptions::with_start_to_close_timeout(VAULT_ACTIVITY)
            .retry_policy(self.vault_retries())
            .cancellation_token(WorkflowCancellationToken::new())
            .build()
    }

    /// A vault file activity: a shared folder's as [`Self::vault_options`];
    /// a git vault's heartbeats while git works (a first clone of a large
    /// repository may take minutes), so it is bounded by the heartbeat,
    /// not by [`VAULT_ACTIVITY`], and a retry does not start over a clone
    /// that was progressing.
    pub(crate) fn file_options(&self) -> ActivityOptions {
        if crate::git_vault::GitSource::parse(&self.vault).is_none() {
            return self.vault_options();
        }
        ActivityOptions::with_start_to_close_timeout(GIT_ACTIVITY)
            .heartbeat_timeout(HEARTBEAT)
            .retry_policy(self.vault_retries())
            .cancellation_token(WorkflowCancellationToken::new())
            .build()
    }

    /// The run has ended: remove a git vault's clone on the worker that
    /// serves this (the others sweep theirs when unused). Best effort: the
    /// run has ended either way. Runs begun before this step existed
    /// replay without it.
    pub(crate) async fn forget_clone(&self) {
        if crate::git_vault::GitSource::parse(&self.vault).is_none()
            || !self.ctx.patched("git-clone-removed-at-end")
        {
            return;
        }
        let options = ActivityOptions::with_start_to_close_timeout(GIT_ACTIVITY)
            .heartbeat_timeout(HEARTBEAT)
            .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
            .cancellation_token(WorkflowCancellationToken::new())
            .build();
        let _ = self
            .ctx
            .execute_activity(VaultActivities::forget, self.vault.clone(), options)
            .await;
    }

    /// A model call: one attempt per activity; the driver's own retry
    /// policy (the same `[http]` numbers) retries it on a durable timer, so
    /// only one policy acts and every attempt is journaled by the driver.
    fn model_options(&self) -> ActivityOptions {
        let total = self
            .config
            .total_timeout_ms
            .map_or(MODEL_ACTIVITY, Duration::from_millis);
        ActivityOptions::with_start_to_close_timeout(total)
            .heartbeat_timeout(HEARTBEAT)
            .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
            .build()
    }

    /// A command runs at most once: a worker lost mid-command is reported
    /// to the run, never silently run again.
    fn command_options(&self) -> ActivityOptions {
        ActivityOptions::with_start_to_close_timeout(COMMAND_ACTIVITY)
            .heartbeat_timeout(HEARTBEAT)
            .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
            .cancellation_token(WorkflowCancellationToken::new())
            .build()
    }

    /// A write, as a tool's note (`as_itself`) or the run's own.
    async fn write_as(&self, path: &str, text: &str, as_itself: bool) -> Result<(), HostError> {
        let expected = self
            .seen
            .borrow()
            .get(path)
            .cloned()
            .unwrap_or(Expected::Unseen);
        let input = WriteIn {
            vault: self.vault.clone(),
            path: path.to_string(),
            folder: self.folder.clone(),
            text: text.to_string(),
            expected,
            as_itself,
        };
        self.ctx
            .execute_activity(VaultActivities::write, input, self.file_options())
            .await
            .map_err(|e| lost(path, e))?
            .map_err(HostError::from)?;
        self.seen
            .borrow_mut()
            .insert(path.to_string(), Expected::Text(text.to_string()));
        Ok(())
    }

    fn file(&self, path: &str) -> FileIn {
        FileIn {
            vault: self.vault.clone(),
            path: path.to_string(),
            folder: self.folder.clone(),
        }
    }
}

fn lost(path: &str, error: ActivityExecutionError) -> HostError {
    HostError::failure(path, format!("no worker could do this: {error}"))
}

impl Host for TemporalHost {
    /// The whole reply, handed over once.
    type Body = Option<Vec<u8>>;

    async fn list(&self) -> Result<Vec<String>, HostError> {
        // A plan folder's listing leaves out symlinked notes that lead out
        // of it; a run begun before it did replays the vault's listing.
        let listed = if !self.folder.is_empty() && self.ctx.patched("plan-folder-listed") {
            self.ctx
                .execute_activity(VaultActivities::list_in, self.file(""), self.file_options())
                .await
        } else {
            self.ctx
                .execute_activity(
                    VaultActivities::list,
                    self.vault.clone(),
                    self.file_options(),
                )
                .await
        };
        let listed = listed
            .map_err(|e| lost(&self.vault, e))?
            .map_err(HostError::from)?;
        self.case_insensitive.set(listed.case_insensitive);
        Ok(listed.files)
    }

    async fn read(&self, path: &str) -> Result<Option<String>, HostError> {
        // The vault's skip settings are read since plan folders ran in
        // their vault: a run begun before replays without those reads.
        use planvault_core::vault::scope::{IGNORE_FILE, TEMPLATER_SETTINGS, TEMPLATES_SETTINGS};
        if [TEMPLATES_SETTINGS, TEMPLATER_SETTINGS, IGNORE_FILE].contains(&path)
            && !self.ctx.patched("vault-skip-settings-read")
        {
            return Ok(None);
        }
        let text = self
            .ctx
            .execute_activity(VaultActivities::read, self.file(path), self.file_options())
            .await
            .map_err(|e| lost(path, e))?
            .map_err(HostError::from)?;
        self.seen.borrow_mut().insert(
            path.to_string(),
            text.clone().map_or(Expected::Absent, Expected::Text),
        );
        Ok(text)
    }

    /// In as few activities as the texts allow, where each note took one
    /// (three events of a history bounded at 51,200, around every call of
    /// a tool that may write): behind the patch `plan-notes-read-at-once`.
    async fn read_each(&self, paths: &[String]) -> Vec<Result<Option<String>, HostError>> {
        if !self.ctx.patched("plan-notes-read-at-once") {
            return planvault_runner::read_one_by_one(self, paths).await;
        }
        let mut texts = Vec::with_capacity(paths.len());
        while texts.len() < paths.len() {
            let rest = &paths[texts.len()..];
            let input = FilesIn {
                vault: self.vault.clone(),
                paths: rest.to_vec(),
            };
            let read = self
                .ctx
                .execute_activity(VaultActivities::read_each, input, self.file_options())
                .await;
            match read {
                Ok(read) if !read.is_empty() => {
                    for (path, text) in rest.iter().zip(read) {
                        let text = text.map_err(HostError::from);
                        if let Ok(text) = &text {
                            let seen = text.clone().map_or(Expected::Absent, Expected::Text);
                            self.seen.borrow_mut().insert(path.clone(), seen);
                        }
                        texts.push(text);
                    }
                }
                // A worker of another build: read as failed, no sign of a change.
                Ok(_) => texts.extend(
                    rest.iter()
                        .map(|p| Err(HostError::failure(p, "the worker read none of the files"))),
                ),
                Err(e) => {
                    let why = format!("no worker could do this: {e}");
                    texts.extend(rest.iter().map(|p| Err(HostError::failure(p, why.clone()))));
                }
            }
        }
        texts
    }

    async fn write(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.write_as(path, text, false).await
    }

    async fn write_tool_note(&self, path: &str, text: &str) -> Result<(), HostError> {
        self.write_as(path, text, true).await
    }

    async fn append(&self, path: &str, text: &str) -> Result<(), HostError> {
        let input = AppendIn {
            vault: self.vault.clone(),
            path: path.to_string(),
            folder: self.folder.clone(),
            text: text.to_string(),
        };
        self.ctx
            .execute_activity(VaultActivities::append, input, self.file_options())
            .await
            .map_err(|e| lost(path, e))?
            .map_err(HostError::from)?;
        let mut seen = self.seen.borrow_mut();
        let grown = match seen.get(path) {
            Some(Expected::Text(before)) => Expected::Text(format!("{before}{text}")),
            Some(Expected::Absent) => Expected::Text(text.to_string()),
            _ => Expected::Unseen,
        };
        seen.insert(path.to_string(), grown);
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), HostError> {
        self.ctx
            .execute_activity(
                VaultActivities::remove,
                self.file(path),
                self.file_options(),
            )
            .await
            .map_err(|e| lost(path, e))?
            .map_err(HostError::from)?;
        self.seen
            .borrow_mut()
            .insert(path.to_string(), Expected::Absent);
        Ok(())
    }

    async fn post_json(
        &self,
        url: &str,
        api_key: Option<&str>,
        body: &str,
        timeout_ms: u32,
    ) -> Result<(HttpHead, Self::Body), LlmError> {
        let input = PostIn {
            url: url.to_string(),
            key_ref: api_key.map(str::to_string),
            body: body.to_string(),
            timeout_ms,
            total_timeout_ms: self.config.total_timeout_ms,
            scrub_env: crate::mcp::secret_names(&self.mcp.servers),
        };
        let out = self
            .ctx
            .execute_activity(VaultActivities::post_json, input, self.model_options())
            .await
            .map_err(|e| match e {
                ActivityExecutionError::Cancelled(_) => LlmError::Interrupted,
                other => LlmError::Connect {
                    url: url.to_string(),
                    reason: format!("the worker making the call was lost: {other}"),
                },
            })?
            .map_err(LlmError::from)?;
        let head = HttpHead {
            status: out.status,
            content_type: out.content_type,
            retry_after: out.retry_after,
        };
        Ok((head, Some(out.body.into_bytes())))
    }

    async fn read_chunk(&self, body: &mut Self::Body) -> Result<Option<Vec<u8>>, LlmError> {
        Ok(body.take())
    }

    async fn fetch_text(&self, url: &str) -> Result<String, String> {
        let input = FetchIn {
            url: url.to_string(),
            fetch_allow: self.config.fetch_allow.clone(),
        };
        self.ctx
            .execute_activity(VaultActivities::fetch_text, input, self.vault_options())
            .await
            .map_err(|e| format!("{url}: no worker could fetch it: {e}"))?
    }

    async fn sleep(&self, ms: u32) {
        self.ctx.timer(Duration::from_millis(u64::from(ms))).await;
    }

    /// Workflow time: the same on every replay.
    fn now_ms(&self) -> f64 {
        self.ctx
            .workflow_time()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }

    fn post(&self, message: &FromWorker) {
        self.ctx.state_mut(|s| s.observe(message));
    }

    fn guards_settings(&self) -> bool {
        self.ctx.patched("config-guarded-around-tools")
    }

    fn guards_plan_notes(&self) -> bool {
        self.ctx.patched("plan-notes-guarded-around-tools")
    }

    fn guards_vault_markers(&self) -> bool {
        self.ctx.patched("vault-markers-guarded-around-tools")
    }

    /// As the terminal's host puts it back, in an activity; behind the
    /// patch `plan-notes-put-back` (a run begun before stopped there, and
    /// replays so).
    async fn put_back(&self, path: &str, text: Option<&str>) -> Result<Option<String>, HostError> {
        if !self.ctx.patched("plan-notes-put-back") {
            return Err(HostError::new(path, planvault_runner::CANNOT_PUT_BACK));
        }
        let input = PutBackIn {
            vault: self.vault.clone(),
            path: path.to_string(),
            folder: self.folder.clone(),
            text: text.map(str::to_string),
        };
        let aside = self
            .ctx
            .execute_activity(VaultActivities::put_back, input, self.file_options())
            .await
            .map_err(|e| lost(path, e))?
            .map_err(HostError::from)?;
        let now = text.map_or(Expected::Absent, |text| Expected::Text(text.to_string()));
        self.seen.borrow_mut().insert(path.to_string(), now);
        Ok(aside)
    }

    fn keeps_decisions(&self) -> bool {
        self.decisions.is_some()
    }

    async fn decisions_taken_here(&self, heads: &[&str]) -> Vec<bool> {
        let taken = self.decisions.as_ref().map(RefCell::borrow);
        heads
            .iter()
            .map(|h| taken.as_ref().is_some_and(|t| t.contains(*h)))
            .collect()
    }

    async fn keep_decisions(&self, heads: &[&str]) {
        if let Some(taken) = &self.decisions {
            taken
                .borrow_mut()
                .extend(heads.iter().map(|h| h.to_string()));
            // In the run's state too, for a later submission of it.
            self.ctx.state_mut(|s| s.took_decisions(heads));
        }
    }

    fn surface(&self) -> Surface {
        Surface::Cli
    }

    fn case_insensitive(&self) -> bool {
        self.case_insensitive.get()
    }

    /// As the terminal's host checks them (`NativeHost::check_plan_items`):
    /// only over the text the run last read or wrote, through the same
    /// compare-and-swap activities; behind the patch
    /// `plan-md-boxes-checked` (a run begun before replays without them).
    async fn check_plan_items(
        &self,
        done: &[&planvault_core::Node],
    ) -> Result<Option<String>, HostError> {
        let Some((folder, name)) = &self.plan_file else {
            return Ok(None);
        };
        if !self.ctx.patched("plan-md-boxes-checked") {
            return Ok(None);
        }
        let known = folder.seen.borrow().get(name.as_str()).cloned();
        let current = folder.read(name).await?;
        let (Some(Expected::Text(known)), Some(current)) = (known.clone(), current) else {
            return Err(HostError::changed(name));
        };
        if current != known {
            // The read is no sight of the person's edit: an amendment's
            // compare-and-swap still refuses over it.
            folder
                .seen
                .borrow_mut()
                .insert(name.clone(), Expected::Text(known));
            return Err(HostError::changed(name));
        }
        let Some(checked) = planvault_core::planmd::check_done(&current, done) else {
            return Ok(None);
        };
        folder.write(name, &checked).await?;
        Ok(Some(checked))
    }

    /// Compare-and-swap against the text the run read: a person's edit of
    /// the plan file since is refused, a retried write that landed passes.
    async fn amend_plan(
        &self,
        text: &str,
        plan: &Plan,
    ) -> Result<Vec<(String, String)>, HostError> {
        let Some((folder, name)) = &self.plan_file else {
            return Err(HostError::new("PLAN.md", "this run has no plan file"));
        };
        folder.write(name, text).await?;
        // The run vault's notes as `materialize` writes them.
        Ok((0..plan.nodes.len())
            .map(|i| {
                let note = planvault_core::vault::run_vault_note(plan, i);
                (format!("{}.md", plan.nodes[i].id), note)
            })
            .collect())
    }

    async fn mcp_list(&self) -> Option<Result<planvault_llm::mcp::Catalog, String>> {
        self.list_mcp().await
    }

    async fn mcp_call(
        &self,
        server: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<String, String> {
        self.call_mcp(server, tool, arguments).await
    }

    fn mcp_down(&self, server: &str) -> Option<String> {
        self.mcp_down_reason(server)
    }

    async fn command(&self, command: &str) -> Option<(i32, String)> {
        let input = CommandIn {
            vault: self
                .plan_file
                .as_ref()
                .map_or(&self.vault, |(folder, _)| &folder.vault)
                .clone(),
            command: command.to_string(),
            command_env: self.config.command_env.clone(),
        };
        Some(
            self.ctx
                .execute_activity(VaultActivities::command, input, self.command_options())
                .await
                .unwrap_or_else(|e| {
                    (
                        125,
                        format!(
                            "the worker running the command was lost; it was not run again: {e}"
                        ),
                    )
                }),
        )
    }
}
