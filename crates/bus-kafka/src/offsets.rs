//! What a consumer learns of offsets: the lag librdkafka's statistics report (the lag
//! gauges), the assignment its rebalances tell (for `catch_up`), and a topic's watermarks.

use crate::failed;
use cms_bus::BusError;
use metrics::{Gauge, gauge};
use rdkafka::ClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer as _, ConsumerContext, Rebalance, StreamConsumer};
use rdkafka::statistics::{Partition, Statistics};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Bound of the metadata and watermark requests (`replay` makes them before reading).
pub(crate) const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

/// Sets `cms_kafka_consumer_lag{topic,partition}` of the partitions assigned to this member
/// from librdkafka's statistics; a partition no longer assigned reads 0 here (its new owner
/// reports it). Their sum is `cms_bus_queue_depth`, the records waiting for this member's
/// materialiser, as the in-process bus counts its queue. Also follows the member's assignment,
/// for crate::catch_up.
pub(crate) struct LagContext {
    /// Per partition seen assigned: its gauge and the statistics report that last set it.
    gauges: Mutex<HashMap<(String, i32), (Gauge, u64)>>,
    reports: std::sync::atomic::AtomicU64,
    waiting: Gauge,
    pub(crate) assignment: Assignment,
}

impl Default for LagContext {
    fn default() -> Self {
        let waiting = gauge!("cms_bus_queue_depth");
        // 0 from the start, not from the first statistics report.
        waiting.set(0.0);
        LagContext {
            gauges: Mutex::default(),
            reports: Default::default(),
            waiting,
            assignment: Assignment::default(),
        }
    }
}

impl ClientContext for LagContext {
    fn stats(&self, statistics: Statistics) {
        let report = 1 + self
            .reports
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut gauges = self.gauges.lock().unwrap_or_else(|e| e.into_inner());
        let mut waiting = 0;
        for (name, topic) in &statistics.topics {
            for partition in topic.partitions.values() {
                let Some(lag) = lag(partition) else { continue };
                let key = (name.clone(), partition.partition);
                let (gauge, set_by) = gauges.entry(key).or_insert_with(|| {
                    let gauge = gauge!(
                        "cms_kafka_consumer_lag",
                        "topic" => name.clone(),
                        "partition" => partition.partition.to_string(),
                    );
                    (gauge, 0)
                });
                gauge.set(lag as f64);
                *set_by = report;
                waiting += lag;
            }
        }
        self.waiting.set(waiting as f64);
        for (gauge, set_by) in gauges.values() {
            if *set_by != report {
                gauge.set(0.0);
            }
        }
    }
}

impl ConsumerContext for LagContext {
    /// After librdkafka applied the rebalance (the default `rebalance` assigns or unassigns).
    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(_) => self.assignment.assigned(),
            Rebalance::Revoke(_) => self.assignment.revoked(),
            Rebalance::Error(_) => {}
        }
    }
}

/// Records between the group's position in an assigned partition and its high watermark: from
/// the committed offset, else the offset handed out last, else the low watermark (where
/// `auto.offset.reset` starts). `None` for a partition not assigned or not yet known.
fn lag(partition: &Partition) -> Option<i64> {
    let assigned = matches!(
        partition.fetch_state.as_str(),
        "active" | "offset-query" | "offset-wait"
    );
    if partition.partition < 0 || !assigned || partition.hi_offset < 0 {
        return None;
    }
    let position = [
        partition.committed_offset,
        partition.app_offset,
        partition.lo_offset,
    ]
    .into_iter()
    .find(|offset| *offset >= 0)?;
    Some((partition.hi_offset - position).max(0))
}

/// The member's assignment as the rebalance callbacks tell it: how many rebalances so far, and
/// whether the last one gave it partitions (possibly none) rather than took them away.
#[derive(Default)]
pub(crate) struct Assignment(Mutex<(u64, bool)>);

impl Assignment {
    pub(crate) fn assigned(&self) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *state = (state.0 + 1, true);
    }

    pub(crate) fn revoked(&self) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *state = (state.0 + 1, false);
    }

    /// The rebalance that gave the member its current partitions; `None` while it has none
    /// assigned (not yet joined, or in the middle of a rebalance).
    pub(crate) fn current(&self) -> Option<u64> {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.1.then_some(state.0)
    }
}

/// `(high watermark, low watermark)` of every partition of `topic`, as `(target, next)`.
pub(crate) fn watermarks<C: ConsumerContext + 'static>(
    consumer: &StreamConsumer<C>,
    topic: &str,
) -> Result<Vec<(i64, i64)>, BusError> {
    let metadata = consumer
        .fetch_metadata(Some(topic), METADATA_TIMEOUT)
        .map_err(|e| failed("metadata", e))?;
    let found = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty())
        .ok_or_else(|| BusError::UnknownTopic(topic.to_owned()))?;
    (0..found.partitions().len() as i32)
        .map(|partition| {
            let (low, high) = consumer
                .fetch_watermarks(topic, partition, METADATA_TIMEOUT)
                .map_err(|e| failed("watermarks", e))?;
            Ok((high, low))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition(fetch_state: &str, committed: i64, app: i64, lo: i64, hi: i64) -> Partition {
        Partition {
            partition: 3,
            fetch_state: fetch_state.into(),
            committed_offset: committed,
            app_offset: app,
            lo_offset: lo,
            hi_offset: hi,
            ..Partition::default()
        }
    }

    #[test]
    fn lag_counts_from_the_committed_offset_else_the_position_else_the_low_watermark() {
        assert_eq!(lag(&partition("active", 40, 45, 0, 50)), Some(10));
        assert_eq!(lag(&partition("active", -1001, 45, 0, 50)), Some(5));
        assert_eq!(
            lag(&partition("offset-query", -1001, -1001, 7, 50)),
            Some(43)
        );
        assert_eq!(lag(&partition("active", 50, 50, 0, 50)), Some(0));
    }

    #[test]
    fn no_lag_for_a_partition_not_assigned_or_not_yet_known() {
        assert_eq!(lag(&partition("none", 40, 45, 0, 50)), None);
        assert_eq!(lag(&partition("stopped", 40, 45, 0, 50)), None);
        assert_eq!(lag(&partition("active", 40, 45, 0, -1001)), None);
        let mut internal = partition("active", 40, 45, 0, 50);
        internal.partition = -1;
        assert_eq!(lag(&internal), None);
    }
}
