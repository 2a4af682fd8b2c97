//! Counters and the latency histograms, shared by all chargers: one for the whole run, one for
//! the current second (taken and emptied by the progress task each tick).

use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Latencies are recorded in microseconds, 1 µs to 10 minutes, 3 significant figures.
const MAX_MICROS: u64 = 600_000_000;

pub fn histogram() -> Histogram<u64> {
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
    /// Calls from the central system, received.
    pub server_calls: AtomicU64,
    /// Calls from the central system answered with a CALLRESULT (the rest: NotImplemented).
    pub server_answered: AtomicU64,
    pub transactions: AtomicU64,
    /// Authorize answered with another status than Accepted.
    pub authorize_refused: AtomicU64,
}

/// One shard's latencies: both histograms behind one lock, so a record takes one lock.
struct Shard {
    /// The whole run.
    run: Histogram<u64>,
    /// Since the progress task last took it.
    interval: Histogram<u64>,
}

/// Counters plus latency histograms sharded to keep lock contention low.
pub struct Stats {
    pub counters: Counters,
    shards: Vec<Mutex<Shard>>,
    started: Instant,
    /// Microseconds from `started` to the latest accepted boot.
    last_boot_us: AtomicU64,
    /// Why the first charger that could not connect could not.
    first_failure: OnceLock<String>,
}

impl Stats {
    pub fn new(shards: usize) -> Self {
        Self {
            counters: Counters::default(),
            shards: (0..shards.max(1))
                .map(|_| {
                    Mutex::new(Shard {
                        run: histogram(),
                        interval: histogram(),
                    })
                })
                .collect(),
            started: Instant::now(),
            last_boot_us: AtomicU64::new(0),
            first_failure: OnceLock::new(),
        }
    }

    /// Counts an accepted BootNotification and when it came.
    pub fn booted(&self) {
        Self::bump(&self.counters.booted);
        let us = self.started.elapsed().as_micros() as u64;
        self.last_boot_us.fetch_max(us, Ordering::Relaxed);
    }

    /// Seconds from the start of the run to the latest accepted boot.
    pub fn last_boot_s(&self) -> f64 {
        self.last_boot_us.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Counts a charger that could not connect; the first one's reason is kept.
    pub fn failed(&self, why: impl FnOnce() -> String) {
        Self::bump(&self.counters.failed);
        if self.first_failure.get().is_none() {
            let _ = self.first_failure.set(why());
        }
    }

    pub fn first_failure(&self) -> Option<String> {
        self.first_failure.get().cloned()
    }

    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one send-to-answer time; `who` picks the shard.
    pub fn record(&self, who: usize, latency: Duration) {
        let micros = (latency.as_micros() as u64).clamp(1, MAX_MICROS);
        let shard = &self.shards[who % self.shards.len()];
        if let Ok(mut s) = shard.lock() {
            s.run.saturating_record(micros);
            s.interval.saturating_record(micros);
        }
    }

    /// Forgets the latencies recorded so far (the run's, not the interval's).
    pub fn reset_latency(&self) {
        for shard in &self.shards {
            if let Ok(mut s) = shard.lock() {
                s.run.reset();
            }
        }
    }

    /// The whole run, all shards merged.
    pub fn latency(&self) -> Histogram<u64> {
        let mut all = histogram();
        for shard in &self.shards {
            if let Ok(s) = shard.lock() {
                let _ = all.add(&s.run);
            }
        }
        all
    }

    /// The latencies recorded since the last call, all shards merged; starts a new interval.
    /// Each shard's interval histogram is swapped with an empty one, so a lock is held only
    /// for the swap and the merging happens outside it.
    pub fn take_interval(&self) -> Histogram<u64> {
        let mut all = histogram();
        let mut spare = histogram();
        for shard in &self.shards {
            if let Ok(mut s) = shard.lock() {
                std::mem::swap(&mut s.interval, &mut spare);
            }
            let _ = all.add(&spare);
            spare.reset();
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
            server_answered: get(&c.server_answered),
            transactions: get(&c.transactions),
            authorize_refused: get(&c.authorize_refused),
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
    pub server_answered: u64,
    pub transactions: u64,
    pub authorize_refused: u64,
}

impl Snapshot {
    /// Everything that went wrong, in one number.
    pub fn errors(&self) -> u64 {
        self.failed + self.boot_rejected + self.callerrors + self.timeouts + self.disconnects
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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

    /// p50 and p99 in milliseconds, or None for an empty histogram (nothing answered).
    pub fn p50_p99(h: &Histogram<u64>) -> (Option<f64>, Option<f64>) {
        if h.is_empty() {
            return (None, None);
        }
        let l = Self::of(h);
        (Some(l.p50), Some(l.p99))
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
    fn per_second_percentiles_from_the_interval() {
        let stats = Stats::new(4);
        assert_eq!(Latency::p50_p99(&stats.take_interval()), (None, None));
        // First second: 1..=100 ms.
        for ms in 1..=100u64 {
            stats.record(ms as usize, Duration::from_millis(ms));
        }
        let (p50, p99) = Latency::p50_p99(&stats.take_interval());
        assert!(close(p50.unwrap(), 50.0), "{p50:?}");
        assert!(close(p99.unwrap(), 99.0), "{p99:?}");
        // Second second: only 200..=299 ms; the first second's calls are gone from it.
        for ms in 200..300u64 {
            stats.record(ms as usize, Duration::from_millis(ms));
        }
        let second = stats.take_interval();
        assert_eq!(second.len(), 100);
        let (p50, p99) = Latency::p50_p99(&second);
        assert!(close(p50.unwrap(), 249.0), "{p50:?}");
        assert!(close(p99.unwrap(), 298.0), "{p99:?}");
        // A second with no answers, and the whole run kept all of them.
        assert_eq!(Latency::p50_p99(&stats.take_interval()), (None, None));
        assert_eq!(stats.latency().len(), 200);
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
