//! Model-generated JSON plans: `parseGeneratedPlan` and its options, read
//! from JavaScript field by field. Behind the `json-plans` feature: the JSON
//! plan parser (serde_json's reader, `Value`, the plan checks) is ~33 KB of
//! the gzipped wasm, which the `planvault/markdown` build leaves out.

use crate::error::BindingError;
use crate::plan::PlanHandle;
use crate::types::js_string;
use planvault_core::generated;
use serde::Deserialize;
use tsify::Tsify;
use wasm_bindgen::prelude::*;

/// Parse a model-generated JSON plan (flat step list or DAG with bindings).
/// Malformed JSON is a diagnostic, not an exception.
#[wasm_bindgen(js_name = parseGeneratedPlan)]
pub fn parse_generated_plan(
    json: String,
    #[wasm_bindgen(unchecked_param_type = "GeneratedPlanOptions | undefined")] options: JsValue,
) -> Result<PlanHandle, JsValue> {
    let options: GeneratedPlanOptions = if options.is_undefined() || options.is_null() {
        GeneratedPlanOptions::default()
    } else {
        // The reader reads only the fields it knows: name a misspelt
        // option instead of silently dropping a limit.
        reject_unknown_keys("options", &options, GeneratedPlanOptions::KEYS)?;
        let limits = js_sys::Reflect::get(&options, &JsValue::from_str("limits"))
            .unwrap_or(JsValue::UNDEFINED);
        if !limits.is_undefined() {
            reject_unknown_keys("options.limits", &limits, GeneratedPlanLimits::KEYS)?;
        }
        read_generated_plan_options(&options)?
    };
    let file = options
        .file
        .clone()
        .unwrap_or_else(|| "plan.json".to_owned());
    let options = options.to_core();
    let asked = planvault_core::proposal::requested_in_generated(&file, &json);
    Ok(PlanHandle::from_parse(generated::parse(&file, &json, &options)).asked(asked))
}

/// Options of `parseGeneratedPlan`.
#[derive(Debug, Clone, Default, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct GeneratedPlanOptions {
    /// The name diagnostics give the plan (default `plan.json`).
    #[tsify(optional)]
    pub file: Option<String>,
    /// Tools the host permits; absent permits every tool the plan names.
    #[tsify(optional)]
    pub allowed_tools: Option<Vec<String>>,
    /// Tools that exist (the host's catalog); absent trusts every name.
    #[tsify(optional)]
    pub available_tools: Option<Vec<String>>,
    /// Size limits; each absent one keeps planvault's default.
    #[tsify(optional)]
    pub limits: Option<GeneratedPlanLimits>,
}

/// Size limits of a generated plan (defaults: 32 steps, 16 dependencies,
/// 32 references and 8 preconditions per step, 32 KiB and depth 16 of arguments).
#[derive(Debug, Clone, Default, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct GeneratedPlanLimits {
    #[tsify(optional)]
    pub max_nodes: Option<usize>,
    #[tsify(optional)]
    pub max_dependencies: Option<usize>,
    #[tsify(optional)]
    pub max_references: Option<usize>,
    #[tsify(optional)]
    pub max_preconditions: Option<usize>,
    #[tsify(optional)]
    pub max_args_bytes: Option<usize>,
    #[tsify(optional)]
    pub max_args_depth: Option<usize>,
}

impl GeneratedPlanOptions {
    /// The option names JavaScript may pass.
    pub const KEYS: &'static [&'static str] = &["file", "allowedTools", "availableTools", "limits"];

    /// Core's options: what is given, defaults for the rest.
    pub fn to_core(&self) -> planvault_core::generated::Options {
        let mut options = planvault_core::generated::Options {
            allowed_tools: self.allowed_tools.clone(),
            available_tools: self.available_tools.clone(),
            ..Default::default()
        };
        if let Some(given) = &self.limits {
            let limits = &mut options.limits;
            let set = |slot: &mut usize, value: Option<usize>| {
                if let Some(value) = value {
                    *slot = value;
                }
            };
            set(&mut limits.max_nodes, given.max_nodes);
            set(&mut limits.max_dependencies, given.max_dependencies);
            set(&mut limits.max_references, given.max_references);
            set(&mut limits.max_preconditions, given.max_preconditions);
            set(&mut limits.max_args_bytes, given.max_args_bytes);
            set(&mut limits.max_args_depth, given.max_args_depth);
        }
        options
    }
}

impl GeneratedPlanLimits {
    pub const KEYS: &'static [&'static str] = &[
        "maxNodes",
        "maxDependencies",
        "maxReferences",
        "maxPreconditions",
        "maxArgsBytes",
        "maxArgsDepth",
    ];
}

/// Refuse an options object with a key the API does not know.
pub fn reject_unknown_keys(
    name: &'static str,
    value: &JsValue,
    known: &[&str],
) -> Result<(), BindingError> {
    if !value.is_object() || js_sys::Array::is_array(value) {
        return Err(BindingError::InvalidArgument {
            name,
            reason: format!("expected an object, got {}", js_type(value)),
        });
    }
    for key in js_sys::Object::keys(value.unchecked_ref::<js_sys::Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(BindingError::InvalidArgument {
                name,
                reason: format!("unknown option {key:?} (known: {})", known.join(", ")),
            });
        }
    }
    Ok(())
}

