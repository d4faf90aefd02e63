//! Whether a vault plan's links lead to the same notes in SilverBullet.
//!
//! planvault reads links as Obsidian does (see [`super::links`]).
//! SilverBullet (2.x, `plug-api/lib/ref.ts` and `resolve.ts`) reads them
//! otherwise: a wikilink is a path from the space's root, matched exactly
//! (case included, on a file system that tells case apart), and a markdown
//! link is relative to the linking page's folder (`/` from the root),
//! decoded as JavaScript's `decodeURI` decodes, its empty path the index
//! page, one of a single character ignored, and a lone `~` in its text
//! read as a subscript that may take the link (`plugs/editor/navigate.ts`
//! and the parser's `Subscript`). A plan both apps open therefore means the
//! same in both only where the two readings meet. [`check`] reports every
//! edge whose link SilverBullet would read as another page, or as none,
//! and the link that reads the same in both; and every `## Next` item an
//! Obsidian `%%` comment hides, which SilverBullet shows as an edge.
//!
//! A folder is a SilverBullet space when its root has SilverBullet's
//! configuration page, `CONFIG.md`, with a `space-lua` block
//! ([`is_space`]): callers then run [`check`] unasked and write new links
//! with [`link_path`], so a link the app adds reads alike in both.

use super::frontmatter::{self, Split};
use super::links::{
    composed, encode_path, find_links, links, LinkForm, LinkIndex, LinkPath, NoteLink,
};
use super::next::outline_comments_shown;
use super::note::NOTE_NEXT_LEVELS;
use super::text::{comment_blocks, strip_bom, LineIndex};
use super::write::note_file;
use crate::{Code, Diagnostic, Plan, PlanFormat, SourcePos};
use std::collections::BTreeMap;
use std::ops::Range;

/// SilverBullet's configuration page, at the space's root.
pub const CONFIG_PAGE: &str = "CONFIG.md";

/// Whether `files` (vault-relative path → text) are a SilverBullet space:
/// its root has [`CONFIG_PAGE`] with a `space-lua` block, as every space
/// SilverBullet 2 configured has. No other app gives that page such a
/// block, so a vault of Obsidian's alone is never taken for one.
pub fn is_space(files: &BTreeMap<String, String>) -> bool {
    files
        .get(CONFIG_PAGE)
        .is_some_and(|text| is_space_config(text))
}

/// Whether `text`, a space's [`CONFIG_PAGE`], has a `space-lua` block: a
/// fence (up to three spaces in) whose info string is `space-lua`.
pub fn is_space_config(text: &str) -> bool {
    text.lines().any(|line| {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let fence = line[indent..]
            .strip_prefix("```")
            .or_else(|| line[indent..].strip_prefix("~~~"));
        indent <= 3
            && fence.is_some_and(|rest| {
                let info = rest.trim_start_matches(['`', '~']).trim();
                info.split_whitespace().next() == Some("space-lua")
            })
    })
}

/// The path a new link in note `from` to note `to` is written with in a
/// SilverBullet space, so both apps open `to`: a wikilink's path from the
/// root (`plans/Send`, what Obsidian's "Absolute path in vault" writes), a
/// markdown link's with a leading `/` (`/plans/Send`), since SilverBullet
/// reads one without from the note's folder and `./` not at all. A name
/// stored decomposed (macOS) no link serves in both: the path is written
/// composed, as Obsidian reads it, and [`check`] advises a rename.
pub fn link_path(index: &LinkIndex<'_>, to: usize, from: usize, form: LinkForm) -> String {
    let path = index.link_path(to, from, LinkPath::Absolute);
    match form {
        LinkForm::Markdown if !path.starts_with('/') => format!("/{path}"),
        _ => path,
    }
}

