//! Prices on a 2.0.1 station over Kafka (issue 45, block I): the Python station of
//! tests/interop/ocpp201_prices.py on a `cms gateway`, its site showing prices through a
//! `cms api`. The price text reaches the gateway by the registry topic, the SetVariables and
//! CostUpdated calls by the commands' path, and the station's final total is the API's cost.

use crate::ocpp201::prices::{assert_prices_told, show_prices};
use crate::ocpp201::{require_python_packages, run_to_end};
use crate::support::Api;
use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::station201::python_station;
use std::time::{Duration, Instant};

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_201_station_is_told_prices_and_its_exact_total() {
    require_python_packages().await;
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let api = Api::at(&fleet.rest_base, &fleet.operator_token().await);
    let identity = "KP-201-PRICE";
    let added = Instant::now();
    let uuid = fleet.add_charger(identity).await;
    fleet.license(identity, false, true).await;
    show_prices(&api).await;
    fleet
        .wait_until_accepted(identity, &["gw-a"], added, REGISTRY_PROPAGATION)
        .await;
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let station = python_station(&url, identity, "prices", &[]);
    let mut station = run_to_end(station, 0).await;
    assert_prices_told(&api, &uuid, identity, &mut station, API_LAG).await;
}
