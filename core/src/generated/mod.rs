//! Generated JSON plans (seeds 002 and 004): the flat step list a planner
//! emits and the DAG form with `$from` bindings, read into the one plan model
//! and refused, before anything runs, with a code naming each broken rule.
//!
//! Two shapes are accepted:
//! - flat: `[{"name", "tool", "args"?, "after"?}]` (or `{"steps": [...]}`);
//!   `after` absent = the step before, `after: []` = a root, per step;
//! - DAG: `{"goal"?, "nodes": [{"id", "capability", "args"?, "dependsOn"?,
//!   "preconditions"?, "rationale"?}]}`; only these keys are read.
//!
//! [`parse`] refuses what needs the host's options (tools, limits) or cannot be
//! represented in the model (bad JSON, duplicate ids, unknown dependencies);
//! [`validate`] checks what the model carries (bindings, cycles). The plan's
//! declared tools become [`Plan::grant`](crate::Plan::grant).

pub mod export;
pub mod refs;
mod schedule;
mod validate;

pub use refs::{resolve_refs, ResolveError};
pub use schedule::waves;
pub use validate::validate;

use crate::model::{GeneratedNode, Precondition, PreconditionTest};
use crate::position::{offset_in, LineIndex};
use crate::{
    Code, Diagnostic, Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, SourcePos, Status,
    DEFAULT_MAX_VISITS,
};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt;
use std::marker::PhantomData;

/// Size limits a plan must fit before it runs (seed 004's defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub max_nodes: usize,
    pub max_dependencies: usize,
    pub max_references: usize,
    pub max_preconditions: usize,
    /// Serialized size of one step's arguments, in bytes.
    pub max_args_bytes: usize,
    /// Nesting depth of one step's arguments.
    pub max_args_depth: usize,
}

impl Default for Limits {
    #[cfg_attr(planvault_size, optimize(size))]
    fn default() -> Self {
        Limits {
            max_nodes: 32,
            max_dependencies: 16,
            max_references: 32,
            max_preconditions: 8,
            max_args_bytes: 32 * 1024,
            max_args_depth: 16,
        }
    }
}

/// What the host permits and how big a plan may be.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Tools the host permits; `None` permits every tool the plan names.
    pub allowed_tools: Option<Vec<String>>,
    /// Tools that exist (the host's catalog); `None` trusts every name.
    pub available_tools: Option<Vec<String>>,
    pub limits: Limits,
}

/// Does the plan's grant cover `tool`? A plan runs under the tools it
/// declared, not the host's ambient policy.
#[cfg_attr(planvault_size, optimize(size))]
pub fn permits(plan: &Plan, tool: &str) -> bool {
    plan.grant.as_ref().is_none_or(|grant| grant.contains(tool))
}

/// The generated-plan facts of a node, when it is a generated step.
#[cfg_attr(planvault_size, optimize(size))]
pub fn step(node: &Node) -> Option<&GeneratedNode> {
    match &node.ext {
        NodeExt::Generated(step) => Some(step),
        _ => None,
    }
}

/// Step ids sorted for binary search, each with the first position that
/// declares it (a later duplicate is refused, not looked up).
pub(crate) struct IdIndex<'a>(Vec<(&'a str, usize)>);

impl<'a> IdIndex<'a> {
    #[cfg_attr(planvault_size, optimize(size))]
    pub(crate) fn new(ids: impl Iterator<Item = &'a str>) -> Self {
        let mut index: Vec<(&str, usize)> = ids.enumerate().map(|(i, id)| (id, i)).collect();
        // By id, then by position: the first of equal ids is the first declared.
        index.sort_unstable();
        index.dedup_by_key(|&mut (id, _)| id);
        IdIndex(index)
    }

    /// The first position declaring `id`.
    #[cfg_attr(planvault_size, optimize(size))]
    pub(crate) fn get(&self, id: &str) -> Option<usize> {
        self.0
            .binary_search_by(|&(probe, _)| probe.cmp(id))
            .ok()
            .map(|at| self.0[at].1)
    }
}

/// Where a piece of the plan text is, for diagnostics on the plan file.
struct Locator<'a> {
    file: &'a str,
    text: &'a str,
    lines: LineIndex<'a>,
}

impl Locator<'_> {
    /// `raw` is a sub-slice of the plan text (a `RawValue` borrows from it).
    #[cfg_attr(planvault_size, optimize(size))]
    fn pos_of(&self, raw: &str) -> SourcePos {
        self.lines.pos(self.file, offset_in(self.text, raw))
    }
}

