//! The run vault on disk: status writes that are surgical and refuse to
//! overwrite a change the run has not seen, the trace, the journal and the
//! node outputs under `00_plan-trace/`. Every note write goes through a
//! temporary file and a rename, so an interrupted run never leaves a torn note.

use planvault_core::engine::trace::{self, JOURNAL_FILE, TRACE_DIR, TRACE_FILE};
use planvault_core::engine::{Journal, JournalEntry};
use planvault_core::{vault, Status};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{file} changed on disk since the run read it; not overwritten (run again to continue with the edited note)")]
    ChangedOnDisk { file: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Journal {
        path: String,
        source: planvault_core::engine::JournalError,
    },
}

pub struct RunVault {
    root: PathBuf,
    /// Vault-relative note path → the text as the run last read or wrote it.
    seen: BTreeMap<String, String>,
}

impl RunVault {
    /// A vault whose notes were read as `files`.
    pub fn new(root: &Path, files: BTreeMap<String, String>) -> Self {
        RunVault {
            root: root.to_path_buf(),
            seen: files,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Set a note's `status:`, changing only those bytes. Refuses when the
    /// note on disk is not what the run last saw.
    pub fn write_status(&mut self, file: &str, status: Status) -> Result<bool, StoreError> {
        let path = self.path(file);
        let current = fs::read_to_string(&path).map_err(|source| StoreError::Read {
            path: file.into(),
            source,
        })?;
        if self.seen.get(file).is_some_and(|seen| *seen != current) {
            return Err(StoreError::ChangedOnDisk { file: file.into() });
        }
        let updated = vault::update_status(&current, status);
        let changed = updated != current;
        if changed {
            write_atomic(&path, &updated).map_err(|source| StoreError::Write {
                path: file.into(),
                source,
            })?;
        }
        self.seen.insert(file.into(), updated);
        Ok(changed)
    }

    /// Create a note that does not exist yet (an item added mid-run).
    pub fn ensure_note(&mut self, file: &str, text: &str) -> Result<(), StoreError> {
        let path = self.path(file);
        if path.exists() {
            return Ok(());
        }
        write_atomic(&path, text).map_err(|source| StoreError::Write {
            path: file.into(),
            source,
        })?;
        self.seen.insert(file.into(), text.into());
        Ok(())
    }

    /// Whether the trace note exists.
    pub fn has_trace(&self) -> bool {
        self.path(TRACE_FILE).exists()
    }

    /// Append to `trace.md`, creating it with its header first.
    pub fn append_trace(&self, query: &str, text: &str) -> Result<(), StoreError> {
        let path = self.path(TRACE_FILE);
        let err = |source| StoreError::Write {
            path: TRACE_FILE.into(),
            source,
        };
        fs::create_dir_all(self.path(TRACE_DIR)).map_err(err)?;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        if file.metadata().map_err(err)?.len() == 0 {
            file.write_all(trace::trace_header(query).as_bytes())
                .map_err(err)?;
        }
        file.write_all(text.as_bytes()).map_err(err)?;
        file.flush().map_err(err)
    }

    /// Append one journal line and flush it to disk before anything acts on it.
    pub fn append_journal(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        let err = |source| StoreError::Write {
            path: JOURNAL_FILE.into(),
            source,
        };
        fs::create_dir_all(self.path(TRACE_DIR)).map_err(err)?;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(JOURNAL_FILE))
            .map_err(err)?;
        file.write_all((planvault_core::engine::journal::entry_line(entry) + "\n").as_bytes())
            .map_err(err)?;
        file.sync_data().map_err(err)
    }

    pub fn read_journal(path: &Path) -> Result<Journal, StoreError> {
        let shown = path.display().to_string();
        match fs::read_to_string(path) {
            Ok(text) => Journal::from_jsonl(&text).map_err(|source| StoreError::Journal {
                path: shown,
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Journal::new()),
            Err(source) => Err(StoreError::Read {
                path: shown,
                source,
            }),
        }
    }

    pub fn journal_path(&self) -> PathBuf {
        self.path(JOURNAL_FILE)
    }

    /// Keep a node's output as a note.
    pub fn write_output(
        &self,
        node: &str,
        title: &str,
        visit: u32,
        text: &str,
    ) -> Result<(), StoreError> {
        let rel = trace::output_note_path(node, visit);
        let path = self.path(&rel);
        let note = trace::output_note(node, title, visit, text);
        if fs::read_to_string(&path).ok().as_deref() == Some(note.as_str()) {
            return Ok(());
        }
        fs::create_dir_all(self.path(TRACE_DIR)).map_err(|source| StoreError::Write {
            path: rel.clone(),
            source,
        })?;
        write_atomic(&path, &note).map_err(|source| StoreError::Write { path: rel, source })
    }

    /// Each node's output from its latest visit, read back from the notes.
    pub fn prior_outputs(&self, node_ids: &[String]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for id in node_ids {
            let mut visit = 1;
            let mut latest = None;
            while let Ok(note) = fs::read_to_string(self.path(&trace::output_note_path(id, visit)))
            {
                latest = trace::parse_output_note(&note);
                visit += 1;
            }
            if let Some(text) = latest {
                out.push((id.clone(), text));
            }
        }
        out
    }

    /// `--fresh` / `--replay`: every note back to `pending` and the previous
    /// run's trace, journal and outputs removed.
    pub fn reset(&mut self, files: &[String]) -> Result<(), StoreError> {
        for file in files {
            self.write_status(file, Status::Pending)?;
        }
        let dir = self.path(TRACE_DIR);
        if let Ok(entries) = fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name == "trace.md" || name == "journal.jsonl" || name.contains(".visit-") {
                    fs::remove_file(entry.path())
                        .map_err(|source| StoreError::Write { path: name, source })?;
                }
            }
        }
        Ok(())
    }
}

