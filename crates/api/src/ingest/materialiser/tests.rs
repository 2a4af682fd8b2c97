use super::*;
use bytes::Bytes;
use chrono::DateTime;
use cms_bus::{Header, Headers, Record};
use std::borrow::Cow;

fn told_of<'a>(batch: &'a [Message], messages_topic: &str) -> Vec<Told<'a>> {
    batch
        .iter()
        .map(|m| told(&m.record, messages_topic))
        .collect()
}

fn reading(key: &'static str, connector: &'static str, at: Option<&'static str>) -> Message {
    let mut headers = vec![
        Header::new(header::ACTION, "MeterValues"),
        Header::new(header::CONNECTOR_ID, connector),
    ];
    if let Some(at) = at {
        headers.push(Header::new(header::MEASURED_AT, at));
    }
    message("t.messages", key, headers)
}

fn message(topic: &'static str, key: &'static str, headers: Vec<Header>) -> Message {
    Message {
        record: Record {
            topic: Cow::Borrowed(topic),
            key: Bytes::from_static(key.as_bytes()),
            headers: Headers::from_vec(headers),
            value: Bytes::from_static(b"{}"),
        },
        partition: 0,
        offset: 0,
    }
}

#[test]
fn only_the_newest_reading_of_each_connector_is_kept() {
    let t = |s: &'static str| Some(s);
    let batch = [
        reading("CP1", "1", t("2026-11-21T10:00:02.000000Z")),
        reading("CP1", "1", t("2026-11-21T10:00:01.000000Z")),
        reading("CP1", "1", t("2026-11-21T10:00:03.000000Z")),
        reading("CP1", "2", t("2026-11-21T10:00:01.000000Z")),
        reading("CP2", "1", t("2026-11-21T10:00:00.000000Z")),
        // A tie: the later record wins.
        reading("CP2", "1", t("2026-11-21T10:00:00.000000Z")),
        // Without the headers (an older gateway, another producer): always parsed.
        reading("CP1", "1", None),
        message(
            "t.messages",
            "CP1",
            vec![Header::new(header::ACTION, "Heartbeat")],
        ),
        // Same headers on another topic: not a reading of this one.
        message(
            "t.other",
            "CP1",
            vec![
                Header::new(header::ACTION, "MeterValues"),
                Header::new(header::CONNECTOR_ID, "1"),
                Header::new(header::MEASURED_AT, "2026-11-21T11:00:00.000000Z"),
            ],
        ),
    ];
    assert_eq!(
        superseded_readings(&told_of(&batch, "t.messages")),
        [true, true, false, false, true, false, false, false, false]
    );
}

/// A store on `backend` that refuses a connector status of `Faulted`, the way a constraint the
/// materialiser does not know of would (a DBA's, or a schema ahead of this code). `None` when
/// PostgreSQL is not configured.
async fn store_refusing_faulted(
    backend: cms_store::Backend,
) -> Option<(Store, Option<tempfile::TempDir>)> {
    let (url, dir, refuse) = match backend {
        cms_store::Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("cms.sqlite3").display());
            let refuse = "CREATE TRIGGER refuse_faulted BEFORE UPDATE OF status ON connectors
                WHEN NEW.status = 'Faulted' BEGIN SELECT RAISE(ABORT, 'no faults here'); END";
            (url, Some(dir), refuse)
        }
        cms_store::Backend::Postgres => {
            let server = cms_store::testing::postgres_url()?;
            let url = cms_store::testing::fresh_schema(&server).await.unwrap();
            let refuse =
                "ALTER TABLE connectors ADD CONSTRAINT refuse_faulted CHECK (status <> 'Faulted')";
            (url, None, refuse)
        }
    };
    let store = Store::open_url(&url).await.unwrap();
    cms_store::testing::execute(&url, refuse).await.unwrap();
    Some((store, dir))
}

fn ocpp_record(topics: &Topics, identity: &str, action: &str, payload: &str) -> Record {
    Record {
        topic: Cow::Borrowed(topics.messages),
        key: Bytes::copy_from_slice(identity.as_bytes()),
        headers: Headers::from_iter([
            Header::new(header::ACTION, Bytes::copy_from_slice(action.as_bytes())),
            Header::new(header::RECEIVED_AT, "2026-11-21T10:00:00.000000Z"),
        ]),
        value: Bytes::copy_from_slice(payload.as_bytes()),
    }
}

