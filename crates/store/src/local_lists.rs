//! The chargers' local authorization lists: which tags apply to a charger (the list it should
//! hold), what cms knows it to hold, and the one call about it in flight. The API's list keeper
//! (crates/api/src/control/local_lists) drives these; docs/actions.md tells the behaviour.
//!
//! A call is claimed before it is sent, by a conditional update on the row's `revision`: of
//! several API replicas looking at the same charger, one sends; the others' claims fail. Its
//! end is settled the same way, on the action's uuid, once the action's final state is stored.

mod list;
mod v201;
mod watch;

pub use v201::StationList;
pub(crate) use v201::keep_report_end;

pub use watch::ListCursors;

pub use list::{
    ListChange, ListEntry, ListUpdate, TeamTag, UpdateType, accepted_at, apply, diff, fit,
    next_update, resolve,
};

use crate::{Result, Store, flag};
use chrono::{DateTime, Utc};
use sqlx::Row;

/// A charger as the list keeper sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCharger {
    pub charger_id: i64,
    pub identity: String,
    /// Its session while it is online.
    pub session: Option<String>,
    pub last_connection_at: Option<String>,
    /// Its site checks id tags and keeps the chargers' lists.
    pub keeps_list: bool,
    pub owner_team: i64,
    /// The version its row names (`2.0.1`; `1.6`, or `None` before it ever connected).
    pub ocpp_version: Option<String>,
    pub held: HeldList,
}

/// What cms knows a charger to hold, and what it is doing about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeldList {
    pub version: i64,
    pub entries: Vec<ListEntry>,
    pub needs_full: bool,
    pub checked_session: Option<String>,
    pub unsupported_session: Option<String>,
    pub pending_action: Option<String>,
    pub retry_after: Option<String>,
    /// A ClearCache is due once the list is in step.
    pub clear_cache: bool,
    /// What a claim must find unchanged (0 before the charger has a row).
    pub revision: i64,
}

/// The limits a charger reported in its configuration, or a 2.0.1 station in its device model
/// (`None`: not reported, or not a positive number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListLimits {
    /// LocalAuthListMaxLength: entries the list may hold.
    pub max_entries: Option<usize>,
    /// SendLocalListMaxLength: entries one SendLocalList may carry.
    pub max_send: Option<usize>,
    /// Bytes one SendLocalList may take (2.0.1's BytesPerMessage; 1.6 has none).
    pub max_bytes: Option<usize>,
}

/// The call about to be sent, as claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCall {
    pub action_uuid: String,
    pub session: String,
    pub kind: ListCallKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListCallKind {
    /// GetLocalListVersion, expecting the version cms knows of.
    Check {
        expected_version: i64,
    },
    Update(ListUpdate),
    /// ClearCache, once an update took out an entry the charger held Accepted.
    ClearCache,
}

/// A claimed call whose action ended (or never came to be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedCall {
    pub charger_id: i64,
    pub action_uuid: String,
    /// `check`, `full`, `differential` or `clear_cache`.
    pub kind: String,
    /// The action's final state and what the charger answered; `None` when the action was
    /// never stored (the claimant failed before taking it).
    pub status: Option<String>,
    pub response: Option<String>,
    pub error_code: Option<String>,
    pub expected_version: i64,
    /// What cms knew the charger to hold when the call was claimed.
    pub held_entries: usize,
}

/// How an ended call changes what cms knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// The update was accepted: the charger holds its version and entries.
    Accepted,
    /// The version check answered; `matches`: it holds the version cms knew of; `reported`:
    /// the version it said it holds (the next update numbers past it, whatever cms knew).
    Checked { matches: bool, reported: i64 },
    /// A full update comes next, not before `retry_after`.
    NeedsFull { retry_after: Option<String> },
    /// The charger keeps no local list: nothing more on this session.
    Unsupported,
    /// Nothing learnt: try again, not before `retry_after`.
    Retry { retry_after: Option<String> },
    /// The ClearCache ended (whatever the answer: it is not tried again).
    CacheCleared,
}

