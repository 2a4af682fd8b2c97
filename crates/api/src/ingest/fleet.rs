//! The fleet's state in memory, for the overview, the chargers stream and the list's filters
//! (docs/api.md "Fleet overview"): each charger's connection, statuses, open transactions and
//! when it last spoke. The store stays the truth: the materialiser names the chargers a batch
//! touched once the store has it, and a keeper (`keep`, one task) reads those again; it also
//! reads the chargers registered since, and every [`RESYNC`] all of them (what another
//! replica's materialiser or the gateways' liveness sweep wrote). When a charger last spoke is
//! kept from the bus's records alone (the store does not write every message).
//!
//! The chargers whose connection or statuses changed are handed to the streams in one batch a
//! second ([`FLUSH`]), however many changes came: 1,000 status changes a second are one event a
//! second per client.

use cms_bus::{Message, header};
use cms_store::fleet::{FleetRow, FleetScope};
use cms_store::{StateChange, Store};
use dashmap::DashMap;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// How often the keeper reads what was touched, and the chargers registered since.
const TICK: Duration = Duration::from_millis(250);
/// How often the streams are handed the chargers that changed.
pub const FLUSH: Duration = Duration::from_secs(1);
/// How often every charger is read again.
pub const RESYNC: Duration = Duration::from_secs(5);

/// One charger as the fleet views show it.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetCharger {
    pub row: FleetRow,
    /// Its identity and reference in lower case, made once when read rather than for every
    /// charger of every `filter[search]` (most of that filter's time at 20,000 chargers).
    pub identity_lower: Box<str>,
    pub reference_lower: Option<Box<str>>,
}

impl FleetCharger {
    pub fn new(row: FleetRow) -> Self {
        FleetCharger {
            identity_lower: row.identity.to_lowercase().into(),
            reference_lower: row.reference.as_deref().map(|r| r.to_lowercase().into()),
            row,
        }
    }

    /// Its identity or reference holds `search` (lower case).
    pub fn found(&self, search: &str) -> bool {
        self.identity_lower.contains(search)
            || self
                .reference_lower
                .as_deref()
                .is_some_and(|r| r.contains(search))
    }

    /// The charger, or one of its connectors, reports `Faulted`.
    pub fn faulted(&self) -> bool {
        self.row.status.as_deref() == Some("Faulted")
            || self.row.connectors.iter().any(|(_, s)| s == "Faulted")
    }

    /// What a stream tells of a change: its connection and statuses.
    fn shown(&self) -> (bool, &Option<String>, &[(i64, String)]) {
        (self.row.online, &self.row.status, &self.row.connectors)
    }
}

/// Every charger's state, by id, with the identities' ids.
pub struct FleetState {
    chargers: DashMap<i64, FleetCharger>,
    ids: DashMap<Box<str>, i64>,
    /// Identities a batch touched, to read again.
    touched: Mutex<HashSet<Box<str>>>,
    /// Ids whose connection or statuses changed since the last flush.
    changed: Mutex<HashSet<i64>>,
    flushes: broadcast::Sender<Arc<Vec<i64>>>,
    /// The highest id read: the chargers registered since are read at the next tick.
    newest_id: AtomicI64,
    /// A change made through the REST API (a reference, say): everything is read again soon.
    resync_soon: AtomicBool,
    /// What the chargers are told to heartbeat at (the gateways' `--heartbeat-interval`).
    pub heartbeat_interval: Duration,
}

impl FleetState {
    pub fn new(heartbeat_interval: Duration) -> Self {
        FleetState {
            chargers: DashMap::new(),
            ids: DashMap::new(),
            touched: Mutex::default(),
            changed: Mutex::default(),
            flushes: broadcast::channel(16).0,
            newest_id: AtomicI64::new(0),
            resync_soon: AtomicBool::new(false),
            heartbeat_interval,
        }
    }

    /// How long a charger may be silent past its heartbeat interval before it is stale.
    pub fn stale_after(&self) -> Duration {
        stale_after(self.heartbeat_interval)
    }

    #[cfg(test)]
    pub fn get(&self, id: i64) -> Option<FleetCharger> {
        self.chargers.get(&id).map(|c| c.clone())
    }

