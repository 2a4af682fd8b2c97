//! `transaction.ended`: told once the stopped transaction is priced.

use super::{ChargerRef, NewEvent, anyone_listens, charger_event, charger_ref, insert};
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
