//! Chargers > Proxy in action (docs/proxy.md): a charger relayed by cms to three third-party
//! central systems (the Python `ocpp` package's, support/central_system.rs) over `wss` with a
//! test CA: one leader that answers the charger and commands it, two followers that see every
//! message and may not command it. The charger is the Python `ocpp` charge point.
//!
//! Needs `python3` with the packages of tests/interop/requirements.txt (scripts/test installs
//! them); without them the tests fail, never skip.

use crate::support::central_system::CentralSystem;
use crate::support::commanded::CommandedCharger;
use crate::support::{Api, Cms};
use cms_tls::test_pki::TestPki;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// What the leader answers with, so that its answers are told from cms's own.
pub(crate) const LEADER_INTERVAL: &str = "77";
pub(crate) const LEADER_TRANSACTION: i64 = 9001;
const RESTARTED_TRANSACTION: i64 = 9002;

/// A port nobody listens on now, for a central system that must come back at the same address.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

pub(crate) struct Upstreams {
    pub(crate) pki: TestPki,
    _dir: TempDir,
    leader_port: u16,
}

impl Upstreams {
    pub(crate) fn new() -> Upstreams {
        let dir = TempDir::new().expect("a temp dir for the test PKI");
        Upstreams {
            pki: TestPki::create(dir.path()),
            _dir: dir,
            leader_port: free_port(),
        }
    }

    pub(crate) async fn start(&self, port: Option<u16>, extra: &[&str]) -> CentralSystem {
        let chain = self.pki.server_chain();
        let key = self.pki.server_key();
        let port = port.unwrap_or(0).to_string();
        let mut options = vec![
            "--tls-cert",
            chain.to_str().expect("utf-8 path"),
            "--tls-key",
            key.to_str().expect("utf-8 path"),
            "--port",
            &port,
        ];
        options.extend_from_slice(extra);
        CentralSystem::start(&options).await
    }

    pub(crate) async fn leader(&self, transaction_id: i64) -> CentralSystem {
        let id = transaction_id.to_string();
        let options = ["--interval", LEADER_INTERVAL, "--transaction-id", &id];
        self.start(Some(self.leader_port), &options).await
    }
}

/// `cms up` trusting the test CA for proxy servers, a charger of its, and the operator's API.
async fn relaying_cms(upstreams: &Upstreams, identity: &str) -> (Cms, String, Api) {
    relaying_cms_with(upstreams, identity, &[]).await
}

/// [`relaying_cms`] with `extra` options for `cms up`.
pub(crate) async fn relaying_cms_with(
    upstreams: &Upstreams,
    identity: &str,
    extra: &[&str],
) -> (Cms, String, Api) {
    let ca = upstreams.pki.ca_certificate();
    let mut options = vec!["--proxy-ca-file", ca.to_str().expect("utf-8 path")];
    options.extend_from_slice(extra);
    let cms = Cms::up_with(&options).await;
    let uuid = cms.add_charger(identity).await;
    // Relaying is a `pro` feature.
    cms.license(identity, false, true).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    (cms, uuid, api)
}

pub(crate) async fn set_proxy(api: &Api, uuid: &str, vendor_role: &str, servers: Value) {
    let body = json!({"vendor_role": vendor_role, "servers": servers});
    let path = format!("/api/v3/chargers/{uuid}/proxy");
    api.expect(200, "PUT", &path, Some(&body)).await;
}

pub(crate) fn server(central: &CentralSystem, role: &str) -> Value {
    json!({"websocket_url": format!("{}/ocpp", central.url()), "role": role})
}

/// Waits until the proxy resource shows each server's `connection_status` as `expected`, in
/// the order listed; returns the servers.
async fn wait_statuses(api: &Api, uuid: &str, expected: &[&str]) -> Vec<Value> {
    let path = format!("/api/v3/chargers/{uuid}/proxy");
    crate::support::eventually(&format!("proxy servers {expected:?}"), async || {
        let answer = api.get_ok(&path).await;
        let servers = answer["data"].as_array().cloned().unwrap_or_default();
        let statuses: Vec<&str> = servers
            .iter()
            .map(|s| s["connection_status"].as_str().unwrap_or("?"))
            .collect();
        (statuses == expected)
            .then(|| servers.clone())
            .ok_or(format!("{answer}"))
    })
    .await
}

