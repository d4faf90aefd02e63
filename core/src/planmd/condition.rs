//! `@on` conditions: a signal comparison (`migrated=false`, `exit!=0`) or a
//! status word (`ok`, `fail`, `blocked`), and the one rule that decides
//! whether a route fires. The engine and the validator share this module so
//! what is diagnosed and what runs can never disagree.

use super::items::{js_space, js_trim};
use std::collections::BTreeMap;

/// The outcome words the engine records for a node; a route on one of them
/// never needs a signal.
pub const STATUS_WORDS: [&str; 3] = ["ok", "fail", "blocked"];

/// Signal values a bare-word route reads as "yes".
const TRUTHY: [&str; 4] = ["true", "1", "yes", "ok"];

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
        matches!(self, Condition::Status { word } if STATUS_WORDS.iter().any(|w| w.eq_ignore_ascii_case(word)))
    }

    /// Does the route fire, given the node's recorded outcome and the channel?
    ///
    /// An absent key never matches, in either direction: unknown is not
    /// "different from". Comparisons ignore case and surrounding spaces.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn matches(&self, outcome: Option<&str>, signals: &BTreeMap<String, String>) -> bool {
        match self {
            Condition::Signal { key, op, value } => match signals.get(key) {
                None => false,
                Some(actual) => {
                    let equal = actual.trim().eq_ignore_ascii_case(value.trim());
                    (*op == SignalOp::Eq) == equal
                }
            },
            Condition::Status { word } => {
                if word.is_empty() {
                    return false;
                }
                if outcome.is_some_and(|o| o.trim().eq_ignore_ascii_case(word)) {
                    return true;
                }
                signals.get(word).is_some_and(|v| {
                    let v = v.trim();
                    TRUTHY.iter().any(|t| t.eq_ignore_ascii_case(v)) || v.eq_ignore_ascii_case(word)
                })
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
}
