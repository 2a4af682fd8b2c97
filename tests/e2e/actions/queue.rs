//! The per-charger queue: one call in flight, in the order taken, and a queue that dies with
//! its session.

use super::Bench;
use crate::support::commanded::calls::{assert_newest_first, assert_times, wait_final};
use crate::support::{Cms, eventually};
use serde_json::{Value, json};
use std::time::Duration;

const QUEUED: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_queued_actions_reach_the_charger_in_order_one_at_a_time() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, "CP-ACT-QUEUE").await;
    let uuid = bench.uuid.clone();
    // Each answered after 20 ms, so the queue fills faster than the charger drains it.
    let request =
        |n: usize| json!({"vendorId": "cms.test.slow", "messageId": n.to_string(), "data": "20"});
    let mut locations = Vec::new();
    for n in 1..=QUEUED {
        let tail = "data-transfer?wait=0";
        let posted = bench.commands.post(&uuid, tail, Some(&request(n))).await;
        assert!(
            [200, 202].contains(&posted.status),
            "{tail} #{n}: expected 202, got {}: {}",
            posted.status,
            posted.body
        );
        let action = posted.json["data"]["uuid"].as_str().expect("the action");
        locations.push(format!("{}/{action}", bench.actions_path()));
    }

    let last = request(QUEUED);
    let arrived = bench.charger.wait_received("DataTransfer", &last).await;
    bench.charger.answer_to(&arrived["unique_id"]).await;
    let received = bench.charger.received();
    let order: Vec<&str> = received
        .iter()
        .filter(|l| l["received"] == "DataTransfer")
        .map(|l| l["payload"]["messageId"].as_str().unwrap_or("?"))
        .collect();
    let expected: Vec<String> = (1..=QUEUED).map(|n| n.to_string()).collect();
    assert_eq!(
        order, expected,
        "the DataTransfers as they reached the charger"
    );
    let overlapping: Vec<&Value> = received
        .iter()
        .filter(|l| l["unanswered"] != json!([]))
        .collect();
    assert!(
        overlapping.is_empty(),
        "calls that reached the charger while another was unanswered: {overlapping:?}"
    );

    let mut previous_finish = String::new();
    for (n, location) in locations.iter().enumerate() {
        let action = wait_final(&bench.api, location, Duration::from_secs(5)).await;
        assert_eq!(action["status"], "answered", "#{}: {action}", n + 1);
        assert_eq!(
            action["response"],
            json!({"status": "Accepted", "data": "20"})
        );
        assert_times(&action, true);
        let sent = action["sent_at"].as_str().unwrap().to_string();
        assert!(
            sent >= previous_finish,
            "#{} was sent at {sent}, before #{n} ended at {previous_finish}",
            n + 1
        );
        previous_finish = action["finished_at"].as_str().unwrap().to_string();
    }

    // The audit log, 25 a page, newest first: the 100, then the configuration read at boot.
    let path = bench.actions_path();
    let first = bench.api.get_ok(&format!("{path}?page=1")).await;
    assert_newest_first(&first["data"]);
    let ids: Vec<&Value> = first["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|a| &a["request"]["messageId"])
        .collect();
    let newest: Vec<Value> = (76..=100).rev().map(|n| json!(n.to_string())).collect();
    assert_eq!(
        ids,
        newest.iter().collect::<Vec<_>>(),
        "page 1 of the audit log"
    );
    assert_eq!(
        first["links"]["next"],
        format!("{path}?page=2"),
        "{}",
        first["links"]
    );
    let last_page = bench.api.get_ok(&format!("{path}?page=5")).await;
    assert_eq!(
        last_page["data"].as_array().map(Vec::len),
        Some(1),
        "{last_page}"
    );
    assert_eq!(last_page["data"][0]["action"], "GetConfiguration");
    assert_eq!(
        (&last_page["meta"]["from"], &last_page["meta"]["to"]),
        (&json!(101), &json!(101))
    );
    assert_eq!(last_page["links"]["next"], Value::Null);

    eventually("the gateway's queue to be empty", async || {
        let depth = bench
            .api
            .metrics()
            .await
            .sum("cms_gateway_command_queue_depth", &[]);
        match depth {
            Some(0.0) => Ok(()),
            other => Err(format!("cms_gateway_command_queue_depth {other:?}")),
        }
    })
    .await;
    bench.charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnect_expires_the_queued_actions_and_none_arrives_after_the_reconnect() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, "CP-ACT-GONE").await;
    let uuid = bench.uuid.clone();
    let silent = json!({"vendorId": "cms.test.silent"});
    let (_, silent_at) = bench.commands.queue(&uuid, "data-transfer", &silent).await;
    bench.charger.wait_received("DataTransfer", &silent).await;
    let behind = [
        ("reset", "Reset", json!({"type": "Hard"})),
        ("clear-cache", "ClearCache", json!({})),
        (
            "data-transfer",
            "DataTransfer",
            json!({"vendorId": "com.example.vendor", "messageId": "queued"}),
        ),
    ];
    let mut queued = Vec::new();
    for (segment, _, body) in &behind {
        let (action, location) = bench.commands.queue(&uuid, segment, body).await;
        assert_eq!(
            action["status"], "pending",
            "behind a call in flight: {action}"
        );
        queued.push(location);
    }

    bench.charger.disconnect().await;
    bench.wait_until("offline").await;
    for location in &queued {
        let action = wait_final(&bench.api, location, Duration::from_secs(5)).await;
        assert_eq!(
            action["status"], "expired",
            "queued when the session ended: {action}"
        );
        assert_eq!(action["error"]["code"], "Disconnected", "{action}");
        assert_eq!(action["response"], Value::Null, "{action}");
        assert_times(&action, false);
    }
    let in_flight = wait_final(&bench.api, &silent_at, Duration::from_secs(5)).await;
    assert_eq!(
        in_flight["status"], "timed_out",
        "sent, then the connection ended: {in_flight}"
    );
    assert_eq!(in_flight["error"]["code"], "ConnectionLost", "{in_flight}");

    // Back again: only what is sent from now on arrives.
    bench.charger.connect_to(&bench.url).await;
    bench.wait_until("online").await;
    let action = bench
        .commands
        .send(&uuid, "reset", &json!({"type": "Soft"}))
        .await;
    assert_eq!(action["status"], "answered", "{action}");
    let received = bench.charger.received();
    let stale: Vec<&Value> = received
        .iter()
        .filter(|l| {
            (behind.iter())
                .any(|(_, action, body)| l["received"] == *action && l["payload"] == *body)
        })
        .collect();
    assert!(
        stale.is_empty(),
        "expired actions reached the charger: {stale:?}"
    );
    let after: Vec<&Value> = received
        .iter()
        .filter(|l| l["connection"] == 2)
        .map(|l| &l["received"])
        .collect();
    assert_eq!(
        after,
        [&json!("GetConfiguration"), &json!("Reset")],
        "after the reconnect: the configuration read, then the new Reset; all: {received:?}"
    );
    bench.charger.finish().await;
}
