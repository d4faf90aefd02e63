//! Writing notes: `update_status` edits one line of a note on disk;
//! `save_plan` renders whole notes for a plan that lives only in memory (an
//! LLM-emitted graph persisted into the run vault).

use super::frontmatter::{self, Split};
use super::text::{chomp, line_ending, strip_bom};
use crate::{NodeExt, NodeKind, Plan, Status, DEFAULT_MAX_VISITS};
use serde::Serialize;
use std::collections::BTreeMap;

/// Set a note's `status:`. Only the status value changes; a note without the
/// key gets it (before the closing `---`), a note without frontmatter gets a
/// block. Every other byte, BOM and line endings included, stays as it was.
#[cfg_attr(planvault_size, optimize(size))]
pub fn update_status(text: &str, status: Status) -> String {
    let (content, bom_len) = strip_bom(text);
    let eol = line_ending(text);
    let value = status.as_str();
    let Split::Closed(block) = frontmatter::split(content) else {
        // No block (or an unclosed one, which is no frontmatter to Obsidian
        // either): put a fresh block on top.
        let mut out = String::with_capacity(text.len() + 32);
        out.push_str(&text[..bom_len]);
        out.push_str(&format!("---{eol}status: {value}{eol}---{eol}"));
        out.push_str(content);
        return out;
    };
    let base = bom_len + block.yaml_offset;
    let entries = frontmatter::entries(block.yaml);
    let (start, end, replacement) = match entries.iter().find(|e| e.key == "status") {
        Some(entry) if !entry.inline_value.is_empty() => {
            let start = base + entry.value_offset;
            (start, start + entry.inline_value.len(), value.to_string())
        }
        Some(entry) => {
            // `status:` with its value missing or on the lines below: the
            // whole entry becomes one line.
            let first_line = chomp(entry.raw.lines().next().unwrap_or_default());
            if entry.raw.trim_end() == first_line.trim_end() {
                // Before a comment on the line, which stays the comment.
                let comment = key_line_comment(first_line, entry.value_offset - entry.offset);
                match comment {
                    Some(_) => {
                        let at = base + entry.value_offset;
                        (at, at, format!("{value} "))
                    }
                    None => {
                        let at = base + entry.offset + first_line.len();
                        (at, at, format!(" {value}"))
                    }
                }
            } else {
                let start = base + entry.offset;
                (start, start + entry.raw.len(), format!("status: {value}"))
            }
        }
        None => {
            let at = bom_len + block.close_offset;
            (at, at, format!("status: {value}{eol}"))
        }
    };
    let mut out = String::with_capacity(text.len() + replacement.len());
    out.push_str(&text[..start]);
    out.push_str(&replacement);
    out.push_str(&text[end..]);
    out
}

/// [`update_status`], checked by reading the note back: its frontmatter
/// reads `status` as the new value and every other property as before.
/// A value that spans lines (a block scalar, a quoted string broken over
/// lines) has its whole entry made one line. Where no rewrite of the
/// value keeps the rest (an anchor another key uses, a `? status` key),
/// `Err` says why, and the note should not be written.
#[cfg_attr(planvault_size, optimize(size))]
pub fn checked_update_status(text: &str, status: Status) -> Result<String, String> {
    let updated = update_status(text, status);
    if reads_back(text, &updated, status) {
        return Ok(updated);
    }
    if let Some(whole) = status_entry_as_one_line(text, status) {
        if reads_back(text, &whole, status) {
            return Ok(whole);
        }
    }
    Err(why_not_written(text))
}

/// Whether `after`'s frontmatter is `before`'s with `status` set.
#[cfg_attr(planvault_size, optimize(size))]
fn reads_back(before: &str, after: &str, status: Status) -> bool {
    use yaml_serde::Value;
    let properties = |text: &str| -> Option<yaml_serde::Mapping> {
        match frontmatter::split(strip_bom(text).0) {
            Split::Closed(block) => match frontmatter::properties(block.yaml).ok()? {
                Value::Mapping(map) => Some(map),
                Value::Null => Some(yaml_serde::Mapping::new()),
                _ => None,
            },
            _ => Some(yaml_serde::Mapping::new()),
        }
    };
    let (Some(mut old), Some(mut new)) = (properties(before), properties(after)) else {
        return false;
    };
    let key = Value::String("status".into());
    let set = new.remove(&key) == Some(Value::String(status.as_str().into()));
    old.remove(&key);
    set && old == new
}

