//! Wikilinks: reading `[[target|alias]]` / `[[target#heading]]` and resolving
//! a target to a note the way Obsidian does (`getFirstLinkpathDest`),
//! case-insensitively: a relative link (`./x`, `../x`) from the linking
//! note's folder; any other link first in the linking note's own folder,
//! then among every note whose path is the link or ends with `/link`, the
//! one with the fewest folders. Only a true tie there is ambiguous:
//! planvault reports it and never guesses.

use rustc_hash::FxBuildHasher;
use std::borrow::Cow;
use std::collections::HashMap;

/// The index's maps: keyed by note ids and link targets, hashed a word at a
/// time (std's SipHash costs more than the lookup itself). Not DoS-resistant;
/// a vault's own note names are the keys.
type Map<'a> = HashMap<Cow<'a, str>, Hits, FxBuildHasher>;

/// How a link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkForm {
    /// `[[target]]`, `[[target|alias]]`, `[[target#heading]]`.
    Wiki,
    /// `[text](target.md)`: what Obsidian writes with "Use `[[Wikilinks]]`"
    /// turned off, and reads as a link either way.
    Markdown,
}

/// A link to a note found in a line: `[[...]]` or `[text](path)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLink<'a> {
    /// Byte range of the whole link as written.
    pub start: usize,
    pub end: usize,
    /// The note the link points at: the text before `|` and `#`, trimmed;
    /// for a markdown link its destination percent-decoded (`%20` is a
    /// space), before `#`.
    pub target: Cow<'a, str>,
    /// Byte range of the target as written (encoded in a markdown link), so
    /// an edit can replace it and keep the rest of the link.
    pub target_span: std::ops::Range<usize>,
    pub form: LinkForm,
}

/// Every link to a note in `text`, in order.
pub fn find_links(text: &str) -> Vec<NoteLink<'_>> {
    links(text).collect()
}

/// [`find_links`] one at a time, for a caller that needs only the first and
/// how many more (a `## Next` item): no list built per item when the text
/// holds only wikilinks. What Obsidian does not link is skipped: `[[]]`,
/// `[[ ]]`, `[[|alias]]`, a Templater command (`[[<% tp.file.title %>]]`), a
/// link inside inline code or an HTML comment (`<!-- [[x]] -->`), and a
/// markdown link to a URL (`[site](https://…)`). Where a wikilink and a
/// markdown link overlap (`[[a]](b)`), the wikilink is the link.
pub fn links(text: &str) -> impl Iterator<Item = NoteLink<'_>> {
    links_outside(text, hidden_spans(text))
}

/// [`links`] with `text`'s [`hidden_spans`] already found (a caller that
/// also needs them for arrows finds them once), or spans in that form.
pub fn links_outside(
    text: &str,
    hidden: Vec<std::ops::Range<usize>>,
) -> impl Iterator<Item = NoteLink<'_>> {
    let markdown = if has_pair(text.as_bytes(), b']', b"(") {
        markdown_links(text, pulldown_cmark::Options::empty(), None)
    } else {
        Vec::new()
    };
    merge_links(wiki_links(text, hidden), markdown)
}

/// [`links`] of `text`, a part of a note, with its markdown links as read
/// in the whole note ([`markdown_links_and_code_in`], their offsets `text`'s): a
/// paragraph's lines are then read in their list item or footnote, as
/// CommonMark reads them there.
pub fn links_with<'a>(
    text: &'a str,
    markdown: Vec<NoteLink<'a>>,
) -> impl Iterator<Item = NoteLink<'a>> {
    merge_links(wiki_links(text, hidden_spans(text)), markdown)
}

/// The markdown links of a note's whole body, as CommonMark reads them
/// there (footnotes on, as Obsidian has them), and where it reads code
/// blocks (fenced, or indented, in a list, a quote or a footnote): one
/// parse for both.
pub fn markdown_links_and_code_in(body: &str) -> (Vec<NoteLink<'_>>, Vec<std::ops::Range<usize>>) {
    let mut code = Vec::new();
    let links = has_pair(body.as_bytes(), b']', b"(");
    if links || body.contains(['`', '~', ' ', '\t']) {
        let options = pulldown_cmark::Options::ENABLE_FOOTNOTES;
        // No `](`, no inline link: the parse is for the code alone.
        return (markdown_links(body, options, Some(&mut code)), code);
    }
    (Vec::new(), code)
}

/// The wikilinks of `text`, but those starting in `hidden`.
fn wiki_links(
    text: &str,
    hidden: Vec<std::ops::Range<usize>>,
) -> impl Iterator<Item = NoteLink<'_>> {
    let mut from = 0;
    let bytes = text.as_bytes();
    // Each `[[` that opens nothing moves on to the next one, which may lie
    // before the `]]`, `[[` and line break found for it (`[[[[…x]]`): those
    // are kept, so a stretch of text is searched once, not once per `[[`.
    let mut opens = Ahead::new(|at| find_doubled(&bytes[at..], b'[').map(|i| i + at));
    let mut closes = Ahead::new(|at| find_doubled(&bytes[at..], b']').map(|i| i + at));
    let mut breaks = Ahead::new(|at| memchr::memchr(b'\n', &bytes[at..]).map(|i| i + at));
    std::iter::from_fn(move || {
        while let Some(open) = opens.first_from(from) {
            // `\[[x]]` shows its brackets: the escaped `[` opens nothing
            // (a `[[` right after it still may).
            let backslashes = bytes[..open]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if backslashes % 2 == 1 {
                from = open + 1;
                continue;
            }
            let inner_start = open + 2;
            let close = closes.first_from(inner_start)?;
            let inner = &text[inner_start..close];
            if breaks.first_from(inner_start).is_some_and(|at| at < close)
                || opens
                    .first_from(inner_start)
                    .is_some_and(|at| at + 1 < close)
            {
                from = inner_start;
                continue;
            }
            from = close + 2;
            let target = link_target(inner);
            if names_nothing(inner, target) || hides(&hidden, open) {
                continue;
            }
            // `target` is `inner` up to `|` or `#`, trimmed: it starts after
            // the leading spaces.
            let target_start = inner_start + (inner.len() - inner.trim_start().len());
            return Some(NoteLink {
                start: open,
                end: close + 2,
                target: Cow::Borrowed(target),
                target_span: target_start..target_start + target.len(),
                form: LinkForm::Wiki,
            });
        }
        None
    })
}

/// A forward search asked from offsets that never go back: its answer is
/// kept while it still lies ahead of the offset asked from.
struct Ahead<F> {
    search: F,
    /// The offset last searched from (`usize::MAX` before the first search)
    /// and the first hit at or after it.
    from: usize,
    found: Option<usize>,
}

impl<F: Fn(usize) -> Option<usize>> Ahead<F> {
    fn new(search: F) -> Self {
        Ahead {
            search,
            from: usize::MAX,
            found: None,
        }
    }

    /// The first hit at or after `at`.
    fn first_from(&mut self, at: usize) -> Option<usize> {
        if at < self.from || self.found.is_some_and(|found| found < at) {
            self.from = at;
            self.found = (self.search)(at);
        }
        self.found
    }
}

/// Where `text` hides what looks like markup: its inline code spans and
/// HTML comments (`<!-- … -->`), [`in_order`]. No link or arrow in one
/// counts.
#[cfg_attr(planvault_size, optimize(size))]
pub fn hidden_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut hidden = if memchr::memchr(b'`', bytes).is_some() {
        code_spans(bytes)
    } else {
        Vec::new()
    };
    if has_pair(bytes, b'<', b"!--") {
        let comments = html_comments(text, &hidden);
        hidden.extend(comments);
        // A code span may begin inside a comment and end after it.
        hidden = in_order(hidden);
    }
    hidden
}

