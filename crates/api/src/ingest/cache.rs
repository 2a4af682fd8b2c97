//! The latest-value cache: the newest reading of every connector, in memory, ready to serve.

use bytes::Bytes;
use dashmap::DashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::broadcast;

/// One connector's newest reading: the REST `meterValue` array, already serialised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestReading {
    /// Newest sample time in the reading, record timestamp form (sorts in time order).
    pub measured_at: String,
    pub meter_value: Bytes,
}

/// A connector's reading that replaced the one held, for the live streams: `seq` orders every
/// change of this process (a stream's event id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueChange {
    pub seq: u64,
    pub identity: Box<str>,
    pub connector_id: u32,
    pub meter_value: Bytes,
}

/// Readings by (charger identity, connector id), shared by the materialiser and the API, each
/// with the sequence number of the change that brought it.
pub struct LatestValueCache {
    readings: DashMap<(Box<str>, u32), (LatestReading, u64)>,
    seq: AtomicU64,
    changes: broadcast::Sender<Arc<ValueChange>>,
    stream_buffer: usize,
    /// Held while a change takes its number and goes to the streams: two writers (the
    /// materialiser and, in a replica, the follower) send in the order of their numbers, so a
    /// stream resumed after one event has not skipped an earlier-numbered one.
    ordered: std::sync::Mutex<()>,
    /// Names this cache's numbering (random per process): an event id of another process or
    /// of an earlier run resumes from nothing rather than from an unrelated number.
    epoch: String,
}

impl Default for LatestValueCache {
    fn default() -> Self {
        LatestValueCache::with_stream_buffer(crate::DEFAULT_STREAM_BUFFER)
    }
}

impl LatestValueCache {
    /// A cache whose live streams may fall `changes` changes behind before they are dropped
    /// (never buffered without end).
    pub fn with_stream_buffer(changes: usize) -> Self {
        LatestValueCache {
            readings: DashMap::new(),
            seq: AtomicU64::new(0),
            changes: broadcast::channel(changes.max(1)).0,
            stream_buffer: changes.max(1),
            ordered: std::sync::Mutex::new(()),
            epoch: uuid::Uuid::new_v4().simple().to_string()[..8].to_string(),
        }
    }

    /// The name of this cache's numbering of changes (see `epoch`).
    pub fn epoch(&self) -> &str {
        &self.epoch
    }

    /// How many changes a live stream may fall behind, and hold unwritten, before it is dropped.
    pub fn stream_buffer(&self) -> usize {
        self.stream_buffer
    }

    /// Keeps `reading` if it is at least as new as the one held; returns whether it was kept
    /// (or was the one held already: the materialiser stores it either way). A reading that
    /// changed what is held goes to the live streams, when any listens.
    pub fn offer(&self, identity: &str, connector_id: u32, reading: LatestReading) -> bool {
        let _ordered = self.ordered.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept = None;
        let mut held_already = false;
        self.readings
            .entry((identity.into(), connector_id))
            .and_modify(|held| {
                // The same reading again: from the other of a replica's two readers of the
                // messages (crate::ingest::latest_follower); no change to tell the streams of.
                if held.0 == reading {
                    held_already = true;
                } else if reading.measured_at >= held.0.measured_at {
                    let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
                    *held = (reading.clone(), seq);
                    kept = Some(seq);
                }
            })
            .or_insert_with(|| {
                let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
                kept = Some(seq);
                (reading.clone(), seq)
            });
        let Some(seq) = kept else {
            return held_already;
        };
        // No stream, no copy: the frame path pays a counter read.
        if self.changes.receiver_count() > 0 {
            let change = ValueChange {
                seq,
                identity: identity.into(),
                connector_id,
                meter_value: reading.meter_value,
            };
            let _ = self.changes.send(Arc::new(change));
        }
        true
    }

    /// Whether a reading sampled at `measured_at` (record time) would be kept: none held, or
    /// one no newer. A look-up before parsing a record.
    pub fn would_keep(&self, identity: &str, connector_id: u32, measured_at: &str) -> bool {
        self.readings
            .get(&(identity.into(), connector_id))
            .is_none_or(|held| measured_at >= held.0.measured_at.as_str())
    }

    pub fn get(&self, identity: &str, connector_id: u32) -> Option<LatestReading> {
        // A borrowed key would need a tuple of references; the identity copy is per request.
        self.readings
            .get(&(identity.into(), connector_id))
            .map(|r| r.0.clone())
    }

    /// Every reading held now of the chargers `wanted` names, in one pass over the cache:
    /// `(identity, connector, reading, seq)`, in no particular order.
    pub fn held_where(
        &self,
        wanted: impl Fn(&str) -> bool,
    ) -> Vec<(Box<str>, u32, LatestReading, u64)> {
        self.readings
            .iter()
            .filter(|e| wanted(&e.key().0))
            .map(|e| {
                (
                    e.key().0.clone(),
                    e.key().1,
                    e.value().0.clone(),
                    e.value().1,
                )
            })
            .collect()
    }

    /// The changes from now on (a receiver that falls the stream buffer behind is told so).
    pub fn follow(&self) -> broadcast::Receiver<Arc<ValueChange>> {
        self.changes.subscribe()
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

    #[test]
    fn kept_readings_reach_the_followers_in_order_and_refused_ones_do_not() {
        let cache = LatestValueCache::default();
        assert!(cache.offer("CP1", 1, reading("2026-01-01T00:00:01.000000Z", "[1]")));
        let mut follower = cache.follow();
        assert!(cache.offer("CP1", 2, reading("2026-01-01T00:00:02.000000Z", "[2]")));
        assert!(!cache.offer("CP1", 2, reading("2026-01-01T00:00:00.000000Z", "[0]")));
        assert!(cache.offer("CP1", 1, reading("2026-01-01T00:00:03.000000Z", "[3]")));
        let first = follower.try_recv().unwrap();
        let second = follower.try_recv().unwrap();
        assert!(
            follower.try_recv().is_err(),
            "the refused reading is not sent"
        );
        assert_eq!(
            (first.connector_id, &first.meter_value[..]),
            (2, &b"[2]"[..])
        );
        assert_eq!(
            (second.connector_id, &second.meter_value[..]),
            (1, &b"[3]"[..])
        );
        assert!(first.seq < second.seq);
        let mut held = cache.held_where(|identity| identity == "CP1");
        held.sort_by_key(|h| h.1);
        assert_eq!(held.iter().map(|h| h.1).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(held[0].3, second.seq, "connector 1's seq is its change's");
    }

    #[test]
    fn the_same_reading_offered_twice_is_kept_once_and_told_once() {
        let cache = LatestValueCache::default();
        let mut follower = cache.follow();
        let first = reading("2026-01-01T00:00:01.000000Z", "[1]");
        assert!(cache.would_keep("CP1", 1, &first.measured_at));
        assert!(cache.offer("CP1", 1, first.clone()));
        // Offered again by a replica's other reader: still the one to store, not a change.
        assert!(cache.offer("CP1", 1, first.clone()));
        assert!(follower.try_recv().is_ok());
        assert!(follower.try_recv().is_err(), "told once");
        assert!(!cache.would_keep("CP1", 1, "2026-01-01T00:00:00.000000Z"));
        let corrected = reading("2026-01-01T00:00:01.000000Z", "[2]");
        assert!(cache.offer("CP1", 1, corrected), "same time, new values");
        assert!(follower.try_recv().is_ok());
    }
}
