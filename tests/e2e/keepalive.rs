//! Websocket pings, and closing connections that went silent.

use crate::support::{Api, Charger, Cms, eventually};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_answering_pings_stays_connected_past_the_idle_timeout() {
    let cms = Cms::up_with(&["--ws-ping-interval", "500ms", "--ws-idle-timeout", "2s"]).await;
    cms.add_charger("CP-PONG").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-PONG", "1.0.0").await;

    // Sends no OCPP frame for twice the idle timeout, only pongs (answered while reading).
    let pings = charger.stay_for(Duration::from_secs(4)).await;
    assert!(
        pings >= 4,
        "expected a ping about every 500ms for 4s, got {pings}"
    );
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_is_disconnected_after_the_idle_timeout() {
    let cms = Cms::up_with(&["--ws-ping-interval", "1s", "--ws-idle-timeout", "3s"]).await;
    let uuid = cms.add_charger("CP-SILENT").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(&cms, "CP-SILENT", "1.0.0").await;

    // Not reading means not answering pings either: the connection is silent.
    tokio::time::sleep(Duration::from_millis(4_500)).await;

    let ended = charger.expect_end(Duration::from_secs(4)).await;
    eprintln!("the silent connection ended with {ended:?}");
    api.wait_for_charger(&uuid, "offline after the idle timeout", |c| {
        c["connection_status"] == "offline"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_timeout_holds_even_when_shorter_than_the_ping_interval() {
    let cms = Cms::up_with(&["--ws-ping-interval", "30s", "--ws-idle-timeout", "2s"]).await;
    cms.add_charger("CP-SILENT-2").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-SILENT-2", "1.0.0").await;

    // No ping is due for 30s, so nothing is owed to the server: 2s of silence is enough.
    let ended = charger.expect_end(Duration::from_secs(5)).await;
    eprintln!("the silent connection ended with {ended:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pongs_answering_the_gateways_pings_are_timed() {
    let cms = Cms::up_with(&["--ws-ping-interval", "300ms"]).await;
    cms.add_charger("CP-RTT-4417").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(&cms, "CP-RTT-4417", "1.0.0").await;

    // Reading answers the pings (tungstenite sends the pongs).
    let pings = charger.stay_for(Duration::from_secs(2)).await;
    assert!(
        pings >= 3,
        "expected a ping about every 300ms for 2s, got {pings}"
    );

    let metrics = eventually("ping round trips timed", async || {
        let m = api.metrics().await;
        match m.sum("cms_gateway_ws_ping_rtt_seconds_count", &[]) {
            Some(n) if n >= 2.0 => Ok(m),
            count => Err(format!("cms_gateway_ws_ping_rtt_seconds_count {count:?}")),
        }
    })
    .await;
    let count = metrics.sum("cms_gateway_ws_ping_rtt_seconds_count", &[]);
    // A few more than counted here: pings during the boot, and pongs flushed after the stay.
    assert!(
        count.is_some_and(|n| n <= pings as f64 + 3.0),
        "more round trips than pings ({pings}): {count:?}"
    );
    let sum = metrics.sum("cms_gateway_ws_ping_rtt_seconds_sum", &[]);
    assert!(
        sum.is_some_and(|s| s >= 0.0 && s < count.unwrap_or(0.0)),
        "round trips on the loopback should take well under a second each: sum {sum:?}"
    );
    assert!(
        metrics
            .sum("cms_gateway_ws_ping_rtt_seconds_bucket", &[("le", "+Inf")])
            .is_some(),
        "cms_gateway_ws_ping_rtt_seconds should be a histogram with buckets:\n{}",
        metrics.text
    );
    assert!(
        metrics.label_values().all(|v| !v.contains("RTT-4417")),
        "a label carries the charger identity:\n{}",
        metrics.text
    );
}