/// `spans` by their start, those that overlap joined into one: the form
/// [`hides`] looks through.
pub fn in_order(mut spans: Vec<std::ops::Range<usize>>) -> Vec<std::ops::Range<usize>> {
    spans.sort_unstable_by_key(|span| span.start);
    spans.dedup_by(|span, kept| {
        let overlaps = span.start < kept.end;
        if overlaps {
            kept.end = kept.end.max(span.end);
        }
        overlaps
    });
    spans
}

/// Whether one of `spans` ([`in_order`]) holds the offset `at`: found by
/// binary search, as a text may hold thousands of code spans and links.
pub fn hides(spans: &[std::ops::Range<usize>], at: usize) -> bool {
    let after = spans.partition_point(|span| span.start <= at);
    after > 0 && spans[after - 1].contains(&at)
}

/// Whether `first` followed by `rest` occurs in `bytes`: a `memchr` for
/// the first byte, where `str::contains` would set up a substring searcher
/// on every one of the loader's items.
fn has_pair(bytes: &[u8], first: u8, rest: &[u8]) -> bool {
    memchr::memchr_iter(first, bytes).any(|at| bytes[at + 1..].starts_with(rest))
}

/// Wikilinks and markdown links in order of their start; a markdown link
/// that overlaps a wikilink is dropped (Obsidian reads the wikilink).
fn merge_links<'a>(
    wiki: impl Iterator<Item = NoteLink<'a>>,
    markdown: Vec<NoteLink<'a>>,
) -> impl Iterator<Item = NoteLink<'a>> {
    let mut wiki = wiki.peekable();
    let mut markdown = markdown.into_iter().peekable();
    // The end of the last wikilink given out, so a markdown link around it
    // (`[see [[a]]](b.md)`) is dropped too.
    let mut wiki_end = 0;
    std::iter::from_fn(move || loop {
        let take_markdown = match (wiki.peek(), markdown.peek()) {
            (None, None) => return None,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(w), Some(m)) => m.end <= w.start,
        };
        if take_markdown {
            let m = markdown.next()?;
            let overlaps_next = wiki.peek().is_some_and(|w| w.start < m.end);
            if m.start >= wiki_end && !overlaps_next {
                return Some(m);
            }
        } else {
            let w = wiki.next()?;
            wiki_end = w.end;
            while markdown.peek().is_some_and(|m| m.start < w.end) {
                markdown.next();
            }
            return Some(w);
        }
    })
}

/// The inline markdown links of `text` that point at a note (not a URL, not
/// empty), found by pulldown-cmark so escapes, `<…>` destinations, titles
/// and nested brackets read as CommonMark reads them.
#[cfg_attr(planvault_size, optimize(size))]
fn markdown_links<'a>(
    text: &'a str,
    options: pulldown_cmark::Options,
    mut code_blocks: Option<&mut Vec<std::ops::Range<usize>>>,
) -> Vec<NoteLink<'a>> {
    use pulldown_cmark::{Event, LinkType, Parser, Tag};
    let mut out = Vec::new();
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        if let (Event::Start(Tag::CodeBlock(_)), Some(blocks)) = (&event, &mut code_blocks) {
            blocks.push(range);
            continue;
        }
        // An embed (`![shot](shot.png)`, `![](Other.md)`) is a link as
        // `![[Other]]` is: Obsidian records both forms alike.
        let (Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url,
            ..
        })
        | Event::Start(Tag::Image {
            link_type: LinkType::Inline,
            dest_url,
            ..
        })) = event
        else {
            continue;
        };
        // Checked slicing: a span that is not on character boundaries (a
        // link text this scan reads differently) is no link, never a panic.
        let Some((span, written)) = destination_span(text, range.clone())
            .and_then(|span| Some((span.clone(), text.get(span)?)))
        else {
            continue;
        };
        // The destination as CommonMark reads it: escapes and entities undone.
        let read: &str = &dest_url;
        if read.is_empty() || is_url(read) {
            continue;
        }
        let path_len = read.find('#').unwrap_or(read.len());
        let target: Cow<'_, str> = if read == written {
            // Borrowed from the text unless `%XX` had to be decoded.
            let path = &written[..path_len];
            match percent_encoding::percent_decode_str(path).decode_utf8() {
                Ok(Cow::Borrowed(plain)) => Cow::Borrowed(plain.trim()),
                Ok(Cow::Owned(decoded)) => Cow::Owned(decoded.trim().to_string()),
                Err(_) => Cow::Borrowed(path.trim()),
            }
        } else {
            let path = &read[..path_len];
            let decoded = percent_encoding::percent_decode_str(path)
                .decode_utf8()
                .map_or_else(|_| path.to_string(), Cow::into_owned);
            Cow::Owned(decoded.trim().to_string())
        };
        // The path as written, before `#` (what an edit replaces).
        let written_path = written.find('#').unwrap_or(written.len());
        out.push(NoteLink {
            start: range.start,
            end: range.end,
            target,
            target_span: span.start..span.start + written_path,
            form: LinkForm::Markdown,
        });
    }
    out
}

/// Where the destination of the inline link `text[link]` is written,
/// without its `<` `>`: after the `](` that closes the link text (brackets
/// inside it matched, escapes and code spans skipped), up to whitespace or
/// the closing `)`.
#[cfg_attr(planvault_size, optimize(size))]
fn destination_span(text: &str, link: std::ops::Range<usize>) -> Option<std::ops::Range<usize>> {
    let written = &text[link.clone()];
    let bytes = written.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    let close = loop {
        match *bytes.get(at)? {
            b'\\' => at += 1,
            b'`' => {
                let run = bytes[at..].iter().take_while(|&&b| b == b'`').count();
                let fence = &written[at..at + run];
                at += run;
                if let Some(end) = written[at..].find(fence) {
                    at += end + run;
                }
                continue;
            }
            b'[' => depth += 1,
            b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    break at;
                }
            }
            _ => {}
        }
        at += 1;
    };
    if bytes.get(close + 1) != Some(&b'(') {
        return None;
    }
    let mut start = close + 2; // past `](`
    while bytes.get(start).is_some_and(|b| b.is_ascii_whitespace()) {
        start += 1;
    }
    let end = if bytes.get(start) == Some(&b'<') {
        start += 1;
        start + memchr::memchr(b'>', &bytes[start..])?
    } else {
        let mut end = start;
        let mut parens = 0usize;
        while let Some(&b) = bytes.get(end) {
            match b {
                b'\\' => end += 1,
                b'(' => parens += 1,
                b')' if parens == 0 => break,
                b')' => parens -= 1,
                b if b.is_ascii_whitespace() => break,
                _ => {}
            }
            end += 1;
        }
        end.min(bytes.len())
    };
    Some(link.start + start..link.start + end)
}

/// What a markdown link's path encodes: what would end it or change its
/// meaning (space, `(`, `)`, `<`, `>`, `#`), what Obsidian's link syntax
/// reserves (`[`, `]`, `|`, `^`), and `%` itself so decoding gives the name
/// back.
const PATH_ENCODED: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'(')
    .add(b')')
    .add(b'<')
    .add(b'>')
    .add(b'#')
    .add(b'[')
    .add(b']')
    .add(b'|')
    .add(b'^')
    .add(b'\\')
    .add(b'`');

/// A markdown link's path to the note `target` (a link text or vault path
/// without `.md`): `My%20note.md`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn markdown_path(target: &str) -> String {
    format!("{}.md", encode_path(target))
}

/// `target` as a markdown link's path encodes it (`My%20note`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn encode_path(target: &str) -> String {
    percent_encoding::utf8_percent_encode(target, PATH_ENCODED).to_string()
}

/// A markdown link to the note `target`, as Obsidian writes one with
/// "Use `[[Wikilinks]]`" off: `[My note](folder/My%20note.md)`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn markdown_link(target: &str) -> String {
    let name = basename(target);
    let mut text = String::with_capacity(name.len());
    for c in name.chars() {
        // A `~` too: SilverBullet (and GitHub) read a lone one as the
        // start of a subscript (a strikethrough) that may take the link.
        if matches!(c, '[' | ']' | '\\' | '~') {
            text.push('\\');
        }
        text.push(c);
    }
    format!("[{text}]({})", markdown_path(target))
}

