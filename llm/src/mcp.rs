//! Model Context Protocol servers as a node's tools, without any I/O: the
//! catalog a runner lists from its servers once at run start, how a node's
//! `tools:` entries name what it may call (`server.tool`, `server.*`, a bare
//! name one server alone offers, or a built-in), the diagnostic for a
//! declared tool nothing offers, the OpenAI function each grant becomes, and
//! the bound on what a call hands back. Talking to the servers is the
//! host's business (`planvault-runner`'s `mcp` module natively).

use crate::tools;
use planvault_core::{Code, Diagnostic, Node, NodeExt, Plan};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The most characters of one call's result handed back to the model (and
/// written to the journal); the rest is cut with a note saying so.
pub const RESULT_LIMIT_CHARS: usize = 20_000;

/// One tool a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub name: String,
    pub description: String,
    /// The tool's JSON Schema for its arguments (an object schema).
    pub input_schema: Value,
    /// A person approves each call first under `autonomy: ask`: it may
    /// destroy ([`may_destroy`]), or the vault's config lists it.
    pub ask: bool,
    /// The server marks it `readOnlyHint: true`: it changes nothing, so a
    /// proposal-mode run may call it before a person approves.
    pub read_only: bool,
}

/// Whether a tool may change or delete what is there, by its server's
/// `annotations` as MCP defines their defaults: `readOnlyHint` false and
/// `destructiveHint` true unless the server says otherwise. A tool a server
/// left unannotated may destroy; one marked read-only, or only additive
/// (`destructiveHint: false`), may not.
pub fn may_destroy(read_only_hint: Option<bool>, destructive_hint: Option<bool>) -> bool {
    !read_only_hint.unwrap_or(false) && destructive_hint.unwrap_or(true)
}

/// Every configured server's tools, by server name, as listed at run start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    pub servers: BTreeMap<String, Vec<McpTool>>,
    /// Servers the config names that this host cannot reach, with why
    /// (a command server in the browser).
    pub unreachable: BTreeMap<String, String>,
}

impl Catalog {
    pub fn tool(&self, server: &str, name: &str) -> Option<&McpTool> {
        self.servers.get(server)?.iter().find(|t| t.name == name)
    }

    /// What can be declared, for a diagnostic: the built-ins, then each
    /// server's tools as `server.tool`.
    pub fn offered(&self) -> String {
        let mut parts = vec![format!("built-in {}", tools::TOOLS.join(", "))];
        for (server, list) in &self.servers {
            let names: Vec<String> = list
                .iter()
                .map(|t| format!("{server}.{}", t.name))
                .collect();
            if names.is_empty() {
                parts.push(format!("{server} (no tools)"));
            } else {
                parts.push(names.join(", "));
            }
        }
        parts.join("; ")
    }
}

/// What a declared entry grants: a built-in tool or one server's tool.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grant {
    Builtin(String),
    Server { server: String, tool: String },
}

impl Grant {
    /// `server.tool`, or the built-in's name.
    pub fn display(&self) -> String {
        match self {
            Grant::Builtin(name) => name.clone(),
            Grant::Server { server, tool } => format!("{server}.{tool}"),
        }
    }
}

/// One tool offered to the model: the function name it sees and what that
/// name calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub function: String,
    pub grant: Grant,
}

/// A declared entry nothing offers, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub declared: String,
    pub reason: String,
}

