//! `cms_kafka_consumer_lag{topic,partition}` on the API's /metrics: one series per partition
//! assigned to the API's consumer group member, back to 0 once what gateways published is
//! consumed; a second replica reports only the partitions the group assigned to it.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::station::Station;
use crate::support::{Api, Metrics, eventually_within};
use std::time::{Duration, Instant};

/// The fleet's partitions per topic (support/fleet.rs).
const PARTITIONS: i32 = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_reports_its_consumer_lag_per_partition_back_to_zero_once_consumed() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-lag"]).await;
    let rest = fleet.rest().await;
    let identities = ["LAG-1", "LAG-2", "LAG-3", "LAG-4", "LAG-5", "LAG-6"];
    for identity in identities {
        let added = Instant::now();
        fleet.add_charger(identity).await;
        fleet
            .wait_until_accepted(identity, &["gw-lag"], added, Duration::from_secs(10))
            .await;
    }

    // Records on several partitions of the messages and connections topics.
    let addr = fleet.gateway("gw-lag").ocpp_addr.clone();
    let mut open = Vec::new();
    for identity in identities {
        let mut station = Station::connect(&addr, identity, "lag")
            .await
            .unwrap_or_else(|e| panic!("{identity} could not connect: {e:?}"));
        for _ in 0..5 {
            station.call_ok("Heartbeat", "{}").await;
        }
        open.push(station);
    }

    let topics = [fleet.messages_topic(), fleet.connections_topic()];
    let metrics = eventually_within(
        Duration::from_secs(40),
        "a lag of 0 on every partition of the API's topics",
        async || {
            let m = rest.metrics().await;
            let seen: Vec<_> = topics.iter().flat_map(|t| lags(&m, t)).collect();
            match seen.iter().all(|lag| *lag == Some(0.0)) {
                true => Ok(m),
                false => Err(format!("lags {seen:?}")),
            }
        },
    )
    .await;
    // Per partition of a topic the API consumes, never of one it does not.
    assert!(
        !metrics
            .text
            .lines()
            .any(|l| l.starts_with("cms_kafka_consumer_lag{") && l.contains("partition=\"-1\"")),
        "an internal partition reported:\n{}",
        metrics.text
    );

    // A second replica joins the group: the partitions are shared out, and it reports its own
    // share only (all of them caught up).
    let replica = fleet.add_api_replica().await;
    let replica = Api::at(&replica, &fleet.operator_token().await);
    eventually_within(
        Duration::from_secs(40),
        "the second replica's lag on its share of the partitions",
        async || {
            let m = replica.metrics().await;
            let mut shares = Vec::new();
            for topic in &topics {
                let lags = lags(&m, topic);
                let held = lags.iter().filter(|lag| lag.is_some()).count();
                let caught_up = lags.iter().flatten().all(|lag| *lag == 0.0);
                shares.push((held, caught_up));
            }
            match shares
                .iter()
                .all(|(held, caught_up)| (1..PARTITIONS as usize).contains(held) && *caught_up)
            {
                true => Ok(()),
                false => Err(format!(
                    "(partitions reported, all 0) per topic: {shares:?}"
                )),
            }
        },
    )
    .await;
    drop(open);
}

/// `cms_kafka_consumer_lag` of each partition of `topic`, `None` where not reported.
fn lags(metrics: &Metrics, topic: &str) -> Vec<Option<f64>> {
    (0..PARTITIONS)
        .map(|partition| {
            let partition = partition.to_string();
            let labels = [("topic", topic), ("partition", partition.as_str())];
            metrics.sum("cms_kafka_consumer_lag", &labels)
        })
        .collect()
}
