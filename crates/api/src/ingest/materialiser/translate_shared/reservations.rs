//! Reservations' ends a station tells (block H): 2.0.1's ReservationStatusUpdate,
//! `reservationUpdateStatus` `Expired` or `Removed` of the reservation `reservationId`.

use cms_store::StateChange;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Update {
    reservation_id: i64,
    reservation_update_status: String,
}

/// The change a ReservationStatusUpdate makes; `None` for an unreadable payload.
pub(super) fn status_update(identity: &str, payload: &str, at: &str) -> Option<StateChange> {
    let update: Update = serde_json::from_str(payload).ok()?;
    let status = match update.reservation_update_status.as_str() {
        "Expired" => "expired",
        "Removed" => "removed",
        _ => return None,
    };
    Some(StateChange::ReservationEnded {
        identity: identity.to_string(),
        reservation_id: update.reservation_id,
        status: status.to_string(),
        at: at.to_string(),
    })
}