/// The comment on an entry's key line (`# …`), where the value, from byte
/// `value_start` of the line, is followed by one.
#[cfg_attr(planvault_size, optimize(size))]
fn key_line_comment(line: &str, value_start: usize) -> Option<&str> {
    let value = line.get(value_start..)?;
    let inline = frontmatter::strip_comment(value);
    let rest = value.get(inline.len()..)?.trim();
    rest.starts_with('#').then_some(rest)
}

/// `text` with its `status` entry, every line of it, made `status: value`
/// (the comment on its key line kept).
#[cfg_attr(planvault_size, optimize(size))]
fn status_entry_as_one_line(text: &str, status: Status) -> Option<String> {
    let (content, bom_len) = strip_bom(text);
    let Split::Closed(block) = frontmatter::split(content) else {
        return None;
    };
    let entries = frontmatter::entries(block.yaml);
    let entry = entries.iter().find(|e| e.key == "status")?;
    let start = bom_len + block.yaml_offset + entry.offset;
    let end = start + entry.raw.len();
    let first_line = chomp(entry.raw.lines().next().unwrap_or_default());
    let comment = key_line_comment(first_line, entry.value_offset - entry.offset)
        .map(|c| format!(" {c}"))
        .unwrap_or_default();
    Some(format!(
        "{}status: {}{comment}{}",
        &text[..start],
        status.as_str(),
        &text[end..]
    ))
}

/// Why no write of `status` reads back as it should.
#[cfg_attr(planvault_size, optimize(size))]
fn why_not_written(text: &str) -> String {
    let refused = match frontmatter::split(strip_bom(text).0) {
        Split::Closed(block) => match frontmatter::properties(block.yaml) {
            Err(error) => Some(format!(
                "its frontmatter does not read as YAML ({}): fix it, then its status can be written",
                error.lines().next().unwrap_or_default()
            )),
            Ok(yaml_serde::Value::Mapping(_) | yaml_serde::Value::Null) => None,
            Ok(_) => Some(
                "its frontmatter is not a map of properties (`key: value` lines): fix it, then its status can be written"
                    .to_string(),
            ),
        },
        _ => None,
    };
    refused.unwrap_or_else(|| {
        format!(
            "its `status:` is written in a form planvault cannot change without changing the rest of the frontmatter (an anchor another key uses, a `? status` key); write it as `status: {}`",
            Status::Pending.as_str()
        )
    })
}

/// The knobs as frontmatter, defaults left out (except `status`, the resume
/// marker, which is always written so it can be watched in a notes app).
#[derive(Serialize)]
struct Knobs<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    status: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tools: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_visits: Option<u32>,
}

/// The file a node is saved to: its note's path, or `<id>.md`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn note_file(plan: &Plan, node: usize) -> String {
    let n = &plan.nodes[node];
    match &n.ext {
        NodeExt::Vault(v) if !v.file.is_empty() => v.file.clone(),
        _ => format!("{}.md", n.id),
    }
}

/// One node as a complete note: frontmatter, `# title`, body, `## Next`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn render_note(plan: &Plan, node: usize) -> String {
    let n = &plan.nodes[node];
    let knobs = Knobs {
        kind: match n.kind {
            NodeKind::Start => Some("start"),
            NodeKind::Human => Some("human"),
            _ => None,
        },
        status: n.status.as_str(),
        tools: &n.tools,
        role: n.role.as_deref(),
        max_visits: (n.max_visits != DEFAULT_MAX_VISITS).then_some(n.max_visits),
    };
    let mut out = String::from("---\n");
    out.push_str(&yaml_serde::to_string(&knobs).unwrap_or_default());
    if let NodeExt::Vault(v) = &n.ext {
        for (_, raw) in &v.extra_frontmatter {
            out.push_str(raw);
            out.push('\n');
        }
    }
    out.push_str("---\n# ");
    out.push_str(&n.title);
    out.push('\n');
    if !n.body.is_empty() {
        out.push('\n');
        out.push_str(&n.body);
        out.push('\n');
    }
    let edges: Vec<_> = plan.outgoing(node).collect();
    if !edges.is_empty() {
        out.push_str("\n## Next\n");
        for edge in edges {
            let target = match (&edge.to, edge.target.is_empty()) {
                (Some(to), true) if *to != node => plan.nodes[*to].id.as_str(),
                _ => edge.target.as_str(),
            };
            // A link keeps the form its note gave it (an alias, a markdown
            // link).
            let link = match &edge.written {
                Some(written) if !edge.target.is_empty() => written.clone(),
                _ => format!("[[{target}]]"),
            };
            match &edge.label {
                Some(label) => out.push_str(&format!("- {label} -> {link}\n")),
                None => out.push_str(&format!("- {link}\n")),
            }
        }
    }
    out
}

