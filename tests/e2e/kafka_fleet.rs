//! The service as deployed at scale: `cms api` and two `cms gateway`s as separate processes
//! that share nothing but a Kafka broker. Chargers connect to either gateway; what they send is
//! checked twice: in Kafka, byte for byte, by a consumer of the test's own, and in the REST API.

use crate::support::Api;
use crate::support::broker::Broker;
use crate::support::fleet::{Fleet, is_uuid};
use crate::support::station::{Sent, Station};
use crate::support::topic::{TopicRecord, read_topic, read_topic_until};
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
/// How long a charger added with `cms charger add` may take to reach every gateway: the API
/// polls the store every second, gateways follow the registry topic.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);

/// One charger of the fleet test and the gateway it uses.
struct Plan {
    identity: &'static str,
    gateway: &'static str,
    firmware: &'static str,
    id_tag: &'static str,
}

static PLANS: [Plan; 4] = [
    Plan {
        identity: "KF-A1",
        gateway: "gw-a",
        firmware: "fw-a1-2.0.1",
        id_tag: "TAG-A1",
    },
    Plan {
        identity: "KF-A2",
        gateway: "gw-a",
        firmware: "fw-a2-2.0.2",
        id_tag: "TAG-A2",
    },
    Plan {
        identity: "KF-B1",
        gateway: "gw-b",
        firmware: "fw-b1-3.1.0",
        id_tag: "TAG-B1",
    },
    Plan {
        identity: "KF-B2",
        gateway: "gw-b",
        firmware: "fw-b2-3.1.1",
        id_tag: "TAG-B2",
    },
];

/// Boot, statuses, a reading, a whole transaction and a heartbeat, each payload written by hand
/// with odd whitespace, key order and escapes, so that only the charger's own bytes in the
/// record can match. Returns the still open connection and every CALL sent (all answered with
/// a CALLRESULT).
async fn run_charger(addr: &str, plan: &Plan) -> (Station, Vec<Sent>) {
    let id = plan.identity;
    let mut station = Station::connect(addr, id, "kf")
        .await
        .unwrap_or_else(|e| panic!("{id} could not connect to {addr}: {e:?}"));
    let mut sent = Vec::new();
    let boot = format!(
        "{{ \"firmwareVersion\" :\"{}\",\n\t\"chargePointModel\":\"NG920-61001\",\
         \"chargePointVendor\" : \"Alfen BV\" ,\"chargePointSerialNumber\":\"ACE-{id}\"}}",
        plan.firmware
    );
    let answer = station.call_ok("BootNotification", &boot).await;
    assert_eq!(answer.answer.as_ref().unwrap()[2]["status"], "Accepted");
    sent.push(answer);
    let statuses = [
        r#"{"status":"Available","errorCode":"NoError",   "connectorId":0}"#,
        "{\"timestamp\":\"2026-03-01T08:00:00Z\",\"connectorId\":1,\"errorCode\":\"NoError\",\
         \"status\":\"Preparing\",\r\n\"info\":\"c\u{e2}ble \\u00e9 \\\"ok\\\"\"}",
    ];
    for status in statuses {
        sent.push(station.call_ok("StatusNotification", status).await);
    }
    let before = "{\"meterValue\":[ {\"sampledValue\":[{\"unit\":\"Wh\",\"value\":\"1000.0\"}],\
                  \"timestamp\":\"2026-03-01T10:00:00+02:00\"}],   \"connectorId\":1}";
    sent.push(station.call_ok("MeterValues", before).await);
    let start = format!(
        "{{\"timestamp\":\"2026-03-01T08:01:00Z\", \"meterStart\":1000,\"idTag\":\"{}\",\
         \"connectorId\":1}}",
        plan.id_tag
    );
    let started = station.call_ok("StartTransaction", &start).await;
    let transaction_id = started.answer.as_ref().unwrap()[2]["transactionId"]
        .as_i64()
        .unwrap_or_else(|| panic!("{id}: StartTransaction answer {:?}", started.answer));
    sent.push(started);
    let during = format!(
        "{{\"connectorId\":1,\"transactionId\":{transaction_id},\"meterValue\":[{{\
         \"timestamp\":\"2026-03-01T08:30:00.500Z\",\"sampledValue\":[\
         {{\"value\":\"4500\",\"measurand\":\"Energy.Active.Import.Register\",\"context\":\"Sample.Periodic\"}},\
         {{\"measurand\":\"Power.Active.Import\",\"unit\":\"kW\",\"value\":\"7.2\"}}]}}]}}"
    );
    sent.push(station.call_ok("MeterValues", &during).await);
    let stop = format!(
        "{{\"reason\":\"EVDisconnected\",\"transactionId\":{transaction_id},\
         \"timestamp\":\"2026-03-01T09:00:00Z\",\n\"meterStop\":9000,\"idTag\":\"{}\"}}",
        plan.id_tag
    );
    sent.push(station.call_ok("StopTransaction", &stop).await);
    sent.push(station.call_ok("Heartbeat", "{ }").await);
    (station, sent)
}

