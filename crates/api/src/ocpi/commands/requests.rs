//! The OCPP calls a session's commands become, in the charger's version (a reservation's are
//! crate::control::reservations'): docs/ocpi.md "Commands" has the table.

use crate::control::reservations::ID_TOKEN_TYPE;
use cms_bus::ActionName;
use cms_ocpp::{OcppVersion, v16, v201};
use serde_json::{Value, json};

/// START_SESSION: RemoteStartTransaction `{connectorId?, idTag}` (1.6), or
/// RequestStartTransaction `{idToken: {idToken, type}, evseId?, remoteStartId}` (2.0.1: the
/// 2.0.1 station's EVSE is cms's connector; `remote_start_id` the command's row id).
pub fn start(
    version: OcppVersion,
    uid: &str,
    connector: Option<i64>,
    remote_start_id: i64,
) -> (ActionName, Value) {
    match version {
        OcppVersion::V16 => {
            let mut request = json!({"idTag": uid});
            if let Some(connector) = connector {
                request["connectorId"] = json!(connector);
            }
            let action = ActionName::V16(v16::Command::RemoteStartTransaction);
            (action, request)
        }
        OcppVersion::V201 => {
            // cms's id tags are the central system's own tokens, whatever the card (as a
            // reservation's).
            let mut request = json!({
                "idToken": {"idToken": uid, "type": ID_TOKEN_TYPE},
                "remoteStartId": remote_start_id,
            });
            if let Some(evse_id) = connector {
                request["evseId"] = json!(evse_id);
            }
            let action = ActionName::V201(v201::Command::RequestStartTransaction);
            (action, request)
        }
    }
}

/// STOP_SESSION: RemoteStopTransaction `{transactionId}` with the 1.6 transactionId, or
/// RequestStopTransaction `{transactionId}` with the 2.0.1 station's own; `None` for a 2.0.1
/// transaction whose station never named it.
pub fn stop(
    version: OcppVersion,
    ocpp_transaction_id: i64,
    station_transaction_id: Option<&str>,
) -> Option<(ActionName, Value)> {
    match version {
        OcppVersion::V16 => Some((
            ActionName::V16(v16::Command::RemoteStopTransaction),
            json!({"transactionId": ocpp_transaction_id}),
        )),
        OcppVersion::V201 => station_transaction_id.map(|id| {
            (
                ActionName::V201(v201::Command::RequestStopTransaction),
                json!({"transactionId": id}),
            )
        }),
    }
}

/// UNLOCK_CONNECTOR: UnlockConnector `{connectorId}` (1.6), or `{evseId, connectorId}`
/// (2.0.1: the EVSE is cms's connector, `within` the connector within it).
pub fn unlock(version: OcppVersion, connector: i64, within: i64) -> (ActionName, Value) {
    match version {
        OcppVersion::V16 => (
            ActionName::V16(v16::Command::UnlockConnector),
            json!({"connectorId": connector}),
        ),
        OcppVersion::V201 => (
            ActionName::V201(v201::Command::UnlockConnector),
            json!({"evseId": connector, "connectorId": within}),
        ),
    }
}

#[cfg(test)]
mod tests;
