//! `cms charger action` beside the running service, and the gateway's counts of actions.

use super::Bench;
use crate::support::{Cms, eventually};
use serde_json::{Value, json};

/// The action JSON the command printed (the whole stdout, or its last line).
fn printed_action(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim())
        .or_else(|_| serde_json::from_str(stdout.trim().lines().last().unwrap_or_default()))
        .unwrap_or_else(|e| {
            panic!("`cms charger action` should print the action as JSON ({e}): {stdout}")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_sends_through_the_service_and_exits_by_how_the_action_ended() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, "CP-ACT-CLI").await;
    let identity = "CP-ACT-CLI";
    let cli = json!({"type": "cli", "email": null});

    let out = cms
        .cli(&[
            "charger",
            "action",
            identity,
            "Reset",
            r#"{"type":"Soft"}"#,
            "--wait",
            "10",
        ])
        .await;
    assert!(
        out.status.success(),
        "exit 0 once answered: {}\n{}",
        out.status,
        out.stderr
    );
    let action = printed_action(&out.stdout);
    assert_eq!(action["action"], "Reset", "{action}");
    assert_eq!(action["status"], "answered", "{action}");
    assert_eq!(
        action["response"],
        json!({"status": "Accepted"}),
        "{action}"
    );
    assert_eq!(action["requested_by"], cli, "{action}");
    bench
        .charger
        .assert_received_once("Reset", &json!({"type": "Soft"}));

    let out = cms
        .cli(&[
            "charger",
            "action",
            identity,
            "clear-cache",
            "{}",
            "--wait",
            "10",
        ])
        .await;
    assert!(
        out.status.success(),
        "the path segment works too: {}",
        out.stderr
    );
    assert_eq!(printed_action(&out.stdout)["action"], "ClearCache");

    let out = cms
        .cli(&["charger", "action", identity, "Reset", r#"{"type":"Nope"}"#])
        .await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "an invalid payload: {}",
        out.stderr
    );
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("type"), "names the field `type`: {said}");

    // A usage error exits 2, which is not "still going" (3).
    let out = cms
        .cli(&[
            "charger",
            "action",
            identity,
            "ClearCache",
            "{}",
            "--wait",
            "soon",
        ])
        .await;
    assert_eq!(out.status.code(), Some(2), "a usage error: {}", out.stderr);

    let slow = r#"{"vendorId":"cms.test.slow","data":"3000"}"#;
    let out = cms
        .cli(&[
            "charger",
            "action",
            identity,
            "DataTransfer",
            slow,
            "--wait",
            "1",
        ])
        .await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "still going after --wait: {}",
        out.stderr
    );
    let status = printed_action(&out.stdout)["status"].clone();
    assert!(status == "pending" || status == "sent", "{status}");

    let resets = bench.charger.received_of("Reset");
    assert_eq!(
        resets.len(),
        1,
        "the invalid Reset was never sent: {resets:?}"
    );
    let log = bench.audit_log(4).await;
    let by: Vec<&Value> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["requested_by"])
        .collect();
    assert_eq!(by[..3], [&cli, &cli, &cli], "{log}");
    bench.charger.finish().await;
}

/// Seconds from an action's `created_at` to its `expires_at`: the deadline it was given.
fn deadline_after(action: &Value) -> f64 {
    let at = |field: &str| {
        let text = action[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field}: {action}"));
        chrono::DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    (at("expires_at") - at("created_at")).as_seconds_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_takes_the_services_action_times_unless_given_its_own() {
    // A service started with other times than the defaults (60 s and 30 s).
    let cms = Cms::up_with(&["--action-ttl", "5s", "--action-timeout", "7s"]).await;
    let _bench = Bench::start(&cms, "CP-ACT-TIMES").await;
    let send = |extra: &'static [&'static str]| {
        let mut args = vec!["charger", "action", "CP-ACT-TIMES", "ClearCache", "{}"];
        args.extend_from_slice(&["--wait", "10"]);
        args.extend_from_slice(extra);
        let cms = &cms;
        async move {
            let out = cms.cli(&args).await;
            assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
            printed_action(&out.stdout)
        }
    };
    let action = send(&[]).await;
    assert_eq!(action["status"], "answered", "{action}");
    assert_eq!(
        deadline_after(&action),
        5.0,
        "the service's --action-ttl: {action}"
    );
    let action = send(&["--action-ttl", "20s"]).await;
    assert_eq!(deadline_after(&action), 20.0, "its own: {action}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_metrics_count_actions_by_action_and_final_state() {
    let cms = Cms::up().await;
    let bench = Bench::start(&cms, "CP-ACT-METRICS").await;
    for _ in 0..2 {
        let action = bench
            .commands
            .send(&bench.uuid, "reset", &json!({"type": "Soft"}))
            .await;
        assert_eq!(action["status"], "answered", "{action}");
    }
    let refused = json!({"vendorId": "cms.test.error"});
    let action = bench
        .commands
        .send(&bench.uuid, "data-transfer", &refused)
        .await;
    assert_eq!(action["status"], "failed", "{action}");

    // The configuration read after the boot is counted too.
    let expected = [
        ([("action", "Reset"), ("status", "answered")], 2.0),
        ([("action", "DataTransfer"), ("status", "failed")], 1.0),
        (
            [("action", "GetConfiguration"), ("status", "answered")],
            1.0,
        ),
    ];
    let metrics = eventually("the actions to be counted", async || {
        let m = bench.api.metrics().await;
        let seen: Vec<Option<f64>> = expected
            .iter()
            .map(|(labels, _)| m.sum("cms_gateway_commands_total", labels))
            .collect();
        let wanted: Vec<Option<f64>> = expected.iter().map(|(_, n)| Some(*n)).collect();
        match seen == wanted {
            true => Ok(m),
            false => Err(format!("{expected:?}: expected {wanted:?}, saw {seen:?}")),
        }
    })
    .await;
    let latencies = metrics.sum("cms_gateway_command_latency_seconds_count", &[]);
    assert!(
        latencies.is_some_and(|n| n >= 4.0),
        "latency count: {latencies:?}"
    );
    assert!(
        metrics.label_values().all(|v| !v.contains("METRICS")),
        "a label carries the charger identity:\n{}",
        metrics.text
    );
    bench.charger.finish().await;
}
