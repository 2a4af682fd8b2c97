//! Smart charging of a 2.0.1 station as deployed at scale: a gateway and `cms api` over Kafka.
//! The Python `ocpp` package's v201 station (tests/interop/ocpp201_smart.py, scenario `smart`)
//! starts a transaction and tells an external limit and its EV's needs; the balancer, reading
//! what the materialiser took from the bus, sends it a 2.0.1 TxDefaultProfile and a TxProfile
//! for its own transaction capped at the external limit, and the API shows what it told.

use crate::support::Api;
use crate::support::broker::Broker;
use crate::support::eventually_within;
use crate::support::fleet::Fleet;
use crate::support::station201::python_station;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const IDENTITY: &str = "sc-kafka-201";
/// How long a charger added with `cms charger add` may take to reach the gateway.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
/// A limit reaches the station within a few rounds and two trips through Kafka.
const REACTION: Duration = Duration::from_secs(30);

/// The limit of a 2.0.1 SetChargingProfile's (first schedule's) first period.
fn limit_of(profile: &Value) -> Option<f64> {
    profile["chargingSchedule"][0]["chargingSchedulePeriod"][0]["limit"].as_f64()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2_0_1_station_over_kafka_is_balanced_per_evse_within_its_external_limit() {
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let added = Instant::now();
    let uuid = fleet.add_charger(IDENTITY).await;
    fleet.license(IDENTITY, true, false).await;
    fleet
        .wait_until_accepted(IDENTITY, &["gw-a"], added, REGISTRY_PROPAGATION)
        .await;
    let token = fleet.operator_token().await;
    let api = Api::at(&fleet.rest_base, &token);
    let sites = api.get_ok("/api/v3/sites").await;
    let site_uuid = sites["data"][0]["uuid"]
        .as_str()
        .expect("a site")
        .to_string();
    // 20 A for the site; the station's EMS holds its EVSE 1 at 13 A.
    let settings = format!("/api/v3/sites/{site_uuid}/smart-charging");
    let body = json!({"mode": "static", "grid_limit_amps": 20, "fail_safe_amps": 8});
    let put = api.put(&settings, &body).await;
    assert_eq!(put.status, 200, "{}", put.body);

    let url = format!("ws://{}/ocpp/{IDENTITY}", fleet.gateway("gw-a").ocpp_addr);
    let mut station = python_station(&url, IDENTITY, "smart", &["--for", "60"]);
    let default = station
        .wait_within(REACTION, "a TxDefaultProfile on EVSE 0", |l| {
            l["received"] == "SetChargingProfile"
                && l["payload"]["chargingProfile"]["chargingProfilePurpose"] == "TxDefaultProfile"
        })
        .await;
    assert_eq!(default["payload"]["evseId"], 0, "{default}");
    assert_eq!(limit_of(&default["payload"]["chargingProfile"]), Some(8.0));
    let share = station
        .wait_within(REACTION, "a TxProfile at the external limit", |l| {
            let profile = &l["payload"]["chargingProfile"];
            l["received"] == "SetChargingProfile"
                && profile["chargingProfilePurpose"] == "TxProfile"
                && limit_of(profile) == Some(13.0)
        })
        .await;
    let payload = &share["payload"];
    assert_eq!(payload["evseId"], 1, "{share}");
    let profile = &payload["chargingProfile"];
    assert_eq!(
        profile["transactionId"],
        format!("TX-SMART-{IDENTITY}"),
        "{share}"
    );
    assert_eq!(
        (&profile["id"], &profile["stackLevel"]),
        (&json!(1001), &json!(1))
    );
    assert_eq!(profile["chargingSchedule"][0]["chargingRateUnit"], "A");
    // Never more than the external limit, never the site's 20 A.
    let above: Vec<Value> = station
        .lines_where("received", "SetChargingProfile")
        .into_iter()
        .filter(|l| {
            let profile = &l["payload"]["chargingProfile"];
            profile["chargingProfilePurpose"] == "TxProfile" && limit_of(profile) != Some(13.0)
        })
        .collect();
    assert!(above.is_empty(), "{above:?}");

    // The station's word, through the bus, on its charger.
    let path = format!("/api/v3/chargers/{uuid}/charging-limits");
    let shown = eventually_within(
        REACTION,
        "the external limit and the EV's needs",
        async || {
            let shown = api.get_ok(&path).await;
            let data = &shown["data"];
            let told = data["external_limits"]
                .as_array()
                .is_some_and(|l| l.len() == 1)
                && data["ev_charging_needs"]
                    .as_array()
                    .is_some_and(|n| n.len() == 1);
            if told {
                Ok(shown)
            } else {
                Err(shown.to_string())
            }
        },
    )
    .await;
    let limit = &shown["data"]["external_limits"][0];
    assert_eq!(
        (
            &limit["evse_id"],
            &limit["source"],
            &limit["grid_critical"],
            &limit["limit_amps"]
        ),
        (&json!(1), &json!("EMS"), &json!(true), &json!(13.0)),
        "{shown}"
    );
    let needs = &shown["data"]["ev_charging_needs"][0];
    assert_eq!(
        needs["charging_needs"]["requestedEnergyTransfer"],
        "AC_three_phase"
    );
    // Someone outside the charger's teams does not see it.
    let guest = fleet.guest_token("smart-guest@example.com").await;
    let hidden = Api::at(&fleet.rest_base, &guest).get(&path).await;
    assert_eq!(hidden.status, 404, "{}", hidden.body);
    let status = api.get_ok(&format!("{settings}/status")).await;
    assert_eq!(status["data"]["state"], "balancing", "{status}");
    station.finish(Duration::from_secs(15)).await;
}
