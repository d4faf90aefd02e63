//! Run settings: where the work comes from (a person in manual mode, or
//! OpenAI-compatible endpoints per role), retries and budgets.
//!
//! Pure (tested natively). They are kept in this browser's localStorage,
//! API keys and MCP servers' tokens included, and nowhere else: `Debug`
//! redacts them, a URL carrying credentials is refused, and
//! [`Settings::forget_keys`] wipes them.
//!
//! MCP servers: those the vault's `.planvault/config.toml` lists
//! ([`config_servers`]; a URL one is used here, a command one only by the
//! terminal) and the URLs added here.

use planvault_core::engine::Autonomy;
use planvault_protocol::{Endpoint, Endpoints, McpServer, RetryPolicy, RunMode};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The localStorage key.
pub const STORAGE_KEY: &str = "planvault.run-settings.v1";

/// Manual or model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A person answers each node's work and each judgment: needs nothing.
    #[default]
    Manual,
    Model,
}

/// One endpoint as typed into the form (empty strings: not set).
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EndpointForm {
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub api_key: String,
}

impl std::fmt::Debug for EndpointForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointForm")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field(
                "api_key",
                &if self.api_key.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .finish()
    }
}

impl EndpointForm {
    pub fn is_empty(&self) -> bool {
        self.base_url.trim().is_empty() && self.model.trim().is_empty() && self.api_key.is_empty()
    }

    fn endpoint(&self, name: &str) -> Result<Endpoint, SettingsError> {
        let base = self.base_url.trim().trim_end_matches('/');
        let scheme_ok = base.starts_with("http://") || base.starts_with("https://");
        let rest = base.split_once("://").map_or("", |(_, r)| r);
        if !scheme_ok || rest.is_empty() {
            return Err(SettingsError::BadUrl {
                endpoint: name.into(),
                url: base.into(),
            });
        }
        // A key must travel as a header, never inside the URL.
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.contains('@') || base.contains('?') || base.contains('#') {
            return Err(SettingsError::CredentialsInUrl {
                endpoint: name.into(),
            });
        }
        if self.model.trim().is_empty() {
            return Err(SettingsError::NoModel {
                endpoint: name.into(),
            });
        }
        let key = self.api_key.trim();
        Ok(Endpoint {
            base_url: base.to_string(),
            model: self.model.trim().to_string(),
            api_key: (!key.is_empty()).then(|| key.to_string()),
        })
    }
}

/// Checks a URL typed into the settings: http(s), no credentials in it.
fn check_url(url: &str, name: &str) -> Result<(), SettingsError> {
    let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    if !scheme_ok || rest.is_empty() {
        return Err(SettingsError::BadUrl {
            endpoint: name.into(),
            url: url.into(),
        });
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(SettingsError::CredentialsInUrl {
            endpoint: name.into(),
        });
    }
    Ok(())
}

/// An MCP server added in the settings: a Streamable HTTP URL (the browser
/// starts no process) and its token, kept in this browser only.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct McpForm {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub token: String,
}

impl std::fmt::Debug for McpForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpForm")
            .field("name", &self.name)
            .field("url", &self.url)
            .field(
                "token",
                &if self.token.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .finish()
    }
}

/// A token typed into the settings: stored as its text, shown by `Debug`
/// as `<redacted>`.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() {
            "\"\""
        } else {
            "<redacted>"
        })
    }
}

/// A server the vault's `.planvault/config.toml` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigServer {
    /// Streamable HTTP: used by the browser too.
    Url {
        name: String,
        url: String,
        approve: Vec<String>,
        timeout_secs: Option<u64>,
        /// The variable the terminal reads its token from; here the token
        /// is typed into the settings instead.
        token_env: Option<String>,
    },
    /// A child process: only `planvault run` can start it.
    Command { name: String, command: String },
}

impl ConfigServer {
    pub fn name(&self) -> &str {
        match self {
            ConfigServer::Url { name, .. } | ConfigServer::Command { name, .. } => name,
        }
    }
}

/// The config's command (stdio) servers by name: the terminal's alone.
pub fn command_servers(config: &[ConfigServer]) -> Vec<String> {
    config
        .iter()
        .filter(|s| matches!(s, ConfigServer::Command { .. }))
        .map(|s| s.name().to_string())
        .collect()
}

