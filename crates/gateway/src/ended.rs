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
/// Sessions remembered at most (about 100 bytes each): a fleet reconnecting over and over is
/// not remembered past it, and its late actions are ended by the API once overdue.
const MAX_REMEMBERED: usize = 200_000;

pub struct EndedSessions {
    /// By session id, when it ended.
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
    /// Remembers that `session` ended now, and forgets the old ones now and then.
    pub fn insert(&self, session: Bytes) {
        let now = Instant::now();
        self.remember(session, now);
        let mut last_sweep = self.last_sweep.lock().unwrap_or_else(|e| e.into_inner());
        if now.duration_since(*last_sweep) >= SWEEP_EVERY {
            *last_sweep = now;
            drop(last_sweep);
            self.sweep(now);
        }
    }

    /// Remembers that `session` ended at `at`, without sweeping: for a caller holding a lock.
    pub fn remember(&self, session: Bytes, at: Instant) {
        if self.ended.len() < MAX_REMEMBERED {
            self.ended.insert(session, at);
        }
    }

    /// Whether `session` ended here lately.
    pub fn contains(&self, session: &[u8]) -> bool {
        self.ended.contains_key(session)
    }

    fn sweep(&self, now: Instant) {
        self.ended
            .retain(|_, ended| now.saturating_duration_since(*ended) < REMEMBERED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_session_is_remembered_for_ten_minutes_and_no_other() {
        let ended = EndedSessions::default();
        let now = Instant::now();
        ended.remember(Bytes::from_static(b"s-1"), now);
        ended.remember(Bytes::from_static(b"s-2"), now + Duration::from_secs(300));
        assert!(ended.contains(b"s-1") && ended.contains(b"s-2"));
        assert!(!ended.contains(b"s-3"));
        ended.sweep(now + Duration::from_secs(601));
        assert!(!ended.contains(b"s-1"), "forgotten after ten minutes");
        assert!(ended.contains(b"s-2"), "remembered within them");
    }
}
