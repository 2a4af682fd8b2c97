//! `GET /metrics` after some charger traffic.

use crate::support::{Api, Charger, Cms, eventually};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_connections_frames_and_publishes() {
    let cms = Cms::up().await;
    cms.add_charger("CP-METRICS-7731").await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let mut charger = Charger::connect_and_boot(&cms, "CP-METRICS-7731", "1.0.0").await;
    charger.heartbeat().await;
    charger.heartbeat().await;

    let metrics = eventually(
        "metrics of one connection, a boot and two heartbeats",
        async || {
            let m = api.metrics().await;
            let seen = [
                m.sum("cms_gateway_connections_open", &[]),
                m.sum("cms_gateway_connects_total", &[]),
                m.sum(
                    "cms_gateway_frames_in_total",
                    &[("action", "BootNotification")],
                ),
                m.sum("cms_gateway_frames_in_total", &[("action", "Heartbeat")]),
                m.sum("cms_gateway_frames_out_total", &[("action", "Heartbeat")]),
                // Timed once the answer is on its way and once the bus took the record: both
                // after the counts above, so waited for too.
                m.sum(
                    "cms_gateway_answer_latency_seconds_count",
                    &[("action", "Heartbeat")],
                ),
                m.sum("cms_gateway_publish_latency_seconds_count", &[]),
            ];
            let expected = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0].map(Some);
            match seen[..6] == expected && seen[6].is_some_and(|n| n >= 3.0) {
                true => Ok(m),
                false => Err(format!(
                    "[open, connects, in Boot, in Heartbeat, out Heartbeat, answered Heartbeat, \
                     published] = {seen:?}"
                )),
            }
        },
    )
    .await;
    assert!(
        metrics
            .sum(
                "cms_gateway_publish_latency_seconds_bucket",
                &[("le", "+Inf")]
            )
            .is_some(),
        "cms_gateway_publish_latency_seconds should be a histogram with buckets:\n{}",
        metrics.text
    );
    // Every CALL answered is timed by its action: one boot, two heartbeats, none of the rest.
    let answered = |action: &str| {
        metrics.sum(
            "cms_gateway_answer_latency_seconds_count",
            &[("action", action)],
        )
    };
    assert_eq!(
        (
            answered("BootNotification"),
            answered("Heartbeat"),
            answered("MeterValues")
        ),
        (Some(1.0), Some(2.0), Some(0.0)),
        "answer latency counts by action:\n{}",
        metrics.text
    );
    let heartbeat_time = metrics.sum(
        "cms_gateway_answer_latency_seconds_sum",
        &[("action", "Heartbeat")],
    );
    assert!(
        heartbeat_time.is_some_and(|s| s > 0.0 && s < 2.0),
        "two heartbeats answered on the loopback take more than nothing, well under a second each: {heartbeat_time:?}"
    );
    assert!(
        metrics.sum("cms_bus_queue_depth", &[]).is_some(),
        "no cms_bus_queue_depth:\n{}",
        metrics.text
    );
    assert!(
        metrics.label_values().all(|v| !v.contains("METRICS-7731")),
        "a label carries the charger identity:\n{}",
        metrics.text
    );

    charger.close().await;
    eventually("the disconnect to be counted", async || {
        let m = api.metrics().await;
        let open = m.sum("cms_gateway_connections_open", &[]);
        let gone = m.sum("cms_gateway_disconnects_total", &[]);
        match (open, gone) {
            (Some(0.0), Some(1.0)) => Ok(()),
            _ => Err(format!(
                "connections_open {open:?}, disconnects_total {gone:?}"
            )),
        }
    })
    .await;
}
