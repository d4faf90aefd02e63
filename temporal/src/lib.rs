//! planvault runs as Temporal workflows: a third host of the one runner.
//!
//! The workflow ([`workflow::PlanvaultRun`]) calls
//! `planvault_runner::run_with` over [`host::TemporalHost`], whose every
//! method that touches the world is an activity ([`activities`]) delegating
//! to the terminal's `NativeHost`: no run logic lives here. The vault is a
//! folder every worker can reach at the same absolute path; the workflow's
//! input names it and carries no secret (an endpoint's key is named, and
//! the worker reads it from its own environment inside the model call's
//! activity). MCP servers are reached through [`mcp`]'s activities, and the
//! vault's run lock is held through [`lock`]'s. [`client`] is what the
//! CLI's `worker`, `submit`, `runs`, `decide` and `cancel` call.

pub mod activities;
pub mod client;
pub mod git_vault;
pub mod host;
pub mod lock;
pub mod mcp;
pub mod plans;
pub mod workflow;

use planvault_core::engine::FinishReason;
use planvault_protocol::StartRun;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The task queue workers poll and runs are submitted to by default.
pub const DEFAULT_TASK_QUEUE: &str = "planvault";
/// The namespace by default (the dev server's).
pub const DEFAULT_NAMESPACE: &str = "default";

/// What an endpoint's `api_key` holds in a submission: this prefix and the
/// name of the worker's environment variable with the key (empty: the
/// runner's defaults, `PLANVAULT_API_KEY` then `OPENAI_API_KEY`). A key
/// itself never enters the workflow's input or history.
pub const KEY_REF: &str = "planvault-key-from-worker-env:";

/// The reference to the key in `env` (or the default variables).
pub fn key_ref(env: Option<&str>) -> String {
    format!("{KEY_REF}{}", env.unwrap_or(""))
}

/// What an endpoint's `api_key` holds for a key from `env` alone, never the
/// default variables (a role the vault's config sends away from the
/// endpoint a person gave). A worker from before it knows no such prefix
/// and sends no key.
pub const KEY_REF_ONLY: &str = "planvault-key-from-worker-env-only:";

/// The reference to the key in `env` alone.
pub fn key_ref_only(env: &str) -> String {
    format!("{KEY_REF_ONLY}{env}")
}

/// The key a reference names, read from this process's environment; a
/// value that is not a reference is never sent (it would be a key that
/// travelled through the history).
pub fn resolve_key(reference: Option<&str>) -> Option<String> {
    let reference = reference?;
    if let Some(only) = reference.strip_prefix(KEY_REF_ONLY) {
        return ["PLANVAULT_API_KEY", "OPENAI_API_KEY"]
            .iter()
            .all(|default| *default != only)
            .then(|| std::env::var(only).ok())
            .flatten()
            .filter(|k| !k.is_empty());
    }
    let name = reference.strip_prefix(KEY_REF)?;
    let named = (!name.is_empty())
        .then(|| std::env::var(name).ok())
        .flatten();
    named
        .or_else(|| std::env::var("PLANVAULT_API_KEY").ok())
        .or_else(|| std::env::var("OPENAI_API_KEY").ok())
        .filter(|k| !k.is_empty())
}

/// One submitted run: the workflow's whole input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Submission {
    /// The vault's absolute path, the same on every worker (a PLAN.md's or
    /// generated plan's run vault, `<stem>.run/` beside the plan file); or,
    /// for a vault in a git repository, its [`git_vault::GitSource::locator`].
    pub vault: String,
    /// What the plan is written as; a history from before this field is
    /// of a vault run.
    #[serde(default)]
    pub form: PlanForm,
    /// The run's knobs; every endpoint's `api_key` is a [`key_ref`].
    pub start: StartRun,
    /// The run's id (`00_plan-trace/run-id` of a new run).
    pub run_id: String,
    /// `[run] max_prompt_bytes`.
    pub max_prompt_bytes: Option<usize>,
    /// Proposal mode: nothing mutates before a person approves.
    pub proposal: bool,
    /// What the activities' native host is configured with.
    pub host: HostConfig,
    /// Temporal's activity options, from the vault's `[http]` config.
    pub activity: ActivityConfig,
    /// The vault's `[mcp.servers]`: names of variables, never their values.
    #[serde(default)]
    pub mcp: Vec<mcp::McpServerSpec>,
    /// The decisions in the vault's journal that the submitter took as
    /// given (each named by its chain hash: journaled by a run on the
    /// submitter's machine, or taken by the person there). A resume goes
    /// past no other decision: one written into the journal after the
    /// submission fails the run, naming it. `None` from a submitter before
    /// this field: the journal's decisions stand as written.
    #[serde(default)]
    pub decisions_taken: Option<Vec<String>>,
}

impl Submission {
    /// Why this submission may not be started: a key (not a reference to
    /// one) in an endpoint.
    pub fn refuse(&self) -> Option<String> {
        if let Some(source) = git_vault::GitSource::parse(&self.vault) {
            let source = match source {
                Ok(source) => source,
                Err(e) => return Some(e.to_string()),
            };
            if let Err(why) =
                git_vault::GitSource::new(&source.url, &source.base, &source.dir, &source.run)
            {
                return Some(why);
            }
        }
        if let planvault_protocol::RunMode::Model { endpoints } = &self.start.mode {
            for e in endpoints.default.iter().chain(endpoints.roles.values()) {
                if e.api_key
                    .as_deref()
                    .is_some_and(|k| !k.starts_with(KEY_REF))
                {
                    return Some(format!(
                        "endpoint {} carries a key: a submission names the variable that holds it",
                        e.base_url
                    ));
                }
            }
        }
        None
    }
}

