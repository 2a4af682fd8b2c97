//! RESERVE_NOW and CANCEL_RESERVATION: cms reservations (docs/actions.md, "Reservations"),
//! made and cancelled as `POST`/`DELETE /api/v3/chargers/{uuid}/reservations` do, with the
//! eMSP's reservation_id kept beside cms's own (the OCPP reservationId, unique across eMSPs).

use super::session::vouch_for;
use super::target::{self, Target};
use super::{NOT_CONNECTED, Taken, accepted, new_command, rejected, take};
use crate::control::actions::charger_version;
use crate::control::reservations::{
    answered_status, cancel as cancel_request, follow_answer, reserve_now,
};
use crate::http::AppState;
use crate::ocpi::reply::OcpiError;
use chrono::{SecondsFormat, Utc};
use cms_ocpi::commands::{CancelReservation, CommandResponse, CommandType, ReserveNow};
use cms_store::format_record_time;
use cms_store::ocpi::commands::NewCommand;
use cms_store::ocpi::parties::Party;
use cms_store::reservations::{NewReservation, Reservation};

/// How far ahead a reservation may end: as through the REST API (docs/decisions.md).
const LONGEST: chrono::Duration = chrono::Duration::hours(24);

/// RESERVE_NOW: a reservation of the EVSE (any of its connectors: connector 0) for the
/// token's uid; the same reservation_id of the party's, still in force at the same EVSE, is
/// replaced (ReserveNow again under cms's id, which the station replaces).
pub async fn reserve(
    state: &AppState,
    party: &Party,
    body: ReserveNow,
) -> Result<CommandResponse, OcpiError> {
    let target = target::evse(state, party, &body.location_id, body.evse_uid.as_deref()).await?;
    let Target { evse, version } = match target {
        Ok(target) => target,
        Err(why) => return Ok(rejected(state, why)),
    };
    let Some(expiry) = cms_ocpi::time::parse(&body.expiry_date) else {
        return Err(OcpiError::invalid("expiry_date must be an OCPI DateTime"));
    };
    let expiry = expiry - chrono::Duration::nanoseconds(expiry.timestamp_subsec_nanos().into());
    let now = Utc::now();
    if expiry <= now || expiry > now + LONGEST {
        let why = "expiry_date must be in the future, and at most 24 hours from now.";
        return Ok(rejected(state, why));
    }
    if let Some(why) = target::tag_problem(&body.token.uid, version) {
        return Ok(rejected(state, why));
    }
    if let Err(why) = vouch_for(state, party, &body.token.uid).await? {
        return Ok(rejected(state, why));
    }
    let wanted = NewReservation {
        connector_id: 0,
        id_tag: body.token.uid.clone(),
        parent_id_tag: None,
        expires_at: format_record_time(expiry),
    };
    let expiry = expiry.to_rfc3339_opts(SecondsFormat::Secs, true);
    let store = &state.store;
    let held = store
        .ocpi_reservation_in_force(party.provider_id, &body.reservation_id)
        .await?;
    let mut new = NewCommand {
        charger_id: Some(evse.charger_id),
        location_id: Some(body.location_id.clone()),
        evse_uid: body.evse_uid.clone(),
        reservation_id: Some(body.reservation_id.clone()),
        authorization_reference: body.authorization_reference.clone(),
        token_uid: Some(body.token.uid.clone()),
        ..new_command(party, CommandType::ReserveNow, &body.response_url)
    };
    let charger = (evse.charger_id, evse.identity.as_str());
    match held {
        Some(held) if held.reservation.charger_id != evse.charger_id => Ok(rejected(
            state,
            "This reservation_id is in force at another EVSE: cancel it first.",
        )),
        Some(held) => {
            // Sent before it is kept replaced: a charger not connected leaves it as it was.
            let replacement = Reservation {
                connector_id: wanted.connector_id,
                id_tag: wanted.id_tag.clone(),
                parent_id_tag: None,
                expires_at: wanted.expires_at.clone(),
                ..held.reservation
            };
            let id = replacement.id;
            new.cms_reservation_id = Some(id);
            let request = |_| reserve_now(version, &replacement, &expiry);
            let Some(taken) = take(state, new, charger, request).await? else {
                return Ok(rejected(state, NOT_CONNECTED));
            };
            if !store.ocpi_replace_reservation(id, &wanted).await? {
                tracing::warn!(reservation = id, "a reservation ended as it was replaced");
            }
            follow(state, id, taken).await?;
            Ok(accepted(state))
        }
        None => {
            let reservation = store.add_reservation(evse.charger_id, &wanted).await?;
            let id = reservation.id;
            new.cms_reservation_id = Some(id);
            let request = |_| reserve_now(version, &reservation, &expiry);
            let Some(taken) = take(state, new, charger, request).await? else {
                store.forget_reservation(id).await?;
                return Ok(rejected(state, NOT_CONNECTED));
            };
            follow(state, id, taken).await?;
            Ok(accepted(state))
        }
    }
}

/// Notes the ReserveNow that carries reservation `id`, and follows it to the station's
/// answer (the reservation `active` or `refused`), as the REST API does.
async fn follow(state: &AppState, id: i64, taken: Taken) -> Result<(), OcpiError> {
    state.store.reservation_sent(id, &taken.uuid).await?;
    let times = state.dispatch.times;
    let until = tokio::time::Instant::now() + times.ttl + times.timeout * 2;
    let dispatch = state.dispatch.clone();
    tokio::spawn(follow_answer(dispatch, id, taken.uuid, taken.ended, until));
    Ok(())
}

/// CANCEL_RESERVATION: CancelReservation of the reservation the party's RESERVE_NOW made;
/// once the station accepts, the reservation is `cancelled`. One not in force (never made,
/// ended, another party's) is REJECTED: nothing is sent.
pub async fn cancel(
    state: &AppState,
    party: &Party,
    body: CancelReservation,
) -> Result<CommandResponse, OcpiError> {
    let held = (state.store)
        .ocpi_reservation_in_force(party.provider_id, &body.reservation_id)
        .await?;
    let Some(held) = held else {
        return Ok(rejected(
            state,
            "No reservation of yours with this reservation_id is in force.",
        ));
    };
    let reservation = held.reservation;
    let (action, request) = cancel_request(
        charger_version(held.ocpp_version.as_deref()),
        reservation.id,
    );
    let new = NewCommand {
        charger_id: Some(reservation.charger_id),
        reservation_id: Some(body.reservation_id.clone()),
        cms_reservation_id: Some(reservation.id),
        ..new_command(party, CommandType::CancelReservation, &body.response_url)
    };
    let charger = (reservation.charger_id, held.identity.as_str());
    let Some(taken) = take(state, new, charger, |_| (action, request)).await? else {
        return Ok(rejected(state, NOT_CONNECTED));
    };
    let times = state.dispatch.times;
    let until = tokio::time::Instant::now() + times.ttl + times.timeout * 2;
    let dispatch = state.dispatch.clone();
    tokio::spawn(async move {
        let report = match dispatch.end_of(&taken.uuid, taken.ended, until).await {
            Ok(Some(report)) => report,
            Ok(None) => return,
            Err(e) => {
                tracing::error!(error = %e, "cannot keep a CancelReservation's end");
                return;
            }
        };
        if answered_status(&report).is_ok_and(|status| status == "Accepted") {
            let ended = (dispatch.store)
                .end_reservation(reservation.charger_id, reservation.id, "cancelled")
                .await;
            if let Err(e) = ended {
                tracing::error!(error = %e, "cannot keep a reservation cancelled");
            }
        }
    });
    Ok(accepted(state))
}
