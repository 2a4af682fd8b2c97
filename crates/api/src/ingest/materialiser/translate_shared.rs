//! The station calls whose payloads read alike in OCPP 1.6 (with the security whitepaper's
//! extension) and 2.0.1, translated once for both: firmware and log uploads' progress,
//! security events, certificate signing requests, reservations' ends, smart charging's
//! notifications. Pure, as translate.rs is; keyed by the action's name, the payload read with
//! serde into the few fields cms keeps (the gateway validated it against its version's schema).

mod firmware;
mod reservations;
mod security;
mod smart_charging;

use cms_store::StateChange;
use cms_store::firmware_logs::Transfer;
use serde::Deserialize;

/// What the record of `action` makes of the store: `None` when this module does not take the
/// action (the version's own translation goes on), `Some(None)` when it takes it and it
/// changes nothing (an unreadable payload), `Some(Some(change))` otherwise.
pub(super) fn message_change(
    identity: &str,
    action: &str,
    payload: &str,
    at: &str,
) -> Option<Option<StateChange>> {
    match action {
        // One arm a call (or a few of one block), each in its block's own function.
        "FirmwareStatusNotification" | "SignedFirmwareStatusNotification" => Some(
            firmware::status_change(identity, Transfer::Firmware, payload, at),
        ),
        "LogStatusNotification" | "DiagnosticsStatusNotification" => Some(firmware::status_change(
            identity,
            Transfer::LogUpload,
            payload,
            at,
        )),
        "ReservationStatusUpdate" => Some(reservations::status_update(identity, payload, at)),
        "SecurityEventNotification" => Some(security::security_event(identity, payload, at)),
        "SignCertificate" => Some(security::sign_certificate(identity, payload, at)),
        "NotifyChargingLimit"
        | "ClearedChargingLimit"
        | "NotifyEVChargingNeeds"
        | "NotifyEVChargingSchedule"
        | "ReportChargingProfiles" => Some(smart_charging::change(identity, action, payload, at)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
/// The payload as `T`; a record that does not read came from elsewhere than a gateway.
fn read<'a, T: Deserialize<'a>>(payload: &'a str) -> Option<T> {
    serde_json::from_str(payload)
        .inspect_err(|e| tracing::warn!(error = %e, "skipping an unreadable station record"))
        .ok()
}
