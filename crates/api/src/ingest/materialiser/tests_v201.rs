//! A 2.0.1 station's records, as the gateway publishes them, through the materialiser into
//! what the REST API answers: its EVSE as a connector, the EVSE's latest meter value, and its
//! transaction with energy and cost, whatever order the events arrive in.

use super::*;
use crate::http::chargers::connectors::Connector;
use bytes::Bytes;
use cms_bus::contract::header;
use cms_bus::{Bus, Header, Headers, InProcessBus, InProcessConfig, Publisher, Record};
use serde_json::{Value, json};
use std::borrow::Cow;

/// A 2.0.1 record of CP-1 with the gateway's headers (contract section 3).
fn record(topics: &Topics, action: &str, payload: Value, extra: &[(&str, String)]) -> Record {
    let mut headers = Headers::from_iter([
        Header::new(header::ACTION, Bytes::copy_from_slice(action.as_bytes())),
        Header::new(header::RECEIVED_AT, "2026-11-21T10:30:00.000000Z"),
        Header::new(header::OCPP_VERSION, "ocpp2.0.1"),
    ]);
    for (name, value) in extra {
        let name: &'static str = match *name {
            "connector_id" => header::CONNECTOR_ID,
            "measured_at" => header::MEASURED_AT,
            "transaction_id" => header::TRANSACTION_ID,
            "id_tag_status" => header::ID_TAG_STATUS,
            _ => header::EVENT_TYPE,
        };
        headers.push(Header::new(name, Bytes::from(value.clone())));
    }
    Record {
        topic: Cow::Borrowed(topics.messages),
        key: Bytes::from_static(b"CP-1"),
        headers,
        value: Bytes::from(payload.to_string()),
    }
}

/// A TransactionEvent of transaction "8c1f..." on EVSE 1, as the Python `ocpp` package's v201
/// station sends it, and its record.
fn event(topics: &Topics, event_type: &str, seq_no: u32, minute: u32, extra: Value) -> Record {
    let timestamp = format!("2026-11-21T10:{minute:02}:00Z");
    let mut payload = json!({
        "eventType": event_type,
        "timestamp": timestamp,
        "triggerReason": "MeterValuePeriodic",
        "seqNo": seq_no,
        "transactionInfo": {"transactionId": "8c1f6e2a-4b7d-4e0a-9d35-2f1c0b7a6e11"},
        "evse": {"id": 1, "connectorId": 1},
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let mut headers = vec![
        ("connector_id", "1".to_string()),
        (
            "transaction_id",
            "8c1f6e2a-4b7d-4e0a-9d35-2f1c0b7a6e11".to_string(),
        ),
        ("event_type", event_type.to_string()),
    ];
    if payload.get("meterValue").is_some() {
        headers.push((
            "measured_at",
            format!("2026-11-21T10:{minute:02}:00.000000Z"),
        ));
    }
    if payload.get("idToken").is_some() {
        headers.push(("id_tag_status", "Accepted".to_string()));
    }
    record(topics, "TransactionEvent", payload, &headers)
}

/// The energy register `wh` (in kWh, as many stations send it) at `minute`, in `context`.
fn energy(minute: u32, wh: f64, context: &str) -> Value {
    json!([{"timestamp": format!("2026-11-21T10:{minute:02}:00Z"), "sampledValue": [
        {"value": wh / 1000.0, "context": context, "measurand": "Energy.Active.Import.Register",
         "unitOfMeasure": {"unit": "kWh"}},
        {"value": 7.2, "context": context, "measurand": "Power.Active.Import",
         "unitOfMeasure": {"unit": "W", "multiplier": 3}}]}])
}

/// A store with charger CP-1 on a site priced at 0.30 EUR/kWh (no VAT), as the operator sees
/// it; `None` when PostgreSQL is asked for and not configured.
async fn priced_station(
    backend: cms_store::Backend,
) -> Option<(Store, cms_store::ChargerRow, Option<tempfile::TempDir>)> {
    let (url, _dir) = match backend {
        cms_store::Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("cms.sqlite3").display());
            (url, Some(dir))
        }
        cms_store::Backend::Postgres => {
            let server = cms_store::testing::postgres_url()?;
            (
                cms_store::testing::fresh_schema(&server).await.unwrap(),
                None,
            )
        }
    };
    let store = Store::open_url(&url).await.unwrap();
    let new = cms_store::NewCharger {
        identity: "CP-1".into(),
        ..Default::default()
    };
    let uuid = store.add_charger(&new).await.unwrap();
    let operator = store.ensure_user("op@example.com").await.unwrap();
    let charger = store
        .charger_visible_to(operator.id, &uuid)
        .await
        .unwrap()
        .unwrap();
    // The site prices energy at 0.30 EUR/kWh, no VAT.
    let (sites, _) = store.sites_visible_to(operator.id, 10, 0).await.unwrap();
    let site = sites.iter().find(|s| s.id == charger.site_id).unwrap();
    let body = json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "vat": null, "step_size": 1}]}]});
    let tariff = cms_store::tariffs::NewTariff {
        name: "Energy".into(),
        currency: "EUR".into(),
        body: body.to_string(),
    };
    let tariff = store.create_tariff(site.team_id, &tariff).await.unwrap();
    let changes = cms_store::sites::SiteChanges {
        tariff_id: Some(Some(tariff.id)),
        ..Default::default()
    };
    store.update_site(site.id, changes).await.unwrap();

    Some((store, charger, _dir))
}

