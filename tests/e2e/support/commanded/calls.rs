//! The 19 calls of a central system as the REST API takes them (path segment, a valid request,
//! the answer the commanded charge point gives), a client that sends them as a user does, and
//! the check of one round trip: REST answer, what reached the charger, what it answered.

use super::CommandedCharger;
use crate::support::{Api, assert_record_time, eventually_within, is_uuid};
use serde_json::{Value, json};
use std::time::Duration;

/// The id tag of the requests that carry one.
pub const ID_TAG: &str = "04A2B3C4D5E680";
/// How long a POST may take: `?wait=10` and a margin.
const POST_TIMEOUT: Duration = Duration::from_secs(15);
/// The statuses an action never leaves.
pub const FINAL: [&str; 4] = ["answered", "failed", "timed_out", "expired"];

/// One action as a test sends it.
pub struct Planned {
    pub segment: &'static str,
    /// The OCPP action name.
    pub action: &'static str,
    /// The body; `None` sends no body at all (an action without fields).
    pub body: Option<Value>,
    /// What the charge point answers: every field given here must be in the `response`.
    pub answer: Value,
}

impl Planned {
    /// The OCPP request the body stands for (`{}` for no body).
    pub fn request(&self) -> Value {
        self.body.clone().unwrap_or_else(|| json!({}))
    }
}

fn planned(segment: &'static str, action: &'static str, body: Value, answer: Value) -> Planned {
    Planned {
        segment,
        action,
        body: Some(body),
        answer,
    }
}

/// Every call a central system makes in OCPP 1.6J, with a valid request each, in the order of
/// docs/actions.md. Sent in this order to a fresh charge point, each gets the answer given.
pub fn nineteen() -> Vec<Planned> {
    let accepted = json!({"status": "Accepted"});
    let profile = json!({
        "chargingProfileId": 1, "stackLevel": 0, "chargingProfilePurpose": "TxDefaultProfile",
        "chargingProfileKind": "Absolute",
        "chargingSchedule": {
            "startSchedule": "2030-01-01T00:00:00Z", "chargingRateUnit": "A",
            "chargingSchedulePeriod": [
                {"startPeriod": 0, "limit": 16.0},
                {"startPeriod": 3600, "limit": 8.5, "numberPhases": 3}
            ]
        }
    });
    vec![
        planned(
            "cancel-reservation",
            "CancelReservation",
            json!({"reservationId": 7}),
            accepted.clone(),
        ),
        planned(
            "change-availability",
            "ChangeAvailability",
            json!({"connectorId": 1, "type": "Inoperative"}),
            accepted.clone(),
        ),
        planned(
            "change-configuration",
            "ChangeConfiguration",
            json!({"key": "MeterValueSampleInterval", "value": "30"}),
            accepted.clone(),
        ),
        Planned {
            segment: "clear-cache",
            action: "ClearCache",
            body: None,
            answer: accepted.clone(),
        },
        planned(
            "clear-charging-profile",
            "ClearChargingProfile",
            json!({"id": 3, "connectorId": 1}),
            accepted.clone(),
        ),
        planned(
            "data-transfer",
            "DataTransfer",
            json!({"vendorId": "com.example.vendor", "messageId": "Ping", "data": "héllo \"1\""}),
            json!({"status": "Accepted", "data": "héllo \"1\""}),
        ),
        planned(
            "get-composite-schedule",
            "GetCompositeSchedule",
            json!({"connectorId": 1, "duration": 3600, "chargingRateUnit": "W"}),
            json!({"status": "Accepted", "connectorId": 1, "chargingSchedule": {
                "duration": 3600, "chargingRateUnit": "W",
                "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 16.0}]
            }}),
        ),
        planned(
            "get-configuration",
            "GetConfiguration",
            json!({"key": ["HeartbeatInterval", "NoSuchKey"]}),
            json!({
                "configurationKey": [
                    {"key": "HeartbeatInterval", "readonly": false, "value": "300"}
                ],
                "unknownKey": ["NoSuchKey"]
            }),
        ),
        planned(
            "get-diagnostics",
            "GetDiagnostics",
            json!({"location": "ftp://diagnostics.example.com/upload", "retries": 2}),
            json!({"fileName": "diagnostics.zip"}),
        ),
        Planned {
            segment: "get-local-list-version",
            action: "GetLocalListVersion",
            body: Some(json!({})),
            answer: json!({"listVersion": 0}),
        },
        planned(
            "remote-start-transaction",
            "RemoteStartTransaction",
            json!({"idTag": ID_TAG, "connectorId": 1}),
            accepted.clone(),
        ),
        planned(
            "remote-stop-transaction",
            "RemoteStopTransaction",
            json!({"transactionId": 42}),
            accepted.clone(),
        ),
        planned(
            "reserve-now",
            "ReserveNow",
            json!({"connectorId": 1, "expiryDate": "2030-01-01T00:00:00Z", "idTag": ID_TAG,
                   "reservationId": 7}),
            accepted.clone(),
        ),
        planned("reset", "Reset", json!({"type": "Soft"}), accepted.clone()),
        planned(
            "send-local-list",
            "SendLocalList",
            json!({"listVersion": 5, "updateType": "Full", "localAuthorizationList": [
                {"idTag": ID_TAG, "idTagInfo": {"status": "Accepted",
                                                "expiryDate": "2030-01-01T00:00:00Z"}}
            ]}),
            accepted.clone(),
        ),
        planned(
            "set-charging-profile",
            "SetChargingProfile",
            json!({"connectorId": 1, "csChargingProfiles": profile}),
            accepted.clone(),
        ),
        planned(
            "trigger-message",
            "TriggerMessage",
            json!({"requestedMessage": "StatusNotification", "connectorId": 1}),
            accepted.clone(),
        ),
        planned(
            "unlock-connector",
            "UnlockConnector",
            json!({"connectorId": 1}),
            json!({"status": "Unlocked"}),
        ),
        planned(
            "update-firmware",
            "UpdateFirmware",
            json!({"location": "https://firmware.example.com/fw-2.0.bin",
                   "retrieveDate": "2030-01-01T00:00:00Z"}),
            json!({}),
        ),
    ]
}

