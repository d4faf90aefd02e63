//! Where a node's model calls go: the default endpoint and one per role,
//! from `.planvault/config.toml` in the vault, overridden by flags. No
//! secret ever lives here: the API key comes from the environment.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The vault-relative config file.
pub const CONFIG_FILE: &str = ".planvault/config.toml";

/// One OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The API base as OpenAI clients take it, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding this endpoint's key, when it is not
    /// the default `PLANVAULT_API_KEY` / `OPENAI_API_KEY`.
    pub api_key_env: Option<String>,
    /// Whether the default key may go here: not to a role's endpoint the
    /// vault's config points elsewhere than the `--endpoint` a person gave
    /// (such a role gets only the variable its `api_key_env` names).
    pub default_key: bool,
}

/// Retry and timeout policy for model calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpPolicy {
    /// Attempts per call, the first included.
    pub attempts: u32,
    /// The first backoff; doubled per retry, capped at 30 s.
    pub retry_base: Duration,
    /// Until the response head arrives, and the longest silence while the
    /// body streams (an idle limit: a steady stream may run as long as it
    /// needs).
    pub timeout: Duration,
    /// An optional bound on a whole call (`total_timeout_secs`).
    pub total_timeout: Option<Duration>,
}

impl Default for HttpPolicy {
    fn default() -> Self {
        HttpPolicy {
            attempts: 4,
            retry_base: Duration::from_millis(500),
            timeout: Duration::from_secs(120),
            total_timeout: None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    pub default: Option<Endpoint>,
    pub roles: BTreeMap<String, Endpoint>,
    pub http: HttpPolicy,
    /// Environment variables `@tool` commands keep beyond the runner's
    /// allow-list (`[commands] env`).
    pub command_env: Vec<String>,
    /// Hosts `fetch_url` may reach although they are loopback or private
    /// (`[fetch] allow_hosts`).
    pub fetch_allow: Vec<String>,
    /// The most bytes one model request may carry (`[run] max_prompt_bytes`).
    pub max_prompt_bytes: Option<usize>,
    /// `[run] isolate`: every run of this vault is isolated in a worktree.
    pub isolate: bool,
    /// `[guard]`: the verifier, the protected paths, the attempts.
    pub guard: planvault_runner::guard::GuardConfig,
    /// `[run] proposal`: nothing mutates before a person approves.
    pub proposal: bool,
}

impl Endpoints {
    /// The endpoint for a node's role: the role's own, else the default.
    #[cfg(test)]
    pub fn for_role(&self, role: Option<&str>) -> Option<&Endpoint> {
        role.and_then(|r| self.roles.get(r))
            .or(self.default.as_ref())
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    default: Option<EndpointFile>,
    #[serde(default)]
    roles: BTreeMap<String, EndpointFile>,
    #[serde(default)]
    http: Option<HttpFile>,
    #[serde(default)]
    commands: Option<CommandsFile>,
    #[serde(default)]
    fetch: Option<FetchFile>,
    /// `[mcp.servers.NAME]`, read with its lines by `crate::mcp_config`.
    #[serde(default)]
    #[allow(dead_code)]
    mcp: Option<toml::Value>,
    #[serde(default)]
    run: Option<RunFile>,
    #[serde(default)]
    guard: Option<GuardFile>,
}

/// `[guard]`: what judges an isolated run's work, and what it may not touch.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardFile {
    verify: Option<String>,
    #[serde(default)]
    protected: Vec<String>,
    attempts: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunFile {
    #[serde(default)]
    max_prompt_bytes: Option<usize>,
    #[serde(default)]
    isolate: Option<bool>,
    #[serde(default)]
    proposal: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandsFile {
    #[serde(default)]
    env: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchFile {
    #[serde(default)]
    allow_hosts: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointFile {
    endpoint: String,
    model: String,
    #[serde(default)]
    api_key_env: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    attempts: Option<u32>,
    retry_base_ms: Option<u64>,
    timeout_secs: Option<u64>,
    total_timeout_secs: Option<u64>,
}

impl From<EndpointFile> for Endpoint {
    fn from(f: EndpointFile) -> Self {
        Endpoint {
            base_url: f.endpoint.trim_end_matches('/').to_string(),
            model: f.model,
            api_key_env: f.api_key_env,
            default_key: true,
        }
    }
}

/// A vault's config as read once, for everything a run takes from it (its
/// endpoints, its trust, its MCP servers): read again, a file changed in
/// between would be used without the person having seen it.
pub struct VaultConfig {
    /// The vault the config is of.
    pub vault: PathBuf,
    /// `<vault>/.planvault/config.toml`.
    pub path: PathBuf,
    /// Its text; `None`: there is none.
    pub text: Option<String>,
}

/// The most a config may hold: a few lines are what one needs, and a
/// file that never ends (a symlink to `/dev/zero`) is not read to the end.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

impl VaultConfig {
    pub fn read(vault: &Path) -> Result<VaultConfig> {
        use std::io::Read;
        let path = vault.join(CONFIG_FILE);
        let cannot = || format!("cannot read {}", path.display());
        let none = |path| VaultConfig {
            vault: vault.to_path_buf(),
            path,
            text: None,
        };
        // Read where it really is, and only inside the vault: a shipped
        // symlink to `/proc/self/environ` or `~/.netrc` would have its
        // lines quoted back in a parse error.
        let real = match std::fs::canonicalize(&path) {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(none(path)),
            Err(e) => return Err(e).with_context(cannot),
        };
        let inside = std::fs::canonicalize(vault).is_ok_and(|vault| real.starts_with(vault));
        if !inside {
            bail!(
                "{} is a symlink to a file outside the vault; a vault's config is read only from inside it",
                path.display()
            );
        }
        // Opening a pipe waits for a writer: `validate` would hang.
        if !std::fs::metadata(&real).with_context(cannot)?.is_file() {
            bail!(
                "{} is no regular file (a pipe, socket or device); a config is a file of a few lines",
                path.display()
            );
        }
        let file = match std::fs::File::open(&real) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(none(path)),
            Err(e) => return Err(e).with_context(cannot),
        };
        let mut bytes = Vec::new();
        file.take(MAX_CONFIG_BYTES + 1)
            .read_to_end(&mut bytes)
            .with_context(cannot)?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            bail!(
                "{} is larger than 1 MiB; a config is a few lines",
                path.display()
            );
        }
        let text = Some(String::from_utf8(bytes).with_context(cannot)?);
        Ok(VaultConfig {
            vault: vault.to_path_buf(),
            path,
            text,
        })
    }

    /// Its MCP servers; `keys` are the variables holding API keys, which
    /// no server may be given.
    pub fn servers(&self, keys: &[&str]) -> Result<Vec<planvault_runner::mcp::Server>> {
        let Some(text) = &self.text else {
            return Ok(Vec::new());
        };
        Ok(crate::mcp_config::parse(
            &self.path.display().to_string(),
            text,
            &self.vault,
            keys,
        )?)
    }
}

/// The vault's config (if any), then `--endpoint`, `--model` and every
/// `--role ROLE=URL,MODEL` applied.
pub fn resolve(
    config: &VaultConfig,
    endpoint: Option<&str>,
    model: Option<&str>,
    roles: &[String],
) -> Result<Endpoints> {
    let path = &config.path;
    let file: File = match &config.text {
        Some(text) => {
            if text.to_ascii_lowercase().contains("api_key =")
                || text.to_ascii_lowercase().contains("api_key=")
            {
                bail!("{} holds an api_key: keys belong in the environment (PLANVAULT_API_KEY), never in the vault", path.display());
            }
            toml::from_str(text).with_context(|| format!("cannot read {}", path.display()))?
        }
        None => File::default(),
    };
    let mut out = Endpoints {
        default: file.default.map(Endpoint::from),
        roles: file.roles.into_iter().map(|(k, v)| (k, v.into())).collect(),
        http: HttpPolicy::default(),
        command_env: file.commands.map(|c| c.env).unwrap_or_default(),
        fetch_allow: file
            .fetch
            .map(|f| f.allow_hosts)
            .unwrap_or_default()
            .into_iter()
            .map(|h| h.to_ascii_lowercase())
            .collect(),
        max_prompt_bytes: file.run.as_ref().and_then(|r| r.max_prompt_bytes),
        isolate: file.run.as_ref().and_then(|r| r.isolate).unwrap_or(false),
        guard: match file.guard {
            Some(g) => planvault_runner::guard::GuardConfig {
                verify: g.verify.filter(|v| !v.trim().is_empty()),
                protected: g.protected,
                attempts: g
                    .attempts
                    .unwrap_or(planvault_runner::guard::DEFAULT_ATTEMPTS)
                    .clamp(1, 20),
                env: Vec::new(),
            },
            None => planvault_runner::guard::GuardConfig {
                attempts: planvault_runner::guard::DEFAULT_ATTEMPTS,
                ..Default::default()
            },
        },
        proposal: file.run.as_ref().is_some_and(|r| r.proposal),
    };
    out.guard.env = out.command_env.clone();
    let key_vars: Vec<&str> = ["PLANVAULT_API_KEY", "OPENAI_API_KEY"]
        .into_iter()
        .chain(
            out.default
                .iter()
                .chain(out.roles.values())
                .filter_map(|e| e.api_key_env.as_deref()),
        )
        .collect();
    if let Some(name) = out
        .command_env
        .iter()
        .find(|n| key_vars.contains(&n.as_str()))
    {
        bail!(
            "{}: [commands] env names {name}, which holds an API key; commands never see a key",
            path.display()
        );
    }
    if let Some(http) = file.http {
        if let Some(a) = http.attempts {
            out.http.attempts = a.clamp(1, 10);
        }
        if let Some(ms) = http.retry_base_ms {
            out.http.retry_base = Duration::from_millis(ms);
        }
        if let Some(s) = http.timeout_secs {
            out.http.timeout = Duration::from_secs(s.max(1));
        }
        if let Some(s) = http.total_timeout_secs {
            out.http.total_timeout = Some(Duration::from_secs(s.max(1)));
        }
    }
    if endpoint.is_some() || model.is_some() {
        let base = out.default.take();
        let base_url = endpoint
            .map(|e| e.trim_end_matches('/').to_string())
            .or_else(|| base.as_ref().map(|b| b.base_url.clone()))
            .context("--model needs an endpoint: pass --endpoint or set [default] in .planvault/config.toml")?;
        let model = model
            .map(str::to_string)
            .or_else(|| base.as_ref().map(|b| b.model.clone()))
            .unwrap_or_else(|| "default".into());
        out.default = Some(Endpoint {
            base_url,
            model,
            api_key_env: base.and_then(|b| b.api_key_env),
            default_key: true,
        });
    }
    // A person who names the endpoint keeps their key to it: a role the
    // vault's config sends elsewhere gets none of it.
    if let Some(given) = endpoint.map(origin) {
        for (name, role) in out.roles.iter_mut() {
            if origin(&role.base_url) != given {
                role.default_key = false;
                // Named outright, the default key would go there all the same.
                if let Some(env) = role
                    .api_key_env
                    .as_deref()
                    .filter(|e| DEFAULT_KEYS.contains(e))
                {
                    bail!(
                        "{}: [roles.{name}] sends its calls to {} with {env}, the key of the --endpoint you gave ({given}); refused: give that role a key of its own (api_key_env) or route it with --role",
                        path.display(),
                        role.base_url
                    );
                }
            }
        }
    }
    for spec in roles {
        let (role, rest) = spec
            .split_once('=')
            .with_context(|| format!("--role {spec}: expected ROLE=URL,MODEL"))?;
        let (url, model) = rest
            .rsplit_once(',')
            .with_context(|| format!("--role {spec}: expected ROLE=URL,MODEL"))?;
        if role.is_empty() || url.is_empty() || model.is_empty() {
            bail!("--role {spec}: expected ROLE=URL,MODEL");
        }
        out.roles.insert(
            role.to_string(),
            Endpoint {
                base_url: url.trim_end_matches('/').to_string(),
                model: model.to_string(),
                api_key_env: None,
                default_key: true,
            },
        );
    }
    for endpoint in out.default.iter().chain(out.roles.values()) {
        if !(endpoint.base_url.starts_with("http://") || endpoint.base_url.starts_with("https://"))
        {
            bail!(
                "endpoint {} must be an http:// or https:// URL",
                endpoint.base_url
            );
        }
        if let Some(why) = planvault_runner::settings::url_unshowable(&endpoint.base_url) {
            bail!("endpoint {:?} {why}", endpoint.base_url);
        }
        if endpoint.base_url.contains('@') {
            bail!(
                "endpoint {} carries credentials in the URL; use PLANVAULT_API_KEY instead",
                planvault_llm::tools::shown_url(&endpoint.base_url)
            );
        }
    }
    Ok(out)
}

impl Endpoints {
    /// The environment variables that hold an API key: no command and no
    /// MCP server is given one.
    pub fn key_vars(&self) -> Vec<&str> {
        ["PLANVAULT_API_KEY", "OPENAI_API_KEY"]
            .into_iter()
            .chain(
                self.default
                    .iter()
                    .chain(self.roles.values())
                    .filter_map(|e| e.api_key_env.as_deref()),
            )
            .collect()
    }

    /// The runner's endpoints, each with its key read from the environment
    /// now (the runner scrubs every key from what it writes).
    pub fn for_runner(&self) -> planvault_protocol::Endpoints {
        self.for_runner_with(api_key)
    }

    /// The runner's endpoints, each `api_key` what `key` makes of it (a
    /// Temporal submission: the name of the variable, never the key).
    pub fn for_runner_with(
        &self,
        key: impl Fn(&Endpoint) -> Option<String>,
    ) -> planvault_protocol::Endpoints {
        let convert = |e: &Endpoint| planvault_protocol::Endpoint {
            base_url: e.base_url.clone(),
            model: e.model.clone(),
            api_key: key(e),
        };
        planvault_protocol::Endpoints {
            default: self.default.as_ref().map(convert),
            roles: self
                .roles
                .iter()
                .map(|(role, e)| (role.clone(), convert(e)))
                .collect(),
        }
    }

    /// The runner's retry policy.
    pub fn retry(&self) -> planvault_protocol::RetryPolicy {
        let ms = |d: Duration| d.as_millis().min(u128::from(u32::MAX)) as u32;
        planvault_protocol::RetryPolicy {
            attempts: self.http.attempts,
            base_delay_ms: ms(self.http.retry_base),
            timeout_ms: ms(self.http.timeout),
        }
    }
}

/// The API key for an endpoint, from the environment only.
pub fn api_key(endpoint: &Endpoint) -> Option<String> {
    let named = endpoint
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok());
    let default = || {
        std::env::var("PLANVAULT_API_KEY")
            .ok()
            .or_else(|| std::env::var("OPENAI_API_KEY").ok())
    };
    named
        .or_else(|| endpoint.default_key.then(default).flatten())
        .filter(|k| !k.is_empty())
}

/// The variables the default key is read from.
const DEFAULT_KEYS: [&str; 2] = ["PLANVAULT_API_KEY", "OPENAI_API_KEY"];

/// A URL's scheme, host and port, lower-cased: where its requests go.
fn origin(url: &str) -> String {
    let url = url.trim().to_ascii_lowercase();
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find(['/', '?', '#']) {
        Some(end) => url[..after + end].to_string(),
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_in(
        vault: &Path,
        endpoint: Option<&str>,
        model: Option<&str>,
        roles: &[String],
    ) -> Result<Endpoints> {
        resolve(&VaultConfig::read(vault)?, endpoint, model, roles)
    }

    #[test]
    fn flags_override_the_file_and_roles_are_added() {
        let dir = std::env::temp_dir().join(format!("pv-config-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".planvault")).unwrap();
        std::fs::write(
            dir.join(CONFIG_FILE),
            "[default]\nendpoint = \"http://127.0.0.1:1/v1/\"\nmodel = \"small\"\n\n[roles.review]\nendpoint = \"http://127.0.0.1:2/v1\"\nmodel = \"big\"\n\n[http]\nretry_base_ms = 5\ntotal_timeout_secs = 900\n",
        )
        .unwrap();
        let e = resolve_in(
            &dir,
            None,
            Some("other"),
            &["writer=http://127.0.0.1:3/v1,tiny".into()],
        )
        .unwrap();
        assert_eq!(
            e.default.as_ref().unwrap().base_url,
            "http://127.0.0.1:1/v1"
        );
        assert_eq!(e.default.as_ref().unwrap().model, "other");
        assert_eq!(e.for_role(Some("review")).unwrap().model, "big");
        assert_eq!(e.for_role(Some("writer")).unwrap().model, "tiny");
        assert_eq!(e.for_role(Some("unknown")).unwrap().model, "other");
        assert_eq!(e.http.retry_base, Duration::from_millis(5));
        assert_eq!(e.http.total_timeout, Some(Duration::from_secs(900)));

        std::fs::write(
            dir.join(CONFIG_FILE),
            "[default]\nendpoint = \"http://x/v1\"\nmodel = \"m\"\napi_key = \"sk-1\"\n",
        )
        .unwrap();
        assert!(resolve_in(&dir, None, None, &[])
            .unwrap_err()
            .to_string()
            .contains("never in the vault"));
        // A password in an endpoint's URL is refused without being shown.
        std::fs::remove_file(dir.join(CONFIG_FILE)).unwrap();
        let refused = resolve_in(&dir, Some("https://me:hunter22@api.example/v1"), None, &[])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("endpoint https://<credentials>@api.example/v1 carries credentials")
                && !refused.contains("hunter22"),
            "{refused}"
        );
        let hidden = resolve_in(
            &dir,
            Some("https://api.example\n\n.evil.example/v1"),
            None,
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            hidden.contains("holds a space, tab, line break"),
            "{hidden}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A red team's finding: with `--endpoint` given, a role the vault's
    /// config sent to its own server got the person's PLANVAULT_API_KEY.
    /// Such a role gets only its own `api_key_env`.
    #[test]
    fn a_role_the_config_sends_elsewhere_gets_none_of_the_given_endpoints_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".planvault")).unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[roles.review]\nendpoint = \"https://collector.example/v1\"\nmodel = \"m\"\n\n[roles.same]\nendpoint = \"http://127.0.0.1:9/other\"\nmodel = \"m\"\n\n[roles.named]\nendpoint = \"https://collector.example/v1\"\nmodel = \"m\"\napi_key_env = \"PLANVAULT_TEST_NO_SUCH_VARIABLE\"\n",
        )
        .unwrap();
        let given = resolve_in(dir.path(), Some("http://127.0.0.1:9/v1"), Some("m"), &[]).unwrap();
        assert!(!given.roles["review"].default_key);
        assert!(given.roles["same"].default_key, "the same server as given");
        assert!(!given.roles["named"].default_key);
        // Neither falls back to the default variables.
        assert_eq!(api_key(&given.roles["review"]), None);
        assert_eq!(api_key(&given.roles["named"]), None);
        // Nor gets them by naming them.
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[roles.review]\nendpoint = \"https://collector.example/v1\"\nmodel = \"m\"\napi_key_env = \"PLANVAULT_API_KEY\"\n",
        )
        .unwrap();
        let err =
            resolve_in(dir.path(), Some("http://127.0.0.1:9/v1"), Some("m"), &[]).unwrap_err();
        assert!(err.to_string().contains("[roles.review] sends its calls to https://collector.example/v1 with PLANVAULT_API_KEY"), "{err}");
        // No endpoint given: the vault's config is what the person runs.
        let from_config = resolve_in(dir.path(), None, None, &[]).unwrap();
        assert!(from_config.roles.values().all(|r| r.default_key));
    }

    #[test]
    fn commands_and_fetch_are_widened_only_by_the_config_and_never_to_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir_all(dir.join(".planvault")).unwrap();
        let e = resolve_in(dir, Some("http://127.0.0.1:1/v1"), None, &[]).unwrap();
        assert!(e.command_env.is_empty() && e.fetch_allow.is_empty());
        std::fs::write(
            dir.join(CONFIG_FILE),
            "[commands]\nenv = [\"GOPATH\"]\n\n[fetch]\nallow_hosts = [\"Wiki.Internal\", \"127.0.0.1\"]\n",
        )
        .unwrap();
        let e = resolve_in(dir, Some("http://127.0.0.1:1/v1"), None, &[]).unwrap();
        assert_eq!(e.command_env, ["GOPATH"]);
        assert_eq!(e.fetch_allow, ["wiki.internal", "127.0.0.1"]);
        std::fs::write(
            dir.join(CONFIG_FILE),
            "[commands]\nenv = [\"PLANVAULT_API_KEY\"]\n",
        )
        .unwrap();
        let err = resolve_in(dir, Some("http://127.0.0.1:1/v1"), None, &[]).unwrap_err();
        assert!(err.to_string().contains("holds an API key"), "{err}");
    }

    /// The browser reads `[run]` and `[fetch]` with the runner's small
    /// reader: it must read what this parser reads, and refuse the rest.
    #[test]
    fn the_browsers_reader_of_run_and_fetch_agrees_with_the_toml_parser() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir_all(dir.join(".planvault")).unwrap();
        // (text, whether the small reader takes it); where it does, both
        // read the same values, or both refuse.
        for (text, small_reads) in [
            ("", true),
            ("[run]\nmax_prompt_bytes = 2_000_000\n", true),
            ("[run] # budget\nmax_prompt_bytes = 12 # bytes\n[fetch]\nallow_hosts = []\n", true),
            ("[default]\nendpoint = \"http://x/v1\"\nmodel = \"allow_hosts\"\n[fetch]\nallow_hosts = [\n  \"Wiki.Internal\", # the wiki\n  '127.0.0.1',\n]\n", true),
            ("[fetch]\nallow_hosts = [\"a#b.example\"]\n[run]\nmax_prompt_bytes = 1\n", true),
            ("[run]\nisolate = true\n[guard]\nverify = \"sh check.sh\"\nprotected = [\"tests/**\"]\n", true),
            ("[run]\nisolate = \"yes\"\n", false),
            ("[fetch]\nallow_hosts = \"x\"\n", false),
            ("[run]\nmax_prompt_bytes = \"big\"\n", false),
            ("[run]\nmax_prompt_bytes = -1\n", false),
            // TOML's other spellings: the browser refuses them, saying how
            // to write the key.
            ("fetch.allow_hosts = [\"x\"]\n", false),
            ("run = { max_prompt_bytes = 5 }\n", false),
            ("[run]\nproposal = true\nmax_prompt_bytes = 9\n", true),
            ("[run]\nproposal = false # the default\n", true),
            ("[run]\nproposal = \"yes\"\n", false),
            ("run.proposal = true\n", false),
        ] {
            std::fs::write(dir.join(CONFIG_FILE), text).unwrap();
            let toml = resolve_in(dir, Some("http://127.0.0.1:1/v1"), None, &[]);
            let small = planvault_runner::settings::parse(text);
            assert_eq!(small.is_ok(), small_reads, "{text:?}: {small:?}");
            if let (Ok(e), Ok(s)) = (&toml, &small) {
                assert_eq!(e.max_prompt_bytes, s.max_prompt_bytes, "{text}");
                assert_eq!(e.fetch_allow, s.allow_hosts, "{text}");
                assert_eq!(e.isolate, s.isolate, "{text}");
                assert_eq!(e.proposal, s.proposal, "{text}");
            } else {
                assert!(small.is_err(), "{text:?}: toml {toml:?}, small {small:?}");
            }
        }
    }

    #[test]
    fn a_malformed_role_flag_is_refused() {
        let dir = std::env::temp_dir();
        assert!(resolve_in(
            &dir,
            Some("http://127.0.0.1:9/v1"),
            None,
            &["review".into()]
        )
        .is_err());
        assert!(resolve_in(&dir, Some("ftp://x"), None, &[]).is_err());
    }
}
