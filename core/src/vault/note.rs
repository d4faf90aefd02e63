//! One note → one node and the edges it declares (targets not yet resolved).

use super::frontmatter::{self, NoteContext, Split};
use super::links::{LinkForm, NoteLink};
use super::next;
use super::scan::outline_for;
use super::text::{lines_inclusive, strip_bom, without_comments, LineIndex};
use crate::{Code, Diagnostic, EdgeKind, Node, NodeExt, SourcePos, VaultNode};
use pulldown_cmark::HeadingLevel;
use std::ops::Range;

/// An edge as a note declares it, before link resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredEdge {
    pub target: String,
    pub label: Option<String>,
    pub kind: EdgeKind,
    pub pos: SourcePos,
    /// The link as written when it is more than `[[target]]`
    /// ([`crate::Edge::written`]).
    pub written: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedNote {
    pub node: Node,
    pub edges: Vec<DeclaredEdge>,
}

/// The file name part of a node id: a note's title when it has no heading.
pub fn basename(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

/// Which headings open the `Next` section: `## Next` in a note.
pub const NOTE_NEXT_LEVELS: &[HeadingLevel] = &[HeadingLevel::H2];

/// How much of each note a read keeps. Nothing that checks or draws a vault
/// plan (the diagnostics, `graph --json`, Mermaid, JSON Canvas) reads a
/// node's body or its unknown frontmatter keys; only runs and rewrites
/// (`save_plan`) do. Copying them is a large share of a load (~15% of the
/// npm package's `parseVault` on the 10,000-note benchmark vault) and of the
/// memory an editor's `Vault` holds, so the npm package reads `Checks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    Full,
    /// Every node's `body` and `extra_frontmatter` are left empty.
    Checks,
}

/// Parse one note. Diagnostics about it are appended; the node is always
/// produced, with defaults wherever the note is broken.
pub fn parse_note(
    file: &str,
    id: &str,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> ParsedNote {
    parse_note_with(
        file,
        id,
        text,
        NOTE_NEXT_LEVELS,
        0,
        Detail::Full,
        diagnostics,
    )
}

/// Why a reader holds a note's text other than as its bytes: the error on
/// the note where it is one of the plan's ([`Unread::diagnostic`]). Only
/// the reader, which saw the bytes, can tell: a U+FFFD the note holds as a
/// character is text like any other, and the npm package's callers
/// (Obsidian among them) hand over text already decoded, as Obsidian shows
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Its bytes are not UTF-8: it was decoded with U+FFFD for what could
    /// not be read, the first of them at this byte of the text, so a write
    /// would lose those bytes.
    NotUtf8(usize),
    /// It holds this many bytes, past [`NOTE_MAX_BYTES`]: it was not read
    /// (its text is empty), as reading it whole could take the memory.
    TooLarge(u64),
}

/// The most bytes of a note planvault reads, far past any note a person or
/// a run writes (a model's whole reply is 8 MiB at most); a larger file
/// (a sparse file of many GB) would be read whole into memory.
pub const NOTE_MAX_BYTES: u64 = 64 << 20;

/// The most bytes of a file in a run's trace folder a run reads back (its
/// journal and trace grow with the run, each reply journaled whole).
pub const RUN_FILE_MAX_BYTES: u64 = 1 << 30;

/// The most bytes of the vault file at `path` planvault reads.
pub fn read_limit(path: &str) -> u64 {
    match super::in_trace_folder(path) {
        true => RUN_FILE_MAX_BYTES,
        false => NOTE_MAX_BYTES,
    }
}

/// Why a file of `bytes` is not read, past `limit` (such as
/// [`read_limit`]): "holds …", the caller names the file.
pub fn too_large(bytes: u64, limit: u64) -> String {
    format!(
        "holds {}, more than the {} planvault reads of a file",
        size(bytes),
        size(limit)
    )
}

