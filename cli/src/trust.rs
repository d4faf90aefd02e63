//! Trust in a vault's config. What `.planvault/config.toml` says that
//! reaches beyond the vault (commands it starts, hosts its model calls and
//! keys go to, variables it hands on, private hosts it opens to
//! `fetch_url`) is honoured only once the person running planvault has
//! trusted it, as direnv allows an `.envrc`: a cloned vault's config is
//! someone else's code, and Obsidian does not show `.planvault/`.
//!
//! The trust is kept outside every vault (`trusted.json` in planvault's
//! config folder), one entry per vault folder: the fingerprint of that
//! config's reach. A change to the reach (a `git pull` that adds a server)
//! needs trusting again; a change elsewhere (`[http]`, `[run]`, a model's
//! name, an approval list) does not.
//!
//! A vault's run journal is the vault's too: one cloned with its
//! `00_plan-trace/` may say a person approved what nobody here did. The
//! runner resumes past a decision no run here took only once the person
//! takes it as given: asked at a terminal ([`take_decisions`]), or ahead
//! with `planvault trust` ([`take_journal`]). Those taken are kept in the
//! runner's record of decisions (`planvault_runner::native::decisions_file`).

use crate::run::VaultConfig;
use anyhow::{bail, Context, Result};
use planvault_core::terminal::escape_controls;
use planvault_runner::settings::{fetch_reach, url_server_reach};
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Where the trust is kept instead of planvault's config folder (tests, or
/// a machine whose home is read-only).
const HOME_VAR: &str = "PLANVAULT_CONFIG_HOME";

/// What a config reaches beyond its vault, one line per thing, by table
/// and key in sorted order (so the same config always gives the same
/// lines, however it is laid out). Empty: nothing to trust.
pub fn reach(text: &str) -> Result<Vec<String>, toml::de::Error> {
    let table: toml::Table = toml::from_str(text)?;
    let mut lines = Vec::new();
    for (section, value) in &table {
        match (section.as_str(), value) {
            // Retries, timeouts, the prompt budget, isolation and proposal
            // mode only ever hold a run back.
            ("http" | "run", _) => {}
            ("default", toml::Value::Table(t)) => endpoint(&mut lines, "model calls", t),
            ("roles", toml::Value::Table(roles)) => {
                for (role, value) in roles {
                    match value {
                        toml::Value::Table(t) => endpoint(
                            &mut lines,
                            &format!("role `{}`'s model calls", shown(role)),
                            t,
                        ),
                        other => other_key(&mut lines, &format!("roles.{role}"), other),
                    }
                }
            }
            ("mcp", toml::Value::Table(mcp)) => {
                for (key, value) in mcp {
                    match (key.as_str(), value) {
                        ("servers", toml::Value::Table(servers)) => {
                            for (name, value) in servers {
                                match value {
                                    toml::Value::Table(t) => server(&mut lines, name, t),
                                    other => {
                                        other_key(&mut lines, &format!("mcp.servers.{name}"), other)
                                    }
                                }
                            }
                        }
                        (key, other) => other_key(&mut lines, &format!("mcp.{key}"), other),
                    }
                }
            }
            ("commands", toml::Value::Table(t)) => {
                for (key, value) in t {
                    match key.as_str() {
                        "env" => lines.push(format!(
                            "hands `@tool` commands the variables {}",
                            variables(value)
                        )),
                        key => other_key(&mut lines, &format!("commands.{key}"), value),
                    }
                }
            }
            ("fetch", toml::Value::Table(t)) => {
                for (key, value) in t {
                    match key.as_str() {
                        "allow_hosts" => lines.push(fetch_reach(&strings(value))),
                        key => other_key(&mut lines, &format!("fetch.{key}"), value),
                    }
                }
            }
            ("guard", toml::Value::Table(t)) => {
                for (key, value) in t {
                    match key.as_str() {
                        // What the run may not touch, and how often it tries.
                        "protected" | "attempts" => {}
                        "verify" => lines.push(format!(
                            "runs `{}` as an isolated run's verifier",
                            words(value)
                        )),
                        key => other_key(&mut lines, &format!("guard.{key}"), value),
                    }
                }
            }
            (section, value) => other_key(&mut lines, section, value),
        }
    }
    Ok(lines)
}

