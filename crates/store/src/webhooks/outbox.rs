//! The outbox: events written in the same transaction as the change that caused them, so that
//! an event is never told of a change the store does not have, nor a change kept without its
//! event. The dispatcher (cms-webhooks) fans them out to the subscriptions that should have
//! them, and the OCPI dispatcher (cms-roaming) turns them into pushes to the registered
//! parties. Nothing is written while no team has an enabled webhook nor a registered party:
//! the batches of a fleet without either pay two indexed look-ups each.
//!
//! An event's id is made from what it is about (`evt_` and a hash of its kind and key), not
//! drawn at random: a batch the materialiser applies again after a crash (the bus replays what
//! it had not committed) writes the same ids, which the outbox keeps once, so a receiver is not
//! sent the same change twice under two ids.

use crate::Result;
use crate::time::now_record_time;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::AnyConnection;

/// An event on its way into the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_id: String,
    pub event_type: &'static str,
    /// What orders its deliveries: the charger's identity.
    pub subject: String,
    pub team_id: Option<i64>,
    pub site_id: Option<i64>,
    pub charger_id: Option<i64>,
    pub sensitive: bool,
    /// `false` while it waits for what it is to tell (`webhook_events.ready`).
    pub ready: bool,
    pub data: Value,
    pub occurred_at: String,
    /// When cms learnt of it (the gateway's time of receipt of what it tells).
    pub received_at: String,
}

/// The id of the event of kind `event_type` about `key` (a charger and what tells this change
/// from its others).
pub fn event_id(event_type: &str, key: &[&str]) -> String {
    let mut hash = Sha256::new();
    hash.update(event_type.as_bytes());
    for part in key {
        hash.update([0]);
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("evt_{hex}")
}

/// A charger as its events name it.
#[derive(Debug, Clone, sqlx::FromRow)]
struct ChargerRef {
    id: i64,
    uuid: String,
    site_id: Option<i64>,
    team_id: Option<i64>,
}

/// Whether any team has an enabled webhook or a provider registered over OCPI (whose pushes
/// the OCPI dispatcher makes from these events): nothing is written otherwise.
async fn anyone_listens(db: &mut AnyConnection) -> Result<bool> {
    Ok(sqlx::query(
        "SELECT 1 WHERE EXISTS (SELECT 1 FROM webhooks WHERE enabled = 1)
           OR EXISTS (SELECT 1 FROM ocpi_parties WHERE status = 'registered')",
    )
    .fetch_optional(&mut *db)
    .await?
    .is_some())
}

async fn charger_ref(db: &mut AnyConnection, identity: &str) -> Result<Option<ChargerRef>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.uuid, c.site_id, s.team_id FROM chargers c
         LEFT JOIN sites s ON s.id = c.site_id WHERE c.identity = $1",
    )
    .bind(identity)
    .fetch_optional(&mut *db)
    .await?)
}

/// A connector's status and error as the store has them, before a change.
async fn connector_status(
    db: &mut AnyConnection,
    charger_id: i64,
    connector_id: i64,
) -> Result<Option<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT status, error FROM connectors WHERE charger_id = $1 AND connector_id = $2",
    )
    .bind(charger_id)
    .bind(connector_id)
    .fetch_optional(&mut *db)
    .await?)
}

fn charger_event(
    charger: &ChargerRef,
    identity: &str,
    event_type: &'static str,
    key: &[&str],
    occurred_at: &str,
    mut data: Value,
) -> NewEvent {
    let mut full_key = vec![identity];
    full_key.extend_from_slice(key);
    if let Value::Object(fields) = &mut data {
        fields.insert("identity".into(), identity.into());
        fields.insert("charger_uuid".into(), charger.uuid.clone().into());
    }
    NewEvent {
        event_id: event_id(event_type, &full_key),
        event_type,
        subject: identity.to_string(),
        team_id: charger.team_id,
        site_id: charger.site_id,
        charger_id: Some(charger.id),
        sensitive: false,
        ready: true,
        data,
        occurred_at: occurred_at.to_string(),
        received_at: occurred_at.to_string(),
    }
}

/// A tag the charger was told is not accepted, at a transaction's start.
fn refused(
    charger: &ChargerRef,
    identity: &str,
    id_tag: &str,
    status: &str,
    transaction_id: &str,
    at: &str,
) -> NewEvent {
    let mut event = charger_event(
        charger,
        identity,
        "id_tag.refused",
        &[transaction_id],
        at,
        json!({ "id_tag": id_tag, "status": status, "transaction_id": transaction_id }),
    );
    event.sensitive = true;
    event
}

/// Writes `events` into the outbox; one already there (a replayed batch's) is kept as it was.
pub(crate) async fn insert(db: &mut AnyConnection, events: &[NewEvent]) -> Result<()> {
    let now = now_record_time();
    for event in events {
        sqlx::query(
            "INSERT INTO webhook_events (event_id, type, subject, team_id, site_id, charger_id,
               sensitive, data, occurred_at, created_at, ready, received_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (event_id) DO NOTHING",
        )
        .bind(&event.event_id)
        .bind(event.event_type)
        .bind(&event.subject)
        .bind(event.team_id)
        .bind(event.site_id)
        .bind(event.charger_id)
        .bind(event.sensitive as i64)
        .bind(event.data.to_string())
        .bind(&event.occurred_at)
        .bind(&now)
        .bind(event.ready as i64)
        .bind(&event.received_at)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

mod batch;
mod ended;
mod sweeps;

pub(crate) use batch::Outbox;
pub use ended::Ended;
pub(crate) use sweeps::{actions_ended, charger_changed, charger_offline, site_over_limit};

#[cfg(test)]
mod tests;