/// Whether any link can name the note `id`: a `#`, `|`, `^`, `[` or `]` in
/// its path cuts a link short or splits it (`[[a#b]]` is note `a`, heading
/// `b`). Obsidian refuses such file names; other tools may write them. A
/// link's path is read trimmed, so a name that starts or ends with a space
/// (a clipping tool's `Tweets From Bryan Harris .md`) is never reached.
pub fn can_be_linked(id: &str) -> bool {
    !id.contains(['#', '|', '^', '[', ']']) && id.trim() == id
}

/// Obsidian's settings file that says how it writes new links.
pub const APP_SETTINGS: &str = ".obsidian/app.json";

/// How Obsidian writes the path of a new link (`newLinkFormat` in
/// `app.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkPath {
    /// "Shortest path when possible": the note's name when no other note
    /// has it, else its path from the vault root.
    #[default]
    Shortest,
    /// "Relative path to file": from the linking note's folder
    /// (`../done/Send`).
    Relative,
    /// "Absolute path in vault": from the vault root (`done/Send`).
    Absolute,
}

/// How the vault writes new links: their form and their path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStyle {
    pub form: LinkForm,
    pub path: LinkPath,
}

/// How the vault writes new links, as Obsidian's `app.json` says:
/// `"useMarkdownLinks": true` is "Use `[[Wikilinks]]`" turned off, and
/// `newLinkFormat` is `"shortest"`, `"relative"` or `"absolute"`. What the
/// file does not say (or a file that is absent or unreadable) is Obsidian's
/// default: wikilinks, shortest path.
#[cfg_attr(planvault_size, optimize(size))]
pub fn vault_link_style(app_json: Option<&str>) -> LinkStyle {
    let settings = app_json.and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok());
    let setting = |key: &str| settings.as_ref().and_then(|s| s.get(key));
    let form = match setting("useMarkdownLinks").and_then(serde_json::Value::as_bool) {
        Some(true) => LinkForm::Markdown,
        _ => LinkForm::Wiki,
    };
    let path = match setting("newLinkFormat").and_then(serde_json::Value::as_str) {
        Some("relative") => LinkPath::Relative,
        Some("absolute") => LinkPath::Absolute,
        _ => LinkPath::Shortest,
    };
    LinkStyle { form, path }
}

/// The path from the folder `from` (`""` for the vault root) to the note
/// `id`: `Send`, `done/Send`, `../done/Send`.
fn relative_path(from: &str, id: &str) -> String {
    let folder = format!("{from}/");
    let (mut here, mut there) = (folder.trim_start_matches('/'), id);
    // Past the folders both paths start with, each folder left in `here`
    // is a step up.
    while let (Some((a, here_rest)), Some((b, there_rest))) =
        (here.split_once('/'), there.split_once('/'))
    {
        if a != b {
            break;
        }
        (here, there) = (here_rest, there_rest);
    }
    format!("{}{there}", "../".repeat(here.matches('/').count()))
}

/// Whether a link destination is a URL (`https:`, `mailto:`, `obsidian:`,
/// `//host`) rather than a path in the vault.
#[cfg_attr(planvault_size, optimize(size))]
fn is_url(dest: &str) -> bool {
    if dest.starts_with("//") {
        return true;
    }
    let scheme = dest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
        .count();
    scheme > 1 && dest.as_bytes()[0].is_ascii_alphabetic() && dest[scheme..].starts_with(':')
}

/// The HTML comments of `text` (`<!-- … -->`, as CommonMark ends them:
/// `<!-->` and `<!--->` are whole comments) that do not start in a code span.
#[cfg_attr(planvault_size, optimize(size))]
fn html_comments(text: &str, code: &[std::ops::Range<usize>]) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("<!--").map(|i| i + at) {
        if hides(code, open) {
            at = open + 4;
            continue;
        }
        let body = open + 4;
        let end = if bytes[body..].starts_with(b">") {
            body + 1
        } else if bytes[body..].starts_with(b"->") {
            body + 2
        } else {
            match text[body..].find("-->") {
                Some(i) => body + i + 3,
                // Unclosed: CommonMark reads no comment, just text.
                None => break,
            }
        };
        out.push(open..end);
        at = end;
    }
    out
}

/// Whether a link's inner text names no note: empty (`[[]]`, `[[ ]]`,
/// `[[|alias]]`, `[[|#alias]]`; `[[#heading]]` is the note itself) or a Templater command.
fn names_nothing(inner: &str, target: &str) -> bool {
    (target.is_empty() && !inner.trim_start().starts_with('#')) || target.starts_with("<%")
}

/// The inline code spans of `text` (CommonMark: a run of backticks up to the
/// next run of the same length; an unmatched run is literal).
fn code_spans(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let run = |at: usize| bytes[at..].iter().take_while(|&&b| b == b'`').count();
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(open) = memchr::memchr(b'`', &bytes[at..]).map(|i| i + at) {
        let len = run(open);
        let mut search = open + len;
        let mut close = None;
        while let Some(q) = memchr::memchr(b'`', &bytes[search..]).map(|i| i + search) {
            let other = run(q);
            if other == len {
                close = Some(q + other);
                break;
            }
            search = q + other;
        }
        match close {
            Some(end) => {
                spans.push(open..end);
                at = end;
            }
            None => at = open + len,
        }
    }
    spans
}

/// Where `byte` first appears twice in a row (`[[`, `]]`): `str::find` with
/// a two-byte needle sets up a general substring search per call.
fn find_doubled(haystack: &[u8], byte: u8) -> Option<usize> {
    memchr::memchr_iter(byte, haystack).find(|&i| haystack.get(i + 1) == Some(&byte))
}

/// The note part of a link's inner text: `t|alias`, `t#heading`, `t#^block`
/// and `folder/t` all name `t` (the folder narrowing the search). So does
/// `t\|alias`: in a table Obsidian has the pipe escaped (its help's own
/// tables link `[[Table view\|Table]]`), and the backslash is not the name's.
pub fn link_target(inner: &str) -> &str {
    let end = inner.find(['|', '#']).unwrap_or(inner.len());
    let target = &inner[..end];
    let target = match inner[end..].starts_with('|') {
        true => target.strip_suffix('\\').unwrap_or(target),
        false => target,
    };
    target.trim()
}

/// What a link target resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Found(usize),
    Missing,
    /// Node indices of every note the link could equally mean, in id order.
    Ambiguous(Vec<usize>),
}

/// Node ids indexed for link lookup. Ids that are already lower case (most
/// are) are borrowed, not copied; [`LinkIndex::owned`] builds one that owns
/// its ids, for a caller that keeps it across edits of the notes.
pub struct LinkIndex<'a> {
    /// Lower-cased full id → node indices.
    by_path: Map<'a>,
    /// Lower-cased basename → node indices.
    by_basename: Map<'a>,
    ids: Vec<Cow<'a, str>>,
}

/// The notes one key names: nearly always one, so no list is allocated.
#[derive(Debug, Clone)]
enum Hits {
    One(usize),
    Many(Vec<usize>),
}

impl Hits {
    fn add(&mut self, node: usize) {
        match self {
            Hits::One(first) => *self = Hits::Many(vec![*first, node]),
            Hits::Many(all) => all.push(node),
        }
    }

    /// Forget `node`; `true` when no note is left.
    fn remove(&mut self, node: usize) -> bool {
        match self {
            Hits::One(one) => *one == node,
            Hits::Many(all) => {
                all.retain(|&i| i != node);
                all.is_empty()
            }
        }
    }

