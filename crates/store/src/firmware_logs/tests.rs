//! The firmware and log upload states the materialiser keeps, on both backends.

use super::*;
use crate::StateChange;
use crate::test_support::{charger_id, store_test};

fn told(
    identity: &str,
    transfer: Transfer,
    status: &str,
    request_id: Option<i64>,
    at: &str,
) -> StateChange {
    StateChange::TransferStatus(TransferStatus {
        identity: identity.into(),
        transfer,
        status: status.into(),
        request_id,
        at: at.into(),
    })
}

const T1: &str = "2026-11-29T10:00:00.000000Z";
const T2: &str = "2026-11-29T10:01:00.000000Z";
const T3: &str = "2026-11-29T10:02:00.000000Z";

store_test!(
    a_charger_shows_its_latest_firmware_and_log_status,
    |store| {
        let cp = charger_id(&store, "CP-1").await;
        let other = charger_id(&store, "CP-2").await;
        assert_eq!(
            store.transfers(cp).await.unwrap(),
            Transfers::default(),
            "none told yet"
        );

        let firmware = |status, at| told("CP-1", Transfer::Firmware, status, Some(7), at);
        store.apply(&[firmware("Downloading", T1)]).await.unwrap();
        store.apply(&[firmware("Installed", T3)]).await.unwrap();
        // Late: an older status never replaces a newer one.
        store.apply(&[firmware("Downloaded", T2)]).await.unwrap();
        store
            .apply(&[told("CP-1", Transfer::LogUpload, "Uploading", None, T2)])
            .await
            .unwrap();

        let shown = store.transfers(cp).await.unwrap();
        let state = |status: &str, request_id, at: &str| TransferState {
            status: status.into(),
            request_id,
            updated_at: at.into(),
        };
        assert_eq!(shown.firmware, Some(state("Installed", Some(7), T3)));
        assert_eq!(shown.log_upload, Some(state("Uploading", None, T2)));
        let both = store.transfers_of(&[cp, other]).await.unwrap();
        assert_eq!(both.get(&cp), Some(&shown));
        assert_eq!(both.get(&other), None, "the other charger told nothing");

        // A charger cms does not know: nothing kept, nothing fails.
        store
            .apply(&[told("CP-NOBODY", Transfer::Firmware, "Idle", None, T1)])
            .await
            .unwrap();
    }
);
