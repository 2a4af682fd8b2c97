//! Consumes the gateway's topics (charger messages, connection events, actions' reports): each
//! batch is thinned (energy.rs), translated record by record (translate.rs, pure), and handed
//! to its sinks in turn: the store (store_sink.rs, which retries and sets aside what it
//! refuses), then the latest-value cache, pricing and the prices' display (sinks.rs). A batch
//! is committed on the bus only after the store has it, so a crash replays rather than loses.

mod energy;
mod events;
mod reading;
mod signed;
mod sinks;
mod store_sink;
mod translate;
mod translate_shared;
mod translate_v201;

pub(crate) use reading::ReadingUse;
pub(crate) use sinks::remember_readings;
pub(crate) use translate::translate;
pub(crate) use translate_v201::OCPP_2_0_1;

use crate::control::price_display::PriceEvent;
use crate::ingest::cache::LatestValueCache;
use crate::ingest::fleet::FleetState;
use chrono::Utc;
use cms_bus::{Message, Record, Subscriber, Topics, header};
use cms_ocpp::v16::Action;
use cms_store::station_events::EventType;
use cms_store::{StateChange, Store};
use energy::{EnergyKept, energy_only, superseded_readings};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Records taken from the bus per store transaction. Large, so that a backlog (a fleet sending
/// faster than the store takes rows) shrinks to one reading per connector per batch.
const BATCH: usize = 16_384;
/// How long records may gather after the first of a batch. Under load, bigger batches mean
/// fewer store transactions and more readings skipped before parsing (a fleet sends many per
/// connector); idle, a reading reaches the REST API this much later at most.
const LINGER: Duration = Duration::from_millis(100);
/// Backoff between tries while the store is unreachable.
const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(5);

/// The maps a batch looks up once or more per record (tens of thousands a second under load):
/// a fast hasher, seeded per process. Their keys are registered chargers' identities.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

pub struct Materialiser {
    pub store: Store,
    pub cache: Arc<LatestValueCache>,
    pub topics: Topics,
    /// The newest minute an energy reading was kept for pricing in, per charger and connector.
    kept_energy: EnergyKept,
    /// The same for 2.0.1 transactions' Updated events (events.rs).
    minutes_read: events::MinutesRead,
    /// Where transactions' starts, readings and stops go to be shown on chargers.
    price_display: Option<mpsc::Sender<PriceEvent>>,
    /// Told which chargers each stored batch touched.
    fleet: Option<Arc<FleetState>>,
    /// Where stations' CSRs go to be signed (`crate::control::certificates`).
    certificates: Option<mpsc::Sender<crate::control::certificates::CertificateRequest>>,
}

impl Materialiser {
    pub fn new(store: Store, cache: Arc<LatestValueCache>, topics: Topics) -> Self {
        Materialiser {
            store,
            cache,
            topics,
            kept_energy: EnergyKept::default(),
            minutes_read: events::MinutesRead::default(),
            price_display: None,
            fleet: None,
            certificates: None,
        }
    }

    /// Tells the fleet's state which chargers each stored batch touched.
    pub fn keeping(mut self, fleet: Arc<FleetState>) -> Self {
        self.fleet = Some(fleet);
        self
    }

    /// Hands transactions' events to the prices' display (`crate::control::price_display`).
    pub fn showing_prices(mut self, sender: mpsc::Sender<PriceEvent>) -> Self {
        self.price_display = Some(sender);
        self
    }

    /// Hands stations' CSRs to the signer (`crate::control::certificates`).
    pub fn signing_certificates(
        mut self,
        sender: mpsc::Sender<crate::control::certificates::CertificateRequest>,
    ) -> Self {
        self.certificates = Some(sender);
        self
    }

    /// Runs until the bus is closed and drained.
    pub async fn run(mut self, mut subscriber: Box<dyn Subscriber>) {
        let records = metrics::counter!("cms_materialiser_records_total");
        let batch_latency = metrics::histogram!("cms_materialiser_batch_seconds");
        // At 0 before the first one: an alert on their increase then sees the first.
        for failures in [
            "cms_materialiser_store_errors_total",
            "cms_materialiser_dead_letters_total",
            "cms_materialiser_dead_letters_lost_total",
        ] {
            metrics::counter!(failures).absolute(0);
        }
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            match subscriber.next_batch(&mut batch, BATCH).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %e, "cannot read the bus; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            }
            gather_more(&mut *subscriber, &mut batch).await;
            let started = Instant::now();
            let (changes, sources) = self.changes_of(&batch);
            // The sinks, in order: the store commits first; the others see only what it has.
            store_sink::store_until_done(&self.store, &changes, &sources, &batch).await;
            remember_readings(&self.cache, &changes);
            if let Some(fleet) = &self.fleet {
                fleet.note_batch(&batch, self.topics.messages, &changes);
            }
            sinks::price_stopped(&self.store, &changes).await;
            sinks::show_prices(self.price_display.as_ref(), &changes);
            crate::control::certificates::note_batch(self.certificates.as_ref(), &changes);
            for last in last_of_each_partition(&batch) {
                if let Err(e) = subscriber.commit(last) {
                    tracing::warn!(error = %e, "commit failed; records may be replayed");
                }
            }
            records.increment(batch.len() as u64);
            batch_latency.record(started.elapsed());
        }
        tracing::info!("materialiser drained");
    }

    /// The state changes of a batch, readings coalesced to the newest per connector, each with
    /// the index of the record it came from. A reading that pricing keeps (see
    /// [`EnergyKept::wanted`]) gives its energy register even when a newer reading supersedes
    /// it as the latest; a reading older than the one the cache holds gives only that.
    fn changes_of(&mut self, batch: &[Message]) -> (Vec<StateChange>, Vec<usize>) {
        let mut changes = Vec::with_capacity(batch.len());
        let mut sources = Vec::with_capacity(batch.len());
        let mut reading_at: HashMap<(&str, i64), usize> = HashMap::default();
        // The gateway's headers are read once per record; the passes below share them.
        let told: Vec<Told> = batch
            .iter()
            .map(|m| told(&m.record, self.topics.messages))
            .collect();
        let superseded = superseded_readings(&told);
        let energy_wanted = self.kept_energy.wanted(&told);
        let thinned_events = events::thinned_events(&told, &self.minutes_read);
        let now = Utc::now();
        for (i, message) in batch.iter().enumerate() {
            let use_of = match (superseded[i], energy_wanted[i], thinned_events[i]) {
                (_, _, Some(false)) | (true, false, _) => continue,
                (_, _, Some(true)) | (true, true, _) => ReadingUse::EnergyOnly,
                (false, energy, None) => ReadingUse::Latest { energy },
            };
            let Some(change) = translate(message, &self.topics, use_of, now) else {
                tracing::trace!(topic = %message.record.topic, offset = message.offset, "record without state change");
                continue;
            };
            // Older than the latest the cache holds (the follower's, or an earlier batch's):
            // only its energy register, if pricing keeps it, is news.
            let change = match self.older_than_held(&change) {
                true => match energy_only(change) {
                    Some(energy) => energy,
                    None => continue,
                },
                false => change,
            };
            if energy_wanted[i]
                && matches!(
                    change,
                    StateChange::MeterValue {
                        energy: Some(_),
                        ..
                    } | StateChange::TransactionEnergy { .. }
                )
            {
                self.kept_energy.note(told[i]);
            }
            if let StateChange::TransactionEvent(event) = &change {
                match told[i] {
                    Told::Event((identity, transaction, _, at)) if !event.energy.is_empty() => {
                        self.minutes_read.note(identity, transaction, at)
                    }
                    _ if event.event_type == EventType::Ended => self
                        .minutes_read
                        .forget(&event.identity, &event.station_transaction_id),
                    _ => {}
                }
            }
            if let StateChange::MeterValue { connector_id, .. } = &change {
                // The change's identity is the record's key, which `translate` found UTF-8.
                let identity = std::str::from_utf8(&message.record.key).unwrap_or_default();
                let key = (identity, *connector_id);
                if let Some(&at) = reading_at.get(&key) {
                    // The newer reading replaces the older as the latest (ties go to the later
                    // record, as in the cache); the older's energy register, if pricing keeps
                    // it, stays as a change of its own.
                    let (older, older_source) = if measured_at(&change) >= measured_at(&changes[at])
                    {
                        let older = std::mem::replace(&mut changes[at], change);
                        (older, std::mem::replace(&mut sources[at], i))
                    } else {
                        (change, i)
                    };
                    if let Some(energy) = energy_only(older) {
                        changes.push(energy);
                        sources.push(older_source);
                    }
                    continue;
                }
                reading_at.insert(key, changes.len());
            }
            changes.push(change);
            sources.push(i);
        }
        (changes, sources)
    }

    /// Whether a latest reading is older than the one the cache holds for its connector.
    fn older_than_held(&self, change: &StateChange) -> bool {
        let StateChange::MeterValue {
            identity,
            connector_id,
            measured_at,
            ..
        } = change
        else {
            return false;
        };
        let Ok(connector) = u32::try_from(*connector_id) else {
            return false;
        };
        !self.cache.would_keep(identity, connector, measured_at)
    }
}

