//! Teams' subscriptions: where their events go, which events, signed with what.
//!
//! A team has at most [`WEBHOOKS_PER_TEAM`]: counted in the creating transaction, under the
//! write lock on SQLite and a transaction-wide advisory lock of the team on PostgreSQL, so two
//! concurrent creations are counted one after the other (as `quotas`). The secret is kept
//! readable: every delivery is signed with it. After a rotation the previous one keeps signing
//! for [`PREVIOUS_SECRET_HOURS`], so receivers can switch without losing an event.

use crate::team_owned::TeamOwned;
use crate::{Backend, Result, Store, StoreError, format_record_time, now_record_time};
use base64::Engine;

/// How many webhooks one team may have.
pub const WEBHOOKS_PER_TEAM: i64 = 20;

/// How long a rotated-out secret still signs deliveries.
pub const PREVIOUS_SECRET_HOURS: i64 = 24;

/// A subscription as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub id: i64,
    pub uuid: String,
    pub team_id: i64,
    pub url: String,
    pub description: Option<String>,
    /// Names of [`super::EVENT_TYPES`].
    pub event_types: Vec<String>,
    pub enabled: bool,
    /// `whsec_` and the base64 of 32 random bytes (Standard Webhooks).
    pub secret: String,
    /// The secret before the last rotation, signing too until `previous_secret_until`.
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<String>,
    pub failing_since: Option<String>,
    /// Why cms disabled it (`gone`), `None` when it did not.
    pub disabled_reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl Webhook {
    /// The secrets a delivery attempted at `now` (record time) is signed with, newest first.
    pub fn signing_secrets(&self, now: &str) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous_secret, &self.previous_secret_until)
            && until.as_str() > now
        {
            secrets.push(previous);
        }
        secrets
    }
}

/// What a team writes of a webhook (create, and PUT's replacement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookFields {
    pub url: String,
    pub description: Option<String>,
    pub event_types: Vec<String>,
    pub enabled: bool,
}

/// How a creation went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Creation {
    Created(Box<Webhook>),
    /// The team has [`WEBHOOKS_PER_TEAM`] already; nothing was written.
    LimitReached,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    uuid: String,
    team_id: i64,
    url: String,
    description: Option<String>,
    event_types: String,
    enabled: i64,
    secret: String,
    previous_secret: Option<String>,
    previous_secret_until: Option<String>,
    failing_since: Option<String>,
    disabled_reason: Option<String>,
    created_at: String,
    updated_at: String,
}

