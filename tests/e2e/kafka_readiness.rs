//! Ready means caught up with the bus (docs/operations.md "Probes and metrics"): a `cms api`
//! answers /readyz 200 only once its consumer has its partitions and has read what they held
//! when it started, so that what it serves from then on is as fresh as the bus, and a charger
//! booting after every process said ready is seen connected by it (not refused commands with
//! 409 while its consumer group is still forming).

use crate::support::broker::Broker;
use crate::support::fleet::{Fleet, wait_ready_at};
use crate::support::station::Station;
use crate::support::{Api, eventually_within};
use serde_json::json;
use std::time::{Duration, Instant};

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
const BOOT: &str = r#"{"chargePointVendor":"Alfen BV","chargePointModel":"NG920-61001"}"#;

fn status(connector: u32, status: &str) -> String {
    format!(r#"{{"connectorId":{connector},"errorCode":"NoError","status":"{status}"}}"#)
}

/// Connector 1's status as `api` shows it, if listed.
async fn connector_status(api: &Api, uuid: &str) -> Option<String> {
    let listed = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/connectors"))
        .await;
    let connectors = listed["data"].as_array()?;
    let first = connectors.iter().find(|c| c["connector_id"] == 1)?;
    first["status"].as_str().map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_an_api_is_ready_once_it_has_read_its_topics_and_sees_a_boot_after() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let added = Instant::now();
    let backlogged = fleet.add_charger("KR-1").await;
    let booting = fleet.add_charger("KR-2").await;
    for identity in ["KR-1", "KR-2"] {
        fleet
            .wait_until_accepted(identity, &["gw-a"], added, REGISTRY_PROPAGATION)
            .await;
    }
    let gateway = fleet.gateway("gw-a").ocpp_addr.clone();
    let mut station = Station::connect(&gateway, "KR-1", "r1")
        .await
        .unwrap_or_else(|e| panic!("KR-1 could not connect: {e:?}"));
    station.call_ok("BootNotification", BOOT).await;
    station
        .call_ok("StatusNotification", &status(1, "Available"))
        .await;
    let first = fleet.rest().await;
    eventually_within(
        API_LAG,
        "KR-1's connector 1 Available",
        async || match connector_status(&first, &backlogged).await.as_deref() {
            Some("Available") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    )
    .await;

    // The API stops (leaving its group); what the charger sends meanwhile waits in the topics.
    fleet.api.terminate().await;
    station
        .call_ok("StatusNotification", &status(1, "Preparing"))
        .await;
    station
        .call_ok("StatusNotification", &status(1, "Charging"))
        .await;

    // A new API on the same group: unready until it has read those records, then ready with
    // them in what it serves.
    let token = fleet.operator_token().await;
    let replica = fleet.add_api_replica().await;
    let unready = wait_ready_at("the new cms api", &replica).await;
    let on_replica = Api::at(&replica, &token);
    let shown = connector_status(&on_replica, &backlogged).await;
    assert_eq!(
        shown.as_deref(),
        Some("Charging"),
        "the API answered /readyz 200 (after {unready} answers 503) before it had read the \
         records its topics held"
    );
    assert!(
        unready > 0,
        "the API answered /readyz 200 at once, before its consumer could have its partitions"
    );

    // Every process is ready: a charger booting now is seen connected by the replica, which
    // then takes an action for it (no 409 "not connected").
    wait_ready_at("gw-a", &fleet.gateway("gw-a").ops_base).await;
    let mut second = Station::connect(&gateway, "KR-2", "r2")
        .await
        .unwrap_or_else(|e| panic!("KR-2 could not connect: {e:?}"));
    let booted = second.call_ok("BootNotification", BOOT).await;
    let answered = booted.answered_at.expect("answered");
    on_replica
        .wait_for_charger_within(&booting, "online", API_LAG, |c| {
            c["connection_status"] == "online"
        })
        .await;
    eprintln!(
        "KR-2 seen online by the replica {:?} after its boot was answered",
        answered.elapsed().unwrap_or_default()
    );
    let reset = format!("/api/v3/chargers/{booting}/actions/reset?wait=0");
    let taken = on_replica.post(&reset, &json!({"type": "Soft"})).await;
    assert!(
        (200..300).contains(&taken.status),
        "the replica refused an action to a charger it shows online: {} {}",
        taken.status,
        taken.body
    );
    second.close().await;
    station.close().await;
}

/// The figure of docs/performance.md "Readiness and the bus": a gateway and two `cms api`
/// replicas on the test broker; once every process answers /readyz 200, chargers boot one
/// after another and each replica is polled until it shows the charger online. Prints p50,
/// p99 and the worst of the time from the BootNotification's answer to "online", per replica.
/// Run by hand: `CMS_MEASURE_CHARGERS=100 cargo nextest run -p cms --test e2e --run-ignored
/// only -E 'test(/measure_kafka_connection_seen/)' --no-capture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn measure_kafka_connection_seen_by_every_replica() {
    let chargers: usize = std::env::var("CMS_MEASURE_CHARGERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let replica = fleet.add_api_replica().await;
    let identities: Vec<String> = (1..=chargers).map(|n| format!("KM-{n:04}")).collect();
    let uuids = fleet.import_chargers(&identities).await;
    let bases = [fleet.rest_base.clone(), replica];
    for base in &bases {
        wait_ready_at(&format!("cms api at {base}"), base).await;
    }
    wait_ready_at("gw-a", &fleet.gateway("gw-a").ops_base).await;
    let ready = Instant::now();
    let token = fleet.operator_token().await;
    let replicas: Vec<Api> = bases.iter().map(|b| Api::at(b, &token)).collect();
    let gateway = fleet.gateway("gw-a").ocpp_addr.clone();
    let last = identities.last().expect("at least one charger");
    fleet
        .wait_until_accepted(last, &["gw-a"], ready, REGISTRY_PROPAGATION)
        .await;
    let mut took: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut first_boot = None;
    let mut stations = Vec::new();
    for identity in &identities {
        let mut station = Station::connect(&gateway, identity, "m")
            .await
            .unwrap_or_else(|e| panic!("{identity} could not connect: {e:?}"));
        station.call_ok("BootNotification", BOOT).await;
        let answered = Instant::now();
        first_boot.get_or_insert(ready.elapsed());
        let path = format!("/api/v3/chargers/{}", uuids[identity]);
        let seen = replicas.iter().map(|api| seen_online(api, &path, answered));
        let seen = futures_util::future::join_all(seen).await;
        for (n, after) in seen.into_iter().enumerate() {
            took[n].push(after);
        }
        stations.push(station);
    }
    eprintln!(
        "{chargers} chargers, the first booted {:?} after every process answered /readyz 200",
        first_boot.unwrap_or_default()
    );
    for (n, in_boot_order) in took.iter().enumerate() {
        let mut sorted = in_boot_order.clone();
        sorted.sort();
        let at = |q: f64| sorted[((q * sorted.len() as f64).ceil() as usize).max(1) - 1];
        eprintln!(
            "replica {}: boot answered -> shown online: p50 {:?}, p99 {:?}, max {:?}; \
             the first five chargers: {:?}",
            n + 1,
            at(0.50),
            at(0.99),
            sorted[sorted.len() - 1],
            &in_boot_order[..in_boot_order.len().min(5)]
        );
    }
    for station in stations {
        station.close().await;
    }
}

/// Polls GET `path` (a charger) every few milliseconds until it shows the charger online;
/// how long after `since` it did.
async fn seen_online(api: &Api, path: &str, since: Instant) -> Duration {
    loop {
        let shown = api.get(path).await;
        if shown.json["data"]["connection_status"] == "online" {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < API_LAG,
            "{path} not shown online within {API_LAG:?}: {}",
            shown.body
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