/// The latest-metervalue body the API must serve for connector 1 after `run_charger`.
const LATEST_METER_VALUE: &str = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-03-01T08:30:00Z","sampledValue":[
    {"value":"4500","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},
    {"value":"7.2","context":"Sample.Periodic","format":"Raw","measurand":"Power.Active.Import","location":"Outlet","unit":"kW"}
]}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_fleet_two_gateways_publish_exact_frames_and_the_api_follows() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a", "gw-b"]).await;
    let rest = fleet.rest().await;

    // Registered in the API's store; the API publishes the registry, gateways follow it.
    let mut uuids = HashMap::new();
    for plan in &PLANS {
        let added = Instant::now();
        uuids.insert(plan.identity, fleet.add_charger(plan.identity).await);
        let took = fleet
            .wait_until_accepted(
                plan.identity,
                &["gw-a", "gw-b"],
                added,
                REGISTRY_PROPAGATION,
            )
            .await;
        eprintln!(
            "registry propagation: {} accepted by gw-a after {:?}, by gw-b after {:?}",
            plan.identity, took[0], took[1]
        );
    }

    let runs = PLANS.iter().map(|plan| {
        let addr = fleet.gateway(plan.gateway).ocpp_addr.clone();
        tokio::spawn(async move { run_charger(&addr, plan).await })
    });
    let mut sent_by: HashMap<&str, Vec<Sent>> = HashMap::new();
    // Kept open to the end: the API must show these chargers online.
    let mut open = Vec::new();
    for (plan, run) in PLANS.iter().zip(runs.collect::<Vec<_>>()) {
        let (station, sent) = run.await.expect("charger run");
        sent_by.insert(plan.identity, sent);
        open.push(station);
    }

    // Kafka, read by the test's own consumer: every frame, exactly.
    // Read on until every frame sent is there: a broker slow under load must not pass for a lost
    // record (and a lost one is named by `check_messages` once the reader gives up).
    let expected: Vec<String> = sent_by
        .values()
        .flatten()
        .map(|f| f.message_id.clone())
        .collect();
    let messages = read_topic_until(&fleet.brokers, &fleet.messages_topic(), move |records| {
        expected
            .iter()
            .all(|id| records.iter().any(|r| r.header("message_id") == Some(id)))
    })
    .await;
    let connections = read_topic_until(&fleet.brokers, &fleet.connections_topic(), |records| {
        PLANS.iter().all(|plan| {
            records.iter().any(|r| {
                r.key == plan.identity.as_bytes() && r.header("event") == Some("connected")
            })
        })
    })
    .await;
    for plan in &PLANS {
        let sent = &sent_by[plan.identity];
        let session = check_messages(plan, sent, &messages);
        check_connected(plan, &session, &connections);
    }
    let frames: usize = sent_by.values().map(Vec::len).sum();
    eprintln!(
        "kafka: {frames} frames of {} chargers found byte-exact with their headers in {}",
        PLANS.len(),
        fleet.messages_topic()
    );

    // The REST API of `cms api`, fed only through Kafka.
    for plan in &PLANS {
        check_api(&rest, &uuids[plan.identity], plan).await;
    }

    // A charger added while the fleet runs reaches both gateways, none restarted.
    let added = Instant::now();
    let late_uuid = fleet.add_charger("KF-LATE-1").await;
    let took = fleet
        .wait_until_accepted("KF-LATE-1", &["gw-a", "gw-b"], added, REGISTRY_PROPAGATION)
        .await;
    eprintln!(
        "charger added while the fleet runs: accepted by gw-a after {:?}, by gw-b after {:?}",
        took[0], took[1]
    );
    let mut late = Station::connect(&fleet.gateway("gw-b").ocpp_addr, "KF-LATE-1", "late")
        .await
        .unwrap_or_else(|e| panic!("KF-LATE-1 could not connect to gw-b: {e:?}"));
    let boot = r#"{"chargePointVendor":"Alfen BV","chargePointModel":"NG910","firmwareVersion":"late-1.0"}"#;
    late.call_ok("BootNotification", boot).await;
    rest.wait_for_charger_within(&late_uuid, "late charger online on gw-b", API_LAG, |c| {
        c["connection_status"] == "online"
            && c["server"] == "gw-b"
            && c["firmware_version"] == "late-1.0"
    })
    .await;

    // SIGTERM: each gateway closes its sessions, publishes their ends and flushes, then exits.
    for node in ["gw-a", "gw-b"] {
        let stopping = Instant::now();
        let status = fleet.gateway_mut(node).process.terminate().await;
        assert!(status.success(), "gateway {node} exited with {status}");
        eprintln!("gateway {node} stopped in {:?}", stopping.elapsed());
    }
    let ends: Vec<(&str, &str)> = PLANS
        .iter()
        .map(|p| (p.identity, p.gateway))
        .chain([("KF-LATE-1", "gw-b")])
        .collect();
    let all_ends = ends.clone();
    let connections =
        read_topic_until(&fleet.brokers, &fleet.connections_topic(), move |records| {
            all_ends
                .iter()
                .all(|(identity, gateway)| ended_by_shutdown(records, identity, gateway))
        })
        .await;
    let missing: Vec<String> = ends
        .iter()
        .filter(|(identity, gateway)| !ended_by_shutdown(&connections, identity, gateway))
        .map(|(identity, gateway)| format!("{identity} from {gateway}"))
        .collect();
    let events: Vec<String> = connections
        .iter()
        .map(|r| format!("{} {}", r.key_str(), r.value_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "after SIGTERM no disconnected/shutdown event in Kafka of: {missing:?}; the topic \
         holds:\n{}",
        events.join("\n")
    );
    let mut all_uuids: Vec<&String> = uuids.values().collect();
    all_uuids.push(&late_uuid);
    for uuid in all_uuids {
        rest.wait_for_charger_within(uuid, "offline after the gateways stopped", API_LAG, |c| {
            c["connection_status"] == "offline"
        })
        .await;
    }
    let status = fleet.api.terminate().await;
    assert!(status.success(), "cms api exited with {status}");
    drop(open);
}

