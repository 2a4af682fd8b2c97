//! Sessions this gateway held that ended lately. An action addressed to one of them that arrives
//! after its end (the API took it while the session was live, the bus brought it a moment too
//! late) is reported `expired` at once, instead of waiting until the API finds it overdue, a
//! minute and more later.

use bytes::Bytes;
use dashmap::DashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an ended session is remembered: longer than an action waits to be sent (60 s by
/// default). An action later still is ended by the API once overdue, as before.
const REMEMBERED: Duration = Duration::from_secs(10 * 60);
/// How often the remembered sessions are swept of the old ones.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

pub struct EndedSessions {
    /// By session id, when it ended. About 100 bytes a session: a reconnect storm of 100,000
    /// chargers costs 10 MB for ten minutes.
    ended: DashMap<Bytes, Instant>,
    last_sweep: Mutex<Instant>,
}

impl Default for EndedSessions {
    fn default() -> Self {
        EndedSessions {
            ended: DashMap::new(),
            last_sweep: Mutex::new(Instant::now()),
        }
    }
}

impl EndedSessions {
    /// Remembers that `session` ended (or was replaced) now.
    pub fn insert(&self, session: Bytes) {
        let now = Instant::now();
        self.ended.insert(session, now);
        let mut last_sweep = self.last_sweep.lock().unwrap_or_else(|e| e.into_inner());
        if now.duration_since(*last_sweep) >= SWEEP_EVERY {
            *last_sweep = now;
            drop(last_sweep);
            self.ended
                .retain(|_, ended| now.duration_since(*ended) < REMEMBERED);
        }
    }

    /// Whether `session` ended here lately.
    pub fn contains(&self, session: &[u8]) -> bool {
        self.ended.contains_key(session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_session_is_remembered_and_no_other() {
        let ended = EndedSessions::default();
        ended.insert(Bytes::from_static(b"s-1"));
        assert!(ended.contains(b"s-1"));
        assert!(!ended.contains(b"s-2"));
    }
}
