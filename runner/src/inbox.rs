//! Messages from the app waiting for the driver. The message handler pushes;
//! the driver takes them at its checkpoints or waits for the next one.

use planvault_protocol::ToWorker;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct State {
    queue: VecDeque<ToWorker>,
    waker: Option<Waker>,
    stop: bool,
    /// A stop raised from another thread (the terminal's Ctrl-C).
    flag: Option<Arc<AtomicBool>>,
}

/// A single-threaded mailbox (the worker has one thread).
#[derive(Clone, Default)]
pub struct Inbox(Rc<RefCell<State>>);

impl Inbox {
    pub fn new() -> Self {
        Inbox::default()
    }

    /// An inbox that also stops once `flag` is set (by a signal handler).
    pub fn with_stop_flag(flag: Arc<AtomicBool>) -> Self {
        let inbox = Inbox::default();
        inbox.0.borrow_mut().flag = Some(flag);
        inbox
    }

    /// Deliver a message; a Stop is also visible at once through
    /// [`Inbox::stop_requested`], so a reply being read can be cut off.
    pub fn push(&self, message: ToWorker) {
        let waker = {
            let mut state = self.0.borrow_mut();
            if message == ToWorker::Stop {
                state.stop = true;
            }
            state.queue.push_back(message);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub fn take(&self) -> Option<ToWorker> {
        self.0.borrow_mut().queue.pop_front()
    }

    pub fn stop_requested(&self) -> bool {
        let state = self.0.borrow();
        state.stop
            || state
                .flag
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
    }

    /// Forget everything (a new run begins).
    pub fn clear(&self) {
        let mut state = self.0.borrow_mut();
        state.queue.clear();
        state.stop = false;
    }

    /// The next message, waiting for it if none is queued.
    pub fn next(&self) -> Next<'_> {
        Next(self)
    }
}

pub struct Next<'a>(&'a Inbox);

impl Future for Next<'_> {
    type Output = ToWorker;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToWorker> {
        let mut state = self.0 .0.borrow_mut();
        match state.queue.pop_front() {
            Some(message) => Poll::Ready(message),
            None => {
                state.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
