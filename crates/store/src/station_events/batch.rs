//! A batch's 2.0.1 transactions read and written many to a statement: while stations charge,
//! each sends a TransactionEvent a reading, and a batch holds one or a few of each of
//! thousands of transactions (a station waits for its answer before its next). One statement
//! for each would be the materialiser's whole cost, as it was for 1.6's readings before
//! `latest_readings` (docs/performance.md, "The materialiser and the store").

use super::StoredTransaction;
use crate::Result;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// Rows per statement: enough to make a statement's round trip small beside its rows, few
/// enough for any database's parameter limit.
const CHUNK: usize = 128;

/// A key, its charger, and its transaction's id, assembly and whether it is priced.
type Found = (
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// Each (identity, station transaction id)'s charger and transaction, in as few statements as
/// fit; a key whose charger is not registered (removed meanwhile) is absent.
pub(crate) async fn lookup(
    db: &mut AnyConnection,
    keys: &[(&str, &str)],
) -> Result<HashMap<(String, String), StoredTransaction>> {
    let mut found = HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(CHUNK) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
            .collect();
        let sql = format!(
            "WITH k(identity, tx) AS (VALUES {})
             SELECT k.identity, k.tx, c.id, t.id, t.assembly,
               CASE WHEN t.id IS NULL THEN NULL WHEN t.tariff IS NULL THEN 0 ELSE 1 END
             FROM k JOIN chargers c ON c.identity = k.identity
             LEFT JOIN transactions t
               ON t.charger_id = c.id AND t.station_transaction_id = k.tx",
            values.join(", ")
        );
        let mut query = sqlx::query_as(&sql);
        for (identity, tx) in chunk {
            query = query.bind(*identity).bind(*tx);
        }
        let rows: Vec<Found> = query.fetch_all(&mut *db).await?;
        for (identity, tx, charger, id, assembly, priced) in rows {
            found.insert((identity, tx), (charger, id, assembly, priced));
        }
    }
    Ok(found)
}

/// A transaction whose assembly alone moved.
pub(crate) struct Assembly<'a> {
    pub id: i64,
    pub assembly: String,
    /// When the gateway received its newest event.
    pub at: &'a str,
}

/// Writes the assemblies, many to a statement.
pub(crate) async fn write_assemblies(db: &mut AnyConnection, rows: &[Assembly<'_>]) -> Result<()> {
    for chunk in rows.chunks(CHUNK) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                let n = 3 * i;
                format!("(CAST(${} AS BIGINT), ${}, ${})", n + 1, n + 2, n + 3)
            })
            .collect();
        let sql = format!(
            "WITH v(id, assembly, at) AS (VALUES {})
             UPDATE transactions SET assembly = v.assembly, updated_at = v.at
             FROM v WHERE transactions.id = v.id",
            values.join(", ")
        );
        let mut query = sqlx::query(&sql);
        for row in chunk {
            query = query.bind(row.id).bind(&row.assembly).bind(row.at);
        }
        query.execute(&mut *db).await?;
    }
    Ok(())
}