    /// Renumber after a note was inserted at `at` (`up`) or removed from it.
    fn shift(&mut self, at: usize, up: bool) {
        let renumber = |i: &mut usize| {
            if up && *i >= at {
                *i += 1;
            } else if !up && *i > at {
                *i -= 1;
            }
        };
        match self {
            Hits::One(one) => renumber(one),
            Hits::Many(all) => all.iter_mut().for_each(renumber),
        }
    }

    fn as_slice(&self) -> &[usize] {
        match self {
            Hits::One(one) => std::slice::from_ref(one),
            Hits::Many(all) => all,
        }
    }
}

fn basename(id: &str) -> &str {
    // After the last `/` (found with memrchr: `rsplit` set up a reverse
    // char searcher per call).
    memchr::memrchr(b'/', id.as_bytes()).map_or(id, |slash| &id[slash + 1..])
}

/// Whether `text` is ASCII without capital letters (most ids and links):
/// eight bytes at a time, where `is_ascii` and a search for a capital took
/// two passes a byte at a time in wasm.
fn is_ascii_lower(text: &str) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // For bytes below 0x80 the sums cannot carry into the next byte: a byte's
    // high bit is set by `+ 0x3f` when it is at least `A`, by `+ 0x25` when
    // it is past `Z`.
    let has_capital_or_high = |word: u64| {
        word & HIGH != 0
            || (word.wrapping_add(0x3f * ONES) & !word.wrapping_add(0x25 * ONES) & HIGH) != 0
    };
    let mut chunks = text.as_bytes().chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        if has_capital_or_high(u64::from_le_bytes(word)) {
            return false;
        }
    }
    chunks
        .remainder()
        .iter()
        .all(|&b| b < 0x80 && !b.is_ascii_uppercase())
}

/// `text` composed (Unicode NFC), as Obsidian keys its vault's paths: a
/// name macOS stored decomposed (`Cafe\u{301}.md`) is the note a link typed
/// `[[Café]]` means. A link's own text is taken as written, as Obsidian
/// takes it (a decomposed link finds no composed path there).
pub fn composed(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
        if is_nfc_quick(text.chars()) == IsNormalized::Yes {
            return Cow::Borrowed(text);
        }
        let nfc: String = text.nfc().collect();
        if nfc == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(nfc)
        }
    }
    #[cfg(target_arch = "wasm32")]
    match NFC.get().map(|nfc| nfc(text)) {
        Some(nfc) if nfc != text => Cow::Owned(nfc),
        _ => Cow::Borrowed(text),
    }
}

/// The JavaScript engine's NFC, for wasm builds (their callers install it).
#[cfg(target_arch = "wasm32")]
static NFC: std::sync::OnceLock<fn(&str) -> String> = std::sync::OnceLock::new();

/// Give a wasm build its NFC (`String.prototype.normalize("NFC")`): core
/// carries no Unicode tables there, so until this is called a decomposed
/// note name is compared as it is. Every wasm caller (the app, the run
/// worker, the npm package) installs it before it reads a vault; a second
/// call changes nothing. Natively a no-op: core composes by itself.
pub fn install_nfc(nfc: fn(&str) -> String) {
    #[cfg(target_arch = "wasm32")]
    let _ = NFC.set(nfc);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = nfc;
}

/// A note's id as the index keys it: composed, lower case.
fn key(id: &str) -> Cow<'_, str> {
    match composed(id) {
        Cow::Borrowed(id) => lower(id),
        Cow::Owned(id) => Cow::Owned(lower(&id).into_owned()),
    }
}

fn lower(text: &str) -> Cow<'_, str> {
    if is_ascii_lower(text) {
        return Cow::Borrowed(text);
    }
    if text.is_ascii() {
        return if text.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(text.to_ascii_lowercase())
        } else {
            Cow::Borrowed(text)
        };
    }
    if text.chars().any(char::is_uppercase) {
        Cow::Owned(text.to_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// A target without its `.md` extension.
fn strip_md(target: &str) -> &str {
    if target.len() >= 3
        && target.is_char_boundary(target.len() - 3)
        && target[target.len() - 3..].eq_ignore_ascii_case(".md")
    {
        &target[..target.len() - 3]
    } else {
        target
    }
}

/// The folder holding `folder` (`""` above the vault root's children, and
/// at the root itself: Obsidian's `../` stops there).
fn parent_folder(folder: &str) -> &str {
    folder.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// A link as its note's path is spelled, for telling apart notes that
/// differ only in case: without `./`, `../`, a leading `/` or `.md`.
fn written_tail(written: &str) -> &str {
    let mut tail = strip_md(written);
    loop {
        match tail.strip_prefix("./").or_else(|| tail.strip_prefix("../")) {
            Some(rest) => tail = rest,
            None => return tail.trim_start_matches('/'),
        }
    }
}

fn insert<'a>(map: &mut Map<'a>, key: Cow<'a, str>, node: usize) {
    match map.get_mut(key.as_ref()) {
        Some(hits) => hits.add(node),
        None => {
            map.insert(key, Hits::One(node));
        }
    }
}

impl LinkIndex<'static> {
    /// An index that owns copies of the ids, so it can outlive the nodes
    /// it was built from (an editor keeps it while notes change; it stays
    /// valid as long as the set of ids and their order do).
    pub fn owned<'i>(ids: impl IntoIterator<Item = &'i str>) -> LinkIndex<'static> {
        let ids: Vec<Cow<'static, str>> = ids
            .into_iter()
            .map(|id| Cow::Owned(id.to_owned()))
            .collect();
        let mut index = LinkIndex {
            by_path: Map::with_capacity_and_hasher(ids.len(), FxBuildHasher),
            by_basename: Map::with_capacity_and_hasher(ids.len(), FxBuildHasher),
            ids: Vec::new(),
        };
        for (i, id) in ids.iter().enumerate() {
            index.add(i, Cow::Owned(key(id).into_owned()));
        }
        index.ids = ids;
        index
    }

    /// A note `id` inserted at node index `at` (later notes move up one):
    /// the index answers as one built from the new list of ids, without
    /// copying every id again.
    pub fn insert_at(&mut self, at: usize, id: &str) {
        for hits in self
            .by_path
            .values_mut()
            .chain(self.by_basename.values_mut())
        {
            hits.shift(at, true);
        }
        self.add(at, Cow::Owned(key(id).into_owned()));
        self.ids.insert(at, Cow::Owned(id.to_owned()));
    }

    /// The note at node index `at` removed (later notes move down one).
    pub fn remove_at(&mut self, at: usize) {
        if at >= self.ids.len() {
            return;
        }
        let id = self.ids.remove(at);
        let lowered = key(&id).into_owned();
        for (map, key) in [
            (&mut self.by_path, lowered.as_str()),
            (&mut self.by_basename, basename(&lowered)),
        ] {
            if map.get_mut(key).is_some_and(|hits| hits.remove(at)) {
                map.remove(key);
            }
        }
        for hits in self
            .by_path
            .values_mut()
            .chain(self.by_basename.values_mut())
        {
            hits.shift(at, false);
        }
    }
}

impl<'a> LinkIndex<'a> {
    pub fn new(ids: impl IntoIterator<Item = &'a str>) -> Self {
        Self::from_ids(ids.into_iter().collect())
    }

    /// [`LinkIndex::new`]'s work, compiled once rather than once per kind
    /// of iterator a caller passes.
    fn from_ids(ids: Vec<&'a str>) -> Self {
        let mut index = LinkIndex {
            by_path: Map::with_capacity_and_hasher(ids.len(), FxBuildHasher),
            by_basename: Map::with_capacity_and_hasher(ids.len(), FxBuildHasher),
            ids: Vec::new(),
        };
        for (i, id) in ids.iter().enumerate() {
            index.add(i, key(id));
        }
        index.ids = ids.into_iter().map(Cow::Borrowed).collect();
        index
    }