/// The page SilverBullet opens for a link in note `file` whose target
/// reads as `target` (a wikilink's path, a markdown link's destination
/// decoded, as [`NoteLink::target`]), with its extension: `file` itself for
/// a link to a heading of its own; `None` for a link it cannot read.
pub(crate) fn opens_target(form: LinkForm, target: &str, file: &str) -> Option<String> {
    let opens = match form {
        LinkForm::Wiki => parse_ref(target),
        LinkForm::Markdown => markdown_ref(file, target),
    };
    match opens {
        Opens::Path(path) if path.is_empty() => Some(file.to_string()),
        Opens::Path(path) => Some(path),
        _ => None,
    }
}

/// What SilverBullet opens for a link.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Opens {
    /// A path from the space's root, with its extension (`plans/Send.md`);
    /// empty for the linking page itself.
    Path(String),
    /// Nothing: SilverBullet says the link is invalid.
    Invalid,
    /// The anchor after a `$`, looked up in SilverBullet's index: no page
    /// by the path.
    Anchor,
    /// No link: a `~` in its text pairs with one in its destination, and
    /// SilverBullet reads what lies between as a subscript.
    Subscript,
    /// Nothing: a markdown link's destination of one character, which a
    /// click ignores ("Empty link").
    Ignored,
}

/// The page SilverBullet opens for an empty path: its index page, `index`
/// unless the server is told another.
const INDEX_PAGE: &str = "index.md";

/// The diagnostics for `plan`'s edges that SilverBullet reads otherwise.
/// `files` are the vault's notes (vault-relative path → text), as given to
/// [`crate::check`]; an edge planvault cannot resolve is left to the
/// errors it already has.
pub fn check(files: &BTreeMap<String, String>, plan: &Plan) -> Vec<Diagnostic> {
    if plan.format != PlanFormat::Vault {
        return Vec::new();
    }
    let mut out = Vec::new();
    for edge in &plan.edges {
        let (Some(to), Some(pos)) = (edge.to, &edge.pos) else {
            continue;
        };
        let (from, target) = (&plan.nodes[edge.from], &plan.nodes[to]);
        let Some(link) = files
            .get(&pos.file)
            .and_then(|text| line_of(strip_bom(text).0, pos.line))
            .and_then(|line| Written::at(line, pos.column))
        else {
            continue;
        };
        let file = note_file(plan, to);
        let opens = link.opens(&pos.file);
        let itself = opens == Opens::Path(String::new()) && to == edge.from;
        if itself || opens == Opens::Path(file.clone()) {
            continue;
        }
        let opened = match &opens {
            Opens::Invalid => "cannot read it".to_string(),
            Opens::Anchor => {
                "looks up what follows its `$` as an anchor in its index, and opens no page by the path".to_string()
            }
            Opens::Subscript => {
                "reads the `~` in its text and the one in its path as a subscript, not a link".to_string()
            }
            Opens::Ignored => {
                "ignores a click on a link whose destination is one character".to_string()
            }
            Opens::Path(path) if path.is_empty() => "opens the note the link is in".to_string(),
            Opens::Path(path) if !path.ends_with(".md") => format!(
                "opens `{path}` as a file, not a page (it takes what follows a name's last dot for a file type)"
            ),
            Opens::Path(path) if link.form == LinkForm::Markdown && path == INDEX_PAGE && link.text[link.target.clone()].is_empty() => {
                "opens its index page, `index` (a markdown link with no path does there)".to_string()
            }
            Opens::Path(path) => {
                let name = page_name(path);
                let why = match link.form {
                    LinkForm::Wiki => "a wikilink there is the page's path from the space's root, case and all",
                    LinkForm::Markdown => {
                        "a markdown link there is relative to the note's folder, or from the root after `/`"
                    }
                };
                match files.contains_key(path) {
                    true => format!("opens the page `{name}` instead ({why})"),
                    false => format!("opens the page `{name}`, which does not exist ({why})"),
                }
            }
        };
        let fixed = link.to(&target.id);
        // A name stored decomposed (macOS) is one SilverBullet opens only
        // as stored, and Obsidian only composed.
        let decomposed = composed(&target.id) != target.id.as_str();
        let advice = match fixed.as_written().opens(&pos.file) {
            Opens::Path(path) if path == file && !decomposed => {
                format!("write `{}`, which both read as `{}`", fixed.text, target.id)
            }
            _ if decomposed => format!(
                "no link to `{}` reads the same in both, its name being stored decomposed: rename the note (typing its name again stores it composed)",
                target.id
            ),
            _ => format!(
                "no link to `{}` reads the same in both: rename the note",
                target.id
            ),
        };
        out.push(
            Diagnostic::warning(
                Code::SilverbulletReadsOtherwise,
                format!(
                    "`{}` leads to `{}` here, as in Obsidian, but SilverBullet {opened}; {advice}",
                    link.text, target.id
                ),
            )
            .at(pos)
            .with_nodes([from.id.as_str(), target.id.as_str()]),
        );
    }
    for (i, node) in plan.nodes.iter().enumerate() {
        let file = note_file(plan, i);
        if let Some(text) = files.get(&file) {
            commented_items(&file, &node.id, text, &mut out);
        }
    }
    crate::diagnostic::sort_by_position(&mut out);
    out
}

