//! Consumes the gateway's topics (charger messages, connection events, actions' reports) into
//! the latest-value cache and the store. A batch is
//! committed on the bus only after the store has it, so a crash replays rather than loses. A
//! record the store refuses for what it holds is set aside in the dead letters, so that it
//! neither stops the records behind it nor vanishes.

use crate::cache::{LatestReading, LatestValueCache};
use crate::normalise::{energy_register_wh, rest_meter_values};
use crate::price_display::PriceEvent;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{Message, Record, Subscriber, Topics};
use cms_ocpp::v16::{Action, Request, parse_request};
use cms_store::dead_letters::DeadLetter;
use cms_store::{EnergyReading, StateChange, Store, format_record_time};
use futures_util::FutureExt;
use std::collections::hash_map::Entry;
use std::ops::Range;
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
    kept_energy: HashMap<String, HashMap<i64, KeptEnergy>>,
    /// Where transactions' starts, readings and stops go to be shown on chargers.
    price_display: Option<mpsc::Sender<PriceEvent>>,
}

impl Materialiser {
    pub fn new(store: Store, cache: Arc<LatestValueCache>, topics: Topics) -> Self {
        Materialiser {
            store,
            cache,
            topics,
            kept_energy: HashMap::default(),
            price_display: None,
        }
    }

    /// Hands transactions' events to the prices' display (`crate::price_display`).
    pub fn showing_prices(mut self, sender: mpsc::Sender<PriceEvent>) -> Self {
        self.price_display = Some(sender);
        self
    }
}

impl Materialiser {
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
            self.store_until_done(&changes, &sources, &batch).await;
            self.price_stopped(&changes).await;
            self.show_prices(&changes);
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

