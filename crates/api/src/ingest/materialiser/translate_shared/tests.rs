//! Records built by hand as the gateway publishes them (the station's payload, header `action`,
//! `ocpp_version`), for 1.6 and 2.0.1 stations, through the materialiser's translation into the
//! store: what the charger resource then shows.

use super::super::reading::ReadingUse;
use super::super::translate::translate;
use bytes::Bytes;
use chrono::Utc;
use cms_bus::{Header, Headers, Message, Record, Topics, header};
use cms_store::Store;
use cms_store::firmware_logs::{TransferState, Transfers};
use serde_json::{Value, json};
use std::borrow::Cow;

/// A record of CP-1's `action` with `payload`, received at minute `minute`, of `version`
/// (`ocpp1.6` or `ocpp2.0.1`).
fn record(topics: &Topics, version: &str, action: &str, payload: Value, minute: u32) -> Message {
    let at = format!("2026-11-29T10:{minute:02}:00.000000Z");
    Message {
        record: Record {
            topic: Cow::Owned(topics.messages.to_string()),
            key: Bytes::from_static(b"CP-1"),
            headers: Headers::from_vec(vec![
                Header::new(header::ACTION, Bytes::copy_from_slice(action.as_bytes())),
                Header::new(header::RECEIVED_AT, Bytes::from(at)),
                Header::new(
                    header::OCPP_VERSION,
                    Bytes::copy_from_slice(version.as_bytes()),
                ),
            ]),
            value: Bytes::from(payload.to_string()),
        },
        partition: 0,
        offset: 0,
    }
}

/// A SQLite store with charger CP-1; its id.
pub(super) async fn store_with_charger() -> (Store, i64, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let new = cms_store::NewCharger {
        identity: "CP-1".into(),
        ..Default::default()
    };
    let uuid = store.add_charger(&new).await.unwrap();
    let operator = store.ensure_user("op@example.com").await.unwrap();
    let charger = store
        .charger_visible_to(operator.id, &uuid)
        .await
        .unwrap()
        .unwrap();
    (store, charger.id, dir)
}

/// Translates `records` in order and applies each change; the charger's transfers after.
async fn transfers_after(records: &[Message]) -> Transfers {
    let topics = Topics::with_prefix("cms");
    let (store, id, _dir) = store_with_charger().await;
    let use_of = ReadingUse::Latest { energy: false };
    for message in records {
        let change = translate(message, &topics, use_of, Utc::now());
        let change = change.unwrap_or_else(|| panic!("no change of {:?}", message.record));
        store.apply(&[change]).await.unwrap();
    }
    store.transfers(id).await.unwrap()
}

fn state(status: &str, request_id: Option<i64>, minute: u32) -> Option<TransferState> {
    Some(TransferState {
        status: status.into(),
        request_id,
        updated_at: format!("2026-11-29T10:{minute:02}:00.000000Z"),
    })
}

#[tokio::test]
async fn a_201_station_s_firmware_and_log_notifications_are_kept() {
    let topics = Topics::with_prefix("cms");
    let v = "ocpp2.0.1";
    let shown = transfers_after(&[
        record(
            &topics,
            v,
            "FirmwareStatusNotification",
            json!({"status": "Downloading", "requestId": 41}),
            1,
        ),
        record(
            &topics,
            v,
            "FirmwareStatusNotification",
            json!({"status": "Installed", "requestId": 41}),
            2,
        ),
        record(
            &topics,
            v,
            "LogStatusNotification",
            json!({"status": "Uploading", "requestId": 9}),
            3,
        ),
        record(
            &topics,
            v,
            "LogStatusNotification",
            json!({"status": "Uploaded", "requestId": 9}),
            4,
        ),
    ])
    .await;
    assert_eq!(shown.firmware, state("Installed", Some(41), 2));
    assert_eq!(shown.log_upload, state("Uploaded", Some(9), 4));
}

#[tokio::test]
async fn a_16_charger_s_own_and_signed_notifications_are_kept() {
    let topics = Topics::with_prefix("cms");
    let v = "ocpp1.6";
    let own = transfers_after(&[
        record(
            &topics,
            v,
            "FirmwareStatusNotification",
            json!({"status": "Installing"}),
            1,
        ),
        record(
            &topics,
            v,
            "DiagnosticsStatusNotification",
            json!({"status": "Uploaded"}),
            2,
        ),
    ])
    .await;
    assert_eq!(own.firmware, state("Installing", None, 1));
    assert_eq!(own.log_upload, state("Uploaded", None, 2));

    // The security extension's, with the request they answer.
    let signed = transfers_after(&[
        record(
            &topics,
            v,
            "SignedFirmwareStatusNotification",
            json!({"status": "SignatureVerified", "requestId": 3}),
            1,
        ),
        record(
            &topics,
            v,
            "LogStatusNotification",
            json!({"status": "UploadFailure", "requestId": 4}),
            2,
        ),
    ])
    .await;
    assert_eq!(signed.firmware, state("SignatureVerified", Some(3), 1));
    assert_eq!(signed.log_upload, state("UploadFailure", Some(4), 2));
}

#[tokio::test]
async fn a_201_station_s_reservation_status_update_ends_the_reservation() {
    let topics = Topics::with_prefix("cms");
    let (store, id, _dir) = store_with_charger().await;
    let later = "2099-01-01T00:00:00.000000Z".to_string();
    let mut made = Vec::new();
    for _ in 0..2 {
        let new = cms_store::reservations::NewReservation {
            connector_id: 1,
            id_tag: "TAG".into(),
            parent_id_tag: None,
            expires_at: later.clone(),
        };
        let r = store.add_reservation(id, &new).await.unwrap();
        store
            .reservation_answered(r.id, true, "Accepted")
            .await
            .unwrap();
        made.push(r.id);
    }
    let use_of = ReadingUse::Latest { energy: false };
    for (reservation, status) in made.iter().zip(["Expired", "Removed"]) {
        let payload = json!({"reservationId": reservation, "reservationUpdateStatus": status});
        let message = record(&topics, "ocpp2.0.1", "ReservationStatusUpdate", payload, 1);
        let change = translate(&message, &topics, use_of, Utc::now()).expect("a change");
        store.apply(&[change]).await.unwrap();
    }
    let status = async |r| store.reservation(id, r).await.unwrap().unwrap().status;
    assert_eq!(status(made[0]).await, "expired");
    assert_eq!(status(made[1]).await, "removed");
}
