//! `planvault worker|submit|runs|decide|cancel --temporal ADDRESS`: runs as
//! Temporal workflows (`planvault-temporal`, behind the `temporal` feature).
//! The vault's config and endpoints are read as `planvault run` reads them
//! (`run::config`); the key stays in the environment of the workers.

use crate::run::ModelArgs;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Where the Temporal cluster is.
#[derive(Args, Debug, Clone)]
pub struct Cluster {
    /// The Temporal frontend, `host:port` (e.g. 127.0.0.1:7233) or a URL.
    #[arg(long = "temporal", value_name = "ADDRESS")]
    address: String,
    #[arg(long, default_value = "default")]
    namespace: String,
    /// The task queue workers poll and runs go to.
    #[arg(long = "task-queue", default_value = "planvault", value_name = "QUEUE")]
    task_queue: String,
}

#[derive(Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct SubmitArgs {
    /// A vault folder, a PLAN.md or a generated `.json` plan (run in a run
    /// vault beside it, `<name>.run/`, as `planvault run` does), on a file
    /// system every worker reaches at the same path.
    #[arg(required_unless_present = "git", conflicts_with = "git")]
    path: Option<PathBuf>,
    /// Instead of PATH: a git repository holding the vault. The run commits
    /// to its branch `planvault/<run>`, made from --branch; the URL must not
    /// carry credentials (the workers use git's credential helper or ssh agent).
    #[arg(long = "git", value_name = "URL")]
    git: Option<String>,
    /// With --git: the branch a new run starts from.
    #[arg(
        long = "branch",
        default_value = "main",
        value_name = "BRANCH",
        requires = "git"
    )]
    branch: String,
    /// With --git: the vault's folder in the repository.
    #[arg(
        long = "vault-dir",
        default_value = ".",
        value_name = "DIR",
        requires = "git"
    )]
    vault_dir: String,
    #[command(flatten)]
    cluster: Cluster,
    #[command(flatten)]
    model: ModelArgs,
    /// The run's name: the same vault and name is one run however often
    /// submitted.
    #[arg(long = "run", default_value = "main", value_name = "NAME")]
    run: String,
    /// Start over: every note back to pending, the previous trace removed.
    #[arg(long)]
    fresh: bool,
    /// Wait for the run's end and exit as `planvault run` would.
    #[arg(long)]
    wait: bool,
    /// Trust the vault's `.planvault/config.toml` for this submission (the
    /// servers it starts, the hosts it sends to), as `planvault trust` does
    /// for good.
    #[arg(long)]
    trust_config: bool,
}

