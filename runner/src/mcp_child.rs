//! A stdio MCP server's transport: rmcp's own line reader and writer over
//! the child's pipes, and rmcp's shutdown, but for one thing. rmcp's child
//! transport drops a line longer than its limit (16 MiB) and reads on, so
//! the call it answered waits out its whole timeout, and the model then
//! reads "timed out" as the tool's answer (mcp-server-filesystem sends a
//! 9 MB file twice, as text and as structured content). Here such a line
//! ends the session at once, and [`ChildStdio::overflowed`] says why, as
//! the HTTP transport fails a reply past the same size.

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use rmcp::transport::Transport;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The longest message a server may send, in bytes: rmcp's bound on a
/// line, and on an event over HTTP.
pub const LINE_LIMIT: usize = DEFAULT_MAX_LINE_LENGTH;

/// How long a child has to exit after its stdin closes, and again after
/// `SIGTERM`, before it is killed: rmcp's waits.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// A child's stdout, failing the read that takes a line past
/// [`LINE_LIMIT`] (so the transport ends) and setting `overflowed`.
struct Bounded {
    out: ChildStdout,
    /// Bytes since the last line break.
    line: usize,
    overflowed: Arc<AtomicBool>,
}

impl AsyncRead for Bounded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.out).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let read = &buf.filled()[before..];
        this.line = match read.iter().rposition(|b| *b == b'\n') {
            Some(at) => read.len() - at - 1,
            None => this.line + read.len(),
        };
        if this.line > LINE_LIMIT {
            this.overflowed.store(true, Ordering::SeqCst);
            return Poll::Ready(Err(std::io::Error::other(format!(
                "a message over {} MiB",
                LINE_LIMIT >> 20
            ))));
        }
        Poll::Ready(Ok(()))
    }
}

/// A running stdio server: its process and the transport over its pipes.
pub struct ChildStdio {
    child: Option<Child>,
    transport: AsyncRwTransport<RoleClient, Bounded, ChildStdin>,
    overflowed: Arc<AtomicBool>,
}

impl ChildStdio {
    /// The transport of `child`, spawned with piped stdin and stdout.
    pub fn new(mut child: Child) -> std::io::Result<ChildStdio> {
        let missing = || std::io::Error::other("the child's pipes were not set up");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let out = child.stdout.take().ok_or_else(missing)?;
        let overflowed = Arc::new(AtomicBool::new(false));
        let read = Bounded {
            out,
            line: 0,
            overflowed: overflowed.clone(),
        };
        Ok(ChildStdio {
            child: Some(child),
            transport: AsyncRwTransport::new(read, stdin),
            overflowed,
        })
    }

    /// Whether the session ended on a message past [`LINE_LIMIT`]; readable
    /// after the transport moved into its service.
    pub fn overflowed(&self) -> Arc<AtomicBool> {
        self.overflowed.clone()
    }

    /// The child's process id.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }
}

/// Whether `child` exited within [`EXIT_WAIT`].
async fn exited(child: &mut Child) -> bool {
    tokio::time::timeout(EXIT_WAIT, child.wait())
        .await
        .is_ok_and(|status| status.is_ok())
}

impl Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    /// As MCP says and rmcp does: stdin closed, then `SIGTERM`, then a
    /// kill. Should this be cut short, the child dies with its handle
    /// (`kill_on_drop`).
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.transport.close().await?;
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        if exited(child).await {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = child
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32))
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            if exited(child).await {
                self.child = None;
                return Ok(());
            }
        }
        child.kill().await?;
        self.child = None;
        Ok(())
    }
}
