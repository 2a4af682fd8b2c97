//! What a priced transaction's cost is computed from: its energy register over time and when
//! the car stood parked (docs/tariffs.md). Only transactions that took a tariff keep readings,
//! so an unpriced fleet writes nothing more than before.
//!
//! A transaction keeps one row per minute of the readings' own clock, whatever order and
//! number they come in: the minute's earliest energy register reading (the register is
//! cumulative, so the energy billed is exact whatever the spacing, and a minute's start is where
//! a tariff's times of day fall) and its last status change (the parking state from then on).
//! Nor is a reading more than [`KEPT_DAYS`] after its transaction's start kept: so a
//! transaction holds at most `KEPT_DAYS × 1,440` rows, and pricing it is bounded work.

use crate::{EnergyReading, Result, Store};
use chrono::{DateTime, TimeDelta, Utc};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

#[cfg(test)]
mod tests;

/// How long after its start a transaction keeps readings: a day past the longest session
/// priced (`cms_tariffs::MAX_SESSION_DAYS`, 31), which is started and ended on whole days.
pub const KEPT_DAYS: i64 = 32;

/// The connector's newest open transaction that had started by `$3`, and less than
/// [`KEPT_DAYS`] before (after `$4`). A reading is kept only when that one is priced: an older
/// one whose stop was lost must not take a newer one's.
const OPEN: &str =
    "(SELECT t.id, t.tariff FROM transactions t JOIN chargers c ON c.id = t.charger_id
     WHERE c.identity = $1 AND t.connector_id = $2 AND t.stopped_at IS NULL
       AND t.started_at <= $3 AND t.started_at > $4
     ORDER BY t.started_at DESC LIMIT 1)";

/// Energy readings on their way to the store. Of a run of them (no other change between, so
/// none starts or stops a transaction) only each connector's minute's earliest can be kept,
/// so only that one is written: a batch of a charger's thousands makes a statement a minute.
#[derive(Default)]
pub(crate) struct EarliestEnergy<'a> {
    earliest: BTreeMap<(&'a str, i64, &'a str), &'a EnergyReading>,
}

impl<'a> EarliestEnergy<'a> {
    pub fn push(&mut self, identity: &'a str, connector_id: i64, energy: &'a EnergyReading) {
        // Record times are fixed-width: text order is time order.
        self.earliest
            .entry((identity, connector_id, minute(&energy.at)))
            .and_modify(|kept| {
                if energy.at < kept.at {
                    *kept = energy;
                }
            })
            .or_insert(energy);
    }

    /// Keeps each pending reading that is its minute's earliest.
    pub async fn flush(&mut self, db: &mut AnyConnection) -> Result<()> {
        for ((identity, connector_id, _), energy) in std::mem::take(&mut self.earliest) {
            keep_energy(db, identity, connector_id, energy).await?;
        }
        Ok(())
    }
}

