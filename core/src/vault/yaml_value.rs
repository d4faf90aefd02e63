//! Frontmatter YAML read into `yaml_serde::Value`, with two differences:
//! an integer beyond `u64`/`i64` is read as a float instead of refused, and
//! a block read into more than [`MAX_VALUES`] values (aliases expanded) is
//! refused.
//!
//! `Value` cannot hold such an integer, so `yaml_serde` fails the whole
//! block on it ("invalid type: integer ... as u128"), although it is valid
//! YAML that Obsidian shows as a number, and it reads an integer larger
//! still (beyond `u128`) as a float itself. A 20-digit id under an unknown
//! key must not make a note's frontmatter "invalid". Everything else reads
//! exactly as `Value`'s own `Deserialize` (a property test compares them),
//! errors included.

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::cell::Cell;
use std::fmt;
use yaml_serde::value::{Tag, TaggedValue};
use yaml_serde::{Mapping, Value};

/// The most values (scalars, sequences and mappings, keys included) a
/// block is read into. `yaml_serde` bounds how often aliases jump, not
/// what they expand to: an anchored list of 10,000 items named 10,000
/// times (50 KB) read into 10^8 values, GBs, until the allocator aborted.
/// No frontmatter a person writes comes near it.
pub const MAX_VALUES: usize = 100_000;

/// `yaml_serde::from_str::<Value>`, the large integers read as floats, and
/// refused past [`MAX_VALUES`] values. A block libyaml refuses for a tab
/// where YAML 1.2 allows one, and Obsidian's reader reads it ([`tabs_as_spaces`]),
/// is read with those tabs as spaces.
pub fn from_str(yaml: &str) -> Result<Value, yaml_serde::Error> {
    let read = |yaml: &str| {
        let left = Cell::new(MAX_VALUES);
        Seed { left: &left }.deserialize(yaml_serde::Deserializer::from_str(yaml))
    };
    match read(yaml) {
        Err(refused) => match tabs_as_spaces(yaml) {
            Some(spaced) => read(&spaced).map_err(|_| refused),
            None => Err(refused),
        },
        read => read,
    }
}