    /// Index node `i` under its lower-cased id and that id's basename
    /// (borrowed when the id is, owned otherwise).
    fn add(&mut self, i: usize, lowered: Cow<'a, str>) {
        let base = match &lowered {
            Cow::Borrowed(b) => Cow::Borrowed(basename(b)),
            Cow::Owned(o) => Cow::Owned(basename(o).to_string()),
        };
        insert(&mut self.by_basename, base, i);
        insert(&mut self.by_path, lowered, i);
    }

    /// The id of note `i`, as given (not lower-cased).
    pub fn id(&self, i: usize) -> Option<&str> {
        self.ids.get(i).map(|id| id.as_ref())
    }

    /// How many notes the index knows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Resolve a link target written in note `from` as Obsidian's
    /// `MetadataCache.getLinkpathDest` does (its first answer is the note
    /// Obsidian opens). Among the notes the link's name could mean:
    /// 1. a bare name only one note has is that note;
    /// 2. a `./` or `../` path, from the linking note's folder (`../` stops
    ///    at the vault root), is the note at that path if there is one;
    /// 3. the link as a path from the vault root (with or without a leading
    ///    `/`) is the note at that path;
    /// 4. unless the link starts with `/`, every note whose path ends with
    ///    the link's (a plain suffix: `b/x` matches `ab/x`), those whose path
    ///    starts with the linking note's folder (a plain prefix, too) before
    ///    the others, each group by the length of its path.
    ///
    /// Where Obsidian's pick would come down to the order it loaded the
    /// files (two paths as short in the group it takes), the link is
    /// ambiguous, unless exactly one of them is spelled as written. An empty
    /// target (`[[#heading]]`) is the note itself.
    pub fn resolve(&self, target: &str, from: usize) -> Resolution {
        self.resolve_by_path(target, from).0
    }

    /// [`LinkIndex::resolve`], and whether the link named its note by its
    /// path (a `./`/`../` path, or the path from the root) rather than
    /// finding it by name.
    pub fn resolve_by_path(&self, target: &str, from: usize) -> (Resolution, bool) {
        let by_name = |r| (r, false);
        let written = target.trim();
        if written.is_empty() {
            return (Resolution::Found(from), true);
        }
        // The file name `name.md` Obsidian looks up, kept as the path
        // without `.md` (as ids are): a link ending in `.md` names that
        // file when one has that name, else `link.md`.
        let lowered = lower(written);
        let stripped = strip_md(&lowered);
        let (path, candidates) = match self.by_basename.get(basename(stripped)) {
            Some(hits) if stripped.len() < lowered.len() => (stripped, hits),
            _ => match self.by_basename.get(basename(&lowered)) {
                Some(hits) => (lowered.as_ref(), hits),
                None => return by_name(Resolution::Missing),
            },
        };
        let candidates = candidates.as_slice();
        if let ([one], false) = (candidates, path.contains('/')) {
            return by_name(Resolution::Found(*one));
        }
        let tail = written_tail(written);
        let mut folder = key(self.folder(from)).into_owned();
        let mut path = path.to_string();
        if path.starts_with("./") || path.starts_with("../") {
            let mut rest = path
                .strip_prefix("./")
                .filter(|r| r.starts_with("../"))
                .unwrap_or(&path);
            if let Some(here) = rest.strip_prefix("./") {
                rest = here;
            } else {
                while let Some(up) = rest.strip_prefix("../") {
                    rest = up;
                    folder = parent_folder(&folder).to_string();
                }
            }
            if !folder.is_empty() {
                folder.push('/');
            }
            path = format!("{folder}{rest}");
            if let Some(hits) = self.by_path.get(path.as_str()) {
                return (self.pick(hits.as_slice(), tail), true);
            }
        }
        let rooted = path.strip_prefix('/').unwrap_or(&path);
        if let Some(hits) = self.by_path.get(rooted) {
            return (self.pick(hits.as_slice(), tail), true);
        }
        if written.starts_with('/') {
            return by_name(Resolution::Missing);
        }
        // Paths compared as Obsidian compares them: lower case, with `.md`,
        // lengths in UTF-16 units.
        let file = |i: usize| format!("{}.md", key(&self.ids[i]));
        let wanted = format!("{rooted}.md");
        let mut matches: Vec<(bool, usize, usize)> = candidates
            .iter()
            .filter_map(|&i| {
                let file = file(i);
                file.ends_with(&wanted).then(|| {
                    let far = !file.starts_with(&folder);
                    (far, composed(&self.ids[i]).encode_utf16().count(), i)
                })
            })
            .collect();
        // Stable: equal paths keep the index's order, as Obsidian's sort
        // keeps its load order.
        matches.sort_by_key(|&(far, len, _)| (far, len));
        let Some(&(far, len, _)) = matches.first() else {
            return by_name(Resolution::Missing);
        };
        let tied: Vec<usize> = matches
            .iter()
            .take_while(|m| (m.0, m.1) == (far, len))
            .map(|m| m.2)
            .collect();
        by_name(self.pick(&tied, tail))
    }

    /// The folder of note `i` (`""` at the vault root).
    fn folder(&self, i: usize) -> &str {
        self.ids
            .get(i)
            .and_then(|id| id.rsplit_once('/'))
            .map_or("", |(folder, _)| folder)
    }

    /// The path a new link in note `from` to note `to` is written with, as
    /// Obsidian writes it in `style`. A path that would reach another note
    /// (a same-named note in the linking note's folder comes first) is
    /// written from the vault root instead, so the link always means `to`.
    pub fn link_path(&self, to: usize, from: usize, style: LinkPath) -> String {
        // Written composed, as Obsidian writes its (composed) paths.
        let id = composed(&self.ids[to]);
        let id: &str = &id;
        let path = match style {
            LinkPath::Shortest => {
                let base = basename(id);
                let unique = self
                    .by_basename
                    .get(lower(base).as_ref())
                    .is_some_and(|hits| hits.as_slice().len() == 1);
                if unique { base } else { id }.to_string()
            }
            LinkPath::Absolute => id.to_string(),
            LinkPath::Relative => relative_path(&composed(self.folder(from)), id),
        };
        self.reaching(path, "", to, from)
    }

    /// A new path for a link written as `written` in note `from`, so that it
    /// reaches `to`, in the way it was written: a name stays a name, a path
    /// a path, a path from the root (`/…`) or from the note (`./`, `../`)
    /// stays one, and a `.md` suffix stays. Where that way would reach
    /// another note, the path from the vault root.
    pub fn relinked_path(&self, written: &str, to: usize, from: usize) -> String {
        let written = written.trim();
        let stem = strip_md(written);
        let suffix = &written[stem.len()..];
        let id = composed(&self.ids[to]);
        let id: &str = &id;
        let path = if stem.starts_with("./") || stem.starts_with("../") {
            let relative = relative_path(&composed(self.folder(from)), id);
            if relative.starts_with("../") {
                relative
            } else {
                format!("./{relative}")
            }
        } else if stem.starts_with('/') {
            format!("/{id}")
        } else if stem.contains('/') {
            id.to_string()
        } else {
            basename(id).to_string()
        };
        self.reaching(path, suffix, to, from)
    }

    /// `path` + `suffix` when a link written so in note `from` reaches `to`;
    /// else `to`'s id, else its id from the vault root.
    fn reaching(&self, path: String, suffix: &str, to: usize, from: usize) -> String {
        let id = composed(&self.ids[to]);
        let id: &str = &id;
        let reaches =
            |path: &str| matches!(self.resolve(path, from), Resolution::Found(at) if at == to);
        [path, id.to_string()]
            .into_iter()
            .map(|path| format!("{path}{suffix}"))
            .find(|path| reaches(path))
            .unwrap_or_else(|| format!("/{id}{suffix}"))
    }

