//! What a charger sends shows up on the charger as the REST API lists it.

use crate::support::{Api, Charger, Cms, assert_recent, assert_record_time};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_charger_is_listed_as_never_seen() {
    let cms = Cms::up().await;
    let uuid = cms
        .add_charger_with("CP-LISTED-1", &["--reference", "Level 2 bay 14"])
        .await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let charger = api.charger(&uuid).await.expect("the new charger is listed");
    assert_eq!(charger["identity"], "CP-LISTED-1");
    assert_eq!(charger["reference"], "Level 2 bay 14");
    assert_eq!(charger["connection_status"], "never_seen", "{charger}");
    for never in [
        "last_connection_at",
        "last_disconnection_at",
        "last_heartbeat_at",
    ] {
        assert!(
            charger[never].is_null(),
            "{never} should be null before any connection: {charger}"
        );
    }
    assert_record_time(&charger["created_at"], "created_at");
    assert_recent(&charger["created_at"], "created_at");
    assert_record_time(&charger["updated_at"], "updated_at");
    for flag in ["setup_pending", "setup_completed", "blocked"] {
        assert!(
            charger[flag].is_boolean(),
            "{flag} should be a boolean: {charger}"
        );
    }
    for key in [
        "id",
        "status",
        "error",
        "error_info",
        "vendor_id",
        "vendor_error_code",
    ] {
        assert!(
            charger.get(key).is_some(),
            "charger has no {key}: {charger}"
        );
    }
    for key in ["firmware_version", "server", "max_current"] {
        assert!(
            charger.get(key).is_some(),
            "charger has no {key}: {charger}"
        );
    }
    for key in ["smart", "pro"] {
        assert!(
            charger["licenses"].get(key).is_some(),
            "licenses has no {key}: {charger}"
        );
    }
    for key in ["basic", "sensitive", "full"] {
        assert!(
            charger["permissions"].get(key).is_some(),
            "permissions has no {key}: {charger}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boot_shows_firmware_online_connection_time_and_server() {
    let cms = Cms::up_with(&["--node-id", "gw-e2e-7"]).await;
    let uuid = cms.add_charger("CP-BOOT-1").await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let _charger = Charger::connect_and_boot(&cms, "CP-BOOT-1", "3.2.1-rc4").await;

    let seen = api
        .wait_for_charger(&uuid, "firmware 3.2.1-rc4, online", |c| {
            c["firmware_version"] == "3.2.1-rc4" && c["connection_status"] == "online"
        })
        .await;
    assert_record_time(&seen["last_connection_at"], "last_connection_at");
    assert_recent(&seen["last_connection_at"], "last_connection_at");
    assert_eq!(
        seen["server"], "gw-e2e-7",
        "server should name the gateway node: {seen}"
    );
    assert!(seen["last_disconnection_at"].is_null(), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_sets_last_heartbeat_at() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-HB-1").await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let mut charger = Charger::connect_and_boot(&cms, "CP-HB-1", "1.0.0").await;
    charger.heartbeat().await;

    let seen = api
        .wait_for_charger(&uuid, "last_heartbeat_at set", |c| {
            c["last_heartbeat_at"].is_string()
        })
        .await;
    assert_record_time(&seen["last_heartbeat_at"], "last_heartbeat_at");
    assert_recent(&seen["last_heartbeat_at"], "last_heartbeat_at");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_notification_on_connector_zero_sets_the_charger_status() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-STATUS-1").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(&cms, "CP-STATUS-1", "1.0.0").await;

    let faulted = json!({
        "connectorId": 0,
        "errorCode": "GroundFailure",
        "status": "Faulted",
        "info": "RCD tripped",
        "vendorId": "com.alfen",
        "vendorErrorCode": "E-1042",
        "timestamp": "2026-01-05T08:30:00Z",
    });
    assert_eq!(
        charger.call_result("StatusNotification", faulted).await,
        json!({})
    );
    let seen = api
        .wait_for_charger(&uuid, "status Faulted", |c| c["status"] == "Faulted")
        .await;
    assert_eq!(seen["error"], "GroundFailure", "{seen}");
    assert_eq!(seen["error_info"], "RCD tripped", "{seen}");
    assert_eq!(seen["vendor_id"], "com.alfen", "{seen}");
    assert_eq!(seen["vendor_error_code"], "E-1042", "{seen}");

    // A connector's status is not the charger's status (the heartbeat marks "processed").
    let connector = json!({"connectorId": 1, "errorCode": "NoError", "status": "Charging"});
    charger.call_result("StatusNotification", connector).await;
    charger.heartbeat().await;
    let seen = api
        .wait_for_charger(&uuid, "last_heartbeat_at set", |c| {
            c["last_heartbeat_at"].is_string()
        })
        .await;
    assert_eq!(
        seen["status"], "Faulted",
        "connector 1 changed the charger status: {seen}"
    );

    let recovered = json!({"connectorId": 0, "errorCode": "NoError", "status": "Available"});
    charger.call_result("StatusNotification", recovered).await;
    let seen = api
        .wait_for_charger(&uuid, "status Available", |c| c["status"] == "Available")
        .await;
    assert_eq!(seen["error"], "NoError", "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_connection_marks_the_charger_offline() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-BYE-1").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let charger = Charger::connect_and_boot(&cms, "CP-BYE-1", "1.0.0").await;
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;

    charger.close().await;

    let seen = api
        .wait_for_charger(&uuid, "offline", |c| c["connection_status"] == "offline")
        .await;
    assert_record_time(&seen["last_disconnection_at"], "last_disconnection_at");
    assert_recent(&seen["last_disconnection_at"], "last_disconnection_at");
    let connected = seen["last_connection_at"]
        .as_str()
        .expect("last_connection_at");
    let disconnected = seen["last_disconnection_at"].as_str().unwrap();
    assert!(
        disconnected >= connected,
        "disconnected before connecting? {seen}"
    );
}
