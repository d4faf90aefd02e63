//! A fast path for the frontmatter nearly every note has: one `key: value`
//! per line, values plain words, whole numbers or flat `[a, b]` lists.
//!
//! Parsing a 200-byte block with the full YAML parser costs more than the
//! rest of the note together (the 10,000-note benchmark spent half its time
//! there). This reader accepts only a subset that is surely valid YAML. For
//! the keys planvault interprets it returns exactly the `Value` `yaml_serde`
//! would, and gives up when unsure (`yes`, `012`, quotes, nesting...); other
//! keys are kept as raw text anyway, so their values only need to be valid
//! and come back as plain strings. Anything else returns `None` and goes to
//! `yaml_serde`. A property test checks the agreement.

use super::frontmatter::Entry;
use super::text::lines_inclusive;
use yaml_serde::Value;

/// Words YAML might resolve to something other than a string, in this
/// dialect or a neighbouring one: never taken on the fast path.
const AMBIGUOUS: [&str; 22] = [
    "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y", "yes", "Yes", "YES", "n", "N",
    "no", "No", "NO", "on", "On", "ON",
];

fn is_plain_word(text: &str, allow_space: bool) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else { return false };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/') || (allow_space && c == ' '))
        && !text.ends_with(' ')
        // The ambiguous words are all five letters or shorter.
        && (text.len() > 5 || (!AMBIGUOUS.contains(&text) && !matches!(text, "off" | "Off" | "OFF")))
}

/// A value the fast path is sure about.
fn scalar(text: &str, allow_space: bool) -> Option<Value> {
    if text.is_empty() {
        return Some(Value::Null);
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        // `0` or no leading zero: `012` is left to the real parser.
        if text.len() > 1 && text.starts_with('0') {
            return None;
        }
        return text.parse::<u64>().ok().map(|n| Value::Number(n.into()));
    }
    is_plain_word(text, allow_space).then(|| Value::String(text.to_string()))
}

/// A plain scalar that is valid YAML whatever type it resolves to (a date,
/// a version, a number): for keys whose value is never interpreted.
fn untyped(text: &str) -> bool {
    let Some(first) = text.chars().next() else { return false };
    (first.is_ascii_alphanumeric() || first == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | ' '))
        && !text.ends_with(' ')
}

/// The value part of a line without a trailing comment (from ` #` on).
fn without_comment(value: &str) -> &str {
    let bytes = value.as_bytes();
    match memchr::memchr_iter(b'#', bytes).find(|&i| i > 0 && bytes[i - 1] == b' ') {
        Some(hash) => value[..hash - 1].trim_end(),
        None => value.trim_end(),
    }
}

/// Read `yaml` if it lies inside the simple subset: its keys in order, with
/// the exact value of each key in `typed` (`None` for the others, which are
/// only checked to be valid).
pub fn parse<'a>(yaml: &'a str, typed: &[&str]) -> Option<Vec<(Entry<'a>, Option<Value>)>> {
    let mut found: Vec<(Entry<'a>, Option<Value>)> = Vec::with_capacity(8);
    for (index, (line_offset, raw)) in lines_inclusive(yaml).enumerate() {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if content.len() != line.len() || memchr::memchr(b'\t', line.as_bytes()).is_some() {
            return None;
        }
        let colon = memchr::memchr(b':', line.as_bytes())?;
        let key = &line[..colon];
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return None;
        }
        if !key.as_bytes()[0].is_ascii_alphabetic() && key.as_bytes()[0] != b'_' {
            return None;
        }
        let rest = &line[colon + 1..];
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        let value_start = colon + 1 + (rest.len() - rest.trim_start().len());
        let value = without_comment(rest.trim_start());
        if value.starts_with('#') {
            return None;
        }
        if found.iter().any(|(e, _)| e.key == key) {
            return None;
        }
        let entry = Entry {
            key,
            raw: line,
            offset: line_offset,
            line: index as u32,
            // The subset is ASCII: bytes are characters.
            value_column: if value.is_empty() { 1 } else { value_start as u32 + 1 },
            inline_value: value,
            value_offset: line_offset + value_start,
        };
        if !typed.contains(&key) {
            let valid = match value.strip_prefix('[') {
                Some(inner) => {
                    let inner = inner.strip_suffix(']')?;
                    inner.trim().is_empty() || inner.split(',').all(|item| untyped(item.trim()))
                }
                None => value.is_empty() || untyped(value),
            };
            if !valid {
                return None;
            }
            found.push((entry, None));
            continue;
        }
        let parsed = if let Some(inner) = value.strip_prefix('[') {
            let inner = inner.strip_suffix(']')?;
            if inner.trim().is_empty() {
                Value::Sequence(Vec::new())
            } else {
                let mut items = Vec::new();
                for item in inner.split(',') {
                    match scalar(item.trim(), true)? {
                        Value::Null => return None,
                        v => items.push(v),
                    }
                }
                Value::Sequence(items)
            }
        } else {
            scalar(value, true)?
        };
        found.push((entry, Some(parsed)));
    }
    Some(found)
}

