//! What `/readyz` answers, from memory: the process said it serves everything, its consumer
//! has caught up with the bus, and the store answered the last ping of a background check. A
//! probe, anyone's and however many, costs the store nothing.

use cms_bus::CaughtUp;
use cms_store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the store is pinged for `/readyz`.
const STORE_CHECK_EVERY: Duration = Duration::from_secs(1);
/// A ping not answered within this counts as the store down.
const PING_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Readiness {
    /// Set by the process once every listener is up; cleared again when it starts stopping.
    marked: AtomicBool,
    /// The materialiser's consumer has read what its partitions held at start.
    bus: CaughtUp,
    /// The store answered the last ping.
    store_answers: AtomicBool,
}

impl Readiness {
    pub fn new(bus: CaughtUp, store_answers: bool) -> Readiness {
        Readiness {
            marked: AtomicBool::new(false),
            bus,
            store_answers: AtomicBool::new(store_answers),
        }
    }

    pub fn is_ready(&self) -> bool {
        self.marked.load(Ordering::Relaxed)
            && self.bus.is_caught_up()
            && self.store_answers.load(Ordering::Relaxed)
    }

    pub fn mark(&self, ready: bool) {
        self.marked.store(ready, Ordering::Relaxed);
    }
}

/// Whether the store answers a ping in time.
pub async fn store_answers(store: &Store) -> bool {
    tokio::time::timeout(PING_TIMEOUT, store.ping())
        .await
        .unwrap_or(false)
}

/// Pings the store every [`STORE_CHECK_EVERY`] until `stop`, keeping `readiness` told.
pub async fn check_store(
    store: Store,
    readiness: std::sync::Arc<Readiness>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(STORE_CHECK_EVERY) => {}
        }
        let answers = store_answers(&store).await;
        let answered = readiness.store_answers.swap(answers, Ordering::Relaxed);
        match (answered, answers) {
            (true, false) => tracing::warn!("the store does not answer: not ready"),
            (false, true) => tracing::info!("the store answers again"),
            _ => {}
        }
    }
}
