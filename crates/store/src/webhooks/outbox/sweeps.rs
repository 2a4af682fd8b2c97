//! Events of changes made outside the materialiser's batches: a charger registered or moved,
//! a silent gateway's sessions ended, actions no gateway reported on in time.

use super::{NewEvent, anyone_listens, charger_event, charger_ref, insert};
use crate::Result;
use crate::time::now_record_time;
use serde_json::json;
use sqlx::AnyConnection;

/// The event of a charger registered (`charger.registered`) or removed (`charger.removed`),
/// written in the transaction that does it.
pub(crate) async fn charger_changed(
    db: &mut AnyConnection,
    identity: &str,
    event_type: &'static str,
) -> Result<()> {
    if !anyone_listens(db).await? {
        return Ok(());
    }
    let Some(charger) = charger_ref(db, identity).await? else {
        return Ok(());
    };
    let now = now_record_time();
    let event = charger_event(
        &charger,
        identity,
        event_type,
        &[&charger.uuid, &now],
        &now,
        json!({}),
    );
    insert(db, &[event]).await
}

/// The event of a charger taken offline by cms rather than by its gateway's word: its
/// gateway fell silent (`charger.offline`), written in the transaction that ends its session.
pub(crate) async fn charger_offline(
    db: &mut AnyConnection,
    identity: &str,
    session: &str,
    gateway: &str,
    at: &str,
) -> Result<()> {
    if !anyone_listens(db).await? {
        return Ok(());
    }
    let Some(charger) = charger_ref(db, identity).await? else {
        return Ok(());
    };
    let data = json!({ "session": session, "reason": "gateway_silent", "gateway": gateway });
    let event = charger_event(&charger, identity, "charger.offline", &[session], at, data);
    insert(db, &[event]).await
}

/// The `action.finished` events of actions cms ended itself (expired, timed out: no gateway
/// reported on them in time), written in the transaction that ends them.
pub(crate) async fn actions_ended(db: &mut AnyConnection, uuids: &[String]) -> Result<()> {
    if uuids.is_empty() || !anyone_listens(db).await? {
        return Ok(());
    }
    let mut events = Vec::new();
    for uuid in uuids {
        let row: Option<EndedAction> = sqlx::query_as(
            "SELECT c.identity, a.action, a.status, a.error_code, a.error_description,
               a.sent_at, a.finished_at
             FROM charger_actions a JOIN chargers c ON c.id = a.charger_id WHERE a.uuid = $1",
        )
        .bind(uuid)
        .fetch_optional(&mut *db)
        .await?;
        let Some(EndedAction {
            identity,
            action,
            status: state,
            error_code: code,
            error_description: description,
            sent_at,
            finished_at,
        }) = row
        else {
            continue;
        };
        let Some(charger) = charger_ref(db, &identity).await? else {
            continue;
        };
        events.push(charger_event(
            &charger,
            &identity,
            "action.finished",
            &[uuid],
            &finished_at,
            json!({
                "action_uuid": uuid, "action": action, "state": state, "error_code": code,
                "error_description": description, "sent_at": sent_at, "finished_at": finished_at,
            }),
        ));
    }
    insert(db, &events).await
}

/// The `site.limit_exceeded` of a site whose balancer found it over its grid limit (its meter's
/// reading, or in static mode what its connectors were given), written with the computation
/// that found it.
pub(crate) async fn site_over_limit(
    db: &mut AnyConnection,
    site_id: i64,
    computed: &crate::smart_charging::balancer::SiteComputation,
) -> Result<()> {
    if !anyone_listens(db).await? {
        return Ok(());
    }
    let site: Option<(String, i64, Option<f64>, String)> = sqlx::query_as(
        "SELECT s.uuid, s.team_id, c.grid_limit_amps, s.smart_charging FROM sites s
         JOIN site_smart_charging c ON c.site_id = s.id WHERE s.id = $1",
    )
    .bind(site_id)
    .fetch_optional(&mut *db)
    .await?;
    let Some((uuid, team_id, grid_limit, mode)) = site else {
        return Ok(());
    };
    let at = &computed.computed_at;
    let event = NewEvent {
        event_id: super::event_id("site.limit_exceeded", &[&uuid, at]),
        event_type: "site.limit_exceeded",
        subject: uuid.clone(),
        team_id: Some(team_id),
        site_id: Some(site_id),
        charger_id: None,
        sensitive: false,
        ready: true,
        data: json!({
            "site_uuid": uuid, "mode": mode, "grid_limit_amps": grid_limit,
            "meter_amps": computed.meter_amps, "meter_measured_at": computed.meter_measured_at,
            "allocated_amps": computed.allocated_amps, "headroom_amps": computed.headroom_amps,
        }),
        occurred_at: at.clone(),
        received_at: at.clone(),
    };
    insert(db, &[event]).await
}

impl crate::Store {
    /// Writes a `charger.offline` (`heartbeat_overdue`) for each online charger cms has heard
    /// nothing from (no heartbeat, reading, status or connection) since `stale_after` before
    /// `now`: once a session (its id is the session's), however many API processes look.
    /// Returns how many it found.
    pub async fn tell_overdue_chargers(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        stale_after: chrono::Duration,
    ) -> Result<u64> {
        let Some(cutoff) = now.checked_sub_signed(stale_after) else {
            return Ok(0);
        };
        let cutoff = crate::format_record_time(cutoff);
        // Reads first, without SQLite's write lock: most sweeps find no one, or no one listens.
        let listens = sqlx::query("SELECT 1 FROM webhooks WHERE enabled = 1 LIMIT 1")
            .fetch_optional(self.db())
            .await?
            .is_some();
        if !listens {
            return Ok(0);
        }
        let overdue: Vec<(String, String, Option<String>)> = sqlx::query_as(
            "SELECT c.identity, c.session, c.last_heartbeat_at FROM chargers c
             WHERE c.connection_status = 'online' AND c.session IS NOT NULL
               AND COALESCE(c.last_connection_at, '') < $1
               AND COALESCE(c.last_heartbeat_at, '') < $1
               AND NOT EXISTS (SELECT 1 FROM latest_meter_values m
                               WHERE m.charger_id = c.id AND m.updated_at >= $1)
               AND NOT EXISTS (SELECT 1 FROM connectors k
                               WHERE k.charger_id = c.id AND k.updated_at >= $1)",
        )
        .bind(&cutoff)
        .fetch_all(self.db())
        .await?;
        if overdue.is_empty() {
            return Ok(0);
        }
        let mut tx = self.begin_write().await?;
        let now = crate::format_record_time(now);
        let mut events = Vec::new();
        for (identity, session, last_heartbeat_at) in &overdue {
            let Some(charger) = charger_ref(&mut tx, identity).await? else {
                continue;
            };
            let data = json!({
                "session": session, "reason": "heartbeat_overdue",
                "last_heartbeat_at": last_heartbeat_at,
            });
            events.push(charger_event(
                &charger,
                identity,
                "charger.offline",
                &[session],
                &now,
                data,
            ));
        }
        insert(&mut tx, &events).await?;
        tx.commit().await?;
        Ok(overdue.len() as u64)
    }
}

/// An action cms ended itself, as its event tells it.
#[derive(sqlx::FromRow)]
struct EndedAction {
    identity: String,
    action: String,
    status: String,
    error_code: Option<String>,
    error_description: Option<String>,
    sent_at: Option<String>,
    finished_at: String,
}
