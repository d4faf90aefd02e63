//! The run lock file, `.planvault/run.lock`: who runs a vault, so a second
//! run (in the terminal or in a browser tab, on the same folder) refuses
//! and names the holder. `key=value` lines: the terminal writes `pid`,
//! `host` (the machine's name) and, where it can tell, when the process
//! `started`; a browser writes `host=browser` and its `tab`. The terminal creates the file exclusively
//! (`native::VaultLock`); a browser, whose directory handle has no
//! exclusive create, checks and then writes it through the [`Host`]
//! ([`take`]), under a Web Lock that keeps its own tabs apart.

use crate::host::Host;
use planvault_protocol::{ErrorCode, RunError};

/// The vault-relative lock file (a dot-folder, so never listed).
pub const LOCK_FILE: &str = ".planvault/run.lock";
/// The `host` a browser run writes.
pub const BROWSER_HOST: &str = "browser";
/// The `host` a Temporal run writes (no one process holds it).
pub const TEMPORAL_HOST: &str = "temporal";

/// Who holds (or wants) a vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The process id (`?` when the file has none, as a browser's).
    pub pid: String,
    pub host: String,
    /// A browser tab's id.
    pub tab: Option<String>,
    /// A Temporal run's workflow id.
    pub run: Option<String>,
    /// When the process started, as `native::process_start` tells it: a
    /// later process given the same pid (a restarted container counts
    /// from 1 again) is no holder.
    pub started: Option<String>,
    /// The pid namespace its pid is counted in (`pid:[4026531836]`), as
    /// `native::pid_namespace` tells it: from another one (a container
    /// sharing the machine's name and the vault) the pid names some other
    /// process, so the holder cannot be seen.
    pub pidns: Option<String>,
}

impl Holder {
    /// A terminal run: this process on this machine.
    pub fn process(pid: u32, host: &str) -> Holder {
        Holder {
            pid: pid.to_string(),
            host: host.to_string(),
            tab: None,
            run: None,
            started: None,
            pidns: None,
        }
    }

    /// This holder, said to have started at `started`.
    pub fn started(self, started: Option<String>) -> Holder {
        Holder { started, ..self }
    }

    /// This holder, its pid counted in the namespace `pidns`.
    pub fn in_namespace(self, pidns: Option<String>) -> Holder {
        Holder { pidns, ..self }
    }

    /// A run in a browser tab.
    pub fn browser(tab: &str) -> Holder {
        Holder {
            pid: "?".into(),
            host: BROWSER_HOST.into(),
            tab: Some(tab.to_string()),
            run: None,
            started: None,
            pidns: None,
        }
    }

    /// A Temporal run, whichever worker serves it.
    pub fn temporal(workflow_id: &str) -> Holder {
        Holder {
            pid: "?".into(),
            host: TEMPORAL_HOST.into(),
            tab: None,
            run: Some(workflow_id.to_string()),
            started: None,
            pidns: None,
        }
    }

    /// A lock file's text (missing fields read as `?`).
    pub fn parse(text: &str) -> Holder {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                .map(|v| v.trim().to_string())
        };
        Holder {
            pid: field("pid").unwrap_or_else(|| "?".into()),
            host: field("host").unwrap_or_else(|| "?".into()),
            tab: field("tab"),
            run: field("run"),
            started: field("started"),
            pidns: field("pidns"),
        }
    }

    /// The lock file's text.
    pub fn render(&self) -> String {
        match (&self.tab, &self.run) {
            (Some(tab), _) => format!("host={}\ntab={tab}\n", self.host),
            (None, Some(run)) => format!("host={}\nrun={run}\n", self.host),
            (None, None) => {
                let mut text = format!("pid={}\nhost={}\n", self.pid, self.host);
                for (key, value) in [("started", &self.started), ("pidns", &self.pidns)] {
                    if let Some(value) = value {
                        text.push_str(&format!("{key}={value}\n"));
                    }
                }
                text
            }
        }
    }

    pub fn is_browser(&self) -> bool {
        self.host == BROWSER_HOST
    }

    pub fn is_temporal(&self) -> bool {
        self.host == TEMPORAL_HOST
    }

    /// Who it is, for a person.
    pub fn describe(&self) -> String {
        if let (Some(run), true) = (&self.run, self.is_temporal()) {
            return format!("the Temporal run {run}");
        }
        match (&self.tab, self.is_browser()) {
            (Some(tab), _) => format!("a browser tab (tab {tab})"),
            (None, true) => "a browser tab".into(),
            (None, false) => format!("process {} on {}", self.pid, self.host),
        }
    }

    /// Why a run refuses a vault this holder has: who, and how to break
    /// a stale lock (`path`: the lock file as the person can find it).
    pub fn refusal(&self, path: &str) -> String {
        let gone = if self.is_browser() {
            "if no browser tab is running it (a tab that crashed)"
        } else if self.is_temporal() {
            "if that run was terminated before it could end (`planvault runs` lists it)"
        } else {
            "if that process is gone (a crash, another machine)"
        };
        format!(
            "the vault is being run by {} ({path}); wait for that run to end, or, {gone}, delete {path} and run again",
            self.describe()
        )
    }
}

/// Take the vault for a browser run (`me`: its tab), whose own tabs are
/// kept apart by a Web Lock the caller holds: a lock file left by a browser
/// tab is therefore stale and taken over; one left by a terminal run is
/// refused, naming it. (Check then write: between the two a terminal run
/// could create the file; the window is one read.)
pub async fn take<H: Host>(host: &H, me: &Holder) -> Result<(), RunError> {
    take_at(host, me, LOCK_FILE).await
}