/// One step as declared, before it becomes a node.
struct StepDecl<'a> {
    id: String,
    tool: String,
    args: Value,
    deps: Vec<String>,
    preconditions: Vec<Precondition>,
    rationale: String,
    pos: SourcePos,
    deps_raw: Option<&'a RawValue>,
    args_raw: Option<&'a RawValue>,
}

/// Read a generated plan. Never fails: a plan that cannot be read is an empty
/// plan with diagnostics.
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse(file: &str, text: &str, options: &Options) -> (Plan, Vec<Diagnostic>) {
    // A byte-order mark (Notepad saves one) is no part of the JSON, as for
    // the other formats; RFC 8259 lets a reader ignore it, serde_json does
    // not. Columns count from after it, as a note's do.
    let text = crate::vault::text::strip_bom(text).0;
    let loc = Locator {
        file,
        text,
        lines: LineIndex::new(text),
    };
    let mut diags = Vec::new();
    let mut plan = Plan::new(PlanFormat::Generated);
    let Some(steps) = read_steps(&loc, text, &options.limits, &mut diags) else {
        return (plan, diags);
    };
    refuse_steps(&loc, &steps, options, &mut diags);

    let mut grant = BTreeSet::new();
    for s in &steps {
        grant.insert(s.tool.clone());
        plan.nodes.push(Node {
            id: s.id.clone(),
            title: s.id.clone(),
            body: s.rationale.clone(),
            kind: NodeKind::Invoke,
            status: Status::Pending,
            tools: vec![s.tool.clone()],
            role: None,
            max_visits: DEFAULT_MAX_VISITS,
            pos: Some(s.pos.clone()),
            ext: NodeExt::Generated(GeneratedNode {
                capability: s.tool.clone(),
                args: s.args.clone(),
                preconditions: s.preconditions.clone(),
            }),
        });
    }
    let first = IdIndex::new(steps.iter().map(|s| s.id.as_str()));
    // `added_for[from] == i`: step i already has its edge from `from`.
    let mut added_for = vec![usize::MAX; steps.len()];
    for (i, s) in steps.iter().enumerate() {
        for dep in &s.deps {
            let Some(from) = first.get(dep) else { continue };
            if from == i || added_for[from] == i {
                continue;
            }
            added_for[from] = i;
            plan.edges.push(Edge {
                from,
                to: Some(i),
                target: s.id.clone(),
                label: None,
                kind: EdgeKind::After,
                pos: Some(
                    s.deps_raw
                        .map_or_else(|| s.pos.clone(), |r| loc.pos_of(r.get())),
                ),
                written: None,
            });
        }
    }
    plan.grant = Some(grant);
    (plan, diags)
}

#[cfg_attr(planvault_size, optimize(size))]
fn malformed(message: String, pos: SourcePos) -> Diagnostic {
    Diagnostic::error(Code::MalformedPlan, message).at(&pos)
}

