//! A run's integrity receipt: what ran (the plan's hash), what it was told
//! (the journal's chain head), what judged it (the verifier files' hashes),
//! what it produced (the staged git tree, when isolated), how often it was
//! verified and how it ended. Written at the end of every run that
//! finished for good, as `00_plan-trace/receipt.json` and a readable
//! `00_plan-trace/receipt.md`; `planvault receipt verify` recomputes it.
//!
//! **Which runs get one** ([`outcome_of`]): `completed` → completed; a
//! safety stop (a node's `max_visits`, the run's `max_steps`: the bound on
//! attempts was used up) → escalated; a failed node, an unrunnable plan
//! or a diverged replay → failed. A run that can resume (awaiting a
//! person, interrupted, stopped) gets none: it is not over, and a new run
//! removes the receipt of the one before.
//!
//! **The API for isolated runs** (the git side fills what it knows):
//! ```ignore
//! let receipt = Receipt::build(ReceiptParts {
//!     run_id, plan_hash, plan_source, journal_head, journal_entries,
//!     verifier_hashes,          // path (from the repository's top, `/`) → sha256 hex
//!     tree: Some(tree_id),      // `git write-tree` of the staged worktree
//!     attempts, outcome: Outcome::Completed,
//! });
//! receipt::write(host, &receipt).await?;  // receipt.json + receipt.md
//! let message = format!("{subject}\n\n{}", receipt.commit_message_trailer());
//! ```
//! The tree is the one staged *before* the receipt is written: the receipt
//! files are never inside the tree they name. `receipt verify` finds the
//! commit whose message carries [`Receipt::id`] and checks its tree.

use crate::host::{Host, HostError};
use planvault_core::engine::journal::{self, sha256_hex};
use planvault_core::engine::trace::{RunFiles, JOURNAL_FILE};
use planvault_core::engine::FinishReason;
use planvault_core::Status;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The receipt's JSON form, in the vault.
pub const RECEIPT_JSON: &str = planvault_core::engine::trace::RECEIPT_FILE;
/// The receipt as a note a person reads.
pub const RECEIPT_NOTE: &str = "00_plan-trace/receipt.md";
/// The run's id, kept while a run resumes (`planvault/<run-id>` names its branch).
pub const RUN_ID_FILE: &str = "00_plan-trace/run-id";
/// Receipt ids start with this.
pub const RECEIPT_PREFIX: &str = "PV-RECEIPT-";
/// The commit message trailer that carries a receipt's id.
pub const TRAILER: &str = "Planvault-Receipt";
/// The receipt format's version.
pub const RECEIPT_VERSION: u32 = 1;

/// How a run ended, for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The plan finished (and, isolated, its verification passed).
    Completed,
    /// Its attempts are used up: a person takes it from here.
    Escalated,
    /// A node failed, or the plan could not run.
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Escalated => "escalated",
            Outcome::Failed => "failed",
        }
    }
}

/// The outcome a finish gets a receipt for; `None`: the run can resume.
pub fn outcome_of(reason: &FinishReason) -> Option<Outcome> {
    match reason {
        FinishReason::Completed => Some(Outcome::Completed),
        FinishReason::VisitBudget { .. } | FinishReason::StepBudget { .. } => {
            Some(Outcome::Escalated)
        }
        FinishReason::NodeFailed { .. }
        | FinishReason::PlanFailed { .. }
        | FinishReason::ReplayDiverged { .. } => Some(Outcome::Failed),
        FinishReason::AwaitingHuman { .. }
        | FinishReason::Interrupted { .. }
        | FinishReason::Stopped { .. } => None,
    }
}

/// Everything a receipt says but its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptParts {
    pub run_id: String,
    /// [`plan_hash`] of the plan's sources.
    pub plan_hash: String,
    /// The plan file beside the run vault that was hashed (`PLAN.md`, a
    /// generated `.json`); `None`: the vault's own notes were.
    pub plan_source: Option<String>,
    /// The journal's chain head ([`journal::verify_chain`]).
    pub journal_head: String,
    pub journal_entries: usize,
    /// Verifier file → its SHA-256 (hex). Paths are relative to the git
    /// repository's top (the vault's folder outside one), `/`-separated.
    pub verifier_hashes: BTreeMap<String, String>,
    /// The staged tree's id (`git write-tree`) of an isolated run.
    pub tree: Option<String>,
    /// Verification attempts made.
    pub attempts: u32,
    pub outcome: Outcome,
}

/// A run's receipt (see the module docs). Field order is the JSON's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// `PV-RECEIPT-<run-id>-<first 12 hex of the content hash>`.
    pub id: String,
    pub version: u32,
    pub run_id: String,
    pub plan_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_source: Option<String>,
    pub journal_head: String,
    pub journal_entries: usize,
    pub verifier_hashes: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    pub attempts: u32,
    pub outcome: Outcome,
}

