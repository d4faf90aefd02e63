//! `@on` conditions: a signal comparison (`migrated=false`, `exit!=0`) or a
//! status word (`ok`, `fail`, `blocked`), and the one rule that decides
//! whether a route fires. The engine and the validator share this module so
//! what is diagnosed and what runs can never disagree.

use super::items::{js_space, js_trim};
use std::collections::BTreeMap;

/// The outcome words the engine records for a node; a route on one of them
/// never needs a signal.
pub const STATUS_WORDS: [&str; 3] = ["ok", "fail", "blocked"];

/// Signal values a bare-word route reads as "yes" (Leopold's `TRUTHY`).
const TRUTHY: [&str; 8] = ["true", "1", "yes", "on", "ok", "pass", "passed", "success"];

/// Equal as JavaScript's `a.trim().toLowerCase() === b.trim().toLowerCase()`
/// finds them, as Leopold compares conditions: its trim (not Rust's: U+0085
/// is no space to it, U+FEFF is) and full Unicode lower-casing (the Kelvin
/// sign `K` is a `k`).
fn same_word(a: &str, b: &str) -> bool {
    let (a, b) = (js_trim(a), js_trim(b));
    a.eq_ignore_ascii_case(b) || a.to_lowercase() == b.to_lowercase()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalOp {
    Eq,
    Ne,
}

/// A parsed `@on` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `key=value` / `key!=value`: compares a key on the channel.
    Signal {
        key: String,
        op: SignalOp,
        value: String,
    },
    /// A bare word: the node's own outcome, else a truthy signal of that name.
    Status { word: String },
}

impl Condition {
    /// Parse a condition as written; the text is trimmed, never rejected.
    ///
    /// Leopold's rule: a signal condition is a key of characters other than
    /// whitespace, `=` and `!`, then `!=`, `==` or `=` (spaces and tabs
    /// around it), then the value with one layer of matching quotes removed.
    /// Anything else (`a b=c`, `!x=1`) is a bare word, written as is.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn parse(text: &str) -> Condition {
        let text = js_trim(text);
        let key_len = text
            .find(|c: char| js_space(c) || c == '=' || c == '!')
            .unwrap_or(text.len());
        let rest = text[key_len..].trim_start_matches([' ', '\t']);
        let op = if let Some(r) = rest.strip_prefix("!=") {
            Some((SignalOp::Ne, r))
        } else if let Some(r) = rest.strip_prefix("==") {
            Some((SignalOp::Eq, r))
        } else {
            rest.strip_prefix('=').map(|r| (SignalOp::Eq, r))
        };
        match op {
            Some((op, value)) if key_len > 0 => Condition::Signal {
                key: text[..key_len].to_string(),
                op,
                value: unquote(js_trim(value)).to_string(),
            },
            _ => Condition::Status {
                word: text.to_string(),
            },
        }
    }

    /// The signal key the condition reads: the key, or the bare word.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn key(&self) -> &str {
        match self {
            Condition::Signal { key, .. } => key,
            Condition::Status { word } => word,
        }
    }

    /// A bare `ok` / `fail` / `blocked`: tests the node's own outcome only.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn is_status_word(&self) -> bool {
        matches!(self, Condition::Status { word } if STATUS_WORDS.iter().any(|w| same_word(w, word)))
    }

    /// Is this the bare word `word` (`@on blocked`)?
    pub fn is_word(&self, word: &str) -> bool {
        matches!(self, Condition::Status { word: w } if same_word(w, word))
    }

    /// Does the route fire, given the node's recorded outcome and the channel?
    ///
    /// An absent key never matches, in either direction: unknown is not
    /// "different from". Comparisons ignore case and surrounding spaces, as
    /// Leopold's `routeMatches` does (`same_word`).
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn matches(&self, outcome: Option<&str>, signals: &BTreeMap<String, String>) -> bool {
        match self {
            Condition::Signal { key, op, value } => match signals.get(key) {
                None => false,
                Some(actual) => (*op == SignalOp::Eq) == same_word(actual, value),
            },
            Condition::Status { word } => {
                if word.is_empty() {
                    return false;
                }
                if outcome.is_some_and(|o| same_word(o, word)) {
                    return true;
                }
                signals
                    .get(word)
                    .is_some_and(|v| TRUTHY.iter().any(|t| same_word(t, v)) || same_word(v, word))
            }
        }
    }
}

