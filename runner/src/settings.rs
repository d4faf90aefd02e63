//! The run settings a vault's `.planvault/config.toml` gives every runner:
//! `[run] max_prompt_bytes`, `[run] proposal` and `[fetch] allow_hosts`. The terminal reads
//! the whole file with a TOML parser; the browser, whose worker cannot
//! carry one within its size budget, reads these two keys here (held to
//! the TOML parser's reading by the CLI's tests). A key written in a form
//! this reader does not take is an error, never silently ignored.

use crate::host::{Host, HostError};
use planvault_protocol::{ErrorCode, RunError};

/// The vault-relative config file.
pub const CONFIG_FILE: &str = ".planvault/config.toml";

/// How a person is told that a config has runs connect to an MCP server
/// by URL (a line of what they trust; the terminal and the browser list
/// it alike).
pub fn url_server_reach(name: &str, url: &str, token_env: Option<&str>) -> String {
    let mut line = format!("connects to the MCP server `{name}` at {url}");
    if let Some(token) = token_env {
        line.push_str(&format!(", sending it ${token}"));
    }
    line
}

/// Why a config's URL is refused, if it is: a space or a control character
/// in it (a line break, a tab), which URL readers drop, so the address a
/// person is shown to trust would not be the one reached
/// (`https://docs.example.com` and, lines below, `.evil.example/`).
pub fn url_unshowable(url: &str) -> Option<&'static str> {
    url.chars()
        .any(|c| c.is_whitespace() || c.is_control())
        .then_some("holds a space, tab, line break or other control character, which URL readers drop, so the address shown would not be the one reached")
}

/// How a person is told that a config opens private hosts to `fetch_url`.
pub fn fetch_reach(hosts: &[String]) -> String {
    format!(
        "lets `fetch_url` reach the private hosts {}",
        hosts.join(", ")
    )
}

/// What a vault's config says about a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VaultSettings {
    /// `[run] max_prompt_bytes`.
    pub max_prompt_bytes: Option<usize>,
    /// `[fetch] allow_hosts`, lower-cased.
    pub allow_hosts: Vec<String>,
    /// `[run] isolate`: the run must happen in a git worktree, which only
    /// the terminal can make.
    pub isolate: bool,
    /// `[run] proposal`: nothing mutates before a person approves.
    pub proposal: bool,
}

/// Why a runner without git (the browser) refuses an isolated run.
pub const ISOLATE_REFUSED: &str =
    "this vault asks for isolated runs ([run] isolate = true): the browser has no git to make a worktree";
/// What to do instead.
pub const ISOLATE_HINT: &str = "run it from the terminal: planvault run VAULT --isolate";

/// Read the two keys from a config's text.
pub fn parse(text: &str) -> Result<VaultSettings, String> {
    let mut out = VaultSettings::default();
    let mut table = String::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, raw)) = lines.next() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let at = |what: &str| format!("{CONFIG_FILE}:{}: {what}", n + 1);
        if line.starts_with('[') {
            table = line
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let wanted = match (table.as_str(), key) {
            ("run", "max_prompt_bytes" | "proposal" | "isolate") | ("fetch", "allow_hosts") => key,
            _ => {
                // The keys elsewhere, dotted (`fetch.allow_hosts`) or in an
                // inline table (`run = { max_prompt_bytes = 1 }`).
                let named = |name: &str| {
                    key.split('.').any(|k| k.trim() == name)
                        || (value.trim_start().starts_with('{') && value.contains(name))
                };
                if named("max_prompt_bytes")
                    || named("allow_hosts")
                    || named("proposal")
                    || named("isolate")
                {
                    return Err(at(
                        "write max_prompt_bytes, proposal and isolate under [run] and allow_hosts under [fetch], one key per line",
                    ));
                }
                continue;
            }
        };
        let mut value = value.trim().to_string();
        if wanted == "proposal" || wanted == "isolate" {
            let flag = match value.as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(at(&format!("{wanted} must be true or false"))),
            };
            if wanted == "isolate" {
                out.isolate = flag;
            } else {
                out.proposal = flag;
            }
            continue;
        }
        if wanted == "max_prompt_bytes" {
            out.max_prompt_bytes = Some(
                value
                    .replace('_', "")
                    .parse()
                    .map_err(|_| at("max_prompt_bytes must be a whole number of bytes"))?,
            );
            continue;
        }
        // An array, possibly over several lines.
        while value.starts_with('[') && !value.contains(']') {
            match lines.next() {
                Some((_, more)) => {
                    value.push(' ');
                    value.push_str(strip_comment(more).trim());
                }
                None => break,
            }
        }
        out.allow_hosts = strings(&value)
            .ok_or_else(|| at("allow_hosts must be a list of quoted host names"))?
            .into_iter()
            .map(|h| h.to_ascii_lowercase())
            .collect();
    }
    Ok(out)
}

