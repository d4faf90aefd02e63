//! API misuse, reported to JavaScript as an `Error` with a stable `code`.

use wasm_bindgen::JsValue;

/// Why a call was refused. Plans with defects are not errors (they yield
/// diagnostics); these are calls the API cannot answer at all.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// An argument has the wrong shape (`files` not a `Record<string, string>`...).
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument { name: &'static str, reason: String },
    /// `updateStatus` was given a status other than pending, active, done, failed.
    #[error("unknown status {0:?}: expected \"pending\", \"active\", \"done\" or \"failed\"")]
    InvalidStatus(String),
    /// `updateStatus` could not set the status without changing the rest of
    /// the note's frontmatter (the note is then not to be written).
    #[error("the note is not changed: {0}")]
    StatusNotWritable(String),
    /// A result could not be converted to a JavaScript value.
    #[error("cannot convert the result to JavaScript: {0}")]
    Conversion(String),
}

impl BindingError {
    /// The stable kebab-case code carried as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            BindingError::InvalidArgument { .. } => "invalid-argument",
            BindingError::InvalidStatus(_) => "invalid-status",
            BindingError::StatusNotWritable(_) => "status-not-writable",
            BindingError::Conversion(_) => "conversion-failed",
        }
    }
}

impl From<BindingError> for JsValue {
    fn from(err: BindingError) -> JsValue {
        coded_error(err.code(), &err.to_string())
    }
}

/// `new Error(message)` with `name = "PlanvaultError"` and `code` set.
pub fn coded_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("PlanvaultError");
    // Setting a property on a fresh Error cannot fail.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}
