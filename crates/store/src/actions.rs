//! Chargers > Actions: the audit log of every call cms makes to a charger. A row moves forward
//! only (pending → sent → a final state, or pending → a final state) and the first final state
//! stored wins, so reports that arrive twice, late or out of order change nothing they should
//! not. Also the outbox of the command line: actions it takes wait here (`published_at` NULL)
//! until an API process publishes them.

use crate::{Backend, Result, Store, format_record_time};
use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use std::time::Duration;

/// An action taken, before anything was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAction {
    pub uuid: String,
    pub charger_id: i64,
    /// The charger's session it is addressed to.
    pub session: String,
    pub action: String,
    /// The request payload, as JSON text.
    pub request: String,
    pub requested_by_type: String,
    pub requested_by_email: Option<String>,
    pub timeout_ms: i64,
    pub created_at: String,
    pub expires_at: String,
    /// The OCPP version it was taken for: `1.6` or `2.0.1`.
    pub ocpp_version: String,
    /// Whether it is already on its way to the gateways (the REST API publishes at once; the
    /// command line leaves it to the outbox).
    pub published: bool,
}

/// An action as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ActionRow {
    pub uuid: String,
    pub charger_id: i64,
    pub identity: String,
    pub session: String,
    pub action: String,
    pub request: String,
    pub status: String,
    pub response: Option<String>,
    pub error_code: Option<String>,
    pub error_description: Option<String>,
    pub requested_by_type: String,
    pub requested_by_email: Option<String>,
    pub timeout_ms: i64,
    pub created_at: String,
    pub expires_at: String,
    pub sent_at: Option<String>,
    pub finished_at: Option<String>,
    /// The OCPP version it was taken for: `1.6` or `2.0.1`.
    pub ocpp_version: String,
}

/// The `timeout_ms` of an action the command line took without times of its own: the service
/// that publishes it gives it its `--action-ttl` and `--action-timeout`
/// ([`Store::claim_unpublished_actions`]). No action sent has a zero time-out.
pub const SERVICE_TIMES: i64 = 0;

/// How long actions may wait and take: a service's `--action-ttl` and `--action-timeout`,
/// which the command line's actions taken without times of their own get when claimed.
#[derive(Debug, Clone, Copy)]
pub struct ActionTimes {
    /// How long an action may wait to be sent; it is never sent after.
    pub ttl: Duration,
    /// How long the charger has to answer once a call is sent.
    pub timeout: Duration,
}

impl Default for ActionTimes {
    fn default() -> Self {
        ActionTimes {
            ttl: Duration::from_secs(60),
            timeout: Duration::from_secs(30),
        }
    }
}

const COLUMNS: &str = "a.uuid, a.charger_id, c.identity, a.session, a.action, a.request,
    a.status, a.response, a.error_code, a.error_description, a.requested_by_type,
    a.requested_by_email, a.timeout_ms, a.created_at, a.expires_at, a.sent_at, a.finished_at, a.ocpp_version";

/// A change of an action's state, as a gateway reported it (see `StateChange::ActionReported`).
#[derive(Debug, Clone, PartialEq)]
pub struct ActionReported {
    pub identity: String,
    /// The whole action, so that one cms took by itself (a configuration read) is recorded too.
    pub action: NewAction,
    pub status: String,
    pub response: Option<String>,
    pub error_code: Option<String>,
    pub error_description: Option<String>,
    pub sent_at: Option<String>,
    pub finished_at: Option<String>,
    /// What an answered action says of the charger's configuration.
    pub settings: Option<SettingsUpdate>,
    /// For the final report of a ChangeConfiguration of `AuthorizationKey`: whether the
    /// charger took its new password (Accepted or RebootRequired), so that a credential change
    /// waiting for this action (`Store::insert_credential_change`) is made, or dropped.
    pub credential: Option<bool>,
    pub at: String,
}

/// A configuration key as the charger reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub key: String,
    pub value: Option<String>,
    pub readonly: bool,
}