/// The answer cms gave to the charger's BootNotification on its `connection`th connection.
pub(crate) async fn boot_answer(charger: &mut CommandedCharger) -> Value {
    let boot = charger
        .wait_for("its BootNotification answered", |l| {
            l["sent"] == "BootNotification"
        })
        .await;
    boot["answer"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_answers_and_commands_the_charger_and_the_followers_see_everything() {
    let upstreams = Upstreams::new();
    let mut leader = upstreams.leader(LEADER_TRANSACTION).await;
    let mut followers = [
        upstreams.start(None, &[]).await,
        upstreams.start(None, &[]).await,
    ];
    let identity = "CP-RELAYED-1";
    let (cms, uuid, api) = relaying_cms(&upstreams, identity).await;
    let servers = json!([
        server(&leader, "leader"),
        server(&followers[0], "follower"),
        server(&followers[1], "follower"),
    ]);
    set_proxy(&api, &uuid, "ROLE_FOLLOWER", servers).await;
    // The gateway learns the set-up from the registry a few times a second.
    tokio::time::sleep(Duration::from_millis(600)).await;

    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    let boot = boot_answer(&mut charger).await;
    assert_eq!(
        boot["interval"], 77,
        "the leader's interval reaches the charger: {boot}"
    );
    let servers = wait_statuses(&api, &uuid, &["connected"; 3]).await;
    for server in &servers {
        crate::support::assert_record_time(&server["last_connected_at"], "last_connected_at");
    }
    let started = charger.send("start 1 04A2B3C4").await;
    assert_eq!(started["transactionId"], LEADER_TRANSACTION, "{started}");
    let stopped = charger
        .send(&format!("stop {LEADER_TRANSACTION} 04A2B3C4"))
        .await;
    assert_eq!(stopped["idTagInfo"]["status"], "Accepted", "{stopped}");

    // Every follower saw every call, in order, under ids of cms's own.
    for follower in &mut followers {
        follower
            .wait_received("StopTransaction", |l| l["identity"] == identity)
            .await;
        let actions: Vec<Value> = follower
            .printed()
            .iter()
            .filter(|l| l.get("received").is_some())
            .map(|l| l["received"].clone())
            .collect();
        assert_eq!(
            actions,
            [
                "BootNotification",
                "StatusNotification",
                "StartTransaction",
                "StopTransaction"
            ],
        );
    }

    // The leader commands the charger; its answer goes back to the leader only.
    let request = json!({"connectorId": 1, "idTag": "04A2B3C4"});
    let sent = leader
        .call(identity, "RemoteStartTransaction", &request)
        .await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger
        .wait_received("RemoteStartTransaction", &request)
        .await;
    // A follower may not: refused, and the charger never hears of it.
    let refused = followers[0]
        .call(identity, "Reset", &json!({"type": "Hard"}))
        .await;
    assert_eq!(refused["error"][0], "SecurityError", "{refused}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(charger.received_of("Reset").is_empty());

    // The transaction is recorded under the leader's transactionId, the one the charger uses.
    let path = format!("/api/v3/chargers/{uuid}/transactions");
    crate::support::eventually("the relayed transaction in the API", async || {
        let page = api.get_ok(&path).await;
        let ids: Vec<Value> = page["data"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["id"].clone())
            .collect();
        (ids == [json!(LEADER_TRANSACTION)])
            .then_some(())
            .ok_or(format!("{page}"))
    })
    .await;

    charger.finish().await;
    leader.finish().await;
    for follower in followers {
        follower.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_its_leader_the_charger_is_answered_by_cms_until_the_leader_returns() {
    let upstreams = Upstreams::new();
    let leader = upstreams.leader(LEADER_TRANSACTION).await;
    let identity = "CP-RELAYED-2";
    let (cms, uuid, api) = relaying_cms(&upstreams, identity).await;
    set_proxy(
        &api,
        &uuid,
        "ROLE_FOLLOWER",
        json!([server(&leader, "leader")]),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    assert_eq!(boot_answer(&mut charger).await["interval"], 77);

    wait_statuses(&api, &uuid, &["connected"]).await;

    // The leader dies mid-session: the charger's next calls are answered by cms, promptly.
    drop(leader);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = Instant::now();
    let started = charger.send("start 1 TAG-2").await;
    assert!(
        asked.elapsed() < Duration::from_secs(6),
        "answered in {:?}",
        asked.elapsed()
    );
    let own_id = started["transactionId"].as_i64().expect("a transactionId");
    assert_ne!(own_id, LEADER_TRANSACTION, "cms answered: {started}");
    charger.send(&format!("stop {own_id} TAG-2")).await;
    wait_statuses(&api, &uuid, &["disconnected"]).await;

    // It comes back at the same address: cms reconnects, tells it the charger's boot and
    // status, and the leader answers again.
    let mut restarted = upstreams.leader(RESTARTED_TRANSACTION).await;
    restarted
        .wait_received("BootNotification", |l| l["identity"] == identity)
        .await;
    let again = charger.send("start 1 TAG-3").await;
    assert_eq!(again["transactionId"], RESTARTED_TRANSACTION, "{again}");
    wait_statuses(&api, &uuid, &["connected"]).await;
    charger.disconnect().await;
    wait_statuses(&api, &uuid, &["disconnected"]).await;
    charger.finish().await;
    restarted.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_servers_set_while_the_charger_is_connected_take_effect_without_a_reconnect() {
    let upstreams = Upstreams::new();
    let mut follower = upstreams.start(None, &[]).await;
    let identity = "CP-RELAYED-3";
    let (cms, uuid, api) = relaying_cms(&upstreams, identity).await;
    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    set_proxy(
        &api,
        &uuid,
        "ROLE_LEADER",
        json!([server(&follower, "follower")]),
    )
    .await;

    // The charger stays connected; the follower hears of it, then of what it sends.
    crate::support::eventually("the follower to see the charger's calls", async || {
        charger.send("authorize ANY-TAG").await;
        let seen = follower.received_of("Authorize");
        (!seen.is_empty())
            .then_some(())
            .ok_or("not yet".to_string())
    })
    .await;
    set_proxy(&api, &uuid, "ROLE_STANDALONE", Value::Null).await;
    follower
        .wait_for("the relay to end", |l| l.get("disconnected").is_some())
        .await;
    assert_eq!(charger.connections(), 1, "the charger never reconnected");
    charger.finish().await;
    follower.finish().await;
}

/// The Kafka deployment: the proxy set-up reaches a `cms gateway` through the registry topic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_apart_from_the_api_relays_its_charger_to_the_leader() {
    let upstreams = Upstreams::new();
    let mut leader = upstreams.leader(LEADER_TRANSACTION).await;
    let broker = crate::support::broker::Broker::shared().await;
    let ca = upstreams.pki.ca_certificate();
    let ca = ca.to_str().expect("utf-8 path");
    let fleet = crate::support::fleet::Fleet::start_with(
        &broker.brokers,
        &["gw-proxy"],
        &["--proxy-ca-file", ca],
    )
    .await;
    let identity = "CP-KAFKA-PROXY";
    let added = Instant::now();
    let uuid = fleet.add_charger(identity).await;
    fleet.license(identity, false, true).await;
    fleet
        .wait_until_accepted(identity, &["gw-proxy"], added, Duration::from_secs(10))
        .await;
    let api = fleet.rest().await;
    set_proxy(
        &api,
        &uuid,
        "ROLE_FOLLOWER",
        json!([server(&leader, "leader")]),
    )
    .await;
    let addr = &fleet.gateway("gw-proxy").ocpp_addr;
    let url = format!("ws://{addr}/ocpp/{identity}");
    let mut charger = CommandedCharger::connect(&url, identity).await;
    // The set-up travels API → registry topic → gateway; until it arrives cms answers alone.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let started = charger.send("start 1 KAFKA-TAG").await;
        if started["transactionId"] == LEADER_TRANSACTION {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the leader never answered: {started}"
        );
        let id = started["transactionId"].as_i64().expect("a transactionId");
        charger.send(&format!("stop {id}")).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    leader
        .wait_received("StartTransaction", |l| l["identity"] == identity)
        .await;
    let request = json!({"type": "Soft"});
    let sent = leader.call(identity, "Reset", &request).await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger.wait_received("Reset", &request).await;
    charger.finish().await;
    leader.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_a_proxy_url_are_sent_as_basic_auth_and_never_shown() {
    let upstreams = Upstreams::new();
    let mut follower = upstreams.start(None, &["--basic", "ops:s3cr3t"]).await;
    let identity = "CP-RELAYED-AUTH";
    let (cms, uuid, api) = relaying_cms(&upstreams, identity).await;
    let host = follower.url().trim_start_matches("wss://").to_string();
    let with_password = format!("wss://ops:s3cr3t@{host}/ocpp");
    let servers = json!([{"websocket_url": with_password, "role": "follower"}]);
    let path = format!("/api/v3/chargers/{uuid}/proxy");
    let body = json!({"vendor_role": "ROLE_LEADER", "servers": servers});
    let answer = api.expect(200, "PUT", &path, Some(&body)).await;
    let shown = format!("wss://ops:***@{host}/ocpp");
    assert_eq!(answer["data"][0]["websocket_url"], shown.as_str());
    assert_eq!(
        api.get_ok(&path).await["data"][0]["websocket_url"],
        shown.as_str()
    );

    let charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    let connected = follower
        .wait_for("cms to connect with the credentials", |l| {
            l["connected"] == identity
        })
        .await;
    assert_eq!(connected["user"], "ops", "{connected}");

    // What a client read may be sent back: the stored password stays.
    let body = json!({"vendor_role": "ROLE_LEADER", "servers": [{"websocket_url": shown, "role": "follower"}]});
    let answer = api.expect(200, "PUT", &path, Some(&body)).await;
    assert_eq!(answer["data"][0]["websocket_url"], shown.as_str());
    assert!(
        follower
            .printed()
            .iter()
            .all(|l| l.get("refused").is_none())
    );
    // A mask for a server the charger does not have is refused: its password is unknown.
    let elsewhere = json!({"vendor_role": "ROLE_LEADER", "servers": [
        {"websocket_url": "wss://ops:***@elsewhere.example/ocpp", "role": "follower"}]});
    let refused = api.expect_invalid("PUT", &path, Some(&elsewhere)).await;
    assert!(refused["servers.0.websocket_url"].is_array(), "{refused}");
    // One leader at most: two could not both answer the charger.
    let two_leaders = json!({"vendor_role": "ROLE_FOLLOWER", "servers": [
        {"websocket_url": "wss://a.example/ocpp", "role": "leader"},
        {"websocket_url": "wss://b.example/ocpp", "role": "leader"}]});
    let refused = api.expect_invalid("PUT", &path, Some(&two_leaders)).await;
    assert!(refused["servers.1.role"].is_array(), "{refused}");
    charger.finish().await;
    follower.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_leader_or_follower_never_holds_the_charger_up_for_long() {
    let upstreams = Upstreams::new();
    // The leader answers the boot and the status, then nothing; the follower never answers.
    let id = LEADER_TRANSACTION.to_string();
    let options = ["--transaction-id", id.as_str(), "--silent-after", "2"];
    let leader = upstreams.start(None, &options).await;
    let follower = upstreams.start(None, &["--silent"]).await;
    let identity = "CP-RELAYED-SILENT";
    let (cms, uuid, api) = relaying_cms(&upstreams, identity).await;
    let servers = json!([server(&leader, "leader"), server(&follower, "follower")]);
    set_proxy(&api, &uuid, "ROLE_FOLLOWER", servers).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;

    // The leader does not answer in time: cms does, after the wait it allows the leader.
    let asked = Instant::now();
    let started = charger.send("start 1 SILENT-1").await;
    let waited = asked.elapsed();
    assert_ne!(started["transactionId"], LEADER_TRANSACTION, "{started}");
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(9),
        "cms answered after {waited:?}"
    );
    let metrics = api.metrics().await;
    let fallbacks = metrics.sum("cms_proxy_leader_fallbacks_total", &[]);
    assert!(
        fallbacks >= Some(1.0),
        "the fallback is counted: {fallbacks:?}"
    );
    // The silent follower held nothing up either: the next call is answered at once... by
    // cms again, for the leader has not answered the last one yet.
    let asked = Instant::now();
    charger.send("authorize SILENT-2").await;
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    charger.finish().await;
}
