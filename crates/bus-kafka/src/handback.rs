//! Delivery outcomes go back to the publishing thread in batches.
//!
//! librdkafka reports each record on a thread of its own. Completing a publisher's future from
//! there wakes the publisher's runtime once per record, and a tokio runtime woken from another
//! thread writes to its eventfd every time: a syscall per record, and an epoll wake-up of the
//! gateway's shard. Instead, each publishing thread has an inbox of outcomes, and one task on
//! the publisher's runtime hands them out. The report thread wakes that task only when it finds
//! the inbox empty, so a burst of reports costs one wake-up. Waking a publisher from its own
//! runtime costs no syscall.

use cms_bus::{BusError, Delivered};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::runtime;
use tokio::sync::{Notify, oneshot};

pub(crate) type Outcome = Result<Delivered, BusError>;

/// Where a record's outcome goes: to its publisher, through the publishing thread's inbox when
/// it was published on a tokio runtime.
pub(crate) struct ReplyTo {
    tx: oneshot::Sender<Outcome>,
    inbox: Option<Arc<Inbox>>,
}

impl ReplyTo {
    /// A reply to a publisher on this thread.
    pub(crate) fn here(tx: oneshot::Sender<Outcome>) -> ReplyTo {
        ReplyTo {
            tx,
            inbox: this_threads_inbox(),
        }
    }

    pub(crate) fn send(self, outcome: Outcome) {
        match self.inbox {
            Some(inbox) => inbox.put(self.tx, outcome),
            None => {
                // The publisher may have dropped its future; then nobody waits for it.
                let _ = self.tx.send(outcome);
            }
        }
    }
}

#[derive(Default)]
pub(crate) struct Inbox {
    outcomes: Mutex<Vec<(oneshot::Sender<Outcome>, Outcome)>>,
    ready: Notify,
    /// The task that hands out the outcomes is gone (its runtime stopped).
    closed: AtomicBool,
}

impl Inbox {
    fn put(&self, tx: oneshot::Sender<Outcome>, outcome: Outcome) {
        let first = {
            let mut outcomes = self.outcomes.lock().unwrap_or_else(|e| e.into_inner());
            if self.closed.load(Ordering::Acquire) {
                drop(outcomes);
                let _ = tx.send(outcome);
                return;
            }
            outcomes.push((tx, outcome));
            outcomes.len() == 1
        };
        // Later outcomes of the same burst find the inbox not empty: the task is already woken.
        if first {
            self.ready.notify_one();
        }
    }

    /// Sends what the inbox holds straight to the publishers, and so every later outcome; the
    /// task ends.
    fn close(&self) {
        let left = {
            let mut outcomes = self.outcomes.lock().unwrap_or_else(|e| e.into_inner());
            self.closed.store(true, Ordering::Release);
            std::mem::take(&mut *outcomes)
        };
        for (tx, outcome) in left {
            let _ = tx.send(outcome);
        }
        self.ready.notify_one();
    }
}

thread_local! {
    static INBOX: RefCell<ThisThread> = const { RefCell::new(ThisThread(None)) };
}

/// The inbox of this thread and the runtime its task runs on; closed when the thread ends, so
/// that the task ends too.
struct ThisThread(Option<(runtime::Id, Arc<Inbox>)>);

impl Drop for ThisThread {
    fn drop(&mut self) {
        if let Some((_, inbox)) = self.0.take() {
            inbox.close();
        }
    }
}

/// This thread's inbox for the current runtime, made (with its task) at the first publish;
/// `None` outside a tokio runtime.
fn this_threads_inbox() -> Option<Arc<Inbox>> {
    let runtime = runtime::Handle::try_current().ok()?;
    INBOX.with_borrow_mut(|this| {
        if let Some((id, inbox)) = &this.0
            && *id == runtime.id()
            && !inbox.closed.load(Ordering::Acquire)
        {
            return Some(inbox.clone());
        }
        // A thread that publishes under another runtime now: the last one's inbox is closed
        // (and its task ends), so nothing waits on a runtime this thread no longer drives.
        if let Some((_, previous)) = this.0.take() {
            previous.close();
        }
        let inbox = Arc::new(Inbox::default());
        runtime.spawn(hand_out(CloseOnDrop(inbox.clone())));
        this.0 = Some((runtime.id(), inbox.clone()));
        Some(inbox)
    })
}

