//! What an OCPP 2.0.1 station's StatusNotifications and TransactionEvents make of the store.
//!
//! A station's EVSE is the reference's connector (`connector_id` = evseId): its status is the
//! newest StatusNotification of any of its connectors, mapped to the 1.6 set the reference shows,
//! the raw status beside it. A transaction is a row of the same table as 1.6's, known by the
//! station's own transactionId and assembled from its events in seqNo order whatever order
//! they arrive in (`assembly`). docs/decisions.md tells why.

mod assembly;
pub(crate) mod batch;
#[cfg(test)]
mod tests;

pub use assembly::EventType;

use crate::latest_readings::{LatestReadings, Reading};
use crate::{EnergyReading, Result};
use assembly::Assembled;
use sqlx::AnyConnection;

/// Where a reading stands in its transaction (its sampled value's `context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadingContext {
    /// `Transaction.Begin`.
    Begin,
    /// `Transaction.End`.
    End,
    Other,
}

/// An energy register reading of a TransactionEvent's meter values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventEnergy {
    pub reading: EnergyReading,
    pub context: ReadingContext,
}

/// A 2.0.1 TransactionEvent as the store takes it. Times are record times.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionEvent {
    pub identity: String,
    /// The station's `transactionInfo.transactionId`.
    pub station_transaction_id: String,
    pub seq_no: i64,
    pub event_type: EventType,
    /// `evse.id`, when the event names it.
    pub evse_id: Option<i64>,
    /// `idToken.idToken`, when the event carries one, and how the gateway answered it.
    pub id_tag: Option<String>,
    pub id_tag_status: Option<String>,
    pub reservation_id: Option<i64>,
    /// `transactionInfo.stoppedReason` (an Ended event without one stopped for `Local`).
    pub stopped_reason: Option<String>,
    pub timestamp: String,
    /// The energy registers of its meter values, each sample time's.
    pub energy: Vec<EventEnergy>,
    /// Its meter values as the REST `meterValue` array, and their newest sample time: the
    /// EVSE's latest reading, when the event names the EVSE.
    pub latest: Option<(String, String)>,
    /// When the gateway received it.
    pub at: String,
    /// A Started's or Ended's signed readings (`signed_values`; an Updated's are not read).
    pub signed: Vec<crate::signed_values::SignedValue>,
}

/// Keeps a Started's or Ended's signed readings, once its transaction is stored.
pub(crate) async fn keep_signed(db: &mut AnyConnection, event: &TransactionEvent) -> Result<()> {
    use crate::signed_values::{SignedBy, keep};
    let by = match event.event_type {
        EventType::Started => SignedBy::Started,
        EventType::Ended => SignedBy::Ended,
        EventType::Updated => return Ok(()),
    };
    let tx = Some(event.station_transaction_id.as_str());
    keep(db, &event.identity, by, tx, &event.signed, &event.at).await
}

/// A StatusNotification's status as the reference shows it: `Occupied` is `Charging` while a
/// transaction runs on the EVSE and `Preparing` otherwise (`$1` the charger, `$2` the EVSE).
const MAPPED_STATUS: &str = "CASE WHEN EXISTS (SELECT 1 FROM transactions t
       WHERE t.charger_id = $1 AND t.connector_id = $2 AND t.stopped_at IS NULL
         AND t.station_transaction_id IS NOT NULL)
     THEN 'Charging' ELSE 'Preparing' END";

