//! Where each partition of a topic begins and ends: the metadata requests the consumers and
//! the catch-up check make before reading.

use crate::failed;
use cms_bus::BusError;
use rdkafka::consumer::{Consumer as _, ConsumerContext, StreamConsumer};
use std::time::Duration;

/// Bound of the metadata and watermark requests `replay` makes before reading.
const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

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
