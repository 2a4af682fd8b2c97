//! A mixed site balanced under one CT-meter limit (issue 45, block K): the smart-charging
//! simulation of tests/e2e/smart_charging.rs with four of its ten chargers OCPP 2.0.1 stations
//! (tests/interop/ocpp201_smart.py: the Python `ocpp` package's v201 ChargePoint, its schema
//! validation on), one of them on a 10 A connector, one among the cars that leave. The same
//! assertions as the 1.6 simulation: the limit held from the meter, equal shares, the minimum
//! or a pause, the paused served first, the fail-safe while the meter is quiet; and what the
//! 2.0.1 stations told (NotifyChargingLimit, NotifyEVChargingNeeds) shown by the API.
//!
//! Its plot is the one in docs/smart-charging.md:
//!
//! ```text
//! CMS_SMART_CHARGING_MIXED_PLOT=docs/img/smart-charging-mixed.png CARGO_INCREMENTAL=0 \
//!     cargo nextest run --locked --test e2e mixed_site
//! ```

use crate::smart_charging::simulate;

/// EV chargers 1, 4, 7 and 10 speak 2.0.1 (10 is one of the two 10 A connectors).
const V201: [usize; 4] = [1, 4, 7, 10];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_site_of_1_6_and_2_0_1_chargers_shares_one_grid_connection() {
    simulate(&V201, "CMS_SMART_CHARGING_MIXED_PLOT").await;
}

/// The limit of a 2.0.1 SetChargingProfile line's TxProfile (None for another purpose).
fn tx_limit(line: &serde_json::Value) -> Option<f64> {
    let profile = &line["payload"]["chargingProfile"];
    (line["received"] == "SetChargingProfile" && profile["chargingProfilePurpose"] == "TxProfile")
        .then(|| profile["chargingSchedule"][0]["chargingSchedulePeriod"][0]["limit"].as_f64())
        .flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_0_1_stations_external_limit_holds_its_share_until_cleared_and_its_profiles_are_shown()
{
    use super::{Bench, SHOWN, require_python_packages};
    use crate::support::eventually_within;
    use crate::support::rest::operators_site;
    use crate::support::station201::python_station;
    use serde_json::json;
    use std::time::Duration;

    require_python_packages().await;
    let bench = Bench::start("CS-SMART-1").await;
    bench.cms.license(&bench.identity, true, false).await;
    let site = operators_site(&bench.api).await;
    let settings = json!({"mode": "static", "grid_limit_amps": 20, "fail_safe_amps": 8});
    let path = format!("/api/v3/sites/{site}/smart-charging");
    bench.api.expect(200, "PUT", &path, Some(&settings)).await;
    // Its EMS holds EVSE 1 at 13 A (ocpp201_smart.py's `smart`): the share is 13, not 20.
    let mut station = python_station(&bench.url(), &bench.identity, "smart", &["--for", "60"]);
    let reaction = Duration::from_secs(20);
    station
        .wait_within(reaction, "a TxProfile of 13 A", |l| {
            tx_limit(l) == Some(13.0)
        })
        .await;

    // GetChargingProfiles through Chargers > Actions; the ReportChargingProfiles it leads to
    // is shown on the charger.
    let body = json!({"requestId": 5, "chargingProfile": {"chargingProfilePurpose": "TxProfile"}});
    let action = format!(
        "/api/v3/chargers/{}/actions/get-charging-profiles?wait=10",
        bench.uuid
    );
    let posted = bench.api.post(&action, &body).await;
    assert_eq!(posted.status, 200, "{}", posted.body);
    let limits = format!("/api/v3/chargers/{}/charging-limits", bench.uuid);
    let shown = eventually_within(SHOWN, "the reported profiles", async || {
        let shown = bench.api.get_ok(&limits).await;
        match shown["data"]["reported_profiles"].as_array() {
            Some(p) if !p.is_empty() => Ok(shown),
            _ => Err(shown.to_string()),
        }
    })
    .await;
    let reported = &shown["data"]["reported_profiles"][0];
    assert_eq!(reported["request_id"], 5, "{shown}");
    assert_eq!(reported["evse_id"], 1, "{shown}");
    assert_eq!(reported["source"], "CSO", "{shown}");
    assert_eq!(reported["charging_profile"]["id"], 1001, "{shown}");
    assert_eq!(
        reported["charging_profile"]["transactionId"],
        format!("TX-SMART-{}", bench.identity),
        "{shown}"
    );

    // The EMS lifts its limit: gone from the API, and the share rises to the site's 20 A.
    station.command("clear-limit");
    station
        .wait_within(reaction, "a TxProfile of 20 A", |l| {
            tx_limit(l) == Some(20.0)
        })
        .await;
    let shown = bench.api.get_ok(&limits).await;
    assert_eq!(shown["data"]["external_limits"], json!([]), "{shown}");
    let above: Vec<f64> = (station.lines_where("received", "SetChargingProfile").iter())
        .filter_map(tx_limit)
        .filter(|l| *l > 20.0)
        .collect();
    assert!(above.is_empty(), "{above:?}");
    station.finish(Duration::from_secs(15)).await;
}
