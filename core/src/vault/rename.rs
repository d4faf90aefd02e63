//! Renaming or moving a note without changing what any link means.
//!
//! Obsidian rewrites the links to a note it renames. planvault does the same
//! by resolution, not by spelling: a link is rewritten when it reached the
//! renamed note, or when the rename would make it reach another note than
//! before (a note in another folder that now takes the renamed note's name,
//! or the moved note's own links, read from its new folder). No other link
//! changes, so after a rename every edge of the plan joins the same notes.

use super::edit::rewrite_links;
use super::links::{LinkIndex, Resolution};
use super::{is_plan_note, node_id};
use std::collections::BTreeMap;

/// The notes whose text a rename of note `old_id` to `new_id` (vault paths
/// without `.md`) changes, in path order: each note's path before the
/// rename (the renamed note's own text under its old path) and new text. Every other
/// byte of a changed note stays; a rewritten link keeps its form, alias,
/// heading, embed mark and the way its path was written
/// ([`LinkIndex::relinked_path`]). Empty when `old_id` is no note.
pub fn rename_note(
    files: &BTreeMap<String, String>,
    old_id: &str,
    new_id: &str,
) -> Vec<(String, String)> {
    let notes: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|path| is_plan_note(path))
        .collect();
    let ids_before: Vec<&str> = notes.iter().map(|path| node_id(path)).collect();
    let Some(renamed) = ids_before.iter().position(|id| *id == old_id) else {
        return Vec::new();
    };
    let mut ids_after = ids_before.clone();
    ids_after[renamed] = new_id;
    #[cfg(feature = "silverbullet")]
    let space = super::silverbullet::is_space(files);
    let before = LinkIndex::new(ids_before.iter().copied());
    let after = LinkIndex::new(ids_after.iter().copied());
    let mut changed = Vec::new();
    for (from, path) in notes.iter().enumerate() {
        let text = &files[*path];
        let rewritten = rewrite_links(text, |link| {
            let (Resolution::Found(to), by_path) = before.resolve_by_path(&link.target, from)
            else {
                return None;
            };
            // A link written as a path that named the note by it names it so
            // after: one Obsidian would now only find by searching for the
            // name (as it finds `../Send` when no `Send` is there) is
            // rewritten too. A bare name is kept wherever it still leads.
            let path_written = link.target.contains('/');
            let kept = match after.resolve_by_path(&link.target, from) {
                (Resolution::Found(at), still_by_path) => {
                    at == to && (still_by_path || !by_path || !path_written)
                }
                _ => false,
            };
            let relinked = (!kept).then(|| after.relinked_path(&link.target, to, from));
            // In a SilverBullet space, a link SilverBullet read as this
            // note reads as it after the rename too: from the space's root
            // where the way it was written no longer does.
            #[cfg(feature = "silverbullet")]
            if space {
                use super::silverbullet::{link_path, opens_target};
                let page = |id: &str| Some(format!("{id}.md"));
                let file_after = if from == renamed {
                    format!("{new_id}.md")
                } else {
                    path.to_string()
                };
                let read_it = opens_target(link.form, &link.target, path) == page(ids_before[to]);
                let written = relinked.as_deref().unwrap_or(&link.target);
                if read_it && opens_target(link.form, written, &file_after) != page(ids_after[to]) {
                    let rooted = link_path(&after, to, from, link.form);
                    let md = link.target.ends_with(".md") && !rooted.ends_with(".md");
                    return Some(if md { format!("{rooted}.md") } else { rooted });
                }
            }
            relinked
        });
        if let Some(text) = rewritten {
            changed.push((path.to_string(), text));
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault(notes: &[(&str, &str)]) -> BTreeMap<String, String> {
        notes
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect()
    }

    /// The rename's changed notes, as `path: text` lines.
    fn check(notes: &[(&str, &str)], old: &str, new: &str, expect: &[(&str, &str)]) {
        let changed = rename_note(&vault(notes), old, new);
        let got: Vec<(&str, &str)> = changed
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        assert_eq!(got, expect);
    }

    /// In a SilverBullet space a link SilverBullet read as the moved note
    /// reads as it after the move: `[[Send]]`, which Obsidian still finds
    /// by its unique name, becomes the path from the root. A link
    /// SilverBullet never read so, and any link outside a space, is left
    /// to Obsidian's rules.
    #[cfg(feature = "silverbullet")]
    #[test]
    fn in_a_silverbullet_space_a_moved_note_s_links_read_alike_in_both() {
        const CONFIG: (&str, &str) = ("CONFIG.md", "```space-lua\n```\n");
        let notes = [
            ("Send.md", "# Send\n"),
            (
                "plans/a.md",
                "## Next\n- [[Send]]\n- [go](../Send.md)\n- [go](/Send.md)\n",
            ),
            ("plans/b.md", "## Next\n- [[Send|go]]\n"),
        ];
        let mut space = notes.to_vec();
        space.push(CONFIG);
        check(
            &space,
            "Send",
            "archive/Send",
            &[
                (
                    "plans/a.md",
                    "## Next\n- [[archive/Send]]\n- [go](../archive/Send.md)\n- [go](/archive/Send.md)\n",
                ),
                ("plans/b.md", "## Next\n- [[archive/Send|go]]\n"),
            ],
        );
        // Outside a space: Obsidian's unique name still finds it, and only
        // the paths, which no longer name it, change (`../Send.md` would
        // still find it by its name, `/Send.md` not at all).
        check(
            &notes,
            "Send",
            "archive/Send",
            &[(
                "plans/a.md",
                "## Next\n- [[Send]]\n- [go](../archive/Send.md)\n- [go](/archive/Send.md)\n",
            )],
        );
        // `[[Ship]]` in `plans/` never opened `plans/Ship` in SilverBullet
        // (the root has no `Ship`): the move leaves it as Obsidian would.
        check(
            &[
                CONFIG,
                ("plans/Ship.md", "# Ship\n"),
                ("plans/a.md", "## Next\n- [[Ship]]\n"),
            ],
            "plans/Ship",
            "plans/done/Ship",
            &[],
        );
    }

    #[test]
    fn a_link_to_a_same_named_note_elsewhere_stays() {
        // `b/Source`'s [[draft]] means b/draft (its own folder first).
        check(
            &[
                ("a/draft.md", ""),
                ("b/draft.md", ""),
                ("b/Source.md", "## Next\n- [[draft]]\n"),
                ("a/Source.md", "## Next\n- [[draft]]\n"),
            ],
            "a/draft",
            "a/first",
            &[("a/Source.md", "## Next\n- [[first]]\n")],
        );
    }

    #[test]
    fn a_link_in_a_table_keeps_its_escaped_pipe() {
        // As Obsidian's help links in its tables: `[[Table view\|Table]]`.
        check(
            &[
                ("Table view.md", ""),
                ("Views.md", "| [[Table view\\|Table]] | rows |\n"),
            ],
            "Table view",
            "Grid view",
            &[("Views.md", "| [[Grid view\\|Table]] | rows |\n")],
        );
    }

    #[test]
    fn a_name_another_note_has_becomes_a_path() {
        check(
            &[
                ("a/draft.md", ""),
                ("b/first.md", ""),
                ("c/Source.md", "## Next\n- [[draft|the draft]]\n"),
            ],
            "a/draft",
            "a/first",
            &[("c/Source.md", "## Next\n- [[a/first|the draft]]\n")],
        );
    }

    #[test]
    fn a_link_the_new_name_would_capture_is_written_as_a_path() {
        // [[first]] meant c/first; a/first would come first from a/.
        check(
            &[
                ("a/draft.md", ""),
                ("c/first.md", ""),
                ("a/Source.md", "[[first]]\n"),
            ],
            "a/draft",
            "a/first",
            &[("a/Source.md", "[[c/first]]\n")],
        );
    }

    #[test]
    fn relative_and_rooted_links_keep_their_way() {
        check(
            &[
                ("plans/draft.md", ""),
                (
                    "plans/sub/Source.md",
                    "[[../draft]] [x](/plans/draft.md) [[./other]]\n",
                ),
                ("plans/sub/other.md", ""),
            ],
            "plans/draft",
            "plans/sub/draft v2",
            &[(
                "plans/sub/Source.md",
                "[[./draft v2]] [x](/plans/sub/draft%20v2.md) [[./other]]\n",
            )],
        );
    }

    #[test]
    fn a_moved_note_keeps_its_own_links_meaning() {
        check(
            &[
                ("a/draft.md", "## Next\n- [[Send]]\n- [[../Root]]\n"),
                ("a/Send.md", ""),
                ("b/Send.md", ""),
                ("Root.md", ""),
            ],
            "a/draft",
            "b/c/draft",
            &[("a/draft.md", "## Next\n- [[a/Send]]\n- [[../../Root]]\n")],
        );
    }

    #[test]
    fn links_obsidian_does_not_read_stay() {
        let text =
            "`[[draft]]`\n%%\n[[draft]]\n%%\n```\n[[draft]]\n```\n<!-- [[draft]] --> [[draft]]\n";
        check(
            &[("draft.md", ""), ("Source.md", text)],
            "draft",
            "first",
            &[(
                "Source.md",
                "`[[draft]]`\n%%\n[[draft]]\n%%\n```\n[[draft]]\n```\n<!-- [[draft]] --> [[first]]\n",
            )],
        );
    }

    #[test]
    fn a_markdown_link_wrapped_onto_the_next_line_is_rewritten() {
        // Found by fuzzing: the item's link spans two lines, as the loader
        // reads it; a rewrite line by line missed it and lost the edge.
        check(
            &[
                ("draft.md", ""),
                (
                    "Source.md",
                    "## Next\n- approved -> [the long\nname](draft.md)\n",
                ),
            ],
            "draft",
            "first",
            &[(
                "Source.md",
                "## Next\n- approved -> [the long\nname](first.md)\n",
            )],
        );
    }

    #[test]
    fn backticks_in_other_blocks_hide_no_link() {
        // Found by fuzzing: the frontmatter's and the item's backticks,
        // read as one text, made a code span hiding the link, which the
        // loader (reading the item alone) sees.
        check(
            &[
                (
                    "plans/draft.md",
                    "---\nx: ```\n---\n## Next\n- [[review#a```b|r]]\n",
                ),
                ("plans/review.md", ""),
                ("moved/review.md", ""),
            ],
            "plans/draft",
            "moved/draft",
            &[(
                "plans/draft.md",
                "---\nx: ```\n---\n## Next\n- [[plans/review#a```b|r]]\n",
            )],
        );
    }

    #[test]
    fn percent_signs_in_the_frontmatter_open_no_comment() {
        // Found by fuzzing: `%%` in a YAML value hid the whole body.
        check(
            &[
                ("draft.md", ""),
                (
                    "Source.md",
                    "---\nnote: |\n  %% text\n---\n## Next\n- [[draft]]\n",
                ),
            ],
            "draft",
            "first",
            &[(
                "Source.md",
                "---\nnote: |\n  %% text\n---\n## Next\n- [[first]]\n",
            )],
        );
    }

    #[test]
    fn an_item_is_read_past_its_marker_as_the_loader_reads_it() {
        // Found by fuzzing: after `-` and five spaces CommonMark sees
        // indented code, but the loader reads the item's text, a link.
        check(
            &[
                ("draft.md", ""),
                ("Source.md", "## Next\n-      [d](draft.md)\n"),
            ],
            "draft",
            "first",
            &[("Source.md", "## Next\n-      [d](first.md)\n")],
        );
    }

    #[test]
    fn backticks_in_the_frontmatter_open_no_fence() {
        // Found by fuzzing: "```" starting a YAML line fenced off the body.
        check(
            &[
                ("draft.md", ""),
                ("Source.md", "---\n```x: 1\n---\n## Next\n- [[draft]]\n"),
            ],
            "draft",
            "first",
            &[("Source.md", "---\n```x: 1\n---\n## Next\n- [[first]]\n")],
        );
    }

    #[test]
    fn no_note_of_that_name_changes_nothing() {
        check(&[("Source.md", "[[draft]]\n")], "draft", "first", &[]);
    }
}
