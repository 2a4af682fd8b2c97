//! Firmware, logs and reservations of 2.0.1 stations (issue 45, blocks L, N and H): what a
//! station tells of its firmware update and log upload shows on the charger resource; a
//! reservation made through the REST API reaches the station as ReserveNow and ends as it does
//! (used, cancelled, expired).

use super::{Bench, SHOWN};
use crate::support::station201::RawStation201;
use crate::support::{Api, eventually_within};
use serde_json::{Value, json};
use std::time::Duration;

/// `GET /api/v3/chargers/{uuid}` once its `field` satisfies `done`.
async fn charger_once(bench: &Bench, field: &str, done: impl Fn(&Value) -> bool) -> Value {
    let path = format!("/api/v3/chargers/{}", bench.uuid);
    crate::support::eventually_within(SHOWN, &format!("{field} of {path}"), async || {
        let charger = bench.api.get_ok(&path).await["data"].clone();
        match done(&charger[field]) {
            true => Ok(charger),
            false => Err(charger.to_string()),
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_s_firmware_and_log_status_show_on_the_charger() {
    let bench = Bench::start("CP-201-FWRAW").await;
    let shown = charger_once(&bench, "firmware", Value::is_null).await;
    assert_eq!(shown["log_upload"], Value::Null, "none told yet: {shown}");

    let mut raw = RawStation201::connect(bench.cms.ocpp_addr(), &bench.identity).await;
    raw.boot().await;
    for (action, payload) in [
        (
            "FirmwareStatusNotification",
            r#"{"status":"Downloading","requestId":17}"#,
        ),
        (
            "FirmwareStatusNotification",
            r#"{"status":"Installed","requestId":17}"#,
        ),
        (
            "LogStatusNotification",
            r#"{"status":"Uploading","requestId":5}"#,
        ),
    ] {
        let answer = raw.call_text(action, payload).await;
        assert_eq!(answer[0], 3, "{action} answered: {answer}");
    }
    let shown = charger_once(&bench, "log_upload", |l| l["status"] == "Uploading").await;
    assert_eq!(shown["firmware"]["status"], "Installed", "{shown}");
    assert_eq!(shown["firmware"]["request_id"], 17, "{shown}");
    assert!(shown["firmware"]["updated_at"].is_string(), "{shown}");
    assert_eq!(shown["log_upload"]["request_id"], 5, "{shown}");
    // The list's rows show them too.
    let row = bench
        .api
        .wait_for_charger(&bench.uuid, "its log upload", |c| {
            c["log_upload"]["status"] == "Uploading"
        })
        .await;
    assert_eq!(row["firmware"], shown["firmware"], "{row}");
}

/// An expiry `seconds` from now, as RFC 3339.
pub(crate) fn expiry_in(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(seconds))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `METHOD path` (with `body`) by a client of its own, in a task of its own: the station
/// answers cms's call meanwhile. Its status and JSON.
fn send_aside(
    base: String,
    token: String,
    method: &'static str,
    path: String,
    body: Option<Value>,
) -> tokio::task::JoinHandle<(u16, Value)> {
    tokio::spawn(async move {
        let answer = Api::at(&base, &token)
            .send(method, &path, body.as_ref())
            .await;
        (answer.status, answer.json)
    })
}

/// Reservation `id` of the bench's charger once its status is `status`.
async fn reservation_once(bench: &Bench, id: &Value, status: &str, limit: Duration) -> Value {
    let path = format!("/api/v3/chargers/{}/reservations/{id}", bench.uuid);
    eventually_within(limit, &format!("{path} {status}"), async || {
        let shown = bench.api.get_ok(&path).await["data"].clone();
        match shown["status"] == status {
            true => Ok(shown),
            false => Err(shown.to_string()),
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reservations_of_a_201_station_through_the_api() {
    let bench = Bench::start("CP-201-RSV").await;
    let token = bench.cms.operator_token().await;
    let base = bench.cms.http_url("");
    let mut raw = RawStation201::connect(bench.cms.ocpp_addr(), &bench.identity).await;
    raw.boot().await;
    // One call at a time: the base report cms asks for after the boot goes first.
    let report = raw.call_from_cms("GetBaseReport").await;
    raw.answer(&report, json!({"status": "Accepted"})).await;
    (bench.api)
        .wait_for_charger(&bench.uuid, "online with 2.0.1", |c| {
            c["connection_status"] == "online" && c["ocpp_version"] == "2.0.1"
        })
        .await;
    let path = format!("/api/v3/chargers/{}/reservations", bench.uuid);

    // Bad bodies: 422 keyed by field, nothing sent.
    let errors = bench
        .api
        .expect_invalid("POST", &path, Some(&json!({})))
        .await;
    for field in ["connector_id", "id_tag", "expires_at"] {
        assert!(errors[field].is_array(), "{field}: {errors}");
    }
    for expires_at in [expiry_in(-60), expiry_in(25 * 3600), "tomorrow".to_string()] {
        let body = json!({"connector_id": 1, "id_tag": "TAG-R", "expires_at": expires_at});
        let errors = bench.api.expect_invalid("POST", &path, Some(&body)).await;
        assert!(errors["expires_at"].is_array(), "{expires_at}: {errors}");
    }
    let long_tag =
        json!({"connector_id": 1, "id_tag": "X".repeat(37), "expires_at": expiry_in(600)});
    let errors = bench
        .api
        .expect_invalid("POST", &path, Some(&long_tag))
        .await;
    assert!(errors["id_tag"].is_array(), "{errors}");

    // Accepted: active, sent as 2.0.1's ReserveNow with a Central id token.
    let body = json!({"connector_id": 1, "id_tag": "TAG-R1", "expires_at": expiry_in(3600),
        "parent_id_tag": "FLEET"});
    let made = send_aside(
        base.clone(),
        token.clone(),
        "POST",
        path.clone(),
        Some(body),
    );
    let call = raw.call_from_cms("ReserveNow").await;
    let sent = &call[3];
    assert_eq!(sent["evseId"], 1, "{call}");
    assert_eq!(
        sent["idToken"],
        json!({"idToken": "TAG-R1", "type": "Central"}),
        "{call}"
    );
    assert_eq!(sent["groupIdToken"]["idToken"], "FLEET", "{call}");
    raw.answer(&call, json!({"status": "Accepted"})).await;
    let (status, made) = made.await.unwrap();
    assert_eq!(status, 201, "{made}");
    let first = made["data"].clone();
    assert_eq!(first["status"], "active", "{first}");
    assert_eq!(first["id"], sent["id"], "the reservationId sent: {first}");
    assert_eq!(first["station_status"], "Accepted", "{first}");
    assert_eq!(first["parent_id_tag"], "FLEET", "{first}");

    // Refused: the station's status kept; EVSE 0 is any (no evseId).
    let body = json!({"connector_id": 0, "id_tag": "TAG-R2", "expires_at": expiry_in(3600)});
    let made = send_aside(
        base.clone(),
        token.clone(),
        "POST",
        path.clone(),
        Some(body),
    );
    let call = raw.call_from_cms("ReserveNow").await;
    assert!(call[3].get("evseId").is_none(), "{call}");
    raw.answer(&call, json!({"status": "Occupied"})).await;
    let (status, refused) = made.await.unwrap();
    assert_eq!(status, 201, "{refused}");
    assert_eq!(refused["data"]["status"], "refused", "{refused}");
    assert_eq!(refused["data"]["station_status"], "Occupied", "{refused}");

    // Used: a transaction starts with its reservationId.
    let started = json!({"eventType": "Started", "timestamp": "2026-11-29T10:00:00Z",
        "triggerReason": "Authorized", "seqNo": 0,
        "transactionInfo": {"transactionId": "TX-RSV-1"}, "evse": {"id": 1, "connectorId": 1},
        "idToken": {"idToken": "TAG-R1", "type": "Central"}, "reservationId": first["id"]});
    let answer = raw
        .call_text("TransactionEvent", &started.to_string())
        .await;
    assert_eq!(answer[0], 3, "{answer}");
    reservation_once(&bench, &first["id"], "used", SHOWN).await;

    // Cancelled: CancelReservation accepted; a second time it has ended.
    let body = json!({"connector_id": 1, "id_tag": "TAG-R3", "expires_at": expiry_in(3600)});
    let made = send_aside(
        base.clone(),
        token.clone(),
        "POST",
        path.clone(),
        Some(body),
    );
    let call = raw.call_from_cms("ReserveNow").await;
    raw.answer(&call, json!({"status": "Accepted"})).await;
    let third = made.await.unwrap().1["data"].clone();
    let one = format!("{path}/{}", third["id"]);
    let cancelled = send_aside(base.clone(), token.clone(), "DELETE", one.clone(), None);
    let call = raw.call_from_cms("CancelReservation").await;
    assert_eq!(call[3], json!({"reservationId": third["id"]}), "{call}");
    raw.answer(&call, json!({"status": "Accepted"})).await;
    let (status, cancelled) = cancelled.await.unwrap();
    assert_eq!(
        (status, &cancelled["data"]["status"]),
        (200, &json!("cancelled")),
        "{cancelled}"
    );
    let again = bench.api.send("DELETE", &one, None).await;
    assert_eq!(again.status, 409, "{}", again.body);

    // Expired, as the station tells (ReservationStatusUpdate), and by its time (the sweep).
    let body = json!({"connector_id": 1, "id_tag": "TAG-R4", "expires_at": expiry_in(3)});
    let made = send_aside(
        base.clone(),
        token.clone(),
        "POST",
        path.clone(),
        Some(body),
    );
    let call = raw.call_from_cms("ReserveNow").await;
    raw.answer(&call, json!({"status": "Accepted"})).await;
    let timed = made.await.unwrap().1["data"].clone();
    let body = json!({"connector_id": 1, "id_tag": "TAG-R5", "expires_at": expiry_in(3600)});
    let made = send_aside(
        base.clone(),
        token.clone(),
        "POST",
        path.clone(),
        Some(body),
    );
    let call = raw.call_from_cms("ReserveNow").await;
    raw.answer(&call, json!({"status": "Accepted"})).await;
    let told = made.await.unwrap().1["data"].clone();
    let update = json!({"reservationId": told["id"], "reservationUpdateStatus": "Removed"});
    let answer = raw
        .call_text("ReservationStatusUpdate", &update.to_string())
        .await;
    assert_eq!(answer[2], json!({}), "{answer}");
    reservation_once(&bench, &told["id"], "removed", SHOWN).await;
    reservation_once(&bench, &timed["id"], "expired", Duration::from_secs(20)).await;

    // The list: newest first.
    let page = bench.api.get_ok(&path).await;
    let ids: Vec<&Value> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(ids.len(), 5, "{page}");
    assert_eq!(ids[0], &told["id"], "{page}");

    // Another team's charger is not there; a token without chargers:write may not reserve.
    let stranger = Api::new(
        &bench.cms,
        &bench.cms.guest_token("stranger@example.com").await,
    );
    assert_eq!(stranger.get(&path).await.status, 404);
    let body = json!({"connector_id": 1, "id_tag": "TAG-X", "expires_at": expiry_in(600)});
    assert_eq!(stranger.post(&path, &body).await.status, 404);
    let reader = bench
        .cms
        .create_token("operator@example.com", Some("chargers:read"))
        .await;
    let reader = Api::new(&bench.cms, &reader);
    assert_eq!(reader.post(&path, &body).await.status, 403);
    assert_eq!(reader.get(&path).await.status, 200);
}

/// POSTs `body` to the action `segment` of the bench's charger, waiting for the station's
/// answer; the action, which must end `answered` with `expected`.
async fn answered_action(bench: &Bench, segment: &str, body: &Value, expected: &Value) -> Value {
    let path = format!("/api/v3/chargers/{}/actions/{segment}?wait=10", bench.uuid);
    let action = bench.api.expect(200, "POST", &path, Some(body)).await["data"].clone();
    assert_eq!(action["status"], "answered", "{action}");
    assert_eq!(&action["response"], expected, "{action}");
    action
}

/// A reservation made through the API: 201, and its body.
async fn reserve(bench: &Bench, id_tag: &str, expires_in: i64) -> Value {
    let path = format!("/api/v3/chargers/{}/reservations", bench.uuid);
    let body = json!({"connector_id": 1, "id_tag": id_tag, "expires_at": expiry_in(expires_in)});
    bench.api.expect(201, "POST", &path, Some(&body)).await["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_s_firmware_logs_and_reservations() {
    super::require_python_packages().await;
    let bench = Bench::start("CP-201-FWRES").await;
    let url = bench.url();
    let mut station = super::python_station(&url, &bench.identity, "commanded", &["--for", "50"]);
    station
        .wait_within(super::SCRIPT_TIMEOUT, "its StatusNotification", |l| {
            l["sent"] == "StatusNotification"
        })
        .await;
    (bench.api)
        .wait_for_charger(&bench.uuid, "online with 2.0.1", |c| {
            c["connection_status"] == "online" && c["ocpp_version"] == "2.0.1"
        })
        .await;

    // UpdateFirmware with the signed firmware's fields: the station downloads and installs.
    let firmware = json!({"requestId": 71, "firmware": {
        "location": "https://firmware.example.com/cs-2.1.bin",
        "retrieveDateTime": "2026-11-29T10:00:00Z",
        "signingCertificate": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "signature": "c2lnbmF0dXJl"}});
    answered_action(
        &bench,
        "update-firmware",
        &firmware,
        &json!({"status": "Accepted"}),
    )
    .await;
    let shown = charger_once(&bench, "firmware", |f| f["status"] == "Installed").await;
    assert_eq!(shown["firmware"]["request_id"], 71, "{shown}");
    let statuses: Vec<Value> = (station
        .lines_where("sent", "FirmwareStatusNotification")
        .iter())
    .map(|l| l["payload"]["status"].clone())
    .collect();
    assert_eq!(
        statuses,
        ["Downloading", "Downloaded", "Installing", "Installed"]
    );

    // GetLog: the station uploads it.
    let log = json!({"logType": "DiagnosticsLog", "requestId": 72,
        "log": {"remoteLocation": "https://logs.example.com/upload"}});
    let expected = json!({"status": "Accepted", "filename": "log-72.txt"});
    answered_action(&bench, "get-log", &log, &expected).await;
    let shown = charger_once(&bench, "log_upload", |l| l["status"] == "Uploaded").await;
    assert_eq!(shown["log_upload"]["request_id"], 72, "{shown}");

    // A reservation the station uses at once: a transaction starts with its reservationId.
    let used = reserve(&bench, "USE-RESERVATION", 3600).await;
    assert!(
        used["status"] == "active" || used["status"] == "used",
        "{used}"
    );
    reservation_once(&bench, &used["id"], "used", SHOWN).await;
    let started = station
        .wait_within(super::SCRIPT_TIMEOUT, "its TransactionEvent Started", |l| {
            l["sent"] == "TransactionEvent" && l["payload"]["reservationId"] == used["id"]
        })
        .await;
    assert_eq!(started["payload"]["eventType"], "Started", "{started}");

    // One held, then cancelled.
    let held = reserve(&bench, "HOLD-RESERVATION", 3600).await;
    assert_eq!(held["status"], "active", "{held}");
    let one = format!(
        "/api/v3/chargers/{}/reservations/{}",
        bench.uuid, held["id"]
    );
    let cancelled = bench.api.expect(200, "DELETE", &one, None).await;
    assert_eq!(cancelled["data"]["status"], "cancelled", "{cancelled}");

    // One the station lets expire (ReservationStatusUpdate Expired).
    let expiring = reserve(&bench, "EXPIRE-RESERVATION", 3600).await;
    reservation_once(&bench, &expiring["id"], "expired", SHOWN).await;
    station.finish(Duration::from_secs(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_charger_s_reservation_is_made_and_cancelled() {
    use crate::support::commanded::CommandedCharger;
    let cms = crate::support::Cms::up().await;
    let identity = "CP-16-RSV";
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    api.wait_for_charger(&uuid, "online with 1.6", |c| {
        c["connection_status"] == "online" && c["ocpp_version"] == "1.6"
    })
    .await;
    let path = format!("/api/v3/chargers/{uuid}/reservations");

    // 1.6's idTag holds 20 characters at most.
    let long = json!({"connector_id": 1, "id_tag": "X".repeat(21), "expires_at": expiry_in(600)});
    let errors = api.expect_invalid("POST", &path, Some(&long)).await;
    assert!(errors["id_tag"].is_array(), "{errors}");

    let body = json!({"connector_id": 2, "id_tag": "TAG-16", "parent_id_tag": "FLEET-16",
        "expires_at": expiry_in(1800)});
    let made = api.expect(201, "POST", &path, Some(&body)).await["data"].clone();
    assert_eq!(made["status"], "active", "{made}");
    let reserve = charger
        .wait_within(LINE, "its ReserveNow", |l| l["received"] == "ReserveNow")
        .await;
    let sent = &reserve["payload"];
    assert_eq!(sent["reservationId"], made["id"], "{reserve}");
    assert_eq!(
        (&sent["connectorId"], &sent["idTag"], &sent["parentIdTag"]),
        (&json!(2), &json!("TAG-16"), &json!("FLEET-16")),
        "{reserve}"
    );
    assert!(sent["expiryDate"].is_string(), "{reserve}");

    let one = format!("{path}/{}", made["id"]);
    let cancelled = api.expect(200, "DELETE", &one, None).await["data"].clone();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let cancel = charger
        .wait_within(LINE, "its CancelReservation", |l| {
            l["received"] == "CancelReservation"
        })
        .await;
    assert_eq!(
        cancel["payload"],
        json!({"reservationId": made["id"]}),
        "{cancel}"
    );

    // Its own firmware and diagnostics notifications (asked for with TriggerMessage) show on
    // the charger as a 2.0.1 station's do, without a request id.
    for message in [
        "FirmwareStatusNotification",
        "DiagnosticsStatusNotification",
    ] {
        let path = format!("/api/v3/chargers/{uuid}/actions/trigger-message?wait=10");
        let body = json!({"requestedMessage": message});
        let action = api.expect(200, "POST", &path, Some(&body)).await;
        assert_eq!(action["data"]["response"]["status"], "Accepted", "{action}");
    }
    let shown = api
        .wait_for_charger(&uuid, "firmware and log upload Idle", |c| {
            c["firmware"]["status"] == "Idle" && c["log_upload"]["status"] == "Idle"
        })
        .await;
    assert_eq!(shown["firmware"]["request_id"], Value::Null, "{shown}");
    assert_eq!(shown["log_upload"]["request_id"], Value::Null, "{shown}");
    charger.finish().await;
}

/// How long a line of a charge point may take.
const LINE: Duration = Duration::from_secs(20);
