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

async fn station_transaction_is_shown_as_the_reference_shows_it(backend: cms_store::Backend) {
    let (url, _dir) = match backend {
        cms_store::Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("cms.sqlite3").display());
            (url, Some(dir))
        }
        cms_store::Backend::Postgres => {
            let Some(server) = cms_store::testing::postgres_url() else {
                return;
            };
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
