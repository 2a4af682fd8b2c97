//! Stopping `cms up` with a signal, and starting it again on the same data dir.

use crate::support::commanded::calls::Commands;
use crate::support::{Api, Charger, Cms, assert_recent, assert_record_time};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_chargers_with_1001_exits_zero_and_leaves_them_offline() {
    let mut cms = Cms::up().await;
    let (uuid, token, mut charger) = online(&cms, "CP-SHUTDOWN").await;

    let (status, (code, reason)) = tokio::join!(cms.terminate(), charger.expect_close());
    assert_eq!(code, 1001, "close code on shutdown (reason {reason:?})");
    assert_eq!(
        status.code(),
        Some(0),
        "exit status after SIGTERM: {status}"
    );

    let seen = offline_after_restart(&mut cms, &token, &uuid).await;
    assert_eq!(seen["firmware_version"], "5.0.1", "{seen}");
}

/// A `cms up` killed without a word (SIGKILL, a power cut) said nothing of its sessions: its
/// gateway's next start ends them, so its chargers show offline, not online for good, and an
/// action sent to one is refused as to any charger not connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_the_restart_takes_the_old_sessions_offline() {
    let mut cms = Cms::up().await;
    let (uuid, token, _charger) = online(&cms, "CP-CRASH").await;

    let status = cms.kill().await;
    assert!(!status.success(), "killed: {status}");
    offline_after_restart(&mut cms, &token, &uuid).await;
    let posted = Commands::at(&cms.http_url(""), &token)
        .post(&uuid, "reset?wait=0", Some(&json!({"type": "Soft"})))
        .await;
    assert_eq!(posted.status, 409, "{}", posted.body);
}

/// Charger `identity` added, connected and booted (firmware 5.0.1), and shown online: its uuid,
/// an operator's token, and the charger.
async fn online(cms: &Cms, identity: &str) -> (String, String, Charger) {
    let uuid = cms.add_charger(identity).await;
    let token = cms.operator_token().await;
    let charger = Charger::connect_and_boot(cms, identity, "5.0.1").await;
    Api::new(cms, &token)
        .wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;
    (uuid, token, charger)
}

/// Starts the stopped `cms` again and waits for charger `uuid` to show offline since a moment
/// ago; the charger as shown.
async fn offline_after_restart(cms: &mut Cms, token: &str, uuid: &str) -> serde_json::Value {
    cms.start().await;
    let seen = Api::new(cms, token)
        .wait_for_charger(uuid, "offline after the restart", |c| {
            c["connection_status"] == "offline"
        })
        .await;
    assert_record_time(&seen["last_disconnection_at"], "last_disconnection_at");
    assert_recent(&seen["last_disconnection_at"], "last_disconnection_at");
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_just_as_gracefully() {
    let mut cms = Cms::up().await;
    cms.add_charger("CP-CTRL-C").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-CTRL-C", "1.0.0").await;

    let (status, (code, reason)) = tokio::join!(cms.interrupt(), charger.expect_close());
    assert_eq!(code, 1001, "close code on shutdown (reason {reason:?})");
    assert_eq!(status.code(), Some(0), "exit status after SIGINT: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chargers_tokens_and_meter_values_survive_a_restart() {
    let mut cms = Cms::up().await;
    let uuid = cms
        .add_charger_with("CP-PERSIST", &["--reference", "Depot gate"])
        .await;
    let token = cms.operator_token().await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-PERSIST", "7.1.0").await;
    let reading = json!({"connectorId": 1, "meterValue": [{
        "timestamp": "2026-08-01T06:30:00+01:00",
        "sampledValue": [{"value": "88001", "unit": "Wh", "measurand": "Energy.Active.Import.Register"}],
    }]});
    charger.call_result("MeterValues", reading).await;
    let expected = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-08-01T05:30:00Z","sampledValue":[
        {"value":"88001","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}
    ]}]}"#;
    let api = Api::new(&cms, &token);
    api.wait_for_latest_meter_value(&uuid, 1, expected).await;
    let before = api
        .wait_for_charger(&uuid, "firmware 7.1.0", |c| {
            c["firmware_version"] == "7.1.0"
        })
        .await;
    charger.close().await;

    let status = cms.terminate().await;
    assert!(status.success(), "exit status after SIGTERM: {status}");
    cms.start().await;

    let api = Api::new(&cms, &token);
    let after = api
        .charger(&uuid)
        .await
        .expect("the charger is still listed after a restart");
    for key in [
        "identity",
        "reference",
        "firmware_version",
        "created_at",
        "last_connection_at",
    ] {
        assert_eq!(
            after[key], before[key],
            "{key} changed across the restart: {after}"
        );
    }
    api.wait_for_latest_meter_value(&uuid, 1, expected).await;

    // The charger is still registered with the gateway too.
    let mut charger = Charger::connect(&cms, "CP-PERSIST").await;
    charger.heartbeat().await;
}