    /// One hit resolves; of several Obsidian would tell apart only by the
    /// order it loaded them, the one spelled exactly as `written` (the
    /// link's path without `./`, `../`, `/` or `.md`) if only one is;
    /// otherwise the link is ambiguous, the notes in id order (the first is
    /// the one the diagnostic's hint names).
    fn pick(&self, hits: &[usize], written: &str) -> Resolution {
        match hits {
            [] => Resolution::Missing,
            [one] => Resolution::Found(*one),
            many => {
                let exact: Vec<usize> = many
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let id = composed(&self.ids[i]);
                        id == written
                            || id
                                .strip_suffix(written)
                                .is_some_and(|rest| rest.ends_with('/'))
                    })
                    .collect();
                if let [one] = exact[..] {
                    return Resolution::Found(one);
                }
                let mut all = many.to_vec();
                all.sort_unstable_by(|&a, &b| self.ids[a].cmp(&self.ids[b]));
                Resolution::Ambiguous(all)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        /// The word-at-a-time check says what the byte-at-a-time one does,
        /// around every letter, `@`, `[`, `` ` ``, `{` and non-ASCII.
        #[test]
        fn ascii_lower_matches_the_bytewise_check(
            pieces in proptest::collection::vec(proptest::prop_oneof![
                8 => "[a-z0-9/_. -]",
                1 => proptest::sample::select(vec!["@", "A", "M", "Z", "[", "`", "{", "a", "z", "é", "\u{7f}", "\u{80}", "\u{ff}"]).prop_map(str::to_string),
            ], 0..40)
        ) {
            let text = pieces.concat();
            let bytewise = text.is_ascii() && !text.bytes().any(|b| b.is_ascii_uppercase());
            proptest::prop_assert_eq!(is_ascii_lower(&text), bytewise, "{:?}", text);
        }
    }

    /// A vault of ids from a few folders and names, some differing only in
    /// case, and links of every form.
    fn ids_strategy() -> impl Strategy<Value = Vec<String>> {
        let folders = ["", "a/", "b/", "a/b/", "b/a/", "A/", "c/a/b/"];
        let names = ["x", "X", "y", "a", "b"];
        proptest::collection::btree_set(
            (0..folders.len(), 0..names.len())
                .prop_map(move |(f, n)| format!("{}{}", folders[f], names[n])),
            1..14,
        )
        .prop_map(|set| set.into_iter().collect::<Vec<_>>())
    }

    const TARGETS: [&str; 16] = [
        "x", "X", "y", "b/x", "a/b/x", "/x", "/a/x", "./x", "../x", "../b/x", "./b/y", "../../x",
        "x.md", "a", "b/a/x", "nowhere",
    ];

    /// A resolution named by ids, so indices in two orders compare.
    fn named(index: &LinkIndex<'_>, ids: &[String], r: Resolution) -> (u8, Vec<String>) {
        let _ = index;
        match r {
            Resolution::Found(i) => (0, vec![ids[i].clone()]),
            Resolution::Missing => (1, Vec::new()),
            Resolution::Ambiguous(all) => (2, all.iter().map(|&i| ids[i].clone()).collect()),
        }
    }

    proptest::proptest! {
        /// The order the notes are listed in never changes what a link
        /// means, nor the order of a tie.
        #[test]
        fn resolution_does_not_depend_on_listing_order(
            (ids, shuffled) in ids_strategy().prop_flat_map(|ids| (Just(ids.clone()), Just(ids).prop_shuffle()))
        ) {
            let a = LinkIndex::new(ids.iter().map(String::as_str));
            let b = LinkIndex::new(shuffled.iter().map(String::as_str));
            for (from, source) in ids.iter().enumerate() {
                let from_b = shuffled.iter().position(|s| s == source).unwrap();
                for target in TARGETS {
                    proptest::prop_assert_eq!(
                        named(&a, &ids, a.resolve(target, from)),
                        named(&b, &shuffled, b.resolve(target, from_b)),
                        "{} from {}", target, source
                    );
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// Any text, however its brackets, escapes, code and comments
        /// nest: no panic, links in order, each inside the text and its
        /// target span inside the link, on character boundaries.
        #[test]
        fn links_never_panic_and_stay_inside_the_text(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "[", "]", "(", ")", "[[", "]]", "](", "<", ">", "<!--", "-->", "`", "``", "\\",
                "%", "%20", "%E9", "#", "|", "!", " ", "\n", "é", "😀", "a", "b.md", "https:", "->", "\"", "<b c=\"", "]é",
            ]), 0..24)
        ) {
            let text = pieces.concat();
            let mut last_start = 0;
            for link in links(&text) {
                proptest::prop_assert!(link.start >= last_start && link.start < link.end && link.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(link.start) && text.is_char_boundary(link.end));
                proptest::prop_assert!(link.target_span.start >= link.start && link.target_span.end <= link.end);
                proptest::prop_assert!(text.get(link.target_span.clone()).is_some(), "{:?} in {:?}", link, text);
                last_start = link.start;
            }
        }
    }

    #[test]
    fn a_link_text_read_differently_is_no_panic() {
        // A `]` in an HTML attribute of the link text, a two-byte character
        // after it: the bracket count stops early, the slice is refused.
        for text in [
            "[a <b c=\"]é\">](x.md)",
            "[a <b c=\"]\">](é.md)",
            "[`]`é](y.md)",
        ] {
            let _ = find_links(text);
        }
        assert_eq!(find_links("[`]`é](y.md)")[0].target, "y.md");
    }

    #[test]
    fn reads_every_link_form() {
        let text = "a [[t]] b [[t|alias]] [[t#heading]] [[folder/t]] [[t#^block]] [[ spaced ]]";
        let targets: Vec<String> = find_links(text)
            .iter()
            .map(|l| l.target.to_string())
            .collect();
        assert_eq!(targets, ["t", "t", "t", "folder/t", "t", "spaced"]);
    }

    #[test]
    fn an_escaped_pipe_starts_the_alias_as_in_a_table() {
        let text = "| [[Table view\\|Table]] | [[a/b.md\\|x]] | [[\\|y]] |";
        let links = find_links(text);
        let targets: Vec<&str> = links.iter().map(|l| l.target.as_ref()).collect();
        assert_eq!(targets, ["Table view", "a/b.md"]);
        // A rename replaces the name and keeps the escape.
        assert_eq!(&text[links[0].target_span.clone()], "Table view");
    }

    /// A backslash shows the bracket after it (Obsidian's "Escaping
    /// Markdown Syntax", CommonMark's escapes): `\[[a]]` is no link, an
    /// escaped backslash before `[[` escapes nothing.
    #[test]
    fn an_escaped_bracket_opens_no_link() {
        let targets = |text: &str| -> Vec<String> {
            find_links(text)
                .into_iter()
                .map(|l| l.target.into_owned())
                .collect()
        };
        assert_eq!(targets(r"see \[[a]] and [[b]]"), ["b"]);
        assert_eq!(targets(r"\\[[a]]"), ["a"]);
        assert_eq!(targets(r"\[[[a]]"), ["a"]);
        assert_eq!(targets(r"\[\[a\]\]"), Vec::<String>::new());
        assert_eq!(targets(r"`\`[[a]]"), ["a"]);
    }

    #[test]
    fn an_unclosed_link_is_no_link() {
        assert!(find_links("[[open and [x] ]").is_empty());
        assert_eq!(
            find_links("[[a\n]] [[b]]")
                .iter()
                .map(|l| l.target.to_string())
                .collect::<Vec<_>>(),
            ["b"]
        );
    }

    /// Regression: each `[[` that opens no link searched on to the `]]`
    /// again, so 200,000 of them before one link took minutes.
    #[test]
    fn many_opening_brackets_are_read_in_linear_time() {
        let opens = 200_000;
        let text = format!("{}x]] [[y]]", "[[".repeat(opens));
        let links = find_links(&text);
        let found: Vec<(usize, &str)> = links.iter().map(|l| (l.start, &*l.target)).collect();
        assert_eq!(found, [(2 * (opens - 1), "x"), (2 * opens + 4, "y")]);
        let text = format!("{}\n[[y]]", "[[x ".repeat(opens));
        assert_eq!(find_links(&text)[0].target, "y");
    }

