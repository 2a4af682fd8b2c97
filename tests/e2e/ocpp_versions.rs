//! OCPP 1.6 and 2.0.1 stations on the same port: the subprotocol agreed in the handshake (the
//! preferred version when a station offers both), and the version the charger resource shows.

use crate::support::{Api, Charger, Cms, Handshake, REPLY_TIMEOUT};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

async fn open(cms: &Cms, identity: &str, protocols: &'static str) -> Charger {
    Handshake::new(cms, identity)
        .offering(protocols)
        .open()
        .await
        .unwrap_or_else(|e| panic!("{identity} offering {protocols:?} could not connect: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_offering_both_subprotocols_gets_ocpp201_by_default() {
    let cms = Cms::up().await;
    cms.add_charger("CP-V-BOTH").await;

    // In either order: the server's preference decides, not the station's.
    for offered in ["ocpp2.0.1, ocpp1.6", "ocpp1.6, ocpp2.0.1"] {
        let charger = open(&cms, "CP-V-BOTH", offered).await;
        assert_eq!(
            charger.subprotocol.as_deref(),
            Some("ocpp2.0.1"),
            "offered {offered:?}"
        );
        charger.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_ocpp_preferred_version_16_a_station_offering_both_subprotocols_gets_ocpp16() {
    let cms = Cms::up_with(&["--ocpp-preferred-version", "1.6"]).await;
    cms.add_charger("CP-V-PREF").await;

    let mut charger = open(&cms, "CP-V-PREF", "ocpp2.0.1, ocpp1.6").await;
    assert_eq!(charger.subprotocol.as_deref(), Some("ocpp1.6"));
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_offering_only_ocpp16_gets_it_works_as_before_and_shows_ocpp_version_16() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-V-16").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let fresh = api.get_ok(&format!("/api/v3/chargers/{uuid}")).await;
    assert_eq!(fresh["data"]["ocpp_version"], json!(null), "{fresh}");

    let mut charger = Charger::connect_and_boot(&cms, "CP-V-16", "1.6.0").await;
    assert_eq!(charger.subprotocol.as_deref(), Some("ocpp1.6"));
    charger.heartbeat().await;
    let seen = api
        .wait_for_charger(&uuid, "ocpp_version 1.6", |c| c["ocpp_version"] == "1.6")
        .await;
    assert_eq!(seen["firmware_version"], "1.6.0");
    let list = api.get_ok("/api/v3/chargers").await;
    assert_eq!(list["data"][0]["ocpp_version"], "1.6", "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_offering_only_ocpp201_gets_it_and_shows_ocpp_version_201() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-V-201").await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let mut charger = open(&cms, "CP-V-201", "ocpp2.0.1").await;
    assert_eq!(charger.subprotocol.as_deref(), Some("ocpp2.0.1"));
    // Answered as 2.0.1 answers a boot.
    let boot = json!({"reason": "PowerUp", "chargingStation": {"model": "M", "vendorName": "V"}});
    let answer = charger.call("BootNotification", boot).await;
    assert_eq!(answer[0], 3, "{answer}");
    assert_eq!(answer[2]["status"], "Accepted", "{answer}");
    api.wait_for_charger(&uuid, "ocpp_version 2.0.1", |c| {
        c["ocpp_version"] == "2.0.1" && c["connection_status"] == "online"
    })
    .await;
}

/// A station offering only versions cms does not speak is upgraded without a subprotocol (as
/// OCPP-J asks) and closed with 1002, the reason naming what cms speaks. Done by hand: a
/// websocket client would itself fail an upgrade that agrees none of what it offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_offering_neither_subprotocol_is_closed_with_1002_naming_both() {
    let cms = Cms::up().await;
    cms.add_charger("CP-V-NONE").await;

    let mut tcp = TcpStream::connect(cms.ocpp_addr()).await.unwrap();
    let request = "GET /ocpp/CP-V-NONE HTTP/1.1\r\nHost: cms\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ocpp2.0, ocpp1.5\r\n\r\n";
    tcp.write_all(request.as_bytes()).await.unwrap();
    // Byte by byte up to the head's end: what follows is the websocket's.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = tokio::time::timeout(REPLY_TIMEOUT, tcp.read_u8())
            .await
            .expect("the upgrade's answer in time")
            .expect("the upgrade's answer");
        head.push(byte);
    }
    let head = String::from_utf8(head).unwrap().to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(!head.contains("sec-websocket-protocol"), "{head}");

    let mut ws = WebSocketStream::from_raw_socket(tcp, Role::Client, None).await;
    let closed = tokio::time::timeout(REPLY_TIMEOUT, ws.next())
        .await
        .expect("a close frame in time");
    let Some(Ok(Message::Close(Some(frame)))) = closed else {
        panic!("expected a close frame, got {closed:?}");
    };
    assert_eq!(u16::from(frame.code), 1002, "{frame:?}");
    assert!(
        frame.reason.contains("ocpp2.0.1") && frame.reason.contains("ocpp1.6"),
        "the reason names both versions: {:?}",
        frame.reason
    );
}
