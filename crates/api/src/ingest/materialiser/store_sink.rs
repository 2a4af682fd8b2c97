//! The store, the materialiser's first sink: it retries until the store takes a batch, and
//! sets aside in the dead letters each record the store refuses for what it holds, so that it
//! neither stops the records behind it nor vanishes.

use super::{FIRST_RETRY, LAST_RETRY};
use cms_bus::Message;
use cms_store::dead_letters::DeadLetter;
use cms_store::{StateChange, Store};
use std::ops::Range;

/// The store is the record: retry until it takes the batch, holding the bus back meanwhile.
/// When it refuses the batch for its contents, the batch is halved until the refused
/// changes are found; each is set aside with its record and the rest are written, in order.
pub(super) async fn store_until_done(
    store: &Store,
    changes: &[StateChange],
    sources: &[usize],
    batch: &[Message],
) {
    // Ranges still to write; the last pushed is written next, so order holds.
    let mut pending: Vec<Range<usize>> = Vec::new();
    pending.push(0..changes.len());
    let mut delay = FIRST_RETRY;
    while let Some(range) = pending.pop() {
        if range.is_empty() {
            continue;
        }
        match store.apply(&changes[range.clone()]).await {
            Ok(()) => delay = FIRST_RETRY,
            Err(e) if e.is_refusal() && range.len() == 1 => {
                set_aside(store, &batch[sources[range.start]], &e).await;
            }
            Err(e) if e.is_refusal() => {
                let middle = range.start + range.len() / 2;
                pending.push(middle..range.end);
                pending.push(range.start..middle);
            }
            Err(e) => {
                metrics::counter!("cms_materialiser_store_errors_total").increment(1);
                tracing::error!(error = %e, retry_in = ?delay, "store write failed");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(LAST_RETRY);
                pending.push(range);
            }
        }
    }
}

/// Keeps a refused record in the dead letters (retrying while the store is unreachable).
async fn set_aside(store: &Store, message: &Message, refusal: &cms_store::StoreError) {
    let record = &message.record;
    let headers: serde_json::Map<String, serde_json::Value> = record
        .headers
        .iter()
        .map(|h| {
            let value = String::from_utf8_lossy(&h.value).into_owned();
            (h.name.to_string(), serde_json::Value::String(value))
        })
        .collect();
    let letter = DeadLetter {
        topic: record.topic.to_string(),
        partition: message.partition,
        offset: message.offset,
        key: record.key.to_vec(),
        headers: serde_json::Value::Object(headers).to_string(),
        value: record.value.to_vec(),
        reason: refusal.to_string(),
    };
    tracing::error!(
        topic = %letter.topic,
        partition = letter.partition,
        offset = letter.offset,
        key = %String::from_utf8_lossy(&letter.key),
        reason = %letter.reason,
        "the store refused a record; set aside in the dead letters"
    );
    let mut delay = FIRST_RETRY;
    loop {
        match store.set_aside(&letter).await {
            Ok(()) => {
                metrics::counter!("cms_materialiser_dead_letters_total").increment(1);
                return;
            }
            Err(e) if e.is_refusal() => {
                // Still on the bus until its retention ends: say where, loudly.
                metrics::counter!("cms_materialiser_dead_letters_lost_total").increment(1);
                tracing::error!(error = %e, topic = %letter.topic, partition = letter.partition,
                    offset = letter.offset, "the dead letter itself was refused");
                return;
            }
            Err(e) => {
                tracing::error!(error = %e, retry_in = ?delay, "dead letter write failed");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(LAST_RETRY);
            }
        }
    }
}