/// `bytes` as a person reads a size: in MiB or GiB past 1 MiB, to the tenth
/// above (a size past a limit never reads as the limit; by integers, as
/// float formatting would weigh on the wasm modules).
fn size(bytes: u64) -> String {
    let (unit, name) = match bytes {
        b if b >= 1 << 30 => (1 << 30, "GiB"),
        b if b >= 1 << 20 => (1 << 20, "MiB"),
        b => return format!("{b} bytes"),
    };
    let tenths = bytes.saturating_mul(10).div_ceil(unit);
    match tenths % 10 {
        0 => format!("{} {name}", tenths / 10),
        t => format!("{}.{t} {name}", tenths / 10),
    }
}

impl Unread {
    /// `unreadable-note` on the note at `file`, whose text as read is `text`.
    pub fn diagnostic(self, file: &str, text: &str) -> Diagnostic {
        let (message, at) = match self {
            Unread::NotUtf8(at) => (
                format!("`{file}` is not UTF-8 text: bytes here (the first of them) could not be read and show as U+FFFD; save the note as UTF-8"),
                at,
            ),
            Unread::TooLarge(bytes) => (
                format!(
                    "`{file}` {}: make it smaller, or move it out of the plan",
                    too_large(bytes, read_limit(file))
                ),
                0,
            ),
        };
        let (body, bom) = strip_bom(text);
        let (line, column) = LineIndex::new(body).position(at.saturating_sub(bom));
        Diagnostic::error(Code::UnreadableNote, message)
            .at(&SourcePos::new(file, line, column))
            .with_nodes([super::node_id(file)])
    }
}

/// [`parse_note`] with the given [`Detail`].
pub fn parse_note_as(
    file: &str,
    id: &str,
    text: &str,
    detail: Detail,
    diagnostics: &mut Vec<Diagnostic>,
) -> ParsedNote {
    parse_note_with(file, id, text, NOTE_NEXT_LEVELS, 0, detail, diagnostics)
}

