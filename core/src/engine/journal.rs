//! The journal: every answer that came from outside the engine (a model, a
//! person, a command, a tool), keyed by the request that asked for it.
//!
//! Replaying a journal serves each request from its recorded answer, so a
//! replay makes zero model calls and, the engine being deterministic,
//! reproduces the run's effects byte for byte. One entry is one JSON line.
//!
//! **The hash chain.** A runner writes each line with `"prev"`: the chain
//! hash of every line before it ([`chained_line`]), so a changed, inserted
//! or dropped entry is found by [`verify_chain`]. The chain hash after a
//! line is `sha256(prev_hex "\n" line)` ([`link`]) over the line's exact
//! text, starting from [`GENESIS`]; the head (the hash after the last line)
//! goes into a run's receipt. Lines of an older journal carry no `prev`:
//! they are read (and hashed into the chain) as they are, but once a line
//! carries one, every later line must. Dropping lines at the end keeps the
//! chain whole: only a head kept elsewhere (a receipt) shows that.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// What came back for one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Answer {
    /// A node's work finished with this output.
    Work { output: String },
    /// The raw text of a YES/NO grid judgment (kept raw: it is the
    /// rationale), and the labels it judged in the order asked (the engine
    /// records them): a resume reads the verdicts by label, so a note whose
    /// `## Next` items were reordered since still takes the branch this
    /// answer chose. Empty in journals written before labels were kept.
    Judgment {
        raw: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        labels: Vec<String>,
    },
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
    /// A replanning round's raw reply, or a rescue's.
    Revision { text: String },
    /// How a PLAN.md run orders its items, as it began (under
    /// [`ORDER_KEY`]): a resume, a `--decide` and a replay go on in it,
    /// whatever order they are given. `in_a_row`: its waves count failures
    /// in a row across the run (`RunConfig::waves_in_a_row`); a run begun
    /// before wrote no such field, and counts each item's own. `at_most`:
    /// the items a wave may hold (`RunConfig::parallel_at_most`).
    Order {
        parallel: bool,
        #[serde(default)]
        in_a_row: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_most: Option<u32>,
    },
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
            Answer::Order { .. } => "order",
        }
    }
}

/// A PLAN.md run's order as its journal records it ([`Answer::Order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderLine {
    pub parallel: bool,
    pub in_a_row: bool,
    pub at_most: Option<u32>,
}

/// The key of a PLAN.md run's [`Answer::Order`]: no request has it.
pub const ORDER_KEY: &str = "run:order";

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The request id, e.g. `review#2:judge.1`.
    pub key: String,
    #[serde(flatten)]
    pub answer: Answer,
    /// What a work's or a command's answer, or a person's decision, was
    /// made from ([`made_from`] of its node as it was asked), so a resume
    /// that serves it to a node edited since can say so. Journals written
    /// before have none.
    #[serde(default, rename = "from", skip_serializing_if = "Option::is_none")]
    pub made_from: Option<String>,
}

/// The note a vault run's journal key is of: `draft` in `draft#2:work`,
/// `draft#2:judge.1`, `draft#2/tool.1` and `draft#2/tool.1:approve` (a
/// note's name may hold `#`); none for a key of no note (`run:order`).
pub fn node_of_key(key: &str) -> Option<&str> {
    let hash = key.rfind('#')?;
    key[hash + 1..]
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| &key[..hash])
}