/// The steps of either shape, or `None` when the text is not a plan at all.
#[cfg_attr(planvault_size, optimize(size))]
fn read_steps<'a>(
    loc: &Locator<'a>,
    text: &'a str,
    limits: &Limits,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<StepDecl<'a>>> {
    let max_nodes = limits.max_nodes;
    let start = SourcePos::new(loc.file, 1, 1);
    let root: &RawValue = match serde_json::from_str(text) {
        Ok(root) => root,
        Err(e) => {
            let message = format!(
                "the plan is not valid JSON: {}",
                strip_position(&e.to_string())
            );
            let pos = loc
                .lines
                .pos(loc.file, loc.lines.offset_of(e.line(), e.column()));
            diags.push(malformed(message, pos));
            return None;
        }
    };
    let (list, dag): (Bounded<'_>, bool) = match root.get().trim_start().as_bytes().first() {
        Some(b'[') => (Bounded::read(root.get(), max_nodes).ok()?, false),
        Some(b'{') => {
            let map: Fields<'_> = serde_json::from_str(root.get()).ok()?;
            let (key, dag) = if map.contains_key("nodes") {
                ("nodes", true)
            } else {
                ("steps", false)
            };
            let Some(raw) = map.get(key) else {
                diags.push(malformed(
                    "the plan is neither a list of steps nor an object with \"nodes\" or \"steps\""
                        .into(),
                    loc.pos_of(root.get()),
                ));
                return None;
            };
            if let Some(goal) = map.get("goal") {
                if !matches!(
                    serde_json::from_str::<Value>(goal.get()),
                    Ok(Value::String(_))
                ) {
                    diags.push(malformed(
                        "\"goal\" must be a string".into(),
                        loc.pos_of(goal.get()),
                    ));
                }
            }
            match Bounded::read(raw.get(), max_nodes) {
                Ok(list) => (list, dag),
                Err(_) => {
                    diags.push(malformed(
                        format!("\"{key}\" must be a list of steps"),
                        loc.pos_of(raw.get()),
                    ));
                    return None;
                }
            }
        }
        _ => {
            diags.push(malformed(
                "the plan is neither a list of steps nor an object with \"nodes\"".into(),
                start,
            ));
            return None;
        }
    };
    if list.total > max_nodes {
        // Refused as a whole: the steps past the ceiling were counted, not
        // read, so nothing about the plan's shape is known.
        diags.push(
            Diagnostic::error(
                Code::TooManySteps,
                format!(
                    "the plan has {} steps; the ceiling is {max_nodes}",
                    list.total
                ),
            )
            .at(&loc.pos_of(list.items[max_nodes].get())),
        );
        return None;
    }
    let list = list.items;
    if list.is_empty() {
        diags.push(
            Diagnostic::error(Code::EmptyPlan, "the plan has no steps").at(&loc.pos_of(root.get())),
        );
        return None;
    }
    let mut steps = Vec::new();
    let mut previous: Option<String> = None;
    for (n, raw) in list.iter().enumerate() {
        let step = if dag {
            read_dag_node(loc, limits, n + 1, raw, diags)
        } else {
            read_flat_step(loc, limits, n + 1, raw, previous.as_deref(), diags)
        };
        if let Some(step) = step {
            previous = Some(step.id.clone());
            steps.push(step);
        }
    }
    Some(steps)
}

/// How deep serde_json reads nested arrays and objects into a `Value`.
const JSON_DEPTH: usize = 127;

/// A JSON list read up to one item past a ceiling; the items after that
/// are only counted (checked as JSON, never kept), so a plan of a million
/// steps costs one pass over its text before it is refused.
struct Bounded<'a> {
    items: Vec<&'a RawValue>,
    total: usize,
}

impl<'a> Bounded<'a> {
    #[cfg_attr(planvault_size, optimize(size))]
    fn read(text: &'a str, ceiling: usize) -> serde_json::Result<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let list = de.deserialize_seq(BoundedVisitor {
            keep: ceiling.saturating_add(1),
            _text: PhantomData,
        })?;
        de.end()?;
        Ok(list)
    }
}

struct BoundedVisitor<'a> {
    keep: usize,
    _text: PhantomData<&'a ()>,
}

impl<'de: 'a, 'a> Visitor<'de> for BoundedVisitor<'a> {
    type Value = Bounded<'a>;

    #[cfg_attr(planvault_size, optimize(size))]
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bounded<'a>, A::Error> {
        let mut items = Vec::new();
        while items.len() < self.keep {
            match seq.next_element::<&'a RawValue>()? {
                Some(item) => items.push(item),
                None => {
                    let total = items.len();
                    return Ok(Bounded { items, total });
                }
            }
        }
        let mut total = items.len();
        while seq.next_element::<IgnoredAny>()?.is_some() {
            total += 1;
        }
        Ok(Bounded { items, total })
    }
}

/// serde_json appends " at line L column C"; the diagnostic carries both.
#[cfg_attr(planvault_size, optimize(size))]
fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |at| &message[..at])
}