/// Read `parseGeneratedPlan`'s options object, field by field.
///
/// Reads exactly as serde-wasm-bindgen's `from_value` did for these types
/// (what it accepts, its error messages, which are serde's), without a
/// generic deserializer in the binary: `null` and `undefined` are absent; a
/// string is a JavaScript string; a tool list is an array or any iterable of
/// them; a limit is a non-negative safe integer or a BigInt that fits.
/// Errors name `options`; an exception thrown by a getter propagates as is.
pub fn read_generated_plan_options(
    options: &JsValue,
) -> Result<GeneratedPlanOptions, BindingError> {
    read_options(options).map_err(|reason| BindingError::InvalidArgument {
        name: "options",
        reason,
    })
}

fn read_options(options: &JsValue) -> Result<GeneratedPlanOptions, String> {
    if !options.is_object() {
        return Err(invalid_type(options, "struct GeneratedPlanOptions"));
    }
    Ok(GeneratedPlanOptions {
        file: optional(field(options, "file"), read_string)?,
        allowed_tools: optional(field(options, "allowedTools"), read_strings)?,
        available_tools: optional(field(options, "availableTools"), read_strings)?,
        limits: optional(field(options, "limits"), read_limits)?,
    })
}

fn read_limits(limits: JsValue) -> Result<GeneratedPlanLimits, String> {
    if !limits.is_object() {
        return Err(invalid_type(&limits, "struct GeneratedPlanLimits"));
    }
    let count = |key| optional(field(&limits, key), read_count);
    Ok(GeneratedPlanLimits {
        max_nodes: count("maxNodes")?,
        max_dependencies: count("maxDependencies")?,
        max_references: count("maxReferences")?,
        max_preconditions: count("maxPreconditions")?,
        max_args_bytes: count("maxArgsBytes")?,
        max_args_depth: count("maxArgsDepth")?,
    })
}

/// `object[key]`; a getter's exception is rethrown to the caller's caller.
fn field(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key))
        .unwrap_or_else(|e| wasm_bindgen::throw_val(e))
}

fn optional<T>(
    value: JsValue,
    read: impl FnOnce(JsValue) -> Result<T, String>,
) -> Result<Option<T>, String> {
    if is_nullish(&value) {
        Ok(None)
    } else {
        read(value).map(Some)
    }
}

fn read_string(value: JsValue) -> Result<String, String> {
    value
        .as_string()
        .ok_or_else(|| invalid_type(&value, "a string"))
}

fn read_strings(value: JsValue) -> Result<Vec<String>, String> {
    // A string is no list of names (iterating it would give its letters,
    // and reading them as objects fails with a message that names nothing).
    if value.is_string() {
        return Err(invalid_type(&value, "a sequence"));
    }
    if let Some(array) = value.dyn_ref::<js_sys::Array>() {
        return array.iter().map(read_string).collect();
    }
    match js_sys::try_iter(&value) {
        Ok(Some(items)) => items
            .map(|item| item.map_err(|e| thrown(&e)).and_then(read_string))
            .collect(),
        Ok(None) => Err(invalid_type(&value, "a sequence")),
        Err(e) => Err(thrown(&e)),
    }
}

fn read_count(value: JsValue) -> Result<usize, String> {
    let whole = if value.is_bigint() {
        u64::try_from(value.clone()).map_err(|_| {
            "Couldn't deserialize u64 from a BigInt outside u64::MIN..u64::MAX bounds".to_owned()
        })?
    } else if js_sys::Number::is_safe_integer(&value)
        && value.as_f64().is_some_and(|n| n as i64 >= 0)
    {
        value.as_f64().unwrap_or_default() as i64 as u64
    } else {
        return Err(invalid_type(&value, "usize"));
    };
    usize::try_from(whole).map_err(|_| {
        format!(
            "invalid value: {}, expected usize",
            serde::de::Unexpected::Unsigned(whole)
        )
    })
}

fn is_nullish(value: &JsValue) -> bool {
    value.loose_eq(&JsValue::NULL)
}

/// serde's "invalid type" message, naming the JavaScript value as
/// serde-wasm-bindgen did.
fn invalid_type(value: &JsValue, expected: &str) -> String {
    use serde::de::Unexpected;
    let text;
    let unexpected = if is_nullish(value) {
        Unexpected::Unit
    } else if let Some(b) = value.as_bool() {
        Unexpected::Bool(b)
    } else if let Some(n) = value.as_f64() {
        Unexpected::Float(n)
    } else if let Some(s) = value.as_string() {
        text = s;
        Unexpected::Str(&text)
    } else if value.is_instance_of::<js_sys::Uint8Array>()
        || value.is_instance_of::<js_sys::ArrayBuffer>()
    {
        Unexpected::Bytes(&[])
    } else {
        text = format!("{value:?}");
        Unexpected::Other(&text)
    };
    format!("invalid type: {unexpected}, expected {expected}")
}

/// A JavaScript exception as text: `String(error)`, without a plain
/// `Error: ` prefix.
fn thrown(error: &JsValue) -> String {
    let text = js_string(error);
    text.strip_prefix("Error: ")
        .map(str::to_owned)
        .unwrap_or(text)
}

fn js_type(value: &JsValue) -> String {
    if value.is_null() {
        "null".to_owned()
    } else if js_sys::Array::is_array(value) {
        "an array".to_owned()
    } else {
        value.js_typeof().as_string().unwrap_or_default()
    }
}
