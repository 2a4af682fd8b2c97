//! The end of a charger's session, however it is learnt: its gateway said so (a disconnect),
//! its gateway started again, or its gateway fell silent (the sweep in `gateways`).

use crate::Result;
use sqlx::AnyConnection;

/// The end of a charger's session `session`, at `at`: what a disconnect, a gateway's start
/// and the sweep of silent gateways each do. `updated_at` is the row's new version (the REST
/// API's rows are read again when it changes), `at` unless the end is learnt later than it
/// happened. Whether it took the charger offline: a session ends once, so a replayed
/// disconnect, or two API replicas sweeping at once, end it once.
pub(crate) async fn end_session(
    db: &mut AnyConnection,
    identity: &str,
    session: &str,
    at: &str,
    updated_at: &str,
) -> Result<bool> {
    // The session's upstreams ended with it (a gateway that crashed said nothing).
    sqlx::query(
        "UPDATE proxy_servers SET connection_status = 'disconnected' WHERE charger_id =
           (SELECT id FROM chargers WHERE identity = $1 AND session = $2)",
    )
    .bind(identity)
    .bind(session)
    .execute(&mut *db)
    .await?;
    // Only the current session going away takes the charger offline: the end of a session
    // that a reconnect replaced is not a disconnection of the charger. And only while it is
    // online: the first word of a session's end stands (on PostgreSQL a second updater waits
    // for the first and then finds the charger offline).
    let ended = sqlx::query(
        "UPDATE chargers SET connection_status = 'offline', last_disconnection_at = $1,
         updated_at = $2 WHERE identity = $3 AND session = $4 AND connection_status = 'online'",
    )
    .bind(at)
    .bind(updated_at)
    .bind(identity)
    .bind(session)
    .execute(&mut *db)
    .await?;
    Ok(ended.rows_affected() > 0)
}
