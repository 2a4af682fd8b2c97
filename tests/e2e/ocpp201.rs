//! OCPP 2.0.1 stations against `cms up` (issue 42, "How it is shown"): two independent
//! third-party stations, the Python `ocpp` package's v201 ChargePoint
//! (tests/interop/ocpp201_station.py, its schema validation on) and the npm `ocpp-rpc` client in
//! strict mode (tests/interop/ocpp_rpc_station), talk to cms; then the REST API shows what they
//! sent. Each answer is checked by the station's own schema validation (a station exits 1 on an
//! answer that breaks its schema) and here for what it says.
//!
//! Needs python3 with the packages of tests/interop/requirements.txt and node with the npm
//! packages of tests/interop/ocpp_rpc_station (scripts/test installs both); without them the
//! tests fail, never skip.

mod bad_frames;
mod commanded;
mod display_messages;
mod fwres;
mod limits;
pub(crate) mod local_lists;
pub(crate) mod prices;
pub(crate) mod security;
mod smart_charging;

use crate::support::peer::Peer;
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::station201::{
    ID_TOKEN, RawStation201, UNKNOWN_TOKEN, answer_of, node_station, python_station,
};
use crate::support::{Api, Cms, assert_ocpp_time, eventually_within};
use serde_json::{Value, json};
use std::time::Duration;

/// A station's scenario bounds itself to about 40 s; this is the backstop.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the REST API may take to show what a station sent (a little more than
/// [`crate::support::EVENTUALLY`]: the materialiser sorts a 2.0.1 transaction's events).
const SHOWN: Duration = Duration::from_secs(10);
/// The parent the known id token is registered with (idTokenInfo's groupIdToken in 2.0.1).
const GROUP: &str = "FLEET-201";

/// A registered test-bench station (no credentials) and the operator's client.
struct Bench {
    cms: Cms,
    uuid: String,
    api: Api,
    identity: String,
}

impl Bench {
    async fn start(identity: &str) -> Bench {
        let cms = Cms::up().await;
        let uuid = cms.add_charger(identity).await;
        let api = Api::new(&cms, &cms.operator_token().await);
        Bench {
            cms,
            uuid,
            api,
            identity: identity.to_string(),
        }
    }

    fn url(&self) -> String {
        self.cms.ocpp_url(&self.identity)
    }

    /// Registers [`ID_TOKEN`] (parent [`GROUP`]) with the operators' team and turns the site to
    /// id tags, then waits until the gateway answers an unknown token as such (asked with a raw
    /// 2.0.1 Authorize, so the station's run sees the tags in force).
    async fn with_known_id_token(&self) {
        let team = uuid_of(&team_of_type(&self.api, "operators").await);
        let tag = json!({"id_tag": ID_TOKEN, "parent_id_tag": GROUP});
        let path = format!("/api/v3/teams/{team}/id-tags");
        self.api.expect(201, "POST", &path, Some(&tag)).await;
        let site = operators_site(&self.api).await;
        let body = json!({"authorization": "id_tags"});
        let path = format!("/api/v3/sites/{site}");
        self.api.expect(200, "PUT", &path, Some(&body)).await;

        let mut raw = RawStation201::connect(self.cms.ocpp_addr(), &self.identity).await;
        raw.boot().await;
        let unknown = format!(r#"{{"idToken":{{"idToken":"{UNKNOWN_TOKEN}","type":"ISO14443"}}}}"#);
        eventually_within(Duration::from_secs(5), "the id tags in force", async || {
            let answer = raw.call_text("Authorize", &unknown).await;
            match answer[2]["idTokenInfo"]["status"].as_str() {
                Some("Unknown" | "Invalid") => Ok(()),
                _ => Err(answer.to_string()),
            }
        })
        .await;
    }

    /// The charger's transactions (`GET .../transactions`), once one with
    /// `station_transaction_id` satisfies `done`; returns that one.
    async fn transaction(&self, station_id: &str, done: impl Fn(&Value) -> bool) -> Value {
        let path = format!("/api/v3/chargers/{}/transactions", self.uuid);
        let what = format!("transaction {station_id} in {path}");
        eventually_within(SHOWN, &what, async || {
            let page = self.api.get_ok(&path).await;
            let data = page["data"].as_array().cloned().unwrap_or_default();
            match data
                .iter()
                .find(|t| t["station_transaction_id"] == station_id)
            {
                Some(found) if done(found) => Ok(found.clone()),
                _ => Err(page.to_string()),
            }
        })
        .await
    }
}

/// Fails unless python3 can import the interop packages.
pub(crate) async fn require_python_packages() {
    let check = "import ocpp.v201, websockets";
    let out = crate::support::python::python3(&["-c", check], Duration::from_secs(20)).await;
    match out {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 lacks the packages of tests/interop/requirements.txt (scripts/test installs \
             them):\n{}",
            out.stderr
        ),
        Err(why) => panic!("{why}: the 2.0.1 interop tests need python3"),
    }
}

