//! MeterValues as the REST API serves them: the newest reading of a connector, normalised.

use crate::support::{Api, Charger, Cms};
use serde_json::{Value, json};

fn meter_values(connector: u32, timestamp: &str, sampled: Value) -> Value {
    json!({
        "connectorId": connector,
        "meterValue": [{"timestamp": timestamp, "sampledValue": sampled}],
    })
}

async fn sole_charger(cms: &Cms, identity: &str) -> (Api, String, Charger) {
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(cms, identity, "1.0.0").await;
    // As real chargers do after boot: announce each connector.
    for connector in [1, 2] {
        let status =
            json!({"connectorId": connector, "errorCode": "NoError", "status": "Available"});
        charger.call_result("StatusNotification", status).await;
    }
    (api, uuid, charger)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_connector_without_readings_has_an_empty_latest_meter_value() {
    let cms = Cms::up().await;
    let (api, uuid, _charger) = sole_charger(&cms, "CP-MV-EMPTY").await;

    api.wait_for_latest_meter_value(&uuid, 1, r#"{"connectorId":1,"meterValue":[]}"#)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_phase_reading_is_normalised_to_utc_and_ocpp_defaults() {
    let cms = Cms::up().await;
    let (api, uuid, mut charger) = sole_charger(&cms, "CP-MV-1PH").await;

    let sampled = json!([
        {"value": "1234.5"},
        {"value": "7.4", "measurand": "Power.Active.Import", "unit": "kW"},
    ]);
    let reading = meter_values(1, "2026-11-21T12:00:00.250+02:00", sampled);
    assert_eq!(charger.call_result("MeterValues", reading).await, json!({}));

    let expected = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[
        {"value":"1234.5","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},
        {"value":"7.4","context":"Sample.Periodic","format":"Raw","measurand":"Power.Active.Import","location":"Outlet","unit":"kW"}
    ]}]}"#;
    api.wait_for_latest_meter_value(&uuid, 1, expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_phase_reading_keeps_its_phases() {
    let cms = Cms::up().await;
    let (api, uuid, mut charger) = sole_charger(&cms, "CP-MV-3PH").await;

    let current = |phase: &str, value: &str| {
        json!({"value": value, "context": "Sample.Clock", "measurand": "Current.Import",
               "phase": phase, "unit": "A"})
    };
    let sampled = json!([
        current("L1", "15.9"),
        current("L2", "16.1"),
        current("L3", "15.7"),
        {"value": "231.4", "measurand": "Voltage", "phase": "L1-N", "location": "Inlet", "unit": "V"},
        {"value": "0.5", "format": "SignedData", "measurand": "Energy.Active.Import.Register",
         "unit": "kWh", "context": "Transaction.Begin"},
    ]);
    let reading = meter_values(2, "2026-11-21T03:00:00-05:00", sampled);
    charger.call_result("MeterValues", reading).await;

    let expected = r#"{"connectorId":2,"meterValue":[{"timestamp":"2026-11-21T08:00:00Z","sampledValue":[
        {"value":"15.9","context":"Sample.Clock","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"},
        {"value":"16.1","context":"Sample.Clock","format":"Raw","measurand":"Current.Import","phase":"L2","location":"Outlet","unit":"A"},
        {"value":"15.7","context":"Sample.Clock","format":"Raw","measurand":"Current.Import","phase":"L3","location":"Outlet","unit":"A"},
        {"value":"231.4","context":"Sample.Periodic","format":"Raw","measurand":"Voltage","phase":"L1-N","location":"Inlet","unit":"V"},
        {"value":"0.5","context":"Transaction.Begin","format":"SignedData","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"kWh"}
    ]}]}"#;
    api.wait_for_latest_meter_value(&uuid, 2, expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_reading_sent_late_does_not_replace_a_newer_one() {
    let cms = Cms::up().await;
    let (api, uuid, mut charger) = sole_charger(&cms, "CP-MV-ORDER").await;
    let energy = |wh: &str| json!([{"value": wh}]);
    let expect = |timestamp: &str, wh: &str| {
        format!(
            r#"{{"connectorId":1,"meterValue":[{{"timestamp":"{timestamp}","sampledValue":[{{"value":"{wh}","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}}]}}]}}"#
        )
    };

    charger
        .call_result(
            "MeterValues",
            meter_values(1, "2026-05-01T10:05:00Z", energy("2000")),
        )
        .await;
    api.wait_for_latest_meter_value(&uuid, 1, &expect("2026-05-01T10:05:00Z", "2000"))
        .await;

    // Sent later, sampled earlier (e.g. a charger replaying its offline queue) ...
    let stale = meter_values(1, "2026-05-01T11:00:00+02:00", energy("1500"));
    charger.call_result("MeterValues", stale).await;
    // ... then a reading on another connector, to know the stale one has been consumed.
    charger
        .call_result(
            "MeterValues",
            meter_values(2, "2026-05-01T10:06:00Z", energy("9")),
        )
        .await;
    api.wait_for_latest_meter_value(
        &uuid,
        2,
        &expect("2026-05-01T10:06:00Z", "9").replace(r#""connectorId":1"#, r#""connectorId":2"#),
    )
    .await;
    let answer = api.latest_meter_value(&uuid, 1).await;
    let compact: String = answer.body.split_whitespace().collect();
    assert_eq!(
        compact,
        expect("2026-05-01T10:05:00Z", "2000"),
        "the older reading replaced the newer"
    );

    // A newer reading does replace it.
    charger
        .call_result(
            "MeterValues",
            meter_values(1, "2026-05-01T10:10:00Z", energy("2100")),
        )
        .await;
    api.wait_for_latest_meter_value(&uuid, 1, &expect("2026-05-01T10:10:00Z", "2100"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_chargers_and_connectors_are_not_found() {
    let cms = Cms::up().await;
    let (api, uuid, _charger) = sole_charger(&cms, "CP-MV-404").await;
    api.wait_for_latest_meter_value(&uuid, 1, r#"{"connectorId":1,"meterValue":[]}"#)
        .await;

    let unknown_connector = api.latest_meter_value(&uuid, 7).await;
    assert_eq!(
        unknown_connector.status, 404,
        "connector 7: {}",
        unknown_connector.body
    );
    assert!(
        unknown_connector.json["message"].is_string(),
        "{}",
        unknown_connector.body
    );

    let nobody = "6f1c2a4e-0000-4000-8000-000000000000";
    let unknown_charger = api.latest_meter_value(nobody, 1).await;
    assert_eq!(
        unknown_charger.status, 404,
        "unknown charger: {}",
        unknown_charger.body
    );
    assert!(
        unknown_charger.json["message"].is_string(),
        "{}",
        unknown_charger.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pollers_are_answered_not_modified_until_the_value_changes() {
    let cms = Cms::up().await;
    let (api, uuid, mut charger) = sole_charger(&cms, "CP-MV-ETAG").await;
    let first = meter_values(1, "2026-05-01T10:00:00Z", json!([{"value": "1000"}]));
    charger.call_result("MeterValues", first).await;
    let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    api.wait_for_latest_meter_value(&uuid, 1, r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-05-01T10:00:00Z","sampledValue":[{"value":"1000","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}]}]}"#)
        .await;

    let (status, etag, body) = api.get_if_none_match(&path, None).await;
    assert_eq!(status, 200);
    let etag = etag.expect("an ETag");
    assert!(body.contains("1000"));
    let (status, again, body) = api.get_if_none_match(&path, Some(&etag)).await;
    assert_eq!((status, body.as_str()), (304, ""), "unchanged: no body");
    assert_eq!(again.as_deref(), Some(etag.as_str()));

    // A new reading: a new tag, and the poller gets it.
    let second = meter_values(1, "2026-05-01T10:01:00Z", json!([{"value": "1200"}]));
    charger.call_result("MeterValues", second).await;
    crate::support::eventually("the new reading", async || {
        match api.get_if_none_match(&path, Some(&etag)).await {
            (200, Some(new), body) if new != etag && body.contains("1200") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    // The charger itself, likewise.
    let charger_path = format!("/api/v3/chargers/{uuid}");
    let (status, tag, _) = api.get_if_none_match(&charger_path, None).await;
    assert_eq!(status, 200);
    let (status, _, body) = api.get_if_none_match(&charger_path, tag.as_deref()).await;
    assert_eq!((status, body.as_str()), (304, ""));
}
