//! `planvault run --isolate` (or `[run] isolate = true`): the plan runs
//! with its state under the repository's git directory, its mutations in a
//! worktree on `planvault/<run-id>`; each attempt that completes is judged
//! by `[guard] verify`, after checking the locked files; a pass is staged,
//! receipted and committed, the last failure rolled back with a learnings
//! note. The decisions are `planvault_runner::guard`'s; this file only
//! strings the passes of the driver together.

use super::{exit_code, materialize, new_run_id, parse_decision, run_once, Once, RunArgs};
use anyhow::{bail, Context, Result};
use planvault_core::engine::trace::TRACE_DIR;
use planvault_core::engine::{FinishReason, Journal, JournalEntry};
use planvault_core::{Plan, PlanSource};
use planvault_runner::git::Repo;
use planvault_runner::guard::{self, Guard, ReceiptFacts};
use planvault_runner::mcp::{Server, Transport};
use planvault_runner::native::{NativeHost, VaultLock};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A resume goes on with the edits a person made in the checkout while
/// the run was paused, merged with the run's own changes to its copy
/// (statuses, checked boxes, amendments): `guard::take_checkout_edits`,
/// said on stderr. A conflict changes nothing and says where.
fn take_checkout_edits(checkout: &Path, base: &Path, run: &Path, files: &[String]) -> Result<()> {
    if !base.exists() {
        eprintln!(
            "note: this run began before planvault kept the checkout's state; edits made in the checkout since are not taken (--fresh starts over with them)"
        );
        return Ok(());
    }
    let taken = guard::take_checkout_edits(checkout, base, run, files).context(
        "the run cannot take the checkout's edits; nothing was changed: undo the edit where it meets the run's, or start over with --fresh",
    )?;
    if !taken.is_empty() {
        eprintln!(
            "  edits made in the checkout since the run paused, taken with the run's own: {}",
            taken.join(", ")
        );
    }
    Ok(())
}

/// The files of a plan's vault in the checkout and as the run took them,
/// but its trace and lock (the run's own).
fn vault_files(checkout: &Path, base: &Path) -> Result<Vec<String>> {
    let mut files = guard::files_under(checkout, &[TRACE_DIR])?;
    files.extend(guard::files_under(base, &[TRACE_DIR])?);
    files.sort();
    files.dedup();
    // Any run's own: a plan folder's trace or lock inside the vault too.
    files.retain(|f| {
        let lock = planvault_runner::native::LOCK_FILE;
        f != lock && !f.ends_with(&format!("/{lock}")) && !f.split('/').any(|c| c == TRACE_DIR)
    });
    Ok(files)
}

/// Tool names of an MCP server that write (their path arguments are
/// checked against the protected paths).
const WRITING: &[&str] = &[
    "write", "edit", "create", "move", "delete", "remove", "rename",
];
/// Argument names that carry a path.
const PATH_ARGS: &[&str] = &["path", "paths", "source", "destination", "file", "target"];

/// What an isolated run adds to the host.
pub struct Hooks {
    pub guard: Rc<RefCell<Guard>>,
    /// Called once the driver has started (its fresh reset done).
    pub started: Rc<dyn Fn()>,
    /// The plan file's folder, relative to the repository (commands' cwd).
    command_rel: String,
    /// The plan's vault in the repository, for `write_note` paths.
    vault_rel: String,
    /// A PLAN.md's copy the run amends (beside its run vault, under the
    /// repository's git directory), never the checkout's.
    pub plan_file: Option<PathBuf>,
    /// The folders (relative to the worktree) stdio servers start in: a
    /// relative path a writing tool is given is read from each, as its
    /// server may.
    server_folders: Rc<RefCell<Vec<String>>>,
}