impl Receipt {
    /// The receipt of these parts, its id computed.
    pub fn build(parts: ReceiptParts) -> Receipt {
        let mut receipt = Receipt {
            id: String::new(),
            version: RECEIPT_VERSION,
            run_id: parts.run_id,
            plan_hash: parts.plan_hash,
            plan_source: parts.plan_source,
            journal_head: parts.journal_head,
            journal_entries: parts.journal_entries,
            verifier_hashes: parts.verifier_hashes,
            tree: parts.tree,
            attempts: parts.attempts,
            outcome: parts.outcome,
        };
        receipt.id = receipt.expected_id();
        receipt
    }

    /// SHA-256 of the receipt's JSON with an empty `id`.
    pub fn content_hash(&self) -> String {
        let blank = Receipt {
            id: String::new(),
            ..self.clone()
        };
        sha256_hex(
            serde_json::to_string(&blank)
                .expect("receipts serialize")
                .as_bytes(),
        )
    }

    /// The id these contents give.
    pub fn expected_id(&self) -> String {
        format!(
            "{RECEIPT_PREFIX}{}-{}",
            self.run_id,
            &self.content_hash()[..12]
        )
    }

    /// The JSON form (`receipt.json`), pretty, newline-terminated.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("receipts serialize") + "\n"
    }

    /// Read `receipt.json`.
    pub fn from_json(text: &str) -> Result<Receipt, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// `Planvault-Receipt: <id>`: the last line of the commit's message.
    pub fn commit_message_trailer(&self) -> String {
        format!("{TRAILER}: {}", self.id)
    }

    /// The readable note (`receipt.md`).
    pub fn to_note(&self) -> String {
        let mut note = format!(
            "# Receipt {}\n\n\
             - run: `{}`\n\
             - outcome: **{}** after {} verification attempt(s)\n\
             - plan: `{}`{}\n\
             - journal: {} entries, head `{}`\n",
            self.id,
            self.run_id,
            self.outcome.as_str(),
            self.attempts,
            self.plan_hash,
            self.plan_source
                .as_ref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
            self.journal_entries,
            self.journal_head,
        );
        match &self.tree {
            Some(tree) => note.push_str(&format!("- staged tree: `{tree}`\n")),
            None => note.push_str("- staged tree: none (the run was not isolated)\n"),
        }
        if self.verifier_hashes.is_empty() {
            note.push_str("- verifier files: none\n");
        } else {
            note.push_str("- verifier files:\n");
            for (path, hash) in &self.verifier_hashes {
                note.push_str(&format!("  - `{path}`: `{hash}`\n"));
            }
        }
        note.push_str(
            "\nCheck it: `planvault receipt verify <vault>` recomputes every hash.\n\
             `receipt.json` is what is checked; this note only shows it.\n",
        );
        note
    }
}

/// Write `receipt.json` and `receipt.md` into the vault.
pub async fn write<H: Host>(
    host: &H,
    files: &RunFiles,
    receipt: &Receipt,
) -> Result<(), HostError> {
    host.write(&files.at(RECEIPT_JSON), &receipt.to_json())
        .await?;
    host.write(&files.at(RECEIPT_NOTE), &receipt.to_note())
        .await
}

/// The plan's hash: SHA-256 over its sources in path order, each as
/// `path NUL length NUL bytes`. Pass [`plan_sources`] of a vault's notes,
/// or the one plan file (`PLAN.md` → its text).
pub fn plan_hash(sources: &BTreeMap<String, String>) -> String {
    let mut all = Vec::new();
    for (path, text) in sources {
        all.extend_from_slice(path.as_bytes());
        all.push(0);
        all.extend_from_slice(text.len().to_string().as_bytes());
        all.push(0);
        all.extend_from_slice(text.as_bytes());
    }
    sha256_hex(&all)
}

/// A vault's plan notes as the plan hash reads them: each note's `status:`
/// set to pending (a run's progress is not its plan), files that are not
/// plan notes (the trace, dot-folders) left out.
pub fn plan_sources(files: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    files
        .iter()
        .filter(|(path, _)| planvault_core::vault::is_plan_note(path))
        .map(|(path, text)| {
            (
                path.clone(),
                planvault_core::vault::update_status(text, Status::Pending),
            )
        })
        .collect()
}

/// A new run's id: `<stamp>-<6 hex>`, the hex from `seed` (what makes
/// this run differ from another of the same plan: the moment, the
/// process). `stamp` is the caller's wall clock (`20261202-130543`), or
/// empty where it has none (the id is then the hex alone).
pub fn new_run_id(stamp: &str, seed: &str) -> String {
    let hex = &sha256_hex(seed.as_bytes())[..6];
    if stamp.is_empty() {
        hex.to_string()
    } else {
        format!("{stamp}-{hex}")
    }
}