/// A station's StatusNotification: the EVSE's row (created if new) takes it unless it holds a
/// newer one (by the station's timestamp).
pub(crate) async fn evse_status(
    db: &mut AnyConnection,
    identity: &str,
    (evse_id, connector_id, ocpp_status): (i64, i64, &str),
    timestamp: &str,
    at: &str,
) -> Result<()> {
    let Some(charger_id) = charger_of(db, identity).await? else {
        return Ok(());
    };
    let status = match ocpp_status {
        "Occupied" => MAPPED_STATUS,
        "Available" => "'Available'",
        "Reserved" => "'Reserved'",
        "Faulted" => "'Faulted'",
        _ => "'Unavailable'",
    };
    sqlx::query(&format!(
        "INSERT INTO connectors (charger_id, connector_id, status, evse_id, evse_connector_id,
           ocpp_status, ocpp_status_at, created_at, updated_at)
         VALUES ($1, $2, {status}, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (charger_id, connector_id) DO UPDATE SET status = excluded.status,
           evse_id = excluded.evse_id, evse_connector_id = excluded.evse_connector_id,
           ocpp_status = excluded.ocpp_status, ocpp_status_at = excluded.ocpp_status_at,
           updated_at = excluded.updated_at
         WHERE connectors.ocpp_status_at IS NULL
            OR connectors.ocpp_status_at <= excluded.ocpp_status_at"
    ))
    .bind(charger_id)
    .bind(evse_id)
    .bind(connector_id)
    .bind(ocpp_status)
    .bind(timestamp)
    .bind(at)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// The charger's id, and its transaction's id, assembly and whether it is priced (1), if any.
pub(crate) type StoredTransaction = (i64, Option<i64>, Option<String>, Option<i64>);

/// A station's TransactionEvents of one transaction, from one batch, against its row as
/// `batch::lookup` found it: the row created if new, re-assembled with them all at once; their
/// readings kept for the transaction's price, and the newest as the EVSE's latest. A change of
/// the assembly alone (a reading of a running transaction: every reading's path while a
/// station charges) is left in `assemblies` for one statement of the whole batch.
pub(crate) async fn transaction_events<'a>(
    db: &mut AnyConnection,
    events: &[&'a TransactionEvent],
    stored: StoredTransaction,
    readings: &mut LatestReadings<'a>,
    assemblies: &mut Vec<batch::Assembly<'a>>,
) -> Result<()> {
    let Some(last) = events.last() else {
        return Ok(());
    };
    let (charger_id, id, assembly, priced) = stored;
    let before = assembly
        .and_then(|text| serde_json::from_str::<Assembled>(&text).ok())
        .unwrap_or_default();
    let mut after = before.clone();
    for e in events {
        after.add(e);
    }
    let (old, new) = (before.columns(), after.columns());
    let id = match id {
        Some(id) if after == before => id,
        // Only the assembly moved (the last reading): no column a reader sees changed.
        Some(id) if old == new && new.stopped_at.is_none() => {
            assemblies.push(batch::Assembly {
                id,
                assembly: assembly_text(&after),
                at: &last.at,
            });
            id
        }
        Some(id) => {
            write(db, id, &after, &last.at).await?;
            id
        }
        None => insert(db, charger_id, last, &after).await?,
    };
    if old.connector_id != new.connector_id && new.connector_id > 0 {
        set_connector_row(db, charger_id, id, new.connector_id, &last.at).await?;
    }
    let retariffed = (old.id_tag, old.id_tag_status, old.started_at)
        != (new.id_tag, new.id_tag_status, new.started_at);
    if retariffed {
        take_tariff(db, charger_id, id, &new).await?;
    }
    if (old.connector_id, old.stopped_at) != (new.connector_id, new.stopped_at) {
        for evse in [old.connector_id, new.connector_id] {
            follow_transaction(db, charger_id, evse, &last.at).await?;
        }
    }
    // Pricing keeps a minute's earliest register: of the batch's, only those are news.
    let mut earliest: Vec<&EnergyReading> = Vec::new();
    for reading in events
        .iter()
        .flat_map(|e| e.energy.iter().map(|r| &r.reading))
    {
        let minute = crate::transaction_readings::minute(&reading.at);
        match earliest
            .iter_mut()
            .find(|kept| crate::transaction_readings::minute(&kept.at) == minute)
        {
            Some(kept) if reading.at < kept.at => *kept = reading,
            Some(_) => {}
            None => earliest.push(reading),
        }
    }
    // Only a priced transaction keeps readings (`priced` is `None` for a new one; a tariff may
    // have been taken just now).
    if priced != Some(0) || retariffed {
        for reading in &earliest {
            crate::transaction_readings::keep_energy_of(db, id, reading).await?;
        }
    }
    if new.stopped_at.is_some() && !earliest.is_empty() {
        // Readings of a stopped transaction, sent offline: priced again.
        sqlx::query("UPDATE transactions SET cost = NULL WHERE id = $1")
            .bind(id)
            .execute(&mut *db)
            .await?;
    }
    // The newest of their readings is the EVSE's latest (ties: the later event's).
    let newest = events
        .iter()
        .filter_map(|e| Some((e.evse_id?, e.latest.as_ref()?, &e.identity, &e.at)))
        .reduce(|held, next| if next.1.1 >= held.1.1 { next } else { held });
    if let Some((evse, (meter_value, measured_at), identity, at)) = newest {
        let reading = Reading {
            identity,
            connector_id: evse,
            meter_value,
            measured_at,
            at,
        };
        readings.push(db, reading).await?;
    }
    Ok(())
}

async fn charger_of(db: &mut AnyConnection, identity: &str) -> Result<Option<i64>> {
    Ok(
        sqlx::query_scalar("SELECT id FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_optional(&mut *db)
            .await?,
    )
}

/// A new transaction's row. Its `ocpp_transaction_id` is minus its id: unique per charger,
/// and never a 1.6 transactionId (the gateway gives those from 1 up).
async fn insert(
    db: &mut AnyConnection,
    charger_id: i64,
    e: &TransactionEvent,
    assembled: &Assembled,
) -> Result<i64> {
    let c = assembled.columns();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO transactions (charger_id, connector_id, ocpp_transaction_id,
           station_transaction_id, reservation_id, id_tag, id_tag_status, meter_start,
           meter_stop, started_at, stopped_at, stop_reason, assembly, created_at, updated_at)
         VALUES ($1, $2, 0, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)
         RETURNING id",
    )
    .bind(charger_id)
    .bind(c.connector_id)
    .bind(&e.station_transaction_id)
    .bind(c.reservation_id)
    .bind(c.id_tag)
    .bind(c.id_tag_status)
    .bind(c.meter_start)
    .bind(c.meter_stop)
    .bind(c.started_at)
    .bind(c.stopped_at)
    .bind(c.stop_reason)
    .bind(assembly_text(assembled))
    .bind(&e.at)
    .fetch_one(&mut *db)
    .await?;
    sqlx::query("UPDATE transactions SET ocpp_transaction_id = -id WHERE id = $1")
        .bind(id)
        .execute(&mut *db)
        .await?;
    Ok(id)
}

/// Writes the re-assembled columns. A stopped transaction's cost is priced again (the
/// materialiser does, after the batch): a late event may have changed it.
async fn write(db: &mut AnyConnection, id: i64, assembled: &Assembled, at: &str) -> Result<()> {
    let c = assembled.columns();
    sqlx::query(
        "UPDATE transactions SET connector_id = $1, reservation_id = $2, id_tag = $3,
           id_tag_status = $4, meter_start = $5, meter_stop = $6, started_at = $7,
           stopped_at = $8, stop_reason = $9, assembly = $10, updated_at = $11, cost = NULL
         WHERE id = $12",
    )
    .bind(c.connector_id)
    .bind(c.reservation_id)
    .bind(c.id_tag)
    .bind(c.id_tag_status)
    .bind(c.meter_start)
    .bind(c.meter_stop)
    .bind(c.started_at)
    .bind(c.stopped_at)
    .bind(c.stop_reason)
    .bind(assembly_text(assembled))
    .bind(at)
    .bind(id)
    .execute(&mut *db)
    .await?;
    Ok(())
}

fn assembly_text(assembled: &Assembled) -> String {
    serde_json::to_string(assembled).unwrap_or_default()
}

/// The transaction's EVSE gets a row of its own even before any StatusNotification.
async fn set_connector_row(
    db: &mut AnyConnection,
    charger_id: i64,
    id: i64,
    evse: i64,
    at: &str,
) -> Result<()> {
    let connector: i64 = sqlx::query_scalar(
        "INSERT INTO connectors (charger_id, connector_id, evse_id, created_at, updated_at)
         VALUES ($1, $2, $2, $3, $3)
         ON CONFLICT (charger_id, connector_id) DO UPDATE SET evse_id = excluded.evse_id
         RETURNING id",
    )
    .bind(charger_id)
    .bind(evse)
    .bind(at)
    .fetch_one(&mut *db)
    .await?;
    sqlx::query("UPDATE transactions SET charger_connector_id = $1 WHERE id = $2")
        .bind(connector)
        .bind(id)
        .execute(&mut *db)
        .await?;
    Ok(())
}

/// An Occupied EVSE shows whether a transaction runs on it (`Charging`) or not (`Preparing`).
/// A change sets the row's `updated_at`: API replicas read a held connector again only when
/// it moved (crates/api/src/http/charger_rows.rs).
async fn follow_transaction(
    db: &mut AnyConnection,
    charger_id: i64,
    evse: i64,
    at: &str,
) -> Result<()> {
    sqlx::query(&format!(
        "UPDATE connectors SET status = {MAPPED_STATUS}, updated_at = $3
         WHERE charger_id = $1 AND connector_id = $2 AND ocpp_status = 'Occupied'
           AND status <> {MAPPED_STATUS}"
    ))
    .bind(charger_id)
    .bind(evse)
    .bind(at)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// The tariff the transaction is priced with, chosen as for a 1.6 start (the site's, or the
/// driver's provider's; none for a refused idToken) from what its events have told so far,
/// the version in force when cms first heard of it. Chosen again while it has no final cost,
/// when an event tells its idToken or its start.
async fn take_tariff(
    db: &mut AnyConnection,
    charger_id: i64,
    id: i64,
    c: &assembly::Columns<'_>,
) -> Result<()> {
    let chosen = crate::transaction_tariff::chosen("$1", "$2", "$3", "$4", "$5");
    let tariff: Option<ChosenTariff> = sqlx::query_as(&format!(
        "SELECT v.tariff_id, v.tariff_uuid, v.body, v.version, s.time_zone, p.uuid {chosen}"
    ))
    .bind(charger_id)
    .bind(c.started_at)
    .bind(created_at_of(db, id).await?)
    .bind(c.id_tag_status)
    .bind(crate::id_tags::id_tag_key(c.id_tag))
    .fetch_optional(&mut *db)
    .await?;
    let (tariff_id, uuid, body, version, zone, provider) = tariff.unwrap_or_default();
    sqlx::query(
        "UPDATE transactions SET tariff_id = $1, tariff_uuid = $2, tariff = $3,
           tariff_version = $4, time_zone = $5, provider_uuid = $6
         WHERE id = $7 AND cost IS NULL",
    )
    .bind(tariff_id)
    .bind(uuid)
    .bind(body)
    .bind(version)
    .bind(zone)
    .bind(provider)
    .bind(id)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// A tariff's id, uuid, body and version, the site's time zone and the provider's uuid.
type ChosenTariff = (
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
);

/// When cms first heard of the transaction: which version of a tariff it takes.
async fn created_at_of(db: &mut AnyConnection, id: i64) -> Result<String> {
    Ok(
        sqlx::query_scalar("SELECT created_at FROM transactions WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *db)
            .await?,
    )
}
