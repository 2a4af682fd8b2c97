//! Abuse cases of the OCPP port: more connections than the gateway takes (`--max-connections`).
//! Past the cap a newcomer is refused with 503 before any upgrade and counted, while the
//! chargers already connected go on being answered.

use super::http::RawHttp;
use crate::support::{Api, Charger, Cms, Handshake, eventually};
use tokio_tungstenite::tungstenite::Error as WsError;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_a_charger_gets_503_before_the_upgrade_and_the_others_go_on() {
    let cms = Cms::up_with(&["--max-connections", "3"]).await;
    for identity in ["CP-CAP-1", "CP-CAP-2", "CP-CAP-3", "CP-CAP-4"] {
        cms.add_charger(identity).await;
    }
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut connected = Vec::new();
    for identity in ["CP-CAP-1", "CP-CAP-2", "CP-CAP-3"] {
        connected.push(Charger::connect_and_boot(&cms, identity, "1.0").await);
    }

    assert_eq!(Handshake::new(&cms, "CP-CAP-4").refused_status().await, 503);
    let mut raw = RawHttp::connect(cms.ocpp_addr()).await;
    raw.send(concat!(
        "GET /ocpp/CP-CAP-4 HTTP/1.1\r\nHost: cms\r\nUpgrade: websocket\r\n",
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ocpp1.6\r\n\r\n",
    ))
    .await;
    let refused = raw.response().await;
    assert_eq!(refused.status, 503, "{refused:?}");
    let retry_after = refused.header("retry-after").map(str::parse::<u64>);
    assert!(
        matches!(retry_after, Some(Ok(s)) if s > 0),
        "Retry-After in seconds: {refused:?}"
    );

    for charger in &mut connected {
        charger.heartbeat().await;
    }
    eventually("the refusals counted, and the cap shown", async || {
        let m = api.metrics().await;
        let seen = (
            m.sum(
                "cms_gateway_handshake_rejections_total",
                &[("reason", "at_capacity")],
            ),
            m.sum("cms_gateway_max_connections", &[]),
        );
        match seen {
            (Some(2.0), Some(3.0)) => Ok(()),
            _ => Err(format!(
                "(at_capacity rejections, max connections) = {seen:?}"
            )),
        }
    })
    .await;

    // One leaves: the next charger gets in.
    connected.remove(0).close().await;
    let mut newcomer =
        eventually(
            "CP-CAP-4 let in once a charger left",
            async || match Handshake::new(&cms, "CP-CAP-4").open().await {
                Ok(charger) => Ok(charger),
                Err(WsError::Http(response)) => Err(format!("refused {}", response.status())),
                Err(e) => Err(e.to_string()),
            },
        )
        .await;
    newcomer.heartbeat().await;
    for charger in &mut connected {
        charger.heartbeat().await;
    }
}