/// The `## Next` items of a note that only a `%%` comment keeps from being
/// edges: SilverBullet has no such comment and shows them as the others.
fn commented_items(file: &str, id: &str, text: &str, out: &mut Vec<Diagnostic>) {
    let (text, _) = strip_bom(text);
    let body_offset = match frontmatter::split(text) {
        Split::Absent => 0,
        Split::Closed(block) => block.body_offset,
        Split::Unclosed { body_offset } => body_offset,
    };
    let body = &text[body_offset..];
    let comments = comment_blocks(body);
    if comments.is_empty() {
        return;
    }
    let lines = LineIndex::new(text);
    for item in outline_comments_shown(body, NOTE_NEXT_LEVELS).items {
        if !comments.iter().any(|c| c.contains(&item.start)) {
            continue;
        }
        let Some(link) = links(&body[item.clone()]).next() else {
            continue;
        };
        let at = body_offset + item.start + link.start;
        let (line, column) = lines.position(at);
        let written = &text[at..body_offset + item.start + link.end];
        out.push(
            Diagnostic::warning(
                Code::SilverbulletReadsOtherwise,
                format!(
                    "`{written}` is in a `%%` comment under `## Next`: Obsidian hides it and planvault follows no edge there, but SilverBullet shows `%%` as text and this item as an edge; delete the item, or take it out of the comment to make it one"
                ),
            )
            .at(&SourcePos::new(file, line, column))
            .with_nodes([id]),
        );
    }
}

/// Line `number` (1-based) of `text`, without its line ending.
fn line_of(text: &str, number: u32) -> Option<&str> {
    let line = text.split('\n').nth(number.checked_sub(1)? as usize)?;
    Some(line.strip_suffix('\r').unwrap_or(line))
}

/// A page's name as SilverBullet shows it: its path without `.md`.
fn page_name(path: &str) -> &str {
    path.strip_suffix(".md").unwrap_or(path)
}

/// A link as a note writes it.
struct Written<'a> {
    form: LinkForm,
    /// The whole link: `[[Send|go]]`, `[go](Send.md#Heading)`.
    text: &'a str,
    /// Where in `text` its target is written: `Send`, `Send.md` (a markdown
    /// link's without `<>` and `#…`).
    target: Range<usize>,
}

/// A [`Written`] link that owns its text (a suggested fix).
struct Rewritten {
    form: LinkForm,
    text: String,
    target: Range<usize>,
}

impl Rewritten {
    fn as_written(&self) -> Written<'_> {
        Written {
            form: self.form,
            text: &self.text,
            target: self.target.clone(),
        }
    }
}

