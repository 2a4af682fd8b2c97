//! OCPP 2.0.1 stations for the end-to-end tests: the two third-party ones of tests/interop (the
//! Python `ocpp` package's v201 ChargePoint, ocpp201_station.py, and the npm `ocpp-rpc` client in
//! strict mode, ocpp_rpc_station/station.js) as [`Peer`]s, and a raw websocket client that
//! writes 2.0.1 frames by hand, faults included.

use super::REPLY_TIMEOUT;
use super::peer::Peer;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::path::PathBuf;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// The 2.0.1 websocket subprotocol.
pub const OCPP201: &str = "ocpp2.0.1";
/// The id token the stations present unless told otherwise (ocpp201_station.py's ID_TOKEN).
pub const ID_TOKEN: &str = "04A2B3C4D5E680";
/// The token ocpp201_station.py's `core` presents as unknown.
pub const UNKNOWN_TOKEN: &str = "DEADBEEF000001";
/// The secret the Python station holds as SecurityCtrlr.BasicAuthPassword (ocpp201_answers.py).
pub const STATION_SECRET: &str = "interop-secret-7f3a9c21";

pub fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

/// Starts ocpp201_station.py on `url` (`ws://…/ocpp/IDENTITY`) with `scenario` (`boot`, `core`,
/// `offline`, `commanded`) and its options (`--password P`, `--for S`, ...).
pub fn python_station(url: &str, identity: &str, scenario: &str, options: &[&str]) -> Peer {
    let dir = interop_dir();
    let script = dir.join("ocpp201_station.py");
    let mut args = vec![
        script.to_str().expect("utf-8 path"),
        url,
        identity,
        scenario,
    ];
    args.extend_from_slice(options);
    let name = format!("the Python 2.0.1 station {identity} ({scenario})");
    let needs = "the 2.0.1 interop tests need python3 with the packages of \
                 tests/interop/requirements.txt (scripts/test installs them)";
    Peer::start(name, "python3", &dir, &args, needs)
}

/// Starts the ocpp-rpc station on `url` with its options (`--password P`, `--for S`); fails the
/// test, never skips, when node or the package is missing.
pub fn node_station(url: &str, identity: &str, options: &[&str]) -> Peer {
    let dir = interop_dir().join("ocpp_rpc_station");
    let package = dir.join("node_modules/ocpp-rpc/package.json");
    assert!(
        package.exists(),
        "{} is missing: run `npm ci` in tests/interop/ocpp_rpc_station (scripts/test does it)",
        package.display()
    );
    let mut args = vec!["station.js", url, identity];
    args.extend_from_slice(options);
    let name = format!("the ocpp-rpc 2.0.1 station {identity}");
    let needs = "the 2.0.1 interop tests need node (18 or later) and the npm packages of \
                 tests/interop/ocpp_rpc_station (scripts/test installs them)";
    Peer::start(name, "node", &dir, &args, needs)
}

/// The `answer` of the station's `sent` line of `action`, the `nth` of them (from 0).
pub fn answer_of(station: &mut Peer, action: &str, nth: usize) -> Value {
    let sent = station.lines_where("sent", action);
    let Some(line) = sent.get(nth) else {
        let printed = station.describe();
        panic!(
            "{} sent no {action} number {nth}; it printed:\n{printed}",
            station.name
        );
    };
    assert!(
        line.get("error").is_none() && line["answer"].is_object(),
        "cms should answer {action} with a CALLRESULT: {line}"
    );
    line["answer"].clone()
}

type Ws = WebSocketStream<TcpStream>;

/// A station that writes its 2.0.1 frames by hand.
pub struct RawStation201 {
    ws: Ws,
    next_id: u64,
    /// The subprotocol cms agreed to, if any.
    pub subprotocol: Option<String>,
    /// The CALLs cms sent it (a GetBaseReport after the boot, say), left unanswered.
    pub calls_from_cms: Vec<Value>,
}

impl RawStation201 {
    /// Opens `ws://{addr}/ocpp/{identity}` offering only `ocpp2.0.1`; fails the test if refused.
    pub async fn connect(addr: &str, identity: &str) -> RawStation201 {
        let url = format!("ws://{addr}/ocpp/{identity}");
        let mut request = url.as_str().into_client_request().expect("valid ws url");
        let protocol = HeaderValue::from_static(OCPP201);
        request
            .headers_mut()
            .insert("Sec-WebSocket-Protocol", protocol);
        let connecting = async {
            let tcp = TcpStream::connect(addr).await?;
            tokio_tungstenite::client_async(request, tcp).await
        };
        let (ws, response) = tokio::time::timeout(REPLY_TIMEOUT, connecting)
            .await
            .unwrap_or_else(|_| panic!("websocket handshake with {url} timed out"))
            .unwrap_or_else(|e| panic!("{identity} could not connect to {url}: {e}"));
        let subprotocol = response
            .headers()
            .get("sec-websocket-protocol")
            .map(|v| v.to_str().unwrap_or("<not ascii>").to_string());
        RawStation201 {
            ws,
            next_id: 0,
            subprotocol,
            calls_from_cms: Vec::new(),
        }
    }

    /// A fresh message id.
    pub fn message_id(&mut self) -> String {
        self.next_id += 1;
        format!("raw-{}", self.next_id)
    }

