//! `planvault run`: flags in, the plan read and checked, a run vault for a
//! PLAN.md or generated plan, then one run through `planvault-runner`'s
//! driver over its native host, with progress on stderr and the answer on
//! stdout. Every decision is the engine's; every effect is the runner's.

pub(crate) mod config;
mod isolated;

pub use config::{VaultConfig, CONFIG_FILE};

use crate::input::{read_plan, FormatArg};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use planvault_core::engine::{Autonomy, FinishReason, Journal};
use planvault_core::terminal::escape_controls;
use planvault_core::{Plan, PlanSource};
use planvault_protocol::{FromWorker, RunError, RunMode, StartRun};
use planvault_runner::native::{NativeHost, VaultLock};
use planvault_runner::{block_on, run_with, Humans, Inbox, Options};
use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args)]
pub struct RunArgs {
    /// A vault folder, a PLAN.md or a generated `.json` plan (the last two run
    /// in a run vault beside them, `<name>.run/`, so they can resume). A
    /// folder inside a larger vault (one with `.obsidian/`, or `--vault-root`)
    /// is a plan of that vault: its links resolve among all the vault's
    /// notes, its trace is kept in it, and tools write only in it.
    path: PathBuf,
    /// The vault a plan folder lies in, when it has no `.obsidian/` folder
    /// (nor SilverBullet's `CONFIG.md`) to be found by.
    #[arg(long = "vault-root", value_name = "FOLDER")]
    vault_root: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// Start over: every note back to pending, the previous trace removed.
    #[arg(long)]
    fresh: bool,
    /// Re-run from a recorded journal without calling any model.
    #[arg(long, value_name = "JOURNAL")]
    replay: Option<PathBuf>,
    /// Read PATH in this format instead of detecting it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Answer a `@human` item or `type: human` note that paused the run:
    /// ITEM=approve|reject|LABEL, a label optionally followed by :NOTE (repeatable).
    #[arg(long = "decide", value_name = "ITEM=approve|reject|LABEL[:NOTE]")]
    decide: Vec<String>,
    /// Make every change in a git worktree on a new branch `planvault/<run-id>`
    /// (the checkout stays untouched); verify with `[guard] verify`, then
    /// commit with a receipt or roll back (also `[run] isolate = true`).
    #[arg(long)]
    isolate: bool,
    /// Trust the vault's `.planvault/config.toml` for this run (the servers
    /// it starts, the hosts it sends to), as `planvault trust` does for good.
    #[arg(long)]
    trust_config: bool,
}

/// What a run asks and of which model: `planvault run` and `submit`.
#[derive(Args)]
pub(crate) struct ModelArgs {
    /// What the run is for; handed to every node.
    #[arg(long)]
    pub query: String,
    /// OpenAI-compatible API base, e.g. http://127.0.0.1:11434/v1 (calls BASE_URL/chat/completions).
    #[arg(long, value_name = "BASE_URL")]
    pub endpoint: Option<String>,
    /// The model name sent to the default endpoint.
    #[arg(long)]
    pub model: Option<String>,
    /// Route a role's calls elsewhere: ROLE=URL,MODEL (repeatable).
    #[arg(long = "role", value_name = "ROLE=URL,MODEL")]
    pub roles: Vec<String>,
    /// The global step budget.
    #[arg(long, default_value_t = 100)]
    pub max_steps: u32,
    /// Who decides `@human` nodes (`ask`: a person, by `--decide` or, for
    /// a Temporal run, `planvault decide`).
    #[arg(long, value_enum, default_value = "full")]
    pub autonomy: AutonomyArg,
    /// Run a PLAN.md's independent items together, in waves of at most N
    /// (Leopold's `--parallel N`; without N, every item that can run); by
    /// default, or with N of 1, one at a time, in the order Leopold's loop
    /// takes them.
    #[arg(long, value_name = "N", num_args = 0..=1)]
    pub parallel: Option<Option<u32>>,
}

impl ModelArgs {
    /// Whether a PLAN.md runs in waves, and of at most how many items.
    /// `--parallel 1` (or 0) is Leopold's one at a time.
    pub fn waves(&self) -> (bool, Option<u32>) {
        match self.parallel {
            None | Some(Some(0 | 1)) => (false, None),
            Some(None) => (true, None),
            Some(Some(n)) => (true, Some(n)),
        }
    }

