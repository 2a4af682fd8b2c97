//! Fan-out: the outbox's events after the cursor become deliveries to the webhooks that should
//! get them, with the cursor advanced in the same transaction, fenced on the lease.

use super::super::EVENTS_VERSION;
use crate::{Result, Store};
use serde_json::{Value, json};
use sqlx::Row;
use sqlx::any::AnyRow;

/// What one fan-out round did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FannedOut {
    /// The type of every event read past the cursor, in order (for `cms_webhook_events_total`).
    pub event_types: Vec<String>,
    /// How many deliveries were created.
    pub deliveries: u64,
}

/// The enabled webhooks whose team may see an event's resource. `$1` the owner team, `$2` the
/// site, `$3` the charger (0: the event is about the site itself, which any team with access
/// to the site sees), `$4` 1 when the event is sensitive, `$5` the current time. The rule is
/// access.rs's: the owner team sees everything; a team with site access sees all of the site's
/// chargers or the listed ones, and sensitive data only while granted and unexpired.
const RECIPIENTS: &str = "
    SELECT w.id, w.event_types, t.uuid AS team_uuid
    FROM webhooks w JOIN teams t ON t.id = w.team_id
    WHERE w.enabled = 1 AND (w.team_id = $1 OR EXISTS (
        SELECT 1 FROM site_access a
        WHERE a.team_id = w.team_id AND a.site_id = $2
          AND ($3 = 0 OR a.can_access_all_assets = 1 OR EXISTS (
              SELECT 1 FROM site_access_assets x
              WHERE x.site_access_id = a.id AND x.charger_id = $3))
          AND ($4 = 0 OR (a.sensitive_data = 1 AND (a.sensitive_data_expires_at IS NULL
                                                     OR a.sensitive_data_expires_at > $5)))))
    ORDER BY w.id";

/// How long an event waits after it was written before it is fanned out, for the events of the
/// same charger from other writers to be written too (the materialiser lingers 100 ms a batch).
const SETTLE: chrono::Duration = chrono::Duration::seconds(1);

/// `now` less `by`, as record time. (An event still unready (`webhook_events.ready`) a minute
/// after it was written goes as it is: whatever kept it back, a pricing that failed for good,
/// holds no one's events longer.)
fn earlier(now: &str, by: chrono::Duration) -> String {
    chrono::DateTime::parse_from_rfc3339(now)
        .map(|t| crate::format_record_time((t - by).into()))
        .unwrap_or_default()
}

/// The events that may be fanned out now, in the order cms received what they tell: those
/// after the cursor (in `seq` order) before the first received at or after an event that is
/// still to come. A charger's events come from several writers (the materialiser's batches,
/// the actions' reports), each in order but not in order with the others: an event written less
/// than [`SETTLE`] ago, or still unready (a stopped transaction's, until priced), may yet be
/// preceded by one of another writer received before it.
pub(crate) fn settled(events: Vec<AnyRow>, now: &str) -> Result<Vec<AnyRow>> {
    let young = earlier(now, SETTLE);
    let stale = earlier(now, chrono::Duration::minutes(1));
    let mut pending: Option<String> = None;
    for event in &events {
        let created: String = event.try_get("created_at")?;
        let unready = event.try_get::<i64, _>("ready")? == 0 && created > stale;
        if unready || created > young {
            let received: String = event.try_get("received_at")?;
            pending = Some(pending.map_or(received.clone(), |p: String| p.min(received)));
        }
    }
    let mut settled = Vec::new();
    for event in events {
        let received: String = event.try_get("received_at")?;
        if pending.as_ref().is_some_and(|p| received >= *p) {
            break;
        }
        settled.push((received, event));
    }
    // Stable: the same time keeps the writing order.
    settled.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(settled.into_iter().map(|(_, e)| e).collect())
}

impl Store {
    /// Fans out up to `limit` events after the cursor: a delivery, due at `now`, to each webhook
    /// that should get it, and the cursor moved past them, in one transaction. `None` (nothing
    /// written) when `holder` does not hold the lease at `now`.
    pub async fn fan_out_webhook_events(
        &self,
        holder: &str,
        now: &str,
        limit: i64,
    ) -> Result<Option<FannedOut>> {
        let mut tx = self.begin_write().await?;
        let cursor: Option<i64> = sqlx::query_scalar(
            "SELECT last_seq FROM webhook_dispatcher
             WHERE id = 1 AND holder = $1 AND lease_until >= $2",
        )
        .bind(holder)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        let events = sqlx::query(
            "SELECT seq, event_id, type, subject, team_id, site_id, charger_id, sensitive, data,
                    occurred_at, received_at, ready, created_at
             FROM webhook_events WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(cursor)
        .bind(limit)
        .fetch_all(&mut *tx)
        .await?;
        let events = settled(events, now)?;
        let mut done = FannedOut::default();
        let mut last = cursor;
        for event in &events {
            let seq: i64 = event.try_get("seq")?;
            let kind: String = event.try_get("type")?;
            let subject: String = event.try_get("subject")?;
            let recipients = sqlx::query(RECIPIENTS)
                .bind(event.try_get::<Option<i64>, _>("team_id")?.unwrap_or(0))
                .bind(event.try_get::<Option<i64>, _>("site_id")?.unwrap_or(0))
                .bind(event.try_get::<Option<i64>, _>("charger_id")?.unwrap_or(0))
                .bind(event.try_get::<i64, _>("sensitive")?)
                .bind(now)
                .fetch_all(&mut *tx)
                .await?;
            for webhook in &recipients {
                let wanted: Vec<String> =
                    serde_json::from_str(&webhook.try_get::<String, _>("event_types")?)
                        .unwrap_or_default();
                if !wanted.contains(&kind) {
                    continue;
                }
                let body = envelope(event, &kind, &webhook.try_get::<String, _>("team_uuid")?)?;
                let created = sqlx::query(
                    "INSERT INTO webhook_deliveries
                       (uuid, webhook_id, event_seq, subject, body, next_attempt_at, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $6)
                     ON CONFLICT (webhook_id, event_seq) DO NOTHING",
                )
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(webhook.try_get::<i64, _>("id")?)
                .bind(seq)
                .bind(&subject)
                .bind(body)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                done.deliveries += created.rows_affected();
            }
            done.event_types.push(kind);
            last = last.max(seq);
        }
        if last != cursor {
            sqlx::query("UPDATE webhook_dispatcher SET last_seq = $1 WHERE id = 1")
                .bind(last)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(Some(done))
    }
}

/// The body every delivery of `event` to `team_uuid` sends (docs/events.md), fixed once.
fn envelope(event: &sqlx::any::AnyRow, kind: &str, team_uuid: &str) -> Result<String> {
    let data: Value =
        serde_json::from_str(&event.try_get::<String, _>("data")?).unwrap_or(Value::Null);
    let resource = if kind.starts_with("site.") {
        json!({"type": "site", "uuid": data.get("site_uuid")})
    } else {
        json!({"type": "charger", "uuid": data.get("charger_uuid"),
               "identity": data.get("identity")})
    };
    Ok(json!({
        "id": event.try_get::<String, _>("event_id")?,
        "type": kind,
        "version": EVENTS_VERSION,
        "timestamp": event.try_get::<String, _>("occurred_at")?,
        "team_uuid": team_uuid,
        "resource": resource,
        "data": data,
    })
    .to_string())
}
