//! Real-time authorisation in the Kafka deployment: `cms api` publishes the provider's party
//! link on the id-tags topic, the token cms calls the eMSP with sealed with `--secrets-key`,
//! and a `cms gateway` apart opens it and asks the eMSP with it.

use super::{CMS_TOKEN, Roaming, emsp, token};
use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::topic::read_topic;
use crate::support::{Handshake, eventually_within};
use base64::Engine;
use serde_json::json;
use std::time::{Duration, Instant};

/// Shared by the API and the gateway: `openssl rand -hex 32` once.
const KEY: &str = "0d4e6b1f2a3c5e7f9b8a0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5";
/// How long the gateway may lag behind the API (a consumer group join on tansu takes ~3 s).
const LAG: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_gateway_apart_asks_the_emsp_with_the_token_sealed_on_the_bus() {
    let broker = Broker::shared().await;
    let gateway_args = ["--secrets-key", KEY, "--ocpi-authorize-timeout", "1s"];
    let api_args = ["--secrets-key", KEY];
    let fleet =
        Fleet::start_with_api(&broker.brokers, &["gw-ocpi"], &gateway_args, &api_args).await;
    let identity = "CP-KAFKA-OCPI";
    let added = Instant::now();
    fleet.add_charger(identity).await;
    (fleet)
        .wait_until_accepted(identity, &["gw-ocpi"], added, Duration::from_secs(10))
        .await;
    let (url, asked) = emsp().await;
    let (api, store) = (fleet.rest().await, fleet.open_store().await);
    let roaming = Roaming::set_up_with(api, &fleet.rest_base, store, Some(&url)).await;
    roaming.push(&token("ALLOWED-NEVER", "NEVER")).await;
    roaming.push(&token("LATE-NEVER", "NEVER")).await;

    let addr = &fleet.gateway("gw-ocpi").ocpp_addr;
    let mut charger = Handshake::at(&format!("ws://{addr}/ocpp/{identity}"))
        .open()
        .await
        .expect("the charger connects");
    // The site's change first (on an open site every tag is Accepted), then the tokens and the
    // party link: the eMSP is asked, and its word is the answer.
    for (tag, status) in [("STRANGER", "Invalid"), ("ALLOWED-NEVER", "Accepted")] {
        eventually_within(LAG, &format!("{tag} {status}"), async || {
            let answer = (charger)
                .call_result("Authorize", json!({"idTag": tag}))
                .await;
            let asked = asked.lock().unwrap().iter().any(|c| c.0 == tag);
            match answer["idTagInfo"]["status"].as_str() {
                Some(s) if s == status && (asked || tag == "STRANGER") => Ok(()),
                other => Err(format!("{other:?}, the eMSP asked: {asked}")),
            }
        })
        .await;
    }
    let expected = base64::engine::general_purpose::STANDARD.encode(CMS_TOKEN);
    let calls = asked.lock().unwrap().clone();
    assert!(
        calls.iter().all(|c| c.2 == format!("Token {expected}")),
        "{calls:?}"
    );
    let late = (charger)
        .call_result("Authorize", json!({"idTag": "LATE-NEVER"}))
        .await;
    assert_eq!(late["idTagInfo"]["status"], "Invalid", "{late}");

    // On the topic the token is sealed: never there as it is, nor base64 of it.
    let records = read_topic(&fleet.brokers, &format!("{}.id-tags", fleet.prefix)).await;
    let links: Vec<_> = (records.iter())
        .filter(|r| r.key_str().starts_with("ocpi/"))
        .collect();
    assert!(!links.is_empty(), "no party link on the id-tags topic");
    for record in &records {
        let value = record.value_str();
        assert!(
            !value.contains(CMS_TOKEN) && !value.contains(&expected),
            "{value}"
        );
    }
    assert!(
        links[0].value_str().contains("token_sealed"),
        "{}",
        links[0].value_str()
    );
    charger.close().await;
}
