//! Reservations sent to chargers (block H, both OCPP versions): the ReserveNow and
//! CancelReservation requests of a charger's version, what the station's answer makes of the
//! reservation, and the sweep that ends reservations whose time is up.

use crate::control::actions::Dispatch;
use cms_bus::{ActionName, ActionReport, ActionStatus};
use cms_ocpp::OcppVersion;
use cms_store::Store;
use cms_store::reservations::Reservation;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the sweep looks for reservations past their time.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// The id token type of a 2.0.1 reservation: cms's id tags are the central system's own
/// tokens, whatever the card (docs/decisions.md).
pub const ID_TOKEN_TYPE: &str = "Central";

/// The ReserveNow of `reservation` in `version`'s form. `expiry` is its time as OCPP writes it.
pub fn reserve_now(
    version: OcppVersion,
    reservation: &Reservation,
    expiry: &str,
) -> (ActionName, Value) {
    match version {
        OcppVersion::V16 => {
            let mut request = json!({
                "connectorId": reservation.connector_id,
                "expiryDate": expiry,
                "idTag": reservation.id_tag,
                "reservationId": reservation.id,
            });
            if let Some(parent) = &reservation.parent_id_tag {
                request["parentIdTag"] = json!(parent);
            }
            (ActionName::V16(cms_ocpp::v16::Command::ReserveNow), request)
        }
        _ => {
            let mut request = json!({
                "id": reservation.id,
                "expiryDateTime": expiry,
                "idToken": {"idToken": reservation.id_tag, "type": ID_TOKEN_TYPE},
            });
            // EVSE 0: any of the station's (no evseId).
            if reservation.connector_id > 0 {
                request["evseId"] = json!(reservation.connector_id);
            }
            if let Some(parent) = &reservation.parent_id_tag {
                request["groupIdToken"] = json!({"idToken": parent, "type": ID_TOKEN_TYPE});
            }
            (
                ActionName::V201(cms_ocpp::v201::Command::ReserveNow),
                request,
            )
        }
    }
}

/// The CancelReservation of reservation `id` (the same payload in both versions).
pub fn cancel(version: OcppVersion, id: i64) -> (ActionName, Value) {
    let request = json!({"reservationId": id});
    match version {
        OcppVersion::V16 => (
            ActionName::V16(cms_ocpp::v16::Command::CancelReservation),
            request,
        ),
        _ => (
            ActionName::V201(cms_ocpp::v201::Command::CancelReservation),
            request,
        ),
    }
}

/// The station's `status` in its answer to the action `report` ended; `None` when it gave no
/// answer (then `Err` with how the action ended: `failed`, `timed_out`, `expired`).
pub fn answered_status(report: &ActionReport) -> Result<String, String> {
    match (report.status, &report.response) {
        (ActionStatus::Answered, Some(response)) => {
            Ok(response["status"].as_str().unwrap_or_default().to_string())
        }
        (status, _) => Err(status.as_str().to_string()),
    }
}

/// Follows ReserveNow `uuid` to its end (until `deadline`) and keeps what the station said of
/// reservation `id`: `active` when Accepted, `refused` otherwise. Not ended by then: the
/// reservation stays `pending` until its time is up.
pub async fn follow_answer(
    dispatch: Arc<Dispatch>,
    id: i64,
    uuid: String,
    ended: tokio::sync::oneshot::Receiver<ActionReport>,
    deadline: tokio::time::Instant,
) {
    let report = match dispatch.end_of(&uuid, ended, deadline).await {
        Ok(Some(report)) => report,
        Ok(None) => return,
        Err(e) => {
            tracing::error!(error = %e, reservation = id, "cannot keep a ReserveNow's end");
            return;
        }
    };
    let (accepted, status) = match answered_status(&report) {
        Ok(status) => (status == "Accepted", status),
        Err(ended) => (false, ended),
    };
    if let Err(e) = dispatch
        .store
        .reservation_answered(id, accepted, &status)
        .await
    {
        tracing::error!(error = %e, reservation = id, "cannot keep a reservation's answer");
    }
}

/// Ends `expired` the reservations whose time is up, every few seconds until `stop`. Every
/// API process may run it: the update is conditional, so a reservation ends once.
pub async fn sweep_expired(store: Store, stop: CancellationToken) {
    while !stop.is_cancelled() {
        let now = cms_store::now_record_time();
        if let Err(e) = store.expire_reservations(&now).await {
            tracing::error!(error = %e, "cannot sweep expired reservations");
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
        }
    }
}