/// A latest reading's sample time (record time form: text order is time order).
fn measured_at(change: &StateChange) -> &str {
    match change {
        StateChange::MeterValue { measured_at, .. } => measured_at,
        _ => "",
    }
}

/// Lets a short batch fill up for `LINGER`, then takes what has arrived without waiting more.
async fn gather_more(subscriber: &mut dyn Subscriber, batch: &mut Vec<Message>) {
    if batch.len() >= BATCH {
        return;
    }
    tokio::time::sleep(LINGER).await;
    crate::ingest::arrived::take_arrived(subscriber, batch, BATCH);
}

fn last_of_each_partition(batch: &[Message]) -> Vec<&Message> {
    let mut last: HashMap<(&str, i32), &Message> = HashMap::default();
    for message in batch {
        last.insert((&message.record.topic, message.partition), message);
    }
    last.into_values().collect()
}

/// What a batch's record is, as the gateway's headers tell it.
#[derive(Clone, Copy)]
pub(crate) enum Told<'a> {
    /// Not a charger's MeterValues.
    Other,
    /// A MeterValues record, with its charger, connector and newest sample time when the
    /// gateway's headers give them ([`reading_key`]); without them it is always parsed.
    Reading(Option<(&'a str, i64, &'a str)>),
    /// A 2.0.1 TransactionEvent Updated that carries readings only (events.rs), with its
    /// headers.
    Event(events::EventKey<'a>),
}