/// The actions endpoints as a user with a token calls them, with the headers the shared
/// [`Api`] client does not show (`Location`).
pub struct Commands {
    base: String,
    token: String,
    client: reqwest::Client,
}

/// A POST's answer.
#[derive(Debug)]
pub struct Posted {
    pub status: u16,
    pub body: String,
    /// The body as JSON (`Null` when it is not).
    pub json: Value,
    pub location: Option<String>,
}

impl Commands {
    /// A client of the REST API at `base` (`http://127.0.0.1:PORT`).
    pub fn at(base: &str, token: &str) -> Commands {
        Commands {
            base: base.to_string(),
            token: token.to_string(),
            client: reqwest::Client::builder()
                .no_proxy()
                .timeout(POST_TIMEOUT)
                .build()
                .expect("http client"),
        }
    }

    /// `POST /api/v3/chargers/{charger}/actions/{tail}`, `tail` being the segment and any query
    /// (`reset?wait=10`); `body` as JSON, or no body.
    pub async fn post(&self, charger: &str, tail: &str, body: Option<&Value>) -> Posted {
        let path = format!("/api/v3/chargers/{charger}/actions/{tail}");
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("Accept", "application/json")
            .header("Authorization", format!("Bearer {}", self.token));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path} failed: {e}"));
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap_or("<not ascii>").to_string());
        let body = response.text().await.unwrap_or_default();
        let json = serde_json::from_str(&body).unwrap_or(Value::Null);
        Posted {
            status,
            body,
            json,
            location,
        }
    }

    /// Sends with `?wait=10` and expects the action to have ended: 200; returns the action.
    pub async fn send(&self, charger: &str, segment: &str, body: &Value) -> Value {
        let tail = format!("{segment}?wait=10");
        let posted = self.post(charger, &tail, Some(body)).await;
        assert_eq!(
            posted.status, 200,
            "POST …/actions/{tail} {body}: expected 200 with the ended action, got {}: {}",
            posted.status, posted.body
        );
        posted.json["data"].clone()
    }

    /// Sends with `?wait=0`: 202 and a Location; returns the action and the location.
    pub async fn queue(&self, charger: &str, segment: &str, body: &Value) -> (Value, String) {
        let tail = format!("{segment}?wait=0");
        let posted = self.post(charger, &tail, Some(body)).await;
        assert_eq!(
            posted.status, 202,
            "POST …/actions/{tail} {body}: expected 202 (taken, not ended), got {}: {}",
            posted.status, posted.body
        );
        let action = posted.json["data"].clone();
        let expected = format!(
            "/api/v3/chargers/{charger}/actions/{}",
            action["uuid"]
                .as_str()
                .unwrap_or_else(|| panic!("a 202 carries the action: {}", posted.body))
        );
        let location = posted.location.clone().unwrap_or_default();
        assert!(
            location.ends_with(&expected),
            "a 202 should have Location {expected}, got {:?}",
            posted.location
        );
        (action, expected)
    }
}

