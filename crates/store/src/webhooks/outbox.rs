//! The outbox: events written in the same transaction as the change that caused them, so that
//! an event is never told of a change the store does not have, nor a change kept without its
//! event. The dispatcher (cms-webhooks) fans them out to the subscriptions that should have
//! them. Nothing is written while no team has an enabled webhook: the batches of a fleet
//! without subscribers pay one indexed look-up each.
//!
//! An event's id is made from what it is about (`evt_` and a hash of its kind and key), not
//! drawn at random: a batch the materialiser applies again after a crash (the bus replays what
//! it had not committed) writes the same ids, which the outbox keeps once, so a receiver is not
//! sent the same change twice under two ids.

use crate::state::StateChange;
use crate::time::now_record_time;
use crate::{Backend, Result, Store};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;
use std::collections::HashMap;

/// An event on its way into the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_id: String,
    pub event_type: &'static str,
    /// What orders its deliveries: the charger's identity.
    pub subject: String,
    pub team_id: Option<i64>,
    pub site_id: Option<i64>,
    pub charger_id: Option<i64>,
    pub sensitive: bool,
    pub data: Value,
    pub occurred_at: String,
}

/// The id of the event of kind `event_type` about `key` (a charger and what tells this change
/// from its others).
pub fn event_id(event_type: &str, key: &[&str]) -> String {
    let mut hash = Sha256::new();
    hash.update(event_type.as_bytes());
    for part in key {
        hash.update([0]);
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("evt_{hex}")
}

/// A charger as its events name it.
#[derive(Debug, Clone, sqlx::FromRow)]
struct ChargerRef {
    id: i64,
    uuid: String,
    site_id: Option<i64>,
    team_id: Option<i64>,
}

/// Whether any team has an enabled webhook: nothing is written otherwise.
async fn anyone_listens(db: &mut AnyConnection) -> Result<bool> {
    Ok(
        sqlx::query("SELECT 1 FROM webhooks WHERE enabled = 1 LIMIT 1")
            .fetch_optional(&mut *db)
            .await?
            .is_some(),
    )
}

/// The events of one store transaction, gathered change by change and written before its
/// commit.
pub(crate) struct Outbox {
    on: bool,
    chargers: HashMap<String, Option<ChargerRef>>,
    events: Vec<NewEvent>,
}

impl Outbox {
    pub(crate) async fn open(db: &mut AnyConnection) -> Result<Outbox> {
        Ok(Outbox {
            on: anyone_listens(db).await?,
            chargers: HashMap::new(),
            events: Vec::new(),
        })
    }

    /// Notes the events of `change`, before it is applied (a status is compared with the one
    /// it replaces).
    pub(crate) async fn note(
        &mut self,
        db: &mut AnyConnection,
        change: &StateChange,
    ) -> Result<()> {
        if !self.on {
            return Ok(());
        }
        use StateChange::*;
        let identity = match change {
            Connected { identity, .. }
            | Disconnected { identity, .. }
            | Booted { identity, .. }
            | Status { identity, .. }
            | EvseStatus { identity, .. }
            | TransactionStarted { identity, .. } => identity,
            TransactionEvent(event) => &event.identity,
            ActionReported(report) => &report.identity,
            _ => return Ok(()),
        };
        let Some(charger) = self.charger(db, identity).await? else {
            return Ok(());
        };
        let mut events = Vec::new();
        match change {
            Connected {
                session,
                at,
                ocpp_version,
                ..
            } => events.push(charger_event(
                &charger,
                identity,
                "charger.connected",
                &[session],
                at,
                json!({ "session": session, "ocpp_version": ocpp_version }),
            )),
            Disconnected { session, at, .. } => events.push(charger_event(
                &charger,
                identity,
                "charger.disconnected",
                &[session],
                at,
                json!({ "session": session }),
            )),
            Booted {
                vendor,
                model,
                serial_number,
                firmware_version,
                at,
                ..
            } => events.push(charger_event(
                &charger,
                identity,
                "charger.booted",
                &[at],
                at,
                json!({
                    "vendor": vendor, "model": model, "serial_number": serial_number,
                    "firmware_version": firmware_version,
                }),
            )),
            Status {
                connector_id,
                status,
                error,
                info,
                vendor_error_code,
                at,
                ..
            } => {
                let before = connector_status(db, charger.id, *connector_id).await?;
                let data = json!({
                    "connector_id": connector_id, "status": status, "error_code": error,
                    "info": info, "vendor_error_code": vendor_error_code,
                    "previous_status": before.as_ref().map(|(s, _)| s),
                });
                let key = [&connector_id.to_string()[..], status, error, at];
                if before.as_ref().map(|(s, e)| (s.as_str(), e.as_str()))
                    != Some((status.as_str(), error.as_str()))
                {
                    let kind = "connector.status_changed";
                    events.push(charger_event(
                        &charger,
                        identity,
                        kind,
                        &key,
                        at,
                        data.clone(),
                    ));
                }
                let faulted = status == "Faulted" || error != "NoError";
                let was_faulted = before.is_some_and(|(s, e)| s == "Faulted" || e != "NoError");
                if faulted && !was_faulted {
                    let kind = "charger.faulted";
                    events.push(charger_event(&charger, identity, kind, &key, at, data));
                }
            }
            EvseStatus {
                evse_id,
                connector_id,
                ocpp_status,
                timestamp,
                ..
            } => {
                let key = [
                    &evse_id.to_string()[..],
                    &connector_id.to_string(),
                    ocpp_status,
                    timestamp,
                ];
                let data = json!({
                    "evse_id": evse_id, "connector_id": connector_id, "status": ocpp_status,
                });
                let kind = "connector.status_changed";
                events.push(charger_event(
                    &charger,
                    identity,
                    kind,
                    &key,
                    timestamp,
                    data.clone(),
                ));
                if ocpp_status == "Faulted" {
                    events.push(charger_event(
                        &charger,
                        identity,
                        "charger.faulted",
                        &key,
                        timestamp,
                        data,
                    ));
                }
            }
            TransactionStarted {
                ocpp_transaction_id,
                connector_id,
                id_tag,
                id_tag_status,
                meter_start,
                started_at,
                ..
            } => {
                let id = ocpp_transaction_id.to_string();
                let mut event = charger_event(
                    &charger,
                    identity,
                    "transaction.started",
                    &[&id],
                    started_at,
                    json!({
                        "transaction_id": ocpp_transaction_id, "connector_id": connector_id,
                        "id_tag": id_tag, "id_tag_status": id_tag_status,
                        "meter_start_wh": meter_start, "started_at": started_at,
                    }),
                );
                event.sensitive = true;
                events.push(event);
                if let Some(status) = id_tag_status.as_deref().filter(|s| *s != "Accepted") {
                    events.push(refused(&charger, identity, id_tag, status, &id, started_at));
                }
            }
            TransactionEvent(event) => {
                use crate::station_events::EventType;
                if event.event_type != EventType::Started {
                    return Ok(());
                }
                let id = &event.station_transaction_id;
                let mut started = charger_event(
                    &charger,
                    identity,
                    "transaction.started",
                    &[id],
                    &event.timestamp,
                    json!({
                        "transaction_id": id, "evse_id": event.evse_id,
                        "id_tag": event.id_tag, "id_tag_status": event.id_tag_status,
                        "started_at": event.timestamp,
                    }),
                );
                started.sensitive = true;
                events.push(started);
                if let (Some(tag), Some(status)) = (&event.id_tag, &event.id_tag_status)
                    && status != "Accepted"
                {
                    events.push(refused(
                        &charger,
                        identity,
                        tag,
                        status,
                        id,
                        &event.timestamp,
                    ));
                }
            }
            ActionReported(report) => {
                let Some(finished_at) = &report.finished_at else {
                    return Ok(());
                };
                let action = &report.action;
                events.push(charger_event(
                    &charger,
                    identity,
                    "action.finished",
                    &[&action.uuid],
                    finished_at,
                    json!({
                        "action_uuid": action.uuid, "action": action.action,
                        "state": report.status, "error_code": report.error_code,
                        "error_description": report.error_description,
                        "sent_at": report.sent_at, "finished_at": finished_at,
                    }),
                ));
            }
            _ => {}
        }
        self.events.extend(events);
        Ok(())
    }

    /// Writes the events noted, in the order noted.
    pub(crate) async fn write(self, db: &mut AnyConnection, backend: Backend) -> Result<()> {
        insert(db, backend, &self.events).await
    }

    async fn charger(
        &mut self,
        db: &mut AnyConnection,
        identity: &str,
    ) -> Result<Option<ChargerRef>> {
        if let Some(known) = self.chargers.get(identity) {
            return Ok(known.clone());
        }
        let found = charger_ref(db, identity).await?;
        self.chargers.insert(identity.to_string(), found.clone());
        Ok(found)
    }
}

async fn charger_ref(db: &mut AnyConnection, identity: &str) -> Result<Option<ChargerRef>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.uuid, c.site_id, s.team_id FROM chargers c
         LEFT JOIN sites s ON s.id = c.site_id WHERE c.identity = $1",
    )
    .bind(identity)
    .fetch_optional(&mut *db)
    .await?)
}

