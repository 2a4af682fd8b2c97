//! The latest-value cache: the newest reading of every connector, in memory, ready to serve.

use bytes::Bytes;
use dashmap::DashMap;

/// One connector's newest reading: the REST `meterValue` array, already serialised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestReading {
    /// Newest sample time in the reading, record timestamp form (sorts in time order).
    pub measured_at: String,
    pub meter_value: Bytes,
}

/// Readings by (charger identity, connector id), shared by the materialiser and the API.
#[derive(Default)]
pub struct LatestValueCache {
    readings: DashMap<(Box<str>, u32), LatestReading>,
}

impl LatestValueCache {
    /// Keeps `reading` if it is at least as new as the one held; returns whether it was kept.
    pub fn offer(&self, identity: &str, connector_id: u32, reading: LatestReading) -> bool {
        let mut kept = false;
        self.readings
            .entry((identity.into(), connector_id))
            .and_modify(|held| {
                if reading.measured_at >= held.measured_at {
                    *held = reading.clone();
                    kept = true;
                }
            })
            .or_insert_with(|| {
                kept = true;
                reading.clone()
            });
        kept
    }

    pub fn get(&self, identity: &str, connector_id: u32) -> Option<LatestReading> {
        // A borrowed key would need a tuple of references; the identity copy is per request.
        self.readings
            .get(&(identity.into(), connector_id))
            .map(|r| r.clone())
    }

    pub fn len(&self) -> usize {
        self.readings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.readings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at: &str, value: &'static str) -> LatestReading {
        LatestReading {
            measured_at: at.into(),
            meter_value: Bytes::from_static(value.as_bytes()),
        }
    }

    #[test]
    fn a_newer_reading_replaces_an_older_one_but_not_the_reverse() {
        let cache = LatestValueCache::default();
        assert!(cache.offer("CP1", 1, reading("2026-01-01T00:00:02.000000Z", "[2]")));
        assert!(!cache.offer("CP1", 1, reading("2026-01-01T00:00:01.000000Z", "[1]")));
        assert_eq!(cache.get("CP1", 1).unwrap().meter_value, "[2]");
        assert!(cache.offer("CP1", 1, reading("2026-01-01T00:00:03.000000Z", "[3]")));
        assert_eq!(cache.get("CP1", 1).unwrap().meter_value, "[3]");
        assert!(cache.get("CP1", 2).is_none());
        assert_eq!(cache.len(), 1);
    }
}
