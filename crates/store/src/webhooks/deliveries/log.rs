//! A webhook's delivery log, and redelivering one of its deliveries.

use super::Attempt;
use crate::{Result, Store, parameters};
use sqlx::Row;

/// A delivery as its webhook's log shows it, with its attempts, oldest first.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeliveryRecord {
    pub uuid: String,
    pub event_id: String,
    pub event_type: String,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    pub attempts: i64,
    /// When it is tried next (pending ones only).
    pub next_attempt_at: Option<String>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub delivered_at: Option<String>,
    pub created_at: String,
    pub attempt_log: Vec<Attempt>,
}

/// The log's attempts, for the API's answer.
pub type AttemptRecord = Attempt;

impl Store {
    /// A page of the deliveries of the team's webhook `webhook_uuid`, newest first, and how
    /// many it has; `None` when the team has no such webhook.
    pub async fn webhook_deliveries(
        &self,
        team_id: i64,
        webhook_uuid: &str,
        limit: i64,
        offset: i64,
    ) -> Result<Option<(Vec<DeliveryRecord>, i64)>> {
        let Some(webhook_id) = self.team_webhook_id(team_id, webhook_uuid).await? else {
            return Ok(None);
        };
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = $1")
                .bind(webhook_id)
                .fetch_one(self.db())
                .await?;
        let rows = sqlx::query(
            "SELECT d.id, d.uuid, e.event_id, e.type, d.state, d.attempts, d.next_attempt_at,
                    d.last_status, d.last_error, d.delivered_at, d.created_at
             FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
             WHERE d.webhook_id = $1 ORDER BY d.id DESC LIMIT $2 OFFSET $3",
        )
        .bind(webhook_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        let ids: Vec<i64> = rows
            .iter()
            .map(|row| row.try_get("id"))
            .collect::<Result<_, _>>()?;
        let mut attempts: Vec<(i64, Attempt)> = Vec::new();
        if !ids.is_empty() {
            let sql = format!(
                "SELECT delivery_id, attempted_at, status_code, latency_ms, error
                 FROM webhook_attempts WHERE delivery_id IN ({}) ORDER BY id",
                parameters(1, ids.len())
            );
            let mut query = sqlx::query(&sql);
            for id in &ids {
                query = query.bind(*id);
            }
            for row in query.fetch_all(self.db()).await? {
                attempts.push((
                    row.try_get("delivery_id")?,
                    Attempt {
                        attempted_at: row.try_get("attempted_at")?,
                        status_code: row.try_get("status_code")?,
                        latency_ms: row.try_get("latency_ms")?,
                        error: row.try_get("error")?,
                    },
                ));
            }
        }
        let page = rows
            .iter()
            .map(|row| {
                let id: i64 = row.try_get("id")?;
                let state: String = row.try_get("state")?;
                Ok(DeliveryRecord {
                    uuid: row.try_get("uuid")?,
                    event_id: row.try_get("event_id")?,
                    event_type: row.try_get("type")?,
                    next_attempt_at: if state == "pending" {
                        row.try_get("next_attempt_at")?
                    } else {
                        None
                    },
                    state,
                    attempts: row.try_get("attempts")?,
                    last_status: row.try_get("last_status")?,
                    last_error: row.try_get("last_error")?,
                    delivered_at: row.try_get("delivered_at")?,
                    created_at: row.try_get("created_at")?,
                    attempt_log: attempts
                        .iter()
                        .filter(|(of, _)| *of == id)
                        .map(|(_, attempt)| attempt.clone())
                        .collect(),
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok(Some((page, total)))
    }

    /// Puts the delivery `delivery_uuid` of the team's webhook `webhook_uuid` back to pending,
    /// due at `now`, with the same body and event id (a failed or delivered one too); whether
    /// there was such a delivery. A failed one gets one more attempt before failing again.
    pub async fn redeliver_webhook_delivery(
        &self,
        team_id: i64,
        webhook_uuid: &str,
        delivery_uuid: &str,
        now: &str,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $1,
               delivered_at = NULL
             WHERE uuid = $2 AND webhook_id IN (
               SELECT id FROM webhooks WHERE team_id = $3 AND uuid = $4)",
        )
        .bind(now)
        .bind(delivery_uuid)
        .bind(team_id)
        .bind(webhook_uuid)
        .execute(self.db())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn team_webhook_id(&self, team_id: i64, webhook_uuid: &str) -> Result<Option<i64>> {
        Ok(
            sqlx::query_scalar("SELECT id FROM webhooks WHERE team_id = $1 AND uuid = $2")
                .bind(team_id)
                .bind(webhook_uuid)
                .fetch_optional(self.db())
                .await?,
        )
    }
}