/// Whether the connection events hold `identity`'s end at `gateway`'s shutdown.
fn ended_by_shutdown(records: &[TopicRecord], identity: &str, gateway: &str) -> bool {
    records.iter().any(|r| {
        let value: Value = serde_json::from_slice(&r.value).unwrap_or(Value::Null);
        r.key == identity.as_bytes()
            && r.header("event") == Some("disconnected")
            && r.header("gateway") == Some(gateway)
            && value["reason"] == "shutdown"
    })
}

/// Checks the records of one charger's frames; returns the session they came on.
fn check_messages(plan: &Plan, sent: &[Sent], messages: &[TopicRecord]) -> String {
    let id = plan.identity;
    let mine: Vec<&TopicRecord> = messages.iter().filter(|r| r.key == id.as_bytes()).collect();
    let missing: Vec<String> = sent
        .iter()
        .filter(|f| {
            !mine
                .iter()
                .any(|r| r.header("message_id") == Some(f.message_id.as_str()))
        })
        .map(|f| format!("{} ({})", f.action, f.message_id))
        .collect();
    let held: Vec<String> = mine
        .iter()
        .map(|r| {
            let action = r.header("action").unwrap_or("?");
            let message_id = r.header("message_id").unwrap_or("?");
            format!("{}@{} {action} ({message_id})", r.partition, r.offset)
        })
        .collect();
    assert_eq!(
        mine.len(),
        sent.len(),
        "{id} sent {} CALLs, the topic holds {} records keyed {id}; missing: {missing:?}; \
         held: {held:?}",
        sent.len(),
        mine.len()
    );
    let partition = mine[0].partition;
    let mut last_offset = -1;
    let mut session = None;
    for frame in sent {
        let matching: Vec<&&TopicRecord> = mine
            .iter()
            .filter(|r| r.header("message_id") == Some(frame.message_id.as_str()))
            .collect();
        assert_eq!(
            matching.len(),
            1,
            "{id} {} ({}) is in the topic {} times",
            frame.action,
            frame.message_id,
            matching.len()
        );
        let record = matching[0];
        let what = format!("{id} {} ({})", frame.action, frame.message_id);
        assert_eq!(
            record.value,
            frame.payload.as_bytes(),
            "{what}: the value is not the payload as sent\n  sent:  {:?}\n  value: {:?}",
            frame.payload,
            record.value_str()
        );
        assert_eq!(
            record.partition, partition,
            "{what}: one charger, one partition"
        );
        assert!(
            record.offset > last_offset,
            "{what}: records out of the order they were sent in"
        );
        last_offset = record.offset;
        for header in [
            "action",
            "message_id",
            "received_at",
            "gateway",
            "session",
            "ocpp_version",
        ] {
            assert_eq!(
                record.header_count(header),
                1,
                "{what}: header {header} should be there once: {:?}",
                record.headers
            );
        }
        assert_eq!(
            record.header("action"),
            Some(frame.action.as_str()),
            "{what}"
        );
        assert_eq!(record.header("gateway"), Some(plan.gateway), "{what}");
        assert_eq!(record.header("ocpp_version"), Some("ocpp1.6"), "{what}");
        let this_session = record.header("session").unwrap().to_string();
        assert!(
            is_uuid(&this_session),
            "{what}: session {this_session:?} is not a UUID"
        );
        match &session {
            None => session = Some(this_session),
            Some(first) => assert_eq!(first, &this_session, "{what}: one connection, one session"),
        }
        let received_at = record.header("received_at").unwrap();
        let at = record_time_micros(received_at).unwrap_or_else(|| {
            panic!("{what}: received_at {received_at:?} is not RFC 3339 UTC with microseconds")
        });
        let sent_at = micros(frame.sent_at);
        let answered_at = micros(frame.answered_at.expect("answered"));
        assert!(
            sent_at - 1_000 <= at && at <= answered_at + 1_000,
            "{what}: received_at {received_at} is not between the send ({sent_at} µs) and the \
             answer ({answered_at} µs)"
        );
        let answered_id = frame.answer.as_ref().unwrap()[2]["transactionId"].as_i64();
        if frame.action == "StartTransaction" {
            let header = record.header("transaction_id").map(str::to_string);
            assert_eq!(
                header,
                answered_id.map(|id| id.to_string()),
                "{what}: transaction_id header vs the answer"
            );
        } else {
            assert_eq!(record.header("transaction_id"), None, "{what}");
        }
    }
    session.expect("at least one frame")
}

