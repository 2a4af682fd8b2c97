//! What a priced transaction's cost is computed from: its energy register over time and when
//! the car stood parked (docs/tariffs.md). Only transactions that took a tariff keep readings,
//! so an unpriced fleet writes nothing more than before.

use crate::{EnergyReading, Result, Store};
use sqlx::AnyConnection;

/// The connector's newest open transaction that had started by `at` (a reading is kept only
/// when that one is priced: an older one whose stop was lost must not take a newer one's).
const OPEN: &str =
    "(SELECT t.id, t.tariff FROM transactions t JOIN chargers c ON c.id = t.charger_id
     WHERE c.identity = $1 AND t.connector_id = $2 AND t.stopped_at IS NULL
       AND t.started_at <= $3
     ORDER BY t.started_at DESC LIMIT 1)";

/// Keeps the energy register of a reading for the connector's priced transaction.
pub(crate) async fn keep_energy(
    db: &mut AnyConnection,
    identity: &str,
    connector_id: i64,
    energy: &EnergyReading,
) -> Result<()> {
    keep(
        db,
        identity,
        connector_id,
        &energy.at,
        "energy_wh",
        energy.wh,
    )
    .await
}

/// The statuses in which a car stands at the connector without charging (OCPI's parking time,
/// when it draws little or no power).
pub const PARKING_STATUSES: [&str; 2] = ["SuspendedEV", "Finishing"];

/// Keeps a connector's status change for its priced transaction: parking starts or ends.
pub(crate) async fn keep_status(
    db: &mut AnyConnection,
    identity: &str,
    connector_id: i64,
    status: &str,
    at: &str,
) -> Result<()> {
    let parking = i64::from(PARKING_STATUSES.contains(&status));
    keep(db, identity, connector_id, at, "parking", parking).await
}

/// Sets `column` (`energy_wh` or `parking`) of the connector's priced transaction's row at `at`.
async fn keep(
    db: &mut AnyConnection,
    identity: &str,
    connector_id: i64,
    at: &str,
    column: &'static str,
    value: i64,
) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO transaction_readings (transaction_id, at, {column})
         SELECT id, $3, $4 FROM {OPEN} tx WHERE tx.tariff IS NOT NULL
         ON CONFLICT (transaction_id, at) DO UPDATE SET {column} = excluded.{column}"
    ))
    .bind(identity)
    .bind(connector_id)
    .bind(at)
    .bind(value)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// One kept reading: the energy register (Wh) or a parking change, at a record time.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TransactionReading {
    pub transaction_id: i64,
    pub at: String,
    pub energy_wh: Option<i64>,
    /// 1 from here on the car stands parked, 0 it charges again.
    pub parking: Option<i64>,
}

impl Store {
    /// The kept readings of these transactions, by transaction, oldest first.
    pub async fn transaction_readings(&self, ids: &[i64]) -> Result<Vec<TransactionReading>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // Ids are integers the store gave: written into the statement, they cannot inject.
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        Ok(sqlx::query_as(&format!(
            "SELECT transaction_id, at, energy_wh, parking FROM transaction_readings
             WHERE transaction_id IN ({list}) ORDER BY transaction_id, at"
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
