//! The checks the first paint does not wait for, as diagnostics on the
//! canvas and in the lists: `unknown-tool` and, in a SilverBullet space,
//! `silverbullet-reads-otherwise`.
//!
//! `unknown-tool`: tools a note declares that nothing provides in the
//! browser. The built-ins, the vault config's URL servers and those added
//! in Settings are what a browser run reaches; a command (stdio) server's
//! tools are the terminal's alone. A URL server's tools are known once it
//! was listed (Settings → Test); until then an entry it may offer is not
//! judged. The rules are the runner's (`planvault_llm::mcp::resolve`), so
//! what is flagged here is what a browser run would refuse: with a server
//! configured the run stops before any model call (an error), with none it
//! goes on without the tool (a warning).
//!
//! `silverbullet-reads-otherwise`: in a vault SilverBullet also opens (its
//! root's `CONFIG.md` has a `space-lua` block), each link SilverBullet
//! would read as another page, as `planvault validate` says it
//! (`vault::silverbullet`).
//!
//! Both (the runner's rules, the config's reader, SilverBullet's reading)
//! are a part of the app, `on_demand::later_checks`: the first paint does
//! not wait for it. Until it is in, [`check`] finds nothing and the
//! listings are not known, so nothing is judged; once it is, `keep_in_step`
//! tells the open doc, which checks its plan then and on every edit after.

use crate::settings::{config_servers, ConfigServer};
use planvault_core::vault::silverbullet;
use planvault_core::{Code, Diagnostic, NodeExt, Plan, SourcePos};
use planvault_llm::mcp::{self, Catalog, McpTool};
use planvault_llm::tools::TOOLS;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Where a vault lists its MCP servers (read with the notes).
pub const CONFIG_FILE: &str = ".planvault/config.toml";

/// What this browser knows of MCP servers besides the vault's config.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listings {
    /// The app has said what it knows and has the check's code (a doc just
    /// read is not checked yet).
    pub known: bool,
    /// Server names added in Settings (URLs).
    pub added: Vec<String>,
    /// The tools each server listed when tested, by server name.
    pub listed: BTreeMap<String, Vec<String>>,
}

/// The check, once its part is in: called through this pointer, its code
/// is not in the main module.
type Check = fn(&Plan, &BTreeMap<String, String>, &Listings) -> Vec<Diagnostic>;
static CHECK: OnceLock<Check> = OnceLock::new();

/// Makes [`check`] judge (its part calls this when it is in).
pub fn install() {
    let _ = CHECK.set(judge);
}

/// The codes of what [`check`] finds: what a doc drops before it checks
/// again.
pub const CODES: [Code; 2] = [Code::UnknownTool, Code::SilverbulletReadsOtherwise];

/// One diagnostic per declared tool a browser run would not offer, and per
/// link SilverBullet reads otherwise; none before the app says what it
/// knows, or while the check is not in.
pub fn check(
    plan: &Plan,
    files: &BTreeMap<String, String>,
    listings: &Listings,
) -> Vec<Diagnostic> {
    match CHECK.get() {
        Some(judge) if listings.known => judge(plan, files, listings),
        _ => Vec::new(),
    }
}

fn judge(plan: &Plan, files: &BTreeMap<String, String>, listings: &Listings) -> Vec<Diagnostic> {
    let mut out = judge_tools(plan, files, listings);
    if silverbullet::is_space(files) {
        out.extend(silverbullet::check(files, plan));
    }
    out
}

