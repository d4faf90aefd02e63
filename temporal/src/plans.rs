//! A PLAN.md or generated plan run through Temporal as `planvault run`
//! runs it: the plan file is read by the workflow through the vault
//! activities over the file's folder, checked, and its notes written into
//! the run vault beside it (`<stem>.run/`) unless already there, their
//! statuses read back (the CLI's `materialize`, with every read and write
//! an activity, so a write is compare-and-swap and a retried one lands
//! once). The runner then runs that plan over the run vault.

use crate::host::TemporalHost;
use crate::workflow::PlanvaultRun;
use crate::{PlanForm, Submission};
use planvault_core::engine::trace::JOURNAL_FILE;
use planvault_core::engine::Journal;
use planvault_core::{generated, Plan, PlanSource, Status};
use planvault_protocol::{ErrorCode, RunError};
use planvault_runner::{Host, HostError};
use std::collections::BTreeMap;
use std::path::{Component, Path};
use temporalio_workflow::WorkflowContext;

/// What the runner takes beyond a vault run's options.
pub struct Prepared {
    /// The plan with each node's status as its run vault holds it.
    pub plan: Plan,
    /// A PLAN.md's text (what amendments start from).
    pub plan_text: Option<String>,
    /// The plan file's name and text: what the receipt hashes.
    pub plan_source: (String, String),
    /// A PLAN.md's folder host and name, which amend it and run commands.
    pub plan_file: Option<(TemporalHost, String)>,
}

fn vault_error(error: HostError) -> RunError {
    RunError::new(ErrorCode::VaultIo, format!("cannot use the vault: {error}"))
        .with_hint("check that every worker mounts the plan's folder, then submit again")
}

/// The plan file's folder, its name, and the run vault's name in that
/// folder; `None` when the submission's run vault is not beside the file.
fn layout<'a>(file: &'a str, vault: &'a str) -> Option<(&'a str, &'a str, &'a str)> {
    let path = Path::new(file);
    let folder = path.parent()?;
    let name = path.file_name()?.to_str()?;
    let mut inside = Path::new(vault).strip_prefix(folder).ok()?.components();
    let (Some(Component::Normal(run)), None) = (inside.next(), inside.next()) else {
        return None;
    };
    Some((folder.to_str()?, name, run.to_str()?))
}

/// Read, check and materialize a PLAN.md or generated plan; `None` for a
/// vault (the runner reads it itself).
pub async fn prepare(
    ctx: &WorkflowContext<PlanvaultRun>,
    submission: &Submission,
) -> Result<Option<Prepared>, RunError> {
    let Some(file) = submission.form.file() else {
        return Ok(None);
    };
    let Some((folder, name, run_dir)) = layout(file, &submission.vault) else {
        return Err(RunError::new(
            ErrorCode::PlanInvalid,
            format!(
                "{file}: its run vault {} is not beside it",
                submission.vault
            ),
        ));
    };
    let host = TemporalHost::new(
        ctx.clone(),
        folder.to_string(),
        submission.host.clone(),
        submission.activity.clone(),
    );
    let text = host.read(name).await.map_err(vault_error)?.ok_or_else(|| {
        RunError::new(ErrorCode::VaultIo, format!("{file}: no such file"))
            .with_hint("every worker must reach the plan at the path it was submitted from")
    })?;
    let source = match &submission.form {
        PlanForm::PlanMd { .. } => PlanSource::PlanMd {
            file: name.to_string(),
            text: text.clone(),
        },
        _ => PlanSource::Generated {
            file: name.to_string(),
            text: text.clone(),
            options: generated::Options::default(),
        },
    };
    let checked = planvault_core::check(&source);
    if checked.has_errors() {
        let said: Vec<String> = checked
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.render_human())
            .collect();
        return Err(RunError::new(
            ErrorCode::PlanInvalid,
            format!("{file} is unsound; nothing ran:\n{}", said.join("\n")),
        ));
    }
    let mut plan = checked.plan;
    if ctx.patched("run-vault-notes-bound") {
        // As the terminal's `materialize`: afresh for a new run, and on a
        // resume each note kept only while its item reads as it did.
        let journal = format!("{run_dir}/{JOURNAL_FILE}");
        let recorded = host.read(&journal).await.map_err(vault_error)?;
        let resuming = !submission.start.fresh && recorded.is_some();
        // The item the run was at, with nothing on record (cut off during
        // its model call), changed in the file: new, as the terminal has it.
        // Before that patch, any item the run had reached had run.
        let recorded = match ctx.patched("run-vault-active-unanswered") {
            true => recorded.and_then(|text| Journal::from_jsonl(&text).ok()),
            false => None,
        };
        let answered = |id: &str| {
            recorded
                .as_ref()
                .is_none_or(|journal| journal.answers_node(id))
        };
        let mut on_disk = BTreeMap::new();
        if resuming {
            for note in planvault_core::vault::save_plan(&plan).into_keys() {
                let path = format!("{run_dir}/{note}");
                if let Some(text) = host.read(&path).await.map_err(vault_error)? {
                    on_disk.insert(note, text);
                }
            }
        }
        let write =
            planvault_core::vault::run_vault_notes(&mut plan, &on_disk, resuming, &answered)
                .map_err(|changed| {
                    RunError::new(
                        ErrorCode::PlanInvalid,
                        planvault_core::vault::plan_changed(run_dir, &changed),
                    )
                })?;
        for (note, text) in write {
            let path = format!("{run_dir}/{note}");
            host.write(&path, &text).await.map_err(vault_error)?;
        }
        return Ok(Some(prepared(submission, plan, host, name, text)));
    }
    // Before that patch: written where missing (all of them on a fresh
    // start), else read back; an item marked `[x]` stays done.
    let mut notes = BTreeMap::new();
    for (note, rendered) in planvault_core::vault::save_plan(&plan) {
        let path = format!("{run_dir}/{note}");
        let kept = match host.read(&path).await.map_err(vault_error)? {
            Some(on_disk) if !submission.start.fresh => on_disk,
            _ => {
                host.write(&path, &rendered).await.map_err(vault_error)?;
                rendered
            }
        };
        notes.insert(note, kept);
    }
    let (saved, _) = planvault_core::vault::load(&notes);
    for node in &mut plan.nodes {
        if let Some(note) = saved.nodes.iter().find(|n| n.id == node.id) {
            if node.status != Status::Done {
                node.status = note.status;
            }
        }
    }
    Ok(Some(prepared(submission, plan, host, name, text)))
}

fn prepared(
    submission: &Submission,
    plan: planvault_core::Plan,
    host: TemporalHost,
    name: &str,
    text: String,
) -> Prepared {
    let is_plan_md = matches!(submission.form, PlanForm::PlanMd { .. });
    Prepared {
        plan,
        plan_text: is_plan_md.then(|| text.clone()),
        plan_source: (name.to_string(), text),
        plan_file: is_plan_md.then(|| (host, name.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::layout;

    #[test]
    fn a_run_vault_is_the_folder_beside_its_plan_file() {
        assert_eq!(
            layout("/srv/plans/PLAN.md", "/srv/plans/PLAN.run"),
            Some(("/srv/plans", "PLAN.md", "PLAN.run"))
        );
        assert_eq!(layout("/srv/plans/PLAN.md", "/srv/other/PLAN.run"), None);
        assert_eq!(layout("/srv/plans/PLAN.md", "/srv/plans/a/PLAN.run"), None);
        assert_eq!(layout("/srv/plans/PLAN.md", "/srv/plans"), None);
    }
}
