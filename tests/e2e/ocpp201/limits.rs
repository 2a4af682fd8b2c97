//! The limits and rules of a session hold for 2.0.1 stations as for 1.6 chargers, on one `cms
//! up` serving both: a mixed fleet, the takeover of a reconnecting station, the frame size
//! limit, and an event of a transaction cms never saw start (answered and kept, never dropped).

use crate::support::payloads201::{meter_values, status_notification, transaction_event};
use crate::support::station201::RawStation201;
use crate::support::{Api, Charger, Cms, eventually_within};
use serde_json::json;
use std::time::Duration;

const SHOWN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_fleet_of_16_and_201_stations_is_served_by_one_cms_up() {
    let cms = Cms::up().await;
    let old = cms.add_charger("CP-MIX-16").await;
    let new = cms.add_charger("CP-MIX-201").await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let mut charger = Charger::connect_and_boot(&cms, "CP-MIX-16", "1.6.9").await;
    let mut station = RawStation201::connect(cms.ocpp_addr(), "CP-MIX-201").await;
    station.boot().await;
    let reading = json!({"connectorId": 1, "meterValue": [{"timestamp": "2026-06-03T10:00:00Z",
        "sampledValue": [{"value": "1200", "measurand": "Energy.Active.Import.Register",
        "unit": "Wh"}]}]});
    charger.call_result("MeterValues", reading).await;
    let at = "2026-06-03T10:00:00Z";
    let answer = (station.call_text(
        "StatusNotification",
        &status_notification(1, "Available", at),
    ))
    .await;
    assert_eq!(answer[0], 3, "{answer}");
    let answer = station
        .call_text("MeterValues", &meter_values(1, 3400, at))
        .await;
    assert_eq!(answer[0], 3, "{answer}");

    for (uuid, version, wh) in [(&old, "1.6", 1200.0), (&new, "2.0.1", 3400.0)] {
        api.wait_for_charger(uuid, version, |c| c["ocpp_version"] == version)
            .await;
        eventually_within(SHOWN, "the latest reading of connector 1", async || {
            let answer = api.latest_meter_value(uuid, 1).await;
            let value = &answer.json["meterValue"][0]["sampledValue"][0]["value"];
            let read = value.as_str().and_then(|v| v.parse::<f64>().ok());
            match answer.status == 200 && read == Some(wh) {
                true => Ok(()),
                false => Err(answer.body),
            }
        })
        .await;
    }
    // Each still answered in its own version.
    charger.heartbeat().await;
    station.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_201_station_takes_over_its_old_session() {
    let cms = Cms::up().await;
    cms.add_charger("CP-201-AGAIN").await;
    let mut first = RawStation201::connect(cms.ocpp_addr(), "CP-201-AGAIN").await;
    first.boot().await;
    let mut second = RawStation201::connect(cms.ocpp_addr(), "CP-201-AGAIN").await;
    let (code, reason) = first.expect_close().await;
    assert_eq!(code, 1000, "the replaced session's close ({reason:?})");
    assert!(reason.contains("replaced"), "{reason:?}");
    second.boot().await;
    second.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_frame_over_the_size_limit_closes_with_1009() {
    let cms = Cms::up_with(&["--max-frame-size", "4096"]).await;
    cms.add_charger("CP-201-BIG").await;
    let mut station = RawStation201::connect(cms.ocpp_addr(), "CP-201-BIG").await;
    station.boot().await;
    // Under the limit is fine.
    let data = json!({"vendorId": "com.example", "data": "d".repeat(3_900)}).to_string();
    let answer = station.call_text("DataTransfer", &data).await;
    assert_eq!(answer[2]["status"], "UnknownVendorId", "{answer}");
    let oversize = format!(
        r#"[2,"big","DataTransfer",{{"vendorId":"x","data":"{}"}}]"#,
        "d".repeat(5_000)
    );
    station.send_text(&oversize).await;
    let (code, reason) = station.expect_close().await;
    assert_eq!(code, 1009, "a 5 kB frame over a 4 KiB limit ({reason:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_of_a_transaction_never_started_is_answered_and_kept() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-201-LOST").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut station = RawStation201::connect(cms.ocpp_addr(), "CP-201-LOST").await;
    station.boot().await;
    // Its Started was lost on the way (the station's queue overflowed, say).
    let at = "2026-06-04T09:10:00Z";
    let updated = transaction_event("TX-LOST-1", "Updated", 5, at, 4200);
    let answer = station.call_text("TransactionEvent", &updated).await;
    assert_eq!(
        (answer[0].clone(), answer[2].clone()),
        (json!(3), json!({}))
    );
    let path = format!("/api/v3/chargers/{uuid}/transactions");
    let kept = eventually_within(SHOWN, "the transaction of the lone event", async || {
        let page = api.get_ok(&path).await;
        let data = page["data"].as_array().cloned().unwrap_or_default();
        match data
            .into_iter()
            .find(|t| t["station_transaction_id"] == "TX-LOST-1")
        {
            Some(t) => Ok(t),
            None => Err(page.to_string()),
        }
    })
    .await;
    assert!(kept["stopped_at"].is_null(), "{kept}");
    assert_eq!(kept["connector"]["connector_id"], 1, "{kept}");
}
