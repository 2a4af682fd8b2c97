//! A team's transactions across its chargers (the console's sessions list and its CSV export):
//! the chargers of the sites the team owns, and of the sites it was granted with sensitive data
//! (while that grant lasts), as the per-charger list lets the team's members read them. A
//! charger the team sees only without its sensitive data is left out, as that list refuses it.
//!
//! Newest start first; a page by offset, or (for an export of every row) by keyset after the
//! last row read, so that a long export reads each row once.

use super::{COLUMNS, TransactionFilter, TransactionRow, TransactionStatus};
use crate::{Result, Store};
use sqlx::Row;

/// A transaction with the charger it was at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamTransaction {
    pub transaction: TransactionRow,
    pub charger_uuid: String,
    pub charger_identity: String,
    pub charger_reference: Option<String>,
}

/// Where the previous batch of an export ended: its last row's start and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After {
    pub started_at: String,
    pub id: i64,
}

/// The chargers whose sensitive data team `$1` reads at record time `$2`.
const TEAM_CHARGERS: &str = "
    SELECT charger_id FROM (
        SELECT c.id AS charger_id, 1 AS sensitive
        FROM chargers c JOIN sites s ON s.id = c.site_id WHERE s.team_id = $1
        UNION ALL
        SELECT c.id,
            CASE WHEN a.sensitive_data = 1 AND (a.sensitive_data_expires_at IS NULL
                OR a.sensitive_data_expires_at > $2) THEN 1 ELSE 0 END
        FROM site_access a JOIN chargers c ON c.site_id = a.site_id
        WHERE a.team_id = $1 AND (a.can_access_all_assets = 1 OR EXISTS (
            SELECT 1 FROM site_access_assets x
            WHERE x.site_access_id = a.id AND x.charger_id = c.id))
    ) team_charger_paths GROUP BY charger_id HAVING MAX(sensitive) = 1";

/// The conditions of a team's listing; parameters `$1` to `$7`.
fn conditions() -> String {
    format!(
        "t.charger_id IN ({TEAM_CHARGERS})
           AND ($3 IS NULL OR (CASE WHEN t.stopped_at IS NULL THEN 0 ELSE 1 END) = $3)
           AND ($4 IS NULL OR c.uuid = $4)
           AND ($5 IS NULL OR t.started_at >= $5)
           AND ($6 IS NULL OR t.started_at < $6)
           AND ($7 IS NULL OR LOWER(t.id_tag) = LOWER($7))"
    )
}

fn qualified_columns() -> String {
    COLUMNS
        .split(',')
        .map(|column| format!("t.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Store {
    /// A page (`limit` rows after `offset`) of team `team_id`'s transactions that pass `filter`
    /// (and, when given, are at the charger `charger_uuid`), and how many pass in all.
    pub async fn team_transactions(
        &self,
        team_id: i64,
        filter: &TransactionFilter,
        charger_uuid: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<TeamTransaction>, i64)> {
        let now = crate::now_record_time();
        let stopped = stopped(filter);
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM transactions t JOIN chargers c ON c.id = t.charger_id
             WHERE {}",
            conditions()
        ))
        .bind(team_id)
        .bind(&now)
        .bind(stopped)
        .bind(charger_uuid)
        .bind(filter.started_after.as_deref())
        .bind(filter.started_before.as_deref())
        .bind(filter.id_tag.as_deref())
        .fetch_one(self.db())
        .await?;
        let rows = sqlx::query(&format!(
            "SELECT {}, c.uuid AS charger_uuid, c.identity AS charger_identity,
                    c.reference AS charger_reference
             FROM transactions t JOIN chargers c ON c.id = t.charger_id
             WHERE {}
             ORDER BY t.started_at DESC, t.id DESC LIMIT $8 OFFSET $9",
            qualified_columns(),
            conditions()
        ))
        .bind(team_id)
        .bind(&now)
        .bind(stopped)
        .bind(charger_uuid)
        .bind(filter.started_after.as_deref())
        .bind(filter.started_before.as_deref())
        .bind(filter.id_tag.as_deref())
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((
            rows.iter().map(team_transaction).collect::<Result<_>>()?,
            total,
        ))
    }

    /// Up to `limit` of the team's transactions that pass `filter`, from just after `after`
    /// (newest first): an export's next batch.
    pub async fn team_transactions_after(
        &self,
        team_id: i64,
        filter: &TransactionFilter,
        charger_uuid: Option<&str>,
        after: Option<&After>,
        limit: i64,
    ) -> Result<Vec<TeamTransaction>> {
        let rows = sqlx::query(&format!(
            "SELECT {}, c.uuid AS charger_uuid, c.identity AS charger_identity,
                    c.reference AS charger_reference
             FROM transactions t JOIN chargers c ON c.id = t.charger_id
             WHERE {}
               AND ($8 IS NULL OR t.started_at < $8 OR (t.started_at = $8 AND t.id < $9))
             ORDER BY t.started_at DESC, t.id DESC LIMIT $10",
            qualified_columns(),
            conditions()
        ))
        .bind(team_id)
        .bind(crate::now_record_time())
        .bind(stopped(filter))
        .bind(charger_uuid)
        .bind(filter.started_after.as_deref())
        .bind(filter.started_before.as_deref())
        .bind(filter.id_tag.as_deref())
        .bind(after.map(|a| a.started_at.as_str()))
        .bind(after.map(|a| a.id))
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        rows.iter().map(team_transaction).collect()
    }
}

fn stopped(filter: &TransactionFilter) -> Option<i64> {
    filter.status.map(|s| match s {
        TransactionStatus::Active => 0_i64,
        TransactionStatus::Stopped => 1,
    })
}

fn team_transaction(row: &sqlx::any::AnyRow) -> Result<TeamTransaction> {
    Ok(TeamTransaction {
        transaction: sqlx::FromRow::from_row(row)?,
        charger_uuid: row.try_get("charger_uuid")?,
        charger_identity: row.try_get("charger_identity")?,
        charger_reference: row.try_get("charger_reference")?,
    })
}