/// Where a plan folder's run also holds a lock: the folder may be run as
/// a vault of its own too (`--vault-root` it, or open it in the app),
/// whose lock is this same file, so the two runs never share its trace.
pub fn folder_lock(folder: &str) -> String {
    format!("{}/{LOCK_FILE}", folder.trim_matches('/'))
}

/// [`take`] of the lock file at `path`.
pub async fn take_at<H: Host>(host: &H, me: &Holder, path: &str) -> Result<(), RunError> {
    let io = |e| {
        RunError::new(
            ErrorCode::VaultIo,
            format!("cannot lock the vault ({path}): {e}"),
        )
    };
    if let Some(text) = host.read(path).await.map_err(io)? {
        let holder = Holder::parse(&text);
        // An empty lock is a write that never landed (a browser's file
        // exists empty until its text is closed in; a terminal's lock is
        // never empty): nobody holds it.
        if !holder.is_browser() && !text.trim().is_empty() {
            return Err(locked_at(&holder, path));
        }
    }
    host.write(path, &me.render()).await.map_err(io)?;
    Ok(())
}

/// Give the vault back: the lock file goes if it is still `me`'s.
pub async fn release<H: Host>(host: &H, me: &Holder) {
    release_at(host, me, LOCK_FILE).await
}

/// [`release`] of the lock file at `path`.
pub async fn release_at<H: Host>(host: &H, me: &Holder, path: &str) {
    if let Ok(Some(text)) = host.read(path).await {
        if Holder::parse(&text) == *me {
            let _ = host.remove(path).await;
        }
    }
}

/// The typed refusal of a vault `holder` runs.
pub fn locked(holder: &Holder) -> RunError {
    locked_at(holder, LOCK_FILE)
}

fn locked_at(holder: &Holder, path: &str) -> RunError {
    RunError::new(ErrorCode::VaultLocked, holder.refusal(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::Inbox;
    use crate::memory::{block_on, MemoryHost};
    use std::collections::BTreeMap;

    #[test]
    fn a_lock_file_reads_back_as_its_holder() {
        for holder in [
            Holder::process(4242, "build-box"),
            Holder::process(4242, "build-box").started(Some("b00t:1234".into())),
            Holder::process(4242, "build-box")
                .started(Some("b00t:1234".into()))
                .in_namespace(Some("pid:[4026531836]".into())),
            Holder::browser("k3f9"),
        ] {
            assert_eq!(Holder::parse(&holder.render()), holder);
        }
        assert_eq!(
            Holder::process(7, "box").render(),
            "pid=7\nhost=box\n",
            "the terminal's format"
        );
        assert_eq!(Holder::browser("t1").render(), "host=browser\ntab=t1\n");
        let run = Holder::temporal("planvault-0123456789ab-main");
        assert_eq!(Holder::parse(&run.render()), run);
        assert_eq!(
            run.render(),
            "host=temporal\nrun=planvault-0123456789ab-main\n"
        );
        let refusal = run.refusal(LOCK_FILE);
        assert!(
            refusal.contains("the Temporal run planvault-0123456789ab-main")
                && refusal.contains("terminated"),
            "{refusal}"
        );
        let odd = Holder::parse("garbage");
        assert_eq!((odd.pid.as_str(), odd.host.as_str()), ("?", "?"));
        let cli = Holder::process(4242, "build-box").refusal(LOCK_FILE);
        assert!(
            cli.contains("process 4242 on build-box") && cli.contains("delete .planvault/run.lock"),
            "{cli}"
        );
        let tab = Holder::browser("t1").refusal(LOCK_FILE);
        assert!(tab.contains("a browser tab (tab t1)"), "{tab}");
    }

    #[test]
    fn a_browser_run_refuses_a_terminal_run_and_takes_over_a_closed_tabs_lock() {
        let inbox = Inbox::new();
        let host = MemoryHost::new(BTreeMap::new(), &inbox, |_| panic!("no model call"));
        let me = Holder::browser("mine");
        host.files
            .borrow_mut()
            .insert(LOCK_FILE.into(), "pid=4242\nhost=build-box\n".into());
        let err = block_on(take(&host, &me)).unwrap().unwrap_err();
        assert_eq!(err.code, ErrorCode::VaultLocked);
        assert!(err.message.contains("process 4242 on build-box"), "{err:?}");
        assert_eq!(
            host.file(LOCK_FILE).as_deref(),
            Some("pid=4242\nhost=build-box\n"),
            "the holder's lock is left alone"
        );
        block_on(release(&host, &me)).unwrap();
        assert!(host.file(LOCK_FILE).is_some(), "not mine to remove");

        host.files
            .borrow_mut()
            .insert(LOCK_FILE.into(), Holder::browser("gone").render());
        block_on(take(&host, &me)).unwrap().unwrap();
        assert_eq!(host.file(LOCK_FILE), Some(me.render()));
        block_on(release(&host, &me)).unwrap();
        assert_eq!(host.file(LOCK_FILE), None);

        // A tab reloaded while its lock was being written left it empty
        // (found by an audit reloading at every moment): taken over, not
        // "process ? on ?" for good.
        host.files
            .borrow_mut()
            .insert(LOCK_FILE.into(), String::new());
        block_on(take(&host, &me)).unwrap().unwrap();
        assert_eq!(host.file(LOCK_FILE), Some(me.render()));
    }
}