/// `[default]` or `[roles.NAME]`: where the calls go and with which key.
fn endpoint(lines: &mut Vec<String>, whose: &str, table: &toml::Table) {
    let key = match table.get("api_key_env") {
        Some(var) => format!("the key in {}", variables(var)),
        None => "your default key (PLANVAULT_API_KEY or OPENAI_API_KEY)".into(),
    };
    if let Some(url) = table.get("endpoint") {
        lines.push(format!("sends {whose} to {}, with {key}", words(url)));
    }
    for (k, value) in table {
        if !matches!(k.as_str(), "endpoint" | "model" | "api_key_env") {
            other_key(lines, &format!("{whose}: {k}"), value);
        }
    }
}

/// `[mcp.servers.NAME]`: the command it starts or the URL it connects to.
fn server(lines: &mut Vec<String>, name: &str, table: &toml::Table) {
    let name = shown(name);
    if let Some(command) = table.get("command") {
        let mut line = format!("starts the MCP server `{name}`: `{}", words(command));
        if let Some(args) = table.get("args") {
            line.push(' ');
            line.push_str(&words(args));
        }
        line.push('`');
        if let Some(cwd) = table.get("cwd") {
            line.push_str(&format!(" in {}", words(cwd)));
        }
        if let Some(env) = table.get("env") {
            line.push_str(&format!(", handing it {}", variables(env)));
        }
        lines.push(line);
    }
    if let Some(url) = table.get("url") {
        let token = table.get("token_env").map(words);
        lines.push(url_server_reach(&name, &words(url), token.as_deref()));
    }
    for (k, value) in table {
        // The tools asked about first, and how long a call may take, only
        // hold a run back.
        if !matches!(
            k.as_str(),
            "command" | "args" | "cwd" | "env" | "url" | "token_env" | "approve" | "timeout_secs"
        ) {
            other_key(lines, &format!("mcp.servers.{name}.{k}"), value);
        }
    }
}

/// A key this reading does not know (the config's own reader refuses it):
/// shown as written, so trusting it is trusting exactly that.
fn other_key(lines: &mut Vec<String>, key: &str, value: &toml::Value) {
    lines.push(format!(
        "sets {} = {}",
        shown(key),
        shown(&as_written(value))
    ));
}

/// A string as it is, a list as its items with spaces between, anything
/// else as [`as_written`]; control characters escaped, so one line stays
/// one line.
fn words(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => shown(s),
        toml::Value::Array(items) => items.iter().map(words).collect::<Vec<_>>().join(" "),
        other => shown(&as_written(other)),
    }
}

/// A list's items (or the one value), each as [`words`] shows it.
fn strings(value: &toml::Value) -> Vec<String> {
    match value {
        toml::Value::Array(items) => items.iter().map(words).collect(),
        other => vec![words(other)],
    }
}

/// Environment variable names, each as `$NAME`.
fn variables(value: &toml::Value) -> String {
    match value {
        toml::Value::Array(items) => items.iter().map(variables).collect::<Vec<_>>().join(", "),
        toml::Value::String(s) => format!("${}", shown(s)),
        other => shown(&as_written(other)),
    }
}

/// A value that is no string or list, as JSON writes it (the TOML reader
/// here builds without a writer).
fn as_written(value: &toml::Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn shown(text: &str) -> String {
    escape_controls(text, false).into_owned()
}

/// The fingerprint a trust records: the reach's lines, hashed.
pub fn fingerprint(reach: &[String]) -> String {
    planvault_core::engine::journal::sha256_hex(reach.join("\n").as_bytes())
}

/// The trusted configs: vault folder → fingerprint of its config's reach.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Trusted {
    vaults: BTreeMap<String, String>,
}

/// Where trust is kept: `$PLANVAULT_CONFIG_HOME`, else planvault's folder
/// in the platform's config folder (`~/.config/planvault` on Linux).
fn store() -> Option<PathBuf> {
    match std::env::var_os(HOME_VAR) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join("trusted.json")),
        _ => dirs::config_dir().map(|d| d.join("planvault").join("trusted.json")),
    }
}

