//! The outbox of what cms pushes to its OCPI parties: written in the transaction of the change
//! it tells, sent by the OCPI dispatcher (cms-roaming), in order per (provider, object).

mod log;
mod sending;

pub use log::PushRecord;
pub use sending::{DuePush, PushAttempt, PushOutcome};

use crate::Result;
use crate::time::now_record_time;
use sqlx::AnyConnection;

/// A push on its way into the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPush {
    pub provider_id: i64,
    /// What orders it, e.g. `location:{site uuid}`, `session:{transaction id}`.
    pub object_key: String,
    /// The party's module (`locations`, `sessions`, `cdrs`, `tariffs`), or `url` when `path`
    /// is a whole address.
    pub module: String,
    /// `PUT`, `PATCH`, `POST` or `DELETE`.
    pub method: String,
    /// After the module's URL, or the whole address for `url`.
    pub path: String,
    /// The JSON body, if any.
    pub body: Option<String>,
}

/// Writes `pushes` into the outbox, due now.
pub async fn enqueue(db: &mut AnyConnection, pushes: &[NewPush]) -> Result<()> {
    enqueue_at(db, pushes, &now_record_time()).await
}

/// Writes `pushes` into the outbox, due at `now` (a record time).
pub async fn enqueue_at(db: &mut AnyConnection, pushes: &[NewPush], now: &str) -> Result<()> {
    for push in pushes {
        sqlx::query(
            "INSERT INTO ocpi_pushes (provider_id, object_key, module, method, path, body,
               next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
        )
        .bind(push.provider_id)
        .bind(&push.object_key)
        .bind(&push.module)
        .bind(&push.method)
        .bind(&push.path)
        .bind(&push.body)
        .bind(now)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

impl crate::Store {
    /// Writes `pushes` into the outbox in a transaction of their own.
    pub async fn enqueue_ocpi_pushes(&self, pushes: &[NewPush]) -> Result<()> {
        let mut tx = self.begin_write().await?;
        enqueue(&mut tx, pushes).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// An event of the outbox (webhook_events) as the OCPI dispatcher reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEvent {
    pub seq: i64,
    /// `connector.status_changed`, `transaction.started`, ... (cms_store::webhooks::EVENT_TYPES).
    pub event_type: String,
    /// The charger's identity.
    pub subject: String,
    pub team_id: Option<i64>,
    pub site_id: Option<i64>,
    pub charger_id: Option<i64>,
    /// The event's `data` (docs/events.md).
    pub data: serde_json::Value,
    pub occurred_at: String,
}
