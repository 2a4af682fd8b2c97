//! Chargers > Actions (docs/actions.md), end to end: a third-party charge point, the Python
//! `ocpp` package (tests/interop/ocpp16_commanded_charge_point.py), is commanded through the
//! REST API of `cms up`; what it received and answered is compared with what the API reports.
//!
//! Needs `python3` with the packages of tests/interop/requirements.txt; without them the tests
//! fail, never skip.

mod command_line;
mod oversized;
mod queue;
mod secrets;
mod settings;

use crate::support::commanded::CommandedCharger;
use crate::support::commanded::calls::{
    Commands, assert_newest_first, assert_round_trip, assert_times, json_eq, nineteen, wait_final,
};
use crate::support::{Api, Cms, eventually, on_both_stores};
use serde_json::{Value, json};
use std::time::Duration;

/// The operator's token's user, as `requested_by` shows it.
fn operator() -> Value {
    json!({"type": "user", "email": "operator@example.com"})
}

/// A registered charger with the commanded charge point connected and booted, and the
/// operator's clients.
struct Bench {
    uuid: String,
    url: String,
    charger: CommandedCharger,
    commands: Commands,
    api: Api,
}

impl Bench {
    async fn start(cms: &Cms, identity: &str) -> Bench {
        Bench::start_with(cms, identity, &[]).await
    }

    /// With the charge point's options (`--config JSON`).
    async fn start_with(cms: &Cms, identity: &str, options: &[&str]) -> Bench {
        let uuid = cms.add_charger(identity).await;
        let token = cms.operator_token().await;
        let url = cms.ocpp_url(identity);
        let bench = Bench {
            charger: CommandedCharger::connect_with(&url, identity, options).await,
            commands: Commands::at(&cms.http_url(""), &token),
            api: Api::new(cms, &token),
            url,
            uuid,
        };
        bench.wait_until("online").await;
        bench
    }

    /// Waits until the API shows the charger's `connection_status` (a user sends actions once
    /// they see it online).
    async fn wait_until(&self, status: &str) {
        self.api
            .wait_for_charger(&self.uuid, status, |c| c["connection_status"] == status)
            .await;
    }

    fn actions_path(&self) -> String {
        format!("/api/v3/chargers/{}/actions", self.uuid)
    }

    /// The audit log's first page, once it holds `count` actions, all ended.
    async fn audit_log(&self, count: usize) -> Value {
        let path = self.actions_path();
        eventually(&format!("{count} ended actions in {path}"), async || {
            let page = self.api.get_ok(&path).await;
            let data = page["data"].as_array().cloned().unwrap_or_default();
            let ended = data.iter().all(|a| a["finished_at"].is_string());
            match data.len() == count && ended {
                true => Ok(page),
                false => Err(page.to_string()),
            }
        })
        .await
    }
}

on_both_stores!(
    every_action_round_trips_to_the_charger_and_into_the_audit_log,
    |cms| {
        let mut bench = Bench::start(&cms, "CP-ACT-ALL").await;
        let mut sent = Vec::new();
        for planned in nineteen() {
            let action = assert_round_trip(
                &bench.commands,
                &bench.uuid,
                &mut bench.charger,
                &planned,
                &operator(),
            )
            .await;
            sent.push(action);
        }
        for planned in nineteen() {
            bench
                .charger
                .assert_received_once(planned.action, &planned.request());
        }
        bench
            .charger
            .wait_for("the StatusNotification the TriggerMessage asked for", |l| {
                l["sent"] == "StatusNotification" && l["payload"]["connectorId"] == 1
            })
            .await;

        // Newest first: the 19, then the configuration read after the boot.
        let log = bench.audit_log(20).await;
        assert_newest_first(&log["data"]);
        let listed = log["data"].as_array().expect("data");
        for (shown, action) in listed.iter().zip(sent.iter().rev()) {
            assert!(
                json_eq(shown, action),
                "the audit log should show each action as the POST answered it:\n  listed: \
             {shown}\n  posted: {action}"
            );
        }
        let boot_read = &listed[19];
        assert_eq!(boot_read["action"], "GetConfiguration", "{boot_read}");
        assert_eq!(boot_read["status"], "answered", "{boot_read}");
        assert_eq!(
            boot_read["requested_by"],
            json!({"type": "system", "email": null})
        );
        assert_eq!(log["meta"]["per_page"], 25, "{log}");
        assert_eq!(
            (&log["meta"]["from"], &log["meta"]["to"]),
            (&json!(1), &json!(20))
        );
        assert_eq!(log["links"]["next"], Value::Null, "{log}");

        let reset = &sent[13];
        let one = bench
            .api
            .get_ok(&format!(
                "{}/{}",
                bench.actions_path(),
                reset["uuid"].as_str().unwrap()
            ))
            .await;
        assert!(
            json_eq(&one["data"], reset),
            "GET one: {one}, posted: {reset}"
        );
        bench.charger.finish().await;
    }
);

