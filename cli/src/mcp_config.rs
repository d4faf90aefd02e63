//! `[mcp.servers.NAME]` in `.planvault/config.toml`: the MCP servers whose
//! tools a plan's nodes may declare. Never a secret: a server gets the
//! values of the environment variable *names* its entry lists.
//!
//! ```toml
//! [mcp.servers.files]            # stdio: a child process
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "out"]
//! env = ["GITHUB_TOKEN"]         # names passed through, never values
//! cwd = "."                      # relative to the vault; optional
//! approve = ["write_file"]       # asked for under --autonomy ask; optional
//! timeout_secs = 120             # per call; optional
//!
//! [mcp.servers.search]           # Streamable HTTP
//! url = "http://127.0.0.1:3001/mcp"
//! token_env = "SEARCH_TOKEN"     # optional: sent as Authorization: Bearer
//! ```

use planvault_runner::mcp::{Server, Transport, CALL_TIMEOUT};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why the servers' configuration cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum McpConfigError {
    /// Not TOML, or a key that does not belong (its message has the line).
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    /// One server's entry is wrong.
    #[error("{file}:{line}: [mcp.servers.{name}] {problem}")]
    Server {
        file: String,
        line: usize,
        name: String,
        problem: String,
    },
}

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    mcp: Option<McpFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpFile {
    #[serde(default)]
    servers: BTreeMap<String, toml::Spanned<ServerFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerFile {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Vec<String>,
    cwd: Option<String>,
    url: Option<String>,
    token_env: Option<String>,
    #[serde(default)]
    approve: Vec<String>,
    timeout_secs: Option<u64>,
}

/// The servers of a config file's text. `vault` resolves `cwd`; `keys`
/// are the variables holding API keys, which no server may be given.
pub fn parse(
    file: &str,
    text: &str,
    vault: &Path,
    keys: &[&str],
) -> Result<Vec<Server>, McpConfigError> {
    let parsed: File = toml::from_str(text).map_err(|e| McpConfigError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let Some(mcp) = parsed.mcp else {
        return Ok(Vec::new());
    };
    let mut servers = Vec::new();
    for (name, spanned) in mcp.servers {
        let line = text[..spanned.span().start.min(text.len())]
            .matches('\n')
            .count()
            + 1;
        let fail = |problem: String| McpConfigError::Server {
            file: file.to_string(),
            line,
            name: name.clone(),
            problem,
        };
        let entry = spanned.into_inner();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(fail(
                "a server's name is letters, digits, `_` and `-` (a node names its tools as name.tool)"
                    .into(),
            ));
        }
        if let Some(key) = entry
            .env
            .iter()
            .chain(&entry.token_env)
            .find(|n| keys.contains(&n.as_str()))
        {
            return Err(fail(format!(
                "env names {key}, which holds an API key; a server never sees a key"
            )));
        }
        let transport = match (entry.command, entry.url) {
            (Some(_), None) if entry.token_env.is_some() => {
                return Err(fail(
                    "token_env belongs to a url server; a command gets names through env".into(),
                ));
            }
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return Err(fail("command is empty".into()));
                }
                let cwd = entry.cwd.map(|c| vault.join(c));
                Transport::Stdio {
                    command,
                    args: entry.args,
                    env: entry.env,
                    cwd: Some(cwd.unwrap_or_else(|| vault.to_path_buf())),
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(fail(format!("url {url} is not an http:// or https:// URL")));
                }
                if let Some(why) = planvault_runner::settings::url_unshowable(&url) {
                    return Err(fail(format!("url {}", why)));
                }
                if planvault_llm_url_has_credentials(&url) {
                    return Err(fail(format!(
                        "url {} carries credentials; secrets belong in the environment",
                        planvault_llm::tools::shown_url(&url)
                    )));
                }
                if !entry.args.is_empty() || !entry.env.is_empty() || entry.cwd.is_some() {
                    return Err(fail(
                        "args, env and cwd belong to a command; a url server has none".into(),
                    ));
                }
                Transport::Http {
                    url,
                    token_env: entry.token_env,
                }
            }
            (Some(_), Some(_)) => {
                return Err(fail("has both command and url; give one".into()));
            }
            (None, None) => {
                return Err(fail(
                    "needs command = \"…\" (a child process) or url = \"http…\" (Streamable HTTP)"
                        .into(),
                ));
            }
        };
        servers.push(Server {
            name,
            transport,
            approve: entry.approve,
            timeout: entry
                .timeout_secs
                .map_or(CALL_TIMEOUT, |s| Duration::from_secs(s.max(1))),
        });
    }
    Ok(servers)
}

/// Whether a URL's authority holds `user@`.
fn planvault_llm_url_has_credentials(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#'])
        .next()
        .is_some_and(|a| a.contains('@'))
}