/// A connector's status and error as the store has them, before a change.
async fn connector_status(
    db: &mut AnyConnection,
    charger_id: i64,
    connector_id: i64,
) -> Result<Option<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT status, error FROM connectors WHERE charger_id = $1 AND connector_id = $2",
    )
    .bind(charger_id)
    .bind(connector_id)
    .fetch_optional(&mut *db)
    .await?)
}

fn charger_event(
    charger: &ChargerRef,
    identity: &str,
    event_type: &'static str,
    key: &[&str],
    occurred_at: &str,
    mut data: Value,
) -> NewEvent {
    let mut full_key = vec![identity];
    full_key.extend_from_slice(key);
    if let Value::Object(fields) = &mut data {
        fields.insert("identity".into(), identity.into());
        fields.insert("charger_uuid".into(), charger.uuid.clone().into());
    }
    NewEvent {
        event_id: event_id(event_type, &full_key),
        event_type,
        subject: identity.to_string(),
        team_id: charger.team_id,
        site_id: charger.site_id,
        charger_id: Some(charger.id),
        sensitive: false,
        data,
        occurred_at: occurred_at.to_string(),
    }
}

/// A tag the charger was told is not accepted, at a transaction's start.
fn refused(
    charger: &ChargerRef,
    identity: &str,
    id_tag: &str,
    status: &str,
    transaction_id: &str,
    at: &str,
) -> NewEvent {
    let mut event = charger_event(
        charger,
        identity,
        "id_tag.refused",
        &[transaction_id],
        at,
        json!({ "id_tag": id_tag, "status": status, "transaction_id": transaction_id }),
    );
    event.sensitive = true;
    event
}