/// The charger's `connected` event: right key, headers and JSON, same session as its frames.
fn check_connected(plan: &Plan, session: &str, connections: &[TopicRecord]) {
    let id = plan.identity;
    let events: Vec<&TopicRecord> = connections
        .iter()
        .filter(|r| r.key == id.as_bytes() && r.header("event") == Some("connected"))
        .collect();
    assert_eq!(
        events.len(),
        1,
        "{id}: expected one connected event, found {}",
        events.len()
    );
    let event = events[0];
    assert_eq!(event.header("gateway"), Some(plan.gateway), "{id}");
    assert_eq!(event.header("session"), Some(session), "{id}");
    let at = event.header("received_at").expect("received_at header");
    assert!(record_time_micros(at).is_some(), "{id}: received_at {at:?}");
    let value: Value = serde_json::from_slice(&event.value).unwrap_or_else(|e| {
        panic!(
            "{id}: connected value is not JSON ({e}): {}",
            event.value_str()
        )
    });
    assert_eq!(value["event"], "connected", "{value}");
    assert_eq!(value["identity"], id, "{value}");
    assert_eq!(value["session"], session, "{value}");
    assert_eq!(value["gateway"], plan.gateway, "{value}");
    assert_eq!(value["at"], at, "{value}");
    assert_eq!(value["subprotocol"], "ocpp1.6", "{value}");
    assert!(
        value["remote_addr"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:")),
        "{value}"
    );
}

async fn check_api(rest: &Api, uuid: &str, plan: &Plan) {
    let seen = rest
        .wait_for_charger_within(
            uuid,
            &format!("{} online on {}", plan.identity, plan.gateway),
            API_LAG,
            |c| {
                c["connection_status"] == "online"
                    && c["server"] == plan.gateway
                    && c["firmware_version"] == plan.firmware
                    && c["status"] == "Available"
                    && c["last_heartbeat_at"].is_string()
            },
        )
        .await;
    assert_eq!(seen["identity"], plan.identity, "{seen}");
    assert_eq!(seen["error"], "NoError", "{seen}");
    rest.wait_for_latest_meter_value_within(uuid, 1, LATEST_METER_VALUE, API_LAG)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_fleet_a_charger_moving_to_another_gateway_ends_online_there() {
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-a", "gw-b"]).await;
    let rest = fleet.rest().await;
    let id = "KF-MOVE-1";
    let added = Instant::now();
    let uuid = fleet.add_charger(id).await;
    fleet
        .wait_until_accepted(id, &["gw-a", "gw-b"], added, REGISTRY_PROPAGATION)
        .await;
    let boot = |firmware: &str| {
        format!(
            r#"{{"chargePointVendor":"Alfen BV","chargePointModel":"NG920","firmwareVersion":"{firmware}"}}"#
        )
    };
    let start = r#"{"connectorId":1,"idTag":"TAG-MOVE","meterStart":2500,"timestamp":"2026-04-02T07:15:00Z"}"#;

    let mut on_a = Station::connect(&fleet.gateway("gw-a").ocpp_addr, id, "a")
        .await
        .unwrap_or_else(|e| panic!("{id} could not connect to gw-a: {e:?}"));
    on_a.call_ok("BootNotification", &boot("move-1.0")).await;
    let first = on_a.call_ok("StartTransaction", start).await;
    rest.wait_for_charger_within(&uuid, "online on gw-a", API_LAG, |c| {
        c["connection_status"] == "online" && c["server"] == "gw-a"
    })
    .await;

    // The charger comes back through gw-b (say its network changed) before its old connection
    // to gw-a is gone, and retries the StartTransaction whose answer it may have lost.
    let mut on_b = Station::connect(&fleet.gateway("gw-b").ocpp_addr, id, "b")
        .await
        .unwrap_or_else(|e| panic!("{id} could not connect to gw-b: {e:?}"));
    on_b.call_ok("BootNotification", &boot("move-1.1")).await;
    let retried = on_b.call_ok("StartTransaction", start).await;
    let id_on = |sent: &Sent| sent.answer.as_ref().unwrap()[2]["transactionId"].clone();
    eprintln!(
        "StartTransaction retried across gateways: gw-a answered transactionId {}, gw-b {}",
        id_on(&first),
        id_on(&retried)
    );
    // Then the old connection ends: its disconnect reaches Kafka after gw-b's connect.
    on_a.close().await;
    wait_for_event(&fleet, id, "gw-a", "disconnected").await;
    rest.wait_for_charger_within(&uuid, "online on gw-b, firmware move-1.1", API_LAG, |c| {
        c["connection_status"] == "online"
            && c["server"] == "gw-b"
            && c["firmware_version"] == "move-1.1"
    })
    .await;

    // To know the API has consumed gw-a's late disconnect, a record behind it in the same
    // partition: the charger connects once more to gw-b, which replaces its session there.
    let mut on_b_again = Station::connect(&fleet.gateway("gw-b").ocpp_addr, id, "b2")
        .await
        .unwrap_or_else(|e| panic!("{id} could not connect to gw-b again: {e:?}"));
    on_b_again.call_ok("Heartbeat", "{}").await;
    let connections = wait_for_event(&fleet, id, "gw-b", "disconnected").await;
    let events: Vec<(String, String)> = connections
        .iter()
        .filter(|r| r.key == id.as_bytes())
        .map(|r| {
            let value: Value = serde_json::from_slice(&r.value).unwrap_or(Value::Null);
            let what = value["reason"].as_str().unwrap_or("").to_string();
            (
                format!("{} {}", r.header("event").unwrap_or("?"), what),
                value["gateway"].to_string(),
            )
        })
        .collect();
    eprintln!("{id} connection events in Kafka order: {events:?}");
    let last_connect = connections
        .iter()
        .rfind(|r| r.key == id.as_bytes() && r.header("event") == Some("connected"))
        .and_then(|r| r.header("received_at"))
        .expect("the newest connect")
        .to_string();
    let replaced = connections.iter().any(|r| {
        let value: Value = serde_json::from_slice(&r.value).unwrap_or(Value::Null);
        r.key == id.as_bytes() && value["gateway"] == "gw-b" && value["reason"] == "replaced"
    });
    assert!(replaced, "no `replaced` disconnect from gw-b: {events:?}");
    // Once the API shows the newest connect it has applied every earlier event of the charger,
    // gw-a's late disconnect included: that one must not have taken the charger offline.
    let seen = rest
        .wait_for_charger_within(&uuid, "the newest connect applied", API_LAG, |c| {
            c["last_connection_at"] == last_connect.as_str()
        })
        .await;
    assert_eq!(seen["connection_status"], "online", "{seen}");
    assert_eq!(seen["server"], "gw-b", "{seen}");
    drop(on_b);
    on_b_again.close().await;
    rest.wait_for_charger_within(&uuid, "offline once its last session ends", API_LAG, |c| {
        c["connection_status"] == "offline"
    })
    .await;
}

/// Reads the connections topic until it holds an `event` of `identity` from `gateway`
/// (bounded); returns the whole topic.
async fn wait_for_event(
    fleet: &Fleet,
    identity: &str,
    gateway: &str,
    event: &str,
) -> Vec<TopicRecord> {
    let started = Instant::now();
    loop {
        let records = read_topic(&fleet.brokers, &fleet.connections_topic()).await;
        let found = records.iter().any(|r| {
            r.key == identity.as_bytes()
                && r.header("event") == Some(event)
                && r.header("gateway") == Some(gateway)
        });
        if found {
            return records;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no {event} event of {identity} from {gateway} in Kafka after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn micros(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).expect("clock").as_micros() as i64
}

/// `2026-11-21T10:00:00.123456Z` as microseconds since the epoch; `None` if not of that form.
fn record_time_micros(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let shape = b.len() == 27
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            26 => *c == b'Z',
            _ => c.is_ascii_digit(),
        });
    if !shape {
        return None;
    }
    let n = |from: usize, to: usize| s[from..to].parse::<i64>().expect("digits");
    let (year, month, day) = (n(0, 4), n(5, 7), n(8, 10));
    // Days since 1970-01-01 of a Gregorian date, counting years from March so that the leap
    // day ends the year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + n(11, 13) * 3_600 + n(14, 16) * 60 + n(17, 19);
    Some(seconds * 1_000_000 + n(20, 26))
}

#[test]
fn kafka_record_times_convert_to_epoch_microseconds() {
    assert_eq!(record_time_micros("1970-01-01T00:00:00.000001Z"), Some(1));
    assert_eq!(
        record_time_micros("2024-02-29T12:34:56.500000Z"),
        Some(1_709_210_096_500_000)
    );
    assert_eq!(record_time_micros("2024-02-29T12:34:56Z"), None);
}