    /// The vault's endpoints as its config and these flags set them.
    pub fn endpoints(&self, config: &config::VaultConfig) -> Result<config::Endpoints> {
        config::resolve(
            config,
            self.endpoint.as_deref(),
            self.model.as_deref(),
            &self.roles,
        )
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum AutonomyArg {
    Ask,
    Full,
}

pub fn run(args: RunArgs) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    // First Ctrl-C: finish the current write and stop resumably. Second: leave now
    // (every note write is atomic, so the vault is still resumable).
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nstopping… (Ctrl-C again to quit at once)");
    });
    match run_plan(args, stop) {
        Ok(code) => code,
        // A full disk before the run could start (its run vault being
        // made) is as resumable as one during it.
        Err(err) if is_disk_full(&err) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: {}\n  hint: free some space, then run again: the run resumes where it stopped",
                escape_controls(&format!("{err:#}"), true)
            );
            ExitCode::from(5)
        }
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                escape_controls(&format!("{err:#}"), true)
            );
            ExitCode::from(2)
        }
    }
}

/// Whether an error comes down to a full disk (or quota).
fn is_disk_full(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<std::io::Error>())
        .any(|e| {
            matches!(
                e.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
            ) || e.raw_os_error() == Some(28)
        })
}

/// Read and check the plan, set up its run vault, and run it to its end.
fn run_plan(args: RunArgs, stop: Arc<AtomicBool>) -> Result<ExitCode> {
    // A run of this plan killed during a writing tool's call: what the call
    // changed is put back first, in the vault and folder that run had,
    // under their locks, before anything here reads the vault (its config
    // picks the run's path and starts servers; its markers root the plan).
    let cut = planvault_runner::native::cut_off_call(&args.path);
    // One whose vault is gone (moved, deleted) has nothing to put back
    // there, but in a plan file beside it.
    let cut = match cut {
        Some(cut) if cut.vault_gone() && !cut.has_plan_file() => {
            cut.forget();
            None
        }
        cut => cut,
    };
    if let Some(cut) = cut {
        let gone = cut.vault_gone();
        let _lock = match gone {
            true => None,
            false => match VaultLock::acquire(&cut.root) {
                Ok(lock) => Some(lock),
                Err(err) => {
                    eprintln!("error: {err}");
                    return Ok(ExitCode::from(5));
                }
            },
        };
        let _folder_lock = match gone || cut.folder.is_empty() {
            true => None,
            false => match VaultLock::acquire(&cut.root.join(&cut.folder)) {
                Ok(lock) => Some(lock),
                Err(err) => {
                    eprintln!("error: {err}");
                    return Ok(ExitCode::from(5));
                }
            },
        };
        let put_back = planvault_runner::block_on(cut.put_back())
            .expect("the native host never waits")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if !put_back.is_empty() {
            eprintln!(
                "note: the last run was cut off during a tool's call that may write; what it changed is put back ({}), as it would have been once the call returned",
                put_back.join("; ")
            );
        }
    }
    let enclosing = match &args.vault_root {
        Some(root) => crate::input::Enclosing::Given(root),
        None => crate::input::Enclosing::Detect,
    };
    let read = read_plan(&args.path, args.format, enclosing).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut checked = read.check();
    let folder = read.folder().to_string();
    let vault_root = read.vault_root.clone();
    let source = read.source;
    checked.diagnostics.splice(0..0, read.problems);
    let asked = planvault_core::proposal::requested(&source, &checked.plan);
    if checked.has_errors() {
        for d in &checked.diagnostics {
            eprintln!("{}", d.render_human());
        }
        bail!("the plan is unsound; nothing ran");
    }
    let mut plan = checked.plan;
    let starts_over = args.fresh || args.replay.is_some();
    let root = match &source {
        PlanSource::Vault(_) => vault_root.unwrap_or_else(|| args.path.clone()),
        _ => run_vault_dir(&args.path)?,
    };
    if !folder.is_empty() {
        let own = args.path.join(CONFIG_FILE);
        if own.exists() {
            eprintln!(
                "note: {} is not read: a plan folder runs with its vault's {}",
                own.display(),
                root.join(CONFIG_FILE).display()
            );
        }
    }
    let config = config::VaultConfig::read(&root)?;
    let endpoints = args.model.endpoints(&config)?;
    crate::trust::require(
        &config,
        crate::trust::Source::Path(&args.path),
        args.trust_config,
    )?;
    // Its servers from the same read the person trusted (a replay, or a
    // run with none, starts none).
    let servers = config.servers(&endpoints.key_vars())?;
    // Proposal mode (the plan's own text, or `[run] proposal`): a plan
    // that would mutate before its approval gate does not start.
    let proposal = asked.is_some() || endpoints.proposal;
    if proposal {
        let rules = planvault_core::proposal::check(&plan, asked.as_ref());
        if planvault_core::diagnostic::has_errors(&rules) {
            for d in &rules {
                eprintln!("{}", d.render_human());
            }
            bail!("the plan is unsound in proposal mode; nothing ran");
        }
    }
    if (args.isolate || endpoints.isolate) && !folder.is_empty() {
        bail!(
            "{} is the folder {folder}/ of the vault {}: an isolated run takes a whole vault (its copy is the run's worktree); run the folder without isolation, or isolate a vault of its own",
            args.path.display(),
            root.display()
        );
    }
    if args.isolate || endpoints.isolate {
        return isolated::run(&args, stop, source, plan, &config, &endpoints, proposal);
    }
    std::fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    // One run per vault at a time; held until this function returns.
    let _lock = match VaultLock::acquire(&root) {
        Ok(lock) => lock,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(5));
        }
    };
    // A plan folder holds its own lock too: run with `--vault-root` as a
    // vault of its own, its lock is that one.
    let _folder_lock = match folder.is_empty() {
        true => None,
        false => match VaultLock::acquire(&root.join(&folder)) {
            Ok(lock) => Some(lock),
            Err(err) => {
                eprintln!("error: {err}");
                return Ok(ExitCode::from(5));
            }
        },
    };
    // The plan file beside a run vault is what its receipt hashes.
    let plan_file = args
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (plan_md, plan_source) = match source {
        PlanSource::Vault(_) => (None, None),
        PlanSource::PlanMd { text, .. } => {
            materialize(&root, &mut plan, starts_over)?;
            (Some(text.clone()), Some((plan_file, text)))
        }
        PlanSource::Generated { text, .. } => {
            materialize(&root, &mut plan, starts_over)?;
            (None, Some((plan_file, text)))
        }
    };
    let replay = match &args.replay {
        Some(path) => {
            Some(read_journal(path).with_context(|| format!("cannot replay {}", path.display()))?)
        }
        None => None,
    };
    let decisions = args
        .decide
        .iter()
        .map(|d| parse_decision(d).map(|e| in_plan_folder(e, &plan, &folder)))
        .collect::<Result<Vec<_>>>()?;
    let once = Once {
        root: &root,
        plan,
        plan_md,
        replay,
        decisions,
        query: args.model.query.clone(),
        fresh: args.fresh,
        plan_source,
        run_id: None,
        proposal,
        folder,
        servers,
    };
    let (reason, progress) = run_once(&args, &endpoints, &stop, once, None)?;
    exit_code(reason, &progress, &stop)
}