    /// Calls `f` with the charger held under `id`, without a copy.
    pub fn with<T>(&self, id: i64, f: impl FnOnce(Option<&FleetCharger>) -> T) -> T {
        let held = self.chargers.get(&id);
        f(held.as_deref())
    }

    /// The batches of changed ids, one a [`FLUSH`] with any.
    pub fn follow(&self) -> broadcast::Receiver<Arc<Vec<i64>>> {
        self.flushes.subscribe()
    }

    /// Everything is read again at the next tick.
    pub fn resync_soon(&self) {
        self.resync_soon.store(true, Ordering::Relaxed);
    }

    /// What a batch the store has committed says: when each charger last spoke (its messages'
    /// receipt), and which chargers to read again.
    pub fn note_batch(&self, batch: &[Message], messages_topic: &str, changes: &[StateChange]) {
        self.note_messages(batch, messages_topic);
        let mut touched = self.touched.lock().unwrap_or_else(|e| e.into_inner());
        for change in changes {
            use StateChange::*;
            let identity = match change {
                Connected { identity, .. }
                | Disconnected { identity, .. }
                | Booted { identity, .. }
                | Status { identity, .. }
                | EvseStatus { identity, .. }
                | TransactionStarted { identity, .. }
                | TransactionStopped { identity, .. } => identity,
                TransactionEvent(event) => &event.identity,
                GatewayStarted { .. } => {
                    self.resync_soon();
                    continue;
                }
                _ => continue,
            };
            if !touched.contains(identity.as_str()) {
                touched.insert(identity.as_str().into());
            }
        }
    }

    /// Notes when each charger of `batch`'s messages last spoke (record time, newest kept).
    pub fn note_messages(&self, batch: &[Message], messages_topic: &str) {
        for message in batch {
            let record = &message.record;
            if record.topic != messages_topic {
                continue;
            }
            let (Ok(identity), Some(at)) = (
                std::str::from_utf8(&record.key),
                record.header_str(header::RECEIVED_AT),
            ) else {
                continue;
            };
            let Some(id) = self.ids.get(identity).map(|id| *id) else {
                continue;
            };
            if let Some(mut held) = self.chargers.get_mut(&id)
                && held.row.last_message_at.as_deref() < Some(at)
            {
                held.row.last_message_at = Some(at.to_string());
            }
        }
    }

    /// Takes rows read from the store; those whose connection or statuses changed are
    /// flushed to the streams.
    fn take(&self, rows: Vec<FleetRow>) {
        let mut changed = Vec::new();
        for mut row in rows {
            self.newest_id.fetch_max(row.id, Ordering::Relaxed);
            if !self.ids.contains_key(row.identity.as_str()) {
                self.ids.insert(row.identity.as_str().into(), row.id);
            }
            match self.chargers.get_mut(&row.id) {
                Some(mut held) => {
                    // The bus's time of its last message is newer than the store's.
                    row.last_message_at = row.last_message_at.max(held.row.last_message_at.take());
                    let new = FleetCharger::new(row);
                    if new.shown() != held.shown() {
                        changed.push(new.row.id);
                    }
                    *held = new;
                }
                None => {
                    changed.push(row.id);
                    self.chargers.insert(row.id, FleetCharger::new(row));
                }
            }
        }
        if !changed.is_empty() {
            let mut pending = self.changed.lock().unwrap_or_else(|e| e.into_inner());
            pending.extend(changed);
        }
    }

    /// Hands the changed ids to the streams, if any.
    fn flush(&self) {
        let ids: Vec<i64> = {
            let mut pending = self.changed.lock().unwrap_or_else(|e| e.into_inner());
            pending.drain().collect()
        };
        if !ids.is_empty() && self.flushes.receiver_count() > 0 {
            let _ = self.flushes.send(Arc::new(ids));
        }
    }

    /// Reads every charger (at start, and every [`RESYNC`]).
    pub async fn read_all(&self, store: &Store) -> Result<(), cms_store::StoreError> {
        self.resync_soon.store(false, Ordering::Relaxed);
        let rows = store.fleet_rows(FleetScope::All).await?;
        let present: HashSet<i64> = rows.iter().map(|r| r.id).collect();
        self.take(rows);
        // Deleted chargers.
        self.chargers.retain(|id, _| present.contains(id));
        self.ids.retain(|_, id| present.contains(id));
        Ok(())
    }

