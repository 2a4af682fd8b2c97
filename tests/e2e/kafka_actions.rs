//! Chargers > Actions as deployed at scale: two `cms gateway`s and two `cms api` replicas that
//! share nothing but a Kafka broker (commands out on `<prefix>.ocpp.commands`, results back on
//! `<prefix>.ocpp.command-results`), commanding the third-party charge point of the Python
//! `ocpp` package on one gateway or the other.

use crate::support::Api;
use crate::support::broker::Broker;
use crate::support::commanded::CommandedCharger;
use crate::support::commanded::calls::{
    Commands, assert_newest_first, assert_round_trip, json_eq, nineteen, wait_final,
};
use crate::support::eventually_within;
use crate::support::fleet::Fleet;
use serde_json::json;
use std::time::{Duration, Instant};

/// How long a charger added with `cms charger add` may take to reach every gateway.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);

/// The fleet, a charger both gateways accept, and the operator's clients of each API replica.
struct Deployment {
    fleet: Fleet,
    uuid: String,
    identity: &'static str,
    /// Replica A (the fleet's first `cms api`) and replica B.
    commands: [Commands; 2],
    apis: [Api; 2],
    // Dropped last: the processes above use it until they are gone.
    _broker: Broker,
}

impl Deployment {
    async fn start(identity: &'static str) -> Deployment {
        let broker = Broker::shared().await;
        let mut fleet = Fleet::start(&broker.brokers, &["gw-a", "gw-b"]).await;
        let replica_b = fleet.add_api_replica().await;
        let added = Instant::now();
        let uuid = fleet.add_charger(identity).await;
        fleet
            .wait_until_accepted(identity, &["gw-a", "gw-b"], added, REGISTRY_PROPAGATION)
            .await;
        let token = fleet.operator_token().await;
        let bases = [fleet.rest_base.clone(), replica_b];
        Deployment {
            commands: bases.clone().map(|base| Commands::at(&base, &token)),
            apis: bases.map(|base| Api::at(&base, &token)),
            fleet,
            uuid,
            identity,
            _broker: broker,
        }
    }

    fn url(&self, gateway: &str) -> String {
        let addr = &self.fleet.gateway(gateway).ocpp_addr;
        format!("ws://{addr}/ocpp/{}", self.identity)
    }

    /// Waits until replica A shows the charger online on `gateway`.
    async fn wait_online_on(&self, gateway: &str) {
        let what = format!("online on {gateway}");
        self.apis[0]
            .wait_for_charger_within(&self.uuid, &what, API_LAG, |c| {
                c["connection_status"] == "online" && c["server"] == gateway
            })
            .await;
    }

    /// `cms_gateway_commands_total{action}` of one gateway (0 when never counted).
    async fn commands_ended_at(&self, gateway: &str, action: &str) -> f64 {
        let ops = Api::at(&self.fleet.gateway(gateway).ops_base, "-");
        let metrics = ops.metrics().await;
        (metrics.sum("cms_gateway_commands_total", &[("action", action)])).unwrap_or(0.0)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_every_action_round_trips_through_either_api_replica() {
    let deployment = Deployment::start("KA-ALL-1").await;
    let mut charger = CommandedCharger::connect(&deployment.url("gw-a"), "KA-ALL-1").await;
    deployment.wait_online_on("gw-a").await;
    let operator = json!({"type": "user", "email": "operator@example.com"});
    let uuid = &deployment.uuid;
    // Sent through replica A and B in turn: each wakes its own waiting request.
    for (i, planned) in nineteen().iter().enumerate() {
        let commands = &deployment.commands[i % 2];
        assert_round_trip(commands, uuid, &mut charger, planned, &operator).await;
    }
    for planned in nineteen() {
        charger.assert_received_once(planned.action, &planned.request());
    }

    // Taken by replica A, followed to its end through replica B.
    let slow = json!({"vendorId": "cms.test.slow", "messageId": "across", "data": "300"});
    let (taken, location) = deployment.commands[0]
        .queue(uuid, "data-transfer", &slow)
        .await;
    let ended = wait_final(&deployment.apis[1], &location, API_LAG).await;
    assert_eq!(ended["status"], "answered", "{ended}");
    assert_eq!(ended["uuid"], taken["uuid"]);
    assert_eq!(
        ended["response"],
        json!({"status": "Accepted", "data": "300"})
    );
    charger.assert_received_once("DataTransfer", &slow);

    // Both replicas list the same audit log: the 20, then the configuration read at boot.
    let path = format!("/api/v3/chargers/{uuid}/actions");
    let mut logs = Vec::new();
    for api in &deployment.apis {
        let log = eventually_within(API_LAG, "21 ended actions", async || {
            let page = api.get_ok(&path).await;
            let data = page["data"].as_array().cloned().unwrap_or_default();
            match data.len() == 21 && data.iter().all(|a| a["finished_at"].is_string()) {
                true => Ok(page["data"].clone()),
                false => Err(page.to_string()),
            }
        })
        .await;
        logs.push(log);
    }
    assert!(
        json_eq(&logs[0], &logs[1]),
        "replica A: {}\nreplica B: {}",
        logs[0],
        logs[1]
    );
    assert_newest_first(&logs[0]);
    assert_eq!(
        logs[0][20]["requested_by"],
        json!({"type": "system", "email": null}),
        "the oldest is the configuration read at boot: {}",
        logs[0][20]
    );
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_charger_moved_to_the_other_gateway_is_commanded_there_and_only_there() {
    let deployment = Deployment::start("KA-MOVE-1").await;
    let uuid = &deployment.uuid;
    let mut charger = CommandedCharger::connect(&deployment.url("gw-a"), "KA-MOVE-1").await;
    deployment.wait_online_on("gw-a").await;
    let soft = json!({"type": "Soft"});
    let action = deployment.commands[0].send(uuid, "reset", &soft).await;
    assert_eq!(action["status"], "answered", "on gw-a: {action}");

    charger.disconnect().await;
    charger.connect_to(&deployment.url("gw-b")).await;
    deployment.wait_online_on("gw-b").await;
    let hard = json!({"type": "Hard"});
    let action = deployment.commands[1].send(uuid, "reset", &hard).await;
    assert_eq!(action["status"], "answered", "on gw-b: {action}");

    let resets: Vec<(serde_json::Value, serde_json::Value)> = charger
        .received_of("Reset")
        .into_iter()
        .map(|l| (l["payload"].clone(), l["connection"].clone()))
        .collect();
    assert_eq!(
        resets,
        [(soft, json!(1)), (hard, json!(2))],
        "each Reset once, the second on the connection to gw-b"
    );
    // Counted where they ended: gw-a never sent the second one.
    eventually_within(API_LAG, "one Reset ended at each gateway", async || {
        let ended = [
            deployment.commands_ended_at("gw-a", "Reset").await,
            deployment.commands_ended_at("gw-b", "Reset").await,
        ];
        match ended == [1.0, 1.0] {
            true => Ok(()),
            false => Err(format!("Resets ended at [gw-a, gw-b]: {ended:?}")),
        }
    })
    .await;
    charger.finish().await;
}
