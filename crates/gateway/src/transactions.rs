//! transactionIds for StartTransaction, allocated by the gateway without a database.
//!
//! An id is the gateway's clock in seconds since 2025-01-01 (fits an i32 until 2093), raised
//! above the last id given to the same charger, so ids are unique per charger across
//! reconnects and restarts (the clock moves on) and across gateways with synchronised clocks.
//! A retried StartTransaction (same connector, idTag, meterStart and timestamp) gets the id it
//! was given before, from a short per-charger memory: chargers retry when an answer is lost,
//! and a second id would split one charging session in two.

use dashmap::DashMap;
use std::collections::VecDeque;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

const EPOCH_2025: i64 = 1_735_689_600;
/// Starts remembered per charger for retries: chargers have few connectors.
const REMEMBERED: usize = 8;

/// What makes two StartTransactions the same one.
#[derive(Hash)]
pub struct StartKey<'a> {
    pub connector_id: u32,
    pub id_tag: &'a str,
    pub meter_start: i32,
    pub timestamp: i64,
}

#[derive(Default)]
struct ChargerStarts {
    last_id: i32,
    recent: VecDeque<(u64, i32)>,
}

#[derive(Default)]
pub struct TransactionIds {
    by_charger: DashMap<Box<str>, ChargerStarts>,
}

impl TransactionIds {
    /// The transactionId for this start of this charger, given the clock `now_unix` (seconds).
    pub fn allocate(&self, identity: &str, key: &StartKey<'_>, now_unix: i64) -> i32 {
        let fingerprint = BuildHasherDefault::<DefaultHasher>::default().hash_one(key);
        let mut starts = self.by_charger.entry(identity.into()).or_default();
        if let Some((_, id)) = starts.recent.iter().find(|(f, _)| *f == fingerprint) {
            return *id;
        }
        let clock = (now_unix - EPOCH_2025).clamp(1, i32::MAX as i64) as i32;
        let id = clock.max(starts.last_id.saturating_add(1));
        starts.last_id = id;
        if starts.recent.len() == REMEMBERED {
            starts.recent.pop_front();
        }
        starts.recent.push_back((fingerprint, id));
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(connector_id: u32, meter_start: i32) -> StartKey<'static> {
        StartKey {
            connector_id,
            id_tag: "TAG",
            meter_start,
            timestamp: 1_790_000_000,
        }
    }

    #[test]
    fn a_retried_start_gets_the_same_id() {
        let ids = TransactionIds::default();
        let now = 1_790_000_000;
        let first = ids.allocate("CP1", &key(1, 100), now);
        assert_eq!(ids.allocate("CP1", &key(1, 100), now + 30), first);
    }

    #[test]
    fn starts_in_the_same_second_get_distinct_ids() {
        let ids = TransactionIds::default();
        let now = 1_790_000_000;
        let a = ids.allocate("CP1", &key(1, 100), now);
        let b = ids.allocate("CP1", &key(2, 100), now);
        let c = ids.allocate("CP1", &key(1, 200), now);
        assert!(a < b && b < c, "{a} {b} {c}");
    }

    #[test]
    fn ids_follow_the_clock_so_a_restarted_gateway_does_not_reuse_them() {
        let before = TransactionIds::default().allocate("CP1", &key(1, 1), 1_790_000_000);
        let after = TransactionIds::default().allocate("CP1", &key(1, 2), 1_790_000_060);
        assert!(after > before);
        assert!(before > 0);
    }
}
