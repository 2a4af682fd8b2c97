//! Station certificates over Kafka: a 2.0.1 station on a `cms gateway` sends SignCertificate;
//! of the two `cms api` replicas (each with the station CA), the one whose materialiser takes
//! the station's record signs it, once, and sends CertificateSigned through the gateway; the
//! certificate and the action are what both replicas show.

use crate::ocpp201::security::{station_ca, station_csr};
use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::station201::RawStation201;
use crate::support::{Api, eventually_within};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);
const IDENTITY: &str = "KS-201-SEC";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_s_csr_is_signed_once_by_the_api_replicas_over_kafka() {
    let broker = Broker::shared().await;
    let dir = TempDir::new().unwrap();
    let (ca, key) = station_ca(dir.path());
    let api_args = ["--station-ca-cert", &ca, "--station-ca-key", &key];
    let mut fleet = Fleet::start_with_api(&broker.brokers, &["gw-a"], &[], &api_args).await;
    let replica_b = fleet.add_api_replica().await;
    let token = fleet.operator_token().await;
    let apis = [
        Api::at(&fleet.rest_base, &token),
        Api::at(&replica_b, &token),
    ];
    let added = Instant::now();
    let uuid = fleet.add_charger(IDENTITY).await;
    let propagation = Duration::from_secs(10);
    fleet
        .wait_until_accepted(IDENTITY, &["gw-a"], added, propagation)
        .await;

    let mut station = RawStation201::connect(&fleet.gateway("gw-a").ocpp_addr, IDENTITY).await;
    station.boot().await;
    let csr = station_csr(dir.path(), IDENTITY);
    let request = json!({"csr": csr, "certificateType": "ChargingStationCertificate"});
    let answer = station
        .call_text("SignCertificate", &request.to_string())
        .await;
    assert_eq!(answer[2], json!({"status": "Accepted"}), "{answer}");
    // Both replicas consume the gateway's topics, once for the group: one signs (after the
    // group's join, a few seconds on tansu).
    let path = format!("/api/v3/chargers/{uuid}/actions");
    eventually_within(API_LAG, "a CertificateSigned taken", async || {
        let log = apis[0].get_ok(&path).await;
        let taken =
            (log["data"].as_array().unwrap().iter()).any(|a| a["action"] == "CertificateSigned");
        taken.then_some(()).ok_or(log.to_string())
    })
    .await;
    // cms asked for the base report after the boot: one call at a time, so answered first.
    let report = station.call_from_cms("GetBaseReport").await;
    station
        .answer(&report, json!({"status": "NotSupported"}))
        .await;
    let signed = station.call_from_cms("CertificateSigned").await;
    station.answer(&signed, json!({"status": "Accepted"})).await;
    let payload = &signed[3];
    assert_eq!(payload["certificateType"], "ChargingStationCertificate");
    let chain = payload["certificateChain"].as_str().unwrap_or_default();
    assert_eq!(chain.matches("BEGIN CERTIFICATE").count(), 2, "{chain}");

    for api in &apis {
        let path = format!("/api/v3/chargers/{uuid}/actions");
        let log = eventually_within(API_LAG, "the answered CertificateSigned", async || {
            let log = api.get_ok(&path).await;
            let answered =
                |a: &&Value| a["action"] == "CertificateSigned" && a["status"] == "answered";
            match log["data"].as_array().unwrap().iter().find(answered) {
                Some(_) => Ok(log),
                None => Err(log.to_string()),
            }
        })
        .await;
        let signed = (log["data"].as_array().unwrap().iter())
            .filter(|a| a["action"] == "CertificateSigned")
            .count();
        assert_eq!(signed, 1, "signed once: {log}");
        let path = format!("/api/v3/chargers/{uuid}/certificates");
        let certificates = api.get_ok(&path).await;
        assert_eq!(
            certificates["data"].as_array().map(Vec::len),
            Some(1),
            "{certificates}"
        );
    }
    station.heartbeat().await;
}
