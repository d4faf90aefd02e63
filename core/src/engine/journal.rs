//! The journal: every answer that came from outside the engine (a model, a
//! person, a command, a tool), keyed by the request that asked for it.
//!
//! Replaying a journal serves each request from its recorded answer, so a
//! replay makes zero model calls and, the engine being deterministic,
//! reproduces the run's effects byte for byte. One entry is one JSON line.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What came back for one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Answer {
    /// A node's work finished with this output.
    Work { output: String },
    /// The raw text of a YES/NO grid judgment (kept raw: it is the rationale).
    Judgment { raw: String },
    /// A `@tool` command exited.
    Command { exit: i32, output: String },
    /// A person (or, under `autonomy: full`, the run) decided. `choice` is
    /// the outgoing label a person picked at a vault `type: human` note.
    Human {
        decision: String,
        approved: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choice: Option<String>,
    },
    /// A generated step's tool returned a value or failed.
    Invoke {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<serde_json::Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A replanning round's raw reply.
    Revision { text: String },
}

impl Answer {
    pub fn kind(&self) -> &'static str {
        match self {
            Answer::Work { .. } => "work",
            Answer::Judgment { .. } => "judgment",
            Answer::Command { .. } => "command",
            Answer::Human { .. } => "human",
            Answer::Invoke { .. } => "invoke",
            Answer::Revision { .. } => "revision",
        }
    }
}

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The request id, e.g. `review#2:judge.1`.
    pub key: String,
    #[serde(flatten)]
    pub answer: Answer,
}

/// Why a journal could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("journal line {line}: {message}")]
pub struct JournalError {
    pub line: usize,
    pub message: String,
}

/// Every answer of a run, in the order they arrived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub entries: Vec<JournalEntry>,
}

impl Journal {
    pub fn new() -> Self {
        Journal::default()
    }

    pub fn push(&mut self, key: impl Into<String>, answer: Answer) {
        self.entries.push(JournalEntry {
            key: key.into(),
            answer,
        });
    }

    /// The JSON-lines form (`journal.jsonl`), one entry per line.
    pub fn to_jsonl(&self) -> String {
        self.entries.iter().map(|e| entry_line(e) + "\n").collect()
    }

    /// Read the JSON-lines form. Blank lines are skipped; a torn last line
    /// (a crash mid-append) is dropped rather than failing the resume.
    pub fn from_jsonl(text: &str) -> Result<Journal, JournalError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut entries = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<JournalEntry>(line) {
                Ok(entry) => entries.push(entry),
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
                Err(err) => {
                    return Err(JournalError {
                        line: i + 1,
                        message: err.to_string(),
                    })
                }
            }
        }
        Ok(Journal { entries })
    }

    /// Answers by key; a later entry for the same key wins.
    pub(crate) fn by_key(&self) -> BTreeMap<String, Answer> {
        self.entries
            .iter()
            .map(|e| (e.key.clone(), e.answer.clone()))
            .collect()
    }
}

/// One entry as its journal line (without the newline).
pub fn entry_line(entry: &JournalEntry) -> String {
    serde_json::to_string(entry).expect("journal entries serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_round_trips_every_kind() {
        let mut journal = Journal::new();
        journal.push(
            "a#1:work",
            Answer::Work {
                output: "line one\nline two".into(),
            },
        );
        journal.push(
            "a#1:judge.1",
            Answer::Judgment {
                raw: "1. YES".into(),
            },
        );
        journal.push(
            "2#1:command",
            Answer::Command {
                exit: 3,
                output: "boom".into(),
            },
        );
        journal.push(
            "7#1:human",
            Answer::Human {
                decision: "ship it".into(),
                approved: true,
                choice: None,
            },
        );
        journal.push(
            "s:invoke",
            Answer::Invoke {
                value: Some(serde_json::json!({"x": 1})),
                error: None,
            },
        );
        journal.push("replan.1", Answer::Revision { text: "{}".into() });
        let text = journal.to_jsonl();
        assert_eq!(text.lines().count(), 6);
        assert!(
            text.starts_with(r#"{"key":"a#1:work","kind":"work","output":"line one\nline two"}"#)
        );
        assert_eq!(Journal::from_jsonl(&text).unwrap(), journal);
    }

    #[test]
    fn a_torn_last_line_is_dropped_but_a_torn_middle_line_is_an_error() {
        let good = r#"{"key":"a#1:work","kind":"work","output":"x"}"#;
        let torn = format!("{good}\n{{\"key\":\"b#1:wo");
        assert_eq!(Journal::from_jsonl(&torn).unwrap().entries.len(), 1);
        let middle = format!("{{\"key\":\n{good}\n");
        assert_eq!(Journal::from_jsonl(&middle).unwrap_err().line, 1);
    }
}