/// Verification attempts in a journal's keys: the most visits of any
/// node `verify` names (a PLAN.md `@verify`).
pub fn attempts(journal_text: &str, verify_nodes: &[String]) -> u32 {
    journal_text
        .lines()
        .filter_map(|l| journal::read_line(l).ok())
        .filter_map(|(e, _)| {
            let hash = e.key.rfind('#')?;
            let id = &e.key[..hash];
            let visit: u32 = e.key[hash + 1..].split(':').next()?.parse().ok()?;
            verify_nodes.iter().any(|n| n == id).then_some(visit)
        })
        .max()
        .unwrap_or(0)
}

/// A run id fit for a branch name and a file: letters, digits, `-`, `_`, `.`.
pub fn is_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && !id.starts_with(['.', '-'])
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// One thing `receipt verify` compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `id`, `journal`, `plan`, `verifier`, `commit`.
    pub check: &'static str,
    pub ok: bool,
    pub message: String,
    /// The journal line that breaks the chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The journal entry there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The file whose hash differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Check {
    fn new(check: &'static str, ok: bool, message: String) -> Check {
        Check {
            check,
            ok,
            message,
            line: None,
            entry: None,
            file: None,
        }
    }
}

impl Receipt {
    /// The id matches the receipt's contents.
    pub fn check_id(&self) -> Check {
        let expected = self.expected_id();
        if expected == self.id {
            Check::new("id", true, format!("{} matches its contents", self.id))
        } else {
            Check::new(
                "id",
                false,
                format!(
                    "the receipt was changed: its contents give {expected}, it says {}",
                    self.id
                ),
            )
        }
    }

    /// The journal's chain is whole and ends at the receipt's head.
    pub fn check_journal(&self, text: &str) -> Check {
        match journal::verify_chain(text) {
            Err(e) => Check {
                line: Some(e.line),
                entry: e.entry.clone(),
                ..Check::new("journal", false, format!("{}: {e}", JOURNAL_FILE))
            },
            Ok(head) if head.hash != self.journal_head => Check::new(
                "journal",
                false,
                format!(
                    "{JOURNAL_FILE} ends at {} after {} entries, the receipt at {} after {}: \
                     entries were added, dropped or changed after the run",
                    head.hash, head.entries, self.journal_head, self.journal_entries
                ),
            ),
            Ok(head) => Check::new(
                "journal",
                true,
                format!("{} entries, chain head {}", head.entries, head.hash),
            ),
        }
    }

    /// The plan hashes as it did (`hash`: [`plan_hash`] of its sources now).
    pub fn check_plan(&self, hash: &str) -> Check {
        let what = self
            .plan_source
            .as_deref()
            .unwrap_or("the vault's plan notes");
        if hash == self.plan_hash {
            Check::new("plan", true, format!("{what}: {hash}"))
        } else {
            Check {
                file: self.plan_source.clone(),
                ..Check::new(
                    "plan",
                    false,
                    format!(
                        "{what} changed: hashes to {hash}, the receipt says {}",
                        self.plan_hash
                    ),
                )
            }
        }
    }

    /// Each verifier file hashes as it did; `read` gives a file's bytes, or
    /// why it gives none ("is missing").
    pub fn check_verifiers(&self, read: impl Fn(&str) -> Result<Vec<u8>, String>) -> Vec<Check> {
        self.verifier_hashes
            .iter()
            .map(|(path, expected)| {
                let (ok, message) = match read(path).map(|b| sha256_hex(&b)) {
                    Ok(hash) if hash == *expected => (true, format!("{path}: {hash}")),
                    Ok(hash) => (
                        false,
                        format!("{path} changed: hashes to {hash}, the receipt says {expected}"),
                    ),
                    Err(why) => (false, format!("{path} {why}")),
                };
                Check {
                    file: Some(path.clone()),
                    ..Check::new("verifier", ok, message)
                }
            })
            .collect()
    }