/// Which grants one declared entry names.
fn grants_of(declared: &str, catalog: &Catalog) -> Result<Vec<Grant>, String> {
    // Built-ins keep their names, before any server's tool of the same name.
    if tools::TOOLS.contains(&declared) {
        return Ok(vec![Grant::Builtin(declared.to_string())]);
    }
    if let Some((server, tool)) = declared.split_once('.') {
        if let Some(list) = catalog.servers.get(server) {
            if tool == "*" {
                if list.is_empty() {
                    return Err(format!("server {server} offers no tools"));
                }
                return Ok(list
                    .iter()
                    .map(|t| Grant::Server {
                        server: server.to_string(),
                        tool: t.name.clone(),
                    })
                    .collect());
            }
            return match list.iter().find(|t| t.name == tool) {
                Some(_) => Ok(vec![Grant::Server {
                    server: server.to_string(),
                    tool: tool.to_string(),
                }]),
                None => Err(format!("server {server} offers no tool {tool}")),
            };
        }
        if let Some(why) = catalog.unreachable.get(server) {
            return Err(format!("server {server} {why}"));
        }
        // A tool whose own name has a dot, offered by one server alone, is
        // found as a bare name below.
    }
    let owners: Vec<&String> = catalog
        .servers
        .iter()
        .filter(|(_, list)| list.iter().any(|t| t.name == declared))
        .map(|(server, _)| server)
        .collect();
    match owners.as_slice() {
        [server] => Ok(vec![Grant::Server {
            server: (*server).clone(),
            tool: declared.to_string(),
        }]),
        [] if declared.contains('.') && !catalog.servers.is_empty() => Err(format!(
            "no server is named {}",
            declared.split('.').next().unwrap_or_default()
        )),
        [] => Err(if catalog.servers.is_empty() {
            "no MCP server is configured (.planvault/config.toml: [mcp.servers.NAME])".to_string()
        } else {
            "no configured server offers it".to_string()
        }),
        many => Err(format!(
            "ambiguous: offered by {}; name one as server.tool",
            many.iter()
                .map(|s| format!("{s}.{declared}"))
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

/// The OpenAI function name of a server's tool: `server__tool`, with every
/// character outside `[A-Za-z0-9_-]` as `_`, at most 64 characters.
pub fn function_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name = format!("{}__{}", clean(server), clean(tool));
    name.truncate(64);
    name
}

/// A node's declared tools as offers (each grant once, in declaration
/// order) and the entries nothing offers. A review-only node is offered
/// nothing that edits: no `write_note`, no tool that asks for approval.
pub fn resolve(
    declared: &[String],
    catalog: &Catalog,
    review_only: bool,
) -> (Vec<Offer>, Vec<Unresolved>) {
    let mut offers: Vec<Offer> = Vec::new();
    let mut missing = Vec::new();
    for entry in declared {
        let grants = match grants_of(entry, catalog) {
            Ok(grants) => grants,
            Err(reason) => {
                missing.push(Unresolved {
                    declared: entry.clone(),
                    reason,
                });
                continue;
            }
        };
        for grant in grants {
            let (function, edits) = match &grant {
                Grant::Builtin(name) => (name.clone(), tools::is_editing(name)),
                Grant::Server { server, tool } => (
                    function_name(server, tool),
                    catalog.tool(server, tool).is_some_and(|t| t.ask),
                ),
            };
            if (review_only && edits) || offers.iter().any(|o| o.grant == grant) {
                continue;
            }
            // Two tools whose names clean to one function: the later is
            // numbered, so each name the model sees calls one tool.
            let mut unique = function.clone();
            let mut n = 2;
            while offers.iter().any(|o| o.function == unique) {
                unique = format!("{}_{n}", &function[..function.len().min(60)]);
                n += 1;
            }
            offers.push(Offer {
                function: unique,
                grant,
            });
        }
    }
    (offers, missing)
}

/// The OpenAI function schema of an offer.
pub fn schema(offer: &Offer, catalog: &Catalog) -> Value {
    match &offer.grant {
        Grant::Builtin(name) => tools::schema(name),
        Grant::Server { server, tool } => {
            let (description, params) = match catalog.tool(server, tool) {
                Some(t) => (t.description.clone(), t.input_schema.clone()),
                None => (String::new(), json!({"type": "object"})),
            };
            let params = if params.is_object() {
                params
            } else {
                json!({"type": "object"})
            };
            let description = if description.is_empty() {
                format!("{server}.{tool} (an MCP server's tool)")
            } else {
                format!("{server}.{tool}: {description}")
            };
            json!({"type": "function", "function": {"name": offer.function, "description": description, "parameters": params}})
        }
    }
}

/// The note a node lives in.
fn note_of(node: &Node) -> String {
    match (&node.ext, &node.pos) {
        (NodeExt::Vault(v), _) if !v.file.is_empty() => v.file.clone(),
        (_, Some(pos)) => pos.file.clone(),
        _ => format!("{}.md", node.id),
    }
}

/// Where a note's frontmatter names `entry` under `tools:` (inline
/// `tools: [a, b]` or a block list): 1-based line and character column.
pub fn locate(text: &str, entry: &str) -> Option<(u32, u32)> {
    // An empty entry (`tools: [""]`) would be found everywhere and never
    // move the search on: its quotes are what the note has.
    if entry.is_empty() {
        return locate(text, "\"\"").or_else(|| locate(text, "''"));
    }
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next()?;
    if first.trim_start_matches('\u{feff}').trim_end() != "---" {
        return None;
    }
    let mut in_tools = false;
    for (i, line) in lines {
        if line.trim_end() == "---" {
            return None;
        }
        let starts_key = !line.starts_with([' ', '\t', '-']);
        if starts_key {
            in_tools = line.starts_with("tools:");
        }
        if !in_tools {
            continue;
        }
        let from = if starts_key { "tools:".len() } else { 0 };
        let mut at = from;
        while let Some(found) = line[at..].find(entry) {
            let start = at + found;
            let end = start + entry.len();
            let edge = |c: Option<char>| {
                c.is_none_or(|c| matches!(c, ' ' | '\t' | ',' | '[' | ']' | '-' | '"' | '\''))
            };
            if edge(line[..start].chars().next_back()) && edge(line[end..].chars().next()) {
                return Some((i as u32 + 1, line[..start].chars().count() as u32 + 1));
            }
            at = end;
        }
    }
    None
}

/// One `unknown-tool` error per declared entry of every node that nothing
/// offers, naming the note, the tool, why, and what is offered, at the
/// entry in the note's `tools:` when `text` gives the note's text. The run
/// stops on any before its first model call; `planvault validate
/// --check-tools` prints the same.
pub fn check(
    plan: &Plan,
    catalog: &Catalog,
    text: &dyn Fn(&str) -> Option<String>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for node in &plan.nodes {
        let mut declared = node.tools.clone();
        // A generated step's `llm` is the runner's own model call.
        if matches!(node.ext, NodeExt::Generated(_)) {
            declared.retain(|t| t != "llm");
        }
        let (_, missing) = resolve(&declared, catalog, false);
        for m in missing {
            let note = note_of(node);
            let message = format!(
                "{note} declares the tool `{}`: {}; offered: {}",
                m.declared,
                m.reason,
                catalog.offered()
            );
            let mut d = Diagnostic::error(Code::UnknownTool, message).with_nodes([node.id.clone()]);
            let found = matches!(node.ext, NodeExt::Vault(_))
                .then(|| text(&note))
                .flatten()
                .and_then(|t| locate(&t, &m.declared));
            d = match (found, &node.pos) {
                (Some((line, column)), _) => {
                    d.at(&planvault_core::SourcePos::new(note.clone(), line, column))
                }
                (None, Some(pos)) => d.at(pos),
                (None, None) => d.in_file(note),
            };
            out.push(d);
        }
    }
    out
}

/// `text` with each of `secrets` (those of 4 characters or more) written
/// `<redacted>`.
pub fn redacted(text: &str, secrets: &[impl AsRef<str>]) -> String {
    let mut text = text.to_string();
    for secret in secrets.iter().map(AsRef::as_ref).filter(|s| s.len() >= 4) {
        if text.contains(secret) {
            text = text.replace(secret, "<redacted>");
        }
    }
    text
}

/// [`bound`] of `text` [`redacted`] first: a cut through a secret would
/// leave its head where no later redaction finds it.
pub fn bound_redacted(text: &str, limit: usize, secrets: &[impl AsRef<str>]) -> String {
    bound(&redacted(text, secrets), limit)
}

/// A call's result as the model gets it: at most `limit` characters, the
/// cut said in the text.
pub fn bound(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_string();
    }
    let kept: String = text.chars().take(limit).collect();
    format!("{kept}\n[… cut: the result had {total} characters; the first {limit} are shown]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, ask: bool) -> McpTool {
        McpTool {
            name: name.into(),
            description: format!("does {name}"),
            input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            ask,
            read_only: false,
        }
    }

    fn catalog() -> Catalog {
        let mut servers = BTreeMap::new();
        servers.insert(
            "files".to_string(),
            vec![tool("read_file", false), tool("write_file", true)],
        );
        servers.insert(
            "web".to_string(),
            vec![
                tool("search", false),
                tool("read_file", false),
                tool("a.b", false),
            ],
        );
        servers.insert("empty".to_string(), vec![]);
        Catalog {
            servers,
            ..Catalog::default()
        }
    }

    fn names(offers: &[Offer]) -> Vec<String> {
        offers.iter().map(|o| o.grant.display()).collect()
    }

    #[test]
    fn entries_name_a_server_tool_all_of_a_server_a_unique_bare_name_or_a_builtin() {
        let c = catalog();
        let declared: Vec<String> = ["files.write_file", "search", "write_note", "a.b", "web.*"]
            .map(String::from)
            .to_vec();
        let (offers, missing) = resolve(&declared, &c, false);
        assert_eq!(missing, vec![]);
        assert_eq!(
            names(&offers),
            [
                "files.write_file",
                "web.search",
                "write_note",
                "web.a.b",
                "web.read_file"
            ]
        );
        assert_eq!(
            offers
                .iter()
                .map(|o| o.function.as_str())
                .collect::<Vec<_>>(),
            [
                "files__write_file",
                "web__search",
                "write_note",
                "web__a_b",
                "web__read_file"
            ]
        );
        // Review-only: nothing that edits or asks.
        let (offers, _) = resolve(&declared, &c, true);
        assert_eq!(names(&offers), ["web.search", "web.a.b", "web.read_file"]);
    }

    #[test]
    fn what_nothing_offers_says_why() {
        let c = catalog();
        let declared: Vec<String> = [
            "read_file",
            "send_email",
            "mail.send",
            "files.rm",
            "empty.*",
        ]
        .map(String::from)
        .to_vec();
        let (offers, missing) = resolve(&declared, &c, false);
        assert!(offers.is_empty());
        let reasons: Vec<(&str, &str)> = missing
            .iter()
            .map(|m| (m.declared.as_str(), m.reason.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                (
                    "read_file",
                    "ambiguous: offered by files.read_file and web.read_file; name one as server.tool"
                ),
                ("send_email", "no configured server offers it"),
                ("mail.send", "no server is named mail"),
                ("files.rm", "server files offers no tool rm"),
                ("empty.*", "server empty offers no tools"),
            ]
        );
        let (_, missing) = resolve(&["search".to_string()], &Catalog::default(), false);
        assert!(missing[0].reason.contains("no MCP server is configured"));
        let mut elsewhere = catalog();
        elsewhere
            .unreachable
            .insert("mail".into(), "is the terminal's".into());
        let (_, missing) = resolve(&["mail.send".to_string()], &elsewhere, false);
        assert_eq!(missing[0].reason, "server mail is the terminal's");
    }

    #[test]
    fn function_names_are_what_openai_accepts_and_never_collide() {
        assert_eq!(function_name("my server", "do/it"), "my_server__do_it");
        assert_eq!(function_name(&"s".repeat(40), &"t".repeat(40)).len(), 64);
        let mut servers = BTreeMap::new();
        servers.insert(
            "a".to_string(),
            vec![tool("x.y", false), tool("x_y", false)],
        );
        let c = Catalog {
            servers,
            ..Catalog::default()
        };
        let (offers, _) = resolve(&["a.*".to_string()], &c, false);
        assert_eq!(
            offers
                .iter()
                .map(|o| o.function.as_str())
                .collect::<Vec<_>>(),
            ["a__x_y", "a__x_y_2"]
        );
        let s = schema(&offers[1], &c);
        assert_eq!(s["function"]["name"], "a__x_y_2");
        assert_eq!(s["function"]["description"], "a.x_y: does x_y");
        assert_eq!(
            s["function"]["parameters"]["properties"]["x"]["type"],
            "string"
        );
    }

    #[test]
    fn check_names_the_note_the_tool_and_what_is_offered() {
        let files = BTreeMap::from([(
            "send.md".to_string(),
            "---\ntype: start\ntools: [send_email, files.write_file]\n---\n# Send\n".to_string(),
        )]);
        let (plan, _) = planvault_core::vault::load(&files);
        let diagnostics = check(&plan, &catalog(), &|f| files.get(f).cloned());
        assert_eq!(diagnostics.len(), 1);
        let d = &diagnostics[0];
        assert_eq!(d.code, Code::UnknownTool);
        assert_eq!(d.file.as_deref(), Some("send.md"));
        assert_eq!((d.line, d.column), (Some(3), Some(9)));
        // Without the text: the note's start.
        let d = &check(&plan, &catalog(), &|_| None)[0];
        assert_eq!((d.line, d.column), (Some(1), Some(1)));
        assert_eq!(
            d.message,
            "send.md declares the tool `send_email`: no configured server offers it; offered: \
built-in list_notes, read_note, write_note, fetch_url; empty (no tools); \
files.read_file, files.write_file; web.search, web.read_file, web.a.b"
        );
    }

    #[test]
    fn a_generated_steps_llm_is_the_runners_and_its_other_tools_are_checked() {
        let text = r#"{"nodes": [
            {"id": "ask", "capability": "llm", "args": {"prompt": "hi"}},
            {"id": "put", "capability": "files.write_file", "args": {}, "dependsOn": ["ask"]},
            {"id": "mail", "capability": "send_email", "args": {}, "dependsOn": ["put"]}
        ]}"#;
        let (plan, _) = planvault_core::generated::parse(
            "plan.json",
            text,
            &planvault_core::generated::Options::default(),
        );
        let diagnostics = check(&plan, &catalog(), &|_| None);
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].contains("the tool `send_email`"),
            "{messages:?}"
        );
    }

    #[test]
    fn an_entry_is_found_in_an_inline_or_block_list_and_not_inside_another_name() {
        let inline = "---\ntype: step\ntools: [search_all, search]\n---\nsearch\n";
        assert_eq!(locate(inline, "search"), Some((3, 21)));
        let block = "\u{feff}---\ntools:\n  - files.write_file\n  - \"send\"\nrole: x\n---\n";
        assert_eq!(locate(block, "send"), Some((4, 6)));
        assert_eq!(locate(block, "files.write_file"), Some((3, 5)));
        assert_eq!(locate(block, "write_file"), None);
        assert_eq!(locate("no frontmatter\ntools: [a]\n", "a"), None);
        assert_eq!(locate("---\nrole: a\n---\n", "a"), None);
        // Once an endless search (`tools: [""]` hung validate and the app).
        assert_eq!(locate("---\ntools: [\"\"]\n---\n", ""), Some((2, 9)));
        assert_eq!(locate("---\ntools:\n  - ''\n---\n", ""), Some((3, 5)));
        assert_eq!(locate("---\ntools: [a]\n---\n", ""), None);
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod props {
        use super::super::locate;
        use proptest::prelude::*;

        proptest! {
            /// Whatever a note's `tools:` holds (names of any text, quoted
            /// or not, inline or as a block), looking any entry up ends, and
            /// a place found is where that entry is written.
            #[test]
            fn every_lookup_ends_and_points_at_the_entry(
                entries in proptest::collection::vec("[a-z.\"' \\[\\]é-]{0,6}", 0..5),
                block in any::<bool>(),
                wanted in "[a-z.\"'é]{0,3}",
            ) {
                let list = if block {
                    entries.iter().map(|e| format!("\n  - {e}")).collect::<String>()
                } else {
                    format!(" [{}]", entries.join(", "))
                };
                let text = format!("---\ntools:{list}\n---\n# Note\n");
                if let Some((line, column)) = locate(&text, &wanted) {
                    let line = text.lines().nth(line as usize - 1).unwrap();
                    let at: String = line.chars().skip(column as usize - 1).collect();
                    if wanted.is_empty() {
                        prop_assert!(at.starts_with("\"\"") || at.starts_with("''"), "{at:?}");
                    } else {
                        prop_assert!(at.starts_with(&wanted), "{at:?} for {wanted:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_huge_result_is_cut_with_a_note() {
        assert_eq!(bound("short", 10), "short");
        let cut = bound(&"é".repeat(30), 10);
        assert!(cut.starts_with(&"é".repeat(10)));
        assert!(cut.ends_with("[… cut: the result had 30 characters; the first 10 are shown]"));
    }
}