/// What a node's answer is made from, hashed: its kind, text, tools, role
/// and markers (a `@tool` command, a generated step's tool and arguments),
/// not its title (a renamed note asks the same) nor where it leads (a
/// judgment keeps its labels). Sixteen hex digits, as a run vault's item
/// fingerprint.
pub fn made_from(node: &crate::Node) -> String {
    // Each part length-first, so no two nodes feed the same bytes: hashed
    // as fed, without building a JSON value (the run worker's size).
    let mut hasher = Sha256::new();
    let mut feed = |part: &str| {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    };
    feed(node.kind.as_str());
    feed(&node.body);
    feed(&node.tools.len().to_string());
    node.tools.iter().for_each(|tool| feed(tool));
    feed(node.role.as_deref().unwrap_or("\0"));
    match &node.ext {
        crate::NodeExt::PlanMd(item) => {
            feed(item.command.as_deref().unwrap_or("\0"));
            feed(&item.emits.len().to_string());
            for (key, value) in &item.emits {
                feed(key);
                feed(value);
            }
            feed(&item.scenarios.len().to_string());
            item.scenarios.iter().for_each(|scenario| feed(scenario));
        }
        crate::NodeExt::Generated(step) => {
            feed(&step.capability);
            feed(&step.args.to_string());
        }
        crate::NodeExt::Vault(_) => {}
    }
    hex(&hasher.finalize())[..16].to_string()
}

impl JournalEntry {
    /// The entry with `f` applied to each text that came from outside the
    /// plan (outputs, replies, decisions, a tool's values and errors),
    /// every string inside a tool's value included. What the run reads the
    /// entry by (its key, kind, labels and choice) is left alone, so the
    /// line stays an entry whatever `f` does to the text.
    pub fn map_text(&self, f: &dyn Fn(&str) -> String) -> JournalEntry {
        let answer = match &self.answer {
            Answer::Work { output } => Answer::Work { output: f(output) },
            Answer::Judgment { raw, labels } => Answer::Judgment {
                raw: f(raw),
                labels: labels.clone(),
            },
            Answer::Command { exit, output } => Answer::Command {
                exit: *exit,
                output: f(output),
            },
            Answer::Human {
                decision,
                approved,
                choice,
            } => Answer::Human {
                decision: f(decision),
                approved: *approved,
                choice: choice.clone(),
            },
            Answer::Invoke { value, error } => Answer::Invoke {
                value: value.as_ref().map(|v| map_strings(v, f)),
                error: error.as_deref().map(f),
            },
            Answer::Revision { text } => Answer::Revision { text: f(text) },
            Answer::Order { .. } => self.answer.clone(),
        };
        JournalEntry {
            key: self.key.clone(),
            answer,
            made_from: self.made_from.clone(),
        }
    }
}

