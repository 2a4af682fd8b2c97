//! `transaction.ended`: told once the stopped transaction is priced.

use super::{ChargerRef, NewEvent, anyone_listens, charger_event, charger_ref};
use crate::{Result, Store};
use serde_json::{Value, json};

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

impl<'a> Ended<'a> {
    fn identity(&self) -> &'a str {
        match self {
            Ended::V16(identity, _) | Ended::V201(identity, _) => identity,
        }
    }

    /// What tells its event from the charger's other transactions' (the id as text).
    fn key(&self) -> String {
        match self {
            Ended::V16(_, id) => id.to_string(),
            Ended::V201(_, id) => id.to_string(),
        }
    }

    /// Its event's id.
    fn event_id(&self) -> String {
        super::event_id("transaction.ended", &[self.identity(), &self.key()])
    }
}

/// The `transaction.ended` of a stop in a batch, kept unready (`webhook_events.ready`) until the
/// transaction is priced: the events after it wait, so that a charger's events keep their order.
pub(super) fn placeholder(charger: &ChargerRef, which: &Ended, stopped_at: &str) -> NewEvent {
    let identity = which.identity();
    let key = which.key();
    let mut event = charger_event(
        charger,
        identity,
        "transaction.ended",
        &[&key],
        stopped_at,
        json!({ "transaction_id": key }),
    );
    event.sensitive = true;
    event.ready = false;
    event
}

impl Store {
    /// Completes the `transaction.ended` events of transactions that stopped, once their cost
    /// is known (the materialiser prices them after the batch that stopped them, and wrote each
    /// event then, unready: see [`placeholder`]), and lets them go. Before the materialiser
    /// commits the batch on the bus: a crash in between replays the batch, and this is done
    /// again.
    pub async fn emit_transactions_ended(&self, ended: &[Ended<'_>]) -> Result<()> {
        if ended.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        if !anyone_listens(&mut tx).await? {
            return Ok(());
        }
        for which in ended {
            let row: Option<EndedRow> = match which {
                Ended::V16(identity, id) => {
                    sqlx::query_as(&format!("{ENDED} AND t.ocpp_transaction_id = $2"))
                        .bind(*identity)
                        .bind(*id)
                        .fetch_optional(&mut *tx)
                        .await?
                }
                Ended::V201(identity, id) => {
                    sqlx::query_as(&format!("{ENDED} AND t.station_transaction_id = $2"))
                        .bind(*identity)
                        .bind(*id)
                        .fetch_optional(&mut *tx)
                        .await?
                }
            };
            let charger = charger_ref(&mut tx, which.identity()).await?;
            // Told as it is when the transaction is not found stopped (a stop of a transaction
            // cms never saw start): unready no longer.
            let told = match (row, charger) {
                (Some(row), Some(charger)) if row.stopped_at.is_some() => {
                    let stopped_at = row.stopped_at.clone().unwrap_or_default();
                    Some(ended_event(
                        &charger,
                        which.identity(),
                        &row,
                        &stopped_at,
                        &which.key(),
                    ))
                }
                _ => None,
            };
            let (data, occurred_at) = match &told {
                Some(event) => (
                    Some(event.data.to_string()),
                    Some(event.occurred_at.as_str()),
                ),
                None => (None, None),
            };
            sqlx::query(
                "UPDATE webhook_events SET data = COALESCE($1, data),
                   occurred_at = COALESCE($2, occurred_at), ready = 1
                 WHERE event_id = $3",
            )
            .bind(data)
            .bind(occurred_at)
            .bind(which.event_id())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

const ENDED: &str = "SELECT t.ocpp_transaction_id, t.station_transaction_id, t.connector_id,
    t.id_tag, t.meter_start, t.meter_stop, t.started_at, t.stopped_at, t.stop_reason,
    t.tariff_uuid, t.cost
    FROM transactions t JOIN chargers c ON c.id = t.charger_id WHERE c.identity = $1";

fn ended_event(
    charger: &ChargerRef,
    identity: &str,
    row: &EndedRow,
    stopped_at: &str,
    key: &str,
) -> NewEvent {
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
    let mut event = charger_event(
        charger,
        identity,
        "transaction.ended",
        &[key],
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