    /// Sends `text` as it is and returns the next text frame cms sends that is not a CALL of
    /// its own (those are kept in `calls_from_cms`, unanswered), parsed; bounded by
    /// [`REPLY_TIMEOUT`]; fails the test when the connection ends or nothing comes.
    pub async fn send_and_read(&mut self, text: &str) -> Value {
        tokio::time::timeout(REPLY_TIMEOUT, self.ws.send(Message::text(text.to_string())))
            .await
            .expect("send in time")
            .unwrap_or_else(|e| panic!("could not send {text}: {e}"));
        loop {
            let next = tokio::time::timeout(REPLY_TIMEOUT, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {text} within {REPLY_TIMEOUT:?}"));
            match next {
                Some(Ok(Message::Text(frame))) => {
                    let frame: Value = serde_json::from_str(frame.as_str())
                        .unwrap_or_else(|e| panic!("cms sent a frame that is not JSON ({e})"));
                    match frame[0] == 2 {
                        true => self.calls_from_cms.push(frame),
                        false => return frame,
                    }
                }
                Some(Ok(Message::Close(close))) => {
                    panic!("cms closed the connection ({close:?}) after {text}")
                }
                Some(Ok(_ping_pong_or_binary)) => {}
                Some(Err(e)) => panic!("the connection failed after {text}: {e}"),
                None => panic!("the connection ended after {text}"),
            }
        }
    }

    /// Sends the CALL `[2, id, action, payload_text]` and returns cms's answer frame; fails the
    /// test unless the answer carries the call's id.
    pub async fn call_text(&mut self, action: &str, payload_text: &str) -> Value {
        let id = self.message_id();
        let frame = format!(r#"[2,"{id}","{action}",{payload_text}]"#);
        let answer = self.send_and_read(&frame).await;
        assert_eq!(
            answer[1], id,
            "the answer to {frame} answers its id: {answer}"
        );
        answer
    }

    /// A BootNotification (PowerUp) that must be Accepted.
    pub async fn boot(&mut self) {
        let boot = r#"{"reason":"PowerUp","chargingStation":{"model":"Raw","vendorName":"Hand"}}"#;
        let answer = self.call_text("BootNotification", boot).await;
        assert!(
            answer[0] == 3 && answer[2]["status"] == "Accepted",
            "a registered station's BootNotification is Accepted: {answer}"
        );
    }

    /// The next CALL of `action` cms sends (one kept in `calls_from_cms` first), taken out of
    /// the list; other CALLs are kept. Fails the test when none comes within [`REPLY_TIMEOUT`].
    pub async fn call_from_cms(&mut self, action: &str) -> Value {
        loop {
            if let Some(i) = self.calls_from_cms.iter().position(|c| c[2] == action) {
                return self.calls_from_cms.remove(i);
            }
            let next = tokio::time::timeout(REPLY_TIMEOUT, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("cms sent no {action} within {REPLY_TIMEOUT:?}"));
            match next {
                Some(Ok(Message::Text(frame))) => {
                    let frame: Value = serde_json::from_str(frame.as_str())
                        .unwrap_or_else(|e| panic!("cms sent a frame that is not JSON ({e})"));
                    assert_eq!(frame[0], 2, "waiting for {action}, cms sent {frame}");
                    self.calls_from_cms.push(frame);
                }
                Some(Ok(Message::Close(close))) => {
                    panic!("cms closed the connection ({close:?}) waiting for {action}")
                }
                Some(Ok(_ping_pong_or_binary)) => {}
                Some(Err(e)) => panic!("the connection failed waiting for {action}: {e}"),
                None => panic!("the connection ended waiting for {action}"),
            }
        }
    }

    /// Answers cms's CALL `call` with the CALLRESULT `payload`.
    pub async fn answer(&mut self, call: &Value, payload: Value) {
        let frame = serde_json::json!([3, call[1], payload]).to_string();
        tokio::time::timeout(REPLY_TIMEOUT, self.ws.send(Message::text(frame)))
            .await
            .expect("send in time")
            .expect("the answer is sent");
    }

    /// Sends `text` as it is, reading nothing.
    pub async fn send_text(&mut self, text: &str) {
        tokio::time::timeout(REPLY_TIMEOUT, self.ws.send(Message::text(text.to_string())))
            .await
            .expect("send in time")
            .unwrap_or_else(|e| panic!("could not send: {e}"));
    }

    /// Reads up to cms's close frame (CALLs of cms kept, anything else fails the test) and
    /// returns its code and reason.
    pub async fn expect_close(&mut self) -> (u16, String) {
        loop {
            let next = tokio::time::timeout(REPLY_TIMEOUT, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no close within {REPLY_TIMEOUT:?}"));
            match next {
                Some(Ok(Message::Close(Some(close)))) => {
                    return (close.code.into(), close.reason.to_string());
                }
                Some(Ok(Message::Text(frame))) => {
                    let frame: Value = serde_json::from_str(frame.as_str()).unwrap_or_default();
                    assert_eq!(frame[0], 2, "expected the close, cms sent {frame}");
                    self.calls_from_cms.push(frame);
                }
                Some(Ok(_ping_pong_or_binary)) => {}
                other => panic!("expected a close frame with a code, got {other:?}"),
            }
        }
    }

    /// A Heartbeat that must be answered with a CALLRESULT carrying `currentTime`.
    pub async fn heartbeat(&mut self) {
        let answer = self.call_text("Heartbeat", "{}").await;
        assert!(
            answer[0] == 3 && answer[2]["currentTime"].is_string(),
            "a Heartbeat is answered with currentTime: {answer}"
        );
    }
}