/// `value` with `f` applied to every string in it (object keys are kept).
pub fn map_strings(value: &serde_json::Value, f: &dyn Fn(&str) -> String) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(f(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_strings(v, f)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), map_strings(v, f)))
                .collect(),
        ),
        other => other.clone(),
    }
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
            made_from: None,
        });
    }

    /// Every entry of note `old` (`old#2:work`, `old#2/tool.1`, …) as note
    /// `new`'s: a note renamed since they were recorded.
    pub fn rename_note(&mut self, old: &str, new: &str) {
        for entry in &mut self.entries {
            if node_of_key(&entry.key) == Some(old) {
                entry.key = format!("{new}{}", &entry.key[old.len()..]);
            }
        }
    }

    /// The order the run began in ([`Answer::Order`]), when the journal
    /// records it (a later entry wins, as for any key): a run begun
    /// before it was kept has none.
    pub fn order_line(&self) -> Option<OrderLine> {
        self.entries.iter().rev().find_map(|e| match &e.answer {
            Answer::Order {
                parallel,
                in_a_row,
                at_most,
            } if e.key == ORDER_KEY => Some(OrderLine {
                parallel: *parallel,
                in_a_row: *in_a_row,
                at_most: *at_most,
            }),
            _ => None,
        })
    }

    /// The entries that answer a request: all but the order.
    pub fn answers(&self) -> impl Iterator<Item = &JournalEntry> {
        self.entries.iter().filter(|e| e.key != ORDER_KEY)
    }

    /// Whether an entry answers a request of node `id` (`id#visit…`).
    pub fn answers_node(&self, id: &str) -> bool {
        self.answers().any(|e| {
            e.key
                .strip_prefix(id)
                .is_some_and(|rest| rest.starts_with('#'))
        })
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
            match read_line(line) {
                Ok((entry, _)) => entries.push(entry),
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
                Err(message) => {
                    return Err(JournalError {
                        line: i + 1,
                        message,
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

/// One journal line read: its entry and its `prev`, as written (the chain
/// hash before it, when it carries one). The same as serde's derived reading of a
/// [`JournalEntry`] (held to it by a property test), done by hand over a
/// `serde_json::Value`: the derived one, an internally tagged enum
/// flattened into the entry, goes through serde's `Content` buffering,
/// among the largest code in the run worker. Names the line does not use
/// are ignored; a name given twice counts once, its last value.
pub fn read_line(line: &str) -> Result<(JournalEntry, Option<serde_json::Value>), String> {
    use serde_json::Value;
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let Value::Object(mut fields) = value else {
        return Err("a journal line is a JSON object".into());
    };
    let text = |name: &str| match fields.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("`{name}` is not a string")),
        None => Err(format!("missing field `{name}`")),
    };
    let maybe_text = |name: &str| match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{name}` is not a string")),
    };
    let flag = |name: &str| match fields.get(name) {
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("`{name}` is not true or false")),
        None => Err(format!("missing field `{name}`")),
    };
    // `#[serde(default)]`: missing is false, null is not a flag.
    let maybe_flag = |name: &str| match fields.get(name) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("`{name}` is not true or false")),
    };
    let key = text("key")?;
    let kind = text("kind")?;
    let answer = match kind.as_str() {
        "work" => Answer::Work {
            output: text("output")?,
        },
        "judgment" => Answer::Judgment {
            raw: text("raw")?,
            labels: match fields.get("labels") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|l| l.as_str().map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or("`labels` holds a label that is not a string")?,
                Some(_) => return Err("`labels` is not a list".into()),
            },
        },
        "command" => Answer::Command {
            exit: match fields.get("exit") {
                Some(Value::Number(n)) => n
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or("`exit` is not a whole number that fits an exit status")?,
                Some(_) => return Err("`exit` is not a number".into()),
                None => return Err("missing field `exit`".into()),
            },
            output: text("output")?,
        },
        "human" => Answer::Human {
            decision: text("decision")?,
            approved: flag("approved")?,
            choice: maybe_text("choice")?,
        },
        "invoke" => Answer::Invoke {
            value: fields.get("value").filter(|v| !v.is_null()).cloned(),
            error: maybe_text("error")?,
        },
        "revision" => Answer::Revision {
            text: text("text")?,
        },
        "order" => Answer::Order {
            parallel: flag("parallel")?,
            in_a_row: maybe_flag("in_a_row")?,
            at_most: match fields.get("at_most") {
                None | Some(Value::Null) => None,
                Some(n) => Some(
                    n.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or("`at_most` is not a count")?,
                ),
            },
        },
        other => return Err(format!("unknown kind `{other}`")),
    };
    let made_from = maybe_text("from")?;
    Ok((
        JournalEntry {
            key,
            answer,
            made_from,
        },
        fields.remove("prev"),
    ))
}

/// One entry as its journal line (without the newline).
pub fn entry_line(entry: &JournalEntry) -> String {
    serde_json::to_string(entry).expect("journal entries serialize")
}

/// The chain hash before a journal's first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// The chain hash after `line` (its exact text, no newline), `prev` being
/// the chain hash before it.
pub fn link(prev: &str, line: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev.as_bytes());
    hasher.update(b"\n");
    hasher.update(line.as_bytes());
    hex(&hasher.finalize())
}

/// One entry as its journal line carrying `prev`, the chain hash of the
/// lines before it (without the newline).
pub fn chained_line(entry: &JournalEntry, prev: &str) -> String {
    let line = entry_line(entry);
    // `entry_line` is a JSON object (`{"key":…}`): `prev` goes last.
    format!("{},\"prev\":\"{prev}\"}}", &line[..line.len() - 1])
}