    /// The commit carrying the id has the receipt's tree. `found`: the
    /// trees of the commits whose message names the id (`None`: the vault
    /// is in no git repository). No check when the receipt names no tree.
    pub fn check_commit(&self, found: Option<&[(String, String)]>) -> Option<Check> {
        let tree = self.tree.as_ref()?;
        let check = match found {
            None => Check::new(
                "commit",
                false,
                format!("the receipt names tree {tree} but the vault is in no git repository"),
            ),
            Some([]) => Check::new(
                "commit",
                false,
                format!("no commit's message carries {}", self.id),
            ),
            Some(commits) => match commits.iter().find(|(_, t)| t != tree) {
                Some((commit, other)) => Check::new(
                    "commit",
                    false,
                    format!(
                        "commit {commit} carries {} but has tree {other}, the receipt says {tree}",
                        self.id
                    ),
                ),
                None => Check::new(
                    "commit",
                    true,
                    format!("commit {} has tree {tree}", commits[0].0),
                ),
            },
        };
        Some(check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> ReceiptParts {
        ReceiptParts {
            run_id: "20261202-130543-abcdef".into(),
            plan_hash: sha256_hex(b"plan"),
            plan_source: Some("PLAN.md".into()),
            journal_head: journal::GENESIS.into(),
            journal_entries: 0,
            verifier_hashes: BTreeMap::from([("tests/run.sh".into(), sha256_hex(b"x"))]),
            tree: Some("4b825dc642cb6eb9a060e54bf8d69288fbee4904".into()),
            attempts: 2,
            outcome: Outcome::Escalated,
        }
    }

    #[test]
    fn the_id_names_the_run_and_binds_every_field() {
        let receipt = Receipt::build(parts());
        assert!(receipt.id.starts_with("PV-RECEIPT-20261202-130543-abcdef-"));
        assert_eq!(
            receipt.id.len(),
            "PV-RECEIPT-20261202-130543-abcdef-".len() + 12
        );
        assert_eq!(receipt.id, receipt.expected_id());
        let back = Receipt::from_json(&receipt.to_json()).unwrap();
        assert_eq!(back, receipt);
        let mut changed = back.clone();
        changed.attempts = 3;
        assert_ne!(changed.expected_id(), receipt.id);
        changed = back;
        changed.verifier_hashes.clear();
        assert_ne!(changed.expected_id(), receipt.id);
        assert_eq!(
            receipt.commit_message_trailer(),
            format!("Planvault-Receipt: {}", receipt.id)
        );
        let note = receipt.to_note();
        assert!(
            note.contains("**escalated** after 2 verification attempt(s)"),
            "{note}"
        );
        assert!(note.contains("`tests/run.sh`"), "{note}");
    }

    #[test]
    fn the_plan_hash_ignores_statuses_and_the_trace_but_not_the_plan() {
        let files = BTreeMap::from([
            (
                "a.md".to_string(),
                "---\nstatus: done\n---\nDo A\n".to_string(),
            ),
            ("00_plan-trace/trace.md".to_string(), "x".to_string()),
        ]);
        let pending = BTreeMap::from([(
            "a.md".to_string(),
            "---\nstatus: pending\n---\nDo A\n".to_string(),
        )]);
        assert_eq!(
            plan_hash(&plan_sources(&files)),
            plan_hash(&plan_sources(&pending))
        );
        let edited = BTreeMap::from([(
            "a.md".to_string(),
            "---\nstatus: pending\n---\nDo B\n".to_string(),
        )]);
        assert_ne!(
            plan_hash(&plan_sources(&edited)),
            plan_hash(&plan_sources(&pending))
        );
        // Path and bytes are framed: moving bytes between them changes it.
        let a = BTreeMap::from([("ab".to_string(), "c".to_string())]);
        let b = BTreeMap::from([("a".to_string(), "bc".to_string())]);
        assert_ne!(plan_hash(&a), plan_hash(&b));
    }

    #[test]
    fn only_finished_runs_get_an_outcome() {
        assert_eq!(
            outcome_of(&FinishReason::Completed),
            Some(Outcome::Completed)
        );
        assert_eq!(
            outcome_of(&FinishReason::VisitBudget {
                node: "v".into(),
                max_visits: 3
            }),
            Some(Outcome::Escalated)
        );
        assert_eq!(
            outcome_of(&FinishReason::NodeFailed {
                node: "v".into(),
                reason: "x".into()
            }),
            Some(Outcome::Failed)
        );
        assert_eq!(
            outcome_of(&FinishReason::Stopped { reason: "x".into() }),
            None
        );
    }

    #[test]
    fn attempts_count_the_verify_nodes_visits() {
        let text = "{\"key\":\"3#1:work\",\"kind\":\"work\",\"output\":\"x\"}\n\
                    {\"key\":\"3#2:work\",\"kind\":\"work\",\"output\":\"x\"}\n\
                    {\"key\":\"2#4:work\",\"kind\":\"work\",\"output\":\"x\"}\n";
        assert_eq!(attempts(text, &["3".into()]), 2);
        assert_eq!(attempts(text, &[]), 0);
        assert!(is_run_id("20261202-130543-abcdef"));
        assert!(!is_run_id("../x") && !is_run_id("") && !is_run_id("a b"));
    }
}