/// A line without its `#` comment (a `#` inside a quoted string stays).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// `["a", 'b']` → its strings; `None` for anything else.
fn strings(value: &str) -> Option<Vec<String>> {
    let inner = value.strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    for item in inner.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let unquoted = item
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .or_else(|| item.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))?;
        if unquoted.contains(['"', '\\', '\'']) {
            return None;
        }
        out.push(unquoted.to_string());
    }
    Some(out)
}

/// The vault's settings, read through the host (none when there is no
/// config file).
pub async fn read<H: Host>(host: &H) -> Result<VaultSettings, RunError> {
    let text = host.read(CONFIG_FILE).await.map_err(|e: HostError| {
        RunError::new(
            ErrorCode::VaultIo,
            format!("cannot read {CONFIG_FILE}: {e}"),
        )
    })?;
    match text {
        Some(text) => parse(&text).map_err(|e| {
            RunError::new(ErrorCode::PlanInvalid, e)
                .with_hint("fix the vault's .planvault/config.toml, then run again")
        }),
        None => Ok(VaultSettings::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_keys_are_read_in_their_tables_and_nowhere_else() {
        let text = "# a vault\n[default]\nendpoint = \"http://x/v1\" # max_prompt_bytes here is a comment\n\n[run]\nmax_prompt_bytes = 2_000_000\nproposal = true # ask first\n\n[fetch]\nallow_hosts = [\n  \"Wiki.Internal\", # the wiki\n  '127.0.0.1',\n]\n";
        assert_eq!(
            parse(text).unwrap(),
            VaultSettings {
                max_prompt_bytes: Some(2_000_000),
                allow_hosts: vec!["wiki.internal".into(), "127.0.0.1".into()],
                isolate: false,
                proposal: true,
            }
        );
        assert!(parse("[run]\nisolate = true # worktree\n").unwrap().isolate);
        assert!(!parse("[run]\nisolate = false\n").unwrap().isolate);
        assert_eq!(parse("").unwrap(), VaultSettings::default());
        assert_eq!(
            parse("[fetch]\nallow_hosts = []\n").unwrap(),
            VaultSettings::default()
        );
        for bad in [
            "[run]\nmax_prompt_bytes = \"big\"\n",
            "[run]\nmax_prompt_bytes = -1\n",
            "[fetch]\nallow_hosts = \"x\"\n",
            "[fetch]\nallow_hosts = [x]\n",
            "[fetch]\nallow_hosts = [\"a\\\"b\"]\n",
            "fetch.allow_hosts = [\"x\"]\n",
            "fetch = { allow_hosts = [\"x\"] }\n",
            "[default]\nmax_prompt_bytes = 5\n",
            "[fetch.x]\nallow_hosts = [\"x\"]\n",
            "[run]\nisolate = yes\n",
            "run.isolate = true\n",
            "[run]\nproposal = yes\n",
            "run = { proposal = true }\n",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.starts_with(".planvault/config.toml:"), "{bad}: {err}");
        }
    }
}
