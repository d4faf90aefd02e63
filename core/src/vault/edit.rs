//! Surgical edits on one note's text.
//!
//! Every function takes the note as it is on disk and returns the new text in
//! which only the lines the edit is about changed: the byte-order mark, the
//! line endings (LF or CRLF, per line), unknown frontmatter keys and every
//! other line survive byte for byte. That is what lets the web app write a
//! drag on the canvas straight into a note that Obsidian also has open.
//!
//! Edges are addressed by the 1-based line of their link (the line
//! [`crate::Edge::pos`] reports; an item may wrap onto later lines), so the
//! caller never has to re-derive which of two identical items it meant, and
//! the item is found by the loader's own reading. An address that no longer
//! points at an edge (the note changed underneath) is an [`EditError`], never
//! a guess, and so is an edit that would change any other edge of the note.

use super::frontmatter::{self, Split};
use super::links::{
    encode_path, links, links_with, markdown_link, markdown_links_and_code_in, LinkForm, NoteLink,
};
use super::next;
use super::note::NOTE_NEXT_LEVELS;
use super::scan::outline_for;
use super::text::{comments_as_marks, without_comments};
use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use std::ops::Range;
use thiserror::Error;

/// Why an edit could not be applied to the note as given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EditError {
    #[error("line {line} is past the end of the note ({lines} lines)")]
    NoSuchLine { line: u32, lines: u32 },
    #[error("line {line} is not an edge item under `## Next`")]
    NotAnEdge { line: u32 },
    #[error("`{key}` is not a frontmatter knob planvault edits")]
    UnknownKnob { key: String },
    #[error("the frontmatter block opened on line 1 is never closed")]
    UnclosedFrontmatter,
    #[error("the frontmatter is written indented, in flow style (`{{...}}`) or as no `key: value` lines, where a knob cannot be set line by line; set it in the note's text")]
    FrontmatterForm,
    #[error("line {line} holds several edges (a bare carriage return, which line numbers do not count, separates their items); save the note with LF or CRLF line endings")]
    SeveralEdgesOnLine { line: u32 },
    #[error("editing the edge on line {line} would change more than that edge (markdown would read the text around it differently); edit the note's text instead")]
    ChangesOtherEdges { line: u32 },
    #[error("the label `{label}` reads as markdown (a link, a list marker or a checkbox), not as a label; write it otherwise")]
    LabelReadOtherwise { label: String },
    #[error("the new edge would not be read: the note ends inside something never closed (a code block, a `%%` comment, an HTML comment); close it in the note's text, then add the edge again")]
    NewEdgeReadOtherwise,
    #[error("`{key}` would not read back as set from this note's frontmatter (the value is none `{key}` takes, or the block is written in a form YAML would read otherwise once the line is in); set it in the note's text")]
    KnobReadOtherwise { key: String },
    #[error("setting `{key}` on its line would change the note's other properties too (a key after a bare carriage return on that line, which YAML reads as a line of its own); set it in the note's text")]
    KnobTakesOthers { key: String },
}

const BOM: &str = "\u{feff}";

/// One line of a note with its terminator kept apart, so edits can rebuild
/// the line and still end it exactly as before.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    /// The line's text without `\n` / `\r\n`.
    content: &'a str,
    /// `""` (last line without newline), `"\n"` or `"\r\n"`.
    ending: &'a str,
}

/// A note split into its byte-order mark and lines.
struct Note<'a> {
    bom: &'a str,
    lines: Vec<Line<'a>>,
    /// The text after the BOM.
    text: &'a str,
}

impl<'a> Note<'a> {
    fn parse(text: &'a str) -> Note<'a> {
        let (bom, rest) = match text.strip_prefix(BOM) {
            Some(rest) => (BOM, rest),
            None => ("", text),
        };
        let lines = rest
            .split_inclusive('\n')
            .map(|raw| {
                if let Some(content) = raw.strip_suffix("\r\n") {
                    Line {
                        content,
                        ending: "\r\n",
                    }
                } else if let Some(content) = raw.strip_suffix('\n') {
                    Line {
                        content,
                        ending: "\n",
                    }
                } else {
                    Line {
                        content: raw,
                        ending: "",
                    }
                }
            })
            .collect();
        Note {
            bom,
            lines,
            text: rest,
        }
    }

    /// Byte offset (after the BOM) where the body starts: past the
    /// frontmatter's closing line, or 0.
    fn body_offset(&self) -> usize {
        self.lines[..self.body_start()]
            .iter()
            .map(|l| l.content.len() + l.ending.len())
            .sum()
    }

    /// The line ending new lines get: the note's first one, LF for a note
    /// that has none yet.
    fn newline(&self) -> &'static str {
        match self.lines.iter().find(|l| !l.ending.is_empty()) {
            Some(l) if l.ending == "\r\n" => "\r\n",
            _ => "\n",
        }
    }

    /// `(first, closing)` 0-based line indices of the frontmatter fences.
    /// The block as the loader reads it (`frontmatter::split`): opened by
    /// exactly `---` and a line break, as Obsidian requires (`--- ` opens
    /// none), closed by `---` with trailing spaces allowed.
    fn frontmatter(&self) -> Result<Option<(usize, usize)>, EditError> {
        match self.lines.first() {
            Some(first)
                if first.content.trim_end_matches('\r') == "---" && !first.ending.is_empty() => {}
            _ => return Ok(None),
        }
        self.lines
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, l)| l.content.starts_with("---") && l.content.trim_end() == "---")
            .map(|(i, _)| Some((0, i)))
            .ok_or(EditError::UnclosedFrontmatter)
    }

    /// 0-based index of the first line after the frontmatter.
    fn body_start(&self) -> usize {
        match self.frontmatter() {
            Ok(Some((_, close))) => close + 1,
            _ => 0,
        }
    }

    /// The first `Next` section as the loader reads it (`outline_for`: ATX
    /// or setext headings, emphasis in the title, code and `%%` comments
    /// as markdown reads them): the heading's line index and the index one
    /// past its last line (the next heading of its level or higher, or the
    /// end).
    fn next_section(&self) -> Option<(usize, usize)> {
        let body = self.body_offset();
        let outline = outline_for(&self.text[body..], NOTE_NEXT_LEVELS, true);
        let section = outline.next_sections.first()?;
        let (start, end) = (body + section.start, body + section.end);
        let mut head = None;
        let mut offset = 0;
        for (i, line) in self.lines.iter().enumerate() {
            if offset >= end {
                return Some((head?, i));
            }
            offset += line.content.len() + line.ending.len();
            if head.is_none() && offset > start {
                head = Some(i);
            }
        }
        Some((head?, self.lines.len()))
    }

    /// The note with lines replaced (`Some`: the new text, its line ending
    /// included; `None`: removed) and text inserted before a line index.
    fn render(&self, replaced: &[(usize, Option<String>)], inserted: &[(usize, String)]) -> String {
        let mut out = String::with_capacity(
            self.lines
                .iter()
                .map(|l| l.content.len() + 2)
                .sum::<usize>()
                + 64,
        );
        out.push_str(self.bom);
        for (i, line) in self.lines.iter().enumerate() {
            for (_, text) in inserted.iter().filter(|(at, _)| *at == i) {
                out.push_str(text);
            }
            match replaced.iter().find(|(at, _)| *at == i) {
                Some((_, Some(text))) => out.push_str(text),
                Some((_, None)) => {}
                None => {
                    out.push_str(line.content);
                    out.push_str(line.ending);
                }
            }
        }
        for (_, text) in inserted.iter().filter(|(at, _)| *at >= self.lines.len()) {
            out.push_str(text);
        }
        out
    }
}