impl Store {
    /// The charger `charger_id` with its list's state.
    pub async fn local_list_charger(&self, charger_id: i64) -> Result<Option<ListCharger>> {
        let row = sqlx::query(
            "SELECT c.id, c.identity, c.connection_status, c.session, c.last_connection_at,
               s.authorization_mode, s.local_authorization_list, s.team_id, c.ocpp_version,
               COALESCE(l.version, 0) AS version, COALESCE(l.entries, '[]') AS entries,
               COALESCE(l.needs_full, 1) AS needs_full, l.checked_session, l.unsupported_session,
               l.pending_action, l.retry_after, COALESCE(l.revision, 0) AS revision,
               COALESCE(l.clear_cache, 0) AS clear_cache
             FROM chargers c JOIN sites s ON s.id = c.site_id
             LEFT JOIN charger_local_lists l ON l.charger_id = c.id
             WHERE c.id = $1",
        )
        .bind(charger_id)
        .fetch_optional(self.db())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let online = row.try_get::<String, _>("connection_status")? == "online";
        Ok(Some(ListCharger {
            charger_id: row.try_get("id")?,
            identity: row.try_get("identity")?,
            session: row
                .try_get::<Option<String>, _>("session")?
                .filter(|_| online),
            last_connection_at: row.try_get("last_connection_at")?,
            keeps_list: row.try_get::<String, _>("authorization_mode")? == "id_tags"
                && flag(&row, "local_authorization_list")?,
            owner_team: row.try_get("team_id")?,
            ocpp_version: row.try_get("ocpp_version")?,
            held: HeldList {
                version: row.try_get("version")?,
                entries: parse_entries(&row.try_get::<String, _>("entries")?),
                needs_full: flag(&row, "needs_full")?,
                checked_session: row.try_get("checked_session")?,
                unsupported_session: row.try_get("unsupported_session")?,
                pending_action: row.try_get("pending_action")?,
                retry_after: row.try_get("retry_after")?,
                clear_cache: flag(&row, "clear_cache")?,
                revision: row.try_get("revision")?,
            },
        }))
    }