/// The localStorage key of the configs' reaches trusted in this browser.
pub const TRUSTED_KEY: &str = "planvault.trusted-configs.v1";

/// What a vault's config has a browser run reach beyond the vault: its URL
/// servers, and the private hosts it opens to `fetch_url` (a command server
/// and an endpoint there are the terminal's; the browser's endpoints are
/// its own settings). Empty: nothing to trust.
pub fn config_reach(servers: &[ConfigServer], allow_hosts: &[String]) -> Vec<String> {
    use planvault_runner::settings::{fetch_reach, url_server_reach};
    let mut reach: Vec<String> = servers
        .iter()
        .filter_map(|s| match s {
            ConfigServer::Url { name, url, .. } => Some(url_server_reach(name, url, None)),
            ConfigServer::Command { .. } => None,
        })
        .collect();
    if !allow_hosts.is_empty() {
        reach.push(fetch_reach(allow_hosts));
    }
    reach
}

/// Whether `reach` was trusted in this browser (`stored`: what
/// [`TRUSTED_KEY`] holds: each trusted reach's lines, a blank line after
/// each; a reach's line is never blank).
pub fn is_trusted(stored: Option<&str>, reach: &[String]) -> bool {
    let entry = reach_entry(reach);
    reach.is_empty()
        || stored.is_some_and(|s| s.split_inclusive("\n\n").any(|trusted| trusted == entry))
}

/// What [`TRUSTED_KEY`] holds once `reach` is trusted too.
pub fn with_trusted(stored: Option<&str>, reach: &[String]) -> String {
    let stored = stored.unwrap_or_default();
    match is_trusted(Some(stored), reach) {
        true => stored.to_string(),
        false => format!("{stored}{}", reach_entry(reach)),
    }
}

fn reach_entry(reach: &[String]) -> String {
    let mut entry = reach.join("\n");
    entry.push_str("\n\n");
    entry
}

/// The MCP servers of a `.planvault/config.toml`: its `[mcp.servers.NAME]`
/// tables as the README documents them (strings, one- or multi-line arrays
/// of strings, integers, comments). The CLI reads the file as full TOML and
/// checks every entry; the app reads only what the browser needs, with a
/// reader of that shape instead of a TOML crate (which cost the app ~36 KB
/// gzipped). A line it cannot read is an error naming it.
pub fn config_servers(text: &str) -> Result<Vec<ConfigServer>, String> {
    #[derive(Default)]
    struct Entry {
        command: Option<String>,
        url: Option<String>,
        token_env: Option<String>,
        approve: Vec<String>,
        timeout_secs: Option<u64>,
    }
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let at = |what: &str| format!(".planvault/config.toml:{}: {what}", i + 1);
        let line = uncomment(raw).trim().to_string();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            current = table_server(&line);
            if let Some(name) = &current {
                entries.entry(name.clone()).or_default();
            }
            continue;
        }
        let Some(name) = &current else { continue };
        let Some((key, value)) = line.split_once('=') else {
            return Err(at("expected key = value"));
        };
        let mut value = value.trim().to_string();
        // An array may go on over lines until its closing bracket.
        while value.starts_with('[') && !closed(&value) {
            let Some((_, more)) = lines.next() else {
                return Err(at("an array without its closing ]"));
            };
            value.push(' ');
            value.push_str(uncomment(more).trim());
        }
        let entry = entries.entry(name.clone()).or_default();
        let key = key.trim().trim_matches('"');
        match key {
            "url" | "command" | "token_env" => {
                let text = string(&value).ok_or_else(|| at(&format!("{key} is not a string")))?;
                match key {
                    "url" => {
                        if let Some(why) = planvault_runner::settings::url_unshowable(&text) {
                            return Err(at(&format!("[mcp.servers.{name}] url {why}")));
                        }
                        entry.url = Some(text)
                    }
                    "command" => entry.command = Some(text),
                    _ => entry.token_env = Some(text),
                }
            }
            "approve" => {
                entry.approve =
                    strings(&value).ok_or_else(|| at("approve is not an array of strings"))?
            }
            "timeout_secs" => {
                entry.timeout_secs = Some(
                    value
                        .parse()
                        .map_err(|_| at("timeout_secs is not a whole number"))?,
                )
            }
            // args, env, cwd: the terminal's.
            _ => {}
        }
    }
    entries
        .into_iter()
        .map(|(name, e)| match (e.url, e.command) {
            (Some(url), None) => Ok(ConfigServer::Url {
                name,
                url,
                approve: e.approve,
                timeout_secs: e.timeout_secs,
                token_env: e.token_env,
            }),
            (None, Some(command)) => Ok(ConfigServer::Command { name, command }),
            _ => Err(format!(
                ".planvault/config.toml: [mcp.servers.{name}] needs either command or url"
            )),
        })
        .collect()
}

