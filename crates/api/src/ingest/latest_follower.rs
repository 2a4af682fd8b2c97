//! Every replica's latest values, in the Kafka deployment. API replicas share the messages
//! topic's partitions in one consumer group, so each one's materialiser sees only some
//! chargers' readings, and its cache (warmed from the store at start) would go stale for the
//! others. So each replica of `cms api` also follows the messages topic outside any group, as
//! it follows the reports, and keeps each connector's newest reading in its cache: every
//! replica answers `latest-metervalue` and feeds its live streams from memory for every
//! charger. The group's materialisers still write the store. (`cms up` has one materialiser
//! that sees everything, and no follower.)

use crate::ingest::cache::LatestValueCache;
use crate::ingest::fleet::FleetState;
use crate::ingest::materialiser::{
    OCPP_2_0_1, ReadingUse, Told, remember_readings, told, translate,
};
use chrono::Utc;
use cms_bus::{Message, Record, Subscriber, Topics, header};
use std::sync::Arc;
use std::time::Duration;

/// When a replica reads the store's readings a second time: past the materialisers' linger
/// and a backlog of a few seconds.
pub const STORE_READ_AGAIN_AFTER: Duration = Duration::from_secs(10);

/// Follows the messages topic until the bus closes, offering each reading to the cache.
pub async fn follow_latest_values(
    mut messages: Box<dyn Subscriber>,
    topics: Topics,
    cache: Arc<LatestValueCache>,
    fleet: Arc<FleetState>,
) {
    let mut batch = Vec::new();
    loop {
        batch.clear();
        match messages.next_batch(&mut batch, 1024).await {
            Ok(0) => return,
            Ok(_) => {
                // When every charger last spoke, not only the group's share of them.
                fleet.note_messages(&batch, topics.messages);
                for message in &batch {
                    offer(&cache, message, &topics);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot follow the latest meter values; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Offers a MeterValues record's reading (or a 2.0.1 TransactionEvent's, the readings of a
/// transaction), parsed only when its headers say it is newer than the one held (most records
/// are others' traffic, or already seen by the materialiser).
fn offer(cache: &LatestValueCache, message: &Message, topics: &Topics) {
    let (identity, connector, at) = match told(&message.record, topics.messages) {
        Told::Reading(Some(key)) => key,
        Told::Other | Told::Event(_) => match transaction_readings(&message.record, topics) {
            Some(key) => key,
            None => return,
        },
        Told::Reading(None) => return,
    };
    let Ok(connector) = u32::try_from(connector) else {
        return;
    };
    if !cache.would_keep(identity, connector, at) {
        return;
    }
    let latest = ReadingUse::Latest { energy: false };
    if let Some(change) = translate(message, topics, latest, Utc::now()) {
        remember_readings(cache, std::slice::from_ref(&change));
    }
}

/// A 2.0.1 TransactionEvent's EVSE and newest sample time, from the gateway's headers, when it
/// carries meter values of a named EVSE.
fn transaction_readings<'a>(
    record: &'a Record,
    topics: &Topics,
) -> Option<(&'a str, i64, &'a str)> {
    let of_2_0_1 = record.topic == topics.messages
        && record.header_str(header::ACTION) == Some("TransactionEvent")
        && record.header_str(header::OCPP_VERSION) == Some(OCPP_2_0_1);
    if !of_2_0_1 {
        return None;
    }
    Some((
        std::str::from_utf8(&record.key).ok()?,
        record.header_str(header::CONNECTOR_ID)?.parse().ok()?,
        record.header_str(header::MEASURED_AT)?,
    ))
}