/// `(level, title)` of an ATX heading line.
fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let title = rest.trim();
    // A closing sequence of `#`s is not part of the title.
    let title = match title.trim_end_matches('#') {
        t if t.len() < title.len() && (t.is_empty() || t.ends_with([' ', '\t'])) => t.trim_end(),
        _ => title,
    };
    Some((level, title))
}

/// A `## Next` item that is an edge, as the loader reads it (its outline of
/// the body with `%%` comments blanked, the item's text past its marker and
/// checkbox), so an edit changes the link the graph shows. Byte offsets in
/// the note's text after the BOM; an item may span lines (`- approved ->`,
/// then `[[Send]]` on the next).
#[derive(Debug, Clone, PartialEq, Eq)]
struct EdgeItem {
    /// From the start of the item's first line to past its last line's
    /// terminator.
    lines: Range<usize>,
    /// Where the text after the marker (and a task's checkbox) starts.
    content: usize,
    /// The label, trimmed (empty for `- [[t]]`).
    label: Range<usize>,
    /// The arrow as written (`->`, `=>`, `→`), when there is one.
    arrow: Option<Range<usize>>,
    /// The whole link, `[[...]]` or `[text](path)`.
    link: Range<usize>,
    form: LinkForm,
}

impl EdgeItem {
    /// The edge item whose link is on 1-based `line` of `text` (after the
    /// BOM): the line [`crate::Edge::pos`] reports.
    fn on_line(text: &str, line: u32) -> Result<EdgeItem, EditError> {
        let mut starts = text.split_inclusive('\n').scan(0, |at, raw| {
            let start = *at;
            *at += raw.len();
            Some(start..start + raw.trim_end_matches(['\n', '\r']).len())
        });
        let lines = text.split_inclusive('\n').count() as u32;
        let on = match line.checked_sub(1).and_then(|i| starts.nth(i as usize)) {
            Some(on) => on,
            None => return Err(EditError::NoSuchLine { line, lines }),
        };
        let body = body_offset(text);
        // The outline of the note's own body (it blanks the comments
        // itself: blanked twice, the second `%%` of a `%%%%` line would
        // open a comment); the items' text with comments blanked.
        let outline = outline_for(&text[body..], NOTE_NEXT_LEVELS, false);
        let read = without_comments(&text[body..]);
        let mut found = outline.items.iter().filter_map(|item| {
            let (marker, content) = next::strip_marker(&read[item.clone()]);
            let edge = next::parse_item(content);
            let link = edge.link?;
            let at = body + item.start + marker;
            if !(on.start..=on.end).contains(&(at + link.start)) {
                return None;
            }
            let head = &content[..edge.arrow.as_ref().map_or(link.start, |a| a.start)];
            let lead = head.len() - head.trim_start().len();
            let first = text[..body + item.start].rfind('\n').map_or(0, |i| i + 1);
            let end = body + item.end;
            let last = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
            Some(EdgeItem {
                lines: first..last,
                content: at,
                label: at + lead..at + lead + head.trim().len(),
                arrow: edge.arrow.map(|a| at + a.start..at + a.end),
                link: at + link.start..at + link.end,
                form: link.form,
            })
        });
        match (found.next(), found.next()) {
            (Some(item), None) => Ok(item),
            (Some(_), Some(_)) => Err(EditError::SeveralEdgesOnLine { line }),
            (None, _) => Err(EditError::NotAnEdge { line }),
        }
    }
}

/// Where the body starts in a note's text (after the BOM), as the loader
/// splits off the frontmatter.
fn body_offset(text: &str) -> usize {
    match frontmatter::split(text) {
        Split::Absent => 0,
        Split::Closed(block) => block.body_offset,
        Split::Unclosed { body_offset } => body_offset,
    }
}

/// The end of the top-level list item (nested lists included) that holds
/// byte `at` of `body`, its trailing blank lines left out.
fn whole_item_end(body: &str, at: usize) -> Option<usize> {
    let (mut lists, mut quotes) = (0usize, 0usize);
    for (event, range) in Parser::new(body).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_)) => quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => quotes = quotes.saturating_sub(1),
            Event::Start(Tag::List(_)) => lists += 1,
            Event::End(TagEnd::List(_)) => lists = lists.saturating_sub(1),
            Event::Start(Tag::Item) if lists == 1 && quotes == 0 && range.contains(&at) => {
                return Some(range.start + body[range].trim_end().len());
            }
            _ => {}
        }
    }
    None
}