impl<'a> Written<'a> {
    /// The link that starts at `column` (1-based, in characters) of `line`.
    fn at(line: &'a str, column: u32) -> Option<Written<'a>> {
        let start = line
            .char_indices()
            .nth(column.checked_sub(1)? as usize)
            .map(|(i, _)| i)?;
        let link: NoteLink<'a> = find_links(line).into_iter().find(|l| l.start == start)?;
        Some(Written {
            form: link.form,
            text: &line[link.start..link.end],
            target: link.target_span.start - start..link.target_span.end - start,
        })
    }

    /// What SilverBullet opens for this link in the note `file`.
    fn opens(&self, file: &str) -> Opens {
        match self.form {
            // The text between `[[` and the first `|`, as written.
            LinkForm::Wiki => {
                let inner = self.text.trim_start_matches('!');
                let inner = inner
                    .strip_prefix("[[")
                    .and_then(|i| i.strip_suffix("]]"))
                    .unwrap_or(inner);
                parse_ref(inner.split('|').next().unwrap_or(inner))
            }
            LinkForm::Markdown => {
                if self.subscript() {
                    return Opens::Subscript;
                }
                // The destination as its node holds it: `<>` and `#…`
                // included, a title not.
                let after = &self.text[self.target.start..self.text.len() - 1];
                let destination = after.split([' ', '\t']).next().unwrap_or(after);
                let bracketed = self.text[..self.target.start].ends_with('<');
                if !bracketed && destination.encode_utf16().count() <= 1 {
                    return Opens::Ignored;
                }
                match decode_uri(&self.text[self.target.clone()]) {
                    Some(url) => markdown_ref(file, &url),
                    // `decodeURI` throws, and the click does nothing.
                    None => Opens::Invalid,
                }
            }
        }
    }

    /// Whether a `~` alone in the link's text is left to pair with one
    /// alone in its destination: SilverBullet's subscript then takes the
    /// `](` between them, and there is no link.
    fn subscript(&self) -> bool {
        let lone = |text: &str| {
            let b = text.as_bytes();
            (0..b.len())
                .filter(|&i| {
                    b[i] == b'~'
                        && (i == 0 || b[i - 1] != b'~')
                        && b.get(i + 1) != Some(&b'~')
                        && (i == 0 || b[i - 1] != b'\\')
                })
                .count()
        };
        let Some(close) = self.text[..self.target.start].rfind("](") else {
            return false;
        };
        lone(&self.text[..close]) % 2 == 1 && lone(&self.text[self.target.clone()]) > 0
    }

    /// This link with its target replaced by the path from the root that
    /// both readings share: `[[plans/Send|go]]`, `[go](/plans/Send.md)`.
    fn to(&self, id: &str) -> Rewritten {
        let target = match self.form {
            LinkForm::Wiki => id.to_string(),
            // A `~` escaped, so none pairs with one in the link's text.
            LinkForm::Markdown => format!("/{}.md", encode_path(id).replace('~', "%7E")),
        };
        let (before, after) = (
            &self.text[..self.target.start],
            &self.text[self.target.end..],
        );
        Rewritten {
            form: self.form,
            text: format!("{before}{target}{after}"),
            target: before.len()..before.len() + target.len(),
        }
    }
}

/// What a click on a markdown link whose destination decodes to `url`
/// opens from the note `file`: an empty path is the index page there (a
/// wikilink's is the note itself).
fn markdown_ref(file: &str, url: &str) -> Opens {
    match parse_ref(&resolve_markdown_link(file, url)) {
        Opens::Path(path) if path.is_empty() => Opens::Path(INDEX_PAGE.to_string()),
        opens => opens,
    }
}

/// JavaScript's `decodeURI`, as SilverBullet decodes a markdown link's
/// destination: each run of `%XX` decoded as UTF-8, but the escape of a
/// character it reserves (`;/?:@&=+$,#`) kept as written (`Q%26A` stays
/// so); `None` where it throws (a `%` without two hex digits after it,
/// bytes that are not UTF-8).
fn decode_uri(url: &str) -> Option<String> {
    let bytes = url.as_bytes();
    let escaped = |at: usize| -> Option<u8> {
        let hex = bytes.get(at + 1..at + 3)?;
        let digit = |b: u8| (b as char).to_digit(16);
        Some((digit(hex[0])? * 16 + digit(hex[1])?) as u8)
    };
    let mut out = String::with_capacity(url.len());
    let mut at = 0;
    while let Some(c) = url[at..].chars().next() {
        if c != '%' {
            out.push(c);
            at += c.len_utf8();
            continue;
        }
        let first = escaped(at)?;
        let len = match first {
            0..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return None,
        };
        let mut char_bytes = vec![first];
        for k in 1..len {
            let next = at + 3 * k;
            if bytes.get(next) != Some(&b'%') {
                return None;
            }
            char_bytes.push(escaped(next)?);
        }
        let decoded = std::str::from_utf8(&char_bytes).ok()?;
        if b";/?:@&=+$,#".contains(&first) {
            out.push_str(&url[at..at + 3]);
        } else {
            out.push_str(decoded);
        }
        at += 3 * len;
    }
    Some(out)
}

/// SilverBullet's `resolveMarkdownLink`: from the root after a `/`, else
/// from the page's folder, with leading `..` climbing (never above the root).
fn resolve_markdown_link(file: &str, url: &str) -> String {
    if let Some(rooted) = url.strip_prefix('/') {
        return rooted.to_string();
    }
    let mut path: Vec<&str> = file.split('/').collect();
    path.pop();
    let mut parts = url.split('/').peekable();
    while parts.next_if_eq(&"..").is_some() {
        path.pop();
    }
    path.extend(parts);
    path.join("/")
}

/// SilverBullet's `parseToRef` (its `refRegex`), for the path only: a ref
/// is an optional `^`, a path without `@#|<>$`, then at most one of
/// `@pos`, `@L…C…`, `#header` or `$anchor`. Then `normalizePath`: a leading
/// `/` goes, and a path with no file type is a page (`.md`).
fn parse_ref(text: &str) -> Opens {
    let text = text.strip_prefix('^').unwrap_or(text);
    // The regex's lookaheads, each over the whole text.
    let dotted_start = text
        .strip_prefix('/')
        .unwrap_or(text)
        .starts_with(['.', '^']);
    let dot_segment = text.split('/').any(|s| s == "." || s == "..");
    let brackets = text.contains("]]") || text.contains("[[");
    if double_extension(text) || dotted_start || dot_segment || brackets || text.contains("//") {
        return Opens::Invalid;
    }
    let end = text
        .find(['@', '#', '|', '<', '>', '$'])
        .unwrap_or(text.len());
    let (path, rest) = text.split_at(end);
    if !valid_suffix(rest) {
        return Opens::Invalid;
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    // A navigation checks the path again, alone (`coerceAndValidateRef`):
    // `Plan v1.2.md#Scope` passed the lookahead that ends at the text's end.
    if double_extension(path) {
        return Opens::Invalid;
    }
    if rest.starts_with('$') {
        return Opens::Anchor;
    }
    Opens::Path(if path.is_empty() || has_extension(path) {
        path.to_string()
    } else {
        format!("{path}.md")
    })
}

/// `refRegex`'s `(?!.*\.[a-zA-Z0-9]+\.md$)`: a file type before `.md`.
fn double_extension(text: &str) -> bool {
    text.strip_suffix(".md").is_some_and(|stem| {
        stem.rsplit_once('.')
            .is_some_and(|(_, ext)| alphanumeric(ext))
    })
}

/// The part of a ref after its path, as `refRegex` allows it.
fn valid_suffix(rest: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if rest.is_empty() || rest.starts_with('#') {
        return true;
    }
    if let Some(at) = rest.strip_prefix('@') {
        return match at.strip_prefix(['L', 'l']) {
            Some(place) => match place.split_once(['C', 'c']) {
                Some((line, column)) => digits(line) && digits(column),
                None => digits(place),
            },
            None => digits(at),
        };
    }
    rest.strip_prefix('$').is_some_and(|anchor| {
        anchor.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && anchor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_/:-".contains(&b))
    })
}

/// `normalizePath`'s `/.+\.[a-zA-Z0-9]+$/`: a name, a dot, a file type.
fn has_extension(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && alphanumeric(ext))
}

fn alphanumeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SilverBullet's own `parseToRef` cases (`plug-api/lib/ref.test.ts`),
    /// the path each reads as, or `None` where it returns null.
    #[test]
    fn reads_refs_as_silverbullet_s_own_tests_do() {
        let cases: &[(&str, Option<&str>)] = &[
            ("foo", Some("foo.md")),
            ("/foo", Some("foo.md")),
            ("foo/bar", Some("foo/bar.md")),
            ("foo.png", Some("foo.png")),
            ("foo.md", Some("foo.md")),
            ("foo.", Some("foo..md")),
            ("foo..", Some("foo...md")),
            (" .foo", Some(" .foo")),
            ("foo[bar", Some("foo[bar.md")),
            ("foo]bar", Some("foo]bar.md")),
            ("foo(bar", Some("foo(bar.md")),
            ("foo)bar", Some("foo)bar.md")),
            ("/bar/.../foo", Some("bar/.../foo.md")),
            ("/foo/.bar.md", None),
            ("foo.md.md", None),
            ("/.../foo", None),
            ("^.foo", None),
            (".foobar", None),
            ("foo[[bar", None),
            ("foo]]bar", None),
            ("foo|bar", None),
            ("foo@bar", None),
            ("/../foo", None),
            ("/./foo", None),
            ("/bar/../foo", None),
            ("/bar/./foo", None),
            ("", Some("")),
            ("/", Some("")),
            ("/.md", None),
            ("/.foo", None),
            ("/@132", Some("")),
            ("^foo", Some("foo.md")),
            ("foo# header", Some("foo.md")),
            ("foo# header@123", Some("foo.md")),
            ("foo@1231", Some("foo.md")),
            ("foo@l42c69", Some("foo.md")),
            ("foo@L42C69", Some("foo.md")),
            ("foo@L42", Some("foo.md")),
            ("foo@ 123", None),
            ("foo@c69", None),
            ("foo@123#header", None),
            ("foo@123@l29", None),
            ("hello<there", None),
            ("hello>there", None),
            ("$pete", Some("")),
            ("Some Page$pete", Some("Some Page.md")),
            ("$tasks/7", Some("")),
            ("$a:b", Some("")),
            ("$_foo", Some("")),
            ("$100", None),
        ];
        for (text, path) in cases {
            // A `$anchor` is looked up, not opened by the path.
            let anchor = text.contains('$') && !text.contains('#');
            let expected = match path {
                None => Opens::Invalid,
                Some(_) if anchor => Opens::Anchor,
                Some(p) => Opens::Path(p.to_string()),
            };
            assert_eq!(parse_ref(text), expected, "{text:?}");
        }
    }