/// How an answered action changes the configuration kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsUpdate {
    /// A GetConfiguration of every key: this is the whole configuration now.
    Replace(Vec<Setting>),
    /// A GetConfiguration of some keys: these are their values now.
    Upsert(Vec<Setting>),
    /// An accepted ChangeConfiguration: the key's value, its read-only flag kept.
    Change { key: String, value: String },
    /// A 2.0.1 station's SetVariables: the values it accepted, kept in its device model.
    Variables(Vec<crate::device_model::VariableSet>),
}

/// A configuration key as kept.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SettingRow {
    pub key: String,
    pub value: Option<String>,
    pub readonly: i64,
    pub updated_at: String,
}

impl Store {
    /// Keeps a new action (`pending`).
    pub async fn insert_action(&self, new: &NewAction) -> Result<()> {
        let mut db = self.db().lend().await?;
        let inserted = insert(db.connection(), new, Some(&new.session)).await;
        db.ended(&inserted);
        inserted.map(drop)
    }

    /// Keeps a new action (`pending`) addressed to the session its charger is connected with
    /// now, read in the same statement (`new.session` is not used): that session, or `None`
    /// when the charger is not connected and nothing was kept.
    pub async fn insert_live_action(&self, new: &NewAction) -> Result<Option<String>> {
        match self.backend {
            // On every command's path: written together with the others that come with it.
            Backend::Sqlite => self.action_inserts.insert(self.db(), new).await,
            Backend::Postgres => inserts::insert_alone(self.db(), new).await,
        }
    }

