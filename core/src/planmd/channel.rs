//! The state channel's bounds, enforced in code (seed 001): what was decided,
//! never what was built. A value big enough to hold a diff is a value the
//! channel refuses, so it can never become a second, unreviewed repository.

use super::emitted_keys;
use crate::Node;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many keys on the channel at once.
pub const MAX_KEYS: usize = 128;
/// A value is one line of at most this many characters.
pub const MAX_VALUE_CHARS: usize = 256;
/// The serialized channel (compact JSON) is at most this many bytes.
pub const MAX_BYTES: usize = 64 * 1024;
/// Keys match `^[A-Za-z][A-Za-z0-9_.-]{0,63}$`.
pub const MAX_KEY_CHARS: usize = 64;

/// Why a write was refused. Each variant names the bound that refused it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    #[error("signal key {key:?} is not a valid key (^[A-Za-z][A-Za-z0-9_.-]{{0,63}}$)")]
    BadKey { key: String },
    #[error("signal {key:?} was not declared with @emit by this item")]
    Undeclared { key: String },
    #[error("signal {key:?} has a value of {chars} characters; the bound is {MAX_VALUE_CHARS}")]
    ValueTooLong { key: String, chars: usize },
    #[error("signal {key:?} has a value spanning several lines; a value is one line")]
    ValueNotOneLine { key: String },
    #[error("signal {key:?} would be key number {count} on the channel; the bound is {MAX_KEYS}")]
    TooManyKeys { key: String, count: usize },
    #[error("signal {key:?} would make the channel {bytes} bytes; the bound is {MAX_BYTES}")]
    TooLarge { key: String, bytes: usize },
    #[error("the channel is not a JSON object of string values: {reason}")]
    Malformed { reason: String },
}

impl ChannelError {
    /// The bound's stable name, for logs and events.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn bound(&self) -> &'static str {
        match self {
            ChannelError::BadKey { .. } => "key",
            ChannelError::Undeclared { .. } => "declared-keys-only",
            ChannelError::ValueTooLong { .. } | ChannelError::ValueNotOneLine { .. } => "value",
            ChannelError::TooManyKeys { .. } => "signals",
            ChannelError::TooLarge { .. } => "file",
            ChannelError::Malformed { .. } => "format",
        }
    }
}

/// `^[A-Za-z][A-Za-z0-9_.-]{0,63}$`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn is_valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && key.len() <= MAX_KEY_CHARS
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// The keys a node may write: its `@emit` keys (and `exit` for `@tool`).
#[cfg_attr(planvault_size, optimize(size))]
pub fn declared_keys(node: &Node) -> BTreeSet<String> {
    emitted_keys(node).into_iter().map(str::to_string).collect()
}

/// The signal channel: key → one-line scalar value, in key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channel {
    signals: BTreeMap<String, String>,
}

impl Channel {
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn new() -> Self {
        Channel::default()
    }