    /// SilverBullet's own `resolveMarkdownLink` cases
    /// (`plug-api/lib/resolve.test.ts`); the page is named without `.md`.
    #[test]
    fn resolves_markdown_links_as_silverbullet_s_own_tests_do() {
        let cases = [
            ("foo", "/bar", "bar"),
            ("/foo/bar/baz", "/qux", "qux"),
            ("foo", "/bar@123#456", "bar@123#456"),
            ("foo/bar", "/baz.jpg", "baz.jpg"),
            ("bar", "foo", "foo"),
            ("foo/bar.jpg", "baz", "foo/baz"),
            ("/foo/bar", "baz", "/foo/baz"),
            ("foo///bar", "baz", "foo///baz"),
            ("bar", "../foo/baz", "foo/baz"),
            ("bar", "../../foo/baz", "foo/baz"),
            ("bar/qux", "foo/../baz", "bar/foo/../baz"),
        ];
        for (page, url, expected) in cases {
            assert_eq!(
                resolve_markdown_link(page, url),
                expected,
                "{page:?} {url:?}"
            );
        }
    }

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect()
    }

    #[test]
    fn a_space_is_a_root_config_page_with_a_space_lua_block() {
        let config = "# Config\n\n```space-lua\nconfig.set(\"shortWikiLinks\", false)\n```\n";
        assert!(is_space(&files(&[("CONFIG.md", config)])));
        for text in [
            "~~~space-lua\n~~~\n",
            "   ````space-lua\n````\n",
            "``` space-lua {x}\n```\n",
        ] {
            assert!(is_space(&files(&[("CONFIG.md", text)])), "{text:?}");
        }
        // Not SilverBullet's: another page, another folder, another block,
        // a block indented as code, or the words in the text.
        for (path, text) in [
            ("config.md", config),
            ("notes/CONFIG.md", config),
            ("Config notes.md", config),
            ("CONFIG.md", "```lua\n```\n"),
            ("CONFIG.md", "    ```space-lua\n"),
            ("CONFIG.md", "See the space-lua block of SilverBullet.\n"),
            ("CONFIG.md", "```space-luax\n```\n"),
        ] {
            assert!(!is_space(&files(&[(path, text)])), "{path}: {text:?}");
        }
    }

    /// A link written with [`link_path`] opens its note in both apps, from
    /// every folder, in both link forms, where Obsidian's own shortest
    /// paths would not in SilverBullet.
    #[test]
    fn new_links_open_the_same_note_in_both() {
        let ids = [
            "Start",
            "plans/Review",
            "plans/launch/Send",
            "plans/launch/Review",
            "Send it",
        ];
        let index = LinkIndex::new(ids);
        for form in [LinkForm::Wiki, LinkForm::Markdown] {
            for (from, from_id) in ids.iter().enumerate() {
                let file = format!("{from_id}.md");
                for (to, to_id) in ids.iter().enumerate() {
                    let path = link_path(&index, to, from, form);
                    let item = super::super::edit::edge_item("go", &path, form);
                    let line = item.trim_start_matches("- go -> ");
                    let written = Written::at(line, 1).expect("a link");
                    let case = format!("{form:?} {from_id} -> {to_id}: {line}");
                    assert_eq!(
                        written.opens(&file),
                        Opens::Path(format!("{to_id}.md")),
                        "{case}"
                    );
                    let target = &line[written.target.clone()];
                    let target = match form {
                        LinkForm::Wiki => target.to_string(),
                        LinkForm::Markdown => percent_encoding::percent_decode_str(target)
                            .decode_utf8()
                            .unwrap()
                            .into_owned(),
                    };
                    assert_eq!(
                        index.resolve(&target, from),
                        super::super::links::Resolution::Found(to),
                        "{case}"
                    );
                }
            }
        }
        // Obsidian's shortest path, for contrast: SilverBullet opens the
        // root's `Send.md`, which is no note here.
        let shortest = index.link_path(2, 1, LinkPath::Shortest);
        assert_eq!(shortest, "Send");
        assert_eq!(
            opens("[[Send]]", "plans/Review.md"),
            Opens::Path("Send.md".into())
        );
        assert_eq!(link_path(&index, 2, 1, LinkForm::Wiki), "plans/launch/Send");
        assert_eq!(
            link_path(&index, 2, 1, LinkForm::Markdown),
            "/plans/launch/Send"
        );
    }

    fn opens(line: &str, file: &str) -> Opens {
        Written::at(line, 1)
            .expect("a link at column 1")
            .opens(file)
    }

    #[test]
    fn a_link_opens_what_silverbullet_opens_from_its_note() {
        let path = |p: &str| Opens::Path(p.to_string());
        // Wikilinks from the root, whatever the note's folder.
        assert_eq!(opens("[[Send]]", "plans/Review.md"), path("Send.md"));
        assert_eq!(opens("[[ Send ]]", "Review.md"), path(" Send .md"));
        assert_eq!(
            opens("[[plans/Send|go]]", "plans/Review.md"),
            path("plans/Send.md")
        );
        assert_eq!(opens("[[Send#Details]]", "Review.md"), path("Send.md"));
        assert_eq!(opens("[[#Details]]", "Review.md"), path(""));
        // In a list item the escaped pipe's backslash is the name's.
        assert_eq!(opens("[[Send\\|go]]", "Review.md"), path("Send\\.md"));
        assert_eq!(opens("[[Plan v1.2]]", "Review.md"), path("Plan v1.2"));
        // Markdown links from the note's folder, decoded.
        assert_eq!(
            opens("[go](Send%20it.md)", "plans/Review.md"),
            path("plans/Send it.md")
        );
        assert_eq!(
            opens("[go](../Send.md#x)", "plans/a/Review.md"),
            path("plans/Send.md")
        );
        assert_eq!(
            opens("[go](</plans/Send it.md>)", "Review.md"),
            path("plans/Send it.md")
        );
        assert_eq!(opens("[go](./Send.md)", "plans/Review.md"), Opens::Invalid);
        assert_eq!(opens("[go](Send%FF.md)", "Review.md"), Opens::Invalid);
    }

    /// What a red team's differential run of SilverBullet's own click
    /// handler (`plugs/editor/navigate.ts`, its parser and `ref.ts`) opened
    /// where planvault's reading had said otherwise.
    #[test]
    fn a_click_opens_what_silverbullet_s_own_handler_opens() {
        let path = |p: &str| Opens::Path(p.to_string());
        // `decodeURI`: a reserved character's escape stays as written, a
        // `%` without two hex digits throws.
        assert_eq!(opens("[go](Q%26A.md)", "Start.md"), path("Q%26A.md"));
        assert_eq!(opens("[go](Q%2fA.md)", "Start.md"), path("Q%2fA.md"));
        assert_eq!(opens("[go](Caf%C3%A9.md)", "Start.md"), path("Café.md"));
        assert_eq!(opens("[go](<100% done.md>)", "Start.md"), Opens::Invalid);
        assert_eq!(opens("[go](Caf%C3.md)", "Start.md"), Opens::Invalid);
        // A destination of one character is ignored; `<>` count.
        assert_eq!(opens("[go](a)", "Start.md"), Opens::Ignored);
        assert_eq!(opens("[go](# \"t\")", "plans/Start.md"), Opens::Ignored);
        assert_eq!(opens("[go](<a>)", "Start.md"), path("a.md"));
        // A markdown link's empty path is the index page, a wikilink's the
        // note itself.
        assert_eq!(opens("[go](#Next)", "Start.md"), path("index.md"));
        assert_eq!(opens("[[#Next]]", "Start.md"), path(""));
        // A lone `~` in the text pairs with one in the path.
        assert_eq!(opens("[a~b](a~b.md)", "Start.md"), Opens::Subscript);
        assert_eq!(opens("[a\\~b](a~b.md)", "Start.md"), path("a~b.md"));
        assert_eq!(opens("[a~b](a%7Eb.md)", "Start.md"), path("a~b.md"));
        assert_eq!(opens("[a~~b](a~b.md)", "Start.md"), path("a~b.md"));
        // The path is checked again alone, without its heading.
        assert_eq!(opens("[[Plan v1.2.md#Scope]]", "Start.md"), Opens::Invalid);
        assert_eq!(opens("[[Plan v1.2#Scope]]", "Start.md"), path("Plan v1.2"));
        // `$b` is an anchor looked up, not a page.
        assert_eq!(opens("[[a$b]]", "Start.md"), Opens::Anchor);
    }

    /// A note whose name is stored decomposed (macOS) is opened by one
    /// reading only, whatever the link: the advice is to rename it.
    #[test]
    fn a_decomposed_name_is_advised_a_rename_not_a_link() {
        let config = "```space-lua\n```\n";
        let start = "---\ntype: start\n---\n# Start\n\n## Next\n- [[Caf\u{e9}]]\n";
        let files = files(&[
            ("CONFIG.md", config),
            ("plans/Start.md", start),
            ("Cafe\u{301}.md", "# Cafe\n"),
        ]);
        let plan = crate::check(&crate::PlanSource::Vault(files.clone())).plan;
        let read = check(&files, &plan);
        assert_eq!(read.len(), 1, "{read:?}");
        let message = &read[0].message;
        assert!(message.contains("rename the note"), "{message}");
        assert!(!message.contains("which both read as"), "{message}");
    }
}