/// One pass of the driver over a run vault.
struct Once<'a> {
    root: &'a std::path::Path,
    plan: Plan,
    plan_md: Option<String>,
    replay: Option<Journal>,
    decisions: Vec<planvault_core::engine::JournalEntry>,
    query: String,
    fresh: bool,
    /// The plan file the receipt hashes (its name beside the run vault).
    plan_source: Option<(String, String)>,
    /// A new run's id the caller fixed (an isolated run's, its branch
    /// `planvault/<run-id>`); `None`: a new one.
    run_id: Option<String>,
    /// Proposal mode: nothing mutates before a person approves.
    proposal: bool,
    /// The plan's folder in the vault at `root` (empty: the whole vault).
    folder: String,
    /// The config's MCP servers, from the read the person trusted.
    servers: Vec<planvault_runner::mcp::Server>,
}

/// Build the native host over `once.root` (with an isolated run's hooks)
/// and run the plan until it finishes or stops.
fn run_once(
    args: &RunArgs,
    endpoints: &config::Endpoints,
    stop: &Arc<AtomicBool>,
    once: Once<'_>,
    isolation: Option<&isolated::Hooks>,
) -> Result<(Option<FinishReason>, Rc<RefCell<Progress>>)> {
    let Once {
        root,
        plan,
        plan_md,
        replay,
        decisions,
        query,
        fresh,
        plan_source,
        run_id,
        proposal,
        folder,
        servers,
    } = once;
    let progress = Rc::new(RefCell::new(Progress::new(args.path.display().to_string())));
    if let Some(copy) = isolation.and_then(|h| h.plan_file.as_deref()) {
        progress.borrow_mut().amended = format!("the run's copy {}", copy.display());
    }
    let started = isolation.map(|h| h.started.clone());
    let mut host = NativeHost::new(root)
        .with_call_snapshot(&args.path)
        .with_plan_folder(&folder)
        .with_command_env(&endpoints.command_env)
        .with_fetch_allow(&endpoints.fetch_allow)
        .with_stop_flag(stop.clone())
        .with_total_timeout(endpoints.http.total_timeout)
        .on_post({
            let progress = progress.clone();
            move |m| {
                if let (FromWorker::Started { .. }, Some(started)) = (m, &started) {
                    started();
                }
                progress.borrow_mut().message(m)
            }
        })
        .on_progress({
            let progress = progress.clone();
            move |p| progress.borrow_mut().progress(p)
        });
    let mut servers = servers;
    if let Some(hooks) = isolation {
        servers = hooks.remap_servers(servers)?;
    }
    if !servers.is_empty() && replay.is_none() {
        host = host.with_mcp(crate::mcp_config::clients(servers)?.with_stop_flag(stop.clone()));
    }
    let plan_file = isolation.and_then(|h| h.plan_file.as_deref());
    // An isolated run's tools reach its worktree, not the checkout's plan
    // (which it never writes).
    if plan_md.is_none() && plan_source.is_some() && isolation.is_none() {
        host = host.with_guarded_plan_file(&args.path);
    }
    if let Some(text) = &plan_md {
        host = host.with_plan_file(plan_file.unwrap_or(&args.path), text);
        if let Some(dir) = args.path.parent() {
            host = host.with_command_dir(dir);
        }
    }
    if let Some(hooks) = isolation {
        host = hooks.install(host);
    }
    if let Some(record) = planvault_runner::native::decisions_file() {
        host = host.with_decision_record(record, crate::trust::take_decisions);
    }
    let (parallel, parallel_at_most) = args.model.waves();
    let start = StartRun {
        folder,
        parallel,
        parallel_at_most,
        ..start_run(
            query,
            endpoints.for_runner(),
            endpoints,
            fresh,
            args.model.max_steps,
            args.model.autonomy,
        )
    };
    let options = Options {
        plan: Some(plan),
        plan_text: plan_md,
        replay,
        decisions,
        humans: Humans::Defer,
        stop_reason: "interrupted by Ctrl-C".into(),
        max_prompt_bytes: endpoints.max_prompt_bytes,
        plan_source,
        run_id: run_id.or_else(|| Some(new_run_id(root))),
        proposal,
        ..Options::default()
    };
    let inbox = Inbox::with_stop_flag(stop.clone());
    let reason = block_on(run_with(&host, &inbox, start, options)).flatten();
    Ok((reason, progress))
}