/// A line without its `#` comment (a `#` inside a string stays).
fn uncomment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
    }
    line
}

/// `NAME` of a `[mcp.servers.NAME]` header (bare or quoted), else `None`.
fn table_server(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?.trim();
    let rest = inner.strip_prefix("mcp.servers.")?.trim();
    let name = match rest.strip_prefix('"') {
        Some(quoted) => quoted.strip_suffix('"')?,
        None => rest,
    };
    (!name.is_empty() && !name.contains('.')).then(|| name.to_string())
}

/// Whether an array's brackets close (outside strings).
fn closed(value: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for c in value.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '[' => depth += 1,
            None if c == ']' => depth -= 1,
            None => {}
        }
    }
    depth <= 0
}

/// A TOML basic ("…", with its common escapes) or literal ('…') string.
fn string(value: &str) -> Option<String> {
    let value = value.trim();
    if let Some(lit) = value.strip_prefix('\'') {
        let lit = lit.strip_suffix('\'')?;
        return (!lit.contains('\'')).then(|| lit.to_string());
    }
    let body = value.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => out.push(match chars.next()? {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                '"' => '"',
                '\\' => '\\',
                _ => return None,
            }),
            c => out.push(c),
        }
    }
    Some(out)
}

/// A one-level array of strings.
fn strings(value: &str) -> Option<Vec<String>> {
    let inner = value.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    let mut item = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match quote {
            Some(q) => {
                item.push(c);
                if c == q && !item.ends_with("\\\"") {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                item.push(c);
            }
            None if c == ',' => {
                out.push(string(&item)?);
                item.clear();
            }
            None => item.push(c),
        }
    }
    if !item.trim().is_empty() {
        out.push(string(&item)?);
    }
    Some(out)
}

/// Why the settings cannot start a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{endpoint}: the base URL must start with http:// or https:// (got “{url}”)")]
    BadUrl { endpoint: String, url: String },
    #[error("{endpoint}: put the API key in its own field, not in the base URL")]
    CredentialsInUrl { endpoint: String },
    #[error("{endpoint}: name the model")]
    NoModel { endpoint: String },
    #[error("MCP server “{name}”: a name is letters, digits, - and _ (it prefixes its tools: {name}.tool)")]
    BadServerName { name: String },
    #[error("MCP server “{name}” is named twice (the vault's config or this list already has it)")]
    DuplicateServer { name: String },
    #[error(
        "no endpoint for role “{role}” and no default endpoint: fill one in, or pick manual mode"
    )]
    NoEndpoint { role: String },
}

/// Everything in the settings panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub source: Source,
    pub default: EndpointForm,
    /// Named roles (`role:` in notes).
    pub roles: BTreeMap<String, EndpointForm>,
    pub retry: RetryPolicy,
    pub max_steps: u32,
    /// Ask a person at `type: human` / `@human` nodes (else the run decides).
    pub ask_humans: bool,
    /// Run a PLAN.md's independent items together (Leopold's `--parallel`).
    pub parallel: bool,
    /// The most bytes one model request may carry (a vault's `[run]
    /// max_prompt_bytes` wins).
    pub max_prompt_bytes: u32,
    /// MCP servers added here (URLs).
    pub mcp: Vec<McpForm>,
    /// Tokens of the vault config's URL servers, by server name and URL
    /// ([`token_key`]).
    pub mcp_tokens: BTreeMap<String, Secret>,
}