/// [`parse_note`] for a note embedded in a larger text: `line_offset` lines
/// come before it (a plan document's section), and `next_levels` says which
/// headings open its `Next` section.
pub fn parse_note_with(
    file: &str,
    id: &str,
    text: &str,
    next_levels: &[HeadingLevel],
    line_offset: u32,
    detail: Detail,
    diagnostics: &mut Vec<Diagnostic>,
) -> ParsedNote {
    let (text, _) = strip_bom(text);
    let lines = LineIndex::new(text);
    let position = |offset: usize| {
        let (line, column) = lines.position(offset);
        SourcePos::new(file, line + line_offset, column)
    };

    // A block that opens and cannot be read: said at the note's start.
    let mut unread = |message: &str| {
        let d = Diagnostic::error(Code::BadFrontmatter, message.to_string());
        diagnostics.push(d.at(&position(0)).with_nodes([id]));
        frontmatter::Knobs::default()
    };
    let (knobs, body_offset) = match frontmatter::split(text) {
        // Classic Mac OS line ends: Obsidian reads the block they open.
        Split::Absent if text.starts_with("---\r") && !text.starts_with("---\r\n") => (
            unread("the note's lines end with a bare CR (classic Mac OS): Obsidian reads the frontmatter this `---` opens and planvault cannot; save the note with LF or CRLF line ends"),
            0,
        ),
        Split::Absent => (frontmatter::Knobs::default(), 0),
        Split::Closed(block) => {
            let ctx = NoteContext {
                file,
                node_id: id,
                first_line: lines.position(block.yaml_offset).0 + line_offset,
                keep_unknown_keys: detail == Detail::Full,
            };
            (
                frontmatter::read_knobs(block.yaml, &ctx, diagnostics),
                block.body_offset,
            )
        }
        Split::Unclosed { body_offset } => (
            unread("frontmatter opened with `---` is never closed by a `---` line"),
            body_offset,
        ),
    };

    let body = &text[body_offset..];
    // The sections are wanted even for checks: a link in one that no item
    // holds is warned about.
    let outline = outline_for(body, next_levels, true);
    // Positions are looked up in file order (the line index counts forward).
    let next_line = outline.next_heading.map(|o| {
        // The scan counted the body's lines: no second count up to `## Next`.
        if let Some(in_body) = outline.next_heading_line {
            let (body_line, column) = lines.position(body_offset);
            if column == 1 {
                lines.known_line(body_offset + o, body_line + in_body as u32);
            }
        }
        lines.position(body_offset + o).0 + line_offset
    });
    if outline.next_heading.is_none() && next_levels == NOTE_NEXT_LEVELS {
        let near_miss = next::near_miss_next_heading(body)
            .filter(|m| m.commented || section_has_linked_item(body, m.at));
        if let Some(miss) = near_miss {
            diagnostics.push(
                Diagnostic::warning(Code::NearMissNextHeading, near_miss_message(&miss, id))
                    .at(&position(body_offset + miss.at))
                    .with_nodes([id]),
            );
        }
    }
    let mut edges = Vec::with_capacity(outline.items.len());
    let mut uncommented = None;
    for item in &outline.items {
        let mut item_text = &body[item.clone()];
        if memchr::memchr(b'%', item_text.as_bytes()).is_some() && item_text.contains("%%") {
            // A `%%` comment on an item's continuation lines hides what it
            // spans there too (no item starts inside one).
            let read = uncommented.get_or_insert_with(|| without_comments(body));
            item_text = &read[item.clone()];
        }
        let (marker_len, content) = next::strip_marker(item_text);
        let content_offset = body_offset + item.start + marker_len;
        let read = next::parse_item(content);
        let Some(link) = &read.link else {
            diagnostics.push(
                Diagnostic::warning(
                    Code::MalformedEdge,
                    item_message(ItemProblem::NoLink, content, None),
                )
                .at(&position(content_offset))
                .with_nodes([id]),
            );
            continue;
        };
        let pos = position(content_offset + link.start);
        let label = read.label.map(label_read);
        for (problem, found) in [
            (ItemProblem::NoArrow, read.missing_arrow),
            (ItemProblem::SeveralLinks, read.extra_links > 0),
        ] {
            if found {
                diagnostics.push(
                    Diagnostic::warning(
                        Code::MalformedEdge,
                        item_message(problem, content, Some(link)),
                    )
                    .at(&position(content_offset))
                    .with_nodes([id]),
                );
            }
        }
        let kind = match &label {
            Some(l) if !l.eq_ignore_ascii_case("next") => EdgeKind::Conditional,
            _ => EdgeKind::Unconditional,
        };
        let written = link_as_written(content, link);
        let written = match link.form {
            // `[[target]]` says nothing its target does not.
            LinkForm::Wiki
                if written
                    .strip_prefix("[[")
                    .and_then(|w| w.strip_suffix("]]"))
                    == Some(&*link.target) =>
            {
                None
            }
            _ => Some(written.to_string()),
        };
        edges.push(DeclaredEdge {
            target: link.target.to_string(),
            label,
            kind,
            pos,
            written,
        });
    }

    for section in &outline.next_sections {
        // The section's items, found by their order: not every item looked
        // at again for each section of a note with many `## Next` headings.
        let first = outline.items.partition_point(|i| i.start < section.start);
        let count = outline.items[first..].partition_point(|i| i.start < section.end);
        let section_items = &outline.items[first..first + count];
        if !next::may_hold_stray_links(body, section, section_items) {
            continue;
        }
        let read = uncommented.get_or_insert_with(|| without_comments(body));
        let text = &read[section.clone()];
        let items: Vec<Range<usize>> = section_items
            .iter()
            .map(|i| i.start - section.start..i.end - section.start)
            .collect();
        for (link, place) in next::stray_links(text, &items) {
            diagnostics.push(
                Diagnostic::warning(
                    Code::LinkNotEdge,
                    stray_message(&text[link.start..link.end], place),
                )
                .at(&position(body_offset + section.start + link.start))
                .with_nodes([id]),
            );
        }
    }

    let title = outline
        .title
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| basename(id).to_string());
    let body = match detail {
        Detail::Full => {
            let mut cut: Vec<Range<usize>> = outline.next_sections;
            cut.extend(outline.leading_title);
            body_without(body, cut)
        }
        Detail::Checks => String::new(),
    };
    let node = Node {
        id: id.to_string(),
        title,
        body,
        kind: knobs.kind,
        status: knobs.status,
        tools: knobs.tools,
        role: knobs.role,
        max_visits: knobs.max_visits,
        pos: Some(SourcePos::new(file, 1 + line_offset, 1)),
        ext: NodeExt::Vault(VaultNode {
            file: file.to_string(),
            extra_frontmatter: knobs.extra,
            next_line,
        }),
    };
    ParsedNote { node, edges }
}

