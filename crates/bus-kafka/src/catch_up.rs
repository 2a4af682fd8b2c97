//! When a group member has caught up: it has its partitions, and the group's committed offset
//! in each of them is at or past the end that partition had when the member started. The
//! materialiser commits a record only once the store has it, so a member caught up serves
//! everything that was in its partitions at its start (an API replica is ready only then).
//!
//! A member's position cannot tell it: librdkafka knows it only once a record was handed out,
//! and a partition whose records were all committed before hands out none. So the committed
//! offsets of the assignment are asked of the group coordinator a few times a second until
//! they reach the ends, and then no more.

use crate::offsets::{LagContext, watermarks};
use cms_bus::CaughtUp;
use rdkafka::consumer::{Consumer as _, StreamConsumer};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::HashMap;
use std::sync::Weak;
use std::time::Duration;
use tokio::sync::watch;

/// How often the committed offsets are asked for until caught up.
const CHECK_EVERY: Duration = Duration::from_millis(100);
/// Bound of one request for the ends or the committed offsets.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// `(high, low)` watermark of each partition of the topics, when the member started.
type Ends = HashMap<(String, i32), (i64, i64)>;

/// Sets `caught_up` once the member is caught up; ends then, or when the bus closes or the
/// consumer is dropped.
pub(crate) async fn watch(
    consumer: Weak<StreamConsumer<LagContext>>,
    topics: Vec<String>,
    caught_up: CaughtUp,
    mut closed: watch::Receiver<bool>,
) {
    let mut ends: Option<Ends> = None;
    loop {
        let Some(member) = consumer.upgrade() else {
            return;
        };
        let names = topics.clone();
        let known = ends.clone();
        let checked = tokio::task::spawn_blocking(move || match known {
            None => ends_of(&member, &names).map(|ends| (Some(ends), false)),
            Some(ends) => is_caught_up(&member, &ends).map(|done| (Some(ends), done)),
        })
        .await;
        match checked {
            Ok(Ok((_, true))) => {
                tracing::info!(?topics, "consumer caught up with its partitions");
                caught_up.set();
                return;
            }
            Ok(Ok((found, false))) => ends = found,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "cannot tell yet whether the consumer caught up")
            }
            Err(e) => tracing::warn!(error = %e, "the catch-up check failed"),
        }
        tokio::select! {
            _ = closed.wait_for(|closed| *closed) => return,
            _ = tokio::time::sleep(CHECK_EVERY) => {}
        }
    }
}

fn ends_of(consumer: &StreamConsumer<LagContext>, topics: &[String]) -> Result<Ends, String> {
    let mut ends = Ends::new();
    for topic in topics {
        let partitions = watermarks(consumer, topic).map_err(|e| e.to_string())?;
        for (partition, high_low) in partitions.into_iter().enumerate() {
            ends.insert((topic.clone(), partition as i32), high_low);
        }
    }
    Ok(ends)
}

/// Whether every partition assigned now has its committed offset at or past its end at start
/// (a partition empty then, or created since, has nothing to wait for).
fn is_caught_up(consumer: &StreamConsumer<LagContext>, ends: &Ends) -> Result<bool, String> {
    let assignment = &consumer.context().assignment;
    let Some(rebalance) = assignment.current() else {
        return Ok(false);
    };
    let partitions = consumer.assignment().map_err(|e| e.to_string())?;
    let committed = match partitions.count() {
        0 => TopicPartitionList::new(),
        _ => consumer
            .committed_offsets(partitions, REQUEST_TIMEOUT)
            .map_err(|e| e.to_string())?,
    };
    // A rebalance while asking: the answer may be of partitions no longer this member's.
    if assignment.current() != Some(rebalance) {
        return Ok(false);
    }
    Ok(committed.elements().iter().all(|partition| {
        let key = (partition.topic().to_string(), partition.partition());
        match ends.get(&key) {
            Some((high, low)) if high > low => {
                matches!(partition.offset(), Offset::Offset(at) if at >= *high)
            }
            _ => true,
        }
    }))
}