fn judge_tools(
    plan: &Plan,
    files: &BTreeMap<String, String>,
    listings: &Listings,
) -> Vec<Diagnostic> {
    // A config the app cannot read is reported in Settings; nothing is
    // judged against it here.
    let Ok(config) = config_servers(files.get(CONFIG_FILE).map_or("", String::as_str)) else {
        return Vec::new();
    };
    let mut urls: BTreeSet<&str> = listings.added.iter().map(String::as_str).collect();
    let mut commands = Vec::new();
    for server in &config {
        match server {
            ConfigServer::Url { name, .. } => {
                urls.insert(name);
            }
            ConfigServer::Command { name, .. } => commands.push(name.as_str()),
        }
    }
    // A URL added in Settings under a command server's name is reachable.
    commands.retain(|c| !urls.contains(c));
    let mut catalog = Catalog::default();
    for name in &commands {
        catalog.unreachable.insert(
            name.to_string(),
            "runs a command, which only the terminal starts (planvault run), so it is not available in the browser"
                .into(),
        );
    }
    let unlisted: Vec<&str> = urls
        .iter()
        .copied()
        .filter(|u| !listings.listed.contains_key(*u))
        .collect();
    for (server, tools) in &listings.listed {
        if urls.contains(server.as_str()) {
            let tools = tools
                .iter()
                .map(|name| McpTool {
                    name: name.clone(),
                    description: String::new(),
                    input_schema: serde_json::Value::Null,
                    ask: false,
                    read_only: false,
                })
                .collect();
            catalog.servers.insert(server.clone(), tools);
        }
    }
    let configured = !urls.is_empty() || !commands.is_empty();
    let mut out = Vec::new();
    for node in &plan.nodes {
        let NodeExt::Vault(v) = &node.ext else {
            continue;
        };
        for entry in node.tools.iter().filter(|t| !TOOLS.contains(&t.as_str())) {
            let server = entry.split_once('.').map(|(s, _)| s);
            let named_known =
                server.is_some_and(|s| catalog.servers.contains_key(s) || commands.contains(&s));
            // Maybe a tool of a server not listed yet: not judged.
            if server.is_some_and(|s| unlisted.contains(&s))
                || (!named_known && !unlisted.is_empty())
            {
                continue;
            }
            let (_, missing) = mcp::resolve(std::slice::from_ref(entry), &catalog, false);
            let Some(m) = missing.into_iter().next() else {
                continue;
            };
            let reason = if server.is_none() && !commands.is_empty() {
                format!(
                    "no server the browser reaches offers it (the terminal's command servers may: {})",
                    commands.join(", ")
                )
            } else {
                m.reason
            };
            let message = format!(
                "{} declares the tool `{entry}`, which nothing provides in the browser: {reason}; {}",
                v.file,
                if configured {
                    "a run here stops before any model call"
                } else {
                    "a run goes on without it"
                }
            );
            let d = if configured {
                Diagnostic::error(Code::UnknownTool, message)
            } else {
                Diagnostic::warning(Code::UnknownTool, message)
            };
            let (line, column) = files
                .get(&v.file)
                .and_then(|t| mcp::locate(t, entry))
                .unwrap_or((1, 1));
            out.push(d.with_nodes([node.id.clone()]).at(&SourcePos::new(
                v.file.clone(),
                line,
                column,
            )));
        }
    }
    out
}

