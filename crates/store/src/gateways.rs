//! Gateways' signs of life, and the end of the sessions a silent gateway still holds.
//!
//! A gateway that dies and never comes back (a Kubernetes pod replaced under a new name) says
//! nothing of its sessions, and no `gateway_started` of it will ever end them. So each gateway
//! beacons (`gateway_alive`), the materialiser keeps the newest beacon's time per gateway, and
//! every API process sweeps: the chargers still online on a gateway silent past the timeout go
//! offline through [`end_session`], as if their gateway had said so.

use crate::session_end::end_session;
use crate::{Result, Store, format_record_time};
use chrono::{DateTime, Utc};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// A gateway the sweep found silent, and how many chargers it took offline for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SilentGateway {
    pub node_id: String,
    /// Its last sign of life (record time form), the time its sessions were ended at.
    pub last_seen_at: String,
    pub sessions_ended: u64,
}

/// Records that gateway `server` was alive at `at`: one upsert, and only a newer time moves
/// it (records are replayed, and a beacon held back in a producer may arrive late).
pub(crate) async fn seen(db: &mut AnyConnection, server: &str, at: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO gateways (node_id, last_seen_at) VALUES ($1, $2)
         ON CONFLICT (node_id) DO UPDATE SET last_seen_at = excluded.last_seen_at
         WHERE gateways.last_seen_at < excluded.last_seen_at",
    )
    .bind(server)
    .bind(at)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// Gateway `server` was alive at `at` (a beacon): its sessions the sweep ended for a silence
/// before `at` were not over, only unheard (a partition of the bus stalled, an API replica's
/// consumer was rebalanced), and are online again. One that ended meanwhile has had its
/// disconnect forget the mark, or takes the charger offline again when it comes.
pub(crate) async fn heard_again(db: &mut AnyConnection, server: &str, at: &str) -> Result<u64> {
    // A version of its own for each row: the REST API's rows are read again when it changes.
    let updated_at = crate::now_record_time();
    let back = sqlx::query(
        "UPDATE chargers SET connection_status = 'online', silenced_at = NULL, updated_at = $1
         WHERE server = $2 AND silenced_at IS NOT NULL AND silenced_at < $3
           AND connection_status = 'offline'",
    )
    .bind(&updated_at)
    .bind(server)
    .bind(at)
    .execute(&mut *db)
    .await?;
    Ok(back.rows_affected())
}

/// Marks the session the sweep just ended for its gateway's silence (see [`heard_again`]).
async fn silenced(db: &mut AnyConnection, identity: &str, session: &str, at: &str) -> Result<()> {
    sqlx::query("UPDATE chargers SET silenced_at = $1 WHERE identity = $2 AND session = $3")
        .bind(at)
        .bind(identity)
        .bind(session)
        .execute(&mut *db)
        .await?;
    Ok(())
}

/// Forgets gateway `server`, started at `at` without beacons (an older version, after a
/// rollback under the same node id): its silence says nothing, so it must not be judged by
/// it. A beacon newer than the start keeps the row.
pub(crate) async fn forget(db: &mut AnyConnection, server: &str, at: &str) -> Result<()> {
    sqlx::query("DELETE FROM gateways WHERE node_id = $1 AND last_seen_at <= $2")
        .bind(server)
        .bind(at)
        .execute(&mut *db)
        .await?;
    Ok(())
}

/// A session still shown online on a gateway judged silent.
#[derive(sqlx::FromRow)]
struct HeldSession {
    identity: String,
    session: String,
    node_id: String,
    last_seen_at: String,
    last_connection_at: Option<String>,
}

impl HeldSession {
    /// When it ended, as far as cms can tell: its gateway's last sign of life, or its own
    /// connect when that is later (a connect is a sign of life of its gateway too). Never the
    /// sweep's clock: every replica writes the same time, in the gateways' clock like every
    /// other connection time, and the time shown is when the gateway fell silent, not when
    /// an API noticed.
    fn ended_at(&self) -> &str {
        match &self.last_connection_at {
            Some(connected) if *connected > self.last_seen_at => connected,
            _ => &self.last_seen_at,
        }
    }
}

