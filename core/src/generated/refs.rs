//! `{"$from": "step.path"}` bindings: their grammar, finding them in a step's
//! arguments, and resolving them against recorded step outputs. Every walk
//! over a JSON value is iterative (an explicit stack), so hostile nesting can
//! never overflow the stack.

use serde_json::Value;
use std::collections::BTreeMap;

/// The binding key.
pub const FROM: &str = "$from";
/// Path segments that would reach an object's prototype in the JavaScript
/// hosts these plans also run in; refused everywhere.
pub const RESERVED_SEGMENTS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// `^[A-Za-z][A-Za-z0-9_-]{0,63}$`: a step id.
#[cfg_attr(planvault_size, optimize(size))]
pub fn is_valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A parsed reference: the step it reads and the path into its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub step: String,
    pub path: Vec<String>,
}

/// Why a reference string is not a legal reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefSyntax {
    /// The step part is not a legal id, or a path segment is empty.
    Malformed,
    /// A `__proto__` / `constructor` / `prototype` segment.
    Reserved(String),
}

/// Parse `step` or `step.path.0.more`.
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse_reference(text: &str) -> Result<Reference, RefSyntax> {
    let mut parts = text.split('.');
    let step = parts.next().unwrap_or("");
    let path: Vec<String> = parts.map(str::to_string).collect();
    if let Some(seg) = std::iter::once(step)
        .chain(path.iter().map(String::as_str))
        .find(|s| RESERVED_SEGMENTS.contains(s))
    {
        return Err(RefSyntax::Reserved(seg.to_string()));
    }
    if !is_valid_id(step) || path.iter().any(String::is_empty) {
        return Err(RefSyntax::Malformed);
    }
    Ok(Reference {
        step: step.to_string(),
        path,
    })
}

/// One `$from` object found in a value, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// JSON pointer to the binding object inside the arguments.
    pub pointer: String,
    /// The `$from` value when it is a string.
    pub reference: Option<String>,
    /// Exactly `{"$from": "<string>"}` (no other keys, a string value).
    pub exact: bool,
}

#[cfg_attr(planvault_size, optimize(size))]
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Every object carrying a `$from` key, in document order. A binding's own
/// contents are not searched: it is replaced whole.
#[cfg_attr(planvault_size, optimize(size))]
pub fn bindings(args: &Value) -> Vec<Binding> {
    let mut found = Vec::new();
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), args)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(from) = map.get(FROM) {
                    found.push(Binding {
                        pointer,
                        reference: from.as_str().map(str::to_string),
                        exact: map.len() == 1 && from.is_string(),
                    });
                    continue;
                }
                for (key, child) in map.iter().rev() {
                    stack.push((format!("{pointer}/{}", escape(key)), child));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate().rev() {
                    stack.push((format!("{pointer}/{i}"), child));
                }
            }
            _ => {}
        }
    }
    found
}

/// The nesting depth of a value (a scalar is 1), iteratively.
#[cfg_attr(planvault_size, optimize(size))]
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Object(map) => stack.extend(map.values().map(|c| (c, d + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Why a binding could not be resolved at execution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("binding at {pointer} is not exactly {{\"$from\": \"<step>.<path>\"}}")]
    Malformed { pointer: String },
    #[error("reference {reference:?} uses the reserved path segment {segment:?}")]
    Reserved { reference: String, segment: String },
    #[error("reference {reference:?} names step {step:?}, which has no recorded output")]
    NoOutput { reference: String, step: String },
    #[error("reference {reference:?} does not resolve: {segment:?} is missing from the output")]
    Missing { reference: String, segment: String },
}

/// Follow a reference into recorded outputs (own keys and array indices only).
#[cfg_attr(planvault_size, optimize(size))]
pub fn lookup<'a>(
    reference: &str,
    outputs: &'a BTreeMap<String, Value>,
) -> Result<&'a Value, ResolveError> {
    let parsed = parse_reference(reference).map_err(|e| match e {
        RefSyntax::Reserved(segment) => ResolveError::Reserved {
            reference: reference.to_string(),
            segment,
        },
        RefSyntax::Malformed => ResolveError::Malformed {
            pointer: reference.to_string(),
        },
    })?;
    let mut at = outputs
        .get(&parsed.step)
        .ok_or_else(|| ResolveError::NoOutput {
            reference: reference.to_string(),
            step: parsed.step.clone(),
        })?;
    for segment in &parsed.path {
        let next = match at {
            Value::Object(map) => map.get(segment),
            Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        at = next.ok_or_else(|| ResolveError::Missing {
            reference: reference.to_string(),
            segment: segment.clone(),
        })?;
    }
    Ok(at)
}

