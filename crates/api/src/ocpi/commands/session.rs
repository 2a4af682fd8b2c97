//! START_SESSION, STOP_SESSION and UNLOCK_CONNECTOR: a remote start, a remote stop and an
//! unlock of the charger's OCPP version, answered ACCEPTED once the action is taken.

use super::requests;
use super::target::{self, Target};
use super::{NOT_CONNECTED, accepted, new_command, rejected, take};
use crate::http::AppState;
use crate::ocpi::reply::OcpiError;
use cms_bus::ActionName;
use cms_ocpi::commands::{
    CommandResponse, CommandResponseType, CommandType, StartSession, StopSession, UnlockConnector,
};
use cms_ocpp::OcppVersion;
use cms_store::StoreError;
use cms_store::id_tags::IdTagFields;
use cms_store::ocpi::commands::NewCommand;
use cms_store::ocpi::parties::Party;

/// START_SESSION: RemoteStartTransaction (1.6) or RequestStartTransaction (2.0.1) with the
/// token's uid, which is made one of the provider's id tags first when it is not one.
pub async fn start(
    state: &AppState,
    party: &Party,
    body: StartSession,
) -> Result<CommandResponse, OcpiError> {
    let target = target::evse(state, party, &body.location_id, body.evse_uid.as_deref()).await?;
    let Target { evse, version } = match target {
        Ok(target) => target,
        Err(why) => return Ok(rejected(state, why)),
    };
    let connector = body
        .connector_id
        .as_deref()
        .map(target::connector)
        .transpose()?;
    if let Some(why) = target::tag_problem(&body.token.uid, version) {
        return Ok(rejected(state, why));
    }
    if let Err(why) = vouch_for(state, party, &body.token.uid).await? {
        return Ok(rejected(state, why));
    }
    let new = NewCommand {
        charger_id: Some(evse.charger_id),
        location_id: Some(body.location_id.clone()),
        evse_uid: body.evse_uid.clone(),
        connector_id: body.connector_id.clone(),
        authorization_reference: body.authorization_reference.clone(),
        token_uid: Some(body.token.uid.clone()),
        ..new_command(party, CommandType::StartSession, &body.response_url)
    };
    let uid = body.token.uid;
    let request = |id: i64| requests::start(version, &uid, connector, id);
    sent(state, new, &evse, request).await
}

/// STOP_SESSION: RemoteStopTransaction (1.6) or RequestStopTransaction (2.0.1) of the
/// transaction; UNKNOWN_SESSION for one that is not the party's (or none).
pub async fn stop(
    state: &AppState,
    party: &Party,
    body: StopSession,
) -> Result<CommandResponse, OcpiError> {
    let session = (state.store)
        .ocpi_command_session(party.provider_id, &body.session_id)
        .await?;
    let Some(session) = session else {
        return Ok(CommandResponse::new(
            CommandResponseType::UnknownSession,
            super::timeout(state),
            "No session of yours has this id.",
        ));
    };
    if session.stopped_at.is_some() {
        return Ok(rejected(state, "The session has ended already."));
    }
    let version = crate::control::actions::charger_version(session.ocpp_version.as_deref());
    let station_id = session.station_transaction_id.as_deref();
    let Some((action, request)) = requests::stop(version, session.ocpp_transaction_id, station_id)
    else {
        return Ok(rejected(state, "The station never named this transaction."));
    };
    let new = NewCommand {
        charger_id: Some(session.charger_id),
        session_id: Some(body.session_id.clone()),
        ..new_command(party, CommandType::StopSession, &body.response_url)
    };
    let taken = take(state, new, (session.charger_id, &session.identity), |_| {
        (action, request)
    })
    .await?;
    Ok(answer(state, taken))
}

/// UNLOCK_CONNECTOR: UnlockConnector of the connector (1.6), or of the EVSE's connector
/// (2.0.1: the connector within it that its newest StatusNotification named, else 1).
pub async fn unlock(
    state: &AppState,
    party: &Party,
    body: UnlockConnector,
) -> Result<CommandResponse, OcpiError> {
    let target = target::evse(state, party, &body.location_id, Some(&body.evse_uid)).await?;
    let Target { evse, version } = match target {
        Ok(target) => target,
        Err(why) => return Ok(rejected(state, why)),
    };
    let connector = target::connector(&body.connector_id)?;
    // A 2.0.1 EVSE's connector: the one its newest StatusNotification named, else 1.
    let within = match version {
        OcppVersion::V16 => 1,
        OcppVersion::V201 => (state.store)
            .ocpi_evse_connector(evse.charger_id, connector)
            .await?
            .unwrap_or(1),
    };
    let (action, request) = requests::unlock(version, connector, within);
    let new = NewCommand {
        charger_id: Some(evse.charger_id),
        location_id: Some(body.location_id.clone()),
        evse_uid: Some(body.evse_uid.clone()),
        connector_id: Some(body.connector_id.clone()),
        ..new_command(party, CommandType::UnlockConnector, &body.response_url)
    };
    sent(state, new, &evse, |_| (action, request)).await
}

/// Takes the command's action on `evse` and answers: ACCEPTED, or REJECTED when the charger
/// is not connected. Nothing here waits for the action's end (its event does).
async fn sent(
    state: &AppState,
    new: NewCommand,
    evse: &cms_store::ocpi::commands::Evse,
    request: impl FnOnce(i64) -> (ActionName, serde_json::Value),
) -> Result<CommandResponse, OcpiError> {
    let taken = take(state, new, (evse.charger_id, &evse.identity), request).await?;
    Ok(answer(state, taken))
}

fn answer(state: &AppState, taken: Option<super::Taken>) -> CommandResponse {
    match taken {
        Some(taken) => {
            // No one waits here: the report is dropped, and the event pushes the result.
            state.dispatch.stop_waiting(&taken.uuid);
            accepted(state)
        }
        None => rejected(state, NOT_CONNECTED),
    }
}

/// Makes `uid` one of the provider's id tags (Accepted) when it is not one in any case, so
/// that the charger's authorisation of the remote start accepts it at an `id_tags` site: the
/// eMSP vouches for the tokens it sends in commands (2.2.1 "StartSession": the CPO shall not
/// check them). A tag the provider has is left as its tokens made it. In `cms up`, the
/// gateway has read the change before the call is sent. `Ok(Err(why))` when it cannot be
/// made (the provider's tags are at their quota).
pub async fn vouch_for(
    state: &AppState,
    party: &Party,
    uid: &str,
) -> Result<Result<(), String>, OcpiError> {
    let store = &state.store;
    let provider = (store.provider(party.team_id, &party.provider_uuid).await?)
        .ok_or_else(|| OcpiError::server("The party's provider is gone."))?;
    if store.id_tag(provider.id_tag_team_id, uid).await?.is_some() {
        return Ok(Ok(()));
    }
    let tag = IdTagFields {
        name: Some(format!("OCPI {} (a command's token)", party.party_id)),
        ..IdTagFields::accepted(uid)
    };
    match store.create_id_tag(provider.id_tag_team_id, &tag).await {
        // Made meanwhile by another request: there it is.
        Ok(_) | Err(StoreError::Conflict(_)) => {}
        Err(StoreError::QuotaReached(_)) => {
            let why = "The provider's id tags are at their quota: the token cannot be added.";
            return Ok(Err(why.into()));
        }
        Err(e) => return Err(e.into()),
    }
    if let Some(gateway) = state.gateway.get() {
        gateway.read_changes().await;
    }
    Ok(Ok(()))
}
