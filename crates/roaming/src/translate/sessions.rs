//! The sessions and cdrs modules' pushes from outbox events (docs/ocpi.md "Sessions and
//! CDRs"): `transaction.started` PUTs the party's session; `transaction.ended` (told once the
//! transaction is priced) PUTs it COMPLETED, with its final cost, and POSTs its CDR. Only for
//! the party whose driver's session it is, and only to the modules the party receives.

pub mod objects;

use chrono::Utc;
use cms_ocpi::cdrs::Cdr;
use cms_ocpi::sessions::Session;
use cms_pricing::cost_of;
use cms_store::Store;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};

#[cfg(test)]
mod tests;

/// The pushes `event` makes for `party`.
pub async fn pushes(
    store: &Store,
    event: &OutboxEvent,
    party: &Party,
) -> cms_store::Result<Vec<NewPush>> {
    let ended = match event.event_type.as_str() {
        "transaction.started" => false,
        "transaction.ended" => true,
        _ => return Ok(Vec::new()),
    };
    let Some(charger_id) = event.charger_id else {
        return Ok(Vec::new());
    };
    let transaction_id = &event.data["transaction_id"];
    let Some(t) =
        (store.ocpi_session_of_event(party.provider_id, charger_id, transaction_id)).await?
    else {
        return Ok(Vec::new());
    };
    let tx = &t.transaction;
    let readings = match tx.cost.is_none() && tx.tariff.is_some() {
        true => store.transaction_readings(&[tx.id]).await?,
        false => Vec::new(),
    };
    let cost = cost_of(tx, &readings, Utc::now());
    let session = objects::session(&t, &cost, &readings);
    let mut pushes: Vec<NewPush> = put_session(party, &session).into_iter().collect();
    if ended {
        pushes.extend(objects::cdr(&t, &cost).and_then(|cdr| post_cdr(party, &cdr)));
    } else if tx.stopped_at.is_none() {
        // What the running sessions' updates start from (running_sessions.rs).
        let total_cost = session.total_cost.as_ref().map(text);
        store
            .ocpi_note_session_pushed(
                party.provider_id,
                tx.id,
                &kwh_text(session.kwh),
                total_cost.as_deref(),
            )
            .await?;
    }
    Ok(pushes)
}

/// PUT of the whole session to the party's sessions module, when it receives them.
pub fn put_session(party: &Party, session: &Session) -> Option<NewPush> {
    party.endpoint("sessions", "RECEIVER")?;
    Some(NewPush {
        provider_id: party.provider_id,
        object_key: format!("session:{}", session.id),
        module: "sessions".into(),
        method: "PUT".into(),
        path: session_path(session),
        body: Some(text(session)),
    })
}

/// POST of the CDR to the party's cdrs module (the CDR in the body), when it receives them.
pub fn post_cdr(party: &Party, cdr: &Cdr) -> Option<NewPush> {
    party.endpoint("cdrs", "RECEIVER")?;
    Some(NewPush {
        provider_id: party.provider_id,
        object_key: format!("cdr:{}", cdr.id),
        module: "cdrs".into(),
        method: "POST".into(),
        path: String::new(),
        body: Some(text(cdr)),
    })
}

/// `/{cpo country}/{cpo party}/{session id}`, after the party's sessions URL.
pub fn session_path(session: &Session) -> String {
    format!(
        "/{}/{}/{}",
        session.country_code, session.party_id, session.id
    )
}

/// `kwh` as it is kept of a push, to tell a change from none: to the Wh.
pub fn kwh_text(kwh: f64) -> String {
    format!("{kwh:.3}")
}

/// JSON text.
pub fn text(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
