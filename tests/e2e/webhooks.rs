//! Webhooks (issue 44, docs/events.md) end to end: `cms up` delivers a team's events to a real
//! HTTP receiver (tests/interop/webhook_receiver.py) that verifies every signature with the
//! Standard Webhooks reference library; a receiver that fails, hangs or is down for a while, and
//! a restart of cms in between, lose nothing and keep each charger's events in order.

use crate::support::commanded::CommandedCharger;
use crate::support::rest::{team_of_type, uuid_of};
use crate::support::webhook_receiver::Receiver;
use crate::support::{Api, Backend, Cms, eventually_within};
use cms_store::local_lists::fixtures::{charger_site, set_site_authorization};
use std::time::Duration;

/// Long enough for an event to settle (1 s), a few retries a second apart, and a slow machine.
const DELIVERED: Duration = Duration::from_secs(30);
use serde_json::{Value, json};

/// Retries a second apart, so that a test sees several; a receiver on loopback allowed.
const FAST: &[&str] = &[
    "--webhook-allow-private",
    "--webhook-retry-delays",
    "1s,1s,1s,1s",
];

/// Subscribes the operators' team to `types` at the receiver's URL; tells the receiver the
/// secret cms showed. Returns the operator's API, the webhook's path and its secret.
async fn subscribe(cms: &Cms, receiver: &Receiver, types: &[&str]) -> (Api, String, String) {
    let api = Api::new(cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let body = json!({"url": receiver.url(), "event_types": types, "description": "e2e"});
    let path = format!("/api/v3/teams/{team}/webhooks");
    let created = api.expect(201, "POST", &path, Some(&body)).await;
    let secret = created["data"]["secret"]
        .as_str()
        .expect("the secret, shown once");
    assert!(secret.starts_with("whsec_"), "{created}");
    receiver.know_secret(secret);
    let uuid = created["data"]["uuid"].as_str().expect("a uuid");
    (api, format!("{path}/{uuid}"), secret.to_string())
}

/// Waits until the receiver has a request of each of `types` (in any order) and returns all
/// it got.
async fn received_all(receiver: &Receiver, types: &[&str]) -> Vec<Value> {
    eventually_within(DELIVERED, &format!("deliveries of {types:?}"), async || {
        let got = receiver.received();
        let missing: Vec<&&str> = (types.iter())
            .filter(|t| !got.iter().any(|r| r["type"] == **t))
            .collect();
        match missing.is_empty() {
            true => Ok(got),
            false => Err(format!("missing {missing:?} in {got:#?}")),
        }
    })
    .await
}

fn body(request: &Value) -> Value {
    serde_json::from_str(request["body"].as_str().unwrap_or("{}")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boot_a_session_and_a_command_arrive_signed_and_in_order_on_sqlite() {
    a_boot_a_session_and_a_command_arrive_signed_and_in_order(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boot_a_session_and_a_command_arrive_signed_and_in_order_on_postgres() {
    a_boot_a_session_and_a_command_arrive_signed_and_in_order(Backend::Postgres).await;
}

async fn a_boot_a_session_and_a_command_arrive_signed_and_in_order(backend: Backend) {
    let receiver = Receiver::start(&[]);
    let Some(cms) = Cms::up_on_with(backend, FAST).await else {
        return;
    };
    let everything = [
        "charger.registered",
        "charger.connected",
        "charger.booted",
        "connector.status_changed",
        "transaction.started",
        "transaction.ended",
        "action.finished",
    ];
    let (api, _, _) = subscribe(&cms, &receiver, &everything).await;
    let uuid = cms.add_charger("CP-HOOK").await;
    let mut charger = CommandedCharger::connect(&cms.ocpp_url("CP-HOOK"), "CP-HOOK").await;
    charger.send("status 1 Available").await;
    let started = charger.send("start 1 TAG-HOOK").await;
    let id = started["transactionId"].as_i64().expect("a transaction id");
    charger.send(&format!("stop {id}")).await;
    let reset = format!("/api/v3/chargers/{uuid}/actions/reset?wait=10");
    api.expect(200, "POST", &reset, Some(&json!({"type": "Soft"})))
        .await;

    received_all(&receiver, &everything).await;
    // The reset's own end, beside the configuration read's after the boot.
    let got = eventually_within(DELIVERED, "the reset's action.finished", async || {
        let got = receiver.received();
        match got.iter().any(|r| body(r)["data"]["action"] == "Reset") {
            true => Ok(got),
            false => Err(format!("{got:#?}")),
        }
    })
    .await;
    for request in &got {
        assert_eq!(request["verified"], true, "not verified: {request}");
    }
    let bodies: Vec<Value> = got.iter().map(body).collect();
    // Each event once (none retried: the receiver answered 200 at once), in the charger's order.
    let ids: std::collections::BTreeSet<&str> = got
        .iter()
        .filter_map(|r| r["webhook_id"].as_str())
        .collect();
    assert_eq!(ids.len(), got.len(), "an event delivered twice: {got:#?}");
    let order: Vec<&str> = (bodies.iter())
        .filter_map(|b| b["type"].as_str())
        .filter(|t| *t != "action.finished" && *t != "connector.status_changed")
        .collect();
    assert_eq!(
        order,
        [
            "charger.registered",
            "charger.connected",
            "charger.booted",
            "transaction.started",
            "transaction.ended"
        ],
        "{bodies:#?}"
    );
    let ended = bodies
        .iter()
        .find(|b| b["type"] == "transaction.ended")
        .unwrap();
    assert_eq!(ended["resource"]["uuid"], uuid.as_str(), "{ended}");
    assert_eq!(ended["resource"]["identity"], "CP-HOOK");
    assert_eq!(ended["data"]["transaction_id"], id);
    assert!(ended["data"]["energy_wh"].is_i64(), "{ended}");
    let reset_done = (bodies.iter())
        .find(|b| b["type"] == "action.finished" && b["data"]["action"] == "Reset")
        .unwrap_or_else(|| panic!("no action.finished of the reset: {bodies:#?}"));
    assert_eq!(reset_done["data"]["state"], "answered", "{reset_done}");
    let ended_at = bodies.iter().position(|b| b["type"] == "transaction.ended");
    let reset_at = bodies.iter().position(|b| std::ptr::eq(b, reset_done));
    assert!(
        ended_at < reset_at,
        "the reset came after the session: {bodies:#?}"
    );
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_failing_three_times_gets_the_event_four_times() {
    let cms = Cms::up_with(FAST).await;
    let receiver = Receiver::start(&["--fail", "3"]);
    let (api, webhook, _) = subscribe(&cms, &receiver, &["charger.connected"]).await;
    cms.add_charger("CP-HOOK-RETRY").await;
    let charger = CommandedCharger::connect(&cms.ocpp_url("CP-HOOK-RETRY"), "CP-HOOK-RETRY").await;

    let got = eventually_within(
        DELIVERED,
        "four attempts of the connect's event",
        async || {
            let got = receiver.received();
            match got.len() >= 4 {
                true => Ok(got),
                false => Err(format!("{got:#?}")),
            }
        },
    )
    .await;
    let answered: Vec<&Value> = got.iter().map(|r| &r["answered"]).collect();
    assert_eq!(
        answered,
        [&json!(500), &json!(500), &json!(500), &json!(200)]
    );
    assert!(
        got.iter().all(|r| r["webhook_id"] == got[0]["webhook_id"]),
        "{got:#?}"
    );
    assert!(got.iter().all(|r| r["verified"] == true), "{got:#?}");

    let log = eventually_within(DELIVERED, "the delivery log's four attempts", async || {
        let log = api.get_ok(&format!("{webhook}/deliveries")).await;
        let delivery = log["data"][0].clone();
        match delivery["state"] == "delivered" {
            true => Ok(delivery),
            false => Err(log.to_string()),
        }
    })
    .await;
    assert_eq!(log["attempts"], 4, "{log}");
    let statuses: Vec<&Value> = (log["attempt_log"].as_array().expect("attempt_log").iter())
        .map(|a| &a["status_code"])
        .collect();
    assert_eq!(statuses.len(), 4, "{log}");
    assert_eq!(
        statuses.iter().filter(|s| ***s == json!(500)).count(),
        3,
        "{log}"
    );
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_hangs_is_timed_out() {
    let mut args = FAST.to_vec();
    args.extend(["--webhook-timeout", "1s"]);
    let cms = Cms::up_with(&args).await;
    let receiver = Receiver::start(&["--hang"]);
    let (api, webhook, _) = subscribe(&cms, &receiver, &["charger.connected"]).await;
    cms.add_charger("CP-HOOK-HANG").await;
    let charger = CommandedCharger::connect(&cms.ocpp_url("CP-HOOK-HANG"), "CP-HOOK-HANG").await;

    let delivery = eventually_within(DELIVERED, "two attempts cut at the time-out", async || {
        let log = api.get_ok(&format!("{webhook}/deliveries")).await;
        let delivery = log["data"][0].clone();
        match delivery["attempts"].as_i64().unwrap_or(0) >= 2 {
            true => Ok(delivery),
            false => Err(log.to_string()),
        }
    })
    .await;
    assert_eq!(delivery["state"], "pending", "{delivery}");
    let first = &delivery["attempt_log"][0];
    assert!(first["status_code"].is_null(), "{delivery}");
    let error = first["error"].as_str().unwrap_or("").to_lowercase();
    assert!(error.contains("time"), "{delivery}");
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_survive_a_receiver_down_and_a_restart_of_cms() {
    let mut cms = Cms::up_with(FAST).await;
    let receiver = Receiver::start(&[]);
    let port = receiver.port().to_string();
    let types = [
        "charger.connected",
        "charger.booted",
        "charger.disconnected",
    ];
    let (_, _, secret) = subscribe(&cms, &receiver, &types).await;
    drop(receiver);

    cms.add_charger("CP-HOOK-DOWN").await;
    let mut charger =
        CommandedCharger::connect(&cms.ocpp_url("CP-HOOK-DOWN"), "CP-HOOK-DOWN").await;
    charger.disconnect().await;
    cms.terminate().await;
    cms.start().await;
    charger.connect_to(&cms.ocpp_url("CP-HOOK-DOWN")).await;

    let receiver = Receiver::start(&["--port", &port]);
    receiver.know_secret(&secret);
    let got = eventually_within(DELIVERED, "two sessions' events, in order", async || {
        let got: Vec<Value> = receiver.received().iter().map(body).collect();
        let types: Vec<&str> = got.iter().filter_map(|b| b["type"].as_str()).collect();
        match types.iter().filter(|t| **t == "charger.connected").count() >= 2 {
            true => Ok(got),
            false => Err(format!("{types:?}")),
        }
    })
    .await;
    let sessions: Vec<(&str, &str)> = (got.iter())
        .filter(|b| b["type"] != "charger.booted")
        .map(|b| {
            (
                b["type"].as_str().unwrap(),
                b["data"]["session"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(sessions.len(), 3, "{got:#?}");
    assert_eq!(
        (sessions[0].0, sessions[1].0, sessions[2].0),
        (
            "charger.connected",
            "charger.disconnected",
            "charger.connected"
        ),
        "{got:#?}"
    );
    assert_eq!(
        sessions[0].1, sessions[1].1,
        "the first session's end: {got:#?}"
    );
    assert_ne!(sessions[1].1, sessions[2].1, "{got:#?}");
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_refused_at_an_authorize_is_told() {
    let cms = Cms::up_with(FAST).await;
    let receiver = Receiver::start(&[]);
    subscribe(&cms, &receiver, &["id_tag.refused"]).await;
    cms.add_charger("CP-HOOK-TAG").await;
    let store = cms.open_store().await;
    let (_, site, _) = charger_site(&store, "CP-HOOK-TAG").await.unwrap();
    // Only the team's tags may charge at the site: an unknown tag is refused.
    set_site_authorization(&store, site, "id_tags", false)
        .await
        .unwrap();
    let url = cms.ocpp_url("CP-HOOK-TAG");
    let mut charger = CommandedCharger::connect(&url, "CP-HOOK-TAG").await;
    let answer = eventually_within(DELIVERED, "the tag refused", async || {
        let answer = charger.send("authorize STRANGER").await;
        match answer["idTagInfo"]["status"] == "Invalid" {
            true => Ok(answer),
            false => Err(answer.to_string()),
        }
    })
    .await;
    assert_eq!(answer["idTagInfo"]["status"], "Invalid");

    let got = received_all(&receiver, &["id_tag.refused"]).await;
    let told = body(&got[0]);
    assert_eq!(got[0]["verified"], true, "{got:#?}");
    assert_eq!(
        (&told["data"]["id_tag"], &told["data"]["status"]),
        (&json!("STRANGER"), &json!("Invalid")),
        "{told}"
    );
    charger.finish().await;
}