/// What an edit does to the addressed edge, as the loader will read it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EdgeEdit<'a> {
    Remove,
    /// The target the new link names.
    Retarget(&'a str),
    /// The new label, whitespace collapsed; `None` for none.
    Relabel(Option<&'a str>),
}

/// `after` when the loader reads in it exactly the edges it read in
/// `before` with `edit` made to the one on `line`. Markdown reads text by
/// what surrounds it (an item two spaces in after a `1.` item is its own,
/// after a `-` item it nests; brackets around a new link can take it in),
/// so an edit could otherwise nest, split or join edges, or write one that
/// reads otherwise than asked.
fn only_that_edge(
    before: &str,
    after: String,
    line: u32,
    edit: EdgeEdit<'_>,
) -> Result<String, EditError> {
    let mut expected = read_edges(before);
    let Some(at) = expected.iter().position(|(l, _, _)| *l == line) else {
        return Err(EditError::NotAnEdge { line });
    };
    match edit {
        EdgeEdit::Remove => {
            expected.remove(at);
        }
        EdgeEdit::Retarget(target) => expected[at].1 = target.to_string(),
        // The label as the note will show it (`**urgent**` reads `urgent`).
        EdgeEdit::Relabel(label) => expected[at].2 = label.map(super::note::label_read),
    }
    if unlined(read_edges(&after)) == unlined(expected) {
        Ok(after)
    } else {
        Err(EditError::ChangesOtherEdges { line })
    }
}

/// `text` split into its BOM and the rest.
fn split_bom(text: &str) -> (&str, &str) {
    let rest = text.strip_prefix(BOM).unwrap_or(text);
    (&text[..text.len() - rest.len()], rest)
}

/// `text` with `span` replaced by `with`.
fn splice(text: &str, span: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..span.start]);
    out.push_str(with);
    out.push_str(&text[span.end..]);
    out
}

/// Builds the text of a new edge item: `- label -> [[target]]`, or
/// `- [[target]]` for an empty label; with [`LinkForm::Markdown`] the link
/// is `[target](target.md)`.
pub fn edge_item(label: &str, target: &str, form: LinkForm) -> String {
    let label = label.trim();
    let link = edge_link(target, form);
    if label.is_empty() {
        format!("- {link}")
    } else {
        format!("- {label} -> {link}")
    }
}

/// The link of a new edge to `target`.
fn edge_link(target: &str, form: LinkForm) -> String {
    match form {
        LinkForm::Wiki => format!("[[{target}]]"),
        LinkForm::Markdown => markdown_link(target),
    }
}

/// Appends the edge `- label -> [[target]]` as the last item under `## Next`,
/// adding the heading at the end of the note when it has none. An empty label
/// writes the unconditional `- [[target]]`; `form` is the vault's link
/// style ([`super::links::vault_link_style`]). Returns the new text and the
/// 1-based line of the new item.
///
/// The result is read back as the loader reads it: the note must hold its
/// edges and exactly this one more. Where the section's last line would
/// take the item in (an HTML block runs on to a blank line; a line of `-`
/// under a paragraph underlines a heading), the item goes after a blank
/// line, else under a new `## Next` at the end; a note that ends inside a
/// code block never closed, or a label markdown reads as more than a label
/// (a link, a list marker, a checkbox), is refused.
pub fn append_edge(
    text: &str,
    label: &str,
    target: &str,
    form: LinkForm,
) -> Result<(String, u32), EditError> {
    let note = Note::parse(text);
    let item = edge_item(label, target, form);
    let named = links(&edge_link(target, form))
        .next()
        .map(|l| l.target.into_owned());
    let label = super::note::collapse_whitespace(label.trim());
    let label = (!label.is_empty()).then_some(label.as_str());
    // What the note will show for it: `**urgent**` reads `urgent`.
    let shown = label.map(super::note::label_read);
    let before = read_edges(text);
    let reads_right = |(after, line): &(String, u32)| {
        let mut now = read_edges(after);
        let Some(at) = now.iter().position(|(l, _, _)| l == line) else {
            return false;
        };
        let (_, to, as_labelled) = now.remove(at);
        Some(&to) == named.as_ref()
            && as_labelled == shown
            && unlined(now) == unlined(before.clone())
    };
    let in_section = note
        .next_section()
        .map(|section| [false, true].map(|blank| note.in_section(section, &item, blank)));
    if let Some(written) = in_section
        .into_iter()
        .flatten()
        .chain([note.at_end(text, &item)])
        .find(reads_right)
    {
        return Ok(written);
    }
    // Whose fault: the label's, when the item misreads on its own too.
    let alone = format!("## Next\n{item}\n");
    match read_edges(&alone).as_slice() {
        [(2, to, as_labelled)] if Some(to) == named.as_ref() && as_labelled.as_deref() == label => {
            Err(EditError::NewEdgeReadOtherwise)
        }
        _ => Err(EditError::LabelReadOtherwise {
            label: label.unwrap_or_default().to_string(),
        }),
    }
}

/// Each edge the loader reads in a note: its link's line, target and label.
fn read_edges(text: &str) -> Vec<(u32, String, Option<String>)> {
    let parsed =
        super::note::parse_note_as("n.md", "n", text, super::Detail::Checks, &mut Vec::new());
    parsed
        .edges
        .into_iter()
        .map(|e| (e.pos.line, e.target, e.label))
        .collect()
}

/// Edges without their lines (an edit above them moves them).
fn unlined(edges: Vec<(u32, String, Option<String>)>) -> Vec<(String, Option<String>)> {
    edges
        .into_iter()
        .map(|(_, target, label)| (target, label))
        .collect()
}

impl Note<'_> {
    /// `item` as the last item of the `## Next` section `(head, end)`: after
    /// its last non-blank line (blank lines that separate it from what
    /// follows stay where they are), after a blank line of its own when
    /// `blank`.
    fn in_section(&self, (head, end): (usize, usize), item: &str, blank: bool) -> (String, u32) {
        let last = (head..end)
            .rev()
            .find(|&i| !self.lines[i].content.trim().is_empty())
            .unwrap_or(head);
        let at = last + 1;
        // A note may mix endings (LF frontmatter, CRLF body): the new
        // item ends like the line it follows.
        let nl = match self.lines[last].ending {
            "" => self.newline(),
            ending => ending,
        };
        let mut inserted = String::new();
        let mut replaced = Vec::new();
        if blank {
            inserted.push_str(nl);
        }
        if self.lines[last].ending.is_empty() {
            // The item goes after a last line without a newline: end that
            // line first, and leave the file without a final newline as it was.
            replaced.push((last, Some(format!("{}{nl}", self.lines[last].content))));
            inserted.push_str(item);
        } else {
            inserted.push_str(item);
            inserted.push_str(nl);
        }
        let line = at as u32 + 1 + u32::from(blank);
        (self.render(&replaced, &[(at, inserted)]), line)
    }

    /// `item` under a new `## Next` heading at the end of the note.
    fn at_end(&self, text: &str, item: &str) -> (String, u32) {
        let nl = match self.lines.last().map(|l| l.ending) {
            Some("\r\n") => "\r\n",
            Some("\n") => "\n",
            _ => self.newline(),
        };
        let mut out = String::with_capacity(text.len() + item.len() + 16);
        out.push_str(text);
        let mut line = self.lines.len() as u32;
        match self.lines.last() {
            None => {}
            Some(last) if last.ending.is_empty() => {
                out.push_str(nl);
                out.push_str(nl);
                line += 1;
            }
            Some(last) if !last.content.trim().is_empty() => {
                out.push_str(nl);
                line += 1;
            }
            Some(_) => {}
        }
        out.push_str("## Next");
        out.push_str(nl);
        out.push_str(item);
        out.push_str(nl);
        (out, line + 2)
    }
}