    /// The store is the record: retry until it takes the batch, holding the bus back meanwhile.
    /// When it refuses the batch for its contents, the batch is halved until the refused
    /// changes are found; each is set aside with its record and the rest are written, in order.
    async fn store_until_done(
        &self,
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
            match self.store.apply(&changes[range.clone()]).await {
                Ok(()) => delay = FIRST_RETRY,
                Err(e) if e.is_refusal() && range.len() == 1 => {
                    self.set_aside(&batch[sources[range.start]], &e).await;
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

    /// Hands the batch's transaction starts, kept readings and stops to the prices' display.
    fn show_prices(&self, changes: &[StateChange]) {
        let Some(sender) = &self.price_display else {
            return;
        };
        for change in changes {
            let event = match change {
                StateChange::TransactionStarted {
                    identity,
                    ocpp_transaction_id,
                    ..
                } => PriceEvent::Started {
                    identity: identity.clone(),
                    ocpp_transaction_id: *ocpp_transaction_id,
                },
                StateChange::TransactionStopped {
                    identity,
                    ocpp_transaction_id,
                    ..
                } => PriceEvent::Stopped {
                    identity: identity.clone(),
                    ocpp_transaction_id: *ocpp_transaction_id,
                },
                StateChange::MeterValue {
                    identity,
                    connector_id,
                    energy: Some(_),
                    ..
                }
                | StateChange::TransactionEnergy {
                    identity,
                    connector_id,
                    ..
                } => PriceEvent::Reading {
                    identity: identity.clone(),
                    connector_id: *connector_id,
                },
                StateChange::ActionReported(report) if displays_costs(report) => {
                    PriceEvent::Configured {
                        identity: report.identity.clone(),
                    }
                }
                _ => continue,
            };
            crate::price_display::offer(sender, event);
        }
    }

    /// Writes the final cost of the batch's stopped transactions (those that took a tariff).
    async fn price_stopped(&self, changes: &[StateChange]) {
        for change in changes {
            if let StateChange::TransactionStopped {
                identity,
                ocpp_transaction_id,
                ..
            } = change
            {
                crate::pricing::write_final_cost(&self.store, identity, *ocpp_transaction_id).await;
            }
        }
    }

    /// Keeps a refused record in the dead letters (retrying while the store is unreachable).
    async fn set_aside(&self, message: &Message, refusal: &cms_store::StoreError) {
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
            match self.store.set_aside(&letter).await {
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

    /// The state changes of a batch, readings coalesced to the newest per connector, each with
    /// the index of the record it came from. A reading that pricing keeps (see
    /// [`Materialiser::energy_wanted`]) gives its energy register even when a newer reading
    /// supersedes it as the latest.
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
        let energy_wanted = self.energy_wanted(&told);
        for (i, message) in batch.iter().enumerate() {
            let use_of = match (superseded[i], energy_wanted[i]) {
                (true, false) => continue,
                (true, true) => ReadingUse::EnergyOnly,
                (false, energy) => ReadingUse::Latest { energy },
            };
            let Some(change) = self.change_of(message, use_of) else {
                continue;
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
                self.note_energy_kept(told[i]);
            }
            if let StateChange::MeterValue { connector_id, .. } = &change {
                // The change's identity is the record's key, which `change_of` found UTF-8.
                let identity = std::str::from_utf8(&message.record.key).unwrap_or_default();
                let key = (identity, *connector_id);
                if let Some(&at) = reading_at.get(&key) {
                    // The newer reading replaces the older as the latest; the older's energy
                    // register, if pricing keeps it, stays as a change of its own.
                    let older = std::mem::replace(&mut changes[at], change);
                    let older_source = std::mem::replace(&mut sources[at], i);
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

    /// Which MeterValues records give an energy reading to keep for pricing, told from the
    /// gateway's headers before anything is parsed: of each connector's minute (of the
    /// readings' own clock), the batch's earliest reading, unless the store already keeps an
    /// earlier one of that minute (the store keeps a minute's earliest: see
    /// `cms_store::transaction_readings`). A record without the headers is always read. The
    /// headers' times are fixed-width RFC 3339, so text order is time order. A minute is taken
    /// only once a reading gave a register ([`Materialiser::note_energy_kept`]): a message of
    /// other measurands (power, state of charge) holds it for the rest of its batch, not after.
    fn energy_wanted(&self, told: &[Told<'_>]) -> Vec<bool> {
        let mut wanted = vec![false; told.len()];
        // The batch's earliest reading of each connector's minute: (its time, its record).
        let mut earliest: HashMap<(&str, i64, &str), (&str, usize)> = HashMap::default();
        for (i, told) in told.iter().enumerate() {
            let (identity, connector, at) = match *told {
                Told::Other => continue,
                Told::Reading(None) => {
                    wanted[i] = true;
                    continue;
                }
                Told::Reading(Some(key)) => key,
            };
            match earliest.entry((identity, connector, minute_of(at))) {
                Entry::Vacant(entry) => {
                    entry.insert((at, i));
                }
                // Ties go to the first: the store keeps it too.
                Entry::Occupied(mut entry) => {
                    if at < entry.get().0 {
                        entry.insert((at, i));
                    }
                }
            }
        }
        for ((identity, connector, minute), (at, i)) in earliest {
            let kept = self
                .kept_energy
                .get(identity)
                .and_then(|connectors| connectors.get(&connector));
            wanted[i] = match kept {
                // The newest minute kept: only an earlier reading of it is worth a write.
                Some(kept) if minute == kept.minute => at < kept.at.as_str(),
                // A newer minute, or a late reading of an older one (the store decides).
                _ => true,
            };
        }
        wanted
    }

    /// The record gave a register: it is its connector's newest minute's earliest, unless it
    /// was a late one of an older minute.
    fn note_energy_kept(&mut self, told: Told<'_>) {
        let Told::Reading(Some((identity, connector, at))) = told else {
            return;
        };
        let connectors = match self.kept_energy.get_mut(identity) {
            Some(connectors) => connectors,
            None => self.kept_energy.entry(identity.to_string()).or_default(),
        };
        let minute = minute_of(at);
        match connectors.get_mut(&connector) {
            Some(kept) if minute < kept.minute.as_str() => {}
            Some(kept) if minute == kept.minute.as_str() => {
                if at < kept.at.as_str() {
                    kept.at = at.to_string();
                }
            }
            _ => {
                let kept = KeptEnergy {
                    minute: minute.to_string(),
                    at: at.to_string(),
                };
                connectors.insert(connector, kept);
            }
        }
    }

    fn change_of(&self, message: &Message, use_of: ReadingUse) -> Option<StateChange> {
        let record = &message.record;
        let identity = std::str::from_utf8(&record.key).ok()?.to_string();
        let change = if record.topic == self.topics.connections {
            connection_change(identity, &record.value)
        } else if record.topic == self.topics.command_results {
            let report = cms_bus::report_of(message)?;
            Some(crate::actions::report_change(
                &report,
                cms_store::now_record_time(),
            ))
        } else if record.topic == self.topics.messages {
            let action = Action::from_name(record.header_str("action")?)?;
            let at = record_time(record.header_str("received_at"));
            let start = TransactionStart {
                id: record
                    .header_str("transaction_id")
                    .and_then(|v| v.parse().ok()),
                id_tag_status: record.header_str("id_tag_status"),
            };
            self.message_change(identity, action, &record.value, at, start, use_of)
        } else {
            None
        };
        if change.is_none() {
            tracing::trace!(topic = %record.topic, offset = message.offset, "record without state change");
        }
        change
    }

    fn message_change(
        &self,
        identity: String,
        action: Action,
        payload: &Bytes,
        at: String,
        given: TransactionStart<'_>,
        use_of: ReadingUse,
    ) -> Option<StateChange> {
        let text = std::str::from_utf8(payload).ok()?;
        let request = match parse_request(action, text) {
            Ok(request) => request,
            Err(v) => {
                // The gateway validated it; a record that fails here came from elsewhere.
                tracing::warn!(%identity, action = action.as_str(), error = %v.description, "skipping invalid record");
                return None;
            }
        };
        Some(match request {
            Request::Heartbeat => StateChange::Heartbeat { identity, at },
            Request::BootNotification(boot) => StateChange::Booted {
                identity,
                vendor: boot.charge_point_vendor.into_owned(),
                model: boot.charge_point_model.into_owned(),
                serial_number: boot
                    .charge_point_serial_number
                    .or(boot.charge_box_serial_number)
                    .map(|s| s.into_owned()),
                firmware_version: boot.firmware_version.map(|s| s.into_owned()),
                at,
            },
            Request::StatusNotification(status) => StateChange::Status {
                identity,
                connector_id: status.connector_id.into(),
                status: status.status.as_str().to_string(),
                error: status.error_code.as_str().to_string(),
                info: status.info.map(|s| s.into_owned()),
                vendor_id: status.vendor_id.map(|s| s.into_owned()),
                vendor_error_code: status.vendor_error_code.map(|s| s.into_owned()),
                at,
            },
            Request::MeterValues(values) => {
                let connector_id = i64::from(values.connector_id);
                let energy = match use_of {
                    ReadingUse::Latest { energy: false } => None,
                    _ => energy_register_wh(&values.meter_value).map(|(at, wh)| EnergyReading {
                        at: format_record_time(at),
                        wh,
                    }),
                };
                let energy_only = |energy: Option<EnergyReading>| {
                    energy.map(|energy| StateChange::TransactionEnergy {
                        identity: identity.clone(),
                        connector_id,
                        energy,
                    })
                };
                if use_of == ReadingUse::EnergyOnly {
                    return energy_only(energy);
                }
                let (json, newest) = rest_meter_values(&values.meter_value);
                let measured_at = format_record_time(newest?);
                let reading = LatestReading {
                    measured_at: measured_at.clone(),
                    meter_value: Bytes::from(json.clone()),
                };
                if !self.cache.offer(&identity, values.connector_id, reading) {
                    return energy_only(energy);
                }
                StateChange::MeterValue {
                    identity,
                    connector_id,
                    meter_value: json,
                    measured_at,
                    energy,
                    at,
                }
            }
            Request::StartTransaction(start) => StateChange::TransactionStarted {
                identity,
                ocpp_transaction_id: given.id?,
                connector_id: start.connector_id.into(),
                id_tag: start.id_tag.into_owned(),
                id_tag_status: given.id_tag_status.map(str::to_string),
                meter_start: start.meter_start.into(),
                reservation_id: start.reservation_id.map(Into::into),
                started_at: format_record_time(start.timestamp),
                at,
            },
            Request::StopTransaction(stop) => StateChange::TransactionStopped {
                identity,
                ocpp_transaction_id: stop.transaction_id.into(),
                meter_stop: stop.meter_stop.into(),
                stopped_at: format_record_time(stop.timestamp),
                reason: stop.reason().as_str().to_string(),
                at,
            },
            _ => return None,
        })
    }
}

/// Lets a short batch fill up for `LINGER`, then takes what has arrived without waiting more.
async fn gather_more(subscriber: &mut dyn Subscriber, batch: &mut Vec<Message>) {
    if batch.len() >= BATCH {
        return;
    }
    tokio::time::sleep(LINGER).await;
    take_arrived(subscriber, batch, BATCH);
}

/// Adds to `batch`, up to `max` messages, what the subscriber has already, without waiting.
pub(crate) fn take_arrived(subscriber: &mut dyn Subscriber, batch: &mut Vec<Message>, max: usize) {
    while batch.len() < max {
        match subscriber
            .next_batch(batch, max - batch.len())
            .now_or_never()
        {
            Some(Ok(n)) if n > 0 => {}
            // Nothing more yet, closed, or an error the next full read will report.
            _ => break,
        }
    }
}

/// Which MeterValues records of the batch a newer reading of the same connector supersedes.
/// Under load a batch holds many readings per connector and only the newest is kept, so the
/// others are skipped before their payloads are parsed: the gateway's `connector_id` and
/// `measured_at` headers tell which is newest (ties go to the later record). Records
/// without those headers are never skipped.
fn superseded_readings(told: &[Told<'_>]) -> Vec<bool> {
    let mut superseded = vec![false; told.len()];
    let mut newest: HashMap<(&str, i64), (&str, usize)> = HashMap::default();
    for (i, told) in told.iter().enumerate() {
        let Told::Reading(Some((identity, connector, at))) = *told else {
            continue;
        };
        match newest.entry((identity, connector)) {
            Entry::Vacant(entry) => {
                entry.insert((at, i));
            }
            Entry::Occupied(mut entry) => {
                let (held_at, held) = *entry.get();
                // Same fixed-width RFC 3339 form: text order is time order.
                if at >= held_at {
                    superseded[held] = true;
                    entry.insert((at, i));
                } else {
                    superseded[i] = true;
                }
            }
        }
    }
    superseded
}

fn connection_change(identity: String, value: &Bytes) -> Option<StateChange> {
    let event: serde_json::Value = serde_json::from_slice(value).ok()?;
    let at = record_time(event["at"].as_str());
    if let "gateway_started" | "gateway_alive" = event["event"].as_str()? {
        return gateway_change(&event, at);
    }
    let session = event["session"].as_str()?.to_string();
    match event["event"].as_str()? {
        "connected" => Some(StateChange::Connected {
            identity,
            session,
            server: event["gateway"].as_str().unwrap_or_default().to_string(),
            at,
        }),
        "disconnected" => Some(StateChange::Disconnected {
            identity,
            session,
            at,
        }),
        "upstream" => Some(StateChange::UpstreamState {
            identity,
            session,
            position: event["position"].as_i64()?,
            connected: event["status"].as_str()? == "connected",
            at,
        }),
        _ => None,
    }
}

/// A gateway's record of itself (keyed by its node id): its start, or its beacon.
fn gateway_change(event: &serde_json::Value, at: String) -> Option<StateChange> {
    let server = event["gateway"]
        .as_str()
        .filter(|s| !s.is_empty())?
        .to_string();
    match event["event"].as_str()? {
        // A gateway that beacons says how often as it starts; one of an older version does not.
        "gateway_started" => Some(StateChange::GatewayStarted {
            server,
            at,
            beacons: event["beacon_interval_ms"].is_u64(),
        }),
        "gateway_alive" => Some(StateChange::GatewayAlive { server, at }),
        _ => None,
    }
}

/// A gateway timestamp in record form (now, if absent or unreadable).
fn record_time(text: Option<&str>) -> String {
    let parsed = text.and_then(|t| DateTime::parse_from_rfc3339(t).ok());
    format_record_time(parsed.map_or_else(Utc::now, |t| t.with_timezone(&Utc)))
}

fn last_of_each_partition(batch: &[Message]) -> Vec<&Message> {
    let mut last: HashMap<(&str, i32), &Message> = HashMap::default();
    for message in batch {
        last.insert((&message.record.topic, message.partition), message);
    }
    last.into_values().collect()
}

#[cfg(test)]
mod tests;

/// What a batch's record is, as the gateway's headers tell it.
#[derive(Clone, Copy)]
pub(crate) enum Told<'a> {
    /// Not a charger's MeterValues.
    Other,
    /// A MeterValues record, with its charger, connector and newest sample time when the
    /// gateway's headers give them ([`reading_key`]); without them it is always parsed.
    Reading(Option<(&'a str, i64, &'a str)>),
}

pub(crate) fn told<'a>(record: &'a Record, messages_topic: &str) -> Told<'a> {
    if is_reading(record, messages_topic) {
        Told::Reading(reading_key(record))
    } else {
        Told::Other
    }
}

/// Whether the record is a charger's MeterValues.
fn is_reading(record: &Record, messages_topic: &str) -> bool {
    record.topic == messages_topic
        && record.header_str("action") == Some(Action::MeterValues.as_str())
}

/// A reading's connector and newest sample time, from the gateway's headers, as written (the
/// time in the fixed-width record form, so text order is time order).
fn reading_headers(record: &Record) -> Option<(&str, &str)> {
    Some((
        record.header_str("connector_id")?,
        record.header_str("measured_at")?,
    ))
}

/// [`reading_headers`] with the charger's identity and the connector as a number.
fn reading_key(record: &Record) -> Option<(&str, i64, &str)> {
    let (connector, at) = reading_headers(record)?;
    let identity = std::str::from_utf8(&record.key).ok()?;
    Some((identity, connector.parse().ok()?, at))
}

/// The newest minute (of the readings' own clock) an energy reading was kept in for a
/// connector, and the earliest reading of it kept (record time form).
struct KeptEnergy {
    minute: String,
    at: String,
}

/// The minute of a record time: `2026-11-21T10:05` of `2026-11-21T10:05:30.000000Z`.
fn minute_of(at: &str) -> &str {
    at.get(..16).unwrap_or(at)
}

/// Whether the report is of a whole configuration read that says the charger displays costs
/// (the pricing whitepaper's `CustomDisplayCostAndPrice`).
fn displays_costs(report: &cms_store::actions::ActionReported) -> bool {
    match &report.settings {
        Some(cms_store::actions::SettingsUpdate::Replace(settings)) => settings.iter().any(|s| {
            s.key == "CustomDisplayCostAndPrice"
                && s.value
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        }),
        _ => false,
    }
}

/// What a MeterValues record is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadingUse {
    /// The connector's latest reading, and its energy register for pricing when `energy`.
    Latest { energy: bool },
    /// Only its energy register for pricing: a newer reading is the latest.
    EnergyOnly,
}

/// A reading's energy register as a change of its own, if it has one kept for pricing.
fn energy_only(change: StateChange) -> Option<StateChange> {
    match change {
        StateChange::MeterValue {
            identity,
            connector_id,
            energy: Some(energy),
            ..
        } => Some(StateChange::TransactionEnergy {
            identity,
            connector_id,
            energy,
        }),
        _ => None,
    }
}

/// What the gateway said of a StartTransaction, in the headers of its record.
struct TransactionStart<'a> {
    /// The transactionId it gave.
    id: Option<i64>,
    id_tag_status: Option<&'a str>,
}
