//! Abuse cases of what a charger sends: text no store can hold, connector numbers beyond any
//! charger's, and lists a charger could make long. One charger's bad record must never stop
//! another's from reaching the REST API, nor create what the API cannot show.

use crate::support::rest::create_site;
use crate::support::{Api, Charger, Cms, eventually, on_both_stores};
use serde_json::{Value, json};

fn reading(connector: u64, wh: &str) -> Value {
    json!({
        "connectorId": connector,
        "meterValue": [{
            "timestamp": "2026-11-21T10:00:00Z",
            "sampledValue": [{"value": wh, "measurand": "Energy.Active.Import.Register", "unit": "Wh"}]
        }]
    })
}

fn assert_refused(answer: &Value, code: &str, field: &str) {
    assert_eq!(answer[0], 4, "expected a CALLERROR: {answer}");
    assert_eq!(answer[2], code, "{answer}");
    let description = answer[3].as_str().unwrap_or_default();
    assert!(description.starts_with(field), "{answer}");
}

// PostgreSQL refuses NUL in text: before, one such StatusNotification stalled the store for
// every charger, retried forever. Now the gateway refuses it and the rest flows on.
on_both_stores!(a_nul_in_a_status_notification_stops_nobody_else, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    cms.add_charger("CP-NUL").await;
    let other = cms.add_charger("CP-OTHER").await;
    let mut bad = Charger::connect_and_boot(&cms, "CP-NUL", "1.0").await;
    let mut good = Charger::connect_and_boot(&cms, "CP-OTHER", "1.0").await;

    let status = json!({"connectorId": 1, "errorCode": "NoError", "status": "Available",
        "info": "tripped\u{0}"});
    let answer = bad.call("StatusNotification", status).await;
    assert_refused(&answer, "PropertyConstraintViolation", "info");
    assert!(answer[3].as_str().unwrap().contains("NUL"), "{answer}");
    bad.heartbeat().await;

    good.call_result("MeterValues", reading(1, "1234")).await;
    let expected = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[
        {"value":"1234","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}
    ]}]}"#;
    api.wait_for_latest_meter_value(&other, 1, expected).await;
    // The charger that sent the NUL goes on too, once it sends what a store can hold.
    let fixed = json!({"connectorId": 1, "errorCode": "NoError", "status": "Charging"});
    bad.call_result("StatusNotification", fixed).await;
    let bad_uuid = uuid_of(&api, "CP-NUL").await;
    eventually("CP-NUL's connector 1 Charging", async || {
        let page = api
            .get_ok(&format!("/api/v3/chargers/{bad_uuid}/connectors"))
            .await;
        match page["data"][0]["status"].as_str() {
            Some("Charging") => Ok(()),
            _ => Err(page.to_string()),
        }
    })
    .await;
});

on_both_stores!(a_connector_number_beyond_99_creates_nothing, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    cms.add_charger("CP-HUGE").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-HUGE", "1.0").await;
    for connector in [4_000_000_000_u64, 2_000_000_000, 100] {
        let status =
            json!({"connectorId": connector, "errorCode": "NoError", "status": "Available"});
        let answer = charger.call("StatusNotification", status).await;
        assert_refused(&answer, "PropertyConstraintViolation", "connectorId");
        let answer = charger.call("MeterValues", reading(connector, "1")).await;
        assert_refused(&answer, "PropertyConstraintViolation", "connectorId");
        let start = json!({"connectorId": connector, "idTag": "TAG-1", "meterStart": 0,
            "timestamp": "2026-11-21T10:00:00Z"});
        let answer = charger.call("StartTransaction", start).await;
        assert_refused(&answer, "PropertyConstraintViolation", "connectorId");
    }
    // The highest number there is still works, and is all there is once the state settles.
    let status = json!({"connectorId": 99, "errorCode": "NoError", "status": "Available"});
    charger.call_result("StatusNotification", status).await;
    let uuid = uuid_of(&api, "CP-HUGE").await;
    eventually("only connector 99", async || {
        let page = api
            .get_ok(&format!("/api/v3/chargers/{uuid}/connectors"))
            .await;
        let numbers: Vec<i64> = page["data"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c["connector_id"].as_i64())
                    .collect()
            })
            .unwrap_or_default();
        if numbers == [99] {
            Ok(())
        } else {
            Err(page.to_string())
        }
    })
    .await;
    assert_eq!(
        api.get(&format!("/api/v3/chargers/{uuid}/transactions"))
            .await
            .json["data"],
        json!([]),
        "no transaction on a refused connector"
    );
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connector_lists_are_paginated() {
    let cms = Cms::up().await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let site = create_site(&api, "Depot").await;
    let site_uuid = site["uuid"].as_str().expect("uuid");
    let uuid = cms
        .add_charger_with("CP-MANY", &["--site", site_uuid])
        .await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-MANY", "1.0").await;
    for connector in 1..=30 {
        let status =
            json!({"connectorId": connector, "errorCode": "NoError", "status": "Available"});
        charger.call_result("StatusNotification", status).await;
    }
    let path = format!("/api/v3/chargers/{uuid}/connectors");
    let first = eventually("30 connectors, on two pages", async || {
        let page = api.get_ok(&path).await;
        match page["links"]["last"].as_str() {
            Some(last) if last.ends_with("page=2") => Ok(page),
            _ => Err(page.to_string()),
        }
    })
    .await;
    assert_eq!(first["data"].as_array().map(Vec::len), Some(25), "{first}");
    assert_eq!(first["meta"]["per_page"], 25);
    assert_eq!(first["links"]["next"], format!("{path}?page=2"));
    let second = api.get_ok(&format!("{path}?page=2")).await;
    let numbers: Vec<i64> = second["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["connector_id"].as_i64())
        .collect();
    assert_eq!(numbers, (26..=30).collect::<Vec<i64>>(), "{second}");
    assert_eq!(
        api.get(&format!("{path}?page=0")).await.status,
        422,
        "a page number below 1"
    );

    // The site's v2 list pages the same way.
    let teams = api
        .get_ok(&format!("/api/v3/sites/{site_uuid}/teams"))
        .await;
    let team_id = teams["data"][0]["id"]
        .as_i64()
        .expect("the owner team's id");
    let site_id = site["id"].as_i64().expect("the site's id");
    let v2 = format!("/api/v2/teams/{team_id}/sites/{site_id}/connectors");
    let page = api.get_ok(&v2).await;
    assert_eq!(page["data"].as_array().map(Vec::len), Some(25), "{page}");
    assert_eq!(page["links"]["next"], format!("{v2}?page=2"), "{page}");
    let rest = api.get_ok(&format!("{v2}?page=2")).await;
    assert_eq!(rest["data"].as_array().map(Vec::len), Some(5), "{rest}");
}

async fn uuid_of(api: &Api, identity: &str) -> String {
    let page = api.get_ok("/api/v3/chargers").await;
    page["data"]
        .as_array()
        .and_then(|list| list.iter().find(|c| c["identity"] == identity))
        .and_then(|c| c["uuid"].as_str())
        .unwrap_or_else(|| panic!("{identity} is not listed: {page}"))
        .to_string()
}