fn load(store: &Path) -> Result<Trusted> {
    match std::fs::read_to_string(store) {
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "cannot read {}: not planvault's trust file",
                store.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Trusted::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", store.display())),
    }
}

fn save(store: &Path, trusted: &Trusted) -> Result<()> {
    let dir = store.parent().context("the trust file has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let text = serde_json::to_string_pretty(trusted).expect("the trust file serializes") + "\n";
    // Whole or not at all: a write cut short must not forget every trust.
    let partial = dir.join(format!(".trusted.json.{}", std::process::id()));
    std::fs::write(&partial, text)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, store).with_context(|| format!("cannot write {}", store.display()))
}

/// The key a vault is trusted under: its folder, resolved (so `.` and its
/// full path are one vault, and a link to it is the folder it points to).
fn place(vault: &Path) -> Result<String> {
    let full =
        std::fs::canonicalize(vault).with_context(|| format!("cannot read {}", vault.display()))?;
    Ok(full.to_string_lossy().into_owned())
}

/// What a vault's config reaches; `None` when there is no config or it
/// reaches nothing.
fn config_reach(config: &VaultConfig) -> Result<Option<Vec<String>>> {
    let Some(text) = &config.text else {
        return Ok(None);
    };
    let lines = reach(text).with_context(|| format!("cannot read {}", config.path.display()))?;
    Ok((!lines.is_empty()).then_some(lines))
}

/// The config's reach as a list under a heading.
fn listed(config: &Path, lines: &[String]) -> String {
    let mut out = format!(
        "{} reaches beyond its vault:",
        shown(&config.display().to_string())
    );
    for line in lines {
        out.push_str("\n  - ");
        out.push_str(line);
    }
    out
}

/// Where the vault came from, which names its trust.
pub enum Source<'a> {
    /// A folder on disk, as the person typed it (for the hint): trusted by
    /// where it is.
    Path(&'a Path),
    /// A temporary checkout of a repository's branch: trusted by those.
    #[cfg_attr(not(feature = "temporal"), allow(dead_code))]
    Git {
        url: &'a str,
        branch: &'a str,
        folder: &'a str,
    },
}

/// Before anything a vault's config names is started or sent anything:
/// go on when its config reaches nothing beyond the vault, when that reach
/// is trusted (recorded, or `--trust-config`: `for_this_run`), or when
/// the person at the terminal says yes (recorded); otherwise refuse,
/// listing the reach.
pub fn require(config: &VaultConfig, source: Source<'_>, for_this_run: bool) -> Result<()> {
    let Some(lines) = config_reach(config)? else {
        return Ok(());
    };
    let (vault, config) = (config.vault.as_path(), &config.path);
    if for_this_run {
        return Ok(());
    }
    let print = fingerprint(&lines);
    let (key, hint) = match source {
        Source::Path(path) => (
            place(vault)?,
            format!(
                "`planvault trust {}` (once, until these lines change), or pass --trust-config for one run",
                shown(&path.display().to_string())
            ),
        ),
        Source::Git { url, branch, folder } => (
            format!("git {url} {branch} {folder}"),
            "pass --trust-config (a checkout of a repository is new each time)".to_string(),
        ),
    };
    let store = store();
    if let Some(store) = &store {
        if load(store)?.vaults.get(&key) == Some(&print) {
            return Ok(());
        }
    }
    let what = listed(config, &lines);
    let question = format!(
        "{what}\nThis is the config's author's code, run as you. Trust it{}?",
        if store.is_some() {
            " (until these lines change)"
        } else {
            " for this run"
        }
    );
    if let Some(yes) = ask_at_terminal(&question)? {
        if yes {
            if let Some(store) = &store {
                let mut trusted = load(store)?;
                trusted.vaults.insert(key, print);
                save(store, &trusted)?;
            }
            return Ok(());
        }
        bail!("{} is not trusted; nothing ran", config.display());
    }
    bail!("{what}\nand it is not trusted, so nothing ran.\n  hint: read it; if you would run it as your own code, {hint}");
}

