//! Frontmatter YAML read into `yaml_serde::Value`, with one difference:
//! an integer beyond `u64`/`i64` is read as a float instead of refused.
//!
//! `Value` cannot hold such an integer, so `yaml_serde` fails the whole
//! block on it ("invalid type: integer ... as u128"), although it is valid
//! YAML that Obsidian shows as a number, and it reads an integer larger
//! still (beyond `u128`) as a float itself. A 20-digit id under an unknown
//! key must not make a note's frontmatter "invalid". Everything else reads
//! exactly as `Value`'s own `Deserialize` (a property test compares them),
//! errors included.

use serde::de::{
    self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::fmt;
use yaml_serde::value::{Tag, TaggedValue};
use yaml_serde::{Mapping, Value};

/// `yaml_serde::from_str::<Value>`, the large integers read as floats.
pub fn from_str(yaml: &str) -> Result<Value, yaml_serde::Error> {
    yaml_serde::from_str::<Lenient>(yaml).map(|read| read.0)
}

/// For the `frontmatter` fuzz target: this reader's answer and `Value`'s
/// own, errors as their messages.
#[cfg(fuzzing)]
#[doc(hidden)]
pub fn read_both_ways(yaml: &str) -> [Result<Value, String>; 2] {
    [
        from_str(yaml).map_err(|e| e.to_string()),
        yaml_serde::from_str::<Value>(yaml).map_err(|e| e.to_string()),
    ]
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

struct Lenient(Value);

impl<'de> Deserialize<'de> for Lenient {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor).map(Lenient)
    }
}

struct LenientVisitor;

impl<'de> Visitor<'de> for LenientVisitor {
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
        Lenient::deserialize(deserializer).map(|read| read.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Lenient(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Sequence(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut mapping = Mapping::new();
        while let Some(Lenient(key)) = map.next_key()? {
            if mapping.contains_key(&key) {
                return Err(de::Error::custom(duplicate_key(&key)));
            }
            let Lenient(value) = map.next_value()?;
            mapping.insert(key, value);
        }
        Ok(Value::Mapping(mapping))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, contents) = data.variant::<String>()?;
        if tag.is_empty() {
            return Err(de::Error::custom("empty YAML tag is not allowed"));
        }
        let Lenient(value) = contents.newtype_variant()?;
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
            let theirs = yaml_serde::from_str::<Value>(yaml).map_err(|e| e.to_string());
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
            let theirs = yaml_serde::from_str::<Value>(&yaml).map_err(|e| e.to_string());
            match &theirs {
                Err(message) if message.contains(" as u128") || message.contains(" as i128") => {}
                _ => prop_assert_eq!(ours, theirs, "{:?}", yaml),
            }
        }
    }
}