/// Fetches the check's part, then tells the open doc what this browser
/// knows of MCP servers, whenever that changes (Settings saved, a server
/// tested) or a doc was read anew.
#[cfg(target_arch = "wasm32")]
pub fn keep_in_step(state: crate::state::AppState) {
    use crate::run_client::McpTest;
    use leptos::prelude::*;
    let run = state.run;
    let loaded = RwSignal::new(false);
    leptos::task::spawn_local(async move {
        let mut retry = crate::on_demand::Retry::new();
        while crate::on_demand::load_later_checks().await.is_err() {
            state.message.set(
                "Tools the notes declare are not checked yet: the check could not be loaded \
                 (the server may be down or have a newer planvault: then reload the page); \
                 trying again"
                    .into(),
            );
            retry.wait().await;
        }
        loaded.set(true);
    });
    let known = Memo::new(move |_| Listings {
        known: loaded.get(),
        added: run.settings.with(|s| {
            s.mcp
                .iter()
                .map(|m| m.name.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        }),
        listed: run.mcp_tests.with(|tests| {
            tests
                .iter()
                .filter_map(|(server, test)| match test {
                    McpTest::Tools(tools) => Some((server.clone(), tools.clone())),
                    _ => None,
                })
                .collect()
        }),
    });
    Effect::new(move |_| {
        let listings = known.get();
        let stale = state
            .open
            .with(|o| o.as_ref().is_some_and(|o| o.doc.listings != listings));
        if stale {
            state.open.update(|o| {
                if let Some(o) = o {
                    *o = crate::state::Open::new(o.doc.with_listings(listings));
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::VaultDoc;
    use planvault_core::Severity;

    fn doc(config: Option<&str>) -> VaultDoc {
        let mut files: BTreeMap<String, String> = [
            ("a.md", "---\ntype: start\ntools: [fetch_url, outbox.write_file]\n---\n# A\n\n## Next\n- [[b]]\n"),
            ("b.md", "---\ntools:\n  - search.find\n  - lookup\n---\n# B\n"),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
        if let Some(c) = config {
            files.insert(CONFIG_FILE.into(), c.into());
        }
        VaultDoc::new(files)
    }

    fn found(doc: &VaultDoc, listings: &Listings) -> Vec<(String, Severity, String)> {
        install();
        check(&doc.checked.plan, &doc.files, listings)
            .into_iter()
            .map(|d| {
                let at = format!(
                    "{}:{}:{}",
                    d.file.unwrap_or_default(),
                    d.line.unwrap_or(0),
                    d.column.unwrap_or(0)
                );
                (at, d.severity, d.message)
            })
            .collect()
    }

    fn known() -> Listings {
        install();
        Listings {
            known: true,
            ..Listings::default()
        }
    }

    #[test]
    fn nothing_is_judged_before_the_app_says_what_it_knows() {
        assert!(found(&doc(None), &Listings::default()).is_empty());
    }

    #[test]
    fn without_servers_each_undeclared_tool_is_a_warning_at_its_entry() {
        let got = found(&doc(None), &known());
        assert_eq!(got.len(), 3, "{got:#?}");
        assert_eq!(got[0].0, "a.md:3:20");
        assert_eq!(got[0].1, Severity::Warning);
        assert!(got[0].2.starts_with("a.md declares the tool `outbox.write_file`, which nothing provides in the browser: no MCP server is configured"), "{}", got[0].2);
        assert!(got[0].2.ends_with("a run goes on without it"));
        assert_eq!(got[1].0, "b.md:3:5");
        assert_eq!(got[2].0, "b.md:4:5");
    }

    #[test]
    fn a_command_servers_tools_are_not_available_in_the_browser() {
        let config = "[mcp.servers.outbox]\ncommand = \"npx\"\n\n[mcp.servers.search]\nurl = \"http://127.0.0.1:9/mcp\"\n";
        let doc = doc(Some(config));
        // search is not listed yet: its entries, and the bare `lookup`, wait.
        let got = found(&doc, &known());
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].1, Severity::Error);
        assert!(got[0].2.contains("`outbox.write_file`, which nothing provides in the browser: server outbox runs a command, which only the terminal starts"), "{}", got[0].2);
        assert!(got[0].2.ends_with("a run here stops before any model call"));
        // Listed: search.find is there, lookup is nobody's.
        let listed = Listings {
            listed: [("search".to_string(), vec!["find".to_string()])].into(),
            ..known()
        };
        let got = found(&doc, &listed);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(got[1].2.contains("`lookup`, which nothing provides in the browser: no server the browser reaches offers it (the terminal's command servers may: outbox)"), "{}", got[1].2);
        // A URL added in Settings under the command server's name reaches it.
        let added = Listings {
            added: vec!["outbox".into()],
            listed: [
                ("outbox".to_string(), vec!["write_file".to_string()]),
                (
                    "search".to_string(),
                    vec!["find".to_string(), "lookup".to_string()],
                ),
            ]
            .into(),
            ..known()
        };
        assert!(found(&doc, &added).is_empty());
    }

    #[test]
    fn the_doc_carries_them_with_its_other_diagnostics() {
        let doc = doc(None).with_listings(known());
        let tools: Vec<_> = doc
            .checked
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::UnknownTool)
            .collect();
        assert_eq!(tools.len(), 3);
        // An edit keeps them (checked again), a second telling replaces them.
        let edited = doc.with_changes([("b.md", Some("# B\n"))]);
        assert_eq!(
            edited
                .checked
                .diagnostics
                .iter()
                .filter(|d| d.code == Code::UnknownTool)
                .count(),
            1
        );
        let again = edited.with_listings(known());
        assert_eq!(
            again
                .checked
                .diagnostics
                .iter()
                .filter(|d| d.code == Code::UnknownTool)
                .count(),
            1
        );
    }
}
