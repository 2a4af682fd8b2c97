//! Pricing against bad timing, end to end with a real charger: a tariff edited while its
//! session's start is still on its way to the store, and a charger sending its readings
//! backwards in time (docs/tariffs.md).

use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Charger, Cms};
use crate::tariffs::{component, energy_time_flat, tariffs_path, transaction_when};
use serde_json::{Value, json};

/// A Charger on the operators' site, priced with `tariff`; its uuid, the API and the charger.
async fn priced_charger(cms: &Cms, identity: &str, tariff: &Value) -> (String, Api, String) {
    let api = Api::new(cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let uuid = cms.add_charger(identity).await;
    let tariff = create_tariff(&api, &team, tariff).await;
    let site = format!("/api/v3/sites/{}", operators_site(&api).await);
    api.expect(200, "PUT", &site, Some(&json!({"tariff_uuid": tariff})))
        .await;
    let tariff_path = format!("{}/{tariff}", tariffs_path(&team));
    (uuid, api, tariff_path)
}

async fn start(charger: &mut Charger, meter_start: i64, at: &str) -> i64 {
    let payload = json!({"connectorId": 1, "idTag": "TAG-PRICE", "meterStart": meter_start,
        "timestamp": at});
    let answer = charger.call_result("StartTransaction", payload).await;
    assert_eq!(answer["idTagInfo"]["status"], "Accepted", "{answer}");
    answer["transactionId"].as_i64().expect("a transactionId")
}

async fn stop(charger: &mut Charger, id: i64, meter_stop: i64, at: &str) {
    let payload = json!({"transactionId": id, "meterStop": meter_stop, "timestamp": at});
    charger.call_result("StopTransaction", payload).await;
}

/// The transaction as the API shows it once it stopped and was priced.
async fn priced(api: &Api, charger: &str, id: i64) -> Value {
    transaction_when(api, charger, id, "the final cost", |t| {
        t["stopped_at"].is_string() && t["cost"]["excl_vat"].is_string()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tariff_edited_right_after_a_start_does_not_price_it() {
    let cms = Cms::up().await;
    // 0.22/kWh, 2.00/h and 0.50 a session: one hour and 10 kWh cost 4.70 excluding VAT.
    let (uuid, api, tariff) = priced_charger(&cms, "CP-EDITED", &energy_time_flat("0.22")).await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-EDITED", "1.0").await;
    // The boot's records are applied before the start: it is the first of its batch, which
    // the materialiser applies a moment after it arrives.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let id = start(&mut charger, 0, "2026-11-20T10:00:00Z").await;
    // Edited as soon as the charger has its answer, most likely before the store has the
    // start: at 0.82/kWh the same session would cost 10.70.
    let edited = api
        .expect(200, "PUT", &tariff, Some(&energy_time_flat("0.82")))
        .await;
    assert_eq!(edited["data"]["version"], 2);
    stop(&mut charger, id, 10_000, "2026-11-20T11:00:00Z").await;

    let done = priced(&api, &uuid, id).await;
    let cost = &done["cost"];
    assert_eq!(cost["excl_vat"], "4.70", "{cost}");
    assert_eq!(component(cost, "ENERGY")["excl_vat"], "2.20", "{cost}");
    assert_eq!(done["tariff_version"], 1, "{done}");
    // The next session is priced with the edited tariff.
    let id = start(&mut charger, 10_000, "2026-11-20T12:00:00Z").await;
    stop(&mut charger, id, 20_000, "2026-11-20T13:00:00Z").await;
    let done = priced(&api, &uuid, id).await;
    assert_eq!(done["cost"]["excl_vat"], "10.70", "{done}");
    assert_eq!(done["tariff_version"], 2, "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readings_sent_backwards_keep_a_row_a_minute_and_the_right_cost() {
    let cms = Cms::up().await;
    let (uuid, api, _) = priced_charger(&cms, "CP-BACKWARDS", &energy_time_flat("0.30")).await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-BACKWARDS", "1.0").await;
    let id = start(&mut charger, 0, "2026-11-20T10:00:00Z").await;
    // 3,000 readings, each a second older than the one before, from 10:50:00 down to 10:00:01
    // (51 minutes of the charger's clock), of a register that grows 10 kWh an hour.
    let ten = chrono::DateTime::parse_from_rfc3339("2026-11-20T10:00:00Z").unwrap();
    for seconds in (1..=3_000_i64).rev() {
        let at = ten + chrono::TimeDelta::seconds(seconds);
        let wh = seconds * 10_000 / 3_600;
        let payload = json!({"connectorId": 1, "transactionId": id, "meterValue": [{
            "timestamp": at.to_rfc3339(),
            "sampledValue": [{"value": wh.to_string(),
                "measurand": "Energy.Active.Import.Register", "unit": "Wh"}]}]});
        charger.call_result("MeterValues", payload).await;
    }
    stop(&mut charger, id, 10_000, "2026-11-20T11:00:00Z").await;

    // One hour, 10 kWh: 10 × 0.30 + 1 × 2.00 + 0.50 = 5.50.
    let cost = &priced(&api, &uuid, id).await["cost"];
    assert_eq!(cost["excl_vat"], "5.50", "{cost}");
    assert_eq!(component(cost, "ENERGY")["volume"], "10", "{cost}");
    // Priced from a row a minute at most, not from a row a reading.
    let store = cms.open_store().await;
    let stored = store.transaction_of("CP-BACKWARDS", id).await.unwrap();
    let kept = store
        .transaction_readings(&[stored.expect("the transaction").id])
        .await
        .unwrap();
    assert!(kept.len() <= 51, "{} rows for 51 minutes", kept.len());
}