/// The body with the title line and the `Next` sections cut out, leading
/// blank lines and trailing whitespace trimmed: the step's work description.
fn body_without(body: &str, mut cut: Vec<Range<usize>>) -> String {
    cut.sort_by_key(|r| r.start);
    // The common note (title first, `## Next` last) keeps one piece: trim it
    // and copy once.
    let mut pieces = 0;
    let mut only = 0..0;
    for_each_kept(body.len(), &cut, |piece| {
        pieces += 1;
        only = piece;
    });
    if pieces <= 1 {
        return trim_blank_edges(&body[only]).to_string();
    }
    let mut joined = String::with_capacity(body.len());
    for_each_kept(body.len(), &cut, |piece| joined.push_str(&body[piece]));
    trim_blank_edges(&joined).to_string()
}

/// The non-empty pieces of `0..len` between the sorted `cut` ranges, in order.
fn for_each_kept(len: usize, cut: &[Range<usize>], mut piece: impl FnMut(Range<usize>)) {
    let mut at = 0;
    for range in cut {
        if range.start > at {
            piece(at..range.start);
        }
        at = at.max(range.end);
    }
    if at < len {
        piece(at..len);
    }
}

/// An item's label as the plan reads it: as Obsidian shows it
/// ([`next::label_as_shown`]), its whitespace collapsed.
pub(super) fn label_read(written: &str) -> String {
    collapse_whitespace(&next::label_as_shown(written))
}

/// Runs of whitespace as one space, ends trimmed (`split_whitespace` joined
/// by spaces), without a copy-per-word.
pub(super) fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Drop whole blank lines at the start and all whitespace at the end.
pub fn trim_blank_edges(text: &str) -> &str {
    let mut start = 0;
    for (_, line) in lines_inclusive(text) {
        if line.trim().is_empty() {
            start += line.len();
        } else {
            break;
        }
    }
    text[start.min(text.len())..].trim_end()
}

/// What is wrong with a `## Next` item, for its `malformed-edge` warning.
#[derive(Clone, Copy)]
enum ItemProblem {
    NoLink,
    NoArrow,
    SeveralLinks,
}

/// Whether the near-miss heading at `at` would give the note an edge were
/// it written `## Next`: the body read so, by the loader's own reading,
/// has an item linking a note. A "Next steps" section of prose, as in a
/// help page, declares none either way, and is not named.
#[cold]
fn section_has_linked_item(body: &str, at: usize) -> bool {
    let line_end = body[at..].find('\n').map_or(body.len(), |i| at + i);
    let as_next = format!("{}## Next{}", &body[..at], &body[line_end..]);
    let outline = outline_for(&as_next, NOTE_NEXT_LEVELS, true);
    let read = without_comments(&as_next);
    outline
        .items
        .iter()
        .any(|item| super::links::links(&read[item.clone()]).next().is_some())
}

/// A link as the note shows it: `[[Send ]]`, `[[Send|it]]`, a markdown link
/// as it stands.
fn link_as_written<'t>(content: &'t str, link: &NoteLink<'_>) -> &'t str {
    &content[link.start..link.end]
}