/// Every node of a plan as a note: vault-relative path → text. The caller
/// writes the files.
#[cfg_attr(planvault_size, optimize(size))]
pub fn save_plan(plan: &Plan) -> BTreeMap<String, String> {
    (0..plan.nodes.len())
        .map(|i| (note_file(plan, i), render_note(plan, i)))
        .collect()
}

/// An item of a plan file whose run has answers on record, changed in the
/// file since that run began: its note in the run vault, and its title as
/// that note has it and as the file has it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedItem {
    pub note: String,
    pub was: String,
    pub now: String,
}

/// The run vault's notes of a plan that lives in one file (a PLAN.md or a
/// generated plan, run in `PLAN.run/`), given the notes `on_disk` there.
/// Returns the notes to write, and sets each node's status from its note.
///
/// A new run (`resuming` false: no journal, nothing on record) writes every
/// note afresh: a status found in a note no run of this machine wrote (a
/// `PLAN.run/` that came with a repository) is not taken. A resume keeps
/// each note, and with it the item's status, only while the item reads as
/// it did: a note is bound to its item by position, so an item inserted
/// above it, or its text, command or routes changed, would hand the new
/// item the old one's recorded answers (a gate put before a deploy step
/// taken as approved). Such an item that ran is refused, naming it; one
/// that had not run gets the new text: one still pending, or one the run
/// was at (`active`) with nothing on record for it (`answered`: whether
/// the journal holds an answer for a node id), as when the run was cut
/// off during its model call. An item checked `[x]` in the file is done
/// by hand, whatever its note says.
pub fn run_vault_notes(
    plan: &mut Plan,
    on_disk: &BTreeMap<String, String>,
    resuming: bool,
    answered: &dyn Fn(&str) -> bool,
) -> Result<BTreeMap<String, String>, Vec<ChangedItem>> {
    let mut write = BTreeMap::new();
    let mut kept = BTreeMap::new();
    let mut changed = Vec::new();
    for i in 0..plan.nodes.len() {
        let file = note_file(plan, i);
        let fingerprint = item_fingerprint(&plan.nodes[i]);
        let rendered = run_vault_note(plan, i);
        let by_hand = plan.nodes[i].status == Status::Done;
        let same = |note: &str| match written_fingerprint(note) {
            Some(written) => written == fingerprint,
            // A note from before fingerprints: its text.
            None => same_item(note, &rendered),
        };
        match on_disk.get(&file).filter(|_| resuming) {
            Some(note) if by_hand || same(note) => {
                kept.insert(file, note.clone());
            }
            Some(note) => {
                let (saved, _) = super::load(&BTreeMap::from([(file.clone(), note.clone())]));
                let ran = saved.nodes.first().is_some_and(|n| match n.status {
                    Status::Pending => false,
                    Status::Active => answered(&plan.nodes[i].id),
                    Status::Done | Status::Failed => true,
                });
                if ran {
                    changed.push(ChangedItem {
                        was: saved
                            .nodes
                            .first()
                            .map(|n| n.title.clone())
                            .unwrap_or_default(),
                        now: plan.nodes[i].title.clone(),
                        note: file,
                    });
                } else {
                    write.insert(file, rendered);
                }
            }
            None => {
                write.insert(file, rendered);
            }
        }
    }
    if !changed.is_empty() {
        return Err(changed);
    }
    let (saved, _) = super::load(&kept);
    for node in &mut plan.nodes {
        if let Some(note) = saved.nodes.iter().find(|n| n.id == node.id) {
            if node.status != Status::Done {
                node.status = note.status;
            }
        }
    }
    Ok(write)
}

/// Node `i` of a plan that lives in one file as its run vault's note: the
/// item's fingerprint first in its frontmatter, what binds the note to the
/// item on a resume ([`run_vault_notes`]), then [`render_note`]'s text.
/// Every writer of such a note (an amendment's too) writes it so.
pub fn run_vault_note(plan: &Plan, i: usize) -> String {
    let fingerprint = item_fingerprint(&plan.nodes[i]);
    render_note(plan, i).replacen("---\n", &format!("---\n{ITEM_KEY}: {fingerprint}\n"), 1)
}

