//! Chargers > Proxy for an OCPP 2.0.1 station (docs/proxy.md): the Python `ocpp` v201 station
//! relayed by cms to two 2.0.1 central systems of the same package (support/central_system.rs,
//! `--ocpp 2.0.1`), both checking every call and answer against the 2.0.1 schemas: the leader
//! answers the station and commands it, within the rules, the follower sees every call.

use crate::proxy::{LEADER_INTERVAL, Upstreams, relaying_cms_with, server, set_proxy};
use crate::support::station201::python_station;
use serde_json::{Value, json};
use std::time::Duration;

/// The token the leader refuses (ocpp16_central_system.py's BLOCKED_AT_LEADER): cms does not
/// know it either, so only the leader's `Blocked` tells whose answer the station got.
const BLOCKED_AT_LEADER: &str = "BLOCKED-AT-LEADER";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_station_is_answered_by_its_201_leader_and_seen_by_its_follower() {
    let upstreams = Upstreams::new();
    let v201 = ["--ocpp", "2.0.1", "--interval", LEADER_INTERVAL];
    let mut leader = upstreams.start(None, &v201).await;
    let mut follower = upstreams.start(None, &["--ocpp", "2.0.1"]).await;
    let identity = "CP-201-RELAYED";
    let (cms, uuid, api) = relaying_cms_with(&upstreams, identity, &[]).await;
    let servers = json!([server(&leader, "leader"), server(&follower, "follower")]);
    set_proxy(&api, &uuid, "ROLE_FOLLOWER", servers).await;
    // The gateway learns the set-up from the registry a few times a second.
    tokio::time::sleep(Duration::from_millis(600)).await;

    let url = cms.ocpp_url(identity);
    let options = ["--unknown-token", BLOCKED_AT_LEADER];
    let mut station = python_station(&url, identity, "core", &options);
    station
        .wait_within(Duration::from_secs(60), "its scenario done", |l| {
            l.get("done").is_some()
        })
        .await;
    station.assert_nothing_unexpected();
    let answer = |station: &mut crate::support::peer::Peer, action: &str, nth: usize| {
        crate::support::station201::answer_of(station, action, nth)
    };
    let boot = answer(&mut station, "BootNotification", 0);
    assert_eq!(boot["interval"], 77, "the leader's interval: {boot}");
    let refused = answer(&mut station, "Authorize", 1);
    assert_eq!(
        refused["idTokenInfo"]["status"], "Blocked",
        "the leader's verdict, not cms's (Invalid): {refused}"
    );

    // The leader, whose answer each call waited for, saw them all in the station's order, in
    // 2.0.1, under ids of cms's own.
    let seen: Vec<Value> = leader
        .received_of("TransactionEvent")
        .iter()
        .map(|l| l["payload"]["eventType"].clone())
        .collect();
    assert_eq!(
        seen,
        ["Started", "Updated", "Updated", "Updated", "Ended"],
        "{seen:?}"
    );
    let ids: Vec<String> = leader
        .received_of("TransactionEvent")
        .iter()
        .map(|l| l["unique_id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(ids.iter().all(|id| id.starts_with("cms-")), "{ids:?}");
    // The follower sees them as they come, one at a time: what it had not been sent when the
    // station left is dropped with the session (docs/proxy.md). Its first is the boot.
    let boot = follower
        .wait_received("BootNotification", |l| l["identity"] == identity)
        .await;
    assert_eq!(boot["unique_id"], "cms-1", "{boot}");

    // The station's transaction is cms's as any other's.
    let path = format!("/api/v3/chargers/{uuid}/transactions");
    crate::support::eventually("the station's transaction stored", async || {
        let transactions = api.get_ok(&path).await;
        let stored = transactions["data"].as_array().map(Vec::len) == Some(1);
        stored.then_some(()).ok_or(format!("{transactions}"))
    })
    .await;
    leader.assert_nothing_unexpected();
    follower.assert_nothing_unexpected();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_leader_commands_the_station_within_the_rules_and_a_follower_may_not() {
    let upstreams = Upstreams::new();
    let mut leader = upstreams.start(None, &["--ocpp", "2.0.1"]).await;
    let mut follower = upstreams.start(None, &["--ocpp", "2.0.1"]).await;
    let identity = "CP-201-COMMANDED";
    let (cms, uuid, api) = relaying_cms_with(&upstreams, identity, &[]).await;
    let servers = json!([server(&leader, "leader"), server(&follower, "follower")]);
    set_proxy(&api, &uuid, "ROLE_FOLLOWER", servers).await;
    tokio::time::sleep(Duration::from_millis(600)).await;

    let url = cms.ocpp_url(identity);
    let mut station = python_station(&url, identity, "commanded", &["--for", "60"]);
    leader
        .wait_received("StatusNotification", |l| l["identity"] == identity)
        .await;

    // A call of the leader reaches the station, checked against 2.0.1's schema, and the
    // station's answer goes back to the leader.
    let reset = json!({"type": "OnIdle"});
    let sent = leader.call(identity, "Reset", &reset).await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    station
        .wait_within(Duration::from_secs(20), "the leader's Reset", |l| {
            l["received"] == "Reset" && l["payload"] == reset
        })
        .await;
    let path = format!("/api/v3/chargers/{uuid}/actions");
    crate::support::eventually("the leader's Reset in the audit log", async || {
        let log = api.get_ok(&path).await;
        let logged = log["data"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["action"] == "Reset" && a["requested_by"]["type"] == "proxy_leader");
        let in_201 =
            logged.is_some_and(|a| a["ocpp_version"] == "2.0.1" && a["status"] == "answered");
        in_201.then_some(()).ok_or(format!("{log}"))
    })
    .await;

    // What would undo cms's hold on the station is refused, never sent.
    let profile = json!({"evseId": 1, "chargingProfile": {"id": 1, "stackLevel": 0,
        "chargingProfilePurpose": "TxDefaultProfile", "chargingProfileKind": "Absolute",
        "chargingSchedule": [{"id": 1, "chargingRateUnit": "A",
            "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 32.0}]}]}});
    let refused = leader.call(identity, "SetChargingProfile", &profile).await;
    assert_eq!(refused["error"][0], "SecurityError", "{refused}");
    let password = json!({"setVariableData": [{"component": {"name": "SecurityCtrlr"},
        "variable": {"name": "BasicAuthPassword"}, "attributeValue": "0123456789abcdef"}]});
    let refused = leader.call(identity, "SetVariables", &password).await;
    assert_eq!(refused["error"][0], "SecurityError", "{refused}");
    assert!(
        refused["error"][1]
            .as_str()
            .is_some_and(|why| why.contains("SecurityCtrlr.BasicAuthPassword")),
        "{refused}"
    );
    // A follower may not command at all.
    let refused = follower
        .call(identity, "Reset", &json!({"type": "Immediate"}))
        .await;
    assert_eq!(refused["error"][0], "SecurityError", "{refused}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    for action in ["SetChargingProfile", "SetVariables"] {
        assert!(
            station.lines_where("received", action).is_empty(),
            "{action}"
        );
    }
    assert_eq!(station.lines_where("received", "Reset").len(), 1);
    leader.assert_nothing_unexpected();
    follower.assert_nothing_unexpected();
    station.assert_nothing_unexpected();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_apart_from_the_api_relays_its_201_station_to_the_leader() {
    let upstreams = Upstreams::new();
    let mut leader = upstreams.start(None, &["--ocpp", "2.0.1"]).await;
    let broker = crate::support::broker::Broker::shared().await;
    let ca = upstreams.pki.ca_certificate();
    let ca = ca.to_str().expect("utf-8 path");
    let gateway = ["gw-proxy-201"];
    let options = ["--proxy-ca-file", ca];
    let fleet = crate::support::fleet::Fleet::start_with(&broker.brokers, &gateway, &options).await;
    let identity = "CP-KAFKA-PROXY-201";
    let added = std::time::Instant::now();
    let uuid = fleet.add_charger(identity).await;
    fleet.license(identity, false, true).await;
    fleet
        .wait_until_accepted(identity, &gateway, added, Duration::from_secs(10))
        .await;
    let addr = &fleet.gateway("gw-proxy-201").ocpp_addr;
    let url = format!("ws://{addr}/ocpp/{identity}");
    let mut station = python_station(&url, identity, "commanded", &["--for", "60"]);
    station
        .wait_within(Duration::from_secs(20), "its boot answered", |l| {
            l["sent"] == "BootNotification"
        })
        .await;
    // Set up mid-session: API → registry topic → gateway. Once there, the station's calls
    // reach the leader: a heartbeat cms asks of it (TriggerMessage) shows when.
    let api = fleet.rest().await;
    api.wait_for_charger(&uuid, "2.0.1, online", |c| {
        c["ocpp_version"] == "2.0.1" && c["connection_status"] == "online"
    })
    .await;
    let leaders = json!([server(&leader, "leader")]);
    set_proxy(&api, &uuid, "ROLE_FOLLOWER", leaders).await;
    let trigger = format!("/api/v3/chargers/{uuid}/actions/trigger-message?wait=10");
    let heartbeat = json!({"requestedMessage": "Heartbeat"});
    let within = Duration::from_secs(20);
    crate::support::eventually_within(within, "a heartbeat relayed to the leader", async || {
        api.expect(200, "POST", &trigger, Some(&heartbeat)).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let received = leader.received_of("Heartbeat");
        let relayed = received.iter().any(|l| l["identity"] == identity);
        relayed.then_some(()).ok_or("not yet".to_string())
    })
    .await;
    let reset = json!({"type": "Immediate"});
    let sent = leader.call(identity, "Reset", &reset).await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    station
        .wait_within(Duration::from_secs(20), "the leader's Reset", |l| {
            l["received"] == "Reset" && l["payload"] == reset
        })
        .await;
    leader.assert_nothing_unexpected();
    station.assert_nothing_unexpected();
}
