//! Running sessions pushed while they run (docs/ocpi.md "Sessions and CDRs"): every session
//! interval, each registered party's running session whose `kwh` or `total_cost` changed since
//! the last push is PATCHed (`kwh`, `total_cost`, `last_updated`); one the party was never told
//! of (its start pushed before the party registered, or a 2.0.1 station told its idToken only
//! later) is PUT whole. What was pushed is kept (`ocpi_session_pushes`), so a restart resends
//! nothing unchanged.

use crate::translate::sessions::{kwh_text, objects, put_session, text};
use chrono::Utc;
use cms_ocpi::sessions::Session;
use cms_store::Store;
use cms_store::ocpi::pushes::NewPush;
use serde_json::{Map, Value};

/// The session updates due now, for every registered party; what they tell is noted as
/// pushed.
pub async fn due(store: &Store) -> cms_store::Result<Vec<NewPush>> {
    store.ocpi_forget_stopped_sessions().await?;
    let running = store.ocpi_running_sessions().await?;
    if running.is_empty() {
        return Ok(Vec::new());
    }
    let parties = store.ocpi_registered_parties().await?;
    let unpriced: Vec<i64> = (running.iter())
        .map(|r| &r.session.transaction)
        .filter(|t| t.tariff.is_some() && t.cost.is_none())
        .map(|t| t.id)
        .collect();
    let readings = store.transaction_readings(&unpriced).await?;
    let now = Utc::now();
    // Pricing is CPU work: off the async workers, as the API's is.
    let sessions = tokio::task::spawn_blocking(move || {
        (running.into_iter())
            .map(|r| {
                let cost = cms_pricing::cost_of(&r.session.transaction, &readings, now);
                let session = objects::session(&r.session, &cost, &readings);
                (r, session)
            })
            .collect::<Vec<_>>()
    })
    .await;
    let sessions = match sessions {
        Ok(sessions) => sessions,
        Err(error) => {
            tracing::warn!(%error, "OCPI running sessions: the pricing failed");
            return Ok(Vec::new());
        }
    };
    let mut pushes = Vec::new();
    for (running, session) in sessions {
        let provider_id = running.session.provider_id;
        let Some(party) = parties.iter().find(|p| p.provider_id == provider_id) else {
            continue;
        };
        let kwh = kwh_text(session.kwh);
        let cost = session.total_cost.as_ref().map(text);
        let push = match running.pushed_kwh {
            None => put_session(party, &session),
            // The same address and object as the PUT: pushed in order with it.
            Some(pushed) if pushed != kwh || running.pushed_cost != cost => {
                put_session(party, &session).map(|put| NewPush {
                    method: "PATCH".into(),
                    body: Some(patch(&session)),
                    ..put
                })
            }
            Some(_) => None,
        };
        let Some(push) = push else {
            continue;
        };
        let transaction_id = running.session.transaction.id;
        store
            .ocpi_note_session_pushed(provider_id, transaction_id, &kwh, cost.as_deref())
            .await?;
        pushes.push(push);
    }
    Ok(pushes)
}

/// The PATCH body: what changes while a session runs, and when it was reckoned.
fn patch(session: &Session) -> String {
    let mut fields = Map::new();
    fields.insert("kwh".into(), session.kwh.into());
    if let Some(cost) = &session.total_cost {
        fields.insert(
            "total_cost".into(),
            serde_json::to_value(cost).unwrap_or_default(),
        );
    }
    fields.insert(
        "last_updated".into(),
        cms_ocpi::time::format(Utc::now()).into(),
    );
    Value::Object(fields).to_string()
}