/// A JSON object's members as written, their values unparsed. A repeated
/// key reads as its last value, as in any serde map.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Fields<'a> {
    #[cfg_attr(planvault_size, optimize(size))]
    fn get(&self, key: &str) -> Option<&&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    #[cfg_attr(planvault_size, optimize(size))]
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    #[cfg_attr(planvault_size, optimize(size))]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = Fields<'a>;
            #[cfg_attr(planvault_size, optimize(size))]
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            #[cfg_attr(planvault_size, optimize(size))]
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'a RawValue>()? {
                    members.push(member);
                }
                Ok(Fields(members))
            }
        }
        deserializer.deserialize_map(Members(PhantomData))
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn fields<'a>(
    loc: &Locator<'a>,
    n: usize,
    raw: &'a RawValue,
    diags: &mut Vec<Diagnostic>,
) -> Option<Fields<'a>> {
    match serde_json::from_str::<Fields<'a>>(raw.get()) {
        Ok(map) => Some(map),
        Err(_) => {
            diags.push(malformed(
                format!("step {n} is not an object"),
                loc.pos_of(raw.get()),
            ));
            None
        }
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn string_field(
    loc: &Locator<'_>,
    n: usize,
    map: &Fields<'_>,
    keys: &[&str],
    at: &SourcePos,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let Some((key, raw)) = keys.iter().find_map(|k| map.get(k).map(|r| (*k, r))) else {
        diags.push(malformed(
            format!("step {n} has no \"{}\"", keys[0]),
            at.clone(),
        ));
        return None;
    };
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::String(s)) => Some(s),
        _ => {
            diags.push(malformed(
                format!("step {n}: \"{key}\" must be a string"),
                loc.pos_of(raw.get()),
            ));
            None
        }
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn string_list(
    loc: &Locator<'_>,
    n: usize,
    key: &str,
    raw: &RawValue,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<String>> {
    match serde_json::from_str::<Vec<String>>(raw.get()) {
        Ok(list) => Some(list),
        Err(_) => {
            diags.push(malformed(
                format!("step {n}: \"{key}\" must be a list of step names"),
                loc.pos_of(raw.get()),
            ));
            None
        }
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn args_field<'a>(
    loc: &Locator<'a>,
    n: usize,
    map: &Fields<'a>,
    id: Option<&str>,
    max_depth: usize,
    diags: &mut Vec<Diagnostic>,
) -> (Value, Option<&'a RawValue>) {
    let Some(raw) = map.get("args").copied() else {
        return (Value::Object(Default::default()), None);
    };
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(v @ Value::Object(_)) => (v, Some(raw)),
        Ok(Value::Null) => (Value::Object(Default::default()), Some(raw)),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            diags.push(
                Diagnostic::error(
                    Code::ArgsTooLarge,
                    format!(
                        "{} has arguments nested more than {JSON_DEPTH} deep; the limit is {}",
                        id.map_or_else(|| format!("step {n}"), |id| format!("step {id:?}")),
                        max_depth.min(JSON_DEPTH)
                    ),
                )
                .at(&loc.pos_of(raw.get())),
            );
            (Value::Object(Default::default()), Some(raw))
        }
        _ => {
            diags.push(malformed(
                format!("step {n}: \"args\" must be an object"),
                loc.pos_of(raw.get()),
            ));
            (Value::Object(Default::default()), Some(raw))
        }
    }
}

#[cfg_attr(planvault_size, optimize(size))]
fn read_flat_step<'a>(
    loc: &Locator<'a>,
    limits: &Limits,
    n: usize,
    raw: &'a RawValue,
    previous: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) -> Option<StepDecl<'a>> {
    let map = fields(loc, n, raw, diags)?;
    let pos = loc.pos_of(raw.get());
    let id = string_field(loc, n, &map, &["name"], &pos, diags);
    let tool = string_field(loc, n, &map, &["tool"], &pos, diags);
    let (args, args_raw) = args_field(loc, n, &map, id.as_deref(), limits.max_args_depth, diags);
    let deps_raw = map.get("after").copied();
    let deps = match deps_raw {
        // Absent: the step before; an explicit `[]` is a declared root. (A
        // step repeating the previous name is a duplicate id, not also a
        // self-dependency nobody wrote.)
        None => previous
            .filter(|p| id.as_deref() != Some(*p))
            .map(|p| vec![p.to_string()])
            .unwrap_or_default(),
        Some(raw) => string_list(loc, n, "after", raw, diags).unwrap_or_default(),
    };
    Some(StepDecl {
        id: id?,
        tool: tool?,
        args,
        deps,
        preconditions: Vec::new(),
        rationale: String::new(),
        pos,
        deps_raw,
        args_raw,
    })
}

