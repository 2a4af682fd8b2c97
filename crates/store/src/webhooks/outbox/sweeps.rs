//! Events of changes made outside the materialiser's batches: a charger registered or moved,
//! a silent gateway's sessions ended, actions no gateway reported on in time.

use super::{anyone_listens, charger_event, charger_ref, insert};
use crate::time::now_record_time;
use crate::{Backend, Result};
use serde_json::json;
use sqlx::AnyConnection;

/// The event of a charger registered (`charger.registered`) or removed (`charger.removed`),
/// written in the transaction that does it.
pub(crate) async fn charger_changed(
    db: &mut AnyConnection,
    backend: Backend,
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
    insert(db, backend, &[event]).await
}

/// The event of a charger taken offline by cms rather than by its gateway's word: its
/// gateway fell silent (`charger.offline`), written in the transaction that ends its session.
pub(crate) async fn charger_offline(
    db: &mut AnyConnection,
    backend: Backend,
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
    insert(db, backend, &[event]).await
}

/// The `action.finished` events of actions cms ended itself (expired, timed out: no gateway
/// reported on them in time), written in the transaction that ends them.
pub(crate) async fn actions_ended(
    db: &mut AnyConnection,
    backend: Backend,
    uuids: &[String],
) -> Result<()> {
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
    insert(db, backend, &events).await
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
