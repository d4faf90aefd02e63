//! "Go to note" and the keyboard's edge target: which notes a typed query
//! names, best first. Every word of the query must appear in the note's
//! title or path, as written (a title's start is best, then anywhere in
//! the title, then in the path) or failing that as letters in order
//! (`rvw` finds "review"). Case is ignored.

/// How many matches a list shows.
pub const SHOWN: usize = 50;

/// How well one word names a note: lower is better, `None` not at all.
fn word_rank(word: &str, title: &str, path: &str) -> Option<u32> {
    if title.starts_with(word) {
        Some(0)
    } else if title.contains(word) {
        Some(1)
    } else if path.contains(word) {
        Some(2)
    } else if in_order(word, title) || in_order(word, path) {
        Some(4)
    } else {
        None
    }
}

/// Whether `word`'s characters appear in `text` in order.
fn in_order(word: &str, text: &str) -> bool {
    let mut rest = text.chars();
    word.chars().all(|c| rest.any(|t| t == c))
}

/// The indices of the notes (title, path) that `query` names, best first,
/// at most [`SHOWN`]; an empty query lists the first notes by title.
pub fn matches<'a>(query: &str, notes: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<usize> {
    let query = query.to_lowercase();
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut ranked: Vec<(u32, String, usize)> = notes
        .enumerate()
        .filter_map(|(i, (title, path))| {
            let (title, path) = (title.to_lowercase(), path.to_lowercase());
            let rank = words
                .iter()
                .map(|w| word_rank(w, &title, &path))
                .sum::<Option<u32>>()?;
            Some((rank, title, i))
        })
        .collect();
    ranked.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
    });
    ranked.into_iter().take(SHOWN).map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTES: &[(&str, &str)] = &[
        ("Draft the letter", "letters/draft"),
        ("Review", "review"),
        ("Send it", "outbox/send"),
        ("Preview the draft", "preview"),
    ];

    fn found(query: &str) -> Vec<&'static str> {
        matches(query, NOTES.iter().copied())
            .into_iter()
            .map(|i| NOTES[i].0)
            .collect()
    }

    #[test]
    fn title_start_then_title_then_path_then_letters_in_order() {
        assert_eq!(found("review"), ["Review", "Preview the draft"]);
        assert_eq!(found("DRAFT"), ["Draft the letter", "Preview the draft"]);
        assert_eq!(found("outbox"), ["Send it"]);
        assert_eq!(found("rvw"), ["Review", "Preview the draft"]);
        assert!(found("zebra").is_empty());
    }

    #[test]
    fn every_word_must_match() {
        assert_eq!(found("draft letters/"), ["Draft the letter"]);
        assert_eq!(found("draft send"), Vec::<&str>::new());
    }

    #[test]
    fn an_empty_query_lists_notes_by_title_and_at_most_the_shown_count() {
        assert_eq!(
            found(""),
            ["Review", "Send it", "Draft the letter", "Preview the draft"]
        );
        let many: Vec<(String, String)> = (0..200)
            .map(|i| (format!("Step {i}"), format!("step-{i}")))
            .collect();
        let hits = matches("step", many.iter().map(|(t, p)| (t.as_str(), p.as_str())));
        assert_eq!(hits.len(), SHOWN);
        assert_eq!(hits[0], 0, "shortest title first: Step 0");
    }
}
