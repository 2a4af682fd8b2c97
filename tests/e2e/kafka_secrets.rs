//! A charger's secrets never leave cms (docs/actions.md, "Secrets"), as deployed at scale: a
//! `cms api` and a `cms gateway` sharing a Kafka broker and a `--secrets-key`. Its password is
//! rotated through the charger (`PUT .../security`) and a vendor secret set (`PUT
//! .../settings`); then every surface a reader or a consumer team has is searched for them:
//! the settings, the action log (the list and each action), the OpenAPI document, the logs of
//! both processes, and the records of the commands and command-results topics.

use crate::support::broker::Broker;
use crate::support::commanded::CommandedCharger;
use crate::support::fleet::Fleet;
use crate::support::topic::read_topic;
use crate::support::{Handshake, eventually_within, is_uuid};
use serde_json::json;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Error as WsError;

/// Shared by the API and the gateway: `openssl rand -hex 32` once.
const KEY: &str = "5f1c0e2a9b7d4c3e8a6f0b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4";
/// The password the charger is registered with, and the one it is given.
const OLD: &str = "old-password-0123";
const NEW: &str = "rotated-pass-4567";
/// A vendor secret as the charger reports it at boot, and as it is set.
const SHIPPED_WIFI: &str = "wifi-as-shipped-0";
const NEW_WIFI: &str = "wifi-s3cret-8910";
/// How long the API and the gateways may lag (a consumer group join on tansu takes ~3 s).
const LAG: Duration = Duration::from_secs(20);

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02X}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_chargers_secrets_are_nowhere_but_on_the_charger() {
    let broker = Broker::shared().await;
    let key = ["--secrets-key", KEY];
    let fleet = Fleet::start_with_api(&broker.brokers, &["gw-a"], &key, &key).await;
    let identity = "CP-KAFKA-SECRETS";
    let added = fleet
        .cli(&["charger", "add", "--identity", identity, "--password", OLD])
        .await;
    assert!(added.status.success(), "charger add: {}", added.stderr);
    let uuid = added.last_line().to_string();
    assert!(is_uuid(&uuid), "{}", added.stdout);
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let api = fleet.rest().await;
    eventually_within(
        LAG,
        "the gateway to know the charger",
        async || match Handshake::at(&url)
            .basic_auth(identity, "wrong-password-00")
            .refused_status()
            .await
        {
            401 => Ok(()),
            other => Err(format!("HTTP {other}")),
        },
    )
    .await;
    // A charger that reports its own AuthorizationKey (the whitepaper says it must not).
    let config = json!({"AuthorizationKey": hex(OLD), "WifiPassword": SHIPPED_WIFI}).to_string();
    let mut charger =
        CommandedCharger::connect_with(&url, identity, &["--password", OLD, "--config", &config])
            .await;
    let settings = format!("/api/v3/chargers/{uuid}/settings");
    eventually_within(LAG, "the configuration read after the boot", async || {
        let data = api.get_ok(&settings).await["data"].clone();
        match data.as_array().is_some_and(|d| d.len() > 2) {
            true => Ok(()),
            false => Err(data.to_string()),
        }
    })
    .await;

    let wifi = json!({"settings": {"WifiPassword": NEW_WIFI}});
    let changed = api
        .expect(200, "PUT", &format!("{settings}?wait=30"), Some(&wifi))
        .await;
    assert_eq!(changed["data"][0]["status"], "Accepted", "{changed}");
    let rotate = format!("/api/v3/chargers/{uuid}/security?wait=30");
    let rotated = api
        .expect(200, "PUT", &rotate, Some(&json!({"password": NEW})))
        .await;
    assert_eq!(rotated["rotation"]["status"], "Accepted", "{rotated}");
    // The charger got both, in the clear, as the whitepaper has the password: hex-encoded.
    charger
        .wait_received(
            "ChangeConfiguration",
            &json!({"key": "WifiPassword", "value": NEW_WIFI}),
        )
        .await;
    charger
        .wait_received(
            "ChangeConfiguration",
            &json!({"key": "AuthorizationKey", "value": hex(NEW)}),
        )
        .await;

    // From its answer on, the new password is the charger's, and the old one is not.
    charger.disconnect().await;
    eventually_within(
        LAG,
        "the gateway to refuse the old password",
        async || match Handshake::at(&url).basic_auth(identity, OLD).open().await {
            Err(WsError::Http(answer)) if answer.status() == 401 => Ok(()),
            Ok(session) => {
                session.close().await;
                Err("still let in".to_string())
            }
            Err(other) => Err(other.to_string()),
        },
    )
    .await;
    charger.connect_to(&url).await;

    let (old_hex, new_hex) = (hex(OLD), hex(NEW));
    let secrets = [
        OLD,
        NEW,
        old_hex.as_str(),
        new_hex.as_str(),
        SHIPPED_WIFI,
        NEW_WIFI,
    ];
    let mut surfaces: Vec<(String, String)> = Vec::new();
    let shown = api.get_ok(&settings).await;
    assert!(
        shown["data"].as_array().is_some_and(|d| d
            .iter()
            .any(|s| s["key"] == "AuthorizationKey" && s["value"] == "***")),
        "the charger's own AuthorizationKey shows masked: {shown}"
    );
    surfaces.push(("GET .../settings".into(), shown.to_string()));
    let actions = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/actions"))
        .await;
    let list = actions["data"].as_array().cloned().unwrap_or_default();
    let changes = list
        .iter()
        .filter(|a| a["action"] == "ChangeConfiguration")
        .count();
    assert_eq!(changes, 2, "both changes are in the log: {actions}");
    surfaces.push(("GET .../actions".into(), actions.to_string()));
    for action in &list {
        let path = format!(
            "/api/v3/chargers/{uuid}/actions/{}",
            action["uuid"].as_str().unwrap_or("-")
        );
        surfaces.push((format!("GET {path}"), api.get_ok(&path).await.to_string()));
    }
    let openapi = api.get_ok("/api/openapi.json").await;
    surfaces.push(("/api/openapi.json".into(), openapi.to_string()));
    surfaces.push(("the log of cms api".into(), fleet.api.log()));
    surfaces.push((
        "the log of cms gateway".into(),
        fleet.gateway("gw-a").process.log(),
    ));
    for topic in ["ocpp.commands", "ocpp.command-results"] {
        let topic = format!("{}.{topic}", fleet.prefix);
        let records = read_topic(&fleet.brokers, &topic).await;
        let values: Vec<&str> = records.iter().map(|r| r.value_str()).collect();
        assert!(
            values.iter().any(|v| v.contains("\"AuthorizationKey\"")),
            "the rotation is on {topic}: {values:?}"
        );
        surfaces.push((topic, values.join("\n")));
    }
    for (surface, text) in &surfaces {
        for secret in &secrets {
            assert!(!text.contains(secret), "{secret} in {surface}:\n{text}");
        }
    }
    charger.finish().await;
}