/// Removes the edge item whose link is on 1-based `line`: all its lines,
/// terminators included, with its continuation lines and the items nested
/// under it (left behind, the first would become a top-level item: an edge
/// nobody drew).
pub fn remove_edge(text: &str, line: u32) -> Result<String, EditError> {
    let (bom, rest) = split_bom(text);
    let item = EdgeItem::on_line(rest, line)?;
    let mut gone = item.lines;
    let body = body_offset(rest);
    if let Some(end) = whole_item_end(&without_comments(&rest[body..]), item.link.start - body) {
        let end = body + end;
        gone.end = gone
            .end
            .max(rest[end..].find('\n').map_or(rest.len(), |i| end + i + 1));
    }
    // Removing a last line without a newline would leave the line before it
    // ending in one the file did not have; drop that newline too.
    if gone.end == rest.len() && !rest.ends_with('\n') {
        let before = &rest[..gone.start];
        let kept = before
            .strip_suffix("\r\n")
            .or_else(|| before.strip_suffix('\n'))
            .unwrap_or(before);
        gone.start = kept.len();
    }
    let after = format!("{bom}{}", splice(rest, gone, ""));
    only_that_edge(text, after, line, EdgeEdit::Remove)
}

/// Points the edge item whose link is on 1-based `line` at `target`; only
/// the link changes. It becomes `[[target]]`, or `[name](target.md)` when
/// the item was a markdown link (an alias or heading belonged to the old
/// target).
pub fn retarget_edge(text: &str, line: u32, target: &str) -> Result<String, EditError> {
    let (bom, rest) = split_bom(text);
    let item = EdgeItem::on_line(rest, line)?;
    // The new link in the form the item was written in, an embed still one
    // (a wikilink embed's `!` is outside the link).
    let mut link = edge_link(target, item.form);
    if rest[item.link.start..].starts_with('!') {
        link.insert(0, '!');
    }
    let after = format!("{bom}{}", splice(rest, item.link, &link));
    let named = links(&link).next().map(|l| l.target.into_owned());
    only_that_edge(
        text,
        after,
        line,
        EdgeEdit::Retarget(named.as_deref().unwrap_or_default()),
    )
}

/// Sets the label of the edge item whose link is on 1-based `line`: an
/// empty label makes it unconditional (`- [[t]]`); the item's marker,
/// checkbox, arrow style and link stay, and so does a line break before the
/// link.
pub fn relabel_edge(text: &str, line: u32, label: &str) -> Result<String, EditError> {
    let (bom, rest) = split_bom(text);
    let item = EdgeItem::on_line(rest, line)?;
    let label = label.trim();
    let head = if label.is_empty() {
        String::new()
    } else {
        let arrow = item.arrow.as_ref().map_or("->", |a| &rest[a.clone()]);
        let written = item.arrow.as_ref().map_or(item.label.end, |a| a.end);
        let gap = &rest[written.max(item.content)..item.link.start];
        let gap = if gap.contains('\n') { gap } else { " " };
        format!("{label} {arrow}{gap}")
    };
    let after = format!(
        "{bom}{}",
        splice(rest, item.content..item.link.start, &head)
    );
    let label = super::note::collapse_whitespace(label);
    let label = (!label.is_empty()).then_some(label.as_str());
    only_that_edge(text, after, line, EdgeEdit::Relabel(label))
}

/// A frontmatter knob's new value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnobValue {
    /// Written as a plain scalar, quoted when YAML would read it otherwise.
    Text(String),
    Number(u32),
    /// Written in flow style: `[a, b]`.
    List(Vec<String>),
}

/// The knobs the editor may set: the keys planvault reads; every other key is left to the user.
pub const KNOBS: [&str; 5] = super::frontmatter::KNOWN_KEYS;

/// Sets (`Some`) or removes (`None`) a frontmatter knob. Only the knob's own
/// lines change (a block list under it included); a note without frontmatter
/// gets a block at the top, after any byte-order mark.
///
/// The result is read back as the loader reads it: where the note read
/// without errors, it must still, with this knob as set (removed: its
/// default) and every other knob as it was; else the edit is refused
/// (`KnobReadOtherwise`), the note left as it is.
pub fn set_knob(text: &str, key: &str, value: Option<&KnobValue>) -> Result<String, EditError> {
    let after = write_knob(text, key, value)?;
    // Every other property as it was: a key after a bare CR on the knob's
    // line (a line of its own to YAML) went with the line edit.
    let others = |text: &str| match frontmatter::split(split_bom(text).1) {
        Split::Closed(block) => frontmatter::properties(block.yaml).ok().map(|mut v| {
            // An empty block is no property, as one with the knob alone.
            if v.is_null() {
                v = yaml_serde::Value::Mapping(Default::default());
            }
            if let Some(map) = v.as_mapping_mut() {
                map.shift_remove(key);
            }
            // (A `.nan` equals itself as a YAML number.)
            v
        }),
        _ => None,
    };
    if let Some(before) = others(text) {
        if others(&after).as_ref() != Some(&before) {
            return Err(EditError::KnobTakesOthers { key: key.into() });
        }
    }
    let read = |text: &str| {
        let mut diagnostics = Vec::new();
        let parsed =
            super::note::parse_note_as("n.md", "n", text, super::Detail::Checks, &mut diagnostics);
        let clean = !diagnostics.iter().any(|d| d.is_error());
        let n = parsed.node;
        clean.then_some((n.kind, n.status, n.tools, n.role, n.max_visits))
    };
    let Some(mut expected) = read(text) else {
        return Ok(after);
    };
    let defaults = crate::vault::frontmatter::Knobs::default();
    match (key, value) {
        ("type", None) => expected.0 = defaults.kind,
        ("status", None) => expected.1 = defaults.status,
        ("tools", None) => expected.2 = defaults.tools,
        ("role", None) => expected.3 = defaults.role,
        ("max_visits", None) => expected.4 = defaults.max_visits,
        ("role", Some(KnobValue::Text(role))) => expected.3 = Some(role.clone()),
        ("tools", Some(KnobValue::List(tools))) => expected.2 = tools.clone(),
        ("max_visits", Some(KnobValue::Number(n))) => expected.4 = *n,
        ("type", Some(KnobValue::Text(kind))) => {
            match read(&format!("---\ntype: {}\n---\n", yaml_scalar(kind))) {
                Some(written) => expected.0 = written.0,
                None => return Err(EditError::KnobReadOtherwise { key: key.into() }),
            }
        }
        ("status", Some(KnobValue::Text(status))) => match crate::Status::parse(status) {
            Some(status) => expected.1 = status,
            None => return Err(EditError::KnobReadOtherwise { key: key.into() }),
        },
        _ => return Err(EditError::KnobReadOtherwise { key: key.into() }),
    }
    match read(&after) {
        Some(now) if now == expected => Ok(after),
        _ => Err(EditError::KnobReadOtherwise { key: key.into() }),
    }
}