#[derive(Args)]
pub struct RunsArgs {
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct DecideArgs {
    /// The run's workflow id, as `submit` printed it.
    run: String,
    /// The gate and its answer: approve, reject or a choice, with an optional `:note`.
    #[arg(value_name = "ITEM=approve|reject|LABEL[:NOTE]")]
    decision: String,
    #[command(flatten)]
    cluster: Cluster,
}

#[derive(Args)]
pub struct CancelArgs {
    /// The run's workflow id.
    run: String,
    #[command(flatten)]
    cluster: Cluster,
}

/// Which Temporal command ran.
pub enum Temporal {
    Worker(WorkerArgs),
    Submit(SubmitArgs),
    Runs(RunsArgs),
    Decide(DecideArgs),
    Cancel(CancelArgs),
}

#[cfg(not(feature = "temporal"))]
pub fn run(_command: Temporal) -> ExitCode {
    eprintln!(
        "error: this planvault was built without Temporal support; build it with \
         `cargo install --path cli --features temporal` (or `cargo build -p planvault --features temporal`)"
    );
    ExitCode::from(2)
}

#[cfg(feature = "temporal")]
pub fn run(command: Temporal) -> ExitCode {
    use planvault_core::terminal::escape_controls;
    match with_temporal::run(command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", escape_controls(&format!("{err:#}"), true));
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "temporal")]
mod with_temporal {
    use super::*;
    use anyhow::{bail, Context, Result};
    use planvault_core::terminal::escape_controls;
    use planvault_core::PlanSource;
    use planvault_protocol::StartRun;
    use planvault_temporal::client::{self, Submitted, Target};
    use planvault_temporal::git_vault::{self, GitSource};
    use planvault_temporal::mcp::McpServerSpec;
    use planvault_temporal::{
        key_ref, workflow_id, ActivityConfig, Decision, HostConfig, PlanForm, Submission,
    };

    fn target(cluster: &Cluster) -> Target {
        Target {
            address: cluster.address.clone(),
            namespace: cluster.namespace.clone(),
            task_queue: cluster.task_queue.clone(),
        }
    }

    pub fn run(command: Temporal) -> Result<ExitCode> {
        match command {
            Temporal::Worker(args) => {
                eprintln!(
                    "planvault worker: polling task queue {} on {} (namespace {})",
                    args.cluster.task_queue, args.cluster.address, args.cluster.namespace
                );
                client::run_worker(&target(&args.cluster))?;
                Ok(ExitCode::SUCCESS)
            }
            Temporal::Submit(args) => submit(args),
            Temporal::Runs(args) => {
                for run in client::list(&target(&args.cluster))? {
                    let what = match (&run.state, &run.failure) {
                        (_, Some(failure)) => failure.clone(),
                        (Some(state), None) => match (&state.asking, &state.finished) {
                            (Some(asking), _) => format!(
                                "waiting for a person: {}={} ({})",
                                asking.node,
                                if asking.choices.is_empty() {
                                    "approve|reject".to_string()
                                } else {
                                    asking.choices.join("|")
                                },
                                asking.question
                            ),
                            (None, Some(reason)) => reason.describe(),
                            (None, None) => {
                                let active: Vec<&str> = state
                                    .nodes
                                    .iter()
                                    .filter(|(_, s)| s.as_str() == "active")
                                    .map(|(n, _)| n.as_str())
                                    .collect();
                                if active.is_empty() {
                                    "working".into()
                                } else {
                                    format!("working on {}", active.join(", "))
                                }
                            }
                        },
                        (None, None) => String::new(),
                    };
                    // One line per run: a reason's own lines (a list of
                    // decisions) joined.
                    let what: Vec<&str> = what.lines().map(str::trim).collect();
                    outln!(
                        "{}\t{}\t{}",
                        run.workflow_id,
                        run.status,
                        escape_controls(what.join(" ").trim(), false)
                    );
                }
                Ok(ExitCode::SUCCESS)
            }
            Temporal::Decide(args) => {
                let verdict = crate::run::parse_verdict(&args.decision)?;
                let said = client::decide(
                    &target(&args.cluster),
                    &args.run,
                    Decision {
                        item: verdict.item,
                        approved: verdict.approved,
                        note: verdict.note,
                        choice: verdict.choice,
                    },
                )?;
                outln!("{}", escape_controls(&said, true));
                Ok(ExitCode::SUCCESS)
            }
            Temporal::Cancel(args) => {
                client::cancel(&target(&args.cluster), &args.run)?;
                outln!("{}: cancel requested", args.run);
                Ok(ExitCode::SUCCESS)
            }
        }
    }

    fn submit(args: SubmitArgs) -> Result<ExitCode> {
        if !planvault_temporal::valid_run_name(&args.run) {
            bail!(
                "--run {}: a run name is letters, digits, `.`, `_` and `-`",
                args.run
            );
        }
        // A git vault is read from a temporary checkout of its run branch
        // (or base), removed when the submission is made.
        let (path, place, _checkout) = match (&args.git, &args.path) {
            (Some(url), _) => {
                let source = GitSource::new(url, &args.branch, &args.vault_dir, &args.run)
                    .map_err(anyhow::Error::msg)?;
                let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
                let root = git_vault::checkout_for_submit(&source, &dir.path().join("clone"))?;
                (root, Some(source), Some(dir))
            }
            (None, Some(path)) => (plan_path(path)?, None, None),
            (None, None) => bail!("give a vault folder or --git URL"),
        };
        // A folder of a vault on disk is a plan of that vault, as for
        // `planvault run`; a git repository's folder is its own vault.
        let enclosing = match place {
            Some(_) => crate::input::Enclosing::Itself,
            None => crate::input::Enclosing::Detect,
        };
        let read =
            crate::input::read_plan(&path, None, enclosing).map_err(|e| anyhow::anyhow!("{e}"))?;
        let file = path.to_string_lossy().into_owned();
        let folder = read.folder().to_string();
        // The workers read a PLAN.md or generated plan from its path and
        // run it in the run vault beside it, as `planvault run` does.
        let (root, form) = match &read.source {
            PlanSource::Vault(_) => (
                read.vault_root.clone().unwrap_or_else(|| path.clone()),
                PlanForm::Vault,
            ),
            PlanSource::PlanMd { .. } => (
                crate::run::run_vault_dir(&path)?,
                PlanForm::PlanMd { file: file.clone() },
            ),
            PlanSource::Generated { .. } => (
                crate::run::run_vault_dir(&path)?,
                PlanForm::Generated { file: file.clone() },
            ),
        };
        let mut checked = read.check();
        checked.diagnostics.splice(0..0, read.problems);
        if checked.has_errors() {
            for d in &checked.diagnostics {
                eprintln!("{}", d.render_human());
            }
            bail!("the plan is unsound; nothing was submitted");
        }
        let config = crate::run::VaultConfig::read(&root)?;
        let endpoints = args.model.endpoints(&config)?;
        let source = match (&place, &args.git) {
            (Some(_), Some(url)) => crate::trust::Source::Git {
                url,
                branch: &args.branch,
                folder: &args.vault_dir,
            },
            _ => crate::trust::Source::Path(&path),
        };
        crate::trust::require(&config, source, args.trust_config)?;
        if endpoints.isolate {
            bail!("[run] isolate: an isolated run is not available through Temporal; use `planvault run`");
        }
        let asked = planvault_core::proposal::requested(&read.source, &checked.plan);
        let proposal = asked.is_some() || endpoints.proposal;
        if proposal {
            // As `planvault run` refuses it: the runner checks a vault it
            // reads, not a plan it is handed.
            let rules = planvault_core::proposal::check(&checked.plan, asked.as_ref());
            if planvault_core::diagnostic::has_errors(&rules) {
                for d in &rules {
                    eprintln!("{}", d.render_human());
                }
                bail!("the plan is unsound in proposal mode; nothing was submitted");
            }
        }
        let (vault, place) = match &place {
            Some(source) => {
                if !matches!(form, PlanForm::Vault) {
                    bail!("{}: a git repository's plan runs through Temporal as a vault folder (run a PLAN.md or generated plan from a shared folder)", args.vault_dir);
                }
                (source.locator(), source.place())
            }
            None => (root.to_string_lossy().into_owned(), file.clone()),
        };
        // The servers travel as their config: variable names, never values.
        let servers = config.servers(&endpoints.key_vars())?;
        let target = target(&args.cluster);
        let id = workflow_id(&place, &args.run);
        // A resume takes its journal's decisions as given: only those
        // taken here travel, and the workers go past no other.
        let decisions_taken = match (args.fresh, &form) {
            (true, _) => Vec::new(),
            (false, form) => crate::trust::decisions_for_submit(
                if matches!(form, PlanForm::Vault) {
                    &path
                } else {
                    &root
                },
                || {
                    Ok(client::would_start(&target, &id)?
                        .then(|| client::previous_decisions(&target, &id)))
                },
            )?,
        };
        let ms = |d: std::time::Duration| d.as_millis().min(u128::from(u64::MAX)) as u64;
        let (parallel, parallel_at_most) = args.model.waves();
        let submission = Submission {
            vault,
            form,
            // The key stays on the workers: only the variable's name travels.
            start: StartRun {
                folder,
                parallel,
                parallel_at_most,
                ..crate::run::start_run(
                    args.model.query.clone(),
                    endpoints.for_runner_with(|e| {
                        match (e.default_key, e.api_key_env.as_deref()) {
                            (true, env) => Some(key_ref(env)),
                            (false, Some(env)) => Some(planvault_temporal::key_ref_only(env)),
                            (false, None) => None,
                        }
                    }),
                    &endpoints,
                    args.fresh,
                    args.model.max_steps,
                    args.model.autonomy,
                )
            },
            run_id: crate::run::new_run_id(&root),
            max_prompt_bytes: endpoints.max_prompt_bytes,
            proposal,
            host: HostConfig {
                command_env: endpoints.command_env.clone(),
                fetch_allow: endpoints.fetch_allow.clone(),
                total_timeout_ms: endpoints.http.total_timeout.map(ms),
            },
            activity: ActivityConfig {
                retry_base_ms: ms(endpoints.http.retry_base),
                attempts: endpoints.http.attempts,
                timeout_ms: ms(endpoints.http.timeout),
            },
            mcp: servers.iter().map(McpServerSpec::from).collect(),
            decisions_taken: Some(decisions_taken),
        };
        match client::submit(&target, &id, submission)? {
            Submitted::Started { workflow_id } => outln!("submitted {workflow_id}"),
            Submitted::Exists { workflow_id } => {
                outln!("{workflow_id} exists already: not submitted again")
            }
        }
        if !args.wait {
            return Ok(ExitCode::SUCCESS);
        }
        let state = client::wait(&target, &id)?;
        match (&state.finished, &state.failed) {
            (Some(reason), _) => {
                eprintln!("■ {}", escape_controls(&reason.describe(), true));
                Ok(ExitCode::from(crate::run::finish_code(reason, false)))
            }
            (None, Some(failed)) => bail!("{failed}"),
            (None, None) => bail!("the run ended without finishing"),
        }
    }

    /// PATH made absolute (the workflow id's and the workers' path): a
    /// folder canonical, a plan file its folder's canonical path and its
    /// own name, so its run vault lies beside it as `planvault run` puts it.
    /// A symlinked plan file is refused: the workers read and amend it
    /// through activities confined to its folder, and `planvault run`
    /// replaces the link with a file when it amends it.
    fn plan_path(path: &std::path::Path) -> Result<PathBuf> {
        let meta = std::fs::symlink_metadata(path)
            .with_context(|| format!("cannot find {}", path.display()))?;
        if meta.file_type().is_symlink() && !path.is_dir() {
            bail!(
                "{}: a symlinked plan file cannot run through Temporal; submit the file it leads to",
                path.display()
            );
        }
        if meta.is_dir() || meta.file_type().is_symlink() {
            return std::fs::canonicalize(path)
                .with_context(|| format!("cannot find {}", path.display()));
        }
        let name = path
            .file_name()
            .with_context(|| format!("{}: not a plan file", path.display()))?;
        let folder = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(folder) => folder,
            None => std::path::Path::new("."),
        };
        let folder = std::fs::canonicalize(folder)
            .with_context(|| format!("cannot find {}", folder.display()))?;
        Ok(folder.join(name))
    }
}
