//! The list keeper for a 2.0.1 station in the Kafka deployment: two `cms api` replicas keep the
//! Python v201 station's list (tests/interop/ocpp201_lists.py), and the store's claims let
//! exactly one send each call; the base report it waits for comes through Kafka too.

use crate::ocpp201::local_lists::{ListBench, entry, update};
use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_two_api_replicas_send_each_2_0_1_list_update_once() {
    let identity = "KA-LL-201";
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    fleet.add_api_replica().await;
    let added = Instant::now();
    fleet.add_charger(identity).await;
    fleet
        .wait_until_accepted(identity, &["gw-a"], added, Duration::from_secs(10))
        .await;
    let store = fleet.open_store().await;
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let tags = [("card-a", "Accepted")];
    let mut bench = ListBench::start(store, &url, identity, &tags).await;
    // The API's consumer group may take seconds to join before it sees the station online.
    bench.listed(Some(1), &tags).await;
    bench.put("card-b", "Blocked").await;
    bench
        .listed(Some(2), &[("card-a", "Accepted"), ("card-b", "Blocked")])
        .await;
    // Room for a replica that lost a claim to send anyway (it must not).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent: Vec<_> = (bench.received("SendLocalList").into_iter())
        .map(|(_, payload)| payload)
        .collect();
    assert_eq!(
        sent,
        [
            update(1, "Full", &[entry("card-a", "Accepted")]),
            update(2, "Differential", &[entry("card-b", "Blocked")]),
        ]
    );
    assert_eq!(bench.received("GetLocalListVersion").len(), 1);
    bench.station.finish(Duration::from_secs(10)).await;
}
