//! For the end-to-end suite: the events of the outbox as the OCPI dispatcher reads them, to
//! translate them into the pushes they make.

use crate::ocpi::pushes::OutboxEvent;
use crate::{Result, Store};

#[derive(sqlx::FromRow)]
struct Row {
    seq: i64,
    event_type: String,
    subject: String,
    team_id: Option<i64>,
    site_id: Option<i64>,
    charger_id: Option<i64>,
    data: String,
    occurred_at: String,
}

/// The outbox's ready events of `event_type`, oldest first.
pub async fn ready_events(store: &Store, event_type: &str) -> Result<Vec<OutboxEvent>> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT seq, type AS event_type, subject, team_id, site_id, charger_id, data, occurred_at
         FROM webhook_events WHERE type = $1 AND ready = 1 ORDER BY seq",
    )
    .bind(event_type)
    .fetch_all(store.db())
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| OutboxEvent {
            seq: r.seq,
            event_type: r.event_type,
            subject: r.subject,
            team_id: r.team_id,
            site_id: r.site_id,
            charger_id: r.charger_id,
            data: serde_json::from_str(&r.data).unwrap_or_default(),
            occurred_at: r.occurred_at,
        })
        .collect())
}
