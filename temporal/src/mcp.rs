//! MCP servers for Temporal runs: the runner's own client
//! (`planvault_runner::mcp::Clients`) on the workers, reached through
//! activities.
//!
//! - The catalog is listed once per run, as an activity: its answer is in
//!   the history, so a replay (or a run moving to another worker) reads it
//!   back and starts nothing.
//! - A tool call is one activity with one attempt: a call may change the
//!   world, so a worker lost mid-call is reported to the run as the tool's
//!   error (the model reads it), never made again by Temporal. A finished
//!   call is journaled by the driver, so a resumed visit does not repeat it.
//! - Sessions (a child process, an HTTP session) live on the worker that
//!   opened them, in a cache keyed by the workflow run and the server: the
//!   run's later calls to that worker reuse them; another worker opens its
//!   own. They are closed when the run ends (on the worker serving the
//!   closing activity) and, on every worker, after [`IDLE`] unused.
//! - Only environment variable *names* travel in the submission; the values
//!   are read on the worker, and what a server answers is scrubbed of them
//!   there (`Clients` does it), before it enters the history. A model's
//!   reply is scrubbed of them in its activity too ([`secret_names`]).

use crate::activities::{beating, blocking};
use crate::host::TemporalHost;
use planvault_llm::mcp::{Catalog, McpTool};
use planvault_runner::mcp::{Clients, Server, Transport};
use planvault_runner::native::command_env;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_workflow::{
    ActivityExecutionError, ActivityOptions, RetryPolicy, WorkflowCancellationToken,
};

/// A session unused this long is closed (its run may have ended on
/// another worker, or moved away).
pub const IDLE: Duration = Duration::from_secs(10 * 60);
/// A call's worker is taken for dead after this long without a heartbeat.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// How a server is reached, as a submission carries it: names, never values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Variable names passed through; their values stay on the worker.
        env: Vec<String>,
        /// An absolute path, the same on every worker (beside the vault).
        cwd: Option<String>,
    },
    Http {
        url: String,
        /// The variable holding the bearer token, read on the worker.
        token_env: Option<String>,
    },
}

/// One `[mcp.servers.NAME]` of the vault's config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerSpec {
    pub name: String,
    pub transport: WireTransport,
    pub approve: Vec<String>,
    pub timeout_ms: u64,
}

impl From<&Server> for McpServerSpec {
    fn from(server: &Server) -> Self {
        let transport = match &server.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => WireTransport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
                cwd: cwd.as_ref().map(|c| c.to_string_lossy().into_owned()),
            },
            Transport::Http { url, token_env } => WireTransport::Http {
                url: url.clone(),
                token_env: token_env.clone(),
            },
        };
        McpServerSpec {
            name: server.name.clone(),
            transport,
            approve: server.approve.clone(),
            timeout_ms: u64::try_from(server.timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl McpServerSpec {
    pub fn server(&self) -> Server {
        let transport = match &self.transport {
            WireTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => Transport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
                cwd: cwd.as_ref().map(PathBuf::from),
            },
            WireTransport::Http { url, token_env } => Transport::Http {
                url: url.clone(),
                token_env: token_env.clone(),
            },
        };
        Server {
            name: self.name.clone(),
            transport,
            approve: self.approve.clone(),
            timeout: Duration::from_millis(self.timeout_ms.max(1)),
        }
    }

    /// The variables whose values this server is given.
    fn secret_names(&self) -> Vec<String> {
        match &self.transport {
            WireTransport::Stdio { env, .. } => env.clone(),
            WireTransport::Http { token_env, .. } => token_env.iter().cloned().collect(),
        }
    }
}

/// Every variable name whose value some server is given: the worker
/// scrubs their values from a model's reply as it does from a tool's.
pub fn secret_names(servers: &[McpServerSpec]) -> Vec<String> {
    let mut names: Vec<String> = servers.iter().flat_map(|s| s.secret_names()).collect();
    names.sort();
    names.dedup();
    names
}

/// `text` with the values of the variables `names` (on this worker)
/// replaced by `<redacted>`, the longest first.
pub fn scrub_env(mut text: String, names: &[String]) -> String {
    let mut values: Vec<String> = names
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .filter(|v| v.len() >= 4)
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    for value in values {
        if text.contains(&value) {
            text = text.replace(&value, "<redacted>");
        }
    }
    text
}

/// One tool as the history holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub ask: bool,
    pub read_only: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ListIn {
    pub servers: Vec<McpServerSpec>,
}

/// Each server's tools.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Listed {
    pub servers: BTreeMap<String, Vec<WireTool>>,
}