impl Store {
    /// Ends the sessions of chargers still online on a gateway silent for longer than
    /// `timeout`; returns, per gateway, how many it ended. Every API replica may run it at
    /// once: each session is ended once ([`end_session`] ends only an online charger's
    /// current session, so a charger that reconnected elsewhere is not touched).
    ///
    /// Silence is measured against the freshest sign of life of any gateway, never later
    /// than `now`: when no gateway is heard at all (the bus is down, this API's consumer
    /// stalled or lags), that is cms not hearing, not every gateway dying, and no one is
    /// judged. Only gateways that beacon have a row, and so are judged.
    pub async fn end_sessions_of_silent_gateways(
        &self,
        now: DateTime<Utc>,
        timeout: chrono::Duration,
    ) -> Result<Vec<SilentGateway>> {
        // Most sweeps find nothing: a read, without taking SQLite's write lock.
        let mut db = self.db().lend().await?;
        let held = held_by_silent_gateways(db.connection(), now, timeout).await;
        db.ended(&held);
        drop(db);
        if held?.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        // Again inside the transaction: a beacon may have come in between.
        let held = held_by_silent_gateways(&mut tx, now, timeout).await?;
        // The rows change now, whenever the sessions ended: a version of their own, never one
        // a row already had (its connect's, say), or a reader holding the row would keep it.
        let updated_at = format_record_time(now);
        let mut ended: BTreeMap<String, SilentGateway> = BTreeMap::new();
        for held in &held {
            let (identity, session) = (&held.identity, &held.session);
            if !end_session(&mut tx, identity, session, held.ended_at(), &updated_at).await? {
                continue;
            }
            silenced(&mut tx, identity, session, held.ended_at()).await?;
            let (gateway, at) = (&held.node_id, held.ended_at());
            crate::webhooks::outbox::charger_offline(&mut tx, identity, session, gateway, at)
                .await?;
            ended
                .entry(held.node_id.clone())
                .or_insert_with(|| SilentGateway {
                    node_id: held.node_id.clone(),
                    last_seen_at: held.last_seen_at.clone(),
                    sessions_ended: 0,
                })
                .sessions_ended += 1;
        }
        tx.commit().await?;
        Ok(ended.into_values().collect())
    }
}

/// Before this time (record time form) a gateway is silent: `timeout` before the freshest
/// sign of life of any gateway, or before `now` if that is earlier. `None` when there is no
/// gateway to judge by, or the times are out of range.
async fn silence_cutoff(
    db: &mut AnyConnection,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> Result<Option<String>> {
    let freshest: Option<String> = sqlx::query_scalar("SELECT MAX(last_seen_at) FROM gateways")
        .fetch_one(&mut *db)
        .await?;
    let Some(freshest) = freshest.and_then(|t| DateTime::parse_from_rfc3339(&t).ok()) else {
        return Ok(None);
    };
    let reference = freshest.with_timezone(&Utc).min(now);
    Ok(reference
        .checked_sub_signed(timeout)
        .map(format_record_time))
}

/// The online sessions of gateways silent since before the cutoff, leaving out those
/// connected after it (that connect is a sign of life of their gateway).
async fn held_by_silent_gateways(
    db: &mut AnyConnection,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> Result<Vec<HeldSession>> {
    let Some(cutoff) = silence_cutoff(db, now, timeout).await? else {
        return Ok(Vec::new());
    };
    let held = sqlx::query_as(
        "SELECT c.identity, c.session, g.node_id, g.last_seen_at, c.last_connection_at
         FROM gateways g JOIN chargers c ON c.server = g.node_id
         WHERE g.last_seen_at < $1 AND c.connection_status = 'online'
           AND c.session IS NOT NULL
           AND (c.last_connection_at IS NULL OR c.last_connection_at < $1)",
    )
    .bind(&cutoff)
    .fetch_all(&mut *db)
    .await?;
    Ok(held)
}

#[cfg(test)]
mod tests;
