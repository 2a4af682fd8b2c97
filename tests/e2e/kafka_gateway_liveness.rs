//! A gateway that dies and never comes back (a pod replaced under a new name): no disconnect
//! and no `gateway_started` will ever end its sessions. Its beacons stop, and the API takes its
//! chargers offline once it has been silent for `--gateway-timeout`; chargers on a gateway
//! still beaconing stay online.

use crate::support::broker::Broker;
use crate::support::commanded::calls::Commands;
use crate::support::fleet::Fleet;
use crate::support::station::Station;
use crate::support::{assert_record_time, eventually_within};
use serde_json::json;
use std::time::{Duration, Instant};

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
/// A silent gateway's chargers go offline within the timeout (3 s), a sweep (every half
/// timeout), a beacon interval and the consumer's lag; past this the test fails.
const OFFLINE_WITHIN: Duration = Duration::from_secs(12);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_gateway_killed_for_good_has_its_chargers_shown_offline_the_others_stay_online() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start_with_api(
        &broker.brokers,
        &["gw-dies", "gw-lives"],
        &["--gateway-beacon-interval", "1s"],
        &["--gateway-timeout", "3s"],
    )
    .await;
    let rest = fleet.rest().await;
    let mut uuids = Vec::new();
    let mut stations = Vec::new();
    for (identity, node) in [("LV-DIES", "gw-dies"), ("LV-LIVES", "gw-lives")] {
        let added = Instant::now();
        uuids.push(fleet.add_charger(identity).await);
        fleet
            .wait_until_accepted(identity, &[node], added, Duration::from_secs(10))
            .await;
        let mut station = Station::connect(&fleet.gateway(node).ocpp_addr, identity, "lv")
            .await
            .unwrap_or_else(|e| panic!("{identity} could not connect to {node}: {e:?}"));
        station.call_ok("Heartbeat", "{}").await;
        stations.push(station);
    }
    let (dies, lives) = (&uuids[0], &uuids[1]);
    for (uuid, node) in [(dies, "gw-dies"), (lives, "gw-lives")] {
        rest.wait_for_charger_within(uuid, &format!("online on {node}"), API_LAG, |c| {
            c["connection_status"] == "online" && c["server"] == node
        })
        .await;
    }

    // SIGKILL, and no gateway of that name ever again. Its charger does not reconnect.
    fleet.gateway_mut("gw-dies").process.kill().await;
    let killed = Instant::now();
    let seen = rest
        .wait_for_charger_within(
            dies,
            "offline after its gateway died",
            OFFLINE_WITHIN,
            |c| c["connection_status"] == "offline",
        )
        .await;
    eprintln!(
        "gw-dies's charger shown offline {:?} after the kill",
        killed.elapsed()
    );
    assert_record_time(&seen["last_disconnection_at"], "last_disconnection_at");
    assert_eq!(seen["server"], "gw-dies", "{seen}");

    // An action to it is refused, not taken to expire.
    let posted = Commands::at(&fleet.rest_base, &fleet.operator_token().await)
        .post(dies, "reset?wait=0", Some(&json!({"type": "Soft"})))
        .await;
    assert_eq!(posted.status, 409, "{}", posted.body);

    // The charger of the gateway still beaconing stays online, sweep after sweep.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let other = rest
        .charger(lives)
        .await
        .expect("the live gateway's charger");
    assert_eq!(other["connection_status"], "online", "{other}");
    assert_eq!(other["server"], "gw-lives", "{other}");

    // Counted once, named in the log.
    eventually_within(
        Duration::from_secs(5),
        "one session counted as ended for a silent gateway",
        async || {
            let metrics = rest.metrics().await;
            match metrics.sum("cms_api_gateway_silent_sessions_ended_total", &[]) {
                Some(1.0) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
    let log = fleet.api.log();
    let warned = log
        .lines()
        .any(|l| l.contains("gateway silent past --gateway-timeout") && l.contains("gw-dies"));
    assert!(warned, "no warning naming gw-dies in the API's log:\n{log}");
}
