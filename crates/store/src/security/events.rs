//! A station's security events (SecurityEventNotification, 2.0.1 and 1.6's security
//! extension): stored as they come, the newest [`EVENTS_KEPT`] of each station kept.

use crate::{Result, Store};
use sqlx::AnyConnection;

/// How many of a station's security events are kept: older ones are deleted as new ones come.
pub const EVENTS_KEPT: i64 = 1000;

/// The security event types OCPP 2.0.1's Appendix 1 ("Security Events") marks critical (the
/// 1.6 security extension's list is the same): each is counted in
/// `cms_security_events_critical_total`.
const CRITICAL: [&str; 9] = [
    "FirmwareUpdated",
    "SettingSystemTime",
    "StartupOfTheDevice",
    "ResetOrReboot",
    "SecurityLogWasCleared",
    "MemoryExhaustion",
    "TamperDetectionActivated",
    "MaintenanceLoginAccepted",
    "MaintenanceLoginFailed",
];

/// Whether the event type is one of the critical ones.
pub fn is_critical(event_type: &str) -> bool {
    CRITICAL.contains(&event_type)
}

/// A security event a station told of (a change of the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityEvent {
    pub identity: String,
    /// The event's `type`, e.g. `TamperDetectionActivated`.
    pub event_type: String,
    /// The station's `timestamp`, in record time form.
    pub occurred_at: String,
    pub tech_info: Option<String>,
    /// When the gateway received it.
    pub at: String,
}

/// A stored security event, as the API lists it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SecurityEventRow {
    pub id: i64,
    #[sqlx(rename = "type")]
    pub event_type: String,
    pub occurred_at: String,
    pub tech_info: Option<String>,
    pub critical: i64,
    pub received_at: String,
}

/// Stores the event (for a registered station; others' are dropped), and deletes the station's
/// events past the newest [`EVENTS_KEPT`].
pub(crate) async fn keep_event(db: &mut AnyConnection, event: &SecurityEvent) -> Result<()> {
    let Some(charger_id): Option<i64> =
        sqlx::query_scalar("SELECT id FROM chargers WHERE identity = $1")
            .bind(&event.identity)
            .fetch_optional(&mut *db)
            .await?
    else {
        return Ok(());
    };
    sqlx::query(
        "INSERT INTO station_security_events
           (charger_id, type, occurred_at, tech_info, critical, received_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(charger_id)
    .bind(&event.event_type)
    .bind(&event.occurred_at)
    .bind(&event.tech_info)
    .bind(is_critical(&event.event_type) as i64)
    .bind(&event.at)
    .execute(&mut *db)
    .await?;
    sqlx::query(
        "DELETE FROM station_security_events WHERE charger_id = $1 AND id <=
           (SELECT id FROM station_security_events WHERE charger_id = $1
            ORDER BY id DESC LIMIT 1 OFFSET $2)",
    )
    .bind(charger_id)
    .bind(EVENTS_KEPT)
    .execute(&mut *db)
    .await?;
    Ok(())
}

impl Store {
    /// A page of the station's security events, newest (last received) first, and how many
    /// are kept.
    pub async fn security_events_page(
        &self,
        charger_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<SecurityEventRow>, i64)> {
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM station_security_events WHERE charger_id = $1",
        )
        .bind(charger_id)
        .fetch_one(self.db())
        .await?;
        let page = sqlx::query_as(
            "SELECT id, type, occurred_at, tech_info, critical, received_at
             FROM station_security_events WHERE charger_id = $1
             ORDER BY id DESC LIMIT $2 OFFSET $3",
        )
        .bind(charger_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((page, total))
    }
}