    /// The action `uuid` of charger `charger_id`.
    pub async fn action(&self, charger_id: i64, uuid: &str) -> Result<Option<ActionRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM charger_actions a JOIN chargers c ON c.id = a.charger_id
             WHERE a.charger_id = $1 AND a.uuid = $2"
        ))
        .bind(charger_id)
        .bind(uuid)
        .fetch_optional(self.db())
        .await?)
    }

    /// A page of a charger's actions, newest first (by when they were taken: an action a
    /// gateway took by itself may be stored after later ones), and how many there are.
    pub async fn actions_page(
        &self,
        charger_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<ActionRow>, i64)> {
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM charger_actions WHERE charger_id = $1")
                .bind(charger_id)
                .fetch_one(self.db())
                .await?;
        let page = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM charger_actions a JOIN chargers c ON c.id = a.charger_id
             WHERE a.charger_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(charger_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((page, total))
    }

    /// Claims up to `limit` actions the command line took and nobody published yet, oldest
    /// first; each is claimed by one caller only (a conditional update), who must publish it.
    /// An action taken without times of its own (`timeout_ms` [`SERVICE_TIMES`]: the command
    /// line cannot know the flags the service runs with) takes `times`, the claiming
    /// service's: its deadline counted from when it was taken, stored with the claim.
    pub async fn claim_unpublished_actions(
        &self,
        now: DateTime<Utc>,
        limit: i64,
        times: ActionTimes,
    ) -> Result<Vec<ActionRow>> {
        let ttl = chrono::Duration::from_std(times.ttl).unwrap_or(chrono::Duration::MAX);
        let timeout_ms = i64::try_from(times.timeout.as_millis()).unwrap_or(i64::MAX);
        let waiting: Vec<ActionRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM charger_actions a JOIN chargers c ON c.id = a.charger_id
             WHERE a.published_at IS NULL AND a.status = 'pending' ORDER BY a.id LIMIT $1"
        ))
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        let mut claimed = Vec::with_capacity(waiting.len());
        for mut action in waiting {
            if action.timeout_ms == SERVICE_TIMES {
                let taken = DateTime::parse_from_rfc3339(&action.created_at).ok();
                let deadline = taken.and_then(|t| t.with_timezone(&Utc).checked_add_signed(ttl));
                if let Some(deadline) = deadline {
                    action.expires_at = format_record_time(deadline);
                }
                action.timeout_ms = timeout_ms;
            }
            let done = sqlx::query(
                "UPDATE charger_actions SET published_at = $1, expires_at = $2, timeout_ms = $3
                 WHERE uuid = $4 AND published_at IS NULL",
            )
            .bind(format_record_time(now))
            .bind(&action.expires_at)
            .bind(action.timeout_ms)
            .bind(&action.uuid)
            .execute(self.db())
            .await?;
            if done.rows_affected() == 1 {
                claimed.push(action);
            }
        }
        Ok(claimed)
    }

    /// Ends the actions no gateway reported on in time: `pending` ones past their deadline by
    /// `margin` end `expired` (`NotDelivered`), `sent` ones past their answer's time-out by
    /// `margin` end `timed_out` (`Timeout`). Returns how many were ended. A command-line action
    /// waiting for a service's times (unclaimed, [`SERVICE_TIMES`]) is left to the claim, which
    /// gives it its real deadline: the one it holds until then is a stand-in.
    pub async fn expire_overdue_actions(
        &self,
        now: DateTime<Utc>,
        margin: chrono::Duration,
    ) -> Result<u64> {
        let cutoff = format_record_time(now - margin);
        let at = format_record_time(now);
        // In one transaction with the webhooks' `action.finished` events of what it ends.
        let mut tx = self.begin_write().await?;
        let mut ended: Vec<String> = sqlx::query_scalar(
            "UPDATE charger_actions SET status = 'expired', error_code = 'NotDelivered',
               error_description = 'no gateway reported sending it before its deadline',
               finished_at = $1, updated_at = $1
             WHERE status = 'pending' AND expires_at < $2
               AND NOT (published_at IS NULL AND timeout_ms = $3)
             RETURNING uuid",
        )
        .bind(&at)
        .bind(&cutoff)
        .bind(SERVICE_TIMES)
        .fetch_all(&mut *tx)
        .await?;
        let expired = ended.len() as u64;
        // A sent action's answer is due `timeout_ms` after `sent_at` (its deadline, were the
        // time it was sent unreadable: it was sent before then).
        let sent: Vec<(String, Option<String>, String, i64)> = sqlx::query_as(
            "SELECT uuid, sent_at, expires_at, timeout_ms FROM charger_actions WHERE status = 'sent'",
        )
        .fetch_all(&mut *tx)
        .await?;
        let mut timed_out = 0;
        for (uuid, sent_at, expires_at, timeout_ms) in sent {
            let sent = sent_at.as_deref().unwrap_or(&expires_at);
            let Ok(sent) = DateTime::parse_from_rfc3339(sent) else {
                continue;
            };
            let due = sent.with_timezone(&Utc) + chrono::Duration::milliseconds(timeout_ms);
            if due + margin >= now {
                continue;
            }
            let done = sqlx::query(
                "UPDATE charger_actions SET status = 'timed_out', error_code = 'Timeout',
                   error_description = 'no gateway reported an answer in time',
                   finished_at = $1, updated_at = $1
                 WHERE uuid = $2 AND status = 'sent'",
            )
            .bind(&at)
            .bind(&uuid)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if done > 0 {
                ended.push(uuid);
            }
            timed_out += done;
        }
        // A password never sent was never taken: forgotten now. One sent waits for the
        // charger's answer, however late it comes (`batch.rs`, `unseen`), for a day.
        let day_ago = format_record_time(now - chrono::Duration::days(1));
        sqlx::query(
            "DELETE FROM charger_credential_changes WHERE action_uuid IN (
               SELECT uuid FROM charger_actions
               WHERE status = 'expired' OR (status = 'timed_out' AND finished_at < $1))",
        )
        .bind(&day_ago)
        .execute(&mut *tx)
        .await?;
        crate::webhooks::outbox::actions_ended(&mut tx, &ended).await?;
        tx.commit().await?;
        Ok(expired + timed_out)
    }

    /// The id of the charger `identity`, and the session it is connected with now (as the
    /// connection events told; `None` when it is not connected).
    pub async fn charger_by_identity(
        &self,
        identity: &str,
    ) -> Result<Option<(i64, Option<String>)>> {
        let row: Option<(i64, String, Option<String>)> = sqlx::query_as(
            "SELECT id, connection_status, session FROM chargers WHERE identity = $1",
        )
        .bind(identity)
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(|(id, status, session)| (id, session.filter(|_| status == "online"))))
    }

    /// The OCPP version charger `charger_id` last connected with (`1.6`, `2.0.1`); `None`
    /// until it first connected (or for no such charger). What an action for it is taken in.
    pub async fn charger_ocpp_version(&self, charger_id: i64) -> Result<Option<String>> {
        let version: Option<Option<String>> =
            sqlx::query_scalar("SELECT ocpp_version FROM chargers WHERE id = $1")
                .bind(charger_id)
                .fetch_optional(self.db())
                .await?;
        Ok(version.flatten())
    }

    /// A charger's configuration as kept, by key.
    pub async fn settings(&self, charger_id: i64) -> Result<Vec<SettingRow>> {
        Ok(sqlx::query_as(
            "SELECT key, value, readonly, updated_at FROM charger_settings
             WHERE charger_id = $1 ORDER BY key",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?)
    }
}

/// Keeps `new` (`pending`) addressed to `session`, or with `None` to the session its charger
/// is connected with now, and then only if it is connected. The session it was kept for;
/// `None` when nothing was kept (not connected, or the uuid is already there).
async fn insert(
    db: &mut AnyConnection,
    new: &NewAction,
    session: Option<&str>,
) -> Result<Option<String>> {
    let published_at = new.published.then(|| new.created_at.clone());
    Ok(sqlx::query_scalar(
        "INSERT INTO charger_actions (uuid, charger_id, session, action, request, status,
           requested_by_type, requested_by_email, timeout_ms, created_at, expires_at,
           published_at, updated_at, ocpp_version)
         SELECT $1, id, COALESCE($2, session), $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $8, $12
         FROM chargers
         WHERE id = $11 AND ($2 IS NOT NULL OR (connection_status = 'online' AND session IS NOT NULL))
         ON CONFLICT (uuid) DO NOTHING
         RETURNING session",
    )
    .bind(&new.uuid)
    .bind(session)
    .bind(&new.action)
    .bind(&new.request)
    .bind(&new.requested_by_type)
    .bind(&new.requested_by_email)
    .bind(new.timeout_ms)
    .bind(&new.created_at)
    .bind(&new.expires_at)
    .bind(published_at)
    .bind(new.charger_id)
    .bind(&new.ocpp_version)
    .fetch_optional(&mut *db)
    .await?)
}

