//! The list keeper in the Kafka deployment: two `cms api` replicas keep the same charger's
//! list, and the store's claims let exactly one send each call.

use super::{entry, list_configuration, update, wait_list};
use crate::support::broker::Broker;
use crate::support::commanded::CommandedCharger;
use crate::support::fleet::Fleet;
use cms_store::local_lists::fixtures::{charger_site, put_id_tag, set_site_authorization};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_two_api_replicas_send_each_list_update_once() {
    let identity = "KA-LL-1";
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    fleet.add_api_replica().await;
    let added = Instant::now();
    fleet.add_charger(identity).await;
    fleet
        .wait_until_accepted(identity, &["gw-a"], added, Duration::from_secs(10))
        .await;
    let store = fleet.open_store().await;
    let (_, site, team) = charger_site(&store, identity).await.unwrap();
    put_id_tag(&store, team, "card-a", "Accepted", None, None)
        .await
        .unwrap();
    set_site_authorization(&store, site, "id_tags", true)
        .await
        .unwrap();
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let config = list_configuration((50, 10));
    let mut charger = CommandedCharger::connect_with(&url, identity, &["--config", &config]).await;
    // The API's consumer group may take seconds to join before it sees the charger online.
    wait_list(&mut charger, Some(1), &[("card-a", "Accepted")]).await;
    put_id_tag(&store, team, "card-b", "Blocked", None, None)
        .await
        .unwrap();
    wait_list(
        &mut charger,
        Some(2),
        &[("card-a", "Accepted"), ("card-b", "Blocked")],
    )
    .await;
    // Room for a replica that lost a claim to send anyway (it must not).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let sent: Vec<_> = charger
        .received_of("SendLocalList")
        .into_iter()
        .map(|l| l["payload"].clone())
        .collect();
    assert_eq!(
        sent,
        [
            update(1, "Full", &[entry("card-a", "Accepted")]),
            update(2, "Differential", &[entry("card-b", "Blocked")]),
        ]
    );
    assert_eq!(charger.received_of("GetLocalListVersion").len(), 1);
    charger.finish().await;
}