impl From<Row> for Webhook {
    fn from(r: Row) -> Self {
        Webhook {
            id: r.id,
            uuid: r.uuid,
            team_id: r.team_id,
            url: r.url,
            description: r.description,
            // Written by `create_webhook`/`replace_webhook` only, always an array of strings.
            event_types: serde_json::from_str(&r.event_types).unwrap_or_default(),
            enabled: r.enabled != 0,
            secret: r.secret,
            previous_secret: r.previous_secret,
            previous_secret_until: r.previous_secret_until,
            failing_since: r.failing_since,
            disabled_reason: r.disabled_reason,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// A team's webhooks, oldest first, by uuid.
const WEBHOOKS: TeamOwned = TeamOwned {
    from: "webhooks",
    columns: "id, uuid, team_id, url, description, event_types, enabled, secret,
        previous_secret, previous_secret_until, failing_since, disabled_reason, created_at,
        updated_at",
    order: "id",
    key: "uuid",
};

/// The first key of the PostgreSQL advisory lock a team's webhook creations take ("whk"), apart
/// from the quotas' keys.
const LOCK_KEY: i64 = 0x7768_6b00;

/// A new signing secret: `whsec_` and the base64 of 32 bytes from the operating system.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

fn event_types_json(fields: &WebhookFields) -> String {
    serde_json::Value::from(fields.event_types.clone()).to_string()
}

impl Store {
    /// A page of the team's webhooks, oldest first, and how many it has.
    pub async fn webhooks(
        &self,
        team_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Webhook>, i64)> {
        let (rows, total) = WEBHOOKS.page::<Row>(self, team_id, limit, offset).await?;
        Ok((rows.into_iter().map(Webhook::from).collect(), total))
    }

    /// The team's webhook with this uuid (another team's is `None`).
    pub async fn webhook(&self, team_id: i64, uuid: &str) -> Result<Option<Webhook>> {
        let row: Option<Row> = WEBHOOKS.one(self, team_id, uuid).await?;
        Ok(row.map(Webhook::from))
    }

    /// How many webhooks the team has.
    pub async fn webhook_count(&self, team_id: i64) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM webhooks WHERE team_id = $1")
                .bind(team_id)
                .fetch_one(self.db())
                .await?,
        )
    }

    /// Makes a webhook of the team with a new secret, unless the team has
    /// [`WEBHOOKS_PER_TEAM`] already.
    pub async fn create_webhook(&self, team_id: i64, fields: &WebhookFields) -> Result<Creation> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        if self.backend == Backend::Postgres {
            // Selecting the void result through the Any driver would fail: count it.
            sqlx::query(
                "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock(CAST($1 AS INTEGER),
                    CAST($2 AS INTEGER))) AS locked",
            )
            .bind(LOCK_KEY)
            // Ids past 2^31 share a lock with another's: they only wait for each other.
            .bind(team_id as i32 as i64)
            .execute(&mut *tx)
            .await?;
        }
        let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhooks WHERE team_id = $1")
            .bind(team_id)
            .fetch_one(&mut *tx)
            .await?;
        if held >= WEBHOOKS_PER_TEAM {
            return Ok(Creation::LimitReached);
        }
        sqlx::query(
            "INSERT INTO webhooks (uuid, team_id, url, description, event_types, enabled, secret,
               created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
        )
        .bind(&uuid)
        .bind(team_id)
        .bind(&fields.url)
        .bind(&fields.description)
        .bind(event_types_json(fields))
        .bind(i64::from(fields.enabled))
        .bind(new_secret())
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let created = self.webhook(team_id, &uuid).await?;
        let created = created.ok_or_else(|| StoreError::NotFound("webhook".into()))?;
        Ok(Creation::Created(Box::new(created)))
    }

    /// Replaces the team's webhook's fields (PUT); enabling it clears why cms had disabled it.
    /// `None` when the team has no such webhook.
    pub async fn replace_webhook(
        &self,
        team_id: i64,
        uuid: &str,
        fields: &WebhookFields,
    ) -> Result<Option<Webhook>> {
        let enabled = i64::from(fields.enabled);
        let done = sqlx::query(
            "UPDATE webhooks SET url = $1, description = $2, event_types = $3, enabled = $4,
               disabled_reason = CASE WHEN $4 = 1 THEN NULL ELSE disabled_reason END,
               updated_at = $5
             WHERE team_id = $6 AND uuid = $7",
        )
        .bind(&fields.url)
        .bind(&fields.description)
        .bind(event_types_json(fields))
        .bind(enabled)
        .bind(now_record_time())
        .bind(team_id)
        .bind(uuid)
        .execute(self.db())
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.webhook(team_id, uuid).await
    }

    /// Deletes the team's webhook with its deliveries; `false` when it has no such webhook.
    pub async fn delete_webhook(&self, team_id: i64, uuid: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM webhooks WHERE team_id = $1 AND uuid = $2")
            .bind(team_id)
            .bind(uuid)
            .execute(self.db())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Gives the team's webhook a new secret; the one it replaces keeps signing for
    /// [`PREVIOUS_SECRET_HOURS`]. `None` when the team has no such webhook.
    pub async fn rotate_webhook_secret(&self, team_id: i64, uuid: &str) -> Result<Option<Webhook>> {
        let now = chrono::Utc::now();
        let until = now + chrono::Duration::hours(PREVIOUS_SECRET_HOURS);
        let done = sqlx::query(
            "UPDATE webhooks SET previous_secret = secret, previous_secret_until = $1,
               secret = $2, updated_at = $3
             WHERE team_id = $4 AND uuid = $5",
        )
        .bind(format_record_time(until))
        .bind(new_secret())
        .bind(format_record_time(now))
        .bind(team_id)
        .bind(uuid)
        .execute(self.db())
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.webhook(team_id, uuid).await
    }
}

#[cfg(test)]
mod tests;