/// A terminal run's knobs: the model endpoints given (with keys, or with
/// references to them for a Temporal submission), the config's retries.
pub(crate) fn start_run(
    query: String,
    runner_endpoints: planvault_protocol::Endpoints,
    endpoints: &config::Endpoints,
    fresh: bool,
    max_steps: u32,
    autonomy: AutonomyArg,
) -> StartRun {
    StartRun {
        query,
        mode: RunMode::Model {
            endpoints: runner_endpoints,
        },
        fresh,
        max_steps,
        autonomy: match autonomy {
            AutonomyArg::Ask => Autonomy::Ask,
            AutonomyArg::Full => Autonomy::Full,
        },
        breakpoints: Vec::new(),
        run_to: None,
        max_prompt_bytes: None,
        retry: endpoints.retry(),
        mcp_servers: Vec::new(),
        mcp_terminal_only: Vec::new(),
        folder: String::new(),
        parallel: false,
        parallel_at_most: None,
        take_decisions: None,
        allow_hosts: Vec::new(),
    }
}

/// The process's exit code for how the run ended.
fn exit_code(
    reason: Option<FinishReason>,
    progress: &Rc<RefCell<Progress>>,
    stop: &Arc<AtomicBool>,
) -> Result<ExitCode> {
    let Some(reason) = reason else {
        let error = progress.borrow_mut().failed.take();
        match error {
            // The vault could not be written (a full disk): nothing is
            // lost, so the run is resumable (exit 5), not unreadable.
            Some(error) if error.code == planvault_protocol::ErrorCode::VaultIo => {
                eprintln!("error: {}", escape_controls(&describe_error(&error), true));
                return Ok(ExitCode::from(5));
            }
            Some(error) => bail!("{}", describe_error(&error)),
            None => bail!("the run stopped without finishing"),
        }
    };
    Ok(ExitCode::from(finish_code(
        &reason,
        stop.load(Ordering::SeqCst),
    )))
}

