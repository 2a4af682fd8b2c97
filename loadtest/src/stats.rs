//! Counters and the latency histogram, shared by all chargers.

use hdrhistogram::Histogram;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Latencies are recorded in microseconds, 1 µs to 10 minutes, 3 significant figures.
const MAX_MICROS: u64 = 600_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid histogram bounds")
}

#[derive(Default)]
pub struct Counters {
    /// Websockets opened (handshake done).
    pub established: AtomicU64,
    /// Websockets open right now.
    pub open: AtomicU64,
    /// Connect or handshake failed.
    pub failed: AtomicU64,
    pub booted: AtomicU64,
    /// BootNotification answered but not Accepted, or not answered with a CALLRESULT.
    pub boot_rejected: AtomicU64,
    pub sent: AtomicU64,
    pub answered: AtomicU64,
    pub callerrors: AtomicU64,
    /// Calls given up on after `--timeout`.
    pub timeouts: AtomicU64,
    /// Connections closed by the other side (or broken) before the end of the run.
    pub disconnects: AtomicU64,
    /// Calls from the central system (answered with NotImplemented).
    pub server_calls: AtomicU64,
    pub transactions: AtomicU64,
}

/// Counters plus a latency histogram sharded to keep lock contention low.
pub struct Stats {
    pub counters: Counters,
    shards: Vec<Mutex<Histogram<u64>>>,
}

impl Stats {
    pub fn new(shards: usize) -> Self {
        Self {
            counters: Counters::default(),
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(histogram()))
                .collect(),
        }
    }

    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one send-to-answer time; `who` picks the shard.
    pub fn record(&self, who: usize, latency: Duration) {
        let micros = (latency.as_micros() as u64).clamp(1, MAX_MICROS);
        let shard = &self.shards[who % self.shards.len()];
        if let Ok(mut h) = shard.lock() {
            h.saturating_record(micros);
        }
    }

    /// All shards merged.
    pub fn latency(&self) -> Histogram<u64> {
        let mut all = histogram();
        for shard in &self.shards {
            if let Ok(h) = shard.lock() {
                let _ = all.add(&*h);
            }
        }
        all
    }

    pub fn snapshot(&self) -> Snapshot {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Snapshot {
            established: get(&c.established),
            open: get(&c.open),
            failed: get(&c.failed),
            booted: get(&c.booted),
            boot_rejected: get(&c.boot_rejected),
            sent: get(&c.sent),
            answered: get(&c.answered),
            callerrors: get(&c.callerrors),
            timeouts: get(&c.timeouts),
            disconnects: get(&c.disconnects),
            server_calls: get(&c.server_calls),
            transactions: get(&c.transactions),
        }
    }
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Snapshot {
    pub established: u64,
    pub open: u64,
    pub failed: u64,
    pub booted: u64,
    pub boot_rejected: u64,
    pub sent: u64,
    pub answered: u64,
    pub callerrors: u64,
    pub timeouts: u64,
    pub disconnects: u64,
    pub server_calls: u64,
    pub transactions: u64,
}

impl Snapshot {
    /// Everything that went wrong, in one number.
    pub fn errors(&self) -> u64 {
        self.failed + self.boot_rejected + self.callerrors + self.timeouts + self.disconnects
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Latency {
    pub count: u64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

impl Latency {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let ms = |micros: u64| micros as f64 / 1000.0;
        Self {
            count: h.len(),
            p50: ms(h.value_at_quantile(0.50)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
            mean: h.mean() / 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= b * 0.002 + 0.001
    }

    #[test]
    fn percentiles_in_ms() {
        let stats = Stats::new(4);
        // 1..=1000 ms, one each, over all shards.
        for ms in 1..=1000u64 {
            stats.record(ms as usize, Duration::from_millis(ms));
        }
        let l = Latency::of(&stats.latency());
        assert_eq!(l.count, 1000);
        assert!(close(l.p50, 500.0), "{l:?}");
        assert!(close(l.p99, 990.0), "{l:?}");
        assert!(close(l.p999, 999.0), "{l:?}");
        assert!(close(l.max, 1000.0), "{l:?}");
        assert!(close(l.mean, 500.5), "{l:?}");
    }

    #[test]
    fn empty_and_out_of_range() {
        let stats = Stats::new(1);
        assert_eq!(Latency::of(&stats.latency()), Latency::default());
        stats.record(0, Duration::ZERO);
        stats.record(0, Duration::from_secs(3600));
        let l = Latency::of(&stats.latency());
        assert_eq!(l.count, 2);
        assert!(l.p50 <= 0.002, "{l:?}");
        assert!(close(l.max, 600_000.0), "{l:?}");
    }

    #[test]
    fn errors_add_up() {
        let s = Snapshot {
            failed: 1,
            boot_rejected: 2,
            callerrors: 3,
            timeouts: 4,
            disconnects: 5,
            answered: 100,
            ..Snapshot::default()
        };
        assert_eq!(s.errors(), 15);
    }
}
