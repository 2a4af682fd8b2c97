//! The OCPI dispatcher's lease and its cursor over the events outbox (`webhook_events`), as
//! the webhook dispatcher's (crate::webhooks::deliveries): one API replica at a time holds the
//! lease on the `ocpi_dispatcher` row, and every write that decides what is sent (the pushes
//! an event makes with the cursor moved past it, an attempt's outcome) is fenced on still
//! holding it. Events are read by the webhooks' `settled` rule, so a charger's events are
//! turned into pushes in the order cms received what they tell.
//!
//! The translation of events into pushes reads the store and lives in cms-roaming, so the
//! read and the write are two steps: [`Store::ocpi_events_past_cursor`] reads, and
//! [`Store::ocpi_fan_out`] writes the pushes and moves the cursor only if it is still where it
//! was read. A crash between the two leaves the cursor where it was (the events are read again:
//! replayed, not lost); a second writer of the same events finds the cursor moved and writes
//! nothing (not duplicated).

use super::pushes::{NewPush, OutboxEvent, enqueue_at};
use crate::lease::LeaseTable;
use crate::{Result, Store};
use sqlx::Row;

/// The settled events past the cursor, for translation.
#[derive(Debug, Clone, PartialEq)]
pub struct PastCursor {
    /// Where the cursor was when they were read: [`Store::ocpi_fan_out`] is fenced on it.
    pub cursor: i64,
    /// The events, in the order cms received what they tell.
    pub events: Vec<OutboxEvent>,
    /// Where the cursor moves once their pushes are written (the highest `seq` among them; the
    /// cursor itself when there are none).
    pub last: i64,
    /// How many events past the cursor were read (settled or not): as many as asked for means
    /// there may be more.
    pub read: usize,
}

impl Store {
    /// Takes the OCPI dispatcher's lease for `holder` until `until` when it is free, run out at
    /// `now`, or already `holder`'s (a renewal). Whether `holder` holds it now.
    pub async fn take_ocpi_lease(&self, holder: &str, now: &str, until: &str) -> Result<bool> {
        self.take_lease(LeaseTable::Ocpi, holder, now, until).await
    }

    /// Lets go of the lease if `holder` has it (at shutdown): another replica takes it at once.
    pub async fn release_ocpi_lease(&self, holder: &str) -> Result<()> {
        self.release_lease(LeaseTable::Ocpi, holder).await
    }

    /// Up to `limit` events past the cursor, those of them settled at `now`; `None` when
    /// `holder` does not hold the lease at `now`.
    pub async fn ocpi_events_past_cursor(
        &self,
        holder: &str,
        now: &str,
        limit: i64,
    ) -> Result<Option<PastCursor>> {
        let cursor: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT last_seq FROM ocpi_dispatcher WHERE {}",
            lease_held(1)
        ))
        .bind(holder)
        .bind(now)
        .fetch_optional(self.db())
        .await?;
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let rows = sqlx::query(
            "SELECT seq, type, subject, team_id, site_id, charger_id, data, occurred_at,
                    received_at, ready, created_at
             FROM webhook_events WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(cursor)
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        let read = rows.len();
        let events = crate::webhooks::deliveries::settled(rows, now)?
            .iter()
            .map(|row| {
                Ok(OutboxEvent {
                    seq: row.try_get("seq")?,
                    event_type: row.try_get("type")?,
                    subject: row.try_get("subject")?,
                    team_id: row.try_get("team_id")?,
                    site_id: row.try_get("site_id")?,
                    charger_id: row.try_get("charger_id")?,
                    data: serde_json::from_str(&row.try_get::<String, _>("data")?)
                        .unwrap_or(serde_json::Value::Null),
                    occurred_at: row.try_get("occurred_at")?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        let last = events.iter().map(|e| e.seq).max().unwrap_or(cursor);
        Ok(Some(PastCursor {
            cursor,
            events,
            last,
            read,
        }))
    }

    /// Writes the pushes the events of `read` made and moves the cursor past them, in one
    /// transaction, if `holder` holds the lease at `now` and the cursor is still at
    /// `read.cursor`; whether it did.
    pub async fn ocpi_fan_out(
        &self,
        holder: &str,
        now: &str,
        read: &PastCursor,
        pushes: &[NewPush],
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let moved = sqlx::query(&format!(
            "UPDATE ocpi_dispatcher SET last_seq = $1 WHERE last_seq = $2 AND {}",
            lease_held(3)
        ))
        .bind(read.last)
        .bind(read.cursor)
        .bind(holder)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Ok(false);
        }
        enqueue_at(&mut tx, pushes, now).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Writes `pushes` (the running sessions' updates), due at `now`, if `holder` holds the
    /// lease at `now`; whether it did.
    pub async fn ocpi_enqueue_holding(
        &self,
        holder: &str,
        now: &str,
        pushes: &[NewPush],
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let held: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT 1 FROM ocpi_dispatcher WHERE {}",
            lease_held(1)
        ))
        .bind(holder)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        if held.is_none() {
            return Ok(false);
        }
        enqueue_at(&mut tx, pushes, now).await?;
        tx.commit().await?;
        Ok(true)
    }
}

/// The fence on a write of the dispatcher, a condition on the `ocpi_dispatcher` row: `$n` the
/// holder, `$n+1` the current time.
pub(crate) fn lease_held(n: usize) -> String {
    format!("id = 1 AND holder = ${n} AND lease_until >= ${}", n + 1)
}

#[cfg(test)]
mod tests;
