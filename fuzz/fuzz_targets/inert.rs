//! A reply made inert (`engine::inert`) before the vault shows it, on
//! arbitrary text. Invariants:
//! - it never panics;
//! - inert text stays as it is (a second pass changes nothing);
//! - what it leaves has no remote image, no `<` that opens a tag outside
//!   code, no `dataviewjs` fence and no inline `$=` query: checked by
//!   reading the result with the same parser the vault's readers use.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::engine::inert::inert;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};

fuzz_target!(|text: &str| {
    let once = inert(text).into_owned();
    assert_eq!(inert(&once), once, "not a fixed point for {text:?}");
    // Footnotes as the link reader has them; a table's cells and struck
    // text hold images and code as a paragraph does.
    let options = Options::ENABLE_FOOTNOTES;
    let body = match planvault_core::vault::frontmatter::split(once.trim_start_matches('\u{feff}'))
    {
        planvault_core::vault::frontmatter::Split::Closed(block) => {
            &once.trim_start_matches('\u{feff}')[block.body_offset..]
        }
        _ => once.as_str(),
    };
    for event in Parser::new_ext(body, options) {
        match event {
            Event::Start(Tag::Image { dest_url, .. }) => {
                let dest = dest_url.trim();
                let remote = dest.starts_with("//")
                    || dest.starts_with("http:")
                    || dest.starts_with("https:");
                assert!(
                    !remote,
                    "a remote image is left in {once:?} (from {text:?})"
                );
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                assert!(
                    !html.contains('<'),
                    "HTML {html:?} is left in {once:?} (from {text:?})"
                );
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let lang = info.split_whitespace().next().unwrap_or_default();
                assert!(!lang.eq_ignore_ascii_case("dataviewjs"), "{once:?}");
            }
            Event::Code(code) => assert!(!code.trim_start().starts_with("$="), "{once:?}"),
            _ => {}
        }
    }
});