impl Hooks {
    /// Commands run in the worktree (made on first need); `write_note` and
    /// writing MCP tools refuse protected paths.
    pub fn install(&self, host: NativeHost) -> NativeHost {
        let (g1, g2, g3) = (self.guard.clone(), self.guard.clone(), self.guard.clone());
        let rel = self.command_rel.clone();
        let vault_rel = self.vault_rel.clone();
        let folders = self.server_folders.clone();
        let vault_folder = self.vault_rel.clone();
        host.with_workdir(move || {
            let wt = g1
                .borrow_mut()
                .ensure_worktree()
                .map_err(|e| format!("isolation: {e}; the command did not run"))?;
            Ok(if rel.is_empty() { wt } else { wt.join(&rel) })
        })
        .with_note_guard(move |path| {
            let full = if vault_rel.is_empty() {
                path.to_string()
            } else {
                format!("{vault_rel}/{path}")
            };
            g2.borrow().locked_why(&full)
        })
        .with_mcp_guard(move |tool, arguments| {
            let lower = tool.to_ascii_lowercase();
            if !WRITING.iter().any(|w| lower.contains(w)) {
                return None;
            }
            let guard = g3.borrow();
            let mut paths = Vec::new();
            for name in PATH_ARGS {
                match &arguments[*name] {
                    serde_json::Value::String(p) => paths.push(p.clone()),
                    serde_json::Value::Array(items) => {
                        paths.extend(items.iter().filter_map(|v| v.as_str().map(str::to_string)))
                    }
                    _ => {}
                }
            }
            // A relative path is read from the worktree's top, the plan's
            // vault and each server's folder: whichever its server takes.
            let mut bases = vec![String::new(), vault_folder.clone()];
            bases.extend(folders.borrow().iter().cloned());
            paths.iter().find_map(|p| {
                if Path::new(p).is_absolute() {
                    return guard.refuse_write(p);
                }
                bases.iter().find_map(|base| match base.is_empty() {
                    true => guard.refuse_write(p),
                    false => guard.refuse_write(&format!("{base}/{p}")),
                })
            })
        })
    }

    /// Stdio servers whose folder or path arguments are in the checkout
    /// are pointed at the same place in the worktree (made now: a server
    /// needs its root to exist when it starts).
    pub fn remap_servers(&self, servers: Vec<Server>) -> Result<Vec<Server>> {
        let mut out = Vec::new();
        for mut server in servers {
            if let Transport::Stdio { args, cwd, env, .. } = &mut server.transport {
                // Its variables by name: a value may be a secret, never shown.
                let variables: Vec<(String, String)> = env
                    .iter()
                    .filter_map(|name| {
                        Some((format!("its variable {name}"), std::env::var(name).ok()?))
                    })
                    .collect();
                let guard = self.guard.borrow();
                let here = cwd
                    .clone()
                    .or_else(|| std::env::current_dir().ok())
                    .unwrap_or_default();
                let in_repo = |p: &Path| guard.repo().relative(p).is_some();
                let touches = in_repo(&here)
                    || args
                        .iter()
                        .any(|a| Path::new(a).is_absolute() && in_repo(Path::new(a)));
                drop(guard);
                if touches {
                    self.guard.borrow_mut().ensure_worktree()?;
                    let guard = self.guard.borrow();
                    if let Some(moved) = guard.remap(&here) {
                        // The plan's folder may be untracked, so not in the worktree.
                        std::fs::create_dir_all(&moved)
                            .with_context(|| format!("cannot create {}", moved.display()))?;
                        if let Ok(folder) = moved.strip_prefix(guard.worktree()) {
                            let folder = folder.to_string_lossy().replace('\\', "/");
                            self.server_folders.borrow_mut().push(folder);
                        }
                        *cwd = Some(moved);
                    }
                    for arg in args.iter_mut() {
                        // `/abs` or `--flag=/abs`: the path part moved.
                        let (flag, value) = match arg.split_once('=') {
                            Some((flag, value)) if Path::new(value).is_absolute() => {
                                (format!("{flag}="), value.to_string())
                            }
                            _ => (String::new(), arg.clone()),
                        };
                        if Path::new(&value).is_absolute() {
                            if let Some(moved) = guard.remap(Path::new(&value)) {
                                *arg = format!("{flag}{}", moved.display());
                            }
                        }
                    }
                }
                // What still names the checkout (`-r/path`, a variable's
                // value) would have the server write there, outside the
                // run's worktree.
                let guard = self.guard.borrow();
                let checkout = guard.repo().root().display().to_string();
                let names_checkout =
                    |text: &str| text == checkout || text.contains(&format!("{checkout}/"));
                let worktree = guard.worktree().display().to_string();
                let left = args
                    .iter()
                    .map(|arg| (format!("`{arg}`"), arg.as_str()))
                    .chain(
                        variables
                            .iter()
                            .map(|(name, value)| (name.clone(), value.as_str())),
                    )
                    .find(|(_, text)| names_checkout(text) && !text.contains(&worktree));
                if let Some((what, _)) = left {
                    bail!(
                        "MCP server {}: {what} names the checkout {checkout}, which an isolated run never writes; give the path as an argument of its own or as `--flag=PATH` (those are pointed at the run's worktree), or run without --isolate",
                        server.name
                    );
                }
            }
            out.push(server);
        }
        Ok(out)
    }
}

