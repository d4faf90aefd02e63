//! The judgment grid's reader on what models (and hostile notes) give it:
//! any reply text against any labels (up to four, any text: they come from
//! the plan's notes or a JSON plan; some start like a line of the reply, in
//! another case, as models echo conditions back). Invariants:
//! - `parse_grid_labelled` never panics, and a reading has one verdict per
//!   label;
//! - a reading's verdicts, rendered as a manual run journals them
//!   (`render_verdicts`), read back to the same verdicts, and so do any
//!   verdicts a person gives;
//! - the re-ask after an unreadable reply never panics and quotes it.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use planvault_core::engine::grid::{parse_grid_labelled, reask_text, render_verdicts};

/// A label: any text, or (as models echo the conditions back) the start of
/// one of the reply's lines in another case.
fn label(u: &mut Unstructured, raw: &str) -> Result<String> {
    let lines: Vec<&str> = raw.lines().collect();
    if lines.is_empty() || u.arbitrary::<bool>()? {
        return u.arbitrary();
    }
    let line = lines[u.choose_index(lines.len())?];
    let chars = u.int_in_range(1..=line.chars().count().max(1))?;
    let start: String = line.chars().take(chars).collect();
    Ok(match u.int_in_range(0..=2u8)? {
        0 => start,
        1 => start.to_lowercase(),
        _ => start.to_uppercase(),
    })
}

fn case(u: &mut Unstructured) -> Result<()> {
    let raw: String = u.arbitrary()?;
    let count = u.int_in_range(0..=4usize)?;
    let mut labels = Vec::with_capacity(count);
    for _ in 0..count {
        labels.push(label(u, &raw)?);
    }
    let given: Vec<bool> = (0..count).map(|_| u.arbitrary()).collect::<Result<_>>()?;

    let rendered = render_verdicts(&labels, &given);
    assert_eq!(
        parse_grid_labelled(&rendered, &labels),
        Ok(given.clone()),
        "a person's verdicts read back: {rendered:?} for {labels:?}"
    );

    match parse_grid_labelled(&raw, &labels) {
        Ok(verdicts) => {
            assert_eq!(verdicts.len(), count, "{raw:?} for {labels:?}");
            let again = render_verdicts(&labels, &verdicts);
            assert_eq!(parse_grid_labelled(&again, &labels), Ok(verdicts));
        }
        Err(problem) => {
            let text = reask_text(&raw, &problem, &labels);
            assert!(text.contains(&raw), "the re-ask quotes the reply");
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = case(&mut Unstructured::new(data));
});