    /// Read a serialized channel (`bus.json`), checking every bound.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn from_json(text: &str) -> Result<Channel, ChannelError> {
        if text.len() > MAX_BYTES {
            return Err(ChannelError::TooLarge {
                key: String::new(),
                bytes: text.len(),
            });
        }
        let map: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| ChannelError::Malformed {
                reason: e.to_string(),
            })?;
        let mut channel = Channel::new();
        for (key, value) in map {
            let value = match value {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                other => {
                    return Err(ChannelError::Malformed {
                        reason: format!("{key:?} holds {other}, not a scalar"),
                    })
                }
            };
            channel.check(&key, &value)?;
            channel.signals.insert(key, value);
        }
        Ok(channel)
    }

    /// Compact JSON, keys in order: the bytes [`MAX_BYTES`] bounds.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.signals).expect("string map serializes")
    }

    #[cfg_attr(planvault_size, optimize(size))]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.signals.get(key).map(String::as_str)
    }

    #[cfg_attr(planvault_size, optimize(size))]
    pub fn signals(&self) -> &BTreeMap<String, String> {
        &self.signals
    }

    #[cfg_attr(planvault_size, optimize(size))]
    pub fn len(&self) -> usize {
        self.signals.len()
    }

    #[cfg_attr(planvault_size, optimize(size))]
    pub fn is_empty(&self) -> bool {
        self.signals.is_empty()
    }

    /// Write one signal on behalf of a node that declared `declared` keys.
    /// On refusal the channel is unchanged.
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn write(
        &mut self,
        declared: &BTreeSet<String>,
        key: &str,
        value: &str,
    ) -> Result<(), ChannelError> {
        if !is_valid_key(key) {
            return Err(ChannelError::BadKey {
                key: key.to_string(),
            });
        }
        if !declared.contains(key) {
            return Err(ChannelError::Undeclared {
                key: key.to_string(),
            });
        }
        self.check(key, value)?;
        self.signals.insert(key.to_string(), value.to_string());
        Ok(())
    }

    /// Would `key=value` keep the channel within every bound?
    #[cfg_attr(planvault_size, optimize(size))]
    fn check(&self, key: &str, value: &str) -> Result<(), ChannelError> {
        if !is_valid_key(key) {
            return Err(ChannelError::BadKey {
                key: key.to_string(),
            });
        }
        if value.contains(['\n', '\r']) {
            return Err(ChannelError::ValueNotOneLine {
                key: key.to_string(),
            });
        }
        let chars = value.chars().count();
        if chars > MAX_VALUE_CHARS {
            return Err(ChannelError::ValueTooLong {
                key: key.to_string(),
                chars,
            });
        }
        let replacing = self.signals.get(key);
        let count = self.signals.len() + usize::from(replacing.is_none());
        if count > MAX_KEYS {
            return Err(ChannelError::TooManyKeys {
                key: key.to_string(),
                count,
            });
        }
        let entry = |k: &str, v: &str| {
            serde_json::to_string(k).unwrap().len() + serde_json::to_string(v).unwrap().len() + 1
        };
        let current = self.to_json().len();
        let bytes = match replacing {
            Some(old) => current - entry(key, old) + entry(key, value),
            None => current + entry(key, value) + usize::from(!self.signals.is_empty()),
        };
        if bytes > MAX_BYTES {
            return Err(ChannelError::TooLarge {
                key: key.to_string(),
                bytes,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn key_syntax() {
        assert!(is_valid_key("migrated"));
        assert!(is_valid_key("a.b-c_9"));
        assert!(is_valid_key(&format!("k{}", "x".repeat(63))));
        assert!(!is_valid_key(&format!("k{}", "x".repeat(64))));
        assert!(!is_valid_key("9lives"));
        assert!(!is_valid_key("has space"));
        assert!(!is_valid_key(""));
    }

    #[test]
    fn only_declared_keys_are_writable() {
        let mut c = Channel::new();
        assert_eq!(
            c.write(&keys(&["a"]), "b", "1"),
            Err(ChannelError::Undeclared { key: "b".into() })
        );
        assert!(c.write(&keys(&["a"]), "a", "1").is_ok());
        assert_eq!(c.get("a"), Some("1"));
    }

    #[test]
    fn value_bounds() {
        let mut c = Channel::new();
        let d = keys(&["v"]);
        assert!(c.write(&d, "v", &"x".repeat(256)).is_ok());
        let err = c.write(&d, "v", &"x".repeat(257)).unwrap_err();
        assert_eq!(
            err,
            ChannelError::ValueTooLong {
                key: "v".into(),
                chars: 257
            }
        );
        assert_eq!(err.bound(), "value");
        assert_eq!(c.write(&d, "v", "a\nb").unwrap_err().bound(), "value");
        assert_eq!(
            c.get("v").map(str::len),
            Some(256),
            "a refused write changes nothing"
        );
    }

    #[test]
    fn key_count_and_size_bounds() {
        let mut c = Channel::new();
        let all: BTreeSet<String> = (0..=MAX_KEYS).map(|i| format!("k{i}")).collect();
        for i in 0..MAX_KEYS {
            c.write(&all, &format!("k{i}"), "x").unwrap();
        }
        let err = c.write(&all, &format!("k{MAX_KEYS}"), "x").unwrap_err();
        assert_eq!(err.bound(), "signals");
        assert!(c.write(&all, "k0", "rewrite is not a new key").is_ok());

        let mut big = Channel::new();
        // Four-byte characters: 256 of them fit the value bound, 60 such keys do not fit the file.
        let many: BTreeSet<String> = (0..MAX_KEYS).map(|i| format!("key{i:03}")).collect();
        let mut refused = None;
        for key in &many {
            if let Err(e) = big.write(&many, key, &"\u{1F600}".repeat(MAX_VALUE_CHARS)) {
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused.map(|e| e.bound()), Some("file"));
        assert!(big.to_json().len() <= MAX_BYTES);
    }

    #[test]
    fn round_trips_and_refuses_bad_keys() {
        let mut c = Channel::new();
        c.write(&keys(&["migrated", "exit"]), "migrated", "false")
            .unwrap();
        c.write(&keys(&["migrated", "exit"]), "exit", "0").unwrap();
        assert_eq!(Channel::from_json(&c.to_json()).unwrap(), c);
        assert_eq!(
            Channel::from_json("{\"bad key\": \"1\"}")
                .unwrap_err()
                .bound(),
            "key"
        );
    }
}