/// Whether a fast-path reading matches `yaml_serde`: same keys in the same
/// order, same values for the typed keys.
#[cfg(test)]
fn compare(yaml: &str, fast: &[(Entry<'_>, Option<Value>)], typed: &[&str]) -> Result<(), String> {
    // Each entry is what the general splitter sees.
    let written = super::frontmatter::entries(yaml);
    for (entry, _) in fast {
        let general = written.iter().find(|e| e.key == entry.key).ok_or(format!("{yaml:?}: no entry {}", entry.key))?;
        let same =
            (
                general.raw,
                general.offset,
                general.line,
                general.value_column,
                general.inline_value,
                general.value_offset,
            ) == (entry.raw, entry.offset, entry.line, entry.value_column, entry.inline_value, entry.value_offset);
        if !same {
            return Err(format!("{yaml:?}: entry {entry:?} vs {general:?}"));
        }
    }
    let full: Value = yaml_serde::from_str(yaml).map_err(|e| format!("{yaml:?} taken but invalid: {e}"))?;
    let full = full.as_mapping().cloned().unwrap_or_default();
    let full_keys: Vec<&str> = full.keys().filter_map(Value::as_str).collect();
    let fast_keys: Vec<&str> = fast.iter().map(|(e, _)| e.key).collect();
    if full_keys != fast_keys || full.len() != fast.len() {
        return Err(format!("{yaml:?}: keys {fast_keys:?} vs {full_keys:?}"));
    }
    for (entry, value) in fast {
        let key = &entry.key;
        match (typed.contains(key), value) {
            (true, Some(v)) if full.get(*key) == Some(v) => {}
            (false, None) => {}
            _ => return Err(format!("{yaml:?}: {key} read as {value:?}, yaml_serde says {:?}", full.get(*key))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPED: &[&str] = &["a", "type", "status", "tools", "role", "max_visits"];

    fn agrees(yaml: &str) -> bool {
        match parse(yaml, TYPED) {
            Some(fast) => {
                if let Err(problem) = compare(yaml, &fast, TYPED) {
                    panic!("{problem}");
                }
                true
            }
            None => false,
        }
    }

    #[test]
    fn takes_the_common_block() {
        assert!(agrees(
            "type: start\nstatus: pending  # marker\ntools: [fetch_url, search]\nrole: review\nmax_visits: 3\n"
        ));
        assert!(agrees("tools: []\nrole:\n# comment\n\nowner: a b/c.d\n"));
        assert!(agrees("type: step\r\nmax_visits: 0\r\n"));
    }

    #[test]
    fn other_keys_only_need_to_be_valid() {
        let yaml = "created: 2026-11-30\nversion: 1.2.3\nflag: yes\ntags: [a, 2026]\n";
        assert!(agrees(yaml));
        assert!(parse("created: 12:30\n", TYPED).is_none());
        assert!(parse("max_visits: 012\n", TYPED).is_none());
    }

    #[test]
    fn leaves_everything_doubtful_to_the_parser() {
        for yaml in [
            "a: yes\n",
            "a: 012\n",
            "a: 2026-11-30\n",
            "a: 1.5\n",
            "a: \"quoted\"\n",
            "a:\n  - item\n",
            "a: 1\na: 2\n",
            "a: [x, [y]]\n",
            "a: [x,]\n",
            "a: -1\n",
            "a: x: y\n",
            "'k': v\n",
            "a: ~\n",
            "a: .inf\n",
            "a: off\n",
            "a: b #c d\n",
            "a:b\n",
            "- a\n",
        ] {
            assert!(parse(yaml, TYPED).is_none() || agrees(yaml), "{yaml:?} taken");
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// Half the keys are typed ones, so both paths get exercised.
    const TYPED: &[&str] = &["a", "b", "c", "type", "status", "tools", "role", "max_visits"];

    fn line() -> impl Strategy<Value = String> {
        let key = prop_oneof!["[a-z_][a-z0-9_-]{0,5}", "[abc]"];
        let value = prop_oneof![
            "[a-zA-Z0-9_ ./:#-]{0,8}",
            "\\[[a-z0-9_ ,.-]{0,10}\\]",
            prop::sample::select(vec![
                "yes",
                "no",
                "~",
                "null",
                "true",
                "012",
                "0",
                "1e3",
                "-3",
                ".5",
                "a #b",
                "x  # c",
                "2026-11-30",
                "1.5",
                "+1",
                "0x1f",
                "1_000",
                "[1, 2.5, 2026-01-01]",
                "12:30"
            ])
            .prop_map(str::to_string),
        ];
        (key, value, prop::bool::ANY)
            .prop_map(|(k, v, space)| if space { format!("{k}: {v}") } else { format!("{k}:{v}") })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_fast_path_agrees_with_yaml_serde(lines in prop::collection::vec(line(), 0..6)) {
            let yaml = lines.join("\n");
            if let Some(fast) = parse(&yaml, TYPED) {
                compare(&yaml, &fast, TYPED).map_err(TestCaseError::fail)?;
            }
        }
    }
}