/// The key a config server's token is kept under: its name and the URL it
/// was typed for. A token goes to that URL only: another vault's config
/// naming a server alike with its own URL gets none, and a config whose
/// URL changed asks for the token again.
pub fn token_key(name: &str, url: &str) -> String {
    format!("{name} {}", url.trim())
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            source: Source::Manual,
            default: EndpointForm::default(),
            roles: BTreeMap::new(),
            retry: RetryPolicy::default(),
            max_steps: 100,
            ask_humans: true,
            parallel: false,
            max_prompt_bytes: 1_000_000,
            mcp: Vec::new(),
            mcp_tokens: BTreeMap::new(),
        }
    }
}

impl Settings {
    /// What was stored (or the defaults: manual mode, nothing configured).
    pub fn load(stored: Option<&str>) -> Settings {
        stored
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Removes every API key and MCP server token.
    pub fn forget_keys(&mut self) {
        self.default.api_key.clear();
        for e in self.roles.values_mut() {
            e.api_key.clear();
        }
        for m in &mut self.mcp {
            m.token.clear();
        }
        self.mcp_tokens.clear();
    }

    pub fn has_keys(&self) -> bool {
        !self.default.api_key.is_empty()
            || self.roles.values().any(|e| !e.api_key.is_empty())
            || self.mcp.iter().any(|m| !m.token.is_empty())
            || self.mcp_tokens.values().any(|t| !t.0.is_empty())
    }

    /// The MCP servers a browser run reaches: the config's URL servers
    /// (with the token typed here), then the URLs added here. A command
    /// server is left to the terminal (its tools are then not offered, and
    /// a node declaring one stops the run before any model call).
    pub fn mcp_servers(&self, config: &[ConfigServer]) -> Result<Vec<McpServer>, SettingsError> {
        let mut out: Vec<McpServer> = Vec::new();
        let token = |t: &str| {
            let t = t.trim();
            (!t.is_empty()).then(|| t.to_string())
        };
        for server in config {
            if let ConfigServer::Url {
                name,
                url,
                approve,
                timeout_secs,
                ..
            } = server
            {
                out.push(McpServer {
                    name: name.clone(),
                    url: url.trim().to_string(),
                    token: self
                        .mcp_tokens
                        .get(&token_key(name, url))
                        .and_then(|t| token(&t.0)),
                    approve: approve.clone(),
                    timeout_ms: timeout_secs
                        .map(|s| s.saturating_mul(1000).min(u32::MAX.into()) as u32),
                });
            }
        }
        for form in &self.mcp {
            let (name, url) = (form.name.trim(), form.url.trim());
            if name.is_empty() && url.is_empty() {
                continue;
            }
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(SettingsError::BadServerName { name: name.into() });
            }
            if out.iter().any(|s| s.name == name) || config.iter().any(|s| s.name() == name) {
                return Err(SettingsError::DuplicateServer { name: name.into() });
            }
            check_url(url, &format!("MCP server “{name}”"))?;
            out.push(McpServer {
                name: name.to_string(),
                url: url.to_string(),
                token: token(&form.token),
                approve: Vec::new(),
                timeout_ms: None,
            });
        }
        Ok(out)
    }