/// Whether the person at the terminal takes as given the decisions a
/// resumed journal holds that no run here took (`listing`); `false` where
/// nobody is at a terminal (the run then stops, naming them).
pub fn take_decisions(listing: &str) -> bool {
    let question = format!("{listing}\nTake them as given, as if you had decided them here?");
    matches!(ask_at_terminal(&question), Ok(Some(true)))
}

/// Ask the person a yes-or-no `question` (no by default); `None` where
/// nobody is at a terminal to answer it.
fn ask_at_terminal(question: &str) -> std::io::Result<Option<bool>> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(None);
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(Some(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    )))
}

/// The decisions a run's journal holds (`run_dir`: the folder whose
/// `00_plan-trace/` is the run's) and those of them no run here took.
struct JournalDecisions {
    file: PathBuf,
    /// The record of decisions taken here; `None` where there is no folder
    /// to keep it in (nothing is taken here then).
    record: Option<PathBuf>,
    /// Every decision's name, in journal order.
    heads: Vec<String>,
    elsewhere: Vec<planvault_core::engine::journal::Decision>,
}

impl JournalDecisions {
    /// `None` when there is no journal or it holds no decision.
    fn read(run_dir: &Path) -> Result<Option<JournalDecisions>> {
        use planvault_core::engine::journal;
        use planvault_core::engine::trace::JOURNAL_FILE;
        use planvault_runner::native;
        use planvault_runner::Host;
        let file = run_dir.join(JOURNAL_FILE);
        if !run_dir.is_dir() {
            return Ok(None);
        }
        // Read as the run reads it (no symlink out of the vault, no pipe).
        let host = native::NativeHost::new(run_dir);
        let read = planvault_runner::block_on(host.read(JOURNAL_FILE))
            .expect("the native host never waits");
        let Some(text) = read.map_err(|e| anyhow::anyhow!("{e}"))? else {
            return Ok(None);
        };
        let found = journal::decisions(&text);
        if found.is_empty() {
            return Ok(None);
        }
        let record = native::decisions_file();
        let heads: Vec<&str> = found.iter().map(|d| d.head.as_str()).collect();
        let taken = match &record {
            Some(record) => native::decisions_taken(record, &heads),
            None => vec![false; heads.len()],
        };
        let elsewhere = journal::taken_elsewhere(&found, &taken)
            .into_iter()
            .cloned()
            .collect();
        Ok(Some(JournalDecisions {
            heads: heads.into_iter().map(str::to_string).collect(),
            file,
            record,
            elsewhere,
        }))
    }

    fn listing(&self) -> String {
        let elsewhere: Vec<_> = self.elsewhere.iter().collect();
        planvault_runner::driver::decisions_listing(&self.file.display().to_string(), &elsewhere)
    }

    /// Keep those taken elsewhere as taken here.
    fn take(&self) -> Result<()> {
        let record = self
            .record
            .as_ref()
            .context("no folder to keep decisions in: set XDG_STATE_HOME (or HOME)")?;
        let heads: Vec<&str> = self.elsewhere.iter().map(|d| d.head.as_str()).collect();
        planvault_runner::native::keep_decisions(record, &heads)
            .with_context(|| format!("cannot write {}", record.display()))
    }
}

/// `planvault trust PATH` for a run's journal (`run_dir`: the folder whose
/// `00_plan-trace/` is the run's): take as given the decisions it holds
/// that no run here took, and say which; `None` when there are none.
pub fn take_journal(run_dir: &Path) -> Result<Option<String>> {
    let Some(decisions) = JournalDecisions::read(run_dir)? else {
        return Ok(None);
    };
    if decisions.elsewhere.is_empty() {
        return Ok(None);
    }
    decisions.take()?;
    Ok(Some(format!("{}\ntaken as given", decisions.listing())))
}

