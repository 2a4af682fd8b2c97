//! Webhooks as deployed at scale: a gateway and two `cms api` replicas over Kafka, each running
//! a dispatcher. One delivers at a time (the lease in the store): every event reaches the
//! receiver once, never from both (docs/events.md).

use crate::support::broker::Broker;
use crate::support::commanded::CommandedCharger;
use crate::support::eventually_within;
use crate::support::fleet::Fleet;
use crate::support::rest::{team_of_type, uuid_of};
use crate::support::webhook_receiver::Receiver;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const IDENTITY: &str = "wh-kafka-1";
/// How long a charger added with `cms charger add` may take to reach the gateway.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
/// An event through Kafka, the materialiser, a second of settling and a delivery.
const DELIVERED: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn kafka_two_api_replicas_deliver_each_event_once() {
    let broker = Broker::shared().await;
    let api_args = ["--webhook-allow-private", "--webhook-retry-delays", "1s,1s"];
    let mut fleet = Fleet::start_with_api(&broker.brokers, &["gw-a"], &[], &api_args).await;
    fleet.add_api_replica().await;
    let receiver = Receiver::start(&[]);
    let api = fleet.rest().await;
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let types = [
        "charger.connected",
        "charger.disconnected",
        "charger.booted",
    ];
    let body = json!({"url": receiver.url(), "event_types": types});
    let created = api
        .expect(
            201,
            "POST",
            &format!("/api/v3/teams/{team}/webhooks"),
            Some(&body),
        )
        .await;
    receiver.know_secret(created["data"]["secret"].as_str().expect("a secret"));

    let added = Instant::now();
    fleet.add_charger(IDENTITY).await;
    fleet
        .wait_until_accepted(IDENTITY, &["gw-a"], added, REGISTRY_PROPAGATION)
        .await;
    let url = format!("ws://{}/ocpp/{IDENTITY}", fleet.gateway("gw-a").ocpp_addr);
    let mut charger = CommandedCharger::connect(&url, IDENTITY).await;
    charger.disconnect().await;
    charger.connect_to(&url).await;

    eventually_within(DELIVERED, "two sessions' events", async || {
        let got = receiver.received();
        let connected = (got.iter())
            .filter(|r| r["type"] == "charger.connected")
            .count();
        match connected >= 2 {
            true => Ok(()),
            false => Err(format!("{got:#?}")),
        }
    })
    .await;
    // Time for a second dispatcher, were there one, to send them again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = receiver.received();
    let mut times: BTreeMap<&str, usize> = BTreeMap::new();
    for request in &got {
        assert_eq!(request["verified"], true, "{request}");
        *times
            .entry(request["webhook_id"].as_str().unwrap_or(""))
            .or_default() += 1;
    }
    assert!(
        times.values().all(|n| *n == 1),
        "delivered twice: {times:#?}"
    );
    let types: Vec<Value> = got.iter().map(|r| r["type"].clone()).collect();
    assert_eq!(
        types,
        [
            json!("charger.connected"),
            json!("charger.booted"),
            json!("charger.disconnected"),
            json!("charger.connected"),
            json!("charger.booted")
        ],
        "{got:#?}"
    );
    charger.finish().await;
}