#[cfg_attr(planvault_size, optimize(size))]
fn read_dag_node<'a>(
    loc: &Locator<'a>,
    limits: &Limits,
    n: usize,
    raw: &'a RawValue,
    diags: &mut Vec<Diagnostic>,
) -> Option<StepDecl<'a>> {
    let map = fields(loc, n, raw, diags)?;
    let pos = loc.pos_of(raw.get());
    let id = string_field(loc, n, &map, &["id"], &pos, diags);
    let tool = string_field(
        loc,
        n,
        &map,
        &["capability", "capabilityId", "tool"],
        &pos,
        diags,
    );
    let (args, args_raw) = args_field(loc, n, &map, id.as_deref(), limits.max_args_depth, diags);
    let deps_raw = map.get("dependsOn").copied();
    let deps = deps_raw
        .and_then(|raw| string_list(loc, n, "dependsOn", raw, diags))
        .unwrap_or_default();
    let preconditions = map
        .get("preconditions")
        .map(|raw| read_preconditions(loc, n, raw, diags))
        .unwrap_or_default();
    let rationale = map
        .get("rationale")
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
        .unwrap_or_default();
    Some(StepDecl {
        id: id?,
        tool: tool?,
        args,
        deps,
        preconditions,
        rationale,
        pos,
        deps_raw,
        args_raw,
    })
}

