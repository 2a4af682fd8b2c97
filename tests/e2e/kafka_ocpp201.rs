//! A mixed fleet over Kafka (issue 42, "How it is shown"): OCPP 1.6 chargers and 2.0.1
//! stations on two `cms gateway`s, read through two `cms api` replicas on one store; and a 2.0.1
//! station that moves from one gateway to the other in the middle of a transaction, resending
//! an event and sending another out of order, and still makes one transaction.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::payloads201::{
    TX_ID_TOKEN, meter_values, status_notification, transaction_event,
};
use crate::support::station::Station;
use crate::support::station201::RawStation201;
use crate::support::{Api, eventually_within};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
/// How long a charger added with `cms charger add` may take to reach every gateway.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
const GATEWAYS: [&str; 2] = ["gw-a", "gw-b"];

/// One charger of the mixed fleet: its protocol, the gateway it uses, what it reports.
struct Member {
    identity: &'static str,
    v201: bool,
    gateway: &'static str,
    firmware: &'static str,
    /// The energy register of its one reading (Wh), at [`READ_AT`].
    wh: u32,
}

const READ_AT: &str = "2026-05-04T08:30:00Z";

static MIXED: [Member; 4] = [
    Member {
        identity: "KM-16-A",
        v201: false,
        gateway: "gw-a",
        firmware: "fw-16-a",
        wh: 1100,
    },
    Member {
        identity: "KM-201-B",
        v201: true,
        gateway: "gw-b",
        firmware: "fw-201-b",
        wh: 2200,
    },
    Member {
        identity: "KM-16-B",
        v201: false,
        gateway: "gw-b",
        firmware: "fw-16-b",
        wh: 3300,
    },
    Member {
        identity: "KM-201-A",
        v201: true,
        gateway: "gw-a",
        firmware: "fw-201-a",
        wh: 4400,
    },
];

/// A connection kept open to the end of a test, so the API shows its charger online.
enum Open {
    V16(Station),
    V201(RawStation201),
}

impl Open {
    /// A Heartbeat that must still be answered on this connection.
    async fn heartbeat(&mut self) {
        match self {
            Open::V16(station) => drop(station.call_ok("Heartbeat", "{}").await),
            Open::V201(station) => station.heartbeat().await,
        }
    }
}

/// Boot, the status of connector (EVSE) 1, one energy reading: each in its own protocol.
async fn run_member(addr: &str, member: &Member) -> Open {
    let id = member.identity;
    if member.v201 {
        let mut station = RawStation201::connect(addr, id).await;
        let boot = json!({"reason": "PowerUp", "chargingStation": {
            "model": "K201", "vendorName": "Hand", "firmwareVersion": member.firmware}});
        let answer = station
            .call_text("BootNotification", &boot.to_string())
            .await;
        assert_eq!(answer[2]["status"], "Accepted", "{id}: {answer}");
        let status = status_notification(1, "Available", READ_AT);
        let answer = station.call_text("StatusNotification", &status).await;
        assert_eq!(answer[0], 3, "{id}: {answer}");
        let reading = meter_values(1, member.wh, READ_AT);
        let answer = station.call_text("MeterValues", &reading).await;
        assert_eq!(answer[0], 3, "{id}: {answer}");
        return Open::V201(station);
    }
    let mut station = Station::connect(addr, id, "km")
        .await
        .unwrap_or_else(|e| panic!("{id} could not connect to {addr}: {e:?}"));
    let boot = json!({"chargePointVendor": "Hand", "chargePointModel": "K16",
        "firmwareVersion": member.firmware});
    let answer = station.call_ok("BootNotification", &boot.to_string()).await;
    assert_eq!(answer.answer.as_ref().unwrap()[2]["status"], "Accepted");
    let status = r#"{"connectorId":1,"errorCode":"NoError","status":"Available"}"#;
    station.call_ok("StatusNotification", status).await;
    let reading = json!({"connectorId": 1, "meterValue": [{"timestamp": READ_AT,
        "sampledValue": [{"value": member.wh.to_string(), "unit": "Wh",
        "measurand": "Energy.Active.Import.Register", "context": "Sample.Periodic"}]}]});
    station.call_ok("MeterValues", &reading.to_string()).await;
    Open::V16(station)
}

/// The latest-metervalue body of connector 1 with the energy register at `wh` Wh at `at`:
/// the same for a 1.6 connector and a 2.0.1 EVSE.
fn latest_reading(wh: u32, context: &str, at: &str) -> Value {
    json!({"connectorId": 1, "meterValue": [{"timestamp": at, "sampledValue": [{
        "value": wh.to_string(), "context": context, "format": "Raw",
        "measurand": "Energy.Active.Import.Register", "location": "Outlet", "unit": "Wh"}]}]})
}

