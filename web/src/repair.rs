//! Fixing a note whose frontmatter cannot be read: which of its knobs the
//! app cannot show (all of them when the block does not parse, else the
//! ones whose values are wrong), the line to point at, and the whole-note
//! edit the repair editor saves. The save is a [`Change`] like every other
//! edit, so the writer still checks the disk before it writes.

use crate::commands::{Change, FileChange};
use crate::doc::VaultDoc;
use planvault_core::vault::frontmatter::KNOWN_KEYS;
use planvault_core::{Code, Diagnostic};
use thiserror::Error;

/// A frontmatter finding (as opposed to one about the note's links).
fn is_frontmatter(d: &Diagnostic) -> bool {
    matches!(d.code, Code::BadFrontmatter | Code::NestingTooDeep)
}

/// The knob a finding is about, when it is about one value (`` `status`
/// must be … ``); `None` when the block itself could not be read.
fn knob_of(d: &Diagnostic) -> Option<&'static str> {
    KNOWN_KEYS.into_iter().find(|k| {
        d.message
            .strip_prefix('`')
            .and_then(|m| m.strip_prefix(k))
            .is_some_and(|rest| rest.starts_with("` must"))
    })
}

/// Which knobs of a note cannot be read from its frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// The block does not parse (or is never closed): none of them.
    All,
    /// These keys' values are wrong; the others were read.
    Keys(Vec<&'static str>),
}

impl Unreadable {
    pub fn covers(&self, key: &str) -> bool {
        match self {
            Unreadable::All => true,
            Unreadable::Keys(keys) => keys.contains(&key),
        }
    }
}

/// What cannot be read of node `index`'s knobs; `None` when all can.
pub fn unreadable(doc: &VaultDoc, index: usize) -> Option<Unreadable> {
    let mut keys = Vec::new();
    let mut any = false;
    for d in doc.diagnostics_of(index).filter(|d| is_frontmatter(d)) {
        any = true;
        match knob_of(d) {
            Some(key) if !keys.contains(&key) => keys.push(key),
            Some(_) => {}
            None => return Some(Unreadable::All),
        }
    }
    any.then_some(Unreadable::Keys(keys))
}

/// Node `index`'s knobs as the side panel lists them when some cannot be
/// read: "cannot read: fix the frontmatter" for those, the value for the
/// others. `None` when every knob can be read.
pub fn knobs(doc: &VaultDoc, index: usize) -> Option<Vec<(&'static str, String)>> {
    let unreadable = unreadable(doc, index)?;
    let node = doc.checked.plan.nodes.get(index)?;
    let or_none = |s: String| if s.is_empty() { "none".to_string() } else { s };
    let read = [
        ("Type", "type", node.kind.as_str().to_string()),
        ("Status", "status", node.status.as_str().to_string()),
        ("Tools", "tools", or_none(node.tools.join(", "))),
        (
            "Role",
            "role",
            or_none(node.role.clone().unwrap_or_default()),
        ),
        ("Max visits", "max_visits", node.max_visits.to_string()),
    ];
    Some(
        read.into_iter()
            .map(|(name, key, value)| {
                let text = if unreadable.covers(key) {
                    "cannot read: fix the frontmatter".to_string()
                } else {
                    value
                };
                (name, text)
            })
            .collect(),
    )
}