/// The frontmatter key of a run vault's note that holds its item's
/// fingerprint ([`run_vault_notes`]).
const ITEM_KEY: &str = "item";

/// What an item of a plan file declares, hashed: its kind, title, text and
/// every marker (a `@tool` command, `@emit`s, `@needs`, a label, a
/// generated step's capability, arguments and preconditions), not where
/// it is written nor where it leads.
fn item_fingerprint(node: &crate::Node) -> String {
    let declared = match &node.ext {
        NodeExt::PlanMd(item) => serde_json::json!({
            "label": item.label,
            "command": item.command,
            "scenarios": item.scenarios,
            "emits": item.emits,
            "needs": item.needs,
        }),
        NodeExt::Generated(step) => serde_json::json!({
            "capability": step.capability,
            "args": step.args,
            "preconditions": serde_json::to_value(&step.preconditions).unwrap_or_default(),
        }),
        _ => serde_json::Value::Null,
    };
    let text = serde_json::json!([node.kind.as_str(), node.title, node.body, declared]);
    crate::engine::journal::sha256_hex(text.to_string().as_bytes())[..16].to_string()
}

/// The fingerprint a run vault's note was written with, if any.
fn written_fingerprint(note: &str) -> Option<&str> {
    let Split::Closed(block) = frontmatter::split(strip_bom(note).0) else {
        return None;
    };
    block.yaml.lines().find_map(|line| {
        line.strip_prefix(ITEM_KEY)?
            .strip_prefix(':')
            .map(str::trim)
    })
}

/// Why a run of a plan file that changed under it is not resumed, its run
/// vault named as `run_vault`.
pub fn plan_changed(run_vault: &str, changed: &[ChangedItem]) -> String {
    let items: Vec<String> = changed
        .iter()
        .map(|c| {
            let item = c.note.strip_suffix(".md").unwrap_or(&c.note);
            match c.was == c.now {
                true => format!(
                    "item {item}, “{}”, is of another kind or has other markers now",
                    c.now
                ),
                false => format!("item {item} was “{}”, is now “{}”", c.was, c.now),
            }
        })
        .collect();
    format!(
        "the plan file changed since the run kept in {run_vault}/ began, and these items had run as they were: {}; uncheck [ ] the items that should run again and run with --fresh (an item checked [x] counts as done)",
        items.join("; ")
    )
}