/// A call too large for a websocket frame of the gateway's limit is not sent: the action fails
/// with the reason, and the charger stays connected for the next one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_over_the_frame_limit_fails_unsent_and_the_charger_stays() {
    let cms = Cms::up_with(&["--max-frame-size", "8192"]).await;
    let mut bench = Bench::start(&cms, "CP-ACT-BIG").await;
    let big = json!({"vendorId": "cms.test", "data": "x".repeat(20_000)});
    let action = bench
        .commands
        .send(&bench.uuid, "data-transfer", &big)
        .await;
    assert_eq!(action["status"], "failed", "{action}");
    assert_eq!(action["error"]["code"], "FrameTooLarge", "{action}");
    assert_eq!(action["sent_at"], Value::Null, "{action}");
    let small = json!({"vendorId": "cms.test", "data": "after"});
    let action = bench
        .commands
        .send(&bench.uuid, "data-transfer", &small)
        .await;
    assert_eq!(action["status"], "answered", "{action}");
    bench.charger.assert_received_once("DataTransfer", &small);
    bench.charger.finish().await;
}

/// A `wait` longer than the request timeout leaves: the answer comes before the timeout, a 202
/// with where to look, not the timeout's 503 that would invite a client to send it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_past_the_request_timeout_is_answered_202_before_it() {
    let cms = Cms::up_with(&["--action-timeout", "20s", "--http-request-timeout", "3s"]).await;
    let mut bench = Bench::start(&cms, "CP-ACT-WAIT").await;
    let silent = json!({"vendorId": "cms.test.silent"});
    let posted = bench
        .commands
        .post(&bench.uuid, "data-transfer?wait=45", Some(&silent))
        .await;
    assert_eq!(posted.status, 202, "{}", posted.body);
    let action = &posted.json["data"];
    assert_eq!(action["status"], "sent", "{action}");
    let location = posted.location.clone().unwrap_or_default();
    assert!(
        location.ends_with(action["uuid"].as_str().unwrap_or("-")),
        "{location}"
    );
    bench.charger.assert_received_once("DataTransfer", &silent);
    bench.charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_failures_silence_and_late_answers_each_end_in_their_own_state() {
    let cms = Cms::up_with(&["--action-timeout", "2s"]).await;
    let mut bench = Bench::start(&cms, "CP-ACT-FAIL").await;
    let (commands, uuid) = (&bench.commands, bench.uuid.clone());

    let refused = json!({"vendorId": "cms.test.error", "messageId": "NotImplemented",
                         "data": "not on this model"});
    let action = commands.send(&uuid, "data-transfer", &refused).await;
    assert_eq!(action["status"], "failed", "a CALLERROR: {action}");
    assert_eq!(action["error"]["code"], "NotImplemented", "{action}");
    assert_eq!(
        action["error"]["description"], "not on this model",
        "{action}"
    );
    assert_eq!(action["response"], Value::Null, "{action}");
    assert_times(&action, true);

    let invalid = json!({"vendorId": "cms.test.invalid"});
    let action = commands.send(&uuid, "data-transfer", &invalid).await;
    assert_eq!(
        action["status"], "failed",
        "an answer breaking the schema: {action}"
    );
    assert_eq!(
        action["error"]["code"], "TypeConstraintViolation",
        "{action}"
    );
    let description = action["error"]["description"].as_str().unwrap_or_default();
    assert!(
        description.contains("data"),
        "names the field `data`: {action}"
    );

    let silent = json!({"vendorId": "cms.test.silent"});
    let action = commands.send(&uuid, "data-transfer", &silent).await;
    assert_eq!(
        action["status"], "timed_out",
        "no answer within 2 s: {action}"
    );
    assert_eq!(action["error"]["code"], "Timeout", "{action}");
    assert!(
        seconds_between(&action["sent_at"], &action["finished_at"]) >= 1.9,
        "timed out only after --action-timeout 2s: {action}"
    );

    // An answer whose id is readable but nothing after it ends the call at once, `failed`.
    let malformed = json!({"vendorId": "cms.test.malformed"});
    let action = commands.send(&uuid, "data-transfer", &malformed).await;
    assert_eq!(action["status"], "failed", "a malformed answer: {action}");
    assert_eq!(action["error"]["code"], "FormationViolation", "{action}");
    assert!(
        seconds_between(&action["sent_at"], &action["finished_at"]) < 1.9,
        "ended by the answer, not by --action-timeout 2s: {action}"
    );

    // An answer after the time-out is counted and dropped: the first final state stays.
    let late = json!({"vendorId": "cms.test.slow", "data": "3000"});
    let action = commands.send(&uuid, "data-transfer", &late).await;
    assert_eq!(
        action["status"], "timed_out",
        "answered after 3 s: {action}"
    );
    let arrived = bench.charger.wait_received("DataTransfer", &late).await;
    bench.charger.answer_to(&arrived["unique_id"]).await;
    eventually("the late answer to be counted as unmatched", async || {
        let seen = bench.api.metrics().await;
        match seen.sum("cms_gateway_unmatched_answers_total", &[]) {
            Some(n) if n >= 1.0 => Ok(()),
            other => Err(format!("cms_gateway_unmatched_answers_total {other:?}")),
        }
    })
    .await;
    let path = format!(
        "{}/{}",
        bench.actions_path(),
        action["uuid"].as_str().unwrap()
    );
    let still = bench.api.get_ok(&path).await["data"].clone();
    assert_eq!(still["status"], "timed_out", "{still}");
    assert_eq!(still["response"], Value::Null, "{still}");

    // `?wait=0`: taken at once; the Location shows it end.
    let slow = json!({"vendorId": "cms.test.slow", "messageId": "later", "data": "500"});
    let (taken, location) = commands.queue(&uuid, "data-transfer", &slow).await;
    assert!(
        ["pending", "sent"].contains(&taken["status"].as_str().unwrap_or_default()),
        "a 202 shows an action still going: {taken}"
    );
    let ended = wait_final(&bench.api, &location, Duration::from_secs(5)).await;
    assert_eq!(ended["status"], "answered", "{ended}");
    assert_eq!(
        ended["response"],
        json!({"status": "Accepted", "data": "500"})
    );
    for payload in [&refused, &invalid, &silent, &malformed, &late, &slow] {
        bench.charger.assert_received_once("DataTransfer", payload);
    }
    bench.charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_requests_reach_no_charger_and_leave_no_trace() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, "CP-ACT-REFUSE").await;
    let uuid = bench.uuid.clone();
    bench.audit_log(1).await; // the configuration read after the boot
    let rate_unit = json!({"connectorId": 1, "csChargingProfiles": {
        "chargingProfileId": 1, "stackLevel": 0, "chargingProfilePurpose": "TxDefaultProfile",
        "chargingProfileKind": "Absolute",
        "chargingSchedule": {"chargingRateUnit": "X",
                             "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 16.0}]}}});
    let cases = [
        ("reset", json!({"type": "Hard!"}), "type"),
        ("reset", json!({}), "type"),
        (
            "set-charging-profile",
            rate_unit,
            "csChargingProfiles.chargingSchedule.chargingRateUnit",
        ),
        (
            "send-local-list",
            json!({"listVersion": 1, "updateType": "Full",
                   "localAuthorizationList": [{"idTagInfo": {"status": "Accepted"}}]}),
            "localAuthorizationList.0.idTag",
        ),
        (
            "cancel-reservation",
            json!({"reservationId": 4_294_967_296_i64}),
            "reservationId",
        ),
        (
            "data-transfer",
            json!({"vendorId": "com.example\u{0}"}),
            "vendorId",
        ),
        (
            "change-configuration",
            json!({"key": "K".repeat(51), "value": "1"}),
            "key",
        ),
        (
            "reserve-now",
            json!({"connectorId": 1, "expiryDate": "2026-11-21T10:00:00", "idTag": "TAG-1",
                   "reservationId": 7}),
            "expiryDate",
        ),
        ("reset?wait=61", json!({"type": "Soft"}), "wait"),
    ];
    for (tail, body, field) in cases {
        let posted = bench.commands.post(&uuid, tail, Some(&body)).await;
        assert_eq!(posted.status, 422, "{tail} {body}: {}", posted.body);
        assert!(
            posted.json["errors"].get(field).is_some(),
            "{tail} {body}: expected a 422 naming `{field}`, got {}",
            posted.body
        );
    }
    for body in [json!([]), json!("Soft")] {
        let posted = bench.commands.post(&uuid, "reset", Some(&body)).await;
        assert_eq!(
            posted.status, 400,
            "a body that is not an object: {}",
            posted.body
        );
    }
    let unknown = bench
        .commands
        .post(&uuid, "self-destruct", Some(&json!({})))
        .await;
    assert_eq!(unknown.status, 404, "an unknown action: {}", unknown.body);

    let guest = cms.guest_token("guest@example.com").await;
    let reset = json!({"type": "Soft"});
    let posted = Commands::at(&cms.http_url(""), &guest)
        .post(&uuid, "reset", Some(&reset))
        .await;
    assert_eq!(
        posted.status, 404,
        "another team's charger: {}",
        posted.body
    );
    let guest = Api::new(&cms, &guest);
    for path in [
        bench.actions_path(),
        format!("/api/v3/chargers/{uuid}/settings"),
    ] {
        assert_eq!(guest.get(&path).await.status, 404, "GET {path} as a guest");
    }

    let reader = cms
        .create_token("reader@example.com", Some("chargers:read"))
        .await;
    let posted = Commands::at(&cms.http_url(""), &reader)
        .post(&uuid, "reset", Some(&reset))
        .await;
    assert_eq!(
        posted.status, 403,
        "without chargers:write: {}",
        posted.body
    );
    let settings = json!({"settings": {"HeartbeatInterval": "60"}});
    let reader = Api::new(&cms, &reader);
    let path = format!("/api/v3/chargers/{uuid}/settings");
    assert_eq!(reader.put(&path, &settings).await.status, 403);
    assert_eq!(reader.get(&bench.actions_path()).await.status, 200);

    let log = bench.audit_log(1).await;
    assert_eq!(log["data"][0]["action"], "GetConfiguration", "{log}");
    let received: Vec<Value> = bench.charger.received();
    let actions: Vec<&Value> = received.iter().map(|l| &l["received"]).collect();
    assert_eq!(actions, [&json!("GetConfiguration")], "{received:?}");
    bench.charger.finish().await;
}

on_both_stores!(
    a_charger_not_connected_is_409_and_nothing_is_stored,
    |cms| {
        let uuid = cms.add_charger("CP-ACT-AWAY").await;
        let token = cms.operator_token().await;
        let commands = Commands::at(&cms.http_url(""), &token);
        let not_connected = json!({"message": "The charger is not connected."});
        for tail in ["reset?wait=10", "reset?wait=0", "reset"] {
            let posted = commands
                .post(&uuid, tail, Some(&json!({"type": "Soft"})))
                .await;
            assert_eq!(posted.status, 409, "{tail}: {}", posted.body);
            assert_eq!(posted.json, not_connected, "{tail}");
        }
        let api = Api::new(&cms, &token);
        let settings = json!({"settings": {"HeartbeatInterval": "60"}});
        let path = format!("/api/v3/chargers/{uuid}/settings");
        assert_eq!(api.put(&path, &settings).await.status, 409);
        assert_eq!(api.get_ok(&path).await["data"], json!([]));
        let log = api
            .get_ok(&format!("/api/v3/chargers/{uuid}/actions"))
            .await;
        assert_eq!(log["data"], json!([]), "nothing stored: {log}");
    }
);

/// Seconds from one record time to another.
fn seconds_between(from: &Value, to: &Value) -> f64 {
    let at = |v: &Value| {
        let s = v.as_str().unwrap_or_else(|| panic!("a record time: {v}"));
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap_or_else(|e| panic!("{s} is not RFC 3339: {e}"))
            .timestamp_micros()
    };
    (at(to) - at(from)) as f64 / 1e6
}