/// Write through a dot-file in the same folder and rename over the target.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.planvault-tmp"));
    {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()?;
    }
    fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_write_is_surgical_and_refuses_an_unseen_change() {
        let dir = tempfile::tempdir().unwrap();
        let text = "---\r\nstatus: pending\r\nowner: me\r\n---\r\n# A\r\n";
        fs::write(dir.path().join("a.md"), text).unwrap();
        let mut vault = RunVault::new(dir.path(), [("a.md".to_string(), text.to_string())].into());
        assert!(vault.write_status("a.md", Status::Active).unwrap());
        assert_eq!(
            fs::read_to_string(dir.path().join("a.md")).unwrap(),
            "---\r\nstatus: active\r\nowner: me\r\n---\r\n# A\r\n"
        );
        assert!(
            !vault.write_status("a.md", Status::Active).unwrap(),
            "an unchanged status is not rewritten"
        );

        fs::write(
            dir.path().join("a.md"),
            "---\r\nstatus: active\r\nowner: you\r\n---\r\n# A\r\n",
        )
        .unwrap();
        let err = vault.write_status("a.md", Status::Done).unwrap_err();
        assert!(matches!(err, StoreError::ChangedOnDisk { .. }));
        assert!(
            fs::read_to_string(dir.path().join("a.md"))
                .unwrap()
                .contains("owner: you"),
            "left as the person wrote it"
        );
    }

    #[test]
    fn outputs_are_read_back_from_the_latest_visit() {
        let dir = tempfile::tempdir().unwrap();
        let vault = RunVault::new(dir.path(), BTreeMap::new());
        vault.write_output("draft", "Draft", 1, "one").unwrap();
        vault.write_output("draft", "Draft", 2, "two").unwrap();
        assert_eq!(
            vault.prior_outputs(&["draft".into(), "review".into()]),
            vec![("draft".to_string(), "two".to_string())]
        );
    }
}