pub(crate) fn told<'a>(record: &'a Record, messages_topic: &str) -> Told<'a> {
    if is_reading(record, messages_topic) {
        Told::Reading(reading_key(record))
    } else {
        updated_event_key(record, messages_topic).map_or(Told::Other, Told::Event)
    }
}

/// A 2.0.1 TransactionEvent Updated's headers, when it carries nothing but readings.
fn updated_event_key<'a>(record: &'a Record, messages_topic: &str) -> Option<events::EventKey<'a>> {
    if record.topic != messages_topic
        || record.header_str(header::EVENT_TYPE) != Some("Updated")
        || record.header_str(header::ACTION) != Some("TransactionEvent")
        || events::carries_more_than_readings(&record.value)
    {
        return None;
    }
    Some((
        std::str::from_utf8(&record.key).ok()?,
        record.header_str(header::TRANSACTION_ID)?,
        record.header_str(header::CONNECTOR_ID),
        record.header_str(header::MEASURED_AT)?,
    ))
}

/// Whether the record is a charger's MeterValues.
fn is_reading(record: &Record, messages_topic: &str) -> bool {
    record.topic == messages_topic
        && record.header_str(header::ACTION) == Some(Action::MeterValues.as_str())
}

/// A reading's connector and newest sample time, from the gateway's headers, as written (the
/// time in the fixed-width record form, so text order is time order).
fn reading_headers(record: &Record) -> Option<(&str, &str)> {
    Some((
        record.header_str(header::CONNECTOR_ID)?,
        record.header_str(header::MEASURED_AT)?,
    ))
}

/// [`reading_headers`] with the charger's identity and the connector as a number.
fn reading_key(record: &Record) -> Option<(&str, i64, &str)> {
    let (connector, at) = reading_headers(record)?;
    let identity = std::str::from_utf8(&record.key).ok()?;
    Some((identity, connector.parse().ok()?, at))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_signed;
#[cfg(test)]
mod tests_v201;