/// A journal whose chain is whole, as [`verify_chain`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    /// The chain hash after the last line ([`GENESIS`] for none).
    pub hash: String,
    /// Entries read.
    pub entries: usize,
    /// Entries before the chain began (a journal written before chaining).
    pub unchained: usize,
}

/// Where and how a journal's chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("journal line {line}{}: {what}", entry.as_ref().map(|e| format!(" (entry {e})")).unwrap_or_default())]
pub struct ChainError {
    /// 1-based line of the journal.
    pub line: usize,
    /// The entry's key, when the line reads as an entry.
    pub entry: Option<String>,
    pub what: ChainBreak,
}

/// Why a chain breaks at a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainBreak {
    #[error("not a journal entry: {0}")]
    Unreadable(String),
    #[error(
        "it does not chain from the lines before it (prev {found}, expected {expected}): \
         an entry before it was changed, inserted or dropped, or this one was changed"
    )]
    WrongPrev { expected: String, found: String },
    #[error("it carries no prev after chained entries: it was inserted or changed")]
    Unchained,
}

/// Check every line's `prev` against the lines before it and return the
/// head. Blank lines are skipped (they carry nothing); every other line
/// must be a journal entry.
pub fn verify_chain(text: &str) -> Result<ChainHead, ChainError> {
    let mut head = ChainHead {
        hash: GENESIS.to_string(),
        entries: 0,
        unchained: 0,
    };
    let mut chained = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fail = |entry: Option<String>, what| ChainError {
            line: i + 1,
            entry,
            what,
        };
        let (entry, prev) = read_line(line).map_err(|e| fail(None, ChainBreak::Unreadable(e)))?;
        let prev = match prev {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(prev)) => Some(prev),
            Some(_) => {
                let what = ChainBreak::Unreadable("`prev` is not a string".into());
                return Err(fail(Some(entry.key), what));
            }
        };
        match prev {
            Some(prev) if prev != head.hash => {
                return Err(fail(
                    Some(entry.key),
                    ChainBreak::WrongPrev {
                        expected: head.hash,
                        found: prev,
                    },
                ))
            }
            Some(_) => chained = true,
            None if chained => return Err(fail(Some(entry.key), ChainBreak::Unchained)),
            None => head.unchained += 1,
        }
        head.hash = link(&head.hash, line);
        head.entries += 1;
    }
    Ok(head)
}

/// A decision a journal holds (a `human` line: a person's, or the run's
/// own under `autonomy: full`), named by the chain hash after its line.
/// That hash stands for the decision together with every line before it,
/// so a runner that keeps the hashes of the decisions its runs journaled
/// tells them from decisions that came in a journal written elsewhere (a
/// vault cloned or shared with its run's trace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// 1-based line of the journal.
    pub line: usize,
    /// The request it answered (`review#1:human`, `fix#2/tool.1:approve`).
    pub key: String,
    pub approved: bool,
    /// The decision's text: the person's note, the picked condition, or
    /// `approved` / `rejected`.
    pub decision: String,
    /// The chain hash after its line.
    pub head: String,
}

/// Of `found`, those whose flag in `taken_here` (a runner's record of the
/// decisions taken on it, in the same order) is false.
pub fn taken_elsewhere<'a>(found: &'a [Decision], taken_here: &[bool]) -> Vec<&'a Decision> {
    found
        .iter()
        .zip(taken_here)
        .filter(|(_, taken)| !**taken)
        .map(|(d, _)| d)
        .collect()
}

