//! Spacing of the configuration reads a gateway makes of its own accord after boots.
//!
//! A fleet that reconnects at once (a gateway restart, a network outage) boots thousands of
//! chargers a second. Reading every configuration the moment its charger booted made each
//! read's records, reports and store rows pile up behind the boots, among the connections'
//! long-lived allocations: 1-2.5 KiB per connection stayed resident after the storm
//! (docs/performance.md, "Configuration reads, spaced"). Spaced at a steady rate, they follow
//! the storm instead of adding to it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Gives each event the next free slot, `interval` after the one before: at most one event per
/// interval, in the order they asked, none waiting when the rate is not reached.
pub struct Pacer {
    /// Zero: every event at once.
    interval: Duration,
    base: Instant,
    /// The next free slot, in nanoseconds since `base`.
    next: AtomicU64,
}

impl Pacer {
    /// At most `per_second` events a second; `0` for no spacing.
    pub fn new(per_second: u32) -> Self {
        let interval = match per_second {
            0 => Duration::ZERO,
            n => Duration::from_secs(1) / n,
        };
        Pacer {
            interval,
            base: Instant::now(),
            next: AtomicU64::new(0),
        }
    }

    /// When an event asked for at `now` may happen (`now` itself when the rate allows it).
    pub fn slot(&self, now: Instant) -> Instant {
        if self.interval.is_zero() {
            return now;
        }
        let now_ns = now.saturating_duration_since(self.base).as_nanos() as u64;
        let interval = self.interval.as_nanos() as u64;
        let mut next = self.next.load(Ordering::Relaxed);
        loop {
            let slot = next.max(now_ns);
            match self.next.compare_exchange_weak(
                next,
                slot + interval,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return self.base + Duration::from_nanos(slot),
                Err(current) => next = current,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_under_the_rate_happen_at_once_and_a_burst_is_spaced_in_order() {
        let pacer = Pacer::new(10);
        let now = Instant::now();
        assert_eq!(pacer.slot(now), now, "the first is not held");
        let burst: Vec<Instant> = (0..5).map(|_| pacer.slot(now)).collect();
        for (i, slot) in burst.iter().enumerate() {
            assert_eq!(*slot, now + Duration::from_millis(100) * (i as u32 + 1));
        }
        let later = now + Duration::from_secs(10);
        assert_eq!(pacer.slot(later), later, "a quiet spell frees the slots");
    }

    #[test]
    fn zero_means_no_spacing() {
        let pacer = Pacer::new(0);
        let now = Instant::now();
        assert!((0..100).all(|_| pacer.slot(now) == now));
    }
}