/// [`set_knob`]'s line edit.
fn write_knob(text: &str, key: &str, value: Option<&KnobValue>) -> Result<String, EditError> {
    if !KNOBS.contains(&key) {
        return Err(EditError::UnknownKnob {
            key: key.to_string(),
        });
    }
    let note = Note::parse(text);
    let nl = note.newline();
    let rendered = value.map(|v| format!("{key}: {}", yaml_value(v)));
    let with_ending = |line: &str, at: usize| {
        format!(
            "{line}{}",
            if note.lines[at].ending.is_empty() {
                nl
            } else {
                note.lines[at].ending
            }
        )
    };
    let Some((open, close)) = note.frontmatter()? else {
        let Some(line) = rendered else {
            return Ok(text.to_string());
        };
        let block = format!("---{nl}{line}{nl}---{nl}");
        return Ok(note.render(&[], &[(0, block)]));
    };
    // A mapping written indented or in flow style (`{type: start}`), or a
    // block that is no mapping (a list, `~`, text), takes no key at column
    // 0: it would stop being YAML for every reader. (`? key` and `-key:`
    // are keys.)
    let first = (open + 1..close)
        .map(|i| note.lines[i].content)
        .find(|c| !c.trim().is_empty() && !c.trim_start().starts_with('#'));
    let no_mapping = |c: &str| {
        c.starts_with([' ', '\t', '{', '['])
            || c.starts_with("- ")
            || c.trim_end() == "-"
            || (!c.contains(':') && !c.starts_with("? "))
    };
    if first.is_some_and(no_mapping) {
        return Err(EditError::FrontmatterForm);
    }
    let found = (open + 1..close).find(|&i| top_level_key(note.lines[i].content) == Some(key));
    match (found, rendered) {
        (Some(at), rendered) => {
            // The key's value may continue on indented lines (a block list).
            // A comment line among them does not end it (YAML reads the
            // items after it as the key's).
            // Only a key with no value on its line takes `- ` items (after a
            // value, one is no YAML: left as it is).
            let is_comment = |c: &str| c.trim_start().starts_with('#');
            let inline = note.lines[at]
                .content
                .split_once(':')
                .map(|(_, v)| v.trim())
                .is_some_and(|v| !v.is_empty() && !v.starts_with('#'));
            let end = (at + 1..close)
                .find(|&i| {
                    let c = note.lines[i].content;
                    let item = !inline && (c.trim_start().starts_with("- ") || c.trim() == "-");
                    !(c.starts_with([' ', '\t'])
                        || item
                        || c.trim().is_empty()
                        || (!inline && is_comment(c)))
                })
                .unwrap_or(close);
            // Trailing blank and comment lines belong to no key (a comment
            // may introduce the next one).
            let end = (at + 1..end)
                .rev()
                .find(|&i| {
                    let c = note.lines[i].content;
                    !c.trim().is_empty() && !is_comment(c)
                })
                .map_or(at + 1, |i| i + 1);
            // A comment on the key's line stays (`status: active # ask Ana`).
            let comment = line_comment(note.lines[at].content);
            let mut replaced: Vec<(usize, Option<String>)> = vec![(
                at,
                rendered.map(|l| with_ending(&format!("{l}{}", comment.unwrap_or("")), at)),
            )];
            replaced.extend((at + 1..end).map(|i| (i, None)));
            Ok(note.render(&replaced, &[]))
        }
        (None, Some(line)) => Ok(note.render(&[], &[(close, with_ending(&line, close))])),
        (None, None) => Ok(text.to_string()),
    }
}

/// The comment a frontmatter `key: value` line ends with, from the blank
/// before its `#` (the value read as the loader reads it, quotes and all),
/// or `None`.
fn line_comment(line: &str) -> Option<&str> {
    let (_, after) = line.split_once(':')?;
    let value = after.trim_start();
    let inline = frontmatter::strip_comment(value);
    let end = match inline.is_empty() {
        true => 0,
        false => after.len() - value.len() + inline.len(),
    };
    let comment = &after[end..];
    comment.trim_start().starts_with('#').then_some(comment)
}

fn top_level_key(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', '#', '-']) {
        return None;
    }
    let (key, _) = line.split_once(':')?;
    let key = key.trim_end();
    let key = key
        .strip_prefix(['"', '\''])
        .and_then(|k| k.strip_suffix(['"', '\'']))
        .unwrap_or(key);
    Some(key)
}

