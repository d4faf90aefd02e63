//! A Temporal run holds the vault's `.planvault/run.lock` as every run does
//! (`planvault_runner::lock`), with `host=temporal` and its workflow id as
//! the holder: no single process holds it, so it is taken by an activity at
//! the run's start and given back by another at its end. A `planvault run`
//! or a browser run of the vault is refused while it is held, and a
//! Temporal run is refused a vault one of them (or another Temporal run)
//! holds. The same workflow taking its own lock again passes: a retried
//! activity, a worker lost after the file was written, or a failed run
//! submitted again under its name.

use crate::activities::{blocking, vault_root};
use crate::workflow::PlanvaultRun;
use planvault_runner::lock::{Holder, LOCK_FILE};
use planvault_runner::native::stale;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::Path;
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_workflow::{ActivityOptions, WorkflowContext};

/// The lock's activities' input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LockIn {
    pub vault: String,
    /// The workflow id: who holds the lock.
    pub run: String,
    /// A plan folder's own lock (`planvault_runner::lock::folder_lock`),
    /// vault-relative; empty: the vault's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub folder: String,
}

impl LockIn {
    /// The lock file's folder on this worker, and its path as a refusal names it.
    fn place(&self) -> Result<(std::path::PathBuf, String), ActivityError> {
        let root = vault_root(&self.vault)?;
        Ok(match self.folder.is_empty() {
            true => (root, LOCK_FILE.to_string()),
            false => (
                root.join(&self.folder),
                planvault_runner::lock::folder_lock(&self.folder),
            ),
        })
    }
}

/// Take the vault for `me`: created exclusively; a file that is already
/// `me`'s is kept; a stale terminal run's (a process of this machine that
/// has ended) is taken over; anyone else's is refused, naming them.
/// `Ok(Err(why))` is the refusal, `Err` an I/O failure.
pub fn take(root: &Path, me: &Holder, shown: &str) -> std::io::Result<Result<(), String>> {
    let path = root.join(LOCK_FILE);
    if let Some(parent) = path.parent() {
        planvault_runner::native::lock_folder(parent)?;
    }
    for _ in 0..2 {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(me.render().as_bytes())?;
                file.sync_data()?;
                return Ok(Ok(()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = Holder::parse(&fs::read_to_string(&path).unwrap_or_default());
                if holder == *me {
                    return Ok(Ok(()));
                }
                if !stale(&holder) {
                    return Ok(Err(holder.refusal(shown)));
                }
                let _ = fs::remove_file(&path);
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("the lock kept changing"))
}

/// Give the vault back: the file goes only if it is still `me`'s.
pub fn release(root: &Path, me: &Holder) -> std::io::Result<()> {
    let path = root.join(LOCK_FILE);
    match fs::read_to_string(&path) {
        Ok(text) if Holder::parse(&text) == *me => match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The lock's activities (vault activities: retried by Temporal, and
/// idempotent, since taking one's own lock again passes).
pub struct LockActivities;

#[activities]
impl LockActivities {
    /// `Err(why)`: another run holds the vault.
    #[activity]
    pub async fn take(
        _ctx: ActivityContext,
        input: LockIn,
    ) -> Result<Result<(), String>, ActivityError> {
        // A PLAN.md's or generated plan's run vault (`<stem>.run/`) may not
        // exist yet: made beside its plan file, as `planvault run` makes it
        // before it locks it; a missing plan folder is still the worker's.
        let path = std::path::PathBuf::from(&input.vault);
        if path.is_absolute() && !path.exists() && path.parent().is_some_and(Path::is_dir) {
            let _ = fs::create_dir(&path);
        }
        let (root, shown) = input.place()?;
        blocking(move || take(&root, &Holder::temporal(&input.run), &shown))
            .await?
            .map_err(|e| crate::activities::failure(format!("{LOCK_FILE}: {e}")))
    }

    #[activity]
    pub async fn release(_ctx: ActivityContext, input: LockIn) -> Result<(), ActivityError> {
        let (root, _) = input.place()?;
        blocking(move || release(&root, &Holder::temporal(&input.run)))
            .await?
            .map_err(|e| crate::activities::failure(format!("{LOCK_FILE}: {e}")))
    }
}

/// The workflow's side: take the lock (`Err`: why the run may not start).
pub async fn hold(
    ctx: &WorkflowContext<PlanvaultRun>,
    input: LockIn,
    options: ActivityOptions,
) -> Result<(), String> {
    ctx.execute_activity(LockActivities::take, input, options)
        .await
        .map_err(|e| format!("cannot lock the vault ({LOCK_FILE}): no worker could: {e}"))?
}

/// The workflow's side: give the lock back. A failure leaves the file,
/// whose text names this run and how to remove it.
pub async fn give_back(
    ctx: &WorkflowContext<PlanvaultRun>,
    input: LockIn,
    options: ActivityOptions,
) {
    let _ = ctx
        .execute_activity(LockActivities::release, input, options)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_retakes_its_own_lock_and_is_refused_anyone_elses() {
        let dir = tempfile::tempdir().unwrap();
        let me = Holder::temporal("planvault-0123456789ab-main");
        take(dir.path(), &me, LOCK_FILE).unwrap().unwrap();
        let file = dir.path().join(LOCK_FILE);
        assert_eq!(fs::read_to_string(&file).unwrap(), me.render());
        // A worker lost after writing it, the activity retried elsewhere.
        take(dir.path(), &me, LOCK_FILE).unwrap().unwrap();

        let other = Holder::temporal("planvault-0123456789ab-other");
        let why = take(dir.path(), &other, LOCK_FILE).unwrap().unwrap_err();
        assert!(
            why.contains("the Temporal run planvault-0123456789ab-main"),
            "{why}"
        );
        release(dir.path(), &other).unwrap();
        assert!(file.exists(), "not the other run's to remove");
        release(dir.path(), &me).unwrap();
        assert!(!file.exists());
        release(dir.path(), &me).unwrap();

        // A terminal run that is running (this process) is refused…
        let here = planvault_runner::native::host_name();
        fs::write(&file, Holder::process(std::process::id(), &here).render()).unwrap();
        let why = take(dir.path(), &me, LOCK_FILE).unwrap().unwrap_err();
        assert!(
            why.contains(&format!("process {}", std::process::id())),
            "{why}"
        );
        // …one that ended on this machine is taken over.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        fs::write(&file, Holder::process(dead, &here).render()).unwrap();
        take(dir.path(), &me, LOCK_FILE).unwrap().unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), me.render());
    }
}