/// The `malformed-edge` message for an item (`content`: its text without the
/// marker), quoting it and naming the link as written. Off the loader's
/// path: only a warning needs it.
#[cold]
#[cfg_attr(planvault_size, optimize(size))]
fn item_message(problem: ItemProblem, content: &str, link: Option<&NoteLink<'_>>) -> String {
    // A long item is quoted by its start: the message names it, the
    // position finds it.
    let shown = super::frontmatter::shown(&collapse_whitespace(content));
    let written = link.map_or("", |link| link_as_written(content, link));
    match problem {
        ItemProblem::NoLink if shown.is_empty() => {
            "`## Next` item is empty, so it is not an edge; write `label -> [[note]]` or remove it"
                .to_string()
        }
        ItemProblem::NoLink => match address(content) {
            // Obsidian opens it, so the item looks linked: say what it is.
            Some(address) => format!(
                "`## Next` item `{shown}` links the address {}, which is no note, so it is not an edge; link a note (`label -> [[note]]`) or move the address out of `## Next`",
                super::frontmatter::shown(address)
            ),
            None => format!("`## Next` item `{shown}` has no [[link]], so it is not an edge"),
        },
        ItemProblem::NoArrow => {
            // The fix is the item as written with an arrow before the link
            // and the marks that format it (`yes -> **[[send]]**`).
            let link = link.map_or(0..0, |l| l.start..l.end);
            let before = &content[..link.start];
            // A wikilink embed's `!` is the link's.
            let before = before.strip_suffix('!').unwrap_or(before);
            let label = before.trim_end_matches(next::LINK_MARKS);
            let opening = &before[label.len()..];
            let closing: String = content[link.end..]
                .chars()
                .take_while(|c| next::LINK_MARKS.contains(c))
                .take(opening.chars().count())
                .collect();
            let label = collapse_whitespace(label.trim().trim_end_matches(':').trim_end());
            format!("`## Next` item `{shown}` has no arrow; write `{label} -> {opening}{written}{closing}`")
        }
        ItemProblem::SeveralLinks => format!(
            "`## Next` item `{shown}` has several links; only the first, {written}, is the edge"
        ),
    }
}

/// The first address with a scheme in an item's text (`https://…`,
/// `obsidian://…`), outside code: what Obsidian links there instead of a
/// note.
#[cold]
#[cfg_attr(planvault_size, optimize(size))]
fn address(content: &str) -> Option<&str> {
    let hidden = super::links::hidden_spans(content);
    let bytes = content.as_bytes();
    let ends = |b: &u8| b.is_ascii_whitespace() || b")>]\"'".contains(b);
    let in_scheme = |b: &u8| b.is_ascii_alphanumeric() || b"+-.".contains(b);
    (1..bytes.len()).find_map(|at| {
        if !bytes[at..].starts_with(b"://") || super::links::hides(&hidden, at) {
            return None;
        }
        let scheme = bytes[..at]
            .iter()
            .rposition(|b| !in_scheme(b))
            .map_or(0, |i| i + 1);
        let end = bytes[at..]
            .iter()
            .position(ends)
            .map_or(bytes.len(), |i| at + i);
        (bytes[scheme].is_ascii_alphabetic() && end > at + 3).then(|| &content[scheme..end])
    })
}

/// The `link-not-edge` message for a link (`written`, as it stands) under
/// `## Next` that no top-level item holds.
#[cold]
#[cfg_attr(planvault_size, optimize(size))]
fn stray_message(written: &str, place: next::StrayPlace) -> String {
    let place = match place {
        next::StrayPlace::NestedItem => "is in a nested item",
        next::StrayPlace::Quote => "is in a quote",
        next::StrayPlace::Prose => "is in no list item",
    };
    format!(
        "link {written} under `## Next` {place}, so it is not an edge; to make it one, write it as a top-level item `- label -> {written}`, else move it out of `## Next`"
    )
}