fn yaml_value(value: &KnobValue) -> String {
    match value {
        KnobValue::Number(n) => n.to_string(),
        KnobValue::Text(t) => yaml_scalar(t),
        KnobValue::List(items) => {
            // In a flow list more is syntax (`:`, `?`, `*`…): an item is
            // plain only when it is a name such as `fetch_url` or `mcp.tool`.
            let plain = |t: &str| {
                t.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    && t.chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' '))
                    && !t.ends_with(' ')
            };
            let items: Vec<String> = items
                .iter()
                .map(|t| match plain(t) {
                    true => yaml_scalar(t),
                    false => quoted(t),
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// A plain scalar when YAML reads it back as the same string, else a
/// double-quoted one.
/// A character a frontmatter value is written escaped: a control
/// character, a line or paragraph separator, a byte-order mark (YAML
/// takes one only at the start), the replacement character (which marks a
/// note that was no UTF-8, to the loader) or one YAML does not print
/// (U+FFFE, U+FFFF).
fn unwritten(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffd}' | '\u{fffe}' | '\u{ffff}'
        )
}

fn yaml_scalar(text: &str) -> String {
    let reserved = matches!(
        text.to_ascii_lowercase().as_str(),
        "" | "~" | "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    );
    let numeric = text.parse::<f64>().is_ok() || text.starts_with(['0', '+', '.']);
    let special = text.starts_with([
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@',
        '`', ' ',
    ]) || text.ends_with(' ')
        || text.contains(": ")
        || text.contains(" #")
        || text.contains([',', '[', ']', '{', '}'])
        || text.chars().any(unwritten)
        || text.ends_with(':');
    if reserved || numeric || special {
        quoted(text)
    } else {
        text.to_string()
    }
}

/// `text` as a double-quoted YAML scalar.
fn quoted(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            // Escaped, so the note holds none of them: planvault's
            // reader refuses a frontmatter that does (YAML 1.1 breaks
            // lines at U+0085, U+2028 and U+2029).
            c if unwritten(c) => escaped.push_str(&format!("\\u{:04X}", c as u32)),
            c => escaped.push(c),
        }
    }
    format!("\"{escaped}\"")
}

/// The note's body: everything after the frontmatter block (the whole text,
/// less a byte-order mark, when there is none).
pub fn body(text: &str) -> &str {
    let note = Note::parse(text);
    let start = note.body_start();
    let offset: usize = note.bom.len()
        + note.lines[..start]
            .iter()
            .map(|l| l.content.len() + l.ending.len())
            .sum::<usize>();
    &text[offset..]
}

/// Replaces everything after the frontmatter with `body`. The frontmatter and
/// byte-order mark stay byte-identical; the new body's newlines follow the
/// note's line-ending style, so a textarea's LF never mixes into a CRLF note.
pub fn replace_body(text: &str, body: &str) -> String {
    let note = Note::parse(text);
    let head_len = text.len() - self::body(text).len();
    // The body's own line breaks (a note may end its frontmatter's lines
    // otherwise), else the note's.
    let nl = match text[head_len..].find('\n') {
        Some(at) if text[head_len..at + head_len].ends_with('\r') => "\r\n",
        Some(_) => "\n",
        None => note.newline(),
    };
    let mut out = String::with_capacity(head_len + body.len() + 16);
    out.push_str(&text[..head_len]);
    if head_len > note.bom.len() && !out.ends_with('\n') && !body.is_empty() {
        // A closing `---` without a newline must not run into the body.
        out.push_str(nl);
    }
    let normalised = body.replace("\r\n", "\n");
    if nl == "\r\n" {
        out.push_str(&normalised.replace('\n', "\r\n"));
    } else {
        out.push_str(&normalised);
    }
    out
}