async fn station_transaction_is_shown_as_the_reference_shows_it(backend: cms_store::Backend) {
    let Some((store, charger, _dir)) = priced_station(backend).await else {
        return;
    };
    let topics = Topics::with_prefix("t");
    let bus = InProcessBus::new(InProcessConfig::default(), &topics.all());
    let subscriber = bus.subscribe("t-api", &topics.all()).unwrap();
    let status = json!({"timestamp": "2026-11-21T10:00:00Z", "connectorStatus": "Occupied",
        "evseId": 1, "connectorId": 1});
    let started = json!({"triggerReason": "Authorized",
        "idToken": {"idToken": "04A2B3C4", "type": "ISO14443"},
        "meterValue": energy(0, 1_000.0, "Transaction.Begin")});
    let updated = json!({"offline": true, "meterValue": energy(5, 4_000.0, "Sample.Periodic")});
    let ended = json!({"triggerReason": "EVCommunicationLost", "offline": true,
        "transactionInfo": {"transactionId": "8c1f6e2a-4b7d-4e0a-9d35-2f1c0b7a6e11",
            "stoppedReason": "EVDisconnected"},
        "meterValue": energy(10, 11_000.0, "Transaction.End")});
    // The station was offline after its start: its Ended comes before its Updated, the Updated
    // twice (the bus delivers at least once).
    for record in [
        record(&topics, "StatusNotification", status, &[]),
        event(&topics, "Started", 0, 0, started),
        event(&topics, "Ended", 2, 10, ended),
        event(&topics, "Updated", 1, 5, updated.clone()),
        event(&topics, "Updated", 1, 5, updated),
    ] {
        bus.publish(record).await.unwrap();
    }
    bus.close();
    let cache = Arc::new(LatestValueCache::default());
    let materialiser = Materialiser::new(store.clone(), cache.clone(), topics);
    tokio::time::timeout(Duration::from_secs(30), materialiser.run(subscriber))
        .await
        .expect("the materialiser drains the bus");

    // GET .../connectors: the EVSE, occupied with no transaction running any more.
    let connectors: Vec<Value> = store
        .connectors(charger.id)
        .await
        .unwrap()
        .into_iter()
        .map(|c| serde_json::to_value(Connector::from(c)).unwrap())
        .collect();
    assert_eq!(connectors.len(), 1, "{connectors:?}");
    let evse = &connectors[0];
    assert_eq!(
        (
            &evse["connector_id"],
            &evse["evse_id"],
            &evse["evse_connector_id"]
        ),
        (&json!(1), &json!(1), &json!(1))
    );
    assert_eq!(
        (&evse["status"], &evse["ocpp_status"]),
        (&json!("Preparing"), &json!("Occupied"))
    );

    // GET .../connectors/1/latest-metervalue: the newest reading, in 1.6's REST shape.
    let latest = cache.get("CP-1", 1).expect("the EVSE has a latest reading");
    let latest: Value = serde_json::from_slice(&latest.meter_value).unwrap();
    assert_eq!(
        latest,
        json!([{"timestamp": "2026-11-21T10:10:00Z", "sampledValue": [
            {"value": "11", "context": "Transaction.End", "format": "Raw",
             "measurand": "Energy.Active.Import.Register", "location": "Outlet", "unit": "kWh"},
            {"value": "7200", "context": "Transaction.End", "format": "Raw",
             "measurand": "Power.Active.Import", "location": "Outlet", "unit": "W"}]}])
    );
    let stored = store.latest_meter_values().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        serde_json::from_str::<Value>(&stored[0].meter_value).unwrap(),
        latest
    );

    // GET .../transactions: one transaction, with its energy and its cost.
    let rows = store
        .transactions_of_charger(charger.id, &Default::default(), 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "one transaction, never two");
    let readings = store.transaction_readings(&[rows[0].id]).await.unwrap();
    let t = rows.into_iter().next().unwrap();
    let id = t.id;
    let cost = crate::control::pricing::cost_of(&t, &readings, Utc::now());
    let shown =
        serde_json::to_value(crate::http::transactions::transaction(t, &charger, cost)).unwrap();
    assert_eq!(shown["id"], json!(id));
    assert_eq!(
        shown["station_transaction_id"],
        json!("8c1f6e2a-4b7d-4e0a-9d35-2f1c0b7a6e11")
    );
    assert_eq!(
        (&shown["id_tag"], &shown["id_tag_status"]),
        (&json!("04A2B3C4"), &json!("Accepted"))
    );
    assert_eq!(
        (
            &shown["meter_start"],
            &shown["meter_stop"],
            &shown["total_kwh"]
        ),
        (&json!(1_000), &json!(11_000), &json!("10.00"))
    );
    assert_eq!(
        (&shown["started_at"], &shown["stopped_at"]),
        (
            &json!("2026-11-21T10:00:00.000000Z"),
            &json!("2026-11-21T10:10:00.000000Z")
        )
    );
    assert_eq!(shown["stop_reason"], json!("EVDisconnected"));
    assert_eq!(shown["connector"]["connector_id"], json!(1));
    // 10 kWh at 0.30 EUR, written once the late events were in.
    assert_eq!(
        (&shown["cost"]["currency"], &shown["cost"]["excl_vat"]),
        (&json!("EUR"), &json!("3.00")),
        "{shown}"
    );
    let written = store
        .transaction_of_station("CP-1", "8c1f6e2a-4b7d-4e0a-9d35-2f1c0b7a6e11")
        .await
        .unwrap()
        .unwrap();
    assert!(written.cost.is_some(), "the final cost is written");
}