    /// Regression: each link and each comment was looked for among every
    /// code span before it, so 100,000 of each took minutes.
    #[test]
    fn many_code_spans_are_looked_through_in_linear_time() {
        let spans = 100_000;
        let text = format!(
            "{}{}{}",
            "`a` ".repeat(spans),
            "<!-- [[x]] --> ".repeat(spans),
            "[[y]] ".repeat(spans)
        );
        assert_eq!(hidden_spans(&text).len(), 2 * spans);
        assert_eq!(find_links(&text).len(), spans);
    }

    #[test]
    fn resolves_by_basename_path_and_case() {
        let index = LinkIndex::new(["Draft", "sub/Review", "a/send", "b/send", "notes"]);
        assert_eq!(index.resolve("draft", 0), Resolution::Found(0));
        assert_eq!(index.resolve("review", 0), Resolution::Found(1));
        assert_eq!(index.resolve("SUB/review.md", 0), Resolution::Found(1));
        assert_eq!(index.resolve("send", 0), Resolution::Ambiguous(vec![2, 3]));
        assert_eq!(index.resolve("b/send", 0), Resolution::Found(3));
        assert_eq!(index.resolve("c/send", 0), Resolution::Missing);
        assert_eq!(index.resolve("nowhere", 0), Resolution::Missing);
        assert_eq!(index.resolve("", 4), Resolution::Found(4));
        // A leading `/` is the vault root; `./` is the linking note's
        // folder, once (Obsidian does not tidy `././b/send` into a path).
        assert_eq!(index.resolve("/sub/review", 0), Resolution::Found(1));
        assert_eq!(index.resolve("./b/send", 0), Resolution::Found(3));
        assert_eq!(index.resolve(" ././b/send", 0), Resolution::Missing);
        assert_eq!(index.resolve("./.b/send", 0), Resolution::Missing);
    }

    #[test]
    fn an_owned_index_resolves_like_a_borrowed_one() {
        let ids = [
            "Draft",
            "sub/Review",
            "a/send",
            "b/send",
            "notes",
            "Plan",
            "plan",
        ];
        let borrowed = LinkIndex::new(ids);
        let owned = LinkIndex::owned(ids);
        for target in [
            "draft",
            "review",
            "SUB/review.md",
            "send",
            "b/send",
            "c/send",
            "nowhere",
            "",
            "plan",
            "PLAN",
        ] {
            assert_eq!(
                owned.resolve(target, 4),
                borrowed.resolve(target, 4),
                "{target}"
            );
        }
        assert_eq!(owned.len(), ids.len());
    }

    #[test]
    fn inserting_and_removing_notes_answers_as_a_fresh_index() {
        let targets = [
            "draft",
            "review",
            "SUB/review.md",
            "send",
            "b/send",
            "c/send",
            "nowhere",
            "plan",
            "PLAN",
            "x",
        ];
        let mut ids = vec!["Draft", "sub/Review", "a/send", "notes", "plan"];
        let mut index = LinkIndex::owned(ids.iter().copied());
        let steps: [(bool, usize, &str); 6] = [
            (true, 3, "b/send"),
            (true, 0, "Plan"),
            (false, 2, ""),
            (true, 6, "x"),
            (false, 0, ""),
            (false, 3, ""),
        ];
        for (insert, at, id) in steps {
            if insert {
                ids.insert(at, id);
                index.insert_at(at, id);
            } else {
                ids.remove(at);
                index.remove_at(at);
            }
            let fresh = LinkIndex::new(ids.iter().copied());
            for target in targets {
                assert_eq!(
                    index.resolve(target, 0),
                    fresh.resolve(target, 0),
                    "{target} after {ids:?}"
                );
            }
        }
    }

    // The cases below are Obsidian's answers, from a transcription of its
    // `MetadataCache.getLinkpathDest` (the shipped app.js; README: "Links
    // as Obsidian resolves them").

    #[test]
    fn a_name_prefers_paths_under_the_own_folder_then_the_shortest_path() {
        let index = LinkIndex::new([
            "archive/old/Draft",
            "plans/Draft",
            "plans/launch/Draft",
            "plans/launch/review",
            "plans/other/review",
            "zeta/review",
            "zeta/x",
        ]);
        // Under the linking note's folder first.
        assert_eq!(index.resolve("Draft", 3), Resolution::Found(2));
        assert_eq!(index.resolve("review", 3), Resolution::Found(3));
        // Else the shortest path, however deep.
        assert_eq!(index.resolve("draft", 6), Resolution::Found(1));
        assert_eq!(index.resolve("review", 0), Resolution::Found(5));
        let short = LinkIndex::new(["a/b/Send", "longfolder/Send", "x"]);
        assert_eq!(short.resolve("Send", 2), Resolution::Found(0));
        // A folder in the link narrows to paths ending so.
        assert_eq!(index.resolve("launch/draft", 6), Resolution::Found(2));
        assert_eq!(index.resolve("old/Draft", 6), Resolution::Found(0));
        assert_eq!(index.resolve("launch/draft", 1), Resolution::Found(2));
        // A plain suffix and a plain prefix, as Obsidian compares them:
        // `b/send` ends `ab/send`; `ab/` starts with the folder `a`.
        let plain = LinkIndex::new(["ab/Send", "c/Send", "a/start", "b/Send", "x"]);
        assert_eq!(plain.resolve("b/Send", 4), Resolution::Found(3));
        assert_eq!(plain.resolve("b/Send", 1), Resolution::Found(3));
        let plain = LinkIndex::new(["ab/Send", "c/Send", "x"]);
        assert_eq!(plain.resolve("b/Send", 2), Resolution::Found(0));
        assert_eq!(plain.resolve("Send", 2), Resolution::Found(1));
        let prefix = LinkIndex::new(["ab/Send", "b/Send", "a/start"]);
        assert_eq!(prefix.resolve("Send", 2), Resolution::Found(0));
        // Paths as long in the group Obsidian takes: its pick is the order
        // it loaded them, so the link is ambiguous, in id order.
        let tie = LinkIndex::new(["c/d/send", "b/send", "a/send", "x"]);
        assert_eq!(tie.resolve("send", 3), Resolution::Ambiguous(vec![2, 1]));
        assert_eq!(tie.resolve("send", 0), Resolution::Found(0));
        let tie = LinkIndex::new(["ab/Send", "abc/Send", "x"]);
        assert_eq!(tie.resolve("Send", 2), Resolution::Found(0));
        // Matching ignores case, and so does the length that orders.
        let case = LinkIndex::new(["Plugins/terminal", "Themes/Terminal", "x"]);
        assert_eq!(case.resolve("terminal", 2), Resolution::Found(1));
    }

    #[test]
    fn a_path_from_the_root_wins_and_a_leading_slash_means_only_that() {
        let index = LinkIndex::new(["Send", "plans/Send", "plans/start", "plans/Draft", "x"]);
        // The vault root's `Send` even from beside `plans/Send`.
        assert_eq!(index.resolve("Send", 2), Resolution::Found(0));
        assert_eq!(index.resolve("Send.md", 2), Resolution::Found(0));
        assert_eq!(index.resolve("/plans/Send", 4), Resolution::Found(1));
        // `/Draft`: no note at the root, and no search.
        assert_eq!(index.resolve("/Draft", 2), Resolution::Missing);
        assert_eq!(index.resolve("Draft", 4), Resolution::Found(3));
        let only = LinkIndex::new(["plans/Send", "start"]);
        assert_eq!(only.resolve("/Send", 1), Resolution::Missing);
        assert_eq!(only.resolve("Send", 1), Resolution::Found(0));
    }

