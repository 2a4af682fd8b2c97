//! Reservations and firmware state over Kafka: a 2.0.1 station on a `cms gateway`, the REST API
//! of a `cms api` replica. A reservation made through the API reaches the station as ReserveNow
//! over the commands topic, its answer comes back over the command-results topic, and its use
//! (a TransactionEvent with its reservationId), its end by the station (ReservationStatusUpdate)
//! and the station's firmware status come back through the materialiser.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::station201::RawStation201;
use crate::support::{Api, eventually_within};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);

/// An expiry an hour from now, as RFC 3339.
fn in_an_hour() -> String {
    (chrono::Utc::now() + chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `GET path` until `done` holds of its `data`.
async fn data_once(api: &Api, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    eventually_within(API_LAG, path, async || {
        let answer = api.get(path).await;
        let data = answer.json["data"].clone();
        match answer.status == 200 && done(&data) {
            true => Ok(data),
            false => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await
}

/// Reserves EVSE 1 for `id_tag` through the API while the station answers Accepted; the
/// reservation as the API answered it.
async fn reserve(
    base: &str,
    token: &str,
    uuid: &str,
    station: &mut RawStation201,
    id_tag: &str,
) -> Value {
    let (base, token) = (base.to_string(), token.to_string());
    let path = format!("/api/v3/chargers/{uuid}/reservations");
    let body = json!({"connector_id": 1, "id_tag": id_tag, "expires_at": in_an_hour()});
    let made = tokio::spawn(async move { Api::at(&base, &token).post(&path, &body).await });
    let call = station.call_from_cms("ReserveNow").await;
    assert_eq!(call[3]["idToken"]["idToken"], id_tag, "{call}");
    station.answer(&call, json!({"status": "Accepted"})).await;
    let made = made.await.unwrap();
    assert_eq!(made.status, 201, "{}", made.body);
    made.json["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_reservation_is_made_used_and_ended_by_the_station() {
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-r"]).await;
    let token = fleet.operator_token().await;
    let api = Api::at(&fleet.rest_base, &token);
    let identity = "KR-201";
    let added = Instant::now();
    let uuid = fleet.add_charger(identity).await;
    fleet
        .wait_until_accepted(identity, &["gw-r"], added, REGISTRY_PROPAGATION)
        .await;
    let mut station = RawStation201::connect(&fleet.gateway("gw-r").ocpp_addr, identity).await;
    station.boot().await;
    let report = station.call_from_cms("GetBaseReport").await;
    station.answer(&report, json!({"status": "Accepted"})).await;
    (api)
        .wait_for_charger_within(&uuid, "online with 2.0.1", API_LAG, |c| {
            c["connection_status"] == "online" && c["ocpp_version"] == "2.0.1"
        })
        .await;

    let used = reserve(&fleet.rest_base, &token, &uuid, &mut station, "KR-TAG-1").await;
    assert_eq!(used["status"], "active", "{used}");
    let started = json!({"eventType": "Started", "timestamp": "2026-11-29T10:00:00Z",
        "triggerReason": "Authorized", "seqNo": 0,
        "transactionInfo": {"transactionId": "KR-TX-1"}, "evse": {"id": 1, "connectorId": 1},
        "idToken": {"idToken": "KR-TAG-1", "type": "Central"}, "reservationId": used["id"]});
    station
        .call_text("TransactionEvent", &started.to_string())
        .await;
    let path = format!("/api/v3/chargers/{uuid}/reservations/{}", used["id"]);
    data_once(&api, &path, |r| r["status"] == "used").await;

    let removed = reserve(&fleet.rest_base, &token, &uuid, &mut station, "KR-TAG-2").await;
    let update = json!({"reservationId": removed["id"], "reservationUpdateStatus": "Removed"});
    station
        .call_text("ReservationStatusUpdate", &update.to_string())
        .await;
    let path = format!("/api/v3/chargers/{uuid}/reservations/{}", removed["id"]);
    data_once(&api, &path, |r| r["status"] == "removed").await;

    let firmware = r#"{"status":"Installed","requestId":3}"#;
    station
        .call_text("FirmwareStatusNotification", firmware)
        .await;
    let path = format!("/api/v3/chargers/{uuid}");
    let charger = data_once(&api, &path, |c| c["firmware"]["status"] == "Installed").await;
    assert_eq!(charger["firmware"]["request_id"], 3, "{charger}");
}