/// Sends `planned` with `?wait=10` and checks what a user and the charger see: 200, `answered`,
/// the request as sent, the response as the charger printed it, who asked, the times; and that
/// the charger received that very call. Returns the action.
pub async fn assert_round_trip(
    commands: &Commands,
    charger_uuid: &str,
    charger: &mut CommandedCharger,
    planned: &Planned,
    requested_by: &Value,
) -> Value {
    let tail = format!("{}?wait=10", planned.segment);
    let posted = commands
        .post(charger_uuid, &tail, planned.body.as_ref())
        .await;
    let what = format!("{} ({})", planned.action, planned.segment);
    assert_eq!(
        posted.status, 200,
        "{what}: expected 200 with the action answered, got {}: {}",
        posted.status, posted.body
    );
    let action = posted.json["data"].clone();
    assert_eq!(action["action"], planned.action, "{what}: {action}");
    assert_eq!(action["status"], "answered", "{what}: {action}");
    assert!(
        json_eq(&action["request"], &planned.request()),
        "{what}: expected the request as sent, {}, got {}",
        planned.request(),
        action["request"]
    );
    assert_eq!(action["error"], Value::Null, "{what}: {action}");
    assert_eq!(action["requested_by"], *requested_by, "{what}: {action}");
    assert_times(&action, true);

    let arrived = charger
        .wait_received(planned.action, &planned.request())
        .await;
    let answered = charger.answer_to(&arrived["unique_id"]).await;
    assert!(
        json_eq(&action["response"], &answered["payload"]),
        "{what}: expected the response the charger answered, {}, got {}",
        answered["payload"],
        action["response"]
    );
    assert!(
        json_contains(&action["response"], &planned.answer),
        "{what}: expected a response with {}, got {}",
        planned.answer,
        action["response"]
    );
    action
}

/// The action's uuid and record times: created ≤ sent ≤ finished < expires (`sent_at` null when
/// it was never sent).
pub fn assert_times(action: &Value, sent: bool) {
    assert!(
        action["uuid"].as_str().is_some_and(is_uuid),
        "uuid: {action}"
    );
    for at in ["created_at", "finished_at", "expires_at"] {
        assert_record_time(&action[at], &format!("{at} of {action}"));
    }
    let created = action["created_at"].as_str().unwrap_or_default();
    let finished = action["finished_at"].as_str().unwrap_or_default();
    if sent {
        assert_record_time(&action["sent_at"], &format!("sent_at of {action}"));
        let sent_at = action["sent_at"].as_str().unwrap_or_default();
        assert!(
            created <= sent_at && sent_at <= finished,
            "expected created_at ≤ sent_at ≤ finished_at: {action}"
        );
    } else {
        assert_eq!(action["sent_at"], Value::Null, "never sent: {action}");
    }
    assert!(created <= finished, "created_at ≤ finished_at: {action}");
    assert!(
        action["expires_at"].as_str().unwrap_or_default() > created,
        "expires_at after created_at: {action}"
    );
}

/// Fails unless the listed actions (a page's `data`) come newest first by `created_at`.
pub fn assert_newest_first(listed: &Value) {
    let listed = listed
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"));
    let created: Vec<&str> = (listed.iter())
        .map(|a| a["created_at"].as_str().unwrap_or_default())
        .collect();
    let order: Vec<String> = (listed.iter())
        .map(|a| {
            format!(
                "{} {} by {}",
                a["created_at"], a["action"], a["requested_by"]["type"]
            )
        })
        .collect();
    assert!(
        created.windows(2).all(|pair| pair[0] >= pair[1]),
        "expected the actions newest first by created_at, got: {order:#?}"
    );
}

/// Polls `GET {path}` (an action) until its status is final; returns it.
pub async fn wait_final(api: &Api, path: &str, limit: Duration) -> Value {
    let what = format!("{path} to reach a final state");
    eventually_within(limit, &what, async || {
        let answer = api.get(path).await;
        let status = answer.json["data"]["status"].as_str().unwrap_or_default();
        match answer.status == 200 && FINAL.contains(&status) {
            true => Ok(answer.json["data"].clone()),
            false => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await
}

/// JSON equality where numbers are equal by value (`16` = `16.0`) and key order does not count.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `actual` has everything `expected` has (objects may hold more fields; arrays match
/// item by item).
pub fn json_contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|w| json_contains(w, v))),
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(a, e)| json_contains(a, e))
        }
        _ => json_eq(actual, expected),
    }
}