/// Closes the inbox when the task that hands out its outcomes is dropped (its runtime stopped,
/// whether or not the task ever ran): later outcomes go straight to their publishers, and this
/// thread's next publish makes a new inbox.
struct CloseOnDrop(Arc<Inbox>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Hands out the outcomes put in the inbox, a burst at a time, until its runtime stops.
async fn hand_out(inbox: CloseOnDrop) {
    let mut burst = Vec::new();
    loop {
        inbox.0.ready.notified().await;
        if inbox.0.closed.load(Ordering::Acquire) {
            return;
        }
        std::mem::swap(
            &mut *inbox.0.outcomes.lock().unwrap_or_else(|e| e.into_inner()),
            &mut burst,
        );
        for (tx, outcome) in burst.drain(..) {
            let _ = tx.send(outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn delivered(offset: i64) -> Outcome {
        Ok(Delivered {
            partition: 0,
            offset,
        })
    }

    #[tokio::test(flavor = "current_thread")]
    async fn outcomes_from_another_thread_reach_their_publishers() {
        let (replies, waits): (Vec<_>, Vec<_>) = (0..100)
            .map(|_| {
                let (tx, rx) = oneshot::channel();
                (ReplyTo::here(tx), rx)
            })
            .unzip();
        assert!(replies.iter().all(|r| r.inbox.is_some()), "on a runtime");
        std::thread::spawn(move || {
            for (offset, reply) in replies.into_iter().enumerate() {
                reply.send(delivered(offset as i64));
            }
        });
        for (offset, wait) in waits.into_iter().enumerate() {
            let outcome = tokio::time::timeout(Duration::from_secs(5), wait).await;
            assert_eq!(outcome.unwrap().unwrap().unwrap().offset, offset as i64);
        }
    }

    #[test]
    fn outcomes_waiting_in_the_inbox_of_a_runtime_that_stops_reach_their_publishers() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (tx, mut rx) = oneshot::channel();
        let reply = runtime.block_on(async { ReplyTo::here(tx) });
        std::thread::spawn(move || reply.send(delivered(9)))
            .join()
            .unwrap();
        // The runtime is not driven: its task (never polled yet) cannot hand the outcome out.
        assert!(rx.try_recv().is_err(), "held in the inbox");
        drop(runtime);
        assert_eq!(rx.blocking_recv().unwrap().unwrap().offset, 9);
    }

    #[test]
    fn a_publish_under_another_runtime_gets_an_inbox_of_that_runtime() {
        let first = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let second = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (tx, _) = oneshot::channel();
        let on_first = first.block_on(async { ReplyTo::here(tx) }).inbox.unwrap();
        let (tx, rx) = oneshot::channel();
        let reply = second.block_on(async { ReplyTo::here(tx) });
        assert!(!Arc::ptr_eq(reply.inbox.as_ref().unwrap(), &on_first));
        assert!(
            on_first.closed.load(Ordering::Acquire),
            "the first runtime's is closed"
        );
        // Handed out by the second runtime while the first is alive but not driven.
        std::thread::spawn(move || reply.send(delivered(3)))
            .join()
            .unwrap();
        let outcome =
            second.block_on(async { tokio::time::timeout(Duration::from_secs(5), rx).await });
        assert_eq!(outcome.unwrap().unwrap().unwrap().offset, 3);
    }

    #[test]
    fn outcomes_for_a_stopped_runtime_or_none_go_straight_to_the_publisher() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (tx, rx) = oneshot::channel();
        let reply = runtime.block_on(async { ReplyTo::here(tx) });
        drop(runtime);
        reply.send(delivered(7));
        assert_eq!(rx.blocking_recv().unwrap().unwrap().offset, 7);

        let (tx, rx) = oneshot::channel();
        let reply = ReplyTo::here(tx);
        assert!(
            reply.inbox.is_none(),
            "a new inbox is made on a runtime only"
        );
        reply.send(delivered(8));
        assert_eq!(rx.blocking_recv().unwrap().unwrap().offset, 8);
    }
}