/// What a submitted plan is written as, as `planvault run` reads PATH.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlanForm {
    /// A vault folder: [`Submission::vault`] is the plan.
    #[default]
    Vault,
    /// A `PLAN.md` checklist at this absolute path: read and amended by the
    /// workflow through the vault activities over its folder; `@tool`
    /// commands run in that folder.
    PlanMd { file: String },
    /// A model-generated JSON plan at this absolute path.
    Generated { file: String },
}

impl PlanForm {
    /// The plan file beside the run vault, if the plan is one.
    pub fn file(&self) -> Option<&str> {
        match self {
            PlanForm::Vault => None,
            PlanForm::PlanMd { file } | PlanForm::Generated { file } => Some(file),
        }
    }
}

/// The native host's settings from the vault's config.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HostConfig {
    /// `[commands] env`: variable names a command keeps.
    pub command_env: Vec<String>,
    /// `[fetch] allow_hosts`.
    pub fetch_allow: Vec<String>,
    /// `[http] total_timeout_secs`, in ms.
    pub total_timeout_ms: Option<u64>,
}

/// Temporal's retry and timeouts for the activities.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActivityConfig {
    /// `[http] retry_base_ms`: the first backoff of a retried activity.
    pub retry_base_ms: u64,
    /// `[http] attempts`: attempts of a vault activity (a model call has one
    /// attempt per activity: the driver's retry policy, the same numbers,
    /// retries it, waiting on a durable timer).
    pub attempts: u32,
    /// `[http] timeout_secs` in ms: a model call's heartbeat must not stop
    /// longer than this (plus a margin).
    pub timeout_ms: u64,
}

impl Default for ActivityConfig {
    fn default() -> Self {
        ActivityConfig {
            retry_base_ms: 500,
            attempts: 4,
            timeout_ms: 120_000,
        }
    }
}

/// A person's question the run waits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asking {
    /// The driver's request id (what the reply answers).
    pub request: String,
    pub node: String,
    pub question: String,
    /// Outgoing labels to choose from (empty: approve or reject).
    pub choices: Vec<String>,
}

/// What `planvault runs` shows of a run: kept in the workflow's state from
/// the driver's messages (nothing leaves the workflow).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub vault: String,
    /// Each node's last written status.
    pub nodes: BTreeMap<String, String>,
    /// The question the run waits on.
    pub asking: Option<Asking>,
    /// How the run ended.
    pub finished: Option<FinishReason>,
    /// Why the run could not start or go on.
    pub failed: Option<String>,
    /// The journal decisions this run went past or took (chain hashes):
    /// those its submission carried and those it journaled itself (a
    /// `planvault decide`). Submitting the same run again takes them as
    /// taken here (`client::previous_decisions`).
    #[serde(default)]
    pub decisions_taken: Vec<String>,
}

/// A decision for a waiting run (`planvault decide RUN ITEM=…`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The node (item) waiting.
    pub item: String,
    pub approved: bool,
    pub note: String,
    /// An outgoing label, where the node offers several.
    pub choice: Option<String>,
}

/// A run's workflow id: `planvault-<12 hex of sha256(vault path)>-<run>`,
/// so the same vault and run name is one workflow however often submitted.
pub fn workflow_id(vault: &str, run: &str) -> String {
    let digest = Sha256::digest(vault.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("planvault-{hex}-{run}")
}

/// Whether `run` may name a run (letters, digits, `.`, `_`, `-`).
pub fn valid_run_name(run: &str) -> bool {
    !run.is_empty()
        && run.len() <= 100
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_ids_are_stable_per_vault_and_run() {
        let a = workflow_id("/srv/vaults/team", "nightly");
        assert_eq!(a, workflow_id("/srv/vaults/team", "nightly"));
        assert_ne!(a, workflow_id("/srv/vaults/other", "nightly"));
        assert_ne!(a, workflow_id("/srv/vaults/team", "weekly"));
        assert!(a.starts_with("planvault-") && a.ends_with("-nightly"));
        assert_eq!(a.len(), "planvault-".len() + 12 + "-nightly".len());
        assert!(valid_run_name("run-1.a_b"));
        assert!(!valid_run_name("a b") && !valid_run_name(""));
    }

    #[test]
    fn only_a_reference_is_ever_resolved_to_a_key() {
        assert_eq!(resolve_key(Some("sk-literal-key")), None);
        assert_eq!(resolve_key(None), None);
        let name = "PLANVAULT_TEMPORAL_TEST_KEY_VAR";
        // SAFETY-free: set_var is safe in edition 2021; no other test reads it.
        std::env::set_var(name, "sk-from-env");
        assert_eq!(
            resolve_key(Some(&key_ref(Some(name)))).as_deref(),
            Some("sk-from-env")
        );
        // A role sent away from the given endpoint: its own variable only,
        // never the default ones.
        assert_eq!(
            resolve_key(Some(&key_ref_only(name))).as_deref(),
            Some("sk-from-env")
        );
        std::env::set_var("PLANVAULT_API_KEY", "sk-default");
        assert_eq!(
            resolve_key(Some(&key_ref_only("PLANVAULT_TEMPORAL_TEST_NO_SUCH_VAR"))),
            None
        );
        assert_eq!(resolve_key(Some(&key_ref_only("PLANVAULT_API_KEY"))), None);
        // A worker from before the prefix reads it as no reference at all.
        assert!(!key_ref_only(name).starts_with(KEY_REF));
        std::env::remove_var("PLANVAULT_API_KEY");
    }
}