    /// Reads the chargers touched since the last tick, and those registered since.
    async fn read_touched(&self, store: &Store) -> Result<(), cms_store::StoreError> {
        let touched: Vec<String> = {
            let mut touched = self.touched.lock().unwrap_or_else(|e| e.into_inner());
            touched.drain().map(String::from).collect()
        };
        // A few hundred at a time: one statement's parameters stay well within every store's.
        for some in touched.chunks(500) {
            let rows = store.fleet_rows(FleetScope::Identities(some)).await;
            match rows {
                Ok(rows) => self.take(rows),
                Err(e) => {
                    // Read at the next resync.
                    self.resync_soon();
                    return Err(e);
                }
            }
        }
        let newest = self.newest_id.load(Ordering::Relaxed);
        self.take(store.fleet_rows(FleetScope::After(newest)).await?);
        Ok(())
    }
}

/// The keeper: reads what was touched every [`TICK`], everything every [`RESYNC`], and flushes
/// the changes every [`FLUSH`], until `stop`. One task, so that a resync and a touched read
/// never cross: a charger touched while everything is read is read again after it.
pub async fn keep(store: Store, fleet: Arc<FleetState>, stop: CancellationToken) {
    let mut last_resync = tokio::time::Instant::now();
    let mut last_flush = tokio::time::Instant::now();
    while !stop.is_cancelled() {
        // Asked for by a change through the REST API: at most once a second all the same.
        let asked = fleet.resync_soon.load(Ordering::Relaxed) && last_resync.elapsed() >= FLUSH;
        let due = asked || last_resync.elapsed() >= RESYNC;
        let read = if due {
            last_resync = tokio::time::Instant::now();
            fleet.read_all(&store).await
        } else {
            fleet.read_touched(&store).await
        };
        if let Err(e) = read {
            tracing::warn!(error = %e, "cannot read the fleet's state");
        }
        if last_flush.elapsed() >= FLUSH {
            last_flush = tokio::time::Instant::now();
            fleet.flush();
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(TICK) => {}
        }
    }
}

/// The power a connector draws now (W), from its latest reading as the cache holds it (the
/// REST `meterValue` array): `Power.Active.Import` of its newest sample, the total or, without
/// one, the sum of its phases. `None` when it reports no power.
pub fn power_w(meter_value: &[u8]) -> Option<f64> {
    // Most readings carry no power: skipped without a parse.
    const MEASURAND: &[u8] = b"Power.Active.Import";
    if !meter_value.windows(MEASURAND.len()).any(|w| w == MEASURAND) {
        return None;
    }
    let values: serde_json::Value = serde_json::from_slice(meter_value).ok()?;
    let newest = values
        .as_array()?
        .iter()
        .filter(|v| {
            v["sampledValue"].as_array().is_some_and(|samples| {
                samples
                    .iter()
                    .any(|s| s["measurand"] == "Power.Active.Import")
            })
        })
        .max_by(|a, b| a["timestamp"].as_str().cmp(&b["timestamp"].as_str()))?;
    let watts = |s: &serde_json::Value| {
        let value: f64 = s["value"].as_str()?.parse().ok()?;
        let scale = if s["unit"] == "kW" { 1000.0 } else { 1.0 };
        Some(value * scale)
    };
    let samples: Vec<&serde_json::Value> = newest["sampledValue"]
        .as_array()?
        .iter()
        .filter(|s| s["measurand"] == "Power.Active.Import")
        .collect();
    if let Some(total) = samples.iter().find(|s| s["phase"].is_null()) {
        return watts(total);
    }
    samples
        .iter()
        .filter(|s| matches!(s["phase"].as_str(), Some("L1" | "L2" | "L3")))
        .map(|s| watts(s))
        .sum()
}

#[cfg(test)]
mod scale;
#[cfg(test)]
mod tests;

/// How long a charger told to heartbeat every `heartbeat_interval` may be silent before it is
/// stale (and its webhooks told, `crate::ingest::heartbeat_overdue`): half an interval more (a
/// heartbeat sent late, a slow link), at least a second.
pub fn stale_after(heartbeat_interval: Duration) -> Duration {
    heartbeat_interval + (heartbeat_interval / 2).max(Duration::from_secs(1))
}
