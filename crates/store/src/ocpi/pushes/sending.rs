//! What the OCPI dispatcher sends next, and what came of an attempt.

use crate::ocpi::dispatcher::lease_held;
use crate::{Result, Store};

/// A push due to be attempted: the oldest pending one of its (provider, object).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DuePush {
    pub id: i64,
    pub provider_id: i64,
    pub object_key: String,
    pub module: String,
    pub method: String,
    pub path: String,
    pub body: Option<String>,
    /// Attempts made before this one.
    pub attempts: i64,
    pub created_at: String,
    /// The CPO identity of the provider's team (its `ocpi_cpo` row), `None` when it has none.
    pub cpo_country_code: Option<String>,
    pub cpo_party_id: Option<String>,
}

/// What an attempt leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushOutcome {
    /// Taken (HTTP 2xx and an OCPI 1xxx): done.
    Delivered,
    /// Tried again at this record time.
    Retry { at: String },
    /// The last retry failed, or the push cannot be sent at all: kept as failed, and the next
    /// push of its object may go.
    Failed,
}

/// An attempt that ended, to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushAttempt {
    pub push_id: i64,
    pub outcome: PushOutcome,
    /// What went wrong (`None` when delivered).
    pub error: Option<String>,
}

impl Store {
    /// Up to `limit` pushes due at `now`, each the oldest pending one of its (provider,
    /// object), the longest due first.
    pub async fn due_ocpi_pushes(&self, now: &str, limit: i64) -> Result<Vec<DuePush>> {
        Ok(sqlx::query_as(
            "SELECT p.id, p.provider_id, p.object_key, p.module, p.method, p.path, p.body,
                    p.attempts, p.created_at, c.country_code AS cpo_country_code,
                    c.party_id AS cpo_party_id
             FROM ocpi_pushes p
             JOIN providers pr ON pr.id = p.provider_id
             LEFT JOIN ocpi_cpo c ON c.team_id = pr.team_id
             WHERE p.state = 'pending' AND p.next_attempt_at <= $1
               AND NOT EXISTS (
                 SELECT 1 FROM ocpi_pushes o
                 WHERE o.provider_id = p.provider_id AND o.object_key = p.object_key
                   AND o.state = 'pending' AND o.id < p.id)
             ORDER BY p.next_attempt_at, p.id LIMIT $2",
        )
        .bind(now)
        .bind(limit)
        .fetch_all(self.db())
        .await?)
    }

    /// Records the attempts that ended, at `now`, in one transaction, if `holder` still holds
    /// the lease; whether it did (a dispatcher that lost the lease writes nothing: the new
    /// holder sends those pushes again, at least once). A push no longer pending is left as
    /// it is.
    pub async fn record_ocpi_push_attempts(
        &self,
        holder: &str,
        now: &str,
        attempts: &[PushAttempt],
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
        for attempt in attempts {
            let (state, next_attempt_at, delivered_at) = match &attempt.outcome {
                PushOutcome::Delivered => ("delivered", now, Some(now)),
                PushOutcome::Retry { at } => ("pending", at.as_str(), None),
                PushOutcome::Failed => ("failed", now, None),
            };
            sqlx::query(
                "UPDATE ocpi_pushes SET state = $1, attempts = attempts + 1,
                   next_attempt_at = $2, delivered_at = $3, last_error = $4
                 WHERE id = $5 AND state = 'pending'",
            )
            .bind(state)
            .bind(next_attempt_at)
            .bind(delivered_at)
            .bind(&attempt.error)
            .bind(attempt.push_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// How many pushes are pending: the dispatcher's gauge.
    pub async fn ocpi_pushes_pending(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM ocpi_pushes WHERE state = 'pending'")
                .fetch_one(self.db())
                .await?,
        )
    }
}
