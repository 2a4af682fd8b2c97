//! What a session says of the OCPP version agreed in its handshake: the `connected` event's
//! subprotocol and the `ocpp_version` of its records. A real gateway, real websocket clients,
//! the in-process bus.

mod support;

use cms_bus::{Bus, InProcessBus, InProcessConfig, Message, Subscriber, Topics};
use cms_gateway::{Gateway, GatewayConfig};
use cms_ocpp::OcppVersion;
use futures_util::{SinkExt, StreamExt};
use std::sync::Arc;
use std::time::Duration;
use support::Ws;
use tokio_tungstenite::tungstenite::Message as WsMessage;

const IDENTITY: &str = "CP-VERSION-1";

/// A gateway with one registered charger, connected offering both versions; the subprotocol
/// agreed; the connections and messages topics, followed from the start.
struct Connected {
    _gateway: Gateway,
    ws: Ws,
    agreed: Option<String>,
    connections: Box<dyn Subscriber>,
    messages: Box<dyn Subscriber>,
}

/// [`Connected`] to a gateway configured by `configure`.
async fn connect_offering_both(configure: impl FnOnce(&mut GatewayConfig)) -> Connected {
    let topics = Topics::with_prefix("versions");
    let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
    let connections = bus.subscribe("test", &[topics.connections]).unwrap();
    let messages = bus.subscribe("test", &[topics.messages]).unwrap();
    let gateway = support::start_gateway(&bus, topics, "gw-v", [IDENTITY.into()], |config| {
        config.read_configuration_at_boot = false;
        configure(config);
    })
    .await;
    let addr = gateway.local_addr().unwrap();
    let (ws, agreed) = support::connect_offering(addr, IDENTITY, "ocpp2.0.1, ocpp1.6").await;
    Connected {
        _gateway: gateway,
        ws,
        agreed,
        connections,
        messages,
    }
}

async fn next_record(topic: &mut dyn Subscriber, wanted: impl Fn(&Message) -> bool) -> Message {
    let wait = async {
        let mut batch = Vec::new();
        loop {
            batch.clear();
            topic.next_batch(&mut batch, 16).await.unwrap();
            if let Some(found) = batch.iter().find(|m| wanted(m)) {
                return found.clone();
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("the record in time")
}

async fn connected_subprotocol(connections: &mut dyn Subscriber) -> String {
    let connected = next_record(connections, |m| {
        m.record.header_str("event") == Some("connected")
    })
    .await;
    let value: serde_json::Value = serde_json::from_slice(&connected.record.value).unwrap();
    value["subprotocol"].as_str().unwrap().to_string()
}

async fn answer_to(ws: &mut Ws, frame: &str) -> serde_json::Value {
    ws.send(WsMessage::text(frame)).await.unwrap();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), ws.next()).await;
        if let Ok(Some(Ok(WsMessage::Text(text)))) = next {
            return serde_json::from_str(&text).unwrap();
        }
        assert!(matches!(next, Ok(Some(Ok(_)))), "no answer: {next:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_offering_both_versions_is_a_201_session_and_its_connected_event_says_so() {
    let Connected {
        mut ws,
        agreed,
        mut connections,
        mut messages,
        ..
    } = connect_offering_both(|_| {}).await;
    assert_eq!(agreed.as_deref(), Some("ocpp2.0.1"));
    assert_eq!(connected_subprotocol(&mut *connections).await, "ocpp2.0.1");

    // Served by the 2.0.1 handler: answered as 2.0.1 answers, published as 2.0.1.
    let boot = r#"[2,"b-1","BootNotification",{"reason":"PowerUp","chargingStation":{"model":"M","vendorName":"V"}}]"#;
    let answer = answer_to(&mut ws, boot).await;
    assert_eq!(answer[0], 3, "{answer}");
    assert_eq!(answer[1], "b-1", "{answer}");
    assert_eq!(answer[2]["status"], "Accepted", "{answer}");
    let booted = next_record(&mut *messages, |m| {
        m.record.header_str("action") == Some("BootNotification")
    })
    .await;
    assert_eq!(booted.record.header_str("ocpp_version"), Some("ocpp2.0.1"));
    // A frame that is no frame is refused as 2.0.1 names it (1.6: FormationViolation).
    let answer = answer_to(&mut ws, "not json").await;
    assert_eq!(answer[2], "RpcFrameworkError", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preferring_16_a_station_offering_both_versions_is_a_16_session_throughout() {
    let Connected {
        mut ws,
        agreed,
        mut connections,
        mut messages,
        ..
    } = connect_offering_both(|config| config.ocpp_preferred_version = OcppVersion::V16).await;
    assert_eq!(agreed.as_deref(), Some("ocpp1.6"));
    assert_eq!(connected_subprotocol(&mut *connections).await, "ocpp1.6");

    let answer = answer_to(&mut ws, r#"[2,"h-1","Heartbeat",{}]"#).await;
    assert_eq!(answer[0], 3, "{answer}");
    let heartbeat = next_record(&mut *messages, |m| {
        m.record.header_str("action") == Some("Heartbeat")
    })
    .await;
    assert_eq!(heartbeat.record.header_str("ocpp_version"), Some("ocpp1.6"));
}