/// `planvault trust --forget PATH` for a run's journal: the decisions it
/// holds are no longer taken as given here (a resume past them asks), and
/// say how many were; `None` when none was.
pub fn forget_journal(run_dir: &Path) -> Result<Option<String>> {
    let Some(decisions) = JournalDecisions::read(run_dir)? else {
        return Ok(None);
    };
    let Some(record) = &decisions.record else {
        return Ok(None);
    };
    let heads: Vec<&str> = decisions.heads.iter().map(String::as_str).collect();
    let forgotten = planvault_runner::native::forget_decisions(record, &heads)
        .with_context(|| format!("cannot write {}", record.display()))?;
    Ok((forgotten > 0).then(|| {
        format!(
            "{}: {forgotten} decision(s) it holds are no longer taken as given; resuming past them asks first",
            decisions.file.display()
        )
    }))
}

/// Before `planvault submit` starts a run that resumes `run_dir`'s journal:
/// the decisions its workers may go past (every decision in the journal,
/// each journaled by a run here or taken here), once the person takes
/// those no run here took (at a terminal, or ahead with `planvault trust`);
/// otherwise refuse, naming them, as `planvault run` does. `starts` says
/// whether the submission would start a run (`None`: one of its name runs
/// or completed, so nothing is asked) and which decisions an earlier run
/// of that name went past or took (a `planvault decide` on the cluster),
/// which are taken here without asking.
#[cfg(feature = "temporal")]
pub fn decisions_for_submit(
    run_dir: &Path,
    starts: impl FnOnce() -> Result<Option<Vec<String>>>,
) -> Result<Vec<String>> {
    let Some(mut decisions) = JournalDecisions::read(run_dir)? else {
        return Ok(Vec::new());
    };
    if decisions.elsewhere.is_empty() {
        return Ok(decisions.heads);
    }
    let Some(earlier) = starts()? else {
        // Nothing to ask; should a run start after all, it goes past only
        // the decisions taken here.
        let mut heads = decisions.heads;
        heads.retain(|h| !decisions.elsewhere.iter().any(|d| &d.head == h));
        return Ok(heads);
    };
    let (earlier, elsewhere): (Vec<_>, Vec<_>) = std::mem::take(&mut decisions.elsewhere)
        .into_iter()
        .partition(|d| earlier.contains(&d.head));
    if decisions.record.is_some() {
        decisions.elsewhere = earlier;
        decisions.take()?;
    }
    decisions.elsewhere = elsewhere;
    if decisions.elsewhere.is_empty() {
        return Ok(decisions.heads);
    }
    let listing = decisions.listing();
    if take_decisions(&listing) {
        // Without a record the decisions are taken for this submission.
        if decisions.record.is_some() {
            decisions.take()?;
        }
        return Ok(decisions.heads);
    }
    bail!("{listing}\n  hint: nothing was submitted; if you trust whoever ran it, `planvault trust PATH` (a copy of the vault will do) takes them as given (or answer yes at a terminal); --fresh starts over")
}

