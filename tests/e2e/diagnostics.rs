//! Why a charger does not connect (docs/operations.md): its last connection attempts, refused
//! ones with cms's reason, and its last OCPP frames both ways, secrets masked, read through
//! `GET /api/v3/chargers/{uuid}/connection-attempts` and `.../messages`.

use crate::support::{Api, Charger, Cms, Handshake, eventually};
use serde_json::{Value, json};

const PASSWORD: &str = "correct-horse-battery-42";

/// The charger's connection attempts, newest first, once `wanted` of them are there.
async fn attempts(api: &Api, uuid: &str, wanted: usize) -> Vec<Value> {
    let path = format!("/api/v3/chargers/{uuid}/connection-attempts");
    let mut seen = Vec::new();
    eventually(&format!("{wanted} connection attempts"), async || {
        seen = api.get_ok(&path).await["data"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match seen.len() >= wanted {
            true => Ok(()),
            false => Err(format!("{seen:?}")),
        }
    })
    .await;
    seen
}

fn outcome(attempt: &Value) -> (&str, Option<&str>) {
    (
        attempt["outcome"].as_str().unwrap_or("?"),
        attempt["reason"].as_str(),
    )
}

async fn messages(api: &Api, uuid: &str) -> Vec<Value> {
    let path = format!("/api/v3/chargers/{uuid}/messages");
    api.get_ok(&path).await["data"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_then_the_right_one_shows_refused_then_accepted() {
    let cms = Cms::up().await;
    let uuid = cms
        .add_charger_with("CP-DIAG-PW", &["--password", PASSWORD])
        .await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let missing = Handshake::new(&cms, "CP-DIAG-PW");
    assert_eq!(missing.refused_status().await, 401);
    let wrong = Handshake::new(&cms, "CP-DIAG-PW").basic_auth("CP-DIAG-PW", "not-the-password");
    assert_eq!(wrong.refused_status().await, 401);
    let right = Handshake::new(&cms, "CP-DIAG-PW").basic_auth("CP-DIAG-PW", PASSWORD);
    let mut charger = right.open().await.expect("the right password is accepted");
    charger.heartbeat().await;

    let seen = attempts(&api, &uuid, 3).await;
    let outcomes: Vec<_> = seen.iter().map(outcome).collect();
    assert_eq!(
        outcomes[..3],
        [
            ("accepted", None),
            ("refused", Some("wrong_password")),
            ("refused", Some("no_password")),
        ],
        "newest first: {seen:?}"
    );
    assert!(
        seen[0]["peer"]
            .as_str()
            .is_some_and(|p| p.starts_with("127.0.0.1:")),
        "{seen:?}"
    );
    assert!(seen[0]["at"].as_str().is_some_and(|at| at.ends_with('Z')));
    let text = serde_json::to_string(&seen).unwrap();
    assert!(!text.contains(PASSWORD) && !text.contains("not-the-password"));
    // Both refusals went on the connections topic: none past the second's budget.
    let unpublished = api
        .metrics()
        .await
        .sum("cms_gateway_refusals_unpublished_total", &[]);
    assert_eq!(
        unpublished,
        Some(0.0),
        "registered at start, nothing over budget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_identity_that_is_then_registered_shows_its_refusals() {
    let cms = Cms::up().await;
    // Before it is registered: turned away as unknown.
    assert_eq!(
        Handshake::new(&cms, "CP-DIAG-LATE").refused_status().await,
        404
    );
    let uuid = cms.add_charger("CP-DIAG-LATE").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let seen = attempts(&api, &uuid, 1).await;
    assert_eq!(
        outcome(seen.last().unwrap()),
        ("refused", Some("unknown_identity")),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_2_charger_on_plain_ws_is_told_it_needs_tls() {
    let cms = Cms::up().await;
    let uuid = cms
        .add_charger_with(
            "CP-DIAG-TLS",
            &["--security-profile", "2", "--password", PASSWORD],
        )
        .await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let plain = Handshake::new(&cms, "CP-DIAG-TLS").basic_auth("CP-DIAG-TLS", PASSWORD);
    assert_eq!(plain.refused_status().await, 403);
    let seen = attempts(&api, &uuid, 1).await;
    assert_eq!(outcome(&seen[0]), ("refused", Some("tls_required")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_turned_away_at_the_connection_cap_shows_capacity() {
    let cms = Cms::up_with(&["--max-connections", "1"]).await;
    cms.add_charger("CP-DIAG-CAP-1").await;
    let uuid = cms.add_charger("CP-DIAG-CAP-2").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut first = Charger::connect(&cms, "CP-DIAG-CAP-1").await;
    let second = Handshake::new(&cms, "CP-DIAG-CAP-2");
    assert_eq!(second.refused_status().await, 503);
    let seen = attempts(&api, &uuid, 1).await;
    assert_eq!(outcome(&seen[0]), ("refused", Some("capacity")), "{seen:?}");
    first.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booted_chargers_frames_show_both_ways_newest_first_with_secrets_masked() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-DIAG-MSG").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(&cms, "CP-DIAG-MSG", "9.9.9").await;
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;

    // A secret setting sent through the actions API: the charger answers it (the test charger
    // answers cms's calls while it waits for its heartbeat's answer).
    let secret = "wifi-secret-value-77";
    let path = format!("/api/v3/chargers/{uuid}/actions/change-configuration?wait=0");
    let body = json!({"key": "WifiPassword", "value": secret});
    let taken = api.send("POST", &path, Some(&body)).await;
    assert!(taken.status < 300, "{}", taken.body);
    let mut frames = Vec::new();
    eventually("the ChangeConfiguration among the frames", async || {
        charger.heartbeat().await;
        frames = messages(&api, &uuid).await;
        let text = serde_json::to_string(&frames).unwrap();
        match text.contains("ChangeConfiguration") {
            true => Ok(()),
            false => Err(text),
        }
    })
    .await;

    let frame_of = |f: &Value| -> Value {
        serde_json::from_str(f["frame"].as_str().unwrap()).unwrap_or(Value::Null)
    };
    let boot = frames
        .iter()
        .position(|f| f["direction"] == "in" && frame_of(f)[2] == "BootNotification")
        .expect("the BootNotification, in");
    let boot_id = frame_of(&frames[boot])[1].clone();
    let answer = frames
        .iter()
        .position(|f| f["direction"] == "out" && frame_of(f)[0] == 3 && frame_of(f)[1] == boot_id)
        .expect("cms's answer to the BootNotification, out");
    assert!(answer < boot, "newest first: {frames:?}");
    let change = frames
        .iter()
        .find(|f| f["direction"] == "out" && frame_of(f)[2] == "ChangeConfiguration")
        .expect("the ChangeConfiguration, out");
    assert_eq!(frame_of(change)[3]["value"], "***", "{change}");
    assert!(!serde_json::to_string(&frames).unwrap().contains(secret));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_who_may_not_see_the_charger_reads_neither_list() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-DIAG-OTHER").await;
    let operator = Api::new(&cms, &cms.operator_token().await);
    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
    for tail in ["messages", "connection-attempts"] {
        // The operator reads it: the stranger's refusal is about access, not the path.
        operator
            .get_ok(&format!("/api/v3/chargers/{uuid}/{tail}"))
            .await;
        let answer = stranger
            .get(&format!("/api/v3/chargers/{uuid}/{tail}"))
            .await;
        assert!(
            [403, 404].contains(&answer.status),
            "{tail}: {} {}",
            answer.status,
            answer.body
        );
        assert!(answer.json["message"].is_string(), "{}", answer.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_200_frames_are_kept() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-DIAG-RING").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect(&cms, "CP-DIAG-RING").await;
    for _ in 0..120 {
        charger.heartbeat().await;
    }
    let frames = messages(&api, &uuid).await;
    assert_eq!(frames.len(), 200, "120 heartbeats and their answers");
    // The newest are kept: the last heartbeat's answer is first.
    assert_eq!(frames[0]["direction"], "out");
    assert_eq!(frames[1]["direction"], "in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bytes_kept_per_charger_are_bounded_the_oldest_going_first() {
    let cms = Cms::up_with(&["--charger-frames-bytes", "4096"]).await;
    let uuid = cms.add_charger("CP-DIAG-BYTES").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect(&cms, "CP-DIAG-BYTES").await;
    for _ in 0..120 {
        charger.heartbeat().await;
    }
    let frames = messages(&api, &uuid).await;
    let bytes: usize = frames
        .iter()
        .map(|f| f["frame"].as_str().unwrap().len())
        .sum();
    assert!(
        bytes <= 4096 && frames.len() < 200 && frames.len() > 20,
        "{} frames of {bytes} bytes",
        frames.len()
    );
    // The newest are kept: the last heartbeat's answer is first.
    assert_eq!(frames[0]["direction"], "out");
    assert!(frames[0]["frame"].as_str().unwrap().contains("currentTime"));
}

/// The Kafka deployment: a refused connection at a `cms gateway` is listed by `cms api`, which
/// holds no gateway (the `refused` event of the connections topic).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_refused_attempt_at_a_gateway_is_listed_by_the_api() {
    use crate::support::broker::Broker;
    use crate::support::fleet::Fleet;
    use std::time::Duration;

    let broker = Broker::shared().await;
    let fleet = Fleet::start_with_api(&broker.brokers, &["gw-a"], &[], &[]).await;
    let identity = "CP-KAFKA-DIAG";
    let added = fleet
        .cli(&[
            "charger",
            "add",
            "--identity",
            identity,
            "--password",
            PASSWORD,
        ])
        .await;
    assert!(added.status.success(), "charger add: {}", added.stderr);
    let uuid = added.last_line().to_string();
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let api = fleet.rest().await;
    let path = format!("/api/v3/chargers/{uuid}/connection-attempts");
    // Tried with a wrong password until the gateway knows the charger (404 before) and the
    // API has read a refusal.
    crate::support::eventually_within(
        Duration::from_secs(30),
        "a wrong password listed by cms api",
        async || {
            let wrong = Handshake::at(&url).basic_auth(identity, "not-the-password");
            let status = wrong.refused_status().await;
            let seen = api.get_ok(&path).await["data"].clone();
            let listed = seen.as_array().into_iter().flatten().any(|a| {
                outcome(a) == ("refused", Some("wrong_password"))
                    && a["peer"]
                        .as_str()
                        .is_some_and(|p| p.starts_with("127.0.0.1:"))
            });
            match listed {
                true => Ok(()),
                false => Err(format!("HTTP {status}; {seen}")),
            }
        },
    )
    .await;
}

/// The Kafka deployment: `cms api` asks the gateway holding the charger for its frames over the
/// bus (a `frames_request` on the commands topic, answered on the command results): a booted
/// charger's BootNotification `in` and cms's answer `out`, newest first, a secret masked; a
/// charger connected nowhere has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_cms_api_shows_the_frames_the_holding_gateway_keeps() {
    use crate::support::broker::Broker;
    use crate::support::fleet::Fleet;
    use std::time::{Duration, Instant};

    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let identity = "CP-KAFKA-KMSG";
    let added = Instant::now();
    let uuid = fleet.add_charger(identity).await;
    let nowhere = fleet.add_charger("CP-KAFKA-KMSG-NOWHERE").await;
    fleet
        .wait_until_accepted(identity, &["gw-a"], added, Duration::from_secs(10))
        .await;
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let mut charger = Handshake::at(&url).open().await.expect("accepted");
    let boot = charger
        .call_result("BootNotification", crate::support::boot_payload("9.9.9"))
        .await;
    assert_eq!(boot["status"], "Accepted", "{boot}");
    // A configuration answer no call asked for, with a secret in it: kept, never shown.
    let secret = "kafka-secret-value-42";
    charger
        .send_text(
            &json!([3, "stray", {"configurationKey": [
                {"key": "AuthorizationKey", "readonly": false, "value": secret}
            ]}])
            .to_string(),
        )
        .await;
    charger.heartbeat().await;

    let api = fleet.rest().await;
    let path = format!("/api/v3/chargers/{uuid}/messages");
    let mut frames = Vec::new();
    crate::support::eventually_within(Duration::from_secs(30), "the frames", async || {
        let answer = api.get(&path).await;
        frames = answer.json["data"].as_array().cloned().unwrap_or_default();
        match frames.len() >= 4 {
            true => Ok(()),
            false => Err(format!("HTTP {} {}", answer.status, answer.body)),
        }
    })
    .await;
    let frame_of = |f: &Value| -> Value {
        serde_json::from_str(f["frame"].as_str().unwrap()).unwrap_or(Value::Null)
    };
    let boot = frames
        .iter()
        .position(|f| f["direction"] == "in" && frame_of(f)[2] == "BootNotification")
        .expect("the BootNotification, in");
    let boot_id = frame_of(&frames[boot])[1].clone();
    let answer = frames
        .iter()
        .position(|f| f["direction"] == "out" && frame_of(f)[0] == 3 && frame_of(f)[1] == boot_id)
        .expect("cms's answer to the BootNotification, out");
    assert!(answer < boot, "newest first: {frames:?}");
    let text = serde_json::to_string(&frames).unwrap();
    assert!(
        text.contains("AuthorizationKey") && !text.contains(secret),
        "{text}"
    );
    // The gateway masked the frames before they left it: the secret is on no topic's record.
    let topic = format!("{}.ocpp.command-results", fleet.prefix);
    let records = crate::support::topic::read_topic(&fleet.brokers, &topic).await;
    let values: Vec<&str> = records.iter().map(|r| r.value_str()).collect();
    assert!(
        values.iter().any(|v| v.contains("AuthorizationKey")),
        "the frames answer is on {topic}: {values:?}"
    );
    assert!(
        values.iter().all(|v| !v.contains(secret)),
        "{secret} on {topic}: {values:?}"
    );

    let none = api
        .get_ok(&format!("/api/v3/chargers/{nowhere}/messages"))
        .await;
    assert_eq!(none["data"], json!([]), "{none}");
}