async fn a_refused_record_is_set_aside_and_the_rest_go_on(backend: cms_store::Backend) {
    use cms_bus::{Bus, InProcessBus, InProcessConfig, Publisher};
    let Some((store, _dir)) = store_refusing_faulted(backend).await else {
        return;
    };
    let mut uuids = Vec::new();
    for identity in ["CP-1", "CP-2"] {
        let new = cms_store::NewCharger {
            identity: identity.into(),
            ..Default::default()
        };
        uuids.push(store.add_charger(&new).await.unwrap());
    }
    let topics = Topics::with_prefix("t");
    let bus = InProcessBus::new(InProcessConfig::default(), &topics.all());
    let subscriber = bus.subscribe("t-api", &topics.all()).unwrap();
    let status = |connector: u32, status: &str| {
        format!(r#"{{"connectorId":{connector},"errorCode":"NoError","status":"{status}"}}"#)
    };
    let reading = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z",
        "sampledValue":[{"value":"1234","measurand":"Energy.Active.Import.Register","unit":"Wh"}]}]}"#;
    for record in [
        ocpp_record(
            &topics,
            "CP-1",
            "StatusNotification",
            &status(1, "Available"),
        ),
        ocpp_record(&topics, "CP-1", "StatusNotification", &status(1, "Faulted")),
        ocpp_record(&topics, "CP-2", "MeterValues", reading),
        ocpp_record(
            &topics,
            "CP-1",
            "StatusNotification",
            &status(2, "Charging"),
        ),
    ] {
        bus.publish(record).await.unwrap();
    }
    bus.close();
    let materialiser =
        Materialiser::new(store.clone(), Arc::new(LatestValueCache::default()), topics);
    tokio::time::timeout(Duration::from_secs(30), materialiser.run(subscriber))
        .await
        .expect("the materialiser drains the bus instead of retrying forever");

    let (letters, total) = store.dead_letters(10, 0).await.unwrap();
    assert_eq!(total, 1, "{letters:?}");
    let letter = &letters[0].letter;
    assert_eq!(letter.key, b"CP-1");
    assert_eq!(letter.value, status(1, "Faulted").as_bytes());
    assert!(letter.headers.contains("StatusNotification"), "{letter:?}");
    assert!(!letter.reason.is_empty());
    let readings = store.latest_meter_values().await.unwrap();
    assert_eq!(
        readings
            .iter()
            .map(|r| r.identity.as_str())
            .collect::<Vec<_>>(),
        ["CP-2"],
        "the reading behind the refused record was stored"
    );
    let operator = store.ensure_user("op@example.com").await.unwrap();
    let charger = store
        .charger_visible_to(operator.id, &uuids[0])
        .await
        .unwrap()
        .expect("the operator sees CP-1")
        .id;
    let statuses: Vec<(i64, String)> = store
        .connectors(charger)
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.connector_id, c.status))
        .collect();
    assert_eq!(
        statuses,
        [(1, "Available".to_string()), (2, "Charging".to_string())],
        "the changes around the refused one were written, in order"
    );
}

#[tokio::test]
async fn a_refused_record_is_set_aside_and_the_rest_go_on_sqlite() {
    a_refused_record_is_set_aside_and_the_rest_go_on(cms_store::Backend::Sqlite).await;
}

#[tokio::test]
async fn a_refused_record_is_set_aside_and_the_rest_go_on_postgres() {
    a_refused_record_is_set_aside_and_the_rest_go_on(cms_store::Backend::Postgres).await;
}

/// A MeterValues record of `connector` at `at` with the energy register `wh`, as the gateway
/// publishes it.
fn energy_record(topics: &Topics, connector: u32, at: &str, wh: i64) -> Message {
    let payload = format!(
        r#"{{"connectorId":{connector},"meterValue":[{{"timestamp":"{at}","sampledValue":[{{"value":"{wh}"}}]}}]}}"#
    );
    let mut record = ocpp_record(topics, "CP-1", "MeterValues", &payload);
    record.headers.push(Header::new(
        header::CONNECTOR_ID,
        Bytes::from(connector.to_string()),
    ));
    // The gateway's record time form: fixed width, microseconds.
    let measured_at = at.replace('Z', ".000000Z");
    record
        .headers
        .push(Header::new(header::MEASURED_AT, Bytes::from(measured_at)));
    Message {
        record,
        partition: 0,
        offset: 0,
    }
}

#[tokio::test]
async fn pricing_keeps_a_reading_a_minute_even_when_newer_ones_supersede_it() {
    let topics = Topics::with_prefix("t");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let mut materialiser = Materialiser::new(store, Arc::new(LatestValueCache::default()), topics);
    let batch = [
        energy_record(&topics, 1, "2026-11-21T10:00:00Z", 100),
        // 30 s later: too close to the one kept.
        energy_record(&topics, 1, "2026-11-21T10:00:30Z", 150),
        energy_record(&topics, 1, "2026-11-21T10:01:00Z", 200),
        energy_record(&topics, 2, "2026-11-21T10:00:30Z", 900),
        // Sent late, older than the last kept: kept too.
        energy_record(&topics, 1, "2026-11-21T09:59:00Z", 50),
    ];
    let (changes, sources) = materialiser.changes_of(&batch);
    let energy: Vec<(usize, i64, i64)> = changes
        .iter()
        .zip(&sources)
        .filter_map(|(change, source)| match change {
            StateChange::TransactionEnergy {
                connector_id,
                energy,
                ..
            }
            | StateChange::MeterValue {
                connector_id,
                energy: Some(energy),
                ..
            } => Some((*source, *connector_id, energy.wh)),
            _ => None,
        })
        .collect();
    assert_eq!(energy, [(0, 1, 100), (2, 1, 200), (3, 2, 900), (4, 1, 50)]);
    // The latest of each connector is still one change, the newest.
    let latest: Vec<usize> = changes
        .iter()
        .zip(&sources)
        .filter(|(c, _)| matches!(c, StateChange::MeterValue { .. }))
        .map(|(_, s)| *s)
        .collect();
    assert_eq!(latest, [2, 3]);

    // The next batch goes on from what was kept.
    let next = [
        energy_record(&topics, 1, "2026-11-21T10:01:59Z", 290),
        energy_record(&topics, 1, "2026-11-21T10:02:00Z", 300),
    ];
    let (changes, _) = materialiser.changes_of(&next);
    assert!(
        matches!(&changes[..], [StateChange::MeterValue { energy: Some(e), .. }] if e.wh == 300),
        "{changes:?}"
    );
}

