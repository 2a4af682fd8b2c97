//! What the dispatcher sends next, and what came of an attempt.

use super::lease_held;
use crate::{Result, Store};
use sqlx::Row;

/// A delivery due to be attempted: the oldest pending one of its (webhook, subject).
#[derive(Debug, Clone, PartialEq)]
pub struct DueDelivery {
    pub id: i64,
    pub uuid: String,
    pub webhook_id: i64,
    pub subject: String,
    pub url: String,
    /// The secrets to sign with, the current one first, then the previous one while a
    /// rotation's grace lasts.
    pub secrets: Vec<String>,
    /// The event's id: the `webhook-id` header, the same on every attempt.
    pub event_id: String,
    pub body: String,
    /// Attempts made before this one.
    pub attempts: i64,
}

/// One attempt, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Attempt {
    pub attempted_at: String,
    /// The receiver's status, `None` when it gave none (time-out, refused connection).
    pub status_code: Option<i64>,
    pub latency_ms: i64,
    /// What went wrong, or the start of the receiver's answer to a failure.
    pub error: Option<String>,
}

/// What an attempt leads to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A 2xx: done, and the webhook no longer failing.
    Delivered,
    /// Tried again at this record time.
    Retry { at: String },
    /// The last retry failed: kept as failed, the webhook failing since now (if not before).
    Failed,
    /// A 410: the webhook is disabled (`gone`); the delivery stays pending, due at once should
    /// the team enable it again.
    Gone,
}

impl Store {
    /// Up to `limit` deliveries due at `now`, each the oldest pending one of its (webhook,
    /// subject), of enabled webhooks, the longest due first.
    pub async fn due_webhook_deliveries(&self, now: &str, limit: i64) -> Result<Vec<DueDelivery>> {
        let rows = sqlx::query(
            "SELECT d.id, d.uuid, d.webhook_id, d.subject, d.body, d.attempts, w.url, w.secret,
                    CASE WHEN w.previous_secret_until > $1 THEN w.previous_secret END
                      AS previous_secret,
                    e.event_id
             FROM webhook_deliveries d
             JOIN webhooks w ON w.id = d.webhook_id
             JOIN webhook_events e ON e.seq = d.event_seq
             WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND w.enabled = 1
               AND NOT EXISTS (
                 SELECT 1 FROM webhook_deliveries o
                 WHERE o.webhook_id = d.webhook_id AND o.subject = d.subject
                   AND o.state = 'pending' AND o.id < d.id)
             ORDER BY d.next_attempt_at, d.id LIMIT $2",
        )
        .bind(now)
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|row| {
                let mut secrets = vec![row.try_get::<String, _>("secret")?];
                secrets.extend(row.try_get::<Option<String>, _>("previous_secret")?);
                Ok(DueDelivery {
                    id: row.try_get("id")?,
                    uuid: row.try_get("uuid")?,
                    webhook_id: row.try_get("webhook_id")?,
                    subject: row.try_get("subject")?,
                    url: row.try_get("url")?,
                    secrets,
                    event_id: row.try_get("event_id")?,
                    body: row.try_get("body")?,
                    attempts: row.try_get("attempts")?,
                })
            })
            .collect()
    }

    /// Records an attempt of a pending delivery and what it leads to, at `now`, if `holder`
    /// still holds the lease; whether it did (a dispatcher that lost the lease writes nothing:
    /// the new holder sends the delivery again, at least once).
    pub async fn record_webhook_attempt(
        &self,
        holder: &str,
        now: &str,
        delivery_id: i64,
        attempt: &Attempt,
        outcome: &Outcome,
    ) -> Result<bool> {
        let one = [(delivery_id, attempt.clone(), outcome.clone())];
        self.record_webhook_attempts(holder, now, &one).await
    }

    /// [`Store::record_webhook_attempt`] for several attempts, in one transaction: the
    /// dispatcher records together the attempts that ended meanwhile.
    pub async fn record_webhook_attempts(
        &self,
        holder: &str,
        now: &str,
        attempts: &[(i64, Attempt, Outcome)],
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let held: Option<i64> = sqlx::query_scalar(&format!("SELECT 1 WHERE {}", lease_held(1)))
            .bind(holder)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
        if held.is_none() {
            return Ok(false);
        }
        for (delivery_id, attempt, outcome) in attempts {
            record(&mut tx, now, *delivery_id, attempt, outcome).await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}

/// One attempt of a delivery still pending, and what it leads to.
async fn record(
    db: &mut sqlx::AnyConnection,
    now: &str,
    delivery_id: i64,
    attempt: &Attempt,
    outcome: &Outcome,
) -> Result<()> {
    let webhook_id: Option<i64> = sqlx::query_scalar(
        "SELECT webhook_id FROM webhook_deliveries WHERE id = $1 AND state = 'pending'",
    )
    .bind(delivery_id)
    .fetch_optional(&mut *db)
    .await?;
    let Some(webhook_id) = webhook_id else {
        return Ok(());
    };
    sqlx::query(
        "INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(delivery_id)
    .bind(&attempt.attempted_at)
    .bind(attempt.status_code)
    .bind(attempt.latency_ms)
    .bind(&attempt.error)
    .execute(&mut *db)
    .await?;
    let (state, next_attempt_at, delivered_at) = match outcome {
        Outcome::Delivered => ("delivered", now, Some(now)),
        Outcome::Retry { at } => ("pending", at.as_str(), None),
        Outcome::Failed => ("failed", now, None),
        Outcome::Gone => ("pending", now, None),
    };
    sqlx::query(
        "UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1,
           next_attempt_at = $2, delivered_at = $3, last_status = $4, last_error = $5
         WHERE id = $6",
    )
    .bind(state)
    .bind(next_attempt_at)
    .bind(delivered_at)
    .bind(attempt.status_code)
    .bind(&attempt.error)
    .bind(delivery_id)
    .execute(&mut *db)
    .await?;
    let webhook_change = match outcome {
        Outcome::Delivered => Some("failing_since = NULL"),
        Outcome::Failed => Some("failing_since = COALESCE(failing_since, $2)"),
        Outcome::Gone => Some("enabled = 0, disabled_reason = 'gone', updated_at = $2"),
        Outcome::Retry { .. } => None,
    };
    if let Some(change) = webhook_change {
        let sql = format!("UPDATE webhooks SET {change} WHERE id = $1 RETURNING id");
        let query = sqlx::query_scalar::<_, i64>(&sql).bind(webhook_id);
        let query = if change.contains("$2") {
            query.bind(now)
        } else {
            query
        };
        query.fetch_optional(&mut *db).await?;
    }
    Ok(())
}