/// Writes `events` into the outbox; one already there (a replayed batch's) is kept as it was.
pub(crate) async fn insert(
    db: &mut AnyConnection,
    backend: Backend,
    events: &[NewEvent],
) -> Result<()> {
    let _ = backend;
    let now = now_record_time();
    for event in events {
        sqlx::query(
            "INSERT INTO webhook_events (event_id, type, subject, team_id, site_id, charger_id,
               sensitive, data, occurred_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (event_id) DO NOTHING",
        )
        .bind(&event.event_id)
        .bind(event.event_type)
        .bind(&event.subject)
        .bind(event.team_id)
        .bind(event.site_id)
        .bind(event.charger_id)
        .bind(event.sensitive as i64)
        .bind(event.data.to_string())
        .bind(&event.occurred_at)
        .bind(&now)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

/// A stopped transaction as its `transaction.ended` names it: a 1.6 one by its number, a 2.0.1
/// one by the station's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended<'a> {
    V16(&'a str, i64),
    V201(&'a str, &'a str),
}

#[derive(sqlx::FromRow)]
struct EndedRow {
    ocpp_transaction_id: i64,
    station_transaction_id: Option<String>,
    connector_id: i64,
    id_tag: String,
    meter_start: i64,
    meter_stop: Option<i64>,
    started_at: String,
    stopped_at: Option<String>,
    stop_reason: Option<String>,
    tariff_uuid: Option<String>,
    cost: Option<String>,
}

impl Store {
    /// Writes the `transaction.ended` events of transactions that stopped, once their cost is
    /// known (the materialiser prices them after the batch that stopped them, before it commits
    /// the batch on the bus: a crash in between replays the batch, and these are written
    /// again, under the same ids).
    pub async fn emit_transactions_ended(&self, ended: &[Ended<'_>]) -> Result<()> {
        if ended.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        if !anyone_listens(&mut tx).await? {
            return Ok(());
        }
        let mut events = Vec::new();
        for which in ended {
            let (identity, row): (&str, Option<EndedRow>) = match which {
                Ended::V16(identity, id) => (
                    identity,
                    sqlx::query_as(&format!("{ENDED} AND t.ocpp_transaction_id = $2"))
                        .bind(*identity)
                        .bind(*id)
                        .fetch_optional(&mut *tx)
                        .await?,
                ),
                Ended::V201(identity, id) => (
                    identity,
                    sqlx::query_as(&format!("{ENDED} AND t.station_transaction_id = $2"))
                        .bind(*identity)
                        .bind(*id)
                        .fetch_optional(&mut *tx)
                        .await?,
                ),
            };
            let Some(row) = row else { continue };
            let (Some(stopped_at), Some(charger)) =
                (&row.stopped_at, charger_ref(&mut tx, identity).await?)
            else {
                continue;
            };
            events.push(ended_event(&charger, identity, &row, stopped_at));
        }
        insert(&mut tx, self.backend, &events).await?;
        tx.commit().await?;
        Ok(())
    }
}

const ENDED: &str = "SELECT t.ocpp_transaction_id, t.station_transaction_id, t.connector_id,
    t.id_tag, t.meter_start, t.meter_stop, t.started_at, t.stopped_at, t.stop_reason,
    t.tariff_uuid, t.cost
    FROM transactions t JOIN chargers c ON c.id = t.charger_id WHERE c.identity = $1";

fn ended_event(charger: &ChargerRef, identity: &str, row: &EndedRow, stopped_at: &str) -> NewEvent {
    let id: Value = match &row.station_transaction_id {
        Some(id) => id.clone().into(),
        None => row.ocpp_transaction_id.into(),
    };
    let energy = row.meter_stop.map(|stop| stop - row.meter_start);
    let duration = duration_seconds(&row.started_at, stopped_at);
    let cost: Value = row
        .cost
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null);
    let key = id.to_string();
    let mut event = charger_event(
        charger,
        identity,
        "transaction.ended",
        &[&key],
        stopped_at,
        json!({
            "transaction_id": id, "connector_id": row.connector_id, "id_tag": row.id_tag,
            "meter_start_wh": row.meter_start, "meter_stop_wh": row.meter_stop,
            "energy_wh": energy, "started_at": row.started_at, "stopped_at": stopped_at,
            "duration_s": duration, "reason": row.stop_reason, "tariff_uuid": row.tariff_uuid,
            "cost": cost,
        }),
    );
    event.sensitive = true;
    event
}

fn duration_seconds(from: &str, to: &str) -> Option<i64> {
    let from = chrono::DateTime::parse_from_rfc3339(from).ok()?;
    let to = chrono::DateTime::parse_from_rfc3339(to).ok()?;
    Some((to - from).num_seconds())
}

/// The event of a charger registered (`charger.registered`) or removed (`charger.removed`),
/// written in the transaction that does it.
pub(crate) async fn charger_changed(
    db: &mut AnyConnection,
    backend: Backend,
    identity: &str,
    event_type: &'static str,
) -> Result<()> {
    if !anyone_listens(db).await? {
        return Ok(());
    }
    let Some(charger) = charger_ref(db, identity).await? else {
        return Ok(());
    };
    let now = now_record_time();
    let event = charger_event(
        &charger,
        identity,
        event_type,
        &[&charger.uuid, &now],
        &now,
        json!({}),
    );
    insert(db, backend, &[event]).await
}

/// The event of a charger taken offline by cms rather than by its gateway's word: its
/// gateway fell silent (`charger.offline`), written in the transaction that ends its session.
pub(crate) async fn charger_offline(
    db: &mut AnyConnection,
    backend: Backend,
    identity: &str,
    session: &str,
    gateway: &str,
    at: &str,
) -> Result<()> {
    if !anyone_listens(db).await? {
        return Ok(());
    }
    let Some(charger) = charger_ref(db, identity).await? else {
        return Ok(());
    };
    let data = json!({ "session": session, "reason": "gateway_silent", "gateway": gateway });
    let event = charger_event(&charger, identity, "charger.offline", &[session], at, data);
    insert(db, backend, &[event]).await
}

#[cfg(test)]
mod tests;