    #[test]
    fn relative_links_start_at_the_linking_note_then_search_as_names() {
        let index = LinkIndex::new([
            "Sibling",
            "plans/Sibling",
            "plans/a/note",
            "plans/other/Dup",
            "Dup",
            "Target",
        ]);
        assert_eq!(index.resolve("./Sibling", 1), Resolution::Found(1));
        assert_eq!(index.resolve("./Sibling", 0), Resolution::Found(0));
        assert_eq!(index.resolve("../Sibling", 2), Resolution::Found(1));
        assert_eq!(index.resolve("../../Sibling.md", 2), Resolution::Found(0));
        assert_eq!(index.resolve("../other/Dup", 2), Resolution::Found(3));
        assert_eq!(index.resolve("../../Target", 2), Resolution::Found(5));
        assert_eq!(index.resolve("./../Target", 1), Resolution::Found(5));
        // `../` above the vault root stays at the root.
        assert_eq!(index.resolve("../Sibling", 0), Resolution::Found(0));
        assert_eq!(index.resolve("../../../Target", 2), Resolution::Found(5));
        // No note at that path: the path is looked for as a name ending so.
        assert_eq!(index.resolve("./Target", 2), Resolution::Missing);
        assert_eq!(index.resolve("./Dup", 1), Resolution::Missing);
        let miss = LinkIndex::new(["Mobile/Android/Send", "Mobile/Android/start"]);
        assert_eq!(miss.resolve("../../Send", 1), Resolution::Found(0));
        let miss = LinkIndex::new(["q/a/x/Send", "a/b/start"]);
        assert_eq!(miss.resolve("../x/Send", 1), Resolution::Found(0));
        // A folder is no note, nor is a path Obsidian does not tidy.
        let folders = LinkIndex::new(["web", "web/guide", "guide", "guide/README", "web/start"]);
        for link in ["./", "../guide/", "./guide/", ".//guide", "./a/../guide"] {
            assert_eq!(folders.resolve(link, 4), Resolution::Missing, "{link}");
        }
    }

    #[test]
    fn empty_templater_and_coded_links_are_no_links() {
        let targets = |text| {
            find_links(text)
                .iter()
                .map(|l| l.target.to_string())
                .collect::<Vec<_>>()
        };
        assert!(
            targets("[[]] [[ ]] [[|]] [[ | alias]] [[|#alias]] [[<% tp.file.title %>]]").is_empty()
        );
        assert_eq!(targets("[[#heading]] [[a]]"), ["", "a"]);
        assert_eq!(targets("`[[a]]` [[b]] ``x ` [[c]]`` ` [[d]]"), ["b", "d"]);
        assert_eq!(targets("`open [[e]]"), ["e"]);
    }

    #[test]
    fn notes_differing_only_in_case_resolve_to_the_exact_spelling() {
        let index = LinkIndex::new(["Plan", "plan"]);
        assert_eq!(index.resolve("plan", 0), Resolution::Found(1));
        assert_eq!(index.resolve("PLAN", 0), Resolution::Ambiguous(vec![0, 1]));
    }

    /// macOS hands out names decomposed (NFD); Obsidian keys its paths
    /// composed (NFC), so the link typed composed finds the note, and a new
    /// link to it is written composed.
    #[test]
    fn a_decomposed_note_name_is_found_by_the_composed_link() {
        let cafe_nfd = "Cafe\u{301}";
        let meeting_nfd = "notes/\u{1112}\u{116c}\u{110b}\u{1174}";
        let index = LinkIndex::new([cafe_nfd, meeting_nfd, "notes/Plan"]);
        assert_eq!(index.resolve("Café", 2), Resolution::Found(0));
        assert_eq!(index.resolve("CAFÉ", 2), Resolution::Found(0));
        assert_eq!(index.resolve("회의", 0), Resolution::Found(1));
        assert_eq!(index.resolve("notes/회의.md", 0), Resolution::Found(1));
        assert_eq!(index.resolve("./회의", 2), Resolution::Found(1));
        // A link typed decomposed finds no composed path in Obsidian either.
        assert_eq!(index.resolve(cafe_nfd, 2), Resolution::Missing);
        assert_eq!(index.link_path(0, 2, LinkPath::Shortest), "Café");
        assert_eq!(index.link_path(1, 0, LinkPath::Absolute), "notes/회의");
        assert_eq!(index.link_path(1, 2, LinkPath::Relative), "회의");
        assert_eq!(index.relinked_path("../Cafe", 0, 2), "../Café");
        let mut owned = LinkIndex::owned([cafe_nfd, "x"]);
        assert_eq!(owned.resolve("café", 1), Resolution::Found(0));
        owned.insert_at(0, meeting_nfd);
        assert_eq!(owned.resolve("회의", 1), Resolution::Found(0));
        owned.remove_at(0);
        assert_eq!(owned.resolve("회의", 1), Resolution::Missing);
        assert_eq!(owned.resolve("café", 1), Resolution::Found(0));
    }

    #[test]
    fn app_json_says_how_new_links_are_written() {
        let style = |json| vault_link_style(Some(json));
        let default = LinkStyle {
            form: LinkForm::Wiki,
            path: LinkPath::Shortest,
        };
        assert_eq!(vault_link_style(None), default);
        assert_eq!(style("{not json"), default);
        assert_eq!(style(r#"{"newLinkFormat": 3}"#), default);
        assert_eq!(
            style(r#"{"useMarkdownLinks": true, "newLinkFormat": "relative"}"#),
            LinkStyle {
                form: LinkForm::Markdown,
                path: LinkPath::Relative
            }
        );
        assert_eq!(
            style(r#"{"newLinkFormat": "absolute"}"#).path,
            LinkPath::Absolute
        );
    }

    #[test]
    fn new_links_are_written_in_the_vault_style_and_reach_their_note() {
        let index = LinkIndex::new([
            "plans/Draft",    // 0
            "plans/Send",     // 1
            "done/Send",      // 2
            "plans/sub/Note", // 3
            "Root",           // 4
            "x/plans/Send",   // 5
            "x/Source",       // 6
        ]);
        let path = |to, from, style| index.link_path(to, from, style);
        use LinkPath::*;
        assert_eq!(path(3, 0, Shortest), "Note");
        assert_eq!(path(1, 0, Shortest), "plans/Send");
        assert_eq!(path(2, 0, Shortest), "done/Send");
        assert_eq!(path(3, 0, Relative), "sub/Note");
        assert_eq!(path(2, 0, Relative), "../done/Send");
        assert_eq!(path(4, 3, Relative), "../../Root");
        assert_eq!(path(1, 0, Relative), "Send");
        assert_eq!(path(3, 4, Absolute), "plans/sub/Note");
        // A path from the root is that note even from beside a folder of
        // the same name (`x/plans/Send` is found by searching, after it).
        assert_eq!(path(1, 6, Absolute), "plans/Send");
        assert_eq!(path(1, 6, Shortest), "plans/Send");
        assert_eq!(path(5, 6, Shortest), "x/plans/Send");
        for to in 0..7 {
            for from in 0..7 {
                for style in [Shortest, Relative, Absolute] {
                    let written = path(to, from, style);
                    assert_eq!(
                        index.resolve(&written, from),
                        Resolution::Found(to),
                        "{written}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_relinked_path_keeps_the_way_it_was_written() {
        let index = LinkIndex::new(["a/Draft", "a/Source", "b/Draft", "Top"]);
        assert_eq!(index.relinked_path("Old.md", 0, 1), "Draft.md");
        assert_eq!(index.relinked_path("x/Old", 0, 1), "a/Draft");
        assert_eq!(index.relinked_path("/x/Old", 0, 1), "/a/Draft");
        assert_eq!(index.relinked_path("./Old", 0, 1), "./Draft");
        assert_eq!(index.relinked_path("../Old", 3, 1), "../Top");
        // From a/, `Draft` is a/Draft: b's is written by path.
        assert_eq!(index.relinked_path("Old", 2, 1), "b/Draft");
    }
}
