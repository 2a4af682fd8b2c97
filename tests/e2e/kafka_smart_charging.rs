//! Smart charging as deployed at scale: a gateway and two `cms api` replicas over Kafka, each
//! replica running a balancer. One acts for the site (its lease), the other sends nothing;
//! when the one acting dies without a word, the other takes the site over once the lease
//! runs out, and the charger follows its new limits (docs/smart-charging.md).

use crate::support::Api;
use crate::support::broker::Broker;
use crate::support::commanded::CommandedCharger;
use crate::support::eventually_within;
use crate::support::fleet::Fleet;
use serde_json::json;
use std::time::{Duration, Instant};

const IDENTITY: &str = "sc-kafka-1";
/// How long a charger added with `cms charger add` may take to reach the gateway.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
/// A limit reaches the charger within a few rounds and one trip through Kafka.
const REACTION: Duration = Duration::from_secs(15);
/// The lease (10 s) runs out, then the next round of the other replica takes the site.
const TAKEOVER: Duration = Duration::from_secs(30);

/// The SetChargingProfile calls the charger received, as (purpose, limit).
fn profiles(charger: &mut CommandedCharger) -> Vec<(String, f64)> {
    charger
        .received_of("SetChargingProfile")
        .iter()
        .map(|call| {
            let profile = &call["payload"]["csChargingProfiles"];
            let limit = &profile["chargingSchedule"]["chargingSchedulePeriod"][0]["limit"];
            (
                profile["chargingProfilePurpose"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                limit.as_f64().unwrap_or(-1.0),
            )
        })
        .collect()
}

async fn wait_for_profile(charger: &mut CommandedCharger, purpose: &str, limit: f64) {
    let what = format!("a {purpose} of {limit} A");
    charger
        .wait_within(TAKEOVER, &what, |line| {
            let profile = &line["payload"]["csChargingProfiles"];
            line["received"] == "SetChargingProfile"
                && profile["chargingProfilePurpose"] == purpose
                && profile["chargingSchedule"]["chargingSchedulePeriod"][0]["limit"] == json!(limit)
        })
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_replica_balances_a_site_and_another_takes_it_over_when_it_dies() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let added = Instant::now();
    fleet.add_charger(IDENTITY).await;
    fleet.license(IDENTITY, true, false).await;
    fleet
        .wait_until_accepted(IDENTITY, &["gw-a"], added, REGISTRY_PROPAGATION)
        .await;
    let token = fleet.operator_token().await;
    let api_a = Api::at(&fleet.rest_base, &token);
    let sites = api_a.get_ok("/api/v3/sites").await;
    let site_uuid = sites["data"][0]["uuid"]
        .as_str()
        .expect("a site")
        .to_string();
    let settings = format!("/api/v3/sites/{site_uuid}/smart-charging");
    let url = format!("ws://{}/ocpp/{IDENTITY}", fleet.gateway("gw-a").ocpp_addr);
    let mut charger = CommandedCharger::connect(&url, IDENTITY).await;
    let body = json!({"mode": "static", "grid_limit_amps": 20, "fail_safe_amps": 8});
    let put = api_a.put(&settings, &body).await;
    assert_eq!(put.status, 200, "{}", put.body);
    let started = charger.send("start 1 TAG-1").await;
    assert_eq!(started["idTagInfo"]["status"], "Accepted", "{started}");

    // Replica A, the only one yet, balances: the default profile, then the share.
    wait_for_profile(&mut charger, "TxDefaultProfile", 8.0).await;
    wait_for_profile(&mut charger, "TxProfile", 20.0).await;

    // Replica B comes up: it finds the site held and sends nothing of its own.
    let replica_b = fleet.add_api_replica().await;
    let api_b = Api::at(&replica_b, &token);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut sent = profiles(&mut charger);
    sent.sort_by(|a, b| a.partial_cmp(b).expect("limits are numbers"));
    assert_eq!(
        sent,
        vec![("TxDefaultProfile".into(), 8.0), ("TxProfile".into(), 20.0)],
        "one balancer sends each limit once"
    );

    // A dies without letting go. A change made through B reaches the charger once B holds
    // the site, exactly once.
    fleet.api.kill().await;
    let killed = Instant::now();
    let body = json!({"mode": "static", "grid_limit_amps": 14, "fail_safe_amps": 8});
    let put = api_b.put(&settings, &body).await;
    assert_eq!(put.status, 200, "{}", put.body);
    wait_for_profile(&mut charger, "TxProfile", 14.0).await;
    eprintln!(
        "replica B took the site over {:?} after A died",
        killed.elapsed()
    );
    let status_path = format!("{settings}/status");
    let status = eventually_within(
        REACTION,
        "the status shows the accepted limit",
        async || {
            let status = api_b.get_ok(&status_path).await;
            let connectors = status["data"]["connectors"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let accepted = connectors.iter().any(|c| {
                c["connector_id"] == 1
                    && c["limit_amps"] == json!(14.0)
                    && c["status"] == "accepted"
            });
            if accepted {
                Ok(status)
            } else {
                Err(status.to_string())
            }
        },
    )
    .await;
    assert_eq!(status["data"]["state"], "balancing", "{status}");
    assert_eq!(status["data"]["allocated_amps"], json!(14.0), "{status}");
    let sent: Vec<(String, f64)> = profiles(&mut charger);
    assert_eq!(
        sent.iter()
            .filter(|(p, l)| p == "TxProfile" && *l == 14.0)
            .count(),
        1,
        "{sent:?}"
    );
    assert!(
        sent.iter().all(|(_, l)| [8.0, 20.0, 14.0].contains(l)),
        "no other limit: {sent:?}"
    );
    charger.assert_nothing_unexpected();
}