#[tokio::test]
async fn a_station_transaction_is_shown_as_the_reference_shows_it_sqlite() {
    station_transaction_is_shown_as_the_reference_shows_it(cms_store::Backend::Sqlite).await;
}

#[tokio::test]
async fn a_station_transaction_is_shown_as_the_reference_shows_it_postgres() {
    station_transaction_is_shown_as_the_reference_shows_it(cms_store::Backend::Postgres).await;
}

/// A station charging sends an Updated every few seconds; a batch holds many of one
/// transaction. Skipping the superseded ones before parsing (events.rs) must not change what
/// the API shows: the newest reading is the EVSE's latest, pricing keeps each minute's earliest
/// register, and an Updated carrying a late idToken is read whatever its place.
async fn thinned_updated_events_show_what_every_event_shows(backend: cms_store::Backend) {
    let Some((store, charger, _dir)) = priced_station(backend).await else {
        return;
    };
    let topics = Topics::with_prefix("t");
    let bus = InProcessBus::new(InProcessConfig::default(), &topics.all());
    let subscriber = bus.subscribe("t-api", &topics.all()).unwrap();
    // Started without an idToken (authorised later) at 1 kWh; then three Updated a minute over
    // minutes 1-4, each 250 Wh more (the seconds in the sample's time), the idToken arriving on
    // one in the middle.
    let started = json!({"triggerReason": "CablePluggedIn",
        "meterValue": energy(0, 1_000.0, "Transaction.Begin")});
    bus.publish(event(&topics, "Started", 0, 0, started))
        .await
        .unwrap();
    let mut seq = 0;
    for minute in 1..=4u32 {
        for second in [10u32, 30, 50] {
            seq += 1;
            let wh = 1_000.0 + 250.0 * f64::from(seq);
            let mut meter = energy(minute, wh, "Sample.Periodic");
            let at = format!("2026-11-21T10:{minute:02}:{second:02}Z");
            meter[0]["timestamp"] = json!(at);
            let mut payload = json!({"meterValue": meter});
            if seq == 6 {
                payload["idToken"] = json!({"idToken": "LATE-TAG", "type": "ISO14443"});
                payload["triggerReason"] = json!("Authorized");
            }
            let mut record = event(&topics, "Updated", seq, minute, payload);
            // The gateway's measured_at is the sample's own time.
            record.headers = record
                .headers
                .iter()
                .map(|h| match h.name == header::MEASURED_AT {
                    true => Header::new(
                        header::MEASURED_AT,
                        Bytes::from(format!("2026-11-21T10:{minute:02}:{second:02}.000000Z")),
                    ),
                    false => h.clone(),
                })
                .collect();
            bus.publish(record).await.unwrap();
        }
    }
    bus.close();
    let cache = Arc::new(LatestValueCache::default());
    let materialiser = Materialiser::new(store.clone(), cache.clone(), topics);
    tokio::time::timeout(Duration::from_secs(30), materialiser.run(subscriber))
        .await
        .expect("the materialiser drains the bus");

    // The EVSE's latest: the newest event's (seq 12, 4 kWh at 10:04:50).
    let latest = cache.get("CP-1", 1).expect("the EVSE has a latest reading");
    let latest: Value = serde_json::from_slice(&latest.meter_value).unwrap();
    assert_eq!(
        latest[0]["timestamp"],
        json!("2026-11-21T10:04:50Z"),
        "{latest}"
    );
    assert_eq!(
        latest[0]["sampledValue"][0]["value"],
        json!("4"),
        "{latest}"
    );

    let rows = store
        .transactions_of_charger(charger.id, &Default::default(), 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let t = &rows[0];
    assert_eq!(t.id_tag, "LATE-TAG", "the late idToken is read");
    assert_eq!(t.meter_start, 1_000);
    assert!(t.stopped_at.is_none());
    // Pricing's registers: the start's, then each minute's earliest (the :10 one).
    let readings = store.transaction_readings(&[t.id]).await.unwrap();
    let kept: Vec<(String, i64)> = readings
        .into_iter()
        .filter_map(|r| Some((r.energy_at?, r.energy_wh?)))
        .collect();
    let expected: Vec<(String, i64)> = [(0, 0, 1_000), (1, 10, 1_250), (2, 10, 2_000)]
        .into_iter()
        .chain([(3, 10, 2_750), (4, 10, 3_500)])
        .map(|(m, s, wh)| (format!("2026-11-21T10:{m:02}:{s:02}.000000Z"), wh))
        .collect();
    assert_eq!(kept, expected);
}

#[tokio::test]
async fn thinned_updated_events_show_what_every_event_shows_sqlite() {
    thinned_updated_events_show_what_every_event_shows(cms_store::Backend::Sqlite).await;
}

#[tokio::test]
async fn thinned_updated_events_show_what_every_event_shows_postgres() {
    thinned_updated_events_show_what_every_event_shows(cms_store::Backend::Postgres).await;
}

#[test]
fn of_a_transaction_s_updated_events_only_the_newest_and_each_minute_s_earliest_are_read() {
    let tx = |at: &'static str| Told::Event(("CP-1", "tx-1", None, at));
    let told = [
        tx("2026-11-21T10:01:30.000000Z"),
        tx("2026-11-21T10:01:10.000000Z"),
        Told::Other,
        tx("2026-11-21T10:01:50.000000Z"),
        tx("2026-11-21T10:02:10.000000Z"),
        Told::Event(("CP-1", "tx-2", None, "2026-11-21T10:01:40.000000Z")),
        tx("2026-11-21T10:02:20.000000Z"),
    ];
    assert_eq!(
        events::thinned_events(&told, &events::MinutesRead::default()),
        [
            Some(false), // superseded, not its minute's earliest: skipped
            Some(true),  // minute 1's earliest: its registers
            None,
            Some(false),
            Some(true), // minute 2's earliest
            None,       // another transaction's newest: read whole
            None,       // the newest: read whole
        ]
    );
}

#[test]
fn a_minute_read_in_an_earlier_batch_is_not_read_again_for_its_registers() {
    let mut read = events::MinutesRead::default();
    read.note("CP-1", "tx-1", "2026-11-21T10:01:05.000000Z");
    let tx = |at: &'static str| Told::Event(("CP-1", "tx-1", None, at));
    let told = [
        tx("2026-11-21T10:01:30.000000Z"),
        tx("2026-11-21T10:01:50.000000Z"),
        tx("2026-11-21T10:01:01.000000Z"), // earlier than the one read: news for pricing
        tx("2026-11-21T10:02:10.000000Z"),
        tx("2026-11-21T10:02:20.000000Z"),
    ];
    let thinned = events::thinned_events(&told, &read);
    assert_eq!(
        thinned,
        [Some(false), Some(false), Some(true), Some(true), None]
    );
    // Once the transaction ended, its minutes are read again.
    read.forget("CP-1", "tx-1");
    let told = [
        tx("2026-11-21T10:01:30.000000Z"),
        tx("2026-11-21T10:01:50.000000Z"),
    ];
    assert_eq!(events::thinned_events(&told, &read), [Some(true), None]);
}
