//! The CALLRESULT each charger-initiated action gets.

use crate::support::{Charger, Cms, assert_ocpp_time, assert_recent, boot_payload};
use serde_json::json;

async fn boot_interval(cms_args: &[&str]) -> serde_json::Value {
    let cms = Cms::up_with(cms_args).await;
    cms.add_charger("CP-ANSWER-BOOT").await;
    let mut charger = Charger::connect(&cms, "CP-ANSWER-BOOT").await;
    let answer = charger
        .call_result("BootNotification", boot_payload("2.0.0"))
        .await;
    assert_eq!(answer["status"], "Accepted", "{answer}");
    assert_ocpp_time(&answer["currentTime"], "BootNotification currentTime");
    assert_recent(&answer["currentTime"], "BootNotification currentTime");
    answer["interval"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boot_is_accepted_with_the_default_heartbeat_interval() {
    assert_eq!(boot_interval(&[]).await, json!(300));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boot_gives_the_configured_heartbeat_interval_in_seconds() {
    assert_eq!(
        boot_interval(&["--heartbeat-interval", "120"]).await,
        json!(120)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_interval_accepts_minutes() {
    assert_eq!(
        boot_interval(&["--heartbeat-interval", "2m"]).await,
        json!(120)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_and_authorize_answers() {
    let cms = Cms::up().await;
    cms.add_charger("CP-ANSWER-1").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-ANSWER-1", "1.0.0").await;

    let heartbeat = charger.heartbeat().await;
    assert_ocpp_time(&heartbeat["currentTime"], "Heartbeat currentTime");
    assert_recent(&heartbeat["currentTime"], "Heartbeat currentTime");
    assert_eq!(
        heartbeat.as_object().map(|o| o.len()),
        Some(1),
        "{heartbeat}"
    );

    for id_tag in ["04A2B3C4D5E680", "UNKNOWN-CARD", "x"] {
        let answer = charger
            .call_result("Authorize", json!({"idTag": id_tag}))
            .await;
        assert_eq!(
            answer,
            json!({"idTagInfo": {"status": "Accepted"}}),
            "idTag {id_tag}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_are_acknowledged_with_an_empty_object() {
    let cms = Cms::up().await;
    cms.add_charger("CP-ANSWER-2").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-ANSWER-2", "1.0.0").await;

    let notifications = [
        (
            "StatusNotification",
            json!({"connectorId": 1, "errorCode": "NoError", "status": "Preparing"}),
        ),
        (
            "MeterValues",
            json!({"connectorId": 1, "meterValue": [{
                "timestamp": "2026-03-01T10:00:00Z",
                "sampledValue": [{"value": "10.0"}],
            }]}),
        ),
        (
            "DiagnosticsStatusNotification",
            json!({"status": "Uploaded"}),
        ),
        ("FirmwareStatusNotification", json!({"status": "Installed"})),
    ];
    for (action, payload) in notifications {
        assert_eq!(
            charger.call_result(action, payload).await,
            json!({}),
            "answer to {action}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_transfer_answers_unknown_vendor_id() {
    let cms = Cms::up().await;
    cms.add_charger("CP-ANSWER-3").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-ANSWER-3", "1.0.0").await;

    let payload = json!({"vendorId": "com.example", "messageId": "Ping", "data": "hello"});
    let answer = charger.call_result("DataTransfer", payload).await;
    assert_eq!(answer, json!({"status": "UnknownVendorId"}));
}