/// Every decision a journal holds, in order. Reading stops at the first
/// line that is no entry (a torn last line; a broken chain is
/// [`verify_chain`]'s to report).
pub fn decisions(text: &str) -> Vec<Decision> {
    let mut chain = GENESIS.to_string();
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok((entry, _)) = read_line(line) else {
            break;
        };
        chain = link(&chain, line);
        if let Answer::Human {
            decision, approved, ..
        } = entry.answer
        {
            found.push(Decision {
                line: i + 1,
                key: entry.key,
                approved,
                decision,
                head: chain.clone(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's text, tools, role and markers make its answer; its title
    /// (a renamed note) and its place do not.
    #[test]
    fn what_an_answer_is_made_from_is_the_nodes_text_and_knobs_not_its_name() {
        let node = crate::Node {
            id: "draft".into(),
            title: "Draft".into(),
            body: "Write it.".into(),
            kind: crate::NodeKind::Step,
            status: crate::Status::Active,
            tools: vec!["fetch_url".into()],
            role: None,
            max_visits: 3,
            pos: None,
            ext: crate::NodeExt::Vault(crate::VaultNode::default()),
        };
        let same = made_from(&node);
        assert_eq!(same.len(), 16);
        let renamed = crate::Node {
            id: "first-draft".into(),
            title: "First draft".into(),
            status: crate::Status::Done,
            max_visits: 5,
            ..node.clone()
        };
        assert_eq!(made_from(&renamed), same);
        let edits = [
            crate::Node {
                body: "Write it twice.".into(),
                ..node.clone()
            },
            crate::Node {
                tools: vec![],
                ..node.clone()
            },
            crate::Node {
                tools: vec!["fetch_url".into(), "write_note".into()],
                ..node.clone()
            },
            crate::Node {
                role: Some("cheap".into()),
                ..node.clone()
            },
            crate::Node {
                kind: crate::NodeKind::Human,
                ..node.clone()
            },
        ];
        for edited in &edits {
            assert_ne!(made_from(edited), same, "{edited:?}");
        }
    }

    #[test]
    fn decisions_are_the_human_lines_named_by_the_chain_after_them() {
        let entries = [
            JournalEntry {
                key: "draft#1:work".into(),
                answer: Answer::Work {
                    output: "a draft".into(),
                },
                made_from: None,
            },
            JournalEntry {
                key: "review#1:human".into(),
                answer: Answer::Human {
                    decision: "ship it".into(),
                    approved: true,
                    choice: None,
                },
                made_from: None,
            },
            JournalEntry {
                key: "send#1/tool.1:approve".into(),
                answer: Answer::Human {
                    decision: "rejected".into(),
                    approved: false,
                    choice: None,
                },
                made_from: None,
            },
        ];
        let mut text = String::new();
        let mut chain = GENESIS.to_string();
        let mut heads = Vec::new();
        for entry in &entries {
            let line = chained_line(entry, &chain);
            chain = link(&chain, &line);
            heads.push(chain.clone());
            text += &line;
            text += "\n\n";
        }
        let found = decisions(&text);
        let seen: Vec<_> = found
            .iter()
            .map(|d| {
                (
                    d.line,
                    d.key.as_str(),
                    d.approved,
                    d.decision.as_str(),
                    d.head.as_str(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (3, "review#1:human", true, "ship it", heads[1].as_str()),
                (
                    5,
                    "send#1/tool.1:approve",
                    false,
                    "rejected",
                    heads[2].as_str()
                ),
            ]
        );
        assert_eq!(verify_chain(&text).unwrap().hash, heads[2]);
        // The same decision after other lines is another decision.
        let other = format!("{}\n{text}", entry_line(&entries[0]));
        assert!(decisions(&other).iter().all(|d| !heads.contains(&d.head)));
        // A torn last line ends the reading; what came before stands.
        let torn = format!("{text}{{\"key\":\"x#1:human\",\"kind\":\"hum");
        assert_eq!(decisions(&torn), found);
    }

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
                labels: Vec::new(),
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

    fn chained(entries: &[JournalEntry]) -> Vec<String> {
        let mut prev = GENESIS.to_string();
        entries
            .iter()
            .map(|e| {
                let line = chained_line(e, &prev);
                prev = link(&prev, &line);
                line
            })
            .collect()
    }

    fn entries(n: usize) -> Vec<JournalEntry> {
        (1..=n)
            .map(|i| JournalEntry {
                key: format!("n{i}#1:work"),
                answer: Answer::Work {
                    output: format!("out {i}"),
                },
                made_from: None,
            })
            .collect()
    }

    fn text(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn a_chained_journal_reads_back_and_verifies_to_its_head() {
        let entries = entries(4);
        let lines = chained(&entries);
        assert!(lines[0].ends_with(&format!(r#","prev":"{GENESIS}"}}"#)));
        let text = text(&lines);
        assert_eq!(Journal::from_jsonl(&text).unwrap().entries, entries);
        let head = verify_chain(&text).unwrap();
        let expected = lines.iter().fold(GENESIS.to_string(), |h, l| link(&h, l));
        assert_eq!(head.hash, expected);
        assert_eq!((head.entries, head.unchained), (4, 0));
        assert_eq!(verify_chain("").unwrap().hash, GENESIS);
        // SHA-256 itself, against its published test vector.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn an_edited_entry_breaks_the_chain_at_the_next_line() {
        let mut lines = chained(&entries(4));
        lines[1] = lines[1].replace("out 2", "out two");
        let err = verify_chain(&text(&lines)).unwrap_err();
        assert_eq!((err.line, err.entry.as_deref()), (3, Some("n3#1:work")));
        assert!(matches!(err.what, ChainBreak::WrongPrev { .. }), "{err}");
        assert!(err
            .to_string()
            .starts_with("journal line 3 (entry n3#1:work): it does not chain"));
    }

    #[test]
    fn a_dropped_entry_breaks_the_chain_where_it_was() {
        let mut lines = chained(&entries(4));
        lines.remove(1);
        let err = verify_chain(&text(&lines)).unwrap_err();
        assert_eq!((err.line, err.entry.as_deref()), (2, Some("n3#1:work")));
    }

    #[test]
    fn an_inserted_entry_breaks_the_chain() {
        let lines = chained(&entries(3));
        // An unchained line after chained ones.
        let mut unchained = lines.clone();
        unchained.insert(2, entry_line(&entries(9)[8]));
        let err = verify_chain(&text(&unchained)).unwrap_err();
        assert_eq!((err.line, err.what.clone()), (3, ChainBreak::Unchained));
        // A chained line forged onto its predecessor breaks the one after.
        let mut forged = lines.clone();
        let prev = link(&link(GENESIS, &lines[0]), &lines[1]);
        forged.insert(2, chained_line(&entries(9)[8], &prev));
        let err = verify_chain(&text(&forged)).unwrap_err();
        assert_eq!((err.line, err.entry.as_deref()), (4, Some("n3#1:work")));
        // A line that is no entry at all.
        let mut junk = lines;
        junk.insert(1, "{\"nope\":1}".into());
        let err = verify_chain(&text(&junk)).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(matches!(err.what, ChainBreak::Unreadable(_)));
    }

    #[test]
    fn an_older_unchained_journal_verifies_and_is_bound_by_the_chain_after_it() {
        let old: Vec<String> = entries(2).iter().map(entry_line).collect();
        let head = verify_chain(&text(&old)).unwrap();
        assert_eq!((head.entries, head.unchained), (2, 2));
        // Resumed: new lines chain from the old lines' hash.
        let mut lines = old.clone();
        lines.push(chained_line(&entries(3)[2], &head.hash));
        let after = verify_chain(&text(&lines)).unwrap();
        assert_eq!((after.entries, after.unchained), (3, 2));
        // The chain binds the unchained lines before it too.
        lines[0] = lines[0].replace("out 1", "out one");
        assert_eq!(verify_chain(&text(&lines)).unwrap_err().line, 3);
    }
}