/// Runs a station that ends by itself; fails unless it exited `code`.
pub(crate) async fn run_to_end(mut station: Peer, code: i32) -> Peer {
    let status = station.wait_exit(SCRIPT_TIMEOUT).await;
    station.assert_exit(status, code);
    station
}

/// The HTTP status of the station's `refused` line.
fn refused(station: &mut Peer) -> Value {
    let printed = station.printed();
    if let Some(line) = printed.iter().find(|l| l.get("refused").is_some()) {
        return line["refused"].clone();
    }
    let printed = station.describe();
    panic!("{} was not refused:\n{printed}", station.name)
}

/// The id token a station presents, in 2.0.1 form.
fn id_token(token: &str) -> Value {
    json!({"idToken": token, "type": "ISO14443"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_core() {
    require_python_packages().await;
    let bench = Bench::start("CP-201-CORE").await;
    bench.with_known_id_token().await;
    let station = python_station(&bench.url(), &bench.identity, "core", &[]);
    let mut station = run_to_end(station, 0).await;
    let connected = &station.lines_where("connected", &bench.url())[0];
    assert_eq!(connected["subprotocol"], "ocpp2.0.1", "{connected}");

    let boot = answer_of(&mut station, "BootNotification", 0);
    assert_eq!(boot["status"], "Accepted", "{boot}");
    assert!(boot["interval"].as_u64().is_some_and(|i| i > 0), "{boot}");
    assert_ocpp_time(&boot["currentTime"], "BootNotification currentTime");
    let heartbeat = answer_of(&mut station, "Heartbeat", 0);
    assert_ocpp_time(&heartbeat["currentTime"], "Heartbeat currentTime");

    let known = answer_of(&mut station, "Authorize", 0);
    assert_eq!(known["idTokenInfo"]["status"], "Accepted", "{known}");
    eprintln!("Authorize of the known token (parent {GROUP}) answered {known}");
    let unknown = answer_of(&mut station, "Authorize", 1);
    let status = &unknown["idTokenInfo"]["status"];
    assert!(status == "Unknown" || status == "Invalid", "{unknown}");

    // Started and Ended carry the idToken: their answers say what cms made of it.
    let events = station.lines_where("sent", "TransactionEvent");
    assert_eq!(events.len(), 5, "Started, Updated x3, Ended: {events:?}");
    for event in &events {
        assert!(event["answer"].is_object(), "answered: {event}");
        if event["payload"]["idToken"].is_object() {
            let status = &event["answer"]["idTokenInfo"]["status"];
            assert_eq!(status, "Accepted", "idTokenInfo of {event}");
        }
    }
    for action in [
        "StatusNotification",
        "MeterValues",
        "NotifyReport",
        "NotifyEvent",
        "SecurityEventNotification",
        "FirmwareStatusNotification",
        "LogStatusNotification",
    ] {
        assert_eq!(answer_of(&mut station, action, 0), json!({}), "{action}");
    }
    let data_transfer = answer_of(&mut station, "DataTransfer", 0);
    assert_eq!(
        data_transfer["status"], "UnknownVendorId",
        "{data_transfer}"
    );

    // What the REST API shows: the charger, its EVSE 1 as connector 1, the latest reading.
    let charger = (bench.api)
        .wait_for_charger(&bench.uuid, "2.0.1, booted, offline", |c| {
            // The station's boot, not only the token probe's connection before it.
            c["ocpp_version"] == "2.0.1"
                && c["connection_status"] == "offline"
                && !c["firmware_version"].is_null()
                && !c["last_heartbeat_at"].is_null()
        })
        .await;
    assert_eq!(charger["firmware_version"], "2.0.1-interop", "{charger}");
    let path = format!("/api/v3/chargers/{}/connectors", bench.uuid);
    let connector = eventually_within(SHOWN, "connector 1 as EVSE 1", async || {
        let page = bench.api.get_ok(&path).await;
        let data = page["data"].as_array().cloned().unwrap_or_default();
        match data.into_iter().find(|c| c["connector_id"] == 1) {
            Some(c) if c["evse_id"] == 1 => Ok(c),
            _ => Err(page.to_string()),
        }
    })
    .await;
    assert_eq!(connector["evse_connector_id"], 1, "{connector}");
    assert_eq!(connector["status"], "Available", "{connector}");
    assert_eq!(connector["ocpp_status"], "Available", "{connector}");
    assert_latest_reading(&bench, "2026-06-01T10:05:00Z", 2000.0).await;

    let transaction = bench
        .transaction("TX-CP-201-CORE", |t| t["stopped_at"].is_string())
        .await;
    assert_eq!(transaction["id_tag"], ID_TOKEN, "{transaction}");
    assert_eq!(transaction["meter_start"], 1000, "{transaction}");
    assert_eq!(transaction["meter_stop"], 2000, "{transaction}");
    assert_eq!(transaction["total_kwh"], "1.00", "{transaction}");
    assert_eq!(transaction["started_at"], "2026-06-01T10:00:00.000000Z");
    assert_eq!(transaction["stopped_at"], "2026-06-01T10:04:00.000000Z");
    assert_eq!(transaction["stop_reason"], "Local", "{transaction}");
}

/// The latest meter value of connector 1: sampled at `at`, the energy register at `wh` Wh (a
/// string or a number: the 2.0.1 mapping of the 1.6 shape is the materialiser's to choose).
async fn assert_latest_reading(bench: &Bench, at: &str, wh: f64) {
    eventually_within(SHOWN, "the latest meter value of EVSE 1", async || {
        let answer = bench.api.latest_meter_value(&bench.uuid, 1).await;
        let reading = &answer.json["meterValue"][0];
        let energy = reading["sampledValue"].as_array().and_then(|values| {
            let register = |v: &&Value| v["measurand"] == "Energy.Active.Import.Register";
            let value = &values.iter().find(register)?["value"];
            value.as_f64().or_else(|| value.as_str()?.parse().ok())
        });
        match answer.status == 200 && reading["timestamp"] == at && energy == Some(wh) {
            true => Ok(()),
            false => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_offline_transaction() {
    require_python_packages().await;
    let bench = Bench::start("CP-201-OFF").await;
    // Priced by the site's tariff, as a 1.6 charger's session is: 0.30 a kWh and 0.50 a
    // session, before VAT.
    let team = uuid_of(&team_of_type(&bench.api, "operators").await);
    let tariff = json!({"name": "Energy", "currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "vat": 20, "step_size": 1},
        {"type": "FLAT", "price": "0.50", "vat": 20, "step_size": 1}]}]});
    let tariff = create_tariff(&bench.api, &team, &tariff).await;
    let site = format!("/api/v3/sites/{}", operators_site(&bench.api).await);
    (bench.api)
        .expect(200, "PUT", &site, Some(&json!({"tariff_uuid": tariff})))
        .await;
    let station = python_station(&bench.url(), &bench.identity, "offline", &[]);
    let mut station = run_to_end(station, 0).await;
    let events = station.lines_where("sent", "TransactionEvent");
    let order: Vec<&Value> = events.iter().map(|e| &e["payload"]["seqNo"]).collect();
    assert_eq!(order, [2, 0, 3, 1], "sent late, out of seqNo order");
    assert!(
        events
            .iter()
            .all(|e| e["payload"]["offline"] == true && e["answer"].is_object()),
        "each offline event answered: {events:?}"
    );

    let transaction = bench
        .transaction("TX-OFF-CP-201-OFF", |t| {
            t["stopped_at"].is_string() && t["cost"]["excl_vat"].is_string()
        })
        .await;
    // 1.5 kWh at 0.30 and the session's 0.50.
    assert_eq!(transaction["cost"]["excl_vat"], "0.95", "{transaction}");
    assert_eq!(transaction["meter_start"], 1000, "{transaction}");
    assert_eq!(transaction["meter_stop"], 2500, "{transaction}");
    assert_eq!(transaction["total_kwh"], "1.50", "{transaction}");
    assert_eq!(transaction["started_at"], "2026-06-02T08:00:00.000000Z");
    assert_eq!(transaction["stopped_at"], "2026-06-02T08:30:00.000000Z");
    assert_eq!(transaction["stop_reason"], "Local", "{transaction}");
    assert_eq!(transaction["id_tag"], ID_TOKEN, "{transaction}");
    let path = format!("/api/v3/chargers/{}/transactions", bench.uuid);
    let all = bench.api.get_ok(&path).await;
    assert_eq!(
        all["data"].as_array().map(Vec::len),
        Some(1),
        "one row: {all}"
    );
}

/// cms refuses an unregistered identity (404) and wrong credentials (401) at the upgrade, as it
/// does for 1.6 (tests/e2e/connections.rs, charger_auth.rs): such a station never gets as far as
/// a BootNotification, so it is never Accepted. (1.6 has no Pending/Rejected answer either; if
/// cms comes to give one to a 2.0.1 station, this is where it shows.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_unregistered_is_pending_or_rejected() {
    require_python_packages().await;
    let cms = Cms::up().await;
    let password = "sixteen-chars-ok-201";
    cms.add_charger_with("CP-201-PW", &["--password", password])
        .await;

    let unknown = python_station(&cms.ocpp_url("CP-201-NOBODY"), "CP-201-NOBODY", "boot", &[]);
    let mut unknown = run_to_end(unknown, 3).await;
    assert_eq!(refused(&mut unknown), 404, "an unregistered identity");

    let url = cms.ocpp_url("CP-201-PW");
    let wrong = python_station(
        &url,
        "CP-201-PW",
        "boot",
        &["--password", "not-the-password"],
    );
    let mut wrong = run_to_end(wrong, 3).await;
    assert_eq!(refused(&mut wrong), 401, "a wrong password");
    let none = python_station(&url, "CP-201-PW", "boot", &[]);
    let mut none = run_to_end(none, 3).await;
    assert_eq!(refused(&mut none), 401, "no password");

    let right = python_station(&url, "CP-201-PW", "boot", &["--password", password]);
    let mut right = run_to_end(right, 0).await;
    let boot = answer_of(&mut right, "BootNotification", 0);
    assert_eq!(boot["status"], "Accepted", "the right password: {boot}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ocpp_rpc_strict_station() {
    let bench = Bench::start("CP-201-RPC").await;
    bench.with_known_id_token().await;
    let mut station = node_station(&bench.url(), &bench.identity, &["--for", "50"]);
    station
        .wait_within(SCRIPT_TIMEOUT, "`ready` (its own transaction done)", |l| {
            l.get("ready").is_some()
        })
        .await;
    assert_eq!(
        answer_of(&mut station, "BootNotification", 0)["status"],
        "Accepted"
    );
    let authorized = answer_of(&mut station, "Authorize", 0);
    assert_eq!(
        authorized["idTokenInfo"]["status"], "Accepted",
        "{authorized}"
    );
    let transaction = bench
        .transaction("NODE-CP-201-RPC", |t| t["stopped_at"].is_string())
        .await;
    assert_eq!(transaction["meter_start"], 1000, "{transaction}");
    assert_eq!(transaction["meter_stop"], 1900, "{transaction}");
    assert_eq!(transaction["total_kwh"], "0.90", "{transaction}");
    assert_eq!(transaction["id_tag"], ID_TOKEN, "{transaction}");

    // A remote start through the REST API, in the envelope of the 1.6 actions: the body is the
    // request's payload (the 2.0.1 action shapes may still change: see v201-contract.md).
    let start = json!({"idToken": id_token(ID_TOKEN), "evseId": 1, "remoteStartId": 7});
    let commands = crate::support::commanded::calls::Commands::at(
        &bench.cms.http_url(""),
        &bench.cms.operator_token().await,
    );
    let action = commands
        .send(&bench.uuid, "request-start-transaction", &start)
        .await;
    assert_eq!(action["action"], "RequestStartTransaction", "{action}");
    assert_eq!(action["status"], "answered", "{action}");
    assert_eq!(action["request"], start, "{action}");
    assert_eq!(
        action["response"],
        json!({"status": "Accepted"}),
        "{action}"
    );
    let received = station
        .wait_within(SCRIPT_TIMEOUT, "the RequestStartTransaction", |l| {
            l["received"] == "RequestStartTransaction"
        })
        .await;
    assert_eq!(received["payload"], start, "{received}");
    let started = station
        .wait_within(SCRIPT_TIMEOUT, "its TransactionEvent Started", |l| {
            l["sent"] == "TransactionEvent" && l["payload"]["triggerReason"] == "RemoteStart"
        })
        .await;
    assert_eq!(started["payload"]["transactionInfo"]["remoteStartId"], 7);
    assert_eq!(
        started["answer"]["idTokenInfo"]["status"], "Accepted",
        "{started}"
    );
    let remote = bench
        .transaction("NODE-RS-7", |t| t["started_at"].is_string())
        .await;
    assert_eq!(remote["stopped_at"], Value::Null, "still running: {remote}");
    station.finish(Duration::from_secs(10)).await;
}