/// Keeps the energy register of a reading for the connector's priced transaction, when it is
/// the earliest of its minute.
async fn keep_energy(
    db: &mut AnyConnection,
    identity: &str,
    connector_id: i64,
    energy: &EnergyReading,
) -> Result<()> {
    let Some((minute, since)) = minute_of(&energy.at) else {
        return Ok(());
    };
    sqlx::query(&format!(
        "INSERT INTO transaction_minutes (transaction_id, minute, energy_at, energy_wh)
         SELECT id, $5, $3, $6 FROM {OPEN} tx WHERE tx.tariff IS NOT NULL
         ON CONFLICT (transaction_id, minute) DO UPDATE
           SET energy_at = excluded.energy_at, energy_wh = excluded.energy_wh
           WHERE transaction_minutes.energy_at IS NULL
              OR excluded.energy_at < transaction_minutes.energy_at"
    ))
    .bind(identity)
    .bind(connector_id)
    .bind(&energy.at)
    .bind(since)
    .bind(minute)
    .bind(energy.wh)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// Keeps an energy register reading for transaction `id` itself, when it is priced, the
/// reading is of its first [`KEPT_DAYS`] and the earliest of its minute: a 2.0.1
/// TransactionEvent names its transaction, which may have stopped already when an event sent
/// offline arrives.
pub(crate) async fn keep_energy_of(
    db: &mut AnyConnection,
    id: i64,
    energy: &EnergyReading,
) -> Result<()> {
    let Some((minute, since)) = minute_of(&energy.at) else {
        return Ok(());
    };
    sqlx::query(
        "INSERT INTO transaction_minutes (transaction_id, minute, energy_at, energy_wh)
         SELECT id, $2, $3, $4 FROM transactions
         WHERE id = $1 AND tariff IS NOT NULL AND started_at <= $3 AND started_at > $5
         ON CONFLICT (transaction_id, minute) DO UPDATE
           SET energy_at = excluded.energy_at, energy_wh = excluded.energy_wh
           WHERE transaction_minutes.energy_at IS NULL
              OR excluded.energy_at < transaction_minutes.energy_at",
    )
    .bind(id)
    .bind(minute)
    .bind(&energy.at)
    .bind(energy.wh)
    .bind(since)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// The statuses in which a car stands at the connector without charging (OCPI's parking time,
/// when it draws little or no power).
pub const PARKING_STATUSES: [&str; 2] = ["SuspendedEV", "Finishing"];

/// Keeps a connector's status change for its priced transaction (parking starts or ends), when
/// it is the last of its minute.
pub(crate) async fn keep_status(
    db: &mut AnyConnection,
    identity: &str,
    connector_id: i64,
    status: &str,
    at: &str,
) -> Result<()> {
    let Some((minute, since)) = minute_of(at) else {
        return Ok(());
    };
    let parking = i64::from(PARKING_STATUSES.contains(&status));
    // Of two changes at the same instant, the later reported wins.
    sqlx::query(&format!(
        "INSERT INTO transaction_minutes (transaction_id, minute, parking_at, parking)
         SELECT id, $5, $3, $6 FROM {OPEN} tx WHERE tx.tariff IS NOT NULL
         ON CONFLICT (transaction_id, minute) DO UPDATE
           SET parking_at = excluded.parking_at, parking = excluded.parking
           WHERE transaction_minutes.parking_at IS NULL
              OR excluded.parking_at >= transaction_minutes.parking_at"
    ))
    .bind(identity)
    .bind(connector_id)
    .bind(at)
    .bind(since)
    .bind(minute)
    .bind(parking)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// The minute of a record time, the unit readings are kept by for pricing: `2026-11-21T10:05`
/// of `2026-11-21T10:05:30.000000Z` (record times are fixed-width).
pub fn minute(at: &str) -> &str {
    at.get(..16).unwrap_or(at)
}

/// The minute of a record time ([`minute`]), and the earliest start of a transaction that keeps
/// a reading of then ([`KEPT_DAYS`] before); `None` for a time that does not read.
fn minute_of(at: &str) -> Option<(&str, String)> {
    let t: DateTime<Utc> = DateTime::parse_from_rfc3339(at).ok()?.into();
    let since = crate::format_record_time(t.checked_sub_signed(TimeDelta::days(KEPT_DAYS))?);
    Some((at.get(..16)?, since))
}

/// A minute of a priced transaction: its earliest energy register reading and its last status
/// change, each at its own record time.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TransactionReading {
    pub transaction_id: i64,
    /// `2026-02-10T09:05`.
    pub minute: String,
    pub energy_at: Option<String>,
    /// Wh.
    pub energy_wh: Option<i64>,
    pub parking_at: Option<String>,
    /// 1 from `parking_at` on the car stands parked, 0 it charges again.
    pub parking: Option<i64>,
}

impl Store {
    /// The kept minutes of these transactions, by transaction, oldest first.
    pub async fn transaction_readings(&self, ids: &[i64]) -> Result<Vec<TransactionReading>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // Ids are integers the store gave: written into the statement, they cannot inject.
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        Ok(sqlx::query_as(&format!(
            "SELECT transaction_id, minute, energy_at, energy_wh, parking_at, parking
             FROM transaction_minutes WHERE transaction_id IN ({list})
             ORDER BY transaction_id, minute"
        ))
        .fetch_all(self.db())
        .await?)
    }

    /// Writes a stopped transaction's final cost (JSON), once.
    pub async fn set_transaction_cost(&self, transaction_id: i64, cost: &str) -> Result<()> {
        sqlx::query("UPDATE transactions SET cost = $1 WHERE id = $2 AND cost IS NULL")
            .bind(cost)
            .bind(transaction_id)
            .execute(self.db())
            .await?;
        Ok(())
    }
}
