//! Undo and redo across every kind of edit: each entry is a [`Change`], and
//! undoing writes its inverse (checked against the disk like any write).

use crate::commands::Change;

/// Whether a write came from a new edit, an undo or a redo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Edit,
    Undo,
    Redo,
}

#[derive(Debug, Clone, Default)]
pub struct History {
    undo: Vec<Change>,
    redo: Vec<Change>,
}

/// How many edits undo reaches back.
const LIMIT: usize = 500;

impl History {
    /// A new edit was written: it can be undone, and what was undone before
    /// can no longer be redone.
    pub fn record(&mut self, change: Change) {
        self.redo.clear();
        self.undo.push(change);
        if self.undo.len() > LIMIT {
            self.undo.remove(0);
        }
    }

    /// The change to write to undo the last edit (its inverse).
    pub fn peek_undo(&self) -> Option<Change> {
        self.undo.last().map(Change::inverse)
    }

    pub fn peek_redo(&self) -> Option<Change> {
        self.redo.last().cloned()
    }

    /// The undo was written.
    pub fn undone(&mut self) {
        if let Some(c) = self.undo.pop() {
            self.redo.push(c);
        }
    }

    /// The redo was written.
    pub fn redone(&mut self) {
        if let Some(c) = self.redo.pop() {
            self.undo.push(c);
        }
    }

    /// A change submitted as `origin` was not written after all: the
    /// history goes back to before it (changes are reverted newest first).
    pub fn revert(&mut self, origin: Origin) {
        match origin {
            Origin::Edit => {
                self.undo.pop();
            }
            Origin::Undo => {
                if let Some(c) = self.redo.pop() {
                    self.undo.push(c);
                }
            }
            Origin::Redo => {
                if let Some(c) = self.undo.pop() {
                    self.redo.push(c);
                }
            }
        }
    }

    pub fn undo_summary(&self) -> Option<&str> {
        self.undo.last().map(|c| c.summary.as_str())
    }

    pub fn redo_summary(&self) -> Option<&str> {
        self.redo.last().map(|c| c.summary.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::FileChange;

    fn change(n: u8) -> Change {
        Change {
            summary: format!("c{n}"),
            files: vec![FileChange {
                path: "a.md".into(),
                before: Some(format!("{}", n)),
                after: Some(format!("{}", n + 1)),
            }],
        }
    }

    #[test]
    fn undo_then_redo_then_new_edit_drops_redo() {
        let mut h = History::default();
        h.record(change(0));
        h.record(change(1));
        let u = h.peek_undo().unwrap();
        assert_eq!(u.files[0].before.as_deref(), Some("2"));
        assert_eq!(u.files[0].after.as_deref(), Some("1"));
        h.undone();
        assert_eq!(h.redo_summary(), Some("c1"));
        assert_eq!(h.peek_redo().unwrap(), change(1));
        h.redone();
        assert_eq!(h.undo_summary(), Some("c1"));
        h.undone();
        h.record(change(7));
        assert!(h.peek_redo().is_none());
    }

    /// A refused write took the whole history with it, so a note deleted
    /// before could no longer be brought back. Only what was not written
    /// goes.
    #[test]
    fn a_change_not_written_leaves_the_history_as_before_it() {
        let mut h = History::default();
        h.record(change(0));
        h.record(change(1));
        h.undone();
        // An edit, an undo and a redo submitted, then none written.
        let before = (
            h.undo_summary().map(str::to_string),
            h.redo_summary().map(str::to_string),
        );
        h.record(change(2));
        h.undone();
        h.redone();
        for origin in [Origin::Redo, Origin::Undo, Origin::Edit] {
            h.revert(origin);
        }
        assert_eq!(h.undo_summary(), Some("c0"));
        assert_eq!(h.peek_undo().unwrap(), change(0).inverse());
        assert_eq!(before.0.as_deref(), Some("c0"));
        // (the redo a new edit cleared is not brought back)
        assert_eq!(h.redo_summary(), None);
        // A refused undo: the edit is still there to undo.
        h.record(change(3));
        h.undone();
        h.revert(Origin::Undo);
        assert_eq!(h.undo_summary(), Some("c3"));
        assert_eq!(h.redo_summary(), None);
    }
}