    /// Rows for the vault's roles, so each can be given an endpoint.
    pub fn with_roles<'a>(mut self, roles: impl IntoIterator<Item = &'a str>) -> Settings {
        for role in roles {
            self.roles.entry(role.to_string()).or_default();
        }
        self
    }

    /// The run mode to send, checked against the roles the plan uses.
    pub fn run_mode(&self, roles_used: &BTreeSet<String>) -> Result<RunMode, SettingsError> {
        if self.source == Source::Manual {
            return Ok(RunMode::Manual);
        }
        let default = if self.default.is_empty() {
            None
        } else {
            Some(self.default.endpoint("default endpoint")?)
        };
        let mut roles = BTreeMap::new();
        for (name, form) in &self.roles {
            if !form.is_empty() {
                roles.insert(name.clone(), form.endpoint(&format!("role “{name}”"))?);
            }
        }
        let endpoints = Endpoints { default, roles };
        // The plan's roles, plus a node without one ("" stands for it).
        for role in roles_used {
            let role = (!role.is_empty()).then_some(role.as_str());
            if endpoints.for_role(role).is_none() {
                return Err(SettingsError::NoEndpoint {
                    role: role.unwrap_or("(none)").to_string(),
                });
            }
        }
        Ok(RunMode::Model { endpoints })
    }

    pub fn autonomy(&self) -> Autonomy {
        if self.ask_humans {
            Autonomy::Ask
        } else {
            Autonomy::Full
        }
    }

    /// One line for the run panel: where the answers come from.
    pub fn summary(&self) -> String {
        match self.source {
            Source::Manual => "Manual mode: you answer each step and each judgment".into(),
            Source::Model => {
                let model =
                    |f: &EndpointForm| format!("{} at {}", f.model.trim(), f.base_url.trim());
                let mut parts = Vec::new();
                if !self.default.is_empty() {
                    parts.push(model(&self.default));
                }
                let named = self.roles.iter().filter(|(_, f)| !f.is_empty()).count();
                if named > 0 {
                    parts.push(format!("{named} role endpoint(s)"));
                }
                if parts.is_empty() {
                    "LLM endpoints: none configured yet".into()
                } else {
                    format!("LLM: {}", parts.join(" + "))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL with a line break (or a tab, a space) is refused: the browser
    /// drops them, so the trust bar would show one address and the run
    /// reach another (a red-team pass hid `.evil.example` lines below).
    #[test]
    fn a_config_url_that_reads_otherwise_than_shown_is_refused() {
        let config =
            "[mcp.servers.docs]\nurl = \"https://docs.example.com\\n\\n\\n.evil.example/mcp\"\n";
        let refused = config_servers(config).unwrap_err();
        assert!(
            refused.starts_with(
                ".planvault/config.toml:2: [mcp.servers.docs] url holds a space, tab, line break"
            ),
            "{refused}"
        );
        let tabbed = "[mcp.servers.docs]\nurl = \"https://docs.example.com\\t.evil.example/\"\n";
        assert!(config_servers(tabbed).is_err());
    }

    #[test]
    fn a_configs_reach_in_the_browser_is_its_url_servers_and_private_hosts() {
        let servers = config_servers(CONFIG).unwrap();
        let reach = config_reach(&servers, &["wiki.internal".into(), "10.0.0.2".into()]);
        assert_eq!(
            reach,
            [
                "connects to the MCP server `search` at http://127.0.0.1:3001/mcp",
                "lets `fetch_url` reach the private hosts wiki.internal, 10.0.0.2",
            ]
        );
        assert!(
            config_reach(&servers[..1], &[]).is_empty(),
            "a command server"
        );
        assert!(is_trusted(None, &[]));
        assert!(!is_trusted(None, &reach));
        let stored = with_trusted(None, &reach);
        assert!(is_trusted(Some(&stored), &reach));
        // A changed reach is asked anew; what was trusted stays trusted.
        let other = config_reach(&servers, &["wiki.internal".into()]);
        assert!(!is_trusted(Some(&stored), &other));
        let both = with_trusted(Some(&stored), &other);
        assert!(is_trusted(Some(&both), &reach) && is_trusted(Some(&both), &other));
        assert!(!is_trusted(Some("something else"), &reach));
        // A reach is trusted whole, not as a part of a longer one.
        assert!(!is_trusted(Some(&with_trusted(None, &reach[..1])), &reach));
        assert!(!is_trusted(Some(&stored), &reach[..1]));
    }

    const CONFIG: &str = r#"
[mcp.servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "out"]

[mcp.servers.search]
url = "http://127.0.0.1:3001/mcp"
token_env = "SEARCH_TOKEN"
approve = ["post"]
timeout_secs = 30
"#;

    #[test]
    fn the_configs_url_servers_run_here_and_its_commands_only_in_the_terminal() {
        let config = config_servers(CONFIG).unwrap();
        assert_eq!(
            config,
            vec![
                ConfigServer::Command {
                    name: "files".into(),
                    command: "npx".into()
                },
                ConfigServer::Url {
                    name: "search".into(),
                    url: "http://127.0.0.1:3001/mcp".into(),
                    approve: vec!["post".into()],
                    timeout_secs: Some(30),
                    token_env: Some("SEARCH_TOKEN".into()),
                },
            ]
        );
        let mut s = Settings::default();
        s.mcp_tokens.insert(
            token_key("search", "http://127.0.0.1:3001/mcp"),
            Secret(" tok-1234 ".into()),
        );
        s.mcp.push(McpForm {
            name: "everything".into(),
            url: " http://127.0.0.1:3002/mcp ".into(),
            token: String::new(),
        });
        s.mcp.push(McpForm::default());
        let servers = s.mcp_servers(&config).unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["search", "everything"]);
        // The command server is named to the run, so a node declaring its
        // tools is told it is the terminal's.
        assert_eq!(command_servers(&config), ["files"]);
        assert_eq!(servers[0].token.as_deref(), Some("tok-1234"));
        assert_eq!(servers[0].approve, ["post"]);
        assert_eq!(servers[0].timeout_ms, Some(30_000));
        assert_eq!(servers[1].url, "http://127.0.0.1:3002/mcp");
        assert_eq!(servers[1].token, None);
        assert!(!format!("{s:?}").contains("tok-1234"));
        assert!(s.has_keys());
        s.forget_keys();
        assert!(!s.has_keys());
        // Kept with the rest, in this browser's storage.
        assert_eq!(Settings::load(Some(&s.to_json())), s);
    }

    /// A token goes only to the URL it was typed for: another vault whose
    /// config names a server alike with its own URL gets none, so its
    /// server never sees the token.
    #[test]
    fn a_config_server_s_token_goes_only_to_the_url_it_was_typed_for() {
        let mut s = Settings::default();
        s.mcp_tokens.insert(
            token_key("search", "https://search.example/mcp"),
            Secret("tok-1234".into()),
        );
        let token_for = |url: &str| {
            let config = config_servers(&format!("[mcp.servers.search]\nurl = {url:?}\n")).unwrap();
            s.mcp_servers(&config).unwrap()[0].token.clone()
        };
        assert_eq!(
            token_for("https://search.example/mcp").as_deref(),
            Some("tok-1234")
        );
        assert_eq!(token_for("http://evil.example/mcp"), None);
        assert_eq!(token_for("https://search.example/other"), None);
    }

    #[test]
    fn an_added_server_is_checked() {
        let config = config_servers(CONFIG).unwrap();
        let with = |name: &str, url: &str| Settings {
            mcp: vec![McpForm {
                name: name.into(),
                url: url.into(),
                token: String::new(),
            }],
            ..Settings::default()
        };
        assert_eq!(
            with("files", "http://x/mcp").mcp_servers(&config),
            Err(SettingsError::DuplicateServer {
                name: "files".into()
            })
        );
        assert_eq!(
            with("a.b", "http://x/mcp").mcp_servers(&config),
            Err(SettingsError::BadServerName { name: "a.b".into() })
        );
        assert!(matches!(
            with("s", "ftp://x").mcp_servers(&config),
            Err(SettingsError::BadUrl { .. })
        ));
        assert!(matches!(
            with("s", "http://user:pw@x/mcp").mcp_servers(&config),
            Err(SettingsError::CredentialsInUrl { .. })
        ));
        assert!(config_servers("[mcp.servers.x]\nargs = []\n")
            .unwrap_err()
            .contains("[mcp.servers.x] needs either command or url"));
        assert_eq!(config_servers("").unwrap(), vec![]);
        // Other tables, comments, quoted names and multi-line arrays.
        let other = r#"
[endpoint]
model = "m" # a comment
[mcp.servers."s-1"]   # quoted
url = 'http://h/mcp#frag'
approve = [
  "a", # first
  'b',
]
[mcp.servers.s-1.extra]
url = "ignored"
"#;
        assert_eq!(
            config_servers(other).unwrap(),
            vec![ConfigServer::Url {
                name: "s-1".into(),
                url: "http://h/mcp#frag".into(),
                approve: vec!["a".into(), "b".into()],
                timeout_secs: None,
                token_env: None,
            }]
        );
        assert_eq!(
            config_servers("[mcp.servers.x]\nurl = http://x\n").unwrap_err(),
            ".planvault/config.toml:2: url is not a string"
        );
        assert_eq!(
            config_servers("[mcp.servers.x]\nurl\n").unwrap_err(),
            ".planvault/config.toml:2: expected key = value"
        );
    }

    fn form(url: &str, model: &str, key: &str) -> EndpointForm {
        EndpointForm {
            base_url: url.into(),
            model: model.into(),
            api_key: key.into(),
        }
    }

    fn used(roles: &[&str]) -> BTreeSet<String> {
        roles.iter().map(|r| r.to_string()).collect()
    }

    #[test]
    fn nothing_configured_means_manual_mode() {
        let s = Settings::load(None);
        assert_eq!(s.source, Source::Manual);
        assert_eq!(s.run_mode(&used(&["writer", ""])), Ok(RunMode::Manual));
        assert_eq!(Settings::load(Some("not json")), Settings::default());
        assert_eq!(s.autonomy(), Autonomy::Ask, "people are asked by default");
        // Settings stored before the prompt budget existed get its default.
        let old = Settings::load(Some(r#"{"source":"model","max_steps":7}"#));
        assert_eq!((old.max_steps, old.max_prompt_bytes), (7, 1_000_000));
    }

    #[test]
    fn roles_fall_back_to_the_default_endpoint() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        }
        .with_roles(["writer", "review"]);
        s.default = form("http://127.0.0.1:11434/v1/", "llama3", "");
        s.roles.insert(
            "review".into(),
            form("https://api.example.com/v1", "big", "sk-1"),
        );
        let RunMode::Model { endpoints } = s.run_mode(&used(&["writer", "review", ""])).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            endpoints.default.as_ref().unwrap().base_url,
            "http://127.0.0.1:11434/v1",
            "trailing / trimmed"
        );
        assert_eq!(endpoints.default.as_ref().unwrap().api_key, None);
        assert_eq!(endpoints.for_role(Some("writer")).unwrap().model, "llama3");
        assert_eq!(
            endpoints
                .for_role(Some("review"))
                .unwrap()
                .api_key
                .as_deref(),
            Some("sk-1")
        );
        assert!(
            !endpoints.roles.contains_key("writer"),
            "an empty row is not an endpoint"
        );
    }

    #[test]
    fn a_role_without_any_endpoint_is_refused_by_name() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        };
        s.roles
            .insert("review".into(), form("http://h/v1", "m", ""));
        assert_eq!(
            s.run_mode(&used(&["writer"])),
            Err(SettingsError::NoEndpoint {
                role: "writer".into()
            })
        );
    }

    #[test]
    fn bad_urls_and_keys_in_urls_are_refused() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        };
        s.default = form("127.0.0.1:8080", "m", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::BadUrl { .. })
        ));
        s.default = form("https://user:sk-secret@api.example.com/v1", "m", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::CredentialsInUrl { .. })
        ));
        s.default = form("https://api.example.com/v1?key=sk-secret", "m", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::CredentialsInUrl { .. })
        ));
        s.default = form("https://api.example.com/v1", " ", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::NoModel { .. })
        ));
    }

    #[test]
    fn keys_round_trip_through_storage_and_can_be_forgotten() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        };
        s.default = form("http://h/v1", "m", "sk-default");
        s.roles
            .insert("review".into(), form("http://h/v1", "m", "sk-review"));
        s.retry.attempts = 2;
        let stored = s.to_json();
        assert_eq!(Settings::load(Some(&stored)), s);
        assert!(s.has_keys());
        assert!(!format!("{s:?}").contains("sk-"), "Debug never shows a key");
        s.forget_keys();
        assert!(!s.has_keys());
        assert!(!s.to_json().contains("sk-"));
        assert_eq!(s.default.base_url, "http://h/v1", "only the keys go");
    }

    #[test]
    fn the_summary_says_where_answers_come_from() {
        let mut s = Settings::default();
        assert!(s.summary().starts_with("Manual mode"));
        s.source = Source::Model;
        s.default = form("http://h/v1", "m", "sk-x");
        assert_eq!(s.summary(), "LLM: m at http://h/v1");
        assert!(!s.summary().contains("sk-x"));
    }
}