/// The isolated run of `plan` (read from `args.path`; `main_vault` is its
/// vault in the checkout, where a learnings note goes).
pub fn run(
    args: &RunArgs,
    stop: Arc<AtomicBool>,
    source: PlanSource,
    plan: Plan,
    config: &super::config::VaultConfig,
    endpoints: &super::config::Endpoints,
    proposal: bool,
) -> Result<ExitCode> {
    let main_vault = config.vault.as_path();
    let servers = config.servers(&endpoints.key_vars())?;
    if args.replay.is_some() {
        bail!("--replay calls no tool and changes nothing: it cannot be isolated");
    }
    let repo = Repo::discover(&args.path)?;
    let key = repo.relative(&args.path).with_context(|| {
        format!(
            "{} is not inside {}",
            args.path.display(),
            repo.root().display()
        )
    })?;
    let anchor = match &source {
        PlanSource::Vault(_) => args.path.clone(),
        _ => args
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let anchor_rel = repo.relative(&anchor).unwrap_or_default();
    let command_rel = match &source {
        PlanSource::Vault(_) => String::new(),
        _ => anchor_rel.clone(),
    };
    let vault_rel = match &source {
        PlanSource::Vault(_) => anchor_rel,
        _ => {
            let name = main_vault
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if anchor_rel.is_empty() {
                name
            } else {
                format!("{anchor_rel}/{name}")
            }
        }
    };
    let guard = Guard::open(
        repo,
        &key,
        args.fresh,
        endpoints.guard.clone(),
        &new_run_id(&args.path),
    )?;
    let run_id = guard.run_id();
    if let Some(outcome) = guard.finished() {
        eprintln!("isolated run {run_id} already ended ({outcome}); --fresh starts a new one");
        return Ok(ExitCode::from(if outcome == "committed" { 0 } else { 1 }));
    }
    let root = guard.vault_dir();
    eprintln!(
        "isolated run {run_id}: branch {}, worktree {}",
        guard.branch(),
        guard.worktree().display()
    );
    let new_run = guard.attempt() == 1 && !guard.attempt_running();
    if new_run {
        // The run's own vault, rebuilt from the plan as it is now.
        if root.exists() {
            std::fs::remove_dir_all(&root)
                .with_context(|| format!("cannot reset {}", root.display()))?;
        }
        std::fs::create_dir_all(&root)?;
        if let PlanSource::Vault(_) = &source {
            // The run's vault, and the checkout's notes as it took them:
            // the base a resume tells a person's edits since by.
            for copy in [root.clone(), guard.base_dir()] {
                if copy != root && copy.exists() {
                    std::fs::remove_dir_all(&copy)
                        .with_context(|| format!("cannot reset {}", copy.display()))?;
                }
                guard::copy_files(&args.path, &copy, &[TRACE_DIR])?;
                let _ = std::fs::remove_file(copy.join(planvault_runner::native::LOCK_FILE));
            }
        }
    }
    // The plan file a receipt hashes sits beside the run's vault, as a
    // PLAN.md beside its `PLAN.run/`: the run's own copy, which a
    // PLAN.md's amendments change (the checkout is never written).
    let name = args
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let beside = guard.state_dir().join(&name);
    let _lock = match VaultLock::acquire(&root) {
        Ok(lock) => lock,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(5));
        }
    };
    // A resume of a vault's run takes the edits made in the checkout since,
    // once its vault is its own, while an attempt is still to run: past
    // the verdict the work is judged, and its receipt binds the notes it ran.
    let vault_resumed = !new_run && matches!(source, PlanSource::Vault(_));
    if vault_resumed && guard.verdict().is_none() {
        let base = guard.base_dir();
        take_checkout_edits(&args.path, &base, &root, &vault_files(&args.path, &base)?)?;
    }
    let guard = Rc::new(RefCell::new(guard));
    let hooks = Hooks {
        guard: guard.clone(),
        started: {
            let guard = guard.clone();
            Rc::new(move || {
                if let Err(e) = guard.borrow_mut().mark_running() {
                    eprintln!("error: {e}");
                }
            })
        },
        command_rel,
        vault_rel,
        plan_file: matches!(source, PlanSource::PlanMd { .. }).then(|| beside.clone()),
        server_folders: Rc::default(),
    };
    let user_decisions = args
        .decide
        .iter()
        .map(|d| parse_decision(d))
        .collect::<Result<Vec<_>>>()?;
    let attempts = endpoints.guard.attempts.max(1);
    loop {
        // A resume picks up at the step the log ends on.
        let tampered = guard.borrow().tampered();
        if let Some(file) = tampered {
            let attempt = guard.borrow().attempt();
            return roll_back(
                &guard,
                main_vault,
                &format!(
                    "The run was stopped as tampering: the locked file `{file}` changed during attempt {attempt}."
                ),
            );
        }
        let verdict = guard.borrow().verdict();
        if verdict.is_none() {
            let (attempt, running) = {
                let g = guard.borrow();
                (g.attempt(), g.attempt_running())
            };
            // An attempt begins from the plan as the checkout has it; its
            // resume goes on with the run's copy (its boxes checked, its
            // amendments) and the person's edits to the checkout since.
            let (mut plan, plan_source) = match &source {
                PlanSource::Vault(_) => (read_vault_plan(&root)?, None),
                PlanSource::PlanMd { text, .. } | PlanSource::Generated { text, .. } => {
                    let amendable = matches!(source, PlanSource::PlanMd { .. });
                    let base = guard.borrow().base_dir();
                    if amendable && running && beside.exists() {
                        let checkout = args.path.parent().unwrap_or(Path::new(""));
                        let checkout = if checkout.as_os_str().is_empty() {
                            Path::new(".")
                        } else {
                            checkout
                        };
                        take_checkout_edits(
                            checkout,
                            &base,
                            guard.borrow().state_dir(),
                            std::slice::from_ref(&name),
                        )?;
                    }
                    let copy = std::fs::read_to_string(&beside).ok();
                    match copy {
                        Some(copy) if amendable && running && copy != *text => {
                            let checked = planvault_core::check(&PlanSource::PlanMd {
                                file: name.clone(),
                                text: copy.clone(),
                            });
                            if checked.has_errors() {
                                let said: Vec<String> = checked
                                    .diagnostics
                                    .iter()
                                    .map(|d| d.render_human())
                                    .collect();
                                bail!(
                                    "{} (the run's copy of the plan, with the checkout's edits since) is unsound:\n{}",
                                    beside.display(),
                                    said.join("\n")
                                );
                            }
                            (checked.plan, Some((name.clone(), copy)))
                        }
                        _ => {
                            std::fs::create_dir_all(&base)
                                .with_context(|| format!("cannot write {}", base.display()))?;
                            for file in [beside.clone(), base.join(&name)] {
                                std::fs::write(&file, text)
                                    .with_context(|| format!("cannot write {}", file.display()))?;
                            }
                            (plan.clone(), Some((name.clone(), text.clone())))
                        }
                    }
                }
            };
            let plan_md = match &source {
                PlanSource::PlanMd { .. } => plan_source.as_ref().map(|(_, text)| text.clone()),
                _ => None,
            };
            if !matches!(source, PlanSource::Vault(_)) {
                materialize(&root, &mut plan, !running)?;
            }
            let decisions = if attempt > 1 && !running {
                carried_decisions(&guard.borrow(), attempt - 1)
            } else {
                user_decisions.clone()
            };
            let once = Once {
                root: &root,
                plan,
                plan_md,
                replay: None,
                decisions,
                query: attempt_query(&args.model.query, &guard.borrow(), attempts),
                fresh: !running,
                plan_source: plan_source.clone(),
                run_id: Some(run_id.clone()),
                proposal,
                folder: String::new(),
                servers: servers.clone(),
            };
            let (reason, progress) = run_once(args, endpoints, &stop, once, Some(&hooks))?;
            match &reason {
                Some(FinishReason::Completed) => {}
                // A safety stop is not resumed: the attempt's changes go.
                Some(FinishReason::StepBudget { .. } | FinishReason::VisitBudget { .. }) => {
                    let why = format!(
                        "The plan hit its safety stop ({}) in attempt {attempt}; the run's changes were rolled back.",
                        reason.as_ref().map(FinishReason::describe).unwrap_or_default()
                    );
                    return roll_back(&guard, main_vault, &why).map(|_| ExitCode::from(3));
                }
                _ => return exit_code(reason, &progress, &stop),
            }
            let _ = progress;
            let mut g = guard.borrow_mut();
            g.ensure_worktree()?;
            if matches!(source, PlanSource::Vault(_)) {
                carry_notes(&mut g, &hooks.vault_rel, &root)?;
            }
            if g.check_tamper()?.is_some() {
                drop(g);
                continue;
            }
            let Some((exit, _)) = g.verify(Some(&stop))? else {
                eprintln!("■ interrupted while the verifier ran (resumable: run again to verify)");
                return Ok(ExitCode::from(5));
            };
            eprintln!(
                "  verifier: attempt {}/{attempts} {}",
                g.attempt(),
                if exit == 0 {
                    "passed".to_string()
                } else {
                    format!("failed (exit {exit})")
                }
            );
            continue;
        }
        let (exit, _) = verdict.unwrap_or_default();
        if exit == 0 {
            let commit = guard
                .borrow_mut()
                .commit(&mut |facts: &ReceiptFacts<'_>| write_receipt(&root, facts))?;
            let g = guard.borrow();
            let receipt = g
                .steps()
                .iter()
                .find_map(|s| match s {
                    guard::Step::Receipt { id } => Some(id.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            eprintln!(
                "■ committed {} on {} (receipt {receipt})",
                &commit[..commit.len().min(12)],
                g.branch()
            );
            return Ok(ExitCode::SUCCESS);
        }
        let attempt = guard.borrow().attempt();
        if attempt < attempts {
            guard.borrow_mut().next_attempt()?;
            eprintln!(
                "  back to the plan's start: attempt {}/{attempts}",
                attempt + 1
            );
            continue;
        }
        return roll_back(
            &guard,
            main_vault,
            &format!("The verifier failed {attempt} time(s); the run's changes were rolled back."),
        );
    }
}

/// The notes the run's `write_note` wrote in its vault go into the
/// worktree before the verifier judges it, as its commands' work does:
/// said on stderr, and those left where the run's own work changed them.
fn carry_notes(guard: &mut Guard, vault_rel: &str, root: &Path) -> Result<()> {
    // The plan's notes as the run took them from the checkout: a note a
    // tool wrote reads as one more (loose) note of the run's copy.
    let base = guard.base_dir();
    let plan = crate::input::read_plan(&base, None, crate::input::Enclosing::Itself)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .check()
        .plan;
    let plan_notes: Vec<String> = (0..plan.nodes.len())
        .map(|i| planvault_core::vault::note_file(&plan, i))
        .collect();
    let done = guard.carry_notes(vault_rel, &plan_notes)?;
    if !done.carried.is_empty() {
        eprintln!(
            "  notes the run wrote, in the worktree for the verifier and the commit: {}",
            done.carried.join(", ")
        );
    }
    for (path, why) in &done.kept {
        eprintln!(
            "warning: {path} is not in the commit as the run wrote it: {why}; the run's text is in {}",
            root.join(path.strip_prefix(&format!("{vault_rel}/")).unwrap_or(path)).display()
        );
    }
    Ok(())
}

/// The learnings note, the escalated receipt, the worktree and branch gone.
fn roll_back(guard: &Rc<RefCell<Guard>>, main_vault: &Path, why: &str) -> Result<ExitCode> {
    let root = guard.borrow().vault_dir();
    let note = guard
        .borrow_mut()
        .roll_back(main_vault, why, &mut |facts: &ReceiptFacts<'_>| {
            write_receipt(&root, facts)
        })?;
    eprintln!("■ rolled back: {why}\n  learnings: {}", note.display());
    Ok(ExitCode::from(1))
}

/// A vault plan as its run vault holds it now.
fn read_vault_plan(root: &Path) -> Result<Plan> {
    let read = crate::input::read_plan(root, None, crate::input::Enclosing::Itself)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let checked = read.check();
    if checked.has_errors() {
        bail!(
            "the run's copy of the vault ({}) is unsound",
            root.display()
        );
    }
    Ok(checked.plan)
}

/// A person's decisions of the attempt before (the approval gate is not
/// asked again): its archived journal's human and approval answers.
fn carried_decisions(guard: &Guard, attempt: u32) -> Vec<JournalEntry> {
    let path = guard
        .state_dir()
        .join("attempts")
        .join(attempt.to_string())
        .join("journal.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Journal::from_jsonl(&text)
        .map(|j| {
            j.entries
                .into_iter()
                .filter(|e| e.key.ends_with(":human") || e.key.ends_with(":approve"))
                .collect()
        })
        .unwrap_or_default()
}

/// The query of an attempt after a failed one: the verifier's word added.
fn attempt_query(query: &str, guard: &Guard, attempts: u32) -> String {
    let mut out = query.to_string();
    for (attempt, exit, output) in guard.failures() {
        out.push_str(&format!(
            "\n\nAttempt {attempt} of {attempts} failed verification (`{}`, exit {exit}):\n```\n{}\n```",
            guard.config().verify.as_deref().unwrap_or_default(),
            output.trim_end()
        ));
    }
    if guard.attempt() > 1 {
        out.push_str(&format!(
            "\n\nThis is attempt {} of {attempts}: the earlier attempts' changes are still in place; fix what the verifier reports.",
            guard.attempt()
        ));
    }
    out
}

/// The run's final receipt, written over the one the driver left in the
/// run's vault (same plan and journal): the locked files' SHA-256 (read
/// from their blobs at the start), the staged tree, the attempts, the
/// outcome. Its id.
fn write_receipt(root: &Path, facts: &ReceiptFacts<'_>) -> Result<String, String> {
    use planvault_core::engine::journal::{sha256_hex, verify_chain};
    use planvault_core::engine::trace::JOURNAL_FILE;
    use planvault_runner::receipt::{Outcome, Receipt, ReceiptParts, RECEIPT_JSON, RECEIPT_NOTE};
    let read = |rel: &str| {
        let path = root.join(rel);
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let last =
        Receipt::from_json(&read(RECEIPT_JSON)?).map_err(|e| format!("{RECEIPT_JSON}: {e}"))?;
    let head = verify_chain(&read(JOURNAL_FILE)?).map_err(|e| format!("{JOURNAL_FILE}: {e}"))?;
    let mut hashes = std::collections::BTreeMap::new();
    for (file, blob) in facts.verifier_hashes {
        let bytes = facts.repo.read_blob(blob).map_err(|e| e.to_string())?;
        hashes.insert(file.clone(), sha256_hex(&bytes));
    }
    let receipt = Receipt::build(ReceiptParts {
        run_id: facts.run_id.to_string(),
        plan_hash: last.plan_hash,
        plan_source: last.plan_source,
        journal_head: head.hash,
        journal_entries: head.entries,
        verifier_hashes: hashes,
        tree: facts.tree.map(str::to_string),
        attempts: facts.attempts,
        outcome: if facts.outcome == "committed" {
            Outcome::Completed
        } else {
            Outcome::Escalated
        },
    });
    for (rel, text) in [
        (RECEIPT_JSON, receipt.to_json()),
        (RECEIPT_NOTE, receipt.to_note()),
    ] {
        let path = root.join(rel);
        planvault_runner::native::write_atomic(&path, &text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(receipt.id)
}