    /// The list limits the charger reported (GetConfiguration after its boot).
    pub async fn local_list_limits(&self, charger_id: i64) -> Result<ListLimits> {
        let rows: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT key, value FROM charger_settings WHERE charger_id = $1
               AND key IN ('LocalAuthListMaxLength', 'SendLocalListMaxLength')",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?;
        let mut limits = ListLimits::default();
        for (key, value) in rows {
            let value = value
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|v| *v > 0);
            match key.as_str() {
                "LocalAuthListMaxLength" => limits.max_entries = value,
                _ => limits.max_send = value,
            }
        }
        Ok(limits)
    }

    /// Whether the configuration read after the charger's boot on `session` has ended (so its
    /// list limits are known, if it reported any).
    pub async fn configuration_read(&self, charger_id: i64, session: &str) -> Result<bool> {
        let read: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM charger_actions WHERE charger_id = $1 AND session = $2
               AND action = 'GetConfiguration' AND requested_by_type = 'system'
               AND status IN ('answered', 'failed', 'timed_out', 'expired') LIMIT 1",
        )
        .bind(charger_id)
        .bind(session)
        .fetch_optional(self.db())
        .await?;
        Ok(read.is_some())
    }

    /// The tags that apply to the charger, one per key, by key (see [`resolve`]): those of its
    /// site's owner team and of every team with access to the site that covers the charger,
    /// and the OCPI tokens of the providers the site is published to, but those the eMSP must
    /// be asked about each time (whitelist `NEVER`). A provider's other tags stay out of lists
    /// (docs/tariffs.md "Providers").
    pub async fn desired_local_list(
        &self,
        charger_id: i64,
        now: DateTime<Utc>,
    ) -> Result<Vec<ListEntry>> {
        let rows = sqlx::query(
            "SELECT s.team_id AS owner_team, t.team_id, t.id_tag, t.id_tag_key, t.status,
               t.expiry_date, t.parent_id_tag
             FROM chargers c JOIN sites s ON s.id = c.site_id
             JOIN id_tags t ON t.team_id = s.team_id OR t.team_id IN (
               SELECT sa.team_id FROM site_access sa
               WHERE sa.site_id = s.id AND (sa.can_access_all_assets = 1 OR EXISTS (
                 SELECT 1 FROM site_access_assets saa
                 WHERE saa.site_access_id = sa.id AND saa.charger_id = c.id)))
               OR (t.ocpi_whitelist IS NOT NULL AND t.ocpi_whitelist <> 'NEVER'
                   AND t.team_id IN (
                     SELECT p.id_tag_team_id FROM ocpi_publications op
                     JOIN providers p ON p.id = op.provider_id WHERE op.site_id = s.id))
             WHERE c.id = $1",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?;
        let mut owner_team = 0;
        let mut tags = Vec::with_capacity(rows.len());
        for row in rows {
            owner_team = row.try_get("owner_team")?;
            tags.push(TeamTag {
                team_id: row.try_get("team_id")?,
                entry: ListEntry {
                    id_tag: row.try_get("id_tag")?,
                    key: row.try_get("id_tag_key")?,
                    status: row.try_get("status")?,
                    expiry_date: row.try_get("expiry_date")?,
                    parent_id_tag: row.try_get("parent_id_tag")?,
                },
            });
        }
        Ok(resolve(tags, owner_team, now))
    }

    /// Claims `call` for the charger if its list's state is still at `revision` and no call is
    /// in flight; `false` when someone else got there first (nothing is to be sent then).
    pub async fn claim_local_list_call(
        &self,
        charger_id: i64,
        revision: i64,
        call: &ListCall,
        at: &str,
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO charger_local_lists (charger_id, updated_at) VALUES ($1, $2)
             ON CONFLICT (charger_id) DO NOTHING",
        )
        .bind(charger_id)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        let (kind, version, entries) = match &call.kind {
            ListCallKind::Check { expected_version } => ("check", *expected_version, None),
            ListCallKind::ClearCache => ("clear_cache", 0, None),
            ListCallKind::Update(update) => (
                match update.update_type {
                    UpdateType::Full => "full",
                    UpdateType::Differential => "differential",
                },
                update.version,
                Some(entries_json(&update.result)),
            ),
        };
        let claimed = sqlx::query(
            "UPDATE charger_local_lists SET pending_action = $1, pending_kind = $2,
               pending_session = $3, pending_at = $4, pending_version = $5, pending_entries = $6,
               retry_after = NULL, revision = revision + 1, updated_at = $4
             WHERE charger_id = $7 AND revision = $8 AND pending_action IS NULL",
        )
        .bind(&call.action_uuid)
        .bind(kind)
        .bind(&call.session)
        .bind(at)
        .bind(version)
        .bind(entries)
        .bind(charger_id)
        .bind(revision)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        tx.commit().await?;
        Ok(claimed)
    }

    /// The claimed calls that ended: their action is in a final state, or was never stored
    /// and the claim is older than `stale_before` (a record time).
    pub async fn ended_local_list_calls(&self, stale_before: &str) -> Result<Vec<EndedCall>> {
        let rows = sqlx::query(
            "SELECT l.charger_id, l.pending_action, l.pending_kind, l.pending_version, l.entries,
               a.status, a.response, a.error_code
             FROM charger_local_lists l LEFT JOIN charger_actions a ON a.uuid = l.pending_action
             WHERE l.pending_action IS NOT NULL
               AND (a.status IN ('answered', 'failed', 'timed_out', 'expired')
                    OR (a.uuid IS NULL AND l.pending_at < $1))",
        )
        .bind(stale_before)
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(EndedCall {
                    charger_id: row.try_get("charger_id")?,
                    action_uuid: row.try_get("pending_action")?,
                    kind: row.try_get("pending_kind")?,
                    status: row.try_get("status")?,
                    response: row.try_get("response")?,
                    error_code: row.try_get("error_code")?,
                    expected_version: row
                        .try_get::<Option<i64>, _>("pending_version")?
                        .unwrap_or(0),
                    held_entries: parse_entries(&row.try_get::<String, _>("entries")?).len(),
                })
            })
            .collect()
    }

    /// Records what the ended call `action_uuid` taught; `false` when it was settled already
    /// (by another replica).
    pub async fn settle_local_list_call(
        &self,
        charger_id: i64,
        action_uuid: &str,
        outcome: &CallOutcome,
        at: &str,
    ) -> Result<bool> {
        let (change, retry_after): (String, _) = match outcome {
            CallOutcome::Accepted => (
                "version = pending_version, entries = pending_entries, needs_full = 0".into(),
                None,
            ),
            CallOutcome::Checked { matches: true, .. } => {
                ("checked_session = pending_session".into(), None)
            }
            // A list changed behind cms's back (by hand, or a lost update the charger took):
            // a full update, numbered past the charger's own version so that it takes it.
            CallOutcome::Checked {
                matches: false,
                reported,
            } => (
                format!(
                    "checked_session = pending_session, needs_full = 1,
                     version = CASE WHEN version < {reported} THEN {reported} ELSE version END"
                ),
                None,
            ),
            // The charger refused the update's number, or failed it: check its version again
            // before the full update, so that the full one is numbered past it.
            CallOutcome::NeedsFull { retry_after } => (
                "needs_full = 1, checked_session = NULL".into(),
                retry_after.as_deref(),
            ),
            CallOutcome::Unsupported => ("unsupported_session = pending_session".into(), None),
            CallOutcome::CacheCleared => ("clear_cache = 0".into(), None),
            CallOutcome::Retry { retry_after } => {
                ("needs_full = needs_full".into(), retry_after.as_deref())
            }
        };
        let settled = sqlx::query(&format!(
            "UPDATE charger_local_lists SET {change}, retry_after = $1, pending_action = NULL,
               pending_kind = NULL, pending_session = NULL, pending_at = NULL,
               pending_version = NULL, pending_entries = NULL, revision = revision + 1,
               updated_at = $2
             WHERE charger_id = $3 AND pending_action = $4"
        ))
        .bind(retry_after)
        .bind(at)
        .bind(charger_id)
        .bind(action_uuid)
        .execute(self.db())
        .await?;
        Ok(settled.rows_affected() == 1)
    }
}

fn entries_json(entries: &[ListEntry]) -> String {
    serde_json::to_string(entries).unwrap_or_else(|_| "[]".into())
}

/// Entries as stored; a list that does not parse is taken as empty (the next update is then
/// a differential one that sends every entry, which the charger takes as well).
fn parse_entries(json: &str) -> Vec<ListEntry> {
    serde_json::from_str(json).unwrap_or_default()
}

#[cfg(any(test, feature = "test-util"))]
pub mod fixtures;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_v201;