/// The `near-miss-next-heading` message.
#[cold]
#[cfg_attr(planvault_size, optimize(size))]
fn near_miss_message(miss: &next::NearMiss<'_>, id: &str) -> String {
    let heading = miss.heading;
    if miss.commented {
        format!(
            "heading `{heading}` is inside a `%%` comment, so `{id}` declares no edges (Obsidian hides it too); remove the `%%` around it to keep them"
        )
    } else {
        format!(
            "heading `{heading}` is not `## Next`, so `{id}` declares no edges; write the heading exactly `## Next`"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_is_named_only_over_a_linked_item() {
        let has = |body: &str| section_has_linked_item(body, 0);
        assert!(has("## Next steps\n- [[a]]\n"));
        assert!(has("## Next steps\n\nRead these:\n\n1. see [[a]] first\n"));
        assert!(has("## Next:\n* [A](A.md)\n"));
        // Prose, a page's URL, a fenced item, an item under the next heading.
        assert!(!has("## Next steps\nAsk in [[Community]].\n"));
        assert!(!has("## Next steps\n- [a guide](https://example.com/x)\n"));
        assert!(!has("## Next steps\n```\n- [[a]]\n```\n"));
        assert!(!has("## Next steps\nSoon.\n\n## See also\n- [[a]]\n"));
        assert!(!has("## Next steps\n-[[a]]\n"));
    }

    /// A pasted page as one item is quoted by its start, not whole (a
    /// 200,000-character item made a 400 KB line).
    #[test]
    fn a_long_item_is_quoted_by_its_start() {
        let text = format!("# T\n\n## Next\n- {}\n", "word ".repeat(40_000));
        let mut diags = Vec::new();
        parse_note("t.md", "t", &text, &mut diags);
        assert_eq!(diags.len(), 1, "{diags:?}");
        let message = &diags[0].message;
        assert!(message.len() < 200, "{} bytes", message.len());
        assert!(message.contains("word word"), "{message}");
        assert!(message.contains("…` has no [[link]]"), "{message}");
    }

    /// Regression: each `## Next` section looked through every item of the
    /// note for its own, so 50,000 sections took half a minute (debug).
    #[test]
    fn many_next_sections_are_read_in_linear_time() {
        let sections = 50_000;
        let text = format!("# T\n\n{}", "## Next\n- [[end]]\n".repeat(sections));
        let mut diags = Vec::new();
        let parsed = parse_note("t.md", "t", &text, &mut diags);
        assert!(diags.is_empty(), "{:?}", &diags[..diags.len().min(3)]);
        assert_eq!(parsed.edges.len(), sections);
    }

    #[test]
    fn a_note_becomes_a_node_and_its_edges() {
        let text = "---\ntype: start\nowner: me\n---\n# Review the draft\n\nRead [[draft]] critically.\n\n## Next\n- approved -> [[send]]\n- next -> [[archive|Archive]]\n- [[draft]]\n";
        let mut diags = Vec::new();
        let parsed = parse_note("review.md", "review", text, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        let node = &parsed.node;
        assert_eq!(node.title, "Review the draft");
        assert_eq!(node.body, "Read [[draft]] critically.");
        assert_eq!(node.kind, crate::NodeKind::Start);
        let NodeExt::Vault(ext) = &node.ext else {
            panic!()
        };
        assert_eq!(ext.next_line, Some(9));
        assert_eq!(
            ext.extra_frontmatter,
            [("owner".to_string(), "owner: me".to_string())]
        );
        let edges: Vec<_> = parsed
            .edges
            .iter()
            .map(|e| {
                (
                    e.target.as_str(),
                    e.label.as_deref(),
                    e.kind,
                    e.pos.line,
                    e.pos.column,
                )
            })
            .collect();
        assert_eq!(
            edges,
            [
                ("send", Some("approved"), EdgeKind::Conditional, 10, 15),
                ("archive", Some("next"), EdgeKind::Unconditional, 11, 11),
                ("draft", None, EdgeKind::Unconditional, 12, 3),
            ]
        );
    }

    #[test]
    fn a_note_without_frontmatter_or_heading_is_named_by_its_file() {
        let mut diags = Vec::new();
        let parsed = parse_note(
            "sub/ünïcode note.md",
            "sub/ünïcode note",
            "Just prose.\n",
            &mut diags,
        );
        assert!(diags.is_empty());
        assert_eq!(parsed.node.title, "ünïcode note");
        assert_eq!(parsed.node.body, "Just prose.");
    }
}
