//! What the gateway's tests share: a real gateway on the in-process bus, one shard, with the
//! given chargers registered (security profile 0, open site).

use cms_bus::{Bus, InProcessBus, Registration, RegistryState, SiteAuthorization, Topics};
use cms_gateway::{Gateway, GatewayConfig, GatewaySecurity, IdTagDirectory, RegistryDirectory};
use std::sync::Arc;

/// Starts a gateway named `node` on `bus`, listening on a free loopback port; `configure`
/// changes its configuration first.
pub async fn start_gateway(
    bus: &Arc<InProcessBus>,
    topics: Topics,
    node: &str,
    chargers: impl IntoIterator<Item = String>,
    configure: impl FnOnce(&mut GatewayConfig),
) -> Gateway {
    let directory = Arc::new(RegistryDirectory::default());
    for identity in chargers {
        directory.apply_state(
            &identity,
            RegistryState::Registered(Registration {
                password_hash: None,
                security_profile: 0,
                authorization: SiteAuthorization::Open,
                proxy: None,
                price_text: None,
                ocpi_location: None,
            }),
        );
    }
    directory.set_caught_up();
    let mut config = GatewayConfig::new(Some("127.0.0.1:0".parse().unwrap()), node.into(), topics);
    config.shards = 1;
    configure(&mut config);
    let commands = bus.follow(&[topics.commands]).await.unwrap();
    Gateway::start(
        config,
        directory,
        Arc::new(IdTagDirectory::default()),
        bus.clone(),
        commands,
        GatewaySecurity::default(),
    )
    .unwrap()
}

pub type Ws = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// Connects as charger `identity` over OCPP 1.6J.
#[allow(dead_code)] // not every test binary uses it
pub async fn connect_charger(addr: std::net::SocketAddr, identity: &str) -> Ws {
    connect_offering(addr, identity, "ocpp1.6").await.0
}

/// Connects as charger `identity` offering `protocols` (comma-separated); returns the socket
/// and the subprotocol the gateway agreed.
#[allow(dead_code)] // not every test binary uses it
pub async fn connect_offering(
    addr: std::net::SocketAddr,
    identity: &str,
    protocols: &str,
) -> (Ws, Option<String>) {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{addr}/ocpp/{identity}")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", protocols.parse().unwrap());
    let socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (ws, response) = tokio_tungstenite::client_async(request, socket)
        .await
        .unwrap();
    let agreed = response
        .headers()
        .get("sec-websocket-protocol")
        .map(|v| v.to_str().unwrap().to_string());
    (ws, agreed)
}
