//! A reply made inert (`engine::inert`) before the vault shows it, on
//! arbitrary text, as a whole note (`inert`) and as a note's body
//! (`inert_body`). Invariants:
//! - it never panics;
//! - inert text stays as it is (a second pass changes nothing);
//! - what it leaves has no remote image, no `<` that opens a tag outside
//!   code, no `dataviewjs` fence and no inline `$=` query: checked by
//!   reading the result with the same parser the vault's readers use,
//!   with tables (as Obsidian reads them) and without.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planvault_core::engine::inert::{inert, inert_body};
use planvault_core::vault::frontmatter::{split, Split};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};

fuzz_target!(|text: &str| {
    for note in [true, false] {
        let made = |t: &str| if note { inert(t) } else { inert_body(t) }.into_owned();
        let once = made(text);
        assert_eq!(made(&once), once, "not a fixed point for {text:?}");
        let unmarked = once.trim_start_matches('\u{feff}');
        let body = match split(unmarked) {
            Split::Closed(block) if note => &unmarked[block.body_offset..],
            _ => once.as_str(),
        };
        for options in [
            Options::ENABLE_FOOTNOTES,
            Options::ENABLE_FOOTNOTES | Options::ENABLE_TABLES,
        ] {
            check(body, options, &once, text);
        }
    }
});

fn check(body: &str, options: Options, once: &str, text: &str) {
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
}