/// Whether a run vault's note is of the item `rendered` renders: the same
/// title and text below its frontmatter, and the same kind. Its status is
/// the run's to change, the rest of its frontmatter how this version of
/// planvault writes it, and where it leads may grow (an amendment's item
/// that comes after it) and is re-derived from its recorded answer anyway.
fn same_item(note: &str, rendered: &str) -> bool {
    let kind = |text: &str| {
        let (plan, _) = super::load(&BTreeMap::from([("n.md".to_string(), text.to_string())]));
        plan.nodes.first().map(|n| n.kind)
    };
    let own = |text: &str| -> String {
        let body = super::edit::body(text);
        body[..body.rfind("\n## Next\n").unwrap_or(body.len())].to_string()
    };
    own(note) == own(rendered) && kind(note) == kind(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_only_the_status_value() {
        let text = "\u{feff}---\r\ntype: step\r\nstatus: pending   # resume marker\r\nowner: me\r\n---\r\n# T\r\n";
        assert_eq!(
            update_status(text, Status::Active),
            "\u{feff}---\r\ntype: step\r\nstatus: active   # resume marker\r\nowner: me\r\n---\r\n# T\r\n"
        );
    }

    #[test]
    fn replaces_a_quoted_value_whole() {
        assert_eq!(
            update_status("---\nstatus: \"done\" # x\n---\n", Status::Pending),
            "---\nstatus: pending # x\n---\n"
        );
    }

    #[test]
    fn adds_the_key_before_the_closing_fence() {
        assert_eq!(
            update_status("---\r\nrole: review\r\n---\r\nbody\r\n", Status::Done),
            "---\r\nrole: review\r\nstatus: done\r\n---\r\nbody\r\n"
        );
        assert_eq!(
            update_status("---\n---\n", Status::Done),
            "---\nstatus: done\n---\n"
        );
    }

    #[test]
    fn adds_a_block_to_a_note_without_one() {
        assert_eq!(
            update_status("\u{feff}# T\r\n", Status::Active),
            "\u{feff}---\r\nstatus: active\r\n---\r\n# T\r\n"
        );
        assert_eq!(
            update_status("", Status::Active),
            "---\nstatus: active\n---\n"
        );
    }

    #[test]
    fn fills_an_empty_status() {
        assert_eq!(
            update_status("---\nstatus:\nrole: r\n---\n", Status::Done),
            "---\nstatus: done\nrole: r\n---\n"
        );
        assert_eq!(
            update_status("---\nstatus:\n  done\n---\n", Status::Active),
            "---\nstatus: active\n---\n"
        );
    }

    /// The forms of `status:` a red team found the line edit broke: checked,
    /// a value over several lines becomes one line, and what cannot be
    /// changed alone is refused instead of written.
    #[test]
    fn a_checked_write_reads_back_or_is_refused() {
        let check = |text: &str| checked_update_status(text, Status::Done);
        assert_eq!(
            check("---\nstatus: >-\n  pending\nowner: me\n---\n# T\n"),
            Ok("---\nstatus: done\nowner: me\n---\n# T\n".to_string())
        );
        assert_eq!(
            check("---\nstatus: \"pend\\\n  ing\"\nowner: me\n---\n"),
            Ok("---\nstatus: done\nowner: me\n---\n".to_string())
        );
        for refused in [
            "---\nstatus: &s pending\nphase: *s\n---\n",
            "---\n? status\n: pending\n---\n",
        ] {
            let error = check(refused).unwrap_err();
            assert!(
                error.contains("write it as `status: pending`"),
                "{refused:?}: {error}"
            );
        }
        // The plain forms are the line edit's, byte for byte.
        for text in [
            "\u{feff}---\r\ntype: step\r\nstatus: pending   # resume marker\r\nowner: me\r\n---\r\n# T\r\n",
            "---\nstatus: \"done\" # x\n---\n",
            "---\r\nrole: review\r\n---\r\nbody\r\n",
            "# T\n",
            "---\nstatus:\nrole: r\n---\n",
        ] {
            assert_eq!(check(text), Ok(update_status(text, Status::Done)), "{text:?}");
        }
    }

    /// A red team's notes, read back as Obsidian reads them (eemeli/yaml):
    /// an empty `status:` with a comment lost its comment (`status: #
    /// set by the runner` became `status: done`), a comment holding `#`
    /// twice was half taken for the value, and a value over several lines
    /// took its key line's comment with it.
    #[test]
    fn a_comment_on_the_status_line_stays() {
        let check = |text: &str| checked_update_status(text, Status::Done);
        assert_eq!(
            check("---\nstatus: # set by the runner\nowner: me\n---\n"),
            Ok("---\nstatus: done # set by the runner\nowner: me\n---\n".to_string())
        );
        assert_eq!(
            check("---\r\nstatus: # pending | active | done # set by the runner\r\n---\r\n"),
            Ok(
                "---\r\nstatus: done # pending | active | done # set by the runner\r\n---\r\n"
                    .to_string()
            )
        );
        assert_eq!(
            check("---\nstatus: |  # the runner's\n  pending\nowner: me\n---\n"),
            Ok("---\nstatus: done # the runner's\nowner: me\n---\n".to_string())
        );
    }

    /// A red team's note: every refusal said "an anchor another key uses, a
    /// `? status` key", also where the frontmatter did not read at all.
    #[test]
    fn a_refusal_says_why() {
        let why =
            checked_update_status("---\nowner: me\nowner: you\n---\n", Status::Done).unwrap_err();
        assert!(why.contains("does not read as YAML"), "{why}");
        assert!(!why.contains("anchor"), "{why}");
        let why = checked_update_status("---\n- a\n- b\n---\n", Status::Done).unwrap_err();
        assert!(why.contains("not a map of properties"), "{why}");
        let why = checked_update_status("---\nstatus: &s pending\nphase: *s\n---\n", Status::Done)
            .unwrap_err();
        assert!(why.contains("an anchor another key uses"), "{why}");
    }

    #[test]
    fn leaves_nested_status_keys_alone() {
        assert_eq!(
            update_status("---\nmeta:\n  status: x\n---\n", Status::Done),
            "---\nmeta:\n  status: x\nstatus: done\n---\n"
        );
    }

    /// A run vault's notes: afresh for a new run, kept on a resume while
    /// their items read as they did, refused where an item that ran changed.
    #[test]
    fn run_vault_notes_are_bound_to_their_items() {
        let plan = |text: &str| crate::planmd::parse("PLAN.md", text).0;
        let first = "- [ ] Draft\n- [ ] (after: 1) Check the changelog\n- [ ] (after: 2) Tag\n";
        let mut p = plan(first);
        let written = run_vault_notes(&mut p, &BTreeMap::new(), false, &|_| true).unwrap();
        assert_eq!(written.len(), 3);
        // Items 1 and 2 ran; 3 did not.
        let mut disk = written.clone();
        for note in ["1.md", "2.md"] {
            disk.insert(note.into(), update_status(&disk[note], Status::Done));
        }
        let statuses = |p: &Plan| p.nodes.iter().map(|n| n.status).collect::<Vec<_>>();

        // A new run takes no status from notes found there.
        let mut p = plan(first);
        assert_eq!(
            run_vault_notes(&mut p, &disk, false, &|_| true).unwrap(),
            written
        );
        assert_eq!(statuses(&p), [Status::Pending; 3]);

        // A resume keeps them, and a changed item that has not run is new.
        let mut p = plan(&first.replace("Tag", "Tag the release"));
        let rewritten = run_vault_notes(&mut p, &disk, true, &|_| true).unwrap();
        assert_eq!(rewritten.keys().collect::<Vec<_>>(), ["3.md"]);
        assert!(rewritten["3.md"].contains("# Tag the release"));
        assert_eq!(statuses(&p), [Status::Done, Status::Done, Status::Pending]);

        // An item that ran, changed (its text, or its kind): refused.
        for changed in [
            first.replace("Check the changelog", "Approve"),
            first.replace("(after: 1) Check", "(after: 1) @human Check"),
            first.replace("(after: 1) Check", "(after: 1) @gate Check"),
            first.replace(
                "Check the changelog\n",
                "Check the changelog\n  @emit checked\n",
            ),
        ] {
            let mut p = plan(&changed);
            let refused = run_vault_notes(&mut p, &disk, true, &|_| true).unwrap_err();
            assert_eq!(refused.len(), 1, "{changed}");
            assert_eq!(refused[0].note, "2.md");
            assert_eq!(refused[0].was, "Check the changelog");
        }
        // The item the run was at (`active`): changed, it ran only where
        // the journal holds an answer for it (a run cut off during its
        // model call has none, and the item is new).
        let mut at = disk.clone();
        at.insert("3.md".into(), update_status(&disk["3.md"], Status::Active));
        let changed = first.replace("Tag", "Tag the release");
        let mut p = plan(&changed);
        let rewritten = run_vault_notes(&mut p, &at, true, &|id| id != "3").unwrap();
        assert_eq!(rewritten.keys().collect::<Vec<_>>(), ["3.md"]);
        assert!(rewritten["3.md"].contains("# Tag the release"));
        assert_eq!(p.nodes[2].status, Status::Pending);
        let refused = run_vault_notes(&mut plan(&changed), &at, true, &|_| true).unwrap_err();
        assert_eq!(refused[0].note, "3.md");
        // Where it is written or leads is no change: a blank line above, an
        // item after it that depends on it.
        let mut p = plan(&format!("\n{first}- [ ] (after: 2) Tell them\n"));
        assert!(run_vault_notes(&mut p, &disk, true, &|_| true).is_ok());
        // A generated plan's step: its capability and arguments bind it.
        let json = |args: &str| {
            let text =
                format!(r#"{{"nodes":[{{"id":"a","capability":"read_note","args":{args}}}]}}"#);
            crate::generated::parse("p.json", &text, &Default::default()).0
        };
        let mut p = json(r#"{"path":"a.md"}"#);
        let mut disk = run_vault_notes(&mut p, &BTreeMap::new(), false, &|_| true).unwrap();
        let note = disk["a.md"].clone();
        disk.insert("a.md".into(), update_status(&note, Status::Done));
        assert!(run_vault_notes(&mut json(r#"{"path":"a.md"}"#), &disk, true, &|_| true).is_ok());
        let refused =
            run_vault_notes(&mut json(r#"{"path":"b.md"}"#), &disk, true, &|_| true).unwrap_err();
        assert_eq!(refused[0].note, "a.md");
        // Unless a person checked it: done by hand.
        let mut p = plan(&first.replace(
            "- [ ] (after: 1) Check the changelog",
            "- [x] (after: 1) Approve",
        ));
        assert!(run_vault_notes(&mut p, &disk, true, &|_| true).is_ok());
        assert_eq!(p.nodes[1].status, Status::Done);
    }
}