/// `text` with the paths of some of its links replaced: `new_path(link)`
/// gives a link's new path (as a wikilink writes it; a markdown link's is
/// encoded here), or `None` to keep it. Every other byte stays: aliases
/// (`|a`), headings and blocks (`#h`, `#^b`), embeds (`![[`) and a markdown
/// link's text. Links Obsidian does not read are not offered: in code
/// (fenced or inline), in an HTML comment or in a `%%` comment. Returns
/// `None` when no link changed.
pub fn rewrite_links(
    text: &str,
    mut new_path: impl FnMut(&NoteLink<'_>) -> Option<String>,
) -> Option<String> {
    let rest = text.strip_prefix(BOM).unwrap_or(text);
    let bom = &text[..text.len() - rest.len()];
    // The body as the loader splits it off, its `%%` comments blanked
    // (offsets kept), so what they hide neither counts as a link nor pairs
    // up with the brackets and backticks around it.
    let body = body_offset(rest);
    let read = format!("{}{}", &rest[..body], without_comments(&rest[body..]));
    let mut rewrites: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    // The body's markdown links as CommonMark reads them in the whole
    // note: a run of lines read alone loses its list item (a lazy `===`
    // line would underline it).
    let marked = comments_as_marks(&rest[body..]);
    let (markdown, code) = markdown_links_and_code_in(&marked);
    let body_markdown: Vec<NoteLink<'_>> = markdown
        .into_iter()
        .map(|link| NoteLink {
            start: link.start + body,
            end: link.end + body,
            target_span: link.target_span.start + body..link.target_span.end + body,
            ..link
        })
        .collect();
    let mut rewrite_in = |from: usize,
                          to: usize,
                          rewrites: &mut Vec<_>,
                          skip: &[std::ops::Range<usize>],
                          whole: bool| {
        let found: Vec<NoteLink<'_>> = match whole {
            false => links(&read[from..to]).collect(),
            true => {
                // In the note's order: this run's, found by halving (a
                // long note has many runs).
                let first = body_markdown.partition_point(|link| link.start < from);
                let markdown = body_markdown[first..]
                    .iter()
                    .take_while(|link| link.start < to)
                    .filter(|link| link.end <= to)
                    .map(|link| NoteLink {
                        start: link.start - from,
                        end: link.end - from,
                        target_span: link.target_span.start - from..link.target_span.end - from,
                        ..link.clone()
                    })
                    .collect();
                links_with(&read[from..to], markdown).collect()
            }
        };
        for link in found {
            if skip.iter().any(|item| item.contains(&(from + link.start))) {
                continue;
            }
            if let Some(path) = new_path(&link) {
                let path = match link.form {
                    LinkForm::Wiki => path,
                    LinkForm::Markdown => encode_path(&path),
                };
                let span = link.target_span;
                rewrites.push((from + span.start..from + span.end, path));
            }
        }
    };
    // `## Next` items are read exactly as the loader reads them (its
    // outline, each item's text past its marker), so the link an edge
    // follows is the one rewritten.
    let outline = outline_for(&rest[body..], NOTE_NEXT_LEVELS, false);
    let items: Vec<std::ops::Range<usize>> = outline
        .items
        .iter()
        .map(|item| body + item.start..body + item.end)
        .collect();
    for item in &items {
        let (marker, _) = next::strip_marker(&read[item.clone()]);
        rewrite_in(item.start + marker, item.end, &mut rewrites, &[], false);
    }
    // The rest block by block: a line joins the one before it as its
    // continuation (a markdown link may wrap onto it), unless it starts a
    // block of its own (a list item, a heading, a quote) or a blank line,
    // fenced code or the frontmatter (a line per property) comes between.
    // Each run, and whether it is indented code (Obsidian reads no link in
    // a code block).
    let mut runs: Vec<(std::ops::Range<usize>, bool)> = Vec::new();
    let mut start = 0;
    let mut in_run = false;
    // The column a list item's text starts at: a paragraph after a blank
    // line indented that far (a tab, as Obsidian indents) is the item's
    // own, not indented code, and is read without its indentation.
    let mut item_text: Option<usize> = None;
    let mut empty_item = false;
    for raw in read.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let (line_start, end) = (start, start + line.len());
        start += raw.len();
        let in_frontmatter = line_start < body;
        // A line left of the item's text ends the list, unless it carries
        // on the item's paragraph (a lazy line): a quote, a fence, a
        // heading or a `%%` comment (blanked in `read`) never does.
        let written = &rest[line_start..end];
        if let (Some(text), false) = (item_text, written.trim().is_empty()) {
            let lead = written.len() - written.trim_start_matches([' ', '\t']).len();
            let starts_block = line.trim().is_empty()
                || atx_heading(line).is_some()
                || thematic_break(line)
                || line.trim_start().starts_with(['>', '`', '~']);
            // Code has no lazy lines.
            let after_code = runs.last().is_some_and(|(_, code)| *code);
            if columns(&written[..lead]) < text
                && !starts_list_item(line)
                && (!in_run || starts_block || after_code)
            {
                item_text = None;
            }
        }
        // A fence's line is a block of its own: its backticks pair with
        // none of a paragraph's (what it fences is CommonMark's to call
        // code, below).
        let fence_line = !in_frontmatter && {
            let marks = line.trim_start();
            marks.starts_with("```") || marks.starts_with("~~~")
        };
        if line.trim().is_empty() || fence_line {
            if std::mem::take(&mut empty_item) && line.trim().is_empty() {
                item_text = None;
            }
            in_run = false;
            continue;
        }
        let heading = atx_heading(line).is_some();
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let at = columns(&line[..indent]);
        // An underline of the paragraph this line would carry on (not of
        // code, nor of an item's paragraph from outside the item: that
        // line is the paragraph's own lazy text); `-` there is no item.
        let underline = in_run
            && runs.last().is_some_and(|(_, was_code)| !was_code)
            && setext_underline(line)
            && item_text.is_none_or(|text| at >= text);
        let item = starts_list_item(line) && !thematic_break(line) && !underline;
        let own_block = in_frontmatter || heading || item || line.trim_start().starts_with('>');
        // A footnote's definition holds paragraphs indented four columns
        // past its start, as a list item holds its own.
        let footnote = !own_block && indent < 4 && is_footnote_definition(&line[indent..]);
        match item_text {
            _ if item => item_text = Some(item_content_column(line)),
            _ if footnote => item_text = Some(at + 4),
            Some(text) if !in_run && !own_block && at < text => item_text = None,
            // A heading indented as the item's text is the item's own.
            Some(text) if heading && at < text => item_text = None,
            _ => {}
        }
        if in_frontmatter {
            item_text = None;
        }
        // Indented as an item's text: the item's own paragraph, read
        // without its indentation.
        let within = !own_block && item_text.is_some_and(|text| at >= text);
        // Four columns past the text it would belong to (the item's, or
        // the margin) and carrying on no paragraph: indented code, which a
        // line indented less ends.
        let margin = item_text.filter(|_| within).unwrap_or(0);
        let code = !in_frontmatter && !own_block && at >= margin + 4;
        match runs.last_mut() {
            Some((run, was_code)) if in_run && !own_block && (!*was_code || code) => run.end = end,
            _ if item => runs.push((line_start + next::strip_marker(line).0..end, false)),
            _ if within && !code => runs.push((line_start + indent..end, false)),
            _ => runs.push((line_start..end, code)),
        }
        // A setext heading's underline or a thematic break ends the
        // paragraph: an indented line after it is code.
        // An item or a footnote with nothing on its line has no paragraph
        // yet for the next line to carry on; followed by a blank line, it
        // is empty and over.
        let empty = (item && line[next::strip_marker(line).0..].trim().is_empty())
            || (footnote && line.trim_end().ends_with(':') && line.trim_end().ends_with("]:"));
        empty_item = empty;
        in_run = !in_frontmatter && !heading && !thematic_break(line) && !underline && !empty;
    }
    // Obsidian reads no link in a code block: where CommonMark sees one
    // (fenced, or indented, in a list, a quote or a footnote) is the
    // authority; the runs above only group lines into paragraphs.
    let mut skip: Vec<Range<usize>> = code
        .into_iter()
        .map(|block| block.start + body..block.end + body)
        .collect();
    skip.extend(items.iter().cloned());
    for (run, _) in runs {
        // The frontmatter's lines are YAML, read a line at a time.
        let whole = run.start >= body;
        rewrite_in(run.start, run.end, &mut rewrites, &skip, whole);
    }
    if rewrites.is_empty() {
        return None;
    }
    rewrites.sort_by_key(|(span, _)| span.start);
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(bom);
    let mut copied = 0;
    for (span, path) in rewrites {
        if span.start < copied {
            continue; // Read twice (never expected): written once.
        }
        out.push_str(&rest[copied..span.start]);
        out.push_str(&path);
        copied = span.end;
    }
    out.push_str(&rest[copied..]);
    Some(out)
}

/// The column a list item's content starts at, as CommonMark counts it:
/// past its marker and the one to four spaces after it (one when more
/// follow, the rest being the item's indented code, or when none does).
/// A task's box is content: `- [ ] x` holds its paragraphs at column 2.
fn item_content_column(line: &str) -> usize {
    let lead = line.len() - line.trim_start_matches([' ', '\t']).len();
    let rest = &line[lead..];
    let marker = match rest.bytes().take_while(u8::is_ascii_digit).count() {
        0 => 1,
        digits => digits + 1,
    };
    let past_marker = lead + marker.min(rest.len());
    let after = &line[past_marker..];
    let gap = after.len() - after.trim_start_matches([' ', '\t']).len();
    let (from, to) = (
        columns(&line[..past_marker]),
        columns(&line[..past_marker + gap]),
    );
    if after.trim().is_empty() || to - from > 4 {
        from + 1
    } else {
        to
    }
}

