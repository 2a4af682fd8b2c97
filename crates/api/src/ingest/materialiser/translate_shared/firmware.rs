//! Firmware updates' and log uploads' progress (blocks L and N): 2.0.1 FirmwareStatusNotification
//! and LogStatusNotification, 1.6's own FirmwareStatusNotification and
//! DiagnosticsStatusNotification, and the 1.6 security extension's
//! SignedFirmwareStatusNotification and LogStatusNotification. All read `status` and, but for
//! 1.6's own two, an optional `requestId`.

use cms_store::StateChange;
use cms_store::firmware_logs::{Transfer, TransferStatus};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Told {
    status: String,
    request_id: Option<i64>,
}

/// The change a status notification of `transfer` makes; `None` for an unreadable payload.
pub(super) fn status_change(
    identity: &str,
    transfer: Transfer,
    payload: &str,
    at: &str,
) -> Option<StateChange> {
    let told: Told = serde_json::from_str(payload).ok()?;
    Some(StateChange::TransferStatus(TransferStatus {
        identity: identity.to_string(),
        transfer,
        status: told.status,
        request_id: told.request_id,
        at: at.to_string(),
    }))
}
