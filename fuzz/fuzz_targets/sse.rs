//! The streamed chat-completion decoder on what any server may send: any
//! body bytes, cut into chunks at any points. Invariants:
//! - feeding, flushing and finishing never panic;
//! - the assembled reply or the error, and a whole reply's events, are the
//!   same however the body is cut (a character, a CRLF or a line split across chunks counts
//!   once);
//! - the content deltas seen add up to the assembled reply's content.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use planvault_llm::sse::{SseDecoder, StreamEvent};
use planvault_llm::{Completion, LlmError};

/// Every event, in order, and how the stream ended.
fn decode(chunks: &[&[u8]]) -> (Vec<StreamEvent>, Result<Completion, LlmError>) {
    let mut decoder = SseDecoder::new("http://127.0.0.1/v1/chat/completions");
    let mut events = Vec::new();
    for chunk in chunks {
        match decoder.feed(chunk) {
            Ok(more) => events.extend(more),
            Err(e) => return (events, Err(e)),
        }
        if decoder.is_done() {
            break;
        }
    }
    match decoder.flush() {
        Ok(more) => events.extend(more),
        Err(e) => return (events, Err(e)),
    }
    (events, decoder.finish())
}

/// Content deltas are reported one event each, as they arrive: events of
/// one cut may group differently, so compare them merged.
fn merged(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::new();
    for event in events {
        match (out.last_mut(), event) {
            (Some(StreamEvent::Content(seen)), StreamEvent::Content(more)) => seen.push_str(&more),
            (_, event) => out.push(event),
        }
    }
    out
}

fn case(mut u: Unstructured) -> Result<()> {
    let cuts: Vec<u16> = u.arbitrary()?;
    let body = u.take_rest();
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| c as usize % (body.len() + 1))
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut chunks = Vec::new();
    let mut from = 0;
    for at in points.into_iter().chain([body.len()]) {
        chunks.push(&body[from..at]);
        from = at;
    }

    let (whole_events, whole) = decode(&[body]);
    let (cut_events, cut) = decode(&chunks);
    assert_eq!(whole, cut, "result of {chunks:?}");
    if let Ok(completion) = whole {
        // (After an error, a chunk's events before it are not returned, so
        // only whole streams' events compare.)
        assert_eq!(
            merged(whole_events.clone()),
            merged(cut_events),
            "events of {chunks:?}"
        );
        let content: String = whole_events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Content(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(content, completion.content);
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = case(Unstructured::new(data));
});
