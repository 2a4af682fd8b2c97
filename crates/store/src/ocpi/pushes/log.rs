//! A provider's pushes as its team's operators see them: what went where, and what came of it
//! (never the body, which may carry a driver's token).

use crate::{Result, Store};

/// A push as the outbox's log shows it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PushRecord {
    pub object_key: String,
    pub module: String,
    pub method: String,
    pub path: String,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    pub attempts: i64,
    /// When it is tried next (pending ones only).
    pub next_attempt_at: Option<String>,
    pub last_error: Option<String>,
    pub created_at: String,
    pub delivered_at: Option<String>,
}

impl Store {
    /// A page of the provider's pushes, newest first, and how many it has.
    pub async fn ocpi_pushes_of_provider(
        &self,
        provider_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<PushRecord>, i64)> {
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM ocpi_pushes WHERE provider_id = $1")
                .bind(provider_id)
                .fetch_one(self.db())
                .await?;
        let page = sqlx::query_as(
            "SELECT object_key, module, method, path, state, attempts,
                    CASE WHEN state = 'pending' THEN next_attempt_at END AS next_attempt_at,
                    last_error, created_at, delivered_at
             FROM ocpi_pushes WHERE provider_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3",
        )
        .bind(provider_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((page, total))
    }
}