/// The servers of `config` (a missing file has none).
pub fn read(config: &Path, vault: &Path, keys: &[&str]) -> anyhow::Result<Vec<Server>> {
    match std::fs::read_to_string(config) {
        Ok(text) => Ok(parse(&config.display().to_string(), &text, vault, keys)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", config.display())),
    }
}

/// Clients for `servers`: each child starts from the cleaned environment
/// of `@tool` commands, plus the names its entry lists.
pub fn clients(servers: Vec<Server>) -> anyhow::Result<planvault_runner::mcp::Clients> {
    let all: Vec<(String, String)> = std::env::vars().collect();
    let base = planvault_runner::native::command_env(all.clone(), &[]);
    planvault_runner::mcp::Clients::new(servers, base, all)
        .map_err(|e| anyhow::anyhow!("cannot start the MCP client: {e}"))
}

/// Where a plan's config is, as `planvault run` reads it:
/// `<vault>/.planvault/config.toml` for a folder, the run vault's
/// (`PLAN.run/`) for a PLAN.md or generated plan.
pub fn default_config(path: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let vault = if path.is_dir() {
        path.to_path_buf()
    } else {
        crate::run::run_vault_dir(path)?
    };
    Ok((vault.join(crate::run::CONFIG_FILE), vault))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vec<Server> {
        parse("c.toml", text, Path::new("/v"), &["PLANVAULT_API_KEY"]).unwrap()
    }

    fn parse_err(text: &str) -> String {
        parse("c.toml", text, Path::new("/v"), &["PLANVAULT_API_KEY"])
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn the_issues_format_reads_as_given() {
        let servers = parse_ok(
            "[default]\nendpoint = \"http://x/v1\"\nmodel = \"m\"\n\n\
[mcp.servers.files]            # stdio: a child process\n\
command = \"npx\"\n\
args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"out\"]\n\
env = [\"GITHUB_TOKEN\"]\n\
cwd = \".\"\n\n\
[mcp.servers.search]           # Streamable HTTP\n\
url = \"http://127.0.0.1:3001/mcp\"\n\
token_env = \"SEARCH_TOKEN\"\n\
approve = [\"query\"]\ntimeout_secs = 5\n",
        );
        assert_eq!(
            servers,
            vec![
                Server {
                    name: "files".into(),
                    transport: Transport::Stdio {
                        command: "npx".into(),
                        args: vec![
                            "-y".into(),
                            "@modelcontextprotocol/server-filesystem".into(),
                            "out".into()
                        ],
                        env: vec!["GITHUB_TOKEN".into()],
                        cwd: Some(PathBuf::from("/v/.")),
                    },
                    approve: vec![],
                    timeout: CALL_TIMEOUT,
                },
                Server {
                    name: "search".into(),
                    transport: Transport::Http {
                        url: "http://127.0.0.1:3001/mcp".into(),
                        token_env: Some("SEARCH_TOKEN".into()),
                    },
                    approve: vec!["query".into()],
                    timeout: Duration::from_secs(5),
                },
            ]
        );
        assert!(parse_ok("[http]\nattempts = 2\n").is_empty());
    }

    #[test]
    fn a_wrong_entry_names_the_file_the_line_and_the_server() {
        assert_eq!(
            parse_err("# servers\n\n[mcp.servers.both]\ncommand = \"a\"\nurl = \"http://x\"\n"),
            "c.toml:3: [mcp.servers.both] has both command and url; give one"
        );
        assert_eq!(
            parse_err("[mcp.servers.none]\nargs = [\"x\"]\n"),
            "c.toml:1: [mcp.servers.none] needs command = \"…\" (a child process) or url = \"http…\" (Streamable HTTP)"
        );
        assert!(
            parse_err("[mcp.servers.a]\ncommand = \"x\"\nenv = [\"PLANVAULT_API_KEY\"]\n")
                .contains("holds an API key")
        );
        assert!(parse_err("[mcp.servers.a]\nurl = \"ftp://x\"\n").contains("not an http"));
        assert!(
            parse_err("[mcp.servers.a]\ncommand = \"x\"\ntoken_env = \"T\"\n")
                .contains("token_env belongs to a url server")
        );
        assert!(parse_err(
            "[mcp.servers.a]\nurl = \"http://x\"\ntoken_env = \"PLANVAULT_API_KEY\"\n"
        )
        .contains("holds an API key"));
        let hidden =
            parse_err("[mcp.servers.a]\nurl = \"https://docs.example\\n\\n.evil.example/mcp\"\n");
        assert!(
            hidden.contains("url holds a space, tab, line break"),
            "{hidden}"
        );
        let refused = parse_err("[mcp.servers.a]\nurl = \"http://u:hunter22@x/mcp\"\n");
        assert!(
            refused.contains("url http://<credentials>@x/mcp carries credentials"),
            "{refused}"
        );
        assert!(!refused.contains("hunter22"), "{refused}");
        assert!(parse_err("[mcp.servers.\"a.b\"]\ncommand = \"x\"\n")
            .starts_with("c.toml:1: [mcp.servers.a.b] a server's name"));
        let unknown = parse_err("[mcp.servers.a]\ncommand = \"x\"\ntoken = \"secret\"\n");
        assert!(unknown.starts_with("c.toml: "), "{unknown}");
        assert!(unknown.contains("line 3"), "{unknown}");
        assert!(unknown.contains("token"), "{unknown}");
    }
}