/// Whether a line is a thematic break (`***`, `- - -`, `___`).
fn thematic_break(line: &str) -> bool {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let marks: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    lead < 4
        && marks.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|mark| marks.chars().all(|c| c.to_string() == *mark))
}

/// Whether a line would underline a paragraph above it as a setext
/// heading (`===`, `---`).
fn setext_underline(line: &str) -> bool {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let marks = line.trim();
    lead < 4
        && !marks.is_empty()
        && (marks.chars().all(|c| c == '=') || marks.chars().all(|c| c == '-'))
}

/// Whether a line (past its indentation) opens a footnote's definition:
/// `[^label]:`, the label without spaces or brackets.
fn is_footnote_definition(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("[^") else {
        return false;
    };
    let label = rest.find(']').map_or("", |end| &rest[..end]);
    !label.is_empty()
        && !label.contains([' ', '\t', '['])
        && rest[label.len() + 1..].starts_with(':')
}

/// The column after `prefix` (spaces and a list marker), a tab moving to
/// the next multiple of 4 as markdown counts it.
fn columns(prefix: &str) -> usize {
    prefix.chars().fold(0, |at, c| match c {
        '\t' => at + 4 - at % 4,
        _ => at + 1,
    })
}

/// Whether a line starts a list item: a marker (`-`, `*`, `+`, `1.`, `1)`)
/// then a space, or nothing.
fn starts_list_item(line: &str) -> bool {
    let (prefix_end, _) = next::strip_marker(line);
    let prefix = &line[..prefix_end];
    !prefix.trim().is_empty() && (prefix.ends_with([' ', '\t']) || prefix_end == line.len())
}

/// The text of a new note: frontmatter with its type and status, the title
/// as the first heading, room for the work description and an empty `## Next`.
pub fn new_note(title: &str, kind: crate::NodeKind) -> String {
    let kind = match kind {
        crate::NodeKind::Start => "start",
        crate::NodeKind::Human => "human",
        _ => "step",
    };
    let title = title.trim();
    format!("---\ntype: {kind}\nstatus: pending\n---\n# {title}\n\nDescribe the work of this step.\n\n## Next\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_forms() {
        assert_eq!(atx_heading("## Next"), Some((2, "Next")));
        assert_eq!(atx_heading("##   Next ##"), Some((2, "Next")));
        assert_eq!(atx_heading("##Next"), None);
        assert_eq!(atx_heading("    ## Next"), None);
        assert_eq!(atx_heading("# C#"), Some((1, "C#")));
    }

    #[test]
    fn edge_item_parts() {
        let text = "# T\n\n## Next\n  * needs revision => [[draft|the draft]] (again)\n- [ ] wrapped ->\n  [[b]]\n  - nested [[c]]\n";
        let item = EdgeItem::on_line(text, 4).unwrap();
        let part = |r: Range<usize>| &text[r];
        assert_eq!(
            part(item.lines.clone()),
            "  * needs revision => [[draft|the draft]] (again)\n"
        );
        assert_eq!(part(item.label), "needs revision");
        assert_eq!(part(item.arrow.unwrap()), "=>");
        assert_eq!(part(item.link), "[[draft|the draft]]");
        // Addressed by its link's line; the checkbox is no label.
        let item = EdgeItem::on_line(text, 6).unwrap();
        assert_eq!(part(item.lines.clone()), "- [ ] wrapped ->\n  [[b]]\n");
        assert_eq!(part(item.label), "wrapped");
        assert_eq!(part(item.link), "[[b]]");
        for line in [1, 5, 7] {
            assert_eq!(
                EdgeItem::on_line(text, line),
                Err(EditError::NotAnEdge { line })
            );
        }
        assert_eq!(
            EdgeItem::on_line(text, 8),
            Err(EditError::NoSuchLine { line: 8, lines: 7 })
        );
        assert!(EdgeItem::on_line("## Next\n-[[x]]\n", 2).is_err());
        // Found by fuzzing: a bare `\r` ends a line for markdown, not for
        // line numbers, so two items hold their links on "line 2".
        assert_eq!(
            EdgeItem::on_line("## Next\n- a -> [[A]]\r- b -> [[B]]\n", 2),
            Err(EditError::SeveralEdgesOnLine { line: 2 })
        );
        // A comment closed and another `%%` on one line: the loader's
        // reading, not one of the text with its comments blanked already.
        let text = "## Next\n- a -> [[A]]\n%%\n- old -> [[B]]\n%%%%\n## Next\n- b -> [[C]]\n- c -> [[D]] %% x\n";
        let link = EdgeItem::on_line(text, 7).unwrap().link;
        assert_eq!(&text[link], "[[C]]");
        assert!(EdgeItem::on_line("## Next\n- no link\n", 2).is_err());
    }

    #[test]
    fn yaml_scalars_round_trip_as_strings() {
        assert_eq!(yaml_scalar("review"), "review");
        assert_eq!(yaml_scalar("yes"), "\"yes\"");
        assert_eq!(yaml_scalar("012"), "\"012\"");
        assert_eq!(yaml_scalar("a: b"), "\"a: b\"");
        assert_eq!(yaml_scalar("say \"hi\", then"), "\"say \\\"hi\\\", then\"");
        assert_eq!(
            yaml_scalar("a\u{2028}b\u{85}c\u{7}"),
            "\"a\\u2028b\\u0085c\\u0007\""
        );
        assert_eq!(yaml_scalar("tab\there"), "\"tab\\there\"");
        assert_eq!(yaml_scalar("ends:"), "\"ends:\"");
    }

    /// A value with a line separator or a control character is written
    /// escaped and read back as written, the note's other knobs kept.
    #[test]
    fn a_knob_with_a_separator_is_read_back_as_set() {
        let note = "---\ntype: start\n---\n# T\n";
        for role in [
            "reviewer\u{2028}lead",
            "a\u{85}b",
            "bell\u{7}",
            "\u{ffff}\u{0}1.1",
        ] {
            let after = set_knob(note, "role", Some(&KnobValue::Text(role.into()))).unwrap();
            let mut diagnostics = Vec::new();
            let parsed = super::super::note::parse_note("n.md", "n", &after, &mut diagnostics);
            assert!(diagnostics.is_empty(), "{after:?}: {diagnostics:?}");
            assert_eq!(parsed.node.role.as_deref(), Some(role), "{after:?}");
            assert_eq!(parsed.node.kind, crate::NodeKind::Start);
        }
    }
}
