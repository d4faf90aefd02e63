//! `planvault receipt verify PATH`: recompute what a run's receipt says
//! (its id, the journal's hash chain and head, the plan's hash, the
//! verifier files' hashes, the commit that carries it) and say what
//! differs. The comparisons are `planvault_runner::receipt`'s; this reads
//! the files and asks `git`.

use clap::{Args, Subcommand};
use planvault_core::engine::trace::JOURNAL_FILE;
use planvault_core::terminal::escape_controls;
use planvault_core::vault::{too_large, RUN_FILE_MAX_BYTES};
use planvault_runner::git::Repo;
use planvault_runner::native::{read_bounded, NativeHost};
use planvault_runner::receipt::{self, Check, Receipt, RECEIPT_JSON};
use planvault_runner::{block_on, Host};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ReceiptCommand {
    /// Recompute a run's receipt: exit 0 when the receipt, the journal, the
    /// plan, the verifier files and the commit agree, 1 naming what
    /// differs, 2 when there is no receipt to read.
    Verify(VerifyArgs),
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The run's vault (a PLAN.md's `<name>.run/`) or its
    /// `00_plan-trace/receipt.json`.
    path: PathBuf,
    /// Print `{"receipt", "ok", "checks": [...]}`.
    #[arg(long)]
    json: bool,
}

pub fn run(command: ReceiptCommand) -> ExitCode {
    match command {
        ReceiptCommand::Verify(args) => verify(&args),
    }
}

fn verify(args: &VerifyArgs) -> ExitCode {
    let (vault, receipt) = match read(&args.path) {
        Ok(read) => read,
        Err(message) => {
            eprintln!("error: {}", escape_controls(&message, true));
            return ExitCode::from(2);
        }
    };
    let checks = checks(&vault, &receipt);
    let ok = checks.iter().all(|c| c.ok);
    if args.json {
        let out = serde_json::json!({ "receipt": receipt.id, "ok": ok, "checks": checks });
        outln!(
            "{}",
            serde_json::to_string_pretty(&out).expect("checks serialize")
        );
    } else {
        for c in &checks {
            let mark = if c.ok { "ok  " } else { "FAIL" };
            outln!("{mark} {}: {}", c.check, escape_controls(&c.message, true));
        }
        let failed: Vec<&str> = checks.iter().filter(|c| !c.ok).map(|c| c.check).collect();
        if ok {
            outln!("receipt {} verified", receipt.id);
        } else {
            outln!(
                "receipt {} does not match: {}",
                escape_controls(&receipt.id, true),
                failed.join(", ")
            );
        }
    }
    ExitCode::from(if ok { 0 } else { 1 })
}

/// The vault and its receipt, from either path.
fn read(path: &Path) -> Result<(PathBuf, Receipt), String> {
    let (vault, file) = if path.is_dir() {
        (path.to_path_buf(), path.join(RECEIPT_JSON))
    } else {
        // …/00_plan-trace/receipt.json → the vault two folders up.
        let vault = path
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        (vault, path.to_path_buf())
    };
    // As any plan file is read: a regular file, bounded, UTF-8.
    let text = crate::input::read_text(&file).map_err(|e| {
        format!("{e} (a receipt is written when a run completes, fails or is escalated)")
    })?;
    let receipt =
        Receipt::from_json(&text).map_err(|e| format!("{} is no receipt: {e}", file.display()))?;
    let vault = if vault.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        vault
    };
    Ok((vault, receipt))
}

fn checks(vault: &Path, receipt: &Receipt) -> Vec<Check> {
    // The run's own host: the vault as the run listed and read it.
    let host = NativeHost::new(vault);
    let read = |path: &str| block_on(host.read(path)).and_then(Result::ok).flatten();
    let mut checks = vec![receipt.check_id()];
    checks.push(receipt.check_journal(&read(JOURNAL_FILE).unwrap_or_default()));
    let plan = match &receipt.plan_source {
        Some(name) => vault
            .parent()
            // A plan file beside the run vault, by its name only.
            .filter(|_| !name.contains(['/', '\\']))
            .and_then(|dir| read_inside(dir, name).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(|text| receipt::plan_hash(&BTreeMap::from([(name.clone(), text)]))),
        None => {
            let listed = block_on(host.list())
                .and_then(Result::ok)
                .unwrap_or_default();
            let files: BTreeMap<String, String> = listed
                .into_iter()
                .filter(|p| planvault_core::vault::is_plan_note(p))
                .filter_map(|p| read(&p).map(|text| (p, text)))
                .collect();
            Some(receipt::plan_hash(&receipt::plan_sources(&files)))
        }
    };
    checks.push(match plan {
        Some(hash) => receipt.check_plan(&hash),
        None => receipt.check_plan("(the plan file is missing)"),
    });
    // The repository the vault lives in (an isolated run's vault lives in
    // its `.git/planvault/`).
    let repo = Repo::discover(vault).ok();
    let base = repo
        .as_ref()
        .map_or_else(|| vault.to_path_buf(), |r| r.root().to_path_buf());
    checks.extend(receipt.check_verifiers(|path| read_inside(&base, path)));
    if receipt.tree.is_some() {
        let commits = repo
            .as_ref()
            .map(|r| r.commits_naming(&receipt.id).unwrap_or_default());
        checks.extend(receipt.check_commit(commits.as_deref()));
    }
    checks
}

/// A file a receipt names, read only where it lies inside `base` (as
/// written: from `base`, with no `..`; after links: still inside), a
/// regular file, of at most [`RUN_FILE_MAX_BYTES`]: a shipped receipt
/// naming `/dev/zero` or `../../etc/passwd` has nothing read, nor hashed.
fn read_inside(base: &Path, rel: &str) -> Result<Vec<u8>, String> {
    use std::path::Component;
    let relative = Path::new(rel)
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    let real = std::fs::canonicalize(base.join(rel));
    let inside = std::fs::canonicalize(base)
        .ok()
        .zip(real.as_ref().ok())
        .is_some_and(|(base, real)| real.starts_with(base));
    match real {
        Ok(_) if !relative || !inside => Err("lies outside the repository: not read".into()),
        Ok(real) if !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) => {
            Err("is no regular file: not read".into())
        }
        Ok(real) => match read_bounded(&real, RUN_FILE_MAX_BYTES) {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(size)) => Err(format!("{}: not read", too_large(size, RUN_FILE_MAX_BYTES))),
            Err(e) => Err(format!("cannot be read: {e}")),
        },
        Err(_) if !relative => Err("lies outside the repository: not read".into()),
        Err(_) => Err("is missing".into()),
    }
}
