//! Whether a subscriber has read what its topics held when it began: what an API replica waits
//! for before it calls itself ready, so that what it serves is as fresh as the bus.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once, by the subscriber, when it has handed out (and seen handled) every record its
/// partitions held when it began; clones share the one flag.
#[derive(Debug, Clone)]
pub struct CaughtUp(Arc<AtomicBool>);

impl CaughtUp {
    /// Not caught up until [`CaughtUp::set`].
    pub fn not_yet() -> CaughtUp {
        CaughtUp(Arc::new(AtomicBool::new(false)))
    }

    /// Caught up from the start: a bus that starts empty, a follower that starts at the end.
    pub fn already() -> CaughtUp {
        CaughtUp(Arc::new(AtomicBool::new(true)))
    }

    pub fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn is_caught_up(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