async fn apply_settings(
    db: &mut AnyConnection,
    charger_id: i64,
    update: &SettingsUpdate,
    at: &str,
) -> Result<()> {
    let settings = match update {
        SettingsUpdate::Replace(settings) => {
            sqlx::query("DELETE FROM charger_settings WHERE charger_id = $1")
                .bind(charger_id)
                .execute(&mut *db)
                .await?;
            settings
        }
        SettingsUpdate::Upsert(settings) => settings,
        SettingsUpdate::Variables(sets) => {
            return crate::device_model::keep_sets(db, charger_id, sets, at).await;
        }
        SettingsUpdate::Change { key, value } => {
            // OCPP's keys are case-insensitive (CiString50): a change asked for as
            // `heartbeatinterval` is the charger's `HeartbeatInterval`, which keeps its name.
            let changed = sqlx::query(
                "UPDATE charger_settings SET value = $1, updated_at = $2
                 WHERE charger_id = $3 AND lower(key) = lower($4)",
            )
            .bind(value)
            .bind(at)
            .bind(charger_id)
            .bind(key)
            .execute(&mut *db)
            .await?;
            if changed.rows_affected() > 0 {
                return Ok(());
            }
            sqlx::query(
                "INSERT INTO charger_settings (charger_id, key, value, readonly, updated_at)
                 VALUES ($1, $2, $3, 0, $4)
                 ON CONFLICT (charger_id, key) DO UPDATE SET value = excluded.value,
                   updated_at = excluded.updated_at",
            )
            .bind(charger_id)
            .bind(key)
            .bind(value)
            .bind(at)
            .execute(&mut *db)
            .await?;
            return Ok(());
        }
    };
    for setting in settings {
        sqlx::query(
            "INSERT INTO charger_settings (charger_id, key, value, readonly, updated_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (charger_id, key) DO UPDATE SET value = excluded.value,
               readonly = excluded.readonly, updated_at = excluded.updated_at",
        )
        .bind(charger_id)
        .bind(&setting.key)
        .bind(&setting.value)
        .bind(i64::from(setting.readonly))
        .bind(at)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

mod batch;
pub(crate) mod inserts;
pub(crate) use batch::apply_reports;

#[cfg(test)]
mod tests;