/// `planvault trust PATH`: show what the vault's config reaches and record
/// it as trusted (`forget`: drop the vault's trust).
pub fn trust(vault: &Path, forget: bool) -> Result<String> {
    let store = store().with_context(|| {
        format!("no folder to keep trust in: set {HOME_VAR} (or HOME), or pass --trust-config to each run")
    })?;
    let key = place(vault)?;
    let mut trusted = load(&store)?;
    if forget {
        return Ok(match trusted.vaults.remove(&key) {
            Some(_) => {
                save(&store, &trusted)?;
                format!("{}: its config is no longer trusted", shown(&key))
            }
            None => format!("{}: its config was not trusted", shown(&key)),
        });
    }
    let config = VaultConfig::read(vault)?;
    let Some(lines) = config_reach(&config)? else {
        return Ok(format!(
            "{}: reaches nothing beyond the vault; nothing to trust",
            shown(&config.path.display().to_string())
        ));
    };
    trusted.vaults.insert(key, fingerprint(&lines));
    save(&store, &trusted)?;
    Ok(format!(
        "{}\ntrusted, until these lines change",
        listed(&config.path, &lines)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(config: &str) -> String {
        reach(config).unwrap().join("\n")
    }

    #[test]
    fn what_holds_a_run_back_reaches_nothing() {
        assert_eq!(
            listed("[http]\nattempts = 2\n\n[run]\nproposal = true\nisolate = true\nmax_prompt_bytes = 9\n\n[guard]\nprotected = [\"tests/**\"]\nattempts = 3\n"),
            ""
        );
        assert_eq!(listed(""), "");
    }

    #[test]
    fn every_way_out_is_listed() {
        insta::assert_snapshot!(listed(
            r#"
[default]
endpoint = "https://api.example.com/v1"
model = "big"

[roles.critic]
endpoint = "http://10.0.0.5/v1"
model = "m"
api_key_env = "CRITIC_KEY"

[mcp.servers.files]
command = "npx"
args = ["-y", "server-filesystem", "out"]
env = ["GITHUB_TOKEN"]
cwd = "tools"
approve = ["write_file"]
timeout_secs = 5

[mcp.servers.search]
url = "http://127.0.0.1:3001/mcp"
token_env = "SEARCH_TOKEN"

[commands]
env = ["AWS_PROFILE", "PGHOST"]

[fetch]
allow_hosts = ["wiki.internal"]

[guard]
verify = "cargo test"
"#,
        ), @r#"
                hands `@tool` commands the variables $AWS_PROFILE, $PGHOST
                sends model calls to https://api.example.com/v1, with your default key (PLANVAULT_API_KEY or OPENAI_API_KEY)
                lets `fetch_url` reach the private hosts wiki.internal
                runs `cargo test` as an isolated run's verifier
                starts the MCP server `files`: `npx -y server-filesystem out` in tools, handing it $GITHUB_TOKEN
                connects to the MCP server `search` at http://127.0.0.1:3001/mcp, sending it $SEARCH_TOKEN
                sends role `critic`'s model calls to http://10.0.0.5/v1, with the key in $CRITIC_KEY
        "#);
    }

    #[test]
    fn an_unknown_key_is_shown_as_written_and_one_line_stays_one_line() {
        insta::assert_snapshot!(listed(
            "[mcp.servers.x]\ncommand = \"sh\"\nargs = [\"-c\", \"true\\n  - nothing else\"]\nshell = true\n\n[later]\nhook = \"curl x\"\n",
        ), @r#"
                sets later = {"hook":"curl x"}
                starts the MCP server `x`: `sh -c true\u{a}  - nothing else`
                sets mcp.servers.x.shell = true
        "#);
    }

    proptest::proptest! {
        /// Whatever a config's strings hold, each thing it reaches is one
        /// line with nothing a terminal acts on: a config cannot make its
        /// list look like another (a line break, an escape sequence, a
        /// right-to-left override).
        #[test]
        fn a_hostile_string_stays_one_plain_line(
            command in "\\PC*[\\n\\r\\x1b\\u{202e}]\\PC*",
            url in "\\PC*",
            host in "\\PC*",
        ) {
            let quoted = |s: &str| serde_json::to_string(s).unwrap();
            let config = format!(
                "[mcp.servers.x]\ncommand = {}\n\n[mcp.servers.y]\nurl = {}\n\n[fetch]\nallow_hosts = [{}]\n",
                quoted(&command),
                quoted(&url),
                quoted(&host)
            );
            let lines = reach(&config).unwrap();
            proptest::prop_assert_eq!(lines.len(), 3);
            for line in lines {
                proptest::prop_assert!(
                    !line.chars().any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
                    "{:?}",
                    line
                );
            }
        }
    }

    #[test]
    fn the_fingerprint_follows_the_reach_only() {
        let print = |c: &str| fingerprint(&reach(c).unwrap());
        let base = "[default]\nendpoint = \"http://x/v1\"\nmodel = \"a\"\n";
        assert_eq!(
            print(base),
            print("[http]\nattempts = 1\n\n[default]\nmodel = \"b\"\nendpoint = \"http://x/v1\"\n")
        );
        assert_ne!(print(base), print(&base.replace("http://x", "http://y")));
        assert_ne!(
            print(base),
            print(&format!("{base}api_key_env = \"AWS_SECRET_ACCESS_KEY\"\n"))
        );
    }
}