#[tokio::test]
async fn readings_sent_backwards_are_read_for_pricing_once_a_minute() {
    let topics = Topics::with_prefix("t");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let mut materialiser = Materialiser::new(store, Arc::new(LatestValueCache::default()), topics);
    // From 10:01:00 down to 09:57:00, a second older each time, the register 1 Wh a second.
    let first: DateTime<Utc> = "2026-11-21T09:57:00Z".parse().unwrap();
    let batch: Vec<Message> = (0..=240_i64)
        .rev()
        .map(|s| {
            let at = first + chrono::TimeDelta::seconds(s);
            let at = at.format("%Y-%m-%dT%H:%M:%SZ").to_string();
            energy_record(&topics, 1, &at, 1_000 + s)
        })
        .collect();
    let (changes, _) = materialiser.changes_of(&batch);
    let mut read: Vec<i64> = changes
        .iter()
        .filter_map(|change| match change {
            StateChange::TransactionEnergy { energy, .. }
            | StateChange::MeterValue {
                energy: Some(energy),
                ..
            } => Some(energy.wh),
            _ => None,
        })
        .collect();
    read.sort();
    // Each minute's earliest, the one the store keeps: 09:57:00, 09:58:00, ... 10:01:00.
    assert_eq!(read, [1_000, 1_060, 1_120, 1_180, 1_240]);
}

#[tokio::test]
async fn a_reading_without_a_register_does_not_take_its_connectors_minute() {
    let topics = Topics::with_prefix("t");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let mut materialiser = Materialiser::new(store, Arc::new(LatestValueCache::default()), topics);
    // A charger that sends its power on its own, then its register.
    let power = {
        let payload = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"7.4","measurand":"Power.Active.Import","unit":"kW"}]}]}"#;
        let mut record = ocpp_record(&topics, "CP-1", "MeterValues", payload);
        record.headers.push(Header::new(header::CONNECTOR_ID, "1"));
        record.headers.push(Header::new(
            header::MEASURED_AT,
            "2026-11-21T10:00:00.000000Z",
        ));
        Message {
            record,
            partition: 0,
            offset: 0,
        }
    };
    materialiser.changes_of(&[power]);
    let (changes, _) =
        materialiser.changes_of(&[energy_record(&topics, 1, "2026-11-21T10:00:10Z", 500)]);
    assert!(
        matches!(&changes[..], [StateChange::MeterValue { energy: Some(e), .. }] if e.wh == 500),
        "{changes:?}"
    );
}

#[test]
fn a_gateways_start_and_beacons_are_its_signs_of_life() {
    let change = |value: &str| {
        let event: cms_bus::ConnectionEvent = serde_json::from_str(value).ok()?;
        translate::connection_change("gw-1".into(), &event, Utc::now())
    };
    let at = "2026-11-21T10:00:00.000000Z";
    assert_eq!(
        change(&format!(
            r#"{{"event":"gateway_alive","gateway":"gw-1","at":"{at}","beacon_interval_ms":10000}}"#
        )),
        Some(StateChange::GatewayAlive {
            server: "gw-1".into(),
            at: at.into(),
        })
    );
    assert_eq!(
        change(&format!(
            r#"{{"event":"gateway_started","gateway":"gw-1","at":"{at}","beacon_interval_ms":10000}}"#
        )),
        Some(StateChange::GatewayStarted {
            server: "gw-1".into(),
            at: at.into(),
            beacons: true,
        })
    );
    // A gateway of an older version: it starts, and never beacons.
    assert_eq!(
        change(&format!(
            r#"{{"event":"gateway_started","gateway":"gw-1","at":"{at}"}}"#
        )),
        Some(StateChange::GatewayStarted {
            server: "gw-1".into(),
            at: at.into(),
            beacons: false,
        })
    );
    // No gateway named: nothing to record.
    for value in [
        r#"{"event":"gateway_alive","at":"2026-11-21T10:00:00Z"}"#,
        r#"{"event":"gateway_alive","gateway":"","at":"2026-11-21T10:00:00Z"}"#,
        r#"{"event":"gateway_alive","gateway":7}"#,
    ] {
        assert_eq!(change(value), None, "{value}");
    }
}