/// One layer of matching double or single quotes removed.
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_both_operators_and_bare_words() {
        assert_eq!(
            Condition::parse(" exit!=0 "),
            Condition::Signal {
                key: "exit".into(),
                op: SignalOp::Ne,
                value: "0".into()
            }
        );
        assert_eq!(
            Condition::parse("migrated = false"),
            Condition::Signal {
                key: "migrated".into(),
                op: SignalOp::Eq,
                value: "false".into()
            }
        );
        assert_eq!(
            Condition::parse("fail"),
            Condition::Status {
                word: "fail".into()
            }
        );
        assert_eq!(
            Condition::parse("stage != \"prod\""),
            Condition::Signal {
                key: "stage".into(),
                op: SignalOp::Ne,
                value: "prod".into()
            }
        );
        assert_eq!(
            Condition::parse("count == 2"),
            Condition::Signal {
                key: "count".into(),
                op: SignalOp::Eq,
                value: "2".into()
            }
        );
        for word in ["a b=c", "!x=1", "=1", "x ! = 1"] {
            assert_eq!(
                Condition::parse(word),
                Condition::Status { word: word.into() }
            );
        }
        assert!(Condition::parse("Blocked").is_status_word());
        assert!(!Condition::parse("migrated").is_status_word());
    }

    #[test]
    fn an_absent_key_matches_in_neither_direction() {
        let empty = channel(&[]);
        assert!(!Condition::parse("exit=0").matches(None, &empty));
        assert!(!Condition::parse("exit!=0").matches(None, &empty));
        let failed = channel(&[("exit", "2")]);
        assert!(Condition::parse("exit!=0").matches(None, &failed));
        assert!(!Condition::parse("exit=0").matches(None, &failed));
    }

    #[test]
    fn a_bare_word_tests_the_outcome_then_a_truthy_signal() {
        let empty = channel(&[]);
        assert!(Condition::parse("fail").matches(Some("FAIL"), &empty));
        assert!(!Condition::parse("fail").matches(Some("ok"), &empty));
        assert!(Condition::parse("ready").matches(Some("ok"), &channel(&[("ready", "true")])));
        assert!(!Condition::parse("ready").matches(None, &channel(&[("ready", "false")])));
    }

    /// Leopold's `routeMatches` (graph.ts): its eight truthy words, and
    /// JavaScript's trim and lower-casing for every comparison.
    #[test]
    fn conditions_compare_as_leopold_compares_them() {
        let empty = channel(&[]);
        for truthy in [
            "true", "1", "yes", "on", "ok", "pass", "passed", "Success", " PASS ",
        ] {
            let signals = channel(&[("ready", truthy)]);
            assert!(
                Condition::parse("ready").matches(None, &signals),
                "{truthy}"
            );
        }
        for falsy in ["false", "0", "no", "off", "done", ""] {
            let signals = channel(&[("ready", falsy)]);
            assert!(
                !Condition::parse("ready").matches(None, &signals),
                "{falsy}"
            );
        }
        // The Kelvin sign lower-cases to `k`; U+0085 is no space to JavaScript.
        assert!(Condition::parse("o\u{212A}").is_status_word());
        assert!(Condition::parse("o\u{212A}").matches(Some("ok"), &empty));
        assert!(!Condition::parse("fail\u{85}").is_status_word());
        assert!(!Condition::parse("fail\u{85}").matches(Some("fail"), &empty));
        assert!(
            Condition::parse("stage=PROD").matches(None, &channel(&[("stage", "\u{FEFF}prod ")]))
        );
        assert!(!Condition::parse("stage=prod").matches(None, &channel(&[("stage", "prod\u{85}")])));
    }
}