#[cfg_attr(planvault_size, optimize(size))]
fn read_preconditions(
    loc: &Locator<'_>,
    n: usize,
    raw: &RawValue,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Precondition> {
    let Ok(list) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) else {
        diags.push(malformed(
            format!("step {n}: \"preconditions\" must be a list"),
            loc.pos_of(raw.get()),
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in list {
        let pos = loc.pos_of(item.get());
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(item.get()) else {
            diags.push(malformed(
                format!("step {n}: a precondition must be an object"),
                pos,
            ));
            continue;
        };
        let Some(Value::String(reference)) = map.get("ref") else {
            diags.push(malformed(
                format!("step {n}: a precondition needs a string \"ref\""),
                pos,
            ));
            continue;
        };
        let test = match map.get("test").and_then(Value::as_str) {
            None if !map.contains_key("test") => PreconditionTest::Exists,
            Some("exists") => PreconditionTest::Exists,
            Some("truthy") => PreconditionTest::Truthy,
            Some("equals") => PreconditionTest::Equals,
            _ => {
                diags.push(malformed(
                    format!("step {n}: a precondition's \"test\" is exists, truthy or equals"),
                    pos,
                ));
                continue;
            }
        };
        out.push(Precondition {
            reference: reference.clone(),
            test,
            value: map.get("value").cloned(),
        });
    }
    out
}

/// The refusals that need the host's options or the declarations themselves,
/// in a fixed order: each step in declaration order. (The step ceiling is
/// checked while the list is read.)
#[cfg_attr(planvault_size, optimize(size))]
fn refuse_steps(
    loc: &Locator<'_>,
    steps: &[StepDecl<'_>],
    options: &Options,
    diags: &mut Vec<Diagnostic>,
) {
    let limits = &options.limits;
    let ids = IdIndex::new(steps.iter().map(|s| s.id.as_str()));
    for (at, s) in steps.iter().enumerate() {
        let id = &s.id;
        let refuse = |code: Code, message: String, pos: &SourcePos| {
            Diagnostic::error(code, message)
                .at(pos)
                .with_nodes([id.clone()])
        };
        if !refs::is_valid_id(id) {
            diags.push(refuse(
                Code::MalformedId,
                format!("step id {id:?} is not a legal id (^[A-Za-z][A-Za-z0-9_-]{{0,63}}$)"),
                &s.pos,
            ));
        }
        if ids.get(id) != Some(at) {
            diags.push(refuse(
                Code::DuplicateId,
                format!("step id {id:?} is declared more than once"),
                &s.pos,
            ));
        }
        let tool = &s.tool;
        if options
            .available_tools
            .as_ref()
            .is_some_and(|known| !known.contains(tool))
        {
            diags.push(refuse(
                Code::UnknownTool,
                format!("step {id:?} uses tool {tool:?}, which does not exist"),
                &s.pos,
            ));
        } else if options
            .allowed_tools
            .as_ref()
            .is_some_and(|allowed| !allowed.contains(tool))
        {
            diags.push(refuse(
                Code::ToolNotPermitted,
                format!("step {id:?} uses tool {tool:?}, which the host does not permit"),
                &s.pos,
            ));
        }
        // Positions are computed only for a refusal: look-ups that jump
        // backwards in a long line cost a scan.
        let deps_pos = || {
            s.deps_raw
                .map_or_else(|| s.pos.clone(), |r| loc.pos_of(r.get()))
        };
        let args_pos = || {
            s.args_raw
                .map_or_else(|| s.pos.clone(), |r| loc.pos_of(r.get()))
        };
        let mut distinct: Vec<&str> = s.deps.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() > limits.max_dependencies {
            diags.push(refuse(
                Code::TooManyDependencies,
                format!(
                    "step {id:?} has {} dependencies; the limit is {}",
                    distinct.len(),
                    limits.max_dependencies
                ),
                &deps_pos(),
            ));
        }
        if s.preconditions.len() > limits.max_preconditions {
            diags.push(refuse(
                Code::TooManyPreconditions,
                format!(
                    "step {id:?} has {} preconditions; the limit is {}",
                    s.preconditions.len(),
                    limits.max_preconditions
                ),
                &s.pos,
            ));
        }
        let bytes = s.args_raw.map_or(2, |r| r.get().len());
        let depth = refs::depth(&s.args);
        if bytes > limits.max_args_bytes {
            diags.push(refuse(
                Code::ArgsTooLarge,
                format!(
                    "step {id:?} has {bytes} bytes of arguments; the limit is {}",
                    limits.max_args_bytes
                ),
                &args_pos(),
            ));
        } else if depth > limits.max_args_depth {
            diags.push(refuse(
                Code::ArgsTooLarge,
                format!(
                    "step {id:?} has arguments nested {depth} deep; the limit is {}",
                    limits.max_args_depth
                ),
                &args_pos(),
            ));
        }
        let references = refs::bindings(&s.args).len() + s.preconditions.len();
        if references > limits.max_references {
            diags.push(refuse(
                Code::TooManyReferences,
                format!(
                    "step {id:?} has {references} references; the limit is {}",
                    limits.max_references
                ),
                &args_pos(),
            ));
        }
        let mut reported = vec![false; distinct.len()];
        for dep in &s.deps {
            let at = distinct.binary_search(&dep.as_str()).unwrap_or_default();
            if std::mem::replace(&mut reported[at], true) {
                continue;
            }
            if dep == id {
                diags.push(refuse(
                    Code::SelfDependency,
                    format!("step {id:?} depends on itself"),
                    &deps_pos(),
                ));
            } else if ids.get(dep).is_none() {
                diags.push(refuse(
                    Code::UnknownDependency,
                    format!("step {id:?} depends on {dep:?}, which is not a step of this plan"),
                    &deps_pos(),
                ));
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// The index answers as the first-wins `BTreeMap` it replaced.
        #[test]
        fn id_index_finds_the_first_declaration(ids in prop::collection::vec("[a-d]{0,2}", 0..12), probe in "[a-d]{0,2}") {
            let index = IdIndex::new(ids.iter().map(String::as_str));
            let map: BTreeMap<&str, usize> = ids.iter().enumerate().rev().map(|(i, id)| (id.as_str(), i)).collect();
            for id in ids.iter().map(String::as_str).chain([probe.as_str()]) {
                prop_assert_eq!(index.get(id), map.get(id).copied());
            }
        }

        /// An object's members read as through a `BTreeMap<String, &RawValue>`
        /// (a repeated key: its last value), and what is not an object is
        /// refused by both.
        #[test]
        fn fields_read_like_a_map(
            members in prop::collection::vec(("[ab\"\\\\é]{0,2}", prop_oneof![Just("1"), Just("[2, {}]"), Just("\"x\""), Just("null")]), 0..6),
            not_object in prop_oneof![Just(""), Just("[]"), Just("null"), Just("3"), Just("{"), Just("{\"a\"}")],
        ) {
            let text = format!(
                "{{{}}}",
                members.iter().map(|(k, v)| format!("{}: {v}", serde_json::to_string(k).unwrap())).collect::<Vec<_>>().join(", ")
            );
            let fields: Fields<'_> = serde_json::from_str(&text).unwrap();
            let map: BTreeMap<String, &RawValue> = serde_json::from_str(&text).unwrap();
            for (key, _) in &members {
                prop_assert_eq!(fields.get(key).map(|r| r.get()), map.get(key).map(|r| r.get()));
                prop_assert!(fields.contains_key(key));
            }
            prop_assert!(!fields.contains_key("zz"));
            prop_assert!(serde_json::from_str::<Fields<'_>>(not_object).is_err());
            prop_assert!(serde_json::from_str::<BTreeMap<String, &RawValue>>(not_object).is_err());
        }
    }
}