/// `yaml` with the tabs YAML 1.2 reads as white space and libyaml refuses
/// ("a tab character that violates indentation") made spaces: on a line of
/// white space alone, before a comment, and between a block list's `-` and
/// its item (`-\tfetch_url`). `None` where there is none. Obsidian's YAML
/// 1.2 reader reads such a block; a tab is one byte as a space is, so
/// every position in the block stays where it was.
#[cold]
#[cfg_attr(planvault_size, optimize(size))]
pub(crate) fn tabs_as_spaces(yaml: &str) -> Option<String> {
    let bytes = yaml.as_bytes();
    if !bytes.contains(&b'\t') {
        return None;
    }
    let white = |b: &u8| *b == b' ' || *b == b'\t';
    let mut out = bytes.to_vec();
    let mut changed = false;
    // The indentation of the line that opened a block scalar (`text: |`)
    // while in it: its lines are text, a tab in them is the text's (and a
    // blank line of tabs in it an error to YAML 1.2 too).
    let mut scalar: Option<usize> = None;
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
        let line = &bytes[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let spaces = line.iter().take_while(|b| **b == b' ').count();
        let lead = line.iter().take_while(|b| white(b)).count();
        let blank = lead == line.len();
        if !scalar.is_some_and(|parent| blank || spaces > parent) {
            scalar = opens_block_scalar(line).then_some(spaces);
            // White space alone, before a comment, or after a list's `-`.
            let cut = match line.get(lead) {
                None | Some(b'#') => lead,
                _ if line.get(spaces) == Some(&b'-') => {
                    spaces + 1 + line[spaces + 1..].iter().take_while(|b| white(b)).count()
                }
                _ => 0,
            };
            for b in &mut out[start..start + cut] {
                if *b == b'\t' {
                    *b = b' ';
                    changed = true;
                }
            }
        }
        start = end + 1;
    }
    // (Tabs made spaces keep the text UTF-8.)
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

/// Whether a line ends in a block scalar's indicator (`key: |`, `- >-`,
/// `key: |2 # comment`): its text is on the lines under it.
#[cfg_attr(planvault_size, optimize(size))]
fn opens_block_scalar(line: &[u8]) -> bool {
    let white = |b: &u8| *b == b' ' || *b == b'\t';
    let value = match line.windows(2).position(|w| w == b" #") {
        Some(at) => &line[..at],
        None => line,
    };
    let value = &value[..value.len() - value.iter().rev().take_while(|b| white(b)).count()];
    let Some(at) = value.iter().rposition(|b| *b == b'|' || *b == b'>') else {
        return false;
    };
    let (before, indicator) = value.split_at(at);
    let head = &before[..before.len() - before.iter().rev().take_while(|b| white(b)).count()];
    let head = &head[head.iter().take_while(|b| white(b)).count()..];
    indicator.len() <= 3
        && indicator[1..]
            .iter()
            .all(|b| matches!(b, b'+' | b'-' | b'1'..=b'9'))
        && (head.is_empty()
            || (before.last().is_some_and(white) && (head.ends_with(b":") || head.ends_with(b"-"))))
}

/// For the `frontmatter` fuzz target: this reader's answer and `Value`'s
/// own (read again with [`tabs_as_spaces`] where it refuses the block, as
/// this reader does), errors as their messages.
#[cfg(fuzzing)]
#[doc(hidden)]
pub fn read_both_ways(yaml: &str) -> [Result<Value, String>; 2] {
    [
        from_str(yaml).map_err(|e| e.to_string()),
        value_read(yaml).map_err(|e| e.to_string()),
    ]
}

/// `Value`'s own reading, with this reader's retry of tabs as spaces.
#[cfg(any(test, fuzzing))]
fn value_read(yaml: &str) -> Result<Value, yaml_serde::Error> {
    yaml_serde::from_str::<Value>(yaml).or_else(|refused| match tabs_as_spaces(yaml) {
        Some(spaced) => yaml_serde::from_str::<Value>(&spaced).map_err(|_| refused),
        None => Err(refused),
    })
}

/// For the `frontmatter` fuzz target: `Value`, which the target cannot name.
#[cfg(fuzzing)]
#[doc(hidden)]
pub use yaml_serde::Value as FuzzValue;

/// For the `frontmatter` fuzz target: the flow nesting the depth scan
/// (`yaml_depth`) sees, never more than the parser's nesting on a block it
/// reads.
#[cfg(fuzzing)]
#[doc(hidden)]
pub fn scanned_flow_depth(yaml: &str) -> usize {
    super::yaml_depth::max_depth(yaml)
}

/// One value read, counted against what is `left` of [`MAX_VALUES`].
#[derive(Clone, Copy)]
struct Seed<'a> {
    left: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.left.get().checked_sub(1) {
            Some(left) => self.left.set(left),
            None => {
                return Err(de::Error::custom(format!(
                    "more than {MAX_VALUES} values (an anchor's value repeated by its aliases counts each time): write the values out"
                )))
            }
        }
        deserializer.deserialize_any(LenientVisitor(self))
    }
}

struct LenientVisitor<'a>(Seed<'a>);

impl<'de> Visitor<'de> for LenientVisitor<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(i.into()))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(u.into()))
    }

    fn visit_i128<E: de::Error>(self, i: i128) -> Result<Value, E> {
        Ok(Value::Number((i as f64).into()))
    }

    fn visit_u128<E: de::Error>(self, u: u128) -> Result<Value, E> {
        Ok(Value::Number((u as f64).into()))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Number(f.into()))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.0.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.0)? {
            items.push(item);
        }
        Ok(Value::Sequence(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut mapping = Mapping::new();
        while let Some(key) = map.next_key_seed(self.0)? {
            if mapping.contains_key(&key) {
                return Err(de::Error::custom(duplicate_key(&key)));
            }
            let value = map.next_value_seed(self.0)?;
            mapping.insert(key, value);
        }
        Ok(Value::Mapping(mapping))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, contents) = data.variant::<String>()?;
        if tag.is_empty() {
            return Err(de::Error::custom("empty YAML tag is not allowed"));
        }
        let value = contents.newtype_variant_seed(self.0)?;
        Ok(Value::Tagged(Box::new(TaggedValue {
            tag: Tag::new(tag),
            value,
        })))
    }
}