/// The first frontmatter finding in `file`: its line and what it says.
pub fn problem(doc: &VaultDoc, file: &str) -> Option<(u32, String)> {
    doc.checked
        .diagnostics
        .iter()
        .filter(|d| is_frontmatter(d) && d.file.as_deref() == Some(file))
        .min_by_key(|d| d.line)
        .map(|d| (d.line.unwrap_or(1), d.message.clone()))
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RepairError {
    #[error("{0} changed on disk since you opened it here, so nothing was written; copy your text, then close and open the note again to start from what is on disk")]
    ChangedSinceOpened(String),
    #[error("{0} is no longer in the vault, so nothing was written")]
    Gone(String),
}

/// The whole-note edit from `opened` (the text the editor started from) to
/// `text`; refused when the app holds another text for the note by now
/// (the outside-change poll saw it change). `None`: nothing to write.
pub fn save(
    doc: &VaultDoc,
    file: &str,
    opened: &str,
    text: &str,
) -> Result<Option<Change>, RepairError> {
    // A text box gives every line break as `\n`: a note whose lines all
    // end `\r\n` keeps them, so the edit changes only what was edited.
    let crlf = opened.matches("\r\n").count();
    let text = match crlf > 0 && crlf == opened.matches('\n').count() {
        true => text.replace("\r\n", "\n").replace('\n', "\r\n"),
        false => text.to_string(),
    };
    match doc.files.get(file) {
        None => Err(RepairError::Gone(file.to_string())),
        Some(now) if now != opened => Err(RepairError::ChangedSinceOpened(file.to_string())),
        Some(_) if text == opened => Ok(None),
        Some(_) => Ok(Some(Change {
            summary: format!("edit {file}"),
            files: vec![FileChange {
                path: file.to_string(),
                before: Some(opened.to_string()),
                after: Some(text),
            }],
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn doc(notes: &[(&str, &str)]) -> VaultDoc {
        let files: BTreeMap<String, String> = notes
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        VaultDoc::new(files)
    }

    const BROKEN: &str = "---\ntype: start\nstatus: [done\nrole: writer\n---\n# A\n";

    #[test]
    fn a_block_that_does_not_parse_hides_every_knob_and_names_its_line() {
        let doc = doc(&[("a.md", BROKEN)]);
        let a = doc.node_index("a").unwrap();
        assert_eq!(unreadable(&doc, a), Some(Unreadable::All));
        let all = knobs(&doc, a).unwrap();
        assert!(
            all.iter()
                .all(|(_, v)| v == "cannot read: fix the frontmatter"),
            "{all:?}"
        );
        let (line, message) = problem(&doc, "a.md").unwrap();
        assert!(message.contains("not valid YAML"), "{message}");
        assert!((3..=5).contains(&line), "line {line}");
    }

    #[test]
    fn an_unclosed_block_is_unreadable_at_line_one() {
        let doc = doc(&[("a.md", "---\ntype: start\n# A\n")]);
        assert_eq!(unreadable(&doc, 0), Some(Unreadable::All));
        assert_eq!(problem(&doc, "a.md").map(|p| p.0), Some(1));
    }

    #[test]
    fn a_wrong_value_hides_only_its_knob() {
        let doc = doc(&[(
            "a.md",
            "---\ntype: start\nstatus: finished\nmax_visits: 0\n---\n# A\n",
        )]);
        let u = unreadable(&doc, 0).unwrap();
        assert_eq!(u, Unreadable::Keys(vec!["status", "max_visits"]));
        assert!(u.covers("status") && !u.covers("type") && !u.covers("role"));
        let cannot = "cannot read: fix the frontmatter".to_string();
        assert_eq!(
            knobs(&doc, 0),
            Some(vec![
                ("Type", "start".to_string()),
                ("Status", cannot.clone()),
                ("Tools", "none".to_string()),
                ("Role", "none".to_string()),
                ("Max visits", cannot),
            ])
        );
        assert_eq!(problem(&doc, "a.md").map(|p| p.0), Some(3));
    }

    #[test]
    fn a_readable_note_has_nothing_to_repair() {
        let doc = doc(&[(
            "a.md",
            "---\ntype: start\n---\n# A\n\n## Next\n- [[gone]]\n",
        )]);
        assert_eq!(unreadable(&doc, 0), None);
        assert_eq!(knobs(&doc, 0), None);
        assert_eq!(problem(&doc, "a.md"), None);
    }

    /// A red-team pass: the text box gives `\n` for every line break, so
    /// deleting one `[` of a CRLF note rewrote every line's ending.
    #[test]
    fn a_crlf_note_keeps_its_line_breaks_where_it_was_not_edited() {
        let broken = "\u{feff}---\r\ntype: start\r\nstatus: [done\r\n---\r\n# A\r\n";
        let doc = doc(&[("a.md", broken)]);
        let typed = broken.replace("\r\n", "\n").replace("[done", "done");
        let change = save(&doc, "a.md", broken, &typed).unwrap().unwrap();
        assert_eq!(
            change.files[0].after.as_deref(),
            Some(broken.replace("[done", "done").as_str())
        );
        // Opened and saved as it was: nothing to write.
        assert!(save(&doc, "a.md", broken, &broken.replace("\r\n", "\n"))
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_save_is_a_checked_change_refused_once_the_note_changed_here() {
        let doc = doc(&[("a.md", BROKEN)]);
        let fixed = BROKEN.replace("[done", "done");
        let change = save(&doc, "a.md", BROKEN, &fixed).unwrap().unwrap();
        assert_eq!(change.files[0].before.as_deref(), Some(BROKEN));
        assert_eq!(change.files[0].after.as_deref(), Some(fixed.as_str()));
        let after = doc.with_changes(change.results());
        assert_eq!(unreadable(&after, 0), None, "the plan is checked again");
        assert_eq!(after.checked.plan.nodes[0].status.as_str(), "done");
        assert_eq!(save(&doc, "a.md", BROKEN, BROKEN), Ok(None));
        assert_eq!(
            save(&after, "a.md", BROKEN, "x"),
            Err(RepairError::ChangedSinceOpened("a.md".into()))
        );
        assert_eq!(
            save(&doc, "b.md", "", "x"),
            Err(RepairError::Gone("b.md".into()))
        );
    }
}