/// Polls `GET {path}` on `api` until `done` holds of its JSON; returns the JSON.
async fn wait_for(api: &Api, what: &str, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    eventually_within(API_LAG, what, async || {
        let answer = api.get(path).await;
        match answer.status == 200 && done(&answer.json) {
            true => Ok(answer.json),
            false => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await
}

/// What one replica must show of a member: the charger with its protocol, its connector 1
/// (with `evse_id` for a 2.0.1 station), its latest reading.
async fn check_member(api: &Api, replica: &str, uuid: &str, member: &Member) {
    let (version, evse_id) = match member.v201 {
        true => ("2.0.1", json!(1)),
        false => ("1.6", Value::Null),
    };
    let what = format!("{} on {replica}: online, OCPP {version}", member.identity);
    let charger = api
        .wait_for_charger_within(uuid, &what, API_LAG, |c| {
            c["connection_status"] == "online"
                && c["ocpp_version"] == version
                && c["firmware_version"] == member.firmware
        })
        .await;
    assert_eq!(charger["server"], member.gateway, "{replica}: {charger}");

    let path = format!("/api/v3/chargers/{uuid}/connectors");
    let what = format!("{} on {replica}: connector 1 Available", member.identity);
    let page = wait_for(api, &what, &path, |page| {
        page["data"].as_array().is_some_and(|data| {
            data.iter()
                .any(|c| c["connector_id"] == 1 && c["status"] == "Available")
        })
    })
    .await;
    let connector = page["data"]
        .as_array()
        .and_then(|data| data.iter().find(|c| c["connector_id"] == 1))
        .expect("connector 1");
    assert_eq!(connector["evse_id"], evse_id, "{replica}: {connector}");
    if member.v201 {
        assert_eq!(connector["evse_connector_id"], 1, "{replica}: {connector}");
        assert_eq!(
            connector["ocpp_status"], "Available",
            "{replica}: {connector}"
        );
    }

    let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    let expected = latest_reading(member.wh, "Sample.Periodic", READ_AT);
    let what = format!(
        "{} on {replica}: the latest reading {expected}",
        member.identity
    );
    wait_for(api, &what, &path, |shown| *shown == expected).await;
}

/// Starts gw-a, gw-b and two API replicas; returns the fleet and a client of each replica.
async fn mixed_fleet(identities: &[&str]) -> (Fleet, [Api; 2], Vec<String>) {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &GATEWAYS).await;
    let replica_b = fleet.add_api_replica().await;
    let token = fleet.operator_token().await;
    let apis = [
        Api::at(&fleet.rest_base, &token),
        Api::at(&replica_b, &token),
    ];
    let mut uuids = Vec::new();
    for identity in identities {
        let added = Instant::now();
        uuids.push(fleet.add_charger(identity).await);
        fleet
            .wait_until_accepted(identity, &GATEWAYS, added, REGISTRY_PROPAGATION)
            .await;
    }
    (fleet, apis, uuids)
}

const REPLICAS: [&str; 2] = ["replica A", "replica B"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_mixed_fleet_of_16_and_201_stations_is_served_by_two_gateways_and_two_replicas() {
    let identities: Vec<&str> = MIXED.iter().map(|m| m.identity).collect();
    let (fleet, apis, uuids) = mixed_fleet(&identities).await;
    let mut open = Vec::new();
    for member in &MIXED {
        open.push(run_member(&fleet.gateway(member.gateway).ocpp_addr, member).await);
    }
    for (api, replica) in apis.iter().zip(REPLICAS) {
        for (member, uuid) in MIXED.iter().zip(&uuids) {
            check_member(api, replica, uuid, member).await;
        }
    }
    // A 2.0.1 call taken by replica B reaches the station on gw-a, is answered, and ends
    // answered on both replicas (the command path over Kafka, as for 1.6).
    let (at, member) = (3, &MIXED[3]);
    assert!(member.v201 && member.gateway == "gw-a");
    let path = format!("/api/v3/chargers/{}/actions/reset?wait=0", uuids[at]);
    let body = json!({"type": "Immediate"});
    let taken = apis[1].expect(202, "POST", &path, Some(&body)).await;
    let action = taken["data"]["uuid"]
        .as_str()
        .expect("an action uuid")
        .to_string();
    let Open::V201(station) = &mut open[at] else {
        panic!("{} is a 2.0.1 station", member.identity)
    };
    // The base report cms asked for after the boot comes first: one call in flight at a time.
    let report = station.call_from_cms("GetBaseReport").await;
    station.answer(&report, json!({"status": "Accepted"})).await;
    let reset = station.call_from_cms("Reset").await;
    assert_eq!(reset[3], body, "{reset}");
    station.answer(&reset, json!({"status": "Accepted"})).await;
    let path = format!("/api/v3/chargers/{}/actions/{action}", uuids[at]);
    for (api, replica) in apis.iter().zip(REPLICAS) {
        let what = format!("{replica}: the reset answered");
        let shown = wait_for(api, &what, &path, |a| a["data"]["status"] == "answered").await;
        assert_eq!(
            shown["data"]["response"],
            json!({"status": "Accepted"}),
            "{shown}"
        );
        assert_eq!(shown["data"]["ocpp_version"], "2.0.1", "{shown}");
    }
    // Every connection is still served through its gateway.
    for station in &mut open {
        station.heartbeat().await;
    }
}

/// Waits until EVSE 1 of the station, last reported `ocpp_status`, shows `status` through
/// `api`.
async fn evse_shows(api: &Api, replica: &str, uuid: &str, ocpp_status: &str, status: &str) {
    let path = format!("/api/v3/chargers/{uuid}/connectors");
    let what = format!("{replica}: EVSE 1 {ocpp_status}, shown {status}");
    wait_for(api, &what, &path, |page| {
        page["data"].as_array().is_some_and(|data| {
            data.iter().any(|c| {
                c["evse_id"] == 1 && c["ocpp_status"] == ocpp_status && c["status"] == status
            })
        })
    })
    .await;
}

/// The moving station's transaction and the times of its four events.
const TX: &str = "TX-MOVE-201";
const T: [&str; 4] = [
    "2026-05-04T09:00:00Z",
    "2026-05-04T09:10:00Z",
    "2026-05-04T09:20:00Z",
    "2026-05-04T09:30:00Z",
];
const WH: [u32; 4] = [1000, 1600, 2100, 2500];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_201_station_moving_between_gateways_mid_transaction_keeps_one_transaction() {
    let id = "KM-201-MOVE";
    let (fleet, apis, uuids) = mixed_fleet(&[id]).await;
    let uuid = &uuids[0];
    let event = |seq_no: usize, event_type: &str| {
        transaction_event(TX, event_type, seq_no as u32, T[seq_no], WH[seq_no])
    };

    let mut on_a = RawStation201::connect(&fleet.gateway("gw-a").ocpp_addr, id).await;
    on_a.boot().await;
    on_a.call_text("TransactionEvent", &event(0, "Started"))
        .await;
    let occupied = status_notification(1, "Occupied", T[0]);
    on_a.call_text("StatusNotification", &occupied).await;
    on_a.call_text("TransactionEvent", &event(1, "Updated"))
        .await;
    apis[0]
        .wait_for_charger_within(uuid, "online on gw-a", API_LAG, |c| {
            c["connection_status"] == "online" && c["server"] == "gw-a"
        })
        .await;
    for (api, replica) in apis.iter().zip(REPLICAS) {
        evse_shows(api, replica, uuid, "Occupied", "Charging").await;
    }
    // The station loses its connection (no close frame) and comes back through gw-b.
    drop(on_a);
    let mut on_b = RawStation201::connect(&fleet.gateway("gw-b").ocpp_addr, id).await;
    // At least once: it resends seqNo 1, whose answer it takes to be lost; then the end
    // before the last reading (out of seqNo order).
    for (seq_no, event_type) in [(1, "Updated"), (3, "Ended"), (2, "Updated")] {
        let answer = on_b
            .call_text("TransactionEvent", &event(seq_no, event_type))
            .await;
        assert_eq!(answer[0], 3, "seqNo {seq_no} answered: {answer}");
    }
    for (api, replica) in apis.iter().zip(REPLICAS) {
        // Still Occupied (the car is plugged in), no longer charging.
        evse_shows(api, replica, uuid, "Occupied", "Preparing").await;
    }
    // The car leaves. Once this shows, every event before it on the station's partition has
    // been applied, the late seqNo 2 included.
    let available = status_notification(1, "Available", "2026-05-04T09:31:00Z");
    on_b.call_text("StatusNotification", &available).await;
    for (api, replica) in apis.iter().zip(REPLICAS) {
        evse_shows(api, replica, uuid, "Available", "Available").await;
    }

    let path = format!("/api/v3/chargers/{uuid}/transactions");
    for (api, replica) in apis.iter().zip(REPLICAS) {
        let page = api.get_ok(&path).await;
        let rows = page["data"].as_array().expect("a data array");
        assert_eq!(
            rows.len(),
            1,
            "{replica}: one transaction, never two: {page}"
        );
        let t = &rows[0];
        assert_eq!(t["station_transaction_id"], TX, "{replica}: {t}");
        assert_eq!(t["id_tag"], TX_ID_TOKEN, "{replica}: {t}");
        assert_eq!(t["meter_start"], WH[0], "{replica}: {t}");
        assert_eq!(t["meter_stop"], WH[3], "{replica}: {t}");
        assert_eq!(t["total_kwh"], "1.50", "{replica}: {t}");
        assert_eq!(t["started_at"], "2026-05-04T09:00:00.000000Z", "{t}");
        assert_eq!(t["stopped_at"], "2026-05-04T09:30:00.000000Z", "{t}");
        assert_eq!(t["stop_reason"], "Local", "{replica}: {t}");
        assert_eq!(t["connector"]["connector_id"], 1, "{replica}: {t}");

        // The EVSE's latest reading is the end's, though seqNo 2 (older) came after it.
        let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
        let expected = latest_reading(WH[3], "Transaction.End", T[3]);
        let what = format!("{replica}: the latest reading {expected}");
        wait_for(api, &what, &path, |shown| *shown == expected).await;

        let what = format!("{replica}: online on gw-b, OCPP 2.0.1");
        api.wait_for_charger_within(uuid, &what, API_LAG, |c| {
            c["connection_status"] == "online"
                && c["server"] == "gw-b"
                && c["ocpp_version"] == "2.0.1"
        })
        .await;
    }
    on_b.heartbeat().await;
}