impl From<Listed> for Catalog {
    fn from(listed: Listed) -> Self {
        Catalog {
            servers: listed
                .servers
                .into_iter()
                .map(|(server, tools)| {
                    let tools = tools
                        .into_iter()
                        .map(|t| McpTool {
                            name: t.name,
                            description: t.description,
                            input_schema: t.input_schema,
                            ask: t.ask,
                            read_only: t.read_only,
                        })
                        .collect();
                    (server, tools)
                })
                .collect(),
            unreachable: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallIn {
    pub server: McpServerSpec,
    pub tool: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallOut {
    /// The tool's text or the error the model reads (scrubbed).
    pub result: Result<String, String>,
    /// Why the server is down for the rest of the run, if it is.
    pub down: Option<String>,
}

/// The workflow's MCP servers and what their calls said of them.
#[derive(Debug, Default)]
pub struct McpState {
    pub servers: Vec<McpServerSpec>,
    down: std::cell::RefCell<BTreeMap<String, String>>,
}

impl McpState {
    pub fn new(servers: Vec<McpServerSpec>) -> Self {
        McpState {
            servers,
            down: Default::default(),
        }
    }
}

/// One worker's open sessions: (workflow run id, server) → its client.
type Sessions = BTreeMap<(String, String), (Arc<Mutex<Clients>>, Instant)>;

fn sessions() -> &'static Mutex<Sessions> {
    static SESSIONS: OnceLock<Mutex<Sessions>> = OnceLock::new();
    SESSIONS.get_or_init(|| {
        // The sweeper: closes what has been idle, off the async threads
        // (closing a session blocks on its runtime).
        let _ = std::thread::Builder::new()
            .name("planvault-mcp-idle".into())
            .spawn(|| loop {
                std::thread::sleep(Duration::from_secs(30));
                let idle = take_sessions(|_, used| used.elapsed() >= IDLE);
                drop(idle);
            });
        Mutex::new(BTreeMap::new())
    })
}

/// Remove the sessions `which` picks; dropping what is returned closes them.
fn take_sessions(which: impl Fn(&(String, String), &Instant) -> bool) -> Vec<Arc<Mutex<Clients>>> {
    let mut all = sessions().lock().unwrap_or_else(|e| e.into_inner());
    let keys: Vec<(String, String)> = all
        .iter()
        .filter(|(k, (_, used))| which(k, used))
        .map(|(k, _)| k.clone())
        .collect();
    keys.into_iter()
        .filter_map(|k| all.remove(&k).map(|(c, _)| c))
        .collect()
}

/// The open session of `run` with `spec`'s server, opened if none is.
/// Blocking: call it off the async threads.
fn session(run: &str, spec: &McpServerSpec) -> Result<Arc<Mutex<Clients>>, String> {
    let key = (run.to_string(), spec.name.clone());
    let mut all = sessions().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((clients, used)) = all.get_mut(&key) {
        *used = Instant::now();
        return Ok(clients.clone());
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    let base = command_env(env.clone(), &[]);
    let clients = Clients::new(vec![spec.server()], base, env)
        .map_err(|e| format!("MCP server {}: cannot start its client: {e}", spec.name))?;
    let clients = Arc::new(Mutex::new(clients));
    all.insert(key, (clients.clone(), Instant::now()));
    Ok(clients)
}

/// The workflow run an activity serves (its sessions' key).
fn run_of(ctx: &ActivityContext) -> String {
    let info = ctx.info();
    info.workflow_run_id
        .clone()
        .or_else(|| info.workflow_id.clone())
        .unwrap_or_default()
}

/// The activities a worker registers for MCP servers.
pub struct McpActivities;

#[activities]
impl McpActivities {
    /// Start each server (kept open for the run's calls) and list its tools.
    #[activity]
    pub async fn list(
        ctx: ActivityContext,
        input: ListIn,
    ) -> Result<Result<Listed, String>, ActivityError> {
        let run = run_of(&ctx);
        blocking(move || {
            let mut listed = Listed::default();
            for spec in &input.servers {
                let clients = session(&run, spec)?;
                let catalog = clients.lock().unwrap_or_else(|e| e.into_inner()).list()?;
                for (server, tools) in catalog.servers {
                    let tools = tools
                        .into_iter()
                        .map(|t| WireTool {
                            name: t.name,
                            description: t.description,
                            input_schema: t.input_schema,
                            ask: t.ask,
                            read_only: t.read_only,
                        })
                        .collect();
                    listed.servers.insert(server, tools);
                }
            }
            Ok(listed)
        })
        .await
    }

    /// One tool call, at most once; heartbeats while the server works.
    #[activity]
    pub async fn call(ctx: ActivityContext, input: CallIn) -> Result<CallOut, ActivityError> {
        let run = run_of(&ctx);
        let (_tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let work = tokio::task::spawn_blocking(move || {
            let clients = match session(&run, &input.server) {
                Ok(clients) => clients,
                Err(e) => {
                    return CallOut {
                        result: Err(e),
                        down: None,
                    }
                }
            };
            let clients = clients.lock().unwrap_or_else(|e| e.into_inner());
            let name = &input.server.name;
            CallOut {
                result: clients.call(name, &input.tool, &input.arguments),
                down: clients.down(name),
            }
        });
        beating(&ctx, &mut rx, work).await
    }

    /// Close this run's sessions on this worker (the run has ended).
    #[activity]
    pub async fn close(ctx: ActivityContext, _input: ()) -> Result<(), ActivityError> {
        let run = run_of(&ctx);
        blocking(move || drop(take_sessions(|(r, _), _| *r == run))).await
    }
}

impl TemporalHost {
    /// A listing: retried by Temporal (it changes nothing), bounded by the
    /// runner's own listing bound per server.
    fn mcp_list_options(&self, servers: usize) -> ActivityOptions {
        let bound =
            planvault_runner::mcp::LIST_TIMEOUT * u32::try_from(servers.max(1)).unwrap_or(1);
        ActivityOptions::with_start_to_close_timeout(bound + Duration::from_secs(30))
            .retry_policy(
                RetryPolicy::builder()
                    .initial_interval(Duration::from_millis(
                        self.activity_config().retry_base_ms.max(1),
                    ))
                    .maximum_attempts(self.activity_config().attempts.max(1))
                    .build(),
            )
            .build()
    }

    /// A call: one attempt, heartbeats, not cancelled halfway (a call is
    /// made whole or reported lost).
    fn mcp_call_options(spec: &McpServerSpec) -> ActivityOptions {
        let bound = Duration::from_millis(spec.timeout_ms)
            + planvault_runner::mcp::LIST_TIMEOUT
            + Duration::from_secs(30);
        ActivityOptions::with_start_to_close_timeout(bound)
            .heartbeat_timeout(HEARTBEAT)
            .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
            .cancellation_token(WorkflowCancellationToken::new())
            .build()
    }

    pub(crate) async fn list_mcp(&self) -> Option<Result<Catalog, String>> {
        let servers = self.mcp_state().servers.clone();
        if servers.is_empty() {
            return None;
        }
        let options = self.mcp_list_options(servers.len());
        let listed = self
            .context()
            .execute_activity(McpActivities::list, ListIn { servers }, options)
            .await;
        Some(match listed {
            Ok(Ok(listed)) => Ok(listed.into()),
            Ok(Err(e)) => Err(e),
            Err(e) => Err(format!("no worker could list the MCP servers' tools: {e}")),
        })
    }

    pub(crate) async fn call_mcp(
        &self,
        server: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, String> {
        let Some(spec) = self
            .mcp_state()
            .servers
            .iter()
            .find(|s| s.name == server)
            .cloned()
        else {
            return Err(format!("no MCP server is named {server}"));
        };
        let options = Self::mcp_call_options(&spec);
        let input = CallIn {
            server: spec,
            tool: tool.to_string(),
            arguments: arguments.clone(),
        };
        match self
            .context()
            .execute_activity(McpActivities::call, input, options)
            .await
        {
            Ok(out) => {
                if let Some(why) = out.down {
                    self.mcp_state()
                        .down
                        .borrow_mut()
                        .insert(server.to_string(), why);
                }
                out.result
            }
            Err(e) => Err(lost(server, tool, &e)),
        }
    }

    pub(crate) fn mcp_down_reason(&self, server: &str) -> Option<String> {
        self.mcp_state().down.borrow().get(server).cloned()
    }
}

/// What the model reads of a call whose worker was lost.
fn lost(server: &str, tool: &str, error: &ActivityExecutionError) -> String {
    format!(
        "{server}.{tool}: the worker making the call was lost; it was not made again (it may or may not have taken effect): {error}"
    )
}

/// Close the run's sessions (on the worker that serves this; the others
/// close theirs when idle). Best effort: the run has ended either way.
pub async fn close(host: &TemporalHost) {
    if host.mcp_state().servers.is_empty() {
        return;
    }
    let options = ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
        .cancellation_token(WorkflowCancellationToken::new())
        .build();
    let _ = host
        .context()
        .execute_activity(McpActivities::close, (), options)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_travels_as_names_and_comes_back_the_same() {
        let server = Server {
            name: "ev".into(),
            transport: Transport::Stdio {
                command: "/bin/server".into(),
                args: vec!["stdio".into()],
                env: vec!["TOKEN_A".into()],
                cwd: Some(PathBuf::from("/srv/vault")),
            },
            approve: vec!["write".into()],
            timeout: Duration::from_secs(7),
        };
        let spec = McpServerSpec::from(&server);
        assert_eq!(spec.server(), server);
        let http = McpServerSpec::from(&Server {
            name: "web".into(),
            transport: Transport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                token_env: Some("TOKEN_B".into()),
            },
            approve: vec![],
            timeout: Duration::from_secs(1),
        });
        assert_eq!(secret_names(&[spec, http]), ["TOKEN_A", "TOKEN_B"]);
    }

    #[test]
    fn a_given_value_is_scrubbed_by_its_name() {
        let name = "PLANVAULT_TEMPORAL_MCP_SCRUB_TEST";
        std::env::set_var(name, "value-of-the-server-42");
        assert_eq!(
            scrub_env("it said value-of-the-server-42.".into(), &[name.into()]),
            "it said <redacted>."
        );
        assert_eq!(scrub_env("nothing".into(), &[name.into()]), "nothing");
    }
}