/// Substitute every `$from` binding in `args` with the value it names in
/// `outputs` (step id → that step's recorded output). Pure; the model never
/// supplies a bound value, and a resolved value is data, never re-scanned.
#[cfg_attr(planvault_size, optimize(size))]
pub fn resolve_refs(
    args: &Value,
    outputs: &BTreeMap<String, Value>,
) -> Result<Value, ResolveError> {
    let mut resolved = args.clone();
    for binding in bindings(args) {
        let reference = match (&binding.reference, binding.exact) {
            (Some(r), true) => r,
            _ => {
                return Err(ResolveError::Malformed {
                    pointer: binding.pointer,
                })
            }
        };
        let value = lookup(reference, outputs)?.clone();
        match resolved.pointer_mut(&binding.pointer) {
            Some(slot) => *slot = value,
            None => {
                return Err(ResolveError::Malformed {
                    pointer: binding.pointer,
                })
            }
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reference_grammar() {
        assert_eq!(
            parse_reference("fetch.body.items.0"),
            Ok(Reference {
                step: "fetch".into(),
                path: vec!["body".into(), "items".into(), "0".into()]
            })
        );
        assert_eq!(
            parse_reference("fetch"),
            Ok(Reference {
                step: "fetch".into(),
                path: vec![]
            })
        );
        assert_eq!(parse_reference("fetch..x"), Err(RefSyntax::Malformed));
        assert_eq!(parse_reference("9x.y"), Err(RefSyntax::Malformed));
        assert_eq!(
            parse_reference("a.__proto__.x"),
            Err(RefSyntax::Reserved("__proto__".into()))
        );
        assert_eq!(
            parse_reference("a.constructor"),
            Err(RefSyntax::Reserved("constructor".into()))
        );
    }

    #[test]
    fn finds_bindings_in_order_without_entering_them() {
        let args = json!({"a": {"$from": "x.y"}, "b": [1, {"$from": "z", "extra": 1}], "c/d": {"$from": 5}});
        let found = bindings(&args);
        let summary: Vec<(&str, Option<&str>, bool)> = found
            .iter()
            .map(|b| (b.pointer.as_str(), b.reference.as_deref(), b.exact))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("/a", Some("x.y"), true),
                ("/b/1", Some("z"), false),
                ("/c~1d", None, false)
            ]
        );
    }

    #[test]
    fn resolves_paths_into_outputs() {
        let outputs: BTreeMap<String, Value> =
            [("fetch".to_string(), json!({"rows": [{"id": 7}]}))].into();
        let args = json!({"id": {"$from": "fetch.rows.0.id"}, "all": {"$from": "fetch"}, "n": 1});
        assert_eq!(
            resolve_refs(&args, &outputs),
            Ok(json!({"id": 7, "all": {"rows": [{"id": 7}]}, "n": 1}))
        );
        assert!(matches!(
            resolve_refs(&json!({"$from": "fetch.rows.5"}), &outputs),
            Err(ResolveError::Missing { .. })
        ));
        assert!(matches!(
            resolve_refs(&json!({"$from": "other"}), &outputs),
            Err(ResolveError::NoOutput { .. })
        ));
        assert!(matches!(
            resolve_refs(&json!({"$from": "fetch.__proto__"}), &outputs),
            Err(ResolveError::Reserved { .. })
        ));
    }

    #[test]
    fn depth_is_iterative() {
        let mut deep = json!(1);
        for _ in 0..500 {
            deep = json!([deep]);
        }
        assert_eq!(depth(&deep), 501);
    }
}