/// The exit code of a run that ended with `reason` (`interrupted`: by the
/// person's Ctrl-C).
pub(crate) fn finish_code(reason: &FinishReason, interrupted: bool) -> u8 {
    match reason {
        FinishReason::Completed => 0,
        FinishReason::NodeFailed { .. }
        | FinishReason::PlanFailed { .. }
        | FinishReason::ReplayDiverged { .. } => 1,
        FinishReason::VisitBudget { .. } | FinishReason::StepBudget { .. } => 3,
        FinishReason::AwaitingHuman { .. } => 4,
        FinishReason::Stopped { .. } if interrupted => 130,
        FinishReason::Interrupted { .. } | FinishReason::Stopped { .. } => 5,
    }
}

/// A new run's id: `<UTC time>-<6 hex>` (`20261202-130543-3fa0c1`), the
/// hex from the moment's nanoseconds, the process and the vault.
pub(crate) fn new_run_id(root: &std::path::Path) -> String {
    let now = std::time::SystemTime::now();
    let nanos = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}\n{}\n{}", std::process::id(), root.display());
    planvault_runner::receipt::new_run_id(&utc_stamp(now), &seed)
}

/// `20261202-130543`: the UTC moment a new run's id starts with.
fn utc_stamp(now: std::time::SystemTime) -> String {
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 → civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// An error with its hint, as one line.
fn describe_error(error: &RunError) -> String {
    match &error.hint {
        // A list stays a list: the hint goes under it, not after its last line.
        Some(hint) if error.message.contains('\n') => format!("{}\n  hint: {hint}", error.message),
        Some(hint) => format!("{} ({hint})", error.message),
        None => error.message.clone(),
    }
}

/// A journal to replay; a missing file is an empty journal.
fn read_journal(path: &std::path::Path) -> Result<Journal> {
    match std::fs::read_to_string(path) {
        Ok(text) => Journal::from_jsonl(&text).with_context(|| path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Journal::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// `PLAN.md` → `PLAN.run/` beside it; refused when that is a symlink or
/// no folder. The run vault's name is derived, not chosen, so a link
/// there was put there by whoever shipped the plan: it would send the
/// run's writes (its notes over another folder's files) and its trust
/// (another vault's config) wherever it leads.
pub fn run_vault_dir(plan_file: &std::path::Path) -> Result<PathBuf> {
    let stem = plan_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan".into());
    let dir = plan_file.with_file_name(format!("{stem}.run"));
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "{} is a symlink; a plan's run vault is a folder of its own beside it, never a link to another (remove the link, and the next run starts there afresh)",
            dir.display()
        ),
        Ok(meta) if !meta.is_dir() => bail!(
            "{} is no folder; it is where the plan's run vault goes (move it aside)",
            dir.display()
        ),
        _ => Ok(dir),
    }
}

/// Write the run vault's notes of a PLAN.md or generated plan at `root`
/// and take each item's status from its note
/// ([`planvault_core::vault::run_vault_notes`]): all of them afresh for a
/// new run (`fresh`, or no journal yet); on a resume, an item changed in the
/// plan file since it ran is refused, naming it.
pub(crate) fn materialize(root: &std::path::Path, plan: &mut Plan, fresh: bool) -> Result<()> {
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    let journal = root.join(planvault_core::engine::trace::JOURNAL_FILE);
    let resuming = !fresh && journal.exists();
    let on_disk = match resuming {
        true => crate::input::read_vault(root).map_err(|e| anyhow::anyhow!("{e}"))?,
        false => Default::default(),
    };
    let recorded = match resuming {
        true => read_journal(&journal)?,
        false => Journal::new(),
    };
    let answered = |id: &str| recorded.answers_node(id);
    let write = planvault_core::vault::run_vault_notes(plan, &on_disk, resuming, &answered)
        .map_err(|changed| {
            let run_vault = root.display().to_string();
            anyhow::anyhow!(planvault_core::vault::plan_changed(&run_vault, &changed))
        })?;
    for (file, text) in write {
        let path = root.join(&file);
        // Whole or not at all: a note cut short by a crash or a full
        // disk would be kept as "already there" by the next run.
        planvault_runner::native::write_atomic(&path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// A person's answer to a waiting item, as typed: `ITEM=approve`,
/// `ITEM=reject:NOTE`, `ITEM=LABEL[:NOTE]`.
pub(crate) struct Verdict {
    pub item: String,
    pub approved: bool,
    pub note: String,
    /// The condition (outgoing label) taken.
    pub choice: Option<String>,
}

/// Read `ITEM=approve|reject|LABEL[:NOTE]` (`planvault run --decide`,
/// `planvault decide`).
pub(crate) fn parse_verdict(spec: &str) -> Result<Verdict> {
    let (item, rest) = spec
        .split_once('=')
        .with_context(|| format!("--decide {spec}: expected ITEM=approve|reject|LABEL[:NOTE]"))?;
    let (verdict, note) = rest
        .split_once(':')
        .map_or((rest, None), |(v, n)| (v, Some(n.trim())));
    let (approved, choice) = match verdict.trim() {
        "approve" | "approved" | "yes" => (true, None),
        "reject" | "rejected" | "no" => (false, None),
        "" => bail!("--decide {spec}: say approve, reject or the condition to take"),
        label => (true, Some(label.to_string())),
    };
    Ok(Verdict {
        item: item.trim().to_string(),
        approved,
        note: note.unwrap_or_default().to_string(),
        choice,
    })
}

/// `7=approve`, `7=reject:not today`, `gate=ship:looks right` (a condition
/// of a `type: human` note) → the person's recorded answer.
pub(crate) fn parse_decision(spec: &str) -> Result<planvault_core::engine::JournalEntry> {
    let Verdict {
        item,
        approved,
        note,
        choice,
    } = parse_verdict(spec)?;
    // A tool call waiting for approval is named by its journal key,
    // `node#visit/tool.N`, as the run printed it.
    let answer = planvault_runner::driver::human_answer(approved, note, choice);
    Ok(if item.contains("/tool.") {
        planvault_core::engine::JournalEntry {
            key: format!("{}:approve", item.trim()),
            answer,
            made_from: None,
        }
    } else {
        // The question waiting at that item, whichever visit it is.
        planvault_runner::driver::waiting_decision(item.trim(), answer)
    })
}

/// A decision naming a note by its path in the plan's folder (`approve`
/// for `plans/launch/approve`, as a person reads the folder) names it by
/// its id in the vault.
fn in_plan_folder(
    mut entry: planvault_core::engine::JournalEntry,
    plan: &Plan,
    folder: &str,
) -> planvault_core::engine::JournalEntry {
    let Some(hash) = entry.key.find('#') else {
        return entry;
    };
    let node = &entry.key[..hash];
    let known = |id: &str| plan.nodes.iter().any(|n| n.id == id);
    if !folder.is_empty() && !known(node) && known(&format!("{folder}/{node}")) {
        entry.key = format!("{folder}/{}", entry.key);
    }
    entry
}

/// Progress on stderr: one line per event, and a live character count while
/// a reply streams in (on a terminal only); the answer on stdout.
struct Progress {
    /// The path the person ran, for the `--decide` hint.
    path: String,
    /// The plan file amendments are written to: an isolated run's copy,
    /// else the one the person ran.
    amended: String,
    live: bool,
    /// Characters received of the reply streaming in (`None`: none is).
    receiving: Option<usize>,
    /// Why the run could not start.
    failed: Option<RunError>,
}

impl Progress {
    fn new(path: String) -> Self {
        Progress {
            amended: path.clone(),
            path,
            live: std::io::stderr().is_terminal(),
            receiving: None,
            failed: None,
        }
    }

    /// One progress line. Node ids, titles, tool names and server messages
    /// come from plan authors and servers: their control characters are
    /// written out, never sent to the terminal (the lines' own breaks stay).
    fn line(&mut self, text: &str) {
        self.end_receiving();
        // A stderr that cannot be written (a log on the full disk) is no
        // reason to stop a run.
        let _ = writeln!(std::io::stderr(), "{}", escape_controls(text, true));
    }

    fn message(&mut self, message: &FromWorker) {
        match message {
            FromWorker::Visit { node, visit } => self.line(&format!("→ {node} · visit {visit}")),
            // A server's tool has its own line, with its time (progress).
            // An MCP tool's line, its time and error, comes with its end.
            FromWorker::Tool { name, .. } if name.contains('.') => {}
            FromWorker::Tool {
                name, error: None, ..
            } => self.line(&format!("  tool {}", one_line(name))),
            FromWorker::Tool {
                name,
                error: Some(error),
                ..
            } => self.line(&format!(
                "  tool {} failed: {}",
                one_line(name),
                one_line(error)
            )),
            FromWorker::Delta { text, .. } => {
                let chars = self.receiving.unwrap_or(0) + text.chars().count();
                self.receiving = Some(chars);
                if self.live {
                    eprint!("\r  … {chars} characters");
                    let _ = std::io::stderr().flush();
                }
            }
            // A server's message may span lines (LiteLLM's do): one line here.
            FromWorker::Retrying { error, wait_ms, .. } => self.line(&format!(
                "  ! {}; retrying in {:.1}s",
                planvault_llm::error::one_line(&error.message),
                f64::from(*wait_ms) / 1000.0
            )),
            FromWorker::Finished {
                reason,
                answer,
                error,
            } => {
                self.line(&format!("■ {}", reason.describe()));
                if let Some(hint) = error.as_ref().and_then(|e| e.hint.as_ref()) {
                    self.line(&format!("  hint: {hint}"));
                }
                // The answer of a finished (or safety-stopped) run; a paused
                // or interrupted run has none yet.
                let answers = matches!(
                    reason,
                    FinishReason::Completed
                        | FinishReason::VisitBudget { .. }
                        | FinishReason::StepBudget { .. }
                );
                if let (true, Some(answer)) = (answers, answer) {
                    // The model's text, exact when piped; on a terminal its
                    // escape sequences are written out.
                    if std::io::stdout().is_terminal() {
                        outln!("{}", escape_controls(answer, true));
                    } else {
                        outln!("{answer}");
                    }
                }
            }
            FromWorker::Failed { error } => self.failed = Some(error.clone()),
            _ => {}
        }
    }

    fn progress(&mut self, progress: &planvault_runner::Progress<'_>) {
        use planvault_runner::Progress as P;
        match progress {
            P::Resuming {
                done,
                recorded,
                active,
            } => {
                let at = if active.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", continuing at {}",
                        planvault_core::diagnostic::name_list(active.iter())
                    )
                };
                self.line(&format!(
                    "resuming: {done} node(s) done, {recorded} answer(s) recorded{at}"
                ));
            }
            P::Judging {
                conditions,
                attempt,
            } => {
                let again = if *attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                };
                self.line(&format!("  judging {conditions} condition(s){again}"));
            }
            P::Command { node, command } => self.line(&format!("→ item {node} · $ {command}")),
            P::Invoke { node, capability } => self.line(&format!("→ {node} · {capability}")),
            P::Human {
                node,
                question,
                choices,
            } => {
                let verdicts = if choices.is_empty() {
                    "approve|reject".to_string()
                } else {
                    choices.join("|")
                };
                self.line(&format!(
                    "? {question}\n  answer with: planvault run {} --query … --decide {node}={verdicts}[:note]",
                    self.path
                ));
            }
            P::ToolsMissing(missing) => self.line(&format!(
                "  (not available in the terminal runner: {}; an MCP server in .planvault/config.toml can offer it)",
                planvault_core::diagnostic::name_list(missing.iter())
            )),
            P::McpCall {
                server,
                tool,
                ms,
                error,
                ..
            } => {
                let (server, tool) = (one_line(server), one_line(tool));
                self.line(&match error {
                    None => format!("  tool {server}.{tool} · {ms} ms"),
                    Some(e) => format!(
                        "  tool {server}.{tool} · {ms} ms · error: {}",
                        one_line(&e.chars().take(300).collect::<String>())
                    ),
                })
            }
            P::McpProgress {
                server,
                tool,
                progress,
                total,
                message,
            } => {
                let of = total.map(|t| format!("/{t}")).unwrap_or_default();
                let said = message
                    .map(|m| format!(" {}", one_line(&m.chars().take(300).collect::<String>())))
                    .unwrap_or_default();
                self.line(&format!(
                    "  … {}.{} {progress}{of}{said}",
                    one_line(server),
                    one_line(tool)
                ));
            }
            P::McpApproval {
                node,
                tool,
                arguments,
                key,
            } => {
                self.line(&format!(
                    "? {node} asks to call {} with {}",
                    one_line(tool),
                    approval_arguments(arguments)
                ));
                self.line(&format!(
                    "  answer with: planvault run {} --query … --autonomy ask --decide '{key}=approve' (or =reject)",
                    self.path
                ));
            }
            P::Hop(entry) => self.line(&format!(
                "  ↳ {} (decided by {})",
                entry.what,
                entry.decided_by.as_str()
            )),
            P::Amended => self.line(&format!("  amended {}", self.amended)),
            P::BoxesNotChecked { reason } => self.line(&format!(
                "  the boxes of items done were not checked in {}: {reason}",
                self.path
            )),
            P::DecisionUnused { node } => self.line(&format!(
                "  --decide {node}: no question of {node} was waiting in this run; nothing was recorded"
            )),
            P::OrderKept { parallel, at_most } => self.line(&format!(
                "  this run began {}: it goes on so (--fresh starts it over in the order given)",
                match (parallel, at_most) {
                    (true, Some(n)) => format!("in waves of at most {n} (--parallel {n})"),
                    (true, None) => "in waves (--parallel)".to_string(),
                    (false, _) => "one item at a time (without --parallel)".to_string(),
                }
            )),
            P::JournalRepaired { kept_aside } => self.line(&format!(
                "  the journal's last line was torn; kept aside in {kept_aside} and cut"
            )),
        }
    }

    fn end_receiving(&mut self) {
        if self.receiving.take().is_some() && self.live {
            eprintln!();
        }
    }
}

/// Text from outside (a model's, a server's) as one line: its line breaks
/// written out with the other controls, so it cannot print a line of its
/// own (a forged ending, a forged note under a question).
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(text, false)
}

/// A call's arguments as a person approving it reads them: every key, a
/// long value cut on its own with its length said, so a big `content` never
/// hides the `path` it goes to.
fn approval_arguments(arguments: &str) -> String {
    const VALUE_CHARS: usize = 200;
    let cut = |text: &str, limit: usize| {
        let total = text.chars().count();
        if total <= limit {
            return text.to_string();
        }
        let kept: String = text.chars().take(limit).collect();
        format!("{kept}… ({total} chars)")
    };
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(fields)) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(key, value)| {
                    format!(
                        "{}: {}",
                        one_line(key),
                        cut(&value.to_string(), VALUE_CHARS)
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        _ => one_line(&cut(arguments, 500)).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{approval_arguments, utc_stamp};

    #[test]
    fn a_long_value_never_hides_the_other_arguments_of_a_call_to_approve() {
        let content = "x".repeat(600);
        let arguments = serde_json::json!({ "content": content, "path": "/tmp/outbox/email.md" });
        let shown = approval_arguments(&arguments.to_string());
        assert!(shown.contains(r#"path: "/tmp/outbox/email.md""#), "{shown}");
        assert!(shown.contains("… (602 chars)"), "{shown}");
        assert!(shown.len() < 300, "{shown}");
        assert_eq!(approval_arguments(r#"{"q":"a"}"#), r#"{q: "a"}"#);
        let text = "y".repeat(700);
        assert_eq!(
            approval_arguments(&text),
            format!("{}… (700 chars)", "y".repeat(500))
        );
    }
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn run_stamps_are_utc_dates() {
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101-000000");
        let at = UNIX_EPOCH + Duration::from_secs(1_796_216_743);
        assert_eq!(utc_stamp(at), "20261202-130543");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_stamp(leap), "20000229-000000");
    }
}
