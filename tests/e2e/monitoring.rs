//! Every metric the dashboard and the alert rules name is exported by a fresh deployment before
//! its first event: a panel reads 0, not "no data", and an alert on a rate or an increase sees
//! the first event (Prometheus's `increase` cannot see a series' first sample). The Kafka
//! deployment (a gateway and an API), with a charger connected and nothing else done: no
//! command, no dead letter, no store error, no smart-charging site.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::monitoring::{metric_names, queries};
use crate::support::station::Station;
use crate::support::{Api, Metrics, eventually_within};
use std::time::{Duration, Instant};

/// Named per site, so present once a site is balanced and its meter read: with no site there is
/// nothing to export (docs/operations.md, "Probes and metrics").
const PER_SITE: [&str; 1] = ["cms_smart_charging_headroom_amps"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_deployment_exports_every_metric_the_dashboard_and_alerts_name() {
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-zero"]).await;
    let added = Instant::now();
    fleet.add_charger("ZERO-1").await;
    fleet
        .wait_until_accepted("ZERO-1", &["gw-zero"], added, Duration::from_secs(10))
        .await;
    let mut station = Station::connect(&fleet.gateway("gw-zero").ocpp_addr, "ZERO-1", "zero")
        .await
        .expect("the charger connects");
    station
        .call_ok(
            "BootNotification",
            r#"{"chargePointVendor":"ACME","chargePointModel":"Z"}"#,
        )
        .await;

    let gateway = Api::at(&fleet.gateway("gw-zero").ops_base, "");
    let api = Api::at(&fleet.rest_base, "");
    let wanted: Vec<String> = metric_names(&queries())
        .into_iter()
        .filter(|name| !PER_SITE.contains(&name.as_str()))
        .collect();
    // The consumer's lag comes with librdkafka's statistics, every 5 s from the start.
    eventually_within(
        Duration::from_secs(20),
        "every metric of the dashboard and the alerts on the gateway's or the API's /metrics",
        async || {
            let scraped = [gateway.metrics().await, api.metrics().await];
            let missing: Vec<&String> = wanted
                .iter()
                .filter(|name| !scraped.iter().any(|m| exports(m, name)))
                .collect();
            match missing.is_empty() {
                true => Ok(()),
                false => Err(format!("missing: {missing:?}")),
            }
        },
    )
    .await;
}

/// Whether `metrics` holds a sample of `name`, a histogram's by its count.
fn exports(metrics: &Metrics, name: &str) -> bool {
    metrics.sum(name, &[]).is_some() || metrics.sum(&format!("{name}_count"), &[]).is_some()
}
