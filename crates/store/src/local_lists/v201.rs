//! What the list keeper needs of an OCPP 2.0.1 station beyond 1.6's: whether the base report
//! asked after its boot has ended (so its LocalAuthListCtrlr is known), and the list's limits
//! and switches in the device model it reported (docs/ocpp201.md, "Local authorisation lists");
//! and, for either version, whether a ClearCache is due after an update.

use super::ListLimits;
use crate::{Result, Store};
use sqlx::AnyConnection;

/// The component whose variables say what list a 2.0.1 station keeps.
const LIST_CONTROLLER: &str = "LocalAuthListCtrlr";
/// The component of its authorisation cache.
const CACHE_CONTROLLER: &str = "AuthCacheCtrlr";

/// How long a charger's older report ends are kept beside its newest.
const KEPT_FOR: chrono::Duration = chrono::Duration::hours(1);

/// Notes that the station `identity` ended its report `request_id` (the NotifyReport without
/// `tbc`); an unknown station's changes nothing.
pub(crate) async fn keep_report_end(
    db: &mut AnyConnection,
    identity: &str,
    request_id: i64,
    at: &str,
) -> Result<()> {
    let Some(charger_id): Option<i64> =
        sqlx::query_scalar("SELECT id FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_optional(&mut *db)
            .await?
    else {
        return Ok(());
    };
    sqlx::query(
        "INSERT INTO charger_report_ends (charger_id, request_id, ended_at) VALUES ($1, $2, $3)
         ON CONFLICT (charger_id, request_id) DO UPDATE SET ended_at = excluded.ended_at",
    )
    .bind(charger_id)
    .bind(request_id)
    .bind(at)
    .execute(&mut *db)
    .await?;
    let before = chrono::DateTime::parse_from_rfc3339(at)
        .map(|at| crate::format_record_time(at.to_utc() - KEPT_FOR))
        .unwrap_or_default();
    sqlx::query("DELETE FROM charger_report_ends WHERE charger_id = $1 AND ended_at < $2")
        .bind(charger_id)
        .bind(before)
        .execute(&mut *db)
        .await?;
    Ok(())
}

/// The list's limits and switches as a 2.0.1 station reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StationList {
    /// ItemsPerMessage as `max_send`, BytesPerMessage as `max_bytes`, the maxLimit of
    /// `Entries` as `max_entries`.
    pub limits: ListLimits,
    /// `Enabled` or `Available` reported false: the station keeps no list.
    pub keeps_none: bool,
    /// AuthCacheCtrlr's `Enabled` reported true.
    pub cache_enabled: bool,
}

impl Store {
    /// Notes that the station keeps no list on `session` (its device model says so): nothing
    /// is sent to it until it connects anew.
    pub async fn local_list_kept_by_none(
        &self,
        charger_id: i64,
        session: &str,
        at: &str,
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO charger_local_lists (charger_id, updated_at) VALUES ($1, $2)
             ON CONFLICT (charger_id) DO NOTHING",
        )
        .bind(charger_id)
        .bind(at)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE charger_local_lists SET unsupported_session = $1, revision = revision + 1,
               updated_at = $2
             WHERE charger_id = $3 AND pending_action IS NULL",
        )
        .bind(session)
        .bind(at)
        .bind(charger_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Notes that a ClearCache is due once the charger's list is in step.
    pub async fn local_list_clear_cache(&self, charger_id: i64, at: &str) -> Result<()> {
        sqlx::query(
            "UPDATE charger_local_lists SET clear_cache = 1, revision = revision + 1,
               updated_at = $1 WHERE charger_id = $2",
        )
        .bind(at)
        .bind(charger_id)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Whether a 1.6 charger reported its authorisation cache on (AuthorizationCacheEnabled).
    pub async fn authorization_cache_enabled(&self, charger_id: i64) -> Result<bool> {
        let value: Option<Option<String>> = sqlx::query_scalar(
            "SELECT value FROM charger_settings WHERE charger_id = $1
               AND key = 'AuthorizationCacheEnabled'",
        )
        .bind(charger_id)
        .fetch_optional(self.db())
        .await?;
        Ok(value
            .flatten()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")))
    }

    /// Whether the base report cms asked for after the station's boot on `session` has ended:
    /// the station answered the GetBaseReport other than Accepted (no report comes), or the call
    /// failed, or the report's last part came. `false` while none was asked.
    pub async fn base_report_read(&self, charger_id: i64, session: &str) -> Result<bool> {
        let reads: Vec<(String, Option<String>, String)> = sqlx::query_as(
            "SELECT status, response, request FROM charger_actions
             WHERE charger_id = $1 AND session = $2 AND action = 'GetBaseReport'
               AND requested_by_type = 'system'
               AND status IN ('answered', 'failed', 'timed_out', 'expired')",
        )
        .bind(charger_id)
        .bind(session)
        .fetch_all(self.db())
        .await?;
        for (status, response, request) in reads {
            let accepted = status == "answered"
                && response
                    .and_then(|r| serde_json::from_str::<serde_json::Value>(&r).ok())
                    .is_some_and(|r| r["status"] == "Accepted");
            if !accepted {
                return Ok(true);
            }
            let request: serde_json::Value = serde_json::from_str(&request).unwrap_or_default();
            let Some(request_id) = request["requestId"].as_i64() else {
                return Ok(true);
            };
            let ended: Option<i64> = sqlx::query_scalar(
                "SELECT 1 FROM charger_report_ends WHERE charger_id = $1 AND request_id = $2",
            )
            .bind(charger_id)
            .bind(request_id)
            .fetch_optional(self.db())
            .await?;
            if ended.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The station's list limits and switches from its device model (a variable it did not
    /// report is no limit; a list is kept unless it said otherwise).
    pub async fn station_list(&self, charger_id: i64) -> Result<StationList> {
        let rows: Vec<(String, String, Option<String>, Option<f64>)> = sqlx::query_as(
            "SELECT component, variable, value, max_limit FROM charger_variables
             WHERE charger_id = $1 AND component IN ($2, $3) AND attribute_type = 'Actual'
               AND component_instance IS NULL AND evse_id IS NULL
               AND variable_instance IS NULL",
        )
        .bind(charger_id)
        .bind(LIST_CONTROLLER)
        .bind(CACHE_CONTROLLER)
        .fetch_all(self.db())
        .await?;
        let mut list = StationList::default();
        for (component, variable, value, max_limit) in rows {
            let count = || {
                value
                    .as_deref()
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .filter(|v| *v > 0)
            };
            let flag = value.as_deref().map(|v| v.trim().to_ascii_lowercase());
            match (component.as_str(), variable.as_str()) {
                (CACHE_CONTROLLER, "Enabled") => {
                    list.cache_enabled = flag.as_deref() == Some("true");
                }
                (CACHE_CONTROLLER, _) => {}
                (_, "ItemsPerMessage") => list.limits.max_send = count(),
                (_, "BytesPerMessage") => list.limits.max_bytes = count(),
                (_, "Entries") => {
                    list.limits.max_entries = max_limit
                        .filter(|m| *m >= 1.0 && m.is_finite())
                        .map(|m| m as usize);
                }
                (_, "Enabled" | "Available") if flag.as_deref() == Some("false") => {
                    list.keeps_none = true;
                }
                _ => {}
            }
        }
        Ok(list)
    }
}
