//! planvault's core: the plan model, the parsers for every plan format, the
//! validator and the transition engine.
//!
//! Invariant: this crate does no I/O. No files, network, clock or randomness;
//! callers hand in text and carry effects out. It compiles unchanged for
//! `wasm32-unknown-unknown`.
//!
//! The npm package builds this crate at opt-level 3 for the vault loader's
//! sake; with `--cfg planvault_size` (its build-std route, already unstable)
//! the functions of the modules off that path (PLAN.md, generated plans,
//! exports, note writing, the YAML writer) carry `optimize(size)`, so they
//! are compiled for size as the rest of the package is (~9 KB gzipped).
//! A new function in those modules needs
//! `#[cfg_attr(planvault_size, optimize(size))]` too.

#![forbid(unsafe_code)]
#![cfg_attr(planvault_size, feature(optimize_attribute))]

pub mod diagnostic;
pub mod engine;
pub mod export;
pub mod generated;
pub mod model;
pub mod planmd;
pub(crate) mod position;
#[cfg(feature = "proposal")]
pub mod proposal;
pub mod terminal;
pub mod vault;

pub use diagnostic::{Code, Diagnostic, Severity};
pub use model::*;

use std::collections::BTreeMap;

/// A plan's text as a caller read it, in one of the formats planvault knows.
#[derive(Debug, Clone)]
pub enum PlanSource {
    /// A vault: vault-relative path (with `.md`, `/`-separated) → note text.
    /// Callers pass every file; the loader skips what is not a plan note.
    Vault(BTreeMap<String, String>),
    /// A PLAN.md checklist; `file` names it in diagnostics.
    PlanMd { file: String, text: String },
    /// A generated JSON plan; `file` names it in diagnostics.
    Generated {
        file: String,
        text: String,
        options: generated::Options,
    },
}

/// A parsed plan with every diagnostic about it, parse and validation alike.
#[derive(Debug, Clone)]
pub struct Checked {
    pub plan: Plan,
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        diagnostic::has_errors(&self.diagnostics)
    }
}

impl PlanSource {
    /// Fill the diagnostics' UTF-16 columns ([`Diagnostic::column_utf16`])
    /// from this source's texts, counted as the positions are: a vault note
    /// without its BOM, a single-file plan as it is.
    pub fn fill_utf16_columns(&self, diagnostics: &mut [Diagnostic]) {
        match self {
            PlanSource::Vault(files) => diagnostic::fill_utf16_columns(diagnostics, |f| {
                files
                    .get(f)
                    .map(|t| t.strip_prefix('\u{feff}').unwrap_or(t))
            }),
            PlanSource::PlanMd { file, text } | PlanSource::Generated { file, text, .. } => {
                diagnostic::fill_utf16_columns(diagnostics, |f| {
                    (f == file).then_some(text.as_str())
                })
            }
        }
    }
}

/// Parse a plan in any format and validate it: the one entry point the CLI,
/// the web app, the worker and the npm package share.
pub fn check(source: &PlanSource) -> Checked {
    let (plan, mut diagnostics) = match source {
        PlanSource::Vault(files) => vault::load(files),
        PlanSource::PlanMd { file, text } => planmd::parse(file, text),
        PlanSource::Generated {
            file,
            text,
            options,
        } => generated::parse(file, text, options),
    };
    let graph = validate(&plan);
    vault::drop_outside_plan(&mut diagnostics, &graph, &plan);
    diagnostics.extend(graph);
    Checked { plan, diagnostics }
}

/// The graph rules of the plan's own format.
pub fn validate(plan: &Plan) -> Vec<Diagnostic> {
    match plan.format {
        PlanFormat::Vault => vault::validate(plan),
        PlanFormat::PlanMd => planmd::validate(plan),
        PlanFormat::Generated => generated::validate(plan),
    }
}