/// `yaml_serde`'s message for a key given twice.
#[cfg_attr(planvault_size, optimize(size))]
fn duplicate_key(key: &Value) -> String {
    match key {
        Value::Null => "duplicate entry with null key".to_string(),
        Value::Bool(b) => format!("duplicate entry with key `{b}`"),
        Value::Number(n) => format!("duplicate entry with key {}", super::yaml_emit::number(n)),
        Value::String(s) => format!("duplicate entry with key {s:?}"),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
            "duplicate entry in YAML map".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a red-team pass: aliases that do not nest pass
    /// `yaml_serde`'s repetition limit, and a 50 KB block read into 10^8
    /// values until the allocator aborted the process.
    #[test]
    fn aliases_expand_to_at_most_max_values() {
        let block = |items: usize, aliases: usize| {
            format!(
                "anchor: &x [{}]\nlaughs: [{}]\n",
                vec!["a"; items].join(","),
                vec!["*x"; aliases].join(",")
            )
        };
        let refused = from_str(&block(10_000, 10_000)).unwrap_err().to_string();
        assert!(
            refused.contains("more than 100000 values (an anchor's value repeated by its aliases counts each time)"),
            "{refused}"
        );
        // An anchor named a few times reads as before.
        let read = from_str(&block(3, 2)).unwrap();
        assert_eq!(read["laughs"][1][2], Value::String("a".into()));
        assert_eq!(read, yaml_serde::from_str::<Value>(&block(3, 2)).unwrap());
        // The count is of values read, the anchor's own included: the
        // mapping, 2 keys, 2 sequences and n items, the alias's sequence
        // and its n.
        let n = (MAX_VALUES - 6) / 2;
        assert!(from_str(&block(n, 1)).is_ok());
        assert!(from_str(&block(n + 1, 1)).is_err());
    }

    /// A fidelity pass: YAML 1.2 (Obsidian's reader) reads a tab as white
    /// space on a blank line, before a comment and after a list's `-`;
    /// libyaml refused such a block as "not valid YAML", so a plan Obsidian
    /// reads had an error, and `-\tfetch_url` lost its tool.
    #[test]
    fn tabs_yaml_1_2_reads_as_white_space_are_read() {
        for (yaml, read) in [
            (
                "status: done\n\t\nrole: writer\n",
                "{status: done, role: writer}",
            ),
            (
                "status: done\n \t \r\nrole: writer\n",
                "{status: done, role: writer}",
            ),
            (
                "role: writer\n\t# a comment\n  \t# another\n",
                "{role: writer}",
            ),
            ("role: w # a comment\t\n", "{role: w}"),
            ("tools:\n-\tfetch_url\n- \tb\n", "{tools: [fetch_url, b]}"),
            ("tools:\n  -\tc\n", "{tools: [c]}"),
            ("text: |\n  a\tb\n", "{text: \"a\\tb\\n\"}"),
        ] {
            let expected: Value = yaml_serde::from_str(read).unwrap();
            assert_eq!(from_str(yaml).unwrap(), expected, "{yaml:?}");
        }
        // Only where YAML 1.2 allows it: a tab indenting a key, or inside a
        // value, is refused as before.
        for yaml in ["a:\n\tb: 1\n", "\ta: 1\n"] {
            assert!(from_str(yaml).is_err(), "{yaml:?}");
            assert_eq!(
                from_str(yaml).unwrap_err().to_string(),
                yaml_serde::from_str::<Value>(yaml).unwrap_err().to_string()
            );
        }
        assert_eq!(tabs_as_spaces("a: b\tc\n"), None);
        // In a block scalar a line of tabs is the text's, and YAML 1.2
        // refuses it too: left for the parser to refuse.
        for yaml in ["text: |\n  a\n\t\n  b\nc: 1\n", "- >-\n  a\n\t\n  b\n"] {
            assert_eq!(tabs_as_spaces(yaml), None, "{yaml:?}");
        }
        assert!(
            tabs_as_spaces("text: |\n  a\nb: 1\n\t\n").is_some(),
            "after it"
        );
    }

    #[test]
    fn integers_beyond_64_bits_read_as_floats() {
        for (yaml, expected) in [
            ("k: 99999999999999999999\n", 1e20),
            ("k: -9223372036854775809\n", -9223372036854775809.0),
            ("k: 0xFFFFFFFFFFFFFFFFFFFFF\n", 19342813113834066795298815.0),
        ] {
            let read = from_str(yaml).unwrap();
            assert_eq!(
                read.get("k").and_then(Value::as_f64),
                Some(expected),
                "{yaml:?}"
            );
            assert!(
                yaml_serde::from_str::<Value>(yaml).is_err(),
                "{yaml:?} is now read by yaml_serde itself"
            );
        }
    }

    #[test]
    fn reads_what_value_reads() {
        for yaml in [
            "a: 1\nb: [x, {c: d}]\nc: !tag v\nd: ~\ne: 1.5\nf: true\ng: 18446744073709551615\n",
            "a: 1\na: 2\n",
            "? [a]\n: 1\n? [a]\n: 2\n",
            "1: a\n1: b\n",
            "null: a\n~: b\n",
            "true: a\ntrue: b\n",
            "a: !!str 5\n",
            "a: ! x\n",
            "a: [b\n",
            "a: *nope\n",
            "x: &a 1\ny: *a\n",
            "- 1\n- 2\n",
            "",
        ] {
            let ours = from_str(yaml).map_err(|e| e.to_string());
            let theirs = value_read(yaml).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{yaml:?}");
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9]{0,4}",
            prop::sample::select(vec![
                "~",
                "null",
                "yes",
                "true",
                "012",
                "0x1F",
                "1e3",
                "-3",
                ".5",
                "'q'",
                "\"d\"",
                "!t x",
                "!!str 5",
                "&a x",
                "*a",
                "[",
                "{",
                "a: b",
                "- x",
                "99999999999999999999",
                "18446744073709551616",
            ])
            .prop_map(str::to_string),
        ]
    }

    fn line() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            "[a-c]",
            Just("1".to_string()),
            Just("~".to_string()),
            Just("[k]".to_string())
        ];
        let value = prop_oneof![
            scalar(),
            prop::collection::vec(scalar(), 0..3)
                .prop_map(|items| format!("[{}]", items.join(", "))),
            prop::collection::vec(scalar(), 0..3)
                .prop_map(|items| format!("{{k: {}}}", items.join(", "))),
        ];
        let indent = prop::sample::select(vec!["", "", "", "  ", "- "]);
        (indent, key, value).prop_map(|(indent, k, v)| format!("{indent}{k}: {v}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Same values and same errors as `Value`, but where `Value` refuses
        /// an integer it cannot hold.
        #[test]
        fn reads_what_value_reads_but_large_integers(lines in prop::collection::vec(line(), 0..5)) {
            let yaml = lines.join("\n");
            let ours = from_str(&yaml).map_err(|e| e.to_string());
            let theirs = value_read(&yaml).map_err(|e| e.to_string());
            match &theirs {
                Err(message) if message.contains(" as u128") || message.contains(" as i128") => {}
                _ => prop_assert_eq!(ours, theirs, "{:?}", yaml),
            }
        }
    }
}
